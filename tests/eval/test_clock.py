"""The exam's replay honours one clock: validity times, expiry and recency follow the
replayed history, and the wall clock (frozen at an unrelated date) leaks into no stored time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from langgraph_memory.clock import ManualClock
from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.eval.metrics import grade_run
from langgraph_memory.eval.runner import MemorySystem, run_system
from langgraph_memory.eval.schema import Exam, parse_user
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.types import MemoryRecord, MemoryStatus

TZ = timezone(timedelta(hours=-5))
S1 = datetime(2026, 3, 2, 9, 0, tzinfo=TZ)  # a Monday
S2 = datetime(2026, 4, 15, 14, 0, tzinfo=TZ)
S3 = datetime(2026, 5, 27, 10, 0, tzinfo=TZ)  # a Wednesday
PROBE = datetime(2026, 6, 1, 12, 0, tzinfo=TZ)


def _user() -> dict[str, Any]:
    def session(sid: str, at: datetime, *texts: str) -> dict[str, Any]:
        turns = []
        for text in texts:
            turns += [{"role": "user", "text": text}, {"role": "assistant", "text": "Noted."}]
        return {"id": sid, "at": at.isoformat(), "turns": turns}

    return {
        "user_id": "en-clock-dana",
        "lang": "en",
        "domain": "assistant",
        "timezone": "-05:00",
        "identifiers": [],
        "sessions": [
            session("s1", S1, "My budget is 2000 dollars.", "I live in Boston."),
            session("s2", S2, "Actually my budget is 2500 dollars."),
            session("s3", S3, "I'm in Paris this week."),
        ],
        "facts": [
            {"id": "b1", "text": "User's budget is 2000 dollars", "type": "semantic", "key": "budget",
             "said_in": "s1", "valid_to": S2.isoformat(), "ended_by": "superseded", "superseded_by": "b2",
             "gist": [["budget", "2000"]]},
            {"id": "b2", "text": "User's budget is 2500 dollars", "type": "semantic", "key": "budget",
             "said_in": "s2", "gist": [["budget", "2500"]]},
            {"id": "city", "text": "User lives in Boston", "type": "semantic", "said_in": "s1",
             "gist": [["boston"]]},
            {"id": "paris", "text": "User is in Paris this week", "type": "semantic", "said_in": "s3",
             "expires_at": datetime(2026, 6, 1, tzinfo=TZ).isoformat(), "ended_by": "expired",
             "gist": [["paris"]]},
        ],
        "probes": [
            {"id": "p1", "kind": "temporal", "at": PROBE.isoformat(), "question": "What is my budget?",
             "needs": ["b2"], "forbid": ["b1"]},
            {"id": "p2", "kind": "expired", "at": (PROBE + timedelta(minutes=5)).isoformat(),
             "question": "Am I in Paris?", "forbid": ["paris"]},
        ],
    }  # fmt: skip


@pytest.fixture
def exam() -> Exam:
    return Exam((parse_user(_user(), "clock-user"),))


def _history(root: Path, clock: ManualClock) -> list[MemoryRecord]:
    with ChromaMemoryStore.embedded(
        root / "ltm", embeddings=HashingEmbeddings(), clock=clock
    ) as store:
        return store.list_memories("en-clock-dana", include_history=True)


def test_three_months_replayed_on_the_manual_clock(exam: Exam, tmp_path: Path) -> None:
    metrics = grade_run(exam, run_system(exam, MemorySystem("offline"), tmp_path))
    assert metrics.overall.hit_rate == 1.0
    assert metrics.overall.stale_probes == 0  # the old budget and the lapsed trip stay out

    later = ManualClock(PROBE + timedelta(days=10))
    records = {r.text: r for r in _history(tmp_path, later)}
    old = records["User's budget is 2000 dollars"]
    new = records["User's budget is 2500 dollars"]
    # Turn times: session at + one minute per turn; the budget is the first user turn, and
    # the writer drains (writes) at the session's last turn, 3 minutes in.
    assert old.valid_from == S1 and old.created_at == S1 + timedelta(minutes=3)
    assert old.status == MemoryStatus.SUPERSEDED
    assert old.valid_to == S2 and new.valid_from == S2
    assert new.status == MemoryStatus.ACTIVE
    trip = next(r for t, r in records.items() if "Paris" in t)
    assert trip.valid_from == S3
    # "this week" said on Wednesday 27 May ends with Sunday 31 May, in the user's zone.
    assert trip.expires_at == datetime(2026, 6, 1, tzinfo=TZ)

    # Recency is measured from the replayed times: the probes touched the new budget,
    # so ten days later its recency is 0.5 ** (age / half-life) on the replay clock.
    with ChromaMemoryStore.embedded(
        tmp_path / "ltm", embeddings=HashingEmbeddings(), clock=later
    ) as store:
        found = store.search_memories("en-clock-dana", "budget", explain=True)
        top = next(s for s in found if s.record.id == new.id)
        # The core profile shows the budget on every probe, so the last probe touched it.
        touched = top.record.last_accessed_at
        assert touched in (PROBE, PROBE + timedelta(minutes=5))
        age_days = (later() - touched).total_seconds() / 86_400
        expected = 0.5 ** (age_days / store.weights.half_life_days)
        assert top.breakdown is not None
        assert top.breakdown.recency == pytest.approx(expected, rel=1e-6)
        assert all(
            "Paris" not in s.record.text for s in store.search_memories("en-clock-dana", "Paris")
        )


def test_no_stored_time_comes_from_a_frozen_wall_clock(exam: Exam, tmp_path: Path) -> None:
    time_machine = pytest.importorskip("time_machine")
    frozen = datetime(1999, 12, 31, 23, 0, tzinfo=UTC)
    with time_machine.travel(frozen, tick=True):
        assert datetime.now(UTC).year == 1999
        metrics = grade_run(exam, run_system(exam, MemorySystem("offline"), tmp_path))
        records = _history(tmp_path, ManualClock(PROBE))
    assert metrics.overall.hit_rate == 1.0
    assert len(records) >= 4
    history_start, history_end = S1, PROBE + timedelta(hours=1)
    for record in records:
        for name in (
            "created_at",
            "updated_at",
            "valid_from",
            "valid_to",
            "expires_at",
            "last_accessed_at",
            "event_time",
        ):
            value = getattr(record, name)
            if value is not None:
                assert value.year != 1999, (record.text, name, value)
                if name != "expires_at":
                    assert history_start <= value <= history_end, (record.text, name, value)
