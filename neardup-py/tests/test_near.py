"""Index.near: every verified near duplicate of a page with its scores, best first, at most k,
above an inclusive threshold on resemble or contain; Index.query keeps its one verdict."""

from __future__ import annotations

import pickle

import neardup
import pytest

PARAS = [
    "The kamilo renshadu vopal trigel zorbanu denkaei quiloma palren shavotu kaeibanu.",
    "A nutri gelzor mireka lopalsha votuden renqui baeinu trikamo loshaden paltrigel.",
    "Zorkalo shamire denvopal quitugel eibakan numiren trishalo kavoden palquizor.",
    "The lomiren tukasha vopalden quibaei nutrigel zorlomi kashaden votupal renquiba.",
    "Denmilo shavo kaeipal trinuzor gelbaka mirenlo tushaden voquipal zorenka baeitri.",
    "Palnumi lokaren shadentu voquigel zorbaei trikalo mishaden renvopal kaquitu.",
]
OTHER = [
    "Gelshavo tukamiren zorpalden quilobaei nushatri kavoden renmilo paltukash vozorgel.",
    "A trimilo denshazor kabaeipal voquiren lotugel nuzorka shapalden milotri baeiren.",
    "Renkatu quishalo palzorden vomigel baeinutri kashalo denvoqui tupalzor mirenka.",
    "The zortrika lomishaden voquipal renbaei tugelnu kalozor shaden milopal trivoqui.",
    "Quidenka shalotu zorvomi gelpalren baeikash nutrilo denzorvo pamiren kaquitu.",
    "Lopaltri shazorden kamigel voquibaei renutu lokasha denpalvo zormiqui trigelba.",
]


def text(paras):
    return "\n".join(paras)


@pytest.fixture
def ix(tmp_path):
    with neardup.Index(tmp_path / "ix", sync_writes=False) as ix:
        ix.insert("a", text=text(PARAS))
        ix.insert("b", text=text(OTHER))
        assert ix["a"].cluster != ix["b"].cluster
        yield ix


def test_near_finds_every_page_best_first(ix):
    both = text(PARAS + OTHER)
    found = ix.near(text=both)
    assert isinstance(found, list) and {n.key for n in found} == {"a", "b"}
    assert all(isinstance(n, neardup.NearDuplicate) for n in found)
    assert found[0].resemble >= found[1].resemble
    for n in found:
        assert n.contain > 0.9 and n.resemble < 0.7 and not n.exact
        assert (n.doc, n.cluster, n.representative) == (ix[n.key].doc, ix[n.key].cluster, n.key)
    by_contain = ix.near(text=both, by="contain", k=None)
    assert by_contain[0].contain >= by_contain[1].contain
    assert ix.near(text=both, k=1) == found[:1]
    # query keeps its one verdict, naming one of them with the same scores.
    v = ix.query(text=both)
    assert isinstance(v, neardup.Verdict) and v.duplicate
    named = [n for n in found if n.key == v.similar_to]
    assert named and (named[0].resemble, named[0].contain) == (v.resemble, v.contain)
    assert len(ix) == 2


def test_threshold_is_inclusive(ix):
    both = text(PARAS + OTHER)
    found = ix.near(text=both, k=None)
    low = min(n.resemble for n in found)
    assert len(ix.near(text=both, threshold=low)) == 2
    assert all(n.resemble > low for n in ix.near(text=both, threshold=min(1.0, low + 1e-9)))
    assert len(ix.near(text=both, threshold=0.9, by="contain")) == 2
    assert ix.near(text=both, threshold=0.9) == []


def test_identical_first_and_nothing_unrelated(ix):
    found = ix.near(text=text(PARAS), key="a2")
    assert found[0].key == "a" and found[0].exact and found[0].resemble == 1.0
    assert ix.near(text="a short unrelated line about nothing in particular at all") == []
    assert ix.near(text="tiny") == []


def test_near_results_pickle(ix):
    found = ix.near(text=text(PARAS + OTHER))
    back = pickle.loads(pickle.dumps(found))
    assert back == found and hash(back[0]) == hash(found[0]) and repr(back) == repr(found)


@pytest.mark.parametrize(
    "kwargs,cls,name",
    [
        ({"k": 0}, neardup.InvalidArgumentError, "k"),
        ({"k": -1}, neardup.InvalidArgumentError, "k"),
        ({"k": "10"}, neardup.InvalidTypeError, "k"),
        ({"threshold": 1.5}, neardup.InvalidArgumentError, "threshold"),
        ({"threshold": "high"}, neardup.InvalidTypeError, "threshold"),
        ({"by": "jaccard"}, neardup.InvalidArgumentError, "by"),
        ({"by": 1}, neardup.InvalidTypeError, "by"),
        ({"host": "h"}, neardup.InvalidTypeError, "key"),
    ],
)
def test_bad_arguments(ix, kwargs, cls, name):
    with pytest.raises(cls) as e:
        ix.near(text=text(PARAS), **kwargs)
    assert name in str(e.value)
