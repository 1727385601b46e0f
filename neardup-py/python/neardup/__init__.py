"""neardup: an embedded near-duplicate index for web pages.

A crawler or a data pipeline hands it every page; neardup answers whether the page is a near
duplicate of a page it already holds, of which cluster, with what resemblance and containment,
and keeps its clusters right as pages come and go. The index lives in a directory (RocksDB).

>>> import neardup
>>> ix = neardup.Index("idx/")                                  # doctest: +SKIP
>>> v = ix.insert("https://a.example/1", html=b"<html>...")     # doctest: +SKIP
>>> v.duplicate, v.cluster, v.representative                    # doctest: +SKIP

Batches (``Index.insert_many``, ``Index.query_many``, ``signatures_table``) take Arrow tables,
record batches, readers (anything with ``__arrow_c_stream__``) or iterables of dicts with the
columns of the command line's JSONL input: ``id`` (or ``url``), ``host``, ``time``, and ``html``
or ``text``. They return ``pyarrow.Table`` objects in input order, with an ``error`` column: a
bad page does not stop the batch.

Every call into the library releases the GIL, so Python threads using one index, or computing
signatures, run in parallel. An ``Index`` cannot be pickled: open it where it is used (inside a
Ray actor, in a stage's ``setup()``).
"""

# The work lives in modules named for it: _index (Index, InsertionSession), _changes (the change
# feed's iteration), _rows (the batch calls' input rows), _verdicts (their output table, their
# progress), _signatures (signatures_table), _errors (the exceptions); _neardup is the Rust
# extension, and neardup.ray the merge on Ray.

from __future__ import annotations

from . import _errors, _neardup
from ._errors import (
    AlreadyOpenError,
    BinaryPageError,
    ChangesTrimmedError,
    CheckFailedError,
    CorruptionError,
    Error,
    FullError,
    IncompatibleConfigError,
    IncompatibleFormatError,
    InvalidArgumentError,
    InvalidTypeError,
    IoError,
    NotFoundError,
    PageTooLargeError,
    PoisonedError,
    ReadOnlyError,
    StorageError,
    TextUnavailableError,
    WrongProcessError,
)
from ._index import DEFAULT_BATCH_SIZE, Index, InsertionSession
from ._neardup import (
    Change,
    Components,
    Deletion,
    KeyStars,
    Layout,
    NearDuplicate,
    PageInfo,
    Partition,
    ProbeJoin,
    ScratchIds,
    Signatures,
    Similarity,
    Verdict,
    close_simhash_pairs,
    combine_seed_logs,
    batch_counters,
    combine_unit_logs,
    extract,
    host_of,
    join_log_files,
    join_logs,
    log_counters,
    remap_unit_log,
    route_unit_log_file,
    scratch_seed,
    scratch_seed_files,
    signatures,
    state_diff,
    verify,
)
from ._signatures import signatures_table
from ._verdicts import Progress

__version__: str = _neardup.__version__
#: The library's source id: 16 hex digits hashing the Rust library sources this package was built
#: from (``neardup::SOURCE_ID``). ``neardup --version`` prints the command line's: the two give
#: the same verdicts when the ids are equal, and may not otherwise, whatever their versions say.
SOURCE_ID: str = _neardup.SOURCE_ID

__all__ = [
    "SOURCE_ID",
    "Index",
    "InsertionSession",
    "Verdict",
    "Deletion",
    "PageInfo",
    "NearDuplicate",
    "Signatures",
    "Similarity",
    "Change",
    "signatures",
    "extract",
    "signatures_table",
    "state_diff",
    "Layout",
    "Partition",
    "combine_seed_logs",
    "scratch_seed",
    "scratch_seed_files",
    "ScratchIds",
    "combine_unit_logs",
    "remap_unit_log",
    "route_unit_log_file",
    "batch_counters",
    "join_logs",
    "join_log_files",
    "log_counters",
    "Components",
    "ProbeJoin",
    "KeyStars",
    "close_simhash_pairs",
    "verify",
    "host_of",
    *_errors.__all__,
]

# Shown (repr, help, pickle) under the name they are imported by, not the module defining them.
for _obj in (Index, InsertionSession, signatures_table):
    _obj.__module__ = __name__
del _obj
