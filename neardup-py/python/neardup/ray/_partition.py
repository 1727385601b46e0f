"""The partition actors of a distributed index (SCALEOUT §4, §9; FORMAT.md "Partitions").

Each key or doc partition is one neardup database owned by a named Ray actor: the actor opens it
in its role and answers the driver's calls (``Index`` methods by name, the batch logs of S5). Each
actor is pinned to its partition's node (``_place``: the stored assignment, resolved to the node
ids alive now; the driver's node when the index places nothing), named after the index's root so
that a driver finds the ones already running, and restarted by Ray without limit: a restarted
actor reopens its database (the write-ahead log recovers it), and its calls are retried.
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import neardup
from neardup import Layout

from . import _files
from ._durable import upload_checkpoint
from ._runtime import require_ray
from ._store import Store


#: How long a partition actor waits for its database's lock when it opens it (seconds).
LOCK_WAIT_S = 120.0


def open_partition(
    path: str, options: Dict[str, Any], layout: Layout, role: str, part: int, wait: float = LOCK_WAIT_S
) -> Any:
    """Opens partition ``part`` of kind ``role`` of ``layout`` (its database at ``path``),
    waiting up to ``wait`` seconds while another process holds its lock. A new partition is a
    ``neardup.Partition`` (format 7: 64-bit page and cluster ids, issue #34 item 5); one made
    before it is opened as the ``neardup.Index`` it is (format 6, ids below 2³²). A restarted
    actor may start while the process Ray replaced (killed by the memory monitor, say) is still
    exiting and holds the lock: the open is retried, with a growing pause, until the lock is
    free or the time is up, when the last ``StorageError`` is raised. Other errors are raised
    at once."""
    deadline = time.monotonic() + wait
    pause = 0.05
    while True:
        try:
            return _open(path, options, layout, role, part)
        except neardup.StorageError as e:
            if "lock file" not in str(e) or time.monotonic() >= deadline:
                raise
        time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(2 * pause, 2.0)


def _open(path: str, options: Dict[str, Any], layout: Layout, role: str, part: int) -> Any:
    """A partition's database: format 7, or the format 6 one a root made before holds."""
    try:
        return neardup.Partition(path, layout, role, part, **options)
    except neardup.IncompatibleFormatError:
        ix = neardup.Index(path, **options)
        ix.set_partition(layout, role, part)
        return ix


def is_wide(ix: Any) -> bool:
    """Whether a partition's database stores 64-bit ids (format 7)."""
    return isinstance(ix, neardup.Partition)


class _Partition:
    """The body of a partition actor: one neardup database in a key or doc role."""

    def __init__(self, path: str, role: str, part: int, layout: Tuple[int, int, int], options: Dict[str, Any]) -> None:
        self.path = path
        self.name = f"{role}-{part:03}"
        self.part = part
        # Under a node's local root (_place.local_base) that may not exist yet.
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.ix = open_partition(path, options, Layout(*layout), role, part)
        # The sha256 of each immutable file (SST) of this database's checkpoints, by name, size,
        # inode and modification time: an upload hashes only the files it has not seen.
        self._hashes: Dict[Tuple[str, int, int, int], str] = {}

    def call(self, name: str, *args: Any) -> Any:
        """Calls ``Index.<name>(*args)``."""
        return getattr(self.ix, name)(*args)

    def probe_forest(
        self,
        store: Store,
        rel: str,
        parts: List[Tuple[int, str]],
        offsets: List[int],
        members: Tuple[bytes, ...],
        rows: Optional[bytes] = None,
    ) -> Any:
        """S2–S3 on a key partition: the day's probes it holds, read from S1's parts, and the
        members' placed again, joined through its postings and simhash tables; with ``rows``,
        those rows' only, the sketch keys given apart as weighted edges
        (``_plan.partition_forest``)."""
        from ._plan import partition_forest

        return partition_forest(self.ix, self.part, store, rel, parts, offsets, members, rows)

    def apply(self, batch: int, log: bytes) -> bool:
        """Applies a batch log once in effect."""
        return bool(self.ix.apply_log(batch, log))

    def receive_log(self, batch: int, offset: int, chunk: bytes) -> int:
        """S5 for a partition on another node than the root's store (SCALEOUT §5, issue #34
        item 3): writes ``chunk``, the bytes of its log of ``batch`` from ``offset``, to the file
        beside its database that ``apply_received`` applies; the file's size after it. The file
        is cut at ``offset`` first, so that a sender that starts again (a retried task) writes
        the same file; a chunk past the file's end (a chunk lost between) is refused with
        ``neardup.InvalidArgumentError``."""
        path = self._received(batch)
        with open(path, "r+b" if offset else "wb") as f:
            size = f.seek(0, os.SEEK_END)
            if offset > size:
                raise neardup.InvalidArgumentError(
                    f"the log of batch {batch} continues at byte {offset}, but {size} bytes were received"
                )
            f.seek(offset)
            f.truncate()
            f.write(chunk)
            return offset + len(chunk)

    def apply_received(self, batch: int, size: int) -> bool:
        """Applies the log of ``batch`` that ``receive_log`` wrote, ``size`` bytes in all, from
        its file (never held whole in memory), once in effect; the file is removed after,
        applied or not. A file of another size is refused with ``neardup.InvalidArgumentError``
        (nothing applied); a damaged one by ``Index.apply_log_file``."""
        path = self._received(batch)
        try:
            got = os.path.getsize(path)
            if got != size:
                raise neardup.InvalidArgumentError(
                    f"the log of batch {batch} is {size} bytes, but {got} were received"
                )
            return bool(self.ix.apply_log_file(batch, path))
        finally:
            if os.path.exists(path):
                os.remove(path)

    def _received(self, batch: int) -> str:
        """The file beside the database that a log sent in chunks is written to."""
        return f"{self.path}.log-{batch}.received"

    def apply_stored(self, batch: int, store: Store, rel: str) -> bool:
        """Applies a batch log of the store (``rel`` in it) once in effect, from its file,
        never held whole in memory (a partition's share of a large day, issue #34): read in
        place from a store on this node's file system (the shared one mounted here, or the
        root's on the driver's node), else copied beside the database first."""
        if store.local:
            return bool(self.ix.apply_log_file(batch, store.path(rel)))
        copy = f"{self.path}.log-{batch}"
        try:
            store.get_file(rel, copy)
            return bool(self.ix.apply_log_file(batch, copy))
        finally:
            if os.path.exists(copy):
                os.remove(copy)

    def seed_to_store(self, store: Store, rel: str, pages: List[int], clusters: List[int]) -> int:
        """S4.2 for a unit (SCALEOUT §5, issue #34): the seed log of these pages and clusters of
        this doc partition written to ``rel`` in the store as it is read (``seed_log_file``,
        never whole in memory: a unit of a large component reaches most of the index), whole or
        not at all; its size. Written in place on a store of this node's file system, else
        beside the database and copied."""
        if store.local:
            dest = Path(store.path(rel))
            _files.make_dirs(dest.parent)
            tmp = dest.with_name(f"{dest.name}.tmp-{uuid.uuid4().hex}")
            try:
                size = int(self.ix.seed_log_file(pages, clusters, str(tmp)))
                os.replace(tmp, dest)
            finally:
                if tmp.exists():
                    tmp.unlink()
            return size
        local = f"{self.path}.seed-{uuid.uuid4().hex}"
        try:
            self.ix.seed_log_file(pages, clusters, local)
            return store.put_file(local, rel)
        finally:
            if os.path.exists(local):
                os.remove(local)

    def node_id(self) -> str:
        """The Ray node this actor runs on."""
        return str(require_ray().get_runtime_context().get_node_id())

    def store_checkpoint(self, store: Store, batch: int, keep: int) -> Dict[str, Any]:
        """Uploads a checkpoint of the database, at ``batch``, to the shared store, incrementally
        (``_durable.upload_checkpoint``); the last ``keep`` checkpoints of the partition stay."""
        return upload_checkpoint(self.ix, self._hashes, store, self.name, batch, self.path + ".upload", keep)

    def wide(self) -> bool:
        """Whether the database stores 64-bit ids (format 7)."""
        return is_wide(self.ix)

    def stats(self) -> Dict[str, Any]:
        """The database's figures (``pages`` and ``clusters`` live in the whole index among
        them), and ``wide``: whether it stores 64-bit ids (format 7)."""
        out = dict(self.ix.stats())
        out["wide"] = is_wide(self.ix)
        return out

    # ----- the distributed check (SCALEOUT §9 "Check") -----

    def check_frequent(self) -> bytes:
        """The over-frequent keys this partition marks, concatenated (none in a doc partition)."""
        from neardup._neardup import _partition_frequent

        return _partition_frequent(self.ix)

    def check_part(self, layout: Layout, frequent: bytes) -> Dict[str, Any]:
        """This partition's own check, with the digests the driver reconciles across partitions
        (``Index.partition_check`` in the core crate); ``frequent``: every over-frequent key."""
        from neardup._neardup import _partition_check

        return dict(_partition_check(self.ix, layout, frequent))

    def check_entries(self, layout: Layout, frequent: bytes, kind: int, peer: int, filed: bool, buckets: List[int]) -> List[bytes]:
        """The entries of one digest of ``check_part`` in ``buckets`` (a mismatch narrowed)."""
        from neardup._neardup import _partition_check_entries

        return list(_partition_check_entries(self.ix, layout, frequent, kind, peer, filed, buckets))

    # ----- the distributed export (SCALEOUT §9 "Export"; ``_export``) -----

    def export_asks(self, layout: Layout, kind: str) -> Any:
        """What this doc partition asks of each doc partition for an export of ``kind``, one
        message per doc partition (returned as that many objects; one is not in a tuple)."""
        from neardup._neardup import _export_asks

        return _returns(_export_asks(self.ix, layout, kind))

    def export_replies(self, layout: Layout, *asks: bytes) -> Any:
        """The replies to ``asks`` (what each doc partition asked of this one), one object
        each."""
        from neardup._neardup import _export_replies

        return _returns(_export_replies(self.ix, layout, list(asks)))

    def export_cluster_replies(self, layout: Layout, n: int, *messages: bytes) -> Any:
        """The replies to the clusters of the ``n`` asks first in ``messages`` (what each
        doc partition asked of this one), from the ``n`` replies to this partition's asks
        that follow them; one object each."""
        from neardup._neardup import _export_cluster_replies

        return _returns(_export_cluster_replies(self.ix, layout, list(messages[:n]), list(messages[n:])))

    def export_part(self, layout: Layout, kind: str, token: str, n: int, *messages: bytes) -> int:
        """This doc partition's part of an export of ``kind`` written to a file beside its
        database (named by ``token``), from the ``n`` replies to its asks first in
        ``messages`` and the cluster replies after them; returns its size in bytes. Parts
        of this partition older than a day (left by a driver that died) are removed."""
        from neardup._neardup import _export_part

        self._drop_stale_exports()
        path = self._export_path(token)
        _export_part(self.ix, layout, kind, path, list(messages[:n]), list(messages[n:]))
        return os.path.getsize(path)

    def export_read(self, token: str, offset: int, size: int) -> bytes:
        """At most ``size`` bytes of the part of ``token`` from ``offset``."""
        with open(self._export_path(token), "rb") as f:
            f.seek(offset)
            return f.read(size)

    def export_drop(self, token: str) -> None:
        """Removes the part of ``token`` (if there)."""
        try:
            os.unlink(self._export_path(token))
        except FileNotFoundError:
            pass

    def _export_path(self, token: str) -> str:
        if not token.isalnum():
            raise neardup.InvalidArgumentError(f"an export's token is alphanumeric, not {token!r}")
        return f"{self.path}.export-{token}"

    def _drop_stale_exports(self) -> None:
        top, name = os.path.split(self.path)
        prefix = f"{name}.export-"
        for entry in os.listdir(top or "."):
            if entry.startswith(prefix):
                path = os.path.join(top, entry)
                try:
                    if time.time() - os.path.getmtime(path) > _STALE_EXPORT_SECONDS:
                        os.unlink(path)
                except FileNotFoundError:
                    pass

    def pid(self) -> int:
        return os.getpid()

    def node(self) -> str:
        """The id of the Ray node this actor runs on."""
        import ray

        return ray.get_runtime_context().get_node_id()

    def remove_tree(self, path: str) -> None:
        """Removes a directory tree of this node's disk (an old checkpoint of the partition)."""
        import shutil

        shutil.rmtree(path, ignore_errors=True)

    def checkpoint(self, path: str) -> None:
        """``Index.checkpoint(path)``, its parent directory made first (on this node's disk)."""
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.ix.checkpoint(path)

    def checkpoint_local(self, top: str, batch: int) -> None:
        """A checkpoint under ``top/batch=<batch>/<partition>`` on this node's disk; this
        partition's checkpoints of batches before ``batch - 1`` there are removed (and their
        directories once empty)."""
        import shutil

        dest = os.path.join(top, f"batch={batch}", self.name)
        shutil.rmtree(dest, ignore_errors=True)
        self.checkpoint(dest)
        for d in os.listdir(top):
            if d.startswith("batch=") and d[6:].isdigit() and int(d[6:]) < batch - 1:
                shutil.rmtree(os.path.join(top, d, self.name), ignore_errors=True)
                try:
                    os.rmdir(os.path.join(top, d))
                except OSError:
                    pass  # another partition's checkpoint is still there

    def close(self) -> None:
        self.ix.close()


#: How old an export's part left behind is when the partition's next export removes it.
_STALE_EXPORT_SECONDS = 86400


def _returns(messages: List[bytes]) -> Any:
    """Messages as an actor method's return values: a tuple, one message alone (Ray's
    ``num_returns=1`` takes the value itself)."""
    return messages[0] if len(messages) == 1 else tuple(messages)


def _actor_name(root: Path, role: str, part: int) -> str:
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    return f"neardup-{digest}-{role}-{part}"


def start_partitions(
    root: Path,
    layout: Layout,
    options: Dict[str, Any],
    node_ids: Dict[str, Optional[str]],
    assignment: Dict[str, Any],
    only: Optional[List[Tuple[str, int]]] = None,
) -> List[Any]:
    """The actors of the partitions under ``root``, started or found running: every partition's
    (the key partitions', then the doc partitions'), or those of ``only``. Each runs on its node
    (``node_ids``: partition → node id, ``None`` for this driver's node) and opens its database
    (``<dir>`` of ``assignment`` under the node's local root, ``_place.db_path``) with
    ``options``."""
    ray = require_ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = ray.get_runtime_context().get_node_id()
    cls = ray.remote(_Partition)
    shape = (layout.key_parts, layout.doc_parts, layout.simhash_max_distance)
    roles = only if only is not None else [("key", n) for n in range(layout.key_parts)] + [
        ("doc", n) for n in range(layout.doc_parts)
    ]

    from ._place import db_path

    def actor(role: str, n: int) -> Any:
        name = f"{role}-{n:03}"
        return cls.options(
            name=_actor_name(root, role, n),
            namespace="neardup",
            get_if_exists=True,
            max_restarts=-1,
            max_task_retries=-1,
            num_cpus=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_ids[name] or here, soft=False),
        ).remote(str(db_path(root, assignment, name)), role, n, shape, options)

    actors = [actor(r, n) for r, n in roles]
    # A driver that died a moment ago leaves its actors named until Ray has ended them: the
    # handles found then are dead, and are asked for again until fresh ones start. So does a
    # partition just moved, whose old actor was ended.
    deadline = time.monotonic() + 60
    while True:
        pings = [a.pid.remote() for a in actors]
        dead = []
        for i, ref in enumerate(pings):
            try:
                ray.get(ref)
            except ray.exceptions.ActorDiedError:
                dead.append(i)
        if not dead:
            break
        if time.monotonic() > deadline:
            raise neardup.StorageError(f"partition actors {dead} of {root} do not start")
        time.sleep(0.5)
        for i in dead:
            actors[i] = actor(*roles[i])
    return actors
