"""S3's connected components (SCALEOUT §5 S3, §7.1): ``neardup.Components`` (a union-find over
``uint64`` node ids fed with edges in bulk, with partial forests that merge) and
``neardup.close_simhash_pairs`` against brute force; and the merge's cap on a component's size:
a day merged with a cap of a few items cuts sketch edges and says so, and still indexes every
page with a clean check; with the default cap, the single node's result.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import neardup
from conftest import OPTIONS, REFERENCE, write_jsonl


def u64(values) -> bytes:
    return np.asarray(values, dtype=np.uint64).tobytes()


def partition_of(c: neardup.Components) -> set:
    """The components as a set of frozensets of nodes."""
    nodes, labels, sizes = c.labels()
    nodes = np.frombuffer(nodes, dtype=np.uint64).tolist()
    labels = np.frombuffer(labels, dtype=np.uint32).tolist()
    groups: dict = {}
    for n, label in zip(nodes, labels):
        groups.setdefault(label, set()).add(n)
    assert np.frombuffer(sizes, dtype=np.uint32).tolist() == [len(groups[i]) for i in range(len(groups))]
    return {frozenset(g) for g in groups.values()}


def brute_partition(nodes, edges) -> set:
    label = {n: n for n in nodes}
    changed = True
    while changed:
        changed = False
        for a, b in edges:
            m = min(label[a], label[b])
            for x in (a, b):
                if label[x] != m:
                    label[x], changed = m, True
    groups: dict = {}
    for n, lab in label.items():
        groups.setdefault(lab, set()).add(n)
    return {frozenset(g) for g in groups.values()}


@pytest.mark.parametrize("seed", range(5))
def test_components_and_merged_forests_equal_brute_force(seed):
    rng = random.Random(seed)
    # Sparse ids across the whole u64 range, as S3's tagged nodes are.
    pool = [rng.getrandbits(64) for _ in range(60)]
    edges = [(rng.choice(pool), rng.choice(pool)) for _ in range(70)]
    want = brute_partition(pool, edges)
    one = neardup.Components()
    one.add_nodes(u64(pool))
    one.add_edges(u64([a for a, _ in edges]), u64([b for _, b in edges]))
    assert len(one) == len(pool)
    assert partition_of(one) == want
    # Three builders, each with a share of the edges; their forests merged on a fourth.
    merged = neardup.Components()
    merged.add_nodes(u64(pool))
    for part in range(3):
        b = neardup.Components()
        share = edges[part::3]
        b.add_edges(u64([x for x, _ in share]), u64([y for _, y in share]))
        nodes, roots = b.forest()
        assert len(nodes) == len(roots) and len(nodes) <= 16 * len(share)
        merged.merge_forest(nodes, roots)
    assert partition_of(merged) == want


def brute_pack(nodes, labels, rows_n, work_units):
    """S3's packing written plainly: components as lists of (kind, value), kept when they hold
    a row or a delete, in the order of their first item (rows, then deletes after every row),
    each to the least loaded unit (pages, rows and deletes; the lowest-numbered on a tie)."""
    from neardup.ray import _plan

    comps: dict = {}
    for node, label in zip(nodes, labels):
        comps.setdefault(label, []).append((node >> _plan._SHIFT, node & ((1 << _plan._SHIFT) - 1)))

    def first(items):
        return min(v if k == _plan._ROW else rows_n + v for k, v in items if k in (_plan._ROW, _plan._GONE))

    def size(items):
        return sum(1 for k, _ in items if k in (_plan._ROW, _plan._GONE, _plan._DOC))

    kept = sorted((c for c in comps.values() if any(k in (_plan._ROW, _plan._GONE) for k, _ in c)), key=first)
    units = [{k: [] for k in range(4)} for _ in range(max(1, min(work_units, len(kept))))]
    for c in kept:
        i = min(range(len(units)), key=lambda i: (sum(len(units[i][k]) for k in (_plan._ROW, _plan._GONE, _plan._DOC)), i))
        for k, v in c:
            units[i][k].append(v)
    out = [[sorted(u[k]) for k in (_plan._ROW, _plan._GONE, _plan._DOC, _plan._CLUSTER)] for u in units]
    return out, sorted((size(c) for c in kept), reverse=True)


@pytest.mark.parametrize("seed", range(6))
def test_work_units_take_components_in_day_order_to_the_least_loaded(seed):
    from neardup.ray import _plan

    rng = random.Random(seed)
    rows_n = rng.randint(1, 60)
    nodes = [(_plan._ROW << _plan._SHIFT) | r for r in range(rows_n)]
    nodes += [(_plan._GONE << _plan._SHIFT) | g for g in range(rng.randint(0, 8))]
    nodes += [(_plan._DOC << _plan._SHIFT) | (1000 + d) for d in range(rng.randint(0, 30))]
    nodes += [(_plan._CLUSTER << _plan._SHIFT) | (50 + c) for c in range(rng.randint(0, 10))]
    rng.shuffle(nodes)
    labels = [rng.randrange(max(1, len(nodes) // 3)) for _ in nodes]
    # Labels numbered densely, as the union-find gives them.
    dense = {l: i for i, l in enumerate(sorted(set(labels)))}
    labels = [dense[l] for l in labels]
    for work_units in (1, 2, 3, 7):
        units, sizes = _plan._pack(np.asarray(nodes, dtype=np.uint64), np.asarray(labels, dtype=np.int64), rows_n, work_units)
        want, want_sizes = brute_pack(nodes, labels, rows_n, work_units)
        assert [[u.rows, u.gone, u.pages, u.clusters] for u in units] == want
        assert sizes == want_sizes


def plain_number_ids(base, place, results):
    """S4's id numbering written plainly: every id of every unit sorted by its event (a delete's
    position, then a row's call and place in it), its unit and its place among the unit's ids,
    then numbered from the batch's counters."""
    events = []
    for u, allocs in enumerate(results):
        for i, (what, at, kind, local) in enumerate(allocs):
            key = (0, at, 0) if what == "delete" else (1, int(place[0][at]), int(place[1][at]))
            events.append((key, u, i, kind, local))
    events.sort(key=lambda e: (e[0], e[1], e[2]))
    maps = [{"docs": {}, "seqs": {}, "clusters": {}} for _ in results]
    doc, cluster, seq = base["next_doc"], base["next_cluster"], base["next_seq"]
    for _, u, _, kind, local in events:
        if kind == "page":
            maps[u]["docs"][local - base["next_doc"]] = doc
            maps[u]["seqs"][local - base["next_doc"]] = seq
            doc, seq = doc + 1, seq + 1
        else:
            maps[u]["clusters"][local - base["next_cluster"]] = cluster
            cluster += 1
    return [{k: [t[i] for i in range(len(t))] for k, t in m.items()} for m in maps]


@pytest.mark.parametrize("seed", range(8))
def test_new_ids_are_numbered_in_the_single_nodes_order(seed):
    from neardup.ray import _decide

    rng = random.Random(seed)
    for _ in range(25):
        n_rows = rng.randint(0, 30)
        place = (np.array([rng.randint(0, 3) for _ in range(n_rows)], np.int32), np.array(rng.sample(range(100), n_rows), np.int64))
        base = {"next_doc": rng.randint(0, 50), "next_cluster": rng.randint(0, 50), "next_seq": rng.randint(0, 500)}
        results = []
        for _ in range(rng.randint(1, 4)):
            doc, cluster, allocs = base["next_doc"], base["next_cluster"], []
            for _ in range(rng.randint(0, 12)):
                what = "row" if n_rows and rng.random() < 0.8 else "delete"
                at = rng.randrange(n_rows) if what == "row" else rng.randint(0, 5)
                if rng.random() < 0.6:
                    allocs.append((what, at, "page", doc))
                    doc += 1
                else:
                    allocs.append((what, at, "cluster", cluster))
                    cluster += 1
            results.append(allocs)
        got = _decide.number_ids(base, place, [_decide.allocation_arrays(a) for a in results])
        assert got == plain_number_ids(base, place, results)


def test_a_unit_that_did_not_report_an_id_is_refused():
    from neardup.ray import _decide

    base = {"next_doc": 10, "next_cluster": 0, "next_seq": 0}
    place = (np.zeros(2, np.int32), np.arange(2, dtype=np.int64))
    # Ids 10 and 12 reported, 11 not.
    allocs = [("row", 0, "page", 10), ("row", 1, "page", 12)]
    with pytest.raises(neardup.CorruptionError):
        _decide.number_ids(base, place, [_decide.allocation_arrays(allocs)])


def test_capped_edges_join_while_the_joined_weight_fits():
    c = neardup.Components()
    c.add_weighted_nodes(u64([1, 2, 3, 4]), np.asarray([3, 2, 2, 5], dtype=np.uint32).tobytes())
    # 1+2 = 5, then +3 = 7 fit a cap of 7; joining 4 (12) or the new 5 (8) is cut.
    assert c.add_edges_capped(u64([1, 2, 3, 1]), u64([2, 3, 4, 5]), 7) == 2
    nodes, labels, sizes = c.labels()
    assert np.frombuffer(labels, dtype=np.uint32).tolist() == [0, 0, 0, 1, 2]
    assert np.frombuffer(sizes, dtype=np.uint32).tolist() == [7, 5, 1]
    with pytest.raises(neardup.InvalidArgumentError):
        c.add_weighted_nodes(u64([9]), b"")
    with pytest.raises(neardup.InvalidArgumentError):
        c.add_edges_capped(u64([1]), u64([]), 7)


def test_a_cut_keeps_each_probes_best_standing_candidates_most_shared_first(tmp_path):
    from neardup.ray import _plan

    r = lambda i: (1 << 56) | i  # noqa: E731 (a row of the day; standing pages are bare ids)
    a = np.asarray([r(1), r(1), r(1), r(1), r(1), r(2)], dtype=np.uint64)
    b = np.asarray([3, 3, 4, 5, r(2), 5], dtype=np.uint64)
    w = np.asarray([2, 2, 2, 9, 3, 2], dtype=np.uint32)
    ea, eb, ew, dropped = _plan._best_sketch_edges(a, b, w, 1)
    # Row 1 keeps page 3 (two shared keys) and drops 4 and 5; row 2 keeps 5; rows join rows.
    assert list(zip(ea.tolist(), eb.tolist(), ew.tolist())) == [(r(1), 3, 2), (r(2), 5, 2), (r(1), r(2), 3)]
    assert dropped == 2
    assert _plan._best_sketch_edges(a, b, w, 8)[3] == 0
    # The default number of candidates a probe keeps is the index's.
    with neardup.Index(tmp_path / "ix") as ix:
        assert ix.options["max_clusters_verified"] == _plan.MAX_CLUSTERS_VERIFIED


def test_components_refuse_arrays_that_are_not_uint64_pairs():
    c = neardup.Components()
    with pytest.raises(neardup.InvalidArgumentError):
        c.add_edges(u64([1, 2]), u64([3]))
    with pytest.raises(neardup.InvalidArgumentError):
        c.add_nodes(b"\x00" * 7)
    assert len(c) == 0


@pytest.mark.parametrize("distance", [0, 1, 3, 6])
def test_close_simhash_pairs_equal_all_pairs(distance):
    rng = random.Random(distance)
    base = [rng.getrandbits(64) for _ in range(8)]
    hashes = [b ^ (1 << rng.randrange(64)) ^ (1 << rng.randrange(64)) if rng.random() < 0.7 else b for b in base for _ in range(6)]
    want = [(i, j) for i in range(len(hashes)) for j in range(i + 1, len(hashes)) if bin(hashes[i] ^ hashes[j]).count("1") <= distance]
    a, b = neardup.close_simhash_pairs(u64(hashes), distance)
    got = list(zip(np.frombuffer(a, dtype=np.uint32).tolist(), np.frombuffer(b, dtype=np.uint32).tolist()))
    assert got == want


ray = pytest.importorskip("ray", reason="neardup.ray needs Ray (scripts/setup.sh installs it)")
from neardup.ray import DistributedIndex  # noqa: E402


def test_a_capped_merge_cuts_sketch_edges_and_indexes_every_page(cluster, dev_pages, tmp_path):
    day1, day2 = dev_pages[:500], dev_pages[500:700] + [dict(dev_pages[600 + i], id=dev_pages[i * 40]["id"]) for i in range(10)]
    f1, f2 = write_jsonl(tmp_path / "d1.jsonl.gz", day1), write_jsonl(tmp_path / "d2.jsonl.gz", day2)
    gone = tmp_path / "gone.txt"
    gone.write_text("\n".join(p["id"] for p in day1[5:60:9]) + "\n")
    ref = neardup.Index(tmp_path / "ref", **REFERENCE)
    ref.insert_many(day1, order="input", batch_size=len(day1), progress=False)
    for line in gone.read_text().split():
        ref.delete(line)
    ref.insert_many(day2, order="input", batch_size=len(day2), progress=False)
    want_keys = sorted(ref.export().column("key").to_pylist())
    with DistributedIndex(tmp_path / "dist", 2, 2, **OPTIONS) as dx:
        with pytest.raises(neardup.InvalidArgumentError):
            dx.merge([f1], max_component=0, progress=False)
        r1 = dx.merge([f1], max_component=3, progress=False)
        r2 = dx.merge([f2], gone, max_component=3, progress=False)
        for r in (r1, r2):
            comp = r["components"]
            assert comp["capped"] >= 1 and comp["cut_edges"] >= 1, comp
            # What cutting sketch keys could not bring under the cap is said.
            assert comp["largest"] <= 3 or comp["over_cap"] >= 1, comp
        assert r1["live_pages"] + r1["errors"] == len(day1)
        assert sorted(dx.export().column("key").to_pylist()) == want_keys
        assert dx.check()["problem_count"] == 0


def test_the_default_cap_cuts_nothing_and_gives_the_single_nodes_clusters(cluster, dev_pages, tmp_path):
    day = dev_pages[:600]
    f = write_jsonl(tmp_path / "d.jsonl.gz", day)
    ref = neardup.Index(tmp_path / "ref", **REFERENCE)
    ref.insert_many(day, order="input", batch_size=len(day), progress=False)
    with DistributedIndex(tmp_path / "dist", 2, 2, **OPTIONS) as dx:
        r = dx.merge([f], progress=False)
        assert r["components"]["capped"] == 0 and r["components"]["cut_edges"] == 0
        assert r["components"]["over_cap"] == 0
        assert dx.export().equals(ref.export())
        assert dx.export_clusters().equals(ref.export_clusters())
