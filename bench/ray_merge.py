#!/usr/bin/env python3
"""The distributed daily merge (`neardup.ray`) against single-node ingest, on the dev corpus.

Two days of the corpus (day 1 its first pages, day 2 the rest with re-crawled keys, after a
delete list of representatives and members) go into a single-node index (`insert_many` of each
day as one batch, in the merge's order: input by default) and into a distributed index on a
local Ray cluster. Prints each side's pages/s, the merge's stage times, the bytes it sent
between driver, partitions and work units a page, its components, and the peak memory of every
process it started (Ray's included), and checks that both give the same export, clusters and
ids.

    PYTHONPATH=target/python python3 bench/ray_merge.py [--pages 20000] [--cpus 2] \
        [--key-parts 4] [--doc-parts 4] [--work-units 2] [--order input|fingerprints]
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
from typing import Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
DEV = HERE.parent.parent / "shared" / "bench" / "dev" / "docs.jsonl.gz"


def role(argv: List[str]) -> str:
    """What a Ray worker runs, from its name (``ray::Coordinator.plan``, ``ray::_decide_unit``;
    an actor's name before its class dropped); other processes by their program (a Python
    program by its script or module: Ray's agents and the like)."""
    cmdline = argv[0] if argv else ""
    if cmdline.startswith("ray::"):
        return cmdline[5:].split()[0].split(":")[-1] if cmdline[5:].strip() else "ray worker (idle)"
    if not cmdline:
        return "?"
    words = cmdline.split() + argv[1:]
    name = Path(words[0]).name
    if name.startswith("python") and len(words) > 1:
        rest = [w for w in words[1:] if not w.startswith("-")]
        if "-m" in words:
            return f"python -m {words[words.index('-m') + 1]}"
        return f"python {Path(rest[0]).name}" if rest else name
    return name


def rss_of_new_processes(
    since_ticks: int, by_role: Optional[Dict[str, int]] = None, cpu: Optional["CpuTicks"] = None
) -> Tuple[int, int, str]:
    """Resident bytes of every process started after `since_ticks` (clock ticks after boot)
    that descends from this one (Ray's processes, the command line), this one included; and the largest of them, with its name (Ray names a worker by the task
    or actor method it runs). With `by_role`, raises each role's entry to the largest process
    of that role seen now; with `cpu`, adds each process's CPU time since the last sample."""
    total = largest = 0
    name = ""
    page = os.sysconf("SC_PAGE_SIZE")
    stats: Dict[int, List[str]] = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
                stats[int(pid)] = stat[stat.rindex(")") + 2 :].split()
            except (OSError, ValueError):
                continue
    me = os.getpid()

    def mine(pid: int) -> bool:
        # This process and its descendants (Ray's, the command line's), not the machine's other work.
        seen = 0
        while pid > 1 and seen < 64:
            if pid == me:
                return True
            fields = stats.get(pid)
            if fields is None:
                return False
            pid, seen = int(fields[1]), seen + 1
        return False

    for pid, fields in stats.items():
        try:
            start = int(fields[19])
            if (start < since_ticks and pid != me) or not mine(pid):
                continue
            rss = int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * page
            total += rss
            argv = [a.decode(errors="replace") for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]
            r = role(argv)
            if rss > largest:
                largest = rss
                name = r
            if by_role is not None:
                by_role[r] = max(by_role.get(r, 0), rss)
            if cpu is not None:
                # utime + stime, clock ticks, the process's threads together.
                cpu.add(int(pid), start, r, int(fields[11]) + int(fields[12]))
        except (OSError, ValueError, IndexError):
            continue
    return total, largest, name


class CpuTicks:
    """CPU time of the processes `rss_of_new_processes` samples, by role: each sample adds what
    a process used since the one before (a Ray worker's time goes to the task it runs when
    sampled; what a process uses after its last sample is not seen)."""

    def __init__(self) -> None:
        self.last: Dict[Tuple[int, int], int] = {}
        self.by_role: Dict[str, int] = {}
        self.total = 0

    def add(self, pid: int, start: int, role_: str, ticks: int) -> None:
        before = self.last.get((pid, start), 0)
        self.last[(pid, start)] = ticks
        if ticks > before:
            self.by_role[role_] = self.by_role.get(role_, 0) + ticks - before
            self.total += ticks - before


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
        self.cpu = CpuTicks()
        self.sampler_cpu = 0.0
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def sample(self) -> None:
        with self.lock:
            total, one, name = rss_of_new_processes(self.since, self.by_role, self.cpu)
            self.peak = max(self.peak, total)
            if one > self.peak_one:
                self.peak_one, self.peak_one_name = one, name
            self.peak_used = max(self.peak_used, used_memory() - self.base_used)

    def cpu_now(self) -> Tuple[float, Dict[str, float]]:
        """CPU seconds used so far by the processes started since this one (itself included),
        in all and by role, sampled now."""
        self.sample()
        with self.lock:
            hz = os.sysconf("SC_CLK_TCK")
            by = {r: t / hz for r, t in self.cpu.by_role.items()}
            mine = role([a for a in Path("/proc/self/cmdline").read_text().split("\0") if a])
            by[mine] = by.get(mine, 0.0) - self.sampler_cpu
            return self.cpu.total / hz - self.sampler_cpu, by

    def run(self) -> None:
        while not self.stop.is_set():
            self.sample()
            with self.lock:
                # This thread's own reading of /proc is the bench's, not the merge's.
                self.sampler_cpu = time.thread_time()
            time.sleep(0.2)


def cpu_between(a: Tuple[float, Dict[str, float]], b: Tuple[float, Dict[str, float]]) -> Tuple[float, Dict[str, float]]:
    """CPU seconds used between two `PeakMemory.cpu_now` samples, in all and by role."""
    return b[0] - a[0], {r: t - a[1].get(r, 0.0) for r, t in b[1].items() if t - a[1].get(r, 0.0) > 0.05}


def cli_ingest(cli: str, index: Path, files: Sequence[Path], order: str, batch: int) -> Tuple[float, float]:
    """The command line's `ingest` of `files` into `index` (the single node end to end: it
    reads and parses the file too), in `order` with the day as one batch: wall and CPU seconds."""
    import resource
    import subprocess

    scope = ["--order-scope", "batch"] if order == "fingerprints" else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    subprocess.run(
        [cli, "ingest", "--index", str(index), "--order", order, *scope, "--batch", str(batch), *map(str, files)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.monotonic() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=20_000)
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--key-parts", type=int, default=4)
    ap.add_argument("--doc-parts", type=int, default=4)
    ap.add_argument("--work-units", type=int, default=None)
    ap.add_argument("--corpus", default=str(DEV))
    ap.add_argument(
        "--order",
        choices=("input", "fingerprints"),
        default="input",
        help="the merge's order (its default: input), and the single node's insert_many's",
    )
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
    import resource

    def self_cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    ref = neardup.Index(tmp / "single", reuse_ids=False, **options)
    t, c = time.monotonic(), self_cpu()
    scope = {"order_scope": "batch"} if args.order == "fingerprints" else {}
    ref.insert_many(day1, order=args.order, batch_size=len(day1), progress=False, **scope)
    single1 = time.monotonic() - t
    single_cpu = [self_cpu() - c]
    exp = ref.export()
    reps = sorted(set(exp.column("representative").to_pylist()))
    gone = reps[:: max(1, len(reps) // 12)][:12] + [day1[i * 37 + 5]["id"] for i in range(12)]
    gone_path = tmp / "gone.txt"
    gone_path.write_text("\n".join(sorted(set(gone))) + "\n")
    t, c = time.monotonic(), self_cpu()
    for k in sorted(set(gone)):
        try:
            ref.delete(k)
        except neardup.NotFoundError:
            pass
    ref.insert_many(day2, order=args.order, batch_size=len(day2), progress=False, **scope)
    single2 = time.monotonic() - t
    single_cpu.append(self_cpu() - c)
    # The single node end to end: the command line reads the same files (the merge reads them).
    cli = os.environ.get("NEARDUP_CLI") or str(HERE.parent / "target" / "release" / "neardup")
    cli_runs = []
    if Path(cli).exists():
        cli_runs.append(cli_ingest(cli, tmp / "cli", [files[0]], args.order, len(day1)))
        import subprocess

        t0, r0 = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([cli, "delete", "--index", str(tmp / "cli"), *sorted(set(gone))], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        _, cpu = cli_ingest(cli, tmp / "cli", [files[1]], args.order, len(day2))
        deleting = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        cli_runs.append((time.monotonic() - t0, cpu + deleting))

    t = time.monotonic()
    ray.init(num_cpus=args.cpus, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    dx = DistributedIndex(tmp / "dist", args.key_parts, args.doc_parts, **options)
    start = time.monotonic() - t
    reports = []
    times = []
    cpus = []
    for files_, g in (([files[0]], None), ([files[1]], gone_path)):
        t, c = time.monotonic(), memory.cpu_now()
        reports.append(dx.merge(files_, g, work_units=args.work_units, order=args.order, progress=False))
        times.append(time.monotonic() - t)
        cpus.append(cpu_between(c, memory.cpu_now()))

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
    for d, ((cpu, by), rows, s_cpu) in enumerate(zip(cpus, (day1, day2), single_cpu), 1):
        cli_txt = ""
        if cli_runs:
            w, c = cli_runs[d - 1]
            cli_txt = f"; command line (reads the file) {len(rows) / w:,.0f} pages/s, {1000 * c / len(rows):.2f} ms"
        print(
            f"day {d} CPU a page: merge {1000 * cpu / len(rows):.2f} ms (every process it started), single node "
            f"{1000 * s_cpu / len(rows):.2f} ms (insert_many of pages in memory){cli_txt}; merge by role: "
            + ", ".join(f"{r} {v:.1f} s" for r, v in sorted(by.items(), key=lambda kv: -kv[1]))
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
