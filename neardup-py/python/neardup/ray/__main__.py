"""``python -m neardup.ray``: the distributed daily merge from the command line.

    python -m neardup.ray merge --index-root ROOT [--key-parts K] [--doc-parts J]
        [--delete-list FILE] [--batch N] [--export TSV] [--checkpoint] [--work-units W]
        [--keep-batches N] [--keep-checkpoints N] [--address ADDR | --num-cpus N] [--options JSON]
        [--placement spread|driver | --nodes NAME,...] [--local-root DIR] [--store PATH|URI]
        [--no-restore] DAY.jsonl.gz ...
    python -m neardup.ray export --index-root ROOT --out TSV
    python -m neardup.ray check --index-root ROOT
    python -m neardup.ray move --index-root ROOT --partition key-001 --node NAME

``merge`` prints each stage on standard error, then the report as JSON on standard output;
``check`` prints its report as JSON on standard output and exits with 1 when it finds problems;
``move`` moves a partition's database to another node (``DistributedIndex.move_partition``) and
prints what it did as JSON. With a shared store (``--store`` when the index is created), a
partition whose node is gone is restored from the store on another node when any command opens
the index (``--no-restore`` refuses instead); ``merge``'s report lists it under ``restored``, and
the other commands print it on standard error.
Standard output holds the JSON report only: whatever Ray or the libraries print goes to standard
error. Errors (a root whose partitions are missing, ``--num-cpus`` with ``--address``, ...) are
printed as one line and exit with 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import List, Optional, TextIO

import neardup

from . import LAYOUT_FILE, DistributedIndex


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m neardup.ray", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    def common(s: argparse.ArgumentParser) -> None:
        s.add_argument("--index-root", required=True, help="the distributed index's directory")
        s.add_argument("--address", help="a running Ray cluster's address to join (default: start Ray here)")
        s.add_argument("--num-cpus", type=int, help="CPUs of a Ray started here (not with --address)")
        s.add_argument(
            "--no-restore",
            action="store_true",
            help="refuse an index with a partition whose node is gone (PartitionNodeMissingError) "
            "rather than restore it from the store",
        )

    m = sub.add_parser("merge", help="merge a day's pages, after a delete list")
    common(m)
    m.add_argument("files", nargs="*", help="JSONL files of pages (.gz read as gzip), or Parquet files (.parquet, .pq)")
    m.add_argument("--key-parts", type=int, help="key partitions of a new index (default 4)")
    m.add_argument("--doc-parts", type=int, help="doc partitions of a new index (default 4)")
    m.add_argument("--delete-list", help="keys to delete first, one a line")
    m.add_argument("--batch", type=int, help="the batch number (default: the next)")
    m.add_argument("--export", help="write the export as TSV afterwards")
    m.add_argument("--checkpoint", action="store_true", help="checkpoint every partition")
    m.add_argument("--work-units", type=int, help="scratch indexes deciding at once (default: the CPUs)")
    m.add_argument(
        "--keep-batches",
        type=int,
        default=0,
        metavar="N",
        help="committed batches whose logs and signatures are kept under batches/ (default 0: "
        "only what a re-run needs, each batch's manifest and report until the next)",
    )
    m.add_argument(
        "--keep-checkpoints",
        type=int,
        default=1,
        metavar="N",
        help="checkpoints of each partition kept in the shared store (default 1: what a restore needs)",
    )
    m.add_argument(
        "--max-component",
        type=int,
        default=1_000_000,
        metavar="N",
        help="the most pages, rows and deletes in one component of the day's candidate graph; "
        "a larger one has its sketch keys' edges cut, largest postings first (default 1000000)",
    )
    m.add_argument(
        "--order",
        choices=["input", "fingerprints"],
        default="input",
        help="the order the day is decided in: input (the default: files, then lines; the first page read of a "
        "cluster leads it) or fingerprints (descending fingerprint count over the whole day)",
    )
    m.add_argument("--options", help="neardup.Index options of a new index, as JSON")
    m.add_argument(
        "--store",
        help="a new index's shared store: a directory every node reaches or a pyarrow.fs URI "
        "(s3://..., gs://...); batches and checkpoints are kept there, lost partitions restored from it",
    )
    m.add_argument(
        "--local-root",
        help="a new index's directory for the databases on each node's local disk ({node}: the "
        "node's name; default: the index root)",
    )
    m.add_argument(
        "--placement",
        choices=["spread", "driver"],
        help="where a new index's partitions go: spread over the cluster's nodes (the default on "
        "more than one node) or all on the driver's node (the default on one)",
    )
    m.add_argument("--nodes", help="a new index's partitions round-robin over these nodes (names, comma-separated)")
    e = sub.add_parser("export", help="write the export as TSV")
    common(e)
    e.add_argument("--out", required=True)
    c = sub.add_parser("check", help="the distributed check")
    common(c)
    mv = sub.add_parser("move", help="move a partition's database to another node")
    common(mv)
    mv.add_argument("--partition", required=True, help="the partition: key-<n> or doc-<n>")
    mv.add_argument("--node", required=True, help="the target node's name (its neardup-node label, else its IP)")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    if args.address is not None and args.num_cpus is not None:
        print(
            "error: --num-cpus is for a Ray started here; --address joins a running cluster, "
            "which has its own CPUs: give one or the other",
            file=sys.stderr,
        )
        return 2
    # Standard output is the report's: whatever else writes to it while the command runs (Ray's
    # log lines, a library's prints, the processes Ray starts) goes to standard error.
    sys.stdout.flush()
    report_out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    try:
        return _run(args, report_out)
    finally:
        sys.stdout.flush()
        report_out.flush()
        os.dup2(report_out.fileno(), 1)
        report_out.close()


def _run(args: argparse.Namespace, out: TextIO) -> int:
    try:
        options = json.loads(args.options) if getattr(args, "options", None) else {}
        nodes = getattr(args, "nodes", None)
        move = None
        if args.command == "move":
            if not (Path(args.index_root) / LAYOUT_FILE).exists():
                raise neardup.InvalidArgumentError(f"{args.index_root} is not a distributed index (no {LAYOUT_FILE})")
            role, _, n = args.partition.partition("-")
            if role not in ("key", "doc") or not n.isdigit():
                raise neardup.InvalidArgumentError(f"--partition is key-<n> or doc-<n>, not {args.partition!r}")
            move = (role, int(n))
        ix = DistributedIndex(
            args.index_root,
            getattr(args, "key_parts", None),
            getattr(args, "doc_parts", None),
            address=args.address,
            num_cpus=args.num_cpus,
            placement=getattr(args, "placement", None),
            nodes=[x for x in nodes.split(",") if x] if nodes else None,
            local_root=getattr(args, "local_root", None),
            store=getattr(args, "store", None),
            restore=not args.no_restore,
            **options,
        )
        if ix.restored and args.command != "merge":
            print(f"restored: {json.dumps(ix.restored, sort_keys=True)}", file=sys.stderr, flush=True)
        try:
            if args.command == "merge":
                if not args.files and not args.delete_list:
                    raise neardup.InvalidArgumentError("nothing to do: give JSONL or Parquet files and/or --delete-list")
                report = ix.merge(
                    args.files,
                    args.delete_list,
                    batch=args.batch,
                    export=args.export,
                    checkpoint=args.checkpoint,
                    work_units=args.work_units,
                    keep_batches=args.keep_batches,
                    max_component=args.max_component,
                    order=args.order,
                    keep_checkpoints=args.keep_checkpoints,
                    progress=lambda line: print(line, file=sys.stderr, flush=True),
                )
                print(json.dumps(report, indent=1, sort_keys=True), file=out, flush=True)
            elif args.command == "move":
                assert move is not None
                done = ix.move_partition(move[0], move[1], args.node)
                print(json.dumps(done, indent=1, sort_keys=True), file=out, flush=True)
            elif args.command == "export":
                ix.export_tsv(Path(args.out))
            else:
                report = ix.check()
                print(json.dumps(report, indent=1, sort_keys=True, default=str), file=out, flush=True)
                if report.get("problem_count", 0):
                    return 1
        finally:
            ix.close()
    except (neardup.Error, OSError, json.JSONDecodeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
