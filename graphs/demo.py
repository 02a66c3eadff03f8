"""A short multi-session conversation showing all three memory layers, offline.

Run ``python -m graphs.demo``. Everything is embedded and deterministic:

* session memory: our ``SqliteSaver`` in ``./.demo-data/checkpoints.sqlite``;
* long-term memory: an embedded ``ChromaMemoryStore`` in ``./.demo-data/ltm``
  with ``HashingEmbeddings`` (no model download);
* writing memories: ``MemoryWriter`` with the rule-based extractor on the
  durable queue stored in the checkpoint file, worker thread in the background;
* the assistant: ``MemoryAwareChatModel``, an offline model that visibly uses
  the recalled memory block and the summary.

For each turn the demo prints what the model actually receives (our system
messages in full, the conversation as a count) and its answer. With
``OPENAI_API_KEY`` set, ``ChatOpenAI`` (``OPENAI_MODEL``, default
``gpt-4o-mini``) answers, extracts and summarises instead.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import logging
import os
import shutil
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from graphs._models import MemoryAwareChatModel
from langgraph_memory._extras import require_extra
from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.nodes.recall import flush_access_stats
from langgraph_memory.nodes.rules import RuleBasedExtractor
from langgraph_memory.pipeline import MemoryWriter
from langgraph_memory.pipeline.queue import SqliteMemoryQueue
from langgraph_memory.prompts.compress import SUMMARY_MESSAGE_ID
from langgraph_memory.prompts.recall import RECALL_MESSAGE_ID
from langgraph_memory.session import SqliteSaver
from langgraph_memory.wiring import MemoryState, add_memory_nodes

DATA_DIR = Path(".demo-data")
_MARKER = ".langgraph-memory-demo"
USER_ID = "lao-wang"

# (thread, user message). Three sessions on three days, one user.
SCRIPT: tuple[tuple[str, str], ...] = (
    ("monday", "Hi! From now on, don't use honorifics with me. Just call me Lao Wang."),
    ("monday", "I'm allergic to seafood."),
    ("monday", "For the Hangzhou trip my budget is 3000."),
    ("monday", "Which month is best for West Lake?"),
    ("monday", "And how long is the train from Shanghai?"),
    ("wednesday", "Update: actually my budget is 5000 now."),
    ("wednesday", "Can I afford a lake-view hotel with my budget?"),
    ("friday", "Book us a dinner place tonight; the team suggested seafood."),
)


class PromptRecorder(BaseCallbackHandler):
    """Keeps what the agent's chat model received, whichever model it is (offline or OpenAI)."""

    def __init__(self, node: str = "agent") -> None:
        self.node = node
        self.prompts: list[list[BaseMessage]] = []

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        # The summariser also runs inside the graph; only the agent node's calls count.
        if (metadata or {}).get("langgraph_node") == self.node:
            self.prompts.append(list(messages[0]))


@dataclass
class Demo:
    graph: Any
    model: BaseChatModel
    store: ChromaMemoryStore
    writer: MemoryWriter
    queue: SqliteMemoryQueue


def _online_models() -> tuple[BaseChatModel, BaseChatModel] | None:
    if not os.environ.get("OPENAI_API_KEY"):
        return None
    require_extra("openai", feature="OPENAI_API_KEY (ChatOpenAI)")
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"), temperature=0)
    return model, model


def build_demo(
    data_dir: Path, *, chat_model: BaseChatModel | None = None, saver: Any, max_tokens: int = 900
) -> Demo:
    """The demo graph: ``START -> memory_recall -> agent -> memory_extract -> memory_compress -> END``.

    ``max_tokens`` is small on purpose so ``compress`` visibly runs in a short chat.
    """
    online = _online_models() if chat_model is None else None
    model = chat_model or (online[0] if online else MemoryAwareChatModel())
    store = ChromaMemoryStore.embedded(data_dir / "ltm", embeddings=HashingEmbeddings())
    queue = SqliteMemoryQueue(data_dir / "checkpoints.sqlite", debounce_seconds=0)
    writer = MemoryWriter(
        store,
        extractor=online[1] if online else RuleBasedExtractor(),
        model_for_reconcile=online[1] if online else None,
        mode="background",
        queue=queue,
        poll_interval=0.05,
    ).start()

    def agent(state: MemoryState) -> dict[str, Any]:
        system = SystemMessage("You are a concise travel assistant.")
        return {"messages": [model.invoke([system, *state["messages"]])]}

    builder = StateGraph(MemoryState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    add_memory_nodes(
        builder,
        model_node="agent",
        store=store,
        writer=writer,
        model_for_summary=online[1] if online else None,
        max_tokens=max_tokens,
        compress_options={"keep_last_turns": 2, "summary_max_tokens": 150, "trigger_messages": 8},
    )
    graph = builder.compile(checkpointer=saver, store=store)
    return Demo(graph, model, store, writer, queue)


async def make_graph(config: RunnableConfig) -> Any:
    """The ``langgraph dev`` factory (``langgraph.json``: ``./graphs/demo.py:make_graph``).

    ``build_demo`` takes four arguments, and LangGraph accepts factories of 0, 1
    or 2; this one builds the same graph once per process over
    ``$LANGGRAPH_MEMORY_DATA_DIR/demo``, in a thread (opening files blocks).
    """
    return await asyncio.to_thread(_dev_demo_graph)


def _dev_demo_graph() -> Any:
    from graphs._agent import data_dir_for

    global _DEV_DEMO
    with _DEV_LOCK:
        if _DEV_DEMO is None:
            data_dir = data_dir_for("demo")
            data_dir.mkdir(parents=True, exist_ok=True)
            saver_cm = SqliteSaver.from_conn_string(str(data_dir / "checkpoints.sqlite"))
            _DEV_DEMO = build_demo(data_dir, saver=saver_cm.__enter__())
            atexit.register(_close_dev_demo, _DEV_DEMO, saver_cm)
        return _DEV_DEMO.graph


def _close_dev_demo(demo: Demo, saver_cm: Any) -> None:
    demo.writer.stop()
    demo.queue.close()
    demo.store.close()
    saver_cm.__exit__(None, None, None)


_DEV_DEMO: Demo | None = None
_DEV_LOCK = threading.Lock()


def describe_prompt(messages: Sequence[BaseMessage]) -> str:
    """Our memory messages in full, the rest as one line each (shortened)."""
    lines = []
    for message in messages:
        if message.id in (RECALL_MESSAGE_ID, SUMMARY_MESSAGE_ID):
            lines.extend("    | " + line for line in message.text.splitlines())
        else:
            text = message.text.replace("\n", " ")
            lines.append(f"    {message.type:>6}: {text[:90]}{'...' if len(text) > 90 else ''}")
    return "\n".join(lines)


def run(data_dir: Path = DATA_DIR, *, keep: bool = False, out: Any = sys.stdout) -> int:
    """Play ``SCRIPT``; returns the number of turns played."""
    if data_dir.exists() and not keep:
        if not (data_dir / _MARKER).exists():
            raise SystemExit(
                f"{data_dir} exists and was not made by this demo; pass another --data-dir"
            )
        shutil.rmtree(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / _MARKER).touch()
    started = time.perf_counter()
    with SqliteSaver.from_conn_string(str(data_dir / "checkpoints.sqlite")) as saver:
        demo = build_demo(data_dir, saver=saver)
        if isinstance(demo.model, MemoryAwareChatModel):
            from graphs._agent import OFFLINE_BANNER

            print(OFFLINE_BANNER, file=out)
        recorder = PromptRecorder()
        try:
            for turn, (thread, text) in enumerate(SCRIPT, start=1):
                config: RunnableConfig = {
                    "configurable": {"thread_id": thread, "user_id": USER_ID},
                    "callbacks": [recorder],
                }
                print(f"\n=== turn {turn} · session '{thread}' ===", file=out)
                print(f"USER: {text}", file=out)
                result = demo.graph.invoke({"messages": [HumanMessage(text)]}, config)
                if recorder.prompts:
                    print("MODEL RECEIVED:", file=out)
                    print(describe_prompt(recorder.prompts[-1]), file=out)
                print(f"ASSISTANT: {result['messages'][-1].text}", file=out)
                # Let the background writer finish so the next session can recall it.
                demo.writer.drain(timeout=30)
            print("\n=== long-term memories of", USER_ID, "===", file=out)
            for record in demo.store.list_memories(USER_ID, include_history=True):
                print(
                    f"  [{record.status.value:>10}] {record.text}  ({record.source.value})",
                    file=out,
                )
            stats = demo.queue.stats()
            print(f"\nqueue: {stats}", file=out)
            held = demo.queue.unfinished() - demo.queue.unfinished(held=False)
            if held:
                # The reply each session ended on waits for the user's answer; unanswered,
                # its commitments are read alone (MemoryWriter.submit_unanswered).
                print(
                    f"  ({held} pending = replies held for the user's answer, read alone after "
                    f"{demo.writer.unanswered_after_seconds:.0f} s of quiet)",
                    file=out,
                )
            print(f"done in {time.perf_counter() - started:.1f} s; data in {data_dir}/", file=out)
        finally:
            demo.writer.stop()
            flush_access_stats()
            demo.queue.close()
            demo.store.close()
    return len(SCRIPT)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--keep", action="store_true", help="keep memories from earlier runs")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    from graphs._agent import clean_model_errors

    with clean_model_errors():  # a wrong OPENAI_API_KEY: one line, not a traceback
        run(args.data_dir, keep=args.keep)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
