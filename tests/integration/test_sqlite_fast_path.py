"""SqliteSaver's one-statement writes (``lgm_write_rows``) and their fallbacks.

A put or put_writes in the common case is ONE ``INSERT`` into the view, its own
transaction; whenever an assumption of its rows fails (a list base removed, an
item number another saver took, a version stored first, a tombstone) the
triggers refuse it, nothing is kept, and the core's transaction stores it.
Every test here reads the result back through a second saver on the same
file, so a fallback that stored nothing or stored twice fails.
"""

from __future__ import annotations

import itertools
import sqlite3
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_memory.errors import ThreadDeletedError
from langgraph_memory.session import SqliteSaver
from langgraph_memory.session import _sql_sqlite as SQL
from langgraph_memory.session import sqlite as sqlite_shell

pytestmark = pytest.mark.timeout(120)

BASE = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}


def _checkpoint(messages: list[Any], version: int, **values: Any) -> tuple[Any, dict[str, Any]]:
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": messages, **values}
    versions = {"messages": f"{version:032}.0", **{k: f"{version:032}.0" for k in values}}
    cp["channel_versions"] = versions
    return cp, versions


def _messages(saver: SqliteSaver, config: Any) -> list[str]:
    saver._core.cache.clear()  # decode from the database, not this process's cache
    found = saver.get_tuple(config)
    assert found is not None
    return [m.content for m in found.checkpoint["channel_values"]["messages"]]


def _traced(conn: sqlite3.Connection) -> list[str]:
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    return statements


def test_put_and_put_writes_are_one_statement_each(tmp_path: Path) -> None:
    conn = sqlite3.connect(
        str(tmp_path / "one.sqlite"), isolation_level=None, check_same_thread=False
    )
    saver = SqliteSaver(conn)
    saver.setup()
    m1 = HumanMessage("hi", id="m1")
    cp, versions = _checkpoint([m1], 1, n=1)
    saved = saver.put(BASE, cp, {}, versions)
    traced = _traced(conn)
    cp2, versions2 = _checkpoint([m1, AIMessage("hello", id="m2")], 2, n=2)
    saved2 = saver.put(saved, cp2, {"step": 1}, versions2)
    saver.put_writes(saved2, [("n", 3), ("messages", [])], "task")
    conn.set_trace_callback(None)
    # SQLite reports the statement once per row its triggers handle; nothing else ran
    assert {s.split(" VALUES")[0] for s in traced} == {SQL.insert_write_rows(1).split(" VALUES")[0]}
    assert not any(s.startswith(("BEGIN", "COMMIT", "SELECT")) for s in traced)
    with SqliteSaver.from_conn_string(str(tmp_path / "one.sqlite")) as other:
        assert _messages(other, saved2) == ["hi", "hello"]
        latest = other.get_tuple(saved2)
        assert latest is not None
        assert latest.checkpoint["channel_values"]["n"] == 2
        assert latest.metadata == {"step": 1}
        assert [(w[1], w[2]) for w in latest.pending_writes] == [("n", 3), ("messages", [])]
    conn.close()


def test_item_numbers_another_saver_took_make_the_put_fall_back(tmp_path: Path) -> None:
    """A's cache expects the next message at item 1, but B (another process)
    appended there first: the statement is refused and the core numbers A's
    message after B's, so both versions read back as written."""
    path = str(tmp_path / "race.sqlite")
    with SqliteSaver.from_conn_string(path) as a, SqliteSaver.from_conn_string(path) as b:
        m1 = HumanMessage("first", id="m1")
        cp, versions = _checkpoint([m1], 1)
        saved = a.put(BASE, cp, {}, versions)
        assert b.get_tuple(saved) is not None  # b's cache now holds version 1
        cp_b, v_b = _checkpoint([m1, AIMessage("from b", id="b")], 2)
        from_b = b.put(saved, cp_b, {}, v_b)
        cp_a, v_a = _checkpoint([m1, AIMessage("from a", id="a")], 3)
        refused_before = _count_refusals(a, lambda: a.put(saved, cp_a, {}, v_a))
        from_a = {"configurable": {**BASE["configurable"], "checkpoint_id": cp_a["id"]}}
        assert refused_before == 1
        with SqliteSaver.from_conn_string(path) as reader:
            assert _messages(reader, from_b) == ["first", "from b"]
            assert _messages(reader, from_a) == ["first", "from a"]
        with sqlite3.connect(path) as raw:
            spans = raw.execute(
                "SELECT seq_lo, seq_hi FROM lgm_channel_chunks ORDER BY 1"
            ).fetchall()
        # A's message went after B's items, never over them
        assert all(hi == lo for (_, hi), (lo, _) in itertools.pairwise(spans)), spans
        # a now knows the next item number: its next append is one statement again
        cp_a2, v_a2 = _checkpoint([m1, cp_a["channel_values"]["messages"][1], HumanMessage("x")], 4)
        assert _count_refusals(a, lambda: a.put(from_a, cp_a2, {}, v_a2)) == 0


def test_removing_the_last_message_keeps_the_next_item_number(tmp_path: Path) -> None:
    """After a put that only removes items, this process still knows the next
    free item number (the removed item keeps its number), so the next append is
    one statement, not a refused guess."""
    with SqliteSaver.from_conn_string(str(tmp_path / "rm.sqlite")) as saver:
        m1, m2, m3 = HumanMessage("1", id="1"), AIMessage("2", id="2"), HumanMessage("3", id="3")
        config: Any = BASE
        for version, messages in enumerate(([m1], [m1, m2], [m1], [m1, m3]), start=1):
            cp, versions = _checkpoint(messages, version)
            put = partial(saver.put, config, cp, {}, versions)
            assert _count_refusals(saver, put) == 0, version
            config = {"configurable": {**BASE["configurable"], "checkpoint_id": cp["id"]}}
        assert _messages(saver, config) == ["1", "3"]


def test_a_removed_list_base_makes_the_put_store_the_whole_list(tmp_path: Path) -> None:
    path = str(tmp_path / "base.sqlite")
    with SqliteSaver.from_conn_string(path) as a, SqliteSaver.from_conn_string(path) as b:
        m1, m2 = HumanMessage("one", id="1"), AIMessage("two", id="2")
        cp, versions = _checkpoint([m1], 1)
        saved = a.put(BASE, cp, {}, versions)
        cp2, versions2 = _checkpoint([m1, m2], 2)
        b.get_tuple(saved)
        b_saved = b.put(saved, cp2, {}, versions2)
        b.prune(["t"], strategy="keep_latest")  # removes version 1, a's cached base
        cp3, versions3 = _checkpoint([m1, HumanMessage("three", id="3")], 3)
        assert _count_refusals(a, lambda: a.put(saved, cp3, {}, versions3)) == 1
        third = {"configurable": {**BASE["configurable"], "checkpoint_id": cp3["id"]}}
        with SqliteSaver.from_conn_string(path) as reader:
            assert _messages(reader, third) == ["one", "three"]
            assert _messages(reader, b_saved) == ["one", "two"]


def test_a_version_stored_first_by_another_saver_is_kept(tmp_path: Path) -> None:
    path = str(tmp_path / "first.sqlite")
    with SqliteSaver.from_conn_string(path) as a, SqliteSaver.from_conn_string(path) as b:
        for saver, text in ((a, "from a"), (b, "from b")):
            cp, versions = _checkpoint([HumanMessage(text, id=text)], 1)
            saver.put(BASE, cp, {}, versions)
        with sqlite3.connect(path) as raw:
            assert raw.execute("SELECT COUNT(*) FROM lgm_channel_chunks").fetchone()[0] == 1
        assert _messages(b, BASE) == ["from a"]


def test_tombstone_refuses_the_statement_and_the_core_raises(tmp_path: Path) -> None:
    path = str(tmp_path / "dead.sqlite")
    with SqliteSaver.from_conn_string(path) as a, SqliteSaver.from_conn_string(path) as b:
        cp, versions = _checkpoint([HumanMessage("x", id="x")], 1)
        saved = a.put(BASE, cp, {}, versions)
        b.delete_thread("t")
        cp2, versions2 = _checkpoint([HumanMessage("x", id="x"), AIMessage("late", id="y")], 2)
        with pytest.raises(ThreadDeletedError, match="'t'"):
            a.put(saved, cp2, {}, versions2)
        with pytest.raises(ThreadDeletedError, match="'t'"):
            a.put_writes(saved, [("n", 1)], "task")
        with sqlite3.connect(path) as raw:
            for table in (
                "lgm_checkpoints",
                "lgm_channel_values",
                "lgm_channel_chunks",
                "lgm_writes",
            ):
                count = raw.execute(f"SELECT COUNT(*) FROM {table} WHERE thread_id = 't'")
                assert count.fetchone()[0] == 0, table


def test_connection_with_implicit_transactions_commits_each_write(tmp_path: Path) -> None:
    """A connection opened with the default isolation_level: the rows go in an
    explicit BEGIN IMMEDIATE ... COMMIT, and no transaction is left open."""
    path = str(tmp_path / "legacy.sqlite")
    conn = sqlite3.connect(path, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    cp, versions = _checkpoint([HumanMessage("kept", id="k")], 1)
    saved = saver.put(BASE, cp, {}, versions)
    saver.put_writes(saved, [("n", 1)], "task")
    assert not conn.in_transaction
    with SqliteSaver.from_conn_string(path) as other:
        latest = other.get_tuple(saved)
        assert latest is not None and latest.pending_writes == [("task", "n", 1)]
        assert _messages(other, saved) == ["kept"]
    conn.close()


def test_more_rows_than_one_statement_takes_commit_together(tmp_path: Path) -> None:
    path = str(tmp_path / "many.sqlite")
    with SqliteSaver.from_conn_string(path) as saver:
        saved = saver.put(BASE, empty_checkpoint(), {}, {})
        writes = [(f"c{i}", i) for i in range(sqlite_shell.MAX_WRITE_ROWS * 2 + 7)]
        assert _count_refusals(saver, lambda: saver.put_writes(saved, writes, "task")) == 0
        latest = saver.get_tuple(saved)
        assert latest is not None
        assert sorted(w[2] for w in latest.pending_writes) == list(range(len(writes)))


def test_without_a_list_cache_lists_take_the_core_path_without_refusals(
    tmp_path: Path,
) -> None:
    """cache_size=0: no item number to assume, so a put with list items goes
    straight to the core (a guess of 0 would be refused on every later put)."""
    path = str(tmp_path / "nocache.sqlite")
    with SqliteSaver.from_conn_string(path, cache_size=0) as saver:
        messages: list[Any] = []
        config: Any = BASE
        for turn in range(1, 4):
            messages = [*messages, HumanMessage(f"m{turn}", id=f"m{turn}")]
            cp, versions = _checkpoint(messages, turn)
            put = partial(saver.put, config, cp, {}, versions)
            refused = _count_refusals(saver, put, tried=False)
            assert refused == 0
            config = {"configurable": {**BASE["configurable"], "checkpoint_id": cp["id"]}}
        assert _messages(saver, config) == ["m1", "m2", "m3"]


def _count_refusals(saver: SqliteSaver, action: Any, *, tried: bool = True) -> int:
    """Run ``action``; how many of its one-statement writes were refused. With
    ``tried``, it must have tried the one-statement path at least once."""
    refused = calls = 0
    original = sqlite_shell.insert_rows

    def counting(conn: sqlite3.Connection, rows: Any) -> None:
        nonlocal refused, calls
        calls += 1
        try:
            original(conn, rows)
        except sqlite3.Error as exc:
            refused += sqlite_shell.is_fast_path_refusal(exc)
            raise

    sqlite_shell.insert_rows = counting
    try:
        action()
    finally:
        sqlite_shell.insert_rows = original
    assert calls or not tried, "the one-statement path was not tried"
    return refused
