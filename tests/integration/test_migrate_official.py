"""Migration from LangGraph's official savers (issue 17, part 1).

Each official database is written by the official saver itself, in the test
(sync SQLite, async SQLite, Postgres), with a subgraph, a pending interrupt,
a fork and a ``DeltaChannel``; after ``migrate_official`` our saver must give
the same ``get_state_history`` (values, next, config ids, metadata, parents,
tasks and interrupts), and resuming the interrupt must give the same result.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

from langgraph_memory import PostgresSaver, SqliteSaver
from langgraph_memory.errors import ConfigurationError, DatabaseConnectionError
from langgraph_memory.migrate import migrate_official, parents_first

pytestmark = pytest.mark.timeout(180)


def _extend(state: list[str], writes: Sequence[list[str]]) -> list[str]:
    return [*state, *(x for w in writes for x in w)]


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    log: Annotated[list[str], DeltaChannel(_extend, snapshot_frequency=3)]
    approved: str


class Inner(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]


def build(checkpointer: Any) -> Any:
    inner = StateGraph(Inner)
    inner.add_node("inner", lambda s: {"messages": [AIMessage(f"inner {len(s['messages'])}")]})
    inner.add_edge(START, "inner")
    inner.add_edge("inner", END)

    def agent(state: State) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(f"reply {n}")], "log": [f"agent{n}"]}

    def approve(state: State) -> dict[str, Any]:
        answer = interrupt({"question": "ok?", "seen": len(state["messages"])})
        return {"approved": str(answer), "log": [f"approved:{answer}"]}

    builder = StateGraph(State)
    builder.add_node("agent", agent)
    builder.add_node("sub", inner.compile())
    builder.add_node("approve", approve)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "sub")
    builder.add_edge("sub", "approve")
    builder.add_edge("approve", END)
    return builder.compile(checkpointer=checkpointer)


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def drive_sync(graph: Any) -> None:
    """Two finished turns, a fork, and a third turn left at its interrupt."""
    for thread in ("alpha", "beta"):
        for turn in range(2):
            graph.invoke(
                {"messages": [HumanMessage(f"{thread} {turn}")], "log": [f"in{turn}"]}, cfg(thread)
            )
            graph.invoke(Command(resume=f"yes{turn}"), cfg(thread))
        graph.invoke({"messages": [HumanMessage(f"{thread} last")]}, cfg(thread))
    history = list(graph.get_state_history(cfg("alpha")))
    fork = graph.update_state(history[5].config, {"messages": [HumanMessage("forked")]})
    graph.invoke(None, fork)


async def drive_async(graph: Any) -> None:
    for thread in ("alpha", "beta"):
        for turn in range(2):
            await graph.ainvoke(
                {"messages": [HumanMessage(f"{thread} {turn}")], "log": [f"in{turn}"]}, cfg(thread)
            )
            await graph.ainvoke(Command(resume=f"yes{turn}"), cfg(thread))
        await graph.ainvoke({"messages": [HumanMessage(f"{thread} last")]}, cfg(thread))
    history = [s async for s in graph.aget_state_history(cfg("alpha"))]
    fork = await graph.aupdate_state(history[5].config, {"messages": [HumanMessage("forked")]})
    await graph.ainvoke(None, fork)


def snapshot(graph: Any, thread: str) -> list[Any]:
    """Everything a user sees of a thread: its history and the subgraph state."""
    history = list(graph.get_state_history(cfg(thread)))
    return [*history, graph.get_state(cfg(thread), subgraphs=True)]


def resume_result(graph: Any, thread: str) -> Any:
    return graph.invoke(Command(resume="final"), cfg(thread))


def sqlite_fingerprint(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        rows = [
            repr(conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3").fetchall())
            for table in ("checkpoints", "writes")
        ]
    return hashlib.sha256("".join(rows).encode()).hexdigest()


def check_same(official_path_or_dsn: str, expected: dict[str, list[Any]], ours: Any) -> None:
    graph = build(ours)
    for thread, snapshots in expected.items():
        got = snapshot(graph, thread)
        assert len(got) == len(snapshots) > 10
        assert got == snapshots, thread
    # The pending interrupt carried over.
    state = graph.get_state(cfg("alpha"))
    assert state.next == ("approve",)
    assert state.interrupts and state.interrupts[0].value["question"] == "ok?"


# ------------------------------------------------------------------ SQLite, sync and async


@pytest.fixture
def official_sqlite(tmp_path: Path) -> tuple[Path, dict[str, list[Any]], dict[str, Any]]:
    from langgraph.checkpoint.sqlite import SqliteSaver as OfficialSaver

    path = tmp_path / "app.sqlite"
    with OfficialSaver.from_conn_string(str(path)) as official:
        graph = build(official)
        drive_sync(graph)
        expected = {t: snapshot(graph, t) for t in ("alpha", "beta")}
    # What resuming gives on the official saver (on a copy, so the source stays as written).
    copy = tmp_path / "copy.sqlite"
    with sqlite3.connect(path) as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
    with OfficialSaver.from_conn_string(str(copy)) as official:
        resumed = {t: resume_result(build(official), t) for t in ("alpha", "beta")}
    return path, expected, resumed


def test_sqlite_official_threads_migrate_with_identical_history(
    official_sqlite: tuple[Path, dict[str, list[Any]], dict[str, Any]],
) -> None:
    path, expected, resumed = official_sqlite
    before = sqlite_fingerprint(path)
    report = migrate_official(path, progress=False)
    assert (report.threads_seen, report.threads_copied, report.threads_skipped) == (2, 2, [])
    assert report.checkpoints > 20 and report.writes > 0
    assert sqlite_fingerprint(path) == before  # official tables untouched
    with SqliteSaver.from_conn_string(path) as ours:
        check_same(str(path), expected, ours)
        for thread, result in resumed.items():
            assert resume_result(build(ours), thread) == result


def test_sqlite_migration_is_idempotent_and_resumable(
    official_sqlite: tuple[Path, dict[str, list[Any]], dict[str, Any]],
) -> None:
    path, expected, _ = official_sqlite

    def stop_after_first(thread: str) -> None:
        raise KeyboardInterrupt  # the operator pressed Ctrl-C after one thread

    with pytest.raises(KeyboardInterrupt):
        migrate_official(path, progress=False, on_thread=stop_after_first)
    second = migrate_official(path, progress=False)
    assert (second.threads_already_done, second.threads_copied) == (1, 1)
    third = migrate_official(path, progress=False)
    assert (third.threads_already_done, third.threads_copied, third.checkpoints) == (2, 0, 0)
    with SqliteSaver.from_conn_string(path) as ours:
        check_same(str(path), expected, ours)
        # Copying one thread again stores nothing twice.
        with ours._connections.connection() as conn:
            ours_count = conn.execute("SELECT count(*) FROM lgm_checkpoints").fetchone()[0]
            official_count = conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
    assert ours_count == official_count > sum(len(s) - 1 for s in expected.values())


def test_sqlite_thread_already_in_ours_is_skipped(
    official_sqlite: tuple[Path, dict[str, list[Any]], dict[str, Any]], tmp_path: Path
) -> None:
    path, expected, _ = official_sqlite
    with SqliteSaver.from_conn_string(path) as ours:
        build(ours).invoke({"messages": [HumanMessage("ours first")]}, cfg("beta"))
    report = migrate_official(path, progress=False)
    assert report.threads_skipped == ["beta"] and report.threads_copied == 1
    with SqliteSaver.from_conn_string(path) as ours:
        assert snapshot(build(ours), "alpha") == expected["alpha"]
        beta = build(ours).get_state(cfg("beta"))
        assert beta.values["messages"][0].content == "ours first"


async def test_async_official_sqlite_migrates(tmp_path: Path) -> None:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver as OfficialAsyncSaver

    path = tmp_path / "async_app.sqlite"
    async with OfficialAsyncSaver.from_conn_string(str(path)) as official:
        graph = build(official)
        await drive_async(graph)
        expected = {}
        for thread in ("alpha", "beta"):
            history = [s async for s in graph.aget_state_history(cfg(thread))]
            expected[thread] = [*history, await graph.aget_state(cfg(thread), subgraphs=True)]
    report = migrate_official(str(path), progress=False)
    assert report.threads_copied == 2
    with SqliteSaver.from_conn_string(path) as ours:
        check_same(str(path), expected, ours)


def test_saver_warns_once_on_unmigrated_official_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver as OfficialSaver

    path = tmp_path / "app.sqlite"
    with OfficialSaver.from_conn_string(str(path)) as official:
        build(official).invoke({"messages": [HumanMessage("hi")]}, cfg("t"))
    with caplog.at_level(logging.WARNING), SqliteSaver.from_conn_string(path):
        pass
    warnings = [r for r in caplog.records if "langgraph-memory migrate" in r.getMessage()]
    assert len(warnings) == 1
    assert "checkpoints, writes" in warnings[0].getMessage()
    caplog.clear()
    with caplog.at_level(logging.WARNING), SqliteSaver.from_conn_string(path):
        pass  # our tables exist now: no second warning
    with caplog.at_level(logging.WARNING):
        migrate_official(path, progress=False)
    assert not [r for r in caplog.records if "langgraph-memory migrate" in r.getMessage()]


def test_fresh_file_gives_no_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING), SqliteSaver.from_conn_string(tmp_path / "new.sqlite"):
        pass
    assert not [r for r in caplog.records if "migrate" in r.getMessage()]


def test_migrate_bad_sources(tmp_path: Path) -> None:
    with pytest.raises(DatabaseConnectionError, match="no SQLite file at"):
        migrate_official(tmp_path / "missing.sqlite", progress=False)
    with SqliteSaver.from_conn_string(tmp_path / "ours.sqlite"):
        pass
    with pytest.raises(ConfigurationError, match="no official LangGraph checkpoints"):
        migrate_official(tmp_path / "ours.sqlite", progress=False)


def test_parents_first_orders_a_child_with_a_smaller_id_after_its_parent() -> None:
    from langgraph.checkpoint.base import CheckpointTuple, empty_checkpoint

    def tup(cid: str, parent: str | None) -> CheckpointTuple:
        checkpoint = empty_checkpoint()
        checkpoint["id"] = cid
        conf = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": cid}}
        parent_conf = (
            {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": parent}}
            if parent
            else None
        )
        return CheckpointTuple(conf, checkpoint, {}, parent_conf)  # type: ignore[arg-type]

    ordered = parents_first([tup("b", None), tup("a", "c"), tup("c", "b")])
    assert [t.checkpoint["id"] for t in ordered] == ["b", "c", "a"]


# ------------------------------------------------------------------ Postgres


@pytest.mark.postgres
def test_postgres_official_threads_migrate_with_identical_history(pg_dsn: str) -> None:
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver as OfficialPgSaver

    with OfficialPgSaver.from_conn_string(pg_dsn) as official:
        official.setup()
        graph = build(official)
        drive_sync(graph)
        expected = {t: snapshot(graph, t) for t in ("alpha", "beta")}

    def fingerprint() -> str:
        with psycopg.connect(pg_dsn) as conn:
            text = "".join(
                repr(conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2, 3, 4").fetchall())
                for t in ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
            )
        return hashlib.sha256(text.encode()).hexdigest()

    before = fingerprint()
    report = migrate_official(pg_dsn, progress=False)
    assert (report.threads_copied, report.threads_skipped) == (2, [])
    assert fingerprint() == before
    again = migrate_official(pg_dsn, progress=False)
    assert again.threads_already_done == 2 and again.checkpoints == 0
    with PostgresSaver.from_conn_string(pg_dsn) as ours:
        check_same(pg_dsn, expected, ours)


@pytest.mark.postgres
async def test_postgres_savers_warn_on_unmigrated_official_database(
    pg_dsn: str, caplog: pytest.LogCaptureFixture
) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver as OfficialPgSaver

    from langgraph_memory import AsyncPostgresSaver

    with OfficialPgSaver.from_conn_string(pg_dsn) as official:
        official.setup()
    with caplog.at_level(logging.WARNING):
        async with AsyncPostgresSaver.from_conn_string(pg_dsn, pool_size=1):
            pass
    warnings = [
        r.getMessage() for r in caplog.records if "langgraph-memory migrate" in r.getMessage()
    ]
    assert len(warnings) == 1 and "checkpoint_blobs" in warnings[0]
    caplog.clear()
    with caplog.at_level(logging.WARNING), PostgresSaver.from_conn_string(pg_dsn, pool_size=1):
        pass
    assert not [r for r in caplog.records if "langgraph-memory migrate" in r.getMessage()]
