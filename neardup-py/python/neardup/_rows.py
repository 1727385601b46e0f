"""The rows of the batch calls' input, read as the command line reads its JSONL records.

``Index.insert_many`` and ``Index.query_many`` take Arrow data (tables, record batches, readers,
anything with ``__arrow_c_stream__`` or ``__arrow_c_array__``) or iterables of dicts with the
columns ``id`` (or ``url``), ``host``, ``time``, and ``html`` or ``text`` (SCALEOUT §3). Here they
become chunks of columns, each row checked (a bad row is an error row, not an error of the
batch), and the good rows of a chunk are cut into the library's batch-insert calls as the command
line cuts them. The daily merge on Ray (``neardup.ray``) reads a day's rows with the same code, so
that its work units make the calls one machine makes (SCALEOUT §5 S4).
"""

from __future__ import annotations

from typing import Any, Iterator, List, Optional, Tuple

from ._errors import InvalidArgumentError, InvalidTypeError
from ._neardup import host_of


def import_pyarrow():
    """pyarrow, or an ImportError that says how to install it."""
    try:
        import pyarrow
    except ImportError as e:  # pragma: no cover - pyarrow is a dependency of the wheel
        raise ImportError("neardup's batch calls need pyarrow: pip install pyarrow") from e
    return pyarrow


class Chunk:
    """One chunk of input rows as columns; ``bad[i]`` is why row ``i`` cannot be a page."""

    __slots__ = ("keys", "hosts", "times", "bodies", "is_html", "bad", "body_bad", "mains")

    def __init__(self) -> None:
        self.keys: List[Optional[str]] = []
        self.hosts: List[str] = []
        self.times: List[int] = []
        self.bodies: List[Any] = []
        self.is_html = True
        self.bad: List[Optional[str]] = []
        # Why the row's body cannot be used (queries need no key, only a body).
        self.body_bad: List[Optional[str]] = []
        # The row's main text extracted before (``main_text``: bytes of
        # ``signatures_table(..., main_text=True)``), None to extract it from the body.
        self.mains: List[Any] = []

    def __len__(self) -> int:
        return len(self.keys)


def _row(chunk: Chunk, id_: Any, url: Any, host: Any, time: Any, html: Any, text: Any, main: Any = None) -> None:
    """Adds a row, read as the command line reads a JSONL record: the key is ``id``, else
    ``url``; the host is ``host``, else the URL's host; the time 0 when missing; the body
    ``html``, else ``text``; ``main`` its ``main_text`` (checked by the library)."""
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
    chunk.mains.append(main)
    bad = bad or body_bad
    chunk.bad.append(bad)


def chunks(pages: Any, size: int) -> Iterator[Chunk]:
    """Input rows in chunks of at most ``size``: from Arrow (tables, batches, readers, anything
    with ``__arrow_c_stream__`` or ``__arrow_c_array__``) or from an iterable of dicts."""
    size = max(1, int(size))
    batches = _arrow_batches(pages)
    if batches is not None:
        # Chunks of `size` rows whatever the sizes of the record batches, so that a batch of
        # the library holds the pages the command line's would.
        chunk = Chunk()
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

                rows = zip(col("id"), col("url"), col("host"), col("time"), col("html"), col("text"), col("main_text"))
                for row in rows:
                    _row(chunk, *row)
                if len(chunk) >= size:
                    yield chunk
                    chunk = Chunk()
        if len(chunk):
            yield chunk
        return
    try:
        rows = iter(pages)
    except TypeError:
        raise InvalidTypeError(
            f"pages must be Arrow data or an iterable of dicts, not {type(pages).__name__}"
        ) from None
    chunk = Chunk()
    for d in rows:
        if not isinstance(d, dict):
            raise InvalidTypeError(f"pages must be Arrow data or dicts, not {type(d).__name__}")
        _row(chunk, d.get("id"), d.get("url"), d.get("host"), d.get("time"), d.get("html"), d.get("text"), d.get("main_text"))
        if len(chunk) >= size:
            yield chunk
            chunk = Chunk()
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
    pa = import_pyarrow()
    if isinstance(pages, pa.Table):
        return iter(pages.to_batches())
    if isinstance(pages, pa.RecordBatch):
        return iter([pages])
    if isinstance(pages, pa.RecordBatchReader):
        return iter(pages)
    if hasattr(pages, "__arrow_c_stream__"):
        return iter(pa.RecordBatchReader.from_stream(pages))
    return iter([pa.record_batch(pages)])



def insert_groups(chunk: Chunk, good: List[int]) -> List[Tuple[bool, List[int]]]:
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
    return [group for run in runs for group in body_groups(chunk, run)]


def body_groups(chunk: Chunk, rows: List[int]) -> List[Tuple[bool, List[int]]]:
    """``rows`` split into runs of one body kind (HTML or text), in order."""
    out: List[Tuple[bool, List[int]]] = []
    for i in rows:
        kind = chunk.bodies[i][1]
        if out and out[-1][0] == kind:
            out[-1][1].append(i)
        else:
            out.append((kind, [i]))
    return out
