"""The demo (``python -m graphs.demo``) runs offline and shows memory at work."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_demo_runs_offline_in_under_a_minute(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}  # force offline
    env["PYTHONPATH"] = str(ROOT)
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "graphs.demo", "--data-dir", str(tmp_path / "demo")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    elapsed = time.perf_counter() - started
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert elapsed < 60
    out = proc.stdout
    # What the model receives is printed, memory block included ...
    assert (
        "MODEL RECEIVED:" in out and "<long_term_memory>" in out and "<conversation_summary>" in out
    )
    # ... and the answers use it across sessions.
    friday = out.split("session 'friday'")[1]
    assert "allergic to seafood" in friday and "vegetable hot pot" in friday
    turn7 = out.split("=== turn 7")[1].split("=== turn 8")[0]
    assert "USER: Can I afford" in turn7 and "ASSISTANT: Your budget is 5000." in turn7
    assert "[superseded] User's budget is 3000" in out
    assert "'failed': 0" in out


def test_demo_refuses_to_delete_a_foreign_directory(tmp_path: Path) -> None:
    from graphs.demo import run

    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "important.txt").write_text("keep me")
    with pytest.raises(SystemExit, match="not made by this demo"):
        run(foreign, out=io.StringIO())
    assert (foreign / "important.txt").exists()


# The notebooks are executed from their own folder by tests/integration/test_notebooks.py.
