"""The wheel scripts/test.sh built (NEARDUP_WHEEL): one abi3 wheel for CPython >= 3.9, under
10 MB, holding the package, its stubs and the extension; and it is what the tests import."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import neardup
import pytest

WHEEL = os.environ.get("NEARDUP_WHEEL")


@pytest.mark.skipif(not WHEEL, reason="NEARDUP_WHEEL is set by scripts/test.sh")
def test_wheel_is_abi3_and_small():
    wheel = Path(WHEEL)
    assert "-cp39-abi3-" in wheel.name, wheel.name
    size = wheel.stat().st_size
    print(f"\n{wheel.name}: {size / 1e6:.1f} MB")
    assert size < 10_000_000, f"{wheel.name} is {size / 1e6:.1f} MB, over 10 MB"
    names = set(zipfile.ZipFile(wheel).namelist())
    for f in ("neardup/__init__.py", "neardup/__init__.pyi", "neardup/py.typed",
              "neardup/_errors.py", "neardup/_neardup.abi3.so", "neardup/ray/__init__.py",
              "neardup/ray/__main__.py"):
        assert f in names, f
    # Every module of the package's source tree is in the wheel.
    source = Path(__file__).resolve().parents[1] / "python"
    for path in source.rglob("*.py"):
        f = path.relative_to(source).as_posix()
        assert f in names, f
    # The tests run against this wheel's install, not a stray build.
    assert Path(neardup._neardup.__file__).name == "_neardup.abi3.so"


def test_everything_is_documented():
    for name in neardup.__all__:
        obj = getattr(neardup, name)
        assert obj.__doc__, name
    for cls in (neardup.Index, neardup._neardup._Index, neardup.Verdict, neardup.PageInfo, neardup.Deletion,
                neardup.Signatures, neardup.Similarity, neardup.Layout):
        for attr, value in vars(cls).items():
            if not attr.startswith("_"):
                assert getattr(value, "__doc__", None), f"{cls.__name__}.{attr}"
