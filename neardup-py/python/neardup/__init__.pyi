"""Type stubs of neardup: an embedded near-duplicate index for web pages.

They describe the package's face, what ``neardup/__init__.py`` re-exports: the classes and
functions defined in ``_index``, ``_signatures``, ``_verdicts``, ``_errors`` and the extension
``_neardup``. The Python modules behind it and ``neardup.ray`` carry their own types inline.
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import ItemsView, KeysView, ValuesView
from typing import Any, Callable, Dict, Iterable, Iterator, List, Literal, Mapping, Optional, Tuple, TypeVar, Union, overload

import pyarrow

from ._errors import (
    AlreadyOpenError as AlreadyOpenError,
    BinaryPageError as BinaryPageError,
    ChangesTrimmedError as ChangesTrimmedError,
    CheckFailedError as CheckFailedError,
    CorruptionError as CorruptionError,
    Error as Error,
    FullError as FullError,
    IncompatibleConfigError as IncompatibleConfigError,
    IncompatibleFormatError as IncompatibleFormatError,
    InvalidArgumentError as InvalidArgumentError,
    InvalidTypeError as InvalidTypeError,
    IoError as IoError,
    NotFoundError as NotFoundError,
    PageTooLargeError as PageTooLargeError,
    PoisonedError as PoisonedError,
    ReadOnlyError as ReadOnlyError,
    StorageError as StorageError,
    TextUnavailableError as TextUnavailableError,
    WrongProcessError as WrongProcessError,
)

__version__: str
#: The library's source id (16 hex digits): builds with the same id give the same verdicts.
SOURCE_ID: str
DEFAULT_BATCH_SIZE: int

#: HTML as fetched (bytes in any encoding, or str).
Html = Union[bytes, bytearray, str]
#: True (a tqdm bar when tqdm is installed), False/None, or ``progress(done, total)``.
Progress = Union[bool, None, Callable[[int, Optional[int]], Any]]
#: Arrow data (a table, record batch, reader, or anything with ``__arrow_c_stream__``) or an
#: iterable of dicts with ``id`` (or ``url``), ``host``, ``time``, and ``html`` or ``text``.
Pages = Union[pyarrow.Table, pyarrow.RecordBatch, pyarrow.RecordBatchReader, Iterable[Dict[str, Any]], Any]

_T = TypeVar("_T")

# The result values (Verdict, Deletion, PageInfo, NearDuplicate, Signatures, Similarity, Layout)
# are immutable, compare equal by their fields, hash alike, and pickle (a Ray task returns them).

class Verdict:
    """The answer for one page: is it a near duplicate, of what, how similar."""

    @property
    def duplicate(self) -> bool: ...
    @property
    def doc(self) -> Optional[int]: ...
    @property
    def seq(self) -> Optional[int]: ...
    @property
    def cluster(self) -> Optional[int]: ...
    @property
    def representative(self) -> Optional[str]: ...
    @property
    def similar_to(self) -> Optional[str]: ...
    @property
    def resemble(self) -> float: ...
    @property
    def contain(self) -> float: ...
    @property
    def exact(self) -> bool: ...
    @property
    def identical_to(self) -> Optional[str]: ...
    @property
    def text_chars(self) -> int: ...
    @property
    def replaced(self) -> bool: ...
    @property
    def replaced_page(self) -> Optional[Deletion]: ...
    @property
    def unchanged(self) -> bool:
        """The same main text and host were stored (an unchanged recrawl): nothing decided again."""
    @property
    def unchanged_html(self) -> bool:
        """``unchanged``, and the raw page byte-identical to the stored one (with the same time,
        nothing was written)."""
    @property
    def no_main_text(self) -> bool: ...
    @property
    def candidates(self) -> int: ...
    @property
    def verified(self) -> int: ...

class Deletion:
    """What a delete changed."""

    @property
    def key(self) -> str: ...
    @property
    def doc(self) -> int: ...
    @property
    def cluster(self) -> int: ...
    @property
    def was_representative(self) -> bool: ...
    @property
    def representative(self) -> Optional[str]: ...
    @property
    def moved(self) -> List[Tuple[str, int, str]]:
        """``(key, cluster, representative)`` of each member moved by a representative's delete."""

class PageInfo:
    """A stored page as the index holds it."""

    @property
    def key(self) -> str: ...
    @property
    def doc(self) -> int: ...
    @property
    def seq(self) -> int: ...
    @property
    def cluster(self) -> int: ...
    @property
    def representative(self) -> str: ...
    @property
    def similar_to(self) -> Optional[str]: ...
    @property
    def resemble(self) -> float: ...
    @property
    def contain(self) -> float: ...
    @property
    def content_hash(self) -> int: ...
    @property
    def host(self) -> str: ...
    @property
    def time(self) -> int: ...
    @property
    def text_chars(self) -> int: ...

class NearDuplicate:
    """A stored page a query verified similar to (``Index.near``)."""

    @property
    def key(self) -> str: ...
    @property
    def doc(self) -> int: ...
    @property
    def cluster(self) -> int: ...
    @property
    def representative(self) -> str: ...
    @property
    def resemble(self) -> float: ...
    @property
    def contain(self) -> float: ...
    @property
    def exact(self) -> bool: ...

class Change:
    """One committed change of an index's feed (``Index.changes_since``); its fields are those
    of its kind (``None`` for the others). ``bytes(change)`` is what ``Index.apply_change``
    takes on a copy of the index; ``Change.from_bytes`` reads it back."""

    @staticmethod
    def from_bytes(data: bytes) -> Change: ...
    @property
    def seq(self) -> int: ...
    @property
    def committed_ms(self) -> int: ...
    @property
    def kind(self) -> Literal["inserted", "replaced", "retimed", "deleted", "moved", "representative_changed"]: ...
    @property
    def key(self) -> Optional[str]: ...
    @property
    def host(self) -> Optional[str]: ...
    @property
    def time(self) -> Optional[int]: ...
    @property
    def doc(self) -> Optional[int]: ...
    @property
    def cluster(self) -> Optional[int]: ...
    @property
    def from_cluster(self) -> Optional[int]: ...
    @property
    def representative(self) -> Optional[str]: ...
    @property
    def previous(self) -> Optional[str]: ...
    @property
    def text(self) -> Optional[str]: ...
    def __bytes__(self) -> bytes: ...

class Signatures:
    """Everything computed from one page."""

    @property
    def text(self) -> str: ...
    @property
    def fingerprints(self) -> List[int]: ...
    @property
    def sketch(self) -> List[int]: ...
    @property
    def simhash(self) -> int: ...
    @property
    def content_hash(self) -> int: ...
    @property
    def codes(self) -> List[int]: ...

class Similarity:
    """The outcome of ``verify`` for one pair of texts."""

    @property
    def similar(self) -> bool: ...
    @property
    def resemble(self) -> float: ...
    @property
    def contain(self) -> float: ...
    @property
    def len_a(self) -> int: ...
    @property
    def len_b(self) -> int: ...
    @property
    def tlcs(self) -> int: ...

class Index(Mapping[str, PageInfo]):
    """An open neardup index (a directory), and a mapping of key → ``PageInfo`` that streams its
    iteration and deletes with ``del``. ``options`` are ``IndexOptions``' fields:
    ``representative``, ``store_texts``, ``sync_writes``, ``simhash_max_distance``,
    ``min_text_width``, ``max_clusters_verified``, ``heading_codes``, ``block_cache_bytes``,
    ``write_buffer_bytes``, ``max_open_files``, ``sticky_representative``, ``reuse_ids``,
    ``create_if_missing``, nested ``signature`` / ``verify`` / ``frequent`` / ``chrome`` dicts,
    and ``method`` (short for ``signature={"method": ...}``)."""

    def __init__(self, path: Union[str, os.PathLike[str]], /, *, read_only: bool = False, **options: Any) -> None: ...
    def __enter__(self) -> Index: ...
    def __exit__(self, *exc: Any) -> None: ...
    def __len__(self) -> int: ...
    def __contains__(self, key: object) -> bool: ...
    def __getitem__(self, key: str) -> PageInfo:
        """Raises ``NotFoundError`` (a ``KeyError``) when the key is absent."""
    def __delitem__(self, key: str) -> None:
        """Deletes the page; ``NotFoundError`` (a ``KeyError``) when the key is absent."""
    def __iter__(self) -> Iterator[str]:
        """The keys in page-id order, streamed a chunk at a time."""
    def keys(self) -> KeysView[str]: ...
    def values(self) -> ValuesView[PageInfo]: ...
    def items(self) -> ItemsView[str, PageInfo]: ...
    def __reduce__(self) -> Any:
        """Raises TypeError: an index cannot be pickled (open it inside the actor or stage)."""
    def insert(
        self,
        key: str,
        html: Optional[Html] = None,
        text: Optional[str] = None,
        *,
        host: Optional[str] = None,
        time: int = 0,
    ) -> Verdict: ...
    def query(
        self,
        html: Optional[Html] = None,
        text: Optional[str] = None,
        *,
        key: Optional[str] = None,
        host: Optional[str] = None,
    ) -> Verdict: ...
    def near(
        self,
        html: Optional[Html] = None,
        text: Optional[str] = None,
        *,
        key: Optional[str] = None,
        host: Optional[str] = None,
        k: Optional[int] = 10,
        threshold: Optional[float] = None,
        by: Literal["resemble", "contain"] = "resemble",
    ) -> List[NearDuplicate]:
        """Every stored page this one verifies similar to, best first, at most ``k`` (None: all
        found), each with its ``by`` score at least ``threshold`` (inclusive). Nothing stored."""
    def delete(self, key: str) -> Deletion:
        """Raises ``NotFoundError`` (a ``KeyError``) when the key is absent."""
    @overload
    def get(self, key: str) -> Optional[PageInfo]: ...
    @overload
    def get(self, key: str, default: _T) -> Union[PageInfo, _T]: ...
    def insert_many(
        self,
        pages: Pages,
        *,
        order: str = "input",
        order_scope: str = "window",
        batch_size: int = 4096,
        window: int = 1024,
        group: int = 1024,
        progress: Progress = True,
    ) -> pyarrow.Table:
        """Batch insert, in the order given unless ``order="fingerprints"``; one output row per
        input row, in order, with ``error``/``error_type``."""
    def query_many(self, pages: Pages, *, batch_size: int = 4096, progress: Progress = False) -> pyarrow.Table: ...
    def insertion_session(
        self,
        *,
        batch_size: int = 4096,
        order: str = "input",
        order_scope: str = "window",
        progress: Progress = False,
    ) -> InsertionSession: ...
    def changes_since(self, seq: int = 0) -> Iterator[Change]:
        """Every change committed after change ``seq``, in sequence order, streamed;
        ``ChangesTrimmedError`` when some were trimmed."""
    def last_change(self) -> int:
        """The sequence number of the last committed change (0: none)."""
    def apply_change(self, change: Union[Change, bytes]) -> None:
        """Applies a change of another index's feed to this copy of it."""
    def export(self) -> pyarrow.Table:
        """``pyarrow.Table(key: string, representative: string)``, as ``neardup export``."""
    def export_clusters(self) -> pyarrow.Table:
        """``pyarrow.Table(cluster: uint64, representative: string, members: list<string>)``."""
    def cluster_members(self, cluster: int, offset: int = 0, limit: Optional[int] = None) -> Optional[List[str]]: ...
    def stats(self) -> Dict[str, Any]: ...
    def check(self, sample: Optional[int] = None) -> Dict[str, Any]: ...
    def memory(self) -> Dict[str, int]: ...
    def metrics(self) -> Dict[str, Any]:
        """Counts, errors and latencies (µs: mean, p50, p90, p99, max) per operation since the
        index was opened, insert outcomes, RocksDB's stall figures and the memory by part."""
    def rocksdb_stats(self) -> str: ...
    def flush(self) -> None: ...
    def checkpoint(self, dir: Union[str, os.PathLike[str]]) -> None: ...
    def decision_reach(
        self, bodies: List[Html], keys: List[str], gone: List[str], is_html: bool = True
    ) -> Tuple[List[int], List[int]]:
        """The page and cluster ids deciding these pages (with their keys) and deletes reads."""
    def seed_log(self, pages: List[int], clusters: List[int]) -> bytes:
        """The batch log that seeds an empty scratch index with these pages and clusters."""
    def seed_log_file(self, pages: List[int], clusters: List[int], path: str) -> int:
        """``seed_log`` written to the new file ``path`` as it is read, never whole in memory;
        its size in bytes."""
    def state_log(self) -> bytes:
        """The whole state of the index as a batch log."""
    def state_diff_file(
        self, before: bytes, live_docs: int, live_clusters: int, path: str, ids: Optional[ScratchIds] = None
    ) -> int:
        """``state_diff(before, self.state_log(), live_docs, live_clusters)`` written to the file
        ``path`` one operation at a time; its size in bytes. With ``ids`` (from
        ``scratch_seed``), written in the standing index's ids."""
    def state_file(self, path: Union[str, os.PathLike[str]]) -> int:
        """The state log written to the file ``path`` in the order a diff reads it; its size in
        bytes (``state_diff_file_since`` reads it back)."""
    def state_diff_file_since(
        self, before: Union[str, os.PathLike[str]], live_docs: int, live_clusters: int, path: str, ids: Optional[ScratchIds] = None
    ) -> int:
        """``state_diff_file`` of the state ``state_file`` wrote to ``before``, read from the
        file as the diff goes, not held in memory."""
    def apply_log(self, batch: int, log: bytes) -> bool:
        """Applies batch ``batch``'s log once in effect; ``False`` when it was applied already."""
    def apply_log_file(self, batch: int, path: Union[str, os.PathLike[str]]) -> bool:
        """``apply_log`` of the log in the file ``path``, read an operation at a time, never
        whole."""
    def applied_batch(self) -> Optional[int]: ...
    def set_partition(self, layout: Layout, role: str, part: int) -> None:
        """Makes this empty index partition ``part`` (``role`` ``"key"`` or ``"doc"``) of
        ``layout``: written by batch logs only from then on."""
    @property
    def partition(self) -> Optional[Tuple[str, int, int, int]]:
        """``(role, part, key_parts, doc_parts)``, or ``None`` for a whole index."""
    def posting_reach(self, packed: bytes) -> List[int]:
        """Page ids filed under any of the concatenated 9-byte posting keys (over-frequent
        ones left out)."""
    def simhash_reach(self, simhashes: List[int]) -> List[int]:
        """Page ids within the simhash distance of any of ``simhashes`` (entries held here)."""
    def record_allocations(self, on: bool) -> None:
        """Starts or stops recording the ids committed writes give out."""
    def take_allocations(self) -> List[Tuple[Optional[str], str, int, Optional[int]]]:
        """``(key, kind, id, seq)`` of each id given out since the last call, in order."""
    def posting_ids(self, packed: bytes) -> List[List[int]]:
        """Per concatenated 9-byte posting key, the page ids filed under it (none for an
        over-frequent key)."""
    def simhash_ids(self, simhashes: List[int]) -> List[List[int]]:
        """Per simhash, the page ids within the simhash distance (entries held here)."""
    def probe_forest(self, join: "ProbeJoin", doc_tag: int) -> Tuple[bytes, bytes, Dict[str, int]]:
        """The partial forest (``uint64`` nodes and roots) of ``join``'s probes (emptied) joined
        through this key partition's postings and simhash tables; and the ``keys``,
        ``simhashes`` and ``standing`` pages looked up."""
    def key_stars(self, stars: "KeyStars", doc_tag: int) -> Tuple[bytes, bytes, bytes, int]:
        """For each key of ``stars`` (emptied), an edge from its lowest owner to each other
        owner and each standing page filed under it (node ``doc_tag | d``; none for an
        over-frequent key): ``(a, b, weights, keys)``, ``uint64`` edges, each edge's key's
        owners (``uint32``), and the distinct keys looked up."""
    def key_ids(self, keys: List[str]) -> List[Optional[int]]: ...
    def page_clusters(self, ids: List[int]) -> List[Optional[int]]: ...
    def cluster_member_ids(self, clusters: List[int]) -> List[Optional[List[int]]]: ...
    def filed_pages(self, ids: List[int]) -> List[Optional[Tuple[int, bytes]]]:
        """Of each page held, ``(simhash, concatenated 9-byte posting keys)``."""
    def partition_rows(self) -> Tuple[Dict[str, List[Any]], Dict[str, List[int]]]:
        """The pages (``doc``, ``key``, ``cluster``, ``seq``, ``similar_to``, ``similar_seq``)
        and clusters (``cluster``, ``representative`` page id) held here."""
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def path(self) -> pathlib.Path: ...
    @property
    def read_only(self) -> bool: ...
    @property
    def options(self) -> Dict[str, Any]: ...

class InsertionSession:
    """Buffers inserts and flushes them through ``insert_many`` every ``batch_size`` pages."""

    def __enter__(self) -> InsertionSession: ...
    def __exit__(self, *exc: Any) -> None: ...
    def insert(
        self, key: str, html: Optional[Html] = None, text: Optional[str] = None, *, host: Optional[str] = None, time: int = 0
    ) -> None: ...
    def flush(self) -> None: ...
    def results(self) -> pyarrow.Table: ...

def signatures(html: Optional[Html] = None, text: Optional[str] = None, **config: Any) -> Signatures:
    """The signatures of one page; ``config`` overrides ``SignatureConfig`` fields."""

def extract(html: Optional[Html] = None, text: Optional[str] = None, **config: Any) -> Dict[str, Any]:
    """The main text of one page: ``title``, ``heading``, ``text`` (before normalization), ``lang``."""

def verify(a: str, b: str, **config: Any) -> Similarity:
    """Trustable-LCS verification of two normalized texts; ``config`` overrides ``VerifyConfig``."""

def host_of(url: str) -> str: ...

class Layout:
    """How a distributed index is cut into key and doc partitions (FORMAT.md "Partitions")."""

    def __init__(self, key_parts: int, doc_parts: int, simhash_max_distance: int = 3) -> None: ...
    @property
    def key_parts(self) -> int: ...
    @property
    def doc_parts(self) -> int: ...
    @property
    def simhash_max_distance(self) -> int: ...
    def posting_parts(self, packed: bytes) -> List[int]:
        """The key partition of each concatenated 9-byte posting key."""
    def simhash_parts(self, simhashes: List[int]) -> List[List[int]]:
        """The key partitions a look-up of each simhash reads."""
    def key_parts_of(self, keys: List[str]) -> List[int]:
        """The doc partition of each external key."""
    def doc_part(self, id: int) -> int: ...
    def cluster_part(self, id: int) -> int: ...
    def route(self, log: bytes) -> Tuple[List[bytes], List[bytes]]:
        """A batch log cut by partition: the key partitions' logs, the doc partitions', in
        global (64-bit) ids."""

class Partition:
    """One partition of a distributed index with 64-bit page and cluster ids (on-disk format 7,
    FORMAT.md "Format 7: partitions with 64-bit ids"), written only by batch logs. Created in a
    new or empty directory with the options of ``Index``; an existing partition is opened with
    its stored configuration and must be ``role`` partition ``part`` of ``layout``."""

    def __init__(self, path: Union[str, os.PathLike[str]], layout: Layout, role: str, part: int, /, *, read_only: bool = False, **options: Any) -> None: ...
    @property
    def partition(self) -> Tuple[str, int, int, int]:
        """``(role, part, key_parts, doc_parts)``."""
    @property
    def path(self) -> pathlib.Path: ...
    @property
    def closed(self) -> bool: ...
    def config_json(self) -> str: ...
    def __len__(self) -> int: ...
    def stats(self) -> Dict[str, int]:
        """``pages``, ``clusters`` (live in the whole index), ``next_page``, ``next_cluster``,
        ``next_seq``."""
    def apply_log(self, batch: int, log: bytes) -> bool: ...
    def apply_log_file(self, batch: int, path: Union[str, os.PathLike[str]]) -> bool: ...
    def applied_batch(self) -> Optional[int]: ...
    def state_log(self) -> bytes: ...
    def seed_log(self, pages: List[int], clusters: List[int]) -> bytes: ...
    def seed_log_file(self, pages: List[int], clusters: List[int], path: str) -> int: ...
    def posting_ids(self, packed: bytes) -> List[List[int]]: ...
    def simhash_ids(self, simhashes: List[int]) -> List[List[int]]: ...
    def probe_forest(self, join: ProbeJoin, doc_tag: int) -> Tuple[bytes, bytes, Dict[str, int]]: ...
    def key_stars(self, stars: KeyStars, doc_tag: int) -> Tuple[bytes, bytes, bytes, int]: ...
    def key_ids(self, keys: List[str]) -> List[Optional[int]]: ...
    def page_clusters(self, ids: List[int]) -> List[Optional[int]]: ...
    def cluster_member_ids(self, clusters: List[int]) -> List[Optional[List[int]]]: ...
    def filed_pages(self, ids: List[int]) -> List[Optional[Tuple[int, bytes]]]: ...
    def partition_rows(self) -> Tuple[Dict[str, List[Any]], Dict[str, List[int]]]: ...
    def checkpoint(self, dir: Union[str, os.PathLike[str]]) -> None: ...
    def compact(self) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Partition": ...
    def __exit__(self, *exc: Any) -> None: ...

def combine_seed_logs(logs: List[bytes]) -> bytes:
    """One scratch seed from the partitions' seed logs, in global (64-bit) ids."""

class ScratchIds:
    """A work unit's dense scratch ids: the ids its seed names numbered ``0, 1, ...`` in
    order, its new ones past them; maps them back to the standing index's ids."""
    def global_page(self, id: int) -> int: ...
    def global_cluster(self, id: int) -> int: ...

def scratch_seed(seed: bytes) -> Tuple[bytes, ScratchIds]:
    """A work unit's seed numbered densely for its scratch index, and the ids that map back."""

def scratch_seed_files(parts: List[Union[str, os.PathLike[str]]], out: Union[str, os.PathLike[str]]) -> ScratchIds:
    """``scratch_seed(combine_seed_logs(parts))`` of the seed logs in the files ``parts``, the
    scratch seed written to ``out``; neither log is held in memory."""

def combine_unit_logs(
    base: Dict[str, int], logs: List[bytes], maps: Optional[List[Dict[str, List[int]]]] = None
) -> bytes:
    """One batch log from the work units' logs, each unit's new ids moved past the units'
    before it, or mapped by ``maps`` (``docs``, ``clusters``, ``seqs`` per unit); ``base``:
    ``next_doc``, ``next_cluster``, ``next_seq``, ``live_docs``, ``live_clusters`` at the
    batch's start."""

def log_counters(log: bytes) -> Dict[str, int]:
    """The counters a batch log sets."""

def remap_unit_log(base: Dict[str, int], unit: int, log: bytes, map: Dict[str, List[int]]) -> Tuple[bytes, Dict[str, int]]:
    """Work unit ``unit``'s log with its new ids mapped by ``map`` (``docs``, ``clusters``,
    ``seqs``) and its counters left out, and what it gave out and changed (``docs``,
    ``clusters``, ``seqs``, ``live_docs``, ``live_clusters``). ``batch_counters`` of every unit's
    totals, then each unit's mapped log in unit order, is ``combine_unit_logs`` with the maps."""

def route_unit_log_file(
    base: Dict[str, int], unit: int, log: str, map: Dict[str, List[int]], layout: Layout, out: str
) -> Tuple[Dict[str, int], List[Tuple[str, int, int]]]:
    """``remap_unit_log`` then ``Layout.route``, one operation at a time, from the log file
    ``log`` to a file a partition the unit changes in the directory ``out`` (``<name>.ndlog``):
    the totals and ``(name, operations, bytes)`` of each file written."""

def batch_counters(base: Dict[str, int], totals: List[Dict[str, int]]) -> bytes:
    """The counters of a batch log whose work units gave out and changed ``totals``."""

def join_logs(logs: List[bytes]) -> bytes:
    """One log of the operations of ``logs`` in order, in global (64-bit) ids (a log of
    32-bit ids is widened)."""

def join_log_files(head: bytes, pieces: List[Union[str, os.PathLike[str]]], out: Union[str, os.PathLike[str]]) -> int:
    """``join_logs`` from files to a file: the log ``head``, then the operations of each log
    file of ``pieces`` in order, written to the file ``out`` one operation at a time (no log
    held in memory); the joined log's size in bytes. A damaged piece leaves no file at
    ``out``."""

class ProbeJoin:
    """A key partition's probes for S3, added block by block, each with its ``uint64`` owner
    node; ``Index.probe_forest`` joins them through the partition's postings."""

    def __init__(self) -> None: ...
    def add_keys(self, packed: bytes, owners: bytes) -> None:
        """Posting keys (9 bytes each) with their owners (``uint64`` bytes)."""
    def add_simhashes(self, simhashes: bytes, owners: bytes) -> None:
        """Simhashes with their owners (both ``uint64`` bytes)."""

class KeyStars:
    """A key partition's keys with every owner filed under each (``uint64`` nodes), added block
    by block; ``Index.key_stars`` reads them through the partition's postings (the third round
    of a component over the cap, SCALEOUT §7.1 option 2)."""

    def __init__(self) -> None: ...
    def add_keys(self, packed: bytes, owners: bytes) -> None:
        """Posting keys (9 bytes each) with their owners (``uint64`` bytes)."""

class Components:
    """A union-find over ``uint64`` node ids fed with edges in bulk (S3 of the distributed
    merge, SCALEOUT §5). Arrays are bytes of native-endian integers (``numpy`` ``tobytes()`` in,
    ``numpy.frombuffer`` out); nodes and components are numbered in the order nodes are first
    seen."""

    def __init__(self) -> None: ...
    def add_nodes(self, nodes: bytes) -> None:
        """Adds nodes (``uint64``), each its own component unless an edge joins it."""
    def add_edges(self, a: bytes, b: bytes) -> None:
        """Joins ``a[i]`` and ``b[i]`` (``uint64`` arrays of one length); ``InvalidArgumentError``
        otherwise."""
    def add_weighted_nodes(self, nodes: bytes, weights: bytes) -> None:
        """Adds nodes (``uint64``) with weights (``uint32``, one a node): a component's size is
        its nodes' weight (a node seen before keeps its own, others weigh 1)."""
    def add_edges_capped(self, a: bytes, b: bytes, cap: int) -> int:
        """Joins ``a[i]`` and ``b[i]`` in order, each only when the joined component would weigh
        at most ``cap``; the number of edges cut."""
    def forest(self) -> Tuple[bytes, bytes]:
        """The partial forest ``(nodes, roots)`` (``uint64``): every node not alone, with its
        component's root; another builder's ``merge_forest`` of it joins what these edges did."""
    def merge_forest(self, nodes: bytes, roots: bytes) -> None:
        """Merges a partial forest from ``forest()``."""
    def labels(self) -> Tuple[bytes, bytes, bytes]:
        """``(nodes, labels, sizes)``: every node (``uint64``, first-seen order), its component id
        (``uint32``, dense, in the order of each component's first node), each component's size
        (``uint32``)."""
    def __len__(self) -> int: ...

def close_simhash_pairs(hashes: bytes, distance: int) -> Tuple[bytes, bytes]:
    """The pairs ``(i, j)``, ``i < j``, of ``hashes`` (``uint64`` bytes) within ``distance``
    bits (inclusive), each once, sorted, as two ``uint32`` arrays (bytes)."""
def state_diff(before: bytes, after: bytes, live_docs: int, live_clusters: int) -> bytes:
    """The batch log from a scratch index's seeded state to its decided one, for a standing
    index with these live counts at the batch's start."""
def signatures_table(
    batch: Any,
    html_col: Optional[str] = "html",
    text_col: Optional[str] = None,
    *,
    main_text: bool = False,
    **config: Any,
) -> Union[pyarrow.Table, pyarrow.RecordBatch]:
    """Arrow in, Arrow out: the input's columns plus ``text``, ``simhash``, ``content_hash``,
    ``fingerprints``, ``sketch``, ``codes``, ``posting_keys`` and ``error`` (and with
    ``main_text=True`` the encoded main text ``insert_many`` reads back); for ``map_batches`` / ``mapInArrow``."""
