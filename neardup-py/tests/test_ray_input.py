"""neardup.ray: what a day's input and a root can hold, and what the command line prints
(issue #34, first slice).

- A record that cannot be read (not UTF-8, not JSON, not an object, a lone surrogate, a broken
  gzip stream) or cannot be a page is an error row with its file and line, as ``neardup ingest``
  skips it: the other pages are merged as single-node ``insert_many`` merges them, and an empty
  file is no error.
- A root whose layout names partitions that are not there is refused, typed in Python and with
  exit status 2 from the command line; nothing is created in their place.
- ``--num-cpus`` with ``--address`` is refused; standard output holds the JSON report only, the
  stages go to standard error.
- A committed batch's logs and signatures are retired (``keep_batches``): after two days only
  the last batch's manifest and report are left.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import neardup
import neardup.ray
from neardup.ray import DistributedIndex, MissingPartitionsError

from conftest import OPTIONS, REFERENCE


def line(row) -> bytes:
    return json.dumps(row).encode() + b"\n"


def write_jsonl(path: Path, rows) -> Path:
    with gzip.open(path, "wb") as f:
        for r in rows:
            f.write(line(r))
    return path


def cli(*args: str, code: str = None) -> subprocess.CompletedProcess:
    """``python -m neardup.ray ARGS`` (or ``python -c CODE ARGS``) in a subprocess."""
    head = ["-c", code] if code else ["-m", "neardup.ray"]
    return subprocess.run([sys.executable, *head, *args], capture_output=True, text=True, timeout=600)


# Bad lines, each with the start of the reason the report gives (the command line's words).
BAD_LINES = [
    (b'{"id": "latin-1", "text": "caf\xe9 au lait"}\n', "line is not UTF-8"),
    (b"{not json\n", "malformed JSON"),
    (b"[1, 2, 3]\n", "malformed JSON: a list"),
    (b'{"id": "half", "text": "a lone \\ud800 surrogate"}\n', "malformed JSON: a string holds a lone"),
    (b'{"id": "cut", "html": "<p>a line cut in the mid\n', "malformed JSON"),
]


@pytest.fixture(scope="module")
def bad_day(dev_pages, tmp_path_factory):
    """A day in three files: good pages with every kind of bad line between them (and blank
    lines, and a row without a body); an empty file; and a gzip file cut short. Returns the
    files, the JSON objects of the day in order (what the reference inserts) and the error rows
    expected (file, line, reason's start) of the unreadable lines."""
    tmp = tmp_path_factory.mktemp("bad")
    pages = [dict(p) for p in dev_pages[:120]]
    pages[30] = {"id": "no-body"}  # a JSON object, but no page: an error row of S4
    f1 = tmp / "day.jsonl.gz"
    objects, unreadable = [], []
    n = 0
    with gzip.open(f1, "wb") as f:
        for i, p in enumerate(pages[:90]):
            f.write(line(p))
            n += 1
            objects.append(p)
            if i == 30:
                no_body = (str(f1), n, "invalid argument: page no-body has neither")
            if i % 15 == 7:
                raw, reason = BAD_LINES[(i // 15) % len(BAD_LINES)]
                f.write(raw)
                n += 1
                unreadable.append((str(f1), n, reason))
                f.write(b"\n   \n")  # blank lines: nothing
                n += 2
    empty = tmp / "empty.jsonl"
    empty.write_bytes(b"")
    # The rest in a gzip stream cut short: the pages before the cut are kept (as the CLI keeps them).
    whole = write_jsonl(tmp / "whole.jsonl.gz", pages[90:]).read_bytes()
    cut = tmp / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) * 2 // 3])
    skipped = []
    kept = neardup.ray.read_pages([cut], skipped)
    assert 0 < len(kept) < 30 and len(skipped) == 1
    assert skipped[0]["reason"].startswith("read error, rest of file skipped")
    unreadable.append((str(cut), skipped[0]["line"], "read error"))
    return [f1, empty, cut], objects + kept, unreadable, no_body


def test_read_pages_never_raises_a_decoding_error(bad_day, tmp_path):
    files, objects, unreadable, _ = bad_day
    skipped = []
    assert neardup.ray.read_pages(files, skipped) == objects
    assert [(s["file"], s["line"]) for s in skipped] == [(f, n) for f, n, _ in unreadable]
    for s, (_, _, reason) in zip(skipped, unreadable):
        assert s["reason"].startswith(reason), s
    # Without a list to report them in, the first one raises, with its file and line.
    with pytest.raises(neardup.InvalidArgumentError, match=r"day\.jsonl\.gz:\d+: line is not UTF-8"):
        neardup.ray.read_pages(files)
    assert neardup.ray.read_pages([files[1]]) == []
    # A delete list that is not UTF-8 is refused whole: a key it names would be kept.
    gone = tmp_path / "gone.txt"
    gone.write_bytes(b"a\nb\xff\n")
    with pytest.raises(neardup.InvalidArgumentError, match=r"gone\.txt:2: .*not UTF-8"):
        neardup.ray.read_key_list(gone)


def test_bad_lines_are_error_rows_and_the_good_pages_are_merged(cluster, bad_day, tmp_path):
    files, objects, unreadable, no_body = bad_day
    ref = neardup.Index(tmp_path / "ref", **REFERENCE)
    want = ref.insert_many(objects, order="input", batch_size=len(objects), progress=False)
    want_errors = [e for e in want.column("error").to_pylist() if e is not None]
    assert len(want_errors) == 1  # the row without a body
    with DistributedIndex(tmp_path / "dist", 2, 2, **OPTIONS) as dx:
        report = dx.merge(files, work_units=2, progress=False)
        assert report["batch"] == 1
        assert report["pages"] == len(objects) + len(unreadable)
        assert report["errors"] == len(unreadable) + 1
        # Every error row in file order, with its file, line and reason.
        want_rows = sorted(unreadable + [no_body], key=lambda e: (files.index(Path(e[0])), e[1]))
        got = report["error_rows"]
        assert [(e["file"], e["line"]) for e in got] == [(f, n) for f, n, _ in want_rows]
        for e, (_, _, reason) in zip(got, want_rows):
            assert e["reason"].startswith(reason), e
        # Nothing lost, nothing half-applied: the good pages as one machine merges them.
        assert dx.export().equals(ref.export())
        assert dx.export_clusters().equals(ref.export_clusters())
        assert dx.check()["problem_count"] == 0
    ref.close()


def test_error_rows_are_bounded(cluster, dev_pages, tmp_path):
    f = tmp_path / "day.jsonl"
    with open(f, "wb") as out:
        for i in range(150):
            out.write(b"{not json\n")
        for p in dev_pages[:20]:
            out.write(line(p))
    with DistributedIndex(tmp_path / "dist", 1, 1, **OPTIONS) as dx:
        report = dx.merge([f], progress=False)
    assert report["errors"] == 150 and report["pages"] == 170
    assert len(report["error_rows"]) == 100
    assert [e["line"] for e in report["error_rows"]] == list(range(1, 101))
    assert report["live_pages"] == 20


def test_long_stages_say_how_far_the_workers_are(cluster, dev_pages, tmp_path, monkeypatch):
    # The driver looks at the workers' board every EVERY seconds while S1 and S4 run (made
    # short here, so that it looks while they run whatever the machine's speed).
    from neardup.ray import _progress

    monkeypatch.setattr(_progress, "EVERY", 0.01)
    day = write_jsonl(tmp_path / "day.jsonl.gz", dev_pages[:300])
    lines: list = []
    with DistributedIndex(tmp_path / "dist", 2, 2, **OPTIONS) as dx:
        report = dx.merge([day], work_units=2, progress=lines.append)
    assert report["live_pages"] == 300
    deciding = [x for x in lines if x.startswith("S4 deciding: ")]
    assert deciding, lines
    said = [re.fullmatch(r"S4 deciding: (\d+) of (\d+) rows decided(; [^(]+)? \(\d+ s\)", x) for x in deciding]
    assert all(said), deciding
    counts = [(int(m[1]), int(m[2])) for m in said]
    # Counts of the units' rows, never more than they decide, never going back.
    assert all(total == 300 and 0 <= done <= total for done, total in counts), deciding
    assert [d for d, _ in counts] == sorted(d for d, _ in counts)
    # Once the units are done, the coordinator's step.
    assert all(m[3] == "; the units' logs routed to the partitions" for m, (d, t) in zip(said, counts) if m[3])
    # The stages' own lines, in order, around them.
    stages = [x.split(":")[0] for x in lines if not x.startswith(("S1 reading", "S4 deciding"))]
    assert stages[:6] == ["read", "S1 signatures", "S2-S3 reach", "S4 decide", "S5 commit", "S6 report"]
    reading = [x for x in lines if x.startswith("S1 reading: ")]
    assert all(0 <= int(x.split()[2]) <= 300 for x in reading), reading


def test_a_board_counts_a_retried_worker_once():
    # A task Ray retries sets its count again from the start: never counted twice.
    from neardup.ray._progress import Board

    b = Board()
    b.set("S4", 0, 4096)
    b.set("S4", 1, 100)
    b.set("S4", 0, 10)  # unit 0 retried
    assert b.look("S4") == {"done": 110, "step": None}
    b.post("the units' logs routed")
    assert b.look("S4") == {"done": 110, "step": "the units' logs routed"}
    assert b.look("S1") == {"done": 0, "step": "the units' logs routed"}


def test_a_root_whose_partitions_are_missing_is_refused(cluster, dev_pages, tmp_path):
    day = write_jsonl(tmp_path / "day.jsonl.gz", dev_pages[:60])
    root = tmp_path / "dist"
    with DistributedIndex(root, 2, 2, **OPTIONS) as dx:
        assert dx.merge([day], progress=False)["live_pages"] == 60
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    shutil.move(str(root / "doc-001"), str(moved / "doc-001"))
    shutil.move(str(root / "key-000"), str(moved / "key-000"))
    with pytest.raises(MissingPartitionsError) as e:
        DistributedIndex(root)
    assert isinstance(e.value, neardup.Error)
    assert e.value.missing == ["key-000", "doc-001"] and e.value.root == root
    assert "key-000, doc-001" in str(e.value)
    assert not (root / "doc-001").exists() and not (root / "key-000").exists()
    # The command line: one line on standard error, exit status 2, nothing on standard output.
    gone = tmp_path / "gone.txt"
    gone.write_text(dev_pages[0]["id"] + "\n")
    out = cli("merge", "--index-root", str(root), "--address", cluster, "--delete-list", str(gone))
    assert out.returncode == 2, out.stderr[-2000:]
    assert out.stdout == ""
    errors = [x for x in out.stderr.splitlines() if x.startswith("error:")]
    assert len(errors) == 1 and "key-000, doc-001" in errors[0], out.stderr[-2000:]
    assert not (root / "doc-001").exists()
    # Put back, the index opens with its pages.
    for name in ("doc-001", "key-000"):
        shutil.move(str(moved / name), str(root / name))
    with DistributedIndex(root) as dx:
        assert dx.stats()["pages"] == 60
    # A root with no layout yet is a new index, created.
    with DistributedIndex(tmp_path / "new", 1, 2, **OPTIONS) as dx:
        assert dx.stats()["pages"] == 0
    assert json.loads((tmp_path / "new" / "layout.json").read_text())["doc_parts"] == 2


def test_num_cpus_with_an_address_is_refused(tmp_path):
    with pytest.raises(neardup.InvalidArgumentError, match="give one or the other"):
        DistributedIndex(tmp_path / "dist", address="127.0.0.1:6379", num_cpus=2)
    assert not (tmp_path / "dist").exists()
    out = cli("merge", "--index-root", str(tmp_path / "dist"), "--address", "127.0.0.1:6379",
              "--num-cpus", "2", str(tmp_path / "day.jsonl"))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith("error: --num-cpus") and "--address" in out.stderr
    assert not (tmp_path / "dist").exists()


# Writes to standard output, from Python and at the file descriptor, as Ray and libraries do.
NOISY = """
import os, sys
import neardup.ray.__main__ as cli
merge = cli.DistributedIndex.merge
def noisy(self, *args, **kwargs):
    print("noise from print")
    os.write(1, b"noise at fd 1\\n")
    return merge(self, *args, **kwargs)
cli.DistributedIndex.merge = noisy
sys.exit(cli.main(sys.argv[1:]))
"""


def test_standard_output_is_the_json_report_only(cluster, dev_pages, tmp_path):
    day = write_jsonl(tmp_path / "day.jsonl.gz", dev_pages[:80])
    root = tmp_path / "dist"
    out = cli("merge", "--index-root", str(root), "--address", cluster, "--key-parts", "1",
              "--doc-parts", "2", "--options", json.dumps(OPTIONS), str(day), code=NOISY)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)  # the whole of it
    assert report["batch"] == 1 and report["live_pages"] == 80
    assert "noise from print" in out.stderr and "noise at fd 1" in out.stderr
    stages = [x.split(":")[0] for x in out.stderr.splitlines() if x[:2] in ("re", "S1", "S2", "S4", "S5", "S6")]
    # Between them, on a slow run, lines of progress.
    stages = [s for s in stages if s not in ("S1 reading", "S4 deciding")]
    assert stages[:6] == ["read", "S1 signatures", "S2-S3 reach", "S4 decide", "S5 commit", "S6 report"]
    check = cli("check", "--index-root", str(root), "--address", cluster)
    assert check.returncode == 0, check.stderr[-3000:]
    assert json.loads(check.stdout)["problem_count"] == 0


def test_standard_output_is_clean_with_a_ray_started_here(dev_pages, tmp_path):
    # No cluster to join: the command line starts Ray with --num-cpus, and what Ray says on
    # starting goes to standard error.
    day = write_jsonl(tmp_path / "day.jsonl.gz", dev_pages[:40])
    env = dict(os.environ)
    env.pop("RAY_ADDRESS", None)
    out = subprocess.run(
        [sys.executable, "-m", "neardup.ray", "merge", "--index-root", str(tmp_path / "dist"),
         "--num-cpus", "1", "--key-parts", "1", "--doc-parts", "1", str(day)],
        capture_output=True, text=True, timeout=600, env=env,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout)["live_pages"] == 40
    assert "S5 commit" in out.stderr


def batch_dirs(root: Path):
    return {d.name: sorted(p.name for p in d.iterdir()) for d in (root / "batches").iterdir()}


def test_committed_batches_are_retired(cluster, dev_pages, tmp_path):
    day1 = write_jsonl(tmp_path / "day1.jsonl.gz", dev_pages[:150])
    day2 = write_jsonl(tmp_path / "day2.jsonl.gz", dev_pages[150:300])
    stub = ["manifest.json", "report.json"]
    with DistributedIndex(tmp_path / "dist", 2, 2, **OPTIONS) as dx:
        dx.merge([day1], progress=False)
        # The committed batch keeps what a re-run of its inputs reads.
        assert batch_dirs(dx.root) == {"batch=1": stub}
        dx.merge([day2], progress=False)
        assert batch_dirs(dx.root) == {"batch=2": stub}
        # Its inputs again: known, not merged a second time.
        assert dx.merge([day2], progress=False) == {"batch": 2, "already_applied": True}
        assert dx.stats()["pages"] == 300
        with pytest.raises(neardup.InvalidArgumentError):
            dx.merge([day2], keep_batches=-1, progress=False)
    # Kept: the last batch's logs and signatures, for inspection or replay.
    with DistributedIndex(tmp_path / "kept", 2, 2, **OPTIONS) as dx:
        dx.merge([day1], keep_batches=1, progress=False)
        dx.merge([day2], keep_batches=1, progress=False)
        dirs = batch_dirs(dx.root)
        assert list(dirs) == ["batch=2"]
        assert {"logs", "s1", "manifest.json", "report.json"} <= set(dirs["batch=2"])
    # The command line's --keep-batches.
    root = tmp_path / "cli"
    for n, f in enumerate((day1, day2), 1):
        out = cli("merge", "--index-root", str(root), "--address", cluster, "--key-parts", "1",
                  "--doc-parts", "1", "--keep-batches", "2", str(f))
        assert out.returncode == 0, out.stderr[-3000:]
    dirs = batch_dirs(root)
    assert sorted(dirs) == ["batch=1", "batch=2"] and all("logs" in v for v in dirs.values())


# Records of every type a field can take in JSON: S1 reads JSONL in Rust and must check each as
# ``neardup._rows`` checks the same dict (SCALEOUT §5 S1).
ODD_RECORDS = [
    {"id": "a", "url": "https://x.example/a", "time": 7, "html": "<p>a</p>"},
    {"url": "https://y.example/b", "text": "b"},
    {"id": "", "url": "https://z.example/c", "host": "h", "text": "c", "html": None},
    {"id": "d"},
    {"text": "no key"},
    {"id": "e", "html": "", "time": 2**63},
    {"id": "f", "text": "t", "time": "123"},
    {"id": "g", "text": "t", "time": 1.75},
    {"id": "h", "text": "t", "time": "noon"},
    {"id": 5, "text": "t"},
    {"id": "i", "host": 3, "html": "<p>i</p>"},
    {"id": "j", "html": ["not", "a", "page"]},
    {"id": "k", "text": {"a": 1}},
    {"id": False, "url": "https://w.example/l", "text": "t", "time": True},
    {"id": "m", "html": "<p>m</p>", "extra": {"deep": [1, 2, {"x": None}]}},
]


def test_rows_read_in_rust_are_checked_as_insert_many_checks_them(tmp_path):
    from neardup.ray import _sign

    path = tmp_path / "odd.jsonl"
    path.write_bytes(b"".join(line(r) for r in ODD_RECORDS) + b"{not json\n")
    want = _sign._block_table(3, 0, list(range(1, len(ODD_RECORDS) + 1)), ODD_RECORDS)
    got = list(_sign._jsonl_tables(3, str(path), None))
    assert len(got) == 1
    table, unreadable = got[0]
    assert table.equals(want)
    assert [n for n, _ in unreadable] == [len(ODD_RECORDS) + 1]
    assert table.column("bad").to_pylist()[3] == "page d has neither `html` nor `text`"


def test_jsonl_is_read_as_the_command_line_reads_it(tmp_path):
    from neardup.ray import _files, _sign

    pages = [{"id": f"p{i}", "text": f"page {i}"} for i in range(3)]
    # gzip told by the bytes, not the name (as ``neardup ingest``).
    named = write_jsonl(tmp_path / "day.jsonl", pages)
    assert [r for _, r in _files.records(named)] == pages
    # A line longer than the command line reads for pages of max_page_bytes (twice that and
    # 64 KiB) is an unreadable record with its line; the others are kept.
    big = tmp_path / "big.jsonl"
    big.write_bytes(line(pages[0]) + line({"id": "big", "text": "x" * 70_000}) + line(pages[1]))
    got = list(_files.records(big, max_page_bytes=1000))
    assert [n for n, r in got if isinstance(r, dict)] == [1, 3]
    assert got[1] == (2, f"line longer than {2 * 1000 + 65536} bytes")
    tables = list(_sign._jsonl_tables(0, str(big), 1000))
    assert [t.column("line").to_pylist() for t, _ in tables] == [[1, 3]]
    assert tables[0][1] == [(2, f"line longer than {2 * 1000 + 65536} bytes")]
    # One line as records reads it.
    assert _files._parse(line(pages[0])) == pages[0]
    assert _files._parse(b'{"a": "\\udc00"}').startswith("malformed JSON: a string holds a lone")
