"""Every graph in ``langgraph.json`` loads the way ``langgraph dev`` loads it, and runs a turn.

The first test imports each ``./path.py:attr`` by file path, checks LangGraph's
factory rule (0, 1 or 2 parameters), calls the factory with a config as the
server does and invokes one offline turn. The second starts ``langgraph dev``
itself and runs each graph over HTTP (~5 s). ``langgraph-cli[inmem]`` is in the
``dev`` extra, so CI runs it (a failure there when missing, like Postgres); elsewhere it
skips without it. It pins protobuf below 7 and grpcio below 1.82, which chromadb's
own requirements allow (``pip check`` clean; the Chroma tests pass on them).
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.pregel import Pregel

ROOT = Path(__file__).resolve().parents[2]
SPEC = json.loads((ROOT / "langgraph.json").read_text())
GRAPHS: dict[str, str] = SPEC["graphs"]
FIRST_TURN = "My order 1042 has not arrived yet. I'm allergic to peanuts."


def _load(spec: str) -> Any:
    # As langgraph_api.graph does: a module from the file, registered, then executed.
    path, attr = spec.rsplit(":", 1)
    name = "lgjson_" + Path(path).stem
    module_spec = importlib.util.spec_from_file_location(name, ROOT / path)
    assert module_spec is not None and module_spec.loader is not None, spec
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    module_spec.loader.exec_module(module)
    return getattr(module, attr)


@pytest.fixture
def dev_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("LANGGRAPH_MEMORY_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    yield tmp_path
    from graphs._agent import close_dev_graphs

    close_dev_graphs()


def test_langgraph_json_names_the_example_graphs() -> None:
    assert set(GRAPHS) == {"support", "assistant", "demo"}
    assert SPEC["dependencies"] == ["."]
    assert SPEC["checkpointer"] == {"path": "./graphs/server.py:checkpointer"}


async def test_the_server_checkpointer_is_our_async_saver(dev_data_dir: Path) -> None:
    from langgraph_memory import AsyncSqliteSaver

    factory = _load(SPEC["checkpointer"]["path"])
    async with factory() as saver:
        assert isinstance(saver, AsyncSqliteSaver)
        assert await saver.aget_tuple({"configurable": {"thread_id": "none"}}) is None
    assert (dev_data_dir / "server" / "checkpoints.sqlite").exists()


@pytest.mark.parametrize("graph_id", sorted(GRAPHS))
def test_each_graph_builds_from_langgraph_json(graph_id: str, dev_data_dir: Path) -> None:
    factory = _load(GRAPHS[graph_id])
    assert callable(factory) and not isinstance(factory, Pregel)
    params = inspect.signature(factory).parameters
    assert len(params) <= 2, f"{graph_id}: langgraph dev needs 0, 1 or 2 parameters"
    config = {"configurable": {"thread_id": f"{graph_id}-1", "user_id": "sam"}}
    made = factory(config) if params else factory()
    graph = asyncio.run(made) if inspect.iscoroutine(made) else made
    assert isinstance(graph, Pregel)
    assert {"memory_recall", "memory_extract", "memory_compress"} <= set(graph.get_graph().nodes)
    result = graph.invoke({"messages": [HumanMessage(FIRST_TURN)]}, config)
    assert result["messages"][-1].type == "ai" and result["messages"][-1].text
    if graph_id != "demo":  # no terminal under the server: the first reply says what it is
        from graphs._agent import OFFLINE_BANNER

        assert result["messages"][-1].text.startswith(OFFLINE_BANNER + "\n")
        second = graph.invoke({"messages": [HumanMessage("Thanks.")]}, config)
        assert OFFLINE_BANNER not in second["messages"][-1].text
    # The factory is called for every run: it must hand back the same graph and layers.
    again = factory(config) if params else factory()
    assert (asyncio.run(again) if inspect.iscoroutine(again) else again) is graph
    if graph_id != "demo":
        assert (dev_data_dir / graph_id / "checkpoints.sqlite").exists()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _post(url: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def test_langgraph_dev_serves_every_graph(tmp_path: Path) -> None:
    cli = Path(sys.executable).with_name("langgraph")
    if not cli.exists() or importlib.util.find_spec("langgraph_runtime_inmem") is None:
        msg = "langgraph-cli[inmem] is not installed (it is in the dev extra: pip install -e '.[dev]')"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(msg + "; CI=true requires it")
        pytest.skip(msg)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.pop("PYTHONPATH", None)  # as a user runs it: the dev server imports from its cwd
    env.update(
        LANGGRAPH_MEMORY_DATA_DIR=str(tmp_path / "data"),
        LANGSMITH_TRACING="false",
        LANGGRAPH_CLI_NO_ANALYTICS="1",
    )
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(
        [str(cli), "dev", "--no-browser", "--no-reload", "--port", str(port),
         "--config", str(ROOT / "langgraph.json")],
        cwd=ROOT,  # langgraph.json paths are relative to where `langgraph dev` runs
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    threads: list[str] = []
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{base}/ok", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail((tmp_path / "server.log").read_text()[-3000:])
                time.sleep(0.5)
        for graph_id in sorted(GRAPHS):
            thread = _post(f"{base}/threads", {})["thread_id"]
            state = _post(
                f"{base}/threads/{thread}/runs/wait",
                {
                    "assistant_id": graph_id,
                    "input": {"messages": [{"type": "human", "content": FIRST_TURN}]},
                    "config": {"configurable": {"user_id": "sam"}},
                },
            )
            assert "__error__" not in state, (graph_id, state, log.name)
            assert state["messages"][0]["id"] == "langgraph-memory:recall"
            assert state["messages"][-1]["type"] == "ai", (graph_id, state["messages"][-1])
            threads.append(thread)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
    # The server stored those threads with our saver (langgraph.json "checkpointer").
    assert "Using custom checkpointer: AsyncSqliteSaver" in (tmp_path / "server.log").read_text()
    from langgraph_memory import SqliteSaver

    with SqliteSaver.from_conn_string(
        str(tmp_path / "data" / "server" / "checkpoints.sqlite")
    ) as ours:
        for thread in threads:
            assert ours.get_tuple({"configurable": {"thread_id": thread}}) is not None, thread
