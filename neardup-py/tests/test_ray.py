"""neardup.ray: the daily merge on a local Ray cluster (2 CPUs, 4 key and 4 doc partitions)
against single-node ingest of each day as one batch, in input order (SCALEOUT §12.4–12.7).

- Equivalence: the dev corpus over two days, with a delete list (representatives and members)
  and re-crawled keys between them, decided in two and then three work units, gives exactly the
  single node's export and clusters (members, representatives, ids), and a clean distributed
  check. The reference never reuses ids, as a distributed index.
- Crash and replay: the driver killed with SIGKILL after S1, after S4 and during S5, and a
  partition actor killed while the logs are applied; re-running the merge gives the export of
  an uninterrupted run, a clean check, and the same page, cluster and sequence ids; and the
  committed batches' logs are retired only then.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="neardup.ray needs Ray (scripts/setup.sh installs it)")

import neardup  # noqa: E402
from conftest import OPTIONS, REFERENCE, write_jsonl  # noqa: E402
from neardup.ray import DistributedIndex  # noqa: E402


def days(pages, cut):
    """Day 1 is ``pages[:cut]``; day 2 the rest, plus re-crawls of day 1's keys (another page's
    content under the key)."""
    day1, rest = pages[:cut], pages[cut:]
    step = max(1, len(day1) // 10)
    day2 = list(rest) + [dict(rest[(i * 7) % len(rest)], id=day1[i * step]["id"]) for i in range(10)]
    return day1, day2


def delete_list(ref: neardup.Index, day1, path: Path) -> Path:
    """Representatives of some clusters (their members hand over) and some members."""
    exp = ref.export()
    reps = sorted(set(exp.column("representative").to_pylist()))
    keys = reps[:: max(1, len(reps) // 12)][:12] + [day1[i * 37 + 5]["id"] for i in range(12)]
    path.write_text("# the day's deletes\n" + "\n".join(sorted(set(keys))) + "\n")
    return path


def reference(tmp: Path, day1, day2, gone_path: Path = None):
    """Single-node ingest of each day as one batch, in input order: day 1; then the delete list and day 2."""
    ref = neardup.Index(tmp / "ref", **REFERENCE)
    ref.insert_many(day1, order="input", batch_size=len(day1), progress=False)
    return ref


def apply_day2(ref: neardup.Index, gone_path: Path, day2):
    for line in gone_path.read_text().splitlines():
        if line and not line.startswith("#"):
            try:
                ref.delete(line)
            except neardup.NotFoundError:
                pass
    ref.insert_many(day2, order="input", batch_size=len(day2), progress=False)


def assert_same(dx: DistributedIndex, ref: neardup.Index):
    assert dx.export().equals(ref.export())
    assert dx.export_clusters().equals(ref.export_clusters())
    report = dx.check()
    assert report["problem_count"] == 0, report


def test_two_days_on_ray_give_the_single_nodes_clusters(cluster, dev_pages, tmp_path, capsys):
    day1, day2 = days(dev_pages, 15_000)
    f1 = write_jsonl(tmp_path / "day1.jsonl.gz", day1)
    f2 = write_jsonl(tmp_path / "day2.jsonl.gz", day2)
    t = time.monotonic()
    ref = reference(tmp_path, day1, day2)
    single1 = time.monotonic() - t
    gone = delete_list(ref, day1, tmp_path / "gone.txt")
    with DistributedIndex(tmp_path / "dist", 4, 4, **OPTIONS) as dx:
        t = time.monotonic()
        # Two work units: their new ids numbered in the single node's order.
        r1 = dx.merge([f1], work_units=2, progress=False)
        merge1 = time.monotonic() - t
        assert r1["batch"] == 1 and r1["pages"] == len(day1) and r1["errors"] == 0
        assert len(r1["work_units"]) == 2
        assert_same(dx, ref)
        t = time.monotonic()
        apply_day2(ref, gone, day2)
        single2 = time.monotonic() - t
        t = time.monotonic()
        # Components decided in three scratch indexes at once.
        r2 = dx.merge([f2], gone, work_units=3, progress=False)
        merge2 = time.monotonic() - t
        assert r2["batch"] == 2 and r2["deleted"] > 12 and r2["reached_pages"] > 0
        assert len(r2["work_units"]) == 3 and min(r2["work_units"]) > 0
        assert_same(dx, ref)
        assert dx.applied_batches() == [2] * 8
        # A merge of a batch every partition applied does nothing.
        assert dx.merge([f2], gone, batch=2, progress=False).get("already_applied")
        with capsys.disabled():
            n = len(day1) + len(day2)
            print(
                f"\n[ray merge, dev, 2 CPUs, 4+4 partitions] day 1: {len(day1) / merge1:.0f} pages/s "
                f"(single node {len(day1) / single1:.0f}); day 2: {len(day2) / merge2:.0f} pages/s "
                f"(single node {len(day2) / single2:.0f}); bytes sent a page: "
                f"{(r1['shuffled_bytes'] + r2['shuffled_bytes']) / n:.0f}; reached on day 2: "
                f"{r2['reached_pages']} pages, {r2['reached_clusters']} clusters; day 1 components "
                f"{r1['components']}; seconds {r1['seconds']} {r2['seconds']}"
            )
    ref.close()


def run_driver(address: str, root: Path, files, gone=None, kill_at=None, batch=None):
    """``python -m neardup.ray merge`` in a subprocess joined to the test's Ray cluster."""
    cmd = [sys.executable, "-m", "neardup.ray", "merge", "--index-root", str(root), "--address", address]
    cmd += ["--options", json.dumps(OPTIONS), "--work-units", "2"]
    if gone is not None:
        cmd += ["--delete-list", str(gone)]
    if batch is not None:
        cmd += ["--batch", str(batch)]
    cmd += [str(f) for f in files]
    env = dict(os.environ)
    env.pop("NEARDUP_RAY_KILL_AT", None)
    if kill_at:
        env["NEARDUP_RAY_KILL_AT"] = kill_at
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)


def f2_rows(path: Path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line for line in f if line.strip()]


def ids(dx: DistributedIndex):
    return dx.pages(), dx.export_clusters()


def retired(root: Path) -> bool:
    """Whether the batches a two-day merge committed were retired: batch 1 gone, batch 2 left
    with what a re-run of its inputs reads (and its report, unless the run that committed it
    was killed before writing it)."""
    left = {d.name: sorted(p.name for p in d.iterdir()) for d in (root / "batches").iterdir()}
    return left in ({"batch=2": ["manifest.json", "report.json"]}, {"batch=2": ["manifest.json"]})


@pytest.fixture(scope="module")
def small_days(dev_pages, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("small")
    day1, day2 = days(dev_pages[:3_000], 2_200)
    f1 = write_jsonl(tmp / "day1.jsonl.gz", day1)
    f2 = write_jsonl(tmp / "day2.jsonl.gz", day2)
    ref = reference(tmp, day1, day2)
    gone = delete_list(ref, day1, tmp / "gone.txt")
    apply_day2(ref, gone, day2)
    want = (ref.export(), ref.export_clusters())
    ref.close()
    return f1, f2, gone, want


@pytest.fixture(scope="module")
def clean_run(cluster, small_days, tmp_path_factory):
    """An uninterrupted two-day merge through the command line: the ids to hold retries to."""
    f1, f2, gone, want = small_days
    root = tmp_path_factory.mktemp("clean") / "dist"
    for files, g in (([f1], None), ([f2], gone)):
        out = run_driver(cluster, root, files, g)
        assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    assert report["batch"] == 2
    assert retired(root)
    with DistributedIndex(root) as dx:
        assert dx.export().equals(want[0]) and dx.export_clusters().equals(want[1])
        got = ids(dx)
    return got


@pytest.mark.parametrize("kill_at", ["after-S1", "after-S4", "S5", "after-S5"])
def test_a_driver_killed_between_stages_or_during_commit_resumes(cluster, small_days, clean_run, tmp_path, kill_at):
    f1, f2, gone, want = small_days
    root = tmp_path / "dist"
    assert run_driver(cluster, root, [f1]).returncode == 0
    out = run_driver(cluster, root, [f2], gone, kill_at=kill_at)
    assert out.returncode == -signal.SIGKILL, (out.returncode, out.stderr[-3000:])
    batch_dir = root / "batches" / "batch=2"
    assert (batch_dir / "logs" / "_DONE").exists() == (kill_at != "after-S1")
    assert not (batch_dir / "report.json").exists()
    # Other inputs cannot finish the batch that was started.
    wrong = run_driver(cluster, root, [f1], gone, batch=2)
    assert wrong.returncode == 2 and "other inputs" in wrong.stderr
    out = run_driver(cluster, root, [f2], gone)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    if kill_at == "after-S1":
        assert report["resumed"] == ["S1"]
    elif kill_at == "after-S5":
        # Every partition applied it: the same inputs again are not merged a second time.
        assert report == {"batch": 2, "already_applied": True}
    else:
        assert report["resumed"][:4] == ["S1", "S2", "S3", "S4"]
        assert report["pages"] == len(f2_rows(f2)) and report["deleted"] > 0
    # Batch 1 retired when batch 2 was committed, batch 2's logs once the re-run committed it.
    assert retired(root)
    with DistributedIndex(root) as dx:
        assert dx.export().equals(want[0]) and dx.export_clusters().equals(want[1])
        assert dx.check()["problem_count"] == 0
        pages, clusters = ids(dx)
        assert pages.equals(clean_run[0]) and clusters.equals(clean_run[1])


def test_a_partition_actor_killed_during_commit_is_restarted_and_the_batch_completes(cluster, small_days, clean_run, tmp_path):
    f1, f2, gone, want = small_days
    root = tmp_path / "dist"
    assert run_driver(cluster, root, [f1]).returncode == 0
    # The logs written, nothing applied.
    out = run_driver(cluster, root, [f2], gone, kill_at="after-S4")
    assert out.returncode == -signal.SIGKILL
    logs = root / "batches" / "batch=2" / "logs"
    with DistributedIndex(root) as dx:
        victim = dx.docs[1]
        before = ray.get(victim.pid.remote())
        # Commit begins on every partition; one actor dies while its log is in flight.
        refs = [a.apply.remote(2, (logs / f"{r}-{p:03}.ndlog").read_bytes())
                for r, actors in (("key", dx.keys), ("doc", dx.docs)) for p, a in enumerate(actors)]
        ray.kill(victim, no_restart=False)
        ray.get(refs)  # the killed actor's call is retried once it has reopened its database
        assert ray.get(victim.pid.remote()) != before
        assert dx.applied_batches() == [2] * 8
        # The merge run again finds the batch applied, and retires its logs.
        assert (logs / "_DONE").exists()
        assert dx.merge([f2], gone, batch=2, progress=False).get("already_applied")
        assert retired(root)
        assert dx.export().equals(want[0]) and dx.export_clusters().equals(want[1])
        assert dx.check()["problem_count"] == 0
        pages, clusters = ids(dx)
        assert pages.equals(clean_run[0]) and clusters.equals(clean_run[1])


def test_partitions_refuse_what_is_not_theirs(tmp_path):
    layout = neardup.Layout(2, 2)
    with neardup.Index(tmp_path / "k0", **OPTIONS) as k0:
        k0.set_partition(layout, "key", 0)
        assert k0.partition == ("key", 0, 2, 2)
        with pytest.raises(neardup.InvalidArgumentError):
            k0.insert("a", html=b"<p>a page</p>")
        with pytest.raises(neardup.InvalidArgumentError):
            k0.set_partition(layout, "doc", 0)
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.Layout(0, 2)


def test_the_ray_module_is_documented():
    import neardup.ray as nr

    assert nr.__doc__
    for name in nr.__all__:
        obj = getattr(nr, name)
        assert obj.__doc__, name
    for attr, value in vars(nr.DistributedIndex).items():
        if not attr.startswith("_"):
            assert getattr(value, "__doc__", None), f"DistributedIndex.{attr}"


def test_bad_rows_are_error_rows_and_bad_merges_are_refused(cluster, dev_pages, tmp_path):
    day = [dict(p) for p in dev_pages[:40]]
    day[3]["html"] = 5  # not a body
    del day[7]["id"], day[7]["url"]  # no key
    day[9] = {"id": "t9", "text": "A page given as its text only, without its HTML. " * 20}
    # Text rows between HTML rows (insert_many orders each run of one body kind on its own), and a
    # key first given without a body, then with one (runs are cut over good rows only).
    day[20] = {"id": "t20", "text": "Another page given as text, to cut the HTML rows. " * 20}
    day.insert(25, {"id": day[30]["id"]})
    f = write_jsonl(tmp_path / "day.jsonl.gz", day)
    ref = neardup.Index(tmp_path / "ref", **REFERENCE)
    want = ref.insert_many(day, order="input", batch_size=len(day), progress=False)
    want_errors = sum(1 for e in want.column("error").to_pylist() if e is not None)
    assert want_errors == 3
    with DistributedIndex(tmp_path / "dist", 2, 2, **OPTIONS) as dx:
        with pytest.raises(neardup.InvalidArgumentError):
            dx.merge([], progress=False)
        report = dx.merge([f], work_units=3, progress=False)
        assert report["errors"] == want_errors and report["pages"] == len(day)
        assert dx.export().equals(ref.export()) and dx.export_clusters().equals(ref.export_clusters())
        # The same inputs again: merged already, not merged a second time.
        assert dx.merge([f], progress=False).get("already_applied")
        assert dx.applied_batches() == [1] * 4
        with pytest.raises(neardup.InvalidArgumentError):
            dx.merge([f], order="newest", progress=False)
    ref.close()
    # In whole-day fingerprint order: the single node's batch sorted by fingerprint count (each
    # call of one body kind sorted on its own).
    ref = neardup.Index(tmp_path / "ref-fp", **REFERENCE)
    ref.insert_many(day, order="fingerprints", order_scope="batch", batch_size=len(day), progress=False)
    with DistributedIndex(tmp_path / "dist-fp", 2, 2, **OPTIONS) as dx:
        report = dx.merge([f], work_units=3, order="fingerprints", progress=False)
        assert report["errors"] == want_errors
        assert dx.export().equals(ref.export()) and dx.export_clusters().equals(ref.export_clusters())
    ref.close()
    with pytest.raises(neardup.InvalidArgumentError):
        DistributedIndex(tmp_path / "nostore", 2, 2, store_texts=False)
    with pytest.raises(neardup.InvalidArgumentError):
        DistributedIndex(tmp_path / "chrome", 2, 2, chrome={"enabled": True})


def test_a_merge_checkpoints_every_partition_and_exports(cluster, dev_pages, tmp_path):
    f = write_jsonl(tmp_path / "day.jsonl.gz", dev_pages[:300])
    with DistributedIndex(tmp_path / "dist", 2, 3, **OPTIONS) as dx:
        report = dx.merge([f], export=tmp_path / "out.tsv", checkpoint=True, progress=False)
        want = dx.export()
    lines = (tmp_path / "out.tsv").read_text().splitlines()
    assert lines == [f"{k}\t{r}" for k, r in zip(want.column("key").to_pylist(), want.column("representative").to_pylist())]
    assert json.loads((tmp_path / "dist" / "batches" / "batch=1" / "report.json").read_text())["live_pages"] == 300
    assert report["live_pages"] == 300
    shots = sorted(p.name for p in (tmp_path / "dist" / "checkpoints" / "batch=1").iterdir())
    assert shots == ["doc-000", "doc-001", "doc-002", "key-000", "key-001"]
    # A checkpoint is a database of its partition, at the batch.
    with neardup.Partition(tmp_path / "dist" / "checkpoints" / "batch=1" / "doc-001", neardup.Layout(2, 3), "doc", 1) as shot:
        assert shot.partition == ("doc", 1, 2, 3)
        assert shot.applied_batch() == 1


def test_option_shorthands_sign_as_the_index_does(cluster, dev_pages, tmp_path):
    # `method="shingle"` is short for `signature={"method": "shingle"}`: S1 must sign (and order
    # the units' pages) as the scratch indexes do.
    day = dev_pages[:400]
    f = write_jsonl(tmp_path / "day.jsonl.gz", day)
    ref = neardup.Index(tmp_path / "ref", method="shingle", **REFERENCE)
    ref.insert_many(day, order="input", batch_size=len(day), progress=False)
    with DistributedIndex(tmp_path / "dist", 2, 2, method="shingle", **OPTIONS) as dx:
        report = dx.merge([f], work_units=3, progress=False)
        assert len(report["work_units"]) == 3
        assert_same(dx, ref)
    ref.close()


def test_a_task_returns_result_values(cluster, tmp_path):
    # The values of a single node's calls pickle: a Ray task returns them to the driver.
    html = (
        b"<html><body><div class=content><p>Near-duplicate detection finds pages whose main text "
        b"is the same, whatever the navigation around it says.</p><p>A crawler hands every page "
        b"to the index, which answers whether it is a copy of a page it already holds.</p>"
        b"</div></body></html>"
    )

    @ray.remote
    def work(path, html):
        with neardup.Index(path, sync_writes=False) as ix:
            ix.insert("a", html=html)
            v = ix.insert("b", html=html)
            return v, ix.get("b"), ix.delete("a"), neardup.signatures(html=html)

    v, info, d, sig = ray.get(work.remote(str(tmp_path / "ix"), html))
    assert isinstance(v, neardup.Verdict) and v.duplicate and v.similar_to == "a"
    assert isinstance(info, neardup.PageInfo) and info.key == "b" and info.similar_to == "a"
    assert isinstance(d, neardup.Deletion) and d.key == "a"
    assert sig == neardup.signatures(html=html)
