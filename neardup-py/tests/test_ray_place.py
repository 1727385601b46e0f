"""neardup.ray: partitions placed across nodes (issue #34, item 1), on a simulated cluster
(``ray.cluster_utils.Cluster``: a head and two nodes of one CPU in one machine, named by their
``neardup-node`` label, sharing its disk).

- A new index spreads its partitions round-robin over the nodes, sorted by name, and
  ``placement.json`` says where; each actor runs on its node. A second driver (a new connection,
  and a command line in another process) finds the same placement and merges on.
- ``move_partition`` (and ``python -m neardup.ray move``) copies a partition to another node and
  rewrites the assignment: the export is the same after the move, and a merge after it gives
  single-node ingest's answers. A move that fails before the copy is whole leaves the partition
  where it was.
- A node gone (removed from the cluster): the index is refused with
  ``PartitionNodeMissingError`` naming its partitions and node, in Python and from the command
  line, and the root is untouched; the node started again (a new node id, the same label), the
  index opens with its pages. A database missing on its node is ``MissingPartitionsError``.
- On one node the default stays as it was: every partition on the driver's node.
- S5 without a shared store: a log goes to a partition on another node in bounded chunks,
  written beside its database and applied from there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="neardup.ray needs Ray (scripts/setup.sh installs it)")

import neardup  # noqa: E402
from conftest import OPTIONS, REFERENCE, write_jsonl  # noqa: E402
from neardup.ray import NODE_LABEL, DistributedIndex, MissingPartitionsError, PartitionNodeMissingError  # noqa: E402
from neardup.ray import _commit, _place  # noqa: E402

def cli(*args: str) -> subprocess.CompletedProcess:
    """``python -m neardup.ray ARGS`` in a subprocess."""
    return subprocess.run([sys.executable, "-m", "neardup.ray", *args], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def days(dev_pages, tmp_path_factory):
    """Two small days (250 and 150 pages, re-crawls of day 1 in day 2) and single-node ingest's
    export after each, each day as one batch in input order."""
    tmp = tmp_path_factory.mktemp("place")
    day1 = dev_pages[:250]
    day2 = dev_pages[250:390] + [dict(dev_pages[260 + i], id=day1[i * 20]["id"]) for i in range(10)]
    f1, f2 = write_jsonl(tmp / "day1.jsonl.gz", day1), write_jsonl(tmp / "day2.jsonl.gz", day2)
    with neardup.Index(tmp / "ref", **REFERENCE) as ref:
        want = []
        for day in (day1, day2):
            ref.insert_many(day, order="input", batch_size=len(day), progress=False)
            want.append(ref.export())
    return f1, f2, want


def test_on_one_node_every_partition_stays_on_the_drivers_node(days, tmp_path):
    # Before the simulated cluster: the command line starts a Ray of one node here.
    f1, _, want = days
    env = dict(os.environ)
    env.pop("RAY_ADDRESS", None)
    root = tmp_path / "dist"
    out = subprocess.run(
        [sys.executable, "-m", "neardup.ray", "merge", "--index-root", str(root), "--num-cpus", "1",
         "--key-parts", "2", "--doc-parts", "2", "--options", json.dumps(OPTIONS), str(f1)],
        capture_output=True, text=True, timeout=600, env=env,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    stored = json.loads((root / "placement.json").read_text())
    assert stored["placement"] == "driver" and stored["nodes"] is None
    assert stored["partitions"] == {n: {"node": None, "dir": n} for n in ("key-000", "key-001", "doc-000", "doc-001")}
    assert all((root / n / "CURRENT").is_file() for n in stored["partitions"])


@pytest.fixture(scope="module")
def nodes():
    """A head ``n0`` and nodes ``n1``, ``n2`` (one CPU each), joined by this process; yields the
    cluster and the added nodes by name."""
    from ray.cluster_utils import Cluster

    c = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "labels": {NODE_LABEL: "n0"}},
    )
    added = {name: c.add_node(num_cpus=1, labels={NODE_LABEL: name}) for name in ("n1", "n2")}
    ray.init(address=c.address, logging_level="WARNING", log_to_driver=False)
    yield c, added
    ray.shutdown()
    c.shutdown()


def node_ids():
    """Alive node name → node id."""
    return {n["Labels"].get(NODE_LABEL): n["NodeID"] for n in ray.nodes() if n["Alive"]}


def on_their_nodes(dx: DistributedIndex):
    """Whether every partition's actor runs on the node its assignment names."""
    ids = node_ids()
    return all(p["node_id"] == ids[p["node"]] for p in dx.placement().values())


def test_partitions_are_spread_over_the_nodes_and_a_second_driver_finds_them(nodes, days, tmp_path):
    cluster, _ = nodes
    f1, f2, want = days
    root = tmp_path / "dist"
    with DistributedIndex(root, 2, 3, **OPTIONS) as dx:
        stored = json.loads((root / "placement.json").read_text())
        assert stored["placement"] == "spread"
        where = {n: e["node"] for n, e in stored["partitions"].items()}
        # Round-robin, key partitions then doc partitions, over the nodes sorted by name.
        assert where == {"key-000": "n0", "key-001": "n1", "doc-000": "n2", "doc-001": "n0", "doc-002": "n1"}
        assert on_their_nodes(dx)
        assert dx.merge([f1], work_units=2, progress=False)["live_pages"] == 250
        assert dx.export().equals(want[0])
    # A second driver: a new connection to the cluster.
    ray.shutdown()
    ray.init(address=cluster.address, logging_level="WARNING", log_to_driver=False)
    with DistributedIndex(root) as dx:
        assert {n: p["node"] for n, p in dx.placement().items()} == where
        assert on_their_nodes(dx)
        assert dx.export().equals(want[0])
        with pytest.raises(neardup.InvalidArgumentError, match="placement"):
            DistributedIndex(root, placement="driver")
    # And one in another process, through the command line.
    out = cli("merge", "--index-root", str(root), "--address", cluster.address, "--work-units", "2", str(f2))
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout)["batch"] == 2
    assert json.loads((root / "placement.json").read_text()) == stored
    with DistributedIndex(root) as dx:
        assert dx.export().equals(want[1])
        assert dx.check()["problem_count"] == 0


def test_a_moved_partition_gives_the_same_answers(nodes, days, tmp_path, monkeypatch):
    cluster, _ = nodes
    f1, f2, want = days
    root = tmp_path / "dist"
    with DistributedIndex(root, 2, 2, nodes=["n1", "n2"], **OPTIONS) as dx:
        assert {n: p["node"] for n, p in dx.placement().items()} == {
            "key-000": "n1", "key-001": "n2", "doc-000": "n1", "doc-001": "n2"
        }
        dx.merge([f1], work_units=2, progress=False)
        before = dx.export()
        stored = (root / "placement.json").read_text()
        # A move that fails once its chunks are written, before the copy is renamed into place:
        # the partition stays where it was, its actor started there again, nothing left over.
        monkeypatch.setattr(_place, "_finish", _place._read_chunk)  # opening a directory fails
        with pytest.raises(OSError):
            dx.move_partition("doc", 1, "n0")
        monkeypatch.undo()
        assert (root / "placement.json").read_text() == stored
        assert not [p.name for p in root.iterdir() if p.name.startswith(".") and p.name != ".merge.lock"]
        assert (root / "doc-001" / "CURRENT").is_file() and on_their_nodes(dx)
        assert dx.export().equals(before)
        done = dx.move_partition("doc", 1, "n0")
        assert done["moved"] and done["from"] == "n2" and done["to"] == "n0" and done["bytes"] > 0
        stored = json.loads((root / "placement.json").read_text())["partitions"]
        assert stored["doc-001"] == {"node": "n0", "dir": "doc-001.m1"}
        # The old copy is gone, and so is the checkpoint it was sent from.
        assert not (root / "doc-001").exists() and (root / "doc-001.m1" / "CURRENT").is_file()
        assert not [p.name for p in root.iterdir() if p.name.startswith(".doc-001")]
        assert on_their_nodes(dx)
        assert dx.export().equals(before)
        assert dx.move_partition("doc", 1, "n0") == {"partition": "doc-001", "from": "n0", "to": "n0", "moved": False}
        with pytest.raises(PartitionNodeMissingError, match="n9"):
            dx.move_partition("key", 0, "n9")
        with pytest.raises(neardup.InvalidArgumentError):
            dx.move_partition("doc", 2, "n0")
    # From the command line: another driver moves a key partition.
    out = cli("move", "--index-root", str(root), "--address", cluster.address, "--partition", "key-000", "--node", "n2")
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout)["to"] == "n2"
    stored = json.loads((root / "placement.json").read_text())["partitions"]
    assert stored["key-000"] == {"node": "n2", "dir": "key-000.m1"}
    with DistributedIndex(root) as dx:
        assert on_their_nodes(dx)
        assert dx.export().equals(before)
        # A merge after the moves: single-node ingest's answers, checkpointed on each node.
        dx.merge([f2], work_units=2, checkpoint=True, progress=False)
        assert dx.export().equals(want[1])
        shots = sorted(p.name for p in (root / "checkpoints" / "batch=2").iterdir())
        assert shots == ["doc-000", "doc-001", "key-000", "key-001"]
        assert dx.check()["problem_count"] == 0


def test_a_log_sent_to_another_node_goes_in_chunks(nodes, days, tmp_path, monkeypatch):
    """S5 without a shared store (issue #34, item 3): a partition on another node than the
    root's store gets its log from a task on the driver's node in chunks of
    ``_commit.LOG_CHUNK_BYTES`` (here 1,000 bytes, so that every log takes several), written
    beside its database and applied from there: the single node's answers, a clean check, and
    no file left beside the databases."""
    f1, f2, want = days
    # The driver passes the chunk size to the sending tasks: patched here, it holds there.
    monkeypatch.setattr(_commit, "LOG_CHUNK_BYTES", 1000)
    root = tmp_path / "dist"
    # No partition on the driver's node (n0): every log is sent.
    with DistributedIndex(root, 2, 2, nodes=["n1", "n2"], **OPTIONS) as dx:
        for n, (f, w) in enumerate(zip((f1, f2), want), start=1):
            assert dx.merge([f], work_units=2, keep_batches=1, progress=False)["partitions_applied"] == 4
            assert dx.export().equals(w)
            sizes = [p.stat().st_size for p in (root / "batches" / f"batch={n}" / "logs").glob("*.ndlog")]
            assert len(sizes) == 4 and min(sizes) > 2 * 1000, sizes
        assert not list(root.rglob("*.received"))
        assert dx.check()["problem_count"] == 0


def tree(root: Path):
    return sorted((str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*"))


def test_a_partition_whose_node_is_gone_refuses_the_index(nodes, days, tmp_path):
    cluster, _ = nodes
    f1, _, want = days
    n3 = cluster.add_node(num_cpus=1, labels={NODE_LABEL: "n3"})
    root = tmp_path / "dist"
    with DistributedIndex(root, 2, 2, nodes=["n0", "n3"], **OPTIONS) as dx:
        dx.merge([f1], work_units=2, progress=False)
    before = tree(root)
    cluster.remove_node(n3)
    with pytest.raises(PartitionNodeMissingError) as e:
        DistributedIndex(root)
    assert isinstance(e.value, neardup.Error)
    assert e.value.missing == {"key-001": "n3", "doc-001": "n3"} and e.value.root == root
    assert "key-001, doc-001 on node n3" in str(e.value)
    out = cli("export", "--index-root", str(root), "--address", cluster.address, "--out", str(tmp_path / "x.tsv"))
    assert out.returncode == 2 and out.stdout == ""
    errors = [x for x in out.stderr.splitlines() if x.startswith("error:")]
    assert len(errors) == 1 and "node n3" in errors[0], out.stderr[-2000:]
    assert tree(root) == before and not (tmp_path / "x.tsv").exists()
    # The node started again: a new node id under the same name, and the index opens on it.
    n3 = cluster.add_node(num_cpus=1, labels={NODE_LABEL: "n3"})
    with DistributedIndex(root) as dx:
        assert on_their_nodes(dx)
        assert dx.export().equals(want[0])
    # A database missing on its node.
    (root / "doc-001").rename(tmp_path / "doc-001")
    with pytest.raises(MissingPartitionsError) as m:
        DistributedIndex(root)
    assert m.value.missing == ["doc-001"] and m.value.nodes == {"doc-001": "n3"}
    assert "on node n3" in str(m.value)
    cluster.remove_node(n3)


def test_a_root_made_before_placement_follows_the_driver(nodes, days, tmp_path):
    f1, _, want = days
    root = tmp_path / "dist"
    with DistributedIndex(root, 1, 2, placement="driver", **OPTIONS) as dx:
        dx.merge([f1], progress=False)
        here = ray.get_runtime_context().get_node_id()
        assert {p["node_id"] for p in dx.placement().values()} == {here}
    (root / "placement.json").unlink()
    with DistributedIndex(root) as dx:
        assert dx.export().equals(want[0])
        # A move pins the others where they are: this driver's node.
        dx.move_partition("doc", 0, "n2")
        stored = json.loads((root / "placement.json").read_text())["partitions"]
        assert {n: e["node"] for n, e in stored.items()} == {"key-000": "n0", "doc-000": "n2", "doc-001": "n0"}
        assert on_their_nodes(dx) and dx.export().equals(want[0])
