"""SqliteSaver / AsyncSqliteSaver on real SQLite files, driven by compiled graphs.

Savers are opened fresh per test in ``tmp_path``. Tests that make sense for both
classes run against an async view of each (the sync saver through its ``a*``
methods, which is also how ``graph.ainvoke`` uses it).
"""

from __future__ import annotations

import asyncio
import enum
import os
import sqlite3
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import aiosqlite
import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, RemoveMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import add_messages

from langgraph_memory.config import RetentionPolicy
from langgraph_memory.errors import (
    ConfigurationError,
    InvalidConnectionError,
    InvalidFilterError,
    MigrationError,
    ThreadDeletedError,
)
from langgraph_memory.session import AsyncSqliteSaver, SqliteSaver
from langgraph_memory.session import _sql_sqlite as SQL
from langgraph_memory.session._core import Execute
from langgraph_memory.session.sqlite import commit_batch

pytestmark = pytest.mark.timeout(120)


def chat_graph(saver: Any) -> Any:
    def model(state: MessagesState) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(f"reply {n} " + "lorem ipsum " * 40)]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_edge(START, "model")
    builder.add_edge("model", END)
    return builder.compile(checkpointer=saver)


def cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


@pytest.fixture(params=["sync", "async"])
async def any_saver(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    path = str(tmp_path / "cp.sqlite")
    if request.param == "sync":
        with SqliteSaver.from_conn_string(path) as saver:
            yield saver
    else:
        async with AsyncSqliteSaver.from_conn_string(path) as saver:
            yield saver


# ------------------------------------------------------------------ graphs


async def test_graph_round_trip_and_history(any_saver: Any) -> None:
    graph = chat_graph(any_saver)
    for turn in range(6):
        out = await graph.ainvoke({"messages": [HumanMessage(f"q{turn}")]}, cfg("t1"))
    assert len(out["messages"]) == 12
    state = await graph.aget_state(cfg("t1"))
    assert [m.content for m in state.values["messages"]] == [m.content for m in out["messages"]]
    history = [s async for s in graph.aget_state_history(cfg("t1"))]
    assert [len(s.values.get("messages", [])) for s in history][:4] == [12, 11, 10, 10]
    # time travel: fork from an older checkpoint and continue there
    older = next(s for s in history if len(s.values.get("messages", [])) == 4)
    forked = await graph.ainvoke({"messages": [HumanMessage("fork")]}, older.config)
    assert [m.content for m in forked["messages"][:4]] == [
        m.content for m in older.values["messages"]
    ]
    assert len(forked["messages"]) == 6
    latest = await graph.aget_state(cfg("t1"))
    assert len(latest.values["messages"]) == 6


def test_one_sync_saver_serves_invoke_and_ainvoke(tmp_path: Path) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "both.sqlite")) as saver:
        graph = chat_graph(saver)
        graph.invoke({"messages": [HumanMessage("sync")]}, cfg("t"))
        out = asyncio.run(graph.ainvoke({"messages": [HumanMessage("async")]}, cfg("t")))
        assert [m.content for m in out["messages"]][::2] == ["sync", "async"]


async def test_remove_messages_and_edits_round_trip(any_saver: Any) -> None:
    def trim(state: MessagesState) -> dict[str, Any]:
        if len(state["messages"]) > 6:
            return {"messages": [RemoveMessage(id=m.id) for m in state["messages"][:2]]}
        return {}

    def model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(f"a{len(state['messages'])}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_node("trim", trim)
    builder.add_edge(START, "model")
    builder.add_edge("model", "trim")
    builder.add_edge("trim", END)
    graph = builder.compile(checkpointer=any_saver)
    for turn in range(8):
        out = await graph.ainvoke({"messages": [HumanMessage(f"q{turn}", id=f"q{turn}")]}, cfg("r"))
    # edit the first kept message in place via add_messages' replace-by-id
    first = out["messages"][0]
    await graph.aupdate_state(cfg("r"), {"messages": [HumanMessage("edited", id=first.id)]})
    state = await graph.aget_state(cfg("r"))
    assert state.values["messages"][0].content == "edited"
    assert [m.id for m in state.values["messages"]] == [m.id for m in out["messages"]]


class InnerState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


class DeltaState(TypedDict):
    items: Annotated[
        list[str],
        DeltaChannel(
            lambda acc, writes: acc + [w for ws in writes for w in ws], snapshot_frequency=3
        ),
    ]


def delta_graph(saver: Any) -> Any:
    def step(state: DeltaState) -> dict[str, Any]:
        return {"items": [f"i{len(state.get('items', []))}"]}

    builder = StateGraph(DeltaState)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    builder.add_edge("step", END)
    return builder.compile(checkpointer=saver)


async def test_delta_channel_reconstructs_and_survives_prune(any_saver: Any) -> None:
    graph = delta_graph(any_saver)
    for turn in range(10):
        out = await graph.ainvoke({"items": [f"in{turn}"]}, cfg("d"))
    expected = out["items"]
    assert len(expected) == 20
    state = await graph.aget_state(cfg("d"))
    assert state.values["items"] == expected
    await any_saver.aprune(["d"], strategy="keep_latest")
    state = await graph.aget_state(cfg("d"))
    assert state.values["items"] == expected
    out = await graph.ainvoke({"items": ["after"]}, cfg("d"))
    assert out["items"][:20] == expected and len(out["items"]) == 22


async def test_pending_writes_after_node_error_are_kept(any_saver: Any) -> None:
    calls = {"n": 0}

    class S(TypedDict):
        a: str
        b: str

    def ok(state: S) -> dict[str, Any]:
        calls["n"] += 1
        return {"a": "done"}

    def boom(state: S) -> dict[str, Any]:
        time.sleep(0.2)  # let "ok" finish first, so its writes are pending
        raise ValueError("boom")

    builder = StateGraph(S)
    builder.add_node("ok", ok)
    builder.add_node("boom", boom)
    builder.add_edge(START, "ok")
    builder.add_edge(START, "boom")
    graph = builder.compile(checkpointer=any_saver)
    with pytest.raises(ValueError, match="boom"):
        await graph.ainvoke({"a": "", "b": ""}, cfg("e"))
    tup = await any_saver.aget_tuple(cfg("e"))
    channels = {w[1] for w in tup.pending_writes}
    assert "a" in channels and "__error__" in channels
    # resuming reruns only the failed node: "ok" is not called again
    with pytest.raises(ValueError, match="boom"):
        await graph.ainvoke(None, cfg("e"))
    assert calls["n"] == 1


# ------------------------------------------------------------------ storage shape


def test_storage_grows_linearly_with_turns(tmp_path: Path) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "lin.sqlite")) as saver:
        graph = chat_graph(saver)
        sizes = []
        for turn in range(60):
            graph.invoke({"messages": [HumanMessage(f"question {turn}")]}, cfg("long"))
            if turn % 20 == 19:
                sizes.append(saver.storage_stats("long").threads[0].total_bytes)
        first, second, third = sizes[0], sizes[1] - sizes[0], sizes[2] - sizes[1]
        assert third <= 1.5 * first, sizes
        assert second <= 1.5 * first, sizes
        # the whole 60-turn thread is a few hundred KB, not tens of MB
        assert sizes[-1] < 400_000


async def test_list_is_lazy_pages_and_reentrant(any_saver: Any) -> None:
    graph = chat_graph(any_saver)
    for turn in range(70):  # 210 checkpoints: more than two list pages
        await graph.ainvoke({"messages": [HumanMessage(f"q{turn}")]}, cfg("l"))
    seen = 0
    async for tup in any_saver.alist(cfg("l")):
        # reading inside the loop must not deadlock
        again = await any_saver.aget_tuple(tup.config)
        assert again is not None and again.config == tup.config
        if seen % 50 == 0:
            assert tup.checkpoint["channel_values"] == again.checkpoint["channel_values"]
        seen += 1
    assert seen == 210
    limited = [t async for t in any_saver.alist(cfg("l"), limit=10)]
    assert len(limited) == 10
    ids = [t.config["configurable"]["checkpoint_id"] for t in limited]
    assert ids == sorted(ids, reverse=True)
    before = [t async for t in any_saver.alist(cfg("l"), before=limited[4].config, limit=3)]
    assert [t.config for t in before] == [t.config for t in limited[5:8]]
    loops = [t async for t in any_saver.alist(cfg("l"), filter={"source": "input"})]
    assert len(loops) == 70
    with pytest.raises(InvalidFilterError):
        [t async for t in any_saver.alist(cfg("l"), filter={"bad key": 1})]


def test_sync_list_reentrant_on_shared_memory_connection() -> None:
    with SqliteSaver.from_conn_string(":memory:") as saver:
        graph = chat_graph(saver)
        for turn in range(40):
            graph.invoke({"messages": [HumanMessage(f"q{turn}")]}, cfg("m"))
        n = 0
        for tup in saver.list(cfg("m")):
            assert saver.get_tuple(tup.config) is not None
            n += 1
        assert n == 120


# ------------------------------------------------------------------ deletion and tombstones


async def test_deleted_thread_stays_deleted_until_undeleted(any_saver: Any) -> None:
    graph = chat_graph(any_saver)
    await graph.ainvoke({"messages": [HumanMessage("hi")]}, cfg("gone"))
    stale = await any_saver.aget_tuple(cfg("gone"))
    await any_saver.adelete_thread("gone")
    assert await any_saver.aget_tuple(cfg("gone")) is None
    # a late put / put_writes (e.g. a run still in flight) must not resurrect it
    with pytest.raises(ThreadDeletedError, match="'gone'"):
        await any_saver.aput(stale.config, stale.checkpoint, stale.metadata, {})
    with pytest.raises(ThreadDeletedError):
        await any_saver.aput_writes(stale.config, [("x", 1)], "task")
    assert await any_saver.aget_tuple(cfg("gone")) is None
    await any_saver.aundelete_thread("gone")
    out = await graph.ainvoke({"messages": [HumanMessage("fresh")]}, cfg("gone"))
    assert next(m.content for m in out["messages"]) == "fresh"


def test_late_put_from_another_saver_on_the_same_file(tmp_path: Path) -> None:
    path = str(tmp_path / "two.sqlite")
    with SqliteSaver.from_conn_string(path) as a, SqliteSaver.from_conn_string(path) as b:
        graph_a = chat_graph(a)
        graph_a.invoke({"messages": [HumanMessage("hi")]}, cfg("x"))
        stale = a.get_tuple(cfg("x"))
        b.delete_thread("x")
        # A's in-flight run (a put after its parent) is refused ...
        with pytest.raises(ThreadDeletedError):
            a.put(stale.config, stale.checkpoint, stale.metadata, {})
        assert a.get_tuple(cfg("x")) is None
        assert a.storage_stats("x").threads == ()
        # ... and a new run on the id starts a fresh thread, seen by both savers.
        graph_a.invoke({"messages": [HumanMessage("late")]}, cfg("x"))
        state = b.get_tuple(cfg("x"))
        assert next(m.content for m in state.checkpoint["channel_values"]["messages"]) == "late"


async def test_copy_thread_and_delete_for_runs(any_saver: Any) -> None:
    graph = chat_graph(any_saver)
    for turn in range(3):
        # run_id in configurable lands in checkpoint metadata (as the LangGraph server does)
        run_cfg = {"configurable": {"thread_id": "src", "run_id": f"run-{turn}"}}
        await graph.ainvoke({"messages": [HumanMessage(f"q{turn}")]}, run_cfg)
    await any_saver.acopy_thread("src", "dst")
    src = await graph.aget_state(cfg("src"))
    dst = await graph.aget_state(cfg("dst"))
    assert dst.values == src.values
    await graph.ainvoke({"messages": [HumanMessage("only dst")]}, cfg("dst"))
    assert (await graph.aget_state(cfg("src"))).values == src.values
    with pytest.raises(ConfigurationError, match="already has checkpoints"):
        await any_saver.acopy_thread("src", "dst")
    # delete the last run of src: its checkpoints go, earlier ones stay readable
    last = [t async for t in any_saver.alist(cfg("src"), limit=1)][0]  # noqa: RUF015
    run_id = last.metadata["run_id"]
    assert run_id == "run-2"
    await any_saver.adelete_for_runs([run_id])
    remaining = [t async for t in any_saver.alist(cfg("src"))]
    assert remaining and all(t.metadata.get("run_id") != run_id for t in remaining)
    latest = await graph.aget_state(cfg("src"))
    assert len(latest.values["messages"]) == 4


# ------------------------------------------------------------------ retention


def test_keep_last_applied_incrementally(tmp_path: Path) -> None:
    policy = RetentionPolicy(keep_last=4, apply_every=5)
    with SqliteSaver.from_conn_string(str(tmp_path / "k.sqlite"), retention=policy) as saver:
        graph = chat_graph(saver)
        for turn in range(20):
            graph.invoke({"messages": [HumanMessage(f"q{turn}")]}, cfg("k"))
            count = saver.storage_stats("k").threads[0].checkpoints
            assert count <= 4 + 5
        state = graph.get_state(cfg("k"))
        assert len(state.values["messages"]) == 40
        assert [m.content for m in state.values["messages"]][::2] == [f"q{i}" for i in range(20)]


async def test_sweep_ttl_size_cap_dry_run_and_vacuum(tmp_path: Path) -> None:
    path = str(tmp_path / "s.sqlite")
    policy = RetentionPolicy(thread_ttl_seconds=0.5, keep_last=2)
    async with AsyncSqliteSaver.from_conn_string(path, retention=policy) as saver:
        graph = chat_graph(saver)
        for t in range(5):
            for turn in range(10):
                await graph.ainvoke({"messages": [HumanMessage(f"q{turn}")]}, cfg(f"old{t}"))
        await asyncio.sleep(0.6)
        await graph.ainvoke({"messages": [HumanMessage("fresh")]}, cfg("new"))
        dry = await saver.asweep(dry_run=True)
        assert dry.dry_run and set(dry.expired_threads) == {f"old{t}" for t in range(5)}
        assert len((await saver.astorage_stats()).threads) == 6
        report = await saver.asweep()
        assert set(report.deleted_threads) == {f"old{t}" for t in range(5)}
        stats = await saver.astorage_stats()
        assert [s.thread_id for s in stats.threads] == ["new"]
        assert stats.threads[0].checkpoints <= 2
        before = await saver.astorage_stats()
        assert before.free_bytes > 0  # deleted threads left free pages behind
        size_after = await saver.avacuum()
        assert size_after < before.database_bytes
        assert os.path.getsize(path) == size_after  # WAL folded back, file truncated
        assert (await saver.astorage_stats()).free_bytes == 0
        # An expired id is reusable: a new run on it starts a fresh thread.
        out = await graph.ainvoke({"messages": [HumanMessage("back")]}, cfg("old0"))
        assert next(m.content for m in out["messages"]) == "back"
    with SqliteSaver.from_conn_string(path, retention=RetentionPolicy(max_bytes=1)) as saver:
        graph = chat_graph(saver)
        graph.invoke({"messages": [HumanMessage("x")]}, cfg("newer"))
        report = saver.sweep()
        # old0 is live again since its new run above
        assert set(report.evicted_threads) == {"new", "newer", "old0"}


# ------------------------------------------------------------------ setup, connections


def test_setup_is_idempotent_and_concurrent_fresh_starts_succeed(tmp_path: Path) -> None:
    path = str(tmp_path / "fresh.sqlite")
    errors: list[BaseException] = []
    barrier = threading.Barrier(6)

    def start(i: int) -> None:
        try:
            barrier.wait()
            with SqliteSaver.from_conn_string(path) as saver:
                saver.setup()
                chat_graph(saver).invoke({"messages": [HumanMessage("hi")]}, cfg(f"t{i}"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM lgm_schema_migrations").fetchone()[0] == len(
        SQL.MIGRATIONS
    )
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "future.sqlite")
    with SqliteSaver.from_conn_string(path):
        pass
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO lgm_schema_migrations VALUES (999, 'from the future', 'x')")
    conn.commit()
    conn.close()
    with pytest.raises(MigrationError, match="999"), SqliteSaver.from_conn_string(path):
        pass


def test_user_connections_are_checked(tmp_path: Path) -> None:
    path = str(tmp_path / "user.sqlite")
    with pytest.raises(InvalidConnectionError, match="check_same_thread=False"):
        SqliteSaver(sqlite3.connect(path))
    with pytest.raises(InvalidConnectionError, match=r"sqlite3\.Connection"):
        SqliteSaver("not a connection")  # type: ignore[arg-type]
    busy = sqlite3.connect(path, check_same_thread=False)
    busy.execute("CREATE TABLE t(x)")
    busy.execute("INSERT INTO t VALUES (1)")  # legacy isolation: a transaction is now open
    with pytest.raises(InvalidConnectionError, match="open transaction"):
        SqliteSaver(busy)
    busy.commit()
    saver = SqliteSaver(busy)
    chat_graph(saver).invoke({"messages": [HumanMessage("hi")]}, cfg("u"))
    assert saver.get_tuple(cfg("u")) is not None
    saver.close()
    busy.execute("SELECT 1")  # a connection passed in stays open
    busy.close()


async def test_async_user_connections_are_checked(tmp_path: Path) -> None:
    conn = await aiosqlite.connect(str(tmp_path / "a.sqlite"))
    try:
        conn.row_factory = lambda cursor, row: dict(
            zip([c[0] for c in cursor.description], row, strict=True)
        )
        with pytest.raises(InvalidConnectionError, match="row_factory"):
            AsyncSqliteSaver(conn)
        conn.row_factory = None
        saver = AsyncSqliteSaver(conn)
        await saver.asetup()
        await chat_graph(saver).ainvoke({"messages": [HumanMessage("hi")]}, cfg("a"))
        assert await saver.aget_tuple(cfg("a")) is not None
    finally:
        await conn.close()
    with pytest.raises(InvalidConnectionError, match=r"aiosqlite\.Connection"):
        AsyncSqliteSaver(sqlite3.connect(":memory:"))  # type: ignore[arg-type]


async def test_bad_arguments_raise_typed_errors(any_saver: Any) -> None:
    with pytest.raises(ConfigurationError, match="strategy"):
        await any_saver.aprune(["t"], strategy="newest")
    with pytest.raises(ConfigurationError, match="thread_id"):
        await any_saver.aget_tuple({"configurable": {}})
    with pytest.raises(ConfigurationError, match="both"):
        await any_saver.acopy_thread("a", "a")


def test_sync_api_of_async_saver_from_another_thread(tmp_path: Path) -> None:
    async def main() -> None:
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "x.sqlite")) as saver:
            await chat_graph(saver).ainvoke({"messages": [HumanMessage("hi")]}, cfg("s"))
            found = await asyncio.to_thread(saver.get_tuple, cfg("s"))
            assert found is not None
            listed = await asyncio.to_thread(lambda: list(saver.list(cfg("s"))))
            assert len(listed) == 3
            with pytest.raises(asyncio.InvalidStateError):
                saver.get_tuple(cfg("s"))
            # the shared sync bridge also gives AsyncSqliteSaver a sync undelete_thread
            await saver.adelete_thread("s")
            await asyncio.to_thread(saver.undelete_thread, "s")
            await chat_graph(saver).ainvoke({"messages": [HumanMessage("again")]}, cfg("s"))

    asyncio.run(main())


def test_wal_and_busy_timeout_are_set(tmp_path: Path) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "p.sqlite")) as saver:
        with saver._connections.connection() as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
            assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        started = time.perf_counter()
        saver.setup()
        assert time.perf_counter() - started < 0.5  # idempotent, cheap


async def test_subgraph_namespaces_list_merged_newest_first(any_saver: Any) -> None:
    inner = StateGraph(InnerState)
    inner.add_node("inner_model", lambda s: {"messages": [AIMessage("inner")]})
    inner.add_edge(START, "inner_model")
    # checkpointer=True: the subgraph keeps its own checkpoints (its own namespace)
    sub = inner.compile(checkpointer=True)
    outer = StateGraph(MessagesState)
    outer.add_node("sub", sub)
    outer.add_edge(START, "sub")
    graph = outer.compile(checkpointer=any_saver)
    for turn in range(40):
        await graph.ainvoke({"messages": [HumanMessage(f"q{turn}")]}, cfg("sg"))
    everything = [t async for t in any_saver.alist(cfg("sg"))]
    namespaces = {t.config["configurable"]["checkpoint_ns"] for t in everything}
    assert "" in namespaces and len(namespaces) >= 2
    ids = [t.config["configurable"]["checkpoint_id"] for t in everything]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids)
    root_only = [
        t async for t in any_saver.alist({"configurable": {"thread_id": "sg", "checkpoint_ns": ""}})
    ]
    assert len(root_only) < len(everything) and len(everything) > 100  # more than one page
    state = await graph.aget_state(cfg("sg"))
    assert len(state.values["messages"]) == 80


def test_concurrent_writers_group_commit_isolates_failures(tmp_path: Path) -> None:
    """Many threads writing at once share commits; a tombstoned thread's write
    fails alone (the batch is rolled back and the others run again), every other
    write lands."""
    from langgraph.checkpoint.base import empty_checkpoint

    with SqliteSaver.from_conn_string(str(tmp_path / "g.sqlite")) as saver:
        dead = saver.put(
            {"configurable": {"thread_id": "dead", "checkpoint_ns": ""}}, empty_checkpoint(), {}, {}
        )
        saver.delete_thread("dead")
        errors: list[BaseException] = []
        refused: list[str] = []

        def writer(name: str) -> None:
            # "dead": a run in flight, its next put after its pre-delete parent.
            parent = (
                dead
                if name == "dead"
                else {"configurable": {"thread_id": name, "checkpoint_ns": ""}}
            )
            for i in range(15):
                cp = empty_checkpoint()
                cp["channel_values"] = {"n": i, "log": [f"{name}-{j}" for j in range(i + 1)]}
                cp["channel_versions"] = {"n": i + 1, "log": i + 1}
                try:
                    parent = saver.put(parent, cp, {"step": i}, {"n": i + 1, "log": i + 1})
                    saver.put_writes(parent, [("n", i)], f"task-{i}")
                except ThreadDeletedError:
                    refused.append(name)
                    return
                except BaseException as exc:
                    errors.append(exc)
                    return

        names = [f"w{i}" for i in range(12)] + ["dead"]
        threads = [threading.Thread(target=writer, args=(n,)) for n in names]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert refused == ["dead"]
        assert saver.get_tuple(cfg("dead")) is None
        for name in names[:-1]:
            tup = saver.get_tuple({"configurable": {"thread_id": name, "checkpoint_ns": ""}})
            assert tup is not None
            assert tup.checkpoint["channel_values"]["log"] == [f"{name}-{j}" for j in range(15)]
            assert tup.pending_writes == [("task-14", "n", 14)]


async def test_async_saver_statement_by_statement_fallback(tmp_path: Path) -> None:
    """Without aiosqlite's worker hook the async saver awaits each statement; same results."""
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "fb.sqlite")) as saver:
        saver._worker = None
        graph = chat_graph(saver)
        writes = [
            graph.ainvoke({"messages": [HumanMessage(f"q{i}")]}, cfg(f"f{i}")) for i in range(5)
        ]
        await asyncio.gather(*writes)
        for i in range(5):
            state = await graph.aget_state(cfg(f"f{i}"))
            assert state.values["messages"][0].content == f"q{i}"
        await saver.adelete_thread("f0")
        # A new run on the deleted id starts a fresh thread.
        out = await graph.ainvoke({"messages": [HumanMessage("late")]}, cfg("f0"))
        assert [m.content for m in out["messages"]][:1] == ["late"]
        assert len([t async for t in saver.alist(cfg("f1"))]) == 3


_PROCESS_SCRIPT = """
import sys, time
from langchain_core.messages import HumanMessage
from langgraph_memory.session import SqliteSaver
from tests.integration.test_sqlite_saver import chat_graph
path, name, start_at = sys.argv[1], sys.argv[2], float(sys.argv[3])
while time.time() < start_at:
    time.sleep(0.001)
with SqliteSaver.from_conn_string(path) as saver:
    graph = chat_graph(saver)
    for turn in range(5):
        graph.invoke({"messages": [HumanMessage(f"{name}-{turn}")]}, {"configurable": {"thread_id": name}})
print("ok")
"""


@pytest.mark.slow  # CI: test_session_stress.py's 5-start variant covers the same race
def test_processes_starting_together_on_a_fresh_file(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = str(tmp_path / "multi.sqlite")
    start_at = time.time() + 8.0  # every process imports first, then all start at once
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _PROCESS_SCRIPT, path, f"p{i}", str(start_at)],
            cwd=str(Path(__file__).resolve().parents[2]),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    results = [p.communicate(timeout=90) for p in procs]
    for (out, err), proc in zip(results, procs, strict=True):
        assert proc.returncode == 0, err
        assert "locked" not in err.lower()
        assert out.strip() == "ok"
    with SqliteSaver.from_conn_string(path) as saver:
        for i in range(4):
            state = chat_graph(saver).get_state(cfg(f"p{i}"))
            assert len(state.values["messages"]) == 10


async def test_async_group_commit_survives_cancelled_callers(tmp_path: Path) -> None:
    from langgraph.checkpoint.base import empty_checkpoint

    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "c.sqlite")) as saver:
        base = {"configurable": {"thread_id": "c", "checkpoint_ns": ""}}
        stored = await saver.aput(base, empty_checkpoint(), {}, {})
        tasks = [
            asyncio.ensure_future(saver.aput_writes(stored, [("ch", i)], f"task-{i}"))
            for i in range(12)
        ]
        await asyncio.sleep(0)
        for t in tasks[::3]:
            t.cancel()
        results = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 30)
        assert all(r is None or isinstance(r, asyncio.CancelledError) for r in results)
        tup = await asyncio.wait_for(saver.aget_tuple(stored), 30)
        # cancelling a caller does not undo a write already queued for commit
        assert {w[0] for w in tup.pending_writes} == {f"task-{i}" for i in range(12)}


def test_with_allowlist_clone_uses_its_serde_and_shares_the_commit_queue(tmp_path: Path) -> None:
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    serde = JsonPlusSerializer(allowed_msgpack_modules=[("collections", "OrderedDict")])
    with SqliteSaver.from_conn_string(str(tmp_path / "al.sqlite"), serde=serde) as saver:
        clone = saver.with_allowlist([("langchain_core.messages.ai", "AIMessage")])
        assert clone is not saver
        assert clone._core.serde is clone.serde and saver._core.serde is saver.serde
        assert clone._group is saver._group and clone._core.cache is saver._core.cache
        graph = chat_graph(saver)  # compile() itself asks for an allowlisted clone
        out = graph.invoke({"messages": [HumanMessage("hi")]}, cfg("al"))
        assert (
            saver.get_tuple(cfg("al")).checkpoint["channel_values"]["messages"] == out["messages"]
        )


def test_large_list_is_split_into_bounded_chunks_and_reads_back(tmp_path: Path) -> None:
    from langgraph.checkpoint.base import empty_checkpoint

    with SqliteSaver.from_conn_string(str(tmp_path / "big.sqlite"), cache_size=0) as saver:
        items = [f"item-{i}" for i in range(1300)]
        cp = empty_checkpoint()
        cp["channel_values"] = {"log": items}
        cp["channel_versions"] = {"log": "1"}
        base = {"configurable": {"thread_id": "big", "checkpoint_ns": ""}}
        stored = saver.put(base, cp, {}, {"log": "1"})
        # keep only the tail, as a summarising node would
        cp2 = empty_checkpoint()
        cp2["channel_values"] = {"log": items[1100:]}
        cp2["channel_versions"] = {"log": "2"}
        stored2 = saver.put(stored, cp2, {}, {"log": "2"})
        assert saver.get_tuple(stored).checkpoint["channel_values"]["log"] == items
        assert saver.get_tuple(stored2).checkpoint["channel_values"]["log"] == items[1100:]
        with saver._connections.connection() as conn:
            sizes = [
                hi - lo for lo, hi in conn.execute("SELECT seq_lo, seq_hi FROM lgm_channel_chunks")
            ]
        assert max(sizes) <= 512 and sum(sizes) == 1300 + 200  # no cache: v2 stored whole


def test_history_matches_in_memory_saver_with_compacted_chunks(tmp_path: Path) -> None:
    """Every checkpoint of a 45-turn thread reads back exactly as InMemorySaver's,
    while one-message chunks are merged into blocks (few rows per read)."""
    from langgraph.checkpoint.memory import InMemorySaver

    def run(saver: Any) -> list[list[tuple[str, Any]]]:
        graph = chat_graph(saver)
        for turn in range(45):
            graph.invoke({"messages": [HumanMessage(f"q{turn}", id=f"q{turn}")]}, cfg("h"))
        return [
            [(m.id, m.content) for m in s.values.get("messages", [])]
            for s in graph.get_state_history(cfg("h"))
        ]

    expected = run(InMemorySaver())
    with SqliteSaver.from_conn_string(str(tmp_path / "h.sqlite")) as saver:
        got = run(saver)
        with saver._connections.connection() as conn:
            chunks = conn.execute("SELECT COUNT(*) FROM lgm_channel_chunks").fetchone()[0]
    # AI message ids are random uuids: compare them by position, contents exactly
    assert [[c for _, c in v] for v in got] == [[c for _, c in v] for v in expected]
    assert len(got) == len(expected) > 100
    # 90 messages: two merged blocks of 32 plus the open block's small chunks, not 90 rows
    assert chunks <= 2 + 32


def _commit_counting_connection(path: Path) -> tuple[sqlite3.Connection, list[str]]:
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.execute("CREATE TABLE t (k TEXT PRIMARY KEY)")
    commits: list[str] = []
    conn.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
    return conn, commits


def _insert(key: str, runs: list[str]) -> Any:
    def factory() -> Any:
        runs.append(key)
        yield Execute("INSERT INTO t (k) VALUES (?)", (key,))
        return key

    return factory


def test_commit_batch_takes_late_writes_into_the_same_commit(tmp_path: Path) -> None:
    conn, commits = _commit_counting_connection(tmp_path / "late.sqlite")
    runs: list[str] = []
    late = [[_insert("b", runs), _insert("c", runs)], []]
    outcomes = commit_batch(conn, [_insert("a", runs)], lambda: late.pop(0))
    assert outcomes == [(True, "a"), (True, "b"), (True, "c")]
    assert len(commits) == 1
    assert [r[0] for r in conn.execute("SELECT k FROM t ORDER BY k")] == ["a", "b", "c"]


def test_commit_batch_failing_write_is_dropped_and_the_others_run_again(tmp_path: Path) -> None:
    conn, commits = _commit_counting_connection(tmp_path / "fail.sqlite")
    runs: list[str] = []

    def refused() -> Any:
        runs.append("x")
        yield Execute("INSERT INTO t (k) VALUES (?)", ("x",))
        raise ThreadDeletedError("thread 'x' was deleted")

    outcomes = commit_batch(conn, [_insert("a", runs), refused, _insert("b", runs)])
    assert outcomes[0] == (True, "a") and outcomes[2] == (True, "b")
    assert outcomes[1][0] is False and isinstance(outcomes[1][1], ThreadDeletedError)
    # one rolled-back attempt, then one commit without the failed write
    assert runs == ["a", "x", "a", "b"] and len(commits) == 1
    assert [r[0] for r in conn.execute("SELECT k FROM t ORDER BY k")] == ["a", "b"]
    assert not conn.in_transaction


def test_put_and_writes_refused_after_another_saver_deleted_the_thread(tmp_path: Path) -> None:
    """Saver A wrote the thread row a moment ago, so its next put lets the
    checkpoint insert check the tombstone; B (another connection, as another
    process would) deleted the thread meanwhile: nothing may come back."""
    from langgraph.checkpoint.base import empty_checkpoint

    path = str(tmp_path / "two.sqlite")
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    with SqliteSaver.from_conn_string(path) as a, SqliteSaver.from_conn_string(path) as b:
        saved = a.put(config, empty_checkpoint(), {}, {})
        b.delete_thread("t")
        late = empty_checkpoint()
        late["channel_values"] = {"n": 1}
        late["channel_versions"] = {"n": 1}
        with pytest.raises(ThreadDeletedError, match="'t'"):
            a.put(saved, late, {}, {"n": 1})
        with pytest.raises(ThreadDeletedError, match="'t'"):
            a.put_writes(saved, [("n", 2)], "task")
        assert list(b.list(config)) == []
        with sqlite3.connect(path) as raw:
            for table in ("lgm_checkpoints", "lgm_channel_values", "lgm_writes"):
                count = raw.execute(f"SELECT COUNT(*) FROM {table} WHERE thread_id = 't'")
                assert count.fetchone()[0] == 0, table


def test_list_version_stored_by_another_saver_first_is_kept(tmp_path: Path) -> None:
    """Two savers (two processes) put the same (channel, version) of a list with
    different items: the one-statement value insert reports which rows it stored,
    so the second keeps the first's list and stores no items of its own."""
    from langgraph.checkpoint.base import empty_checkpoint

    path = str(tmp_path / "race.sqlite")
    base = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    with SqliteSaver.from_conn_string(path) as a, SqliteSaver.from_conn_string(path) as b:
        for saver, text in ((a, "from a"), (b, "from b")):
            cp = empty_checkpoint()
            # "n" is a dict: a value row (small scalars travel inline in the body)
            cp["channel_values"] = {"messages": [HumanMessage(text, id=text)], "n": {"by": text}}
            cp["channel_versions"] = {"messages": "1", "n": "1"}
            saver.put(base, cp, {}, {"messages": "1", "n": "1"})
        for saver in (a, b):
            saver._core.cache.clear()
            latest = saver.get_tuple(base)
            assert latest is not None
            values = latest.checkpoint["channel_values"]
            assert [m.content for m in values["messages"]] == ["from a"]
            assert values["n"] == {"by": "from a"}
        with sqlite3.connect(path) as raw:
            assert raw.execute("SELECT COUNT(*) FROM lgm_channel_chunks").fetchone()[0] == 1


def test_new_version_without_value_stores_no_row_and_reads_as_absent(tmp_path: Path) -> None:
    """A consumed channel (new version, no value) stores no value row; a read
    leaves it out, as it does for the "empty" rows older versions wrote."""
    from langgraph.checkpoint.base import empty_checkpoint

    path = str(tmp_path / "empty.sqlite")
    base = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    with SqliteSaver.from_conn_string(path) as saver:
        # dict values: value rows (small scalars travel inline in the body)
        first = empty_checkpoint()
        first["channel_values"] = {"branch": {"to": "go"}, "n": {"n": 1}}
        first["channel_versions"] = {"branch": "1", "n": "1"}
        saved = saver.put(base, first, {}, {"branch": "1", "n": "1"})
        second = empty_checkpoint()
        second["channel_values"] = {"n": {"n": 1}}
        second["channel_versions"] = {"branch": "2", "n": "1", "old": "1"}
        latest = saver.put(saved, second, {}, {"branch": "2", "old": "1"})
        with sqlite3.connect(path) as raw:
            rows = raw.execute(
                "SELECT channel, version, encoding FROM lgm_channel_values ORDER BY 1, 2"
            ).fetchall()
            assert rows == [("branch", "1", "value"), ("n", "1", "value")]
            # a row an older release wrote for a version without a value
            raw.execute(
                "INSERT INTO lgm_channel_values (thread_id, checkpoint_ns, channel, version,"
                " encoding) VALUES ('t', '', 'old', '1', 'empty')"
            )
        for config, expected in (
            (saved, {"branch": {"to": "go"}, "n": {"n": 1}}),
            (latest, {"n": {"n": 1}}),
        ):
            got = saver.get_tuple(config)
            assert got is not None and got.checkpoint["channel_values"] == expected
        listed = [dict(t.checkpoint["channel_values"]) for t in saver.list(base)]
        assert listed == [{"n": {"n": 1}}, {"branch": {"to": "go"}, "n": {"n": 1}}]


def test_put_writes_again_is_idempotent_and_special_writes_replace(tmp_path: Path) -> None:
    from langgraph.checkpoint.base import empty_checkpoint

    with SqliteSaver.from_conn_string(str(tmp_path / "w.sqlite")) as saver:
        saved = saver.put(cfg("t"), empty_checkpoint(), {}, {})
        saver.put_writes(saved, [("a", 1), ("b", 2), ("c", 3)], "task")
        saver.put_writes(saved, [("a", 9), ("b", 9), ("c", 9)], "task")  # first write wins
        saver.put_writes(saved, [("__error__", "first")], "task")
        saver.put_writes(saved, [("__error__", "second")], "task")  # special writes replace
        latest = saver.get_tuple(saved)
        assert latest is not None
        assert latest.pending_writes == [
            ("task", "__error__", "second"),
            ("task", "a", 1),
            ("task", "b", 2),
            ("task", "c", 3),
        ]


async def test_async_concurrent_get_tuples_share_one_hop_and_fail_alone(tmp_path: Path) -> None:
    """Runs starting together ask for their checkpoints at once: one trip to
    aiosqlite's thread serves them all, each gets its own thread's checkpoint,
    and a bad config fails only its own call."""
    from langgraph.checkpoint.base import empty_checkpoint

    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "hop.sqlite")) as saver:
        for i in range(6):
            cp = empty_checkpoint()
            cp["channel_values"] = {"n": i}
            cp["channel_versions"] = {"n": 1}
            await saver.aput(
                {"configurable": {"thread_id": f"t{i}", "checkpoint_ns": ""}}, cp, {}, {"n": 1}
            )
        worker = saver._worker
        assert worker is not None
        hops: list[Any] = []

        async def counting(fn: Any, *args: Any) -> Any:
            hops.append(fn)
            return await worker(fn, *args)

        saver._worker = counting
        configs: list[Any] = [{"configurable": {"thread_id": f"t{i}"}} for i in range(6)]
        configs.insert(3, {"configurable": {"thread_id": 42.5}})  # not a usable thread id
        results = await asyncio.gather(
            *(saver.aget_tuple(c) for c in configs), return_exceptions=True
        )
        assert len(hops) == 1
        assert isinstance(results.pop(3), ConfigurationError)
        values = [r.checkpoint["channel_values"]["n"] for r in results]  # type: ignore[union-attr]
        assert values == list(range(6))


class _Level(enum.IntEnum):
    HIGH = 2


def _value_rows(path: str) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as raw:
        rows = raw.execute("SELECT channel, version FROM lgm_channel_values ORDER BY 1, 2")
        return [(str(ch), str(ver)) for ch, ver in rows]


def test_small_scalars_are_stored_in_the_checkpoint_not_as_value_rows(tmp_path: Path) -> None:
    """A chat turn's counters, flags and branch channels (None) add no value row;
    lists, dicts, long strings and subclasses of scalars still do."""
    from langgraph.checkpoint.base import empty_checkpoint

    path = str(tmp_path / "inline.sqlite")
    base = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    values: dict[str, Any] = {
        "messages": [HumanMessage("hi", id="1")],
        "turn": 3,
        "ratio": 0.5,
        "flag": False,
        "branch:to:model": None,
        "short": "ok",
        "long": "y" * 300,
        "dict": {"a": 1},
        "level": _Level.HIGH,  # an int subclass keeps its row (and its type)
    }
    with SqliteSaver.from_conn_string(path) as saver:
        cp = empty_checkpoint()
        cp["channel_values"] = values
        cp["channel_versions"] = {ch: "1" for ch in values}
        saved = saver.put(base, cp, {}, dict(cp["channel_versions"]))
        assert [ch for ch, _ in _value_rows(path)] == ["dict", "level", "long", "messages"]
        got = saver.get_tuple(saved)
        assert got is not None
        assert got.checkpoint["channel_values"] == values
        assert "lgm_inline" not in got.checkpoint
        assert type(got.checkpoint["channel_values"]["turn"]) is int
        listed = next(iter(saver.list(base)))
        assert dict(listed.checkpoint["channel_values"]) == values


def test_checkpoints_stored_before_inlining_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file written before scalars went inline: its value rows still read, and a
    newer checkpoint that keeps a channel's version carries the value itself."""
    from langgraph.checkpoint.base import empty_checkpoint

    from langgraph_memory.session import _core_writes

    path = str(tmp_path / "mixed.sqlite")
    base = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    with SqliteSaver.from_conn_string(path) as saver:
        monkeypatch.setattr(_core_writes, "is_inline_value", lambda value: False)  # the old format
        old = empty_checkpoint()
        old["channel_values"] = {"turn": 1, "note": "a"}
        old["channel_versions"] = {"turn": "1", "note": "1"}
        old_config = saver.put(base, old, {}, {"turn": "1", "note": "1"})
        assert _value_rows(path) == [("note", "1"), ("turn", "1")]
        monkeypatch.undo()
        new = empty_checkpoint()
        new["channel_values"] = {"turn": 1, "note": "b"}
        new["channel_versions"] = {"turn": "1", "note": "2"}
        new_config = saver.put(old_config, new, {}, {"note": "2"})
        assert _value_rows(path) == [("note", "1"), ("turn", "1")]  # nothing new as rows
    with SqliteSaver.from_conn_string(path) as reopened:
        for config, expected in (
            (old_config, {"turn": 1, "note": "a"}),
            (new_config, new["channel_values"]),
        ):
            got = reopened.get_tuple(config)
            assert got is not None and got.checkpoint["channel_values"] == expected
        reopened.prune(["t"], strategy="keep_latest")
        assert _value_rows(path) == []  # the old rows went with the old checkpoint
        got = reopened.get_tuple(base)
        assert got is not None and got.checkpoint["channel_values"] == {"turn": 1, "note": "b"}


def test_a_release_before_inline_values_refuses_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 3 marks the inline format: a release that does not know it (and
    would read checkpoints without their inline values) refuses the file."""
    path = str(tmp_path / "new.sqlite")
    with SqliteSaver.from_conn_string(path) as saver:
        saver.setup()
    monkeypatch.setattr(SQL, "MIGRATIONS", SQL.MIGRATIONS[:2])  # the previous release
    monkeypatch.setattr(SqliteSaver, "_MIGRATIONS", SQL.MIGRATIONS)
    with pytest.raises(MigrationError, match=r"\[3[],]"), SqliteSaver.from_conn_string(path) as s:
        s.setup()
