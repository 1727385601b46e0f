"""The distributed export (SCALEOUT §9 "Export"; issue #34, item 6): the index's export
written, or returned as a table, without gathering the index on the driver.

Each doc partition makes its part of the export in its actor (``neardup::merge``'s export,
in Rust): a page's target (the page it was judged a near duplicate of, while held, else its
cluster's representative) may be held by another doc partition, and its cluster's record by a
third, so the partitions first resolve those references between themselves in messages —
asks, replies, cluster replies, one per pair of doc partitions — passed from actor to actor as
Ray objects (the driver holds only their references, never their bytes). Each partition then
writes its part, sorted by id, to a file beside its database on its node, and the driver
merges the parts by id, streaming: it reads each part block by block from its actor (one
block ahead), so its memory is a block or two per part, whatever the index's size, and it
works whether or not the index has a shared store and wherever the partitions are. The parts
are removed at the end (a driver killed meanwhile leaves them; the next export of that
partition removes those older than a day).

``write_tsv`` writes the TSV of ``neardup export``; ``columns`` gives a table's columns (a
table is the index's size: what ``DistributedIndex.export()`` and its siblings return).
``gathered`` is the former way, every row gathered on the driver: the reference the tests and
the bench compare with.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ._runtime import require_ray

#: Bytes of a part read from its actor at once (the driver holds two per part).
BLOCK = 1 << 20

#: The kinds of part: the page export, the clusters' export, the pages' rows.
KINDS = ("pages", "clusters", "rows")


class _PartReader:
    """A doc partition's part, read from its actor block by block, one block ahead:
    ``read(n)`` gives at most ``n`` bytes, empty at the end."""

    def __init__(self, actor: Any, token: str, size: int) -> None:
        self.actor, self.token, self.size = actor, token, size
        self.offset = 0
        self.block = b""
        self.pos = 0
        self.ahead = self._fetch()

    def _fetch(self) -> Optional[Any]:
        if self.offset >= self.size:
            return None
        ref = self.actor.export_read.remote(self.token, self.offset, BLOCK)
        self.offset += BLOCK
        return ref

    def read(self, n: int) -> bytes:
        if self.pos >= len(self.block):
            if self.ahead is None:
                return b""
            self.block, self.pos = require_ray().get(self.ahead), 0
            self.ahead = self._fetch()
            if not self.block:
                return b""
        out = self.block[self.pos : self.pos + n]
        self.pos += len(out)
        return out


def _each(refs: Any, n: int) -> List[Any]:
    """The references of a call with ``num_returns=n`` as a list (one is not in a list)."""
    return list(refs) if n > 1 else [refs]


def _make_parts(dx: Any, kind: str, token: str) -> List[int]:
    """Every doc partition's part of ``kind`` written beside its database (named by
    ``token``), the references resolved between the partitions first; returns each part's
    size in bytes, by doc partition."""
    ray = require_ray()
    docs, layout = dx.docs, dx.layout
    n = len(docs)
    replies: List[List[Any]] = [[] for _ in docs]
    clusters: List[List[Any]] = [[] for _ in docs]
    if kind != "rows":
        # asks[d][p]: what d asks of p.
        asks = [_each(a.export_asks.options(num_returns=n).remote(layout, kind), n) for a in docs]
        # answers[p][d]: p's reply to d's ask.
        answers = [
            _each(docs[p].export_replies.options(num_returns=n).remote(layout, *[asks[d][p] for d in range(n)]), n)
            for p in range(n)
        ]
        replies = [[answers[p][d] for p in range(n)] for d in range(n)]
        if kind == "pages":
            cluster_answers = [
                _each(
                    docs[p]
                    .export_cluster_replies.options(num_returns=n)
                    .remote(layout, n, *[asks[d][p] for d in range(n)], *replies[p]),
                    n,
                )
                for p in range(n)
            ]
            clusters = [[cluster_answers[p][d] for p in range(n)] for d in range(n)]
    sizes = ray.get(
        [a.export_part.remote(layout, kind, token, len(replies[d]), *replies[d], *clusters[d]) for d, a in enumerate(docs)]
    )
    return [int(s) for s in sizes]


def _readers(dx: Any, token: str, sizes: List[int]) -> List[Tuple[str, _PartReader]]:
    return [(f"doc-{d:03}", _PartReader(a, token, s)) for d, (a, s) in enumerate(zip(dx.docs, sizes))]


def _drop(dx: Any, token: str) -> None:
    """The parts of ``token`` removed from every doc partition's node (best effort: a
    partition that cannot be reached keeps its part until a later export removes it)."""
    ray = require_ray()
    refs = [a.export_drop.remote(token) for a in dx.docs]
    for ref in refs:
        try:
            ray.get(ref)
        except Exception:  # noqa: BLE001 - the export's own error, if any, is the one raised
            pass


def write_tsv(dx: Any, path: Path) -> int:
    """The index's export written to ``path`` as the TSV of ``neardup export`` (``key``, tab,
    target key, a line per page in page-id order), streamed: the driver holds a block or two
    per doc partition. Returns the rows written."""
    from neardup._neardup import _export_merge_tsv

    token = uuid.uuid4().hex
    try:
        sizes = _make_parts(dx, "pages", token)
        return int(_export_merge_tsv(_readers(dx, token, sizes), str(path)))
    finally:
        _drop(dx, token)


def columns(dx: Any, kind: str) -> Tuple[List[Any], ...]:
    """The columns of ``kind``'s table, merged by id from the doc partitions' parts:
    ``(keys, targets)`` for ``"pages"``, ``(clusters, representatives, members)`` for
    ``"clusters"``, ``(docs, keys, clusters, seqs)`` for ``"rows"``."""
    from neardup._neardup import _export_merge_columns

    token = uuid.uuid4().hex
    try:
        sizes = _make_parts(dx, kind, token)
        return tuple(_export_merge_columns(kind, _readers(dx, token, sizes)))
    finally:
        _drop(dx, token)


def gathered(dx: Any, kind: str) -> Any:
    """The table of ``kind`` as the driver made it before the distributed export: every
    page and cluster of every doc partition gathered on the driver, the targets resolved
    there. The reference of the tests and the bench; index-sized on the driver."""
    import pyarrow as pa

    ray = require_ray()
    rows = ray.get([a.call.remote("partition_rows") for a in dx.docs])
    pages: Dict[str, List[Any]] = {k: [] for k in ("doc", "key", "cluster", "seq", "similar_to", "similar_seq")}
    reps: Dict[int, int] = {}
    for p, c in rows:
        for k in pages:
            pages[k].extend(p[k])
        reps.update(zip(c["cluster"], c["representative"]))
    order = sorted(range(len(pages["doc"])), key=pages["doc"].__getitem__)
    pages = {k: [v[i] for i in order] for k, v in pages.items()}
    if kind == "rows":
        return pa.table(
            {
                "doc": pa.array(pages["doc"], pa.uint64()),
                "key": pa.array(pages["key"], pa.string()),
                "cluster": pa.array(pages["cluster"], pa.uint64()),
                "seq": pa.array(pages["seq"], pa.uint64()),
            }
        )
    key_of = dict(zip(pages["doc"], pages["key"]))
    if kind == "pages":
        seq_of = dict(zip(pages["doc"], pages["seq"]))
        out = []
        for cluster, sim, sim_seq in zip(pages["cluster"], pages["similar_to"], pages["similar_seq"]):
            if sim is not None and seq_of.get(sim) == sim_seq:
                out.append(key_of[sim])
            else:
                out.append(key_of[reps[cluster]])
        return pa.table({"key": pa.array(pages["key"], pa.string()), "representative": pa.array(out, pa.string())})
    members: Dict[int, List[str]] = {}
    for key, cluster in zip(pages["key"], pages["cluster"]):
        members.setdefault(cluster, []).append(key)
    ids = sorted(reps)
    return pa.table(
        {
            "cluster": pa.array(ids, pa.uint64()),
            "representative": pa.array([key_of[reps[c]] for c in ids], pa.string()),
            "members": pa.array([members.get(c, []) for c in ids], pa.list_(pa.string())),
        }
    )
