"""A small exam in CI: a few users of the shipped data when present (else the test fixtures),
run through ``python -m langgraph_memory.eval``'s entry point, report and plots written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langgraph_memory.eval.__main__ import main
from langgraph_memory.eval.exam import run_exam, select_users
from langgraph_memory.eval.schema import DEFAULT_DATA_DIR, load_exam
from langgraph_memory.eval.systems import load_chat_model, standard_systems

FIXTURES = Path(__file__).parent / "data"


def _data() -> Path:
    return DEFAULT_DATA_DIR if any(DEFAULT_DATA_DIR.glob("*.json")) else FIXTURES


def test_small_exam_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report"
    # Seed 2 draws 3 users whose look-alikes add one more: 4 users, 27 probes of the shipped data.
    args = ["--data", str(_data()), "--users", "3", "--seed", "2", "--out", str(out)]
    code = main([*args, "--no-progress"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "offline: hit" in printed and "seeded: hit" in printed and "offline-minilm" in printed
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Configurations side by side" in report and "## The gist matcher" in report
    for png in ("kinds.png", "tokens.png", "latency.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"![{png}]({png})" in report
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    exam = select_users(load_exam(_data()), 3, 2)
    assert len(exam.users) >= 3
    for name in ("offline", "seeded"):
        probes = results["configurations"][name]["probes"]
        assert len(probes) == exam.probe_count
        assert {p["user"] for p in probes} == {u.user_id for u in exam.users}
        # Every write landed: a crashed reconcile would leave facts unstored, silently.
        assert results["configurations"][name]["writer_jobs_failed"] == 0
        assert results["configurations"][name]["writer_jobs_unfinished"] == 0


def test_the_same_seed_gives_the_same_results(tmp_path: Path) -> None:
    exam = load_exam(FIXTURES)
    runs = [
        run_exam(exam, standard_systems(["offline"]), tmp_path / str(i), seed=5) for i in (1, 2)
    ]
    first, second = (
        [(o.observation.probe_id, o.observation.lines) for o in r.metrics[0].outcomes] for r in runs
    )
    assert first == second


def test_select_users_keeps_the_look_alikes() -> None:
    exam = load_exam(FIXTURES)
    for seed in range(6):
        chosen = select_users(exam, 1, seed)
        ids = {u.user_id for u in chosen.users}
        for user in chosen.users:
            assert {o for p in user.probes for o, _ in p.forbid_other_users} <= ids


def test_a_chat_model_configuration_counts_its_calls_and_the_judge_grades(tmp_path: Path) -> None:
    exam = select_users(load_exam(FIXTURES), 1, 0)
    model = load_chat_model("tests.eval.fake_models:extractor")
    judge = load_chat_model("tests.eval.fake_models:judge")
    results = run_exam(
        exam, standard_systems(["model"], model=model), tmp_path, judge=judge, judge_name="fake"
    )
    (metrics,) = results.metrics
    assert metrics.run.llm_calls >= len(
        exam.users
    )  # one extraction call per drained session at least
    assert 0 < metrics.llm_calls_per_turn <= 1
    summary = results.judges["model"]
    assert summary.graded == exam.probe_count and summary.failures == 0
    assert summary.false_recalls == 0


def test_an_unloadable_model_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--data", str(FIXTURES), "--model", "no-such-provider:model-x"]) == 2
    assert "not a 'module:factory' path" in capsys.readouterr().err


def test_public_benchmark_files_through_the_cli(tmp_path: Path) -> None:
    from tests.eval.test_loaders import LOCOMO, LONGMEMEVAL

    locomo = tmp_path / "locomo10.json"
    locomo.write_text(json.dumps(LOCOMO), encoding="utf-8")
    longmemeval = tmp_path / "longmemeval_s.json"
    longmemeval.write_text(json.dumps(LONGMEMEVAL), encoding="utf-8")
    out = tmp_path / "out"
    args = ["--locomo", str(locomo), "--longmemeval", str(longmemeval), "--skip-exam"]
    assert main([*args, "--out", str(out), "--no-progress", "--data", str(FIXTURES)]) == 0
    text = (out / "benchmarks.md").read_text(encoding="utf-8")
    assert "## LoCoMo" in text and "## LongMemEval" in text
    assert "### session-level evidence" in text
    assert not (out / "report.md").exists()
