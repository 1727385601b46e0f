"""The daily merge of a distributed neardup index on Ray (SCALEOUT §5, §9).

A distributed index lives under one root directory: K key partitions and J doc partitions
(``neardup.Layout``), each a neardup database owned by a named Ray actor that reopens it when
restarted, and one directory per merged batch (``batches/batch=<n>/``) with its stage outputs.
A day is merged by ``DistributedIndex.merge(files, delete_list)``:

- **S1 signatures**: Ray Data ``map_batches`` over the day's pages (``neardup.signatures_table``):
  each page's posting keys and simhash.
- **S2 reach**: the posting keys go to their key partitions, the simhashes to the partitions of
  their blocks; the deleted and re-crawled keys go to their doc partitions, which give their pages,
  clusters and members, whose own keys reach further (what ``Index.decision_reach`` reads on one
  machine).
- **S3 components**: union-find over the day's pages, the standing pages they reach (by key, by
  simhash, by re-crawled or deleted key) and the clusters of those pages, whole; components are
  packed into work units, in the order of their first page, each to the least loaded unit.
- **S4 decide**: each work unit in its own scratch index, a Ray task: seeded with what its
  components read (``seed_log`` of the partitions, ``neardup.combine_seed_logs``), deciding
  nothing; its deletes and its pages run with the single-node code in whole-batch order; the
  difference of its state logs is its log. ``neardup.combine_unit_logs`` numbers each unit's new
  pages, clusters and insertion sequence after the units before it; the batch log is cut by
  partition (``Layout.route``) and written to disk with a completion marker.
- **S5 commit**: each partition applies its log once in effect (``Index.apply_log``, the batch
  recorded in the last write).
- **S6 report and checkpoint**: counts and timings in ``report.json``, optionally an export, and a
  checkpoint of every partition.

A merge is re-run with the same inputs after any failure: a batch whose logs were written goes
straight to S5, and partitions that applied it already skip it.

A distributed index never gives an id out again (``reuse_ids=False``, SCALEOUT §4): a new id is
above every id held, so a unit that numbers its new pages, clusters and insertion sequence from
the batch's start breaks every tie within its components as one machine would. Each unit reports
which event gave out each new id (``Index.take_allocations``: a delete, or the insert of a page),
and the driver numbers the batch's new ids in the order one machine gives them out (the deletes
in delete-list order, then the pages in processing order: each ``insert_many`` call's pages by
descending fingerprint count, then input order; ``neardup.combine_unit_logs`` with maps). So the
clusters and ids are those of one machine with ``reuse_ids=False``, whatever the number of work
units, and later days break their ties as it would.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

import neardup
from neardup import InvalidArgumentError, Layout
from neardup._rows import Chunk, chunks, insert_groups

__all__ = ["DistributedIndex", "MergeReport", "read_pages", "read_key_list"]

#: The layout file at the root of a distributed index.
LAYOUT_FILE = "layout.json"

PathLike = Union[str, "os.PathLike[str]"]


def _ray() -> Any:
    try:
        import ray
    except ImportError as e:  # pragma: no cover - exercised without ray only
        raise ImportError("neardup.ray needs Ray: pip install 'neardup[ray]'") from e
    return ray


def read_pages(files: Sequence[PathLike]) -> List[Dict[str, Any]]:
    """The pages of JSONL files (``.gz`` read as gzip), one dict per line with the CLI's fields:
    ``id`` (or ``url``), ``host``, ``time``, ``html`` or ``text``. Blank lines are skipped; a line
    that is not a JSON object raises ``InvalidArgumentError`` naming the file and line."""
    pages: List[Dict[str, Any]] = []
    for f in files:
        path = Path(f)
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise InvalidArgumentError(f"{path}:{n}: not JSON: {e}") from None
                if not isinstance(row, dict):
                    raise InvalidArgumentError(f"{path}:{n}: not a JSON object")
                # A row without a usable key or body is kept: the merge reports it as an
                # error row, as insert_many does.
                pages.append(row)
    return pages


def read_key_list(path: Optional[PathLike]) -> List[str]:
    """The keys of a delete list as ``neardup ingest --delete-list`` reads it: one a line,
    blank lines and lines starting with ``#`` skipped."""
    if path is None:
        return []
    p = Path(path)
    opener = gzip.open if p.suffix == ".gz" else open
    with opener(p, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        return [k for k in (line.strip() for line in fh) if k and not k.startswith("#")]


class _Partition:
    """The body of a partition actor: one neardup database in a key or doc role."""

    def __init__(self, path: str, role: str, part: int, layout: Tuple[int, int, int], options: Dict[str, Any]) -> None:
        self.ix = neardup.Index(path, **options)
        self.ix.set_partition(Layout(*layout), role, part)

    def call(self, name: str, *args: Any) -> Any:
        """Calls ``Index.<name>(*args)``."""
        return getattr(self.ix, name)(*args)

    def apply(self, batch: int, log: bytes) -> bool:
        """Applies a batch log once in effect."""
        return bool(self.ix.apply_log(batch, log))

    def stats(self) -> Dict[str, Any]:
        return dict(self.ix.stats())

    def pid(self) -> int:
        return os.getpid()

    def close(self) -> None:
        self.ix.close()


class MergeReport(dict):
    """What a merge did (a dict, also written to ``report.json`` in the batch's directory):
    ``batch``, ``pages``, ``deleted``, ``missing`` (delete-list keys the index did not hold),
    ``duplicates``, ``errors``, ``reached_pages`` and ``reached_clusters`` (the standing part the
    day read), ``components`` (sizes: largest, count, singletons), ``shuffled_bytes`` (keys,
    seeds and logs sent between driver and partitions), ``log_bytes`` (per partition),
    ``seconds`` (per stage), ``resumed`` (the stages a re-run skipped)."""


def _unique_keys(packed: bytes) -> bytes:
    """The distinct 9-byte keys of a concatenation, concatenated (sorted)."""
    import numpy as np

    if not packed:
        return b""
    arr = np.frombuffer(packed, dtype=np.dtype((np.void, 9)))
    return np.unique(arr).tobytes()


def _group(items: Iterable[Tuple[int, Any]], parts: int) -> List[List[Any]]:
    out: List[List[Any]] = [[] for _ in range(parts)]
    for p, item in items:
        out[p].append(item)
    return out


class _UnionFind:
    """Union-find over page ids and probe positions (S3)."""

    def __init__(self) -> None:
        self.parent: Dict[Any, Any] = {}

    def find(self, x: Any) -> Any:
        parent = self.parent
        parent.setdefault(x, x)
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def union(self, a: Any, b: Any) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[ra] = rb


class DistributedIndex:
    """A distributed neardup index under ``root``: ``key_parts`` key and ``doc_parts`` doc
    partitions (read from ``root/layout.json`` once created; giving other counts then raises),
    each a named Ray actor pinned to this node that reopens its database when restarted.
    ``options`` are ``neardup.Index`` options, the same for every partition and the scratch
    index (recorded in the layout file; site chrome and document-frequency methods cannot be
    merged in parts).

    Ray is started on this machine when it is not running (``ray.init(address=address,
    num_cpus=num_cpus)``); give ``address`` to join a cluster. Actors are created with
    ``max_restarts=-1`` and ``max_task_retries=-1``."""

    def __init__(
        self,
        root: PathLike,
        key_parts: Optional[int] = None,
        doc_parts: Optional[int] = None,
        *,
        address: Optional[str] = None,
        num_cpus: Optional[int] = None,
        **options: Any,
    ) -> None:
        self.root = Path(root).absolute()
        self.root.mkdir(parents=True, exist_ok=True)
        layout_path = self.root / LAYOUT_FILE
        if layout_path.exists():
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
        else:
            stored = {
                "key_parts": key_parts or 4,
                "doc_parts": doc_parts or 4,
                "options": options,
            }
            _check_options(options)
            tmp = layout_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(stored, indent=1, sort_keys=True))
            os.replace(tmp, layout_path)
        self.options: Dict[str, Any] = dict(stored["options"])
        self._signature = _check_options(self.options)
        distance = int(self.options.get("simhash_max_distance", 3))
        self.layout = Layout(int(stored["key_parts"]), int(stored["doc_parts"]), distance)
        ray = _ray()
        if not ray.is_initialized():
            ray.init(
                address=address,
                num_cpus=num_cpus,
                include_dashboard=False,
                logging_level="WARNING",
                log_to_driver=False,
            )
        self._start_actors()

    # ----- partitions -----

    def _actor_name(self, role: str, part: int) -> str:
        digest = hashlib.sha256(str(self.root).encode()).hexdigest()[:12]
        return f"neardup-{digest}-{role}-{part}"

    def _start_actors(self) -> None:
        ray = _ray()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        node = ray.get_runtime_context().get_node_id()
        cls = ray.remote(_Partition)
        layout = (self.layout.key_parts, self.layout.doc_parts, self.layout.simhash_max_distance)
        roles = [("key", n) for n in range(self.layout.key_parts)] + [
            ("doc", n) for n in range(self.layout.doc_parts)
        ]

        def actor(role: str, n: int) -> Any:
            return cls.options(
                name=self._actor_name(role, n),
                namespace="neardup",
                get_if_exists=True,
                max_restarts=-1,
                max_task_retries=-1,
                num_cpus=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
            ).remote(str(self.root / f"{role}-{n:03}"), role, n, layout, self.options)

        actors = [actor(r, n) for r, n in roles]
        # A driver that died a moment ago leaves its actors named until Ray has ended them: the
        # handles found then are dead, and are asked for again until fresh ones start.
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
                raise neardup.StorageError(f"partition actors {dead} of {self.root} do not start")
            time.sleep(0.5)
            for i in dead:
                actors[i] = actor(*roles[i])
        self.keys = actors[: self.layout.key_parts]
        self.docs = actors[self.layout.key_parts :]

    def partitions(self) -> List[Any]:
        """Every partition actor: the key partitions, then the doc partitions."""
        return self.keys + self.docs

    def applied_batches(self) -> List[Optional[int]]:
        """The last batch each partition applied (``None``: none), key partitions first."""
        ray = _ray()
        return ray.get([a.call.remote("applied_batch") for a in self.partitions()])

    def close(self) -> None:
        """Closes every partition's database and ends its actor."""
        ray = _ray()
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

    def _pages_and_clusters(self) -> Tuple[Dict[str, List[Any]], Dict[int, int]]:
        ray = _ray()
        rows = ray.get([a.call.remote("partition_rows") for a in self.docs])
        pages: Dict[str, List[Any]] = {k: [] for k in ("doc", "key", "cluster", "seq", "similar_to", "similar_seq")}
        reps: Dict[int, int] = {}
        for p, c in rows:
            for k in pages:
                pages[k].extend(p[k])
            reps.update(zip(c["cluster"], c["representative"]))
        order = sorted(range(len(pages["doc"])), key=pages["doc"].__getitem__)
        return {k: [v[i] for i in order] for k, v in pages.items()}, reps

    def pages(self) -> Any:
        """Every page the doc partitions hold, in id order: ``pyarrow.Table(doc: uint32, key:
        string, cluster: uint32, seq: uint64)``."""
        import pyarrow as pa

        pages, _ = self._pages_and_clusters()
        return pa.table(
            {
                "doc": pa.array(pages["doc"], pa.uint32()),
                "key": pa.array(pages["key"], pa.string()),
                "cluster": pa.array(pages["cluster"], pa.uint32()),
                "seq": pa.array(pages["seq"], pa.uint64()),
            }
        )

    def export(self) -> Any:
        """Every page's key and the key of the page it was judged a near duplicate of (while
        held; else its cluster's representative), in page-id order: the
        ``pyarrow.Table(key, representative)`` that ``Index.export()`` gives on one machine."""
        import pyarrow as pa

        pages, reps = self._pages_and_clusters()
        key_of = dict(zip(pages["doc"], pages["key"]))
        seq_of = dict(zip(pages["doc"], pages["seq"]))
        out = []
        for key, cluster, sim, sim_seq in zip(pages["key"], pages["cluster"], pages["similar_to"], pages["similar_seq"]):
            if sim is not None and seq_of.get(sim) == sim_seq:
                out.append(key_of[sim])
            else:
                out.append(key_of[reps[cluster]])
        return pa.table({"key": pa.array(pages["key"], pa.string()), "representative": pa.array(out, pa.string())})

    def export_clusters(self) -> Any:
        """Every cluster in id order, members in id order: the ``pyarrow.Table(cluster,
        representative, members)`` of ``Index.export_clusters()``."""
        import pyarrow as pa

        pages, reps = self._pages_and_clusters()
        key_of = dict(zip(pages["doc"], pages["key"]))
        members: Dict[int, List[str]] = {}
        for key, cluster in zip(pages["key"], pages["cluster"]):
            members.setdefault(cluster, []).append(key)
        ids = sorted(reps)
        return pa.table(
            {
                "cluster": pa.array(ids, pa.uint32()),
                "representative": pa.array([key_of[reps[c]] for c in ids], pa.string()),
                "members": pa.array([members.get(c, []) for c in ids], pa.list_(pa.string())),
            }
        )

    def check(self) -> Dict[str, Any]:
        """The distributed check (SCALEOUT §9): every partition's state gathered into one
        scratch index, which ``Index.check()`` verifies whole (postings against records, one
        cluster per live page, counters and free ids); the partitions must agree on the last
        applied batch. Returns the check's report with ``applied_batches`` added. Gathers the
        whole index to this machine: for tests and modest indexes."""
        ray = _ray()
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
        """Live pages and clusters (the counters every partition holds)."""
        ray = _ray()
        s = ray.get(self.docs[0].stats.remote())
        return {"pages": s["pages"], "clusters": s["clusters"], "key_parts": self.layout.key_parts, "doc_parts": self.layout.doc_parts}

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
        progress: Union[bool, Callable[[str], Any]] = True,
    ) -> MergeReport:
        """Merges a day into the index: the keys of ``delete_list`` deleted first, then the
        pages of ``files`` (JSONL, ``.gz`` too) decided against the index and each other in
        whole-batch order, as ``neardup ingest --delete-list … --order-scope batch`` does on one
        machine with ``--batch`` at least the day's size. ``batch`` defaults to the next batch; re-running an interrupted merge with the
        same inputs completes it (a batch all partitions applied is reported as such).
        ``export``: a TSV path for the index's export afterwards; ``checkpoint``: a checkpoint of
        every partition under ``checkpoints/batch=<n>/``. ``work_units``: at most how many scratch
        indexes decide the day's components in parallel (default: the cluster's CPUs); the
        clusters and ids are the single node's (with ``reuse_ids=False``) whatever it is.
        ``progress``: True prints each stage, a callable gets each stage's line."""
        say = _sayer(progress)
        files = list(files)
        if not files and delete_list is None:
            raise InvalidArgumentError("nothing to merge: give JSONL files and/or a delete list")
        with _MergeLock(self.root):
            return self._merge_locked(files, delete_list, batch, export, checkpoint, work_units, say)

    def _merge_locked(
        self,
        files: List[PathLike],
        delete_list: Optional[PathLike],
        batch: Optional[int],
        export: Optional[PathLike],
        checkpoint: bool,
        work_units: Optional[int],
        say: Callable[[str], Any],
    ) -> MergeReport:
        applied = self.applied_batches()
        done = [a or 0 for a in applied]
        low, high = min(done), max(done)
        if high - low > 1:
            raise InvalidArgumentError(f"the partitions applied batches too far apart: {applied}")
        manifest = _manifest(files, delete_list)
        batches = self.root / "batches"
        if batch is None:
            # The same inputs as the last batch every partition applied: that merge is done (a
            # crash after its commit, before its report, ends here on the re-run).
            last = batches / f"batch={low}" / "manifest.json"
            if low == high and low > 0 and last.exists() and json.loads(last.read_text()) == manifest:
                say(f"batch {low}: these inputs were merged already")
                return MergeReport(batch=low, already_applied=True)
            batch = low + 1
        n = batch
        if n < 1:
            raise InvalidArgumentError(f"batch numbers start at 1, not {n}")
        bdir = batches / f"batch={n}"
        mpath = bdir / "manifest.json"
        if mpath.exists() and json.loads(mpath.read_text()) != manifest:
            raise InvalidArgumentError(
                f"batch {n} was started with other inputs ({mpath}): re-run it with those (or, "
                f"when no partition has applied it, remove {bdir} to abandon it)"
            )
        if low == n and high == n:
            say(f"batch {n}: applied already by every partition")
            return MergeReport(batch=n, already_applied=True)
        if low != n - 1:
            raise InvalidArgumentError(f"batch {n} refused: the partitions applied {applied}, so the next batch is {low + 1}")
        _make_dirs(bdir)
        if not mpath.exists():
            _write_atomic(mpath, json.dumps(manifest, indent=1).encode())
        report = MergeReport(batch=n, seconds={}, resumed=[])
        logs_done = bdir / "logs" / "_DONE"
        if not logs_done.exists():
            if high == n:
                raise neardup.CorruptionError(f"partitions applied part of batch {n} but its logs are gone ({logs_done})")
            pages = read_pages(files)
            gone = read_key_list(delete_list)
            # The rows as insert_many reads them (keys, bodies, bad rows), read once.
            chunk = next(chunks(pages, max(1, len(pages))), None) or Chunk()
            t = time.monotonic()
            sigs = self._signatures(pages, bdir, report)
            report["seconds"]["S1"] = round(time.monotonic() - t, 3)
            say(f"S1 signatures: {len(pages)} pages in {report['seconds']['S1']} s")
            _kill_point("after-S1")
            t = time.monotonic()
            if work_units is None:
                work_units = max(1, int(_ray().cluster_resources().get("CPU", 1)))
            units, sizes, shuffled = self._plan(chunk, sigs, gone, work_units)
            report["seconds"]["S2-S3"] = round(time.monotonic() - t, 3)
            counts = {
                "pages": len(pages),
                "deletes": len(gone),
                "reached_pages": sum(len(u.pages) for u in units),
                "reached_clusters": sum(len(u.clusters) for u in units),
                "components": sizes,
                "shuffled_bytes": shuffled,
            }
            say(
                f"S2-S3 reach: {counts['reached_pages']} standing pages, {counts['reached_clusters']} "
                f"clusters; components {sizes}; {len(units)} work units"
            )
            t = time.monotonic()
            counts.update(self._decide(n, pages, chunk, sigs, gone, units, bdir, counts["shuffled_bytes"]))
            # What S1-S4 found, beside the logs for a re-run's report; then the marker.
            _write_atomic(bdir / "logs" / "counts.json", json.dumps(counts).encode())
            _write_atomic(bdir / "logs" / "_DONE", b"")
            report["seconds"]["S4"] = round(time.monotonic() - t, 3)
            say(f"S4 decide: {counts['duplicates']} duplicates, {counts['errors']} errors in {report['seconds']['S4']} s")
        else:
            report["resumed"].extend(["S1", "S2", "S3", "S4"])
            say(f"batch {n}: logs written by an earlier run, committing them")
        counts = json.loads((bdir / "logs" / "counts.json").read_text())
        report.update(counts)
        _kill_point("after-S4")
        t = time.monotonic()
        self._commit(n, bdir, report)
        report["seconds"]["S5"] = round(time.monotonic() - t, 3)
        say(f"S5 commit: {len(self.partitions())} partitions in {report['seconds']['S5']} s")
        _kill_point("after-S5")
        t = time.monotonic()
        stats = self.stats()
        report.update(live_pages=stats["pages"], live_clusters=stats["clusters"])
        if export is not None:
            _write_tsv(self.export(), Path(export))
        if checkpoint:
            self._checkpoint(n)
        report["seconds"]["S6"] = round(time.monotonic() - t, 3)
        _write_atomic(bdir / "report.json", json.dumps(report, indent=1, sort_keys=True).encode())
        say(f"S6 report: {report['live_pages']} live pages in {report['live_clusters']} clusters")
        return report

    def _signatures(self, pages: List[Dict[str, Any]], bdir: Path, report: MergeReport) -> Any:
        """S1: posting keys and simhash of every page, through Ray Data (cached in
        ``s1.parquet``)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        out = bdir / "s1.parquet"
        if out.exists():
            cached = pq.read_table(out)
            # A part written by an earlier version may lack a column: signed again then.
            if {"row", "posting_keys", "simhash", "fingerprints"} <= set(cached.schema.names):
                report["resumed"].append("S1")
                return cached
        ray = _ray()
        # The signature options the partitions and scratch indexes use, shorthands resolved.
        config = self._signature
        parts = []
        for col in ("html", "text"):
            # Rows with a body of the right type only: the others are error rows in S4, as in
            # insert_many (html as str or bytes, text as str).
            if col == "html":
                rows = [i for i, p in enumerate(pages) if isinstance(p.get("html"), (str, bytes))]
            else:
                rows = [i for i, p in enumerate(pages) if p.get("html") is None and isinstance(p.get("text"), str)]
            if not rows:
                continue
            body = [pages[i][col] for i in rows]
            body = [b.encode() if isinstance(b, str) else b for b in body] if col == "html" else body
            kind = pa.binary() if col == "html" else pa.string()
            table = pa.table({"row": pa.array(rows, pa.int64()), col: pa.array(body, kind)})
            ctx = ray.data.DataContext.get_current()
            ctx.enable_progress_bars = False
            ctx.print_on_execution_start = False
            logging.getLogger("ray.data").setLevel(logging.WARNING)
            # Blocks of about a thousand pages, cut here: no shuffle to repartition them.
            size = max(256, -(-len(rows) // 64))
            blocks = [table.slice(i, size) for i in range(0, len(rows), size)]
            ds = ray.data.from_arrow(blocks).map_batches(
                _signature_batch,
                batch_format="pyarrow",
                fn_kwargs={"col": col, "config": config},
            )
            parts.extend(ray.get(ds.to_arrow_refs()))
        schema = pa.schema(
            [("row", pa.int64()), ("posting_keys", pa.binary()), ("simhash", pa.uint64()), ("fingerprints", pa.int64())]
        )
        table = pa.concat_tables([p.select(schema.names).cast(schema) for p in parts]) if parts else schema.empty_table()
        table = table.sort_by("row")
        tmp = out.with_suffix(".tmp")
        pq.write_table(table, tmp)
        os.replace(tmp, out)
        return table

    def _ask(self, actors: List[Any], method: str, groups: List[List[Any]], pack: Callable[[List[Any]], Any] = list) -> List[Any]:
        """Calls ``method`` on every actor with a non-empty group; the answers in actor order
        (``None`` for an actor not asked)."""
        ray = _ray()
        refs = [a.call.remote(method, pack(g)) if g else None for a, g in zip(actors, groups)]
        return [ray.get(r) if r is not None else None for r in refs]

    def _key_postings(self, packed: bytes) -> Tuple[bytes, List[List[int]]]:
        """The distinct 9-byte keys of a concatenation and, for each, the standing pages filed
        under it (none for an over-frequent key), from the key partitions."""
        lay = self.layout
        keys = _unique_keys(packed)
        parts = lay.posting_parts(keys)
        groups: List[List[int]] = [[] for _ in range(lay.key_parts)]
        for i, p in enumerate(parts):
            groups[p].append(i)
        answers = self._ask(self.keys, "posting_ids", [[keys[9 * i : 9 * i + 9] for i in g] for g in groups], b"".join)
        ids: List[List[int]] = [[] for _ in range(len(keys) // 9)]
        for g, answer in zip(groups, answers):
            if answer is not None:
                for i, found in zip(g, answer):
                    ids[i] = found
        return keys, ids

    def _simhash_neighbours(self, simhashes: Sequence[int]) -> Tuple[Dict[int, Set[int]], int]:
        """Of each simhash, the standing pages within the simhash distance of it; and the
        bytes sent."""
        lay = self.layout
        sh = sorted(set(simhashes))
        groups: List[List[int]] = [[] for _ in range(lay.key_parts)]
        for h, ps in zip(sh, lay.simhash_parts(sh)):
            for p in ps:
                groups[p].append(h)
        out: Dict[int, Set[int]] = {h: set() for h in sh}
        for g, answer in zip(groups, self._ask(self.keys, "simhash_ids", groups)):
            if answer is not None:
                for h, found in zip(g, answer):
                    out[h].update(found)
        return out, 8 * sum(len(g) for g in groups)

    def _by_doc(self, method: str, ids: Iterable[int], part: Callable[[int], int]) -> Dict[int, Any]:
        ids = sorted(set(ids))
        groups = _group(((part(i), i) for i in ids), self.layout.doc_parts)
        out: Dict[int, Any] = {}
        for g, answer in zip(groups, self._ask(self.docs, method, groups)):
            if answer is not None:
                out.update(zip(g, answer))
        return out

    def _plan(self, chunk: Any, sigs: Any, gone: List[str], work_units: int) -> Tuple[List["_Unit"], Dict[str, Any], int]:
        """S2–S3: the day's candidate graph, from the partitions, cut into components (each
        with what ``Index.decision_reach`` reads for it on one machine) and packed into at most
        ``work_units`` work units. ``chunk`` is the day's rows as ``insert_many`` reads them (their
        keys). Returns the units, the component sizes and the bytes sent."""
        lay = self.layout
        uf = _UnionFind()
        rows = sigs.column("row").to_pylist()
        keys_col = sigs.column("posting_keys").to_pylist()
        sims = sigs.column("simhash").to_pylist()
        # Each probe joins the keys it is filed under and the standing pages on them
        # (over-frequent standing keys have none: no decision reads them).
        keys, on_key = self._key_postings(b"".join(k for k in keys_col if k))
        index = {keys[9 * i : 9 * i + 9]: i for i in range(len(on_key))}
        shuffled = len(keys)
        for r, k in zip(rows, keys_col):
            for j in range(0, len(k or b""), 9):
                uf.union(("p", r), ("k", index[k[j : j + 9]]))
        for i, found in enumerate(on_key):
            for d in found:
                uf.union(("k", i), d)
        # Simhash neighbours, standing and of the day.
        near, sent = self._simhash_neighbours([h for h in sims if h is not None])
        shuffled += sent
        for r, h in zip(rows, sims):
            if h is not None:
                for d in near[h]:
                    uf.union(("p", r), d)
        _join_close_simhashes(uf, [(r, h) for r, h in zip(rows, sims) if h is not None], lay.simhash_max_distance)
        # A key given twice in the day goes to one unit.
        first: Dict[str, int] = {}
        for r, k in enumerate(chunk.keys):
            if k is not None:
                uf.union(("p", r), ("p", first.setdefault(k, r)))
        # Re-crawled and deleted keys: their standing pages.
        rows_n = len(chunk.keys)
        touched = [k or "" for k in chunk.keys] + list(gone)
        kgroups = _group(((p, i) for i, p in enumerate(lay.key_parts_of(touched)) if touched[i]), lay.doc_parts)
        shuffled += sum(len(k.encode()) for k in touched)
        old: Set[int] = set()
        for g, answer in zip(kgroups, self._ask(self.docs, "key_ids", [[touched[i] for i in g] for g in kgroups])):
            for i, d in zip(g, answer or []):
                if d is not None:
                    old.add(d)
                    uf.union(("p", i) if i < rows_n else ("g", i - rows_n), d)
        # Their clusters hand over: the members are placed again, and reach as far as their own
        # keys and simhashes.
        touched_clusters = {c for c in self._by_doc("page_clusters", old, lay.doc_part).values() if c is not None}
        members: Set[int] = set()
        for c, m in self._by_doc("cluster_member_ids", touched_clusters, lay.cluster_part).items():
            for d in m or []:
                members.add(d)
                uf.union(("c", c), d)
        filed = {d: f for d, f in self._by_doc("filed_pages", members, lay.doc_part).items() if f}
        mkeys, m_on_key = self._key_postings(b"".join(f[1] for f in filed.values()))
        mindex = {mkeys[9 * i : 9 * i + 9]: i for i in range(len(m_on_key))}
        shuffled += len(mkeys)
        for d, (_, fk) in filed.items():
            for j in range(0, len(fk), 9):
                uf.union(d, ("m", mindex[fk[j : j + 9]]))
        for i, found in enumerate(m_on_key):
            for d in found:
                uf.union(("m", i), d)
        mnear, sent = self._simhash_neighbours([f[0] for f in filed.values()])
        shuffled += sent
        for d, (h, _) in filed.items():
            for e in mnear[h]:
                uf.union(d, e)
        # Every cluster of a standing page reached, whole.
        standing = [x for x in uf.parent if isinstance(x, int)]
        clusters_of = self._by_doc("page_clusters", standing, lay.doc_part)
        for d, c in clusters_of.items():
            if c is not None:
                uf.union(d, ("c", c))
        cids = sorted({c for c in clusters_of.values() if c is not None})
        for c, m in self._by_doc("cluster_member_ids", cids, lay.cluster_part).items():
            for d in m or []:
                uf.union(("c", c), d)
        # Components, then work units: components in the order of their first item, each to
        # the unit with the least work so far.
        comps: Dict[Any, _Unit] = {}
        for x in list(uf.parent):
            comp = comps.setdefault(uf.find(x), _Unit())
            if isinstance(x, int):
                comp.pages.append(x)
            elif x[0] == "p":
                comp.rows.append(x[1])
            elif x[0] == "g":
                comp.gone.append(x[1])
            elif x[0] == "c":
                comp.clusters.append(x[1])
        # Rows without signatures and deletes of keys the index lacks join nothing.
        placed = {r for c in comps.values() for r in c.rows}
        placed_gone = {g for c in comps.values() for g in c.gone}
        for r in range(rows_n):
            if r not in placed:
                comps.setdefault(("p", r), _Unit()).rows.append(r)
        for g in range(len(gone)):
            if g not in placed_gone:
                comps.setdefault(("g", g), _Unit()).gone.append(g)
        ordered = sorted(comps.values(), key=lambda c: c.first(rows_n))
        sizes = sorted((c.size() for c in ordered), reverse=True)
        stats = {
            "count": len(sizes),
            "largest": sizes[0] if sizes else 0,
            "singletons": sum(1 for x in sizes if x == 1),
        }
        units = [_Unit() for _ in range(max(1, min(work_units, len(ordered))))]
        for c in ordered:
            units[min(range(len(units)), key=lambda i: (units[i].size(), i))].absorb(c)
        for u in units:
            u.rows.sort()
            u.gone.sort()
            u.pages.sort()
            u.clusters.sort()
        return [u for u in units if u.rows or u.gone], stats, shuffled

    def _decide(self, n: int, pages: List[Dict[str, Any]], chunk: Any, sigs: Any, gone: List[str], units: List["_Unit"], bdir: Path, shuffled: int) -> Dict[str, Any]:
        """S4: each work unit decided in its own scratch index (a Ray task), seeded with what
        its components read; the units' logs combined into the batch log, cut by partition and
        written under ``logs/`` (the caller writes the ``_DONE`` marker). Returns the counts."""
        ray = _ray()
        lay = self.layout
        frequent = ray.get([a.call.remote("seed_log", [], []) for a in self.keys])
        base = dict(neardup.log_counters(frequent[0]))
        live = self.stats()
        base.update(live_docs=live["pages"], live_clusters=live["clusters"])
        # The library calls insert_many makes on one machine (runs that end where a key comes
        # again, cut by body kind; bad rows in none): each unit makes the same calls with its
        # rows, so that each call orders them as there.
        groups = insert_groups(chunk, [i for i, b in enumerate(chunk.bad) if b is None])
        bad = [i for i, b in enumerate(chunk.bad) if b is not None]
        unit_of = {r: u for u, unit in enumerate(units) for r in unit.rows}
        # Where each row is decided on one machine: its call, then its place in the call's
        # order (descending fingerprint count, then input order).
        count = dict(zip(sigs.column("row").to_pylist(), sigs.column("fingerprints").to_pylist()))
        place: Dict[int, Tuple[int, int]] = {}
        for c, (_, rows) in enumerate(groups):
            for pos, r in enumerate(sorted(rows, key=lambda r: (-(count.get(r) or 0), r))):
                place[r] = (c, pos)
        options = dict(self.options, reuse_ids=False)
        decide = ray.remote(num_cpus=1)(_decide_unit)
        # The pages go to the object store once, as Arrow (the units read their rows without a
        # copy), or as dicts when their fields do not make Arrow columns.
        table = _pages_table(pages)
        source = ray.put(table if table is not None else pages)
        # Every unit's seed asked of the partitions at once.
        seed_refs = []
        for u in units:
            pgroups = _group(((lay.doc_part(i), i) for i in u.pages), lay.doc_parts)
            cgroups = _group(((lay.cluster_part(c), c) for c in u.clusters), lay.doc_parts)
            seed_refs.append([a.call.remote("seed_log", p, c) for a, p, c in zip(self.docs, pgroups, cgroups) if p or c])
        refs = []
        for n_unit, (u, parts) in enumerate(zip(units, seed_refs)):
            seed = neardup.combine_seed_logs(list(frequent) + ray.get(parts))
            shuffled += len(seed)
            calls = [[r for r in rows if unit_of.get(r) == n_unit] for _, rows in groups]
            calls = [c for c in calls if c]
            if n_unit == 0 and bad:
                calls.append(bad)  # error rows only: they change nothing
            refs.append(
                decide.remote(
                    options,
                    seed,
                    source,
                    [(g, gone[g]) for g in u.gone],
                    [[(r, chunk.keys[r]) for r in call] for call in calls],
                    base["live_docs"],
                    base["live_clusters"],
                )
            )
        results = ray.get(refs)
        # The batch's new ids in the order one machine gives them out: the deletes' in
        # delete-list order, then the pages' in processing order; each event's ids in the order
        # it gave them out.
        events = []
        for u, res in enumerate(results):
            for i, (what, at, kind, local) in enumerate(res["allocations"]):
                key = (0, at, 0) if what == "delete" else (1,) + place[at]
                events.append((key, u, i, kind, local))
        events.sort(key=lambda e: (e[0], e[1], e[2]))
        # Each unit's ids by their own number (a unit gives out base, base + 1, ...): a unit that
        # gave them out in another order than the single node's makes a map that is not
        # increasing, which combine_unit_logs refuses.
        maps: List[Dict[str, List[Optional[int]]]] = [{"docs": [], "clusters": [], "seqs": []} for _ in results]

        def put(table: List[Optional[int]], at: int, value: int) -> None:
            table.extend([None] * (at + 1 - len(table)))
            table[at] = value

        next_doc, next_cluster, next_seq = base["next_doc"], base["next_cluster"], base["next_seq"]
        for _, u, _, kind, local in events:
            if kind == "page":
                put(maps[u]["docs"], local - base["next_doc"], next_doc)
                put(maps[u]["seqs"], local - base["next_doc"], next_seq)
                next_doc += 1
                next_seq += 1
            else:
                put(maps[u]["clusters"], local - base["next_cluster"], next_cluster)
                next_cluster += 1
        for u, m in enumerate(maps):
            if any(v is None for table in m.values() for v in table):
                raise neardup.CorruptionError(f"work unit {u} gave out ids it did not report")
        log = neardup.combine_unit_logs(base, [r["log"] for r in results], maps)
        key_logs, doc_logs = lay.route(log)
        logs_dir = bdir / "logs"
        shutil.rmtree(logs_dir, ignore_errors=True)
        _make_dirs(logs_dir)
        sizes = {}
        for role, logs in (("key", key_logs), ("doc", doc_logs)):
            for p, data in enumerate(logs):
                _write_atomic(logs_dir / f"{role}-{p:03}.ndlog", data)
                sizes[f"{role}-{p}"] = len(data)
        counts = {
            "work_units": [len(u.rows) for u in units],
            "deleted": sum(r["deleted"] for r in results),
            "missing": sum(r["missing"] for r in results),
            "duplicates": sum(r["duplicates"] for r in results),
            "errors": sum(r["errors"] for r in results),
            "log_bytes": sizes,
            "shuffled_bytes": shuffled + sum(len(r["log"]) for r in results) + len(log),
        }
        return counts

    def _commit(self, n: int, bdir: Path, report: MergeReport) -> None:
        """S5: every partition applies its log (once in effect)."""
        ray = _ray()
        logs_dir = bdir / "logs"
        calls = [
            (a, logs_dir / f"{role}-{p:03}.ndlog")
            for role, actors in (("key", self.keys), ("doc", self.docs))
            for p, a in enumerate(actors)
        ]
        if _kill_armed("S5"):
            # Crash tests: the first partition commits, then the driver dies.
            a, path = calls.pop(0)
            ray.get(a.apply.remote(n, path.read_bytes()))
            _kill_point("S5")
        refs = [a.apply.remote(n, path.read_bytes()) for a, path in calls]
        report["partitions_applied"] = sum(bool(x) for x in ray.get(refs))

    def _checkpoint(self, n: int) -> None:
        """A checkpoint of every partition under ``checkpoints/batch=<n>/``; older ones but the
        last are removed."""
        ray = _ray()
        base = self.root / "checkpoints"
        dest = base / f"batch={n}"
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        refs = []
        for role, actors in (("key", self.keys), ("doc", self.docs)):
            for p, a in enumerate(actors):
                refs.append(a.call.remote("checkpoint", str(dest / f"{role}-{p:03}")))
        ray.get(refs)
        for old in base.iterdir():
            if old != dest and old.name.startswith("batch=") and int(old.name[6:]) < n - 1:
                shutil.rmtree(old, ignore_errors=True)


class _Unit:
    """A work unit of S4 (or one component while they are gathered): the day's rows, the
    delete-list positions, and the standing pages and clusters its decisions read."""

    def __init__(self) -> None:
        self.rows: List[int] = []
        self.gone: List[int] = []
        self.pages: List[int] = []
        self.clusters: List[int] = []

    def size(self) -> int:
        return len(self.rows) + len(self.gone) + len(self.pages)

    def first(self, rows: int) -> int:
        """Its first item in the day's order: rows, then deletes after every row."""
        return min([*self.rows, *(rows + g for g in self.gone)], default=rows * 2 + 1)

    def absorb(self, other: "_Unit") -> None:
        self.rows += other.rows
        self.gone += other.gone
        self.pages += other.pages
        self.clusters += other.clusters


def _decide_unit(
    options: Dict[str, Any],
    seed: bytes,
    pages: Any,
    gone: List[Tuple[int, str]],
    runs: List[List[Tuple[int, Optional[str]]]],
    live_docs: int,
    live_clusters: int,
) -> Dict[str, Any]:
    """S4 for one work unit, in a Ray task: a scratch index seeded with ``seed`` (deciding
    nothing), the unit's deletes (delete-list position, key) in delete-list order, then its rows
    of ``pages`` (an Arrow table or a list of dicts), one ``insert_many`` call in whole-batch
    order per list of ``runs`` ((row, key) pairs); returns its batch log, its counts, and which
    event gave out each new id, in order: ``("delete", position, kind, id)`` or ``("row", row,
    kind, id)``, ``kind`` ``"page"`` or ``"cluster"``."""
    scratch_dir = tempfile.mkdtemp(prefix="neardup-scratch-")
    try:
        with neardup.Index(Path(scratch_dir) / "ix", **options) as scratch:
            scratch.apply_log(1, seed)
            before = scratch.state_log()
            scratch.record_allocations(True)
            allocations: List[Tuple[str, int, str]] = []
            deleted = missing = 0
            for at, key in gone:
                try:
                    scratch.delete(key)
                    deleted += 1
                except neardup.NotFoundError:
                    missing += 1
                allocations += [("delete", at, kind, i) for _, kind, i, _ in scratch.take_allocations()]
            duplicates = errors = 0
            for call in runs:
                rows = [r for r, _ in call]
                row_of = {k: r for r, k in call if k is not None}
                run = pages.take(rows) if hasattr(pages, "take") else [pages[r] for r in rows]
                verdicts = scratch.insert_many(
                    run, order="fingerprints", order_scope="batch", batch_size=max(1, len(rows)), progress=False
                )
                # Within one call keys are distinct: each id names the row it was given for.
                allocations += [("row", row_of[k], kind, i) for k, kind, i, _ in scratch.take_allocations()]
                duplicates += sum(1 for d in verdicts.column("duplicate").to_pylist() if d)
                errors += sum(1 for e in verdicts.column("error").to_pylist() if e is not None)
            log = neardup.state_diff(before, scratch.state_log(), live_docs, live_clusters)
    finally:
        shutil.rmtree(scratch_dir, ignore_errors=True)
    return {
        "log": log,
        "allocations": allocations,
        "deleted": deleted,
        "missing": missing,
        "duplicates": duplicates,
        "errors": errors,
    }


def _pages_table(pages: List[Dict[str, Any]]) -> Any:
    """The pages' fields that ``insert_many`` reads, as one Arrow table (a missing field is a
    null, which ``insert_many`` reads as missing); ``None`` when a field's values do not make
    one Arrow column (``insert_many`` then reports each bad row from the dicts)."""
    import pyarrow as pa

    try:
        return pa.table({name: pa.array([p.get(name) for p in pages]) for name in ("id", "url", "host", "time", "html", "text")})
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None


def _join_close_simhashes(uf: "_UnionFind", rows: List[Tuple[int, int]], distance: int) -> None:
    """Joins the day's pages whose simhashes are within ``distance`` bits: pages with one
    simhash at once; distinct simhashes are compared only when they agree on one of
    ``distance + 1`` blocks, which two hashes within the distance do (pigeonhole)."""
    first: Dict[int, int] = {}
    for r, h in rows:
        uf.union(("p", r), ("p", first.setdefault(h, r)))
    hashes = list(first.items())
    blocks = distance + 1
    width = 64 // blocks
    mask = (1 << width) - 1
    for b in range(blocks):
        buckets: Dict[int, List[Tuple[int, int]]] = {}
        for h, r in hashes:
            buckets.setdefault((h >> (b * width)) & mask, []).append((h, r))
        for members in buckets.values():
            for i, (h, r) in enumerate(members):
                for h2, r2 in members[i + 1 :]:
                    if bin(h ^ h2).count("1") <= distance:
                        uf.union(("p", r), ("p", r2))


def _signature_batch(batch: Any, col: str, config: Dict[str, Any]) -> Any:
    """S1 in a Ray Data task: the row number, posting keys, simhash and number of sentence
    fingerprints of each page."""
    import pyarrow.compute as pc

    out = neardup.signatures_table(batch, html_col=col if col == "html" else None, text_col=col if col == "text" else None, **config)
    # The number of sentence fingerprints: the whole-batch order sorts by it.
    count = pc.fill_null(pc.list_value_length(out.column("fingerprints")), 0)
    return out.select(["row", "posting_keys", "simhash"]).append_column("fingerprints", count.cast("int64"))


def _manifest(files: Sequence[PathLike], delete_list: Optional[PathLike]) -> Dict[str, Any]:
    def digest(p: PathLike) -> str:
        h = hashlib.sha256()
        with open(p, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        return h.hexdigest()

    return {
        "files": [[str(Path(f).absolute()), digest(f)] for f in files],
        "delete_list": None if delete_list is None else [str(Path(delete_list).absolute()), digest(delete_list)],
    }


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


class _MergeLock:
    """An exclusive lock on ``root/.merge.lock`` for the whole of a merge: two drivers never
    merge into one index at once."""

    def __init__(self, root: Path) -> None:
        self.path = root / ".merge.lock"
        self.fd = -1

    def __enter__(self) -> "_MergeLock":
        import fcntl

        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            raise InvalidArgumentError(f"another driver is merging into {self.path.parent}") from None
        return self

    def __exit__(self, *exc: Any) -> None:
        os.close(self.fd)


def _make_dirs(path: Path) -> None:
    """Creates a directory and its missing parents, each made durable in its parent."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        d.mkdir()
        _fsync_dir(d.parent)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _write_tsv(table: Any, path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for k, r in zip(table.column("key").to_pylist(), table.column("representative").to_pylist()):
            f.write(f"{k}\t{r}\n")


def _sayer(progress: Union[bool, Callable[[str], Any]]) -> Callable[[str], Any]:
    if callable(progress):
        return progress
    if progress:
        return lambda line: print(line, flush=True)
    return lambda line: None


def _kill_armed(at: str) -> bool:
    return os.environ.get("NEARDUP_RAY_KILL_AT") == at


def _kill_point(at: str) -> None:
    """Crash tests: ``NEARDUP_RAY_KILL_AT=<point>`` kills the driver with SIGKILL there
    (``after-S1``, ``after-S4``, or ``S5``: after the first partition applied its log)."""
    if _kill_armed(at):
        os.kill(os.getpid(), signal.SIGKILL)
