"""What the example agents share: the three memory layers, the model choice, the chat loop.

* ``MemoryLayers.open(data_dir)`` opens session memory (our ``SqliteSaver`` in
  ``<data_dir>/checkpoints.sqlite``), long-term memory (an embedded
  ``ChromaMemoryStore`` in ``<data_dir>/ltm`` with ``HashingEmbeddings``) and
  the writer (``MemoryWriter`` in background mode on a ``SqliteMemoryQueue``
  in the checkpoint file).
* ``choose_model`` picks ``ChatOpenAI`` when ``OPENAI_API_KEY`` or
  ``OPENAI_BASE_URL`` is set (any OpenAI-compatible server: Ollama, vLLM), else
  the agent's offline scripted model, which announces itself in one line.
* ``build_agent_graph`` is a tool-calling agent (``agent -> tools -> agent``)
  with ``add_memory_nodes`` around it.
* ``chat`` is the terminal loop (stdin works, so tests can script it) and
  ``clean_model_errors`` turns a rejected API key or an unreachable server into
  one line instead of a traceback.
* ``dev_graph`` keeps one graph (and its layers) per data directory for the
  ``langgraph dev`` factories, which the server calls once per run.
"""

from __future__ import annotations

import argparse
import atexit
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from graphs._scripted import OFFLINE_BANNER
from langgraph_memory import (
    ChromaMemoryStore,
    HashingEmbeddings,
    MemoryState,
    MemoryWriter,
    RuleBasedExtractor,
    SqliteMemoryQueue,
    SqliteSaver,
    add_memory_nodes,
)
from langgraph_memory._extras import require_extra
from langgraph_memory.clock import Clock
from langgraph_memory.errors import MissingExtraError

log = logging.getLogger("graphs")

__all__ = [
    "OFFLINE_BANNER",
    "MemoryLayers",
    "build_agent_graph",
    "chat",
    "choose_model",
    "clean_model_errors",
    "close_dev_graphs",
    "dev_graph",
    "online_model",
    "run_chat",
]


@dataclass
class MemoryLayers:
    """The three layers on one data directory; ``close()`` releases them in order."""

    data_dir: Path
    saver: SqliteSaver
    store: ChromaMemoryStore
    queue: SqliteMemoryQueue
    writer: MemoryWriter
    _saver_cm: Any

    @classmethod
    def open(
        cls,
        data_dir: str | Path,
        *,
        extractor: Any = None,
        model_for_reconcile: BaseChatModel | None = None,
        clock: Clock | None = None,
    ) -> MemoryLayers:
        """Open (and create) the layers in ``data_dir``; the writer thread is started."""
        data_dir = Path(data_dir)
        data_dir.mkdir(parents=True, exist_ok=True)
        checkpoints = data_dir / "checkpoints.sqlite"
        saver_cm = SqliteSaver.from_conn_string(str(checkpoints))
        saver = saver_cm.__enter__()
        store = ChromaMemoryStore.embedded(
            data_dir / "ltm", embeddings=HashingEmbeddings(), clock=clock
        )
        queue = SqliteMemoryQueue(checkpoints, debounce_seconds=0)
        writer = MemoryWriter(
            store,
            extractor=extractor if extractor is not None else RuleBasedExtractor(clock=clock),
            model_for_reconcile=model_for_reconcile,
            mode="background",
            queue=queue,
            poll_interval=0.05,
            clock=clock,
        ).start()
        return cls(data_dir, saver, store, queue, writer, saver_cm)

    def close(self) -> None:
        """Stop the writer, then close the queue, the store and the saver."""
        self.writer.stop()
        self.queue.close()
        self.store.close()
        self._saver_cm.__exit__(None, None, None)


def online_model() -> BaseChatModel | None:
    """``ChatOpenAI`` when ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` is set, else ``None``.

    ``OPENAI_MODEL`` picks the model (default ``gpt-4o-mini``). A local
    OpenAI-compatible server (``OPENAI_BASE_URL=http://localhost:11434/v1`` for
    Ollama) needs no key; a placeholder is sent.
    """
    key = os.environ.get("OPENAI_API_KEY")
    base_url = os.environ.get("OPENAI_BASE_URL")
    if not key and not base_url:
        return None
    require_extra("openai", feature="OPENAI_API_KEY / OPENAI_BASE_URL (ChatOpenAI)")
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
        temperature=0,
        api_key=key or "not-needed",  # type: ignore[arg-type]
        base_url=base_url,
        max_retries=1,
    )


def choose_model(offline: Callable[[], BaseChatModel]) -> tuple[BaseChatModel, bool]:
    """The chat model to use and whether it is the offline scripted one."""
    model = online_model()
    return (model, False) if model is not None else (offline(), True)


def build_agent_graph(
    *,
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    system_prompt: str,
    layers: MemoryLayers,
    online: bool,
    max_tokens: int = 4000,
    recall_options: dict[str, Any] | None = None,
    clock: Clock | None = None,
    checkpointer: Any = None,
) -> Any:
    """``START -> memory_recall -> agent <-> tools``, then ``memory_extract -> memory_compress``.

    ``checkpointer`` defaults to the layers' ``SqliteSaver``; ``langgraph dev``
    replaces it with the server's own unless ``langgraph.json`` names ours.
    """
    bound = model.bind_tools(list(tools)) if tools else model
    system = SystemMessage(system_prompt)

    def agent(state: MemoryState) -> dict[str, Any]:
        return {"messages": [bound.invoke([system, *state["messages"]])]}

    builder = StateGraph(MemoryState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    if tools:
        builder.add_node("tools", ToolNode(list(tools)))
        builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
        builder.add_edge("tools", "agent")
    else:
        builder.add_edge("agent", END)
    add_memory_nodes(
        builder,
        model_node="agent",
        store=layers.store,
        writer=layers.writer,
        model_for_summary=model if online else None,
        max_tokens=max_tokens,
        # A customer has tens of memories, not thousands, and HashingEmbeddings only
        # matches shared words: "how will you contact me?" scores ~0 against "prefers
        # email". No relevance gate lets the top k (by importance and recency too) in.
        recall_options={"min_relevance": 0.0, **(recall_options or {})},
        clock=clock,
    )
    return builder.compile(
        checkpointer=layers.saver if checkpointer is None else checkpointer, store=layers.store
    )


# --------------------------------------------------------------------------- clean errors


def model_error_line(exc: BaseException) -> str | None:
    """One line for a chat-model failure a user can fix (bad key, server down), else ``None``."""
    if isinstance(exc, MissingExtraError):  # OPENAI_API_KEY set without the 'openai' extra
        return f"error: {exc}"
    try:
        import openai
    except ImportError:  # the 'openai' extra is not installed: no OpenAI error to explain
        return None
    base_url = os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
    if isinstance(exc, openai.AuthenticationError):
        return (
            f"error: the model server at {base_url} rejected OPENAI_API_KEY (HTTP 401). "
            "Set a valid key, or unset OPENAI_API_KEY to run the offline scripted model."
        )
    if isinstance(exc, openai.PermissionDeniedError | openai.NotFoundError):
        model = os.environ.get("OPENAI_MODEL", "gpt-4o-mini")
        return (
            f"error: the model server at {base_url} refused model {model!r} "
            f"({type(exc).__name__}). Set OPENAI_MODEL to a model your key can use."
        )
    if isinstance(exc, openai.APIConnectionError):
        return (
            f"error: cannot reach the model server at {base_url} ({exc}). Start it, fix "
            "OPENAI_BASE_URL, or unset OPENAI_API_KEY/OPENAI_BASE_URL to run offline."
        )
    return None


@contextmanager
def clean_model_errors(err: TextIO | None = None) -> Iterator[None]:
    """Turn a fixable model error into one line on stderr and exit status 2."""
    try:
        yield
    except Exception as exc:
        line = model_error_line(exc)
        if line is None:
            raise
        print(line, file=err or sys.stderr)
        raise SystemExit(2) from None


# --------------------------------------------------------------------------- terminal chat


def parse_chat_args(
    description: str, default_user: str, argv: Sequence[str] | None
) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--user", default=default_user, help="user id (long-term memory owner)")
    parser.add_argument("--thread", default="main", help="conversation thread id")
    parser.add_argument(
        "--data-dir", type=Path, default=Path(".langgraph-memory"), help="where memory lives"
    )
    return parser.parse_args(argv)


def chat(
    graph: Any,
    layers: MemoryLayers,
    *,
    user: str,
    thread: str,
    offline: bool,
    stdin: TextIO | None = None,
    out: TextIO | None = None,
) -> int:
    """Read lines from ``stdin`` until EOF or ``/quit``; returns the number of turns.

    ``/memories`` lists what long-term memory holds for the user. After each
    reply the writer is drained, so the next turn (or the next session) can
    recall what was just said; the reply itself never waits for extraction.
    """
    stdin = stdin or sys.stdin
    out = out or sys.stdout
    interactive = stdin.isatty()
    if offline:
        print(OFFLINE_BANNER, file=out)
    print(f"user {user!r}, thread {thread!r}, data in {layers.data_dir}/ (/quit to end)", file=out)
    config: RunnableConfig = {"configurable": {"thread_id": thread, "user_id": user}}
    turns = 0
    while True:
        if interactive:
            print("you> ", end="", file=out, flush=True)
        line = stdin.readline()
        if not line:
            break
        text = line.strip()
        if not text:
            continue
        if text in ("/quit", "/exit"):
            break
        if text == "/memories":
            for record in layers.store.list_memories(user):
                print(f"  - {record.text} [{record.type.value}, {record.source.value}]", file=out)
            continue
        if not interactive:
            print(f"you> {text}", file=out)
        result = graph.invoke({"messages": [HumanMessage(text)]}, config)
        for message in _turn_messages(result["messages"]):
            if isinstance(message, AIMessage) and message.tool_calls:
                for call in message.tool_calls:
                    print(f"  (tool) {call['name']}({_args(call['args'])})", file=out)
            elif isinstance(message, AIMessage):
                print(f"assistant> {message.text}", file=out)
        turns += 1
        layers.writer.drain(timeout=30)
    return turns


def _turn_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The messages after the latest human message (this turn's tool calls and replies)."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return list(messages[index + 1 :])
    return list(messages)


def _args(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items())


def run_chat(
    argv: Sequence[str] | None,
    *,
    description: str,
    default_user: str,
    build: Callable[[MemoryLayers, BaseChatModel, bool], Any],
    offline_model: Callable[[], BaseChatModel],
) -> int:
    """The body of ``python -m graphs.<agent>``: parse args, open layers, chat, close."""
    args = parse_chat_args(description, default_user, argv)
    logging.basicConfig(level=logging.WARNING)
    with clean_model_errors():  # OPENAI_API_KEY set without the 'openai' extra: one line
        model, offline = choose_model(offline_model)
    layers = MemoryLayers.open(
        args.data_dir,
        extractor=None if offline else model,
        model_for_reconcile=None if offline else model,
    )
    try:
        with clean_model_errors():
            chat(
                build(layers, model, offline),
                layers,
                user=args.user,
                thread=args.thread,
                offline=offline,
            )
    finally:
        layers.close()
    return 0


# --------------------------------------------------------------------------- langgraph dev

_CACHE: dict[tuple[str, Path], tuple[MemoryLayers, Any]] = {}
_CACHE_LOCK = threading.Lock()


def data_dir_for(name: str) -> Path:
    """``$LANGGRAPH_MEMORY_DATA_DIR/<name>`` (default ``./.langgraph-memory/<name>``)."""
    return Path(os.environ.get("LANGGRAPH_MEMORY_DATA_DIR", ".langgraph-memory")) / name


def dev_graph(
    name: str,
    offline_model: Callable[..., BaseChatModel],
    build: Callable[[MemoryLayers, BaseChatModel, bool], Any],
) -> Any:
    """One graph (and one set of layers) per agent and data directory for this process.

    ``langgraph dev`` calls a graph factory for every run and every state read;
    opening Chroma and starting a writer thread each time would leak both. The
    factories are ``async`` and run this in a thread: it opens files, which the
    dev server's event loop refuses to do.
    """
    data_dir = data_dir_for(name).resolve()
    with _CACHE_LOCK:
        cached = _CACHE.get((name, data_dir))
        if cached is None:
            # No terminal shows the banner under the server: the model's first reply does.
            model, offline = choose_model(lambda: offline_model(announce=True))
            layers = MemoryLayers.open(
                data_dir,
                extractor=None if offline else model,
                model_for_reconcile=None if offline else model,
            )
            if offline:
                log.warning("%s: %s", name, OFFLINE_BANNER)
            cached = _CACHE[(name, data_dir)] = (layers, build(layers, model, offline))
            atexit.register(layers.close)
        return cached[1]


def close_dev_graphs() -> None:
    """Close every layer set ``dev_graph`` opened (tests call it; atexit does too)."""
    with _CACHE_LOCK:
        for layers, _ in _CACHE.values():
            atexit.unregister(layers.close)
            layers.close()
        _CACHE.clear()
