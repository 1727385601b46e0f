"""The distributed export at N pages (default 20k, two days, 4+4 partitions): seconds and the
driver's peak RSS increase of the export written as TSV, streamed (``export_tsv``, what
``merge(export=…)`` and ``python -m neardup.ray export`` do: the doc partitions' parts merged by
page id) and gathered (every row on the driver, the targets resolved there, then written: the
export before issue #34 item 6, ``_export.gathered``); and of the tables ``export()`` and
``export_clusters()`` against their gathered references. The files and tables must agree. Each is measured in a driver process of its own, started
on the index once it is merged (past the dev corpus's 20,000 pages, copies of its pages under new
ids with a word changed, as ``ray_driver_memory.py``).

Usage: PYTHONPATH=<installed neardup> python3 bench/ray_export.py [--pages 20000]
"""

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from ray_check import DEV, measured, write_days


#: What is measured, each in a fresh driver process (a process's RSS does not shrink after a
#: peak, so one measurement after another would hide the later peaks).
RUNS = (
    ("export_tsv (streamed)", "tsv"),
    ("write_tsv(gathered) (before)", "tsv_gathered"),
    ("export() table", "table"),
    ("export() gathered (before)", "table_gathered"),
    ("export_clusters() table", "clusters"),
    ("export_clusters() gathered (before)", "clusters_gathered"),
)


def measure(root: Path, what: str, out: Path) -> None:
    """One measurement in this process: the index opened (its actors started and answering),
    then ``what`` run once; prints ``seconds peak-bytes rows``."""
    import pyarrow as pa  # noqa: F401 - imported before anything is measured
    import ray
    from neardup.ray import DistributedIndex, _export, _files

    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    with DistributedIndex(root) as dx:
        dx.stats()
        # Arrow's memory pool and Ray's object transfer warmed up: their first use reserves
        # tens of MiB whatever the size, which would hide the difference measured.
        pa.array([str(i) for i in range(100_000)])
        ray.get(ray.put(b"x" * (4 << 20)))
        calls = {
            "tsv": lambda: dx.export_tsv(out),
            "tsv_gathered": lambda: _files.write_tsv(_export.gathered(dx, "pages"), out),
            "table": dx.export,
            "table_gathered": lambda: _export.gathered(dx, "pages"),
            "clusters": dx.export_clusters,
            "clusters_gathered": lambda: _export.gathered(dx, "clusters"),
        }
        result, secs, peak = measured(calls[what])
        if hasattr(result, "num_rows"):
            with pa.OSFile(str(out), "wb") as f, pa.ipc.new_file(f, result.schema) as w:
                w.write_table(result)
        print(f"{secs:.3f} {peak} {getattr(result, 'num_rows', result)}")
    ray.shutdown()


def merge(args: argparse.Namespace, tmp: Path, root: Path) -> None:
    """The index of ``args.pages`` pages merged over two days into ``root``."""
    import ray
    from neardup.ray import DistributedIndex
    from ray_driver_memory import write_day

    # Past the corpus's 20,000 pages, copies under new ids with a word changed.
    write_day(args.corpus, args.pages, tmp / "all.jsonl.gz")
    with gzip.open(tmp / "all.jsonl.gz", "rt", encoding="utf-8") as f:
        pages = [json.loads(line) for line in f]
    files = write_days(pages, tmp)
    del pages
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    with DistributedIndex(root, 4, 4, sync_writes=False) as dx:
        for f in files:
            dx.merge([f], progress=False)
    ray.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=20_000)
    ap.add_argument("--corpus", default=str(DEV))
    ap.add_argument("--measure", help=argparse.SUPPRESS)
    ap.add_argument("--root", help="measure the index merged here by an earlier run")
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        measure(Path(args.root), args.measure, Path(args.out))
        return
    import pyarrow as pa

    if args.root:
        # An index merged by an earlier run, measured again.
        root = Path(args.root)
        tmp = Path(tempfile.mkdtemp(prefix="ray-export-bench-"))
    else:
        tmp = Path(tempfile.mkdtemp(prefix="ray-export-bench-"))
        root = tmp / "dist"
        merge(args, tmp, root)
    outs = {}
    for name, what in RUNS:
        out = tmp / f"{what}.out"
        run = subprocess.run(
            [sys.executable, __file__, "--measure", what, "--root", str(root), "--out", str(out)],
            capture_output=True,
            text=True,
        )
        if run.returncode:
            sys.exit(f"{name} failed:\n{run.stderr[-3000:]}")
        line = run.stdout.split()
        secs, peak, rows = float(line[0]), int(line[1]), line[2]
        outs[what] = out
        print(f"{name}: {secs:.2f} s, driver peak RSS +{peak / 2**20:.1f} MiB; rows {rows}", flush=True)
    same = outs["tsv"].read_bytes() == outs["tsv_gathered"].read_bytes()
    for a, b in (("table", "table_gathered"), ("clusters", "clusters_gathered")):
        ta, tb = (pa.ipc.open_file(str(outs[x])).read_all() for x in (a, b))
        same = same and ta.equals(tb)
    assert same, "the streamed and gathered exports differ"
    print(f"identical: {outs['tsv'].stat().st_size} bytes of TSV, the tables")


if __name__ == "__main__":
    main()
