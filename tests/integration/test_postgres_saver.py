"""The Postgres savers against a real server: connections, concurrency, recovery, retention.

Every test gets a brand-new database (``pg_dsn``). Behaviour of compiled graphs
(interrupts, time travel, subgraphs, ...) is covered for these savers by
``test_session_graphs.py``; LangGraph's conformance suite by
``test_postgres_saver_conformance.py``; multi-process load by
``test_postgres_stress.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any, TypedDict

import psycopg
import pytest
from langgraph.channels.delta import DeltaChannel
from langgraph.graph import END, START, StateGraph
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from benchmarks._session_workload import (
    build_chat_graph,
    human_text,
    reply_text,
    run_turns,
    thread_config,
    turn_input,
)
from langgraph_memory.config import RetentionPolicy
from langgraph_memory.errors import (
    ConfigurationError,
    DatabaseConnectionError,
    InvalidConnectionError,
    InvalidFilterError,
    ThreadDeletedError,
)
from langgraph_memory.session import AsyncPostgresSaver, PostgresSaver
from langgraph_memory.session import _sql_postgres as SQL
from tests.integration._postgres import terminate_other_backends

pytestmark = [pytest.mark.postgres, pytest.mark.timeout(120)]


async def _aturns(saver: Any, thread_id: str, turns: int, start: int = 1) -> Any:
    graph = build_chat_graph(saver)
    out = None
    for turn in range(start, start + turns):
        out = await graph.ainvoke(turn_input(thread_id, turn), thread_config(thread_id))
    return out


def _checkpoint_ids(dsn: str, thread_id: str) -> set[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT checkpoint_id FROM lgm_checkpoints WHERE thread_id = %s", (thread_id,)
        ).fetchall()
    return {r[0] for r in rows}


# ---------------------------------------------------------------- connections checked in code


def test_sync_saver_refuses_async_connection_and_pool(pg_dsn: str) -> None:
    async def main() -> None:
        conn = await psycopg.AsyncConnection.connect(pg_dsn, autocommit=True)
        try:
            with pytest.raises(InvalidConnectionError, match="AsyncPostgresSaver"):
                PostgresSaver(conn)  # type: ignore[arg-type]
        finally:
            await conn.close()
        async with AsyncConnectionPool(pg_dsn, min_size=1, max_size=1, open=False) as pool:
            with pytest.raises(InvalidConnectionError, match="AsyncPostgresSaver"):
                PostgresSaver(pool)  # type: ignore[arg-type]

    asyncio.run(main())


async def test_async_saver_refuses_sync_connection_and_pool(pg_dsn: str) -> None:
    with (
        psycopg.connect(pg_dsn, autocommit=True) as conn,
        pytest.raises(InvalidConnectionError, match="PostgresSaver"),
    ):
        AsyncPostgresSaver(conn)  # type: ignore[arg-type]
    with (
        ConnectionPool(pg_dsn, min_size=1, max_size=1, open=True) as pool,
        pytest.raises(InvalidConnectionError, match="PostgresSaver"),
    ):
        AsyncPostgresSaver(pool)  # type: ignore[arg-type]


def test_refuses_closed_busy_and_foreign_connections(pg_dsn: str) -> None:
    conn = psycopg.connect(pg_dsn)
    conn.execute("SELECT 1")  # autocommit=False: a transaction is now open
    with pytest.raises(InvalidConnectionError, match="autocommit=True"):
        PostgresSaver(conn)
    conn.rollback()
    conn.close()
    with pytest.raises(InvalidConnectionError, match="closed"):
        PostgresSaver(conn)
    with pytest.raises(InvalidConnectionError, match="from_conn_string"):
        PostgresSaver("postgresql://nope")  # type: ignore[arg-type]
    pool = ConnectionPool(pg_dsn, min_size=1, max_size=1, open=False)
    with pytest.raises(InvalidConnectionError, match="open"):
        PostgresSaver(pool)


def test_bad_options_are_typed_errors(pg_dsn: str) -> None:
    bad: list[tuple[str, dict[str, Any]]] = [
        ("pool_size=0", {"pool_size": 0}),
        ("prepare_threshold=-1", {"prepare_threshold": -1}),
        ("max_idle=0", {"max_idle": 0}),
        ("min_pool_size=5", {"pool_size": 4, "min_pool_size": 5}),
    ]
    for message, kwargs in bad:
        with (
            pytest.raises(ConfigurationError, match=message),
            PostgresSaver.from_conn_string(pg_dsn, **kwargs),
        ):
            pass
    with (
        pytest.raises(ConfigurationError, match="conn_string=''"),
        PostgresSaver.from_conn_string(""),
    ):
        pass


def test_user_connection_without_autocommit_and_with_dict_rows(pg_dsn: str) -> None:
    """setup() and every call work on a plain psycopg connection as users open it."""
    with psycopg.connect(pg_dsn, row_factory=dict_row) as conn:
        assert conn.autocommit is False
        saver = PostgresSaver(conn)
        saver.setup()  # the official saver fails here (CREATE INDEX CONCURRENTLY)
        out = run_turns(saver, "plain", 3)
        assert out["turn"] == 3
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        # The user's own row factory is untouched.
        assert conn.execute("SELECT 1 AS one").fetchone() == {"one": 1}
        conn.commit()
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=1) as fresh:
        state = build_chat_graph(fresh).get_state(thread_config("plain"))
        assert len(state.values["messages"]) == 6


def test_pool_grows_from_its_minimum_under_load(pg_dsn: str) -> None:
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=4, min_pool_size=1) as saver:
        with ThreadPoolExecutor(4) as pool:
            outs = list(pool.map(lambda i: run_turns(saver, f"grow-{i}", 3), range(4)))
        assert [o["turn"] for o in outs] == [3, 3, 3, 3]


def test_unreachable_server_is_a_storage_error_naming_the_fix() -> None:
    # Refused at the first plain connection, before any pool waits (issue 17).
    with (
        pytest.raises(DatabaseConnectionError, match="start the server, or fix the host"),
        PostgresSaver.from_conn_string(
            "postgresql://postgres@127.0.0.1:1/none", pool_size=1, connect_timeout=1
        ),
    ):
        pass


def test_user_pool_sync(pg_dsn: str) -> None:
    with ConnectionPool(pg_dsn, min_size=2, max_size=4, kwargs={"autocommit": True}) as pool:
        saver = PostgresSaver(pool)
        saver.setup()
        assert run_turns(saver, "pooled", 2)["turn"] == 2
        saver.close()  # a pool passed in stays open
        assert not pool.closed


async def test_user_pool_and_connection_async(pg_dsn: str) -> None:
    async with AsyncConnectionPool(pg_dsn, min_size=1, max_size=4, open=False) as pool:
        saver = AsyncPostgresSaver(pool)
        await saver.asetup()
        assert (await _aturns(saver, "apooled", 2))["turn"] == 2
    conn = await psycopg.AsyncConnection.connect(pg_dsn)  # autocommit=False
    try:
        saver = AsyncPostgresSaver(conn)
        out = await build_chat_graph(saver).aget_state(thread_config("apooled"))
        assert len(out.values["messages"]) == 4
    finally:
        await conn.close()


def test_pgbouncer_mode_prepares_nothing(pg_dsn: str) -> None:
    """``prepare_threshold=None`` (pgbouncer transaction mode) leaves no prepared statements;
    the default prepares the hot statements after 5 runs."""

    def prepared_counts(saver: PostgresSaver) -> list[int]:
        pool = saver._connections._pool
        assert pool is not None
        counts = []
        for _ in range(pool.max_size):
            with pool.connection() as conn:
                row = conn.execute("SELECT count(*) FROM pg_prepared_statements").fetchone()
                assert row is not None
                counts.append(int(row[0]))
        return counts

    def session_setting(saver: PostgresSaver) -> str:
        pool = saver._connections._pool
        assert pool is not None
        with pool.connection() as conn:
            row = conn.execute("SHOW synchronous_commit").fetchone()
        assert row is not None
        return str(row[0])

    with PostgresSaver.from_conn_string(pg_dsn, pool_size=1, prepare_threshold=None) as saver:
        run_turns(saver, "bouncer", 8)
        assert prepared_counts(saver) == [0]
        # No session state either: asynchronous commit is asked per transaction.
        assert session_setting(saver) == "on"
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=1) as saver:
        run_turns(saver, "bouncer", 8, start=9)
        assert prepared_counts(saver)[0] > 0
        assert session_setting(saver) == "off"
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=1, synchronous_commit=True) as saver:
        assert run_turns(saver, "bouncer", 1, start=17)["turn"] == 17
        assert session_setting(saver) == "on"


# ---------------------------------------------------------------- setup


def test_concurrent_setup_on_fresh_databases(pg_dsn: str) -> None:
    """Several instances calling setup() at once on a fresh schema: no error, applied once."""
    for round_no in range(3):
        schema = f"race{round_no}"
        with psycopg.connect(pg_dsn, autocommit=True) as admin:
            admin.execute(f"CREATE SCHEMA {schema}")
        dsn = f"{pg_dsn}?options=-csearch_path%3D{schema}"
        barrier = threading.Barrier(4)

        def start(i: int, dsn: str = dsn, barrier: threading.Barrier = barrier) -> int:
            conn = psycopg.connect(dsn, autocommit=bool(i % 2))  # with and without autocommit
            try:
                saver = PostgresSaver(conn)
                barrier.wait()
                saver.setup()
                return len(_checkpoint_ids(dsn, "none"))
            finally:
                conn.close()

        with ThreadPoolExecutor(4) as pool:
            assert list(pool.map(start, range(4))) == [0, 0, 0, 0]
        with psycopg.connect(dsn) as conn:
            rows = conn.execute("SELECT version FROM lgm_schema_migrations").fetchall()
        assert sorted(r[0] for r in rows) == [m[0] for m in SQL.MIGRATIONS]


async def test_concurrent_asetup(pg_dsn: str) -> None:
    async def start() -> None:
        async with AsyncPostgresSaver.from_conn_string(pg_dsn, pool_size=1) as saver:
            await saver.asetup()

    await asyncio.gather(*(start() for _ in range(4)))


# ---------------------------------------------------------------- concurrency through the pool

# The lock another instance's put holds on a thread's row (its upsert takes NO
# KEY UPDATE). FOR UPDATE is what delete_thread holds: put_writes waits for it.
SELECT_P0_AS_A_PUT_DOES = "SELECT 1 FROM lgm_threads WHERE thread_id = 'p0' FOR NO KEY UPDATE"


def test_pool_runs_threads_in_parallel(pg_dsn: str) -> None:
    """A put blocked on one thread's row does not stop puts on other threads."""
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=4) as saver:
        for i in range(4):
            run_turns(saver, f"p{i}", 1)
        with psycopg.connect(pg_dsn) as blocker:
            blocker.execute(SELECT_P0_AS_A_PUT_DOES)
            with ThreadPoolExecutor(4) as pool:
                stuck = pool.submit(run_turns, saver, "p0", 1, 2)
                time.sleep(0.3)
                others = [pool.submit(run_turns, saver, f"p{i}", 1, 2) for i in (1, 2, 3)]
                for future in others:
                    assert future.result(timeout=20)["turn"] == 2
                assert not stuck.done()
                blocker.rollback()
                assert stuck.result(timeout=20)["turn"] == 2


async def test_async_pool_runs_threads_in_parallel(pg_dsn: str) -> None:
    async with AsyncPostgresSaver.from_conn_string(pg_dsn, pool_size=4) as saver:
        for i in range(4):
            await _aturns(saver, f"p{i}", 1)
        blocker = await psycopg.AsyncConnection.connect(pg_dsn)
        try:
            await blocker.execute(SELECT_P0_AS_A_PUT_DOES)
            stuck = asyncio.create_task(_aturns(saver, "p0", 1, 2))
            await asyncio.sleep(0.3)
            done = await asyncio.wait_for(
                asyncio.gather(*(_aturns(saver, f"p{i}", 1, 2) for i in (1, 2, 3))), 20
            )
            assert [d["turn"] for d in done] == [2, 2, 2]
            assert not stuck.done()
            await blocker.rollback()
            assert (await asyncio.wait_for(stuck, 20))["turn"] == 2
        finally:
            await blocker.close()


def test_list_streams_pages_and_allows_reads_inside_the_loop(pg_dsn: str) -> None:
    """With one connection, reading inside a list() loop still works (no connection is held)."""
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=1) as saver:
        run_turns(saver, "long", 60)  # 5 checkpoints per turn: 300, three pages
        seen = []
        for item in saver.list(thread_config("long")):
            seen.append(item.config["configurable"]["checkpoint_id"])
            if len(seen) % 50 == 0:
                assert saver.get_tuple(item.config) is not None
        assert len(seen) == 300 == len(set(seen))
        assert seen == sorted(seen, reverse=True)
        limited = list(saver.list(thread_config("long"), limit=7))
        assert [t.config["configurable"]["checkpoint_id"] for t in limited] == seen[:7]
        before = list(saver.list(None, before=limited[-1].config, limit=3))
        assert [t.config["configurable"]["checkpoint_id"] for t in before] == seen[7:10]
        by_step = list(saver.list(None, filter={"step": 3, "source": "loop"}))
        assert len(by_step) == 1 and by_step[0].metadata["step"] == 3
        with pytest.raises(InvalidFilterError):
            list(saver.list(None, filter={"": 1}))


# ---------------------------------------------------------------- recovery after dropped connections


@pytest.mark.parametrize("check_connections", [True, False], ids=["checked", "unchecked"])
def test_recovers_after_backends_are_terminated(pg_dsn: str, check_connections: bool) -> None:
    with PostgresSaver.from_conn_string(
        pg_dsn, pool_size=3, check_connections=check_connections
    ) as saver:
        run_turns(saver, "kill", 3)
        acknowledged = _checkpoint_ids(pg_dsn, "kill")
        assert terminate_other_backends(pg_dsn) >= 3  # every pooled connection is now dead
        out = run_turns(saver, "kill", 1, start=4)  # the very next call succeeds
        assert out["turn"] == 4
        assert acknowledged < _checkpoint_ids(pg_dsn, "kill")
        assert [m.content for m in out["messages"]][-1] == reply_text("kill", 4)


async def test_async_recovers_after_backends_are_terminated(pg_dsn: str) -> None:
    async with AsyncPostgresSaver.from_conn_string(pg_dsn, pool_size=3) as saver:
        await _aturns(saver, "akill", 3)
        acknowledged = _checkpoint_ids(pg_dsn, "akill")
        assert terminate_other_backends(pg_dsn) >= 3
        out = await _aturns(saver, "akill", 1, start=4)
        assert out["turn"] == 4
        assert acknowledged < _checkpoint_ids(pg_dsn, "akill")


def test_single_user_connection_that_died_says_how_to_fix(pg_dsn: str) -> None:
    conn = psycopg.connect(pg_dsn, autocommit=True)
    saver = PostgresSaver(conn)
    saver.setup()
    terminate_other_backends(pg_dsn)
    with pytest.raises(Exception, match=r"pool|closed|terminat"):
        saver.get_tuple(thread_config("x"))
    conn.close()


# ---------------------------------------------------------------- tombstones


def test_deleted_thread_stays_deleted_across_instances(pg_dsn: str) -> None:
    with (
        PostgresSaver.from_conn_string(pg_dsn, pool_size=1) as a,
        PostgresSaver.from_conn_string(pg_dsn, pool_size=1) as b,
    ):
        run_turns(a, "gone", 2)
        latest = b.get_tuple(thread_config("gone"))
        assert latest is not None
        a.delete_thread("gone")
        assert b.get_tuple(thread_config("gone")) is None
        with pytest.raises(ThreadDeletedError, match="gone"):
            b.put_writes(latest.config, [("messages", [])], "late-task")
        with pytest.raises(ThreadDeletedError):
            b.put(latest.config, latest.checkpoint, latest.metadata, {})  # a run in flight
        assert _checkpoint_ids(pg_dsn, "gone") == set()
        a.undelete_thread("gone")
        assert run_turns(b, "gone", 1)["turn"] == 1


async def test_async_deleted_thread_stays_deleted(pg_dsn: str) -> None:
    async with AsyncPostgresSaver.from_conn_string(pg_dsn, pool_size=2) as saver:
        await _aturns(saver, "agone", 1)
        stale = await saver.aget_tuple(thread_config("agone"))
        await saver.adelete_thread("agone")
        with pytest.raises(ThreadDeletedError):
            await saver.aput(stale.config, stale.checkpoint, stale.metadata, {})
        assert _checkpoint_ids(pg_dsn, "agone") == set()


@dataclasses.dataclass
class AllowlistedPoint:
    """A type the strict serializer blocks until ``with_allowlist`` admits it."""

    x: int


def _strict_serde() -> Any:
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    return JsonPlusSerializer(allowed_msgpack_modules=[("collections", "OrderedDict")])


def _point_checkpoint() -> tuple[Any, dict[str, Any]]:
    from langgraph.checkpoint.base import empty_checkpoint

    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"point": AllowlistedPoint(7)}
    checkpoint["channel_versions"] = {"point": "1"}
    return checkpoint, {"configurable": {"thread_id": "allow", "checkpoint_ns": ""}}


ALLOW_POINT = [(AllowlistedPoint.__module__, "AllowlistedPoint")]


def test_with_allowlist_clone_decodes_with_its_own_serde(pg_dsn: str) -> None:
    with PostgresSaver.from_conn_string(pg_dsn, serde=_strict_serde(), cache_size=0) as saver:
        clone = saver.with_allowlist(ALLOW_POINT)
        # the core decodes through the clone's serializer (wrapped to compress bodies)
        assert clone is not saver and clone._core.serde.inner is clone.serde
        assert saver._core.serde.inner is saver.serde
        checkpoint, config = _point_checkpoint()
        stored = clone.put(config, checkpoint, {}, {"point": "1"})
        # the clone admits the type; the original saver still blocks it (a plain dict)
        assert clone.get_tuple(stored).checkpoint["channel_values"]["point"] == AllowlistedPoint(7)
        assert saver.get_tuple(stored).checkpoint["channel_values"]["point"] == {"x": 7}


async def test_async_with_allowlist_clone_decodes_with_its_own_serde(pg_dsn: str) -> None:
    async with AsyncPostgresSaver.from_conn_string(
        pg_dsn, serde=_strict_serde(), cache_size=0
    ) as saver:
        clone = saver.with_allowlist(ALLOW_POINT)
        assert clone is not saver and clone._core.serde.inner is clone.serde
        checkpoint, config = _point_checkpoint()
        stored = await clone.aput(config, checkpoint, {}, {"point": "1"})
        tup = await clone.aget_tuple(stored)
        assert tup.checkpoint["channel_values"]["point"] == AllowlistedPoint(7)
        tup = await saver.aget_tuple(stored)
        assert tup.checkpoint["channel_values"]["point"] == {"x": 7}


def test_delete_racing_a_put_never_leaves_rows_behind(pg_dsn: str) -> None:
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=4) as saver:
        for rep in range(5):
            tid = f"race-{rep}"
            run_turns(saver, tid, 1)
            with ThreadPoolExecutor(2) as pool:
                writer = pool.submit(run_turns, saver, tid, 3, 2)
                time.sleep(0.01 * rep)
                pool.submit(saver.delete_thread, tid).result(timeout=20)
                with contextlib.suppress(ThreadDeletedError):  # the delete may win or lose
                    writer.result(timeout=20)
            # Nothing from before the delete survives: a run in flight is refused;
            # a turn that began after the delete starts a fresh thread.
            with PostgresSaver.from_conn_string(pg_dsn, pool_size=1) as reader:
                latest = reader.get_tuple(thread_config(tid))
            if latest is not None:
                texts = [m.content for m in latest.checkpoint["channel_values"]["messages"]]
                assert human_text(tid, 1) not in texts


# ---------------------------------------------------------------- retention, prune, stats


class _DeltaState(TypedDict, total=False):
    log: Annotated[list[str], DeltaChannel(lambda s, ws: [*s, *(x for w in ws for x in w)])]
    turn: int


def _delta_graph(saver: Any) -> Any:
    builder = StateGraph(_DeltaState)
    builder.add_node("first", lambda s: {"log": [f"t{s['turn']}-a"]})
    builder.add_node("second", lambda s: {"log": [f"t{s['turn']}-b"]})
    builder.add_edge(START, "first")
    builder.add_edge("first", "second")
    builder.add_edge("second", END)
    return builder.compile(checkpointer=saver)


def _delta_expected(turns: int) -> list[str]:
    return [x for t in range(1, turns + 1) for x in (f"in{t}", f"t{t}-a", f"t{t}-b")]


def test_prune_keep_latest_keeps_delta_and_list_chains_valid(pg_dsn: str) -> None:
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=2) as saver:
        graph = _delta_graph(saver)
        config = thread_config("delta")
        for turn in range(1, 8):
            graph.invoke({"log": [f"in{turn}"], "turn": turn}, config)
        run_turns(saver, "chat", 8)
        saver.prune(["delta", "chat"])
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=2) as fresh:
        graph = _delta_graph(fresh)
        assert graph.get_state(config).values["log"] == _delta_expected(7)
        graph.invoke({"log": ["in8"], "turn": 8}, config)
        assert graph.get_state(config).values["log"] == _delta_expected(8)
        chat = build_chat_graph(fresh).get_state(thread_config("chat"))
        assert len(chat.values["messages"]) == 16
        # The latest checkpoint plus the ancestors its consumed trigger channels
        # (versions without a stored value) are closed over: at most one turn.
        assert 1 <= len(list(fresh.list(thread_config("chat")))) <= 5
        fresh.prune(["chat"], strategy="delete")
        assert _checkpoint_ids(pg_dsn, "chat") == set()
        assert run_turns(fresh, "chat", 1)["turn"] == 1  # "delete" leaves no tombstone


def test_keep_last_retention_while_writing(pg_dsn: str) -> None:
    policy = RetentionPolicy(keep_last=3, apply_every=2)
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=4, retention=policy) as saver:
        stop = threading.Event()
        sweeps: list[Any] = []

        def sweeper() -> None:
            while not stop.is_set():
                sweeps.append(saver.sweep())

        thread = threading.Thread(target=sweeper)
        thread.start()
        try:
            with ThreadPoolExecutor(3) as pool:
                outs = list(pool.map(lambda i: run_turns(saver, f"r{i}", 12), range(3)))
        finally:
            stop.set()
            thread.join()
        assert all(o["turn"] == 12 for o in outs)
        assert sweeps and sum(s.pruned_checkpoints for s in sweeps) >= 0
        saver.sweep()
        for i in range(3):
            # keep_last=3 plus at most one turn (5 checkpoints) of delta closure, of 60 written
            assert len(_checkpoint_ids(pg_dsn, f"r{i}")) <= 3 + 5
            state = build_chat_graph(saver).get_state(thread_config(f"r{i}"))
            contents = [m.content for m in state.values["messages"]]
            assert len(contents) == 24
            assert contents[-1] == reply_text(f"r{i}", 12)


def test_sweep_expires_idle_threads_but_skips_one_being_written(pg_dsn: str) -> None:
    with PostgresSaver.from_conn_string(
        pg_dsn, pool_size=2, retention=RetentionPolicy(thread_ttl_seconds=0.2)
    ) as saver:
        for tid in ("idle-1", "idle-2", "busy"):
            run_turns(saver, tid, 1)
        time.sleep(0.4)
        dry = saver.sweep(dry_run=True)
        assert dry.dry_run and set(dry.expired_threads) == {"idle-1", "idle-2", "busy"}
        assert _checkpoint_ids(pg_dsn, "idle-1")
        with psycopg.connect(pg_dsn) as other_instance:
            other_instance.execute("SELECT 1 FROM lgm_threads WHERE thread_id='busy' FOR UPDATE")
            report = saver.sweep()
            other_instance.rollback()
        assert set(report.expired_threads) == {"idle-1", "idle-2"}
        assert _checkpoint_ids(pg_dsn, "idle-1") == set()
        assert _checkpoint_ids(pg_dsn, "busy")
        # An expired id is reusable: a new run on it starts a fresh thread.
        out = run_turns(saver, "idle-1", 1, start=2)
        assert next(m.content for m in out["messages"]) == human_text("idle-1", 2)


def test_size_cap_evicts_oldest_once_and_counts_freed_space_as_free(pg_dsn: str) -> None:
    """Deleted rows leave their space in the tables; a second sweep must not evict again."""
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=2) as saver:
        for i in range(6):
            run_turns(saver, f"cap-{i}", 6)
        stats = saver.storage_stats()
        used = stats.database_bytes - stats.free_bytes
        per_thread = sum(t.total_bytes for t in stats.threads) // 6
        # Room for everything but about two threads' payload.
        cap = used - per_thread * 3 // 2
    policy = RetentionPolicy(max_bytes=cap)
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=2, retention=policy) as saver:
        dry = saver.sweep(dry_run=True)
        assert dry.evicted_threads[:1] == ("cap-0",)
        first = saver.sweep()
        assert first.evicted_threads == dry.evicted_threads
        assert 1 <= len(first.evicted_threads) <= 3
        after = saver.storage_stats()
        assert after.free_bytes > 0  # the evicted rows' space, not yet given back
        second = saver.sweep()
        assert second.evicted_threads == ()
        kept = {t.thread_id for t in after.threads}
        assert kept == {f"cap-{i}" for i in range(6)} - set(first.evicted_threads)


def test_storage_stats_vacuum_and_linear_growth(pg_dsn: str) -> None:
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=1) as saver:
        payload = []
        for window in range(3):
            run_turns(saver, "grow", 20, start=1 + 20 * window)
            stats = saver.storage_stats("grow")
            (thread,) = stats.threads
            payload.append(thread.channel_value_bytes + thread.item_bytes)
        assert stats.database_bytes > 0 and thread.checkpoints == 300
        first, last = payload[0], payload[2] - payload[1]
        assert last <= 1.5 * first, payload  # list items are stored once: flat per turn
        assert saver.storage_stats().thread_count == 1
        saver.delete_thread("grow")
        assert saver.vacuum() > 0
        assert saver.vacuum(full=True) > 0
        assert saver.storage_stats().thread_count == 0


def test_copy_thread_and_delete_for_runs(pg_dsn: str) -> None:
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=2) as saver:
        graph = build_chat_graph(saver)
        for turn, run in ((1, "run-a"), (2, "run-b")):
            config = {"configurable": {"thread_id": "src", "run_id": run}}
            graph.invoke(turn_input("src", turn), config)
        saver.copy_thread("src", "dst")
        graph = build_chat_graph(saver)
        src = graph.get_state(thread_config("src")).values["messages"]
        dst = graph.get_state(thread_config("dst")).values["messages"]
        assert [m.content for m in src] == [m.content for m in dst]
        with pytest.raises(ConfigurationError, match="already has checkpoints"):
            saver.copy_thread("src", "dst")
        runs = {t.metadata.get("run_id") for t in saver.list(thread_config("src"))}
        assert runs == {"run-a", "run-b"}
        saver.delete_for_runs(["run-b"])  # deletes run-b's rows in both threads
        assert len(_checkpoint_ids(pg_dsn, "src")) == 5
        assert len(_checkpoint_ids(pg_dsn, "dst")) == 5
        saver.delete_for_runs(["run-a"])
        assert _checkpoint_ids(pg_dsn, "src") == _checkpoint_ids(pg_dsn, "dst") == set()


async def test_async_saver_sync_methods_from_another_thread(pg_dsn: str) -> None:
    async with AsyncPostgresSaver.from_conn_string(pg_dsn, pool_size=2) as saver:
        await _aturns(saver, "mixed", 2)
        tup = await asyncio.to_thread(saver.get_tuple, thread_config("mixed"))
        assert tup is not None and tup.checkpoint["channel_values"]["turn"] == 2
        listed = await asyncio.to_thread(lambda: list(saver.list(thread_config("mixed"))))
        assert len(listed) == 10
        with pytest.raises(asyncio.InvalidStateError):
            saver.get_tuple(thread_config("mixed"))
        stats = await saver.astorage_stats()
        assert stats.threads[0].checkpoints == 10
        assert await saver.avacuum() > 0


def _sorted_ids(items: Sequence[Any]) -> list[str]:
    return sorted(t.config["configurable"]["checkpoint_id"] for t in items)
