"""neardup.ray: the distributed check (SCALEOUT §9 "Check"; issue #34 item 6).

- On a two-day merged index (deletes and re-crawls), the distributed check, which never gathers
  the index, is clean and agrees with the gathered reference check (``_check_gathered``).
- Damage made through one partition's database (a key partition taken back to its state of the
  day before by a batch log applied to it alone: day 2's postings and simhash entries gone, the
  deleted pages' back) is reported by both checks, the distributed one naming the partition.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="neardup.ray needs Ray (scripts/setup.sh installs it)")

import neardup  # noqa: E402
from conftest import OPTIONS, write_jsonl  # noqa: E402
from neardup.ray import DistributedIndex  # noqa: E402


def two_days(pages, tmp: Path):
    """Day 1 and day 2 files (day 2 re-crawls some of day 1's keys) and a delete list."""
    day1, rest = pages[:3000], pages[3000:6000]
    day2 = list(rest) + [dict(rest[i * 11], id=day1[i * 97]["id"]) for i in range(10)]
    gone = tmp / "gone.txt"
    gone.write_text("\n".join(day1[i * 53 + 1]["id"] for i in range(20)) + "\n")
    return write_jsonl(tmp / "day1.jsonl.gz", day1), write_jsonl(tmp / "day2.jsonl.gz", day2), gone


def test_the_distributed_check_is_clean_and_names_a_damaged_partition(cluster, dev_pages, tmp_path):
    f1, f2, gone = two_days(dev_pages, tmp_path)
    with DistributedIndex(tmp_path / "dist", 3, 3, **OPTIONS) as dx:
        dx.merge([f1], progress=False)
        day1_state = ray.get(dx.keys[0].call.remote("state_log"))
        r2 = dx.merge([f2], gone, progress=False)
        assert r2["deleted"] > 0
        report, gathered = dx.check(), dx._check_gathered()
        assert report["problem_count"] == 0, report["problems"][:10]
        assert gathered["problem_count"] == 0
        for k in ("pages", "clusters", "postings"):
            assert report[k] == gathered[k], k
        assert report["applied_batches"] == [2] * 6

        # Key partition 0 taken back to day 1, through its own database.
        stats = dx.stats()
        back = neardup.state_diff(ray.get(dx.keys[0].call.remote("state_log")), day1_state, stats["pages"], stats["clusters"])
        assert ray.get(dx.keys[0].apply.remote(3, back))
        report, gathered = dx.check(), dx._check_gathered()
        assert gathered["problem_count"] > 0
        assert report["problem_count"] > 0
        problems = report["problems"]
        # Day 2's pages are filed under postings key-000 no longer holds, and deleted pages are
        # held there again: both named with their partitions.
        assert any("→ key-000" in p and "posting" in p and "not held" in p for p in problems), problems[:10]
        assert any("→ key-000" in p and "not filed" in p for p in problems), problems[:10]
        assert any("different batches" in p for p in problems)
        # No other pair of partitions differs.
        pairs = {p.split(":")[0] for p in problems if "→" in p}
        assert pairs and all(p.endswith("key-000") for p in pairs), pairs
