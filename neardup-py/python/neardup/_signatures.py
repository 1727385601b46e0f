"""``neardup.signatures_table``: the signatures of a batch of pages, Arrow in and Arrow out, for
Ray Data's ``map_batches`` or Spark's ``mapInArrow`` (SCALEOUT §3), and the S1 stage of the daily
merge (SCALEOUT §5).
"""

from __future__ import annotations

from typing import Any, List, Optional

from . import _neardup
from ._errors import InvalidArgumentError, InvalidTypeError
from ._rows import import_pyarrow


def signatures_table(
    batch: Any,
    html_col: Optional[str] = "html",
    text_col: Optional[str] = None,
    *,
    main_text: bool = False,
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
    With ``main_text=True``, also ``main_text`` (binary): the page's main text as extracted
    (title, heading, paragraphs with their kinds) in a compact, versioned and checksummed
    encoding of neardup's own, which ``Index.insert_many`` reads from a ``main_text`` column so
    as not to extract the page again (the distributed merge's S1 keeps it for S4, SCALEOUT §5).
    ``config`` overrides signature options as for ``signatures()``.
    """
    pa = import_pyarrow()
    if isinstance(batch, dict):
        table = pa.table(batch)
    elif isinstance(batch, (pa.Table, pa.RecordBatch)):
        table = batch
    elif hasattr(batch, "__arrow_c_stream__") or hasattr(batch, "__arrow_c_array__"):
        table = pa.table(batch)
    elif hasattr(batch, "columns") and hasattr(batch, "index"):
        table = pa.Table.from_pandas(batch, preserve_index=False)
    else:
        raise InvalidTypeError(
            "batch must be Arrow data, a dict of columns or a pandas DataFrame, "
            f"not {type(batch).__name__}"
        )
    if not isinstance(main_text, bool):
        raise InvalidTypeError(f"main_text must be a bool, not {type(main_text).__name__}")
    for name, value in (("html_col", html_col), ("text_col", text_col)):
        if value is not None and not isinstance(value, str):
            raise InvalidTypeError(f"{name} must be a str or None, not {type(value).__name__}")
    if text_col is not None:
        col, is_html = text_col, False
    elif html_col is not None:
        col, is_html = html_col, True
    else:
        raise InvalidArgumentError("give html_col or text_col")
    if col not in table.schema.names:
        raise InvalidArgumentError(f"the batch has no column {col!r}")
    bodies = table.column(col).to_pylist()
    c = _neardup._signatures_columns(bodies, is_html, config or None, main_text)
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
    if main_text:
        new["main_text"] = pa.array(c["main_text"], pa.binary())
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
