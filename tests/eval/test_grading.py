"""The gist matcher's rules (including what it marks unsure), the privacy byte scan, and the
LLM judge's parse / retry / malformed paths driven by scripted chat models."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from langgraph_memory.errors import ModelOutputError
from langgraph_memory.eval.grading import (
    JudgeRequest,
    gist_matches,
    grade_lines,
    judge_probe,
    match_fact,
    normalize,
)
from langgraph_memory.eval.metrics import percentile
from langgraph_memory.eval.privacy_scan import leaks_outside_checkpoints, scan_identifiers
from langgraph_memory.eval.runner import parse_recall_lines
from langgraph_memory.prompts.eval import JUDGE_SYSTEM

ALLERGY = (("海鲜", "过敏"), ("seafood", "allerg"))


def test_normalisation_is_nfkc_casefold_and_no_whitespace() -> None:
    assert normalize("Ｓｅａｆｏｏｄ  ALLERGY\n") == "seafoodallergy"
    assert gist_matches(ALLERGY, "用户 对 海 鲜 过敏")
    assert gist_matches(ALLERGY, "User is allergic to SEA FOOD")
    assert not gist_matches(ALLERGY, "User likes seafood")


def test_all_terms_of_one_alternative_must_be_in_one_line() -> None:
    assert match_fact(ALLERGY, ["User likes seafood", "User is allergic to cats"]) == (
        "partial",
        (0, 1),
    )
    assert match_fact(ALLERGY, ["User lives in Boston"]) == ("missing", ())
    assert match_fact(ALLERGY, ["x", "用户对海鲜过敏"]) == ("matched", (1,))


def test_hit_miss_and_unsure_needs() -> None:
    needs = {"allergy": ALLERGY, "city": (("boston",),)}
    hit = grade_lines(
        ["User is allergic to seafood", "User lives in Boston"],
        needs=needs,
        forbidden={},
        current={},
    )
    assert hit.hit is True
    miss = grade_lines(["User is allergic to seafood"], needs=needs, forbidden={}, current={})
    assert miss.hit is False
    partial = grade_lines(
        ["User likes seafood", "User lives in Boston"], needs=needs, forbidden={}, current={}
    )
    assert partial.hit is None and partial.hit_unsure


def test_a_forbidden_match_beside_a_current_fact_is_unsure() -> None:
    old = {"budget-3000": (("预算", "3000"),)}
    current = {"budget-5000": (("预算", "5000"),)}
    counted = grade_lines(["用户的预算是3000元"], needs={}, forbidden=old, current=current)
    assert counted.false_recall and counted.forbidden_hits == ("budget-3000",)
    unsure = grade_lines(
        ["用户的预算从3000元改成了5000元"], needs={}, forbidden=old, current=current
    )
    assert not unsure.false_recall and unsure.false_unsure


def test_recall_block_lines_lose_their_provenance() -> None:
    block = "<long_term_memory>\nheader\n## Profile and facts\n- User is vegan [user_stated, 2026-01-01]\n- a [b] c\n</long_term_memory>"
    assert parse_recall_lines(block) == ("User is vegan", "a [b] c")


def test_percentile_is_nearest_rank() -> None:
    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 0.5) == 3.0
    assert percentile([float(i) for i in range(1, 101)], 0.95) == 95.0
    assert percentile([], 0.95) == 0.0


def test_privacy_scan_reads_bytes_in_utf8_and_utf16_and_names_sqlite_tables(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE lgm_checkpoints (v BLOB)")
        conn.execute("CREATE TABLE lgm_memory_jobs (v TEXT)")
        conn.execute("INSERT INTO lgm_checkpoints VALUES (?)", (b"call 13812345678",))
        conn.execute("INSERT INTO lgm_memory_jobs VALUES ('mail sam@example.com')")
    (tmp_path / "ltm").mkdir()
    (tmp_path / "ltm" / "seg.bin").write_bytes("x13812345678y".encode("utf-16-be"))
    found = scan_identifiers(tmp_path, ["13812345678", "sam@example.com", "never@said.org"])
    assert found == {
        "13812345678": ("ltm/seg.bin", "state.db:lgm_checkpoints"),
        "sam@example.com": ("state.db:lgm_memory_jobs",),
    }
    assert leaks_outside_checkpoints(found) == {
        "13812345678": ("ltm/seg.bin",),
        "sam@example.com": ("state.db:lgm_memory_jobs",),
    }


GOOD = '{"needs_present": {"allergy": true}, "forbidden_present": {"tiger": false}, "answer_correct": null, "reason": "ok"}'


def _judge(responses: list[str], **kwargs: object) -> Any:
    model = FakeListChatModel(responses=responses)
    request = JudgeRequest(
        "今晚吃什么？",
        ["用户对海鲜过敏"],
        needs={"allergy": "用户对海鲜过敏"},
        forbidden={"tiger": "用户养了一只老虎"},
        **kwargs,  # type: ignore[arg-type]
    )
    return judge_probe(model, request)


def test_the_judge_parses_a_good_answer_first_time() -> None:
    verdict = _judge([f"Here you go: {GOOD}"])
    assert verdict.hit is True and verdict.false_recall is False
    assert verdict.answer_correct is None and verdict.attempts == 1


def test_the_judge_is_asked_once_more_when_malformed() -> None:
    retry = '{"needs_present": {"allergy": false}, "forbidden_present": {"tiger": true}, "answer_correct": true}'
    verdict = _judge(
        ['{"needs_present": {"allergy": "yes"}}', retry],
        answer="别吃海鲜",
        reference_answer="不要海鲜",
    )
    assert verdict.attempts == 2
    assert verdict.hit is False and verdict.false_recall is True and verdict.answer_correct is True


def test_the_judge_gives_up_after_two_malformed_answers() -> None:
    with pytest.raises(ModelOutputError, match="malformed JSON twice"):
        _judge(["no json here", '{"needs_present": {}, "forbidden_present": {"tiger": false}}'])


def test_the_judge_prompt_is_pinned_and_asks_for_every_id() -> None:
    model = FakeListChatModel(responses=[GOOD])
    judge_probe(model, JudgeRequest("q", [], needs={"allergy": "x"}, forbidden={"tiger": "y"}))
    assert "needs_present" in JUDGE_SYSTEM and "forbidden_present" in JUDGE_SYSTEM


def test_isolation_counts_foreign_records_by_id_or_by_text() -> None:
    from langgraph_memory.eval.metrics import grade_observation
    from langgraph_memory.eval.runner import ProbeObservation, SystemRun
    from langgraph_memory.eval.schema import load_exam

    exam = load_exam(Path(__file__).parent / "data")

    def run(observation: ProbeObservation) -> SystemRun:
        return SystemRun(
            system="t",
            root=Path("."),
            observations=(observation,),
            owners={"m-own": "zh-cs-liming", "m-other": "zh-pa-wangfang"},
            texts={
                "用户对芒果过敏": frozenset({"zh-cs-liming"}),
                "用户对海鲜过敏": frozenset({"zh-pa-wangfang"}),
            },
            memories_per_user={},
            privacy={},
            turns=1,
            llm_calls=0,
            seconds=0.0,
        )

    lines = ("用户对芒果过敏", "用户对海鲜过敏")
    by_id = ProbeObservation(
        "zh-cs-liming", "p-isolation", "isolation", lines, ("m-own", "m-other"), 10, 1.0
    )
    by_text = ProbeObservation("zh-cs-liming", "p-isolation", "isolation", lines, None, 10, 1.0)
    for observation in (by_id, by_text):
        outcome = grade_observation(exam, run(observation), observation)
        assert outcome.foreign_records == 1
        assert outcome.other_user_hits == ("zh-pa-wangfang:allergy",)
        assert outcome.isolation_leak and outcome.grade.hit is True
    clean = ProbeObservation(
        "zh-cs-liming", "p-isolation", "isolation", lines[:1], ("m-own",), 10, 1.0
    )
    assert not grade_observation(exam, run(clean), clean).isolation_leak


def test_the_report_names_leak_locations_but_never_the_identifier() -> None:
    from langgraph_memory.eval.metrics import grade_run
    from langgraph_memory.eval.report import ExamResults, render_markdown
    from langgraph_memory.eval.runner import ProbeObservation, SystemRun
    from langgraph_memory.eval.schema import load_exam

    exam = load_exam(Path(__file__).parent / "data")
    observation = ProbeObservation(
        "zh-cs-liming", "p-direct", "direct", ("用户对芒果过敏",), None, 9, 1.0
    )
    run = SystemRun(
        system="offline",
        root=Path("."),
        observations=(observation,),
        owners={},
        texts={},
        memories_per_user={"zh-cs-liming": 1, "zh-pa-wangfang": 0},
        privacy={
            "zh-pa-wangfang": {
                "13812345678": ("state.db:lgm_checkpoints", "ltm/chroma/x/data_level0.bin")
            }
        },
        turns=4,
        llm_calls=0,
        seconds=1.0,
    )
    metrics = grade_run(exam, run)
    assert metrics.privacy_users == 1 and list(metrics.privacy_leaks_outside_checkpoints) == [
        "zh-pa-wangfang"
    ]
    assert metrics.users_without_memories == ("zh-pa-wangfang",)
    text = render_markdown(exam, ExamResults([metrics]))
    assert "`ltm/chroma/x/data_level0.bin`" in text and "13812345678" not in text
    assert "| hit rate | 100.0% (1/1) |" in text
