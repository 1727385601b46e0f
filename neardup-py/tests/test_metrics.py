"""Index.metrics(): a dict of counts, errors and latencies per operation since the index was
opened, insert outcomes, RocksDB's figures and the memory by part (issue #33, item 5). No
timing is asserted."""

from __future__ import annotations

import json

import neardup
import pytest

from conftest import page


def assert_latency(lat, count):
    assert lat["count"] == count
    assert lat["p50_us"] <= lat["p90_us"] <= lat["p99_us"] <= lat["max_us"]
    assert lat["mean_us"] <= lat["max_us"]


def test_metrics_count_every_operation(tmp_path):
    with neardup.Index(tmp_path / "ix", sync_writes=False) as ix:
        fresh = ix.metrics()
        assert isinstance(fresh, dict)
        assert fresh["insert"]["count"] == 0 and fresh["query"]["count"] == 0

        v1 = ix.insert("https://a.example/1", html=page())
        v2 = ix.insert("https://b.example/2", html=page("A different last paragraph, but short."))
        assert not v1.duplicate and v2.duplicate
        assert ix.insert("https://a.example/1", html=page()).unchanged
        assert ix.insert("https://a.example/1", html=page("Replaced by a longer last paragraph.")).replaced
        with pytest.raises(ValueError):
            ix.insert("", html=page())
        ix.query(html=page())
        ix.near(html=page())
        ix.delete("https://b.example/2")
        with pytest.raises(KeyError):
            ix.delete("https://b.example/2")
        out = ix.insert_many(
            [{"id": f"p{i}", "host": "c.example", "time": i, "html": page(f"Closing words {i}.")}
             for i in range(3)],
            order="input",
            progress=False,
        )
        assert out.num_rows == 3

        m = ix.metrics()
        ins = m["insert"]
        assert (ins["count"], ins["errors"], ins["unchanged"], ins["replaced"]) == (4, 1, 1, 1)
        assert ins["duplicates"] >= 1
        assert_latency(ins["latency"], 4)
        assert (m["query"]["count"], m["query"]["errors"]) == (1, 0)
        assert (m["near"]["count"], m["near"]["errors"]) == (1, 0)
        assert (m["delete"]["count"], m["delete"]["errors"]) == (1, 1)
        for op in ("query", "near", "delete"):
            assert_latency(m[op]["latency"], m[op]["count"])
        batch = m["batch"]
        assert batch["pages"] == 3 and batch["page_errors"] == 0 and batch["count"] >= 1
        assert_latency(batch["latency"], batch["count"])

        memory = dict(m["memory"])
        rocksdb = dict(m["rocksdb"])
        assert {"block_cache", "memtables", "table_readers"} <= memory.keys()
        assert {"pending_compaction_bytes", "write_stall_stops", "write_stall_delays"} <= rocksdb.keys()
        assert m["uptime_secs"] >= 0
        json.dumps(m)  # plain Python values only

    with neardup.Index(tmp_path / "ix", sync_writes=False) as again:
        assert again.metrics()["insert"]["count"] == 0  # since this open


def test_metrics_of_a_closed_index_raise(tmp_path):
    ix = neardup.Index(tmp_path / "ix", sync_writes=False)
    ix.close()
    with pytest.raises(neardup.InvalidArgumentError, match="closed"):
        ix.metrics()
