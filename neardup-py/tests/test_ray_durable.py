"""neardup.ray: durable state off the nodes and node-loss recovery (issue #34, item 2), on a
simulated cluster (``ray.cluster_utils.Cluster``: a head ``n0`` and nodes ``n1``, ``n2`` of one
CPU, named by their ``neardup-node`` label). Each node keeps its databases under its own local
root (``local_root=".../local/{node}"``), which no other node reads, and a shared directory
stands for the store (S3, GCS, NFS).

- A node holding partitions is removed during day 2, its local root deleted (its disk is gone):
  the driver is killed while the work units decide (S4), after the first partition, one of the
  lost node's, applied its log (S5), or after every partition applied it but before the
  checkpoints (after S5); the merge is run again. The lost partitions are restored on the
  surviving nodes from their checkpoints in the store (plus, after S5, the batch's log replayed),
  ``placement.json`` names their new nodes, the report says which were restored from where, and
  the export and clusters are single-node ingest's of the same two days (``reuse_ids=False``),
  with a clean check. ``--no-restore`` refuses the index instead, as before stores.
- Checkpoints are incremental (a file already in the store is not uploaded again) and retired
  (``keep_checkpoints``), with the files only they named; the batch logs a restore needs stay, the
  others are retired. A database lost on an alive node is restored in place.
- A node lost while a merge runs (the same driver: during S4, or during S5 after one of its
  partitions applied its log): its partitions are restored when they fail, and the merge
  completes with the single node's answers.
- A store that is missing, not a directory, or read-only is a ``StoreError`` before anything
  is created or merged: the root and the partitions are untouched.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="neardup.ray needs Ray (scripts/setup.sh installs it)")

import neardup  # noqa: E402
from conftest import OPTIONS, REFERENCE, write_jsonl  # noqa: E402
from neardup.ray import NODE_LABEL, DistributedIndex, StoreError  # noqa: E402
from neardup.ray import _files, _store  # noqa: E402
from neardup.ray._store import Store  # noqa: E402


@pytest.fixture(scope="module")
def days(dev_pages, tmp_path_factory):
    """Two small days (250 pages; then a delete list of representatives and members, and 150
    pages of which 10 re-crawl day 1's keys) and single-node ingest's export and clusters after
    day 2, each as one batch in input order."""
    tmp = tmp_path_factory.mktemp("durable")
    day1 = dev_pages[:250]
    day2 = dev_pages[250:390] + [dict(dev_pages[260 + i], id=day1[i * 20 + 3]["id"]) for i in range(10)]
    f1, f2 = write_jsonl(tmp / "day1.jsonl.gz", day1), write_jsonl(tmp / "day2.jsonl.gz", day2)
    with neardup.Index(tmp / "ref", **REFERENCE) as ref:
        ref.insert_many(day1, order="input", batch_size=len(day1), progress=False)
        reps = sorted(set(ref.export().column("representative").to_pylist()))
        gone = sorted(set(reps[::25][:6] + [day1[i * 31 + 1]["id"] for i in range(6)]))
        (tmp / "gone.txt").write_text("\n".join(gone) + "\n")
        for k in gone:
            ref.delete(k)
        ref.insert_many(day2, order="input", batch_size=len(day2), progress=False)
        want = (ref.export(), ref.export_clusters())
    return f1, f2, tmp / "gone.txt", want


@pytest.fixture(scope="module")
def cluster():
    """A head ``n0`` and a node ``n2`` (one CPU each), joined by this process; each test adds
    its own ``n1``, which it loses."""
    from ray.cluster_utils import Cluster

    c = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "labels": {NODE_LABEL: "n0"}},
    )
    c.add_node(num_cpus=1, labels={NODE_LABEL: "n2"})
    ray.init(address=c.address, logging_level="WARNING", log_to_driver=False)
    yield c
    ray.shutdown()
    c.shutdown()


def cli(address: str, *args: str, kill_at: str = None) -> subprocess.CompletedProcess:
    """``python -m neardup.ray ARGS --address ADDRESS`` in a subprocess (a driver of its own)."""
    env = dict(os.environ)
    env.pop("NEARDUP_RAY_KILL_AT", None)
    if kill_at:
        env["NEARDUP_RAY_KILL_AT"] = kill_at
    cmd = [sys.executable, "-m", "neardup.ray", *args, "--address", address]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)


def alive_ids():
    return {n["Labels"].get(NODE_LABEL): n["NodeID"] for n in ray.nodes() if n["Alive"]}


def on_their_nodes(dx: DistributedIndex) -> bool:
    ids = alive_ids()
    return all(p["node_id"] == ids[p["node"]] for p in dx.placement().values())


def store_files(store: Path):
    """The store's checkpoint manifests and files: {partition: (batches, files named, files held)}."""
    out = {}
    for part in sorted((store / "checkpoints").iterdir()):
        manifests = sorted(p.name for p in part.glob("batch=*.json"))
        named = {f["sha256"] for m in manifests for f in json.loads((part / m).read_text())["files"]}
        held = {p.name for p in (part / "files").iterdir()}
        out[part.name] = (manifests, named, held)
    return out


@pytest.mark.parametrize("kill_at", ["S4", "S5", "after-S5"])
def test_a_lost_node_s_partitions_are_restored_from_the_store(cluster, days, tmp_path, kill_at):
    f1, f2, gone, want = days
    n1 = cluster.add_node(num_cpus=1, labels={NODE_LABEL: "n1"})
    root, store, local = tmp_path / "dist", tmp_path / "store", tmp_path / "local"
    store.mkdir()
    address = cluster.address
    # Round-robin over n1, n2, n0: n1 holds key-000 (the first to commit) and doc-001.
    out = cli(
        address, "merge", "--index-root", str(root), "--key-parts", "2", "--doc-parts", "3",
        "--nodes", "n1,n2,n0", "--local-root", str(local / "{node}"), "--store", str(store),
        "--options", json.dumps(OPTIONS), "--work-units", "2", str(f1),
    )
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    assert report["restored"] == [] and report["checkpoints"]["partitions"] == 5
    placed = json.loads((root / "placement.json").read_text())["partitions"]
    assert {n: e["node"] for n, e in placed.items()} == {
        "key-000": "n1", "key-001": "n2", "doc-000": "n0", "doc-001": "n1", "doc-002": "n2"
    }
    # Each database on its node's own local root; the batches in the store, not under the root.
    for name, e in placed.items():
        assert (local / e["node"] / e["dir"] / "CURRENT").is_file()
    assert not (root / "batches").exists() and (store / "batches" / "batch=1" / "manifest.json").is_file()

    # Day 2, the driver killed at `kill_at`; then node n1 is lost, with its disk.
    out = cli(
        address, "merge", "--index-root", str(root), "--delete-list", str(gone), "--work-units", "2",
        str(f2), kill_at=kill_at,
    )
    assert out.returncode == -signal.SIGKILL, (out.returncode, out.stderr[-3000:])
    cluster.remove_node(n1)
    shutil.rmtree(local / "n1")
    before = (root / "placement.json").read_text()

    # Refused without a restore, as before stores existed: nothing changed.
    out = cli(address, "export", "--index-root", str(root), "--out", str(tmp_path / "x.tsv"), "--no-restore")
    assert out.returncode == 2 and "node n1" in out.stderr, out.stderr[-2000:]
    assert (root / "placement.json").read_text() == before

    # The merge run again: key-000 and doc-001 restored on the least loaded surviving node.
    out = cli(address, "merge", "--index-root", str(root), "--delete-list", str(gone), "--work-units", "2", str(f2))
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    restored = {r["partition"]: r for r in report["restored"]}
    assert sorted(restored) == ["doc-001", "key-000"]
    for name, r in restored.items():
        assert r["from"] == "n1" and r["to"] == "n0" and r["checkpoint_batch"] == 1
        assert r["dir"] == f"{name}.r1" and r["reason"] == "node not alive" and r["files"] > 0
        # After S5 the others had applied batch 2: its log, kept in the store, is replayed.
        assert r["replayed"] == ([2] if kill_at == "after-S5" else [])
    if kill_at == "after-S5":
        assert report["batch"] == 2 and report["already_applied"]
    else:
        assert report["batch"] == 2 and report["pages"] == 150 and report["deleted"] > 0
        assert report["resumed"][:1] == ["S1"] and (kill_at == "S4") == (report["resumed"] == ["S1"])
    # Every partition checkpointed batch 2, once, and only what a restore needs is kept.
    assert report["checkpoints"]["partitions"] == 5
    for part, (manifests, named, held) in store_files(store).items():
        assert manifests == ["batch=2.json"] and named == held, part
    assert sorted(p.name for p in (store / "batches").iterdir()) == ["batch=2"]

    placed = json.loads((root / "placement.json").read_text())["partitions"]
    assert {n: e["node"] for n, e in placed.items()} == {
        "key-000": "n0", "key-001": "n2", "doc-000": "n0", "doc-001": "n0", "doc-002": "n2"
    }
    assert placed["key-000"]["dir"] == "key-000.r1" and (local / "n0" / "key-000.r1" / "CURRENT").is_file()
    assert not (local / "n1").exists()
    with DistributedIndex(root) as dx:
        assert dx.restored == []
        assert on_their_nodes(dx)
        assert dx.applied_batches() == [2] * 5
        assert dx.export().equals(want[0])
        assert dx.export_clusters().equals(want[1])
        assert dx.check()["problem_count"] == 0


@pytest.mark.parametrize("lose_at", ["S4", "S5"])
def test_a_node_lost_while_the_merge_runs_is_restored_and_the_merge_completes(cluster, days, tmp_path, monkeypatch, lose_at):
    # The same driver throughout: node n1 removed (and its disk deleted) while the work units
    # decide, or once the first partition, n1's key-000, applied its log.
    from neardup.ray import _commit, _decide

    f1, f2, gone, want = days
    n1 = cluster.add_node(num_cpus=1, labels={NODE_LABEL: "n1"})
    root, store, local = tmp_path / "dist", tmp_path / "store", tmp_path / "local"
    store.mkdir()
    with DistributedIndex(root, 2, 3, nodes=["n1", "n2", "n0"], local_root=local / "{node}", store=store, **OPTIONS) as dx:
        dx.merge([f1], work_units=2, progress=False)

        def lose(point):
            # Once: the merge resumed after the restore passes the same point again.
            if point == lose_at and n1 in cluster.worker_nodes:
                cluster.remove_node(n1)
                shutil.rmtree(local / "n1")

        module = _decide if lose_at == "S4" else _commit
        monkeypatch.setattr(module, "kill_armed", lambda point: point == lose_at)
        monkeypatch.setattr(module, "kill_point", lose)
        report = dx.merge([f2], gone, work_units=2, progress=False)
        monkeypatch.undo()
        assert report["batch"] == 2
        assert [(r["partition"], r["from"], r["to"]) for r in report["restored"]] == [
            ("key-000", "n1", "n0"), ("doc-001", "n1", "n0")
        ]
        assert not (local / "n1").exists()
        assert {n: p["node"] for n, p in dx.placement().items()} == {
            "key-000": "n0", "key-001": "n2", "doc-000": "n0", "doc-001": "n0", "doc-002": "n2"
        }
        assert on_their_nodes(dx)
        assert dx.applied_batches() == [2] * 5
        assert dx.export().equals(want[0]) and dx.export_clusters().equals(want[1])
        assert dx.check()["problem_count"] == 0
        for part, (manifests, named, held) in store_files(store).items():
            assert manifests == ["batch=2.json"] and named == held, part


def test_checkpoints_are_incremental_and_retired_and_a_lost_database_is_restored_in_place(cluster, days, tmp_path):
    f1, f2, gone, want = days
    root, store, local = tmp_path / "dist", tmp_path / "store", tmp_path / "local"
    store.mkdir()
    with DistributedIndex(root, 2, 2, nodes=["n0", "n2"], local_root=local / "{node}", store=store, **OPTIONS) as dx:
        r1 = dx.merge([f1], work_units=2, progress=False)
        r2 = dx.merge([f2], gone, work_units=2, keep_checkpoints=2, progress=False)
        # Day 1's files that did not change are not uploaded again.
        assert 0 < r2["checkpoints"]["uploaded"] < r2["checkpoints"]["bytes"]
        assert r1["checkpoints"]["uploaded"] == r1["checkpoints"]["bytes"]
        for part, (manifests, named, held) in store_files(store).items():
            assert manifests == ["batch=1.json", "batch=2.json"] and named == held, part
        # The same inputs again: nothing merged, nothing checkpointed again; the export asked
        # for is written (as a merge resumed past its commit after a node loss ends).
        again = tmp_path / "again.tsv"
        assert dx.merge([f2], gone, export=again, progress=False) == {"batch": 2, "already_applied": True, "restored": []}
        pairs = zip(want[0].column("key").to_pylist(), want[0].column("representative").to_pylist())
        assert again.read_text().splitlines() == [f"{k}\t{r}" for k, r in pairs]
        with pytest.raises(neardup.InvalidArgumentError):
            dx.merge([f1], keep_checkpoints=0, progress=False)
    # A checkpoint of the store opens as its partition at its batch.
    for part, (manifests, named, held) in store_files(store).items():
        m = json.loads((store / "checkpoints" / part / manifests[-1]).read_text())
        assert m["partition"] == part and m["batch"] == 2 and m["applied_batch"] == 2
        assert sum(f["size"] for f in m["files"]) == m["bytes"]
    # A database lost on its node, which is alive: restored in place from the store. A file of
    # its last checkpoint is damaged in the store: the restore falls back to the checkpoint of
    # batch 1 (kept, keep_checkpoints=2) and replays batch 2's logs, kept for it.
    placed = json.loads((root / "placement.json").read_text())["partitions"]
    shutil.rmtree(local / placed["doc-001"]["node"] / "doc-001")
    older, last = (json.loads((store / "checkpoints/doc-001" / f"batch={b}.json").read_text()) for b in (1, 2))
    only_last = sorted({f["sha256"] for f in last["files"]} - {f["sha256"] for f in older["files"]})
    (store / "checkpoints/doc-001/files" / only_last[0]).write_bytes(b"damaged")
    assert (store / "batches/batch=2/logs/_DONE").exists()
    with pytest.raises(neardup.ray.MissingPartitionsError):
        DistributedIndex(root, restore=False)
    with pytest.raises(neardup.InvalidArgumentError, match="store"):
        DistributedIndex(root, store=tmp_path / "elsewhere")
    # Another driver merging holds the merge lock: a restore at open waits for it, never runs
    # beside it (nothing is restored, the database stays missing).
    with _files.MergeLock(root):
        with pytest.raises(neardup.InvalidArgumentError, match="another driver is merging"):
            DistributedIndex(root)
    assert not (local / placed["doc-001"]["node"] / "doc-001").exists()
    with DistributedIndex(root) as dx:
        assert [(r["partition"], r["from"], r["to"], r["reason"]) for r in dx.restored] == [
            ("doc-001", "n2", "n2", "database missing on its node")
        ]
        (restored,) = dx.restored
        assert restored["checkpoint_batch"] == 1 and restored["replayed"] == [2]
        assert [s["batch"] for s in restored["skipped"]] == [2] and "damaged" in restored["skipped"][0]["reason"]
        # The damaged checkpoint's manifest is gone: nothing later takes its files as held.
        assert not (store / "checkpoints/doc-001/batch=2.json").exists()
        assert on_their_nodes(dx)
        assert dx.export().equals(want[0]) and dx.export_clusters().equals(want[1])
        assert dx.check()["problem_count"] == 0
        # The next merge checkpoints only the last batch: batch 1's checkpoints retired (with
        # keep_checkpoints=1), and with them the files no kept checkpoint names.
        assert dx.merge([f1], work_units=2, progress=False)["batch"] == 3
    for part, (manifests, named, held) in store_files(store).items():
        assert manifests == ["batch=3.json"] and named == held, part


def test_a_store_that_fails_during_the_commit_is_a_store_error_and_a_re_run_finishes(cluster, days, tmp_path, monkeypatch):
    f1, f2, gone, want = days
    root, store = tmp_path / "dist", tmp_path / "store"
    store.mkdir()
    with DistributedIndex(root, 2, 2, nodes=["n0", "n2"], store=store, **OPTIONS) as dx:
        dx.merge([f1], work_units=2, progress=False)
        # The store loses a partition's log of day 2 between S4 and S5.
        log = store / "batches/batch=2/logs/doc-001.ndlog"
        kept = tmp_path / "kept.ndlog"
        commit = neardup.ray._driver._commit.commit

        def losing(dx, n, brel, report):
            shutil.move(log, kept)
            return commit(dx, n, brel, report)

        monkeypatch.setattr(neardup.ray._driver._commit, "commit", losing)
        with pytest.raises(StoreError, match="did not give the logs of batch 2"):
            dx.merge([f2], gone, work_units=2, progress=False)
        monkeypatch.setattr(neardup.ray._driver._commit, "commit", commit)
        assert sorted(dx.applied_batches()) == [1, 2, 2, 2]
        # The store gives it again: the same merge finishes the batch.
        shutil.move(kept, log)
        assert dx.merge([f2], gone, work_units=2, progress=False)["resumed"] == ["S1", "S2", "S3", "S4"]
        assert dx.export().equals(want[0]) and dx.export_clusters().equals(want[1])
        assert dx.check()["problem_count"] == 0


def tree(root: Path):
    return sorted((str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*"))


def test_a_store_that_cannot_be_used_is_refused_before_anything_is_merged(cluster, days, tmp_path):
    f1, f2, gone, _ = days
    root, store = tmp_path / "dist", tmp_path / "store"
    # A new index: nothing is created.
    with pytest.raises(StoreError, match="does not exist") as e:
        DistributedIndex(root, 2, 2, store=store, **OPTIONS)
    assert isinstance(e.value, neardup.Error) and e.value.store == str(store)
    assert not root.exists()
    store.write_text("a file")
    with pytest.raises(StoreError, match="not a directory"):
        DistributedIndex(root, 2, 2, store=store, **OPTIONS)
    store.unlink()
    store.mkdir()
    with DistributedIndex(root, 2, 2, nodes=["n0", "n2"], store=store, **OPTIONS) as dx:
        dx.merge([f1], progress=False)
        want = dx.export()
    # The store gone: the index is refused, from Python and from the command line.
    store.rename(tmp_path / "away")
    before = tree(root)
    with pytest.raises(StoreError, match="missing"):
        DistributedIndex(root)
    out = cli(cluster.address, "merge", "--index-root", str(root), "--delete-list", str(gone), str(f2))
    assert out.returncode == 2 and out.stdout == "" and "store" in out.stderr, out.stderr[-2000:]
    assert tree(root) == before
    (tmp_path / "away").rename(store)
    # Read-only (a read-only bind mount): the merge is refused before S1, nothing applied.
    with DistributedIndex(root) as dx:
        mounted = subprocess.run(["mount", "--bind", str(store), str(store)], capture_output=True).returncode == 0
        try:
            if not mounted or subprocess.run(["mount", "-o", "remount,bind,ro", str(store)], capture_output=True).returncode:
                pytest.skip("no read-only bind mount here")
            with pytest.raises(StoreError, match="not writable"):
                dx.merge([f2], gone, progress=False)
        finally:
            if mounted:
                subprocess.run(["umount", str(store)], check=True)
        assert dx.applied_batches() == [1] * 4 and dx.export().equals(want)
        assert not (store / "batches" / "batch=2").exists()
        # Writable again: the day merges.
        assert dx.merge([f2], gone, progress=False)["batch"] == 2


def _failing_open(path, mode="r", *args, **kwargs):
    """``open``, whose files fail their second read."""
    f = open(path, mode, *args, **kwargs)
    read, calls = f.read, []

    def failing(*a):
        calls.append(1)
        if len(calls) > 1:
            raise OSError("read stopped")
        return read(*a)

    f.read = failing
    return f


def test_a_store_is_a_path_or_a_uri_through_pyarrow_fs(tmp_path, monkeypatch):
    for spec in (str(tmp_path / "a"), f"file://{tmp_path / 'b'}"):
        Path(spec.replace("file://", "")).mkdir()
        st = Store(spec, shared=True)
        st.probe()
        st.write("x/y/z.bin", b"12345")
        assert st.exists("x/y/z.bin") and st.read("x/y/z.bin") == b"12345"
        assert st.list("x/y") == ["z.bin"] and st.list("nothing") == []
        src = tmp_path / "src.bin"
        src.write_bytes(b"abc" * 1000)
        assert st.put_file(str(src), "f/blob") == 3000
        # Written again over itself, whole: no temporary file is left beside it.
        assert st.put_file(str(src), "f/blob") == 3000 and st.list("f") == ["blob"]
        # A copy that stops half-way leaves the file there as it was (a checkpoint's manifest
        # may name it).
        (tmp_path / "other.bin").write_bytes(b"xyz" * 1000)
        with monkeypatch.context() as m:
            m.setattr(_store, "BLOCK", 1000)
            m.setattr(_store, "open", _failing_open, raising=False)
            with pytest.raises(OSError, match="read stopped"):
                st.put_file(str(tmp_path / "other.bin"), "f/blob")
        assert st.read("f/blob") == src.read_bytes()
        size, digest = st.get_file("f/blob", str(tmp_path / "back.bin"))
        assert size == 3000 and (tmp_path / "back.bin").read_bytes() == src.read_bytes()
        _check_writing_in_place(st, tmp_path)
        copy = pickle.loads(pickle.dumps(st))
        assert copy.read("x/y/z.bin") == b"12345" and copy.shared
        assert st.delete("x") == 5 and not st.exists("x")
    # The store of a new index: taken again by a creation of the same root that stopped before
    # its layout was written (a new id), refused to another root's index.
    (tmp_path / "c").mkdir()
    st = Store(str(tmp_path / "c"), shared=True)
    st.create("id-1", {"root": "/roots/a"})
    st.create("id-2", {"root": "/roots/a"})
    assert st.read_json("store.json")["id"] == "id-2"
    with pytest.raises(StoreError, match="another index"):
        st.create("id-3", {"root": "/roots/b"})
    st.write("batches/batch=1/manifest.json", b"{}")
    with pytest.raises(StoreError, match="another index"):
        st.create("id-4", {"root": "/roots/a"})
    assert st.read_json("store.json")["id"] == "id-2"
    with pytest.raises(StoreError):
        Store(str(tmp_path / "missing"), shared=True).probe()
    with pytest.raises(neardup.Error):
        Store(str(tmp_path / "missing"), shared=True).probe()


def _check_writing_in_place(st, tmp_path):
    """``Store.writing``, ``scratch_dir`` and ``move_in``: a file written for the store is there
    whole when the block ends, nothing is left when it raises, and nothing is left beside it."""
    with st.writing("w/one.bin") as p:
        Path(p).write_bytes(b"q" * 2000)
        if st.local:
            # Written in place: a temporary name in the store's directory, not a copy.
            assert Path(p).parent == Path(st.path("w"))
        assert not st.exists("w/one.bin")
    assert st.read("w/one.bin") == b"q" * 2000 and st.list("w") == ["one.bin"]
    with pytest.raises(RuntimeError, match="stopped"):
        with st.writing("w/one.bin") as p:
            Path(p).write_bytes(b"partial")
            raise RuntimeError("stopped")
    assert st.read("w/one.bin") == b"q" * 2000 and st.list("w") == ["one.bin"]
    with st.scratch_dir("w/pieces") as d:
        (Path(d) / "a.bin").write_bytes(b"a" * 10)
        (Path(d) / "b.bin").write_bytes(b"b" * 20)
        assert st.move_in(str(Path(d) / "a.bin"), "w/pieces/x/1.bin") == 10
        assert st.move_in(str(Path(d) / "b.bin"), "w/pieces/y/1.bin") == 20
        assert not (Path(d) / "a.bin").exists()
    assert st.list("w/pieces") == ["x", "y"] and st.read("w/pieces/y/1.bin") == b"b" * 20
    assert st.delete("w") == 2030 and not st.exists("w")


@pytest.fixture(scope="module")
def s3_bucket():
    """An S3 endpoint on this machine (moto's server, the S3 API in one process) with a bucket;
    yields the URI of a prefix in it, credentials in the URI (moto takes any), so that every
    worker reaches it as a store on S3 would be reached."""
    import socket

    import pyarrow.fs as pafs
    from moto.server import ThreadedMotoServer

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    query = f"endpoint_override=127.0.0.1:{port}&scheme=http&region=us-east-1"
    fs, _ = pafs.FileSystem.from_uri(f"s3://test:test@neardup/x?{query}&allow_bucket_creation=true")
    fs.create_dir("neardup")
    try:
        yield f"s3://test:test@neardup/store?{query}"
    finally:
        server.stop()


def test_a_store_on_s3_holds_the_batches_and_checkpoints_and_restores_a_lost_database(cluster, days, tmp_path, s3_bucket):
    f1, f2, gone, want = days
    # The store's files through the S3 API: written whole, listed, copied both ways, deleted.
    st = Store(s3_bucket, shared=True)
    st.probe()
    st.write("t/a.bin", b"12345")
    assert st.read("t/a.bin") == b"12345" and st.list("t") == ["a.bin"] and st.list("none") == []
    src = tmp_path / "src.bin"
    src.write_bytes(b"abc" * 1000)
    assert st.put_file(str(src), "t/blob") == 3000
    assert st.get_file("t/blob", str(tmp_path / "back.bin"))[0] == 3000
    assert pickle.loads(pickle.dumps(st)).read("t/a.bin") == b"12345"
    assert st.delete("t") == 3005 and not st.exists("t")
    _check_writing_in_place(st, tmp_path)
    # Two days merged with the store on S3: the single node's clusters, the checkpoints there.
    root, local = tmp_path / "dist", tmp_path / "local"
    with DistributedIndex(root, 2, 2, nodes=["n0", "n2"], local_root=local / "{node}", store=s3_bucket, **OPTIONS) as dx:
        dx.merge([f1], work_units=2, progress=False)
        r2 = dx.merge([f2], gone, work_units=2, progress=False)
        assert r2["checkpoints"]["bytes"] > 0
        assert dx.export().equals(want[0]) and dx.export_clusters().equals(want[1])
    assert st.list("checkpoints") == ["doc-000", "doc-001", "key-000", "key-001"]
    assert all(st.list(f"checkpoints/{p}")[0] == "batch=2.json" for p in st.list("checkpoints"))
    # A database lost on its node: restored from S3.
    placed = json.loads((root / "placement.json").read_text())["partitions"]
    shutil.rmtree(local / placed["key-001"]["node"] / "key-001")
    with DistributedIndex(root) as dx:
        assert [r["partition"] for r in dx.restored] == ["key-001"]
        assert dx.export().equals(want[0]) and dx.export_clusters().equals(want[1])
        assert dx.check()["problem_count"] == 0


def test_a_partition_opens_once_the_process_holding_its_lock_exits(tmp_path):
    """A restarted partition actor may start while the process it replaces (killed by Ray's
    memory monitor, say) still holds the database's lock: the open waits for the lock instead of
    failing, and gives up with the storage error when the wait is over."""
    from neardup.ray._partition import open_partition

    path = str(tmp_path / "ix")
    layout = neardup.Layout(1, 1)
    neardup.Partition(path, layout, "doc", 0).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time, neardup; ix = neardup.Partition(sys.argv[1], neardup.Layout(1, 1), 'doc', 0); print('held', flush=True); time.sleep(float(sys.argv[2]))", path, "1.5"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(neardup.StorageError, match="lock file"):
            open_partition(path, {}, layout, "doc", 0, wait=0.2)
        ix = open_partition(path, {}, layout, "doc", 0, wait=60)
        assert isinstance(ix, neardup.Partition)
        ix.close()
    finally:
        holder.kill()
        holder.wait()
