"""neardup.ray: the distributed export (SCALEOUT §9 "Export"; issue #34 item 6).

- After two days (deletes and re-crawls) over three doc partitions, the export the merge
  streams to a file (``merge(export=…)``: the doc partitions' parts merged by page id, never
  gathered on the driver) is byte for byte the single node's ``neardup export``, as is
  ``export_tsv`` afterwards; the tables (``export``, ``export_clusters``, ``pages``) equal
  those the driver built by gathering every row (``_export.gathered``) and the single node's.
- A partition that changed between the export's steps is refused, and no part is left behind.
- Exports and checks hold the merge lock shared: refused while a merge runs, and a merge is
  refused while one runs; two of them run at once.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="neardup.ray needs Ray (scripts/setup.sh installs it)")

import neardup  # noqa: E402
from conftest import OPTIONS, REFERENCE, write_jsonl  # noqa: E402
from neardup.ray import DistributedIndex  # noqa: E402
from neardup.ray import _export  # noqa: E402


def ingest(ix: neardup.Index, pages) -> None:
    """Single-node ingest of a day as one batch, in input order, as a merge decides a day."""
    ix.insert_many(pages, order="input", batch_size=len(pages), progress=False)


def test_the_streamed_export_is_the_single_nodes(cluster, cli, dev_pages, tmp_path):
    day1, rest = dev_pages[:300], dev_pages[300:600]
    # Day 2 re-crawls some of day 1's keys (another page's content under the key).
    day2 = list(rest) + [dict(rest[i * 7], id=day1[i * 29]["id"]) for i in range(10)]
    ref = neardup.Index(tmp_path / "ref", **REFERENCE)
    ingest(ref, day1)
    # Representatives (their members hand over) and members deleted before day 2.
    exp = ref.export()
    reps = sorted(set(exp.column("representative").to_pylist()))
    gone = sorted(set(reps[:: max(1, len(reps) // 8)][:8] + [day1[i * 37 + 5]["id"] for i in range(8)]))
    gone_path = tmp_path / "gone.txt"
    gone_path.write_text("\n".join(gone) + "\n")
    for k in gone:
        ref.delete(k)
    ingest(ref, day2)
    want = ref.export(), ref.export_clusters()
    ref.close()
    cli_tsv = tmp_path / "cli.tsv"
    subprocess.run([str(cli), "export", "--index", str(tmp_path / "ref"), "--out", str(cli_tsv)], check=True)

    f1, f2 = write_jsonl(tmp_path / "day1.jsonl.gz", day1), write_jsonl(tmp_path / "day2.jsonl.gz", day2)
    streamed = tmp_path / "merged.tsv"
    with DistributedIndex(tmp_path / "dist", 2, 3, **OPTIONS) as dx:
        dx.merge([f1], progress=False)
        r2 = dx.merge([f2], gone_path, export=streamed, progress=False)
        assert r2["deleted"] == len(gone)
        expected = cli_tsv.read_bytes()
        assert expected.count(b"\n") == r2["live_pages"]
        assert streamed.read_bytes() == expected
        again = tmp_path / "again.tsv"
        assert dx.export_tsv(again) == r2["live_pages"]
        assert again.read_bytes() == expected
        # Some pages name a target other than themselves, held by another doc partition.
        rows = [line.split("\t") for line in expected.decode().splitlines()]
        assert sum(k != r for k, r in rows) > 20

        # The tables: as the driver built them by gathering every row, and the single node's.
        export, clusters, pages = dx.export(), dx.export_clusters(), dx.pages()
        assert export.equals(_export.gathered(dx, "pages"))
        assert clusters.equals(_export.gathered(dx, "clusters"))
        assert pages.equals(_export.gathered(dx, "rows"))
        assert export.equals(want[0]) and clusters.equals(want[1])
        # A merge running (its lock held): exports and checks are refused at once, nothing
        # written; one reading: a merge is refused, another read runs.
        from neardup.ray import _files

        late = tmp_path / "late.tsv"
        with _files.MergeLock(tmp_path / "dist"):
            for read in (lambda: dx.export_tsv(late), dx.export, dx.check):
                with pytest.raises(neardup.InvalidArgumentError, match="a merge into .* is running"):
                    read()
        assert not late.exists()
        with _files.MergeLock(tmp_path / "dist", shared=True):
            with pytest.raises(neardup.InvalidArgumentError, match="another driver is merging into or reading"):
                dx.merge([f2], progress=False)
            assert dx.export_tsv(late) == r2["live_pages"]
        assert pages.column("doc").to_pylist() == sorted(pages.column("doc").to_pylist())

        # A doc partition that changed between the steps (here: its replies are to asks of
        # nothing) is refused; the export's parts are removed from the partitions' nodes.
        dbs = [Path(p["dir"]) for n, p in dx.placement().items() if n.startswith("doc-")]
        empty = ray.get(dx.docs[0].export_asks.options(num_returns=3).remote(dx.layout, "rows"))
        replies = ray.get(dx.docs[0].export_replies.options(num_returns=3).remote(dx.layout, *empty))
        with pytest.raises(ray.exceptions.RayTaskError, match="changed during the export"):
            ray.get(dx.docs[0].export_part.remote(dx.layout, "pages", "t0", 3, *replies))
        ray.get(dx.docs[0].export_drop.remote("t0"))
        left = [p for d in dbs for p in (tmp_path / "dist").rglob(f"{d.name}.export-*")]
        assert left == []
