"""S2 and S3 of the daily merge (SCALEOUT §5): what the day reads, cut into components and
packed into work units.

S2 asks the partitions, in bulk, for the standing part the day's decisions read: the pages filed
under its posting keys (key partitions), the pages within the simhash distance of its simhashes,
and the pages of its re-crawled and deleted keys (doc partitions), whose clusters hand over: their
members are placed again and reach as far as their own keys and simhashes. What one machine's
``Index.decision_reach`` reads, gathered from the parts. S3 joins the day's rows, its deletes,
the standing pages reached and their clusters, whole, by union-find into components, and packs the
components into at most ``work_units`` units, in the order of their first item, each to the least
loaded unit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Sequence, Set, Tuple

from ._runtime import require_ray

if TYPE_CHECKING:
    from ._driver import DistributedIndex


def group(items: Iterable[Tuple[int, Any]], parts: int) -> List[List[Any]]:
    """``(partition, item)`` pairs as one list of items per partition, in order."""
    out: List[List[Any]] = [[] for _ in range(parts)]
    for p, item in items:
        out[p].append(item)
    return out


class Unit:
    """A work unit of S4 (or one component while they are gathered): the day's rows, the
    delete-list positions, and the standing pages and clusters its decisions read."""

    def __init__(self) -> None:
        self.rows: List[int] = []
        self.gone: List[int] = []
        self.pages: List[int] = []
        self.clusters: List[int] = []

    def size(self) -> int:
        return len(self.rows) + len(self.gone) + len(self.pages)

    def first(self, rows: int) -> int:
        """Its first item in the day's order: rows, then deletes after every row."""
        return min([*self.rows, *(rows + g for g in self.gone)], default=rows * 2 + 1)

    def absorb(self, other: "Unit") -> None:
        self.rows += other.rows
        self.gone += other.gone
        self.pages += other.pages
        self.clusters += other.clusters


def _unique_keys(packed: bytes) -> bytes:
    """The distinct 9-byte keys of a concatenation, concatenated (sorted)."""
    import numpy as np

    if not packed:
        return b""
    arr = np.frombuffer(packed, dtype=np.dtype((np.void, 9)))
    return np.unique(arr).tobytes()


def _ask(actors: List[Any], method: str, groups: List[List[Any]], pack: Callable[[List[Any]], Any] = list) -> List[Any]:
    """Calls ``method`` on every actor with a non-empty group; the answers in actor order
    (``None`` for an actor not asked)."""
    ray = require_ray()
    refs = [a.call.remote(method, pack(g)) if g else None for a, g in zip(actors, groups)]
    return [ray.get(r) if r is not None else None for r in refs]


def _key_postings(dx: DistributedIndex, packed: bytes) -> Tuple[bytes, List[List[int]]]:
    """The distinct 9-byte keys of a concatenation and, for each, the standing pages filed
    under it (none for an over-frequent key), from the key partitions."""
    lay = dx.layout
    keys = _unique_keys(packed)
    parts = lay.posting_parts(keys)
    groups: List[List[int]] = [[] for _ in range(lay.key_parts)]
    for i, p in enumerate(parts):
        groups[p].append(i)
    answers = _ask(dx.keys, "posting_ids", [[keys[9 * i : 9 * i + 9] for i in g] for g in groups], b"".join)
    ids: List[List[int]] = [[] for _ in range(len(keys) // 9)]
    for g, answer in zip(groups, answers):
        if answer is not None:
            for i, found in zip(g, answer):
                ids[i] = found
    return keys, ids


def _simhash_neighbours(dx: DistributedIndex, simhashes: Sequence[int]) -> Tuple[Dict[int, Set[int]], int]:
    """Of each simhash, the standing pages within the simhash distance of it; and the
    bytes sent."""
    lay = dx.layout
    sh = sorted(set(simhashes))
    groups: List[List[int]] = [[] for _ in range(lay.key_parts)]
    for h, ps in zip(sh, lay.simhash_parts(sh)):
        for p in ps:
            groups[p].append(h)
    out: Dict[int, Set[int]] = {h: set() for h in sh}
    for g, answer in zip(groups, _ask(dx.keys, "simhash_ids", groups)):
        if answer is not None:
            for h, found in zip(g, answer):
                out[h].update(found)
    return out, 8 * sum(len(g) for g in groups)


def _by_doc(dx: DistributedIndex, method: str, ids: Iterable[int], part: Callable[[int], int]) -> Dict[int, Any]:
    ids = sorted(set(ids))
    groups = group(((part(i), i) for i in ids), dx.layout.doc_parts)
    out: Dict[int, Any] = {}
    for g, answer in zip(groups, _ask(dx.docs, method, groups)):
        if answer is not None:
            out.update(zip(g, answer))
    return out


def plan(dx: DistributedIndex, chunk: Any, sigs: Any, gone: List[str], work_units: int) -> Tuple[List[Unit], Dict[str, Any], int]:
    """S2–S3: the day's candidate graph, from the partitions, cut into components (each
    with what ``Index.decision_reach`` reads for it on one machine) and packed into at most
    ``work_units`` work units. ``chunk`` is the day's rows as ``insert_many`` reads them (their
    keys). Returns the units, the component sizes and the bytes sent."""
    lay = dx.layout
    uf = _UnionFind()
    rows = sigs.column("row").to_pylist()
    keys_col = sigs.column("posting_keys").to_pylist()
    sims = sigs.column("simhash").to_pylist()
    # Each probe joins the keys it is filed under and the standing pages on them
    # (over-frequent standing keys have none: no decision reads them).
    keys, on_key = _key_postings(dx, b"".join(k for k in keys_col if k))
    index = {keys[9 * i : 9 * i + 9]: i for i in range(len(on_key))}
    shuffled = len(keys)
    for r, k in zip(rows, keys_col):
        for j in range(0, len(k or b""), 9):
            uf.union(("p", r), ("k", index[k[j : j + 9]]))
    for i, found in enumerate(on_key):
        for d in found:
            uf.union(("k", i), d)
    # Simhash neighbours, standing and of the day.
    near, sent = _simhash_neighbours(dx, [h for h in sims if h is not None])
    shuffled += sent
    for r, h in zip(rows, sims):
        if h is not None:
            for d in near[h]:
                uf.union(("p", r), d)
    _join_close_simhashes(uf, [(r, h) for r, h in zip(rows, sims) if h is not None], lay.simhash_max_distance)
    # A key given twice in the day goes to one unit.
    first: Dict[str, int] = {}
    for r, k in enumerate(chunk.keys):
        if k is not None:
            uf.union(("p", r), ("p", first.setdefault(k, r)))
    # Re-crawled and deleted keys: their standing pages.
    rows_n = len(chunk.keys)
    touched = [k or "" for k in chunk.keys] + list(gone)
    kgroups = group(((p, i) for i, p in enumerate(lay.key_parts_of(touched)) if touched[i]), lay.doc_parts)
    shuffled += sum(len(k.encode()) for k in touched)
    old: Set[int] = set()
    for g, answer in zip(kgroups, _ask(dx.docs, "key_ids", [[touched[i] for i in g] for g in kgroups])):
        for i, d in zip(g, answer or []):
            if d is not None:
                old.add(d)
                uf.union(("p", i) if i < rows_n else ("g", i - rows_n), d)
    # Their clusters hand over: the members are placed again, and reach as far as their own
    # keys and simhashes.
    touched_clusters = {c for c in _by_doc(dx, "page_clusters", old, lay.doc_part).values() if c is not None}
    members: Set[int] = set()
    for c, m in _by_doc(dx, "cluster_member_ids", touched_clusters, lay.cluster_part).items():
        for d in m or []:
            members.add(d)
            uf.union(("c", c), d)
    filed = {d: f for d, f in _by_doc(dx, "filed_pages", members, lay.doc_part).items() if f}
    mkeys, m_on_key = _key_postings(dx, b"".join(f[1] for f in filed.values()))
    mindex = {mkeys[9 * i : 9 * i + 9]: i for i in range(len(m_on_key))}
    shuffled += len(mkeys)
    for d, (_, fk) in filed.items():
        for j in range(0, len(fk), 9):
            uf.union(d, ("m", mindex[fk[j : j + 9]]))
    for i, found in enumerate(m_on_key):
        for d in found:
            uf.union(("m", i), d)
    mnear, sent = _simhash_neighbours(dx, [f[0] for f in filed.values()])
    shuffled += sent
    for d, (h, _) in filed.items():
        for e in mnear[h]:
            uf.union(d, e)
    # Every cluster of a standing page reached, whole.
    standing = [x for x in uf.parent if isinstance(x, int)]
    clusters_of = _by_doc(dx, "page_clusters", standing, lay.doc_part)
    for d, c in clusters_of.items():
        if c is not None:
            uf.union(d, ("c", c))
    cids = sorted({c for c in clusters_of.values() if c is not None})
    for c, m in _by_doc(dx, "cluster_member_ids", cids, lay.cluster_part).items():
        for d in m or []:
            uf.union(("c", c), d)
    # Components, then work units: components in the order of their first item, each to
    # the unit with the least work so far.
    comps: Dict[Any, Unit] = {}
    for x in list(uf.parent):
        comp = comps.setdefault(uf.find(x), Unit())
        if isinstance(x, int):
            comp.pages.append(x)
        elif x[0] == "p":
            comp.rows.append(x[1])
        elif x[0] == "g":
            comp.gone.append(x[1])
        elif x[0] == "c":
            comp.clusters.append(x[1])
    # Rows without signatures and deletes of keys the index lacks join nothing.
    placed = {r for c in comps.values() for r in c.rows}
    placed_gone = {g for c in comps.values() for g in c.gone}
    for r in range(rows_n):
        if r not in placed:
            comps.setdefault(("p", r), Unit()).rows.append(r)
    for g in range(len(gone)):
        if g not in placed_gone:
            comps.setdefault(("g", g), Unit()).gone.append(g)
    ordered = sorted(comps.values(), key=lambda c: c.first(rows_n))
    sizes = sorted((c.size() for c in ordered), reverse=True)
    stats = {
        "count": len(sizes),
        "largest": sizes[0] if sizes else 0,
        "singletons": sum(1 for x in sizes if x == 1),
    }
    units = [Unit() for _ in range(max(1, min(work_units, len(ordered))))]
    for c in ordered:
        units[min(range(len(units)), key=lambda i: (units[i].size(), i))].absorb(c)
    for u in units:
        u.rows.sort()
        u.gone.sort()
        u.pages.sort()
        u.clusters.sort()
    return [u for u in units if u.rows or u.gone], stats, shuffled


class _UnionFind:
    """Union-find over page ids and probe positions (S3)."""

    def __init__(self) -> None:
        self.parent: Dict[Any, Any] = {}

    def find(self, x: Any) -> Any:
        parent = self.parent
        parent.setdefault(x, x)
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def union(self, a: Any, b: Any) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[ra] = rb


def _join_close_simhashes(uf: _UnionFind, rows: List[Tuple[int, int]], distance: int) -> None:
    """Joins the day's pages whose simhashes are within ``distance`` bits: pages with one
    simhash at once; distinct simhashes are compared only when they agree on one of
    ``distance + 1`` blocks, which two hashes within the distance do (pigeonhole)."""
    first: Dict[int, int] = {}
    for r, h in rows:
        uf.union(("p", r), ("p", first.setdefault(h, r)))
    hashes = list(first.items())
    blocks = distance + 1
    width = 64 // blocks
    mask = (1 << width) - 1
    for b in range(blocks):
        buckets: Dict[int, List[Tuple[int, int]]] = {}
        for h, r in hashes:
            buckets.setdefault((h >> (b * width)) & mask, []).append((h, r))
        for members in buckets.values():
            for i, (h, r) in enumerate(members):
                for h2, r2 in members[i + 1 :]:
                    if bin(h ^ h2).count("1") <= distance:
                        uf.union(("p", r), ("p", r2))
