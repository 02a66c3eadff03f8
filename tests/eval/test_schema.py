"""Exam files are validated with errors that name the file, the field and the fix."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from langgraph_memory.errors import ExamDataError
from langgraph_memory.eval.schema import PROBE_KINDS, load_exam, load_user, parse_user

DATA = Path(__file__).parent / "data"


def _base() -> dict[str, Any]:
    return json.loads((DATA / "zh-cs-liming.json").read_text(encoding="utf-8"))


def test_the_fixture_users_cover_every_probe_kind_and_both_languages() -> None:
    exam = load_exam(DATA)
    assert {p.kind for u in exam.users for p in u.probes} == set(PROBE_KINDS)
    assert {u.lang for u in exam.users} == {"zh", "en", "mixed"}
    assert any(t.error for u in exam.users for s in u.sessions for t in s.turns)
    assert exam.warnings == ()


def test_times_keep_their_offset_and_turns_are_a_minute_apart() -> None:
    user = load_user(DATA / "zh-cs-liming.json")
    session = user.sessions[0]
    assert session.at.utcoffset() is not None and session.at.utcoffset().total_seconds() == 8 * 3600  # type: ignore[union-attr]
    assert (session.turn_time(2) - session.at).total_seconds() == 120
    assert user.fact("city-beijing").end_reason(user.probes[0].at) == "superseded"
    assert user.fact("city-hangzhou").is_current(user.probes[0].at)


@pytest.mark.parametrize(
    ("edit", "field", "fix"),
    [
        (lambda d: d.update(user_id="Bad Id"), "user_id", "^[a-z0-9]"),
        (lambda d: d.update(lang="fr"), "lang", "one of"),
        (lambda d: d.update(timezone="CST"), "timezone", "+08:00"),
        (lambda d: d["sessions"][0].update(at="2026-07-01T15:00:00"), "sessions[0].at", "offset"),
        (lambda d: d["sessions"][0]["turns"].reverse(), "sessions[0].turns[0].role", "user first"),
        (lambda d: d["sessions"][0]["turns"][0].update(error=True), "turns[0].error", "assistant"),
        (lambda d: d["facts"][0].update(said_in="s9"), "facts[0].said_in", "one of"),
        (lambda d: d["facts"][0].update(gist=[]), "facts[0].gist", "alternatives"),
        (lambda d: d["facts"][0].update(gist=[["芒果", 3]]), "facts[0].gist[0]", "alternatives"),
        (lambda d: d["facts"][0].update(importance=2), "facts[0].importance", "between 0 and 1"),
        (
            lambda d: d["facts"][1].update(superseded_by=None),
            "facts[1].superseded_by",
            "newer fact",
        ),
        (lambda d: d["facts"][1].update(ended_by="gone"), "facts[1].ended_by", "one of"),
        (lambda d: d["facts"].append(copy.deepcopy(d["facts"][0])), "facts", "used twice"),
        (lambda d: d["probes"][0].update(kind="trivia"), "probes[0].kind", "one of"),
        (lambda d: d["probes"][0].update(needs=["nope"]), "probes[0].needs", "one of"),
        (
            lambda d: d["probes"][0].update(at="2026-07-01T15:01:00+08:00"),
            "probes[0].at",
            "after the last",
        ),
        (lambda d: d["probes"][0].update(kind="abstain"), "probes[0].needs", "forbid"),
        (
            lambda d: d["probes"][0].update(forbid_other_users=["x"]),
            "forbid_other_users[0]",
            "<user_id>:<fact_id>",
        ),
    ],
)
def test_bad_fields_are_named_with_the_fix(edit: Any, field: str, fix: str) -> None:
    data = _base()
    edit(data)
    with pytest.raises(ExamDataError) as caught:
        parse_user(data, "liming.json")
    message = str(caught.value)
    assert message.startswith("liming.json: ")
    assert field in message and fix in message


def test_cross_file_problems(tmp_path: Path) -> None:
    data = _base()
    (tmp_path / "a.json").write_text(json.dumps(data), encoding="utf-8")
    (tmp_path / "b.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ExamDataError, match="also used by"):
        load_exam(tmp_path)
    (tmp_path / "b.json").unlink()
    with pytest.raises(ExamDataError, match="zh-pa-wangfang:allergy names no loaded user"):
        load_exam(tmp_path)
    (tmp_path / "a.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ExamDataError, match=r"a\.json: line 1: invalid JSON"):
        load_exam(tmp_path)
    with pytest.raises(ExamDataError, match="not a directory"):
        load_exam(tmp_path / "missing")


def test_gists_that_cannot_work_become_warnings(tmp_path: Path) -> None:
    data = _base()
    data["facts"][0]["gist"] = [["banana"]]  # needed by two probes, matches its own text nowhere
    data["facts"][1]["gist"] = [["住在"]]  # the old city's gist also matches the new one
    data["probes"][0]["forbid_other_users"] = []
    (tmp_path / "u.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    warnings = load_exam(tmp_path).warnings
    assert any("zh-cs-liming:mango" in w and "does not match its gist" in w for w in warnings)
    assert any(
        "zh-cs-liming:city-beijing" in w and "also matches the newer value" in w for w in warnings
    )
