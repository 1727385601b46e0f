"""S1 of the daily merge (SCALEOUT §5): the day's pages signed with Ray Data.

``neardup.signatures_table`` runs in Ray Data's ``map_batches`` over blocks of the day's bodies
(HTML and text rows apart); of each page only what the merge needs is kept: its row, its posting
keys (what S2 sends to the key partitions), its simhash and its number of sentence fingerprints
(the whole-batch order of S4 sorts by it). The result is cached in the batch's ``s1.parquet``,
so a re-run after a crash does not sign again (SCALEOUT §9).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List

import neardup

from ._runtime import require_ray

if TYPE_CHECKING:
    from ._driver import MergeReport


def _signature_batch(batch: Any, col: str, config: Dict[str, Any]) -> Any:
    """S1 in a Ray Data task: the row number, posting keys, simhash and number of sentence
    fingerprints of each page."""
    import pyarrow.compute as pc

    out = neardup.signatures_table(batch, html_col=col if col == "html" else None, text_col=col if col == "text" else None, **config)
    # The number of sentence fingerprints: the whole-batch order sorts by it.
    count = pc.fill_null(pc.list_value_length(out.column("fingerprints")), 0)
    return out.select(["row", "posting_keys", "simhash"]).append_column("fingerprints", count.cast("int64"))


def sign(pages: List[Dict[str, Any]], bdir: Path, report: MergeReport, config: Dict[str, Any]) -> Any:
    """S1: posting keys and simhash of every page, through Ray Data (cached in
    ``s1.parquet``). ``config``: the signature options the partitions and scratch indexes use,
    shorthands resolved."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = bdir / "s1.parquet"
    if out.exists():
        cached = pq.read_table(out)
        # A part written by an earlier version may lack a column: signed again then.
        if {"row", "posting_keys", "simhash", "fingerprints"} <= set(cached.schema.names):
            report["resumed"].append("S1")
            return cached
    ray = require_ray()
    parts = []
    for col in ("html", "text"):
        # Rows with a body of the right type only: the others are error rows in S4, as in
        # insert_many (html as str or bytes, text as str).
        if col == "html":
            rows = [i for i, p in enumerate(pages) if isinstance(p.get("html"), (str, bytes))]
        else:
            rows = [i for i, p in enumerate(pages) if p.get("html") is None and isinstance(p.get("text"), str)]
        if not rows:
            continue
        body = [pages[i][col] for i in rows]
        body = [b.encode() if isinstance(b, str) else b for b in body] if col == "html" else body
        kind = pa.binary() if col == "html" else pa.string()
        table = pa.table({"row": pa.array(rows, pa.int64()), col: pa.array(body, kind)})
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        ctx.print_on_execution_start = False
        logging.getLogger("ray.data").setLevel(logging.WARNING)
        # Blocks of about a thousand pages, cut here: no shuffle to repartition them.
        size = max(256, -(-len(rows) // 64))
        blocks = [table.slice(i, size) for i in range(0, len(rows), size)]
        ds = ray.data.from_arrow(blocks).map_batches(
            _signature_batch,
            batch_format="pyarrow",
            fn_kwargs={"col": col, "config": config},
        )
        parts.extend(ray.get(ds.to_arrow_refs()))
    schema = pa.schema(
        [("row", pa.int64()), ("posting_keys", pa.binary()), ("simhash", pa.uint64()), ("fingerprints", pa.int64())]
    )
    table = pa.concat_tables([p.select(schema.names).cast(schema) for p in parts]) if parts else schema.empty_table()
    table = table.sort_by("row")
    tmp = out.with_suffix(".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, out)
    return table
