"""The daily merge of a distributed neardup index on Ray (SCALEOUT §5, §9).

A distributed index lives under one root directory: K key partitions and J doc partitions
(``neardup.Layout``), each a neardup database owned by a named Ray actor that reopens it when
restarted (a ``neardup.Partition``, format 7: page and cluster ids are 64-bit, up to 2⁵⁶; the
partitions of a root made before format 7 stay the format 6 ``neardup.Index`` databases they
are, ids below 2³²), and one directory per merged batch (``batches/batch=<n>/``) with its stage outputs.
A day is merged by ``DistributedIndex.merge(files, delete_list)``:

- **S1 signatures**: the day's files (JSONL, ``.gz`` too, or Parquet) read by Ray tasks, block
  by block, each block signed by a task (``neardup.signatures_table``: each page's posting keys
  and simhash) and written to the batch's ``s1/`` with its pages; the driver holds no page
  (S2–S4 are coordinated by an actor that reads the day's keys from ``s1/``).
- **S2 reach**: the posting keys go to their key partitions, the simhashes to the partitions of
  their blocks; the deleted and re-crawled keys go to their doc partitions, which give their pages,
  clusters and members, whose own keys reach further (what ``Index.decision_reach`` reads on one
  machine).
- **S3 components**: the day's pages, the standing pages they reach (by key, by simhash, by
  re-crawled or deleted key) and the clusters of those pages, whole, joined as arrays of ``u64``
  node pairs by a union-find in Rust (``neardup.Components``); a component over ``max_component``
  items is cut by its sketch keys' edges, the largest postings' first: joined again on the key
  partitions without those keys, its pieces joined back through them, the rarest first, while
  they fit (SCALEOUT §7.1 option (2), reported as ``components.capped``); components are packed into work units, in the order of
  their first page, each to the least loaded unit.
- **S4 decide**: each work unit in its own scratch index, a Ray task: seeded with what its
  components read (``seed_log`` of the partitions, ``neardup.combine_seed_logs``), deciding
  nothing; its deletes and its pages run with the single-node code in whole-batch order; the
  difference of its state logs is its log. ``neardup.combine_unit_logs`` numbers each unit's new
  pages, clusters and insertion sequence after the units before it; the batch log is cut by
  partition (``Layout.route``) and written to disk with a completion marker.
- **S5 commit**: each partition applies its log once in effect (``Partition.apply_log``, the
  batch recorded in the last write).
- **S6 report and checkpoint**: counts and timings in ``report.json``, optionally an export
  (``_export``: each doc partition writes its part, the references between partitions resolved
  actor to actor, and the driver merges the parts by page id into the TSV, streaming), and a
  checkpoint of every partition; then the batch is retired: once every partition applied it, its
  logs and signatures are removed (``keep_batches`` keeps the last ones whole), and so are the
  directories of earlier batches.

The day's records are read as ``neardup ingest`` reads them: a line that cannot be read, or a row
that cannot be a page, is an error row (``errors``, ``error_rows`` with file, line and reason),
never the end of the merge. A merge is re-run with the same inputs after any failure: a batch
whose logs were written goes straight to S5, and partitions that applied it already skip it. A
root whose layout file names partitions that are not there is refused
(``MissingPartitionsError``), never opened as a new, empty index.

Partitions are placed across the cluster's nodes (``_place``): a new index stores its
assignment partition → node in ``placement.json`` (nodes named by their ``neardup-node`` label,
else their IP address, which survive a restart), and every driver pins each partition's actor
to the node alive under its name; a partition whose node is gone refuses the index
(``PartitionNodeMissingError``). ``DistributedIndex.move_partition`` moves one, its checkpoint
streamed to the target node through Ray objects. Each node keeps its databases under the index's
``local_root`` (``{node}`` in it replaced by the node's name; by default the root).

Durable state off the nodes (``_store``, ``_durable``): an index created with a shared
``store`` (a path every node reaches, or a ``pyarrow.fs`` URI such as ``s3://bucket/ix``) keeps
its batches there, written by the workers (S1's signatures, S4's logs; the actors read their
logs from it in S5), and every partition uploads an incremental checkpoint to it after each
committed batch (S6; files by sha256, a manifest per checkpoint, the older ones retired). A
partition whose node is lost is restored when the index is next opened: its last checkpoint
copied to another alive node, ``placement.json`` rewritten, the batch logs since replayed (or,
lost while a merge runs, when one of its partitions fails; the merge then resumes); the merge's
report lists it under ``restored``. A store that is missing or not writable is a
``StoreError`` before anything is merged.

A distributed index never gives an id out again (``reuse_ids=False``, SCALEOUT §4): a new id is
above every id held, so a unit that numbers its new pages, clusters and insertion sequence from
the batch's start breaks every tie within its components as one machine would. Each unit reports
which event gave out each new id (``Index.take_allocations``: a delete, or the insert of a page),
and the driver numbers the batch's new ids in the order one machine gives them out (the deletes
in delete-list order, then the pages in processing order: each ``insert_many`` call's pages by
descending fingerprint count, then input order; ``neardup.combine_unit_logs`` with maps). So the
clusters and ids are those of one machine with ``reuse_ids=False``, whatever the number of work
units, and later days break their ties as it would.
"""

# The work lives in modules named for it: _driver (DistributedIndex, the merge stage after stage),
# _partition (the partition actors), _place (which node holds which partition; moves), _sign
# (S1), _plan (S2-S3), _decide (S4), _commit (S5 and S6's checkpoint), _store (the store of the
# batches: the root's, or a shared one through pyarrow.fs), _durable (checkpoints in the shared
# store, restore), _files (inputs, manifests, markers, the merge lock), _faults (the crash
# tests' kill points), _runtime (Ray, imported when first needed); __main__ is the command line.

from __future__ import annotations

from ._driver import LAYOUT_FILE, DistributedIndex, MergeReport
from ._files import PathLike, read_key_list, read_pages
from ._place import NODE_LABEL, PLACEMENT_FILE, MissingPartitionsError, PartitionNodeMissingError
from ._store import StoreError

__all__ = [
    "DistributedIndex",
    "MergeReport",
    "MissingPartitionsError",
    "PartitionNodeMissingError",
    "StoreError",
    "read_pages",
    "read_key_list",
]

# Shown (repr, help, pickle) under the name they are imported by, not the module defining them.
for _obj in (DistributedIndex, MergeReport, MissingPartitionsError, PartitionNodeMissingError, StoreError, read_pages, read_key_list):
    _obj.__module__ = __name__
del _obj
