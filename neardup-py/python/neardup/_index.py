"""``neardup.Index``, the Python face of the library's index (SCALEOUT §3), and
``InsertionSession``.

The extension (``neardup._neardup._Index``) gives the single-page calls and the batch calls on
columns; here are the context manager, the refusal to be pickled, and the batch calls on Arrow or
dicts: ``insert_many`` and ``query_many`` read their rows with ``neardup._rows`` and give their
verdicts with ``neardup._verdicts``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, Iterator, List, Optional

from . import _neardup
from ._args import batch_order, integer
from ._changes import CHUNK as CHANGES_CHUNK
from ._changes import follow
from ._mapping import IndexItems, IndexKeys, IndexValues, iter_keys
from ._neardup import host_of
from ._rows import Chunk, body_groups, import_pyarrow, insert_groups
from ._verdicts import Bar, Progress, merge_columns, verdict_schema, verdict_table

#: Pages handed to the library's ``insert_batch`` at a time (as ``neardup ingest --batch``).
DEFAULT_BATCH_SIZE = 4096


class Index(_neardup._Index):
    """An open neardup index: ``Index(path, *, read_only=False, **options)``.

    ``path`` is a directory: the index is created there when it holds none (unless
    ``create_if_missing=False``). ``options`` are the fields of the library's ``IndexOptions``:
    ``representative`` (``"first_seen"``, ``"earliest_time"``, ``"longest_text"``),
    ``store_texts``, ``sync_writes``, ``simhash_max_distance``, ``min_text_width``,
    ``max_clusters_verified``, ``heading_codes``, ``block_cache_bytes``, ``write_buffer_bytes``,
    ``max_open_files``, ``sticky_representative`` (under ``"first_seen"``, a representative
    keeps its cluster across a changed recrawl that still verifies against its old version;
    default ``True``), ``reuse_ids``, ``change_retention`` (how many of the last changes the
    change feed keeps; default 100,000),
    ``create_if_missing``, and the nested ``signature``, ``verify``, ``frequent`` and ``chrome``
    given as dicts of their fields (in part); ``method="shingle"`` is short for
    ``signature={"method": "shingle"}``. An unknown name raises ``TypeError``.

    Without options an existing index opens with its stored configuration (as the command
    line opens it); with options, the stored parts (signature options, simhash distance,
    representative policy, ``store_texts``) must match (``IncompatibleConfigError``).
    ``read_only=True`` opens an index or a checkpoint read-only beside a writer.

    One handle per index per process (``AlreadyOpenError``); ``close()`` it, or use it as a
    context manager, to open it again. Every method releases the GIL while the library works.

    An ``Index`` is a read-only ``collections.abc.Mapping`` of key → ``PageInfo`` that also
    deletes: ``len(ix)``, ``key in ix``, ``ix[key]`` and ``del ix[key]`` (``NotFoundError``, a
    ``KeyError``, when absent), ``ix.get(key, default)``, and ``for key in ix``, ``keys()``,
    ``values()``, ``items()`` streaming in page-id order, a chunk at a time (see
    ``neardup._mapping`` for what an iteration sees of writes made during it). Pages are added
    with ``insert``, not ``ix[key] = ...``.
    """

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{len(self)} pages"
        return f"neardup.Index({str(self.path)!r}, {state})"

    def __iter__(self) -> Iterator[str]:
        """The keys, in page-id order, streamed."""
        return iter_keys(self)

    def keys(self) -> IndexKeys:
        """A view of the keys (``len``, ``in``, iteration in page-id order, streamed)."""
        return IndexKeys(self)

    def values(self) -> IndexValues:
        """A view of the pages' ``PageInfo`` (iteration in page-id order, streamed)."""
        return IndexValues(self)

    def items(self) -> IndexItems:
        """A view of ``(key, PageInfo)`` pairs (iteration in page-id order, streamed)."""
        return IndexItems(self)

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
        order: str = "input",
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
        (bytes or str) or ``text`` (str); optionally ``main_text`` (bytes: the page's main text
        as ``signatures_table(..., main_text=True)`` extracted it, so that it is not extracted
        again — the body is still needed, for its size and raw hash; a value that does not
        decode makes an error row).

        ``order``: ``"input"`` (the default: the order given, so the first page given of a
        cluster leads it, what a crawler means by "first seen") or ``"fingerprints"``
        (descending fingerprint count: large clusters form first). ``order_scope``: over which
        pages the fingerprint order sorts, ``"window"`` (each window of ``window`` pages, as
        ``neardup ingest``) or ``"batch"`` (each whole batch, as ``neardup ingest --order
        fingerprints --order-scope batch``: every page's signatures are held at once; refused
        with ``order="input"``, which it would not change). Pages go to the library ``batch_size`` at a time (a key
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
        batch_order(order, order_scope)
        batch_size = integer(batch_size, "batch_size", 1)
        window = integer(window, "window", 1)
        group = integer(group, "group", 1)

        def fill(chunk: Chunk, cols: Dict[str, List[Any]], good: List[int], bar: Bar) -> None:
            for is_html, rows in insert_groups(chunk, good):
                start = bar.done

                def tick(done: int, total: int, start: int = start) -> None:
                    bar.set(start + done)

                mains = [chunk.mains[i] for i in rows]
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
                    mains if any(m is not None for m in mains) else None,
                )
                merge_columns(cols, rows, res)
                bar.set(start + len(rows))

        return verdict_table(pages, batch_size, progress, "neardup insert", lambda c: c.bad, fill)

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
        batch_size = integer(batch_size, "batch_size", 1)

        def fill(chunk: Chunk, cols: Dict[str, List[Any]], good: List[int], bar: Bar) -> None:
            keyed = [i for i in good if chunk.keys[i] is not None]
            unkeyed = [i for i in good if chunk.keys[i] is None]
            for is_html, rows in body_groups(chunk, keyed):
                res = self._query_pages(
                    [chunk.keys[i] for i in rows],
                    [chunk.hosts[i] for i in rows],
                    [chunk.times[i] for i in rows],
                    [chunk.bodies[i][0] for i in rows],
                    is_html,
                )
                merge_columns(cols, rows, res)
            for is_html, rows in body_groups(chunk, unkeyed):
                res = self._query_batch([chunk.bodies[i][0] for i in rows], is_html)
                merge_columns(cols, rows, res)

        return verdict_table(
            pages, batch_size, progress, "neardup query", lambda c: c.body_bad, fill
        )

    def insertion_session(
        self,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        order: str = "input",
        order_scope: str = "window",
        progress: Progress = False,
    ) -> "InsertionSession":
        """A buffer of single inserts flushed through ``insert_many`` every ``batch_size``
        pages (and when the ``with`` block ends), for a producer that yields pages one at a
        time (``order`` and ``order_scope`` as for ``insert_many``: input order by default)::

            with ix.insertion_session(batch_size=4096) as s:
                for key, html in crawl:
                    s.insert(key, html=html)
            verdicts = s.results()          # one pyarrow.Table, in insertion order
        """
        batch_order(order, order_scope)
        return InsertionSession(
            self, batch_size=batch_size, order=order, order_scope=order_scope, progress=progress
        )

    def changes_since(self, seq: int = 0, chunk: int = CHANGES_CHUNK) -> Iterator[Any]:
        """The change feed: every change committed after change ``seq`` (0: from the first),
        in sequence order, as ``neardup.Change`` values — inserts, replaces, new publish times,
        deletes, and what they did to other pages and clusters (``kind``). Streamed ``chunk``
        changes at a time (see ``neardup._changes``), up to the last change committed when the
        call was made. A follower applies each to its copy with ``apply_change`` and keeps the
        last ``seq`` it applied, to resume from.

        Raises ``ChangesTrimmedError`` when changes after ``seq`` were trimmed (past the
        ``change_retention`` option: copy the index again) and ``InvalidArgumentError`` when
        ``seq`` is past the last change — at the call, not at the first ``next``."""
        first, last = self._changes_chunk(seq, chunk)
        return follow(self, first, last, chunk)

    def export(self) -> Any:
        """Every page's key and the key of the page it was judged a near duplicate of (its
        cluster's representative when that page is gone; itself when it leads its cluster), in
        id order: a ``pyarrow.Table(key: string, representative: string)``, the rows
        ``neardup export`` writes."""
        pa = import_pyarrow()
        keys, reps = self._export()
        return pa.table(
            {"key": pa.array(keys, pa.string()), "representative": pa.array(reps, pa.string())}
        )

    def export_clusters(self) -> Any:
        """Every cluster, in id order: a ``pyarrow.Table(cluster: uint64, representative:
        string, members: list<string>)``, the lines of ``neardup export --clusters``."""
        pa = import_pyarrow()
        ids, reps, members = self._export_clusters()
        return pa.table(
            {
                "cluster": pa.array(ids, pa.uint64()),
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
        self.batch_size = integer(batch_size, "batch_size", 1)
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
        pa = import_pyarrow()
        if not self._tables:
            return verdict_schema().empty_table()
        return pa.concat_tables(self._tables)


# A Mapping for isinstance() and for code that takes one; Index defines every method itself.
Mapping.register(Index)
