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

``--scale`` (issue #34: 10^5-10^6 pages, e.g. ``neardup-scale gen --count 1000000 --out
pages.jsonl.gz``; ``--corpus`` JSONL, gzip or plain, its first ``--pages`` lines) compares the
same two days without holding a day anywhere in the bench: the day files are copied line by
line from the corpus (day 1 its first 3/4; day 2 the rest, then 10 of day 2's first 64 pages
again under day-1 keys, as above); the delete list is read from the merge's own streamed export
of day 1 (in each twelfth of its rows, the representative of the first page led by another, and
day 1's pages 37·i + 5, i < 12). The merge runs first (so the driver's memory is the merge's),
then, with Ray shut down, the single node in this process: ``Index(reuse_ids=False)``, the
deletes, then ``insert_many`` of each day file read line by line, ``DEFAULT_BATCH_SIZE`` (4096)
pages a call, in input order. What is compared: the merge decides each day as one batch in
input order, as one machine's ``insert_many`` with a batch of the whole day would
(``DistributedIndex.merge``; its work units feed their scratch index in blocks too); in input
order the pages are decided one after another in the day's order whatever the batches, so the
single node's 4096-page batches are to give the same pages, clusters and ids, which the run
checks: the merge's ``export_tsv`` against ``neardup export`` of the single node
(``$NEARDUP_CLI`` or ``target/release/neardup``; without it, the single node's tables),
compared line by line from the files, and the clusters (the merge's ``export_clusters()``
table, the only whole one, written to a file and let go, against ``neardup export --clusters``),
with each side's counts and sha256. Input order only (a fingerprint-ordered day is one batch
held whole). The single node's pages/s and CPU include reading and parsing the day's file in
Python (the merge's S1 reads it too); there is no separate command-line run. Peak memory is
reported by role for the merge (up to its streamed export) and for the single node apart, the
driver's RSS named; also the largest drop of the file system's free space during each.
``--work DIR`` (a new directory; default a temporary one, removed at the end unless ``--keep``),
``--progress`` (the merge's stage lines on standard error), ``--max-component N`` (the merge's cap
on a component: a larger one has its sketch keys' edges cut, SCALEOUT §7.1 option (2), so that
its work units run side by side; the merge then differs from the single node, and the run says
by how much, as pairs of pages in one cluster on each side and on both).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, TextIO, Tuple

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
    since_ticks: int,
    by_role: Optional[Dict[str, int]] = None,
    cpu: Optional["CpuTicks"] = None,
    anon_by_role: Optional[Dict[str, int]] = None,
) -> Tuple[int, int, str]:
    """Resident bytes of every process started after `since_ticks` (clock ticks after boot)
    that descends from this one (Ray's processes, the command line), this one included; and the largest of them, with its name (Ray names a worker by the task
    or actor method it runs). With `by_role`, raises each role's entry to the largest process
    of that role seen now; with `cpu`, adds each process's CPU time since the last sample; with
    `anon_by_role`, the same as `by_role` for the resident pages that are not file-backed or
    shared (statm's resident − shared: what the process itself allocated)."""
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
            statm = Path(f"/proc/{pid}/statm").read_text().split()
            rss = int(statm[1]) * page
            total += rss
            argv = [a.decode(errors="replace") for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]
            r = role(argv)
            if rss > largest:
                largest = rss
                name = r
            if by_role is not None:
                by_role[r] = max(by_role.get(r, 0), rss)
            if anon_by_role is not None:
                anon = (int(statm[1]) - int(statm[2])) * page
                anon_by_role[r] = max(anon_by_role.get(r, 0), anon)
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
        self.anon_by_role: Dict[str, int] = {}
        self.cpu = CpuTicks()
        self.sampler_cpu = 0.0
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def snapshot(self) -> Dict[str, object]:
        """The peaks so far: ``peak``, ``peak_one``, ``peak_one_name``, ``peak_used`` and
        ``by_role`` and ``anon_by_role`` (copies)."""
        with self.lock:
            return {
                "peak": self.peak,
                "peak_one": self.peak_one,
                "peak_one_name": self.peak_one_name,
                "peak_used": self.peak_used,
                "by_role": dict(self.by_role),
                "anon_by_role": dict(self.anon_by_role),
            }

    def reset(self) -> None:
        """Starts the peaks again from now (the machine's memory in use from its level now)."""
        with self.lock:
            self.peak = self.peak_one = self.peak_used = 0
            self.peak_one_name = ""
            self.by_role = {}
            self.anon_by_role = {}
            self.base_used = used_memory()

    def sample(self) -> None:
        with self.lock:
            total, one, name = rss_of_new_processes(self.since, self.by_role, self.cpu, self.anon_by_role)
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


# ----- --scale: the same comparison streamed, for days of 10^5-10^6 pages -----


def open_text(path: Path) -> TextIO:
    """A JSONL file's lines, gunzipped when its name ends in ``.gz``."""
    return gzip.open(path, "rt", encoding="utf-8") if str(path).endswith(".gz") else open(path, encoding="utf-8")


def pages_of(path: Path) -> Iterator[Dict[str, object]]:
    """The pages of a JSONL file, one at a time."""
    with open_text(path) as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def chunked(rows: Iterable[Dict[str, object]], size: int) -> Iterator[List[Dict[str, object]]]:
    """`rows` in lists of `size` (the last shorter)."""
    chunk: List[Dict[str, object]] = []
    for r in rows:
        chunk.append(r)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def recrawl_lines(cut: int, rest: int) -> List[Tuple[int, int]]:
    """Day 2's ten re-crawls, as lines of the corpus: each the line of day 1 whose key it takes
    and the line of day 2 whose page it gives again (``cut``: day 1's lines, ``rest``: day 2's)."""
    step = max(1, cut // 10)
    return [(i * step, cut + (i * 7) % max(rest, 1)) for i in range(10)]


def write_days(corpus: Path, pages: int, tmp: Path) -> Tuple[List[Path], int, int, List[str]]:
    """Day 1 (the corpus's first 3/4 of `pages`) and day 2 (the rest, then 10 pages of it again
    under day-1 keys: re-crawls), written line by line as the 20k mode writes them; returns the
    two files, their page counts and the keys of day 1's pages 37·i + 5 (i < 12: the members
    the delete list names). Only day 2's first 64 pages and 22 keys are held."""
    cut = pages * 3 // 4
    first_ids = {a: i for i, (a, _) in enumerate(recrawl_lines(cut, 1))}
    member_at = {i * 37 + 5 for i in range(12)}
    recrawl_ids: List[str] = [""] * 10
    members: List[str] = []
    head: List[Dict[str, object]] = []
    files = [tmp / "day1.jsonl.gz", tmp / "day2.jsonl.gz"]
    n = 0
    with open_text(corpus) as src, gzip.open(files[0], "wt", encoding="utf-8", compresslevel=1) as d1, gzip.open(
        files[1], "wt", encoding="utf-8", compresslevel=1
    ) as d2:
        for line in src:
            if n == pages:
                break
            if not line.strip():
                continue
            if n < cut:
                d1.write(line if line.endswith("\n") else line + "\n")
                if n in first_ids or n in member_at:
                    key = json.loads(line)["id"]
                    if n in first_ids:
                        recrawl_ids[first_ids[n]] = key
                    if n in member_at:
                        members.append(key)
            else:
                d2.write(line if line.endswith("\n") else line + "\n")
                if len(head) < 64:
                    head.append(json.loads(line))
            n += 1
        if n <= cut:
            raise SystemExit(f"{corpus} holds {n} pages: too few for two days of --pages {pages}")
        rest = n - cut
        for i, (_, line) in enumerate(recrawl_lines(cut, rest)):
            d2.write(json.dumps(dict(head[line - cut], id=recrawl_ids[i])) + "\n")
    return files, cut, rest + 10, members


def delete_list_from_export(tsv: Path, rows: int) -> List[str]:
    """Representatives to delete, read from an export (``key<TAB>representative``, streamed):
    in each twelfth of its rows, the representative of the first page that is not its own (a
    page leading a cluster with members, so that deleting it elects another)."""
    seg = max(1, rows // 12)
    reps: List[Optional[str]] = [None] * 12
    with open(tsv, encoding="utf-8") as f:
        for i, line in enumerate(f):
            j = i // seg
            if j >= 12:
                break
            if reps[j] is None:
                key, rep = line.rstrip("\n").split("\t")
                if key != rep:
                    reps[j] = rep
    return [r for r in reps if r is not None]


def same_lines(a: Iterable[str], b: Iterable[str]) -> Tuple[bool, int, str, int, str]:
    """Compares two streams of lines one pair at a time: equal, then each side's line count
    and sha256."""
    import hashlib

    ha, hb = hashlib.sha256(), hashlib.sha256()
    na = nb = 0
    equal = True
    missing = object()
    from itertools import zip_longest

    for x, y in zip_longest(a, b, fillvalue=missing):
        if x is not missing:
            ha.update(x.encode() + b"\n")
            na += 1
        if y is not missing:
            hb.update(y.encode() + b"\n")
            nb += 1
        equal = equal and x == y
    return equal, na, ha.hexdigest(), nb, hb.hexdigest()


def pair_agreement(a: Iterable[str], b: Iterable[str]) -> Tuple[int, int, int]:
    """Two exports (``key<TAB>representative`` lines, the same keys in the same order) as
    clusterings of their pages: the pairs of pages sharing a cluster in ``a``, in ``b``, and in
    both (counted from the cluster sizes, never listed)."""
    from collections import Counter

    both: Counter = Counter()
    in_a: Counter = Counter()
    in_b: Counter = Counter()
    for x, y in zip(a, b):
        kx, rx = x.split("\t")[:2]
        ky, ry = y.split("\t")[:2]
        if kx != ky:
            raise SystemExit(f"the exports list other pages: {kx!r} against {ky!r}")
        both[(rx, ry)] += 1
        in_a[rx] += 1
        in_b[ry] += 1
    return _pairs(in_a), _pairs(in_b), _pairs(both)


def _pairs(groups: Dict[object, int]) -> int:
    """The pairs within groups of these sizes."""
    return sum(n * (n - 1) // 2 for n in groups.values())


def variant_families(corpus: Path, pages: int) -> Optional[Dict[str, int]]:
    """The truth of a generated corpus (``neardup-scale gen`` writes each page's ``variant_of``,
    the corpus line it is a variant of): each key of the two days (re-crawls included) and its
    family, the first line of its chain of variants. None when the corpus has no such field."""
    import re

    id_re = re.compile(r'"id":\s*"((?:[^"\\]|\\.)*)"')
    var_re = re.compile(r'"variant_of":\s*(null|\d+)')
    family: List[int] = []
    keys: List[str] = []
    with open_text(corpus) as f:
        for n, line in enumerate(f):
            if n == pages:
                break
            v, k = var_re.search(line, max(0, len(line) - 400)), id_re.search(line, line.rfind('"id":'))
            if v is None or k is None:
                return None
            of = None if v.group(1) == "null" else int(v.group(1))
            family.append(family[of] if of is not None and of < n else n)
            keys.append(json.loads(f'"{k.group(1)}"'))
    out = dict(zip(keys, family))
    cut = len(keys) * 3 // 4
    for day1, day2 in recrawl_lines(cut, len(keys) - cut):
        out[keys[day1]] = family[day2]
    return out


def truth_pairs(export: Iterable[str], family: Dict[str, int]) -> Tuple[int, int, int]:
    """An export (``key<TAB>representative`` lines) against the families of its pages: the
    pairs of pages in one cluster, in one family, and in both."""
    from collections import Counter

    both: Counter = Counter()
    by_rep: Counter = Counter()
    by_family: Counter = Counter()
    for line in export:
        key, rep = line.split("\t")[:2]
        f = family[key]
        both[(rep, f)] += 1
        by_rep[rep] += 1
        by_family[f] += 1
    return _pairs(by_rep), _pairs(by_family), _pairs(both)


def cluster_line(cluster: int, rep: str, members: Sequence[str]) -> str:
    """One cluster as the line both sides are compared by (JSON, fixed spacing)."""
    return json.dumps([int(cluster), rep, list(members)], ensure_ascii=False)


def tsv_lines(path: Path) -> Iterator[str]:
    """A text file's lines, without their newlines."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            yield line.rstrip("\n")


class DiskLow:
    """The least free space on the working directory's file system, sampled every second (its
    drop from the start is what the run wrote at most, beside the machine's other writers)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.start = self.free()
        self.low = self.start
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def free(self) -> int:
        st = os.statvfs(self.path)
        return st.f_bavail * st.f_frsize

    def run(self) -> None:
        while not self.stop.is_set():
            self.low = min(self.low, self.free())
            time.sleep(1.0)


def scale_main(args: argparse.Namespace, memory: PeakMemory) -> None:
    """``--scale``: the comparison of `main`, streamed (see the module's docstring)."""
    import resource
    import shutil
    import subprocess

    import neardup
    import ray
    from neardup._index import DEFAULT_BATCH_SIZE
    from neardup.ray import DistributedIndex

    if args.order != "input":
        raise SystemExit("--scale compares in input order only (a fingerprint-ordered day is one batch held whole)")
    if args.work:
        tmp = Path(args.work)
        tmp.mkdir(parents=True, exist_ok=False)
    else:
        tmp = Path(tempfile.mkdtemp(prefix="ray-merge-scale-"))
    disk = DiskLow(tmp)
    cli = os.environ.get("NEARDUP_CLI") or str(HERE.parent / "target" / "release" / "neardup")
    options = {"sync_writes": False}

    t = time.monotonic()
    files, n1, n2, members = write_days(Path(args.corpus), args.pages, tmp)
    days_s = time.monotonic() - t
    days = (n1, n2)

    t = time.monotonic()
    ray.init(num_cpus=args.cpus, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    dx = DistributedIndex(tmp / "dist", args.key_parts, args.doc_parts, **options)
    start = time.monotonic() - t
    reports, times, cpus = [], [], []
    gone: List[str] = []
    gone_path = tmp / "gone.txt"
    for d, files_ in enumerate(([files[0]], [files[1]]), 1):
        if d == 2:
            # The delete list, from the merge's own export of day 1 (streamed; the single node
            # gives the same export: checked at the end).
            rows = dx.export_tsv(tmp / "day1.tsv")
            gone = sorted(set(delete_list_from_export(tmp / "day1.tsv", rows) + members))
            (tmp / "day1.tsv").unlink()
            gone_path.write_text("\n".join(gone) + "\n")
        t, c = time.monotonic(), memory.cpu_now()
        reports.append(
            dx.merge(
                files_,
                gone_path if d == 2 else None,
                work_units=args.work_units,
                order="input",
                progress=args.progress,
                **({"max_component": args.max_component} if args.max_component else {}),
            )
        )
        times.append(time.monotonic() - t)
        cpus.append(cpu_between(c, memory.cpu_now()))
        # As it goes (a run of 10⁶ pages takes hours): the day's time and the memory so far.
        so_far = memory.snapshot()
        print(
            f"merge day {d}: {days[d - 1]} pages in {times[-1]:.1f} s ({days[d - 1] / times[-1]:.0f} pages/s); "
            f"largest process so far {so_far['peak_one'] / 2**30:.2f} GiB ({so_far['peak_one_name']}), "  # type: ignore[operator]
            f"the machine's memory in use rose by at most {so_far['peak_used'] / 2**30:.2f} GiB; by role "  # type: ignore[operator]
            + ", ".join(f"{r} {v / 2**20:,.0f} MiB" for r, v in sorted(so_far["by_role"].items(), key=lambda kv: -kv[1])),  # type: ignore[union-attr]
            file=sys.stderr,
            flush=True,
        )
    t = time.monotonic()
    dist_rows = dx.export_tsv(tmp / "dist.tsv")
    export_s = time.monotonic() - t
    merge_memory = memory.snapshot()
    merge_disk = disk.start - disk.low

    def du(path: Path) -> int:
        return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0

    disk_batches = du(tmp / "dist" / "batches")
    disk_parts = du(tmp / "dist") - disk_batches
    # The clusters: a table on the driver (there is no streamed form), written out and let go.
    t = time.monotonic()
    table = dx.export_clusters()
    with open(tmp / "dist-clusters.jsonl", "w", encoding="utf-8") as f:
        for batch in table.to_batches():
            for c, r, m in zip(*(batch.column(i).to_pylist() for i in range(3))):
                f.write(cluster_line(c, r, m) + "\n")
    del table
    clusters_s = time.monotonic() - t
    t = time.monotonic()
    check = dx.check()["problem_count"]
    check_s = time.monotonic() - t
    dx.close()
    ray.shutdown()
    shutil.rmtree(tmp / "dist")

    # The single node: the same files streamed through insert_many, DEFAULT_BATCH_SIZE pages a
    # call, in this process (Ray is gone: its memory is this process's).
    memory.reset()
    disk.low = disk.start = disk.free()

    def self_cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        with memory.lock:
            sampler = memory.sampler_cpu
        return r.ru_utime + r.ru_stime - sampler

    ref = neardup.Index(tmp / "single", reuse_ids=False, **options)
    batch = DEFAULT_BATCH_SIZE
    single, single_cpu = [], []
    for d, path in enumerate(files, 1):
        t, c = time.monotonic(), self_cpu()
        if d == 2:
            for k in gone:
                try:
                    ref.delete(k)
                except neardup.NotFoundError:
                    pass
        for chunk in chunked(pages_of(path), batch):
            ref.insert_many(chunk, order="input", batch_size=batch, progress=False)
        single.append(time.monotonic() - t)
        single_cpu.append(self_cpu() - c)
    ref.close()
    single_memory = memory.snapshot()
    single_disk = disk.start - disk.low
    disk_single = du(tmp / "single")

    t = time.monotonic()
    if Path(cli).exists():
        for extra, out in (([], "single.tsv"), (["--clusters"], "single-clusters.jsonl")):
            subprocess.run([cli, "export", "--index", str(tmp / "single"), *extra, "--out", str(tmp / out)], check=True)
    else:
        # No command line: the single node's tables (whole, in this process).
        with neardup.Index(tmp / "single") as ix:
            exp = ix.export()
            with open(tmp / "single.tsv", "w", encoding="utf-8") as f:
                for k, r in zip(exp.column("key").to_pylist(), exp.column("representative").to_pylist()):
                    f.write(f"{k}\t{r}\n")
            del exp
            cl = ix.export_clusters()
            with open(tmp / "single-clusters.jsonl", "w", encoding="utf-8") as f:
                for c, r, m in zip(*(cl.column(i).to_pylist() for i in range(3))):
                    f.write(json.dumps({"cluster": c, "representative": r, "members": m}) + "\n")
            del cl
    single_export_s = time.monotonic() - t

    def single_clusters() -> Iterator[str]:
        for line in tsv_lines(tmp / "single-clusters.jsonl"):
            o = json.loads(line)
            yield cluster_line(o["cluster"], o["representative"], o["members"])

    pages_same, pages_d, hash_d, pages_s, hash_s = same_lines(tsv_lines(tmp / "dist.tsv"), tsv_lines(tmp / "single.tsv"))
    clusters_same, clusters_d, chash_d, clusters_s_, chash_s = same_lines(tsv_lines(tmp / "dist-clusters.jsonl"), single_clusters())
    # Where they differ (a component cut at the cap, SCALEOUT §7.1 option (2)), by how much.
    pairs_d, pairs_s, pairs_both = (0, 0, 0) if pages_same else pair_agreement(tsv_lines(tmp / "dist.tsv"), tsv_lines(tmp / "single.tsv"))
    memory.stop.set()
    disk.stop.set()
    # A generated corpus names each variant's original: both sides scored against it.
    scored: List[str] = []
    family = variant_families(Path(args.corpus), args.pages)
    if family is not None:
        for name in ("dist.tsv", "single.tsv"):
            found, truth, both = truth_pairs(tsv_lines(tmp / name), family)
            scored.append(f"precision {both / max(found, 1):.4f}, recall {both / max(truth, 1):.4f} ({found:,} pairs found, {truth:,} true)")
        del family
    if not args.keep:
        shutil.rmtree(tmp)

    n = n1 + n2
    shuffled = sum(r["shuffled_bytes"] for r in reports)
    me = role([a for a in Path("/proc/self/cmdline").read_text().split("\0") if a])
    print(
        f"corpus: {args.corpus}, {n1} + {n2} pages, {len(gone)} deletes (scale mode: days streamed; "
        f"day files written in {days_s:.1f} s)"
    )
    print(f"Ray: {args.cpus} CPUs, {args.key_parts} key + {args.doc_parts} doc partitions; start {start:.1f} s")
    for d, (r, secs, s1, rows) in enumerate(zip(reports, times, single, days), 1):
        print(
            f"day {d}: merge {rows / secs:,.0f} pages/s ({secs:.1f} s: "
            + ", ".join(f"{k} {v:.1f}" for k, v in r["seconds"].items())
            + f"), single node {rows / s1:,.0f} pages/s ({s1:.1f} s); work units {r['work_units']}; "
            f"components {r['components']}; reached {r['reached_pages']} pages"
        )
    for d, ((cpu, by), rows, s_cpu) in enumerate(zip(cpus, days, single_cpu), 1):
        print(
            f"day {d} CPU a page: merge {1000 * cpu / rows:.2f} ms (every process it started), single node "
            f"{1000 * s_cpu / rows:.2f} ms (insert_many of {batch} pages at a time, read and parsed from the "
            "day's file in this process); merge by role: "
            + ", ".join(f"{r} {v:.1f} s" for r, v in sorted(by.items(), key=lambda kv: -kv[1]))
        )
    print(f"bytes sent a page: {shuffled / n:,.0f} (keys, seeds, unit and partition logs)")
    print(
        f"on disk a page: partitions {disk_parts / n:,.0f} B, batches kept {disk_batches / n:,.0f} B "
        f"(S1's parts and logs), single node {disk_single / n:,.0f} B; the file system's free space fell by at most "
        f"{merge_disk / 2**30:.1f} GiB during the merge (day files included), {single_disk / 2**30:.1f} GiB during the single node"
    )
    for label, m in (("the merge (both days and the streamed export)", merge_memory), ("the single node", single_memory)):
        by_role: Dict[str, int] = m["by_role"]  # type: ignore[assignment]
        print(
            f"peak memory, {label}: {m['peak'] / 2**30:.2f} GiB resident, summed over every process "  # type: ignore[operator]
            f"started (shared object-store pages counted in each); the largest process "
            f"{m['peak_one'] / 2**30:.2f} GiB ({m['peak_one_name']}); the machine's memory in use rose "  # type: ignore[operator]
            f"by at most {m['peak_used'] / 2**30:.2f} GiB; driver (this process) {by_role.get(me, 0) / 2**20:,.0f} MiB"  # type: ignore[operator]
        )
        anon: Dict[str, int] = m["anon_by_role"]  # type: ignore[assignment]
        top = sorted(by_role.items(), key=lambda kv: -kv[1])
        print(
            "  largest process by role (resident; of it at most not file-backed nor shared): "
            + ", ".join(f"{r} {v / 2**20:,.0f} MiB ({anon.get(r, 0) / 2**20:,.0f})" for r, v in top)
        )
    print(
        f"after: merge export (TSV, streamed) {export_s:.1f} s, its clusters (table) {clusters_s:.1f} s, "
        f"distributed check {check_s:.1f} s; single node's exports {single_export_s:.1f} s"
    )
    print(
        f"pages: merge {pages_d} sha256 {hash_d[:16]}, single node {pages_s} sha256 {hash_s[:16]}; "
        f"clusters: merge {clusters_d} sha256 {chash_d[:16]}, single node {clusters_s_} sha256 {chash_s[:16]}"
    )
    if not pages_same:
        print(
            f"pairs of pages in one cluster: merge {pairs_d:,}, single node {pairs_s:,}, both {pairs_both:,} "
            f"(the merge's pairs against the single node's: precision {pairs_both / max(pairs_d, 1):.4f}, "
            f"recall {pairs_both / max(pairs_s, 1):.4f})"
        )
    if scored:
        print(f"against the corpus's variants (variant_of), pairs of pages: merge {scored[0]}; single node {scored[1]}")
    print(
        f"same export, clusters and ids as the single node: {pages_same and clusters_same and dist_rows == pages_d}; "
        f"distributed check problems: {check}"
    )


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
    ap.add_argument(
        "--scale",
        action="store_true",
        help="stream the days (10^5-10^6 pages): day files written line by line, the single node fed "
        "from them a batch at a time, the exports compared as files (input order only)",
    )
    ap.add_argument(
        "--max-component",
        type=int,
        default=None,
        help="the merge's cap on a component (pages, rows and deletes; default the merge's): a component "
        "over it has its sketch keys' edges cut, a deviation from the single node (SCALEOUT §7.1), which the "
        "run then measures as pairs of pages in one cluster",
    )
    ap.add_argument("--work", default=None, help="--scale: the working directory (new; default a temporary one)")
    ap.add_argument("--keep", action="store_true", help="--scale: keep the working directory")
    ap.add_argument("--progress", action="store_true", help="--scale: the merge's progress lines on standard error")
    args = ap.parse_args()
    memory = PeakMemory()
    if args.scale:
        scale_main(args, memory)
        return
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
