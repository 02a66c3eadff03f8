"""The exam catches broken memory systems, and the normal system scores better on the same data."""

from __future__ import annotations

from pathlib import Path

import pytest

from langgraph_memory.eval.metrics import RunMetrics, grade_run
from langgraph_memory.eval.runner import MemorySystem, run_system
from langgraph_memory.eval.schema import Exam, load_exam
from tests.eval.broken import BROKEN

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def exam() -> Exam:
    return load_exam(DATA)


@pytest.fixture(scope="module")
def normal(exam: Exam, tmp_path_factory: pytest.TempPathFactory) -> RunMetrics:
    root = tmp_path_factory.mktemp("normal")
    return grade_run(exam, run_system(exam, MemorySystem("offline"), root, seed=3))


def _run(exam: Exam, name: str, tmp_path: Path) -> RunMetrics:
    return grade_run(exam, run_system(exam, BROKEN[name], tmp_path, seed=3))


def test_the_normal_system_is_clean_on_the_fixture(normal: RunMetrics) -> None:
    s = normal.overall
    assert s.hit_rate == 1.0
    assert s.false_recalls == 0 and s.stale_probes == 0
    assert s.isolation_leaks == 0 and s.foreign_records == 0
    assert normal.privacy_leaks_outside_checkpoints == {}
    assert not normal.users_without_memories


def test_never_superseding_shows_stale_recall(
    exam: Exam, normal: RunMetrics, tmp_path: Path
) -> None:
    broken = _run(exam, "never_supersedes", tmp_path)
    assert broken.overall.stale.get("superseded", 0) >= 2
    stale = {(o.observation.user_id, ref) for o in broken.outcomes for ref in o.stale}
    assert ("en-cs-samlee", "budget-2000") in stale
    assert ("zh-pa-wangfang", "budget-3000") in stale
    assert normal.overall.stale.get("superseded", 0) == 0
    assert (broken.overall.stale_rate or 0) > (normal.overall.stale_rate or 0)


def test_ignoring_the_user_id_shows_isolation_leaks(
    exam: Exam, normal: RunMetrics, tmp_path: Path
) -> None:
    broken = _run(exam, "ignores_user_id", tmp_path)
    assert broken.overall.isolation_leaks >= 1 and broken.overall.foreign_records >= 1
    leaking = {o.observation.user_id for o in broken.outcomes if o.isolation_leak}
    assert "zh-cs-liming" in leaking  # 我对什么过敏？ brings back 王芳's seafood allergy
    assert normal.overall.isolation_leaks == 0


def test_storing_assistant_claims_shows_false_recall(
    exam: Exam, normal: RunMetrics, tmp_path: Path
) -> None:
    broken = _run(exam, "stores_assistant_claims", tmp_path)
    bait = {ref for o in broken.outcomes for ref in o.grade.forbidden_hits}
    assert "shellfish" in bait  # the assistant's "You're allergic to shellfish"
    assert (broken.overall.false_recall_rate or 0) > (normal.overall.false_recall_rate or 0)


def test_never_expiring_shows_expired_recall(
    exam: Exam, normal: RunMetrics, tmp_path: Path
) -> None:
    broken = _run(exam, "never_expires", tmp_path)
    expired = {ref for o in broken.outcomes for ref, why in o.stale.items() if why == "expired"}
    assert expired >= {"paris", "tokyo-trip"}
    assert broken.overall.stale.get("expired", 0) >= 2
    assert normal.overall.stale.get("expired", 0) == 0


class _FailingExtractor:
    """Fails every batch: the exam must finish and say the writer's jobs did not."""

    def extract(self, messages: object) -> list[object]:
        raise RuntimeError("extractor down")

    async def aextract(self, messages: object) -> list[object]:
        raise RuntimeError("extractor down")


def test_a_failing_writer_is_reported_not_hidden(exam: Exam, tmp_path: Path) -> None:
    from langgraph_memory.eval.exam import select_users

    small = select_users(exam, 1, 2)
    system = MemorySystem("failing", extractor=lambda ctx: _FailingExtractor())
    run = run_system(small, system, tmp_path / "failing")
    assert run.writer_jobs_unfinished + run.writer_jobs_failed >= 1
    assert all(n == 0 for n in run.memories_per_user.values())
    seeded = run_system(small, MemorySystem("seeded", plant="seed"), tmp_path / "seeded")
    assert (seeded.writer_jobs_unfinished, seeded.writer_jobs_failed) == (0, 0)
