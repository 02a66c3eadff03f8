"""The Postgres savers' one-call paths (``_pg_fast.py``) against a real server.

``put``/``put_writes`` go to server-side functions in one statement, the async
saver groups concurrent calls into one ``lgm_put_batch``, and checkpoint
bodies are zlib-compressed. Each must store exactly what the core's own
transactions store, and hand every case the functions do not cover (tombstone,
a list base removed by another instance, compaction, a locked thread) back to
the core without losing or duplicating anything.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
import zlib
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from benchmarks._session_workload import build_chat_graph, run_turns, thread_config, turn_input
from langgraph_memory.errors import ThreadDeletedError
from langgraph_memory.session import AsyncPostgresSaver, PostgresSaver
from langgraph_memory.session import _pg_connections as PG
from langgraph_memory.session import _pg_fast as FAST
from langgraph_memory.session import _sql_postgres as SQL
from langgraph_memory.session._core import COMPACT_BLOCK, drive
from langgraph_memory.session._pg_serde import MIN_BYTES, SUFFIX, CompressedDicts
from langgraph_memory.session.postgres import _runner
from tests.integration._postgres import terminate_other_backends

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(120)]


def _rows(dsn: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(sql, params).fetchall()


def _storage_shape(dsn: str, thread_id: str) -> tuple[list[Any], list[Any]]:
    """What a thread's lists look like in storage: each version's item ranges
    (in version order) and its chunks' item numbers (version ids are random)."""
    ranges = _rows(
        dsn,
        "SELECT channel, ranges FROM lgm_channel_values WHERE thread_id = %s "
        "AND encoding = 'items' ORDER BY channel, version",
        thread_id,
    )
    chunks = _rows(
        dsn,
        "SELECT channel, seq_lo, seq_hi FROM lgm_channel_chunks WHERE thread_id = %s "
        "ORDER BY channel, seq_lo",
        thread_id,
    )
    return [(ch, [tuple(r) for r in json.loads(rg)]) for ch, rg in ranges], chunks


def test_one_call_put_stores_what_the_core_transaction_stores(pg_dsn: str) -> None:
    """Same turns through the functions and through the core: same list ranges,
    same chunk numbering, same state read back."""
    turns = COMPACT_BLOCK  # two items per turn: past two block boundaries
    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        fast_out = run_turns(saver, "fast", turns)
        core_saver = PostgresSaver.from_conn_string(pg_dsn)
        with core_saver as core:
            core._write_fast = lambda factory: None  # type: ignore[method-assign]
            core_out = run_turns(core, "core", turns)
    assert _storage_shape(pg_dsn, "fast") == _storage_shape(pg_dsn, "core")
    assert [m.content for m in fast_out["messages"]] != []
    assert len(fast_out["messages"]) == len(core_out["messages"]) == 2 * turns
    # and a fresh saver (empty cache) reads it back whole, in order
    with PostgresSaver.from_conn_string(pg_dsn, cache_size=0) as reader:
        state = reader.get_tuple(thread_config("fast"))
        assert state is not None
        assert state.checkpoint["channel_values"]["messages"] == fast_out["messages"]


def test_list_base_removed_by_another_instance_falls_back_and_loses_nothing(pg_dsn: str) -> None:
    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        run_turns(saver, "t", 3)
        # Another instance's retention removed every list version this saver's
        # cache would build the next put on.
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(
                "DELETE FROM lgm_channel_values WHERE thread_id = 't' AND encoding = 'items'"
            )
        out = run_turns(saver, "t", 1, start=4)
    with PostgresSaver.from_conn_string(pg_dsn, cache_size=0) as reader:
        state = reader.get_tuple(thread_config("t"))
        assert state is not None
        assert state.checkpoint["channel_values"]["messages"] == out["messages"]
        assert len(out["messages"]) == 8


def test_tombstoned_thread_is_refused_on_both_paths(pg_dsn: str) -> None:
    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        first = run_turns(saver, "gone", 1)
        assert first is not None
        stale = saver.get_tuple(thread_config("gone"))
        saver.delete_thread("gone")
        with pytest.raises(ThreadDeletedError):  # a run in flight: its next put
            saver.put(stale.config, stale.checkpoint, stale.metadata, {})
    assert _rows(pg_dsn, "SELECT count(*) FROM lgm_checkpoints WHERE thread_id = 'gone'") == [(0,)]


async def test_group_commit_batches_concurrent_calls_and_keeps_every_turn(pg_dsn: str) -> None:
    sizes: list[int] = []
    real_batch = FAST.batch_txn

    def counting_batch(items: Any, **kwargs: Any) -> Any:
        sizes.append(len(items))
        return real_batch(items, **kwargs)

    FAST.batch_txn = counting_batch  # type: ignore[assignment]
    try:
        async with AsyncPostgresSaver.from_conn_string(pg_dsn, pool_size=4) as saver:
            graph = build_chat_graph(saver)

            async def one(thread_id: str) -> Any:
                out = None
                for turn in range(1, 6):
                    out = await graph.ainvoke(turn_input(thread_id, turn), thread_config(thread_id))
                return out

            outs = await asyncio.gather(*(one(f"g{i}") for i in range(12)))
    finally:
        FAST.batch_txn = real_batch  # type: ignore[assignment]
    assert max(sizes) > 1, "concurrent calls were never grouped"
    async with AsyncPostgresSaver.from_conn_string(pg_dsn, cache_size=0) as reader:
        for i, out in enumerate(outs):
            state = await reader.aget_tuple(thread_config(f"g{i}"))
            assert state is not None
            assert state.checkpoint["channel_values"]["messages"] == out["messages"]
            assert len(out["messages"]) == 10
            history = [c async for c in reader.alist(thread_config(f"g{i}"))]
            assert len(history) == 5 * 5  # five checkpoints per turn, none lost


async def test_batch_item_on_a_locked_thread_takes_the_core_path(pg_dsn: str) -> None:
    """A put whose thread row is held elsewhere is refused by the batch (NOWAIT)
    and then waits on its own connection; the rest of its batch commits at once."""
    async with AsyncPostgresSaver.from_conn_string(pg_dsn, pool_size=4) as saver:
        graph = build_chat_graph(saver)
        for tid in ("busy", "free"):
            await graph.ainvoke(turn_input(tid, 1), thread_config(tid))
        blocker = await psycopg.AsyncConnection.connect(pg_dsn)
        try:
            # What another instance's put holds (FOR UPDATE would be a delete_thread,
            # which this thread's writes then wait for too).
            await blocker.execute(
                "SELECT 1 FROM lgm_threads WHERE thread_id = 'busy' FOR NO KEY UPDATE"
            )
            busy = asyncio.create_task(graph.ainvoke(turn_input("busy", 2), thread_config("busy")))
            free = await asyncio.wait_for(
                graph.ainvoke(turn_input("free", 2), thread_config("free")), 20
            )
            assert len(free["messages"]) == 4
            await asyncio.sleep(0.2)
            assert not busy.done()
            await blocker.rollback()
            assert len((await asyncio.wait_for(busy, 20))["messages"]) == 4
        finally:
            await blocker.close()


def test_small_bodies_stay_plain_large_dicts_compress_and_every_row_decodes(
    pg_dsn: str,
) -> None:
    """~1 KB checkpoint bodies are stored plain by both savers (below MIN_BYTES,
    see _pg_serde); dict blobs past it are zlib-compressed; compressed rows
    (large values, or bodies an older release compressed) decode everywhere."""

    async def async_turns() -> None:
        async with AsyncPostgresSaver.from_conn_string(pg_dsn) as saver:
            graph = build_chat_graph(saver)
            for turn in (1, 2):
                await graph.ainvoke(turn_input("z", turn), thread_config("z"))

    asyncio.run(async_turns())
    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        run_turns(saver, "s", 2)
    by_thread = "SELECT type, octet_length(checkpoint) FROM lgm_checkpoints WHERE thread_id = %s"
    for tid in ("z", "s"):
        stored = _rows(pg_dsn, by_thread, tid)
        assert {t for t, _ in stored} == {"msgpack"}
        # bodies the 256-byte threshold of the last release compressed
        assert 256 <= max(size for _, size in stored) < MIN_BYTES
    # Rows an older release wrote compressed decode as before.
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        for cid, blob in conn.execute(
            "SELECT checkpoint_id, checkpoint FROM lgm_checkpoints "
            "WHERE thread_id = 'z' AND octet_length(checkpoint) >= 256"
        ).fetchall():
            conn.execute(
                "UPDATE lgm_checkpoints SET type = 'msgpack+zlib', checkpoint = %s "
                "WHERE thread_id = 'z' AND checkpoint_id = %s",
                (zlib.compress(blob), cid),
            )
    assert {t for t, _ in _rows(pg_dsn, by_thread, "z")} == {"msgpack", "msgpack" + SUFFIX}
    with PostgresSaver.from_conn_string(pg_dsn, cache_size=0) as reader:
        tuples = list(reader.list(thread_config("z")))
        assert len(tuples) == len(_rows(pg_dsn, by_thread, "z"))
        assert all(t.checkpoint["channel_versions"] for t in tuples)
        state = reader.get_tuple(thread_config("z"))
        assert state is not None and len(state.checkpoint["channel_values"]["messages"]) == 4
    serde = CompressedDicts(JsonPlusSerializer())
    body_sized = {"versions": {f"channel{i}": f"{i:032}.{i:016}" for i in range(20)}}
    assert 256 < len(serde.inner.dumps_typed(body_sized)[1]) < MIN_BYTES
    assert serde.dumps_typed(body_sized)[0] == "msgpack"  # not worth a GIL hand-off
    large = {"versions": {f"channel{i}": f"{i:032}.{i:016}" for i in range(60)}}
    packed = serde.dumps_typed(large)
    assert packed[0] == "msgpack" + SUFFIX and len(packed[1]) < MIN_BYTES
    assert serde.loads_typed(packed) == large


def test_one_statement_read_never_serves_a_stale_checkpoint_across_instances(
    pg_dsn: str,
) -> None:
    """Two app instances take turns on one thread: each get_tuple must see the
    other's latest checkpoint, though its own memory still guesses its own."""
    hits: list[bool] = []
    real_latest = FAST.latest_txn

    def recording_latest(core: Any, config: Any, guess: Any) -> Any:
        try:
            loaded = yield from real_latest(core, config, guess)
        except FAST.PrefetchMiss:
            hits.append(False)
            raise
        hits.append(True)
        return loaded

    FAST.latest_txn = recording_latest  # type: ignore[assignment]
    try:
        with (
            PostgresSaver.from_conn_string(pg_dsn) as a,
            PostgresSaver.from_conn_string(pg_dsn) as b,
        ):
            graph_a, graph_b = build_chat_graph(a), build_chat_graph(b)
            out = None
            for turn in range(1, 9):
                graph = graph_a if turn % 2 else graph_b
                out = graph.invoke(turn_input("shared", turn), thread_config("shared"))
                assert len(out["messages"]) == 2 * turn  # nothing lost, nothing stale
                assert out["turn"] == turn
            # the same instance twice in a row reads in one statement
            again = graph_b.invoke(turn_input("shared", 9), thread_config("shared"))
            assert len(again["messages"]) == 18
    finally:
        FAST.latest_txn = real_latest  # type: ignore[assignment]
    assert False in hits and True in hits


@pytest.mark.parametrize("path", ["fast", "core"])
def test_put_writes_racing_delete_thread_waits_and_leaves_no_orphan_writes(
    pg_dsn: str, path: str
) -> None:
    """delete_thread's transaction is open (tombstone set, writes deleted, not yet
    committed) when a put_writes arrives: the writes must wait for the delete and
    then be refused, not slip in under the uncommitted tombstone and outlive it."""
    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        if path == "core":
            saver._write_fast = lambda factory: None  # type: ignore[method-assign]
        run_turns(saver, "race", 1)
        latest = saver.get_tuple(thread_config("race"))
        assert latest is not None
        outcome: list[BaseException | None] = []

        def late_writes() -> None:
            try:
                saver.put_writes(latest.config, [("messages", ["late"])], "task-late")
                outcome.append(None)
            except BaseException as exc:  # the test inspects it
                outcome.append(exc)

        with psycopg.connect(pg_dsn) as deleting:
            with deleting.cursor() as cur:
                drive(PG.delete_thread_txn(saver._core, "race")(), _runner(cur, pipelined=False))
            writer = threading.Thread(target=late_writes)
            writer.start()
            time.sleep(0.5)
            still_waiting = writer.is_alive()
            deleting.commit()
        writer.join(timeout=20)
    assert still_waiting, "put_writes did not wait for the uncommitted delete"
    assert len(outcome) == 1 and isinstance(outcome[0], ThreadDeletedError)
    assert _rows(pg_dsn, "SELECT count(*) FROM lgm_writes WHERE thread_id = 'race'") == [(0,)]


async def test_async_put_writes_racing_delete_thread_waits_and_leaves_no_orphan_writes(
    pg_dsn: str,
) -> None:
    """The same race through the async saver's group commit: the batch refuses the
    held row (NOWAIT) and the core's transaction waits, then sees the tombstone."""
    async with AsyncPostgresSaver.from_conn_string(pg_dsn) as saver:
        graph = build_chat_graph(saver)
        await graph.ainvoke(turn_input("arace", 1), thread_config("arace"))
        latest = await saver.aget_tuple(thread_config("arace"))
        assert latest is not None
        with psycopg.connect(pg_dsn) as deleting:
            with deleting.cursor() as cur:
                drive(PG.delete_thread_txn(saver._core, "arace")(), _runner(cur, pipelined=False))
            late = asyncio.create_task(
                saver.aput_writes(latest.config, [("messages", ["late"])], "task-late")
            )
            await asyncio.sleep(0.5)
            still_waiting = not late.done()
            deleting.commit()
        with pytest.raises(ThreadDeletedError):
            await asyncio.wait_for(late, 20)
    assert still_waiting, "aput_writes did not wait for the uncommitted delete"
    assert _rows(pg_dsn, "SELECT count(*) FROM lgm_writes WHERE thread_id = 'arace'") == [(0,)]


def _terminate_pool_backends(dsn: str, pool_size: int = 2) -> int:
    # The pool refills in a background thread after the previous kill; wait
    # until it is full again, or a slow refill would make the count race.
    deadline = time.monotonic() + 10
    while _other_backends(dsn) < pool_size and time.monotonic() < deadline:
        time.sleep(0.05)
    killed = terminate_other_backends(dsn)
    time.sleep(0.2)  # let the backends exit
    return killed


def _other_backends(dsn: str) -> int:
    rows = _rows(
        dsn,
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    return int(rows[0][0])


def test_one_statement_calls_retry_on_a_fresh_connection_after_the_server_dropped_theirs(
    pg_dsn: str,
) -> None:
    """put, put_writes and get_tuple each run as one statement straight on a
    pooled connection; a dead connection sends them through the retry loop."""
    from langgraph.checkpoint.base.id import uuid6

    with PostgresSaver.from_conn_string(pg_dsn, pool_size=2) as saver:
        run_turns(saver, "drop", 2)
        latest = saver.get_tuple(thread_config("drop"))
        assert latest is not None
        assert _terminate_pool_backends(pg_dsn) >= 2
        checkpoint = {**latest.checkpoint, "id": str(uuid6())}
        config = saver.put(latest.config, checkpoint, {"source": "update", "step": 99}, {})
        assert config["configurable"]["checkpoint_id"] == checkpoint["id"]
        assert _terminate_pool_backends(pg_dsn) >= 2
        saver.put_writes(config, [("note", "kept")], task_id="task-1")
        assert _terminate_pool_backends(pg_dsn) >= 2
        got = saver.get_tuple(thread_config("drop"))
        assert got is not None and got.checkpoint["id"] == checkpoint["id"]
        assert got.pending_writes == [("task-1", "note", "kept")]
        assert (
            got.checkpoint["channel_values"]["messages"]
            == (latest.checkpoint["channel_values"]["messages"])
        )


def test_one_statement_calls_on_a_pool_without_autocommit_and_on_a_busy_pool(
    pg_dsn: str,
) -> None:
    """A pool passed in without autocommit (and with dict rows) runs the one-call
    paths inside a transaction; a pool with no free connection makes them wait
    and retry, not fail."""
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    with ConnectionPool(pg_dsn, min_size=1, max_size=1, kwargs={"row_factory": dict_row}) as pool:
        saver = PostgresSaver(pool)
        saver.setup()
        assert run_turns(saver, "plain-pool", 2)["turn"] == 2
        with pool.connection() as conn:  # nothing left open on the connection
            assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            # This database's advisory locks only: other databases on the server (parallel
            # tests, other apps) take their own, which made this check flaky.
            assert not conn.execute(
                "SELECT 1 FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
                "WHERE l.locktype = 'advisory' AND d.datname = current_database()"
            ).fetchall()
    with ConnectionPool(
        pg_dsn, min_size=1, max_size=1, timeout=0.3, kwargs={"autocommit": True}
    ) as pool:
        saver = PostgresSaver(pool)
        saver.setup()
        run_turns(saver, "busy-pool", 1)
        held = pool.getconn()
        release = threading.Timer(1.0, pool.putconn, (held,))
        release.start()
        started = time.monotonic()
        try:
            got = saver.get_tuple(thread_config("busy-pool"))  # times out borrowing, retries
        finally:
            release.join()
        assert got is not None and got.checkpoint["channel_values"]["turn"] == 1
        assert time.monotonic() - started >= 0.9
        assert run_turns(saver, "busy-pool", 1, start=2)["turn"] == 2


# ---------------------------------------------------------------- lgm_put_all (migration 4)


def _whole_calls(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Records, per batch statement sent, whether it went to lgm_put_all (True)
    or lgm_put_batch (False)."""
    calls: list[bool] = []
    real = FAST.batch_txn

    def recording(items: Any, **kwargs: Any) -> Any:
        calls.append(bool(kwargs.get("whole")))
        return real(items, **kwargs)

    monkeypatch.setattr(FAST, "batch_txn", recording)
    return calls


def _queue_writes(saver: PostgresSaver, saved: Any, channel: str, task_id: str) -> None:
    """A task write in LangGraph's default mode: queued, not yet stored."""
    from langgraph_memory.session._core import RUNTIME_CONFIG_KEY

    config = {"configurable": {**saved["configurable"], RUNTIME_CONFIG_KEY: object()}}
    saver.put_writes(config, [(channel, 1)], task_id)


def _empty_put(saver: PostgresSaver, thread_id: str) -> Any:
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    return saver.put(config, empty_checkpoint(), {"source": "loop", "step": 0}, {})


@contextlib.contextmanager
def _queued_on_two_threads(
    pg_dsn: str, one: str, two: str
) -> Iterator[tuple[PostgresSaver, PostgresSaver, Any, Any]]:
    """Two savers on the database: (saver, other, checkpoint of ``one``, of ``two``).
    ``saver`` put a checkpoint on threads ``one`` and ``two`` and queued a task
    write of each (channels "a" and "b", tasks "task-<thread>"); timer held off."""
    with (
        PostgresSaver.from_conn_string(pg_dsn) as saver,
        PostgresSaver.from_conn_string(pg_dsn) as other,
    ):
        saver._deferred.timer.max_delay = 3600.0
        first, second = _empty_put(saver, one), _empty_put(saver, two)
        _queue_writes(saver, first, "a", f"task-{one}")
        _queue_writes(saver, second, "b", f"task-{two}")
        yield saver, other, first, second


def test_a_put_and_its_riding_writes_go_in_one_lgm_put_all(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _whole_calls(monkeypatch)
    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        saver._deferred.timer.max_delay = 3600.0
        out = run_turns(saver, "lean", 3)
    assert calls and all(calls), "a batch fell back to lgm_put_batch"
    with PostgresSaver.from_conn_string(pg_dsn, cache_size=0) as reader:
        state = reader.get_tuple(thread_config("lean"))
        assert state is not None
        assert state.checkpoint["channel_values"]["messages"] == out["messages"]
        assert len(list(reader.list(thread_config("lean")))) == 3 * 5
    # every turn's task writes were stored (one row per (task, idx) at least)
    assert _rows(pg_dsn, "SELECT count(*) > 0 FROM lgm_writes WHERE thread_id = 'lean'") == [
        (True,)
    ]


def test_lgm_put_all_refuses_a_batch_with_a_tombstoned_thread_and_stores_nothing(
    pg_dsn: str,
) -> None:
    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        doomed = _empty_put(saver, "doomed")
        kept = _empty_put(saver, "kept")
        saver.delete_thread("doomed")
        items = [
            saver._core.prepare_writes(doomed, [("a", 1)], "task-doomed"),
            saver._core.prepare_writes(kept, [("b", 2)], "task-kept"),
        ]
    with psycopg.connect(pg_dsn, autocommit=True) as conn, conn.cursor() as cur:
        with pytest.raises(psycopg.Error) as refused:
            drive(
                FAST.batch_txn(items, async_commit=False, whole=True), _runner(cur, pipelined=False)
            )
        assert FAST.is_refusal(refused.value)
        assert _rows(pg_dsn, "SELECT count(*) FROM lgm_writes") == [(0,)]
        # lgm_put_batch isolates the refused item
        answers = drive(FAST.batch_txn(items, async_commit=False), _runner(cur, pipelined=False))
    assert answers == [None, True]
    assert _rows(pg_dsn, "SELECT thread_id, task_id FROM lgm_writes") == [("kept", "task-kept")]


def test_a_refused_lgm_put_all_falls_back_and_stores_the_rest_of_the_batch(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    calls = _whole_calls(monkeypatch)
    with _queued_on_two_threads(pg_dsn, "doomed", "kept") as (saver, other, doomed, kept):
        other.delete_thread("doomed")
        calls.clear()
        with caplog.at_level(logging.WARNING, logger="langgraph_memory.session.postgres"):
            saved = saver.put(kept, empty_checkpoint(), {"source": "loop", "step": 1}, {})
        assert calls == [True, False]  # lgm_put_all refused, lgm_put_batch sorted it out
        dropped = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
        assert len(dropped) == 1 and "'task-doomed'" in dropped[0]
        found = other.get_tuple(kept)
        assert found is not None and [w[0] for w in found.pending_writes] == ["task-kept"]
        assert other.get_tuple(saved) is not None
        assert other.get_tuple(doomed) is None
        with pytest.raises(ThreadDeletedError):  # a put after a pre-delete checkpoint
            saver.put(doomed, empty_checkpoint(), {}, {})


def test_released_migrations_are_unchanged() -> None:
    """Released migrations are never edited (a database that applied them keeps them)."""
    import hashlib

    released = hashlib.sha256(repr(SQL.MIGRATIONS[:3]).encode()).hexdigest()
    assert released == "3fb3a0b96c84a9383b4b87c966e1834349ff5744127545a66ccf4e9e786deae1"
    released = hashlib.sha256(repr(SQL.MIGRATIONS[:4]).encode()).hexdigest()
    assert released == "6c221a23c740d56e005d378ee746617abe4868cd77dd6d93311373d2836697ba"
    assert [m[0] for m in SQL.MIGRATIONS] == [1, 2, 3, 4, 5, 6, 7, 8]


@pytest.mark.parametrize("autocommit", [True, False])
def test_a_database_at_migration_3_upgrades_to_4(pg_dsn: str, autocommit: bool) -> None:
    with psycopg.connect(pg_dsn, autocommit=autocommit) as conn:
        old = PostgresSaver(conn)
        old._MIGRATIONS = SQL.MIGRATIONS[:3]  # what the previous release installs
        old.setup()
        old.put_writes(_empty_put(old, "before"), [("x", 1)], "task-before")
    assert _rows(pg_dsn, "SELECT version FROM lgm_schema_migrations ORDER BY 1") == [
        (1,),
        (2,),
        (3,),
    ]
    assert _rows(pg_dsn, "SELECT count(*) FROM pg_proc WHERE proname = 'lgm_put_all'") == [(0,)]
    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        saver.setup()
        out = run_turns(saver, "after", 2)
        before = saver.get_tuple({"configurable": {"thread_id": "before", "checkpoint_ns": ""}})
        assert before is not None and before.pending_writes == [("task-before", "x", 1)]
    assert len(out["messages"]) == 4
    assert _rows(pg_dsn, "SELECT version FROM lgm_schema_migrations ORDER BY 1") == [
        (m[0],) for m in SQL.MIGRATIONS
    ]
    assert _rows(pg_dsn, "SELECT count(*) FROM pg_proc WHERE proname = 'lgm_put_all'") == [(1,)]


def test_a_fresh_database_gets_lgm_put_all(pg_dsn: str) -> None:
    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        saver.setup()
        run_turns(saver, "fresh", 1)
    assert _rows(pg_dsn, "SELECT count(*) FROM pg_proc WHERE proname = 'lgm_put_all'") == [(1,)]


def test_queued_writes_of_other_threads_ride_in_the_same_lgm_put_all(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _whole_calls(monkeypatch)
    with _queued_on_two_threads(pg_dsn, "first", "second") as (saver, other, first, second):
        calls.clear()
        saver.put(second, empty_checkpoint(), {"source": "loop", "step": 1}, {})
        assert calls == [True]  # one statement, nothing refused
        for saved, task in ((first, "task-first"), (second, "task-second")):
            found = other.get_tuple(saved)
            assert found is not None and [w[0] for w in found.pending_writes] == [task]


def _scans_of(plan: dict[str, Any], table: str) -> list[dict[str, Any]]:
    found = [plan] if plan.get("Relation Name") == table else []
    for child in plan.get("Plans", ()):
        found += _scans_of(child, table)
    return found


def _analyzed_scans(dsn: str, sql: str, params: tuple[Any, ...], table: str) -> list[Any]:
    """(rows per loop, loops) of every scan of ``table`` in ``sql``'s executed plan."""
    with psycopg.connect(dsn) as conn:
        ((explained,),) = conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params).fetchall()
    return [(s["Actual Rows"], s["Actual Loops"]) for s in _scans_of(explained[0]["Plan"], table)]


def test_reads_look_up_each_key_instead_of_scanning_the_thread(pg_dsn: str) -> None:
    """get_tuple's values and the writes of listed checkpoints are primary-key
    lookups, one per key: no scan returns more than its key's rows, however long
    the thread. (As plain joins, on tables not yet analyzed, Postgres hash-joined
    the key list against every row of the thread: 240 values at 30 turns.)"""
    thread = "long-read"
    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        run_turns(saver, thread, 30)
        latest = saver.get_tuple(thread_config(thread))
        assert latest is not None
        history = [
            t.config["configurable"]["checkpoint_id"] for t in saver.list(thread_config(thread))
        ]
    pairs = json.dumps([[ch, str(v)] for ch, v in latest.checkpoint["channel_versions"].items()])
    ((stored_values,),) = _rows(
        pg_dsn, "SELECT count(*) FROM lgm_channel_values WHERE thread_id = %s", thread
    )
    assert stored_values > 60  # the thread is long enough for a scan to show

    for sql, params in (
        (SQL.SELECT_LATEST_PREFETCH, (thread, "", pairs)),
        (SQL.SELECT_CHANNEL_VALUES, (pairs, thread, "")),
    ):
        scans = _analyzed_scans(pg_dsn, sql, params, "lgm_channel_values")
        assert scans, "the plan reads lgm_channel_values"
        assert all(rows <= 1 for rows, _ in scans), scans

    ((max_writes,),) = _rows(
        pg_dsn,
        "SELECT max(n) FROM (SELECT count(*) AS n FROM lgm_writes WHERE thread_id = %s "
        "GROUP BY checkpoint_id) AS per_checkpoint",
        thread,
    )
    ((all_writes,),) = _rows(pg_dsn, "SELECT count(*) FROM lgm_writes WHERE thread_id = %s", thread)
    assert all_writes > 5 * max_writes
    some = json.dumps(history[:3])
    scans = _analyzed_scans(
        pg_dsn, SQL.SELECT_WRITES_FOR_CHECKPOINTS, (some, thread, ""), "lgm_writes"
    )
    assert scans and all(rows <= max_writes for rows, _ in scans), scans
