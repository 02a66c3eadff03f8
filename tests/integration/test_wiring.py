"""add_memory_nodes and MemoryMiddleware on compiled graphs with our saver and store."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from graphs._models import ScriptedChatModel, memory_lines
from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.errors import ConfigurationError, MissingUserIdError
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.nodes.recall import flush_access_stats
from langgraph_memory.nodes.rules import RuleBasedExtractor
from langgraph_memory.pipeline import MemoryWriter
from langgraph_memory.prompts.compress import SUMMARY_MESSAGE_ID
from langgraph_memory.prompts.recall import RECALL_MESSAGE_ID
from langgraph_memory.session import AsyncSqliteSaver, SqliteSaver
from langgraph_memory.types import MemoryRecord, MemoryType
from langgraph_memory.wiring import (
    COMPRESS_NODE,
    EXTRACT_NODE,
    RECALL_NODE,
    MemoryMiddleware,
    MemoryState,
    add_memory_nodes,
)


def last_human_id(messages: list[Any]) -> str:
    """What extract has submitted through: the user's latest message (the assistant's
    reply goes with the next turn, beside the user's answer to it)."""
    return next(m.id for m in reversed(messages) if isinstance(m, HumanMessage))


@dataclass
class Ctx:
    user_id: str


@tool
def get_weather(city: str) -> str:
    """Weather for a city."""
    return f"It is sunny in {city}."


def call(city: str, call_id: str) -> AIMessage:
    return AIMessage(
        "", tool_calls=[{"name": "get_weather", "args": {"city": city}, "id": call_id}]
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ChromaMemoryStore]:
    s = ChromaMemoryStore.embedded(tmp_path / "ltm", embeddings=HashingEmbeddings())
    s.put_memory(
        MemoryRecord("User is allergic to seafood", user_id="alice", key="allergy.seafood")
    )
    s.put_memory(
        MemoryRecord(
            "Never use honorifics with this user", type=MemoryType.PROCEDURAL, user_id="alice"
        )
    )
    s.put_memory(MemoryRecord("User is Bob, likes seafood", user_id="bob"))
    yield s
    flush_access_stats()
    s.close()


@pytest.fixture
def saver(tmp_path: Path) -> Iterator[SqliteSaver]:
    with SqliteSaver.from_conn_string(str(tmp_path / "checkpoints.sqlite")) as s:
        yield s


def tool_graph(
    model: ScriptedChatModel, state: type = MemoryState
) -> StateGraph[Any, Any, Any, Any]:
    def agent(s: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [model.invoke(s["messages"])]}

    builder = StateGraph(state)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([get_weather]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder


def edges(graph: Any) -> set[tuple[str, str]]:
    return {(e.source, e.target) for e in graph.get_graph().edges}


# --------------------------------------------------------------------------- topology


def test_topology_around_a_tool_loop(store: ChromaMemoryStore, saver: SqliteSaver) -> None:
    model = ScriptedChatModel(script=[call("Hangzhou", "c1"), "Sunny, enjoy seafood-free dinner."])
    writer = MemoryWriter(store, extractor=RuleBasedExtractor(), mode="sync")
    builder = add_memory_nodes(tool_graph(model), model_node="agent", store=store, writer=writer)
    graph = builder.compile(checkpointer=saver, store=store)
    assert edges(graph) == {
        (START, RECALL_NODE),
        (RECALL_NODE, "agent"),
        ("agent", "tools"),
        ("tools", "agent"),
        ("agent", EXTRACT_NODE),
        (EXTRACT_NODE, COMPRESS_NODE),
        (COMPRESS_NODE, END),
    }
    config = {"configurable": {"thread_id": "t1", "user_id": "alice"}}
    steps = [
        next(iter(chunk))
        for chunk in graph.stream(
            {"messages": [HumanMessage("weather in Hangzhou?")]}, config, stream_mode="updates"
        )
    ]
    # Recall once per turn; the tool loop goes straight back to the model; the tail once.
    assert steps == [RECALL_NODE, "agent", "tools", "agent", EXTRACT_NODE, COMPRESS_NODE]
    assert len(model.calls) == 2
    for prompt in model.calls:  # the block is in front of the model on every call of the turn
        assert prompt[0].id == RECALL_MESSAGE_ID
        assert "Never use honorifics with this user" in memory_lines(prompt)
    state = graph.get_state(config).values
    assert state["extracted_through"] == last_human_id(state["messages"])


def test_plain_messages_state_gets_the_memory_keys(
    store: ChromaMemoryStore, saver: SqliteSaver
) -> None:
    model = ScriptedChatModel(default="ok")
    builder = add_memory_nodes(
        tool_graph(model, MessagesState),
        model_node="agent",
        store=store,
        compress_options={"trigger_messages": 6, "keep_last_turns": 1},
    )
    graph = builder.compile(checkpointer=saver, store=store)
    config = {"configurable": {"thread_id": "t2", "user_id": "alice"}}
    for text in ["My name is Alice.", "I live in Hangzhou.", "What's up?"]:
        graph.invoke({"messages": [HumanMessage(text)]}, config)
    values = graph.get_state(config).values
    assert "Alice" in values["summary"]
    ids = [m.id for m in values["messages"]]
    assert ids[:2] == [SUMMARY_MESSAGE_ID, RECALL_MESSAGE_ID]
    assert [m.text for m in values["messages"][2:]] == ["What's up?", "ok"]


def test_branch_with_path_map_and_branch_without_one(store: ChromaMemoryStore) -> None:
    def route_mapped(state: dict[str, Any]) -> str:
        human = [m for m in state["messages"] if isinstance(m, HumanMessage)][-1]
        return "done" if "finish" in human.text else "again"

    def route_free(state: dict[str, Any]):  # no annotation: LangGraph cannot see its targets
        return END

    model = ScriptedChatModel(default="ok")
    builder = StateGraph(MemoryState)
    builder.add_node("agent", lambda s: {"messages": [model.invoke(s["messages"])]})
    builder.add_node("post", lambda s: {})
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route_mapped, {"done": "post", "again": END})
    builder.add_conditional_edges("post", route_free)
    graph = add_memory_nodes(builder, model_node="agent", store=store).compile(store=store)
    config = {"configurable": {"thread_id": "t", "user_id": "alice"}}

    def steps(text: str) -> list[str]:
        chunks = graph.stream({"messages": [HumanMessage(text)]}, config, stream_mode="updates")
        return [next(iter(c)) for c in chunks]

    # END in a path map is remapped; END returned by an unmapped branch is rerouted.
    assert steps("again please") == [RECALL_NODE, "agent", COMPRESS_NODE]
    assert steps("finish it") == [RECALL_NODE, "agent", "post", COMPRESS_NODE]
    assert (COMPRESS_NODE, END) in edges(graph)


def test_configuration_errors(store: ChromaMemoryStore) -> None:
    builder = tool_graph(ScriptedChatModel(default="ok"))
    with pytest.raises(ConfigurationError, match=r"model_node='llm'.*\['agent', 'tools'\]"):
        add_memory_nodes(builder, model_node="llm")
    add_memory_nodes(builder, model_node="agent")
    with pytest.raises(ConfigurationError, match="already exist"):
        add_memory_nodes(builder, model_node="agent")

    no_entry = StateGraph(MemoryState)
    no_entry.add_node("prep", lambda s: {})
    no_entry.add_node("agent", lambda s: {})
    no_entry.add_edge(START, "prep")
    no_entry.add_edge("prep", "agent")
    no_entry.add_edge("agent", END)
    with pytest.raises(ConfigurationError, match="entry_sources"):
        add_memory_nodes(no_entry, model_node="agent")
    add_memory_nodes(no_entry, model_node="agent", entry_sources=["prep"])
    assert ("prep", RECALL_NODE) in no_entry.edges

    no_end = StateGraph(MemoryState)
    no_end.add_node("agent", lambda s: {})
    no_end.add_edge(START, "agent")
    with pytest.raises(ConfigurationError, match="nothing in the graph leads to END"):
        add_memory_nodes(no_end, model_node="agent")


# --------------------------------------------------------------------------- ids


def test_user_id_from_runtime_context_and_fail_closed(
    store: ChromaMemoryStore, saver: SqliteSaver
) -> None:
    model = ScriptedChatModel(default="ok")

    def agent(s: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [model.invoke(s["messages"])]}

    builder = StateGraph(MemoryState, context_schema=Ctx)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    graph = add_memory_nodes(builder, model_node="agent", store=store).compile(
        checkpointer=saver, store=store
    )
    graph.invoke(
        {"messages": [HumanMessage("seafood tonight?")]},
        # A client-controlled configurable cannot override the typed context.
        {"configurable": {"thread_id": "c1", "user_id": "bob"}},
        context=Ctx(user_id="alice"),
    )
    lines = memory_lines(model.calls[-1])
    assert "User is allergic to seafood" in lines
    assert not any("Bob" in line for line in lines)
    calls_before = len(model.calls)
    with pytest.raises(MissingUserIdError, match="fail closed"):
        graph.invoke(
            {"messages": [HumanMessage("seafood?")]}, {"configurable": {"thread_id": "c2"}}
        )
    assert len(model.calls) == calls_before  # the model never ran without a user


# --------------------------------------------------------------------------- async


async def test_async_graph_with_async_saver(store: ChromaMemoryStore, tmp_path: Path) -> None:
    model = ScriptedChatModel(script=[call("Paris", "c1"), "Sunny."], default="ok")
    writer = MemoryWriter(store, extractor=RuleBasedExtractor(), mode="sync")

    async def agent(s: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(s["messages"])]}

    builder = StateGraph(MemoryState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([get_weather]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    add_memory_nodes(
        builder, model_node="agent", store=store, writer=writer,
        compress_options={"trigger_messages": 6, "keep_last_turns": 1},
    )  # fmt: skip
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "a.sqlite")) as saver:
        graph = builder.compile(checkpointer=saver, store=store)
        config = {"configurable": {"thread_id": "a1", "user_id": "alice"}}
        await graph.ainvoke(
            {"messages": [HumanMessage("I'm allergic to peanuts. Weather in Paris?")]}, config
        )
        await graph.ainvoke({"messages": [HumanMessage("And tomorrow?")]}, config)
        values = (await graph.aget_state(config)).values
    assert values["summary"]  # the first turn (with its tool call and result) was evicted
    kept = values["messages"]
    assert not any(isinstance(m, ToolMessage) for m in kept)
    assert [m.text for m in kept if not isinstance(m, SystemMessage)] == ["And tomorrow?", "ok"]
    texts = [r.text for r in store.list_memories("alice")]
    assert "User is allergic to peanuts" in texts


# --------------------------------------------------------------------------- create_agent


def test_middleware_with_create_agent(store: ChromaMemoryStore, saver: SqliteSaver) -> None:
    from langchain.agents import create_agent

    model = ScriptedChatModel(
        script=[call("Hangzhou", "c1"), "Sunny in Hangzhou.", "Noted.", "Noted again."]
    )
    writer = MemoryWriter(store, extractor=RuleBasedExtractor(), mode="sync")
    agent = create_agent(
        model,
        tools=[get_weather],
        system_prompt="You are a travel assistant.",
        middleware=[
            MemoryMiddleware(
                store=store,
                writer=writer,
                compress_options={"trigger_messages": 4, "keep_last_turns": 1},
            )
        ],
        context_schema=Ctx,
        checkpointer=saver,
        store=store,
    )
    config = {"configurable": {"thread_id": "agent-1"}}
    agent.invoke(
        {"messages": [HumanMessage("Weather in Hangzhou?")]}, config, context=Ctx(user_id="alice")
    )
    first, second = model.calls[0], model.calls[1]
    assert first[0].text == "You are a travel assistant."
    assert first[1].id == RECALL_MESSAGE_ID  # right after the agent's system prompt
    assert "Never use honorifics with this user" in memory_lines(first)
    assert (
        second[1].id == RECALL_MESSAGE_ID
        and len([m for m in second if m.id == RECALL_MESSAGE_ID]) == 1
    )
    agent.invoke(
        {"messages": [HumanMessage("My budget is 3000 yuan.")]},
        config,
        context=Ctx(user_id="alice"),
    )
    agent.invoke(
        {"messages": [HumanMessage("What did I say?")]}, config, context=Ctx(user_id="alice")
    )
    values = agent.get_state(config).values
    # Extracted at turn end, compressed once over the trigger, tool pair gone together.
    assert any("3000" in r.text for r in store.list_memories("alice"))
    assert "3000" in values["summary"]
    assert not any(isinstance(m, ToolMessage) for m in values["messages"])
    assert values["extracted_through"] == last_human_id(values["messages"])
    last_prompt = model.calls[-1]
    assert [m.id for m in last_prompt[:3]][1:] == [SUMMARY_MESSAGE_ID, RECALL_MESSAGE_ID]
    with pytest.raises(MissingUserIdError):
        agent.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "agent-2"}})


async def test_middleware_async(store: ChromaMemoryStore, saver: SqliteSaver) -> None:
    from langchain.agents import create_agent

    model = ScriptedChatModel(default="ok")
    agent = create_agent(
        model, tools=[], middleware=[MemoryMiddleware(store=store)], checkpointer=saver, store=store
    )
    config = {"configurable": {"thread_id": "agent-async", "user_id": "alice"}}
    await agent.ainvoke({"messages": [HumanMessage("seafood for dinner?")]}, config)
    assert "User is allergic to seafood" in memory_lines(model.calls[-1])


def test_mapped_literal_route_still_type_checks() -> None:
    """A route annotated with Literal[...] keeps working (its END entry is remapped)."""

    def route(state: dict[str, Any]) -> Literal["agent", "__end__"]:
        return "__end__"

    builder = StateGraph(MemoryState)
    builder.add_node("agent", lambda s: {"messages": [AIMessage("x")]})
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route)
    add_memory_nodes(builder, model_node="agent", recall=False)
    graph = builder.compile()
    out = graph.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"user_id": "u"}})
    assert out["messages"][-1].text == "x"
    assert ("agent", COMPRESS_NODE) in edges(graph)


def test_join_edge_into_end_is_rerouted() -> None:
    builder = StateGraph(MemoryState)
    builder.add_node("agent", lambda s: {"messages": [AIMessage("x")]})
    builder.add_node("side", lambda s: {})
    builder.add_edge(START, "agent")
    builder.add_edge(START, "side")
    builder.add_edge(["agent", "side"], END)
    add_memory_nodes(
        builder, model_node="agent", recall=False, compress_options={"trigger_messages": 1}
    )
    graph = builder.compile()
    config = {"configurable": {"user_id": "u"}}
    chunks = graph.stream(
        {"messages": [HumanMessage("a"), AIMessage("b"), HumanMessage("c")]},
        config,
        stream_mode="updates",
    )
    steps = [next(iter(c)) for c in chunks]
    assert steps[-1] == COMPRESS_NODE and set(steps[:2]) == {"agent", "side"}


def test_archived_summary_in_the_real_store_rolls_in_place(store: ChromaMemoryStore) -> None:
    from langgraph_memory.nodes import create_compress_node

    node = create_compress_node(
        model=ScriptedChatModel(script=["Alice plans a trip.", "Alice plans a trip; budget 5000."]),
        max_tokens=10_000,
        trigger_messages=4,
        keep_last_turns=1,
        archive_summary=True,
        store=store,
    )
    config = {"configurable": {"user_id": "alice", "thread_id": "trip"}}
    msgs = [
        HumanMessage("q0", id="h0"),
        AIMessage("a0", id="a0"),
        HumanMessage("q1", id="h1"),
        AIMessage("a1", id="a1"),
    ]
    first = node.invoke({"messages": msgs}, config)
    from langgraph.graph.message import add_messages

    msgs = [
        *add_messages(msgs, first["messages"]),
        HumanMessage("q2", id="h2"),
        AIMessage("a2", id="a2"),
    ]
    node.invoke({"messages": msgs, "summary": first["summary"]}, config)
    archived = [
        r
        for r in store.list_memories("alice", include_history=True)
        if r.type == MemoryType.EPISODIC
    ]
    assert len(archived) == 1
    assert (
        archived[0].text.endswith("budget 5000.") and archived[0].source.value == "agent_inferred"
    )


def test_recall_updates_access_stats_in_the_real_store(store: ChromaMemoryStore) -> None:
    from langgraph_memory.nodes import create_recall_node

    allergy = next(r for r in store.list_memories("alice") if r.key == "allergy.seafood")
    assert allergy.access_count == 0
    recall = create_recall_node(store=store)
    recall.invoke(
        {"messages": [HumanMessage("seafood tonight?")]}, {"configurable": {"user_id": "alice"}}
    )
    flush_access_stats()
    touched = store.get_memory("alice", allergy.id)
    assert (
        touched is not None and touched.access_count == 1 and touched.last_accessed_at is not None
    )
    bob = store.list_memories("bob")[0]
    assert bob.access_count == 0  # another user's memories are never touched
