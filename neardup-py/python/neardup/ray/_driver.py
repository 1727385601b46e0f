"""The driver of the daily merge: ``DistributedIndex`` (SCALEOUT §4, §5, §9).

It opens a distributed index (its layout file, its partition actors), reads across the partitions
(``pages``, ``export``, ``export_tsv``, ``export_clusters``: ``_export``; ``check``, ``stats``), and runs a merge stage after
stage under the index's merge lock: the batch's manifest, S1 (``_sign``: the day read and signed by
Ray tasks), S2–S4 (``_plan``, ``_decide``: run by a coordinator actor), the logs' ``_DONE`` marker, S5
and S6's checkpoint (``_commit``), and the report. The driver holds nothing a page of the day
(issue #34, item 3): it hashes the input files for the manifest (streamed) and gets counts.
A re-run with the same inputs resumes where the markers say: a batch whose logs were written goes
straight to S5; a batch every partition applied is reported as done.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import neardup
from neardup import InvalidArgumentError, Layout

from . import _commit, _decide, _durable, _export, _faults, _files, _place, _plan, _progress, _sign
from ._files import PathLike
from ._partition import start_partitions
from ._place import MissingPartitionsError, PartitionNodeMissingError  # noqa: F401 - re-exported
from ._runtime import require_ray
from ._store import Store, StoreError, new_store_id, open_store  # noqa: F401 - StoreError re-exported

#: The layout file at the root of a distributed index.
LAYOUT_FILE = "layout.json"


class MergeReport(dict):
    """What a merge did (a dict, also written to ``report.json`` in the batch's directory):
    ``batch``, ``pages`` (the day's records: its files' non-blank lines), ``deleted``,
    ``missing`` (delete-list keys the index did not hold), ``duplicates``, ``errors`` (records
    not merged: lines that could not be read, rows without a usable key or body, pages the index
    refused), ``error_rows`` (the first 100 of those in file order, each ``{"file", "line",
    "reason"}``), ``reached_pages`` and ``reached_clusters`` (the standing part the
    day read), ``components`` (sizes: largest, count, singletons), ``shuffled_bytes`` (keys,
    seeds and logs sent between driver and partitions), ``log_bytes`` (per partition),
    ``seconds`` (per stage), ``resumed`` (the stages a re-run skipped). With a shared store:
    ``checkpoints`` (``{"partitions", "files", "bytes", "uploaded"}``: what S6 uploaded), and
    ``restored`` (the partitions this driver restored from the store when it opened the index,
    each ``{"partition", "from", "to", "dir", "checkpoint_batch", "replayed", "files", "bytes",
    "seconds", "reason"}``; empty when none was lost)."""


class DistributedIndex:
    """A distributed neardup index under ``root``: ``key_parts`` key and ``doc_parts`` doc
    partitions (read from ``root/layout.json`` once created; giving other counts then raises),
    each a named Ray actor pinned to its partition's node that reopens its database when
    restarted.
    ``options`` are ``neardup.Index`` options, the same for every partition and the scratch
    index (recorded in the layout file; site chrome and document-frequency methods cannot be
    merged in parts).

    Ray is started on this machine with ``num_cpus`` CPUs (default: all) when it is not running;
    give ``address`` to join a running cluster instead (``num_cpus`` with it raises
    ``InvalidArgumentError``: the cluster has its own CPUs). Actors are created with
    ``max_restarts=-1`` and ``max_task_retries=-1``.

    Placement: a new index assigns each partition to a node and stores the assignment in
    ``root/placement.json`` (beside ``layout.json``; see ``placement()``). ``placement="spread"``
    (the default on a cluster of more than one alive node) deals the partitions round-robin, key
    partitions then doc partitions, over the alive nodes sorted by name; ``nodes=[...]`` over
    the nodes named, in that order; ``placement="driver"`` (the default on one node, and what a
    root made before placement existed has) keeps every partition on the node of the driver that
    opens the index. A node's name is what survives its restart: its label ``neardup-node``, else
    its resource ``neardup-node:<name>``, else its IP address; never its Ray node id. Each
    partition's database is ``<role>-<n>`` (``.m<g>`` after a move, ``.r<g>`` after a restore)
    under its node's local root (below) on its node's disk; ``layout.json``, ``placement.json``
    and (without a store) ``batches/`` are on the driver's. A driver
    started anywhere reads the assignment and pins each actor to the node now alive under its
    partition's name; ``move_partition`` moves one. Giving ``placement`` or ``nodes`` for an
    existing root other than it was created with raises ``InvalidArgumentError``.

    ``local_root``: where each node keeps the databases of its partitions, a directory of its
    local disk, ``{node}`` in it replaced by the node's name (e.g. ``"/nvme/neardup"``, or
    ``"/tmp/sim/{node}"`` for simulated nodes on one machine); by default the root, the same path
    on every node. Chosen when the index is created (stored in ``placement.json``).

    ``store``: a shared store, a directory path (an NFS mount) or a ``pyarrow.fs`` URI
    (``s3://bucket/prefix``, ``gs://…``) every node reaches, that must exist and be writable;
    chosen when the index is created (stored in ``layout.json``; opening the index later needs
    no ``store``, and another one raises ``InvalidArgumentError``). With it the batches
    (``batches/``: signatures and logs, written by the workers) are kept there rather than under
    the root, every committed batch is checkpointed to it by every partition (incrementally:
    ``_durable``), and a partition whose node is not alive, or whose database is missing on its
    node, is **restored** when the index is opened: its last checkpoint copied from the store to
    another alive node (the one holding the fewest partitions; its own node when only the
    database was lost), ``placement.json`` rewritten, and the batch logs since its checkpoint
    replayed; ``restored`` lists what was done (and the next merge's report). A node lost while
    a merge runs is noticed when one of its partitions fails: its partitions are restored so,
    and the merge resumes from its markers. ``restore=False`` refuses such an index instead
    (``PartitionNodeMissingError``), as without a store.

    A root with a layout file must hold its partitions' databases (``key-<n>``, ``doc-<n>``),
    each on its node (a task there looks): when any is missing, ``MissingPartitionsError`` is
    raised and nothing is created; when a partition's node is not alive,
    ``PartitionNodeMissingError`` names the partitions and nodes, and nothing is started
    elsewhere (a root with no layout file is a new index, created with empty partitions); with
    a store, both are restored instead (above).

    # Errors
    ``InvalidArgumentError`` for counts, options, a store or a placement other than the
    root's, options a distributed index cannot keep, or a node name several alive nodes share;
    ``MissingPartitionsError`` and ``PartitionNodeMissingError`` as above (with a store: for a
    partition not restored); ``StoreError`` for a store that is missing, not writable, another
    index's, or without a checkpoint of a partition to restore (nothing is restored then)."""

    def __init__(
        self,
        root: PathLike,
        key_parts: Optional[int] = None,
        doc_parts: Optional[int] = None,
        *,
        address: Optional[str] = None,
        num_cpus: Optional[int] = None,
        placement: Optional[str] = None,
        nodes: Optional[Sequence[str]] = None,
        local_root: Optional[PathLike] = None,
        store: Optional[PathLike] = None,
        restore: bool = True,
        **options: Any,
    ) -> None:
        if address is not None and num_cpus is not None:
            raise InvalidArgumentError(
                f"num_cpus={num_cpus} is for a Ray started here, but address={address!r} joins a "
                "running cluster, which has its own CPUs: give one or the other"
            )
        request = _place.check_request(placement, nodes)
        self.root = Path(root).absolute()
        layout_path = self.root / LAYOUT_FILE
        new = not layout_path.exists()
        if new and store is not None:
            # Checked before anything is made: a store that cannot be used refuses a new index.
            Store(str(store), shared=True).probe()
        self.root.mkdir(parents=True, exist_ok=True)
        if not new:
            stored = json.loads(layout_path.read_text())
            for name, given in (("key_parts", key_parts), ("doc_parts", doc_parts)):
                if given is not None and given != stored[name]:
                    raise InvalidArgumentError(
                        f"{self.root} has {stored[name]} {name.replace('_', ' ')}, not {given}"
                    )
            if options and options != stored["options"]:
                raise InvalidArgumentError(
                    f"{self.root} was created with options {stored['options']}, not {options}"
                )
            if store is not None and open_store(str(store), self.root).spec != stored.get("store"):
                raise InvalidArgumentError(
                    f"{self.root} was created with store {stored.get('store')!r}, not {str(store)!r}: "
                    "the store is chosen when an index is created"
                )
        else:
            stored = {
                "key_parts": key_parts or 4,
                "doc_parts": doc_parts or 4,
                "options": options,
            }
            if store is not None:
                stored.update(store=open_store(str(store), self.root).spec, store_id=new_store_id())
        #: Where the batches (and, when shared, the checkpoints) are kept: the shared store the
        #: index was created with, else the root (``_store``).
        self.store: Store = open_store(stored.get("store"), self.root)
        #: The partitions restored from the store when the index was opened (see ``restore``).
        self.restored: List[Dict[str, Any]] = []
        self._keep_checkpoints = 1
        self._max_component = _plan.DEFAULT_MAX_COMPONENT
        self._restore = restore
        # The merge lock while a restore at open runs (``_lock_for_restore``), and whether a
        # merge of this driver holds it already.
        self._open_lock: Optional[_files.MergeLock] = None
        self._merging = False
        if self.store.shared:
            if new:
                self.store.create(
                    stored["store_id"],
                    {"root": str(self.root), "key_parts": stored["key_parts"], "doc_parts": stored["doc_parts"]},
                )
            else:
                self.store.open(stored["store_id"])
        self.options: Dict[str, Any] = dict(stored["options"])
        self._signature = _check_options(self.options)
        distance = int(self.options.get("simhash_max_distance", 3))
        self.layout = Layout(int(stored["key_parts"]), int(stored["doc_parts"]), distance)
        assignment: Optional[Dict[str, Any]] = None
        if not new:
            assignment = _place.load(self.root, self.layout)
            if request is not None and request != (assignment["placement"], assignment["nodes"]):
                raise InvalidArgumentError(
                    f"{self.root} was created with placement={assignment['placement']!r}, "
                    f"nodes={assignment['nodes']}: placement is chosen when an index is created; "
                    "move_partition moves a partition"
                )
            if local_root is not None and str(local_root) != assignment.get("local_root"):
                raise InvalidArgumentError(
                    f"{self.root} was created with local_root={assignment.get('local_root')!r}, not "
                    f"{str(local_root)!r}: it is chosen when an index is created"
                )
            local = assignment.get("local_root")
            if (
                all(e["node"] is None for e in assignment["partitions"].values())
                and not (local and "{node}" in local)
                and not (self.store.shared and restore)
            ):
                # Opening a partition creates it: an index whose partitions are elsewhere
                # (another node, a lost disk) would go on as a new, empty one.
                _place.check_local(self.root, assignment)
        ray = require_ray()
        if not ray.is_initialized():
            try:
                ray.init(
                    address=address,
                    num_cpus=num_cpus,
                    include_dashboard=False,
                    logging_level="WARNING",
                    log_to_driver=False,
                )
            except ValueError as e:
                # RAY_ADDRESS set in the environment joins a cluster too.
                raise InvalidArgumentError(f"cannot start or join Ray: {e}") from None
        if assignment is None:
            # A new index: its partitions placed, the assignment written before any is created.
            assignment = _place.choose(self.layout, request, None if local_root is None else str(local_root))
            _place.store(self.root, assignment)
            node_ids = _place.resolve(self.root, assignment)
        try:
            if not new:
                # Each partition on its node, alive and holding its database, or the index
                # refused (with a shared store: restored from it, under the merge lock).
                node_ids = self._resolve(assignment, restore)
            actors = start_partitions(self.root, self.layout, self.options, node_ids, assignment)
            self.keys, self.docs = actors[: self.layout.key_parts], actors[self.layout.key_parts :]
            if self.store.shared and not new:
                # Restored partitions (and any left behind by a catch-up that stopped) replay the
                # batch logs since their checkpoints.
                _durable.catch_up(self, self.restored)
        finally:
            if self._open_lock is not None:
                self._open_lock.__exit__(None, None, None)
                self._open_lock = None
        self._unreported = list(self.restored)
        if new:
            # Written once the partitions exist: from now on they must be found (a crash before
            # leaves a root that is opened as new again, its empty partitions reused).
            tmp = layout_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(stored, indent=1, sort_keys=True))
            os.replace(tmp, layout_path)
            _files.fsync_dir(self.root)

    def _resolve(self, assignment: Dict[str, Any], restore: bool) -> Dict[str, Optional[str]]:
        """The node id of each partition of an existing index; with a shared store (and
        ``restore``) the partitions whose node is gone or whose database is missing restored
        first (``_durable.restore``), recorded in ``self.restored``."""
        can = self.store.shared and restore
        try:
            node_ids = _place.resolve(self.root, assignment)
        except PartitionNodeMissingError as e:
            if not can:
                raise
            if self._lock_for_restore(assignment):
                return self._resolve(assignment, restore)
            self.restored += _durable.restore(self.root, self.store, assignment, dict(e.missing), in_place=False)
            node_ids = _place.resolve(self.root, assignment)
        local = assignment.get("local_root")
        if any(e["node"] is not None for e in assignment["partitions"].values()) or can or (local and "{node}" in local):
            try:
                _place.check_databases(self.root, assignment, node_ids)
            except MissingPartitionsError as e:
                if not can:
                    raise
                if self._lock_for_restore(assignment):
                    return self._resolve(assignment, restore)
                lost = {name: assignment["partitions"][name]["node"] for name in e.missing}
                self.restored += _durable.restore(self.root, self.store, assignment, lost, in_place=True)
                node_ids = _place.resolve(self.root, assignment)
        return node_ids

    def _lock_for_restore(self, assignment: Dict[str, Any]) -> bool:
        """Before a restore when the index is opened: the merge lock, so that two drivers
        opening the index at once never both restore a partition (a merge of this driver holds
        the lock already: False). True when it was just taken: ``assignment`` is then reloaded
        from ``placement.json``, which a driver that restored before may have rewritten, and
        must be resolved again. Raises ``InvalidArgumentError`` while another driver merges (its
        merge restores lost partitions itself)."""
        if self._merging or self._open_lock is not None:
            return False
        lock = _files.MergeLock(self.root)
        try:
            lock.__enter__()
        except InvalidArgumentError:
            raise InvalidArgumentError(
                f"partitions of {self.root} must be restored, but another driver is merging into it: "
                "open it again when that merge has ended (a merge restores lost partitions itself)"
            ) from None
        self._open_lock = lock
        fresh = _place.load(self.root, self.layout)
        assignment.clear()
        assignment.update(fresh)
        return True

    # ----- partitions -----

    def partitions(self) -> List[Any]:
        """Every partition actor: the key partitions, then the doc partitions."""
        return self.keys + self.docs

    def applied_batches(self) -> List[Optional[int]]:
        """The last batch each partition applied (``None``: none), key partitions first."""
        ray = require_ray()
        return ray.get([a.call.remote("applied_batch") for a in self.partitions()])

    def placement(self) -> Dict[str, Dict[str, Any]]:
        """Where each partition is: ``{"key-000": {"node": name, "dir": directory}, ...}`` as
        ``placement.json`` stores it (``node`` ``None``: the driver's node), each with ``node_id``,
        the Ray node its actor runs on now."""
        ray = require_ray()
        stored = _place.load(self.root, self.layout)["partitions"]
        names = _place.partition_names(self.layout)
        ids = ray.get([a.node.remote() for a in self.partitions()])
        return {name: dict(stored[name], node_id=i) for name, i in zip(names, ids)}

    def move_partition(self, role: str, n: int, node: str) -> Dict[str, Any]:
        """Moves partition ``<role>-<n>`` (``role`` ``"key"`` or ``"doc"``) to the node named
        ``node`` (its ``neardup-node`` label, else its ``neardup-node:<name>`` resource, else its
        IP address), under the merge lock: a checkpoint of the database on its node, the actor
        closed and ended, the checkpoint's files streamed in chunks through Ray objects to a task
        on the target node that writes them (each file checked by size and sha256) under
        ``<role>-<n>.m<g>``; only once the copy is whole is ``placement.json`` rewritten (a
        temporary file renamed over it), then the old copy removed and the actor started on the
        target node. Interrupted before the assignment is written, the partition stays where it
        was; after, it is on the target node (an old copy may be left behind). Returns
        ``{"partition", "from", "to", "moved", "dir", "files", "bytes", "seconds"}`` (``moved``
        False when it is on that node already). A root whose partitions followed the driver
        (``placement="driver"``) has them all pinned to this driver's node first.

        # Errors
        ``InvalidArgumentError`` for no such partition, a node name that several nodes share or
        a merge running; ``PartitionNodeMissingError`` when the target (or the source) node is
        not alive."""
        return _place.move(self, role, n, node)

    def close(self) -> None:
        """Closes every partition's database and ends its actor."""
        ray = require_ray()
        try:
            ray.get([a.close.remote() for a in self.partitions()])
        finally:
            for a in self.partitions():
                ray.kill(a, no_restart=True)
        self.keys, self.docs = [], []

    def __enter__(self) -> "DistributedIndex":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ----- reads across partitions -----

    def pages(self) -> Any:
        """Every page the doc partitions hold, in id order: ``pyarrow.Table(doc: uint64, key:
        string, cluster: uint64, seq: uint64)`` (global ids). Each doc partition writes its pages, in id
        order, on its node, and the driver merges them (``_export``)."""
        import pyarrow as pa

        with self._reading():
            docs, keys, clusters, seqs = _export.columns(self, "rows")
        return pa.table(
            {
                "doc": pa.array(docs, pa.uint64()),
                "key": pa.array(keys, pa.string()),
                "cluster": pa.array(clusters, pa.uint64()),
                "seq": pa.array(seqs, pa.uint64()),
            }
        )

    def export(self) -> Any:
        """Every page's key and the key of the page it was judged a near duplicate of (while
        held; else its cluster's representative), in page-id order: the
        ``pyarrow.Table(key, representative)`` that ``Index.export()`` gives on one machine.
        The references are resolved between the doc partitions, each writes its part, and the
        driver merges the parts by id (``_export``); the table is the index's size
        (``export_tsv`` streams to a file instead)."""
        import pyarrow as pa

        with self._reading():
            keys, targets = _export.columns(self, "pages")
        return pa.table({"key": pa.array(keys, pa.string()), "representative": pa.array(targets, pa.string())})

    def export_tsv(self, path: PathLike) -> int:
        """Writes the export (``export()``'s rows) to ``path`` as the TSV of ``neardup export``
        (a line ``key<TAB>representative`` per page, in page-id order), streamed: each doc
        partition writes its part on its node, with the references to pages and clusters of
        other partitions resolved between the partitions, and the driver merges the parts by
        page id into the file, reading each part a block at a time, so its memory does not
        grow with the index. Returns the rows written.

        # Errors
        ``OSError`` when ``path`` cannot be written; ``InvalidArgumentError`` when a
        partition changed during the export (a merge ran meanwhile: export again);
        ``CorruptionError`` for a cluster or page the partitions should hold and do not."""
        with self._reading():
            return _export.write_tsv(self, Path(path))

    def export_clusters(self) -> Any:
        """Every cluster in id order, members in id order: the ``pyarrow.Table(cluster,
        representative, members)`` of ``Index.export_clusters()``. Each doc partition writes
        its clusters (their members' keys asked of the partitions holding them) in id order,
        and the driver merges them (``_export``)."""
        import pyarrow as pa

        with self._reading():
            ids, reps, members = _export.columns(self, "clusters")
        return pa.table(
            {
                "cluster": pa.array(ids, pa.uint64()),
                "representative": pa.array(reps, pa.string()),
                "members": pa.array(members, pa.list_(pa.string())),
            }
        )

    def check(self) -> Dict[str, Any]:
        """The distributed check (SCALEOUT §9 "Check"), without gathering the index: each
        partition checks its own part in its actor (every record, posting and simhash entry
        decodes and belongs there; pages have texts, unique insertion numbers, ids below the
        allocator and not free; clusters are not empty and hold their representative), and
        files digests of what it must find on, or holds for, the other partitions (a page's
        posting pairs and simhash entries on the key partitions, its cluster membership and key
        on doc partitions); the driver compares the digests of every pair of partitions and
        the counters (the same in every partition, equal to the pages and clusters held, the
        free ids their complement), and the partitions must agree on the last applied batch. A
        digest that differs is narrowed to the entries at fault, named with both partitions.
        Returns ``Index.check()``'s report (``pages``, ``clusters``, ``postings``,
        ``problem_count``, ``problems``, ``sampled``) with ``applied_batches`` added. Runs
        under the merge lock, shared (``InvalidArgumentError`` while a merge runs)."""
        with self._reading():
            return self._check()

    def _check(self) -> Dict[str, Any]:
        ray = require_ray()
        applied = self.applied_batches()
        frequent = b"".join(ray.get([a.check_frequent.remote() for a in self.keys]))
        parts = self.partitions()
        names = [f"key-{n:03}" for n in range(len(self.keys))] + [f"doc-{n:03}" for n in range(len(self.docs))]
        reports = ray.get([a.check_part.remote(self.layout, frequent) for a in parts])
        problems: List[str] = []
        for name, r in zip(names, reports):
            problems += [f"{name}: {p}" for p in r["problems"]]
        docs = reports[len(self.keys) :]
        pages = sum(r["pages"] for r in docs)
        clusters = sum(r["clusters"] for r in docs)
        # The counters and free ids every partition holds.
        if len({tuple(r["counters"]) for r in reports}) > 1 or len({(tuple(r["free"]), r["free_hash"]) for r in reports}) > 1:
            problems.append(
                "the partitions' counters or free ids differ: "
                + ", ".join(f"{n} {tuple(r['counters'])} free {tuple(r['free'])}" for n, r in zip(names, reports))
            )
        next_doc, next_cluster, _, live_docs, live_clusters = reports[0]["counters"]
        free_docs, free_clusters = reports[0]["free"]
        if live_docs != pages:
            problems.append(f"page counter says {live_docs}, the doc partitions hold {pages}")
        if live_clusters != clusters:
            problems.append(f"cluster counter says {live_clusters}, the doc partitions hold {clusters}")
        if next_doc - free_docs != pages:
            problems.append(f"free page ids: {free_docs} of the {next_doc} ids given out, for {pages} pages")
        if next_cluster - free_clusters != clusters:
            problems.append(f"free cluster ids: {free_clusters} of the {next_cluster} ids given out, for {clusters} clusters")
        problems += self._reconcile(names, reports, frequent)
        if len(set(applied)) > 1:
            problems.append(f"the partitions applied different batches: {applied}")
        return {
            "pages": pages,
            "clusters": clusters,
            "postings": sum(r["postings"] for r in reports[: len(self.keys)]),
            "problem_count": len(problems),
            "problems": problems,
            "sampled": 0,
            "applied_batches": applied,
        }

    def _reconcile(self, names: List[str], reports: List[Dict[str, Any]], frequent: bytes) -> List[str]:
        """The digests of every (doc partition, holding partition) pair compared; each pair
        that differs narrowed to its entries (``_Partition.check_entries``), named."""
        ray = require_ray()
        k = len(self.keys)
        filed: Dict[Tuple[int, int, int], List[Any]] = {}
        held: Dict[Tuple[int, int, int], List[Any]] = {}
        for i, r in enumerate(reports):
            for kind, peer, is_filed, buckets in r["digests"]:
                if is_filed:
                    filed[(kind, i - k, peer)] = buckets
                else:
                    held[(kind, peer, i - k if kind >= 2 else i)] = buckets
        problems: List[str] = []
        zero = [(0, 0)] * 64
        for kind, d, h in sorted(set(filed) | set(held)):
            mine, theirs = filed.get((kind, d, h), zero), held.get((kind, d, h), zero)
            if list(map(tuple, mine)) == list(map(tuple, theirs)):
                continue
            bad = [b for b, (x, y) in enumerate(zip(mine, theirs)) if tuple(x) != tuple(y)]
            holder = self.keys[h] if kind < 2 else self.docs[h]
            hname = names[h] if kind < 2 else names[k + h]
            dname = names[k + d]
            a, b = ray.get(
                [
                    self.docs[d].check_entries.remote(self.layout, frequent, kind, h, True, bad),
                    holder.check_entries.remote(self.layout, frequent, kind, d, False, bad),
                ]
            )
            missing, extra = sorted(set(a) - set(b)), sorted(set(b) - set(a))
            for e in missing[:_NAMED]:
                problems.append(f"{dname} → {hname}: {_entry(kind, e)} is filed by the page but not held")
            for e in extra[:_NAMED]:
                problems.append(f"{dname} → {hname}: {_entry(kind, e)} is held but not filed by a page")
            rest = len(missing) + len(extra) - min(len(missing), _NAMED) - min(len(extra), _NAMED)
            if rest:
                problems.append(f"{dname} → {hname}: {rest} more {_KINDS[kind]} entries differ")
        return problems

    def _check_gathered(self) -> Dict[str, Any]:
        """The reference check: every partition's state gathered into one scratch index on
        this machine, which ``Index.check()`` verifies whole. For tests (it agrees with
        ``check()``) and modest indexes."""
        ray = require_ray()
        applied = self.applied_batches()
        logs = ray.get([a.call.remote("state_log") for a in self.partitions()])
        with tempfile.TemporaryDirectory(dir=self.root) as tmp:
            with neardup.Index(Path(tmp) / "union", **self.options) as union:
                for n, log in enumerate(logs, 1):
                    union.apply_log(n, log)
                report = dict(union.check())
        report["applied_batches"] = applied
        if len(set(applied)) > 1:
            report["problem_count"] = report.get("problem_count", 0) + 1
            report.setdefault("problems", []).append(f"the partitions applied different batches: {applied}")
        return report

    def stats(self) -> Dict[str, Any]:
        """Live pages and clusters (the counters every partition holds), the layout, and
        ``id_bits``: 64 for partitions of format 7, 32 for a root made before them."""
        ray = require_ray()
        s = ray.get(self.docs[0].stats.remote())
        return {
            "pages": s["pages"],
            "clusters": s["clusters"],
            "key_parts": self.layout.key_parts,
            "doc_parts": self.layout.doc_parts,
            "id_bits": 64 if s.get("wide") else 32,
        }

    # ----- the merge -----

    def merge(
        self,
        files: Sequence[PathLike],
        delete_list: Optional[PathLike] = None,
        *,
        batch: Optional[int] = None,
        export: Optional[PathLike] = None,
        checkpoint: bool = False,
        work_units: Optional[int] = None,
        keep_batches: int = 0,
        keep_checkpoints: int = 1,
        progress: Union[bool, Callable[[str], Any]] = True,
        max_component: int = _plan.DEFAULT_MAX_COMPONENT,
        order: str = "input",
    ) -> MergeReport:
        """Merges a day into the index: the keys of ``delete_list`` deleted first, then the
        pages of ``files`` (JSONL, ``.gz`` too; Parquet, named ``.parquet`` or ``.pq``; WARC or
        ARC, gzip or plain, told by their content; a bad record is an error row with its file
        and line: a Parquet row's or an archive record's number) decided against the index and
        each other as one machine's ``Index.insert_many`` decides the day's pages in one batch
        (``batch_size`` at least the day's size), after ``delete`` of each key of the list.
        ``order``: ``"input"`` (the default, as ``insert_many``'s: the day's order, files then
        lines, so the first page read of a cluster leads it) or ``"fingerprints"`` (descending
        fingerprint count over the whole day: ``insert_many(order="fingerprints",
        order_scope="batch")``; the merge's only order before; on dev it scores F1 0.960
        against input order's 0.996, natural-dev recall 0.818 against 0.927). ``batch``
        defaults to the next batch; re-running an interrupted merge with the
        same inputs (and order) completes it (a batch all partitions applied is reported as such).
        ``export``: a TSV path for the index's export afterwards; ``checkpoint``: a checkpoint of
        every partition under ``checkpoints/batch=<n>/``. ``work_units``: at most how many scratch
        indexes decide the day's components in parallel (default: the cluster's CPUs); the
        clusters and ids are the single node's (with ``reuse_ids=False``) whatever it is.
        ``keep_batches``: how many of the last committed batches keep their whole directory
        under ``batches/`` (the logs and signatures, e.g. to replay onto a restored checkpoint);
        by default none: once every partition applied a batch, its logs are not needed to
        recover (a killed driver or actor needs only the logs of a batch not applied
        everywhere), so the batch keeps only its ``manifest.json`` and ``report.json`` (what a
        re-run of the same inputs reads) and the directories of earlier batches are removed.
        ``progress``: True prints each stage on standard error, a callable gets each stage's
        line.

        Input files: JSONL (one JSON object a line; ``.gz`` read as gzip), or Parquet (a name
        ending in ``.parquet`` or ``.pq``) with the columns ``id`` and/or ``url``, ``html``
        and/or ``text`` (strings; ``html`` also binary), optionally ``host`` (string) and
        ``time`` (integer); other columns are ignored, a column of nulls is a missing field, and
        an empty file (no bytes) holds no pages. The files are read and signed by Ray tasks,
        block by block (S1), and written to the batch's ``s1/``; S2–S4 are coordinated by a Ray
        actor on the driver's node that reads the day's keys and signatures from there, and the
        work units read their pages from there: the driver holds no page, its memory does not
        grow with the day's size. Each file must be readable where the tasks run: on the
        driver's node without a shared store, on every node with one.
        ``max_component``: the most pages, rows and deletes one component of the day's
        candidate graph may hold (S3; default 1,000,000). A component over it is cut by the
        edges of its sketch keys, those of the largest postings first: the key partitions join
        it again without those keys, and its pieces are joined back through them, the rarest
        keys first, while they fit the cap (SCALEOUT §7.1 option (2), a deviation from the
        single node: pages joined only through a cut edge are decided apart); the report's
        ``components`` says how many were cut (``capped``), how many sketch edges that cut
        (``cut_edges``) and how many parts are still over the cap (``over_cap``).

        With a shared store (``store=`` when the index was created), the batch's directory is
        ``batches/batch=<n>/`` of the store, its signatures and logs written there by the
        workers; the store is probed (a file written and deleted) before anything is merged;
        and after the commit every partition uploads its checkpoint of the batch to it
        (``checkpoint`` is implied), keeping its last ``keep_checkpoints`` (default 1: what a
        restore needs; more let a restore fall back to an older checkpoint when a file of the
        last one is damaged or missing). A batch's logs are retired only once every partition's
        oldest kept checkpoint in the store is at or after it. A merge whose batch every partition applied but not
        every partition checkpointed (a crash or a failing store after the commit) writes the
        missing checkpoints.

        A record of the day that cannot be merged never stops the merge: a line that is not
        UTF-8, not JSON or not a JSON object (as ``neardup ingest`` skips them), or a row without
        a usable key or body, or one the index refuses (as ``insert_many`` reports them). The
        other pages are merged; ``errors`` counts those records, and ``error_rows`` lists the
        first 100 in file order as ``{"file", "line", "reason"}`` (for Parquet, ``line`` is the
        row's number in its file, from 1).

        # Errors
        ``InvalidArgumentError`` for nothing to merge, a batch started with other inputs or one
        the partitions cannot take next, a delete list that is not UTF-8, or a Parquet file that
        is not one of pages (not Parquet, or a column above missing or of another type), all
        before anything of the batch is written; ``OSError`` for an
        input that cannot be opened; ``StoreError`` for a shared store that is missing or not
        writable (before anything is applied; after the commit, before the checkpoints)."""
        say = _sayer(progress)
        files = list(files)
        if not files and delete_list is None:
            raise InvalidArgumentError("nothing to merge: give files of pages and/or a delete list")
        if keep_batches < 0:
            raise InvalidArgumentError(f"keep_batches must be 0 or more, not {keep_batches}")
        if keep_checkpoints < 1:
            raise InvalidArgumentError(f"keep_checkpoints must be 1 or more, not {keep_checkpoints}")
        if isinstance(max_component, bool) or not isinstance(max_component, int) or max_component < 1:
            raise InvalidArgumentError(f"max_component must be an int of 1 or more, not {max_component!r}")
        if order not in ORDERS:
            raise InvalidArgumentError(f"order must be \"input\" or \"fingerprints\", not {order!r}")
        self._keep_checkpoints = keep_checkpoints
        self._order = order
        self._max_component = max_component
        with _files.MergeLock(self.root), self._holding_merge_lock():
            if self.store.shared:
                # Nothing is merged into an index whose store cannot take its logs and checkpoints.
                self.store.probe()
            ray = require_ray()
            lost = (ray.exceptions.ActorUnschedulableError, ray.exceptions.ActorDiedError)
            try:
                report = self._merge_locked(files, delete_list, batch, export, checkpoint, work_units, keep_batches, say)
            except lost:
                # A node lost during the merge: its partitions restored (or the typed error),
                # then the merge resumed from its markers, once.
                if not self._recover(say):
                    raise
                report = self._merge_locked(files, delete_list, batch, export, checkpoint, work_units, keep_batches, say)
            if self.store.shared:
                # The restores this driver made, in its first merge's report.
                report["restored"], self._unreported = self._unreported, []
            return report

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """A read across partitions in steps (an export, a check) under the merge lock, shared:
        no merge runs into the index meanwhile (refused at once while one runs). Within this
        driver's merge, or a restore holding the lock, nothing more is taken."""
        if self._merging or self._open_lock is not None:
            yield
            return
        with _files.MergeLock(self.root, shared=True):
            yield

    @contextlib.contextmanager
    def _holding_merge_lock(self) -> Iterator[None]:
        """Marks the merge lock as held by this driver's merge (a restore within it takes no
        other)."""
        self._merging = True
        try:
            yield
        finally:
            self._merging = False

    def _merge_locked(
        self,
        files: List[PathLike],
        delete_list: Optional[PathLike],
        batch: Optional[int],
        export: Optional[PathLike],
        checkpoint: bool,
        work_units: Optional[int],
        keep_batches: int,
        say: Callable[[str], Any],
    ) -> MergeReport:
        applied = self.applied_batches()
        done = [a or 0 for a in applied]
        low, high = min(done), max(done)
        if high - low > 1:
            raise InvalidArgumentError(f"the partitions applied batches too far apart: {applied}")
        # The inputs checked before anything is written (streamed: nothing kept): a delete
        # list that is not UTF-8, a Parquet file that is not one of pages.
        if delete_list is not None:
            for _ in _files.key_lines(delete_list):
                pass
        for f in files:
            problem = _files.parquet_problem(f) if _files.is_parquet(f) else None
            if problem is not None:
                raise InvalidArgumentError(f"{f}: {problem}")
        manifest = dict(_files.manifest(files, delete_list), order=self._order)
        st = self.store
        if batch is None:
            # The same inputs as the last batch every partition applied: that merge is done (a
            # crash after its commit, before its report, ends here on the re-run).
            last = f"batches/batch={low}/manifest.json"
            if low == high and low > 0 and st.exists(last) and _started_with(st.read_json(last)) == manifest:
                say(f"batch {low}: these inputs were merged already")
                return self._already_applied(low, keep_batches, export, say)
            batch = low + 1
        n = batch
        if n < 1:
            raise InvalidArgumentError(f"batch numbers start at 1, not {n}")
        brel = f"batches/batch={n}"
        mrel = f"{brel}/manifest.json"
        if st.exists(mrel) and _started_with(st.read_json(mrel)) != manifest:
            raise InvalidArgumentError(
                f"batch {n} was started with other inputs ({st.path(mrel)}): re-run it with those (or, "
                f"when no partition has applied it, remove {st.path(brel)} to abandon it)"
            )
        if low == n and high == n:
            say(f"batch {n}: applied already by every partition")
            return self._already_applied(n, keep_batches, export, say)
        if low != n - 1:
            raise InvalidArgumentError(f"batch {n} refused: the partitions applied {applied}, so the next batch is {low + 1}")
        if not st.exists(mrel):
            st.write(mrel, json.dumps(manifest, indent=1).encode())
        report = MergeReport(batch=n, seconds={}, resumed=[])
        logs_done = f"{brel}/logs/_DONE"
        if not st.exists(logs_done):
            if high == n:
                raise neardup.CorruptionError(f"partitions applied part of batch {n} but its logs are gone ({st.path(logs_done)})")
            # S1 in the workers: the driver gets each file's count of rows, and the first
            # records that could not be read.
            # The workers tell their progress on a board the driver reads while it waits.
            ray = require_ray()
            board = _progress.board()
            try:
                say(f"read: {len(files)} files, read and signed in the workers")
                t = time.monotonic()
                day = _sign.sign(files, st, brel, report, self._signature, self.layout, board, say)
                rows = sum(r for _, r in day["files"])
                report["seconds"]["S1"] = round(time.monotonic() - t, 3)
                say(f"S1 signatures: {rows} pages, {day['unreadable']} unreadable records in {report['seconds']['S1']} s")
                _faults.kill_point("after-S1")
                # S2-S4's coordination in an actor of its own: nothing of a page on the driver.
                t = time.monotonic()
                if work_units is None:
                    work_units = max(1, int(require_ray().cluster_resources().get("CPU", 1)))
                coord = _decide.coordinator(self, brel, day, delete_list, self._order)
                try:
                    counts = ray.get(coord.plan.remote(work_units, self._max_component))
                    report["seconds"]["S2-S3"] = round(time.monotonic() - t, 3)
                    say(
                        f"S2-S3 reach: {counts['reached_pages']} standing pages, {counts['reached_clusters']} "
                        f"clusters; components {counts['components']}; {counts['work_units']} work units; "
                        f"{counts['deletes']} keys to delete"
                    )
                    t = time.monotonic()
                    deciding = ray.get(coord.start.remote(board))
                    if _decide.kill_armed("S4"):
                        # Crash tests: the driver dies while the units decide, once the first is done.
                        ray.get(coord.first_done.remote())
                        _decide.kill_point("S4")
                    (counts,) = _progress.wait([coord.finish.remote()], board, "S4", "S4 deciding", deciding, "rows decided", say)
                finally:
                    ray.kill(coord)
            finally:
                ray.kill(board)
            # What S1-S4 found, beside the logs for a re-run's report; then the marker.
            st.write(f"{brel}/logs/counts.json", json.dumps(counts).encode())
            st.write(logs_done, b"")
            report["seconds"]["S4"] = round(time.monotonic() - t, 3)
            say(f"S4 decide: {counts['duplicates']} duplicates, {counts['errors']} errors in {report['seconds']['S4']} s")
        else:
            report["resumed"].extend(["S1", "S2", "S3", "S4"])
            say(f"batch {n}: logs written by an earlier run, committing them")
        counts = st.read_json(f"{brel}/logs/counts.json")
        report.update(counts)
        _faults.kill_point("after-S4")
        t = time.monotonic()
        _commit.commit(self, n, brel, report)
        report["seconds"]["S5"] = round(time.monotonic() - t, 3)
        say(f"S5 commit: {len(self.partitions())} partitions in {report['seconds']['S5']} s")
        _faults.kill_point("after-S5")
        t = time.monotonic()
        stats = self.stats()
        report.update(live_pages=stats["pages"], live_clusters=stats["clusters"])
        if export is not None:
            self.export_tsv(export)
        if st.shared:
            report["checkpoints"] = _durable.store_checkpoints(self, n, self._keep_checkpoints)
        elif checkpoint:
            _commit.checkpoint(self, n)
        report["seconds"]["S6"] = round(time.monotonic() - t, 3)
        st.write(f"{brel}/report.json", json.dumps(report, indent=1, sort_keys=True).encode())
        say(f"S6 report: {report['live_pages']} live pages in {report['live_clusters']} clusters")
        self._retire_batches(n, keep_batches, say)
        return report

    def _recover(self, say: Callable[[str], Any]) -> bool:
        """After a partition actor failed during a merge: when partitions' nodes are not alive,
        restores them from the shared store (their actors started on their new nodes, the logs
        since their checkpoints replayed) and returns True; without a store (or with
        ``restore=False``) raises ``PartitionNodeMissingError``. False when every node is
        alive (the failure was something else)."""
        ray = require_ray()
        assignment = _place.load(self.root, self.layout)
        alive = _place.alive_nodes()
        missing = {
            name: e["node"] for name, e in assignment["partitions"].items() if e["node"] is not None and e["node"] not in alive
        }
        if not missing:
            return False
        if not (self.store.shared and self._restore):
            raise PartitionNodeMissingError(self.root, missing, sorted(alive))
        say(f"nodes lost during the merge: restoring {', '.join(_place.layout_order(missing))} from the store")
        names = _place.partition_names(self.layout)
        actors = self.partitions()
        for name, a in zip(names, actors):
            if name in missing:
                ray.kill(a, no_restart=True)
        before = len(self.restored)
        node_ids = self._resolve(assignment, True)
        only = [(name[:3], int(name[4:])) for name in names if name in missing]
        started = dict(zip(_place.layout_order(missing), start_partitions(self.root, self.layout, self.options, node_ids, assignment, only=only)))
        actors = [started.get(name, a) for name, a in zip(names, actors)]
        self.keys, self.docs = actors[: self.layout.key_parts], actors[self.layout.key_parts :]
        new = self.restored[before:]
        _durable.catch_up(self, new)
        self._unreported += new
        return True

    def _already_applied(self, n: int, keep: int, export: Optional[PathLike], say: Callable[[str], Any]) -> MergeReport:
        """A batch every partition applied: the export written when asked (a merge resumed
        after a node lost past its commit ends here too); with a shared store, the checkpoints
        of it that are missing (a crash, or a failing store, after the commit) are written; then
        the batches are retired."""
        report = MergeReport(batch=n, already_applied=True)
        if export is not None:
            self.export_tsv(export)
        if self.store.shared:
            names = _place.partition_names(self.layout)
            behind = [x for x in names if (_durable.last_checkpoint(self.store, x) or 0) < n]
            if behind:
                say(f"batch {n}: checkpointing {', '.join(behind)}, which did not checkpoint it")
                report["checkpoints"] = _durable.store_checkpoints(self, n, self._keep_checkpoints, only=behind)
        self._retire_batches(n, keep, say)
        return report

    def _retire_batches(self, n: int, keep: int, say: Callable[[str], Any]) -> None:
        """Once every partition applied batch ``n``, no recovery reads the logs of batch ``n``
        or earlier (a partition refuses ``n + 1`` until it applied ``n``, and a restarted actor
        recovers what it applied from its own database): the last ``keep`` batches stay whole,
        batch ``n`` keeps at least its manifest and report (a re-run of its inputs is known),
        and earlier batch directories are removed. With a shared store, a restore replays the
        logs since a partition's last checkpoint: only the batches at or before every
        partition's oldest kept checkpoint are retired (with ``keep_checkpoints`` > 1 a
        restore can fall back to an older checkpoint and replay the logs since)."""
        if self.applied_batches() != [n] * len(self.partitions()):
            return
        st = self.store
        limit = n
        if st.shared:
            names = _place.partition_names(self.layout)
            limit = min([n] + [(_durable.checkpoint_batches(st, x) or [0])[0] for x in names])
        freed = 0
        for name in st.list("batches"):
            m = _batch_number(name)
            if m is None or m > limit or m > n - keep:
                continue
            if m == n:
                # keep == 0: what a re-run of the same inputs reads stays.
                for part in st.list(f"batches/{name}"):
                    if part not in ("manifest.json", "report.json"):
                        freed += st.delete(f"batches/{name}/{part}")
            else:
                freed += st.delete(f"batches/{name}")
        if freed:
            if st.local:
                _files.fsync_dir(Path(st.path("batches")))
            say(f"retired: {freed / 1e6:.1f} MB of batch logs and signatures up to batch {limit}")


#: Differing entries named per pair of partitions and kind by the distributed check.
_NAMED = 20
#: The digests' kinds (``neardup::merge::KIND_NAMES``).
_KINDS = ("posting", "simhash", "member", "key")


def _entry(kind: int, e: bytes) -> str:
    """An entry of the distributed check's digests, in words (ids are 8 bytes, big-endian)."""
    tail = int.from_bytes(e[-8:], "big")
    if kind == 0:
        return f"page {tail} under posting {e[:9].hex()}"
    if kind == 1:
        return f"page {tail} in simhash table {e[0]}"
    if kind == 2:
        return f"page {int.from_bytes(e[:8], 'big')} as a member of cluster {tail}"
    return f"key {e[:-8].decode('utf-8', 'replace')!r} of page {tail}"


def _check_options(options: Dict[str, Any]) -> Dict[str, Any]:
    """Refuses options a distributed index cannot keep, before anything is merged: a text source
    (no texts stored), site chrome and document-frequency methods (counts over whole hosts or
    the whole index, which a part cannot reproduce: ``Index.seed_log`` says which). Returns the
    signature options an index opened with them uses, shorthands (``method=…``) resolved: what
    S1 must sign with."""
    if options.get("store_texts") is False:
        raise InvalidArgumentError("a distributed index stores its texts: store_texts=False is not supported")
    with tempfile.TemporaryDirectory(prefix="neardup-options-") as tmp:
        with neardup.Index(Path(tmp) / "ix", **options) as probe:
            probe.seed_log([], [])
            return dict(probe.options["signature"])


def _batch_number(name: str) -> Optional[int]:
    """The number of a ``batch=<n>`` directory (``None`` for another name)."""
    if name.startswith("batch=") and name[6:].isdigit():
        return int(name[6:])
    return None


#: The orders a merge decides a day in (``merge``'s ``order``).
ORDERS = ("input", "fingerprints")


def _started_with(manifest: Dict[str, Any]) -> Dict[str, Any]:
    """A batch's stored manifest, as ``merge`` compares it: one written before merges had an
    order names no order and was decided in fingerprint order."""
    return dict(manifest, order=manifest.get("order", "fingerprints"))


def _sayer(progress: Union[bool, Callable[[str], Any]]) -> Callable[[str], Any]:
    if callable(progress):
        return progress
    if progress:
        # Standard error: standard output is the caller's (the command line's JSON report).
        return lambda line: print(line, file=sys.stderr, flush=True)
    return lambda line: None
