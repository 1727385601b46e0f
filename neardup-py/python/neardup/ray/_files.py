"""The files of a distributed index's merges (SCALEOUT §5, §9): the day's input (JSONL, Parquet,
WARC or ARC pages, read a record at a time by ``records`` in S1's tasks; a delete list), and what a batch's directory ``batches/batch=<n>/`` holds, written so that a crash
leaves either the old file or the new one: the manifest of the inputs (a re-run with other inputs
is refused), the logs and their ``_DONE`` marker, the report. Also the lock that keeps a second
driver out, and the export as TSV.
"""

from __future__ import annotations

import bisect
import gzip
import hashlib
import os
import shutil
from array import array
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from neardup import InvalidArgumentError, _neardup

#: A path, as the merge's calls take one.
PathLike = Union[str, "os.PathLike[str]"]


#: At most how many error rows a merge's report lists (``error_rows``); ``errors`` counts them all.
MAX_LISTED_ERRORS = 100


class Day:
    """The records of a day's JSONL files, read as ``neardup ingest`` reads them: ``pages``, one
    dict per JSON object, in file and line order; where each came from (``place``); and the
    records that could not be read (``unreadable``, the first ``limit`` of them in ``skipped`` as
    ``{"file", "line", "reason"}``). Besides the dicts it keeps 4 bytes a page."""

    def __init__(self, limit: Optional[int] = None) -> None:
        self.pages: List[Dict[str, Any]] = []
        self.skipped: List[Dict[str, Any]] = []
        self.unreadable = 0
        self.limit = limit
        self._files: List[str] = []
        self._starts: List[int] = []  # the first page of each file
        self._lines = array("I")  # each page's line

    def place(self, row: int) -> Tuple[str, int]:
        """The file and line (from 1) of page ``row``."""
        f = bisect.bisect_right(self._starts, row) - 1
        return self._files[f], self._lines[row]

    def _skip(self, path: Path, line: int, reason: str) -> None:
        self.unreadable += 1
        if self.limit is None or len(self.skipped) < self.limit:
            self.skipped.append({"file": str(path), "line": line, "reason": reason})

    def read(self, path: Path) -> None:
        self._files.append(str(path))
        self._starts.append(len(self.pages))
        for n, row in records(path):
            if isinstance(row, str):
                self._skip(path, n, row)
            else:
                self.pages.append(row)
                self._lines.append(n)


#: The suffixes of the Parquet files a merge reads (any other file is JSONL, gzip or plain).
PARQUET_SUFFIXES = (".parquet", ".pq")

#: The columns a Parquet file of pages may have, and the Arrow types each takes.
PARQUET_COLUMNS = {
    "id": ("string", "large_string"),
    "url": ("string", "large_string"),
    "host": ("string", "large_string"),
    "time": ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"),
    "html": ("binary", "large_binary", "string", "large_string"),
    "text": ("string", "large_string"),
}


def is_parquet(path: PathLike) -> bool:
    """Whether the merge reads ``path`` as Parquet (by its suffix)."""
    return Path(path).suffix.lower() in PARQUET_SUFFIXES


def parquet_problem(path: PathLike) -> Optional[str]:
    """Why a Parquet file of pages cannot be read (its footer only is read), or ``None``: it
    must be Parquet, with an ``id`` or ``url`` column, an ``html`` or ``text`` column, and the
    columns of ``PARQUET_COLUMNS`` of their types or of nulls only (others are ignored). An empty file (no bytes)
    is a file of no pages."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if os.path.getsize(path) == 0:
        return None
    try:
        schema = pq.read_schema(path)
    except (pa.ArrowException, OSError, ValueError) as e:
        return f"not a Parquet file ({e})"
    names = set(schema.names)
    if not names & {"id", "url"}:
        return f"a Parquet file of pages needs an `id` or `url` column; it has {sorted(names)}"
    if not names & {"html", "text"}:
        return f"a Parquet file of pages needs an `html` or `text` column; it has {sorted(names)}"
    for name, kinds in PARQUET_COLUMNS.items():
        # A column of nulls only (Arrow's ``null`` type) is a column of missing values.
        if name in names and str(schema.field(name).type) not in kinds + ("null",):
            return f"its column `{name}` is {schema.field(name).type}, not one of {', '.join(kinds)}"
    return None


def records(path: Path, block: int = 1024, max_page_bytes: Optional[int] = None) -> Iterator[Tuple[int, Union[Dict[str, Any], str]]]:
    """The records of one input file as ``neardup ingest`` reads them, each as ``(line, row)``
    (``line`` from 1; for Parquet the row's number from 1): ``row`` a dict, or why the line is
    not a page record (a string). JSONL (gzip when its first bytes say so, as ``neardup
    ingest`` reads it), by the command line's reader: blank lines are skipped; a line that is
    not UTF-8, not JSON, not an object, holds a lone surrogate or is longer than the command
    line reads for pages of ``max_page_bytes`` (twice that and 64 KiB) is such a string, and a
    broken gzip stream ends the file with one. Parquet: read ``block`` rows at a time; a file
    ``parquet_problem`` refuses raises ``InvalidArgumentError``. WARC or ARC (gzip or plain, told
    by the content): each response record a row (``id`` the target URI, ``html`` or ``text``
    the decoded payload), ``line`` the record's number; a damaged record, or a page over
    ``max_page_bytes`` (the signature option; its default when ``None``), is such a string."""
    if is_parquet(path):
        problem = parquet_problem(path)
        if problem is not None:
            raise InvalidArgumentError(f"{path}: {problem}")
        if os.path.getsize(path) == 0:
            return
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(path)
        cols = [c for c in PARQUET_COLUMNS if c in pf.schema_arrow.names]
        n = 0
        for batch in pf.iter_batches(batch_size=block, columns=cols):
            for row in batch.to_pylist():
                n += 1
                yield n, row
        return
    if _neardup.archive_format(str(path)) is not None:
        # WARC or ARC: the command line's reader (``neardup._neardup.ArchiveReader``), each
        # record numbered from 1 in place of a line; revisits and records that are no page
        # (requests, metadata, images) hold no row, as ``neardup ingest`` hands them to no
        # library call.
        reader = _neardup.ArchiveReader(str(path), max_page_bytes)
        while (got := reader.next_block(block)) is not None:
            yield from got
        return
    # JSONL: the command line's reader (``neardup._neardup.JsonlReader``, SCALEOUT §5 S1), so
    # that a line is a record or an error as ``neardup ingest`` reads it.
    reader = _neardup.JsonlReader(str(path), max_page_bytes)
    while (got := reader.next_rows(block)) is not None:
        yield from got


def _parse(raw: bytes) -> Union[Dict[str, Any], str]:
    """A JSONL line as ``records`` reads it: a dict, or why it is not a page record (the CLI's
    reasons, read by its reader)."""
    return _neardup.JsonlReader.parse(raw)


def read_day(files: Sequence[PathLike], limit: Optional[int] = MAX_LISTED_ERRORS) -> Day:
    """The day's records of JSONL files (gzip or plain) or Parquet files (``records``), on
    this process: what S1's tasks read, file by file. A record that cannot be read never stops
    it (see ``Day``); a Parquet file that is not one of pages raises ``InvalidArgumentError``."""
    day = Day(limit)
    for f in files:
        day.read(Path(f))
    return day


def read_pages(files: Sequence[PathLike], skipped: Optional[List[Dict[str, Any]]] = None) -> List[Dict[str, Any]]:
    """The pages of JSONL files (gzip or plain) or Parquet files (``.parquet``, ``.pq``; see
    ``records``), one dict per line or row with the CLI's fields:
    ``id`` (or ``url``), ``host``, ``time``, ``html`` or ``text``. Blank lines are skipped.

    A line that is not UTF-8, not JSON or not a JSON object (or a broken gzip stream) is read as
    ``neardup ingest`` reads it: with ``skipped`` (a list) it is skipped and appended there as
    ``{"file", "line", "reason"}``; without, it raises ``InvalidArgumentError`` naming the file and
    line. A row without a usable key or body is returned: ``insert_many`` and the merge report it
    as an error row."""
    day = read_day(files, limit=None)
    if skipped is None:
        if day.skipped:
            s = day.skipped[0]
            raise InvalidArgumentError(f"{s['file']}:{s['line']}: {s['reason']}")
    else:
        skipped.extend(day.skipped)
    return day.pages


def read_key_list(path: Optional[PathLike]) -> List[str]:
    """The keys of a delete list as ``neardup ingest --delete-list`` reads it: one a line,
    blank lines and lines starting with ``#`` skipped. A line that is not UTF-8 raises
    ``InvalidArgumentError`` naming the file and line."""
    return [] if path is None else list(key_lines(path))


def key_lines(path: PathLike) -> Iterator[str]:
    """The keys of a delete list, read one line at a time (as ``read_key_list``)."""
    p = Path(path)
    opener = gzip.open if p.suffix == ".gz" else open
    with opener(p, "rb") as fh:  # type: ignore[operator]
        for n, raw in enumerate(fh, 1):
            try:
                k = raw.decode("utf-8").strip()
            except UnicodeDecodeError as e:
                # Unlike a page, a key of the delete list is not skipped: the day would keep a
                # page it was told to delete.
                raise InvalidArgumentError(f"{p}:{n}: the delete list's line is not UTF-8 ({e})") from None
            if k and not k.startswith("#"):
                yield k


def sha256_file(path: PathLike) -> str:
    """The SHA-256 of a file's bytes, hex, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def manifest(files: Sequence[PathLike], delete_list: Optional[PathLike]) -> Dict[str, Any]:
    """The inputs of a merge, each by absolute path and SHA-256: what a batch was started with."""

    return {
        "files": [[str(Path(f).absolute()), sha256_file(f)] for f in files],
        "delete_list": None
        if delete_list is None
        else [str(Path(delete_list).absolute()), sha256_file(delete_list)],
    }


class MergeLock:
    """A lock on ``root/.merge.lock``: exclusive for the whole of a merge (two drivers never
    merge into one index at once), shared (``shared=True``) for a read across partitions in
    steps (an export, a check), which a merge must not change between its steps. Never waits:
    a lock held the other way is refused at once."""

    def __init__(self, root: Path, shared: bool = False) -> None:
        self.path = root / ".merge.lock"
        self.shared = shared
        self.fd = -1

    def __enter__(self) -> "MergeLock":
        import fcntl

        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self.fd, (fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            if self.shared:
                raise InvalidArgumentError(f"a merge into {self.path.parent} is running: read the index after it") from None
            raise InvalidArgumentError(f"another driver is merging into or reading {self.path.parent}") from None
        return self

    def __exit__(self, *exc: Any) -> None:
        os.close(self.fd)


def make_dirs(path: Path) -> None:
    """Creates a directory and its missing parents, each made durable in its parent (another
    process making one of them at the same time is no error)."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir()
        except FileExistsError:
            continue
        fsync_dir(d.parent)


def fsync_dir(path: Path) -> None:
    """Makes the entries of a directory durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def install_dir(incoming: Path, final: Path) -> None:
    """Makes the copy in ``incoming`` durable and renames it to ``final``, replacing a copy
    left there by an earlier attempt that stopped after its rename, before the assignment naming
    it was written; the rename is made durable too."""
    fsync_dir(incoming)
    shutil.rmtree(final, ignore_errors=True)
    final.parent.mkdir(parents=True, exist_ok=True)
    os.rename(incoming, final)
    fsync_dir(final.parent)


def write_atomic(path: Path, data: bytes) -> None:
    """Writes ``path`` whole or not at all, durably (the file and its directory entry)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def write_tsv(table: Any, path: Path) -> None:
    """Writes an export (``key``, ``representative``) as the TSV of ``neardup export``."""
    with open(path, "w", encoding="utf-8") as f:
        for k, r in zip(table.column("key").to_pylist(), table.column("representative").to_pylist()):
            f.write(f"{k}\t{r}\n")
