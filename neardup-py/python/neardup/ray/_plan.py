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

The day's key joins run on the key partitions (issue #34 item 4; ``key_forests``): each reads
the day's probes from S1's parts in the store, keeps those it holds, looks them up and joins them
by union-find in Rust, and sends the coordinator its partial forest (a node and its root for
every node not alone), never the day's keys nor a posting list. The coordinator merges the forests
with the hand-overs' edges (its own reads, as large as the re-crawled clusters) and finds the
components. A component over the cap is cut (SCALEOUT §7.1 option 2, ``_cut``): a second round
of the key partitions joins its rows and members again without the sketch digests' keys, into
pieces, and gives those keys' edges apart; the coordinator joins the pieces through them, the
pairs sharing the most keys first, as long as a joined piece stays within the cap.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Set, Tuple

import neardup

from ._runtime import require_ray
from ._sign import probes_name, read_probes

if TYPE_CHECKING:
    from ._driver import DistributedIndex


def group(items: Iterable[Tuple[int, Any]], parts: int) -> List[List[Any]]:
    """``(partition, item)`` pairs as one list of items per partition, in order."""
    out: List[List[Any]] = [[] for _ in range(parts)]
    for p, item in items:
        out[p].append(item)
    return out


class Unit:
    """A work unit of S4: the day's rows, the delete-list positions, and the standing pages and
    clusters its decisions read (each sorted)."""

    def __init__(self) -> None:
        self.rows: List[int] = []
        self.gone: List[int] = []
        self.pages: List[int] = []
        self.clusters: List[int] = []

    def size(self) -> int:
        """Its work: pages, rows and deletes."""
        return len(self.rows) + len(self.gone) + len(self.pages)


def _ask(actors: List[Any], method: str, groups: List[List[Any]], pack: Callable[[List[Any]], Any] = list) -> List[Any]:
    """Calls ``method`` on every actor with a non-empty group; the answers in actor order
    (``None`` for an actor not asked)."""
    ray = require_ray()
    refs = [a.call.remote(method, pack(g)) if g else None for a, g in zip(actors, groups)]
    return [ray.get(r) if r is not None else None for r in refs]


def _by_doc(dx: DistributedIndex, method: str, ids: Iterable[int], part: Callable[[int], int]) -> Dict[int, Any]:
    ids = sorted(set(ids))
    groups = group(((part(i), i) for i in ids), dx.layout.doc_parts)
    out: Dict[int, Any] = {}
    for g, answer in zip(groups, _ask(dx.docs, method, groups)):
        if answer is not None:
            out.update(zip(g, answer))
    return out


# S3's nodes are u64 ids: a kind in the top byte, a value below (a standing page's id, a row
# of the day, a position in the delete list, a cluster id). Only pages, rows and deletes count
# toward a component's size.
_SHIFT = 56
_DOC, _ROW, _GONE, _CLUSTER = range(4)
_SKETCH = ord("K")  # the kind byte of a sketch digest's posting key (src/storage, `kind::SKETCH`)

#: The default cap on a component's size (pages, rows and deletes): large enough that no
#: ordinary day meets it, so that the merge is the single node's (SCALEOUT §7.1).
DEFAULT_MAX_COMPONENT = 1_000_000


def _tag(kind: int, values: Any) -> Any:
    import numpy as np

    return (np.asarray(values, dtype=np.uint64) | np.uint64(kind << _SHIFT)).astype(np.uint64)


class _Edges:
    """Edges of the day's candidate graph as arrays of u64 node pairs."""

    def __init__(self) -> None:
        self.a: List[Any] = []
        self.b: List[Any] = []

    def add(self, a: Any, b: Any) -> None:
        import numpy as np

        a, b = np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64)
        if len(a):
            self.a.append(a)
            self.b.append(b)

    def nodes(self) -> Any:
        import numpy as np

        return np.concatenate([np.zeros(0, dtype=np.uint64), *self.a, *self.b])


class _Stars:
    """The sketch keys' edges of the components over the cap (``key_forests``'s second round):
    ``uint64`` node pairs, each with its key's owners (``weight``)."""

    def __init__(self) -> None:
        self.a: List[Any] = []
        self.b: List[Any] = []
        self.weight: List[Any] = []

    def arrays(self) -> Tuple[Any, Any, Any]:
        import numpy as np

        return _cat(self.a), _cat(self.b), np.concatenate([np.zeros(0, dtype=np.uint32), *self.weight])


def key_forests(
    dx: DistributedIndex, chunk: Any, edges: _Edges, filed: Dict[int, Any], rows: Optional[Any] = None, stars: Optional[_Stars] = None
) -> int:
    """S2–S3's key joins on the key partitions (issue #34 item 4; SCALEOUT §5 S2 "Postings"
    and "Simhash", S3): every key partition reads the day's probes from S1's parts and answers
    those it holds (``partition_forest``, in its actor), all at once, with the probes of the
    members placed again (``filed``: of each, its simhash and posting keys; its own node is
    its page id), each sent to the partitions that answer it; their partial forests join
    ``edges``. With ``rows`` (a boolean array over the day's rows), the second round of a
    component over the cap: only those rows' probes are joined, without the keys of sketch
    digests, theirs and the members'; those keys' edges go to ``stars`` (SCALEOUT §7.1 option
    2). Returns the bytes sent (the members' probes, the forests and stars, and the keys and
    simhashes each partition read of the day's)."""
    import numpy as np

    ray = require_ray()
    lay = dx.layout
    # The members' probes, each to the key partitions that answer it (as S1 routes the day's).
    ids = np.fromiter(filed, dtype=np.uint64, count=len(filed))
    packed = np.frombuffer(b"".join(f[1] for f in filed.values()), dtype=np.dtype((np.void, 9)))
    owners = np.repeat(ids, [len(f[1]) // 9 for f in filed.values()])
    sketch = _is_sketch(packed) if rows is not None else np.zeros(len(packed), dtype=bool)
    key_parts = np.asarray(lay.posting_parts(packed.tobytes()), dtype=np.int64)
    sims = np.asarray([f[0] for f in filed.values()], dtype=np.uint64)
    sim_parts = lay.simhash_parts(sims.tolist())
    sim_part = np.asarray([p for ps in sim_parts for p in ps], dtype=np.int64)
    sim_at = np.repeat(np.arange(len(sims)), [len(ps) for ps in sim_parts])
    members = []
    for p in range(lay.key_parts):
        k, sk, s = (key_parts == p) & ~sketch, (key_parts == p) & sketch, sim_at[sim_part == p]
        members.append(
            (packed[k].tobytes(), owners[k].tobytes(), sims[s].tobytes(), ids[s].tobytes(), packed[sk].tobytes(), owners[sk].tobytes())
        )
    mask = None if rows is None else np.packbits(np.asarray(rows, dtype=bool), bitorder="little").tobytes()
    refs = [k.probe_forest.remote(dx.store, chunk.rel, chunk.parts, chunk.offsets, m, mask) for k, m in zip(dx.keys, members)]
    sent = sum(len(b) for m in members for b in m) + len(mask or b"") * lay.key_parts
    for nodes, roots, counts, star in ray.get(refs):
        edges.add(np.frombuffer(nodes, dtype=np.uint64), np.frombuffer(roots, dtype=np.uint64))
        sent += len(nodes) + len(roots) + 9 * counts["keys"] + 8 * counts["simhashes"]
        if star is not None and stars is not None:
            a, b, w, _ = star
            stars.a.append(np.frombuffer(a, dtype=np.uint64))
            stars.b.append(np.frombuffer(b, dtype=np.uint64))
            stars.weight.append(np.frombuffer(w, dtype=np.uint32))
            sent += len(a) + len(b) + len(w)
    return sent


def _is_sketch(packed: Any) -> Any:
    """Which of the 9-byte posting keys (a ``numpy`` array of them) are sketch digests'."""
    import numpy as np

    return np.frombuffer(packed.tobytes(), dtype=np.uint8)[::9] == _SKETCH if len(packed) else np.zeros(0, dtype=bool)


def partition_forest(
    ix: Any,
    part: int,
    store: Any,
    rel: str,
    parts: List[Tuple[int, str]],
    offsets: List[int],
    members: Tuple[bytes, ...],
    rows: Optional[bytes] = None,
) -> Tuple[bytes, bytes, Dict[str, int], Optional[Tuple[bytes, bytes, bytes, int]]]:
    """In key partition ``part``'s actor (``ix`` its database): the probes S1 routed to it
    from its ``parts`` (the day's first row of each and its name, under ``rel`` in ``store``;
    ``offsets``: each file's first row in the day), a row group of each ``probes-`` file
    (``_sign.read_probes``), joined through its postings and simhash tables
    (``Index.probe_forest``); and apart, so that a key joins the day's probes and the members'
    only through standing pages (as S3's key nodes of either kind do), the ``members``' probes
    this partition answers (packed keys, owners, simhashes, owners; then their sketch keys and
    owners). With ``rows`` (a bit a day's row, little-endian), ``key_forests``'s second round:
    only those rows' probes, and the keys of sketch digests, theirs and the members', not
    joined but given as weighted stars (``Index.key_stars``). Returns the merged partial forest
    (``uint64`` bytes: nodes, roots), what was looked up of the day's, and the stars (None in
    the first round). Memory: one ``probes-`` file's row group at a time, and the distinct keys
    and simhashes with the union-find of their owners (``neardup.ProbeJoin``), or the sketch
    keys with their owners (``neardup.KeyStars``)."""
    import numpy as np

    join = neardup.ProbeJoin()
    stars = None
    if rows is not None:
        stars = neardup.KeyStars()
        wanted = np.unpackbits(np.frombuffer(rows, dtype=np.uint8), bitorder="little").astype(bool)
    low = np.uint64((1 << _SHIFT) - 1)
    for _, name in parts:
        packed, owners, sims, sim_owners = _probes(store, rel, [(0, name)], offsets, part)
        if stars is not None:
            keys = np.frombuffer(packed, dtype=np.dtype((np.void, 9)))
            own = np.frombuffer(owners, dtype=np.uint64)
            mine = wanted[(own & low).astype(np.int64)]
            sketch = _is_sketch(keys)
            stars.add_keys(keys[mine & sketch].tobytes(), own[mine & sketch].tobytes())
            keep = mine & ~sketch
            packed, owners = keys[keep].tobytes(), own[keep].tobytes()
            sown = np.frombuffer(sim_owners, dtype=np.uint64)
            skeep = wanted[(sown & low).astype(np.int64)]
            sims, sim_owners = np.frombuffer(sims, dtype=np.uint64)[skeep].tobytes(), sown[skeep].tobytes()
        join.add_keys(packed, owners)
        join.add_simhashes(sims, sim_owners)
    nodes, roots, counts = ix.probe_forest(join, _DOC << _SHIFT)
    if members[0] or members[2]:
        mjoin = neardup.ProbeJoin()
        mjoin.add_keys(members[0], members[1])
        mjoin.add_simhashes(members[2], members[3])
        c = neardup.Components()
        c.merge_forest(nodes, roots)
        c.merge_forest(*ix.probe_forest(mjoin, _DOC << _SHIFT)[:2])
        nodes, roots = c.forest()
    if stars is None:
        return nodes, roots, dict(counts), None
    stars.add_keys(members[4], members[5])
    return nodes, roots, dict(counts), tuple(ix.key_stars(stars, _DOC << _SHIFT))


def _probes(store: Any, rel: str, parts: List[Tuple[int, str]], offsets: List[int], part: Optional[int]) -> Tuple[bytes, bytes, bytes, bytes]:
    """The day's probes S1 routed to key partition ``part`` (every partition's with None):
    the packed posting keys and their owners (``_ROW`` nodes), the simhashes and theirs, as
    ``uint64`` bytes."""
    import numpy as np

    t = read_probes(store, rel, [probes_name(name) for _, name in parts], part)
    owners = _tag(_ROW, np.asarray(offsets, dtype=np.int64)[t.column("file").to_numpy()] + t.column("row").to_numpy())
    valid = t.column("key").is_valid()
    is_key = np.asarray(valid, dtype=bool)
    keys = t.column("key").filter(valid).combine_chunks()
    packed = keys.buffers()[1].to_pybytes()[keys.offset * 9 : (keys.offset + len(keys)) * 9] if len(keys) else b""
    sims = t.column("simhash").drop_null().to_numpy().astype(np.uint64)
    return packed, owners[is_key].tobytes(), sims.tobytes(), owners[~is_key].tobytes()


def _cat(arrays: List[Any]) -> Any:
    import numpy as np

    return np.concatenate([np.zeros(0, dtype=np.uint64), *arrays])


def _labels(edges: List[_Edges], seeds: Any) -> Tuple[Any, Any, Any]:
    """The components of ``edges`` and ``seeds`` (nodes alone): every node, its component's
    label (``neardup.Components.labels``) and each component's size (pages, rows and deletes)."""
    import numpy as np

    c = neardup.Components()
    c.add_nodes(seeds.tobytes())
    for e in edges:
        c.add_edges(_cat(e.a).tobytes(), _cat(e.b).tobytes())
    nodes_b, labels_b, _ = c.labels()
    nodes = np.frombuffer(nodes_b, dtype=np.uint64)
    labels = np.frombuffer(labels_b, dtype=np.uint32).astype(np.int64)
    items = np.isin(nodes >> np.uint64(_SHIFT), np.array([_DOC, _ROW, _GONE], dtype=np.uint64))
    return nodes, labels, np.bincount(labels[items], minlength=int(labels.max(initial=-1)) + 1)


class _Reach:
    """The clusters of the standing pages reached, whole (every member), asked of the doc
    partitions once for a page and a cluster however often a round reaches them."""

    def __init__(self, dx: DistributedIndex) -> None:
        self.dx = dx
        self.cluster_of: Dict[int, Any] = {}
        self.members: Dict[int, List[int]] = {}

    def edges(self, reached: Any) -> _Edges:
        """Each standing page among the nodes ``reached`` to its cluster, and each such cluster
        to its members."""
        import numpy as np

        lay = self.dx.layout
        standing = np.unique(reached[(reached >> np.uint64(_SHIFT)) == _DOC]).tolist()
        self.cluster_of.update(_by_doc(self.dx, "page_clusters", [d for d in standing if d not in self.cluster_of], lay.doc_part))
        clusters_of = {d: self.cluster_of[d] for d in standing if self.cluster_of.get(d) is not None}
        cids = sorted(set(clusters_of.values()))
        asked = _by_doc(self.dx, "cluster_member_ids", [c for c in cids if c not in self.members], lay.cluster_part)
        self.members.update((c, list(m or [])) for c, m in asked.items())
        out = _Edges()
        out.add(list(clusters_of), _tag(_CLUSTER, list(clusters_of.values())))
        for c in cids:
            m = self.members.get(c, [])
            out.add(_tag(_CLUSTER, [c] * len(m)), m)
        return out


def plan(
    dx: DistributedIndex,
    chunk: Any,
    sigs: Any,
    gone: List[str],
    work_units: int,
    max_component: int = DEFAULT_MAX_COMPONENT,
) -> Tuple[List[Unit], Dict[str, Any], int]:
    """S2–S3: the day's candidate graph, from the partitions, cut into components (each
    with what ``Index.decision_reach`` reads for it on one machine) and packed into at most
    ``work_units`` work units. ``chunk`` is the day's rows as the coordinator reads them from
    S1's parts (``_decide._Rows``: their keys, the parts and the files' first rows), ``sigs``
    their simhashes. Returns the units, the component figures and the bytes sent.

    The day's probes are joined on the key partitions (issue #34 item 4): each reads S1's
    parts, keeps the keys and simhashes it holds and returns the partial forest of their
    joins (``key_forests``), which the coordinator merges with the rest of the graph in Rust
    (``neardup.Components``). A component over ``max_component`` pages, rows and deletes is
    cut by its sketch keys' edges, those of the largest postings first (``_cut``; SCALEOUT §7.1
    option 2, a documented deviation from the single node: the sketch keys are what chain a
    generated million-page day into one component, ``bench/components.md``). The figures say
    how many components were cut (``capped``), how many sketch edges that cut (``cut_edges``),
    and how many of the parts are still over the cap (``over_cap``: nothing left to cut)."""
    import numpy as np

    lay = dx.layout
    base = _Edges()
    rows = sigs.column("row").to_pylist()
    sims = sigs.column("simhash").to_pylist()
    rows_n = len(chunk.keys)
    with_sim = [(r, h) for r, h in zip(rows, sims) if h is not None]
    shuffled = 0
    # The day's close simhashes.
    _close_simhashes(base, with_sim, lay.simhash_max_distance)
    # A key given twice in the day goes to one unit: each row joins the first row of its key.
    again, first_of = _repeated_keys(chunk.keys)
    base.add(_tag(_ROW, again), _tag(_ROW, first_of))
    # Re-crawled and deleted keys: their standing pages.
    touched = [k or "" for k in chunk.keys] + list(gone)
    kgroups = group(((p, i) for i, p in enumerate(lay.key_parts_of(touched)) if touched[i]), lay.doc_parts)
    shuffled += sum(len(k.encode()) for k in touched)
    old: Set[int] = set()
    hit: List[Tuple[int, int]] = []
    for g, answer in zip(kgroups, _ask(dx.docs, "key_ids", [[touched[i] for i in g] for g in kgroups])):
        for i, d in zip(g, answer or []):
            if d is not None:
                old.add(d)
                hit.append((i, d))
    base.add([int(_tag(_ROW, i)) if i < rows_n else int(_tag(_GONE, i - rows_n)) for i, _ in hit], [d for _, d in hit])
    # Their clusters hand over: the members are placed again, and reach as far as their own
    # keys and simhashes.
    touched_clusters = {c for c in _by_doc(dx, "page_clusters", old, lay.doc_part).values() if c is not None}
    members: Set[int] = set()
    for c, m in _by_doc(dx, "cluster_member_ids", touched_clusters, lay.cluster_part).items():
        members.update(m or [])
        base.add(_tag(_CLUSTER, [c] * len(m or [])), list(m or []))
    filed = {d: f for d, f in _by_doc(dx, "filed_pages", members, lay.doc_part).items() if f}
    # The day's probes and the members' in one round of the key partitions.
    forest = _Edges()
    shuffled += key_forests(dx, chunk, forest, filed)
    # Every cluster of a standing page reached, whole; then the components (every row and
    # delete one, those that join nothing alone).
    reach = _Reach(dx)
    clusters = reach.edges(np.concatenate([base.nodes(), forest.nodes()]))
    seeds = np.concatenate([_tag(_ROW, np.arange(rows_n)), _tag(_GONE, np.arange(len(gone)))])
    nodes, labels, size = _labels([base, forest, clusters], seeds)
    del forest, clusters
    over = size > max_component
    stats = {"capped": int(over.sum()), "cut_edges": 0, "over_cap": 0}
    if over.any():
        nodes, labels, cut, sent = _cut(dx, chunk, base, filed, reach, seeds, (nodes, labels, over), rows_n, max_component)
        stats.update(cut)
        shuffled += sent
    units, sizes = _pack(nodes, labels, rows_n, work_units)
    stats = {
        "count": len(sizes),
        "largest": sizes[0] if sizes else 0,
        "singletons": sum(1 for x in sizes if x == 1),
        **stats,
    }
    return [u for u in units if u.rows or u.gone], stats, shuffled


def _cut(
    dx: DistributedIndex,
    chunk: Any,
    base: _Edges,
    filed: Dict[int, Any],
    reach: _Reach,
    seeds: Any,
    found: Tuple[Any, Any, Any],
    rows_n: int,
    cap: int,
) -> Tuple[Any, Any, Dict[str, int], int]:
    """SCALEOUT §7.1 option (2), a documented deviation from the single node, for the
    components over the cap (``found``: the nodes, their labels, and which components are over
    ``cap``): their rows and members are joined again on the key partitions without the keys of
    sketch digests, into pieces; then the pieces are joined through those keys' edges, those
    shared most and of the rarest keys first, each probe's best standing candidates only
    (``_best_sketch_edges``), each join only while the joined piece stays within the cap
    (``Components.add_edges_capped``): the edges of the largest postings are the ones cut.
    Returns the nodes and labels, the capped components' replaced by the joined pieces;
    ``cut_edges`` (the sketch edges not joined: past a probe's best candidates, or past the
    cap) and ``over_cap`` (parts over the cap with no sketch edge left to cut); and the bytes
    sent."""
    import numpy as np

    nodes, labels, over = found
    capped = over[labels]
    kinds = nodes >> np.uint64(_SHIFT)
    values = (nodes & np.uint64((1 << _SHIFT) - 1)).astype(np.int64)
    wanted = np.zeros(rows_n, dtype=bool)
    wanted[values[capped & (kinds == _ROW)]] = True
    gone_wanted = np.zeros(len(seeds) - rows_n, dtype=bool)
    gone_wanted[values[capped & (kinds == _GONE)]] = True
    in_capped = set(nodes[capped & (kinds == _DOC)].tolist())
    forest, stars = _Edges(), _Stars()
    sent = key_forests(dx, chunk, forest, {d: f for d, f in filed.items() if d in in_capped}, wanted, stars)
    per_probe = int(dx.options.get("max_clusters_verified", MAX_CLUSTERS_VERIFIED))
    a, b, weight, dropped = _best_sketch_edges(*stars.arrays(), per_probe)
    # The standing pages on the sketch keys are pieces too, each with its cluster whole.
    ends = np.concatenate([a, b])
    standing = np.unique(ends[(ends >> np.uint64(_SHIFT)) == _DOC])
    clusters = reach.edges(np.concatenate([base.nodes(), forest.nodes(), standing]))
    n2, l2, size2 = _labels([base, forest, clusters], np.concatenate([seeds[np.concatenate([wanted, gone_wanted])], standing]))
    # Every node of round two is one of round one's (its edges are a part of them): the
    # pieces are those in a component over the cap.
    at, found_at = _find(nodes, n2)
    piece = found_at & capped[at]
    piece_nodes, piece_labels = n2[piece], l2[piece]
    # The pieces joined through the sketch edges, in their order, within the cap.
    ia, ok_a = _find(n2, a)
    ib, ok_b = _find(n2, b)
    ok = ok_a & ok_b & piece[ia] & piece[ib]
    ids = np.unique(piece_labels)
    c = neardup.Components()
    c.add_weighted_nodes(ids.astype(np.uint64).tobytes(), size2[ids].astype(np.uint32).tobytes())
    cut = dropped + c.add_edges_capped(l2[ia[ok]].astype(np.uint64).tobytes(), l2[ib[ok]].astype(np.uint64).tobytes(), cap)
    joined_b, joined_labels_b, joined_sizes_b = c.labels()
    joined = np.frombuffer(joined_b, dtype=np.uint64).astype(np.int64)
    label = np.frombuffer(joined_labels_b, dtype=np.uint32).astype(np.int64)[_find(joined, piece_labels)[0]]
    stats = {"cut_edges": int(cut), "over_cap": int((np.frombuffer(joined_sizes_b, dtype=np.uint32) > cap).sum())}
    new_nodes = np.concatenate([nodes[~capped], piece_nodes])
    new_labels = np.concatenate([labels[~capped], label + int(labels.max(initial=-1)) + 1])
    return new_nodes, new_labels, stats, sent


def _find(haystack: Any, needles: Any) -> Tuple[Any, Any]:
    """Where each of ``needles`` is in the (unsorted) array ``haystack``, and whether it is
    there at all (a position of 0 where not)."""
    import numpy as np

    if not len(haystack):
        return np.zeros(len(needles), dtype=np.int64), np.zeros(len(needles), dtype=bool)
    order = np.argsort(haystack)
    at = order[np.minimum(np.searchsorted(haystack, needles, sorter=order), len(haystack) - 1)]
    return at, haystack[at] == needles


#: ``IndexOptions::max_clusters_verified``'s default (``src/options.rs``): the candidate
#: clusters the single node verifies a page, best first.
MAX_CLUSTERS_VERIFIED = 8


def _best_sketch_edges(a: Any, b: Any, weight: Any, per_probe: int) -> Tuple[Any, Any, Any, int]:
    """The sketch edges of the components over the cap (``key_stars``'), in the order ``_cut``
    joins them: each pair of nodes once, those found through the most keys first, then those
    of the rarest key (the fewest owners), as the single node ranks a page's candidates by the
    keys they share (``Index::rank``). Of the edges from a probe (a row, a member placed again)
    to a standing page, only the probe's ``per_probe`` first are kept: the single node verifies
    at most ``max_clusters_verified`` candidate clusters a page, and a standing page joined is
    one the day's unit must be seeded with, so that what a capped day reads grows with the day,
    not with the index. Returns the edges (``uint64`` nodes, their rarest key's owners) and how
    many were dropped."""
    import numpy as np

    if not len(a):
        return a, b, weight, 0
    pairs, inverse, shared = np.unique(np.stack([a, b], axis=1), axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    rarest = np.full(len(pairs), np.iinfo(np.uint32).max, dtype=np.uint32)
    np.minimum.at(rarest, inverse, weight)
    pa, pb = pairs[:, 0], pairs[:, 1]
    order = np.lexsort((pb, pa, rarest, -shared))
    pa, pb, rarest = pa[order], pb[order], rarest[order]
    # Each probe's edges to standing pages, in that order: all but its first per_probe dropped.
    to_standing = np.flatnonzero((pb >> np.uint64(_SHIFT)) == _DOC)
    grouped = to_standing[np.argsort(pa[to_standing], kind="stable")]
    probe = pa[grouped]
    starts = np.flatnonzero(np.r_[True, probe[1:] != probe[:-1]])
    rank = np.arange(len(grouped)) - np.repeat(starts, np.diff(np.r_[starts, len(grouped)]))
    keep = np.ones(len(pa), dtype=bool)
    keep[grouped[rank >= per_probe]] = False
    return pa[keep], pb[keep], rarest[keep], int((~keep).sum())


def _repeated_keys(keys: List[Optional[str]]) -> Tuple[Any, Any]:
    """The rows whose key an earlier row of the day has (keyless rows aside), and for each the
    first row of that key: in arrays (a dictionary encoding), no dict of the day's keys."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    codes = pc.fill_null(pa.array(keys, pa.string()).dictionary_encode().indices, -1).to_numpy()
    rows = np.flatnonzero(codes >= 0)
    _, first, inverse = np.unique(codes[rows], return_index=True, return_inverse=True)
    first_of = rows[first][inverse.reshape(-1)]
    again = first_of != rows
    return rows[again], first_of[again]


def _pack(nodes: Any, labels: Any, rows_n: int, work_units: int) -> Tuple[List[Unit], List[int]]:
    """The components (``labels`` of ``nodes``) packed into at most ``work_units`` units: in the
    order of their first item (rows, then deletes after every row), each to the unit with the
    least work so far (pages, rows and deletes; the lowest-numbered on a tie); components with
    no row and no delete (what a cut left of a reach) are read by no decision and dropped.
    Returns the units (their items sorted) and the components' sizes, largest first. In
    arrays, a component a few bytes: no object a component (a day of 10⁶ pages is most of 10⁶
    components)."""
    import numpy as np

    n = int(labels.max(initial=-1)) + 1
    kinds = nodes >> np.uint64(_SHIFT)
    values = (nodes & np.uint64((1 << _SHIFT) - 1)).astype(np.int64)
    # Each component's first item in the day's order, and its size.
    never = np.iinfo(np.int64).max
    item = np.where(kinds == _ROW, values, np.where(kinds == _GONE, rows_n + values, never))
    first = np.full(n, never, dtype=np.int64)
    np.minimum.at(first, labels, item)
    counted = (kinds == _ROW) | (kinds == _GONE) | (kinds == _DOC)
    size = np.bincount(labels[counted], minlength=n)
    kept = np.flatnonzero(first < never)
    ordered = kept[np.argsort(first[kept], kind="stable")]
    units_n = max(1, min(work_units, len(ordered)))
    unit_of = np.full(n, -1, dtype=np.int64)
    load = [(0, i) for i in range(units_n)]
    assigned = np.empty(len(ordered), dtype=np.int64)
    for j, s in enumerate(size[ordered].tolist()):
        w, i = heapq.heappop(load)
        assigned[j] = i
        heapq.heappush(load, (w + s, i))
    unit_of[ordered] = assigned
    units = [Unit() for _ in range(units_n)]
    node_unit = unit_of[labels]
    for attr, kind in (("rows", _ROW), ("gone", _GONE), ("pages", _DOC), ("clusters", _CLUSTER)):
        sel = (kinds == kind) & (node_unit >= 0)
        u, v = node_unit[sel], values[sel]
        order = np.lexsort((v, u))
        bounds = np.searchsorted(u[order], np.arange(units_n + 1)).tolist()
        vals = v[order].tolist()
        for i, unit in enumerate(units):
            setattr(unit, attr, vals[bounds[i] : bounds[i + 1]])
    return units, sorted(size[kept].tolist(), reverse=True)


def _close_simhashes(edges: _Edges, rows: List[Tuple[int, int]], distance: int) -> None:
    """Joins the day's pages whose simhashes are within ``distance`` bits: pages with one
    simhash to the first of them, and the first pages of distinct simhashes that are close
    (``neardup.close_simhash_pairs``, in Rust)."""
    import numpy as np

    if not rows:
        return
    r = np.asarray([x for x, _ in rows], dtype=np.int64)
    h = np.asarray([y for _, y in rows], dtype=np.uint64)
    unique, first, inverse = np.unique(h, return_index=True, return_inverse=True)
    rep = r[first]
    edges.add(_tag(_ROW, r), _tag(_ROW, rep[inverse.reshape(-1)]))
    i, j = neardup.close_simhash_pairs(unique.tobytes(), distance)
    i, j = np.frombuffer(i, dtype=np.uint32), np.frombuffer(j, dtype=np.uint32)
    edges.add(_tag(_ROW, rep[i]), _tag(_ROW, rep[j]))
