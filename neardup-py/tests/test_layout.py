"""The package's face: the documented names import from `neardup` and `neardup.ray` and are shown
(repr, pickle) under those names, whichever module defines them; the two `__init__.py` define
nothing themselves; `neardup.ray` and its command line import without Ray."""

from __future__ import annotations

import ast
import pickle
import subprocess
import sys
from pathlib import Path

import neardup
import neardup.ray
from neardup.ray import MergeReport

FACES = {
    "neardup": [neardup.Index, neardup.InsertionSession, neardup.signatures_table],
    "neardup.ray": [
        neardup.ray.DistributedIndex,
        neardup.ray.MergeReport,
        neardup.ray.read_pages,
        neardup.ray.read_key_list,
    ],
}


def test_public_names_are_shown_under_the_package():
    for package, objects in FACES.items():
        for obj in objects:
            assert obj.__module__ == package, obj
            # Pickled by reference under that name, as before the package was split in modules.
            assert pickle.loads(pickle.dumps(obj)) is obj
    assert repr(neardup.Index) == "<class 'neardup.Index'>"
    report = pickle.loads(pickle.dumps(MergeReport(batch=3, pages=10)))
    assert type(report) is MergeReport and report == {"batch": 3, "pages": 10}
    assert neardup.DEFAULT_BATCH_SIZE == 4096 and neardup.Progress is not None
    assert neardup.ray.LAYOUT_FILE == "layout.json" and neardup.ray.PathLike is not None


def test_the_package_faces_only_re_export():
    for package in (neardup, neardup.ray):
        tree = ast.parse(Path(package.__file__).read_text(encoding="utf-8"))
        defined = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
        assert defined == [], f"{package.__name__}/__init__.py defines {defined}"
        for name in package.__all__:
            assert hasattr(package, name), f"{package.__name__}.{name}"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120)


def test_neardup_ray_imports_without_ray():
    # Ray is imported when a merge needs it, not with the package: read_pages and the command
    # line's help work where Ray is not installed.
    r = run("-c", "import sys, neardup.ray, neardup.ray.__main__; print('ray' in sys.modules)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_the_command_line_parses_its_commands():
    r = run("-m", "neardup.ray", "--help")
    assert r.returncode == 0, r.stderr
    for command in ("merge", "export", "check"):
        assert command in r.stdout
    r = run("-m", "neardup.ray", "merge", "--help")
    assert r.returncode == 0, r.stderr
    assert "--index-root" in r.stdout and "--delete-list" in r.stdout
    r = run("-m", "neardup.ray", "export")
    assert r.returncode == 2 and "--index-root" in r.stderr
