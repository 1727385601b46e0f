"""The distributed index's check and export at N pages (default 20k, two days, 4+4 partitions):
seconds and the driver's peak RSS increase during each, for the distributed check, the gathered
reference check (``_check_gathered``) and ``export()``.

Usage: PYTHONPATH=<installed neardup> python3 bench/ray_check.py [--pages 20000]
"""

import argparse
import gzip
import json
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEV = HERE.parent.parent / "shared" / "bench" / "dev" / "docs.jsonl.gz"


def write_days(pages, tmp: Path):
    """``pages`` as two days, the first 3/4 then the rest: ``day1.jsonl.gz`` and
    ``day2.jsonl.gz`` under ``tmp``; their paths."""
    cut = len(pages) * 3 // 4
    files = []
    for name, rows in (("day1", pages[:cut]), ("day2", pages[cut:])):
        path = tmp / f"{name}.jsonl.gz"
        with gzip.open(path, "wt", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        files.append(path)
    return files


def rss() -> int:
    """This process's resident set, in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def measured(f):
    """``f()``'s seconds and the driver's peak RSS above its RSS before, sampled every 10 ms."""
    base, peak, done = rss(), [0], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss())
            time.sleep(0.01)

    th = threading.Thread(target=sample)
    th.start()
    t = time.monotonic()
    out = f()
    secs = time.monotonic() - t
    done.set()
    th.join()
    return out, secs, max(peak[0], rss()) - base


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=20_000)
    ap.add_argument("--corpus", default=str(DEV))
    args = ap.parse_args()
    import ray
    from neardup.ray import DistributedIndex

    with gzip.open(args.corpus, "rt", encoding="utf-8") as f:
        pages = [json.loads(line) for _, line in zip(range(args.pages), f)]
    tmp = Path(tempfile.mkdtemp(prefix="ray-check-bench-"))
    files = write_days(pages, tmp)
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    with DistributedIndex(tmp / "dist", 4, 4, sync_writes=False) as dx:
        for f in files:
            dx.merge([f], progress=False)
        for name, call in (("export", dx.export), ("check", dx.check), ("check_gathered", dx._check_gathered)):
            out, secs, peak = measured(call)
            extra = f" problems {out['problem_count']}" if isinstance(out, dict) else f" rows {out.num_rows}"
            print(f"{name}: {secs:.2f} s, driver peak RSS +{peak / 2**20:.1f} MiB;{extra}")
    ray.shutdown()


if __name__ == "__main__":
    main()
