"""The example agents (``python -m graphs.support`` / ``graphs.assistant``) remember across sessions.

Everything is real: our SqliteSaver file, embedded Chroma, the background writer on
the SQLite queue, LangGraph's ToolNode running the agents' tools. Only the chat
model is the offline rule-driven one (or a local HTTP server that answers 401).
"""

from __future__ import annotations

import http.server
import importlib
import io
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from graphs._agent import OFFLINE_BANNER, MemoryLayers
from graphs.assistant import AssistantModel, build_assistant
from graphs.support import OrderDesk, SupportModel, build_support
from langgraph_memory.clock import ManualClock
from langgraph_memory.prompts.recall import RECALL_MESSAGE_ID

ROOT = Path(__file__).resolve().parents[2]


def _offline_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env["PYTHONPATH"] = str(ROOT)
    return env


def _chat(module: str, data_dir: Path, thread: str, lines: list[str], **env: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", module, "--data-dir", str(data_dir), "--thread", thread],
        input="\n".join(lines) + "\n",
        cwd=data_dir.parent,
        env={**_offline_env(), **env},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


@pytest.mark.parametrize("module", ["graphs._scripted", "graphs.support", "graphs.assistant"])
def test_docstring_examples_run(module: str) -> None:
    import doctest

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_support_chat_remembers_instruction_order_and_channel(tmp_path: Path) -> None:
    data = tmp_path / "support"
    first = _chat(
        "graphs.support",
        data,
        "monday",
        [
            "Hi, I'm Sam. Please don't use honorifics with me, just call me Sam.",
            "My order 1042 hasn't arrived yet.",
            "I prefer email over phone calls.",
        ],
    )
    assert first.splitlines()[0] == OFFLINE_BANNER  # says what it is, in one line, first
    assert "(tool) lookup_order(order_id='1042')" in first
    assert "assistant> Sam, order 1042 (a blender) is shipped with UPS" in first

    # A new session (new thread, new process): the order number and the channel come
    # from long-term memory only.
    second = _chat("graphs.support", data, "tuesday", ["The blender arrived broken.", "/memories"])
    assert "(tool) create_ticket(order_id='1042'" in second
    assert "I opened ticket T-0001 for order 1042 (the blender)" in second
    assert "follow up by email as you prefer" in second
    assert "Dear" not in second  # the standing "no honorifics" instruction holds
    assert "[procedural, user_stated]" in second  # /memories lists the instruction


def test_support_graph_records_tickets_and_prompts(tmp_path: Path) -> None:
    layers = MemoryLayers.open(tmp_path / "data")
    try:
        model, desk = SupportModel(), OrderDesk()
        graph = build_support(layers, model, desk)
        config = {"configurable": {"thread_id": "t1", "user_id": "ana"}}
        graph.invoke({"messages": [HumanMessage("Order 1103 came with a cracked knife.")]}, config)
        assert [t["order_id"] for t in desk.tickets] == ["1103"]
        assert desk.tickets[0]["item"] == "knife set"
        # Without a remembered instruction the agent stays formal; what it received had
        # our recall block first.
        reply = graph.get_state(config).values["messages"][-1].text
        assert reply.startswith("Hello, I opened ticket T-0001")
        assert model.calls[0][1].id == RECALL_MESSAGE_ID
        # Another user's memory is not this user's: a complaint without an order number.
        layers.writer.drain(timeout=30)
        other = {"configurable": {"thread_id": "t2", "user_id": "ben"}}
        result = graph.invoke({"messages": [HumanMessage("My parcel arrived damaged.")]}, other)
        assert result["messages"][-1].text.endswith("Which order is it about?")
        assert len(desk.tickets) == 1
    finally:
        layers.close()


def test_assistant_family_allergies_and_a_plan_that_expires(tmp_path: Path) -> None:
    clock = ManualClock(datetime(2026, 3, 2, 9, tzinfo=UTC))  # a Monday
    layers = MemoryLayers.open(tmp_path / "data", clock=clock)
    try:
        graph = build_assistant(layers, AssistantModel(), clock=clock)

        def say(text: str, thread: str) -> str:
            config = {"configurable": {"thread_id": thread, "user_id": "lin"}}
            reply = graph.invoke({"messages": [HumanMessage(text)]}, config)["messages"][-1].text
            layers.writer.drain(timeout=30)
            return str(reply)

        for text in (
            "Please don't use honorifics with me, just call me Lin.",
            "I'm allergic to peanuts.",
            "Remember that my daughter Mia is allergic to shellfish.",
            "I have a dentist appointment next Tuesday at 10am.",
            "I'm in Berlin this week.",
        ):
            assert say(text, "monday") == "Lin, noted."
        dinner = say("What should I cook for dinner?", "tuesday")
        assert "your daughter Mia is allergic to shellfish" in dinner
        assert "you are allergic to peanuts" in dinner
        schedule = say("What's on my schedule?", "tuesday")
        assert "today is 2026-03-02 (Monday)" in schedule  # the tool, on the shared clock
        assert "dentist appointment next Tuesday at 10am (2026-03-10)" in schedule
        assert "Berlin this week" in say("Where am I this week?", "tuesday")

        clock.advance(timedelta(days=8))  # the week is over: the plan lapses
        later = say("Where am I this week?", "later")
        assert "Berlin" not in later and "I don't know of any trip" in later
        assert "Mia" in say("Tell me about my family.", "later")
    finally:
        layers.close()


@pytest.fixture
def rejecting_openai_server() -> Iterator[str]:
    """A local OpenAI-compatible endpoint that answers every request with HTTP 401."""

    class Reject(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            body = json.dumps(
                {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}
            ).encode()
            self.send_response(401)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Reject)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _expected_error(base_url: str) -> str:
    return (
        f"error: the model server at {base_url} rejected OPENAI_API_KEY (HTTP 401). "
        "Set a valid key, or unset OPENAI_API_KEY to run the offline scripted model."
    )


def test_a_wrong_api_key_ends_in_one_line(rejecting_openai_server: str, tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "graphs.support", "--data-dir", str(tmp_path / "data")]
    env = {
        **_offline_env(),
        "OPENAI_API_KEY": "sk-wrong",
        "OPENAI_BASE_URL": rejecting_openai_server,
    }
    proc = subprocess.run(
        argv,
        input="hello\n",
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == _expected_error(rejecting_openai_server)  # no traceback
    assert OFFLINE_BANNER not in proc.stdout  # a real model was configured


@pytest.mark.parametrize("module", ["graphs.assistant", "graphs.demo"])
def test_a_wrong_api_key_ends_in_one_line_in_the_other_mains(
    module: str,
    rejecting_openai_server: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    monkeypatch.setenv("OPENAI_BASE_URL", rejecting_openai_server)
    monkeypatch.setattr(sys, "stdin", io.StringIO("hello\n"))
    main = importlib.import_module(module).main
    with pytest.raises(SystemExit) as exited:
        main(["--data-dir", str(tmp_path / "data")])
    assert exited.value.code == 2
    assert exited.value.__context__ is None or exited.value.__suppress_context__
    assert capsys.readouterr().err.strip() == _expected_error(rejecting_openai_server)
