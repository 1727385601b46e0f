"""neardup: an embedded near-duplicate index for web pages.

A crawler or a data pipeline hands it every page; neardup answers whether the page is a near
duplicate of a page it already holds, of which cluster, with what resemblance and containment,
and keeps its clusters right as pages come and go. The index lives in a directory (RocksDB).

>>> import neardup
>>> ix = neardup.Index("idx/")                                  # doctest: +SKIP
>>> v = ix.insert("https://a.example/1", html=b"<html>...")     # doctest: +SKIP
>>> v.duplicate, v.cluster, v.representative                    # doctest: +SKIP

Batches (``Index.insert_many``, ``Index.query_many``, ``signatures_table``) take Arrow tables,
record batches, readers (anything with ``__arrow_c_stream__``) or iterables of dicts with the
columns of the command line's JSONL input: ``id`` (or ``url``), ``host``, ``time``, and ``html``
or ``text``. They return ``pyarrow.Table`` objects in input order, with an ``error`` column: a
bad page does not stop the batch.

Every call into the library releases the GIL, so Python threads using one index, or computing
signatures, run in parallel. An ``Index`` cannot be pickled: open it where it is used (inside a
Ray actor, in a stage's ``setup()``).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from . import _errors, _neardup
from ._errors import (
    AlreadyOpenError,
    BinaryPageError,
    CheckFailedError,
    CorruptionError,
    Error,
    FullError,
    IncompatibleConfigError,
    IncompatibleFormatError,
    InvalidArgumentError,
    IoError,
    NotFoundError,
    PageTooLargeError,
    PoisonedError,
    ReadOnlyError,
    StorageError,
    TextUnavailableError,
    WrongProcessError,
)
from ._neardup import (
    Deletion,
    Layout,
    PageInfo,
    Signatures,
    Similarity,
    Verdict,
    combine_seed_logs,
    combine_unit_logs,
    host_of,
    log_counters,
    signatures,
    state_diff,
    verify,
)

__version__: str = _neardup.__version__

__all__ = [
    "Index",
    "InsertionSession",
    "Verdict",
    "Deletion",
    "PageInfo",
    "Signatures",
    "Similarity",
    "signatures",
    "signatures_table",
    "state_diff",
    "Layout",
    "combine_seed_logs",
    "combine_unit_logs",
    "log_counters",
    "verify",
    "host_of",
    *_errors.__all__,
]

#: Pages handed to the library's ``insert_batch`` at a time (as ``neardup ingest --batch``).
DEFAULT_BATCH_SIZE = 4096

# A progress argument: True (tqdm when installed), False/None (none), or a callable
# ``progress(done, total)`` (``total`` is None when the input's length is unknown).
Progress = Union[bool, None, Callable[[int, Optional[int]], Any]]


def _pa():
    try:
        import pyarrow
    except ImportError as e:  # pragma: no cover - pyarrow is a dependency of the wheel
        raise ImportError("neardup's batch calls need pyarrow: pip install pyarrow") from e
    return pyarrow


class _Chunk:
    """One chunk of input rows as columns; ``bad[i]`` is why row ``i`` cannot be a page."""

    __slots__ = ("keys", "hosts", "times", "bodies", "is_html", "bad", "body_bad")

    def __init__(self) -> None:
        self.keys: List[Optional[str]] = []
        self.hosts: List[str] = []
        self.times: List[int] = []
        self.bodies: List[Any] = []
        self.is_html = True
        self.bad: List[Optional[str]] = []
        # Why the row's body cannot be used (queries need no key, only a body).
        self.body_bad: List[Optional[str]] = []

    def __len__(self) -> int:
        return len(self.keys)


def _row(chunk: _Chunk, id_: Any, url: Any, host: Any, time: Any, html: Any, text: Any) -> None:
    """Adds a row, read as the command line reads a JSONL record: the key is ``id``, else
    ``url``; the host is ``host``, else the URL's host; the time 0 when missing; the body
    ``html``, else ``text``."""
    key = id_ if id_ else (url if url else None)
    bad = None
    if key is None:
        bad = "no `id` (or `url`)"
    elif not isinstance(key, str):
        bad = f"the key must be a string, not {type(key).__name__}"
        key = str(key)
    elif html is None and text is None:
        bad = f"page {key} has neither `html` nor `text`"
    if host is None:
        host = host_of(url) if isinstance(url, str) and url else ""
    elif not isinstance(host, str):
        bad = bad or f"the host must be a string, not {type(host).__name__}"
        host = ""
    chunk.keys.append(key)
    chunk.hosts.append(host)
    try:
        t = int(time) if time is not None else 0
    except (TypeError, ValueError):
        bad, t = bad or f"the time must be an integer (Unix seconds), not {time!r}", 0
    chunk.times.append(t)
    body_bad = None
    if html is not None:
        body, html_ = html, True
        if not isinstance(html, (bytes, bytearray, str)):
            body_bad, body = f"`html` must be bytes or str, not {type(html).__name__}", b""
    else:
        body, html_ = text, False
        if text is None:
            body_bad, body = "the row has neither `html` nor `text`", ""
        elif not isinstance(text, str):
            body_bad, body = f"`text` must be a str, not {type(text).__name__}", ""
    chunk.bodies.append((body, html_))
    chunk.body_bad.append(body_bad)
    bad = bad or body_bad
    chunk.bad.append(bad)


def _chunks(pages: Any, size: int) -> Iterator[_Chunk]:
    """Input rows in chunks of at most ``size``: from Arrow (tables, batches, readers, anything
    with ``__arrow_c_stream__`` or ``__arrow_c_array__``) or from an iterable of dicts."""
    size = max(1, int(size))
    batches = _arrow_batches(pages)
    if batches is not None:
        # Chunks of `size` rows whatever the sizes of the record batches, so that a batch of
        # the library holds the pages the command line's would.
        chunk = _Chunk()
        for batch in batches:
            names = set(batch.schema.names)
            if not ({"html", "text"} & names):
                raise InvalidArgumentError("the batch has neither an `html` nor a `text` column")
            if not ({"id", "url"} & names):
                raise InvalidArgumentError("the batch has neither an `id` nor a `url` column")
            off = 0
            while off < batch.num_rows:
                part = batch.slice(off, size - len(chunk))
                off += part.num_rows
                n = part.num_rows

                def col(name: str) -> List[Any]:
                    return part.column(name).to_pylist() if name in names else [None] * n

                for row in zip(col("id"), col("url"), col("host"), col("time"), col("html"), col("text")):
                    _row(chunk, *row)
                if len(chunk) >= size:
                    yield chunk
                    chunk = _Chunk()
        if len(chunk):
            yield chunk
        return
    chunk = _Chunk()
    for d in pages:
        if not isinstance(d, dict):
            raise TypeError(f"pages must be Arrow data or dicts, not {type(d).__name__}")
        _row(chunk, d.get("id"), d.get("url"), d.get("host"), d.get("time"), d.get("html"), d.get("text"))
        if len(chunk) >= size:
            yield chunk
            chunk = _Chunk()
    if len(chunk):
        yield chunk


def _arrow_batches(pages: Any) -> Optional[Iterator[Any]]:
    """The record batches of Arrow input, or None when ``pages`` is not Arrow data."""
    if isinstance(pages, (list, tuple)) or isinstance(pages, dict):
        return None
    arrowish = any(
        hasattr(pages, a) for a in ("__arrow_c_stream__", "__arrow_c_array__", "to_batches", "read_next_batch")
    )
    if not arrowish:
        return None
    pa = _pa()
    if isinstance(pages, pa.Table):
        return iter(pages.to_batches())
    if isinstance(pages, pa.RecordBatch):
        return iter([pages])
    if isinstance(pages, pa.RecordBatchReader):
        return iter(pages)
    if hasattr(pages, "__arrow_c_stream__"):
        return iter(pa.RecordBatchReader.from_stream(pages))
    return iter([pa.record_batch(pages)])


def _length(pages: Any) -> Optional[int]:
    for attr in ("num_rows",):
        n = getattr(pages, attr, None)
        if isinstance(n, int):
            return n
    try:
        return len(pages)
    except TypeError:
        return None


class _Bar:
    """Progress: tqdm when asked for (``True``) and installed, a callback, or nothing."""

    def __init__(self, progress: Progress, total: Optional[int], what: str) -> None:
        self.done = 0
        self.total = total
        self.callback: Optional[Callable[[int, Optional[int]], Any]] = None
        self.tqdm = None
        if callable(progress):
            self.callback = progress
        elif progress:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                self.tqdm = tqdm(total=total, unit="page", desc=what)

    def set(self, done: int) -> None:
        if done <= self.done:
            return
        if self.tqdm is not None:
            self.tqdm.update(done - self.done)
        self.done = done
        if self.callback is not None:
            self.callback(done, self.total)

    def close(self) -> None:
        if self.tqdm is not None:
            self.tqdm.close()


_VERDICT_TYPES = None


def _verdict_schema():
    pa = _pa()
    global _VERDICT_TYPES
    if _VERDICT_TYPES is None:
        _VERDICT_TYPES = [
            ("key", pa.string()),
            ("duplicate", pa.bool_()),
            ("doc", pa.uint32()),
            ("cluster", pa.uint32()),
            ("representative", pa.string()),
            ("similar_to", pa.string()),
            ("resemble", pa.float64()),
            ("contain", pa.float64()),
            ("exact", pa.bool_()),
            ("identical_to", pa.string()),
            ("text_chars", pa.uint32()),
            ("replaced", pa.bool_()),
            ("unchanged", pa.bool_()),
            ("no_main_text", pa.bool_()),
            ("candidates", pa.uint64()),
            ("verified", pa.uint64()),
            ("error", pa.string()),
            ("error_type", pa.string()),
        ]
    return pa.schema(_VERDICT_TYPES)


def _empty_columns() -> Dict[str, List[Any]]:
    return {name: [] for name in _verdict_schema().names}


def _error_columns(n: int) -> Dict[str, List[Any]]:
    return {name: [None] * n for name in _verdict_schema().names}


def _flag_bad(cols: Dict[str, List[Any]], bad: List[Optional[str]]) -> List[int]:
    """Writes the error of each row whose input was unusable; returns the other rows."""
    good = []
    for i, b in enumerate(bad):
        if b is not None:
            cols["error"][i] = f"invalid argument: {b}"
            cols["error_type"][i] = "InvalidArgumentError"
        else:
            good.append(i)
    return good


def _verdict_table(
    pages: Any,
    batch_size: int,
    progress: Progress,
    label: str,
    bad_of: Callable[[_Chunk], List[Optional[str]]],
    fill: Callable[[_Chunk, Dict[str, List[Any]], List[int], "_Bar"], None],
) -> Any:
    """The verdict columns of ``pages``, chunk after chunk, as one ``pyarrow.Table`` in input
    order: the rows ``bad_of(chunk)`` marks get their error, ``fill(chunk, cols, good, bar)``
    writes the others."""
    pa = _pa()
    out = _empty_columns()
    bar = _Bar(progress, _length(pages), label)
    try:
        for chunk in _chunks(pages, batch_size):
            cols = _error_columns(len(chunk))
            cols["key"] = list(chunk.keys)
            base = bar.done
            fill(chunk, cols, _flag_bad(cols, bad_of(chunk)), bar)
            bar.set(base + len(chunk))
            for name in out:
                out[name].extend(cols[name])
    finally:
        bar.close()
    return pa.table(out, schema=_verdict_schema())


def _insert_groups(chunk: _Chunk, good: List[int]) -> List[Tuple[bool, List[int]]]:
    """The calls of the library's batch insert that ``insert_many`` makes for the good rows of a
    chunk, in order: runs that end where a key comes again (as the command line cuts its
    batches), each cut into groups of one body kind. Each group is ordered on its own."""
    runs: List[List[int]] = []
    seen: set = set()
    for i in good:
        k = chunk.keys[i]
        if k in seen or not runs:
            runs.append([])
            seen = set()
        seen.add(k)
        runs[-1].append(i)
    return [group for run in runs for group in _body_groups(chunk, run)]


def _body_groups(chunk: _Chunk, rows: List[int]) -> List[Tuple[bool, List[int]]]:
    """``rows`` split into runs of one body kind (HTML or text), in order."""
    out: List[Tuple[bool, List[int]]] = []
    for i in rows:
        kind = chunk.bodies[i][1]
        if out and out[-1][0] == kind:
            out[-1][1].append(i)
        else:
            out.append((kind, [i]))
    return out


def _merge(into: Dict[str, List[Any]], rows: List[int], cols: Dict[str, List[Any]]) -> None:
    for name, values in cols.items():
        target = into[name]
        for i, v in zip(rows, values):
            target[i] = v


class Index(_neardup._Index):
    """An open neardup index: ``Index(path, *, read_only=False, **options)``.

    ``path`` is a directory: the index is created there when it holds none (unless
    ``create_if_missing=False``). ``options`` are the fields of the library's ``IndexOptions``:
    ``representative`` (``"first_seen"``, ``"earliest_time"``, ``"longest_text"``),
    ``store_texts``, ``sync_writes``, ``simhash_max_distance``, ``min_text_width``,
    ``max_clusters_verified``, ``heading_codes``, ``posting_filter_bytes``,
    ``create_if_missing``, and the nested ``signature``, ``verify``, ``frequent`` and ``chrome``
    given as dicts of their fields (in part); ``method="shingle"`` is short for
    ``signature={"method": "shingle"}``. An unknown name raises ``TypeError``.

    Without options an existing index opens with its stored configuration (as the command
    line opens it); with options, the stored parts (signature options, simhash distance,
    representative policy, ``store_texts``) must match (``IncompatibleConfigError``).
    ``read_only=True`` opens an index or a checkpoint read-only beside a writer.

    One handle per index per process (``AlreadyOpenError``); ``close()`` it, or use it as a
    context manager, to open it again. Every method releases the GIL while the library works.
    """

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{len(self)} pages"
        return f"neardup.Index({str(self.path)!r}, {state})"

    def __reduce__(self) -> Any:
        raise TypeError(
            "neardup.Index cannot be pickled: open the index inside the actor, or in the stage's setup()"
        )

    def __reduce_ex__(self, protocol: Any) -> Any:
        return self.__reduce__()

    def insert_many(
        self,
        pages: Any,
        *,
        order: str = "fingerprints",
        order_scope: str = "window",
        batch_size: int = DEFAULT_BATCH_SIZE,
        window: int = 1024,
        group: int = 1024,
        progress: Progress = True,
    ) -> Any:
        """Inserts many pages through the library's batch ingest, as ``neardup ingest`` does.

        ``pages``: an Arrow table, record batch or reader (or anything with
        ``__arrow_c_stream__``), or an iterable of dicts, with the columns ``id`` (or ``url``),
        ``host`` (default: the URL's host), ``time`` (Unix seconds, default 0), and ``html``
        (bytes or str) or ``text`` (str).

        ``order``: ``"fingerprints"`` (descending fingerprint count: large clusters form first)
        or ``"input"`` (the order given). ``order_scope``: over which pages the fingerprint order
        sorts, ``"window"`` (each window of ``window`` pages, as ``neardup ingest``) or
        ``"batch"`` (each whole batch, as ``neardup ingest --order-scope batch``: every page's
        signatures are held at once). Pages go to the library ``batch_size`` at a time (a key
        met again within a batch starts the next one, so the later page replaces the earlier,
        in order), ``window`` pages prepared together and ``group`` pages per committed write.

        ``progress``: True for a tqdm bar when tqdm is installed, a callable
        ``progress(done, total)``, or False.

        Returns a ``pyarrow.Table`` with one row per input row, in input order: ``key``, the
        verdict's fields (``duplicate``, ``doc``, ``cluster``, ``representative``,
        ``similar_to``, ``resemble``, ``contain``, ``exact``, ...), and ``error`` /
        ``error_type`` (the message and the exception class name) for a row that could not be
        inserted; its other columns are then null. Errors that stop the batch (storage) raise.
        """
        if order not in ("fingerprints", "input"):
            raise InvalidArgumentError(f'order must be "fingerprints" or "input", not {order!r}')
        if order_scope not in ("window", "batch"):
            raise InvalidArgumentError(f'order_scope must be "window" or "batch", not {order_scope!r}')

        def fill(chunk: _Chunk, cols: Dict[str, List[Any]], good: List[int], bar: _Bar) -> None:
            for is_html, rows in _insert_groups(chunk, good):
                start = bar.done

                def tick(done: int, total: int, start: int = start) -> None:
                    bar.set(start + done)

                res = self._insert_batch(
                    [chunk.keys[i] for i in rows],
                    [chunk.hosts[i] for i in rows],
                    [chunk.times[i] for i in rows],
                    [chunk.bodies[i][0] for i in rows],
                    is_html,
                    order,
                    order_scope,
                    window,
                    group,
                    tick,
                )
                _merge(cols, rows, res)
                bar.set(start + len(rows))

        return _verdict_table(pages, batch_size, progress, "neardup insert", lambda c: c.bad, fill)

    def query_many(
        self,
        pages: Any,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        progress: Progress = False,
    ) -> Any:
        """The verdicts ``insert_many`` would give, computed in parallel, nothing stored.

        ``pages`` as for ``insert_many``. The key is optional: a page with its key is judged as
        ``query(..., key=, host=)`` judges it, the site chrome learned for its host (``host``,
        else the URL's host) dropped as an insert would drop it; a page without one on its
        content alone, as ``query(html)``. Returns a ``pyarrow.Table`` in input order with
        ``key`` (null when not given), the verdict's fields and ``error`` / ``error_type``.
        """
        def fill(chunk: _Chunk, cols: Dict[str, List[Any]], good: List[int], bar: _Bar) -> None:
            keyed = [i for i in good if chunk.keys[i] is not None]
            unkeyed = [i for i in good if chunk.keys[i] is None]
            for is_html, rows in _body_groups(chunk, keyed):
                res = self._query_pages(
                    [chunk.keys[i] for i in rows],
                    [chunk.hosts[i] for i in rows],
                    [chunk.times[i] for i in rows],
                    [chunk.bodies[i][0] for i in rows],
                    is_html,
                )
                _merge(cols, rows, res)
            for is_html, rows in _body_groups(chunk, unkeyed):
                res = self._query_batch([chunk.bodies[i][0] for i in rows], is_html)
                _merge(cols, rows, res)

        return _verdict_table(
            pages, batch_size, progress, "neardup query", lambda c: c.body_bad, fill
        )

    def insertion_session(
        self,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        order: str = "fingerprints",
        order_scope: str = "window",
        progress: Progress = False,
    ) -> "InsertionSession":
        """A buffer of single inserts flushed through ``insert_many`` every ``batch_size``
        pages (and when the ``with`` block ends), for a producer that yields pages one at a
        time::

            with ix.insertion_session(batch_size=4096) as s:
                for key, html in crawl:
                    s.insert(key, html=html)
            verdicts = s.results()          # one pyarrow.Table, in insertion order
        """
        return InsertionSession(
            self, batch_size=batch_size, order=order, order_scope=order_scope, progress=progress
        )

    def export(self) -> Any:
        """Every page's key and the key of the page it was judged a near duplicate of (its
        cluster's representative when that page is gone; itself when it leads its cluster), in
        id order: a ``pyarrow.Table(key: string, representative: string)``, the rows
        ``neardup export`` writes."""
        pa = _pa()
        keys, reps = self._export()
        return pa.table(
            {"key": pa.array(keys, pa.string()), "representative": pa.array(reps, pa.string())}
        )

    def export_clusters(self) -> Any:
        """Every cluster, in id order: a ``pyarrow.Table(cluster: uint32, representative:
        string, members: list<string>)``, the lines of ``neardup export --clusters``."""
        pa = _pa()
        ids, reps, members = self._export_clusters()
        return pa.table(
            {
                "cluster": pa.array(ids, pa.uint32()),
                "representative": pa.array(reps, pa.string()),
                "members": pa.array(members, pa.list_(pa.string())),
            }
        )


class InsertionSession:
    """Buffers ``insert`` calls and inserts them ``batch_size`` at a time through the batch
    path (see ``Index.insertion_session``). Pages are in the index only once flushed."""

    def __init__(
        self, index: Index, *, batch_size: int, order: str, order_scope: str, progress: Progress
    ) -> None:
        self.index = index
        self.batch_size = max(1, int(batch_size))
        self.order = order
        self.order_scope = order_scope
        self.progress = progress
        self._rows: List[Dict[str, Any]] = []
        self._tables: List[Any] = []

    def __enter__(self) -> "InsertionSession":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.flush()

    def insert(
        self,
        key: str,
        html: Any = None,
        text: Optional[str] = None,
        *,
        host: Optional[str] = None,
        time: int = 0,
    ) -> None:
        """Adds a page (as ``Index.insert`` takes it); flushes when the buffer is full."""
        if host is None:
            host = host_of(key) if "://" in key else ""
        self._rows.append({"id": key, "host": host, "time": time, "html": html, "text": text})
        if len(self._rows) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        """Inserts the buffered pages now."""
        if self._rows:
            rows, self._rows = self._rows, []
            self._tables.append(
                self.index.insert_many(
                    rows,
                    order=self.order,
                    order_scope=self.order_scope,
                    batch_size=self.batch_size,
                    progress=self.progress,
                )
            )

    def results(self) -> Any:
        """The verdicts of the pages flushed so far, one ``pyarrow.Table`` in insertion order
        (the columns of ``insert_many``)."""
        pa = _pa()
        if not self._tables:
            return _verdict_schema().empty_table()
        return pa.concat_tables(self._tables)


def signatures_table(
    batch: Any,
    html_col: Optional[str] = "html",
    text_col: Optional[str] = None,
    **config: Any,
) -> Any:
    """The signatures of every row of an Arrow batch (a table, a record batch, a dict of
    columns, or a pandas DataFrame), computed in parallel with the GIL released: for Ray Data's
    ``map_batches(neardup.signatures_table, batch_format="pyarrow")`` or Spark's
    ``mapInArrow``.

    The body is the ``html_col`` column (bytes or str), or with ``text_col`` the text column.
    Returns the input's columns followed by ``text`` (normalized main text), ``simhash``
    (uint64), ``content_hash`` (fixed_size_binary(16), big-endian), ``fingerprints`` and
    ``sketch`` (list<fixed_size_binary(16)>), ``codes`` (list<uint32>), ``posting_keys`` (binary:
    the 9-byte keys the page is filed under, content key first, concatenated; what a distributed
    merge sends to the key partitions) and ``error`` (null, or why the row has no signatures).
    ``config`` overrides signature options as for ``signatures()``.
    """
    pa = _pa()
    if isinstance(batch, dict):
        table = pa.table(batch)
    elif isinstance(batch, (pa.Table, pa.RecordBatch)):
        table = batch
    elif hasattr(batch, "__arrow_c_stream__") or hasattr(batch, "__arrow_c_array__"):
        table = pa.table(batch)
    else:
        table = pa.Table.from_pandas(batch, preserve_index=False)
    if text_col is not None:
        col, is_html = text_col, False
    elif html_col is not None:
        col, is_html = html_col, True
    else:
        raise InvalidArgumentError("give html_col or text_col")
    if col not in table.schema.names:
        raise InvalidArgumentError(f"the batch has no column {col!r}")
    bodies = table.column(col).to_pylist()
    c = _neardup._signatures_columns(bodies, is_html, config or None)
    n = len(bodies)
    new = {
        "text": pa.array(c["text"], pa.string()),
        "simhash": pa.array(c["simhash"], pa.uint64()),
        "content_hash": pa.array(c["content_hash"], pa.binary(16)),
        "fingerprints": _packed_list(pa, c["fingerprints"], n),
        "sketch": _packed_list(pa, c["sketch"], n),
        "codes": pa.array(c["codes"], pa.list_(pa.uint32())),
        "posting_keys": pa.array(c["posting_keys"], pa.binary()),
        "error": pa.array(c["error"], pa.string()),
    }
    names = list(table.schema.names)
    arrays = [table.column(i) for i in range(len(names))]
    for name, arr in new.items():
        if name in names:
            arrays[names.index(name)] = arr
        else:
            names.append(name)
            arrays.append(arr)
    if isinstance(table, pa.RecordBatch):
        return pa.RecordBatch.from_arrays(arrays, names=names)
    return pa.Table.from_arrays(arrays, names=names)


def _packed_list(pa: Any, packed: List[Optional[bytes]], n: int) -> Any:
    """``list<fixed_size_binary(16)>`` from each row's 16-byte values concatenated (None: a
    null row), without a Python object per value."""
    offsets = [0]
    for p in packed:
        offsets.append(offsets[-1] + (len(p) // 16 if p is not None else 0))
    values = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(16), offsets[-1], [None, pa.py_buffer(b"".join(p for p in packed if p is not None))]
    )
    mask = pa.array([p is None for p in packed], pa.bool_())
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values, mask=mask)
