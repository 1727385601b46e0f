#!/usr/bin/env python3
"""The driver's memory during a distributed daily merge (`neardup.ray`), against the day's size
(issue #34, item 3: "peak driver RSS flat between a 20k-page and a 200k-page day").

Writes a day of `--pages` pages to a JSONL.gz file (the dev corpus's pages; past its size, copies
of them under new ids with one word of their text changed, so that each is a near-duplicate of its
original), then merges it into a new distributed index from a driver process of its own, which
prints its peak resident memory (`getrusage(RUSAGE_SELF).ru_maxrss`: what the driver process held
at most). Beside it, the peak of the resident memory summed over every process the run started
(the driver, Ray's and the workers'; shared object-store pages counted in each), sampled every
0.2 s, and the merge's pages/s.

    PYTHONPATH=target/python python3 bench/ray_driver_memory.py [--pages 20000] [--cpus 2] \
        [--key-parts 4] [--doc-parts 4] [--keep DIR] [--day FILE] [--work-units N] [--root DIR] \
        [--max-component N] [--progress]

`--day` merges a file as it is (e.g. a million generated pages: `neardup-scale gen --count
1000000 --out day.jsonl.gz`); `--work-units` sets S4's units (a unit's memory grows with its
pages).
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ray_merge import DEV, PeakMemory  # noqa: E402

DRIVER = r"""
import json, resource, sys, time
import ray
from neardup.ray import DistributedIndex
root, day, cpus, kp, dp = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
units = int(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[6] != "0" else None
cap = {"max_component": int(sys.argv[7])} if len(sys.argv) > 7 and sys.argv[7] != "0" else {}
say = len(sys.argv) > 8 and sys.argv[8] == "1"
ray.init(num_cpus=cpus, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with DistributedIndex(root, kp, dp, sync_writes=False) as dx:
    t = time.monotonic()
    r = dx.merge([day], work_units=units, progress=say, **cap)
    secs = time.monotonic() - t
ray.shutdown()
print(json.dumps({"seconds": secs, "ru_maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "ru_maxrss_before_merge_kib": before, "pages": r["pages"], "errors": r["errors"],
                  "duplicates": r["duplicates"], "stages": r["seconds"], "components": r["components"]}))
"""


def write_day(corpus: str, pages: int, path: Path) -> None:
    """`pages` pages of the corpus, then copies of them under new ids with a word changed."""
    with gzip.open(corpus, "rt", encoding="utf-8") as f:
        base = [json.loads(line) for _, line in zip(range(pages), f)]
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as out:
        for i in range(pages):
            p = dict(base[i % len(base)])
            k = i // len(base)
            if k:
                p["id"] = f"{p['id']}~{k}"
                if "url" in p:
                    p["url"] = f"{p['url']}?v={k}"
                body = "html" if "html" in p else "text"
                p[body] = p[body].replace(" the ", f" the{k} ", 1)
            out.write(json.dumps(p) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=20_000)
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--key-parts", type=int, default=4)
    ap.add_argument("--doc-parts", type=int, default=4)
    ap.add_argument("--corpus", default=str(DEV))
    ap.add_argument("--keep", help="a directory to write the day and the index to (kept)")
    ap.add_argument("--day", help="merge this file of pages as it is (e.g. `neardup-scale gen --out`), not a day made of the corpus")
    ap.add_argument("--work-units", type=int, default=0, help="work units of S4 (default: the cluster's CPUs)")
    ap.add_argument("--root", help="merge into this index root (e.g. one whose merge of the same day stopped: its finished stages are skipped)")
    ap.add_argument("--max-component", type=int, default=0, help="the merge's max_component (default: the merge's own)")
    ap.add_argument("--progress", action="store_true", help="the merge's progress lines on standard error")
    args = ap.parse_args()
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ray-driver-memory-"))
    tmp.mkdir(parents=True, exist_ok=True)
    day = Path(args.day) if args.day else tmp / f"day-{args.pages}.jsonl.gz"
    if not day.exists():
        write_day(args.corpus, args.pages, day)
    memory = PeakMemory()
    t = time.monotonic()
    out = subprocess.run(
        [
            sys.executable, "-c", DRIVER, args.root or str(tmp / f"dist-{args.pages}-{int(t)}"), str(day), str(args.cpus),
            str(args.key_parts), str(args.doc_parts), str(args.work_units), str(args.max_component), "1" if args.progress else "0",
        ],
        stdout=subprocess.PIPE,
        stderr=None if args.progress else subprocess.PIPE,
        text=True,
    )
    wall = time.monotonic() - t
    memory.stop.set()
    if out.returncode != 0:
        sys.exit(f"driver failed ({out.returncode}):\n{(out.stderr or '(its standard error is above)')[-4000:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        f"{r['pages']} pages ({r['errors']} errors, {r['duplicates']} duplicates), {args.cpus} CPUs: merge "
        f"{r['pages'] / r['seconds']:,.0f} pages/s ({r['seconds']:.1f} s; "
        + ", ".join(f"{k} {v:.1f}" for k, v in r["stages"].items())
        + f"); driver peak RSS {r['ru_maxrss_kib'] / 1024:,.0f} MiB ({r['ru_maxrss_before_merge_kib'] / 1024:,.0f} MiB "
        f"before the merge); all processes' peak RSS {memory.peak / 2**20:,.0f} MiB; the largest process's "
        f"{memory.peak_one / 2**20:,.0f} MiB ({memory.peak_one_name}); machine memory in use rose "
        f"by at most {memory.peak_used / 2**20:,.0f} MiB; wall {wall:.1f} s"
    )
    print(f"components: {json.dumps(r['components'])}")
    roles = sorted(memory.by_role.items(), key=lambda kv: -kv[1])
    print("largest process by role: " + ", ".join(f"{k} {v / 2**20:,.0f} MiB" for k, v in roles if v >= 2**26))


if __name__ == "__main__":
    main()
