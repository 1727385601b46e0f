"""`neardup.Partition`: one partition of a distributed index with 64-bit ids (format 7, issue #34
item 5). A whole index's state cut by `Layout.route` and applied to format 7 partitions answers
every look-up of the merge as the format 6 partitions (`neardup.Index` with `set_partition`)
holding the same rows; each database refuses the other's handle; a partition opens as the
partition it is."""

import pickle

import numpy as np
import pytest

import neardup

from test_batch import pages


def _parts(tmp_path, layout, make):
    """Every partition of `layout`, by (role, part), made by `make(path, role, part)`."""
    roles = [("key", n) for n in range(layout.key_parts)] + [("doc", n) for n in range(layout.doc_parts)]
    return {(r, n): make(str(tmp_path / f"{r}-{n}"), r, n) for r, n in roles}


def test_partitions_of_either_width_answer_alike(tmp_path):
    with neardup.Index(tmp_path / "whole", sync_writes=False) as whole:
        day = pages(30)
        whole.insert_many(day, order="input", progress=False)
        state = whole.state_log()
        want_stats = whole.stats()
    layout = neardup.Layout(2, 3)
    keys_logs, doc_logs = layout.route(state)

    def narrow(path, role, part):
        ix = neardup.Index(path, sync_writes=False)
        ix.set_partition(layout, role, part)
        return ix

    def wide(path, role, part):
        return neardup.Partition(path, layout, role, part)

    n = _parts(tmp_path / "n", layout, narrow)
    w = _parts(tmp_path / "w", layout, wide)
    for (role, part), p in w.items():
        log = (keys_logs if role == "key" else doc_logs)[part]
        assert p.applied_batch() is None
        assert p.apply_log(1, log) and not p.apply_log(1, log)
        assert p.applied_batch() == 1
        assert n[(role, part)].apply_log(1, log)
        assert p.partition == (role, part, 2, 3)
        assert p.stats()["pages"] == want_stats["pages"] == len(p)
        assert p.stats()["clusters"] == want_stats["clusters"]
    packed = b"".join(
        f[1] for d in range(layout.doc_parts) for f in w[("doc", d)].filed_pages(list(range(40))) if f
    )
    assert packed
    sims = []
    for d in range(layout.doc_parts):
        a, b = w[("doc", d)], n[("doc", d)]
        ids = list(range(40))
        assert a.filed_pages(ids) == b.filed_pages(ids)
        sims += [f[0] for f in a.filed_pages(ids) if f]
        assert a.page_clusters(ids) == b.page_clusters(ids)
        assert a.cluster_member_ids(ids) == b.cluster_member_ids(ids)
        names = [p["id"] for p in day] + ["no-such-page"]
        assert a.key_ids(names) == b.key_ids(names)
        assert a.partition_rows() == b.partition_rows()
        assert a.seed_log([], []) and b.seed_log([], [])
        # A doc partition's seed written to a file as it is read: the bytes of its seed_log.
        mine = [i for i in ids if a.page_clusters([i])[0] is not None]
        seed_file = tmp_path / f"seed-{d}.ndlog"
        assert a.seed_log_file(mine, [], str(seed_file)) == seed_file.stat().st_size
        assert seed_file.read_bytes() == a.seed_log(mine, [])
    assert any(w[("doc", d)].partition_rows()[0]["doc"] for d in range(layout.doc_parts))
    for k in range(layout.key_parts):
        a, b = w[("key", k)], n[("key", k)]
        assert a.posting_ids(packed) == b.posting_ids(packed)
        assert a.simhash_ids(sims) == b.simhash_ids(sims)
        # The keys joined into a forest, and as weighted stars (each key's owners and standing
        # pages): the same on either width.
        forests, stars = [], []
        owners = (np.arange(len(packed) // 9, dtype=np.uint64) | np.uint64(1 << 56)).tobytes()
        for p in (a, b):
            join, star = neardup.ProbeJoin(), neardup.KeyStars()
            join.add_keys(packed, owners)
            star.add_keys(packed, owners)
            forests.append(p.probe_forest(join, 0))
            stars.append(p.key_stars(star, 0))
        assert forests[0] == forests[1] and forests[0][2]["keys"] > 0
        assert stars[0] == stars[1]
        src, dst, weight, keys = stars[0]
        ends = np.concatenate([np.frombuffer(src, dtype=np.uint64), np.frombuffer(dst, dtype=np.uint64)])
        assert keys == len({packed[i : i + 9] for i in range(0, len(packed), 9)})
        assert len(src) == len(dst) == 2 * len(weight) and len(weight) > 0
        assert set(ends[ends >> np.uint64(56) == 0].tolist()) == set().union(*map(set, a.posting_ids(packed)))
        assert all(w >= 2 for w in np.frombuffer(weight, dtype=np.uint32))
    for p in list(n.values()) + list(w.values()):
        p.close()


def test_a_partition_opens_as_what_it_is(tmp_path):
    layout = neardup.Layout(2, 2)
    path = tmp_path / "doc-1"
    with neardup.Partition(path, layout, "doc", 1) as p:
        assert not p.closed
        with pytest.raises(TypeError, match="cannot be pickled"):
            pickle.dumps(p)
        p.checkpoint(tmp_path / "shot")
    assert p.closed
    with pytest.raises(neardup.InvalidArgumentError, match="closed"):
        p.stats()
    # Opened again with its stored configuration, as the partition it is and no other.
    with neardup.Partition(path, layout, "doc", 1) as p:
        assert p.partition == ("doc", 1, 2, 2) and len(p) == 0
    with pytest.raises(neardup.InvalidArgumentError, match="holds doc partition 1"):
        neardup.Partition(path, layout, "key", 1)
    with pytest.raises(neardup.InvalidArgumentError, match="holds doc partition 1"):
        neardup.Partition(path, neardup.Layout(2, 3), "doc", 1)
    with neardup.Partition(tmp_path / "shot", layout, "doc", 1, read_only=True) as shot:
        assert shot.partition == ("doc", 1, 2, 2)
    # Each database refuses the other's handle, nothing written.
    with pytest.raises(neardup.IncompatibleFormatError):
        neardup.Index(path)
    neardup.Index(tmp_path / "single").close()
    with pytest.raises(neardup.IncompatibleFormatError):
        neardup.Partition(tmp_path / "single", layout, "doc", 0)
    with pytest.raises(neardup.InvalidArgumentError, match="role"):
        neardup.Partition(tmp_path / "other", layout, "page", 0)
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.Partition(tmp_path / "other", layout, "doc", 5)


def test_the_actors_open_a_format_6_partition_as_it_is(tmp_path):
    """A root made before format 7 keeps its partitions: the actors open a format 6 partition
    as the ``neardup.Index`` it is, and make new ones in format 7."""
    from neardup.ray._partition import is_wide, open_partition

    layout = neardup.Layout(2, 2)
    old = str(tmp_path / "key-0")
    with neardup.Index(old) as ix:
        ix.set_partition(layout, "key", 0)
    ix = open_partition(old, {}, layout, "key", 0)
    assert isinstance(ix, neardup.Index) and not is_wide(ix)
    assert ix.partition == ("key", 0, 2, 2)
    ix.close()
    new = open_partition(str(tmp_path / "doc-1"), {}, layout, "doc", 1)
    assert is_wide(new) and new.partition == ("doc", 1, 2, 2)
    new.close()


def test_a_merge_gives_out_ids_past_two_to_the_32(cluster, dev_pages, tmp_path):
    """Issue #34 item 5: a distributed index whose allocators stand past 2³² (a first batch
    that only moves them) merges two days into the single node's clusters, every page and
    cluster id the single node's moved by the same offset; its distributed check reconciles
    every reference between partitions."""
    from conftest import OPTIONS, REFERENCE, write_jsonl
    from neardup.ray import DistributedIndex

    ray = pytest.importorskip("ray")
    day1, day2 = dev_pages[:400], dev_pages[400:600]
    gone = [p["id"] for p in day1[::50]]
    (tmp_path / "gone.txt").write_text("\n".join(gone) + "\n")
    ref = neardup.Index(tmp_path / "ref", **REFERENCE)
    ref.insert_many(day1, order="input", batch_size=len(day1), progress=False)
    for k in gone:
        ref.delete(k)
    ref.insert_many(day2, order="input", batch_size=len(day2), progress=False)
    doc0, cluster0 = 1 << 33, (1 << 33) + 7
    with DistributedIndex(tmp_path / "dist", 2, 2, **OPTIONS) as dx:
        base = {"next_doc": doc0, "next_cluster": cluster0, "next_seq": 0, "live_docs": 0, "live_clusters": 0, "wide": 1}
        keys, docs = dx.layout.route(neardup.batch_counters(base, []))
        assert ray.get([a.apply.remote(1, log) for a, log in zip(dx.keys + dx.docs, keys + docs)]) == [True] * 4
        dx.merge([write_jsonl(tmp_path / "d1.jsonl.gz", day1)], progress=False)
        r2 = dx.merge([write_jsonl(tmp_path / "d2.jsonl.gz", day2)], tmp_path / "gone.txt", progress=False)
        assert r2["batch"] == 3 and r2["deleted"] == len(gone)
        assert dx.export().equals(ref.export())
        got, want = dx.export_clusters(), ref.export_clusters()
        assert got.drop_columns(["cluster"]).equals(want.drop_columns(["cluster"]))
        assert [c - cluster0 for c in got.column("cluster").to_pylist()] == want.column("cluster").to_pylist()
        assert min(got.column("cluster").to_pylist()) >= cluster0
        pages = dx.pages()
        assert min(pages.column("doc").to_pylist()) >= doc0
        assert dx.stats()["id_bits"] == 64
        # Every reference between partitions reconciles; the only problems are the ids the
        # first batch skipped without freeing them (no free-id key is written for them), which
        # the counts of free ids report: the deleted pages' ids are the only free ones.
        report = dx.check()
        problems = sorted(report["problems"])
        assert report["problem_count"] == 2, report
        n = len(want)
        assert problems == [
            f"free cluster ids: 0 of the {cluster0 + n} ids given out, for {n} clusters",
            f"free page ids: {len(gone)} of the {doc0 + 600} ids given out, for {600 - len(gone)} pages",
        ], problems
    ref.close()
