"""AsyncSqliteSaver: task writes of durability="async" runs wait for their checkpoint.

Every test runs on a real SQLite file. ``other`` is a second saver (a sync
``SqliteSaver``) on the same file: it sees only what was committed, and its
calls block the event loop, so the 0.1 s timer cannot fire while it looks.
Each test checks first that the writes really were deferred (``other`` does
not see them), then that the operation under test stored them.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt

from langgraph_memory.errors import ThreadDeletedError
from langgraph_memory.session import AsyncSqliteSaver, SqliteSaver
from langgraph_memory.session._core import DURABILITY_CONFIG_KEY, RUNTIME_CONFIG_KEY
from langgraph_memory.session._deferred import DEFERRED_WRITES_MAX_DELAY

pytestmark = pytest.mark.timeout(60)

ERROR = "__error__"


@pytest.fixture
def path(tmp_path: Path) -> str:
    return str(tmp_path / "deferred.sqlite")


@pytest.fixture
async def saver(path: str) -> AsyncIterator[AsyncSqliteSaver]:
    async with AsyncSqliteSaver.from_conn_string(path) as opened:
        yield opened


@pytest.fixture
def other(path: str, saver: AsyncSqliteSaver) -> Iterator[SqliteSaver]:
    """A second saver on the same file (opened after ``saver`` set the schema up)."""
    with SqliteSaver.from_conn_string(path) as opened:
        yield opened


def in_run(config: Any, durability: str | None = "async") -> dict[str, Any]:
    """``config`` as LangGraph's loop passes it to the saver (a runtime, and the mode)."""
    configurable = {**config["configurable"], RUNTIME_CONFIG_KEY: object()}
    if durability is not None:
        configurable[DURABILITY_CONFIG_KEY] = durability
    return {"configurable": configurable}


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}


def stored_tasks(other: SqliteSaver, thread_id: str) -> set[str]:
    """Task ids of the pending writes ``other`` reads for the thread's latest checkpoint."""
    tup = other.get_tuple(cfg(thread_id))
    return set() if tup is None else {task_id for task_id, _, _ in tup.pending_writes}


async def first_put(saver: AsyncSqliteSaver, thread_id: str) -> Any:
    return await saver.aput(cfg(thread_id), empty_checkpoint(), {}, {})


# ------------------------------------------------------------------ direct calls


async def test_writes_wait_and_the_next_put_stores_them_in_its_transaction(
    saver: AsyncSqliteSaver, other: SqliteSaver
) -> None:
    stored = await first_put(saver, "t")
    await saver.aput_writes(in_run(stored), [("a", 1)], "task-1")
    await saver.aput_writes(in_run(stored), [("b", 2)], "task-2")
    assert stored_tasks(other, "t") == set()  # queued, not stored

    worker = saver._worker
    assert worker is not None
    hops: list[Any] = []

    async def counting(fn: Any, *args: Any) -> Any:
        hops.append(args[-1])  # the write factories of the hop
        return await worker(fn, *args)

    saver._worker = counting
    cp = empty_checkpoint()
    await saver.aput(stored, cp, {}, {})
    # one trip to aiosqlite's thread, one transaction: both writes, then the put
    assert [len(writes) for writes in hops] == [3]
    tup = other.get_tuple({"configurable": {**stored["configurable"]}})
    assert tup is not None
    assert [(t, c, v) for t, c, v in tup.pending_writes] == [
        ("task-1", "a", 1),
        ("task-2", "b", 2),
    ]
    assert other.get_tuple(cfg("t")).checkpoint["id"] == cp["id"]  # type: ignore[union-attr]


@pytest.mark.parametrize("read", ["aget_tuple", "alist", "astorage_stats", "adelta_history"])
async def test_every_read_stores_them_first(
    saver: AsyncSqliteSaver, other: SqliteSaver, read: str
) -> None:
    stored = await first_put(saver, "r")
    await saver.aput_writes(in_run(stored), [("a", 1)], "task-1")
    assert stored_tasks(other, "r") == set()
    if read == "aget_tuple":
        tup = await saver.aget_tuple(cfg("r"))
        assert tup is not None and [w[0] for w in tup.pending_writes] == ["task-1"]
    elif read == "alist":
        listed = [t async for t in saver.alist(cfg("r"))]
        assert [w[0] for w in listed[0].pending_writes] == ["task-1"]
    elif read == "astorage_stats":
        await saver.astorage_stats("r")
    else:
        await saver.aget_delta_channel_history(config=stored, channels=["a"])
    assert stored_tasks(other, "r") == {"task-1"}


async def test_other_writes_store_them_first(
    saver: AsyncSqliteSaver, other: SqliteSaver, caplog: pytest.LogCaptureFixture
) -> None:
    stored = await first_put(saver, "w")
    await saver.aput_writes(in_run(stored), [("a", 1)], "task-1")
    assert stored_tasks(other, "w") == set()
    await saver.aundelete_thread("unrelated")  # any write, on any thread
    assert stored_tasks(other, "w") == {"task-1"}
    # a delete of the thread stores them first, then deletes them: nothing to log
    await saver.aput_writes(in_run(stored), [("a", 2)], "task-2")
    with caplog.at_level(logging.WARNING, logger="langgraph_memory.session.aio"):
        await saver.adelete_thread("w")
    assert not caplog.records and other.get_tuple(cfg("w")) is None


async def test_timer_stores_them_when_nothing_else_happens(
    saver: AsyncSqliteSaver, other: SqliteSaver
) -> None:
    stored = await first_put(saver, "tm")
    await saver.aput_writes(in_run(stored), [("a", 1)], "task-1")
    queued_at = time.monotonic()
    assert stored_tasks(other, "tm") == set()
    while not stored_tasks(other, "tm"):
        assert time.monotonic() - queued_at < 0.5, "the timer did not store the writes"
        await asyncio.sleep(0.01)
    assert time.monotonic() - queued_at >= DEFERRED_WRITES_MAX_DELAY * 0.8


async def test_sync_mode_and_direct_calls_are_stored_before_returning(
    saver: AsyncSqliteSaver, other: SqliteSaver
) -> None:
    stored = await first_put(saver, "s")
    await saver.aput_writes(in_run(stored, durability="sync"), [("a", 1)], "sync-task")
    await saver.aput_writes(in_run(stored, durability="exit"), [("a", 1)], "exit-task")
    await saver.aput_writes(stored, [("a", 1)], "direct-task")
    assert stored_tasks(other, "s") == {"sync-task", "exit-task", "direct-task"}
    assert not saver._group.deferred


async def test_a_special_write_carries_the_queued_ones(
    saver: AsyncSqliteSaver, other: SqliteSaver
) -> None:
    stored = await first_put(saver, "sp")
    await saver.aput_writes(in_run(stored), [("a", 1)], "ok-task")
    assert stored_tasks(other, "sp") == set()
    await saver.aput_writes(in_run(stored), [(ERROR, "boom")], "failed-task")
    assert stored_tasks(other, "sp") == {"ok-task", "failed-task"}


async def test_clones_share_the_queue(path: str) -> None:
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    serde = JsonPlusSerializer(allowed_msgpack_modules=[("collections", "OrderedDict")])
    async with AsyncSqliteSaver.from_conn_string(path, serde=serde) as saver:
        clone = saver.with_allowlist([("langchain_core.messages.ai", "AIMessage")])
        assert clone is not saver and clone._group is saver._group
        stored = await first_put(saver, "cl")
        await clone.aput_writes(in_run(stored), [("a", 1)], "task-1")
        with SqliteSaver.from_conn_string(path) as other:
            assert stored_tasks(other, "cl") == set()
            tup = await saver.aget_tuple(cfg("cl"))
            assert tup is not None and [w[0] for w in tup.pending_writes] == ["task-1"]
            assert stored_tasks(other, "cl") == {"task-1"}


async def test_write_to_a_thread_deleted_meanwhile_is_logged_and_dropped(
    saver: AsyncSqliteSaver, other: SqliteSaver, path: str, caplog: pytest.LogCaptureFixture
) -> None:
    stored = await first_put(saver, "gone")
    kept = await first_put(saver, "kept")
    await saver.aput_writes(in_run(stored), [("a", 1)], "late-task")
    await saver.aput_writes(in_run(kept), [("a", 1)], "kept-task")
    other.delete_thread("gone")  # another process deletes the thread meanwhile
    with caplog.at_level(logging.WARNING, logger="langgraph_memory.session.aio"):
        # the put rides in the same batch as the doomed write and is not disturbed
        saved = await saver.aput(kept, empty_checkpoint(), {}, {})
    assert (
        saved["configurable"]["checkpoint_id"]
        == other.get_tuple(cfg("kept")).config[  # type: ignore[union-attr]
            "configurable"
        ]["checkpoint_id"]
    )
    tup = other.get_tuple({"configurable": {**kept["configurable"]}})
    assert tup is not None and [w[0] for w in tup.pending_writes] == ["kept-task"]
    [record] = [r for r in caplog.records if "dropped" in r.getMessage()]
    assert "'gone'" in record.getMessage() and "'late-task'" in record.getMessage()
    assert "ThreadDeleted" in type(record.args[3]).__name__  # type: ignore[index]
    # the thread stays deleted
    assert other.get_tuple(cfg("gone")) is None
    with sqlite3.connect(path) as conn:
        assert conn.execute(
            "SELECT count(*) FROM lgm_writes WHERE thread_id='gone'"
        ).fetchone() == (0,)
    late = {
        "configurable": {**cfg("gone")["configurable"], "checkpoint_ns": "", "checkpoint_id": "1"}
    }
    with pytest.raises(ThreadDeletedError):  # a put after a pre-delete checkpoint
        await saver.aput(late, empty_checkpoint(), {}, {})


async def test_timer_failure_is_logged_not_raised(
    saver: AsyncSqliteSaver, other: SqliteSaver, caplog: pytest.LogCaptureFixture
) -> None:
    stored = await first_put(saver, "gone2")
    await saver.aput_writes(in_run(stored), [("a", 1)], "late-task")
    other.delete_thread("gone2")
    with caplog.at_level(logging.WARNING, logger="langgraph_memory.session.aio"):
        await asyncio.sleep(DEFERRED_WRITES_MAX_DELAY * 3)
    assert any("'late-task'" in r.getMessage() for r in caplog.records)
    assert not saver._group.deferred and not saver._group.queue
    assert other.get_tuple(cfg("gone2")) is None


async def test_leaving_from_conn_string_stores_them(path: str) -> None:
    async with AsyncSqliteSaver.from_conn_string(path) as saver:
        stored = await first_put(saver, "c")
        await saver.aput_writes(in_run(stored), [("a", 1)], "task-1")
        assert saver._group.deferred
    assert saver._group.timer is None
    with SqliteSaver.from_conn_string(path) as other:
        assert stored_tasks(other, "c") == {"task-1"}


async def test_aclose_stores_them_and_leaves_a_passed_in_connection_open(path: str) -> None:
    import aiosqlite

    async with aiosqlite.connect(path, isolation_level=None) as conn:
        saver = AsyncSqliteSaver(conn)
        await saver.asetup()
        stored = await first_put(saver, "u")
        await saver.aput_writes(in_run(stored), [("a", 1)], "task-1")
        with SqliteSaver.from_conn_string(path) as other:
            assert stored_tasks(other, "u") == set()
            await saver.aclose()
            assert stored_tasks(other, "u") == {"task-1"}
        assert (await conn.execute_fetchall("SELECT 1")) == [(1,)]
        # after aclose a task write is stored before its call returns
        await saver.aput_writes(in_run(stored), [("a", 2)], "task-2")
        assert not saver._group.deferred


# ------------------------------------------------------------------ compiled graphs


def spy_deferrals(saver: AsyncSqliteSaver) -> list[str]:
    """Checkpoint ids of the task writes ``saver`` (and clones made after this
    call) deferred, one per ``aput_writes``."""
    deferred: list[str] = []
    defer = saver._defer

    def spying(prepared: Any) -> None:
        deferred.append(prepared.checkpoint_id)
        defer(prepared)

    saver._defer = spying  # type: ignore[method-assign]
    return deferred


def chat_graph(saver: Any) -> Any:
    def model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(f"reply {len(state['messages'])}")]}

    def tool(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("tool said hi")]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_node("tool", tool)
    builder.add_edge(START, "model")
    builder.add_edge("model", "tool")
    builder.add_edge("tool", END)
    return builder.compile(checkpointer=saver)


async def test_after_ainvoke_a_second_saver_sees_the_complete_state(
    saver: AsyncSqliteSaver, other: SqliteSaver
) -> None:
    deferred = spy_deferrals(saver)
    graph = chat_graph(saver)
    config = {"configurable": {"thread_id": "g"}}
    for turn in range(3):
        out = await graph.ainvoke({"messages": [HumanMessage(f"hi {turn}")]}, config)
        state = chat_graph(other).get_state(config)
        assert state.values["messages"] == out["messages"] and not state.next
    assert len(out["messages"]) == 9
    assert len(deferred) >= 6  # every node's writes waited for their checkpoint
    # ... and were stored with it: every step in the history has its task's writes
    tasks = [task for snap in chat_graph(other).get_state_history(config) for task in snap.tasks]
    assert len(tasks) == 9 and all(task.result is not None for task in tasks)


class Branches(TypedDict):
    a: str
    b: str


def branching_graph(saver: Any, second: Any, *, second_first: bool = False) -> Any:
    """Two parallel branches: "ok" writes ``a``; "second" runs ``second``. The one
    that goes last waits 0.05 s, so the other's writes come first (and the
    timer, 0.1 s, has not stored them yet when the last one writes)."""

    async def ok(state: Branches) -> dict[str, Any]:
        if second_first:
            await asyncio.sleep(0.05)
        return {"a": "done"}

    async def second_node(state: Branches) -> dict[str, Any]:
        if not second_first:
            await asyncio.sleep(0.05)
        return second(state)  # type: ignore[no-any-return]

    builder = StateGraph(Branches)
    builder.add_node("ok", ok)
    builder.add_node("second", second_node)
    builder.add_edge(START, "ok")
    builder.add_edge(START, "second")
    return builder.compile(checkpointer=saver)


async def test_errored_step_pending_writes_visible_to_a_second_saver_at_once(
    saver: AsyncSqliteSaver, other: SqliteSaver
) -> None:
    def boom(state: Branches) -> dict[str, Any]:
        raise ValueError("boom")

    deferred = spy_deferrals(saver)
    graph = branching_graph(saver, boom)
    config = {"configurable": {"thread_id": "e"}}
    with pytest.raises(ValueError, match="boom"):
        await graph.ainvoke({"a": "", "b": ""}, config)
    tup = other.get_tuple(config)
    assert tup is not None
    # "ok"'s writes were queued, and the error write carried them
    assert deferred.count(tup.config["configurable"]["checkpoint_id"]) == 1
    channels = {channel for _, channel, _ in tup.pending_writes}
    assert {"a", ERROR} <= channels
    state = branching_graph(other, boom).get_state(config)
    assert [t.name for t in state.tasks if t.error] == ["second"]


@pytest.mark.parametrize("interrupt_first", [False, True])
async def test_interrupted_step_pending_writes_visible_to_a_second_saver_at_once(
    saver: AsyncSqliteSaver, other: SqliteSaver, interrupt_first: bool
) -> None:
    def ask(state: Branches) -> dict[str, Any]:
        return {"b": interrupt("question?")}

    deferred = spy_deferrals(saver)
    graph = branching_graph(saver, ask, second_first=interrupt_first)
    config = {"configurable": {"thread_id": "i"}}
    await graph.ainvoke({"a": "", "b": ""}, config)
    tup = other.get_tuple(config)
    assert tup is not None
    step_writes_deferred = deferred.count(tup.config["configurable"]["checkpoint_id"])
    if interrupt_first:
        # no put follows this step: "ok"'s writes, coming after the interrupt,
        # are stored before its aput_writes returns
        assert step_writes_deferred == 0
    else:
        assert step_writes_deferred == 1  # queued, then carried by the interrupt write
    channels = {channel for _, channel, _ in tup.pending_writes}
    assert {"a", "__interrupt__"} <= channels
    state = branching_graph(other, ask).get_state(config)
    assert state.next == ("second",)
    assert [i.value for t in state.tasks for i in t.interrupts] == ["question?"]
    # resuming finishes the step and the run: everything visible to the second saver
    from langgraph.types import Command

    out = await graph.ainvoke(Command(resume="answer"), config)
    assert out == {"a": "done", "b": "answer"}
    assert branching_graph(other, ask).get_state(config).values == out
