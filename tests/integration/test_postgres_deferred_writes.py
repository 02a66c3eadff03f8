"""Task writes that wait for their checkpoint, on the Postgres savers.

In LangGraph's ``durability="async"`` mode (its default) ``put_writes`` may
queue a task's regular writes and return; the next write through the saver
(normally the step's ``put``, in the same ``lgm_put_batch`` statement), any
read, ``close()``, a special write, or a 0.1 s timer stores them. Each test
reads through a SECOND saver on the same database (its own pool), so it sees
only what is committed, and where a test checks a flush the timer is pushed
out of the way, so only that flush can explain what the reader sees.
"""

from __future__ import annotations

import asyncio
import logging
import operator
import time
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import START, StateGraph
from langgraph.types import interrupt
from typing_extensions import TypedDict

from langgraph_memory.errors import ThreadDeletedError
from langgraph_memory.session import AsyncPostgresSaver, PostgresSaver
from langgraph_memory.session import postgres_aio as PG_AIO
from langgraph_memory.session._core import DURABILITY_CONFIG_KEY, RUNTIME_CONFIG_KEY

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(60)]

NEVER = 3600.0  # a timer delay that never fires within a test


# ------------------------------------------------------------------ helpers


def _put(saver: PostgresSaver, thread_id: str) -> RunnableConfig:
    """A new (empty) checkpoint on the thread; its config names it."""
    config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    return saver.put(config, empty_checkpoint(), {"source": "loop", "step": 0}, {})


async def _aput(saver: AsyncPostgresSaver, thread_id: str) -> RunnableConfig:
    config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    return await saver.aput(config, empty_checkpoint(), {"source": "loop", "step": 0}, {})


def _loop_config(saved: RunnableConfig, durability: str | None = None) -> RunnableConfig:
    """The config LangGraph's loop passes to put_writes (a runtime, maybe a mode)."""
    configurable: dict[str, Any] = {**saved["configurable"], RUNTIME_CONFIG_KEY: object()}
    if durability is not None:
        configurable[DURABILITY_CONFIG_KEY] = durability
    return {"configurable": configurable}


def _writes(reader: PostgresSaver, saved: RunnableConfig) -> list[tuple[str, str, Any]]:
    found = reader.get_tuple(saved)
    assert found is not None
    return list(found.pending_writes or [])


@pytest.fixture
def readers(pg_dsn: str) -> Iterator[PostgresSaver]:
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=2) as reader:
        yield reader


@pytest.fixture
def saver(pg_dsn: str, readers: PostgresSaver) -> Iterator[PostgresSaver]:
    """The saver under test, with its timer out of the way."""
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=4) as writer:
        writer._deferred.timer.max_delay = NEVER
        yield writer


@pytest.fixture
async def asaver(
    pg_dsn: str, readers: PostgresSaver, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[AsyncPostgresSaver]:
    monkeypatch.setattr(PG_AIO, "DEFERRED_WRITES_MAX_DELAY", NEVER)
    async with AsyncPostgresSaver.from_conn_string(pg_dsn, pool_size=4) as writer:
        yield writer


# ------------------------------------------------------------------ sync saver


def test_queued_writes_are_read_back_by_the_same_saver(
    saver: PostgresSaver, readers: PostgresSaver
) -> None:
    saved = _put(saver, "t1")
    saver.put_writes(_loop_config(saved), [("a", 1), ("b", 2)], "task-1")
    assert _writes(readers, saved) == []  # queued, not stored
    # reading another thread's checkpoint does not need them (nor store them)
    assert saver.get_tuple({"configurable": {"thread_id": "other"}}) is None
    assert _writes(readers, saved) == []
    # the latest checkpoint (one-statement read), then by id
    latest = saver.get_tuple({"configurable": {"thread_id": "t1"}})
    assert latest is not None
    assert latest.pending_writes == [("task-1", "a", 1), ("task-1", "b", 2)]
    assert len(_writes(readers, saved)) == 2  # the read stored them
    saver.put_writes(_loop_config(saved), [("c", 3)], "task-2")
    assert len(_writes(saver, saved)) == 3


@pytest.mark.parametrize("op", ["list", "storage_stats", "copy_thread", "delete_thread"])
def test_other_reads_and_writes_store_queued_writes_first(
    saver: PostgresSaver, readers: PostgresSaver, op: str
) -> None:
    saved = _put(saver, "t1")
    other = _put(saver, "t2")
    saver.put_writes(_loop_config(saved), [("a", 1)], "task-1")
    saver.put_writes(_loop_config(other), [("b", 2)], "task-2")
    assert _writes(readers, saved) == []
    if op == "list":
        listed = list(saver.list({"configurable": {"thread_id": "t1"}}))
        assert listed[0].pending_writes == [("task-1", "a", 1)]
    elif op == "storage_stats":
        saver.storage_stats("t1")
    elif op == "copy_thread":
        saver.copy_thread("t1", "t1-copy")
        copied = readers.get_tuple({"configurable": {"thread_id": "t1-copy"}})
        assert copied is not None and copied.pending_writes == [("task-1", "a", 1)]
    else:
        saver.delete_thread("t2")  # stores the queue first, then deletes t2's writes too
        assert readers.get_tuple(other) is None
    assert _writes(readers, saved) == [("task-1", "a", 1)]


def test_queued_writes_ride_in_the_next_put(saver: PostgresSaver, readers: PostgresSaver) -> None:
    saved = _put(saver, "t1")
    other = _put(saver, "t2")
    saver.put_writes(_loop_config(saved), [("a", 1)], "task-1")
    saver.put_writes(_loop_config(other), [("b", 2)], "task-2")
    assert _writes(readers, saved) == []
    nxt = saver.put(saved, empty_checkpoint(), {"source": "loop", "step": 1}, {})
    # every queued write went with that put, the other thread's too
    assert _writes(readers, saved) == [("task-1", "a", 1)]
    assert _writes(readers, other) == [("task-2", "b", 2)]
    assert readers.get_tuple(nxt) is not None


def test_the_timer_stores_queued_writes_when_nothing_follows(pg_dsn: str) -> None:
    with (
        PostgresSaver.from_conn_string(pg_dsn) as saver,
        PostgresSaver.from_conn_string(pg_dsn) as reader,
    ):
        saved = _put(saver, "t1")
        saver.put_writes(_loop_config(saved), [("a", 1)], "task-1")
        queued = time.monotonic()
        assert _writes(reader, saved) == []
        while not _writes(reader, saved):
            assert time.monotonic() - queued < 0.5
            time.sleep(0.01)


@pytest.mark.parametrize("durability", ["sync", "exit", None])
def test_sync_mode_and_direct_calls_are_stored_before_returning(
    saver: PostgresSaver, readers: PostgresSaver, durability: str | None
) -> None:
    saved = _put(saver, "t1")
    config = saved if durability is None else _loop_config(saved, durability)
    saver.put_writes(config, [("a", 1)], "task-1")
    assert _writes(readers, saved) == [("task-1", "a", 1)]


def test_a_special_write_carries_the_queued_ones(
    saver: PostgresSaver, readers: PostgresSaver
) -> None:
    saved = _put(saver, "t1")
    saver.put_writes(_loop_config(saved), [("a", 1)], "task-ok")
    saver.put_writes(_loop_config(saved), [("__error__", "boom")], "task-failed")
    assert sorted(c for _, c, _ in _writes(readers, saved)) == ["__error__", "a"]
    # and a regular write of that step arriving after it is not queued
    saver.put_writes(_loop_config(saved), [("b", 2)], "task-late")
    assert sorted(c for _, c, _ in _writes(readers, saved)) == ["__error__", "a", "b"]


def test_a_queued_write_to_a_deleted_thread_is_logged_and_dropped(
    saver: PostgresSaver, readers: PostgresSaver, caplog: pytest.LogCaptureFixture
) -> None:
    doomed = _put(saver, "doomed")
    kept = _put(saver, "kept")
    saver.put_writes(_loop_config(doomed), [("a", 1)], "task-doomed")
    saver.put_writes(_loop_config(kept), [("b", 2)], "task-kept")
    readers.delete_thread("doomed")  # another instance deletes it meanwhile
    with caplog.at_level(logging.WARNING, logger="langgraph_memory.session.postgres"):
        # the next put (of another thread) stores the queue and does not fail
        saver.put(kept, empty_checkpoint(), {"source": "loop", "step": 1}, {})
    dropped = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert len(dropped) == 1
    assert "'doomed'" in dropped[0] and "'task-doomed'" in dropped[0]
    assert _writes(readers, kept) == [("task-kept", "b", 2)]  # its batch still stored
    assert readers.get_tuple(doomed) is None  # stays deleted
    with pytest.raises(ThreadDeletedError):  # a put after a pre-delete checkpoint
        saver.put(doomed, empty_checkpoint(), {}, {})


def test_close_stores_queued_writes(pg_dsn: str, readers: PostgresSaver) -> None:
    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        saver._deferred.timer.max_delay = NEVER
        saved = _put(saver, "t1")
        saver.put_writes(_loop_config(saved), [("a", 1)], "task-1")
        assert _writes(readers, saved) == []
    assert _writes(readers, saved) == [("task-1", "a", 1)]


# ------------------------------------------------------------------ a real graph


class _State(TypedDict):
    log: Annotated[list[str], operator.add]


def _parallel_graph(checkpointer: Any, how: str, first: str = "ok") -> Any:
    """start -> (ok, bad) in parallel; ``bad`` raises or interrupts. The branch
    that is not ``first`` waits 0.05 s, so the other's writes reach the saver
    first: ok's queued write is carried by bad's, or comes after it."""

    def start(state: _State) -> dict[str, Any]:
        return {"log": ["start"]}

    def ok(state: _State) -> dict[str, Any]:
        if first == "bad":
            time.sleep(0.05)
        return {"log": ["ok"]}

    def bad(state: _State) -> dict[str, Any]:
        if first == "ok":
            time.sleep(0.05)
        if how == "error":
            raise ValueError("boom")
        answer = interrupt("continue?")
        return {"log": [f"bad:{answer}"]}

    builder = StateGraph(_State)
    builder.add_node("start", start)
    builder.add_node("ok", ok)
    builder.add_node("bad", bad)
    builder.add_edge(START, "start")
    builder.add_edge("start", "ok")
    builder.add_edge("start", "bad")
    return builder.compile(checkpointer=checkpointer)


class _CountingSaver(PostgresSaver):
    """Counts the queued writes each batch carried (to show the deferral happened)."""

    carried = 0

    def _store_with(self, batch: int, items: Any, call: Any) -> Any:
        type(self).carried += len(items)
        return super()._store_with(batch, items, call)


@pytest.mark.parametrize("first", ["ok", "bad"])
@pytest.mark.parametrize("how", ["error", "interrupt"])
def test_a_graph_run_leaves_its_failed_step_complete_for_another_saver(
    pg_dsn: str, readers: PostgresSaver, how: str, first: str
) -> None:
    config: RunnableConfig = {"configurable": {"thread_id": f"graph-{how}"}}
    _CountingSaver.carried = 0
    with _CountingSaver.from_conn_string(pg_dsn) as saver:
        saver._deferred.timer.max_delay = NEVER
        graph = _parallel_graph(saver, how, first)
        if how == "error":
            with pytest.raises(ValueError, match="boom"):
                graph.invoke({"log": []}, config)
        else:
            graph.invoke({"log": []}, config)
        # read while the saver is still open: no close() has stored anything
        state = _parallel_graph(readers, how).get_state(config)
        assert state.values["log"] == ["start", "ok"]  # ok's stored write applied
        task_writes = {t.name: t for t in state.tasks}
        assert set(task_writes) == {"ok", "bad"}
        if how == "error":
            assert "boom" in (task_writes["bad"].error or "")
        else:
            assert [i.value for i in state.interrupts] == ["continue?"]
        stored = readers.get_tuple(state.config)
        assert stored is not None
        channels = sorted(c for _, c, _ in stored.pending_writes or [])
        assert "log" in channels  # ok's regular write
        assert ("__error__" if how == "error" else "__interrupt__") in channels
        # the step of "start" had its write queued and carried by the next put
        assert _CountingSaver.carried >= 1
        if how == "interrupt":
            from langgraph.types import Command

            out = graph.invoke(Command(resume="yes"), config)
            assert sorted(out["log"]) == ["bad:yes", "ok", "start"]
            done = _parallel_graph(readers, how).get_state(config)
            assert sorted(done.values["log"]) == ["bad:yes", "ok", "start"]


def test_a_graph_run_in_default_mode_is_complete_for_another_saver(
    pg_dsn: str, readers: PostgresSaver
) -> None:
    from benchmarks._session_workload import build_chat_graph, thread_config, turn_input

    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        saver._deferred.timer.max_delay = NEVER
        graph = build_chat_graph(saver)
        for turn in (1, 2, 3):
            out = graph.invoke(turn_input("chat", turn), thread_config("chat"))
        mine = graph.get_state(thread_config("chat"))
        theirs = build_chat_graph(readers).get_state(thread_config("chat"))
        assert theirs.values == mine.values == out
        history = list(readers.list(thread_config("chat")))
        # each step's task writes are stored with the checkpoint that follows
        assert sum(len(t.pending_writes or []) for t in history) > 0


# ------------------------------------------------------------------ async saver


async def test_async_queued_writes_are_read_back_and_ride_in_the_next_put(
    asaver: AsyncPostgresSaver, readers: PostgresSaver
) -> None:
    saved = await _aput(asaver, "t1")
    await asaver.aput_writes(_loop_config(saved), [("a", 1)], "task-1")
    assert _writes(readers, saved) == []  # queued, not stored
    assert await asaver.aget_tuple({"configurable": {"thread_id": "other"}}) is None
    assert _writes(readers, saved) == []
    found = await asaver.aget_tuple({"configurable": {"thread_id": "t1"}})  # the latest
    assert found is not None and found.pending_writes == [("task-1", "a", 1)]
    assert _writes(readers, saved) == [("task-1", "a", 1)]
    await asaver.aput_writes(_loop_config(saved), [("c", 3)], "task-3")
    found = await asaver.aget_tuple(saved)  # by id
    assert found is not None and len(found.pending_writes or []) == 2

    other = await _aput(asaver, "t2")
    await asaver.aput_writes(_loop_config(other), [("b", 2)], "task-2")
    assert _writes(readers, other) == []
    await asaver.aput(other, empty_checkpoint(), {"source": "loop", "step": 1}, {})
    assert _writes(readers, other) == [("task-2", "b", 2)]


@pytest.mark.parametrize("op", ["alist", "astorage_stats", "acopy_thread", "adelete_thread"])
async def test_async_other_reads_and_writes_store_queued_writes_first(
    asaver: AsyncPostgresSaver, readers: PostgresSaver, op: str
) -> None:
    saved = await _aput(asaver, "t1")
    other = await _aput(asaver, "t2")
    await asaver.aput_writes(_loop_config(saved), [("a", 1)], "task-1")
    await asaver.aput_writes(_loop_config(other), [("b", 2)], "task-2")
    assert _writes(readers, saved) == []
    if op == "alist":
        listed = [t async for t in asaver.alist({"configurable": {"thread_id": "t1"}})]
        assert listed[0].pending_writes == [("task-1", "a", 1)]
    elif op == "astorage_stats":
        await asaver.astorage_stats("t1")
    elif op == "acopy_thread":
        await asaver.acopy_thread("t1", "t1-copy")
        copied = readers.get_tuple({"configurable": {"thread_id": "t1-copy"}})
        assert copied is not None and copied.pending_writes == [("task-1", "a", 1)]
    else:
        await asaver.adelete_thread("t2")
        assert readers.get_tuple(other) is None
    assert _writes(readers, saved) == [("task-1", "a", 1)]


async def test_async_timer_stores_queued_writes_when_nothing_follows(
    pg_dsn: str, readers: PostgresSaver
) -> None:
    async with AsyncPostgresSaver.from_conn_string(pg_dsn) as saver:
        saved = await _aput(saver, "t1")
        await saver.aput_writes(_loop_config(saved), [("a", 1)], "task-1")
        queued = time.monotonic()
        assert await asyncio.to_thread(_writes, readers, saved) == []
        while not await asyncio.to_thread(_writes, readers, saved):
            assert time.monotonic() - queued < 0.5
            await asyncio.sleep(0.01)


@pytest.mark.parametrize("durability", ["sync", "exit", None])
async def test_async_sync_mode_and_direct_calls_are_stored_before_returning(
    asaver: AsyncPostgresSaver, readers: PostgresSaver, durability: str | None
) -> None:
    saved = await _aput(asaver, "t1")
    config = saved if durability is None else _loop_config(saved, durability)
    await asaver.aput_writes(config, [("a", 1)], "task-1")
    assert _writes(readers, saved) == [("task-1", "a", 1)]


async def test_async_special_write_carries_the_queued_ones(
    asaver: AsyncPostgresSaver, readers: PostgresSaver
) -> None:
    saved = await _aput(asaver, "t1")
    await asaver.aput_writes(_loop_config(saved), [("a", 1)], "task-ok")
    await asaver.aput_writes(_loop_config(saved), [("__interrupt__", "stop")], "task-i")
    assert sorted(c for _, c, _ in _writes(readers, saved)) == ["__interrupt__", "a"]
    await asaver.aput_writes(_loop_config(saved), [("b", 2)], "task-late")
    assert sorted(c for _, c, _ in _writes(readers, saved)) == ["__interrupt__", "a", "b"]


async def test_async_queued_write_to_a_deleted_thread_is_logged_and_dropped(
    asaver: AsyncPostgresSaver, readers: PostgresSaver, caplog: pytest.LogCaptureFixture
) -> None:
    doomed = await _aput(asaver, "doomed")
    kept = await _aput(asaver, "kept")
    await asaver.aput_writes(_loop_config(doomed), [("a", 1)], "task-doomed")
    await asaver.aput_writes(_loop_config(kept), [("b", 2)], "task-kept")
    readers.delete_thread("doomed")
    with caplog.at_level(logging.WARNING, logger="langgraph_memory.session.postgres_aio"):
        await asaver.aput(kept, empty_checkpoint(), {"source": "loop", "step": 1}, {})
        await asaver.aget_tuple(kept)  # waits for the refused write's own attempt
    dropped = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert len(dropped) == 1
    assert "'doomed'" in dropped[0] and "'task-doomed'" in dropped[0]
    assert _writes(readers, kept) == [("task-kept", "b", 2)]
    assert readers.get_tuple(doomed) is None
    with pytest.raises(ThreadDeletedError):  # a put after a pre-delete checkpoint
        await asaver.aput(doomed, empty_checkpoint(), {}, {})


async def test_async_close_stores_queued_writes(
    pg_dsn: str, readers: PostgresSaver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(PG_AIO, "DEFERRED_WRITES_MAX_DELAY", NEVER)
    async with AsyncPostgresSaver.from_conn_string(pg_dsn) as saver:
        saved = await _aput(saver, "t1")
        await saver.aput_writes(_loop_config(saved), [("a", 1)], "task-1")
        assert _writes(readers, saved) == []
    assert _writes(readers, saved) == [("task-1", "a", 1)]


class _ACountingSaver(AsyncPostgresSaver):
    """Counts the task writes queued (to show the deferral happened)."""

    carried = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        defer = self._group_commit.defer

        def counting(item: Any) -> None:
            defer(item)
            type(self).carried += 1

        self._group_commit.defer = counting  # type: ignore[method-assign]


# Not ("error", "bad"): an async run cancels the step's other tasks when one raises.
@pytest.mark.parametrize(
    ("how", "first"), [("error", "ok"), ("interrupt", "ok"), ("interrupt", "bad")]
)
async def test_async_graph_run_leaves_its_failed_step_complete_for_another_saver(
    pg_dsn: str, readers: PostgresSaver, how: str, first: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(PG_AIO, "DEFERRED_WRITES_MAX_DELAY", NEVER)
    async with _ACountingSaver.from_conn_string(pg_dsn) as asaver:
        await _async_graph_run(asaver, readers, how, first)


async def _async_graph_run(
    asaver: AsyncPostgresSaver, readers: PostgresSaver, how: str, first: str
) -> None:
    config: RunnableConfig = {"configurable": {"thread_id": f"agraph-{how}"}}
    _ACountingSaver.carried = 0
    graph = _parallel_graph(asaver, how, first)
    if how == "error":
        with pytest.raises(ValueError, match="boom"):
            await graph.ainvoke({"log": []}, config)
    else:
        await graph.ainvoke({"log": []}, config)
    state = _parallel_graph(readers, how).get_state(config)
    assert state.values["log"] == ["start", "ok"]  # ok's stored write applied
    assert {t.name for t in state.tasks} == {"ok", "bad"}
    stored = readers.get_tuple(state.config)
    assert stored is not None
    channels = sorted(c for _, c, _ in stored.pending_writes or [])
    assert "log" in channels
    assert ("__error__" if how == "error" else "__interrupt__") in channels
    # "start"'s write was queued (and carried by the next put)
    assert _ACountingSaver.carried >= 1
