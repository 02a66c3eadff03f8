"""The writer's scheduled sweep (expiry and decay) under a ManualClock, real Chroma store."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from langgraph_memory.clock import ManualClock
from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.nodes.queue import SqliteMemoryQueue
from langgraph_memory.nodes.rules import RuleBasedExtractor, is_evidence_key
from langgraph_memory.nodes.writer import MemorySweepPolicy, MemoryWriter
from langgraph_memory.types import MemoryStatus

U = "dora"
MONDAY = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(MONDAY)


@pytest.fixture
def store(tmp_path: Path, clock: ManualClock) -> Iterator[ChromaMemoryStore]:
    s = ChromaMemoryStore.embedded(tmp_path / "lt", embeddings=HashingEmbeddings(), clock=clock)
    yield s
    s.close()


def statuses(store: ChromaMemoryStore) -> dict[str, MemoryStatus]:
    return {r.text: r.status for r in store.list_memories(U, include_history=True)}


def test_maybe_sweep_runs_once_per_interval_of_memory_time(
    store: ChromaMemoryStore, clock: ManualClock
) -> None:
    writer = MemoryWriter(
        store, extractor=RuleBasedExtractor(clock=clock), mode="sync", clock=clock
    )
    writer.submit(U, "t", [HumanMessage("I'm in Tokyo this week", id="h1")])
    first = writer.maybe_sweep()
    assert first is not None and first.at == MONDAY  # the first call sweeps at once
    clock.advance(timedelta(minutes=30))
    writer.submit(U, "t", [HumanMessage("I'm allergic to soy", id="h2")])
    assert writer.maybe_sweep() is None and writer.last_sweep is first  # within the interval

    clock.set(datetime(2026, 12, 8, 9, 0, tzinfo=UTC))  # the week is over
    writer.submit(U, "t", [HumanMessage("I like jazz", id="h3")])
    report = writer.maybe_sweep()
    assert report is not None and report.expired == 1
    (tokyo,) = [t for t in statuses(store) if "Tokyo" in t]
    assert statuses(store)[tokyo] is MemoryStatus.EXPIRED
    assert statuses(store)["User is allergic to soy"] is MemoryStatus.ACTIVE


def test_decay_archives_idle_evidence_but_keeps_safety_facts(
    store: ChromaMemoryStore, clock: ManualClock
) -> None:
    writer = MemoryWriter(
        store, extractor=RuleBasedExtractor(clock=clock), mode="sync", clock=clock
    )
    writer.submit(
        U, "t", [HumanMessage("I'm allergic to soy. I'm a keen birdwatcher on weekends", id="h1")]
    )
    assert any(is_evidence_key(r.key) for r in store.list_memories(U))
    clock.advance(timedelta(days=500))  # 0.3 * 0.5 ** (500 / 180) = 0.044 < 0.05
    report = writer.sweep()
    assert report.archived == 1 and report.at == clock()
    left = store.list_memories(U)
    assert [r.key for r in left] == ["allergy.soy"]  # 0.95 * 0.5 ** (500 / 180) = 0.14


def test_background_worker_sweeps_on_its_own(
    tmp_path: Path, store: ChromaMemoryStore, clock: ManualClock
) -> None:
    queue = SqliteMemoryQueue(tmp_path / "q.db", debounce_seconds=0)
    writer = MemoryWriter(
        store,
        extractor=RuleBasedExtractor(clock=clock),
        queue=queue,
        clock=clock,
        poll_interval=0.05,
        sweep=MemorySweepPolicy(interval=timedelta(hours=1), archive=False),
    )
    with writer:
        writer.submit(U, "t", [HumanMessage("这周我在出差", id="h1")])
        assert writer.drain(timeout=20)
        clock.set(datetime(2026, 12, 7, 12, 0, tzinfo=UTC))  # past the week and the interval
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            report = writer.last_sweep
            if report is not None and report.at == clock():
                break
            time.sleep(0.05)
    assert writer.last_sweep is not None and writer.last_sweep.expired == 1
    assert set(statuses(store).values()) == {MemoryStatus.EXPIRED}
    queue.close()


def test_sweep_off_and_bad_policies(store: ChromaMemoryStore, clock: ManualClock) -> None:
    writer = MemoryWriter(
        store, extractor=RuleBasedExtractor(clock=clock), mode="sync", clock=clock, sweep=False
    )
    writer.submit(U, "t", [HumanMessage("I'm in Tokyo this week", id="h1")])
    clock.advance(timedelta(days=30))
    assert writer.maybe_sweep() is None and writer.last_sweep is None
    assert writer.sweep().expired == 1  # a cron-style job can still sweep
    with pytest.raises(ConfigurationError, match="positive timedelta"):
        MemorySweepPolicy(interval=timedelta(0))
    with pytest.raises(ConfigurationError, match="between 0 and 1"):
        MemorySweepPolicy(archive_threshold=2.0)
    with pytest.raises(ConfigurationError, match="MemorySweepPolicy"):
        MemoryWriter(store, extractor=RuleBasedExtractor(), mode="sync", sweep=3600)  # type: ignore[arg-type]
