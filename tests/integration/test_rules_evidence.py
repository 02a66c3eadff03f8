"""Evidence end to end (rules -> reconcile -> real Chroma store), under a ManualClock.

Evidence keeps what no rule understood; it must never serve a superseded value
as current, must go when the user asks to forget its topic, and must expire
when it was time-bound.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from langgraph_memory.clock import ManualClock
from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.nodes.rules import RuleBasedExtractor, is_evidence_key
from langgraph_memory.nodes.writer import MemoryWriter

U = "carol"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2026, 11, 30, 9, 0, tzinfo=UTC))


@pytest.fixture
def store(tmp_path: Path, clock: ManualClock) -> Iterator[ChromaMemoryStore]:
    s = ChromaMemoryStore.embedded(tmp_path / "lt", embeddings=HashingEmbeddings(), clock=clock)
    yield s
    s.close()


@pytest.fixture
def writer(store: ChromaMemoryStore, clock: ManualClock) -> MemoryWriter:
    return MemoryWriter(store, extractor=RuleBasedExtractor(clock=clock), mode="sync", clock=clock)


def say(writer: MemoryWriter, clock: ManualClock, text: str, mid: str) -> None:
    writer.submit(U, "t", [HumanMessage(text, id=mid)])
    clock.advance(timedelta(days=1))


def recalled(store: ChromaMemoryStore, query: str) -> list[str]:
    return [s.record.text for s in store.search_memories(U, query, limit=10)]


@pytest.mark.parametrize(
    ("first", "move", "old", "new"),
    [
        (
            "I live in Beijing and I volunteer at a children's hospital",
            "I moved to Shanghai last month, the commute is fine",
            "Beijing",
            "Shanghai",
        ),
        ("我住在北京，在一家儿童医院当护士", "我搬到上海了，通勤还行", "北京", "上海"),
    ],
)
def test_a_move_never_leaves_the_old_city_current(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    first: str,
    move: str,
    old: str,
    new: str,
) -> None:
    say(writer, clock, first, "h1")
    active = store.list_memories(U)
    assert any(
        is_evidence_key(r.key) and ("hospital" in r.text or "医院" in r.text) for r in active
    )
    say(writer, clock, move, "h2")
    # Neither the old fact nor any evidence holds the old city as current.
    assert not any(old in r.text for r in store.list_memories(U))
    texts = recalled(store, f"where do I live {old} {new}")
    assert any(new in t for t in texts), texts
    assert not any(old in t for t in texts), texts
    (city,) = [r for r in store.list_memories(U) if r.key == "address.city"]
    assert new in city.text
    history = store.list_memories(U, include_history=True)
    assert any(old in r.text and r.valid_to is not None for r in history)


def test_forget_deletes_the_evidence_on_that_topic(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "The parcel should go to my office address near the central station", "h1")
    say(writer, clock, "I'm a keen birdwatcher on weekends", "h2")
    assert len([r for r in store.list_memories(U) if is_evidence_key(r.key)]) == 2
    say(writer, clock, "btw, could you forget my address", "h3")
    left = [r.text for r in store.list_memories(U)]
    assert not any("address" in t for t in left), left
    assert any("birdwatcher" in t for t in left), left


def test_time_bound_evidence_expires_with_the_sweep(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "I'm doing night shifts this week so mornings are hard", "h1")
    (evidence,) = [r for r in store.list_memories(U) if is_evidence_key(r.key)]
    assert evidence.expires_at == datetime(2026, 12, 7, tzinfo=UTC)
    clock.set(datetime(2026, 12, 7, 0, 1, tzinfo=UTC))
    assert recalled(store, "night shifts mornings") == []
    assert store.expire_due(U) == 1


@pytest.mark.parametrize(
    ("first", "update", "old", "new"),
    [
        ("I'm on the 50GB mobile data package", "I switched to the unlimited data package",
         "50GB", "unlimited"),
        ("周末我一般去游泳馆游泳", "现在周末改成去健身房了，不去游泳馆", "游泳馆游泳", "健身房"),
    ],
)  # fmt: skip
def test_an_update_supersedes_the_raw_turn_it_updates(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    first: str,
    update: str,
    old: str,
    new: str,
) -> None:
    say(writer, clock, first, "h1")
    say(writer, clock, update, "h2")
    active = [r.text for r in store.list_memories(U)]
    assert any(new in t for t in active), active
    assert not any(old in t and new not in t for t in active), active
    history = store.list_memories(U, include_history=True)
    assert any(old in r.text and r.superseded_by for r in history)


def test_forget_deletes_evidence_sharing_a_term_with_the_request(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "I keep my bicycle in the basement storage room", "h1")
    say(writer, clock, "please forget what I said about my bicycle", "h2")
    assert not any(
        "bicycle" in r.text for r in store.list_memories(U) if not r.key or "forget" not in r.text
    )


def test_evidence_never_keeps_a_number_the_redactor_missed(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "the code on my locker tag reads 12345 678901 A", "h1")
    texts = [r.text for r in store.list_memories(U, include_history=True)]
    assert texts and not any("678901" in t for t in texts), texts
