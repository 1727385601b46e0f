"""The day streamed through the workers (issue #34, item 3): S1 reads the input files in Ray tasks
(JSONL, ``.gz``, Parquet, WARC and ARC) and S2–S4's coordination runs in an actor, so the driver
reads no page.

- A Parquet day merges as the same pages in JSONL do (exports and clusters), its bad rows error
  rows with their row number as line.
- A Parquet file of another schema, or not Parquet, is refused before anything is written; an
  empty file (JSONL, or Parquet of no bytes or no rows) is a file of no pages.
- A WARC day (gzip per record) merges as the same pages do: response records are pages keyed by
  their target URI, requests and revisits hold no row, a damaged gzip member is an unreadable
  record placed after the record before it.
- The driver never reads nor signs a page: with the driver process's page readers, signer and
  planner made to fail, the merge gives the single node's result.
"""

from __future__ import annotations

import gzip
import json
from datetime import datetime, timezone

import pytest

import neardup
from neardup.ray import DistributedIndex, _files

from conftest import OPTIONS, REFERENCE, write_jsonl

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(scope="module")
def day(dev_pages):
    """120 dev pages, and the single node's export and clusters of them (one batch, input order)."""
    import tempfile

    pages = dev_pages[:120]
    with tempfile.TemporaryDirectory() as tmp:
        with neardup.Index(f"{tmp}/ix", **REFERENCE) as ix:
            ix.insert_many(pages, order="input", batch_size=len(pages), progress=False)
            return pages, ix.export(), ix.export_clusters()


def write_parquet(path, pages, html_type=None):
    cols = {k: [p.get(k) for p in pages] for k in ("id", "url", "host", "time", "html")}
    table = pa.table(cols)
    if html_type is not None:
        table = table.set_column(table.schema.get_field_index("html"), "html", table.column("html").cast(html_type))
    pq.write_table(table, path)
    return path


def test_a_parquet_day_merges_as_the_same_pages_in_jsonl(cluster, day, tmp_path):
    pages, want, clusters = day
    # The day in three files: JSONL.gz, Parquet with HTML as strings, Parquet with HTML as bytes.
    files = [
        write_jsonl(tmp_path / "a.jsonl.gz", pages[:40]),
        write_parquet(tmp_path / "b.parquet", pages[40:80]),
        write_parquet(tmp_path / "c.parquet", pages[80:], html_type=pa.binary()),
    ]
    with DistributedIndex(tmp_path / "dist", 2, 2, **OPTIONS) as dx:
        report = dx.merge(files, work_units=2, progress=False)
        assert report["pages"] == 120 and report["errors"] == 0
        assert dx.export().equals(want) and dx.export_clusters().equals(clusters)


def test_bad_rows_of_parquet_are_error_rows_with_their_row_number(cluster, day, tmp_path):
    pages, _, _ = day
    rows = [dict(p) for p in pages[:20]]
    rows[3]["id"], rows[3]["url"] = None, None  # no key
    rows[7]["html"] = None  # no body
    path = write_parquet(tmp_path / "bad.parquet", rows)
    with DistributedIndex(tmp_path / "dist", 1, 2, **OPTIONS) as dx:
        report = dx.merge([path], progress=False)
    assert report["pages"] == 20 and report["errors"] == 2 and report["live_pages"] == 18
    assert [(e["file"], e["line"]) for e in report["error_rows"]] == [(str(path), 4), (str(path), 8)]
    assert report["error_rows"][0]["reason"] == "invalid argument: no `id` (or `url`)"


def test_a_parquet_file_of_another_schema_is_refused_before_anything_is_written(cluster, day, tmp_path):
    pages, _, _ = day
    good = write_jsonl(tmp_path / "good.jsonl.gz", pages[:10])
    root = tmp_path / "dist"
    bad = {
        "no-key.parquet": pa.table({"name": ["a"], "html": ["<p>x</p>"]}),
        "no-body.parquet": pa.table({"id": ["a"], "body": ["x"]}),
        "int-id.parquet": pa.table({"id": [1], "html": ["<p>x</p>"]}),
        "text-time.parquet": pa.table({"id": ["a"], "time": ["noon"], "html": ["<p>x</p>"]}),
    }
    with DistributedIndex(root, 1, 1, **OPTIONS) as dx:
        for name, table in bad.items():
            pq.write_table(table, tmp_path / name)
            with pytest.raises(neardup.InvalidArgumentError, match=name.replace(".", r"\.")):
                dx.merge([good, tmp_path / name], progress=False)
        # Not Parquet at all.
        (tmp_path / "junk.parquet").write_bytes(b"PAR1 this is no parquet file")
        with pytest.raises(neardup.InvalidArgumentError, match="not a Parquet file"):
            dx.merge([good, tmp_path / "junk.parquet"], progress=False)
        # Nothing was started: the next merge is batch 1, with other inputs.
        assert not (root / "batches").exists() or list((root / "batches").iterdir()) == []
        assert dx.merge([good], progress=False)["batch"] == 1


def test_empty_files_are_files_of_no_pages(cluster, day, tmp_path):
    pages, _, _ = day
    empty_jsonl = tmp_path / "empty.jsonl"
    empty_jsonl.write_bytes(b"")
    empty_pq = tmp_path / "empty.parquet"
    empty_pq.write_bytes(b"")
    no_rows = write_parquet(tmp_path / "no-rows.parquet", [])
    with DistributedIndex(tmp_path / "dist", 1, 1, **OPTIONS) as dx:
        report = dx.merge([empty_jsonl, empty_pq, no_rows, write_jsonl(tmp_path / "d.jsonl.gz", pages[:5])], progress=False)
        assert report["pages"] == 5 and report["errors"] == 0 and report["live_pages"] == 5
        # A day of empty files only: a batch of nothing.
        report = dx.merge([empty_jsonl, empty_pq], progress=False)
        assert report["batch"] == 2 and report["pages"] == 0 and report["live_pages"] == 5


def test_the_driver_reads_no_page(cluster, day, tmp_path, monkeypatch):
    # The driver's own page readers, signer, planner and object puts fail: the merge gets the
    # day from the workers, which read, sign and plan it (their modules are not patched).
    from neardup.ray import _decide, _files, _plan
    import ray

    pages, want, clusters = day

    def fails(*a, **k):
        raise AssertionError("the driver touched the day's pages")

    for module, name in ((_files, "records"), (_files, "read_day"), (_files, "_parse"), (_plan, "plan"),
                         (_decide, "_Rows"), (neardup, "signatures_table"), (ray, "put")):
        monkeypatch.setattr(module, name, fails)
    with DistributedIndex(tmp_path / "dist", 2, 2, **OPTIONS) as dx:
        report = dx.merge([write_jsonl(tmp_path / "day.jsonl.gz", pages)], work_units=2, progress=False)
        # What the driver got back: counts, the first error rows, no list a page.
        assert report["pages"] == 120 and report["work_units"] and sum(report["work_units"]) == 120
        assert all(not isinstance(v, list) or len(v) <= 100 for v in report.values())
        assert dx.export().equals(want) and dx.export_clusters().equals(clusters)
    assert json.loads(json.dumps(report)) == report


def warc_record(kind: str, uri: str, time: int, block: bytes, extra: str = "") -> bytes:
    """One WARC/1.1 record, gzip-compressed on its own (as crawlers write them)."""
    date = datetime.fromtimestamp(time, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    head = (
        f"WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nWARC-Date: {date}\r\n{extra}"
        f"Content-Type: application/http; msgtype={'request' if kind == 'request' else 'response'}\r\n"
        f"Content-Length: {len(block)}\r\n\r\n"
    )
    return gzip.compress(head.encode() + block + b"\r\n\r\n")


def test_a_warc_day_merges_as_the_same_pages(cluster, dev_pages, tmp_path):
    pages = [dict(p, id=p["url"], host=neardup.host_of(p["url"])) for p in dev_pages[200:260]]
    records = []
    for i, p in enumerate(pages):
        if i == 10:
            # A request record and a revisit: no page, no row.
            records.append(warc_record("request", p["url"], p["time"], b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
            records.append(warc_record("revisit", p["url"], p["time"], b"", "WARC-Refers-To-Target-URI: https://x.example/\r\n"))
        body = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" + p["html"].encode()
        records.append(warc_record("response", p["url"], p["time"], body))
    # A damaged gzip member before the last page: skipped, the others kept.
    member = gzip.compress(b"WARC/1.1\r\nWARC-Type: response\r\n\r\n")
    records.insert(-1, member[:20] + bytes(b ^ 0x55 for b in member[20:]))
    path = tmp_path / "day.warc.gz"
    path.write_bytes(b"".join(records))

    # The reader gives each response as the page dict a JSONL line would; the charset of the
    # HTTP header is marked by a byte-order mark (it comes before the page's own <meta>).
    got = [r for _, r in _files.records(path) if isinstance(r, dict)]
    pages = [dict(p, html=b"\xef\xbb\xbf" + p["html"].encode()) for p in pages]
    assert [(r["id"], r["host"], r["time"], r["html"]) for r in got] == [(p["id"], p["host"], p["time"], p["html"]) for p in pages]

    with neardup.Index(tmp_path / "single", **REFERENCE) as ix:
        ix.insert_many(pages, order="input", batch_size=len(pages), progress=False)
        want, clusters = ix.export(), ix.export_clusters()
    with DistributedIndex(tmp_path / "dist", 2, 2, **OPTIONS) as dx:
        report = dx.merge([path], work_units=2, progress=False)
        assert report["pages"] == 61 and report["errors"] == 1 and report["live_pages"] == 60
        assert [(e["file"], e["line"]) for e in report["error_rows"]] == [(str(path), 61)]
        assert report["error_rows"][0]["reason"].startswith("after record 61: damaged gzip member")
        assert dx.export().equals(want) and dx.export_clusters().equals(clusters)


def test_a_work_unit_takes_its_rows_a_block_at_a_time_from_its_compressed_file(tmp_path):
    """S4's unit writes its rows to a compressed Arrow file in record batches and takes each
    block of rows, in the order they are decided, decompressing only the batches the block
    needs (a few kept) and never joining the file's batches: the rows ``Table.take`` gives. A
    file holding another number of batches than written is refused."""
    import numpy as np

    from neardup.ray import _decide
    from neardup.ray._decide import _UnitRows

    rng = np.random.default_rng(7)
    sizes = [3, 1, 5, 8, 2] * 5
    schema = pa.schema([("id", pa.string()), ("html", pa.large_binary())])
    path = tmp_path / "rows.arrow"
    n = 0
    options = pa.ipc.IpcWriteOptions(compression="zstd")
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, schema, options=options) as out:
        for size in sizes:
            out.write_batch(pa.record_batch({"id": [f"k{n + i}" for i in range(size)], "html": [bytes([n + i]) * 3 for i in range(size)]}, schema=schema))
            n += size
    whole = pa.ipc.open_file(pa.memory_map(str(path), "r")).read_all()
    rows = _UnitRows(path, sizes)
    for positions in ([0], [n - 1, 0, 4, 3], rng.permutation(n).tolist(), rng.choice(n, 7, replace=False).tolist()):
        got = rows.take(positions)
        assert got.column("id").num_chunks == 1
        assert got.to_pylist() == whole.take(positions).to_pylist()
        assert len(rows.cache) <= _decide.ROWS_CACHED
    with pytest.raises(neardup.CorruptionError):
        _UnitRows(path, sizes[:-1])
