"""``AsyncPostgresSaver``: the Postgres checkpointer on ``psycopg.AsyncConnection``.

It drives exactly the transaction generators ``PostgresSaver`` drives (from
``_core.py``), awaiting each statement; only the way a statement is executed
differs. Each call borrows its own connection from an ``AsyncConnectionPool``,
so N runs in flight use up to ``pool_size`` connections at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Collection,
    Sequence,
)
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, TypeVar

try:
    import psycopg
    from psycopg.rows import tuple_row
    from psycopg_pool import AsyncConnectionPool
except ModuleNotFoundError as exc:  # the 'postgres' extra is not installed
    from langgraph_memory._extras import raise_missing_extra

    raise_missing_extra("postgres", "AsyncPostgresSaver", exc)

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_memory._pg_erase import await_older_snapshots
from langgraph_memory.config import PrivacyPolicy, RetentionPolicy
from langgraph_memory.encryption import EncryptionKeys
from langgraph_memory.errors import CheckpointStorageError
from langgraph_memory.session import _pg_connections as PG
from langgraph_memory.session import _pg_fast as FAST
from langgraph_memory.session import _sql_postgres as SQL
from langgraph_memory.session._bridges import aiter_pages
from langgraph_memory.session._core import (
    Execute,
    ExecuteMany,
    Fetch,
    PreparedWrites,
    Txn,
    parse_config,
)
from langgraph_memory.session._deferred import DEFERRED_WRITES_MAX_DELAY, log_dropped
from langgraph_memory.session._pg_serde import CompressedDicts
from langgraph_memory.session._retention import SweepReport
from langgraph_memory.session._shell import AsyncShell
from langgraph_memory.session.postgres import (
    pool_open_error,
    pool_options,
    retry_delay,
    sweep_steps,
)

T = TypeVar("T")

logger = logging.getLogger(__name__)


class _AsyncConnections:
    """A pool (each call borrows its own connection) or one connection (calls take turns)."""

    def __init__(
        self,
        *,
        pool: AsyncConnectionPool | None,
        conn: psycopg.AsyncConnection[Any] | None,
        owns: bool,
    ) -> None:
        self._pool = pool
        self._conn = conn
        self._owns = owns
        self._lock = asyncio.Lock()
        self._closed = False

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        if self._closed:
            raise CheckpointStorageError("the saver is closed; open a new one.")
        if self._pool is not None:
            async with self._pool.connection() as conn:
                yield conn
            return
        assert self._conn is not None
        async with self._lock:
            PG.check_idle(self._conn)
            yield self._conn

    async def check(self) -> None:
        """After a lost connection: drop every pooled connection the server closed too."""
        if self._pool is not None and not self._closed:
            await self._pool.check()

    async def close(self) -> None:
        self._closed = True
        if self._owns and self._pool is not None:
            await self._pool.close()


class _GroupCommit:
    """Puts and writes that concurrent coroutines issue in the same moment go to
    Postgres as one ``lgm_put_batch`` call: one round trip, one commit, and the
    client's per-statement cost (pool checkout, execute, wait) paid once.

    The first item of a batch schedules its flush as a task; the coroutines
    already queued to run in this loop iteration run first and join it. Each
    caller still returns only after the batch committed. Several batches run
    at once on different pooled connections (a new batch starts while the
    previous one is in flight), so there is no global serialisation.

    Task writes nobody waits for (LangGraph's ``durability="async"``, see
    ``AsyncPostgresSaver.aput_writes``) are only :meth:`defer`-red: they join
    the next batch (the step's put, normally), or a batch of their own when
    :data:`DEFERRED_WRITES_MAX_DELAY` passes first (one ``call_later`` per
    deadline, not per step). :meth:`drain` stores them before a read;
    ``aget_tuple`` drains only when its thread has writes queued or in flight
    (``unsettled``): with many runs at once some other run nearly always has.
    """

    def __init__(
        self,
        run: Callable[[list[FAST.BatchItem]], Awaitable[list[Any]]],
        store_alone: Callable[[PreparedWrites], Awaitable[None]],
    ) -> None:
        self._run = run
        self._store_alone = store_alone
        # (item, its caller's answer); None for a deferred item nobody awaits
        self._pending: list[tuple[FAST.BatchItem, asyncio.Future[Any] | None]] = []
        self._scheduled = False
        self._flushes: set[asyncio.Task[None]] = set()
        self._deferred: list[PreparedWrites] = []
        self._timer: asyncio.TimerHandle | None = None
        # Done when the deferred items in _pending are stored; then those of
        # the batches in flight.
        self._pending_stored: asyncio.Future[None] | None = None
        self._in_flight: set[asyncio.Future[None]] = set()
        # thread id -> its deferred writes not yet stored (or dropped)
        self.unsettled = FAST.UnsettledThreads()

    def busy(self) -> bool:
        """Whether deferred writes are queued or being stored (a read must wait)."""
        return bool(self._deferred or self._pending_stored is not None or self._in_flight)

    def defer(self, item: PreparedWrites) -> None:
        """Queue ``item`` for the next batch."""
        self._deferred.append(item)
        thread_id = item.key.thread_id
        self.unsettled.add(thread_id)
        if self._timer is None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(DEFERRED_WRITES_MAX_DELAY, self._deadline)

    def _deadline(self) -> None:
        self._timer = None
        if self._deferred:
            self._join_deferred()
            self._schedule()

    def _join_deferred(self) -> None:
        """Move the deferred writes into the batch being gathered."""
        if not self._deferred:
            return
        self._pending.extend((item, None) for item in self._deferred)
        self._deferred = []
        if self._pending_stored is None:
            self._pending_stored = asyncio.get_running_loop().create_future()

    def _schedule(self) -> None:
        if self._scheduled:
            return
        self._scheduled = True
        flush = asyncio.get_running_loop().create_task(self._flush())
        self._flushes.add(flush)  # a strong reference until it is done
        flush.add_done_callback(self._flushes.discard)

    async def submit(self, item: FAST.BatchItem) -> Any:
        """The item's answer (see ``_pg_fast.batch_txn``); ``None``: take the core's
        path. Deferred writes queued so far go in the same batch, ahead of it."""
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._join_deferred()
        self._pending.append((item, answer))
        self._schedule()
        return await answer

    async def drain(self) -> None:
        """Store the deferred writes now, and wait for those already being stored."""
        self._join_deferred()
        if self._pending_stored is not None:
            self._schedule()
        waiting = set(self._in_flight)
        if self._pending_stored is not None:
            waiting.add(self._pending_stored)
        if waiting:
            # asyncio.wait: a cancelled drain leaves the batches alone.
            await asyncio.wait(waiting)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def _flush(self) -> None:
        self._scheduled = False
        batch, self._pending = self._pending, []
        stored, self._pending_stored = self._pending_stored, None
        if stored is not None:
            self._in_flight.add(stored)
        try:
            await self._flush_batch(batch)
        finally:
            for item, answer in batch:
                if answer is None:  # a deferred write: stored, or logged and dropped
                    thread_id = item.key.thread_id
                    self.unsettled.settle(thread_id)
            if stored is not None:
                self._in_flight.discard(stored)
                stored.set_result(None)

    async def _flush_batch(
        self, batch: list[tuple[FAST.BatchItem, asyncio.Future[Any] | None]]
    ) -> None:
        try:
            answers = await self._run([item for item, _ in batch])
        except BaseException as exc:
            for _, answer in batch:
                if answer is None or answer.done():
                    continue  # a deferred item, or its caller was cancelled
                if isinstance(exc, asyncio.CancelledError):
                    answer.cancel()
                else:
                    answer.set_exception(exc)
            if not isinstance(exc, Exception):
                for item, answer in batch:
                    if answer is None:
                        assert isinstance(item, PreparedWrites)
                        log_dropped(logger, item, exc)
                raise
            answers = [None] * len(batch)
        else:
            for (_, answer), result in zip(batch, answers, strict=True):
                if answer is not None and not answer.done():
                    answer.set_result(result)
        # Only now the refused deferred writes, each on its own: the callers
        # above do not wait for them.
        for (item, answer), result in zip(batch, answers, strict=True):
            if answer is None and not result:
                assert isinstance(item, PreparedWrites)
                await self._store_alone(item)


async def _adrive(cur: psycopg.AsyncCursor[Any], gen: Txn[T], *, pipelined: bool) -> T:
    """Run a core transaction generator on ``cur`` (see ``postgres._runner``)."""
    try:
        statement = next(gen)
        while True:
            result: Any = None
            if type(statement) is Fetch:
                await cur.execute(statement.sql, statement.params or None)
                result = await cur.fetchall()
            elif type(statement) is Execute:
                await cur.execute(statement.sql, statement.params or None)
                if not pipelined:
                    result = cur.rowcount
                elif PG.returns_rows(statement.sql):
                    result = len(await cur.fetchall())
                else:
                    result = PG.UNKNOWN_ROWCOUNT
            else:
                assert isinstance(statement, ExecuteMany)
                if statement.rows:
                    await cur.executemany(statement.sql, statement.rows)
            statement = gen.send(result)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


class AsyncPostgresSaver(AsyncShell):
    """The Postgres checkpointer on asyncio, for ``graph.ainvoke``/``astream``.

    Same storage, retention and guarantees as
    :class:`~langgraph_memory.session.PostgresSaver` (they share their core):
    each call borrows its own pooled connection (no lock around the pool);
    write transactions on one thread queue on that thread's row; a connection
    the server dropped is discarded and an idempotent call retried.

    Args:
        conn: a ``psycopg_pool.AsyncConnectionPool`` (preferred) or a
            ``psycopg.AsyncConnection`` (calls then take turns on it), in either
            autocommit mode. Prefer :meth:`from_conn_string`, which owns its pool.
        serde: LangGraph serializer; defaults to ``JsonPlusSerializer``.
        retention: what to keep; see :class:`~langgraph_memory.config.RetentionPolicy`.
        redact_messages: ``True`` (or a ``PrivacyPolicy``) stores messages with
            identifiers redacted; the model then sees placeholders on later turns
            too (see ``session/_redaction.py``). Default off.
        encryption: an :class:`~langgraph_memory.encryption.EncryptionKeys`: checkpoints,
            channel values, pending writes and the content-bearing metadata keys are
            sealed with AES-GCM, each bound to its thread, namespace and checkpoint
            (``session/_sealing.py``); clear or moved rows fail with ``DecryptionError``.
            ``None`` (default) stores rows in clear.
        cache_size: lists remembered per (thread, namespace, channel); 0 disables it.
        pipeline: run each transaction in psycopg pipeline mode.
        synchronous_commit: wait for the WAL flush at each commit; see
            ``PostgresSaver.from_conn_string``.

    Raises:
        InvalidConnectionError: a sync connection or pool, a closed one, or one
            with an open transaction.

    Example:
        >>> import asyncio, os
        >>> from langgraph.graph import StateGraph, MessagesState, START
        >>> from langgraph_memory.session import AsyncPostgresSaver
        >>> dsn = os.environ.get("LGM_DOCTEST_PG_DSN")
        >>> async def main():
        ...     builder = StateGraph(MessagesState)
        ...     builder.add_node("echo", lambda s: {"messages": [("ai", "hi")]})
        ...     builder.add_edge(START, "echo")
        ...     async with AsyncPostgresSaver.from_conn_string(dsn, pool_size=4) as saver:
        ...         graph = builder.compile(checkpointer=saver)
        ...         await graph.ainvoke({"messages": [("user", "hello")]},
        ...                             {"configurable": {"thread_id": "doctest-t2"}})
        ...         await saver.adelete_thread("doctest-t2")
        >>> if dsn:  # a Postgres DSN, e.g. postgresql://postgres@127.0.0.1:5432/postgres
        ...     asyncio.run(main())
    """

    _SYNC_ALTERNATIVE = "PostgresSaver"

    _MIGRATIONS = SQL.MIGRATIONS
    # forget_user runs avacuum(full=True) here (see PostgresSaver).
    erase_with_full_vacuum = True

    def __init__(
        self,
        conn: psycopg.AsyncConnection[Any] | AsyncConnectionPool,
        *,
        serde: SerializerProtocol | None = None,
        retention: RetentionPolicy | None = None,
        redact_messages: bool | PrivacyPolicy = False,
        encryption: EncryptionKeys | None = None,
        cache_size: int = 256,
        pipeline: bool = True,
        synchronous_commit: bool = False,
    ) -> None:
        kind = PG.check_connection(conn, want_async=True)
        super().__init__(serde=serde)
        self._connections = _AsyncConnections(
            pool=conn if kind == "pool" else None,  # type: ignore[arg-type]
            conn=conn if kind == "conn" else None,  # type: ignore[arg-type]
            owns=False,
        )
        self._core = self._new_core(
            SQL, CompressedDicts(self.serde), cache_size, retention, redact_messages, encryption
        )
        self._pipeline = bool(pipeline)
        # Each write transaction asks for an asynchronous commit, unless our
        # own pool already set it once per connection (see from_conn_string).
        self._set_local_async_commit = not synchronous_commit
        self._latest = FAST.LatestVersions()
        self._setup_lock = asyncio.Lock()
        self._group_commit = _GroupCommit(self._write_batch, self._store_alone)
        self.loop = asyncio.get_running_loop()
        self.is_setup = False

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str,
        *,
        pool_size: int = PG.DEFAULT_POOL_SIZE,
        min_pool_size: int | None = None,
        max_idle: float = PG.DEFAULT_MAX_IDLE,
        prepare_threshold: int | None = PG.DEFAULT_PREPARE_THRESHOLD,
        pipeline: bool = True,
        synchronous_commit: bool = False,
        check_connections: bool = False,
        connect_timeout: float = 30.0,
        serde: SerializerProtocol | None = None,
        retention: RetentionPolicy | None = None,
        redact_messages: bool | PrivacyPolicy = False,
        encryption: EncryptionKeys | None = None,
        cache_size: int = 256,
    ) -> AsyncIterator[AsyncPostgresSaver]:
        """Open a saver with its own async connection pool, set up, closed on exit.

        The options mean what they mean on ``PostgresSaver.from_conn_string``;
        ``prepare_threshold=None`` is the setting for pgbouncer in transaction mode.

        Yields:
            A set-up saver.

        Raises:
            ConfigurationError: ``conn_string`` is not a DSN.
            DatabaseConnectionError: the server refused the first connection, at
                once, with libpq's reason.
        """
        options, session_async = pool_options(
            conn_string,
            pool_size=pool_size,
            min_pool_size=min_pool_size,
            max_idle=max_idle,
            prepare_threshold=prepare_threshold,
            synchronous_commit=synchronous_commit,
        )
        try:
            probe = await psycopg.AsyncConnection.connect(
                conn_string, **PG.probe_kwargs(conn_string, connect_timeout)
            )
        except psycopg.Error as exc:
            raise PG.connect_error(exc, conn_string) from None
        await probe.close()
        pool = AsyncConnectionPool(
            **options,
            configure=PG.aconfigure_async_commit if session_async else None,
            check=AsyncConnectionPool.check_connection if check_connections else None,
            name="langgraph-memory-async",
        )
        try:
            await pool.open(wait=True, timeout=connect_timeout)
        except psycopg.Error as exc:
            await pool.close()
            raise pool_open_error(exc, options["min_size"], connect_timeout) from exc
        try:
            saver = cls(
                pool,
                serde=serde,
                retention=retention,
                redact_messages=redact_messages,
                encryption=encryption,
                cache_size=cache_size,
                pipeline=pipeline,
                synchronous_commit=synchronous_commit,
            )
            saver._connections = _AsyncConnections(pool=pool, conn=None, owns=True)
            saver._set_local_async_commit = not synchronous_commit and not session_async
            await saver.asetup()
        except BaseException:
            await pool.close()
            raise
        try:
            yield saver
        finally:
            await saver.aclose()  # stores queued task writes, then closes the pool

    async def aclose(self) -> None:
        """Store queued task writes, then close the pool this saver opened (a
        connection or pool passed in stays open)."""
        try:
            await self._store_deferred()
        finally:
            self._group_commit.close()
            await self._connections.close()

    # ---------------------------------------------------------------- running transactions

    async def _attempt(self, factory: Callable[[], Txn[T]], read: bool, single: bool) -> T:
        async with self._connections.connection() as conn:
            cur = conn.cursor(row_factory=tuple_row)
            commit_sent = False
            try:
                if single and conn.autocommit:
                    # One statement is its own transaction (see PostgresSaver._attempt).
                    commit_sent = True
                    return await _adrive(cur, factory(), pipelined=False)
                if self._pipeline and conn.autocommit:
                    async with conn.pipeline():
                        await cur.execute(SQL.BEGIN_READ if read else SQL.BEGIN_WRITE)
                        if not read and self._set_local_async_commit:
                            await cur.execute(SQL.SET_ASYNC_COMMIT)
                        result = await _adrive(cur, factory(), pipelined=True)
                        commit_sent = True
                        await cur.execute(SQL.COMMIT)
                    return result
                if conn.autocommit:
                    await cur.execute(SQL.BEGIN_READ if read else SQL.BEGIN_WRITE)
                elif read:  # psycopg itself opens the transaction on the first statement
                    await cur.execute(SQL.SET_READ_SNAPSHOT)
                if not read and self._set_local_async_commit:
                    await cur.execute(SQL.SET_ASYNC_COMMIT)
                result = await _adrive(cur, factory(), pipelined=False)
                commit_sent = True
                if conn.autocommit:
                    await cur.execute(SQL.COMMIT)
                else:
                    await conn.commit()
                return result
            except psycopg.Error as exc:
                lost = PG.as_connection_loss(exc, conn, commit_sent=commit_sent)
                if not conn.closed:
                    # A connection the server dropped cannot roll back; the pool discards it.
                    with contextlib.suppress(psycopg.Error):
                        await conn.rollback()
                if lost is exc:
                    raise
                raise lost from exc
            except BaseException:
                if not conn.closed:
                    with contextlib.suppress(psycopg.Error):
                        await conn.rollback()
                raise
            finally:
                await cur.close()

    async def _run(
        self,
        factory: Callable[[], Txn[T]],
        *,
        read: bool = False,
        idempotent: bool = True,
        single: bool = False,
    ) -> T:
        attempt = 0
        started = time.monotonic()
        while True:
            try:
                return await self._attempt(factory, read, single)
            except psycopg.Error as exc:
                attempt += 1
                await asyncio.sleep(
                    retry_delay(exc, attempt, idempotent=idempotent, started=started)
                )
                await self._connections.check()

    async def _write(
        self, factory: Callable[[], Txn[T]], *, idempotent: bool = True, single: bool = False
    ) -> T:
        await self._ensure_setup()
        if self._group_commit.busy():
            await self._group_commit.drain()
        return await self._run(factory, idempotent=idempotent, single=single)

    async def _write_batch(self, items: list[FAST.BatchItem]) -> list[Any]:
        # Not _write: a batch must not wait for the deferred writes it carries.
        await self._ensure_setup()
        async_commit = self._set_local_async_commit
        return await self._run(
            partial(FAST.batch_txn, items, async_commit=async_commit), single=True
        )

    async def _store_alone(self, p: PreparedWrites) -> None:
        """A deferred write its batch refused, through the core (never raises)."""
        try:
            await self._run(lambda: self._core.writes_txn(p))
        except Exception as exc:
            log_dropped(logger, p, exc)

    async def _store_deferred(self) -> None:
        """Store the queued task writes (if any) before returning."""
        if self._group_commit.busy():
            await self._group_commit.drain()

    async def _read(
        self, factory: Callable[[], Txn[T]], *, single: bool = False, stored: bool = False
    ) -> T:
        """A read transaction; first the deferred task writes unless ``stored`` (the
        caller made sure its thread has none)."""
        await self._ensure_setup()
        if not stored and self._group_commit.busy():
            await self._group_commit.drain()  # read-your-writes
        return await self._run(factory, read=True, single=single)

    async def _write_once(self, factory: Callable[[], Txn[T]]) -> T:
        # Not retried after a lost connection: it may have committed.
        return await self._write(factory, idempotent=False)

    def _thread_locked(self, thread_id: str, factory: Callable[[], Txn[T]]) -> Callable[[], Txn[T]]:
        return PG.thread_txn(thread_id, factory)

    def _core_serde(self, serde: SerializerProtocol) -> SerializerProtocol:
        return CompressedDicts(serde)

    # ---------------------------------------------------------------- setup

    async def asetup(self) -> None:
        """Create or migrate the schema; idempotent and safe under concurrent starts."""
        await self._set_up_once()

    async def _migrate(self, step: Callable[[], Txn[Any]]) -> None:
        await self._run(PG.migration_txn(step))

    # ---------------------------------------------------------------- async API

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        await self._check_owner(self._core.owner_check(config), claim=False)
        key = parse_config(config)
        if key.thread_id in self._group_commit.unsettled:
            await self._group_commit.drain()  # read-your-writes
        if key.checkpoint_id is None:
            guess = self._latest.guess(key.thread_id, key.checkpoint_ns)
            try:
                loaded = await self._read(
                    lambda: FAST.latest_txn(self._core, config, guess), single=True, stored=True
                )
            except FAST.PrefetchMiss:
                loaded = await self._read(lambda: self._core.get_tuple_txn(config), stored=True)
        else:
            loaded = await self._read(lambda: self._core.get_tuple_txn(config), stored=True)
        if loaded is not None:
            raw = loaded[0]
            self._latest.remember(raw.thread_id, raw.checkpoint_ns, raw.row_versions())
        return self._core.build_tuple(loaded)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Checkpoints newest first, read in keyset pages; no connection is held while yielding."""
        query = self._core.list_query(config, filter=filter, before=before, limit=limit)
        async for item in aiter_pages(self._core, query, self._list_page):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        await self._check_owner(self._core.owner_check(config), claim=True)
        prepared = self._core.prepare_put(config, checkpoint, metadata, new_versions)
        outcome = await self._group_commit.submit(prepared)
        if outcome is None:
            outcome = await self._put_restarting(
                prepared, lambda: self._write(lambda: self._core.put_txn(prepared))
            )
        saved = self._core.finish_put(prepared, outcome)
        key = prepared.key
        self._latest.remember(key.thread_id, key.checkpoint_ns, prepared.row_versions)
        if outcome.retention_due and self._core.retention is not None:
            await self._keep_last(key.thread_id)
        return saved

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes (see ``PostgresSaver.put_writes``).

        In LangGraph's ``durability="async"`` mode a task's regular writes are
        only queued, and join the next batch (normally the step's ``aput``);
        any other read or write of this saver, ``aclose()``, or at the latest
        a ``call_later`` timer 0.1 s later, stores them first. Errors,
        interrupts, other modes and direct calls are stored before this returns.
        """
        await self._check_owner(self._core.owner_check(config), claim=True)
        prepared = self._core.prepare_writes(config, writes, task_id, task_path)
        group = self._group_commit
        if FAST.fast_writes(prepared):
            # may_wait is False for the writes of a step that got an error or
            # interrupt write (the core's EndedSteps): no put follows that step.
            # Nothing awaits between prepare_writes and here, so the step cannot
            # end in between.
            if prepared.may_wait:
                group.defer(prepared)
                return
            if await group.submit(prepared):  # carries the queued ones
                return
        await self._write(lambda: self._core.writes_txn(prepared))

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete the thread and tombstone its id (see ``PostgresSaver.delete_thread``)."""
        await self._write(PG.delete_thread_txn(self._core, thread_id))
        self._core.cache.discard_thread(str(thread_id))

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> AsyncPostgresSaver:
        """A clone whose serializer accepts ``extra_allowlist`` (LangGraph calls this in
        ``compile``); it shares connections and cache with this saver, but its core
        decodes with the clone's serializer."""
        return self._clone_with_allowlist(extra_allowlist)  # type: ignore[no-any-return]

    async def asweep(self, dry_run: bool = False) -> SweepReport:
        """Apply the retention policy now; safe while others write (see ``PostgresSaver.sweep``)."""
        return await self._run_steps(sweep_steps(self._core, time.time(), dry_run))

    async def avacuum(self, *, full: bool = False) -> int:
        await self._ensure_setup()
        await self._store_deferred()
        pending = await self._read(self._core.erase_pending_txn) if full else []
        await self._vacuum(SQL.FULL_VACUUM_TABLES if full else SQL.VACUUM_TABLES, full=full)
        await self._write(partial(self._core.clear_erase_pending_txn, pending))
        return await self._read(self._core.size_txn)

    async def aerase_pending(self) -> int:
        """Async :meth:`PostgresSaver.erase_pending`: ``VACUUM FULL`` the marked tables."""
        await self._ensure_setup()
        pending = await self._read(self._core.erase_pending_txn)
        if not pending:
            return 0
        await self._vacuum(
            [v for r, _, _ in pending if (v := SQL.FULL_VACUUM_RELATION.get(r))], full=True
        )
        await self._write(partial(self._core.clear_erase_pending_txn, pending))
        return len(pending)

    async def _vacuum(self, statements: Sequence[str], *, full: bool) -> None:
        async with self._connections.connection() as conn:
            was_autocommit = conn.autocommit
            await conn.set_autocommit(True)  # VACUUM cannot run inside a transaction
            try:
                if full:  # see PostgresSaver.vacuum
                    await await_older_snapshots(conn)
                for statement in statements:
                    await conn.execute(statement)
            finally:
                await conn.set_autocommit(was_autocommit)
