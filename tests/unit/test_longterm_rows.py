"""Unit tests of the pure mapping helpers and the in-process vector cache."""

from __future__ import annotations

import numpy as np
import pytest

from langgraph_memory.errors import InvalidMemoryError
from langgraph_memory.longterm.rows import (
    ItemRow,
    RecordCache,
    item_id_for,
    looks_like_record,
    partition_token,
    record_columns,
    redact_value,
    texts_to_index,
)
from langgraph_memory.longterm.vectors import (
    PartitionVectorCache,
    cosine_scores,
    cosine_similarities,
    dedicated_collection_name,
    normalised_matrix,
    shard_collection_name,
)
from langgraph_memory.types import MemoryRecord, MemorySource, MemoryStatus


def test_ids_and_names_are_stable_opaque_and_distinct() -> None:
    a = item_id_for("alice", "memories.alice", "k")
    assert a == item_id_for("alice", "memories.alice", "k")
    assert a != item_id_for("bob", "memories.bob", "k")
    assert "alice" not in a and "alice" not in partition_token("alice")
    assert partition_token("alice").isalnum()  # one unicode61 token
    shard = shard_collection_name("lgm", "alice", 64)
    assert shard == shard_collection_name("lgm", "alice", 64) and shard.startswith("lgm-shard-")
    assert "alice" not in dedicated_collection_name("lgm", "alice")
    assert len({shard_collection_name("lgm", f"user{i}", 8) for i in range(200)}) == 8


def test_redact_value_reaches_nested_strings_only() -> None:
    value = {"a": "x1", "b": [{"c": "x2"}, 3, None], "x3": True}
    out = redact_value(value, lambda s: s.upper())
    assert out == {"a": "X1", "b": [{"c": "X2"}, 3, None], "x3": True}


def test_texts_to_index_follows_langgraph_rules() -> None:
    value = {"text": "t", "content": "c", "meta": {"title": "m"}}
    assert texts_to_index(value, None, None) == ["t", "c"]
    assert texts_to_index(value, ["meta.title"], None) == ["m"]
    assert texts_to_index(value, None, ["content"]) == ["c"]
    assert texts_to_index(value, None, False) == []
    assert texts_to_index({"n": 1}, ["$"], None) == ['{"n": 1}']


def test_record_columns_for_records_and_plain_values() -> None:
    record = MemoryRecord(
        text="x",
        key="diet",
        importance=0.8,
        source=MemorySource.AGENT_INFERRED,
        confidence=0.5,
        status=MemoryStatus.SUPERSEDED,
    )
    value = record.to_dict()
    assert looks_like_record(value)
    status, mem_type, key, valid_from, valid_to, expires, importance, active = record_columns(value)
    assert (status, mem_type, key) == ("superseded", "semantic", "diet")
    assert valid_to is None and expires is None and valid_from == record.valid_from.timestamp()
    assert importance == pytest.approx(0.4)
    assert active == record.updated_at.timestamp()
    assert record_columns({"content": "x"}) == (None,) * 8


def test_cosine_and_normalisation() -> None:
    sims = cosine_similarities([1.0, 0.0], [[2.0, 0.0], [0.0, 3.0], [0.0, 0.0], [-1.0, 0.0]])
    assert sims == pytest.approx([1.0, 0.0, 0.0, -1.0])
    matrix = normalised_matrix([[3.0, 4.0], [0.0, 0.0]], 2)
    assert matrix[0] == pytest.approx([0.6, 0.8]) and not matrix[1].any()
    assert normalised_matrix([], 4).shape == (0, 4)


def test_chunked_cosine_scores_cover_every_row() -> None:
    rng = np.random.default_rng(3)
    raw = rng.standard_normal((1300, 16)).astype(np.float32)  # several 512-row chunks
    raw[700] = 0.0
    matrix = normalised_matrix(raw, 16)
    query = rng.standard_normal(16) * 5.0  # not unit length: cosine_scores normalises it
    expected = cosine_similarities(query, raw)
    got = cosine_scores(matrix, query.tolist())
    assert got.shape == (1300,) and got.dtype == np.float32
    assert got == pytest.approx(expected, abs=1e-5)
    assert got[700] == 0.0
    assert cosine_scores(normalised_matrix([], 16), query).shape == (0,)
    assert not cosine_scores(matrix, [0.0] * 16).any()


def test_vector_cache_versions_and_lru_budget() -> None:
    row = np.ones((10, 4), dtype=np.float32)  # 160 bytes
    cache = PartitionVectorCache(max_bytes=400)
    cache.put("a", 1, ["x"] * 10, row)
    assert cache.get("a", 1) is not None
    assert cache.get("a", 2) is None  # another process wrote: version moved on
    cache.put("b", 1, ["y"] * 10, row)
    assert cache.get("a", 1) is not None  # touch a: b is now least recent
    cache.put("c", 1, ["z"] * 10, row)  # 480 bytes > 400: evict b
    assert cache.get("b", 1) is None and cache.get("a", 1) is not None
    cache.drop("a")
    assert cache.get("a", 1) is None
    PartitionVectorCache(max_bytes=100).put("big", 1, ["x"] * 10, row)  # too big: ignored


def _row(partition: str, record: MemoryRecord, rowid: int = 1) -> ItemRow:
    import json

    value = json.dumps(record.to_dict())
    return ItemRow(rowid, "i", partition, "memories", record.id, value, 0.0, 0.0, None, None, 0,
                   0.5, 0.0)  # fmt: skip


def test_record_cache_is_keyed_by_the_stored_value_and_dropped_per_partition() -> None:
    record = MemoryRecord("User likes tea", user_id="alice", id="m1")
    cache = RecordCache(max_entries=2)
    first = cache.record(_row("alice", record))
    assert first == record and cache.record(_row("alice", record)) is first
    # A changed value (a touch, an update, another instance's write) is parsed again.
    touched = cache.record(_row("alice", record.evolve(access_count=1)))
    assert touched.access_count == 1 and touched is not first
    cache.record(_row("bob", MemoryRecord("Bob likes coffee", user_id="bob", id="b1")))
    assert len(cache) == 2  # bounded: the oldest entry went first
    cache.drop("alice")
    assert len(cache) == 1
    bad = '{"text": "x", "type": "semantic", "status": "active", "importance": 7}'
    row = ItemRow(2, "j", "alice", "memories", "m2", bad, 0.0, 0.0, None, None, 0, 0.5, 0.0)
    with pytest.raises(InvalidMemoryError, match="importance=7"):  # still refused, never cached
        cache.record(row)
    assert len(cache) == 1
