"""LoCoMo- and LongMemEval-shaped files (written here) load and score per category."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from langgraph_memory.errors import ExamDataError
from langgraph_memory.eval.loaders import (
    evaluate_retrieval,
    load_locomo,
    load_longmemeval,
    render_benchmark_markdown,
)

LOCOMO: list[dict[str, Any]] = [
    {
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a kitten named Miso yesterday."},
                {"speaker": "Bo", "dia_id": "D1:2", "text": "Lovely! I started learning the cello."},
            ],
            "session_2_date_time": "10:00 am on 2 June, 2023",
            "session_2": [
                {"speaker": "Ann", "dia_id": "D2:1", "text": "Miso knocked over my orchid pot.",
                 "blip_caption": "a cat beside a broken pot"},
                {"speaker": "Bo", "dia_id": "D2:2", "text": "My cello teacher moved to Lisbon."},
            ],
        },
        "qa": [
            {"question": "What is the name of the kitten Ann adopted?", "answer": "Miso",
             "evidence": ["D1:1"], "category": 1},
            {"question": "Where did Bo's cello teacher move?", "answer": "Lisbon",
             "evidence": ["D2:2"], "category": 2},
            {"question": "What did Ann's dog eat?", "adversarial_answer": "not mentioned",
             "evidence": [], "category": 5},
        ],
    }
]  # fmt: skip

LONGMEMEVAL: list[dict[str, Any]] = [
    {
        "question_id": "q1",
        "question_type": "single-session-user",
        "question": "Which gym did I join?",
        "answer": "Iron Temple",
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": ["sess-a", "sess-b"],
        "haystack_dates": ["2023/05/01 (Mon) 10:00", "2023/05/20 (Sat) 09:00"],
        "haystack_sessions": [
            [{"role": "user", "content": "I joined the Iron Temple gym downtown.", "has_answer": True},
             {"role": "assistant", "content": "Great choice."}],
            [{"role": "user", "content": "Recommend a pasta recipe."},
             {"role": "assistant", "content": "Try carbonara."}],
        ],
        "answer_session_ids": ["sess-a"],
    },
    {
        "question_id": "q2_abs",
        "question_type": "single-session-user",
        "question": "Which violin brand do I own?",
        "answer": "You did not mention a violin.",
        "question_date": "2023/06/01 (Thu) 08:00",
        "haystack_session_ids": ["sess-c"],
        "haystack_dates": ["2023/05/05 (Fri) 12:00"],
        "haystack_sessions": [[{"role": "user", "content": "My cat likes tuna."}]],
        "answer_session_ids": [],
    },
]  # fmt: skip


def _write(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_locomo_shape_loads_turns_sessions_and_evidence(tmp_path: Path) -> None:
    (conv,) = load_locomo(_write(tmp_path, "locomo10.json", LOCOMO))
    assert [t.id for t in conv.turns] == ["D1:1", "D1:2", "D2:1", "D2:2"]
    assert conv.turns[0].at.isoformat() == "2023-05-08T13:56:00+00:00"
    assert "a cat beside a broken pot" in conv.turns[2].text
    q1, q2, q5 = conv.questions
    assert (q1.category, q1.evidence_turns, q1.evidence_sessions) == ("1", ("D1:1",), ("1",))
    assert q2.evidence_sessions == ("2",)
    assert q5.answer == "not mentioned" and q5.evidence_turns == ()


def test_locomo_retrieval_scores_per_category_with_answer_accuracy(tmp_path: Path) -> None:
    conversations = load_locomo(_write(tmp_path, "locomo10.json", LOCOMO))
    answerer = FakeListChatModel(responses=["Miso", "Porto", "no idea"])
    verdicts = [
        json.dumps({"needs_present": {}, "forbidden_present": {}, "answer_correct": v})
        for v in (True, False, True)
    ]
    result = evaluate_retrieval(
        conversations, tmp_path / "store", name="LoCoMo", ks=(1, 5), answer_model=answerer,
        judge=FakeListChatModel(responses=verdicts),
    )  # fmt: skip
    by = {c.category: c for c in result.categories}
    assert set(by) == {"1", "2", "5"}
    assert by["1"].turn_hit[1] == 1.0 and by["1"].turn_recall[5] == 1.0
    assert by["2"].turn_hit[5] == 1.0 and by["2"].session_hit[5] == 1.0
    assert by["5"].turn_recall[5] is None  # no evidence: not a retrieval question
    assert by["1"].answer_accuracy == 1.0 and by["2"].answer_accuracy == 0.0
    assert result.overall.questions == 3 and result.overall.answer_accuracy == pytest.approx(2 / 3)
    text = render_benchmark_markdown(result)
    assert "| 1 | 1 | 100.0% | 100.0% |" in text and "recall@5 | hit@5" in text


def test_longmemeval_shape_scores_turn_and_session_evidence(tmp_path: Path) -> None:
    conversations = load_longmemeval(_write(tmp_path, "longmemeval_s.json", LONGMEMEVAL))
    assert [c.id for c in conversations] == ["q1", "q2_abs"]
    q1 = conversations[0].questions[0]
    assert q1.evidence_turns == ("sess-a#0",) and q1.evidence_sessions == ("sess-a",)
    assert q1.at.isoformat() == "2023-05-30T23:40:00+00:00"
    result = evaluate_retrieval(conversations, tmp_path / "store", ks=(1, 3))
    by = {c.category: c for c in result.categories}
    assert by["single-session-user"].turn_hit[1] == 1.0
    assert by["single-session-user"].session_recall[1] == 1.0
    assert by["single-session-user_abs"].questions == 1
    assert by["single-session-user_abs"].session_hit[3] is None


def test_files_of_the_wrong_shape_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ExamDataError, match="no 'conversation' object"):
        load_locomo(_write(tmp_path, "a.json", [{"qa": []}]))
    with pytest.raises(ExamDataError, match="no 'haystack_sessions' list"):
        load_longmemeval(_write(tmp_path, "b.json", LOCOMO))
    with pytest.raises(ExamDataError, match="not JSON"):
        (tmp_path / "c.json").write_text("[", encoding="utf-8")
        load_locomo(tmp_path / "c.json")
