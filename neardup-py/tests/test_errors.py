"""The library's errors arrive as neardup's typed exceptions, with their fields."""

from __future__ import annotations

import neardup
import pytest

from conftest import page


def test_hierarchy():
    for name in neardup._errors.__all__:
        cls = getattr(neardup, name)
        assert issubclass(cls, neardup.Error) and issubclass(cls, Exception)
    assert issubclass(neardup.NotFoundError, KeyError)
    assert issubclass(neardup.InvalidArgumentError, ValueError)
    assert issubclass(neardup.IoError, OSError)
    # A wrong type is an InvalidArgumentError too, and a TypeError.
    assert issubclass(neardup.InvalidTypeError, neardup.InvalidArgumentError)
    assert issubclass(neardup.InvalidTypeError, TypeError)
    assert issubclass(neardup.InvalidTypeError, ValueError)


def test_not_found_is_a_key_error(tmp_path):
    with neardup.Index(tmp_path / "ix") as ix:
        with pytest.raises(neardup.NotFoundError) as e:
            ix.delete("absent")
        assert isinstance(e.value, KeyError) and e.value.key == "absent"
        assert "absent" in str(e.value)


def test_invalid_arguments(tmp_path):
    with neardup.Index(tmp_path / "ix") as ix:
        with pytest.raises(neardup.InvalidArgumentError, match="key is empty"):
            ix.insert("", html=page())
        with pytest.raises(neardup.InvalidArgumentError):
            ix.insert("k")  # neither html nor text
        with pytest.raises(neardup.InvalidArgumentError):
            ix.insert("k", html=page(), text="both")
    with pytest.raises(neardup.InvalidTypeError, match="unknown option `bogus`"):
        neardup.Index(tmp_path / "other", bogus=1)
    with pytest.raises(TypeError, match="unknown option `signature.nope`"):
        neardup.Index(tmp_path / "other", signature={"nope": 1})
    with pytest.raises(neardup.InvalidTypeError, match="invalid type"):
        neardup.Index(tmp_path / "other", sync_writes="yes")
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.Index(tmp_path / "other", representative="loudest")
    with pytest.raises(neardup.InvalidArgumentError, match="rotations"):
        neardup.Index(tmp_path / "other", signature={"rotations": 99})
    with pytest.raises(neardup.InvalidArgumentError, match="unknown method"):
        neardup.Index(tmp_path / "other", method="guesswork")


def test_page_errors():
    with pytest.raises(neardup.PageTooLargeError) as e:
        neardup.signatures(html=b"<p>" + b"x" * 200 + b"</p>", max_page_bytes=100)
    assert isinstance(e.value, ValueError) and e.value.limit == 100 and e.value.size > 100
    with pytest.raises(neardup.BinaryPageError) as e:
        neardup.signatures(html=bytes(range(32)) * 64)
    assert e.value.sampled > 0


def test_open_errors(tmp_path):
    p = tmp_path / "ix"
    ix = neardup.Index(p, representative="first_seen")
    with pytest.raises(neardup.AlreadyOpenError) as e:
        neardup.Index(p)
    assert e.value.path
    ix.close()
    with pytest.raises(neardup.IncompatibleConfigError) as e:
        neardup.Index(p, representative="longest_text")
    assert e.value.field == "representative"
    with neardup.Index(p, read_only=True) as ro:
        with pytest.raises(neardup.ReadOnlyError):
            ro.insert("k", html=page())
    with pytest.raises(neardup.InvalidArgumentError, match="no index"):
        neardup.Index(tmp_path / "none", create_if_missing=False)
    (tmp_path / "file").write_text("x")
    with pytest.raises(neardup.InvalidArgumentError, match="not a directory"):
        neardup.Index(tmp_path / "file")


def test_batch_rows_carry_their_error(tmp_path):
    with neardup.Index(tmp_path / "ix") as ix:
        t = ix.insert_many(
            [
                {"id": "ok", "html": page()},
                {"id": "big", "html": b"x" * 64, "time": 1},
                {"html": page()},
                {"id": "bin", "html": bytes(range(32)) * 64},
            ],
            progress=False,
        )
        rows = t.to_pylist()
        assert rows[0]["error"] is None
        assert rows[1]["error"] is None  # a short page is a page (no main text)
        assert rows[2]["error_type"] == "InvalidArgumentError" and rows[2]["key"] is None
        assert rows[3]["error_type"] == "BinaryPageError" and rows[3]["doc"] is None
        assert len(ix) == 2


# Every wrong argument raises one of ours, naming the argument: InvalidTypeError (a TypeError)
# for a wrong type, InvalidArgumentError (a ValueError) for a value out of range.
WRONG = [
    ("insert key", lambda ix: ix.insert(5, html=page()), "key", neardup.InvalidTypeError),
    ("insert host", lambda ix: ix.insert("k", html=page(), host=5), "host", neardup.InvalidTypeError),
    ("insert time", lambda ix: ix.insert("k", html=page(), time="noon"), "time", neardup.InvalidTypeError),
    ("insert time range", lambda ix: ix.insert("k", html=page(), time=2**70), "time", neardup.InvalidArgumentError),
    ("insert html", lambda ix: ix.insert("k", html=5), "html", neardup.InvalidTypeError),
    ("insert text", lambda ix: ix.insert("k", text=b"bytes"), "text", neardup.InvalidTypeError),
    ("insert both", lambda ix: ix.insert("k", html=page(), text="t"), "html or text", neardup.InvalidTypeError),
    ("query key", lambda ix: ix.query(html=page(), key=5), "key", neardup.InvalidTypeError),
    ("query host", lambda ix: ix.query(html=page(), key="k", host=5), "host", neardup.InvalidTypeError),
    ("query host alone", lambda ix: ix.query(html=page(), host="h"), "key", neardup.InvalidTypeError),
    ("get", lambda ix: ix.get(5), "key", neardup.InvalidTypeError),
    ("delete", lambda ix: ix.delete(b"k"), "key", neardup.InvalidTypeError),
    ("cluster_members", lambda ix: ix.cluster_members("0"), "cluster", neardup.InvalidTypeError),
    ("cluster_members range", lambda ix: ix.cluster_members(-1), "cluster", neardup.InvalidArgumentError),
    ("cluster_members limit", lambda ix: ix.cluster_members(0, limit="all"), "limit", neardup.InvalidTypeError),
    ("check", lambda ix: ix.check(sample="10"), "sample", neardup.InvalidTypeError),
    ("checkpoint", lambda ix: ix.checkpoint(5), "dir", neardup.InvalidTypeError),
    ("key_ids", lambda ix: ix.key_ids("abc"), "keys", neardup.InvalidTypeError),
    ("page_clusters", lambda ix: ix.page_clusters([-1]), "ids", neardup.InvalidArgumentError),
    ("record_allocations", lambda ix: ix.record_allocations(None), "on", neardup.InvalidTypeError),
    ("insert_many pages", lambda ix: ix.insert_many(5), "pages", neardup.InvalidTypeError),
    ("insert_many rows", lambda ix: ix.insert_many([5]), "pages", neardup.InvalidTypeError),
    ("insert_many order", lambda ix: ix.insert_many([], order=1), "order", neardup.InvalidTypeError),
    ("insert_many order value", lambda ix: ix.insert_many([], order="random"), "order", neardup.InvalidArgumentError),
    ("insert_many batch_size", lambda ix: ix.insert_many([], batch_size="big"), "batch_size", neardup.InvalidTypeError),
    ("insert_many batch_size 0", lambda ix: ix.insert_many([], batch_size=0), "batch_size", neardup.InvalidArgumentError),
    ("insert_many window", lambda ix: ix.insert_many([], window=1.5), "window", neardup.InvalidTypeError),
    ("query_many batch_size", lambda ix: ix.query_many([], batch_size=None), "batch_size", neardup.InvalidTypeError),
    ("insertion_session", lambda ix: ix.insertion_session(batch_size="x"), "batch_size", neardup.InvalidTypeError),
    ("insertion_session order", lambda ix: ix.insertion_session(order="x"), "order", neardup.InvalidArgumentError),
]


@pytest.mark.parametrize("what,call,name,cls", WRONG, ids=[w[0] for w in WRONG])
def test_wrong_arguments_raise_ours_naming_them(tmp_path, what, call, name, cls):
    with neardup.Index(tmp_path / "ix") as ix:
        with pytest.raises(cls) as e:
            call(ix)
        assert name in str(e.value), str(e.value)
        assert isinstance(e.value, neardup.InvalidArgumentError) and isinstance(e.value, ValueError)
        if cls is neardup.InvalidTypeError:
            assert isinstance(e.value, TypeError)
        assert len(ix) == 0


MODULE_WRONG = [
    ("Index path", lambda p: neardup.Index(5), "path", neardup.InvalidTypeError),
    ("Index read_only", lambda p: neardup.Index(p, read_only="yes"), "read_only", neardup.InvalidTypeError),
    ("signatures html", lambda p: neardup.signatures(html=3.5), "html", neardup.InvalidTypeError),
    ("verify", lambda p: neardup.verify(1, "b"), "a", neardup.InvalidTypeError),
    ("host_of", lambda p: neardup.host_of(5), "url", neardup.InvalidTypeError),
    ("Layout", lambda p: neardup.Layout("1", 2), "key_parts", neardup.InvalidTypeError),
    ("Layout range", lambda p: neardup.Layout(1, -2), "doc_parts", neardup.InvalidArgumentError),
    ("Layout doc_part", lambda p: neardup.Layout(1, 2).doc_part("x"), "id", neardup.InvalidTypeError),
    ("log_counters", lambda p: neardup.log_counters("text"), "log", neardup.InvalidTypeError),
    ("signatures_table", lambda p: neardup.signatures_table(5), "batch", neardup.InvalidTypeError),
    ("signatures_table col", lambda p: neardup.signatures_table({"html": [b"x"]}, html_col=1), "html_col", neardup.InvalidTypeError),
]


@pytest.mark.parametrize("what,call,name,cls", MODULE_WRONG, ids=[w[0] for w in MODULE_WRONG])
def test_module_functions_raise_ours_naming_the_argument(tmp_path, what, call, name, cls):
    with pytest.raises(cls) as e:
        call(tmp_path / "ix")
    assert name in str(e.value), str(e.value)
    if cls is neardup.InvalidTypeError:
        assert isinstance(e.value, TypeError)


def test_a_call_that_does_not_fit_the_signature_is_pythons_type_error(tmp_path):
    with neardup.Index(tmp_path / "ix") as ix:
        with pytest.raises(TypeError) as e:
            ix.insert()  # no key at all
        assert not isinstance(e.value, neardup.Error)
