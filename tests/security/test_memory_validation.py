"""MemoryRecord refuses wrong types and out-of-range values with InvalidMemoryError
(or InputTooLargeError above the documented text limit), naming the field."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_memory.errors import InputTooLargeError, InvalidMemoryError, LangGraphMemoryError
from langgraph_memory.limits import MAX_MEMORY_TEXT_CHARS
from langgraph_memory.types import MemoryRecord, MemorySource, MemoryStatus, MemoryType


@pytest.mark.parametrize(
    ("changes", "error", "named"),
    [
        ({"importance": "high"}, InvalidMemoryError, "importance='high'"),
        ({"importance": 1.5}, InvalidMemoryError, "importance=1.5"),
        ({"importance": True}, InvalidMemoryError, "importance=True"),
        ({"confidence": -0.1}, InvalidMemoryError, "confidence=-0.1"),
        ({"text": ""}, InvalidMemoryError, "text=''"),
        ({"text": " \n\t"}, InvalidMemoryError, "empty"),
        ({"text": 42}, InvalidMemoryError, "text=42"),
        ({"text": "x" * 5_000_000}, InputTooLargeError, f"{MAX_MEMORY_TEXT_CHARS} characters"),
        ({"text": "bad \ud800 text"}, InvalidMemoryError, "surrogate"),
        ({"type": "opinion"}, InvalidMemoryError, "'semantic'"),
        ({"source": "gossip"}, InvalidMemoryError, "'user_stated'"),
        ({"status": 3}, InvalidMemoryError, "status=3"),
        ({"id": ""}, InvalidMemoryError, "id=''"),
        ({"access_count": -1}, InvalidMemoryError, "access_count=-1"),
        ({"created_at": "2026-01-01"}, InvalidMemoryError, "created_at='2026-01-01'"),
        ({"valid_to": 5}, InvalidMemoryError, "valid_to=5"),
        ({"supersedes": "abc"}, InvalidMemoryError, "supersedes='abc'"),
        ({"supersedes": [1, 2]}, InvalidMemoryError, "supersedes=[1, 2]"),
        ({"key": ["diet"]}, InvalidMemoryError, "key=['diet']"),
    ],
)
def test_bad_fields_are_refused_by_name(changes: dict[str, Any], error: type, named: str) -> None:
    kwargs: dict[str, Any] = {"text": "User is vegetarian", **changes}
    with pytest.raises(error) as info:
        MemoryRecord(**kwargs)
    assert named in str(info.value)
    assert isinstance(info.value, (LangGraphMemoryError, ValueError))


def test_string_enums_and_lists_are_normalised_and_round_trip() -> None:
    record = MemoryRecord(
        "User flew to Oslo",
        type="episodic",  # type: ignore[arg-type]
        source="agent_inferred",  # type: ignore[arg-type]
        status="active",  # type: ignore[arg-type]
        supersedes=["a1"],  # type: ignore[arg-type]
        event_time=datetime(2026, 1, 2, tzinfo=UTC),
    )
    assert record.type is MemoryType.EPISODIC
    assert record.source is MemorySource.AGENT_INFERRED
    assert record.status is MemoryStatus.ACTIVE
    assert record.supersedes == ("a1",)
    assert MemoryRecord.from_dict(record.to_dict()) == record
    with pytest.raises(InvalidMemoryError):
        record.evolve(importance=7)


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(st.text(max_size=20), st.integers(), st.none(), st.floats(), st.lists(st.integers())),
    st.one_of(st.floats(), st.integers(), st.text(max_size=4), st.none(), st.booleans()),
)
def test_any_bad_record_raises_a_typed_error(text: Any, importance: Any) -> None:
    try:
        record = MemoryRecord(text, importance=importance)
    except LangGraphMemoryError:
        return
    assert isinstance(record.text, str) and record.text.strip()
    assert 0 <= record.importance <= 1
