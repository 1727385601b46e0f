"""The files of a distributed index's merges (SCALEOUT §5, §9): the day's input (JSONL pages, a
delete list), and what a batch's directory ``batches/batch=<n>/`` holds, written so that a crash
leaves either the old file or the new one: the manifest of the inputs (a re-run with other inputs
is refused), the logs and their ``_DONE`` marker, the report. Also the lock that keeps a second
driver out, and the export as TSV.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

from neardup import InvalidArgumentError

#: A path, as the merge's calls take one.
PathLike = Union[str, "os.PathLike[str]"]


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


def manifest(files: Sequence[PathLike], delete_list: Optional[PathLike]) -> Dict[str, Any]:
    """The inputs of a merge, each by absolute path and SHA-256: what a batch was started with."""

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


class MergeLock:
    """An exclusive lock on ``root/.merge.lock`` for the whole of a merge: two drivers never
    merge into one index at once."""

    def __init__(self, root: Path) -> None:
        self.path = root / ".merge.lock"
        self.fd = -1

    def __enter__(self) -> "MergeLock":
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


def make_dirs(path: Path) -> None:
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


def write_atomic(path: Path, data: bytes) -> None:
    """Writes ``path`` whole or not at all, durably (the file and its directory entry)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def write_tsv(table: Any, path: Path) -> None:
    """Writes an export (``key``, ``representative``) as the TSV of ``neardup export``."""
    with open(path, "w", encoding="utf-8") as f:
        for k, r in zip(table.column("key").to_pylist(), table.column("representative").to_pylist()):
            f.write(f"{k}\t{r}\n")
