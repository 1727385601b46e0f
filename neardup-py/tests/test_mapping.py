"""An Index is a mapping of key → PageInfo: len, in, [], del, get, iteration, keys(), values(),
items(), streamed through the library's cursors a chunk at a time."""

from __future__ import annotations

from collections.abc import Mapping

import neardup
import pytest

from conftest import page


@pytest.fixture
def ix(tmp_path):
    with neardup.Index(tmp_path / "ix", sync_writes=False) as ix:
        ix.insert("a", html=page())
        ix.insert("b", html=page("A different last paragraph, but short."))
        ix.insert("c", text="something else entirely, with no copy anywhere at all")
        yield ix


def test_getitem_and_delitem(ix):
    assert isinstance(ix, Mapping)
    info = ix["b"]
    assert isinstance(info, neardup.PageInfo) and info == ix.get("b")
    assert (info.key, info.representative, info.similar_to) == ("b", "a", "a")
    with pytest.raises(KeyError) as e:
        ix["nobody"]
    assert isinstance(e.value, neardup.NotFoundError) and e.value.key == "nobody"
    assert ix.get("nobody") is None and ix.get("nobody", 42) == 42
    del ix["c"]
    assert "c" not in ix and len(ix) == 2
    with pytest.raises(KeyError):
        del ix["c"]
    with pytest.raises(neardup.InvalidTypeError, match="key"):
        ix[5]
    with pytest.raises(neardup.InvalidTypeError, match="key"):
        del ix[5]


def test_iteration_keys_values_items(ix):
    assert list(ix) == ["a", "b", "c"]
    keys = ix.keys()
    assert list(keys) == ["a", "b", "c"] and len(keys) == 3 and "b" in keys and "z" not in keys
    values = list(ix.values())
    assert [v.key for v in values] == ["a", "b", "c"]
    assert values == [ix[k] for k in ix]
    items = list(ix.items())
    assert [k for k, _ in items] == ["a", "b", "c"] and all(v == ix[k] for k, v in items)
    assert ("b", ix["b"]) in ix.items() and ("b", ix["a"]) not in ix.items()
    assert dict(ix.items()) == {k: ix[k] for k in ix}
    assert [v.doc for v in values] == sorted(v.doc for v in values)


def test_iteration_streams_in_chunks(tmp_path, monkeypatch):
    from neardup import _mapping

    with neardup.Index(tmp_path / "ix", sync_writes=False) as ix:
        keys = [f"k{i:03}" for i in range(25)]
        for k in keys:
            ix.insert(k, text=f"page {k} has a text of its own, number {k}, with nothing like it")
        calls = []
        real = type(ix)._keys_chunk

        def spy(self, first, chunk):
            calls.append((first, chunk))
            return real(self, first, chunk)

        monkeypatch.setattr(_mapping, "CHUNK", 4)
        monkeypatch.setattr(type(ix), "_keys_chunk", spy, raising=False)
        # CHUNK is read when the iteration starts (default argument): use the function.
        got = list(_mapping.iter_keys(ix, 4))
        assert got == keys
        assert len(calls) == 7 and all(c == 4 for _, c in calls)
        assert list(_mapping.iter_pages(ix, 4)) == [ix[k] for k in keys]
        # Deletes during an iteration: the pages held throughout are met once.
        it = _mapping.iter_keys(ix, 4)
        seen = [next(it) for _ in range(5)]
        del ix["k000"], ix["k020"]
        seen += list(it)
        assert seen == keys[:5] + [k for k in keys[5:] if k != "k020"]


def test_iteration_on_an_empty_and_a_closed_index(tmp_path):
    ix = neardup.Index(tmp_path / "ix")
    assert list(ix) == [] and list(ix.items()) == [] and list(ix.values()) == []
    ix.insert("a", text="a page of text that is long enough to have a main text")
    it = iter(ix)
    ix.close()
    with pytest.raises(neardup.InvalidArgumentError, match="closed"):
        next(it)
    # The index is closed for real: it opens again.
    with neardup.Index(tmp_path / "ix") as again:
        assert list(again) == ["a"]
