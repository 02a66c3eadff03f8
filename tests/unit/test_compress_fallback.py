"""A failing summariser never fails the user's turn (issue 15, part 6).

The summary model below always raises (a provider outage); the graph is wired as
the README shows, with ``add_memory_nodes``, and compresses on every turn. The
turn must still end with the agent's answer in the state, the evicted turns
summarised by the extractive summariser, and a warning in the log.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.constants import END, START
from langgraph.graph import StateGraph
from langgraph.store.memory import InMemoryStore

from graphs._models import ScriptedChatModel
from langgraph_memory.errors import ModelOutputError
from langgraph_memory.wiring import MemoryState, add_memory_nodes

CONFIG: Any = {"configurable": {"user_id": "u1", "thread_id": "t1"}}


def graph_with(summary_model: ScriptedChatModel, **compress_options: Any) -> Any:
    def agent(state: MemoryState) -> dict[str, Any]:
        last = state["messages"][-1]
        return {"messages": [AIMessage(f"answer to: {last.text}")]}

    builder = StateGraph(MemoryState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent").add_edge("agent", END)
    add_memory_nodes(
        builder,
        model_node="agent",
        model_for_summary=summary_model,
        compress_options={"trigger_messages": 4, "keep_last_turns": 1, **compress_options},
    )
    return builder.compile(checkpointer=InMemorySaver(), store=InMemoryStore())


def test_turn_is_answered_when_the_summary_model_is_down(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedChatModel(default=ConnectionError("provider unreachable (scripted)"))
    graph = graph_with(model)
    graph.invoke({"messages": [HumanMessage("My budget is 5000 yuan")]}, CONFIG)
    with caplog.at_level(logging.WARNING, logger="langgraph_memory.nodes.compress"):
        state = graph.invoke({"messages": [HumanMessage("Any hotel ideas?")]}, CONFIG)
    assert state["messages"][-1].text == "answer to: Any hotel ideas?"
    assert len(model.calls) == 3  # the first try and max_retries=2 more, all failed
    assert "budget is 5000" in state["summary"]  # the extractive summary took over
    assert all(m.text != "My budget is 5000 yuan" for m in state["messages"])  # evicted
    assert "ConnectionError" in caplog.text and "extractive summary" in caplog.text


async def test_async_turn_is_answered_when_the_summary_model_answers_empty() -> None:
    graph = graph_with(ScriptedChatModel(default=""))
    await graph.ainvoke({"messages": [HumanMessage("Call me Lao Wang")]}, CONFIG)
    state = await graph.ainvoke({"messages": [HumanMessage("Hello again")]}, CONFIG)
    assert state["messages"][-1].text == "answer to: Hello again"
    assert "Lao Wang" in state["summary"]


def test_opting_out_raises_and_keeps_the_conversation() -> None:
    graph = graph_with(
        ScriptedChatModel(default=RuntimeError("down")), fallback_to_extractive=False
    )
    graph.invoke({"messages": [HumanMessage("first")]}, CONFIG)
    with pytest.raises(ModelOutputError, match="fallback_to_extractive=True"):
        graph.invoke({"messages": [HumanMessage("second")]}, CONFIG)
