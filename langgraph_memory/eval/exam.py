"""Run the whole exam: several configurations side by side, graded, optionally judged.

Example:
    >>> import tempfile
    >>> from langgraph_memory.eval.schema import load_exam
    >>> from langgraph_memory.eval.systems import standard_systems
    >>> exam = load_exam("tests/eval/data")  # doctest: +SKIP
    >>> results = run_exam(exam, standard_systems(["seeded"]), tempfile.mkdtemp())  # doctest: +SKIP
    >>> results.metrics[0].overall.hit_rate  # doctest: +SKIP
    1.0
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path

from langchain_core.language_models import BaseChatModel

from langgraph_memory.errors import ModelOutputError
from langgraph_memory.eval.grading import JudgeRequest, judge_probe
from langgraph_memory.eval.metrics import RunMetrics, forbidden_facts, grade_run
from langgraph_memory.eval.report import ExamResults, JudgeSummary
from langgraph_memory.eval.runner import MemorySystem, run_system
from langgraph_memory.eval.schema import Exam

__all__ = ["judge_run", "run_exam", "select_users"]


def select_users(exam: Exam, count: int | None, seed: int = 0) -> Exam:
    """``count`` users drawn with ``seed`` (all when ``None``), plus every user their
    ``forbid_other_users`` names, so isolation probes keep their look-alike in the store."""
    if count is None or count >= len(exam.users):
        return exam
    chosen = {u.user_id for u in random.Random(seed).sample(list(exam.users), max(count, 0))}
    grew = True
    while grew:
        needed = {
            o
            for u in exam.users
            if u.user_id in chosen
            for p in u.probes
            for o, _ in p.forbid_other_users
        }
        grew = not needed <= chosen
        chosen |= needed
    return Exam(tuple(u for u in exam.users if u.user_id in chosen), exam.warnings)


def judge_run(
    exam: Exam, result: RunMetrics, judge: BaseChatModel, name: str = "judge"
) -> JudgeSummary:
    """Grade every probe of ``result`` with the LLM judge (``prompts/eval.py``)."""
    from langgraph_memory.prompts.eval import JUDGE_PROMPT_VERSION

    graded = hits = false_recalls = answers = correct = failures = agree = comparable = 0
    for outcome in result.outcomes:
        obs = outcome.observation
        user = exam.user(obs.user_id)
        probe = next(p for p in user.probes if p.id == obs.probe_id)
        own, others = forbidden_facts(exam, user, probe)
        try:
            request = JudgeRequest(
                question=probe.question,
                lines=obs.lines,
                needs={f: user.fact(f).text for f in probe.needs},
                forbidden={ref: fact.text for ref, fact in {**own, **others}.items()},
                answer=obs.answer,
                reference_answer=probe.answer,
            )
            verdict = judge_probe(judge, request)
        except ModelOutputError:
            failures += 1
            continue
        graded += 1
        hits += verdict.hit is True
        false_recalls += verdict.false_recall
        if verdict.answer_correct is not None:
            answers += 1
            correct += verdict.answer_correct
        if verdict.hit is not None and outcome.grade.hit is not None:
            comparable += 1
            agree += verdict.hit == outcome.grade.hit
    return JudgeSummary(
        model=name,
        prompt_version=JUDGE_PROMPT_VERSION,
        graded=graded,
        hits=hits,
        false_recalls=false_recalls,
        answers_graded=answers,
        answers_correct=correct,
        failures=failures,
        matcher_agreement=agree / comparable if comparable else None,
    )


def run_exam(
    exam: Exam,
    systems: Sequence[MemorySystem],
    work_dir: str | Path,
    *,
    seed: int = 0,
    judge: BaseChatModel | None = None,
    judge_name: str = "judge",
    progress: Callable[[int], None] | None = None,
) -> ExamResults:
    """Run each available configuration in its own fresh directory under ``work_dir``."""
    root = Path(work_dir)
    metrics: list[RunMetrics] = []
    skipped: dict[str, str] = {}
    judges: dict[str, JudgeSummary] = {}
    for system in systems:
        if system.unavailable:
            skipped[system.name] = system.unavailable
            continue
        run = run_system(exam, system, root / system.name, seed=seed, progress=progress)
        graded = grade_run(exam, run)
        metrics.append(graded)
        if judge is not None:
            judges[system.name] = judge_run(exam, graded, judge, judge_name)
    return ExamResults(metrics=metrics, skipped=skipped, seed=seed, judges=judges)
