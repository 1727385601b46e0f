"""The change feed from Python (issue #33, item 4): ``Index.changes_since`` streams
``neardup.Change`` values, ``apply_change`` makes a copy hold what the original holds,
``ChangesTrimmedError`` tells a follower it fell behind, and a ``Change`` travels as bytes or
pickled."""

from __future__ import annotations

import pickle

import neardup
import pytest

from conftest import page


def fill(ix):
    ix.insert("a", html=page(), host="a.example")
    ix.insert("b", html=page("A different last paragraph, but short."))
    ix.insert("c", html=page("A third version of the page, with its own ending here."))
    ix.insert("d", text="something else entirely, with no copy anywhere at all")
    ix.insert("d", text="something else entirely, rewritten, and still with no copy at all")
    ix.insert("b", html=page("A different last paragraph, but short."), time=1_700_000_000)
    ix.insert_many(
        [{"id": f"m{i}", "text": f"page {i} of a batch, about subject number {i} alone"} for i in range(5)],
        progress=False,
    )
    del ix["a"]  # the representative: its cluster is handed over


def test_a_copy_that_applies_the_feed_holds_what_the_original_holds(tmp_path):
    with neardup.Index(tmp_path / "ix", sync_writes=False) as ix, neardup.Index(
        tmp_path / "copy", sync_writes=False
    ) as copy:
        assert ix.last_change() == 0 and list(ix.changes_since()) == []
        fill(ix)
        changes = list(ix.changes_since(0, chunk=3))
        assert [c.seq for c in changes] == list(range(1, ix.last_change() + 1))
        kinds = [c.kind for c in changes]
        assert kinds.count("inserted") == 9 and kinds.count("replaced") == 1
        assert kinds.count("retimed") == 1 and kinds.count("deleted") == 1
        assert "representative_changed" in kinds
        first = changes[0]
        assert isinstance(first, neardup.Change)
        assert (first.key, first.host, first.doc, first.representative) == ("a", "a.example", 0, "a")
        assert first.text and first.time == 0 and first.previous is None
        handed = next(c for c in changes if c.kind == "representative_changed")
        assert handed.previous == "a" and handed.key is None and handed.representative in ("b", "c")
        retimed = next(c for c in changes if c.kind == "retimed")
        assert (retimed.key, retimed.time, retimed.text) == ("b", 1_700_000_000, None)

        # Half as values, half as bytes (as shipped to another machine).
        for i, c in enumerate(changes):
            copy.apply_change(c if i % 2 else bytes(c))
        assert copy.last_change() == ix.last_change()
        assert dict(copy.items()) == dict(ix.items())
        assert copy.export().equals(ix.export())
        assert copy.export_clusters().equals(ix.export_clusters())
        assert copy.check()["problem_count"] == 0

        # Applied twice, or not a change: refused.
        with pytest.raises(neardup.InvalidArgumentError):
            copy.apply_change(first)
        with pytest.raises(neardup.InvalidArgumentError):
            copy.apply_change(b"not a change")
        with pytest.raises(neardup.InvalidTypeError):
            copy.apply_change(5)

        # A follower at the end reads nothing; one ahead of the feed is not following it.
        assert list(ix.changes_since(ix.last_change())) == []
        with pytest.raises(neardup.InvalidArgumentError):
            ix.changes_since(ix.last_change() + 1)
        with pytest.raises(neardup.InvalidArgumentError, match="since"):
            ix.changes_since(-1)
        with pytest.raises(neardup.InvalidTypeError, match="since"):
            ix.changes_since("0")


def test_a_change_travels_as_bytes_and_pickled(tmp_path):
    with neardup.Index(tmp_path / "ix", sync_writes=False) as ix:
        fill(ix)
        for c in ix.changes_since(0):
            again = neardup.Change.from_bytes(bytes(c))
            assert again == c and hash(again) == hash(c)
            assert pickle.loads(pickle.dumps(c)) == c
            assert (again.seq, again.kind, again.key, again.cluster) == (c.seq, c.kind, c.key, c.cluster)
        with pytest.raises(neardup.InvalidArgumentError):
            neardup.Change.from_bytes(b"\0" * 12)


def test_a_trimmed_feed_raises_and_the_feed_survives_reopening(tmp_path):
    path = tmp_path / "ix"
    with neardup.Index(path, sync_writes=False, change_retention=4) as ix:
        for i in range(10):
            ix.insert(f"p{i}", text=f"page {i} about its own subject number {i}, nothing shared")
        last = ix.last_change()
    with neardup.Index(path, sync_writes=False, change_retention=4) as ix:
        assert ix.last_change() == last == 10
        with pytest.raises(neardup.ChangesTrimmedError) as e:
            ix.changes_since(0)
        assert e.value.since == 0 and 4 <= e.value.trimmed <= 6
        kept = list(ix.changes_since(last - 4))
        assert [c.key for c in kept] == ["p6", "p7", "p8", "p9"]
        ix.insert("p10", text="page ten about its own subject, nothing shared with the others")
        assert [c.seq for c in ix.changes_since(last)] == [last + 1]
