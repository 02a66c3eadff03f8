"""LLM extraction: ``event_time`` / ``expires_at`` resolved against each message's own time.

Scripted chat models drive the real parsing, validation and retry paths,
including malformed times.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

import pytest
from langchain_core.messages import BaseMessage, HumanMessage

from langgraph_memory.errors import ModelOutputError
from langgraph_memory.nodes.extract import LLMMemoryExtractor, parse_extraction
from langgraph_memory.types import MemoryType
from tests.unit.test_extract_fakes import ScriptedChatModel, memories_json

SHANGHAI = timezone(timedelta(hours=8))
SAID = datetime(2026, 12, 1, 10, 0, tzinfo=SHANGHAI)  # a Tuesday in Shanghai
CLOCK_NOW = datetime(2027, 3, 1, 9, 0, tzinfo=SHANGHAI)  # the worker runs months later


def turn(text: str = "我明天的航班改到周五了") -> list[BaseMessage]:
    return [HumanMessage(text, id="h1", additional_kwargs={"created_at": SAID.isoformat()})]


def event(**overrides: object) -> dict[str, object]:
    base: dict[str, object] = {
        "text": "用户的航班在2026-12-04",
        "type": "episodic",
        "key": "event.flight",
        "category": "event",
        "importance": 0.8,
        "message_ids": ["m1"],
        "event_time": "2026-12-04",
        "expires_at": "2026-12-05",
    }
    base.update(overrides)
    return base


def extractor(model: ScriptedChatModel) -> LLMMemoryExtractor:
    return LLMMemoryExtractor(model, clock=lambda: CLOCK_NOW)


def test_dates_become_aware_times_in_the_users_zone() -> None:
    model = ScriptedChatModel(replies=[memories_json(event())])
    (c,) = extractor(model).extract(turn())
    assert c.type is MemoryType.EPISODIC and c.key == "event.flight"
    assert c.event_time == datetime(2026, 12, 4, tzinfo=SHANGHAI)
    assert c.expires_at == datetime(2026, 12, 5, tzinfo=SHANGHAI)
    assert c.observed_at == SAID
    # The model was shown when the message was said, not when the worker ran.
    assert "(2026-12-01T10:00+08:00 Tue)" in model.calls[0][1].text
    assert "event_time" in model.calls[0][0].text and "expires_at" in model.calls[0][0].text


def test_offsets_are_kept_and_nulls_mean_no_time() -> None:
    reply = memories_json(
        event(event_time="2026-12-04T09:30:00+09:00", expires_at=None),
        event(text="User is vegan", key="diet", type="semantic", event_time=None, expires_at=""),
    )
    flight, diet = extractor(ScriptedChatModel(replies=[reply])).extract(turn())
    assert flight.event_time == datetime(2026, 12, 4, 9, 30, tzinfo=timezone(timedelta(hours=9)))
    assert flight.expires_at is None
    assert (diet.event_time, diet.expires_at) == (None, None)


def test_the_model_resolves_relative_dates_from_the_transcript_time() -> None:
    """A scripted 'model' that does what the prompt asks: read the line's time, add a day."""

    def resolve(messages: list[BaseMessage]) -> str:
        said = re.search(r"\[m1\] user \((\S+) \w+\)", messages[1].text)
        assert said is not None
        tomorrow = datetime.fromisoformat(said.group(1)).date() + timedelta(days=1)
        return memories_json(
            event(event_time=tomorrow.isoformat(), expires_at=None, text="Interview tomorrow")
        )

    (c,) = extractor(ScriptedChatModel(replies=[resolve])).extract(
        turn("I have an interview tomorrow")
    )
    assert c.event_time == datetime(2026, 12, 2, tzinfo=SHANGHAI)  # SAID + 1 day, not CLOCK_NOW + 1


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"event_time": "next Friday"}, "not an ISO 8601"),
        ({"expires_at": "2026-13-45"}, "not an ISO 8601"),
        ({"event_time": 20261204}, "not an ISO 8601"),
        ({"event_time": "2026-12-04", "expires_at": "2026-12-01"}, "before event_time"),
    ],
)
def test_malformed_times_are_validation_errors_with_one_retry(
    bad: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        parse_extraction(memories_json(event(**bad)))
    model = ScriptedChatModel(replies=[memories_json(event(**bad)), memories_json(event())])
    (c,) = extractor(model).extract(turn())
    assert c.event_time == datetime(2026, 12, 4, tzinfo=SHANGHAI)
    assert len(model.calls) == 2
    assert message in model.calls[1][-1].text  # the error was fed back


def test_malformed_twice_is_a_model_output_error() -> None:
    bad = memories_json(event(expires_at="when the trip ends"))
    model = ScriptedChatModel(replies=[bad, bad])
    with pytest.raises(ModelOutputError, match="ISO 8601"):
        extractor(model).extract(turn())
    assert len(model.calls) == 2


async def test_async_path_keeps_the_times() -> None:
    model = ScriptedChatModel(replies=[memories_json(event())])
    (c,) = await extractor(model).aextract(turn())
    assert c.expires_at == datetime(2026, 12, 5, tzinfo=SHANGHAI)


def test_naive_times_use_the_clock_zone_default_utc() -> None:
    model = ScriptedChatModel(replies=[memories_json(event(event_time="2026-12-04T08:00"))])
    (c,) = LLMMemoryExtractor(model, clock=lambda: datetime(2026, 12, 1, tzinfo=UTC)).extract(
        turn()
    )
    assert c.event_time == datetime(2026, 12, 4, 8, 0, tzinfo=UTC)
