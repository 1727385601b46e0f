"""Shared fixtures: the bench's dev corpus and the `neardup` command line."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def bench_dir() -> Path:
    """The bench (``$BENCH``, else ``shared/bench`` beside the repository, as scripts/run-dev.sh)."""
    return Path(os.environ.get("BENCH", REPO.parent / "shared" / "bench"))


def cli_path() -> Path:
    """The release build of the command line (``$NEARDUP_CLI``, else target/release/neardup)."""
    if "NEARDUP_CLI" in os.environ:
        return Path(os.environ["NEARDUP_CLI"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return target / "release" / "neardup"


@pytest.fixture(scope="module")
def cluster():
    """A local Ray cluster of 2 CPUs for the module (the Ray tests'; the multi-node ones define
    their own); its GCS address, for drivers in subprocesses."""
    ray = pytest.importorskip("ray", reason="neardup.ray needs Ray (scripts/setup.sh installs it)")
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING", log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


@pytest.fixture(scope="session")
def dev_file() -> Path:
    f = bench_dir() / "dev" / "docs.jsonl.gz"
    if not f.exists():
        pytest.fail(f"the dev corpus is missing: {f} (set BENCH to the bench directory)")
    return f


@pytest.fixture(scope="session")
def dev_pages(dev_file: Path) -> list:
    """The dev corpus's records as dicts, in corpus order (20,000 pages)."""
    with gzip.open(dev_file, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def cli_source_id(cli: Path) -> str:
    """The library source id the command line at ``cli`` was built from (``neardup --version``
    prints it), or ``""`` when it prints none (a build from before the id)."""
    out = subprocess.run([str(cli), "--version"], capture_output=True, text=True).stdout
    m = re.search(r"\(library source ([0-9a-f]+)\)", out)
    return m.group(1) if m else ""


@pytest.fixture(scope="session")
def cli() -> Path:
    """The command line, built from the library sources of the package under test: one built
    from others (another branch, an older tree, in a shared target directory) gives other
    verdicts, and a test comparing the two would report a difference that is not in the code
    (issue #34: 158 of dev's 20,000 representatives)."""
    import neardup

    p = cli_path()
    if not p.exists():
        pytest.fail(f"{p} is missing: run `cargo build --release -p neardup-tools` first")
    built = cli_source_id(p)
    if built != neardup.SOURCE_ID:
        pytest.fail(
            f"{p} was built from other library sources (source id {built or 'none'}) than the "
            f"neardup package under test ({neardup.SOURCE_ID}): rebuild it from this tree "
            "(`cargo build --release -p neardup-tools`) or point NEARDUP_CLI at such a build"
        )
    return p


PAGE = (
    "<html><head><title>Copies of pages</title></head><body><div class=content>"
    "<p>Near-duplicate detection finds pages whose main text is the same, whatever the "
    "navigation, the advertisements and the footers around it say.</p>"
    "<p>A crawler hands every page to the index, which answers whether it is a copy of a page "
    "it already holds, of which cluster, and with what resemblance and containment.</p>"
    "<p>{extra}</p></div></body></html>"
)


def page(extra: str = "Nothing else is written on this page today.") -> bytes:
    """A small HTML page whose main text verifies similar to the other pages made here."""
    return PAGE.format(extra=extra).encode()


#: Options of the neardup.ray tests' indexes.
OPTIONS = {"sync_writes": False}
#: The single-node reference: a distributed index never gives an id out again (SCALEOUT §4).
REFERENCE = dict(OPTIONS, reuse_ids=False)


def write_jsonl(path: Path, rows) -> Path:
    """``rows`` as a gzipped JSON-lines file at ``path``."""
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    return path
