"""The example agents in ``graphs/`` (issue 17, part 3): every graph in
``langgraph.json`` builds from its factory, and each agent's terminal chat
runs offline, uses its tools, and shows memory at work across sessions.
"""

from __future__ import annotations

import asyncio
import importlib.util
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(180)


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LGM_EXAMPLE_DATA", str(tmp_path / "data"))


# This file's agents (graphs/_example.py); the others in langgraph.json have their own tests.
MINE = ("customer_service", "personal_assistant")


def langgraph_graphs() -> dict[str, str]:
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert config["dependencies"] == ["."]
    return {name: spec for name, spec in config["graphs"].items() if name in MINE}


def load_factory(spec: str) -> Any:
    """``./path/file.py:attr`` as ``langgraph dev`` resolves it (a file path)."""
    path, _, attribute = spec.partition(":")
    module_spec = importlib.util.spec_from_file_location(Path(path).stem, ROOT / path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return getattr(module, attribute)


@pytest.mark.parametrize("name", sorted(langgraph_graphs()))
def test_every_graph_in_langgraph_json_builds_and_answers(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    factory = load_factory(langgraph_graphs()[name])
    made = factory()
    graph = asyncio.run(made) if asyncio.iscoroutine(made) else made
    assert graph.name == name
    nodes = set(graph.get_graph().nodes)
    assert {"memory_recall", "agent", "tools", "memory_extract", "memory_compress"} <= nodes
    assert graph.checkpointer is None  # langgraph dev brings its own (graphs/server.py)
    assert "offline: a scripted" in capsys.readouterr().err
    out = graph.invoke(
        {"messages": [HumanMessage("hello there")]},
        {"configurable": {"thread_id": "t", "user_id": "u1"}},
    )
    assert out["messages"][-1].type == "ai" and out["messages"][-1].text


def test_customer_service_chat_uses_tools_and_standing_instruction() -> None:
    from graphs.customer_service import COMPLAINTS, EXAMPLE

    COMPLAINTS.clear()
    out = io.StringIO()
    answers = EXAMPLE.chat(out=out, user_id="lin")
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("offline: a scripted rule-based model")  # said once, first
    assert sum("offline:" in line for line in lines) == 1
    assert len(answers) == len(EXAMPLE.script)
    # Before the instruction the offline model is formal; after it, in later
    # sessions too (recall pins procedural memories), it is not.
    assert answers[0].startswith("Dear customer,")
    assert all(not a.startswith("Dear") for a in answers[1:])
    assert "Order 1042 (ceramic teapot)" in answers[2]  # lookup_order ran
    assert answers[3].startswith("Lin,") and "Complaint #1 filed" in answers[3]
    assert COMPLAINTS == [{"order_id": "1042", "problem": "the box arrived damaged."}]
    assert "in transit" in answers[4]
    assert "(recalled:" in out.getvalue() and "honorifics" in out.getvalue()


def test_personal_assistant_chat_remembers_across_sessions() -> None:
    from graphs.personal_assistant import EXAMPLE, SCHEDULE

    SCHEDULE.clear()
    out = io.StringIO()
    answers = EXAMPLE.chat(out=out, user_id="mei-parent")
    assert "Added to your calendar: dentist appointment" in answers[1]
    assert "Your calendar: dentist appointment (on Thursday)" in answers[3]
    # A new session (thread) on Wednesday still knows Monday's allergy.
    assert "allergic to peanuts" in answers[4]
    assert "[wednesday]" in out.getvalue()


def test_a_second_run_keeps_long_term_memory() -> None:
    from graphs.personal_assistant import EXAMPLE

    EXAMPLE.chat([("day1", "I am allergic to peanuts.")], out=io.StringIO(), user_id="u")
    answers = EXAMPLE.chat(
        [("day2", "What snack is safe for my allergy?")], out=io.StringIO(), user_id="u"
    )
    assert "allergic to peanuts" in answers[0]


def test_unreachable_model_server_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphs.customer_service import EXAMPLE

    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    out = io.StringIO()
    answers = EXAMPLE.chat([("s", "hello")], out=out)
    assert answers == []
    text = out.getvalue()
    assert "offline:" not in text
    assert "the model refused:" in text and "Connection error" in text
    assert "Traceback" not in text


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_langgraph_dev_serves_both_agents(tmp_path: Path) -> None:
    """``langgraph dev`` (when langgraph-cli[inmem] is installed) loads every graph
    of ``langgraph.json`` and runs each one turn through its HTTP API."""
    import os
    import shutil
    import socket
    import subprocess
    import time
    import urllib.request

    cli = shutil.which("langgraph") or str(Path(sys.executable).parent / "langgraph")
    if importlib.util.find_spec("langgraph_api") is None or not Path(cli).exists():
        pytest.skip("langgraph-cli[inmem] is not installed")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "LGM_EXAMPLE_DATA": str(tmp_path / "data")}
    server = subprocess.Popen(
        [cli, "dev", "--no-browser", "--no-reload", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"

    def post(path: str, body: dict[str, Any]) -> Any:
        request = urllib.request.Request(
            base + path, json.dumps(body).encode(), {"content-type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())

    try:
        for _ in range(90):
            try:
                urllib.request.urlopen(base + "/ok", timeout=2).close()
                break
            except OSError:
                time.sleep(1)
        for name, question, expected in (
            ("customer_service", "Where is my order 1042?", "ceramic teapot"),
            ("personal_assistant", "What is on my calendar?", "calendar"),
        ):
            thread = post("/threads", {})["thread_id"]
            out = post(
                f"/threads/{thread}/runs/wait",
                {
                    "assistant_id": name,
                    "input": {"messages": [{"role": "user", "content": question}]},
                    "config": {"configurable": {"user_id": "u1"}},
                },
            )
            assert expected in out["messages"][-1]["content"], out
    finally:
        server.terminate()
        server.wait(timeout=30)
