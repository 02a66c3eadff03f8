"""The chat workload every session-memory measurement and stress test drives.

A real compiled ``StateGraph`` over the plain ``add_messages`` state (no app-side
schema tricks), three nodes per turn::

    prepare -> model -> post

``model`` is a deterministic scripted "LLM": seeded by (thread, turn), it answers
with 200-800 characters of text, so every saver sees exactly the same bytes.
Human messages are short (20-60 characters), as in a chat.
"""

from __future__ import annotations

import random
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

# A small vocabulary keeps replies compressible the way real prose is (not random bytes).
_VOCABULARY = (
    "the a memory agent session thread checkpoint state graph node turn reply user "
    "question answer because therefore when which store recall summary context window "
    "token model tool result plan step next previous value list message branch retry "
    "database file write read commit index delta snapshot version channel history time "
    "travel resume interrupt parallel send subgraph namespace durable crash lock busy "
    "fast slow small large linear growth bounded policy prune sweep vacuum stats"
)
_WORDS = _VOCABULARY.split()

REPLY_MIN_CHARS = 200
REPLY_MAX_CHARS = 800


class ChatState(TypedDict):
    """Plain chat state: LangGraph's own ``add_messages`` reducer, two small scalars."""

    messages: Annotated[list[AnyMessage], add_messages]
    turn: int
    reply_chars: int


def _text(rng: random.Random, min_chars: int, max_chars: int) -> str:
    target = rng.randint(min_chars, max_chars)
    words: list[str] = []
    size = 0
    while size < target:
        word = rng.choice(_WORDS)
        words.append(word)
        size += len(word) + 1
    text = " ".join(words)[:target]
    return text[0].upper() + text[1:-1] + "."


def human_text(thread_id: str, turn: int) -> str:
    """The user's message for ``turn`` of ``thread_id`` (20-60 characters, deterministic)."""
    return _text(random.Random(f"human:{thread_id}:{turn}"), 20, 60)


def reply_text(thread_id: str, turn: int) -> str:
    """The scripted model's answer for ``turn`` of ``thread_id`` (200-800 characters)."""
    return _text(random.Random(f"model:{thread_id}:{turn}"), REPLY_MIN_CHARS, REPLY_MAX_CHARS)


def _prepare(state: ChatState) -> dict[str, Any]:
    return {"turn": state.get("turn", 0) + 1}


def _model(state: ChatState, config: RunnableConfig) -> dict[str, Any]:
    thread_id = config["configurable"]["thread_id"]
    return {"messages": [AIMessage(content=reply_text(thread_id, state["turn"]))]}


def _post(state: ChatState) -> dict[str, Any]:
    last = state["messages"][-1]
    return {"reply_chars": len(str(last.content))}


def build_chat_graph(checkpointer: Any) -> Any:
    """Compile the 3-node chat graph with ``checkpointer``."""
    builder = StateGraph(ChatState)
    builder.add_node("prepare", _prepare)
    builder.add_node("model", _model)
    builder.add_node("post", _post)
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "model")
    builder.add_edge("model", "post")
    builder.add_edge("post", END)
    return builder.compile(checkpointer=checkpointer)


def turn_input(thread_id: str, turn: int) -> dict[str, Any]:
    """The graph input for one turn: a single short human message."""
    return {"messages": [HumanMessage(content=human_text(thread_id, turn))]}


def thread_config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def run_turns(checkpointer: Any, thread_id: str, turns: int, start: int = 1) -> Any:
    """Turns ``start`` .. ``start + turns - 1`` of one thread on a fresh chat graph;
    the last turn's output (None when ``turns`` is 0)."""
    graph = build_chat_graph(checkpointer)
    out = None
    for turn in range(start, start + turns):
        out = graph.invoke(turn_input(thread_id, turn), thread_config(thread_id))
    return out
