"""What the batch calls give back: one ``pyarrow.Table`` of verdicts in input order, with an
``error`` column (SCALEOUT §3), filled chunk after chunk, and their progress (a tqdm bar or a
callback).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Union

from ._rows import Chunk, chunks, import_pyarrow

# A progress argument: True (tqdm when installed), False/None (none), or a callable
# ``progress(done, total)`` (``total`` is None when the input's length is unknown).
Progress = Union[bool, None, Callable[[int, Optional[int]], Any]]


def _length(pages: Any) -> Optional[int]:
    for attr in ("num_rows",):
        n = getattr(pages, attr, None)
        if isinstance(n, int):
            return n
    try:
        return len(pages)
    except TypeError:
        return None


class Bar:
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


def verdict_schema():
    pa = import_pyarrow()
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
            ("unchanged_html", pa.bool_()),
            ("no_main_text", pa.bool_()),
            ("candidates", pa.uint64()),
            ("verified", pa.uint64()),
            ("error", pa.string()),
            ("error_type", pa.string()),
        ]
    return pa.schema(_VERDICT_TYPES)


def _empty_columns() -> Dict[str, List[Any]]:
    return {name: [] for name in verdict_schema().names}


def _error_columns(n: int) -> Dict[str, List[Any]]:
    return {name: [None] * n for name in verdict_schema().names}


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


def verdict_table(
    pages: Any,
    batch_size: int,
    progress: Progress,
    label: str,
    bad_of: Callable[[Chunk], List[Optional[str]]],
    fill: Callable[[Chunk, Dict[str, List[Any]], List[int], "Bar"], None],
) -> Any:
    """The verdict columns of ``pages``, chunk after chunk, as one ``pyarrow.Table`` in input
    order: the rows ``bad_of(chunk)`` marks get their error, ``fill(chunk, cols, good, bar)``
    writes the others."""
    pa = import_pyarrow()
    out = _empty_columns()
    bar = Bar(progress, _length(pages), label)
    try:
        for chunk in chunks(pages, batch_size):
            cols = _error_columns(len(chunk))
            cols["key"] = list(chunk.keys)
            base = bar.done
            fill(chunk, cols, _flag_bad(cols, bad_of(chunk)), bar)
            bar.set(base + len(chunk))
            for name in out:
                out[name].extend(cols[name])
    finally:
        bar.close()
    return pa.table(out, schema=verdict_schema())



def merge_columns(into: Dict[str, List[Any]], rows: List[int], cols: Dict[str, List[Any]]) -> None:
    """Writes ``cols`` (the columns of the rows ``rows``, in that order) into those rows of
    ``into``."""
    for name, values in cols.items():
        target = into[name]
        for i, v in zip(rows, values):
            target[i] = v
