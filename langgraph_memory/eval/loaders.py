"""Public long-memory benchmarks on our store: LoCoMo and LongMemEval files you supply.

Nothing is downloaded: pass the path of a ``locomo10.json``-shaped file (a list
of samples with ``conversation`` sessions of ``{speaker, dia_id, text}`` turns
and ``qa`` items with ``evidence`` dialogue ids and a ``category``) or of a
LongMemEval file (a list of questions with ``haystack_sessions``,
``haystack_session_ids``, ``haystack_dates``, ``answer_session_ids`` and
turns flagged ``has_answer``).

``evaluate_retrieval`` writes every turn of a conversation verbatim as one
memory of one user (``"<speaker>: <text>"``, at its session's time; no
extraction, so this measures retrieval alone) into a fresh embedded
``ChromaMemoryStore``, then searches it with each question at the question's
time and reports, per question category:

* **turn recall@k**: evidence turns among the top k / evidence turns (questions
  with turn evidence only); **turn hit@k**: at least one evidence turn in the top k;
* **session recall@k / hit@k**: the same over the sessions of the top k turns
  against the evidence sessions;
* **answer accuracy** (only with an answer model): the model answers from the
  top-k lines and the judge (``prompts/eval.py``) compares with the reference.

Example:
    >>> import json, pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "locomo.json"
    >>> _ = path.write_text(json.dumps([{"sample_id": "c1", "conversation": {
    ...     "speaker_a": "Ann", "speaker_b": "Bo", "session_1_date_time": "1:56 pm on 8 May, 2023",
    ...     "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat named Miso."}]},
    ...     "qa": [{"question": "What is Ann's cat called?", "answer": "Miso",
    ...             "evidence": ["D1:1"], "category": 1}]}]))
    >>> [(q.id, q.evidence_turns) for q in load_locomo(path)[0].questions]
    [('c1:q0', ('D1:1',))]
"""

from __future__ import annotations

import json
import re
import statistics
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from langgraph_memory.errors import ExamDataError, ModelOutputError

__all__ = [
    "BenchmarkResult",
    "CategoryScore",
    "Conversation",
    "DialogueTurn",
    "Question",
    "evaluate_retrieval",
    "load_locomo",
    "load_longmemeval",
    "render_benchmark_markdown",
]

# Used when a file's dates cannot be read: any fixed time keeps runs reproducible.
_FALLBACK_TIME = datetime(2023, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class DialogueTurn:
    id: str
    session_id: str
    speaker: str
    text: str
    at: datetime


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    text: str
    category: str
    answer: str
    evidence_turns: tuple[str, ...]
    evidence_sessions: tuple[str, ...]
    at: datetime


@dataclass(frozen=True, slots=True)
class Conversation:
    """One user's history (all turns) and the questions asked about it."""

    id: str
    turns: tuple[DialogueTurn, ...]
    questions: tuple[Question, ...]


def _read_list(path: str | Path, shape: str) -> list[Any]:
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ExamDataError(
            f"{file}: cannot be read ({exc}); pass the {shape} file's path"
        ) from exc
    except json.JSONDecodeError as exc:
        raise ExamDataError(
            f"{file}: not JSON (line {exc.lineno}: {exc.msg}); pass a {shape} file"
        ) from exc
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise ExamDataError(f"{file}: top level is {type(data).__name__}; a {shape} file is a list")
    return data


def _locomo_time(raw: Any) -> datetime | None:
    # "1:56 pm on 8 May, 2023"
    if not isinstance(raw, str):
        return None
    for pattern in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y"):
        try:
            return datetime.strptime(raw.strip(), pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def load_locomo(path: str | Path) -> list[Conversation]:
    """Read a ``locomo10.json``-shaped file.

    Category 5 (adversarial) questions carry ``adversarial_answer``; their answer
    is that text. Questions without evidence still count for answer accuracy.

    Raises:
        ExamDataError: The file is not in that shape (names the sample and field).
    """
    conversations = []
    for index, sample in enumerate(_read_list(path, "LoCoMo")):
        where = f"{path}: sample {index}"
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise ExamDataError(f"{where}: no 'conversation' object; is this a locomo10.json file?")
        conv = sample["conversation"]
        sample_id = str(sample.get("sample_id", f"sample-{index}"))
        sessions = sorted(
            (int(m.group(1)), key)
            for key in conv
            if (m := re.fullmatch(r"session_(\d+)", key)) and isinstance(conv[key], list)
        )
        turns: list[DialogueTurn] = []
        last = _FALLBACK_TIME
        for number, key in sessions:
            at = _locomo_time(conv.get(f"{key}_date_time")) or last
            last = at
            for offset, turn in enumerate(conv[key]):
                if not isinstance(turn, dict) or "dia_id" not in turn or "text" not in turn:
                    raise ExamDataError(f"{where}: {key}[{offset}] lacks 'dia_id' or 'text'")
                text = str(turn["text"])
                if turn.get("blip_caption"):
                    text += f" [shares an image: {turn['blip_caption']}]"
                turns.append(
                    DialogueTurn(
                        str(turn["dia_id"]),
                        str(number),
                        str(turn.get("speaker", "")),
                        text,
                        at + timedelta(minutes=offset),
                    )
                )
        session_of = {t.id: t.session_id for t in turns}
        after = last + timedelta(days=1)
        questions = []
        for q_index, qa in enumerate(sample.get("qa") or []):
            if not isinstance(qa, dict) or "question" not in qa:
                raise ExamDataError(f"{where}: qa[{q_index}] lacks 'question'")
            evidence = tuple(str(e) for e in qa.get("evidence") or [] if str(e) in session_of)
            answer = qa.get("answer", qa.get("adversarial_answer", ""))
            questions.append(
                Question(
                    id=f"{sample_id}:q{q_index}",
                    text=str(qa["question"]),
                    category=str(qa.get("category", "?")),
                    answer=str(answer),
                    evidence_turns=evidence,
                    evidence_sessions=tuple(dict.fromkeys(session_of[e] for e in evidence)),
                    at=after,
                )
            )
        conversations.append(Conversation(sample_id, tuple(turns), tuple(questions)))
    return conversations


def _longmemeval_time(raw: Any) -> datetime | None:
    # "2023/05/30 (Tue) 23:40"
    if not isinstance(raw, str):
        return None
    cleaned = re.sub(r"\s*\([^)]*\)\s*", " ", raw).strip()
    for pattern in ("%Y/%m/%d %H:%M", "%Y-%m-%d %H:%M", "%Y/%m/%d"):
        try:
            return datetime.strptime(cleaned, pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def load_longmemeval(path: str | Path) -> list[Conversation]:
    """Read a LongMemEval file (``longmemeval_s.json`` / ``_m`` / ``_oracle`` shape).

    Each question has its own haystack, so each becomes one conversation. Turn
    evidence is the turns flagged ``has_answer``; session evidence is
    ``answer_session_ids``. Abstention questions (``_abs`` ids) are their own
    category, ``<question_type>_abs``.

    Raises:
        ExamDataError: The file is not in that shape.
    """
    conversations = []
    for index, item in enumerate(_read_list(path, "LongMemEval")):
        where = f"{path}: item {index}"
        if not isinstance(item, dict) or not isinstance(item.get("haystack_sessions"), list):
            raise ExamDataError(
                f"{where}: no 'haystack_sessions' list; is this a LongMemEval file?"
            )
        qid = str(item.get("question_id", f"q{index}"))
        sessions = item["haystack_sessions"]
        ids = [str(s) for s in item.get("haystack_session_ids") or range(len(sessions))]
        dates = list(item.get("haystack_dates") or [])
        turns: list[DialogueTurn] = []
        evidence: list[str] = []
        last = _FALLBACK_TIME
        for s_index, session in enumerate(sessions):
            if not isinstance(session, list):
                raise ExamDataError(f"{where}: haystack_sessions[{s_index}] is not a list of turns")
            session_id = ids[s_index] if s_index < len(ids) else str(s_index)
            at = _longmemeval_time(dates[s_index] if s_index < len(dates) else None) or last
            last = at
            for t_index, turn in enumerate(session):
                if not isinstance(turn, dict) or "content" not in turn:
                    raise ExamDataError(
                        f"{where}: haystack_sessions[{s_index}][{t_index}] lacks 'content'"
                    )
                turn_id = f"{session_id}#{t_index}"
                turns.append(
                    DialogueTurn(
                        turn_id,
                        session_id,
                        str(turn.get("role", "")),
                        str(turn["content"]),
                        at + timedelta(minutes=t_index),
                    )
                )
                if turn.get("has_answer"):
                    evidence.append(turn_id)
        category = str(item.get("question_type", "?")) + ("_abs" if qid.endswith("_abs") else "")
        question = Question(
            id=qid,
            text=str(item.get("question", "")),
            category=category,
            answer=str(item.get("answer", "")),
            evidence_turns=tuple(evidence),
            evidence_sessions=tuple(str(s) for s in item.get("answer_session_ids") or []),
            at=_longmemeval_time(item.get("question_date")) or last + timedelta(days=1),
        )
        conversations.append(Conversation(qid, tuple(turns), (question,)))
    return conversations


@dataclass(frozen=True, slots=True)
class CategoryScore:
    """Averages over one category's questions (``None``: no question had that evidence)."""

    category: str
    questions: int
    turn_recall: Mapping[int, float | None]
    turn_hit: Mapping[int, float | None]
    session_recall: Mapping[int, float | None]
    session_hit: Mapping[int, float | None]
    answer_accuracy: float | None = None


@dataclass(frozen=True, slots=True)
class BenchmarkResult:
    name: str
    ks: tuple[int, ...]
    categories: tuple[CategoryScore, ...]
    overall: CategoryScore


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _memory_id(conversation: str, turn: str) -> str:
    return uuid.uuid5(uuid.NAMESPACE_URL, f"{conversation}\x1f{turn}").hex


def _user_id(index: int) -> str:
    return f"bench-{index:05d}"


@dataclass
class _Scores:
    turn_recall: dict[int, list[float]]
    turn_hit: dict[int, list[float]]
    session_recall: dict[int, list[float]]
    session_hit: dict[int, list[float]]
    answers: list[float]
    questions: int = 0


def _new_scores(ks: Sequence[int]) -> _Scores:
    return _Scores(
        {k: [] for k in ks}, {k: [] for k in ks}, {k: [] for k in ks}, {k: [] for k in ks}, []
    )


def _add(
    scores: _Scores,
    ks: Sequence[int],
    question: Question,
    ranked: Sequence[str],
    sessions: Sequence[str],
) -> None:
    scores.questions += 1
    for k in ks:
        top = set(ranked[:k])
        if question.evidence_turns:
            found = sum(1 for e in question.evidence_turns if e in top)
            scores.turn_recall[k].append(found / len(question.evidence_turns))
            scores.turn_hit[k].append(float(found > 0))
        if question.evidence_sessions:
            top_sessions = set(sessions[:k])
            found = sum(1 for e in question.evidence_sessions if e in top_sessions)
            scores.session_recall[k].append(found / len(question.evidence_sessions))
            scores.session_hit[k].append(float(found > 0))


def _finish(category: str, scores: _Scores, ks: Sequence[int]) -> CategoryScore:
    return CategoryScore(
        category=category,
        questions=scores.questions,
        turn_recall={k: _mean(scores.turn_recall[k]) for k in ks},
        turn_hit={k: _mean(scores.turn_hit[k]) for k in ks},
        session_recall={k: _mean(scores.session_recall[k]) for k in ks},
        session_hit={k: _mean(scores.session_hit[k]) for k in ks},
        answer_accuracy=_mean(scores.answers),
    )


def _answer(
    model: BaseChatModel, judge: BaseChatModel, question: Question, lines: Sequence[str]
) -> float | None:
    from langchain_core.messages import HumanMessage

    from langgraph_memory.eval.grading import JudgeRequest, judge_probe

    context = "\n".join(f"- {line}" for line in lines) or "(nothing found)"
    reply = model.invoke(
        [HumanMessage(f"Memories:\n{context}\n\nAnswer briefly: {question.text}")]
    ).text
    try:
        request = JudgeRequest(question.text, lines, answer=reply, reference_answer=question.answer)
        verdict = judge_probe(judge, request)
    except ModelOutputError:
        return None
    return float(bool(verdict.answer_correct))


def evaluate_retrieval(
    conversations: Sequence[Conversation],
    root: str | Path,
    *,
    name: str = "benchmark",
    ks: Sequence[int] = (1, 5, 10),
    embeddings: Embeddings | None = None,
    answer_model: BaseChatModel | None = None,
    judge: BaseChatModel | None = None,
    answer_k: int = 5,
    progress: Callable[[int], None] | None = None,
) -> BenchmarkResult:
    """Store each conversation's turns (one user each) and score retrieval per category.

    Args:
        conversations: From ``load_locomo`` / ``load_longmemeval``.
        root: An empty directory for the store.
        name: Shown in the report.
        ks: Cut-offs for recall@k / hit@k.
        embeddings: The store's embeddings (default ``HashingEmbeddings``).
        answer_model: Answers each question from its top-k lines (answer accuracy).
        judge: Grades those answers (default: ``answer_model``).
        answer_k: How many top lines the answer model sees.
        progress: Called with 1 per question.
    """
    from langgraph_memory.clock import ManualClock
    from langgraph_memory.embeddings import HashingEmbeddings
    from langgraph_memory.longterm import ChromaMemoryStore
    from langgraph_memory.types import MemoryRecord, MemoryType

    ks = tuple(sorted(set(ks)))
    clock = ManualClock(_FALLBACK_TIME)
    per_category: dict[str, _Scores] = {}
    overall = _new_scores(ks)
    with ChromaMemoryStore.embedded(
        Path(root), embeddings=embeddings or HashingEmbeddings(), clock=clock
    ) as store:
        for index, conversation in enumerate(conversations):
            user = _user_id(index)
            back: dict[str, DialogueTurn] = {}
            for turn in conversation.turns:
                memory_id = _memory_id(conversation.id, turn.id)
                back[memory_id] = turn
                clock.set(turn.at)
                text = f"{turn.speaker}: {turn.text}" if turn.speaker else turn.text
                store.put_memory(
                    MemoryRecord(
                        text=text,
                        type=MemoryType.EPISODIC,
                        id=memory_id,
                        user_id=user,
                        created_at=turn.at,
                        updated_at=turn.at,
                        valid_from=turn.at,
                    )
                )
            for question in conversation.questions:
                clock.set(question.at)
                found = store.search_memories(user, question.text, limit=max(*ks, answer_k))
                ranked = [back[s.record.id].id for s in found if s.record.id in back]
                sessions = [back[s.record.id].session_id for s in found if s.record.id in back]
                scores = per_category.setdefault(question.category, _new_scores(ks))
                for target in (scores, overall):
                    _add(target, ks, question, ranked, sessions)
                if answer_model is not None:
                    lines = [s.record.text for s in found[:answer_k]]
                    correct = _answer(answer_model, judge or answer_model, question, lines)
                    if correct is not None:
                        scores.answers.append(correct)
                        overall.answers.append(correct)
                if progress:
                    progress(1)
    categories = tuple(_finish(c, per_category[c], ks) for c in sorted(per_category))
    return BenchmarkResult(name, ks, categories, _finish("all", overall, ks))


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def render_benchmark_markdown(result: BenchmarkResult) -> str:
    """One table per level (turn, session): recall@k and hit@k per category."""
    out = [f"## {result.name}", ""]
    heads = " | ".join(f"recall@{k} | hit@{k}" for k in result.ks)
    for level, recall, hit in (
        ("turn", "turn_recall", "turn_hit"),
        ("session", "session_recall", "session_hit"),
    ):
        out += [
            f"### {level}-level evidence",
            "",
            f"| category | questions | {heads} | answer accuracy |",
            "|---|---|" + "---|---|" * len(result.ks) + "---|",
        ]
        for score in (*result.categories, result.overall):
            cells = " | ".join(
                f"{_pct(getattr(score, recall)[k])} | {_pct(getattr(score, hit)[k])}"
                for k in result.ks
            )
            out.append(
                f"| {score.category} | {score.questions} | {cells} | {_pct(score.answer_accuracy)} |"
            )
        out.append("")
    return "\n".join(out)
