"""The single-page calls: insert, query, get, len, in, delete, and the module functions."""

from __future__ import annotations

import neardup
import pytest

from conftest import page


@pytest.fixture
def ix(tmp_path):
    with neardup.Index(tmp_path / "ix", sync_writes=False) as ix:
        yield ix


def test_insert_get_len_in_delete(ix):
    v1 = ix.insert("https://a.example/1", html=page())
    assert not v1.duplicate and v1.doc == 0 and v1.representative == "https://a.example/1"
    v2 = ix.insert("https://b.example/2", html=page("A different last paragraph, but short."))
    assert v2.duplicate and v2.cluster == v1.cluster
    assert v2.similar_to == "https://a.example/1" and 0.5 < v2.resemble <= 1.0
    assert len(ix) == 2
    assert "https://a.example/1" in ix and "https://c.example/3" not in ix and 42 not in ix

    info = ix.get("https://b.example/2")
    assert isinstance(info, neardup.PageInfo)
    assert (info.key, info.doc, info.cluster) == ("https://b.example/2", 1, v1.cluster)
    assert info.representative == "https://a.example/1" and info.host == "b.example"
    assert ix.get("https://c.example/3") is None

    # The representative's delete hands the cluster over to the other member.
    d = ix.delete("https://a.example/1")
    assert isinstance(d, neardup.Deletion)
    assert d.was_representative and d.representative == "https://b.example/2"
    assert len(ix) == 1 and "https://a.example/1" not in ix
    assert ix.get("https://b.example/2").representative == "https://b.example/2"
    with pytest.raises(KeyError):
        ix.delete("https://a.example/1")


def test_replace_and_unchanged(ix):
    ix.insert("k", html=page(), host="h", time=5)
    v = ix.insert("k", html=page(), host="h", time=5)
    assert v.unchanged and v.unchanged_html
    # The same main text in other markup: unchanged, not byte-identical.
    v = ix.insert("k", html=page() + b"<!-- fetched again -->", host="h", time=5)
    assert v.unchanged and not v.unchanged_html
    v = ix.insert("k", text="an entirely new text of the page, which is short", host="h")
    assert v.replaced and v.replaced_page is not None and v.replaced_page.key == "k"
    assert len(ix) == 1


def test_query_stores_nothing(ix):
    ix.insert("https://a.example/1", html=page())
    v = ix.query(html=page())
    assert v.duplicate and v.doc is None and v.similar_to == "https://a.example/1"
    v = ix.query(html=page(), key="https://z.example/9")
    assert v.duplicate
    assert len(ix) == 1
    with pytest.raises(TypeError):
        ix.query(html=page(), host="z.example")


def test_export_and_clusters(ix):
    ix.insert("a", html=page())
    ix.insert("b", html=page("Another ending for the copy of this page."))
    ix.insert("c", text="something else entirely, with no copy anywhere at all")
    t = ix.export()
    assert t.column_names == ["key", "representative"]
    assert t.to_pylist() == [
        {"key": "a", "representative": "a"},
        {"key": "b", "representative": "a"},
        {"key": "c", "representative": "c"},
    ]
    c = ix.export_clusters().to_pylist()
    assert [(r["representative"], r["members"]) for r in c] == [("a", ["a", "b"]), ("c", ["c"])]
    assert ix.cluster_members(c[0]["cluster"]) == ["a", "b"]
    assert ix.cluster_members(10_000) is None
    st = ix.stats()
    assert st["pages"] == 3 and st["clusters"] == 2
    assert ix.check()["problem_count"] == 0


def test_options_and_reopen(tmp_path):
    p = tmp_path / "ix"
    with neardup.Index(p, representative="longest_text", signature={"sketch_size": 4}) as ix:
        assert ix.options["representative"] == "longest_text"
        assert ix.options["signature"]["sketch_size"] == 4
        ix.insert("a", html=page())
    # No options: the stored configuration.
    with neardup.Index(p) as ix:
        assert ix.options["representative"] == "longest_text" and len(ix) == 1
    with neardup.Index(p, read_only=True) as ix:
        assert ix.read_only and len(ix) == 1
    with neardup.Index(tmp_path / "m", method="shingle") as ix:
        assert ix.options["signature"]["method"]["name"] == "shingle"


def test_close(tmp_path):
    ix = neardup.Index(tmp_path / "ix")
    ix.close()
    assert ix.closed
    ix.close()
    with pytest.raises(neardup.InvalidArgumentError, match="closed"):
        len(ix)
    # Closed, the directory can be opened again.
    with neardup.Index(tmp_path / "ix") as again:
        assert len(again) == 0


def test_signatures_and_verify():
    s = neardup.signatures(html=page())
    assert isinstance(s, neardup.Signatures)
    assert s.text.startswith("Copies of pages") or "Near-duplicate detection" in s.text
    assert all(isinstance(x, int) and 0 <= x < 2**128 for x in s.fingerprints + s.sketch)
    assert 0 <= s.simhash < 2**64 and 0 <= s.content_hash < 2**128
    assert neardup.signatures(text=s.text).content_hash == neardup.signatures(text=s.text).content_hash
    assert neardup.signatures(html=page().decode()).content_hash == s.content_hash
    t = neardup.signatures(html=page("Another ending for the copy of this page.")).text
    sim = neardup.verify(s.text, t)
    assert isinstance(sim, neardup.Similarity) and sim.similar and 0 < sim.resemble <= 1
    assert not neardup.verify(s.text, "nothing alike", resemble_threshold=0.9).similar
    # The whole-LCS rule (edits spread through a page) can be turned off, and is validated.
    assert neardup.verify(s.text, t, lcs_resemble_threshold=1.0).similar
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.verify(s.text, t, lcs_resemble_threshold=1.5)
    assert neardup.host_of("https://a.b/c?d") == "a.b"


def test_signatures_table():
    import pyarrow as pa

    batch = pa.table({"id": ["a", "b", "c"], "html": [page(), None, page("Other.")]})
    out = neardup.signatures_table(batch)
    assert out.column_names[:2] == ["id", "html"]
    assert out.schema.field("fingerprints").type == pa.list_(pa.binary(16))
    assert out.schema.field("simhash").type == pa.uint64()
    rows = out.to_pylist()
    s = neardup.signatures(html=page())
    assert rows[0]["text"] == s.text and rows[0]["simhash"] == s.simhash
    assert rows[0]["content_hash"] == s.content_hash.to_bytes(16, "big")
    assert [int.from_bytes(x, "big") for x in rows[0]["fingerprints"]] == s.fingerprints
    assert [int.from_bytes(x, "big") for x in rows[0]["sketch"]] == s.sketch
    assert rows[1]["error"] is not None and rows[1]["fingerprints"] is None
    assert rows[2]["error"] is None
    rb = neardup.signatures_table(batch.to_batches()[0])
    assert isinstance(rb, pa.RecordBatch) and rb.num_rows == 3
    txt = neardup.signatures_table({"t": ["one line\nanother line"]}, text_col="t")
    assert txt.column("text")[0].as_py()
