"""The GIL is released around the library's work: Python threads run while a call works, and
threads sharing an index get the results one thread gets. Nothing here depends on timing."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import neardup
import pytest


@pytest.fixture(scope="module")
def sample(dev_pages):
    return dev_pages[:2000]


@pytest.fixture
def loaded(tmp_path, sample):
    with neardup.Index(tmp_path / "ix", sync_writes=False) as ix:
        ix.insert_many(sample[:1000], order="input", progress=False)
        yield ix


def spin_during(call):
    """Runs `call` in a thread while this one counts how often it runs Python code during the
    call: with the GIL held throughout, it could not run at all between the thread's last
    bytecode before the call and its first after."""
    state = {"phase": "before", "during": 0}
    result = {}

    def worker():
        state["phase"] = "in"
        result["value"] = call()
        state["phase"] = "after"

    t = threading.Thread(target=worker)
    t.start()
    while t.is_alive():
        if state["phase"] == "in":
            state["during"] += 1
    t.join()
    return state["during"], result["value"]


def test_python_runs_during_insert_many(tmp_path, sample):
    with neardup.Index(tmp_path / "ix", sync_writes=False) as ix:
        during, out = spin_during(lambda: ix.insert_many(sample, order="input", progress=False))
    assert out.num_rows == len(sample)
    assert during > 0


def test_python_runs_during_signatures_table(sample):
    import pyarrow as pa

    batch = pa.Table.from_pylist(sample)
    during, out = spin_during(lambda: neardup.signatures_table(batch))
    assert out.num_rows == len(sample) and during > 0


def test_threads_share_an_index(loaded, sample):
    queries = sample[1000:1400]
    alone = [loaded.query(html=p["html"]) for p in queries]
    expect = [(v.duplicate, v.similar_to, v.cluster) for v in alone]

    def one(i):
        v = loaded.query(html=queries[i]["html"])
        return (v.duplicate, v.similar_to, v.cluster)

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(one, range(len(queries)))) == expect

    def many(part):
        t = loaded.query_many(queries[part::4])
        return list(zip(t.column("duplicate").to_pylist(), t.column("similar_to").to_pylist(),
                        t.column("cluster").to_pylist()))

    with ThreadPoolExecutor(4) as pool:
        parts = list(pool.map(many, range(4)))
    for part in range(4):
        assert parts[part] == expect[part::4]


def test_threads_insert_into_one_index(tmp_path, sample):
    chunk = sample[:800]
    with neardup.Index(tmp_path / "ix", sync_writes=False) as ix:
        def insert(part):
            for p in chunk[part::4]:
                ix.insert(p["id"], html=p["html"], host=p["host"], time=p["time"])

        with ThreadPoolExecutor(4) as pool:
            list(pool.map(insert, range(4)))
        assert len(ix) == len(chunk)
        assert ix.check()["problem_count"] == 0
        assert all(p["id"] in ix for p in chunk)


def test_signatures_in_threads_equal(sample):
    pages = sample[:200]
    alone = [neardup.signatures(html=p["html"]).content_hash for p in pages]
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(lambda p: neardup.signatures(html=p["html"]).content_hash, pages)) == alone


def test_scaling_figures(sample, capsys):
    """Prints how signatures() scales over threads (information only: timings assert nothing);
    asserts the results are the same."""
    import os
    import time

    pages = [p["html"] for p in sample[:600]]
    figures = []
    expect = None
    for threads in (1, 2, 4):
        t0 = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            got = list(pool.map(lambda h: neardup.signatures(html=h).content_hash, pages))
        figures.append((threads, len(pages) / (time.perf_counter() - t0)))
        expect = expect or got
        assert got == expect
    with capsys.disabled():
        print(f"\nsignatures() on {os.cpu_count()} cores: "
              + ", ".join(f"{t} thread(s) {r:.0f} pages/s" for t, r in figures))
