"""SqliteSaver: task writes that wait for their checkpoint (LangGraph's durability="async").

In that mode a task's regular writes are queued and stored by the next write
(normally the step's ``put``, in the same statement), before any read, by
``close()``, or by a timer. Everything else is stored before ``put_writes``
returns. Each test looks at the file through a plain ``sqlite3`` connection
(what another process would see), so a deferral that stores early, or a flush
that never stores, fails.
"""

from __future__ import annotations

import logging
import operator
import sqlite3
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.checkpoint.base import ERROR, empty_checkpoint
from langgraph.graph import END, START, StateGraph

from langgraph_memory.session import SqliteSaver
from langgraph_memory.session import _core as core
from langgraph_memory.session import sqlite as sqlite_shell

pytestmark = pytest.mark.timeout(120)

THREAD = "t"
# What LangGraph's loop passes (CONFIG_KEY_RUNTIME); the value is not read.
LOOP = {core.RUNTIME_CONFIG_KEY: object()}


def _loop_config(checkpoint_id: str, **extra: Any) -> dict[str, Any]:
    configurable = {"thread_id": THREAD, "checkpoint_ns": "", "checkpoint_id": checkpoint_id}
    return {"configurable": {**configurable, **LOOP, **extra}}


def _stored_writes(path: Path) -> list[tuple[str, str]]:
    """(task_id, channel) of every stored pending write, as another process sees them."""
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT task_id, channel FROM lgm_writes ORDER BY task_id, idx")
        return [tuple(row) for row in rows]


def _first_put(saver: SqliteSaver) -> str:
    config = {"configurable": {"thread_id": THREAD, "checkpoint_ns": ""}}
    saved = saver.put(config, empty_checkpoint(), {}, {})
    return str(saved["configurable"]["checkpoint_id"])


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "deferred.sqlite"


@pytest.fixture
def saver(path: Path) -> Any:
    with SqliteSaver.from_conn_string(str(path)) as opened:
        # No timer during a test unless it asks for one: what is stored early is then
        # stored by the code under test, not by a deadline on a slow machine.
        opened._group.timer.max_delay = 60.0
        yield opened


def test_loop_writes_wait_until_the_next_read(saver: SqliteSaver, path: Path) -> None:
    checkpoint_id = _first_put(saver)
    saver.put_writes(_loop_config(checkpoint_id), [("a", 1), ("b", 2)], "task-1")
    assert _stored_writes(path) == []  # queued, not stored

    found = saver.get_tuple(_loop_config(checkpoint_id))  # read-your-writes
    assert found is not None
    assert [(t, c, v) for t, c, v in found.pending_writes] == [
        ("task-1", "a", 1),
        ("task-1", "b", 2),
    ]
    assert _stored_writes(path) == [("task-1", "a"), ("task-1", "b")]


def test_the_next_put_stores_the_queued_writes_in_its_statement(
    saver: SqliteSaver, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    statements: list[int] = []
    insert_rows = sqlite_shell.insert_rows

    def counting(conn: sqlite3.Connection, rows: Any) -> None:
        statements.append(len(rows))
        insert_rows(conn, rows)

    monkeypatch.setattr(sqlite_shell, "insert_rows", counting)
    checkpoint_id = _first_put(saver)
    statements.clear()
    saver.put_writes(_loop_config(checkpoint_id), [("a", 1)], "task-1")
    saver.put_writes(_loop_config(checkpoint_id), [("b", 2)], "task-2")
    config = {
        "configurable": {"thread_id": THREAD, "checkpoint_ns": "", "checkpoint_id": checkpoint_id}
    }
    saver.put(config, empty_checkpoint(), {}, {})

    assert len(statements) == 1  # two task writes and the checkpoint: one INSERT
    assert _stored_writes(path) == [("task-1", "a"), ("task-2", "b")]


def test_the_timer_stores_writes_nothing_else_stores(saver: SqliteSaver, path: Path) -> None:
    checkpoint_id = _first_put(saver)
    saver._group.timer.max_delay = 0.1
    saver.put_writes(_loop_config(checkpoint_id), [("a", 1)], "task-1")
    deadline = time.monotonic() + 10
    while not _stored_writes(path) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _stored_writes(path) == [("task-1", "a")]


@pytest.mark.parametrize(
    "extra",
    [{core.DURABILITY_CONFIG_KEY: "sync"}, {core.RUNTIME_CONFIG_KEY: None, "drop_runtime": True}],
    ids=["durability-sync", "direct-call"],
)
def test_sync_mode_and_direct_calls_are_stored_before_returning(
    saver: SqliteSaver, path: Path, extra: dict[str, Any]
) -> None:
    checkpoint_id = _first_put(saver)
    config = _loop_config(checkpoint_id, **extra)
    if config["configurable"].pop("drop_runtime", False):
        del config["configurable"][core.RUNTIME_CONFIG_KEY]
    saver.put_writes(config, [("a", 1)], "task-1")
    assert _stored_writes(path) == [("task-1", "a")]


def test_a_special_write_stores_the_queued_ones_with_it(saver: SqliteSaver, path: Path) -> None:
    checkpoint_id = _first_put(saver)
    saver.put_writes(_loop_config(checkpoint_id), [("a", 1)], "task-1")
    saver.put_writes(_loop_config(checkpoint_id), [(ERROR, ValueError("boom"))], "task-2")
    assert _stored_writes(path) == [("task-1", "a"), ("task-2", ERROR)]


def test_a_write_prepared_before_its_step_ended_is_stored_when_it_queues(
    saver: SqliteSaver, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race a sibling task can lose: its write is prepared (may wait) just
    before the failing task's error write marks the step and stores the queue,
    and reaches the queue only after that. It must not wait for the timer."""
    checkpoint_id = _first_put(saver)
    prepare = saver._core.prepare_writes

    def prepared_then_error_lands(*args: Any, **kwargs: Any) -> Any:
        prepared = prepare(*args, **kwargs)
        assert prepared.may_wait
        monkeypatch.setattr(saver._core, "prepare_writes", prepare)
        saver.put_writes(_loop_config(checkpoint_id), [(ERROR, ValueError("boom"))], "task-2")
        return prepared

    monkeypatch.setattr(saver._core, "prepare_writes", prepared_then_error_lands)
    saver.put_writes(_loop_config(checkpoint_id), [("a", 1)], "task-1")
    assert _stored_writes(path) == [("task-1", "a"), ("task-2", ERROR)]


def test_close_stores_queued_writes(path: Path) -> None:
    with SqliteSaver.from_conn_string(str(path)) as saver:
        saver._group.timer.max_delay = 60.0
        checkpoint_id = _first_put(saver)
        saver.put_writes(_loop_config(checkpoint_id), [("a", 1)], "task-1")
        assert _stored_writes(path) == []
    assert _stored_writes(path) == [("task-1", "a")]


def test_writes_queued_for_a_thread_deleted_meanwhile_are_dropped_and_logged(
    saver: SqliteSaver, path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    checkpoint_id = _first_put(saver)
    saver.put_writes(_loop_config(checkpoint_id), [("a", 1)], "task-1")
    with SqliteSaver.from_conn_string(str(path)) as other:  # another process deletes it
        other.delete_thread(THREAD)

    with caplog.at_level(logging.WARNING, logger=sqlite_shell.__name__):
        assert saver.get_tuple({"configurable": {"thread_id": THREAD}}) is None
    assert "task_id='task-1'" in caplog.text and "dropped" in caplog.text
    assert _stored_writes(path) == []  # the deleted thread stays deleted


# ---------------------------------------------------------------- a compiled graph


class _Fan(TypedDict):
    log: Annotated[list[str], operator.add]


def _fan_out_graph(saver: SqliteSaver, *, broken_first: bool = False) -> Any:
    """start -> (ok, broken) in parallel; ``broken`` raises after ``ok`` has written
    (or, with ``broken_first``, before)."""

    def ok(_: _Fan) -> dict[str, Any]:
        if broken_first:
            time.sleep(0.05)
        return {"log": ["ok"]}

    def broken(_: _Fan) -> dict[str, Any]:
        if not broken_first:
            time.sleep(0.05)  # let ``ok`` finish (and its writes queue) first
        raise RuntimeError("broken node")

    builder = StateGraph(_Fan)
    builder.add_node("ok", ok)
    builder.add_node("broken", broken)
    builder.add_edge(START, "ok")
    builder.add_edge(START, "broken")
    builder.add_edge("ok", END)
    builder.add_edge("broken", END)
    return builder.compile(checkpointer=saver)


@pytest.mark.parametrize("broken_first", [False, True], ids=["ok-first", "broken-first"])
def test_after_a_failed_step_another_process_sees_the_good_branch_writes(
    saver: SqliteSaver, path: Path, broken_first: bool
) -> None:
    # With broken_first, ok's writes come after the error write and no put follows:
    # they are stored at once (not by the timer, which this fixture holds off).
    graph = _fan_out_graph(saver, broken_first=broken_first)
    config = {"configurable": {"thread_id": THREAD}}
    with pytest.raises(RuntimeError, match="broken node"):
        graph.invoke({"log": ["start"]}, config)

    with SqliteSaver.from_conn_string(str(path)) as other:  # read as another process
        latest = other.get_tuple(config)
    assert latest is not None
    channels = {channel for _, channel, _ in latest.pending_writes}
    assert "log" in channels and ERROR in channels  # ok's writes and broken's error


def test_after_invoke_another_process_sees_the_whole_run(saver: SqliteSaver, path: Path) -> None:
    class _Count(TypedDict):
        n: int

    builder = StateGraph(_Count)
    builder.add_node("one", lambda s: {"n": s["n"] + 1})
    builder.add_node("two", lambda s: {"n": s["n"] * 10})
    builder.add_edge(START, "one")
    builder.add_edge("one", "two")
    builder.add_edge("two", END)
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": THREAD}}
    assert graph.invoke({"n": 1}, config) == {"n": 20}

    with SqliteSaver.from_conn_string(str(path)) as other:
        history = list(other.list(config))
    assert history[0].checkpoint["channel_values"]["n"] == 20
    assert [h.metadata["step"] for h in history] == [2, 1, 0, -1]
