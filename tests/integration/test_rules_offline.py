"""Offline mode end to end: the rule-based extractor, reconcile and the real Chroma store.

Checks what the keys and times the rules choose do once stored: a correction
supersedes the slot it corrects, a temporary state lives beside the permanent
fact and expires, a rescheduled event replaces the old date.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.nodes.rules import RuleBasedExtractor
from langgraph_memory.pipeline.writer import MemoryWriter
from langgraph_memory.types import MemoryRecord, MemoryStatus, MemoryType

U = "alice"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ChromaMemoryStore]:
    s = ChromaMemoryStore.embedded(tmp_path / "longterm", embeddings=HashingEmbeddings())
    yield s
    s.close()


@pytest.fixture
def writer(store: ChromaMemoryStore) -> MemoryWriter:
    # The wall clock (captured once): the store filters expiry against real time.
    now = datetime.now(UTC)
    return MemoryWriter(store, extractor=RuleBasedExtractor(clock=lambda: now), mode="sync")


def active(store: ChromaMemoryStore) -> dict[str | None, list[MemoryRecord]]:
    out: dict[str | None, list[MemoryRecord]] = {}
    for record in store.list_memories(U):
        out.setdefault(record.key, []).append(record)
    return out


def test_correction_supersedes_and_temporary_state_expires(
    store: ChromaMemoryStore, writer: MemoryWriter
) -> None:
    writer.submit(U, "t", [HumanMessage("I live in Berlin. My budget is 3000.", id="h1")])
    writer.submit(U, "t", [HumanMessage("I'm in Tokyo this week", id="h2")])
    receipt = writer.submit(U, "t", [HumanMessage("我的预算不是3000，是5000", id="h3")])
    assert [op.action for op in receipt.ops] == ["supersede"]

    mem = active(store)
    assert [r.text for r in mem["budget"]] == ["用户的预算是5000"]
    assert [r.text for r in mem["address.city"]] == ["User lives in Berlin"]
    (tokyo,) = mem["status.location"]
    assert tokyo.expires_at is not None and tokyo.expires_at > datetime.now(UTC)
    history = store.list_memories(U, include_history=True)
    (old_budget,) = [r for r in history if r.status is MemoryStatus.SUPERSEDED]
    assert old_budget.text == "User's budget is 3000" and old_budget.valid_to is not None

    # Once the week is over the temporary state is gone; the home city stays.
    assert store.expire_due(U, now=tokyo.expires_at + timedelta(seconds=1)) == 1
    mem = active(store)
    assert "status.location" not in mem
    assert [r.text for r in mem["address.city"]] == ["User lives in Berlin"]


def test_rescheduled_event_replaces_the_old_date(
    store: ChromaMemoryStore, writer: MemoryWriter
) -> None:
    writer.submit(U, "t", [HumanMessage("my flight is on 12 Dec", id="h1")])
    writer.submit(U, "t", [HumanMessage("actually my flight is on 14 Dec", id="h2")])
    (flight,) = active(store)["event.flight"]
    assert flight.type is MemoryType.EPISODIC
    assert flight.event_time is not None and (flight.event_time.month, flight.event_time.day) == (
        12,
        14,
    )
    assert len(store.list_memories(U, include_history=True)) == 2
