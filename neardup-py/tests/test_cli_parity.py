"""insert_many gives exactly the clusters of `neardup ingest` on the bench's dev corpus (20,000
pages): the same rows of `neardup export`, in the same order."""

from __future__ import annotations

import subprocess
import time

import neardup
import pyarrow as pa
import pyarrow.compute as pc
import pytest


def cli_export(cli, dev_file, tmp_path, order, scope="window"):
    index = tmp_path / f"cli-{order}-{scope}"
    out = tmp_path / f"cli-{order}-{scope}.tsv"
    t0 = time.perf_counter()
    r = subprocess.run(
        [str(cli), "ingest", "--order", order, "--order-scope", scope, "--index", str(index),
         str(dev_file)],
        capture_output=True, text=True,
    )
    secs = time.perf_counter() - t0
    assert r.returncode == 0, r.stderr
    print(f"\nCLI ingest --order {order} --order-scope {scope}: {secs:.1f} s (process), "
          + r.stdout.splitlines()[0])
    r = subprocess.run([str(cli), "export", "--index", str(index), "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    return [k for k, _ in rows], [v for _, v in rows]


def python_export(pages, tmp_path, order, scope="window"):
    with neardup.Index(tmp_path / f"py-{order}-{scope}") as ix:
        t0 = time.perf_counter()
        out = ix.insert_many(pages, order=order, order_scope=scope, progress=False)
        secs = time.perf_counter() - t0
        print(f"Python insert_many order={order} order_scope={scope}: {out.num_rows} pages in "
              f"{secs:.1f} s: {out.num_rows / secs:.0f} pages/s")
        assert out.column("error").null_count == out.num_rows, out.filter(
            pc.is_valid(out.column("error"))).to_pylist()[:3]
        assert out.num_rows == 20_000
        t = ix.export()
    assert t.schema == pa.schema([("key", pa.string()), ("representative", pa.string())])
    return t.column("key").to_pylist(), t.column("representative").to_pylist()


def assert_same(py, cli):
    assert len(py[0]) == len(cli[0]) == 20_000
    assert py[0] == cli[0], "keys differ (or their order)"
    diff = [(k, a, b) for k, a, b in zip(py[0], py[1], cli[1]) if a != b]
    assert not diff, f"{len(diff)} pages have another representative, e.g. {diff[:3]}"


def test_input_order_arrow_matches_cli(cli, dev_file, dev_pages, tmp_path):
    table = pa.Table.from_pylist(dev_pages)
    assert_same(python_export(table, tmp_path, "input"), cli_export(cli, dev_file, tmp_path, "input"))


def test_fingerprint_order_dicts_matches_cli(cli, dev_file, dev_pages, tmp_path):
    assert_same(
        python_export(dev_pages, tmp_path, "fingerprints"),
        cli_export(cli, dev_file, tmp_path, "fingerprints"),
    )


def test_whole_batch_order_arrow_reader_matches_cli(cli, dev_file, dev_pages, tmp_path):
    table = pa.Table.from_pylist(dev_pages)
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=1000))
    assert_same(
        python_export(reader, tmp_path, "fingerprints", "batch"),
        cli_export(cli, dev_file, tmp_path, "fingerprints", "batch"),
    )
