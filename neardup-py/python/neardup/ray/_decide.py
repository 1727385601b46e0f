"""S2–S4's coordination and S4 of the daily merge (SCALEOUT §5): each work unit decided in its own
scratch index, and the units' logs made one batch log.

The coordination runs in a Ray actor (``Coordinator``, issue #34, item 3), not on the driver: it
reads the day's keys and signatures from S1's parts in the store (``_Rows``), calls ``_plan.plan``
(S2–S3), starts the units and numbers their ids; the driver gets the counts and the first error
rows. Each unit reads its own pages (key, host, time, body, and the main text S1 extracted, so
that its inserts do not extract the page again) from S1's parts.

A unit is a Ray task: a scratch index with the standing index's options (``reuse_ids=False``;
``sync_writes=False``, as it is thrown away) is
seeded with the ``seed_log`` of the pages and clusters its components read, deciding nothing;
its deletes, then its rows in the library calls ``insert_many`` makes on one machine (whole-batch
order), run with the single-node code; the difference of its state logs is its log. The coordinator
numbers the units' new pages, clusters and insertion sequence in the order one machine gives them
out (the deletes in delete-list order, then the pages in processing order), and has the batch log
written, cut by partition, under the batch's ``logs/`` in the store (``write_logs``; SCALEOUT
§9: the log makes S5 repeatable): a task a unit maps and cuts its log, a task a partition joins
its pieces, so no process holds the day's log and nothing of it passes through the driver or
the coordinator.
"""

from __future__ import annotations

import bisect
import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import neardup
from neardup._rows import insert_groups

from . import _plan, _progress, _sign
from ._faults import kill_armed, kill_point  # noqa: F401 - the driver's S4 kill point (tests patch it here)
from ._files import MAX_LISTED_ERRORS, read_key_list
from ._plan import Unit, group
from ._runtime import require_ray
from ._store import Store, task


class _Partitions:
    """What S2–S4 use of a ``DistributedIndex`` (its layout, partition actors, options and store),
    picklable: the coordinator gets it in place of the driver's object."""

    def __init__(self, dx: Any) -> None:
        self.layout = dx.layout
        self.keys = list(dx.keys)
        self.docs = list(dx.docs)
        self.options = dict(dx.options)
        self.store = dx.store

    def stats(self) -> Dict[str, Any]:
        """Live pages and clusters (the counters every partition holds)."""
        s = require_ray().get(self.docs[0].stats.remote())
        return {"pages": s["pages"], "clusters": s["clusters"]}


class _Rows:
    """The day's rows as S2–S4 read them from S1's parts (what ``Chunk`` held of them, without
    their bodies): ``keys``, ``bad`` (why a row cannot be a page), ``bodies`` (``(None,
    is_html)``: the kind of each row's body), ``lines`` and the files' first rows (``offsets``),
    so that a row names its file and line."""

    def __init__(self, store: Store, rel: str, day: Dict[str, Any]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.files = [f for f, _ in day["files"]]
        self.offsets = [0]
        for _, n in day["files"]:
            self.offsets.append(self.offsets[-1] + n)
        self.parts = _sign.part_rows(store.list(rel), self.offsets)
        self.store, self.rel = store, rel
        cols = ["file", "row", "line", "key", "is_html", "bad", "signed", "simhash", "fingerprints"]
        tables = [pq.read_table(store.path(f"{rel}/{name}"), columns=cols, filesystem=store.fs) for _, name in self.parts]
        table = pa.concat_tables(tables) if tables else _sign.part_schema().empty_table().select(cols)
        files = table.column("file").to_numpy()
        import numpy as np

        rows = np.asarray(self.offsets[:-1], dtype=np.int64)[files] + table.column("row").to_numpy() if len(files) else np.zeros(0, np.int64)
        if len(rows) != self.offsets[-1] or (len(rows) and not (rows == np.arange(len(rows))).all()):
            raise neardup.CorruptionError(f"the signatures of {store.path(rel)} do not hold the day's rows in order")
        self.keys: List[Optional[str]] = table.column("key").to_pylist()
        self.bad: List[Optional[str]] = table.column("bad").to_pylist()
        self.bodies = [(None, h) for h in table.column("is_html").to_pylist()]
        self.lines = table.column("line").to_numpy()
        signed = table.column("signed")
        self.sigs = pa.table(
            {
                "row": pa.array(rows, pa.int64()),
                "simhash": table.column("simhash"),
                "fingerprints": table.column("fingerprints"),
            }
        ).filter(signed)

    def __len__(self) -> int:
        return len(self.keys)

    def place(self, row: int) -> Tuple[str, int]:
        """The file (as the merge was given it) and line of row ``row``."""
        f = bisect.bisect_right(self.offsets, row) - 1
        return self.files[f], int(self.lines[row])

    def parts_of(self, rows: List[int]) -> List[str]:
        """The parts holding some of ``rows`` (sorted)."""
        firsts = [first for first, _ in self.parts]
        return sorted({self.parts[bisect.bisect_right(firsts, r) - 1][1] for r in rows})


class Coordinator:
    """S2–S4's coordination in a Ray actor of its own (SCALEOUT §5; issue #34, item 3), so that
    the driver holds nothing a page: it reads the day's keys and signatures from S1's parts in
    the store, plans the components and work units (``_plan.plan``), starts the units, numbers
    their new ids and has their logs written; the driver gets the counts. Its calls, in order:
    ``plan``, ``start``, then (crash tests) ``first_done``, then ``finish``."""

    def __init__(self, dx: _Partitions, brel: str, day: Dict[str, Any], delete_list: Optional[str], order: str = "input") -> None:
        self.dx = dx
        self.brel = brel
        self.day = day
        self.delete_list = delete_list
        self.order = order

    def plan(self, work_units: int, max_component: int = _plan.DEFAULT_MAX_COMPONENT) -> Dict[str, Any]:
        """S2–S3: the day's rows read, the delete list read, the components and work units
        planned (no component over ``max_component``, see ``_plan.plan``). Returns their
        counts."""
        self.rows = _Rows(self.dx.store, f"{self.brel}/s1", self.day)
        self.gone = read_key_list(self.delete_list)
        self.units, sizes, shuffled = _plan.plan(self.dx, self.rows, self.rows.sigs, self.gone, work_units, max_component)
        self.counts = {
            "pages": len(self.rows),
            "deletes": len(self.gone),
            "reached_pages": sum(len(u.pages) for u in self.units),
            "reached_clusters": sum(len(u.clusters) for u in self.units),
            "components": sizes,
            "shuffled_bytes": shuffled,
            "work_units": len(self.units),
        }
        return dict(self.counts)

    def start(self, board: Optional[Any] = None) -> int:
        """S4: the work units started (see ``start_units``); each tells ``board`` (a
        ``_progress.Board``) the rows it decided so far, and ``finish`` posts its steps there.
        Returns how many rows the units decide."""
        self.board = board
        self.started = start_units(
            self.dx, self.rows, self.rows.sigs, self.gone, self.units, self.brel, self.counts["shuffled_bytes"], board, self.order
        )
        return int(self.started["decided"])

    def first_done(self) -> None:
        """Returns once a work unit has decided (the crash tests kill the driver then)."""
        require_ray().wait([m for _, m in self.started["refs"]], num_returns=1)

    def finish(self) -> Dict[str, Any]:
        """S4's end (``finish_units``); the counts of S1–S4, with the day's unreadable records
        and the first error rows as ``{"file", "line", "reason"}`` in file order."""
        counts = dict(self.counts)
        counts.update(finish_units(self.dx, self.started, self.board))
        day = self.day
        counts["pages"] += day["unreadable"]
        counts["errors"] += day["unreadable"]
        listed = list(day["skipped"]) + [
            {"file": f, "line": line, "reason": reason}
            for f, line, reason in ((*self.rows.place(r), reason) for r, reason in counts["error_rows"])
        ]
        order = {f: i for i, f in enumerate(self.rows.files)}
        listed.sort(key=lambda e: (order.get(e["file"], len(order)), e["line"]))
        counts["error_rows"] = listed[:MAX_LISTED_ERRORS]
        return counts


def coordinator(dx: Any, brel: str, day: Dict[str, Any], delete_list: Optional[str], order: str = "input") -> Any:
    """A new ``Coordinator`` actor for a merge of ``dx`` deciding in ``order`` (``"input"`` or
    ``"fingerprints"``): no CPU reserved (it mostly waits for the partitions and units), on the
    driver's node (where the root's store is, and the driver's loss ends the merge anyway)."""
    ray = require_ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = ray.get_runtime_context().get_node_id()
    actor = ray.remote(num_cpus=0, max_restarts=0)(Coordinator)
    return actor.options(scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote(
        _Partitions(dx), brel, day, None if delete_list is None else str(Path(delete_list).absolute()), order
    )


def start_units(
    dx: Any,
    chunk: Any,
    sigs: Any,
    gone: List[str],
    units: List[Unit],
    brel: str,
    shuffled: int,
    board: Optional[Any] = None,
    order: str = "input",
) -> Dict[str, Any]:
    """S4's start: each work unit decided in its own scratch index (a Ray task), seeded with
    what its components read, its rows read from S1's parts in the store. ``chunk``: the day's
    rows (``_Rows``); ``board``: a ``_progress.Board`` each unit tells the rows it decided;
    ``order``: ``"input"`` or ``"fingerprints"``, the order each library call decides its rows
    in. Returns what ``finish_units`` needs."""
    import numpy as np

    ray = require_ray()
    lay = dx.layout
    frequent = ray.get([a.call.remote("seed_log", [], []) for a in dx.keys])
    base = dict(neardup.log_counters(frequent[0]))
    live = dx.stats()
    base.update(live_docs=live["pages"], live_clusters=live["clusters"])
    # Partitions of 64-bit ids (format 7) take allocators past 2³²; a root of format 6
    # partitions (made before them) does not (``neardup.batch_counters``).
    base["wide"] = int(all(ray.get([a.wide.remote() for a in dx.keys + dx.docs])))
    # The library calls insert_many makes on one machine (runs that end where a key comes
    # again, cut by body kind; bad rows in none): each unit makes the same calls with its
    # rows, so that each call orders them as there.
    groups = [np.asarray(rows, dtype=np.int64) for _, rows in insert_groups(chunk, [i for i, b in enumerate(chunk.bad) if b is None])]
    # In arrays, a few bytes a row (the coordinator holds them from S4's start to its end).
    unit_of = np.full(len(chunk), -1, dtype=np.int32)
    for u, unit in enumerate(units):
        unit_of[np.asarray(unit.rows, dtype=np.int64)] = u
    # Where each row is decided on one machine: its call, then its place in the call's
    # order (input order; or descending fingerprint count, then input order).
    place = (np.full(len(chunk), -1, dtype=np.int32), np.zeros(len(chunk), dtype=np.int64))
    count = np.zeros(len(chunk), dtype=np.int64)
    if order == "fingerprints":
        count[sigs.column("row").to_numpy()] = sigs.column("fingerprints").fill_null(0).to_numpy()
    for c, rows in enumerate(groups):
        ordered = rows[np.lexsort((rows, -count[rows]))] if order == "fingerprints" else rows
        place[0][ordered] = c
        place[1][ordered] = np.arange(len(ordered))
    # A scratch index is thrown away after its unit: syncing its writes buys nothing (the
    # batch log is what S5 makes durable), and it decides as a synced one does.
    options = dict(dx.options, reuse_ids=False, sync_writes=False)
    # A worker of its own a unit (max_calls=1): the heap a unit grew (glibc keeps what a
    # process freed) goes back to the machine when it ends, not into the next unit's worker
    # (measured: a day-2 unit started at 0.79 GB anonymous in day 1's unit's worker).
    unit_task = task(_decide_unit, dx.store, num_cpus=1, num_returns=2, max_calls=1)
    s1 = f"{brel}/s1"
    # Every unit's seed asked of the partitions at once, each doc partition writing its share
    # to the store as it reads it (a unit of a large component reaches most of the index: held
    # in memory, a partition's share took about 90 KB a page). A unit waits for the sizes (Ray
    # object refs) and reads the files.
    seed_refs = []
    for n_unit, u in enumerate(units):
        pgroups = group(((lay.doc_part(i), i) for i in u.pages), lay.doc_parts)
        cgroups = group(((lay.cluster_part(c), c) for c in u.clusters), lay.doc_parts)
        parts = []
        for d, (a, p, c) in enumerate(zip(dx.docs, pgroups, cgroups)):
            if p or c:
                rel = f"{brel}/seeds/{n_unit:06}-{d:03}.ndlog"
                parts.append((a.seed_to_store.remote(dx.store, rel, p, c), rel))
        seed_refs.append(parts)
    # Each unit combines its own seed (the key partitions' frequent keys and counters, then its
    # pages and clusters): no seed passes through the coordinator.
    frequent_refs = [ray.put(f) for f in frequent]
    refs = []
    decided = 0
    for n_unit, (u, parts) in enumerate(zip(units, seed_refs)):
        # Each call's rows in the order one machine decides them (its place in the call).
        mine = (rows[unit_of[rows] == n_unit] for rows in groups)
        calls = [c[np.argsort(place[1][c], kind="stable")].tolist() for c in mine if len(c)]
        wanted = sorted(r for c in calls for r in c)
        decided += len(wanted)
        source = (dx.store, s1, chunk.offsets, chunk.parts_of(wanted))
        refs.append(
            unit_task.remote(
                options,
                [frequent_refs, parts],
                source,
                f"{brel}/unit-logs/{n_unit:06}.ndlog",
                [(g, gone[g]) for g in u.gone],
                [[(r, chunk.keys[r]) for r in call] for call in calls],
                base["live_docs"],
                base["live_clusters"],
                (board, n_unit),
            )
        )
    # The rows no library call takes: error rows, which change nothing.
    # (insert_many reports them as InvalidArgumentError: its message, as there).
    bad = [(i, f"invalid argument: {b}") for i, b in enumerate(chunk.bad) if b is not None]
    return {"refs": refs, "units": units, "place": place, "base": base, "bad": bad, "brel": brel, "shuffled": shuffled, "decided": decided}


def number_ids(base: Dict[str, int], place: Tuple[Any, Any], allocations: List[Dict[str, Any]]) -> List[Dict[str, List[int]]]:
    """The batch's new ids in the order one machine gives them out: the deletes' in
    delete-list order, then the pages' in processing order (``place``: each row's library call
    and place in it); each event's ids in the order it gave them out. ``allocations``: each
    unit's, as ``allocation_arrays`` gives them. Returns each unit's map of its own ids (a unit
    gives out base, base + 1, ...) to the batch's: ``docs``, ``seqs`` and ``clusters``. A
    unit that gave its ids out in another order than the single node's makes a map that is not
    increasing, which ``combine_unit_logs`` refuses; one that gave out ids it did not report
    raises ``CorruptionError``. In arrays: a few bytes an id."""
    import numpy as np

    unit = np.concatenate([np.full(len(a["at"]), u, dtype=np.int64) for u, a in enumerate(allocations)] or [np.zeros(0, np.int64)])
    index = np.concatenate([np.arange(len(a["at"]), dtype=np.int64) for a in allocations] or [np.zeros(0, np.int64)])
    row = np.concatenate([a["row"] for a in allocations] or [np.zeros(0, np.bool_)])
    at = np.concatenate([a["at"] for a in allocations] or [np.zeros(0, np.int64)])
    page = np.concatenate([a["page"] for a in allocations] or [np.zeros(0, np.bool_)])
    local = np.concatenate([a["id"] for a in allocations] or [np.zeros(0, np.int64)])
    # Each id's event: (0, position, 0) for a delete, (1, call, place in the call) for a row;
    # then its unit and its place among the unit's ids.
    if len(place[0]):
        at_row = np.where(row, at, 0)
        call = np.where(row, place[0][at_row], at)
        pos = np.where(row, place[1][at_row], 0)
    else:  # a day of deletes only
        call, pos = at, np.zeros(len(at), dtype=np.int64)
    order = np.lexsort((index, unit, pos, call, row))
    unit, page, local = unit[order], page[order], local[order]
    new_doc = base["next_doc"] + np.cumsum(page) - 1
    new_seq = base["next_seq"] + np.cumsum(page) - 1
    new_cluster = base["next_cluster"] + np.cumsum(~page) - 1
    maps: List[Dict[str, List[int]]] = []
    for u in range(len(allocations)):
        mine = unit == u
        m: Dict[str, List[int]] = {}
        for name, sel, values, first in (
            ("docs", mine & page, new_doc, base["next_doc"]),
            ("seqs", mine & page, new_seq, base["next_doc"]),
            ("clusters", mine & ~page, new_cluster, base["next_cluster"]),
        ):
            slot = local[sel] - first
            table = np.full(int(slot.max(initial=-1)) + 1, -1, dtype=np.int64)
            table[slot] = values[sel]
            if (table < 0).any():
                raise neardup.CorruptionError(f"work unit {u} gave out ids it did not report")
            m[name] = table.tolist()
        maps.append(m)
    return maps


def allocation_arrays(allocations: List[Tuple[str, int, str, int]]) -> Dict[str, Any]:
    """A unit's allocations, ``(what, at, kind, id)`` (``what`` ``"delete"`` or ``"row"``,
    ``kind`` ``"page"`` or ``"cluster"``), as arrays: ``row``, ``at``, ``page``, ``id``."""
    import numpy as np

    n = len(allocations)
    return {
        "row": np.fromiter((w == "row" for w, _, _, _ in allocations), dtype=np.bool_, count=n),
        "at": np.fromiter((a for _, a, _, _ in allocations), dtype=np.int64, count=n),
        "page": np.fromiter((k == "page" for _, _, k, _ in allocations), dtype=np.bool_, count=n),
        "id": np.fromiter((i for _, _, _, i in allocations), dtype=np.int64, count=n),
    }


def finish_units(dx: Any, started: Dict[str, Any], board: Optional[Any] = None) -> Dict[str, Any]:
    """S4's end: the units' new pages, clusters and insertion sequence numbered in the order
    one machine gives them out, the batch log written cut by partition under ``<brel>/logs/``
    in the store (``write_logs``; the caller writes the
    ``_DONE`` marker). Returns the counts, with the first error rows as (row, reason) pairs in
    ``error_rows``. Its steps are posted on ``board`` (a ``_progress.Board``)."""
    ray = require_ray()
    lay = dx.layout
    refs, units, place, base, bad = started["refs"], started["units"], started["place"], started["base"], started["bad"]
    # The coordinator reads what each unit did; the units' logs stay in the object store.
    results = ray.get([m for _, m in refs])
    maps = number_ids(base, place, [res["allocations"] for res in results])
    _progress.post(board, "the units' logs routed to the partitions")
    written = write_logs(dx.store, f"{started['brel']}/logs", base, lay, maps, [log for log, _ in refs])
    dx.store.delete(f"{started['brel']}/unit-logs")
    # Kept until every unit returned: a unit Ray runs again reads its seed again.
    dx.store.delete(f"{started['brel']}/seeds")
    counts = {
        "work_units": [len(u.rows) for u in units],
        "deleted": sum(r["deleted"] for r in results),
        "missing": sum(r["missing"] for r in results),
        "duplicates": sum(r["duplicates"] for r in results),
        "errors": sum(r["errors"] for r in results) + len(bad),
        "error_rows": sorted([e for r in results for e in r["error_rows"]] + bad[:MAX_LISTED_ERRORS])[:MAX_LISTED_ERRORS],
        "log_bytes": written["sizes"],
        "shuffled_bytes": started["shuffled"] + sum(r["seed_bytes"] for r in results) + written["bytes"],
    }
    return counts


def write_logs(store: Store, rel: str, base: Dict[str, int], layout: Any, maps: List[Dict[str, Any]], logs: List[Any]) -> Dict[str, Any]:
    """The batch log written under ``rel`` in the store, one ``<role>-<p>.ndlog`` a partition,
    without the units' logs joined in one place (issue #34, item 3): a task a unit maps its new
    ids (``neardup.remap_unit_log``), cuts its log by partition (``Layout.route``) and writes
    the pieces under ``rel/units/``; then a task a partition joins the batch's counters
    (``neardup.batch_counters`` of the units' totals) and its pieces in unit order
    (``neardup.join_log_files``, file to file): the log ``combine_unit_logs`` then ``route``
    gave, byte for byte.
    ``logs``: the names of the units' logs in the store (Ray object refs to them). Returns the bytes of each partition's log
    (``sizes``) and the bytes the units' logs, pieces and partition logs made (``bytes``)."""
    ray = require_ray()
    if len(maps) != len(logs):
        raise neardup.InvalidArgumentError(f"{len(maps)} id maps for {len(logs)} work units")
    store.delete(rel)
    route = task(_route_unit, store, num_cpus=1)
    routed = ray.get([route.remote(store, rel, base, layout, u, m, log) for u, (m, log) in enumerate(zip(maps, logs))])
    counters = neardup.batch_counters(base, [r["totals"] for r in routed])
    # Each partition's pieces named by the units that wrote them, in unit order (no listing:
    # a stray file in the store is never read as a piece).
    units_of: Dict[str, List[int]] = {}
    for u, r in enumerate(routed):
        for name in r["pieces"]:
            units_of.setdefault(name, []).append(u)
    join = task(_join_partition, store, num_cpus=1)
    parts = [("key", p) for p in range(layout.key_parts)] + [("doc", p) for p in range(layout.doc_parts)]
    names = [f"{role}-{p:03}" for role, p in parts]
    sizes = ray.get([join.remote(store, rel, name, counters, units_of.get(name, [])) for name in names])
    store.delete(f"{rel}/units")
    return {
        "sizes": {f"{role}-{p}": size for (role, p), size in zip(parts, sizes)},
        "bytes": sum(r["bytes"] for r in routed) + sum(sizes),
    }


def _route_unit(store: Store, rel: str, base: Dict[str, int], layout: Any, u: int, id_map: Dict[str, Any], log_rel: str) -> Dict[str, Any]:
    """In a task: work unit ``u``'s log (``log_rel`` in the store) with its ids mapped, cut by
    partition, each piece that holds an operation written as ``rel/units/<role>-<p>/<u>.ndlog``;
    file to files, one operation at a time (``neardup.route_unit_log_file``), so that no log is
    held in memory. Returns the unit's totals, the bytes of its log and pieces, and the
    partitions it wrote a piece for (``pieces``)."""
    with tempfile.TemporaryDirectory(prefix="neardup-route-") as tmp:
        if store.local:
            src = store.path(log_rel)
        else:
            src = str(Path(tmp) / "unit.ndlog")
            store.get_file(log_rel, src)
        written = 0
        pieces = []
        # On a local store the pieces are cut into a directory of the store and renamed into
        # place: written once, not written then copied.
        with store.scratch_dir(f"{rel}/units") as out:
            totals, files = neardup.route_unit_log_file(base, u, src, id_map, layout, out)
            for name, _, size in files:
                store.move_in(str(Path(out) / f"{name}.ndlog"), f"{rel}/units/{name}/{u:06}.ndlog")
                written += size
                pieces.append(name)
    return {"totals": totals, "bytes": store.size(log_rel) + written, "pieces": pieces}


def _join_partition(store: Store, rel: str, name: str, counters: bytes, units: List[int]) -> int:
    """In a task: partition ``name``'s log of the batch, its counters then the pieces of
    ``units`` (those that wrote one for it, in unit order), written as ``rel/<name>.ndlog``,
    file to file one operation at a time (``neardup.join_log_files``): joined in memory, a doc
    partition's log of a 10⁶-page day held 3.6 GB in this task. The pieces are read in place
    on a local store, else copied here first. Returns its bytes."""
    with tempfile.TemporaryDirectory(prefix="neardup-join-") as tmp:
        pieces = []
        for u in units:
            piece = f"{rel}/units/{name}/{u:06}.ndlog"
            if store.local:
                pieces.append(store.path(piece))
            else:
                local = str(Path(tmp) / f"{u:06}.ndlog")
                store.get_file(piece, local)
                pieces.append(local)
        # Written in place on a local store (a temporary name renamed), not joined then copied.
        with store.writing(f"{rel}/{name}.ndlog") as out:
            size = neardup.join_log_files(counters, pieces, out)
    return int(size)


#: Rows a work unit hands the library at once: its memory holds one block's pages, signatures
#: and texts, whatever the size of its components.
UNIT_BLOCK = 4096


def _decide_unit(
    options: Dict[str, Any],
    seed_parts: List[List[Any]],
    source: Tuple[Store, str, List[int], List[str]],
    log_rel: str,
    gone: List[Tuple[int, str]],
    runs: List[List[Tuple[int, Optional[str]]]],
    live_docs: int,
    live_clusters: int,
    progress: Tuple[Optional[Any], int] = (None, 0),
) -> Tuple[bytes, Dict[str, Any]]:
    """S4 for one work unit, in a Ray task: a scratch index seeded with the seed logs of
    ``seed_parts`` (the key partitions' frequent keys as Ray object refs, each fetched to a
    file; then the doc partitions' shares, each a Ray object ref to its size and its name in
    the store, read in place from a store on this node's file system, else copied; combined
    and numbered densely from the files: ``neardup.scratch_seed_files``; deciding nothing), the unit's deletes (delete-list position, key) in delete-list order, then its rows
    (read from S1's parts: ``source`` is the store, ``s1/``'s path in it, each file's first row
    and the parts holding the unit's rows), the library calls ``insert_many`` makes on one
    machine in whole-batch order: each list of ``runs`` holds one call's (row, key) pairs in
    the order that call decides them (descending fingerprint count, then input order), and is
    inserted in that order, ``UNIT_BLOCK`` rows at a time, so that a large component costs the
    unit disk (its rows, compressed and read a record batch at a time; its scratch index; its log), not memory. Writes its
    batch log to ``log_rel`` in the store and returns that name and, apart (a second Ray
    object), its counts and which event gave out each new id, in
    order: ``("delete", position, kind, id)`` or ``("row", row, kind, id)``, ``kind``
    ``"page"`` or ``"cluster"``; and the first error rows, as (row, reason). ``progress``: a
    ``_progress.Board`` (or None) and this unit's number, told the rows decided after each
    block."""
    ray = require_ray()
    wanted = sorted(r for call in runs for r, _ in call)
    pos_of = {r: i for i, r in enumerate(wanted)}
    scratch_dir = tempfile.mkdtemp(prefix="neardup-scratch-")
    try:
        table = _unit_rows(source, wanted, Path(scratch_dir) / "rows.arrow")
        # The partitions' seed logs, one at a time to a file: combined and numbered densely
        # from the files (a scratch index's ids need not be as wide as the index's, issue #34
        # item 5; the order kept, it decides as with the standing ids), never whole in memory.
        parts: List[Path] = []
        copies: List[Path] = []
        seed_bytes = 0
        frequent_refs, shares = seed_parts
        for i, ref in enumerate(frequent_refs):
            part = Path(scratch_dir) / f"frequent-{i}.ndlog"
            data = ray.get(ref)
            part.write_bytes(data)
            seed_bytes += len(data)
            del data
            parts.append(part)
            copies.append(part)
        store = source[0]
        for i, (size_ref, rel) in enumerate(shares):
            seed_bytes += int(ray.get(size_ref))
            if store.local:
                parts.append(Path(store.path(rel)))
            else:
                part = Path(scratch_dir) / f"seed-{i}.ndlog"
                store.get_file(rel, str(part))
                parts.append(part)
                copies.append(part)
        dense = Path(scratch_dir) / "seed.ndlog"
        ids = neardup.scratch_seed_files(parts, dense)
        for part in copies:
            part.unlink()
        with neardup.Index(Path(scratch_dir) / "ix", **options) as scratch:
            scratch.apply_log_file(1, dense)
            dense.unlink()
            # The state it was seeded with, on disk: the diff reads it back as it goes (a unit
            # of a large component held about 90 KB a standing page with it in memory).
            before = Path(scratch_dir) / "before.ndlog"
            scratch.state_file(before)
            scratch.record_allocations(True)
            allocations: List[Tuple[str, int, str]] = []
            deleted = missing = 0
            for at, key in gone:
                try:
                    scratch.delete(key)
                    deleted += 1
                except neardup.NotFoundError:
                    missing += 1
                allocations += [("delete", at, kind, _global(ids, kind, i)) for _, kind, i, _ in scratch.take_allocations()]
            duplicates = errors = decided = 0
            error_rows: List[Tuple[int, str]] = []
            for call in runs:
                for start in range(0, len(call), UNIT_BLOCK):
                    block = call[start : start + UNIT_BLOCK]
                    rows = [r for r, _ in block]
                    row_of = {k: r for r, k in block if k is not None}
                    run = table.take([pos_of[r] for r in rows])
                    run = run.drop_columns(["html" if run.column("is_html")[0].as_py() is False else "text", "is_html"])
                    # Already in the call's order: the blocks one after the other decide as the
                    # whole call sorted by fingerprint count does.
                    verdicts = scratch.insert_many(run, order="input", batch_size=len(rows), progress=False)
                    # Within one call keys are distinct: each id names the row it was given for.
                    allocations += [("row", row_of[k], kind, _global(ids, kind, i)) for k, kind, i, _ in scratch.take_allocations()]
                    duplicates += sum(1 for d in verdicts.column("duplicate").to_pylist() if d)
                    # Output rows keep the block's order: each error names its row.
                    for r, e in zip(rows, verdicts.column("error").to_pylist()):
                        if e is not None:
                            errors += 1
                            error_rows.append((r, e))
                    decided += len(rows)
                    _progress.tell(progress[0], "S4", progress[1], decided)
            del table
            # The bodies are read: their disk goes back before the diff is written.
            (Path(scratch_dir) / "rows.arrow").unlink(missing_ok=True)
            # Read from the scratch index one operation at a time and written to a file: the
            # unit holds the state it was seeded with, never its log nor a second whole state.
            # Written in place on a local store (a temporary name renamed), not written then copied.
            with source[0].writing(log_rel) as log_path:
                log_bytes = scratch.state_diff_file_since(before, live_docs, live_clusters, log_path, ids)
    finally:
        shutil.rmtree(scratch_dir, ignore_errors=True)
    return log_rel, {
        "seed_bytes": seed_bytes,
        "allocations": allocation_arrays(allocations),
        "deleted": deleted,
        "missing": missing,
        "duplicates": duplicates,
        "errors": errors,
        # The first ones only: the driver lists at most MAX_LISTED_ERRORS of the day's.
        "error_rows": sorted(error_rows)[:MAX_LISTED_ERRORS],
    }


def _global(ids: Any, kind: str, scratch_id: int) -> int:
    """The standing id of a scratch page or cluster id (``kind`` ``"page"`` or ``"cluster"``)."""
    return int(ids.global_page(scratch_id) if kind == "page" else ids.global_cluster(scratch_id))


#: Rows a record batch of a unit's rows file holds: what is decompressed at a time to take a
#: block's rows.
ROWS_BATCH = 512

#: Record batches of a unit's rows file kept decompressed (a block of ``UNIT_BLOCK`` rows in
#: input order spans about ``UNIT_BLOCK / ROWS_BATCH`` of them).
ROWS_CACHED = 16


class _UnitRows:
    """A work unit's rows in a compressed Arrow file (``_unit_rows``; HTML compresses about
    four to one: uncompressed, the rows of a 750,000-page unit took 11 GB of disk), taken a
    block at a time: each record batch read and decompressed when a block asks for it, the last
    ``ROWS_CACHED`` kept. Never the whole table in memory nor its chunks joined (Arrow's
    ``Table.take`` joins every chunk of a column first)."""

    def __init__(self, path: Path, sizes: List[int]) -> None:
        import collections

        import numpy as np
        import pyarrow as pa

        self.reader = pa.ipc.open_file(pa.memory_map(str(path), "r"))
        if self.reader.num_record_batches != len(sizes):
            raise neardup.CorruptionError(f"{path} holds {self.reader.num_record_batches} record batches, {len(sizes)} were written")
        self.schema = self.reader.schema
        self.starts = np.cumsum([0] + list(sizes))
        self.cache: "collections.OrderedDict[int, Any]" = collections.OrderedDict()

    def _batch(self, b: int) -> Any:
        if b in self.cache:
            self.cache.move_to_end(b)
            return self.cache[b]
        batch = self.reader.get_batch(b)
        self.cache[b] = batch
        if len(self.cache) > ROWS_CACHED:
            self.cache.popitem(last=False)
        return batch

    def take(self, positions: List[int]) -> Any:
        """The rows at ``positions`` (in that order), as a table of one chunk."""
        import numpy as np
        import pyarrow as pa

        pos = np.asarray(positions, dtype=np.int64)
        order = np.argsort(pos, kind="stable")
        ordered = pos[order]
        which = np.searchsorted(self.starts, ordered, side="right") - 1
        pieces = [self._batch(int(b)).take(pa.array(ordered[which == b] - self.starts[b])) for b in np.unique(which)]
        block = pa.Table.from_batches(pieces, schema=self.schema).combine_chunks()
        back = np.empty_like(order)
        back[order] = np.arange(len(order))
        return block.take(pa.array(back))


def _unit_rows(source: Tuple[Store, str, List[int], List[str]], rows: List[int], path: Path) -> _UnitRows:
    """The fields ``insert_many`` reads of the day's ``rows`` (sorted), read from S1's parts in
    the store a part at a time and written, in that order, to the Arrow file ``path``
    (zstd-compressed record batches of ``ROWS_BATCH`` rows), returned as a ``_UnitRows``:
    ``id`` (the key), ``host``, ``time``, ``html``, ``text``, ``main_text`` (S1's extraction,
    which ``insert_many`` takes instead of extracting the page again; null in a part an older
    S1 wrote) and ``is_html``. The unit's memory holds one part's rows, not the unit's."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    store, rel, offsets, parts = source
    want = np.asarray(rows, dtype=np.int64)
    cols = ["file", "row", "key", "host", "time", "is_html", "html", "text", "main_text"]
    # 64-bit offsets: a unit's bodies may pass the 2 GiB a binary column holds (a million-page
    # day did).
    schema = pa.schema(
        [
            pa.field("id", pa.string()),
            pa.field("host", pa.string()),
            pa.field("time", pa.int64()),
            pa.field("html", pa.large_binary()),
            pa.field("text", pa.large_string()),
            pa.field("main_text", pa.large_binary()),
            pa.field("is_html", pa.bool_()),
        ]
    )
    n = 0
    last = -1
    sizes: List[int] = []
    options = pa.ipc.IpcWriteOptions(compression="zstd")
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, schema, options=options) as out:
        for name in parts:
            try:
                t = pq.read_table(store.path(f"{rel}/{name}"), columns=cols, filesystem=store.fs)
            except pa.ArrowInvalid:
                # A part S1 wrote before it kept the main texts (a merge resumed after an
                # upgrade): its pages are extracted again.
                t = pq.read_table(store.path(f"{rel}/{name}"), columns=cols[:-1], filesystem=store.fs)
                t = t.append_column("main_text", pa.nulls(t.num_rows, pa.binary()))
            day_rows = np.asarray(offsets, dtype=np.int64)[t.column("file").to_numpy()] + t.column("row").to_numpy()
            keep = np.isin(day_rows, want)
            kept = day_rows[keep]
            # The parts hold the day's rows in order (``_Rows`` checks it): the file is sorted.
            if len(kept) and (kept[0] <= last or (np.diff(kept) <= 0).any()):
                raise neardup.CorruptionError(f"the signatures of {store.path(rel)} do not hold the day's rows in order")
            last = int(kept[-1]) if len(kept) else last
            t = t.filter(pa.array(keep)).select(["key", "host", "time", "html", "text", "main_text", "is_html"])
            for batch in t.rename_columns(schema.names).cast(schema).to_batches(max_chunksize=ROWS_BATCH):
                out.write_batch(batch)
                sizes.append(batch.num_rows)
            n += t.num_rows
            del t
    if n != len(rows):
        raise neardup.CorruptionError(f"the signatures of {store.path(rel)} lack rows of a work unit")
    return _UnitRows(path, sizes)
