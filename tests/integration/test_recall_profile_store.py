"""The core profile over a real ChromaMemoryStore, under a ManualClock.

Superseded and expired values must never appear in the profile, whatever the
query; the profile rides in the store's one-pass recall; the message metadata
names exactly what was injected.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.graph.message import add_messages

from langgraph_memory.clock import ManualClock
from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.errors import InvalidMemoryError
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.nodes.recall import (
    create_recall_node,
    flush_access_stats,
    recalled_block,
    recalled_metadata,
)
from langgraph_memory.types import MemoryRecord, MemoryType

USER = "profile-user"
START = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)
CONFIG: Any = {"configurable": {"user_id": USER}}


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def store(tmp_path: Path, clock: ManualClock) -> Iterator[ChromaMemoryStore]:
    s = ChromaMemoryStore.embedded(tmp_path, embeddings=HashingEmbeddings(), clock=clock)
    yield s
    s.close()


def memory(text: str, clock: ManualClock, **kw: Any) -> MemoryRecord:
    at = clock()
    return MemoryRecord(text=text, user_id=USER, created_at=at, updated_at=at, valid_from=at, **kw)


def ask(recall: Any, question: str) -> tuple[str, dict[str, Any]]:
    msgs: list[Any] = [HumanMessage(question, id="q")]
    msgs = add_messages(msgs, recall.invoke({"messages": msgs}, CONFIG).get("messages", []))
    return recalled_block(msgs) or "", recalled_metadata(msgs) or {}


def test_profile_is_current_values_only(store: ChromaMemoryStore, clock: ManualClock) -> None:
    old_city = store.put_memory(
        memory("User lives in Hangzhou", clock, key="address.city", importance=0.8)
    )
    allergy = store.put_memory(
        memory("User is allergic to seafood", clock, key="allergy.seafood", importance=0.95)
    )
    trip = store.put_memory(
        memory(
            "User is allergic to the hotel's cat this week",
            clock,
            type=MemoryType.EPISODIC,
            expires_at=START + timedelta(days=7),
        )
    )
    for i in range(60):  # unrelated, ordinary memories around them
        store.put_memory(memory(f"User read article number {i} about gardening", clock))
    clock.advance(timedelta(days=30))
    new_city = store.supersede(
        USER,
        old_city.id,
        memory("User lives in Chengdu", clock, key="address.city", importance=0.8),
    )
    recall = create_recall_node(store=store, clock=clock, update_access_stats=False)
    for question in ("what should I cook tonight?", "recommend a weekend trip", "我是谁"):
        block, metadata = ask(recall, question)
        assert "allergic to seafood" in block and "Chengdu" in block, question
        assert "Hangzhou" not in block and "hotel's cat" not in block, question
        assert allergy.id in metadata["profile_ids"] and new_city.id in metadata["profile_ids"]
        assert old_city.id not in metadata["memory_ids"] and trip.id not in metadata["memory_ids"]
        assert metadata["query"] == question


async def test_async_path_gives_the_same_profile(
    store: ChromaMemoryStore, clock: ManualClock
) -> None:
    store.put_memory(memory("Never use honorifics", clock, type=MemoryType.PROCEDURAL))
    store.put_memory(memory("用户对花生过敏", clock, key="allergy:花生", importance=0.95))
    store.put_memory(memory("User likes jazz", clock))
    recall = create_recall_node(
        store=store, clock=clock, update_access_stats=False, recent_fill=False
    )
    state = {"messages": [HumanMessage("帮我推荐一个零食", id="q")]}
    sync = recall.invoke(state, CONFIG)
    assert await recall.ainvoke(state, CONFIG) == sync
    block = recalled_block(add_messages(state["messages"], sync["messages"])) or ""
    assert "花生" in block and "Never use honorifics" in block and "jazz" not in block


def test_store_profile_pass_ranks_by_importance_whatever_the_query(
    store: ChromaMemoryStore, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langgraph_memory.errors import ConfigurationError
    from langgraph_memory.longterm import retrieval

    low = [
        store.put_memory(memory(f"User read book {i}", clock, importance=0.3 + i / 100))
        for i in range(5)
    ]
    unkeyed = store.put_memory(memory("User's son is allergic to peanuts", clock, importance=0.9))
    keyed = store.put_memory(memory("User lives in Chengdu", clock, key="address.city"))
    gone = store.put_memory(
        memory("User is in Tokyo", clock, importance=1.0, expires_at=START + timedelta(hours=1))
    )
    clock.advance(timedelta(days=1))
    got = store.recall_memories(USER, "zzz unrelated", profile_limit=3)
    assert [r.id for r in got.profile] == [unkeyed.id, keyed.id, low[-1].id]
    assert gone.id not in [r.id for r in store.recall_memories(USER, "x", profile_limit=50).profile]
    assert store.recall_memories(USER, "x").profile == ()  # off by default
    # A large partition: only keyed slots are ranked (no full scan on the reply path).
    monkeypatch.setattr(retrieval, "PROFILE_SCAN_MAX_ROWS", 2)
    assert [r.id for r in store.recall_memories(USER, "x", profile_limit=5).profile] == [keyed.id]
    with pytest.raises(ConfigurationError, match="profile_limit=-1"):
        store.recall_memories(USER, "x", profile_limit=-1)


def test_parsed_records_of_a_forgotten_or_deleted_memory_leave_the_cache(
    store: ChromaMemoryStore, clock: ManualClock
) -> None:
    """Recall keeps parsed records in process (``RecordCache``); the delete paths drop
    the partition's entries, so no text of an erased memory stays referenced there."""
    kept = store.put_memory(memory("User likes jazz", clock, importance=0.9))
    gone = store.put_memory(memory("User's passport expires in May", clock, importance=0.8))
    got = store.recall_memories(USER, "jazz passport", profile_limit=5)
    assert {r.id for r in got.profile} == {kept.id, gone.id}
    assert any(k[0] == USER for k in store.record_cache._entries)
    store.delete_memory(USER, gone.id)
    assert not any("passport" in k[1] for k in store.record_cache._entries)
    store.recall_memories(USER, "jazz", profile_limit=5)
    store.forget_user(USER)
    assert not any(k[0] == USER for k in store.record_cache._entries)


def test_a_touch_carries_parsed_records_equal_to_a_fresh_parse(
    store: ChromaMemoryStore, clock: ManualClock
) -> None:
    """``touch`` re-keys the records it changed in ``RecordCache`` (no parse next turn);
    each carried record must equal what parsing the stored row gives."""
    records = [
        store.put_memory(memory(f"User likes tea number {i}", clock, importance=0.6))
        for i in range(4)
    ]
    got = store.recall_memories(USER, "tea", limit=4, profile_limit=4)
    assert {m.record.id for m in got.found} == {r.id for r in records}
    for _ in range(2):  # the second touch carries the first one's carried records
        clock.advance(timedelta(minutes=5))
        store.touch(USER, [r.id for r in records[:3]])
        rows = store.catalog.items(
            f"SELECT {store.catalog.sql.ITEM_COLUMNS} FROM lt_items WHERE partition = ?", [USER]
        )
        cached = {k: v for k, v in store.record_cache._entries.items()}
        for row in rows:
            fresh = MemoryRecord.from_dict(row.value_dict())
            if fresh.id in {r.id for r in records[:3]}:
                assert cached[(row.partition, row.value)] == fresh  # carried, not re-parsed
                assert fresh.last_accessed_at == clock()
    assert store.get_memory(USER, records[0].id).access_count == 2  # type: ignore[union-attr]
    again = store.recall_memories(USER, "tea", limit=4, profile_limit=4)
    assert [m.record for m in again.found] == [
        MemoryRecord.from_dict(r.to_dict()) for r in (m.record for m in again.found)
    ]
    assert {m.record.id: m.record.access_count for m in again.found} == {
        records[0].id: 2,
        records[1].id: 2,
        records[2].id: 2,
        records[3].id: 0,
    }


class _GatedTouches:
    """The real store, with ``touch`` held until the test opens the gate: the touch
    worker runs late, as it may under load."""

    def __init__(self, store: ChromaMemoryStore) -> None:
        self._store = store
        self.gate = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def touch(self, user_id: str, memory_ids: Any, **kwargs: Any) -> None:
        assert self.gate.wait(10), "the test never opened the gate"
        self._store.touch(user_id, memory_ids, **kwargs)


def test_a_late_touch_is_stamped_with_the_recall_time(
    store: ChromaMemoryStore, clock: ManualClock
) -> None:
    """Recency must not depend on how long the touch worker took: the exam replays
    history on a clock that jumps, and a touch stamped at the next turn's time
    reorders that turn's recall (the exam's run-to-run drift, 2026-12-03)."""
    tea = store.put_memory(memory("User likes green tea", clock, importance=0.6))
    gated = _GatedTouches(store)
    recall = create_recall_node(store=gated, clock=clock, profile=None, recent_fill=False)
    recalled_at = clock()
    block, _ = ask(recall, "which tea do I like?")
    assert "green tea" in block
    clock.advance(timedelta(hours=3))  # the next turn, before the worker ran
    gated.gate.set()
    flush_access_stats()
    touched = store.get_memory(USER, tea.id)
    assert touched is not None and touched.access_count == 1
    assert touched.last_accessed_at == recalled_at


def test_touch_refuses_a_naive_time(store: ChromaMemoryStore, clock: ManualClock) -> None:
    tea = store.put_memory(memory("User likes green tea", clock))
    with pytest.raises(InvalidMemoryError, match=r"at=datetime\.datetime\(2026, 9, 1, 9, 0\)"):
        store.touch(USER, [tea.id], at=datetime(2026, 9, 1, 9, 0))
