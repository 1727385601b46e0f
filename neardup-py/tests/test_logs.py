"""Batch logs from Python (SCALEOUT §5 S4–S5): seeding a scratch index, reading back its diff,
and applying it once in effect to the standing index."""

import pytest

import neardup

from test_batch import pages


def test_a_day_decided_in_a_seeded_scratch_is_the_day_decided_in_place(tmp_path):
    day1 = pages(12)
    # New pages, and a re-crawl of p5 with p0's content.
    day2 = [dict(p, id=f"new-{p['id']}") for p in pages(12)[:5]] + [dict(day1[0], id="p5")]
    with neardup.Index(tmp_path / "ref", sync_writes=False) as ref:
        ref.insert_many(day1, order="input", progress=False)
        ref.checkpoint(tmp_path / "standing")
        ref.delete("p3")
        ref.insert_many(day2, order="input", progress=False)
        want = ref.export()
    with neardup.Index(tmp_path / "standing", sync_writes=False) as standing:
        stats = standing.stats()
        ids, clusters = standing.decision_reach(
            [p["html"] for p in day2], [p["id"] for p in day2], ["p3"]
        )
        assert 0 < len(ids) <= len(day1)
        seed = standing.seed_log(ids, clusters)
        # Written to a file as it is read: the same bytes; a refused seed leaves no file.
        file = tmp_path / "seed.ndlog"
        assert standing.seed_log_file(ids, clusters, str(file)) == len(seed)
        assert file.read_bytes() == seed
        with pytest.raises(neardup.InvalidArgumentError):
            standing.seed_log_file([10_000], [], str(tmp_path / "refused.ndlog"))
        assert not (tmp_path / "refused.ndlog").exists()
        with neardup.Index(tmp_path / "scratch", sync_writes=False) as scratch:
            assert scratch.apply_log(1, seed)
            before = scratch.state_log()
            scratch.delete("p3")
            scratch.insert_many(day2, order="input", progress=False)
            log = neardup.state_diff(before, scratch.state_log(), stats["pages"], stats["clusters"])
        assert standing.applied_batch() is None
        assert standing.apply_log(1, log)
        assert not standing.apply_log(1, log)
        assert standing.applied_batch() == 1
        assert standing.export().equals(want)
        assert standing.check()["problem_count"] == 0


def test_a_scratch_numbered_densely_writes_the_same_log(tmp_path):
    """Issue #34 item 5: a work unit's scratch index numbers its seed densely
    (``scratch_seed``) and maps its diff back (``state_diff_file(..., ids=)``): the log is the
    one a scratch index that kept the standing ids writes, operation for operation, in global
    (64-bit) ids: ``join_logs`` widens the kept one's to compare them byte for byte."""
    day1 = pages(12)
    day2 = [dict(p, id=f"new-{p['id']}") for p in pages(12)[:5]] + [dict(day1[0], id="p5")]
    with neardup.Index(tmp_path / "standing", sync_writes=False) as standing:
        standing.insert_many(day1, order="input", progress=False)
        stats = standing.stats()
        ids, clusters = standing.decision_reach([p["html"] for p in day2], [p["id"] for p in day2], ["p3"])
        seed = standing.seed_log(ids, clusters)
    logs = []
    for dense in (False, True):
        with neardup.Index(tmp_path / f"scratch-{dense}", sync_writes=False) as scratch:
            mapping = None
            if dense:
                seed_in, mapping = neardup.scratch_seed(seed)
                assert "ScratchIds" in repr(mapping)
            else:
                seed_in = seed
            scratch.apply_log(1, seed_in)
            before = scratch.state_log()
            scratch.delete("p3")
            scratch.insert_many(day2, order="input", progress=False)
            path = tmp_path / f"diff-{dense}.ndlog"
            scratch.state_diff_file(before, stats["pages"], stats["clusters"], str(path), mapping)
            logs.append(path.read_bytes())
    assert logs[0] != logs[1]  # 32-bit ids and 64-bit ones
    assert neardup.join_logs([logs[0]]) == logs[1]
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.scratch_seed(seed[:-3])
    with pytest.raises(TypeError):
        neardup.scratch_seed("not bytes")


def test_log_files_joined_file_to_file_are_the_logs_joined(tmp_path):
    """Issue #34: a partition's log of a batch is joined from its pieces file to file
    (``join_log_files``), the bytes ``join_logs`` gives in memory; a damaged piece leaves no
    joined file."""
    logs = []
    for n in (2, 3, 4):
        with neardup.Index(tmp_path / f"ix-{n}", sync_writes=False) as ix:
            ix.insert_many(pages(n), order="input", progress=False)
            logs.append(ix.state_log())
    head, *rest = (neardup.join_logs([log]) for log in logs)
    paths = []
    for i, log in enumerate(rest):
        paths.append(tmp_path / f"piece-{i}.ndlog")
        paths[-1].write_bytes(log)
    out = tmp_path / "joined.ndlog"
    size = neardup.join_log_files(head, paths, out)
    assert out.read_bytes() == neardup.join_logs([head, *rest])
    assert size == out.stat().st_size
    assert neardup.join_log_files(head, [], str(out)) == len(head)
    paths[0].write_bytes(rest[0][:-3])
    out.unlink()
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.join_log_files(head, paths, out)
    assert not out.exists()
    with pytest.raises(TypeError):
        neardup.join_log_files(head, "not a list", out)


def test_a_damaged_log_is_refused(tmp_path):
    with neardup.Index(tmp_path / "a", sync_writes=False) as a:
        a.insert_many(pages(3), order="input", progress=False)
        log = a.state_log()
    with neardup.Index(tmp_path / "b", sync_writes=False) as b:
        with pytest.raises(neardup.InvalidArgumentError):
            b.apply_log(1, log[:-3])
        with pytest.raises(neardup.InvalidArgumentError):
            neardup.state_diff(log, b"NDLOG", 0, 0)
        assert b.apply_log(1, log)
        with pytest.raises(neardup.InvalidArgumentError):
            b.apply_log(3, log)
        assert len(b) == 3
