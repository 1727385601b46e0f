"""An index handle refuses to be pickled or copied, with the message the docs give; the result
values (Verdict, Deletion, PageInfo, Signatures, Similarity, Layout) pickle, copy, compare equal
by their fields and hash alike, in this process and in another one."""

from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys

import neardup
import pytest

from conftest import page

MESSAGE = "neardup.Index cannot be pickled: open the index inside the actor, or in the stage's setup()"


def test_pickle_refused(tmp_path):
    with neardup.Index(tmp_path / "ix") as ix:
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            with pytest.raises(TypeError) as e:
                pickle.dumps(ix, protocol=protocol)
            assert str(e.value) == MESSAGE
        with pytest.raises(TypeError, match="cannot be pickled"):
            copy.copy(ix)
        with pytest.raises(TypeError, match="cannot be pickled"):
            ix.__reduce__()


def results(tmp_path):
    """One value of each result type, the nested ones filled in."""
    with neardup.Index(tmp_path / "ix", sync_writes=False) as ix:
        ix.insert("a", html=page())
        v = ix.insert("b", html=page("A different last paragraph, but short."))
        r = ix.insert("b", text="an entirely new text of the page, which is short")
        assert r.replaced_page is not None
        d = ix.delete("a")
        info = ix.get("b")
    sig = neardup.signatures(html=page())
    sim = neardup.verify(sig.text, neardup.signatures(html=page("Another ending.")).text)
    return [v, r, d, info, sig, sim, neardup.Layout(2, 3)]


def fields(x):
    return {n: getattr(x, n) for n in dir(x) if not n.startswith("_")}


def test_results_pickle_copy_and_compare(tmp_path):
    values = results(tmp_path)
    for x in values:
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            y = pickle.loads(pickle.dumps(x, protocol=protocol))
            assert type(y) is type(x) and y == x and hash(y) == hash(x), (x, protocol)
            assert repr(y) == repr(x)
        assert copy.copy(x) == x and copy.deepcopy(x) == x
    v, r, d, info, sig, sim, layout = values
    assert fields(pickle.loads(pickle.dumps(info))) == fields(info)
    assert fields(pickle.loads(pickle.dumps(sig))) == fields(sig)
    # The nested values come back too.
    r2 = pickle.loads(pickle.dumps(r))
    assert r2.replaced_page == r.replaced_page and isinstance(r2.replaced_page, neardup.Deletion)
    # Values of different fields differ; other types are not equal.
    assert v != r and info != sig and v != 1
    assert len({v, r, info, pickle.loads(pickle.dumps(info))}) == 3


def test_results_unpickle_in_another_process(tmp_path):
    # What a Ray task or a multiprocessing worker does: the bytes go to another interpreter.
    values = results(tmp_path)
    blob = tmp_path / "values.pickle"
    blob.write_bytes(pickle.dumps(values))
    code = (
        "import pickle, sys; vs = pickle.load(open(sys.argv[1], 'rb')); "
        "print(type(vs[3]).__name__, vs[3].key, vs[0].similar_to, vs[4].simhash, vs[6].doc_parts)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(blob)],
        check=True,
        capture_output=True,
        text=True,
        env=dict(os.environ),
    ).stdout.split()
    v, info, sig, layout = values[0], values[3], values[4], values[6]
    assert out == ["PageInfo", info.key, v.similar_to, str(sig.simhash), str(layout.doc_parts)]


def test_a_bad_state_is_refused():
    with pytest.raises(neardup.InvalidArgumentError, match="fields"):
        neardup._neardup._restore("PageInfo", (1, 2))
    with pytest.raises(neardup.InvalidArgumentError, match="no value type"):
        neardup._neardup._restore("Index", ())
