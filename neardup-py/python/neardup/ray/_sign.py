"""S1 of the daily merge (SCALEOUT §5; issue #34, item 3): the day read and signed in the workers.

Each input file is read by a Ray task (``_read_file``): JSONL (gzip or plain) by the command
line's reader in Rust (``_jsonl_tables``: ``neardup._neardup.JsonlReader``), which also checks
each row as ``insert_many`` checks its rows and hands over a block's columns, no dict a row;
Parquet, and WARC and ARC (the command line's archive reader), with ``_files.records``, each
block checked by ``neardup._rows``. Either way a bad line is an error row with its file and
line, as ``neardup ingest`` skips it. A block of ``BLOCK`` records (64 MiB of content at most
from JSONL and archives) is signed by another task
(``_sign_block``: ``neardup.signatures_table``), which writes it to the batch's ``s1/`` in the
store as ``part-<file>-<first row>.parquet``: the fields ``insert_many`` reads (key, host, time,
body), why the row cannot be a page (``bad``), its file, its row number in the file and its line,
and of a page with a usable body its simhash, number of sentence fingerprints (the whole-batch
order of S4 sorts by it) and main text as extracted (``main_text``: ``MainText::encode``'s
bytes, from ``signatures_table(..., main_text=True)``; S4's scratch inserts take it instead of
extracting the page a second time, the body kept for its size and raw hash); and beside it as ``probes-<file>-<first row>.parquet`` the block's
posting keys and simhashes, each with the key partition that answers it, sorted by partition, a
row group each: S2's shuffle, so that each key partition reads only its own probes (``_plan``).
A row's number in
the day (the order of ``read_day``: file, then line) is its file's offset, from the counts of the
files before it, plus its number in the file. ``s1/files.json`` holds each file's count of rows
and its unreadable records, then ``_DONE`` marks S1 done, so a re-run after a crash does not read
or sign again (SCALEOUT §9). Nothing of a page passes through the driver: it gets the counts.

With a shared store the tasks run anywhere (the input files must be readable there, as the store
is); with the root's, which only the driver's node reaches, on the driver's node.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Tuple

import neardup
from neardup import _neardup
from neardup._rows import Chunk, _row

from . import _files, _progress
from ._runtime import require_ray
from ._store import Store, task

if TYPE_CHECKING:
    from ._driver import MergeReport

#: Records read and signed together (one part file of ``s1/``).
BLOCK = 1024
#: The blocks of one file being signed at once, per CPU of the cluster.
IN_FLIGHT_PER_CPU = 2


def part_schema() -> Any:
    """The columns of a part of ``s1/``."""
    import pyarrow as pa

    return pa.schema(
        [
            ("file", pa.int32()),
            ("row", pa.int64()),
            ("line", pa.int64()),
            ("key", pa.string()),
            ("host", pa.string()),
            ("time", pa.int64()),
            ("is_html", pa.bool_()),
            ("html", pa.binary()),
            ("text", pa.string()),
            ("bad", pa.string()),
            ("signed", pa.bool_()),
            ("simhash", pa.uint64()),
            ("fingerprints", pa.int64()),
            ("main_text", pa.binary()),
        ]
    )


#: The columns of a part that S1 reads (the rest come from signing), besides ``line``.
_READ = ("key", "host", "time", "is_html", "html", "text", "bad", "signed")


def _checked(chunk: Chunk, i: int) -> Tuple[Any, ...]:
    """Row ``i`` of a chunk checked by ``neardup._rows`` as the part's columns ``_READ``."""
    body, is_html = chunk.bodies[i]
    ok = chunk.body_bad[i] is None
    t, why = chunk.times[i], chunk.bad[i]
    if not -(1 << 63) <= t < (1 << 63):
        # The library takes 64-bit times: an error row, not an error of the day.
        t, why = 0, why or f"the time must be an integer (Unix seconds) of 64 bits, not {t}"
    html = (body.encode() if isinstance(body, str) else bytes(body)) if ok and is_html else None
    return chunk.keys[i], chunk.hosts[i], t, is_html, html, body if ok and not is_html else None, why, ok


def _block_table(f: int, start: int, lines: List[int], rows: List[Dict[str, Any]]) -> Any:
    """A block of records (dicts: Parquet and web archives) as the columns of a part
    (signatures to come): each row checked as ``insert_many`` checks it (``neardup._rows``)."""
    chunk = Chunk()
    for d in rows:
        _row(chunk, d.get("id"), d.get("url"), d.get("host"), d.get("time"), d.get("html"), d.get("text"))
    cols: Dict[str, List[Any]] = {name: [] for name in _READ}
    for i in range(len(rows)):
        for name, v in zip(_READ, _checked(chunk, i)):
            cols[name].append(v)
    cols["line"] = list(lines)
    return _table(f, start, cols)


def _table(f: int, start: int, cols: Dict[str, List[Any]]) -> Any:
    """The columns of a part (``line`` and ``_READ`` given, signatures to come) as a table,
    its rows numbered in their file from ``start``."""
    import pyarrow as pa

    n = len(cols["line"])
    return pa.table(
        {
            "file": pa.array([f] * n, pa.int32()),
            "row": pa.array(range(start, start + n), pa.int64()),
            "line": pa.array(cols["line"], pa.int64()),
            "key": pa.array(cols["key"], pa.string()),
            "host": pa.array(cols["host"], pa.string()),
            "time": pa.array(cols["time"], pa.int64()),
            "is_html": pa.array(cols["is_html"], pa.bool_()),
            "html": pa.array(cols["html"], pa.binary()),
            "text": pa.array(cols["text"], pa.string()),
            "bad": pa.array(cols["bad"], pa.string()),
            "signed": pa.array(cols["signed"], pa.bool_()),
            "simhash": pa.nulls(n, pa.uint64()),
            "fingerprints": pa.array([0] * n, pa.int64()),
            "main_text": pa.nulls(n, pa.binary()),
        },
        schema=part_schema(),
    )


def probe_schema() -> Any:
    """The columns of a ``probes-`` file of ``s1/``: a row's posting key (``key``, 9 bytes) or
    simhash (``simhash``), the other null, with the key partition that answers it (``part``;
    a simhash once for each partition its look-up reads) and its row (``file``, ``row``)."""
    import pyarrow as pa

    return pa.schema(
        [
            ("part", pa.int32()),
            ("file", pa.int32()),
            ("row", pa.int64()),
            ("key", pa.binary(9)),
            ("simhash", pa.uint64()),
        ]
    )


def _write_probes(store: Store, path: str, layout: Any, f: int, rows: List[int], keys: List[Optional[bytes]], sims: List[Optional[int]]) -> None:
    """The block's probes routed to the key partitions that answer them (SCALEOUT §4, §5 S2):
    written to ``path`` sorted by partition, a row group each, so that a key partition reads
    its own (a filter on ``part``) and nothing of the others'. S2's shuffle, done as S1 writes."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    per_row = np.fromiter((len(k or b"") // 9 for k in keys), dtype=np.int64, count=len(keys))
    packed = b"".join(k for k in keys if k)
    key_rows = np.repeat(np.asarray(rows, dtype=np.int64), per_row)
    key_parts = np.asarray(layout.posting_parts(packed), dtype=np.int32)
    with_sim = [(r, h) for r, h in zip(rows, sims) if h is not None]
    sim_parts = layout.simhash_parts([h for _, h in with_sim])
    sim_rows = [r for (r, _), ps in zip(with_sim, sim_parts) for _ in ps]
    sim_hashes = [h for (_, h), ps in zip(with_sim, sim_parts) for _ in ps]
    parts = np.concatenate([key_parts, np.asarray([p for ps in sim_parts for p in ps], dtype=np.int32)])
    n_keys = len(key_parts)
    table = pa.table(
        {
            "part": pa.array(parts, pa.int32()),
            "file": pa.array(np.full(len(parts), f, dtype=np.int32)),
            "row": pa.array(np.concatenate([key_rows, np.asarray(sim_rows, dtype=np.int64)])),
            "key": pa.concat_arrays(
                [
                    pa.FixedSizeBinaryArray.from_buffers(pa.binary(9), n_keys, [None, pa.py_buffer(packed)]),
                    pa.nulls(len(sim_rows), pa.binary(9)),
                ]
            ),
            "simhash": pa.array([None] * n_keys + sim_hashes, pa.uint64()),
        },
        schema=probe_schema(),
    )
    table = table.take(pa.array(np.argsort(parts, kind="stable")))
    bounds = np.searchsorted(table.column("part").to_numpy(), np.arange(layout.key_parts + 1))
    with pq.ParquetWriter(path, probe_schema(), filesystem=store.fs) as w:
        for a, b in zip(bounds[:-1], bounds[1:]):
            if b > a:
                w.write_table(table.slice(int(a), int(b - a)), row_group_size=int(b - a))


def read_probes(store: Store, rel: str, names: List[str], part: Optional[int]) -> Any:
    """The probes of S1's ``names`` (``probes-`` files under ``rel``) answered by key partition
    ``part`` (every partition's with None), a row group of each file read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    filters = None if part is None else [("part", "=", part)]
    tables = [pq.read_table(store.path(f"{rel}/{n}"), filters=filters, filesystem=store.fs) for n in names]
    return pa.concat_tables(tables) if tables else probe_schema().empty_table()


def probes_name(part_name: str) -> str:
    """The ``probes-`` file written beside a part of ``s1/``."""
    return "probes-" + part_name[len("part-") :]


def _jsonl_tables(f: int, path: str, max_page_bytes: Optional[int]) -> Iterator[Tuple[Any, List[Tuple[int, str]]]]:
    """File ``f`` of the day, a JSONL file, read by the command line's reader in Rust
    (``neardup._neardup.JsonlReader``; SCALEOUT §5 S1): blocks of up to ``BLOCK`` records, each
    as a part's table (``None`` for a block of no record) with the lines that are no record
    (``(line, reason)``). The reader checks the rows as ``neardup._rows`` does, no dict a row;
    the rare row with fields of other types (a number as key, a time as a string...) is checked
    here by ``neardup._rows`` itself."""
    reader = _neardup.JsonlReader(path, max_page_bytes)
    start = 0
    while (got := reader.next_block(BLOCK)) is not None:
        cols, unreadable, odd = got
        for i, d in odd:
            chunk = Chunk()
            _row(chunk, d.get("id"), d.get("url"), d.get("host"), d.get("time"), d.get("html"), d.get("text"))
            for name, v in zip(_READ, _checked(chunk, 0)):
                cols[name][i] = v
        n = len(cols["line"])
        yield (_table(f, start, cols) if n else None), unreadable
        start += n


def _sign_block(store: Store, rel: str, table: Any, config: Dict[str, Any], layout: Any) -> str:
    """In a Ray task: the posting keys, simhash, sentence-fingerprint count and encoded main text
    of the block's rows with a usable body (HTML and text rows signed apart), the block written as a part of
    ``rel``, named by its file and first row (a retried task writes the same part again), and
    its posting keys and simhashes routed to the key partitions (``_write_probes``), beside it.
    Returns the part's name."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    keys: List[Optional[bytes]] = [None] * table.num_rows
    sims: List[Optional[int]] = [None] * table.num_rows
    counts = [0] * table.num_rows
    mains: List[Optional[bytes]] = [None] * table.num_rows
    signed = table.column("signed").to_pylist()
    is_html = table.column("is_html").to_pylist()
    for col, want in (("html", True), ("text", False)):
        idx = [i for i in range(table.num_rows) if signed[i] and is_html[i] == want]
        if not idx:
            continue
        body = table.column(col).take(pa.array(idx, pa.int64()))
        batch = pa.table({"row": pa.array(idx, pa.int64()), col: body})
        out = neardup.signatures_table(batch, html_col=col if want else None, text_col=None if want else col, main_text=True, **config)
        count = pc.fill_null(pc.list_value_length(out.column("fingerprints")), 0).to_pylist()
        cols = (out.column(c).to_pylist() for c in ("row", "posting_keys", "simhash", "main_text"))
        for i, k, h, m, c in zip(*cols, count):
            keys[i], sims[i], mains[i], counts[i] = k, h, m, c
    table = table.set_column(table.schema.get_field_index("simhash"), "simhash", pa.array(sims, pa.uint64()))
    table = table.set_column(table.schema.get_field_index("fingerprints"), "fingerprints", pa.array(counts, pa.int64()))
    table = table.set_column(table.schema.get_field_index("main_text"), "main_text", pa.array(mains, pa.binary()))
    f, first = table.column("file")[0].as_py(), table.column("row")[0].as_py()
    name = f"part-{f:06}-{first:012}.parquet"
    store.fs.create_dir(store.path(rel), recursive=True)
    _write_probes(store, store.path(f"{rel}/{probes_name(name)}"), layout, f, table.column("row").to_pylist(), keys, sims)
    pq.write_table(table, store.path(f"{rel}/{name}"), filesystem=store.fs)
    return name


def _read_file(
    store: Store, rel: str, f: int, path: str, shown: str, config: Dict[str, Any], in_flight: int, layout: Any, board: Optional[Any] = None
) -> Dict[str, Any]:
    """In a Ray task: file ``f`` of the day read (``_jsonl_tables`` for JSONL, ``_files.records``
    for the others) in blocks of ``BLOCK`` records, each block signed and written by a ``_sign_block`` task, at most ``in_flight`` at
    once. Returns its count of rows (``rows``) and of unreadable records (``unreadable``), the
    first ``MAX_LISTED_ERRORS`` of those as ``{"file", "line", "reason"}`` (``skipped``; ``file``
    is ``shown``, the path as the caller gave it). ``board``: a ``_progress.Board`` told the
    rows read so far."""
    ray = require_ray()
    sign = task(_sign_block, store, num_cpus=1)
    pending: List[Any] = []
    rows = unreadable = 0
    skipped: List[Dict[str, Any]] = []
    lines: List[int] = []
    block: List[Dict[str, Any]] = []

    def submit(table: Any) -> None:
        nonlocal rows, pending
        pending.append(sign.remote(store, rel, table, config, layout))
        rows += table.num_rows
        _progress.tell(board, "S1", f, rows)
        if len(pending) >= in_flight:
            done, pending = ray.wait(pending, num_returns=1)
            ray.get(done)

    def flush() -> None:
        if not block:
            return
        submit(_block_table(f, rows, lines, block))
        block.clear()
        lines.clear()

    def skip(line: int, reason: str) -> None:
        nonlocal unreadable
        unreadable += 1
        if len(skipped) < _files.MAX_LISTED_ERRORS:
            skipped.append({"file": shown, "line": line, "reason": reason})

    if _files.is_parquet(path) or _neardup.archive_format(path) is not None:
        for line, record in _files.records(Path(path), BLOCK, config.get("max_page_bytes")):
            if isinstance(record, str):
                skip(line, record)
                continue
            block.append(record)
            lines.append(line)
            if len(block) >= BLOCK:
                flush()
    else:
        # JSONL: read and checked in Rust, each block a part's table already.
        for table, bad in _jsonl_tables(f, path, config.get("max_page_bytes")):
            for line, reason in bad:
                skip(line, reason)
            if table is not None:
                submit(table)
    flush()
    ray.get(pending)
    return {"rows": rows, "unreadable": unreadable, "skipped": skipped}


def sign(
    files: List[Any],
    store: Store,
    brel: str,
    report: MergeReport,
    config: Dict[str, Any],
    layout: Any,
    board: Optional[Any] = None,
    say: Callable[[str], Any] = lambda line: None,
) -> Dict[str, Any]:
    """S1: the day's files read and signed by Ray tasks, written to ``<brel>/s1/`` in the store
    (nothing done when a run before finished it: ``_DONE``). ``config``: the signature options
    the partitions and scratch indexes use, shorthands resolved. Returns what
    ``s1/files.json`` holds: ``files`` (each file's path and count of rows, in day order),
    ``unreadable`` (the records that could not be read) and ``skipped`` (the first
    ``MAX_LISTED_ERRORS`` of them, in day order). With a ``_progress.Board`` (``board``), the
    rows read so far are said with ``say`` while the files are read."""
    out = f"{brel}/s1"
    if store.exists(f"{out}/_DONE"):
        report["resumed"].append("S1")
        return store.read_json(f"{out}/files.json")
    store.delete(out)
    ray = require_ray()
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    read = task(_read_file, store, num_cpus=0)
    shown = [str(Path(p)) for p in files]
    refs = [
        read.remote(store, out, f, str(Path(p).absolute()), s, config, IN_FLIGHT_PER_CPU * cpus, layout, board)
        for f, (p, s) in enumerate(zip(files, shown))
    ]
    results = ray.get(refs) if board is None else _progress.wait(refs, board, "S1", "S1 reading", None, "rows read", say)
    day = {
        "files": [[s, r["rows"]] for s, r in zip(shown, results)],
        "unreadable": sum(r["unreadable"] for r in results),
        "skipped": [s for r in results for s in r["skipped"]][: _files.MAX_LISTED_ERRORS],
    }
    store.write(f"{out}/files.json", _json(day))
    store.write(f"{out}/_DONE", b"")
    return day


def _json(value: Any) -> bytes:
    import json

    return json.dumps(value).encode()


def part_rows(names: List[str], offsets: List[int]) -> List[Tuple[int, str]]:
    """The parts of ``s1/`` (their names) each with the day's number of its first row, in day
    order (``offsets``: each file's first row in the day)."""
    out = []
    for name in names:
        if name.startswith("part-") and name.endswith(".parquet"):
            f, start = name[5:-8].split("-")
            out.append((offsets[int(f)] + int(start), name))
    return sorted(out)
