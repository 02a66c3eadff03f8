"""Deleting a thread, then reusing its id (issue 17): a new run starts a fresh
thread, and nothing of a run that began before the delete ever lands.

The rule (SQLite migration 5 / Postgres migration 7): a new run's first
checkpoint (root namespace, no parent) restarts a deleted thread and records
its id as ``reset_before``; later puts with an older parent, and writes to an
older checkpoint, are refused with ``ThreadDeletedError``. All four savers,
each on a fresh file or database.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from langgraph_memory.errors import ThreadDeletedError
from tests.integration._savers import Harness, factory_params, harness_for

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(params=factory_params())
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Harness:
    return harness_for(request, request.param, tmp_path)


class Chat(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def chat(saver: Any) -> Any:
    builder = StateGraph(Chat)
    builder.add_node("bot", lambda s: {"messages": [AIMessage(f"re: {s['messages'][-1].content}")]})
    builder.add_edge(START, "bot")
    return builder.compile(checkpointer=saver)


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


async def test_delete_then_new_run_starts_a_fresh_thread(harness: Harness) -> None:
    async with harness.open() as saver:
        graph = chat(saver)
        for text in ("one", "two"):
            await harness.invoke(graph, {"messages": [HumanMessage(text)]}, cfg("reset-me"))
        await harness.call(saver, "delete_thread", "reset-me")
        out = await harness.invoke(graph, {"messages": [HumanMessage("fresh")]}, cfg("reset-me"))
        assert [m.content for m in out["messages"]] == ["fresh", "re: fresh"]
        history = await harness.history(graph, cfg("reset-me"))
        assert len(history) == 3  # input, loop, bot: nothing of the old life
        assert history[-1].parent_config is None
    # Another instance sees the same fresh thread.
    async with harness.open() as saver:
        state = await harness.get_state(chat(saver), cfg("reset-me"))
        assert [m.content for m in state.values["messages"]] == ["fresh", "re: fresh"]
        # The thread is live again: it can be deleted and restarted again.
        await harness.call(saver, "delete_thread", "reset-me")
        out = await harness.invoke(
            chat(saver), {"messages": [HumanMessage("third")]}, cfg("reset-me")
        )
        assert [m.content for m in out["messages"]] == ["third", "re: third"]


async def test_run_in_flight_stays_refused_after_the_restart(harness: Harness) -> None:
    async with harness.open() as saver:
        graph = chat(saver)
        await harness.invoke(graph, {"messages": [HumanMessage("old")]}, cfg("t"))
        stale = await harness.get_tuple(saver, cfg("t"))  # what a run in flight holds
        await harness.call(saver, "delete_thread", "t")
        # Before any restart: refused, as always.
        with pytest.raises(ThreadDeletedError, match="'t'"):
            await harness.call(saver, "put", stale.config, stale.checkpoint, stale.metadata, {})
        await harness.invoke(graph, {"messages": [HumanMessage("new")]}, cfg("t"))
        # After the restart: the old run's next put (its parent is from before the
        # delete, even with a brand-new checkpoint id) and its writes are refused.
        late = empty_checkpoint()
        late["channel_values"] = {"messages": [HumanMessage("late")]}
        late["channel_versions"] = {"messages": "99"}
        with pytest.raises(ThreadDeletedError, match="'t'"):
            await harness.call(saver, "put", stale.config, late, {"step": 9}, {"messages": "99"})
        with pytest.raises(ThreadDeletedError, match="deleted after checkpoint"):
            await harness.call(saver, "put_writes", stale.config, [("messages", [])], "late-task")
        state = await harness.get_state(graph, cfg("t"))
        assert [m.content for m in state.values["messages"]] == ["new", "re: new"]
        assert state.tasks == ()
        # The new life's own writes and puts go on as usual.
        await harness.invoke(graph, {"messages": [HumanMessage("more")]}, cfg("t"))
        state = await harness.get_state(graph, cfg("t"))
        assert [m.content for m in state.values["messages"]][-1] == "re: more"


async def test_only_a_root_put_without_parent_restarts(harness: Harness) -> None:
    async with harness.open() as saver:
        await harness.invoke(chat(saver), {"messages": [HumanMessage("x")]}, cfg("sub"))
        await harness.call(saver, "delete_thread", "sub")
        # A subgraph's first checkpoint has no parent either, but it belongs to a
        # run already in progress: it never restarts the thread.
        nested = {"configurable": {"thread_id": "sub", "checkpoint_ns": "child:1"}}
        with pytest.raises(ThreadDeletedError):
            await harness.call(saver, "put", nested, empty_checkpoint(), {}, {})
        assert await harness.get_tuple(saver, cfg("sub")) is None
        assert await harness.list(saver, cfg("sub")) == []
