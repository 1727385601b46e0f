"""Where the partitions of a distributed index live (SCALEOUT §4, §9; issue #34, item 1).

The assignment partition → node is stored under the root, beside the layout file, in
``placement.json`` (written whole: a temporary file, then a rename)::

    {"version": 1, "placement": "spread", "nodes": null,
     "partitions": {"key-000": {"node": "n1", "dir": "key-000"}, ...}}

``placement`` and ``nodes`` are what the index was created with (``"driver"``: every partition on
the node of the driver that opens it, as before placement existed; ``"spread"``: round-robin over
the cluster's alive nodes, sorted by name; ``"nodes"``: round-robin over the ``nodes`` given).
Each partition names its node (``null``: the driver's) and its database's directory *on that
node's disk*, under the node's local root (``"local_root"``, ``{node}`` in it replaced by the
node's name; without one, the root): ``<role>-<n>``, or ``<role>-<n>.m<g>`` after a move and
``<role>-<n>.r<g>`` after a restore from the shared store (``_durable``), ``g`` counting the
copies (a new copy never goes where an old one is, so nodes that share a disk, as in the tests,
move safely).
A root without ``placement.json`` (made before it existed) is a ``"driver"`` placement.

Nodes are named by what survives a restart, never by Ray's node id (a new one each time a node
starts): the node's label ``neardup-node`` (``ray start --labels '{"neardup-node": "n1"}'``), else
a custom resource ``neardup-node:<name>`` (``ray start --resources '{"neardup-node:n1": 1}'``),
else its IP address (``NodeManagerAddress``). A label moves with the node when its address
changes (a rescheduled pod); an address is enough for hosts with fixed ones. Nodes sharing a
name (several Ray nodes on one host, unlabelled) cannot be told apart: placing on that name is
refused until they are labelled.

A driver resolves each name to the node id now alive under it and pins the partition's actor
there (``NodeAffinitySchedulingStrategy(..., soft=False)``); a name with no alive node refuses
the index (``PartitionNodeMissingError``), and a database missing on its node too
(``MissingPartitionsError``, checked by a small task on that node): never a new, empty partition
elsewhere. ``move`` copies a partition to another node (a checkpoint streamed in chunks through
Ray objects) and rewrites the assignment once the copy is whole.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

import neardup
from neardup import InvalidArgumentError, Layout

from . import _files
from ._runtime import require_ray

if TYPE_CHECKING:
    from ._driver import DistributedIndex

#: The assignment partition → node at the root of a distributed index.
PLACEMENT_FILE = "placement.json"
#: The node label that names a node (else the resource ``neardup-node:<name>``, else its IP).
NODE_LABEL = "neardup-node"
NODE_RESOURCE = "neardup-node:"
#: The bytes of one chunk of a moved partition's files (one Ray object each).
CHUNK_BYTES = 8 << 20
#: Chunks in flight at once during a move.
CHUNKS_IN_FLIGHT = 4

PLACEMENTS = ("spread", "driver")


class MissingPartitionsError(neardup.Error):
    """A distributed index's root holds a layout file but not the databases of some of its
    partitions (moved, on another node, or lost). Nothing was created in their place.
    Attributes: ``root`` (the root), ``missing`` (the partitions, ``key-<n>``/``doc-<n>``) and
    ``nodes`` (the node each was looked for on: its name, or ``None`` for the driver's)."""

    def __init__(self, root: Path, missing: List[str], nodes: Optional[Dict[str, Optional[str]]] = None) -> None:
        self.root = root
        self.missing = missing
        self.nodes = dict(nodes or {name: None for name in missing})
        where = sorted({n for n in self.nodes.values() if n is not None})
        on = f" on node{'s' if len(where) > 1 else ''} {', '.join(where)}" if where else ""
        super().__init__(
            f"{root} is a distributed index (layout.json) but the databases of partitions "
            f"{', '.join(missing)} are not there{on}: open it on the node that holds them, or restore "
            f"them (a checkpoint under {root / 'checkpoints'}, if one was taken); a new index "
            "needs a new root"
        )


class PartitionNodeMissingError(neardup.Error):
    """The node a partition is assigned to (``placement.json``) is not alive in the cluster:
    the index is refused, nothing is started or created elsewhere. Attributes: ``root``,
    ``missing`` (partition → node name, for every partition whose node is missing) and
    ``alive`` (the names of the nodes alive)."""

    def __init__(self, root: Path, missing: Dict[str, str], alive: Sequence[str]) -> None:
        self.root = root
        self.missing = {part: missing[part] for part in layout_order(missing)}
        self.alive = list(alive)
        by_node: Dict[str, List[str]] = {}
        for part, node in self.missing.items():
            by_node.setdefault(node, []).append(part)
        what = "; ".join(f"{', '.join(parts)} on node {node}" for node, parts in sorted(by_node.items()))
        super().__init__(
            f"{root}: partitions {what}, which is not in the cluster (alive: "
            f"{', '.join(self.alive) or 'none'}): start that node again (same label or address), or "
            f"restore its partitions elsewhere; nothing was started in their place"
        )


# ----- nodes -----


def node_name(info: Dict[str, Any]) -> str:
    """The name of a node of ``ray.nodes()``: its ``neardup-node`` label, else its resource
    ``neardup-node:<name>``, else its IP address."""
    label = (info.get("Labels") or {}).get(NODE_LABEL)
    if label:
        return str(label)
    named = sorted(r[len(NODE_RESOURCE) :] for r in info.get("Resources") or {} if r.startswith(NODE_RESOURCE))
    if named:
        return named[0]
    return str(info["NodeManagerAddress"])


def alive_nodes() -> Dict[str, List[str]]:
    """The alive nodes of the cluster: name → node ids (more than one: unlabelled nodes on one
    host)."""
    ray = require_ray()
    out: Dict[str, List[str]] = {}
    for info in ray.nodes():
        if info.get("Alive"):
            out.setdefault(node_name(info), []).append(info["NodeID"])
    return out


def driver_node_name() -> str:
    """The name of this driver's node."""
    ray = require_ray()
    me = ray.get_runtime_context().get_node_id()
    for info in ray.nodes():
        if info["NodeID"] == me:
            return node_name(info)
    raise neardup.StorageError(f"this driver's node {me} is not among the cluster's nodes")


def _unique(alive: Dict[str, List[str]], name: str) -> str:
    ids = alive[name]
    if len(ids) > 1:
        raise InvalidArgumentError(
            f"{len(ids)} alive Ray nodes are named {name!r}: give each node a label {NODE_LABEL} "
            f"(ray start --labels '{{\"{NODE_LABEL}\": \"<name>\"}}') to place partitions on it"
        )
    return ids[0]


# ----- the assignment -----


def partition_names(layout: Layout) -> List[str]:
    """``key-000``… then ``doc-000``…: the partitions of a layout, in actor order."""
    return [f"key-{n:03}" for n in range(layout.key_parts)] + [f"doc-{n:03}" for n in range(layout.doc_parts)]


def layout_order(names: Any) -> List[str]:
    """Partition names in the layout's order: key partitions, then doc partitions."""
    return sorted(names, key=lambda n: (not n.startswith("key-"), n))


def check_request(placement: Optional[str], nodes: Optional[Sequence[str]]) -> Optional[Tuple[str, Optional[List[str]]]]:
    """``placement=`` and ``nodes=`` as given, checked: ``None`` (nothing asked) or
    ``(placement, nodes)``."""
    if placement is not None and placement not in PLACEMENTS:
        raise InvalidArgumentError(f"placement must be one of {', '.join(PLACEMENTS)}, not {placement!r}")
    if nodes is not None:
        if isinstance(nodes, str):
            raise InvalidArgumentError("nodes is a list of node names, not a string")
        nodes = [str(n) for n in nodes]
        if not nodes or len(set(nodes)) != len(nodes):
            raise InvalidArgumentError(f"nodes must name distinct nodes, at least one: {nodes}")
        if placement is not None:
            raise InvalidArgumentError("give placement or nodes, not both")
        return "nodes", nodes
    if placement is None:
        return None
    return placement, None


def choose(
    layout: Layout, request: Optional[Tuple[str, Optional[List[str]]]], local_root: Optional[str] = None
) -> Dict[str, Any]:
    """The assignment of a new index: ``request`` as ``check_request`` gives it; by default
    ``spread`` on a cluster of more than one alive node, else ``driver`` (every partition on the
    driver's node, as before placement existed). ``local_root``: where the databases go on each
    node's disk (``local_base``; ``None``: under the root)."""
    names = partition_names(layout)
    alive = alive_nodes()
    if request is None:
        request = ("spread" if sum(len(v) for v in alive.values()) > 1 else "driver", None)
    how, nodes = request
    if how == "driver":
        targets: List[Optional[str]] = [None]
    else:
        if how == "spread":
            nodes = sorted(alive)
        unknown = [n for n in nodes or [] if n not in alive]
        if unknown:
            raise InvalidArgumentError(
                f"nodes {', '.join(unknown)} are not in the cluster (alive: {', '.join(sorted(alive))})"
            )
        for n in nodes or []:
            _unique(alive, n)
        targets = list(nodes or [])
    out: Dict[str, Any] = {
        "version": 1,
        "placement": how,
        "nodes": nodes,
        "partitions": {name: {"node": targets[i % len(targets)], "dir": name} for i, name in enumerate(names)},
    }
    if local_root is not None:
        out["local_root"] = str(local_root)
    return out


def local_base(root: Path, assignment: Dict[str, Any], node: Optional[str]) -> Path:
    """The directory of node ``node``'s local disk (``None``: the driver's node) that holds the
    index's databases there: the assignment's ``local_root`` with ``{node}`` replaced by the
    node's name, else the root (the same path on every node)."""
    local = assignment.get("local_root")
    if local is None:
        return root
    if "{node}" in local:
        local = local.replace("{node}", node if node is not None else driver_node_name())
    return Path(local)


def db_path(root: Path, assignment: Dict[str, Any], name: str) -> Path:
    """Where partition ``name``'s database is on its node's disk."""
    entry = assignment["partitions"][name]
    return local_base(root, assignment, entry["node"]) / entry["dir"]


def next_dir(name: str, current: str, kind: str) -> str:
    """The directory of partition ``name``'s next copy: ``<name>.<kind><g>``, ``g`` one more
    than the current copy's (``kind``: ``m`` for a move, ``r`` for a restore). A new copy never
    goes where an older one is (nodes that share a disk, as in the tests)."""
    m = re.search(r"\.[a-z](\d+)$", current)
    return f"{name}.{kind}{int(m.group(1)) + 1 if m else 1}"


def load(root: Path, layout: Layout) -> Dict[str, Any]:
    """The stored assignment (a root without one: every partition on the driver's node)."""
    path = root / PLACEMENT_FILE
    if not path.exists():
        return {
            "version": 1,
            "placement": "driver",
            "nodes": None,
            "partitions": {name: {"node": None, "dir": name} for name in partition_names(layout)},
        }
    stored = json.loads(path.read_text())
    names = partition_names(layout)
    if sorted(stored.get("partitions", {})) != sorted(names):
        raise neardup.CorruptionError(f"{path} does not name the partitions of layout.json ({', '.join(names)})")
    return stored


def store(root: Path, assignment: Dict[str, Any]) -> None:
    """Writes the assignment whole (a temporary file renamed over the old one), durably."""
    _files.write_atomic(root / PLACEMENT_FILE, json.dumps(assignment, indent=1, sort_keys=True).encode())


def resolve(root: Path, assignment: Dict[str, Any]) -> Dict[str, Optional[str]]:
    """Partition → the id of the node alive under its assigned name (``None``: the driver's
    node). Raises ``PartitionNodeMissingError`` naming every partition whose node is missing."""
    alive = alive_nodes()
    out: Dict[str, Optional[str]] = {}
    missing: Dict[str, str] = {}
    for name, entry in assignment["partitions"].items():
        node = entry["node"]
        if node is None:
            out[name] = None
        elif node not in alive:
            missing[name] = node
        else:
            out[name] = _unique(alive, node)
    if missing:
        raise PartitionNodeMissingError(root, missing, sorted(alive))
    return out


def _pin(node_id: str) -> Any:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return NodeAffinitySchedulingStrategy(node_id, soft=False)


def _on(fn: Any, node_id: Optional[str], retries: int = 3) -> Any:
    """``fn`` as a Ray task of no CPU, on ``node_id`` (``None``: this driver's node), retried
    ``retries`` times if its worker dies (the tasks here are idempotent but ``_finish``)."""
    ray = require_ray()
    node_id = node_id or ray.get_runtime_context().get_node_id()
    return ray.remote(num_cpus=0, max_retries=retries)(fn).options(scheduling_strategy=_pin(node_id))


def check_databases(root: Path, assignment: Dict[str, Any], node_ids: Dict[str, Optional[str]]) -> None:
    """Raises ``MissingPartitionsError`` unless every partition's database is on its node (a
    task there looks; databases are on their nodes' local disks)."""
    ray = require_ray()
    by_node: Dict[Optional[str], List[str]] = {}
    for name in assignment["partitions"]:
        by_node.setdefault(node_ids[name], []).append(name)
    refs = {
        node: _on(_missing_dirs, node).remote("/", [str(db_path(root, assignment, n)) for n in names])
        for node, names in by_node.items()
    }
    lost = set()
    for node, ref in refs.items():
        gone = set(ray.get(ref))
        lost.update(n for n in by_node[node] if str(db_path(root, assignment, n)) in gone)
    if lost:
        missing = layout_order(lost)
        raise MissingPartitionsError(root, missing, {n: assignment["partitions"][n]["node"] for n in missing})


def check_local(root: Path, assignment: Dict[str, Any]) -> None:
    """``check_databases`` for a root whose partitions are all on the driver's node, without
    Ray."""
    paths = {n: str(db_path(root, assignment, n)) for n in assignment["partitions"]}
    gone = set(_missing_dirs("/", list(paths.values())))
    missing = layout_order(n for n, p in paths.items() if p in gone)
    if missing:
        raise MissingPartitionsError(root, missing)


# ----- tasks on nodes -----


def _missing_dirs(root: str, dirs: List[str]) -> List[str]:
    # A RocksDB database always holds CURRENT, which names its manifest.
    return [d for d in dirs if not os.path.isfile(os.path.join(root, d, "CURRENT"))]


def _list_files(top: str) -> List[Tuple[str, int, str]]:
    """Every file under ``top``: relative path, size, sha256."""
    out = []
    for dirpath, _, files in os.walk(top):
        for f in sorted(files):
            p = os.path.join(dirpath, f)
            out.append((os.path.relpath(p, top), os.path.getsize(p), _files.sha256_file(p)))
    return sorted(out)


def _read_chunk(path: str, offset: int, size: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read(size)


def _prepare(top: str, rels: List[str]) -> None:
    shutil.rmtree(top, ignore_errors=True)
    os.makedirs(top)
    for rel in rels:
        os.makedirs(os.path.dirname(os.path.join(top, rel)), exist_ok=True)
        open(os.path.join(top, rel), "wb").close()


def _write_chunk(path: str, offset: int, data: bytes) -> int:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, data, offset)
    finally:
        os.close(fd)
    return len(data)


def _finish(incoming: str, final: str, files: List[Tuple[str, int, str]]) -> None:
    """Checks every file of ``incoming`` against its size and sha256, makes them durable and
    renames the directory to ``final``."""
    for rel, size, digest in files:
        p = os.path.join(incoming, rel)
        if os.path.getsize(p) != size or _files.sha256_file(p) != digest:
            raise neardup.CorruptionError(f"{p} arrived damaged: {os.path.getsize(p)} bytes, expected {size}")
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    _files.install_dir(Path(incoming), Path(final))


def _remove_dirs(paths: List[str]) -> None:
    for p in paths:
        shutil.rmtree(p, ignore_errors=True)
    if paths:
        _files.fsync_dir(Path(paths[0]).parent)


# ----- moving a partition -----


def move(dx: "DistributedIndex", role: str, n: int, node: str) -> Dict[str, Any]:
    """Moves partition ``<role>-<n>`` of an open index to the node named ``node``: see
    ``DistributedIndex.move_partition``."""
    ray = require_ray()
    from ._partition import start_partitions

    parts = {"key": dx.keys, "doc": dx.docs}
    if role not in parts or not isinstance(n, int) or not 0 <= n < len(parts[role]):
        raise InvalidArgumentError(
            f"no partition {role}-{n}: the index has key-0…{len(dx.keys) - 1} and doc-0…{len(dx.docs) - 1}"
        )
    name = f"{role}-{n:03}"
    root = dx.root
    t = time.monotonic()
    with _files.MergeLock(root):
        assignment = load(root, dx.layout)
        alive = alive_nodes()
        if node not in alive:
            raise PartitionNodeMissingError(root, {name: node}, sorted(alive))
        target = _unique(alive, node)
        if any(e["node"] is None for e in assignment["partitions"].values()):
            # Partitions that follow the driver are pinned to where they are now, this node.
            here = driver_node_name()
            for e in assignment["partitions"].values():
                if e["node"] is None:
                    e["node"] = here
        entry = assignment["partitions"][name]
        source_name = entry["node"]
        if source_name not in alive:
            raise PartitionNodeMissingError(root, {name: source_name}, sorted(alive))
        source = _unique(alive, source_name)
        if source == target:
            return {"partition": name, "from": source_name, "to": node, "moved": False}
        old_dir = db_path(root, assignment, name)
        new_dir = next_dir(name, entry["dir"], "m")
        source_base = local_base(root, assignment, source_name)
        target_base = local_base(root, assignment, node)
        shot = source_base / f".{name}.checkpoint"
        incoming = target_base / f".{new_dir}.incoming"
        actor = parts[role][n]
        # A consistent snapshot while the database is open (the merge lock keeps writers out),
        # then the actor closed and ended: nothing writes to the partition until it is moved.
        ray.get(_on(_remove_dirs, source).remote([str(shot)]))
        ray.get(actor.checkpoint.remote(str(shot)))
        ray.get(actor.close.remote())
        ray.kill(actor, no_restart=True)
        try:
            files = ray.get(_on(_list_files, source).remote(str(shot)))
            ray.get(_on(_prepare, target).remote(str(incoming), [f[0] for f in files]))
            read, write = _on(_read_chunk, source), _on(_write_chunk, target)
            pending: List[Any] = []
            sent = 0
            for rel, size, _ in files:
                for off in range(0, size, CHUNK_BYTES):
                    # The chunk goes from the source node to the target node as a Ray object.
                    data = read.remote(str(shot / rel), off, CHUNK_BYTES)
                    pending.append(write.remote(str(incoming / rel), off, data))
                    if len(pending) >= CHUNKS_IN_FLIGHT:
                        done, pending = ray.wait(pending, num_returns=1)
                        sent += sum(ray.get(done))
            sent += sum(ray.get(pending))
            ray.get(_on(_finish, target, retries=0).remote(str(incoming), str(target_base / new_dir), files))
        except BaseException:
            # The partition stays where it was: its actor starts there again.
            for where, path in ((target, incoming), (source, shot)):
                try:
                    ray.get(_on(_remove_dirs, where).remote([str(path)]))
                except Exception:  # noqa: BLE001 - the move's own error is the one to raise
                    pass
            stored = load(root, dx.layout)
            parts[role][n] = start_partitions(root, dx.layout, dx.options, resolve(root, stored), stored, only=[(role, n)])[0]
            raise
        # The copy is whole: the assignment says so, then the old copy goes.
        entry["node"], entry["dir"] = node, new_dir
        store(root, assignment)
        ray.get(_on(_remove_dirs, source).remote([str(shot), str(old_dir)]))
        parts[role][n] = start_partitions(root, dx.layout, dx.options, resolve(root, assignment), assignment, only=[(role, n)])[0]
    return {
        "partition": name,
        "from": source_name,
        "to": node,
        "moved": True,
        "dir": new_dir,
        "files": len(files),
        "bytes": sent,
        "seconds": round(time.monotonic() - t, 3),
    }
