"""insert_many / query_many: Arrow or dicts in, Arrow out in input order, progress."""

from __future__ import annotations

import neardup
import pyarrow as pa
import pytest

from conftest import page


def pages(n):
    return [
        {"id": f"p{i}", "host": "a.example", "time": i, "html": page(f"Closing words number {i % 3}.")}
        for i in range(n)
    ]


def test_dicts_and_arrow_give_the_same(tmp_path):
    ps = pages(30)
    with neardup.Index(tmp_path / "a", sync_writes=False) as a:
        ta = a.insert_many(ps, order="input", progress=False)
        ea = a.export()
    table = pa.Table.from_pylist(ps)
    with neardup.Index(tmp_path / "b", sync_writes=False) as b:
        tb = b.insert_many(table, order="input", batch_size=7, progress=False)
        eb = b.export()
    assert ta.column("key").to_pylist() == [p["id"] for p in ps]
    assert ta.drop_columns([]).equals(tb) or ta.to_pylist() == tb.to_pylist()
    assert ea.equals(eb)
    # A record batch and a reader too.
    with neardup.Index(tmp_path / "c", sync_writes=False) as c:
        c.insert_many(table.to_batches()[0], order="input", progress=False)
        assert c.export().equals(ea)
    with neardup.Index(tmp_path / "d", sync_writes=False) as d:
        d.insert_many(pa.RecordBatchReader.from_batches(table.schema, table.to_batches()),
                      order="input", progress=False)
        assert d.export().equals(ea)


def test_url_host_and_binary_columns(tmp_path):
    t = pa.table(
        {
            "url": ["https://x.example/1", "https://y.example/2"],
            "html": pa.array([page(), page("Other end.")], pa.binary()),
        }
    )
    with neardup.Index(tmp_path / "ix") as ix:
        out = ix.insert_many(t, progress=False)
        assert out.column("key").to_pylist() == ["https://x.example/1", "https://y.example/2"]
        assert ix.get("https://y.example/2").host == "y.example"
        with pytest.raises(neardup.InvalidArgumentError, match="html"):
            ix.insert_many(pa.table({"id": ["a"]}), progress=False)


def test_repeated_key_replaces_in_order(tmp_path):
    with neardup.Index(tmp_path / "ix") as ix:
        out = ix.insert_many(
            [
                {"id": "k", "text": "the first version of the page, long enough to count here"},
                {"id": "k", "text": "the second version of the page, long enough to count here"},
            ],
            progress=False,
        )
        assert out.column("error").to_pylist() == [None, None]
        assert out.column("replaced").to_pylist() == [False, True]
        assert len(ix) == 1


def test_progress_callback(tmp_path):
    calls = []
    with neardup.Index(tmp_path / "ix", sync_writes=False) as ix:
        ix.insert_many(pages(50), batch_size=16, group=4, window=8,
                       progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1] == (50, 50)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_progress_bar(tmp_path, capsys):
    pytest.importorskip("tqdm")
    with neardup.Index(tmp_path / "ix", sync_writes=False) as ix:
        ix.insert_many(iter(pages(5)), progress=True)
    assert "5" in capsys.readouterr().err


def test_query_many(tmp_path):
    ps = pages(12)
    with neardup.Index(tmp_path / "ix", sync_writes=False) as ix:
        ix.insert_many(ps[:6], order="input", progress=False)
        # A page without a key is judged on its content alone.
        unkeyed = [{"html": p["html"]} for p in ps[:3]]
        q = ix.query_many(ps + unkeyed + [{"id": "none"}])
        assert len(ix) == 6
        assert q.num_rows == 16
        rows = q.to_pylist()
        for row, p in zip(rows, ps):
            # A page with its key is judged with its host, as an insert would judge it.
            one = ix.query(html=p["html"], key=p["id"], host=p["host"])
            assert (row["duplicate"], row["similar_to"], row["cluster"]) == (
                one.duplicate, one.similar_to, one.cluster)
        for row, p in zip(rows[12:15], unkeyed):
            one = ix.query(html=p["html"])
            assert row["key"] is None
            assert (row["duplicate"], row["similar_to"], row["cluster"]) == (
                one.duplicate, one.similar_to, one.cluster)
        assert q.column("error").to_pylist()[-1] is not None
        assert q.column("doc").null_count == 16


def test_insertion_session(tmp_path):
    ps = pages(10)
    with neardup.Index(tmp_path / "a", sync_writes=False) as a:
        with a.insertion_session(batch_size=4, order="input") as s:
            for p in ps:
                s.insert(p["id"], html=p["html"], host=p["host"], time=p["time"])
            assert len(a) == 8  # two full buffers flushed, two pages waiting
        assert len(a) == 10
        assert s.results().column("key").to_pylist() == [p["id"] for p in ps]
        ea = a.export()
    with neardup.Index(tmp_path / "b", sync_writes=False) as b:
        b.insert_many(ps, order="input", progress=False)
        assert b.export().equals(ea)


def test_bad_columns_are_row_errors(tmp_path):
    with neardup.Index(tmp_path / "ix") as ix:
        out = ix.insert_many(
            [{"id": 7, "text": "a page whose key is a number"},
             {"id": "ok", "host": 3, "text": "a page whose host is a number"},
             {"id": "nobody", "html": 12},
             {"id": "fine", "text": "a page that is fine"}],
            progress=False,
        ).to_pylist()
        assert "key must be a string" in out[0]["error"] and out[0]["key"] == "7"
        assert "host must be a string" in out[1]["error"]
        assert "must be bytes or str" in out[2]["error"]
        assert out[3]["error"] is None and len(ix) == 1


def test_default_order_is_input(tmp_path):
    """Issue #33, item 7: insert_many and insertion_session insert in the order given unless
    told otherwise, so the first page given of a cluster leads it (a crawler's "first seen"),
    even when a later near duplicate has more fingerprints; order="fingerprints" is the other way
    round, and order_scope="batch" (a sort) is refused with input order."""
    short = page()
    long = page(
        "Nothing else is written on this page today. The crawler fetched this copy a day later "
        "from a mirror that keeps every page it has seen. Its editors added a paragraph about "
        "the mirror and the people who keep it running through the winter."
    )
    def fingerprints(html):
        return len(neardup.signatures(html=html).fingerprints)

    assert fingerprints(long) > fingerprints(short)
    rows = [{"id": "short", "html": short}, {"id": "long", "html": long}]

    def leaders(name, **kw):
        with neardup.Index(tmp_path / name, sync_writes=False) as ix:
            ix.insert_many(rows, progress=False, **kw)
            return ix["short"].representative, ix["long"].representative

    assert leaders("default") == ("short", "short")
    assert leaders("input", order="input") == ("short", "short")
    assert leaders("fingerprints", order="fingerprints") == ("long", "long")
    with neardup.Index(tmp_path / "session", sync_writes=False) as ix:
        with ix.insertion_session() as s:
            for r in rows:
                s.insert(r["id"], html=r["html"])
        assert ix["long"].representative == "short"

    with neardup.Index(tmp_path / "refused", sync_writes=False) as ix:
        for call in (lambda: ix.insert_many(rows, order_scope="batch", progress=False),
                     lambda: ix.insertion_session(order_scope="batch")):
            with pytest.raises(neardup.InvalidArgumentError, match='order="fingerprints"'):
                call()
        assert len(ix) == 0
        ix.insert_many(rows, order="fingerprints", order_scope="batch", progress=False)
        assert ix["short"].representative == "long"


def test_main_texts_extracted_before_give_the_same_verdicts_and_state(tmp_path):
    """A ``main_text`` column (``signatures_table(..., main_text=True)``) spares the extraction:
    the verdicts, the export and the state are those of the insert that extracts; a null value
    is extracted here; a value that does not decode, or is not bytes, makes an error row and the
    others go in."""
    ps = pages(40) + [{"id": "txt", "text": "A plain text page.\nIts second line."}]
    table = pa.table({c: [p.get(c) for p in ps] for c in ("id", "host", "time", "html", "text")})
    is_html = pa.array([p.get("html") is not None for p in ps])
    html = neardup.signatures_table(table.filter(is_html), main_text=True)
    txt = neardup.signatures_table(table.filter(pa.compute.invert(is_html)), html_col=None, text_col="text", main_text=True)
    assert html.schema.field("main_text").type == pa.binary()
    assert "main_text" not in neardup.signatures_table(table.slice(0, 2)).column_names
    mains = html.column("main_text").to_pylist() + txt.column("main_text").to_pylist()
    assert all(isinstance(m, bytes) for m in mains)
    with_main = table.append_column("main_text", pa.array(mains, pa.binary()))
    with neardup.Index(tmp_path / "a", sync_writes=False) as a, neardup.Index(tmp_path / "b", sync_writes=False) as b:
        va = a.insert_many(table, order="input", batch_size=16, progress=False)
        vb = b.insert_many(with_main, order="input", batch_size=16, progress=False)
        assert va.equals(vb)
        assert a.export().equals(b.export()) and a.state_log() == b.state_log()
        # Dicts too; and the body is still what a byte-identical recrawl is told by.
        again = b.insert_many([dict(p, main_text=m) for p, m in zip(ps[:3], mains[:3])], progress=False)
        assert again.column("unchanged_html").to_pylist() == [True] * 3
    with neardup.Index(tmp_path / "c", sync_writes=False) as c:
        nulls = table.append_column("main_text", pa.nulls(len(ps), pa.binary()))
        assert c.insert_many(nulls, order="input", batch_size=16, progress=False).equals(va)
    bad = [mains[0][:-1], "not bytes"] + mains[2:]
    with neardup.Index(tmp_path / "d", sync_writes=False) as d:
        vd = d.insert_many([dict(p, main_text=m) for p, m in zip(ps, bad)], order="input", progress=False)
        errors = vd.column("error").to_pylist()
        assert "undecodable main text" in errors[0] and "main_text must be bytes" in errors[1]
        assert vd.column("error_type").to_pylist()[:2] == ["InvalidArgumentError"] * 2
        assert errors[2:] == [None] * (len(ps) - 2)
        assert d.export().num_rows == len(ps) - 2
