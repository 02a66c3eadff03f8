"""Real LangGraph behaviour on our checkpointers, checked after reopening the file.

Every test drives compiled graphs through one saver instance, closes it, and
checks what a *new* instance on the same file (or database) reads back: the
state, the history, pending writes and interrupts must have been stored, not
merely kept in memory. Where LangGraph defines the exact shape (history length,
steps, ``next``), the same script run on ``InMemorySaver`` is the oracle.

Parametrised over ``tests/integration/_savers.py`` (ours: SQLite sync and async,
Postgres sync and async once they exist).
"""

from __future__ import annotations

import enum
import itertools
import operator
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, Send, interrupt

from benchmarks._session_workload import (
    build_chat_graph,
    human_text,
    reply_text,
    thread_config,
    turn_input,
)
from tests.integration._savers import Harness, factory_params, harness_for

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(params=factory_params())
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Harness:
    return harness_for(request, request.param, tmp_path)


def _shape(snapshots: Sequence[Any]) -> list[tuple[Any, ...]]:
    """What must match across savers: step, next, and message (type, text) per snapshot."""
    return [
        (
            s.metadata["step"],
            s.next,
            [(m.type, m.content) for m in s.values.get("messages", [])],
            {k: v for k, v in s.values.items() if k != "messages"},
        )
        for s in snapshots
    ]


def _oracle_history(script: Any) -> list[tuple[Any, ...]]:
    """Run ``script(graph)`` on InMemorySaver (sync) and return its history shape."""
    graph = build_chat_graph(InMemorySaver())
    script(graph)
    return _shape(list(graph.get_state_history(thread_config("t"))))


# ---------------------------------------------------------------- interrupts


class ApprovalState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    decision: str


def _ask(state: ApprovalState) -> dict[str, Any]:
    answer = interrupt({"question": "Send the refund?", "amount": 42})
    return {"decision": answer}


def _act(state: ApprovalState) -> dict[str, Any]:
    return {"messages": [AIMessage(content=f"decision: {state['decision']}")]}


def _approval_graph(saver: Any) -> Any:
    builder = StateGraph(ApprovalState)
    builder.add_node("ask", _ask)
    builder.add_node("act", _act)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "act")
    builder.add_edge("act", END)
    return builder.compile(checkpointer=saver)


async def test_interrupt_survives_reopen_and_resumes_on_new_instance(harness: Harness) -> None:
    config = thread_config("approval")
    async with harness.open() as saver:
        result = await harness.invoke(
            _approval_graph(saver), {"messages": [HumanMessage("refund please")]}, config
        )
        assert "__interrupt__" in result

    async with harness.open() as saver:
        graph = _approval_graph(saver)
        state = await harness.get_state(graph, config)
        assert state.next == ("ask",)
        assert [i.value for i in state.interrupts] == [
            {"question": "Send the refund?", "amount": 42}
        ]
        result = await harness.invoke(graph, Command(resume="approved"), config)
        assert result["decision"] == "approved"

    async with harness.open() as saver:
        state = await harness.get_state(_approval_graph(saver), config)
        assert state.next == ()
        assert state.interrupts == ()
        assert state.values["decision"] == "approved"
        assert [m.content for m in state.values["messages"]] == [
            "refund please",
            "decision: approved",
        ]


# ---------------------------------------------------------------- time travel


async def test_history_update_state_on_past_checkpoint_and_replay(harness: Harness) -> None:
    config = thread_config("t")

    def three_turns(graph: Any) -> None:
        for turn in (1, 2, 3):
            graph.invoke(turn_input("t", turn), config)

    async with harness.open() as saver:
        graph = build_chat_graph(saver)
        for turn in (1, 2, 3):
            await harness.invoke(graph, turn_input("t", turn), config)

    async with harness.open() as saver:
        graph = build_chat_graph(saver)
        history = await harness.history(graph, config)
        assert _shape(history) == _oracle_history(three_turns)
        # Parent links form one chain, newest first.
        for child, parent in itertools.pairwise(history):
            assert (
                child.parent_config["configurable"]["checkpoint_id"]
                == (parent.config["configurable"]["checkpoint_id"])
            )
        end_of_turn_1 = next(s for s in history if s.next == () and len(s.values["messages"]) == 2)
        mid_turn_2 = next(
            s for s in history if s.next == ("model",) and len(s.values["messages"]) == 3
        )
        # Reading a past checkpoint by id gives that checkpoint's state.
        past = await harness.get_state(graph, end_of_turn_1.config)
        assert [m.content for m in past.values["messages"]] == [
            human_text("t", 1),
            reply_text("t", 1),
        ]

        # Fork: edit the past checkpoint, then continue the conversation from the fork.
        fork_config = await harness.update_state(
            graph, end_of_turn_1.config, {"messages": [HumanMessage("fork note", id="fork-1")]}
        )
        await harness.invoke(graph, turn_input("t", 99), fork_config)

    async with harness.open() as saver:
        graph = build_chat_graph(saver)
        latest = await harness.get_state(graph, config)
        assert [m.content for m in latest.values["messages"]] == [
            human_text("t", 1),
            reply_text("t", 1),
            "fork note",
            human_text("t", 99),
            reply_text("t", 2),  # the fork's turn counter continues from turn 1
        ]
        # The fork's ancestry skips turns 2 and 3 and reaches the edited checkpoint.
        by_id = {
            s.config["configurable"]["checkpoint_id"]: s
            for s in await harness.history(graph, config)
        }
        assert len(by_id) == 15 + 1 + 5  # 3 turns, the update, 1 turn on the fork
        ancestors = []
        cursor: Any = latest
        while cursor.parent_config is not None:
            cursor = by_id[cursor.parent_config["configurable"]["checkpoint_id"]]
            ancestors.append(cursor.config["configurable"]["checkpoint_id"])
        assert end_of_turn_1.config["configurable"]["checkpoint_id"] in ancestors
        assert mid_turn_2.config["configurable"]["checkpoint_id"] not in ancestors

        # Replay from a mid-turn checkpoint: "model" and "post" run again from there.
        replayed = await harness.invoke(graph, None, mid_turn_2.config)
        assert [m.content for m in replayed["messages"]] == [
            human_text("t", 1),
            reply_text("t", 1),
            human_text("t", 2),
            reply_text("t", 2),
        ]

    async with harness.open() as saver:
        graph = build_chat_graph(saver)
        latest = await harness.get_state(graph, config)
        assert latest.values["turn"] == 2
        assert len(latest.values["messages"]) == 4
        assert latest.next == ()


# ---------------------------------------------------------------- subgraphs


class ChildState(TypedDict, total=False):
    child_log: Annotated[list[str], operator.add]


class ParentState(TypedDict, total=False):
    notes: Annotated[list[str], operator.add]
    # Written only by the child graph (run once per thread), so its output is not doubled.
    child_log: Annotated[list[str], operator.add]


def _child_graph() -> Any:
    def sub_write(state: ChildState) -> dict[str, Any]:
        return {"child_log": ["child-a"]}

    def sub_ask(state: ChildState) -> dict[str, Any]:
        return {"child_log": [f"child-answer:{interrupt('child question')}"]}

    builder = StateGraph(ChildState)
    builder.add_node("sub_write", sub_write)
    builder.add_node("sub_ask", sub_ask)
    builder.add_edge(START, "sub_write")
    builder.add_edge("sub_write", "sub_ask")
    builder.add_edge("sub_ask", END)
    return builder.compile()  # inherits the parent's checkpointer


def _parent_graph(saver: Any) -> Any:
    builder = StateGraph(ParentState)
    builder.add_node("before", lambda s: {"notes": ["before"]})
    builder.add_node("child", _child_graph())
    builder.add_node("after", lambda s: {"notes": ["after"]})
    builder.add_edge(START, "before")
    builder.add_edge("before", "child")
    builder.add_edge("child", "after")
    builder.add_edge("after", END)
    return builder.compile(checkpointer=saver)


async def test_subgraph_state_lives_in_its_checkpoint_ns(harness: Harness) -> None:
    config = thread_config("sub")
    async with harness.open() as saver:
        result = await harness.invoke(_parent_graph(saver), {"notes": ["start"]}, config)
        assert result["__interrupt__"][0].value == "child question"

    async with harness.open() as saver:
        graph = _parent_graph(saver)
        state = await harness.get_state(graph, config, subgraphs=True)
        assert state.next == ("child",)
        child = state.tasks[0].state
        child_ns = child.config["configurable"]["checkpoint_ns"]
        assert child_ns.startswith("child:")
        assert child.next == ("sub_ask",)
        assert child.values["child_log"] == ["child-a"]
        # The saver itself holds checkpoints under the child's namespace.
        stored = await harness.list(
            saver, {"configurable": {"thread_id": "sub", "checkpoint_ns": child_ns}}
        )
        assert stored
        assert {t.config["configurable"]["checkpoint_ns"] for t in stored} == {child_ns}
        root = await harness.list(
            saver, {"configurable": {"thread_id": "sub", "checkpoint_ns": ""}}
        )
        assert root
        assert {t.config["configurable"]["checkpoint_ns"] for t in root} == {""}

        result = await harness.invoke(graph, Command(resume="yes"), config)
        assert result["notes"] == ["start", "before", "after"]
        assert result["child_log"] == ["child-a", "child-answer:yes"]

    async with harness.open() as saver:
        state = await harness.get_state(_parent_graph(saver), config, subgraphs=True)
        assert state.next == ()
        assert state.values == {
            "notes": ["start", "before", "after"],
            "child_log": ["child-a", "child-answer:yes"],
        }


# ---------------------------------------------------------------- parallel branches and Send


class FanState(TypedDict, total=False):
    topics: list[str]
    results: Annotated[list[str], operator.add]
    left: str
    right: str


def _fan_graph(saver: Any) -> Any:
    def route(state: FanState) -> list[Send]:
        return [Send("work", {"topics": [t]}) for t in state["topics"]]

    builder = StateGraph(FanState)
    builder.add_node("split", lambda s: {})
    builder.add_node("left", lambda s: {"left": "L"})
    builder.add_node("right", lambda s: {"right": "R"})
    builder.add_node("work", lambda s: {"results": [f"done:{s['topics'][0]}"]})
    builder.add_node("join", lambda s: {"results": [f"joined:{len(s['results'])}"]})
    builder.add_edge(START, "split")
    builder.add_edge("split", "left")
    builder.add_edge("split", "right")
    builder.add_conditional_edges("split", route, ["work"])
    builder.add_edge(["left", "right", "work"], "join")
    builder.add_edge("join", END)
    return builder.compile(checkpointer=saver)


async def test_parallel_branches_and_send_reload(harness: Harness) -> None:
    config = thread_config("fan")
    topics = [f"topic-{i}" for i in range(7)]
    async with harness.open() as saver:
        result = await harness.invoke(_fan_graph(saver), {"topics": topics}, config)
    expected_work = sorted(f"done:{t}" for t in topics)
    assert sorted(result["results"][:-1]) == expected_work
    assert result["results"][-1] == "joined:7"

    async with harness.open() as saver:
        graph = _fan_graph(saver)
        state = await harness.get_state(graph, config)
        assert state.values["left"] == "L"
        assert state.values["right"] == "R"
        assert sorted(state.values["results"][:-1]) == expected_work
        assert state.values["results"][-1] == "joined:7"
        history = await harness.history(graph, config)
        # The superstep after "split" ran left, right and 7 Sends together.
        fan_step = next(s for s in history if "work" in s.next)
        assert sorted(fan_step.next) == sorted(["left", "right"] + ["work"] * 7)
        # A second run on the same thread continues from the stored state.
        result = await harness.invoke(graph, {"topics": ["extra"]}, config)
        assert "done:extra" in result["results"]
        assert len(result["results"]) == 7 + 1 + 1 + 1


# ---------------------------------------------------------------- pending writes after an error


class SiblingState(TypedDict, total=False):
    good: str
    bad: str


async def test_pending_writes_survive_a_failed_sibling(harness: Harness) -> None:
    calls = {"good": 0, "bad": 0}
    fail = {"bad": True}

    def good(state: SiblingState) -> dict[str, Any]:
        calls["good"] += 1
        return {"good": "g"}

    def bad(state: SiblingState) -> dict[str, Any]:
        calls["bad"] += 1
        # Fail only after the sibling finished, so its writes exist to be kept
        # (LangGraph cancels siblings still running when a task raises).
        time.sleep(0.3)
        if fail["bad"]:
            raise RuntimeError("tool backend down")
        return {"bad": "b"}

    def graph_on(saver: Any) -> Any:
        builder = StateGraph(SiblingState)
        builder.add_node("good", good)
        builder.add_node("bad", bad)
        builder.add_edge(START, "good")
        builder.add_edge(START, "bad")
        builder.add_edge("good", END)
        builder.add_edge("bad", END)
        return builder.compile(checkpointer=saver)

    config = thread_config("siblings")
    async with harness.open() as saver:
        with pytest.raises(RuntimeError, match="tool backend down"):
            await harness.invoke(graph_on(saver), {"good": "", "bad": ""}, config)
    assert calls == {"good": 1, "bad": 1}

    async with harness.open() as saver:
        stored = await harness.get_tuple(saver, config)
        assert stored is not None
        assert ("good", "g") in [(channel, value) for _, channel, value in stored.pending_writes]
        state = await harness.get_state(graph_on(saver), config)
        errors = {t.name: t.error for t in state.tasks}
        assert "tool backend down" in repr(errors["bad"])

        fail["bad"] = False
        result = await harness.invoke(graph_on(saver), None, config)
        assert result == {"good": "g", "bad": "b"}
    assert calls == {"good": 1, "bad": 2}, "the successful sibling must not run again"

    async with harness.open() as saver:
        state = await harness.get_state(graph_on(saver), config)
        assert state.values == {"good": "g", "bad": "b"}
        assert state.next == ()


# ---------------------------------------------------------------- durability modes


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
async def test_durability_modes_store_what_langgraph_defines(
    harness: Harness, durability: str
) -> None:
    config = thread_config("t")

    def script(graph: Any) -> None:
        for turn in (1, 2, 3):
            graph.invoke(turn_input("t", turn), config, durability=durability)

    async with harness.open() as saver:
        graph = build_chat_graph(saver)
        for turn in (1, 2, 3):
            await harness.invoke(graph, turn_input("t", turn), config, durability=durability)

    async with harness.open() as saver:
        graph = build_chat_graph(saver)
        history = await harness.history(graph, config)
        assert _shape(history) == _oracle_history(script)
        assert len(history) == (3 if durability == "exit" else 15)
        assert history[0].values["turn"] == 3
        assert [m.content for m in history[0].values["messages"]][-1] == reply_text("t", 3)


# ---------------------------------------------------------------- DeltaChannel


def _extend(state: list[str], writes: Sequence[list[str]]) -> list[str]:
    out = list(state)
    for write in writes:
        out.extend(write)
    return out


class DeltaState(TypedDict, total=False):
    log: Annotated[list[str], DeltaChannel(_extend, snapshot_frequency=4)]
    turn: int


def _delta_graph(saver: Any) -> Any:
    builder = StateGraph(DeltaState)
    builder.add_node("first", lambda s: {"log": [f"t{s['turn']}-a"]})
    builder.add_node("second", lambda s: {"log": [f"t{s['turn']}-b"]})
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    builder.add_edge("second", END)
    return builder.compile(checkpointer=saver)


def _delta_expected(turns: int) -> list[str]:
    return [x for t in range(1, turns + 1) for x in (f"in{t}", f"t{t}-a", f"t{t}-b")]


async def test_delta_channel_state_survives_reload(harness: Harness) -> None:
    config = thread_config("delta")
    turns = 11  # several snapshot periods (snapshot_frequency=4) plus a partial one
    async with harness.open() as saver:
        graph = _delta_graph(saver)
        for turn in range(1, turns + 1):
            await harness.invoke(graph, {"log": [f"in{turn}"], "turn": turn}, config)

    async with harness.open() as saver:
        graph = _delta_graph(saver)
        state = await harness.get_state(graph, config)
        assert state.values["log"] == _delta_expected(turns)
        history = await harness.history(graph, config)
        # Every past checkpoint reconstructs to the prefix it had at the time.
        for snapshot in history:
            log = snapshot.values.get("log", [])
            assert log == _delta_expected(turns)[: len(log)]
        end_of_turn_5 = next(s for s in history if s.next == () and s.values.get("turn") == 5)
        past = await harness.get_state(graph, end_of_turn_5.config)
        assert past.values["log"] == _delta_expected(5)
        # Continue after reload: the delta chain keeps growing correctly.
        await harness.invoke(graph, {"log": [f"in{turns + 1}"], "turn": turns + 1}, config)

    async with harness.open() as saver:
        state = await harness.get_state(_delta_graph(saver), config)
        assert state.values["log"] == _delta_expected(turns + 1)


# ---------------------------------------------------------------- create_agent


@tool
def get_weather(city: str) -> str:
    """Weather for a city."""
    return f"sunny in {city}"


class ScriptedToolModel(GenericFakeChatModel):
    """A fake chat model that accepts tools and records how many messages it saw."""

    seen: list[int] = []  # noqa: RUF012  (pydantic field; each instance gets its own copy)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(len(messages))
        return super()._generate(messages, *args, **kwargs)


def _agent(saver: Any, replies: list[AIMessage]) -> tuple[Any, ScriptedToolModel]:
    from langchain.agents import create_agent

    model = ScriptedToolModel(messages=iter(replies))
    return create_agent(model, tools=[get_weather], checkpointer=saver), model


async def test_create_agent_tool_loop_persists_across_instances(harness: Harness) -> None:
    config = thread_config("agent")
    call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "call-1", "type": "tool_call"}
    async with harness.open() as saver:
        agent, model = _agent(
            saver, [AIMessage("", tool_calls=[call]), AIMessage("It is sunny in Paris.")]
        )
        await harness.invoke(agent, {"messages": [HumanMessage("Weather in Paris?")]}, config)
        assert model.seen == [1, 3]

    async with harness.open() as saver:
        agent, model = _agent(saver, [AIMessage("You asked about Paris.")])
        state = await harness.get_state(agent, config)
        messages = state.values["messages"]
        assert [type(m) for m in messages] == [HumanMessage, AIMessage, ToolMessage, AIMessage]
        assert messages[1].tool_calls[0]["args"] == {"city": "Paris"}
        assert messages[2].content == "sunny in Paris"
        assert messages[2].tool_call_id == "call-1"
        # The next turn on a new instance sees the whole stored conversation.
        await harness.invoke(agent, {"messages": [HumanMessage("What did I ask?")]}, config)
        assert model.seen == [5]

    async with harness.open() as saver:
        state = await harness.get_state(_agent(saver, [])[0], config)
        assert [m.content for m in state.values["messages"]][-2:] == [
            "What did I ask?",
            "You asked about Paris.",
        ]


# ---------------------------------------------------------------- small scalar values


class _Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class ScalarState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    count: int
    ratio: float
    done: bool
    note: str | None
    long_note: str
    big: int
    level: _Level


def _scalar_step(state: ScalarState) -> dict[str, Any]:
    count = state.get("count", 0) + 1
    return {
        "count": count,
        "ratio": count / 3,
        "done": count >= 2,
        "note": None if count == 1 else f"turn {count}",
        "long_note": "x" * 300 + str(count),  # over the inline limit: a value row
        "big": -(2**63) + count,  # near int64's edge: still inline
        "level": _Level.HIGH if count >= 2 else _Level.LOW,  # a subclass: a value row
        "messages": [AIMessage(f"step {count}")],
    }


async def test_scalar_values_round_trip_with_their_exact_types(harness: Harness) -> None:
    """Small scalars travel inline in the checkpoint body, the rest as value rows;
    a new instance reads both back with their exact types, in the latest state,
    the history and a past checkpoint."""
    builder = StateGraph(ScalarState)
    builder.add_node("step", _scalar_step)
    builder.add_edge(START, "step")
    builder.add_edge("step", END)
    config = thread_config("scalars")
    async with harness.open() as saver:
        graph = builder.compile(checkpointer=saver)
        for _ in range(2):
            await harness.invoke(graph, {"messages": [HumanMessage("go")]}, config)

    async with harness.open() as saver:
        graph = builder.compile(checkpointer=saver)
        state = await harness.get_state(graph, config)
        values = state.values
        assert values["count"] == 2 and type(values["count"]) is int
        assert values["ratio"] == 2 / 3 and type(values["ratio"]) is float
        assert values["done"] is True
        assert values["note"] == "turn 2"
        assert values["long_note"] == "x" * 300 + "2"
        assert values["big"] == -(2**63) + 2
        assert values["level"] is _Level.HIGH
        assert [m.content for m in values["messages"]] == ["go", "step 1", "go", "step 2"]
        history = await harness.history(graph, config)
        firsts = [s for s in history if s.values.get("count") == 1 and s.next == ()]
        assert len(firsts) == 1
        first = firsts[0].values
        assert first["note"] is None and "note" in first
        assert first["done"] is False and first["level"] is _Level.LOW
        past = await harness.get_state(graph, firsts[0].config)
        assert past.values["ratio"] == 1 / 3 and past.values["big"] == -(2**63) + 1
