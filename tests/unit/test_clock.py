"""The one injectable clock: message times, manual time, and what reconcile stamps with it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_memory.clock import ManualClock, message_time, now, parse_time
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.nodes.reconcile import candidate_from_dict, candidate_to_dict, record_for
from langgraph_memory.types import CandidateMemory, MemoryOp

SHANGHAI = timezone(timedelta(hours=8))
START = datetime(2026, 3, 1, 9, 0, tzinfo=SHANGHAI)


def test_manual_clock_moves_only_when_told() -> None:
    clock = ManualClock(START)
    assert now(clock) == START
    clock.advance(timedelta(days=40))
    assert now(clock) == START + timedelta(days=40)
    clock.set(START)
    assert clock() == START


def test_naive_times_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="aware"):
        ManualClock(datetime(2026, 1, 1))
    with pytest.raises(ConfigurationError, match="naive datetime"):
        now(lambda: datetime(2026, 1, 1))


@pytest.mark.parametrize(
    "message",
    [
        HumanMessage("hi", additional_kwargs={"created_at": "2026-01-05T10:00:00+00:00"}),
        HumanMessage("hi", additional_kwargs={"created_at": 1767607200}),
        AIMessage("hi", response_metadata={"created_at": "2026-01-05T10:00:00Z"}),
    ],
)
def test_a_message_carries_its_own_time(message: HumanMessage) -> None:
    said = message_time(message, ManualClock(START))
    assert said == datetime(2026, 1, 5, 10, tzinfo=UTC)
    assert said.utcoffset() == timedelta(hours=8)  # in the clock's zone: "明天" is the user's


def test_unreadable_or_missing_stamps_fall_back_to_the_clock() -> None:
    clock = ManualClock(START)
    assert message_time(HumanMessage("hi"), clock) == START
    assert (
        message_time(HumanMessage("hi", additional_kwargs={"created_at": "soon"}), clock) == START
    )
    assert parse_time("not a date") is None


def test_reconcile_stamps_with_the_clock_and_keeps_when_it_was_said() -> None:
    said = START - timedelta(days=3)
    candidate = CandidateMemory("User is vegan", key="diet", observed_at=said)
    assert candidate_from_dict(candidate_to_dict(candidate)) == candidate
    op = MemoryOp("add", candidate, result_id="m1")
    record = record_for(op, "u1", "t1", START)
    assert (record.created_at, record.updated_at, record.valid_from) == (START, START, said)
    # A stamp from the future never makes a memory valid before it exists.
    future = record_for(
        MemoryOp("add", CandidateMemory("x", observed_at=START + timedelta(1)), result_id="m2"),
        "u1",
        None,
        START,
    )
    assert future.valid_from == START
