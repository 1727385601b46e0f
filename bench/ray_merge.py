#!/usr/bin/env python3
"""The distributed daily merge (`neardup.ray`) against single-node ingest, on the dev corpus.

Two days of the corpus (day 1 its first pages, day 2 the rest with re-crawled keys, after a
delete list of representatives and members) go into a single-node index in whole-batch order
and into a distributed index on a local Ray cluster. Prints each side's pages/s, the merge's
stage times, the bytes it sent between driver, partitions and work units a page, its components,
and the peak memory of every process it started (Ray's included), and checks that both give
the same export, clusters and ids.

    PYTHONPATH=target/python python3 bench/ray_merge.py [--pages 20000] [--cpus 2] \
        [--key-parts 4] [--doc-parts 4] [--work-units 2]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, Optional, Tuple

HERE = Path(__file__).resolve().parent
DEV = HERE.parent.parent / "shared" / "bench" / "dev" / "docs.jsonl.gz"


def role(cmdline: str) -> str:
    """What a Ray worker runs, from its name (``ray::Coordinator.plan``, ``ray::_decide_unit``;
    an actor's name before its class dropped); other processes by their program."""
    if cmdline.startswith("ray::"):
        return cmdline[5:].split()[0].split(":")[-1] if cmdline[5:].strip() else "ray worker (idle)"
    return Path(cmdline.split()[0]).name if cmdline else "?"


def rss_of_new_processes(since_ticks: int, by_role: Optional[Dict[str, int]] = None) -> Tuple[int, int, str]:
    """Resident bytes of every process started after `since_ticks` (clock ticks after boot),
    this one included; and the largest of them, with its name (Ray names a worker by the task
    or actor method it runs). With `by_role`, raises each role's entry to the largest process
    of that role seen now."""
    total = largest = 0
    name = ""
    page = os.sysconf("SC_PAGE_SIZE")
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            start = int(fields[19])
            if start < since_ticks and int(pid) != os.getpid():
                continue
            rss = int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * page
            total += rss
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")[:60]
            if rss > largest:
                largest = rss
                name = cmd
            if by_role is not None:
                r = role(cmd)
                by_role[r] = max(by_role.get(r, 0), rss)
        except (OSError, ValueError, IndexError):
            continue
    return total, largest, name


def used_memory() -> int:
    """The machine's memory in use: MemTotal − MemAvailable (shared pages counted once)."""
    info = {}
    for line in Path("/proc/meminfo").read_text().splitlines():
        name, value = line.split(":", 1)
        info[name] = int(value.split()[0]) * 1024
    return info["MemTotal"] - info["MemAvailable"]


class PeakMemory:
    """Samples `rss_of_new_processes` every 0.2 s in a thread: the peak of the sum (`peak`), and
    of the largest process (`peak_one`, named `peak_one_name`)."""

    def __init__(self) -> None:
        self.since = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        self.peak = 0
        self.peak_one = 0
        self.peak_one_name = ""
        self.base_used = used_memory()
        self.peak_used = 0
        self.by_role: Dict[str, int] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.stop.is_set():
            total, one, name = rss_of_new_processes(self.since, self.by_role)
            self.peak = max(self.peak, total)
            if one > self.peak_one:
                self.peak_one, self.peak_one_name = one, name
            self.peak_used = max(self.peak_used, used_memory() - self.base_used)
            time.sleep(0.2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=20_000)
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--key-parts", type=int, default=4)
    ap.add_argument("--doc-parts", type=int, default=4)
    ap.add_argument("--work-units", type=int, default=None)
    ap.add_argument("--corpus", default=str(DEV))
    args = ap.parse_args()
    memory = PeakMemory()
    import neardup
    import ray
    from neardup.ray import DistributedIndex

    with gzip.open(args.corpus, "rt", encoding="utf-8") as f:
        pages = [json.loads(line) for _, line in zip(range(args.pages), f)]
    cut = len(pages) * 3 // 4
    day1, rest = pages[:cut], pages[cut:]
    step = max(1, len(day1) // 10)
    day2 = rest + [dict(rest[(i * 7) % len(rest)], id=day1[i * step]["id"]) for i in range(10)]
    tmp = Path(tempfile.mkdtemp(prefix="ray-merge-bench-"))
    files = []
    for name, rows in (("day1", day1), ("day2", day2)):
        path = tmp / f"{name}.jsonl.gz"
        with gzip.open(path, "wt", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        files.append(path)
    options = {"sync_writes": False}
    ref = neardup.Index(tmp / "single", reuse_ids=False, **options)
    t = time.monotonic()
    ref.insert_many(day1, order="fingerprints", order_scope="batch", batch_size=len(day1), progress=False)
    single1 = time.monotonic() - t
    exp = ref.export()
    reps = sorted(set(exp.column("representative").to_pylist()))
    gone = reps[:: max(1, len(reps) // 12)][:12] + [day1[i * 37 + 5]["id"] for i in range(12)]
    gone_path = tmp / "gone.txt"
    gone_path.write_text("\n".join(sorted(set(gone))) + "\n")
    t = time.monotonic()
    for k in sorted(set(gone)):
        try:
            ref.delete(k)
        except neardup.NotFoundError:
            pass
    ref.insert_many(day2, order="fingerprints", order_scope="batch", batch_size=len(day2), progress=False)
    single2 = time.monotonic() - t

    t = time.monotonic()
    ray.init(num_cpus=args.cpus, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    dx = DistributedIndex(tmp / "dist", args.key_parts, args.doc_parts, **options)
    start = time.monotonic() - t
    reports = []
    times = []
    for files_, g in (([files[0]], None), ([files[1]], gone_path)):
        t = time.monotonic()
        reports.append(dx.merge(files_, g, work_units=args.work_units, progress=False))
        times.append(time.monotonic() - t)

    same = dx.export().equals(ref.export()) and dx.export_clusters().equals(ref.export_clusters())
    # On disk after the two days: the partitions' databases, and what the batches keep (S1's
    # signed parts and the logs, until retired), beside the single node's database.
    def du(path: Path) -> int:
        return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0

    disk_batches = du(tmp / "dist" / "batches")
    disk_parts = du(tmp / "dist") - disk_batches
    disk_single = du(tmp / "single")
    check = dx.check()["problem_count"]
    dx.close()
    ray.shutdown()
    memory.stop.set()
    n = len(day1) + len(day2)
    shuffled = sum(r["shuffled_bytes"] for r in reports)
    print(f"corpus: {args.corpus}, {len(day1)} + {len(day2)} pages, {len(gone)} deletes")
    print(f"Ray: {args.cpus} CPUs, {args.key_parts} key + {args.doc_parts} doc partitions; start {start:.1f} s")
    for d, (r, secs, single, rows) in enumerate(zip(reports, times, (single1, single2), (day1, day2)), 1):
        print(
            f"day {d}: merge {len(rows) / secs:,.0f} pages/s ({secs:.1f} s: "
            + ", ".join(f"{k} {v:.1f}" for k, v in r["seconds"].items())
            + f"), single node {len(rows) / single:,.0f} pages/s; work units {r['work_units']}; "
            f"components {r['components']}; reached {r['reached_pages']} pages"
        )
    print(f"bytes sent a page: {shuffled / n:,.0f} (keys, seeds, unit and partition logs)")
    print(
        f"on disk a page: partitions {disk_parts / n:,.0f} B, batches kept {disk_batches / n:,.0f} B "
        f"(S1's parts and logs), single node {disk_single / n:,.0f} B"
    )
    print(
        f"peak memory: {memory.peak / 2**30:.2f} GiB resident, summed over every process started "
        f"(shared object-store pages counted in each); the largest process {memory.peak_one / 2**30:.2f} GiB "
        f"({memory.peak_one_name}); the machine's memory in use rose by at most {memory.peak_used / 2**30:.2f} GiB"
    )
    top = sorted(memory.by_role.items(), key=lambda kv: -kv[1])
    print("largest process by role (a reused worker keeps what it held before): " + ", ".join(f"{r} {v / 2**20:,.0f} MiB" for r, v in top))
    print(f"same export, clusters and ids as the single node: {same}; distributed check problems: {check}")


if __name__ == "__main__":
    main()
