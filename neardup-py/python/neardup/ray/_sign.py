"""S1 of the daily merge (SCALEOUT §5): the day's pages signed with Ray Data.

``neardup.signatures_table`` runs in Ray Data's ``map_batches`` over blocks of the day's bodies
(HTML and text rows apart); of each page only what the merge needs is kept: its row, its posting
keys (what S2 sends to the key partitions), its simhash and its number of sentence fingerprints
(the whole-batch order of S4 sorts by it). The result is kept in the batch's ``s1/`` in the store
(``part-<first row>.parquet`` then ``_DONE``), so a re-run after a crash does not sign again
(SCALEOUT §9): with a shared store each block is written there by the Ray Data task that signed
it; with the root's, which only the driver's node reaches, by the driver.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Dict, List, Optional

import neardup

from ._runtime import require_ray
from ._store import Store

if TYPE_CHECKING:
    from ._driver import MergeReport


def _signature_batch(batch: Any, col: str, config: Dict[str, Any], store: Optional[Store], rel: str) -> Any:
    """S1 in a Ray Data task: the row number, posting keys, simhash and number of sentence
    fingerprints of each page; written to ``rel`` of a shared ``store`` too."""
    import pyarrow.compute as pc

    out = neardup.signatures_table(batch, html_col=col if col == "html" else None, text_col=col if col == "text" else None, **config)
    # The number of sentence fingerprints: the whole-batch order sorts by it.
    count = pc.fill_null(pc.list_value_length(out.column("fingerprints")), 0)
    table = out.select(["row", "posting_keys", "simhash"]).append_column("fingerprints", count.cast("int64"))
    if store is not None and table.num_rows:
        _write_part(store, rel, table)
    return table


def _write_part(store: Store, rel: str, table: Any) -> None:
    """One block of S1's output written to the store, named by its first row (a retried task
    writes the same part again)."""
    import pyarrow.parquet as pq

    path = store.path(f"{rel}/part-{table.column('row')[0].as_py():012}.parquet")
    store.fs.create_dir(store.path(rel), recursive=True)
    pq.write_table(table, path, filesystem=store.fs)


def sign(pages: List[Dict[str, Any]], store: Store, brel: str, report: MergeReport, config: Dict[str, Any]) -> Any:
    """S1: posting keys and simhash of every page, through Ray Data, written by the workers to
    ``<brel>/s1/`` in the store (read from there when a run before wrote it whole).
    ``config``: the signature options the partitions and scratch indexes use, shorthands
    resolved."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [("row", pa.int64()), ("posting_keys", pa.binary()), ("simhash", pa.uint64()), ("fingerprints", pa.int64())]
    )
    out = f"{brel}/s1"
    if store.exists(f"{out}/_DONE"):
        parts = [n for n in store.list(out) if n.endswith(".parquet")]
        cached = [pq.read_table(store.path(f"{out}/{n}"), filesystem=store.fs) for n in parts]
        report["resumed"].append("S1")
        return _whole(cached, schema)
    store.delete(out)
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
            fn_kwargs={"col": col, "config": config, "store": store if store.shared else None, "rel": out},
        )
        parts.extend(ds.to_arrow_refs())
    # S2 reads the blocks on the driver.
    table = _whole(ray.get(parts), schema)
    if not store.shared and table.num_rows:
        _write_part(store, out, table)
    store.write(f"{out}/_DONE", b"")
    return table


def _whole(parts: List[Any], schema: Any) -> Any:
    """S1's blocks as one table in row order."""
    import pyarrow as pa

    table = pa.concat_tables([p.select(schema.names).cast(schema) for p in parts]) if parts else schema.empty_table()
    return table.sort_by("row")
