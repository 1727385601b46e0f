"""S4 of the daily merge (SCALEOUT §5): each work unit decided in its own scratch index, and the
units' logs made one batch log.

A unit is a Ray task: a scratch index with the standing index's options (``reuse_ids=False``) is
seeded with the ``seed_log`` of the pages and clusters its components read, deciding nothing;
its deletes, then its rows in the library calls ``insert_many`` makes on one machine (whole-batch
order), run with the single-node code; the difference of its state logs is its log. The driver
numbers the units' new pages, clusters and insertion sequence in the order one machine gives them
out (the deletes in delete-list order, then the pages in processing order), joins the logs
(``neardup.combine_unit_logs``), cuts the batch log by partition (``Layout.route``) and writes
it under the batch's ``logs/`` in the store (SCALEOUT §9: the log makes S5 repeatable): the units'
logs go from the units to a worker that does so, never through the driver.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import neardup
from neardup._rows import insert_groups

from ._faults import kill_armed, kill_point
from ._files import MAX_LISTED_ERRORS
from ._plan import Unit, group
from ._runtime import require_ray
from ._store import Store, task

if TYPE_CHECKING:
    from ._driver import DistributedIndex


def decide(dx: DistributedIndex, n: int, pages: List[Dict[str, Any]], chunk: Any, sigs: Any, gone: List[str], units: List[Unit], brel: str, shuffled: int) -> Dict[str, Any]:
    """S4: each work unit decided in its own scratch index (a Ray task), seeded with what
    its components read; the units' logs combined into the batch log, cut by partition and
    written under ``<brel>/logs/`` in the store by a worker (the caller writes the ``_DONE``
    marker). Returns the counts, with the first error rows as (row, reason) pairs in
    ``error_rows``."""
    ray = require_ray()
    lay = dx.layout
    frequent = ray.get([a.call.remote("seed_log", [], []) for a in dx.keys])
    base = dict(neardup.log_counters(frequent[0]))
    live = dx.stats()
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
    options = dict(dx.options, reuse_ids=False)
    unit_task = ray.remote(num_cpus=1, num_returns=2)(_decide_unit)
    # The pages go to the object store once, as Arrow (the units read their rows without a
    # copy), or as dicts when their fields do not make Arrow columns.
    table = _pages_table(pages)
    source = ray.put(table if table is not None else pages)
    # Every unit's seed asked of the partitions at once.
    seed_refs = []
    for u in units:
        pgroups = group(((lay.doc_part(i), i) for i in u.pages), lay.doc_parts)
        cgroups = group(((lay.cluster_part(c), c) for c in u.clusters), lay.doc_parts)
        seed_refs.append([a.call.remote("seed_log", p, c) for a, p, c in zip(dx.docs, pgroups, cgroups) if p or c])
    refs = []
    for n_unit, (u, parts) in enumerate(zip(units, seed_refs)):
        seed = neardup.combine_seed_logs(list(frequent) + ray.get(parts))
        shuffled += len(seed)
        calls = [[r for r in rows if unit_of.get(r) == n_unit] for _, rows in groups]
        calls = [c for c in calls if c]
        if n_unit == 0 and bad:
            calls.append(bad)  # error rows only: they change nothing
        refs.append(
            unit_task.remote(
                options,
                seed,
                source,
                [(g, gone[g]) for g in u.gone],
                [[(r, chunk.keys[r]) for r in call] for call in calls],
                base["live_docs"],
                base["live_clusters"],
            )
        )
    if kill_armed("S4"):
        # Crash tests: the driver dies while the units decide, once the first is done.
        ray.wait([m for _, m in refs], num_returns=1)
        kill_point("S4")
    # The driver reads what each unit did; the units' logs stay in the object store.
    results = ray.get([m for _, m in refs])
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
    write = task(_write_logs, dx.store, num_cpus=1)
    written = ray.get(write.remote(dx.store, f"{brel}/logs", base, lay, maps, *[log for log, _ in refs]))
    counts = {
        "work_units": [len(u.rows) for u in units],
        "deleted": sum(r["deleted"] for r in results),
        "missing": sum(r["missing"] for r in results),
        "duplicates": sum(r["duplicates"] for r in results),
        "errors": sum(r["errors"] for r in results),
        "error_rows": sorted(e for r in results for e in r["error_rows"])[:MAX_LISTED_ERRORS],
        "log_bytes": written["sizes"],
        "shuffled_bytes": shuffled + written["bytes"],
    }
    return counts


def _write_logs(store: Store, rel: str, base: Dict[str, int], layout: Any, maps: List[Dict[str, Any]], *logs: bytes) -> Dict[str, Any]:
    """In a worker: the units' logs numbered and joined into the batch log
    (``neardup.combine_unit_logs``), cut by partition (``Layout.route``) and written under
    ``rel`` in the store, one ``<role>-<p>.ndlog`` a partition. Returns the bytes of each
    partition's log (``sizes``) and the bytes the units' logs and the batch log made
    (``bytes``)."""
    log = neardup.combine_unit_logs(base, list(logs), maps)
    key_logs, doc_logs = layout.route(log)
    store.delete(rel)
    sizes = {}
    for role, parts in (("key", key_logs), ("doc", doc_logs)):
        for p, data in enumerate(parts):
            store.write(f"{rel}/{role}-{p:03}.ndlog", data)
            sizes[f"{role}-{p}"] = len(data)
    return {"sizes": sizes, "bytes": sum(len(x) for x in logs) + len(log)}


def _decide_unit(
    options: Dict[str, Any],
    seed: bytes,
    pages: Any,
    gone: List[Tuple[int, str]],
    runs: List[List[Tuple[int, Optional[str]]]],
    live_docs: int,
    live_clusters: int,
) -> Tuple[bytes, Dict[str, Any]]:
    """S4 for one work unit, in a Ray task: a scratch index seeded with ``seed`` (deciding
    nothing), the unit's deletes (delete-list position, key) in delete-list order, then its rows
    of ``pages`` (an Arrow table or a list of dicts), one ``insert_many`` call in whole-batch
    order per list of ``runs`` ((row, key) pairs); returns its batch log and, apart (a second Ray
    object), its counts and which event gave out each new id, in order: ``("delete", position, kind, id)`` or ``("row", row,
    kind, id)``, ``kind`` ``"page"`` or ``"cluster"``; and the first error rows, as (row,
    reason)."""
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
            error_rows: List[Tuple[int, str]] = []
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
                # Output rows keep the call's order: each error names its row.
                for r, e in zip(rows, verdicts.column("error").to_pylist()):
                    if e is not None:
                        errors += 1
                        error_rows.append((r, e))
            log = neardup.state_diff(before, scratch.state_log(), live_docs, live_clusters)
    finally:
        shutil.rmtree(scratch_dir, ignore_errors=True)
    return log, {
        "allocations": allocations,
        "deleted": deleted,
        "missing": missing,
        "duplicates": duplicates,
        "errors": errors,
        # The first ones only: the driver lists at most MAX_LISTED_ERRORS of the day's.
        "error_rows": sorted(error_rows)[:MAX_LISTED_ERRORS],
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
