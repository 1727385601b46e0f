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
    with pytest.raises(TypeError, match="unknown option `bogus`"):
        neardup.Index(tmp_path / "other", bogus=1)
    with pytest.raises(TypeError, match="unknown option `signature.nope`"):
        neardup.Index(tmp_path / "other", signature={"nope": 1})
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
