"""``AsyncSqliteSaver``: the same saver over ``aiosqlite``.

It drives exactly the transaction generators ``SqliteSaver`` drives (from
``_core.py``), awaiting each statement on aiosqlite's connection thread; only
the way a statement is executed differs.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import (
    AsyncIterator,
    Callable,
    Collection,
    Coroutine,
    Sequence,
)
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, TypeVar

import aiosqlite
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_memory.config import RetentionPolicy
from langgraph_memory.errors import (
    CheckpointStorageError,
    ConfigurationError,
    InvalidConnectionError,
)
from langgraph_memory.session import _sql_sqlite as SQL
from langgraph_memory.session._bridges import aiter_pages
from langgraph_memory.session._core import (
    Execute,
    Fetch,
    SaverCore,
    Statement,
    Txn,
)
from langgraph_memory.session._retention import SweepReport
from langgraph_memory.session._shell import AsyncShell
from langgraph_memory.session.sqlite import (
    DEFAULT_BUSY_TIMEOUT_MS,
    DEFAULT_RETRY_SECONDS,
    check_conn_string,
    commit_batch,
    is_busy_error,
    retry_delay,
    run_reads,
    run_transaction,
    sweep_steps,
)

T = TypeVar("T")


async def _run_statement(conn: aiosqlite.Connection, statement: Statement) -> Any:
    if type(statement) is Fetch:
        return list(await conn.execute_fetchall(statement.sql, statement.params))
    if type(statement) is Execute:
        cursor = await conn.execute(statement.sql, statement.params)
        count = cursor.rowcount
        await cursor.close()
        return count
    cursor = await conn.executemany(statement.sql, statement.rows)  # type: ignore[union-attr]
    count = cursor.rowcount
    await cursor.close()
    return count


async def _adrive(conn: aiosqlite.Connection, gen: Txn[T]) -> T:
    try:
        statement = next(gen)
        while True:
            result = await _run_statement(conn, statement)
            statement = gen.send(result)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


_Queued = tuple[Callable[[], Txn[Any]], asyncio.Future[Any]]


class _AsyncGroupCommit:
    """Writes waiting for the next commit, ``get_tuple`` reads waiting for the
    next hop to aiosqlite's thread, and the task running them."""

    def __init__(self) -> None:
        self.queue: list[_Queued] = []
        self.reads: list[_Queued] = []
        self.draining = False
        self.drain_task: asyncio.Future[None] | None = None


def reads_then_commit(
    conn: sqlite3.Connection,
    reads: Sequence[Callable[[], Txn[Any]]],
    writes: Sequence[Callable[[], Txn[Any]]],
) -> tuple[list[tuple[bool, Any]], list[tuple[bool, Any]]]:
    """One hop's work on aiosqlite's thread: the queued reads in one read
    transaction, then the queued writes in one write transaction. Nothing is
    committed before the last read, so a busy retry may rerun everything."""
    read_outcomes = run_reads(conn, reads) if reads else []
    return read_outcomes, commit_batch(conn, writes) if writes else []


def check_async_connection(conn: Any) -> None:
    if not isinstance(conn, aiosqlite.Connection):
        raise InvalidConnectionError(
            f"AsyncSqliteSaver needs an aiosqlite.Connection, got {type(conn).__name__}; use "
            "AsyncSqliteSaver.from_conn_string(path), or SqliteSaver for a sqlite3 connection."
        )
    if conn.row_factory not in (None, sqlite3.Row):
        raise InvalidConnectionError(
            f"connection.row_factory={conn.row_factory!r}; the saver needs None or sqlite3.Row."
        )
    if conn.text_factory is not str:
        raise InvalidConnectionError(
            f"connection.text_factory={conn.text_factory!r}; the saver needs the default (str)."
        )
    if conn.in_transaction:
        raise InvalidConnectionError(
            "the connection has an open transaction; commit it first, or open it with "
            "aiosqlite.connect(path, isolation_level=None)."
        )


class AsyncSqliteSaver(AsyncShell):
    """The SQLite checkpointer over ``aiosqlite``, for ``graph.ainvoke``/``astream``.

    Same storage, retention and guarantees as :class:`SqliteSaver` (they share
    their core). Transactions on the one aiosqlite connection are serialised
    by an ``asyncio.Lock``; ``alist`` releases it between pages, so awaiting
    ``aget_tuple`` inside an ``alist`` loop cannot deadlock.

    Args:
        conn: an open ``aiosqlite.Connection`` (``isolation_level=None`` recommended).
            Prefer :meth:`from_conn_string`, which owns its connection.
        serde: LangGraph serializer; defaults to ``JsonPlusSerializer``.
        retention: what to keep; see :class:`~langgraph_memory.config.RetentionPolicy`.
        cache_size: lists remembered per (thread, namespace, channel); 0 disables it.

    Example:
        >>> import asyncio
        >>> from langgraph.graph import StateGraph, MessagesState, START
        >>> from langgraph_memory.session import AsyncSqliteSaver
        >>> async def main():
        ...     builder = StateGraph(MessagesState)
        ...     builder.add_node("echo", lambda s: {"messages": [("ai", "hi")]})
        ...     builder.add_edge(START, "echo")
        ...     async with AsyncSqliteSaver.from_conn_string(":memory:") as saver:
        ...         graph = builder.compile(checkpointer=saver)
        ...         out = await graph.ainvoke({"messages": [("user", "hello")]},
        ...                                   {"configurable": {"thread_id": "t1"}})
        ...         return len(out["messages"])
        >>> asyncio.run(main())
        2
    """

    _SYNC_ALTERNATIVE = "SqliteSaver"
    _MIGRATIONS = SQL.MIGRATIONS

    def __init__(
        self,
        conn: aiosqlite.Connection,
        *,
        serde: SerializerProtocol | None = None,
        retention: RetentionPolicy | None = None,
        cache_size: int = 256,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        retry_seconds: float = DEFAULT_RETRY_SECONDS,
    ) -> None:
        super().__init__(serde=serde)
        check_async_connection(conn)
        if retry_seconds <= 0:
            raise ConfigurationError(f"retry_seconds={retry_seconds!r}; use seconds > 0.")
        self.conn = conn
        self._core = SaverCore(SQL, self.serde, cache_size=cache_size, retention=retention)
        self._busy_timeout_ms = busy_timeout_ms
        self._retry_seconds = retry_seconds
        self._lock = asyncio.Lock()
        self._setup_lock = asyncio.Lock()
        # aiosqlite runs every call on its own thread and queues functions there
        # with `_execute(fn, *args)`. Running a whole transaction as one such call
        # is one thread hop instead of one per statement (~9 per put): about a
        # third of the CPU per turn. Without it we fall back to per-statement awaits.
        worker = getattr(conn, "_execute", None)
        self._worker: Callable[..., Coroutine[Any, Any, Any]] | None = (
            worker if callable(worker) and hasattr(type(conn), "_conn") else None
        )
        # Held by reference so a with_allowlist() clone shares the same queue.
        self._group = _AsyncGroupCommit()
        self.loop = asyncio.get_running_loop()
        self.is_setup = False

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str,
        *,
        serde: SerializerProtocol | None = None,
        retention: RetentionPolicy | None = None,
        cache_size: int = 256,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        retry_seconds: float = DEFAULT_RETRY_SECONDS,
    ) -> AsyncIterator[AsyncSqliteSaver]:
        """Open a saver that owns (and closes) its aiosqlite connection.

        Args:
            conn_string: a file path, ``file:`` URI, or ``":memory:"``.
            serde: LangGraph serializer.
            retention: what to keep.
            cache_size: see the class docstring.
            busy_timeout_ms: how long SQLite waits for the write lock per attempt.
            retry_seconds: how long busy transactions are retried.

        Yields:
            A set-up saver.
        """
        check_conn_string(conn_string)
        conn = await aiosqlite.connect(
            conn_string,
            isolation_level=None,
            timeout=busy_timeout_ms / 1000,
            uri=conn_string.startswith("file:"),
            cached_statements=256,
        )
        try:
            saver = cls(
                conn,
                serde=serde,
                retention=retention,
                cache_size=cache_size,
                busy_timeout_ms=busy_timeout_ms,
                retry_seconds=retry_seconds,
            )
            await saver.asetup()
            yield saver
        finally:
            await conn.close()

    # ---------------------------------------------------------------- running transactions

    async def _retrying(self, attempt_fn: Callable[[], Coroutine[Any, Any, T]]) -> T:
        deadline = time.monotonic() + self._retry_seconds
        attempt = 0
        while True:
            try:
                return await attempt_fn()
            except sqlite3.OperationalError as exc:
                attempt += 1
                await asyncio.sleep(retry_delay(exc, attempt, deadline, self._retry_seconds))

    async def _transaction(self, begin: str, factory: Callable[[], Txn[T]]) -> T:
        async def attempt() -> T:
            async with self._lock:
                if self._worker is not None:
                    # The whole transaction in one hop to aiosqlite's thread.
                    return await self._worker(run_transaction, self.conn._conn, begin, factory)  # type: ignore[no-any-return]
                return await self._statement_by_statement(begin, factory)

        return await self._retrying(attempt)

    async def _statement_by_statement(self, begin: str, factory: Callable[[], Txn[T]]) -> T:
        """Fallback for an aiosqlite without ``_execute``: one await per statement."""
        if self.conn.in_transaction:
            raise InvalidConnectionError(
                "the connection has an open transaction not started by the saver; "
                "commit it, or open the connection with isolation_level=None."
            )
        try:
            await self.conn.execute(begin)
            result = await _adrive(self.conn, factory())
            await self.conn.execute(SQL.COMMIT)
            return result
        except BaseException:
            if self.conn.in_transaction:
                await self.conn.execute(SQL.ROLLBACK)
            raise

    async def _write(self, factory: Callable[[], Txn[T]]) -> T:
        """Run one write transaction, committed before this returns (group commit).

        Writes queue up while a commit is in progress (20 runs in flight issue
        them concurrently); one drain task runs each queued batch in ONE
        transaction (see ``commit_batch``: one caller's error, a tombstoned
        thread, fails only that caller's write).
        """
        return await self._enqueue(factory, read=False)  # type: ignore[no-any-return]

    async def _enqueue(self, factory: Callable[[], Txn[Any]], *, read: bool) -> Any:
        await self._ensure_setup()
        done: asyncio.Future[Any] = self.loop.create_future()
        # Looked up now, not before the await: the drain swaps these lists.
        (self._group.reads if read else self._group.queue).append((factory, done))
        if not self._group.draining:
            # The drain runs as its own task, so a cancelled caller never strands
            # the writes batched with its own (they still commit and get results).
            self._group.draining = True
            self._group.drain_task = asyncio.ensure_future(self._drain())
        return await asyncio.shield(done)

    async def _drain(self) -> None:
        try:
            while self._group.queue or self._group.reads:
                batch, self._group.queue = self._group.queue, []
                reads, self._group.reads = self._group.reads, []
                try:
                    read_outcomes, outcomes = await self._retrying(
                        partial(self._commit_batch, batch, reads)
                    )
                except BaseException as exc:
                    for _, done in [*reads, *batch]:
                        if not done.done():
                            done.set_exception(exc)
                    if not isinstance(exc, Exception):
                        raise
                    continue
                for (_, done), (ok, value) in zip(
                    [*reads, *batch], [*read_outcomes, *outcomes], strict=True
                ):
                    if done.done():
                        continue
                    if ok:
                        done.set_result(value)
                    else:
                        done.set_exception(value)
        except BaseException:
            for _, done in [*self._group.reads, *self._group.queue]:
                if not done.done():
                    done.set_exception(CheckpointStorageError("the operation was interrupted"))
            self._group.queue = []
            self._group.reads = []
            raise
        finally:
            self._group.draining = False

    async def _commit_batch(
        self, batch: list[_Queued], reads: list[_Queued]
    ) -> tuple[list[tuple[bool, Any]], list[tuple[bool, Any]]]:
        factories = [factory for factory, _ in batch]
        read_factories = [factory for factory, _ in reads]
        async with self._lock:
            if self._worker is not None:
                return await self._worker(  # type: ignore[no-any-return]
                    reads_then_commit, self.conn._conn, read_factories, factories
                )
            # Fallback without aiosqlite's worker hook: one transaction each.
            read_outcomes = await self._each_alone(SQL.BEGIN_READ, read_factories)
            return read_outcomes, await self._each_alone(SQL.BEGIN_WRITE, factories)

    async def _each_alone(
        self, begin: str, factories: Sequence[Callable[[], Txn[Any]]]
    ) -> list[tuple[bool, Any]]:
        outcomes: list[tuple[bool, Any]] = []
        for factory in factories:
            try:
                outcomes.append((True, await self._statement_by_statement(begin, factory)))
            except sqlite3.OperationalError as exc:
                if is_busy_error(exc):
                    raise
                outcomes.append((False, CheckpointStorageError(f"SQLite refused: {exc}")))
            except Exception as exc:
                outcomes.append((False, exc))
        return outcomes

    async def _read(self, factory: Callable[[], Txn[T]]) -> T:
        await self._ensure_setup()
        return await self._transaction(SQL.BEGIN_READ, factory)

    async def _plain(self, sql: str) -> list[Any]:
        async def attempt() -> list[Any]:
            async with self._lock:
                return list(await self.conn.execute_fetchall(sql))

        return await self._retrying(attempt)

    async def _script(self, sql: str) -> None:
        """Run to completion (see ``SqliteSaver._script``)."""

        async def attempt() -> None:
            async with self._lock:
                await self.conn.executescript(sql)

        await self._retrying(attempt)

    # ---------------------------------------------------------------- setup

    async def asetup(self) -> None:
        """Create or migrate the schema; idempotent and safe under concurrent starts."""
        await self._set_up_once()

    async def _before_migrations(self) -> None:
        for pragma in SQL.CONNECTION_PRAGMAS:
            await self._plain(pragma.format(busy_timeout_ms=self._busy_timeout_ms))
        await self._plain(SQL.SET_AUTO_VACUUM_INCREMENTAL)
        await self._plain(SQL.SET_WAL)

    async def _migrate(self, step: Callable[[], Txn[Any]]) -> None:
        await self._transaction(SQL.BEGIN_WRITE, step)

    # ---------------------------------------------------------------- async API

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        # Queued like a write: concurrent get_tuple calls (runs starting together)
        # and pending writes share one hop to aiosqlite's thread.
        loaded = await self._enqueue(lambda: self._core.get_tuple_txn(config), read=True)
        return self._core.build_tuple(loaded)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Checkpoints newest first, read in pages; the lock is released while yielding."""
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
        prepared = self._core.prepare_put(config, checkpoint, metadata, new_versions)
        outcome = await self._write(lambda: self._core.put_txn(prepared))
        saved = self._core.finish_put(prepared, outcome)
        if outcome.retention_due and self._core.retention is not None:
            await self._keep_last(prepared.key.thread_id)
        return saved

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        prepared = self._core.prepare_writes(config, writes, task_id, task_path)
        await self._write(lambda: self._core.writes_txn(prepared))

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete the thread and tombstone its id (see ``SqliteSaver.delete_thread``)."""
        await self._write(lambda: self._core.delete_thread_txn(thread_id))
        self._core.cache.discard_thread(str(thread_id))

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> AsyncSqliteSaver:
        """A clone whose serializer accepts ``extra_allowlist``; shares connection,
        cache and commit queue with this saver."""
        return self._clone_with_allowlist(extra_allowlist)  # type: ignore[no-any-return]

    async def asweep(self, dry_run: bool = False) -> SweepReport:
        """Apply the retention policy now (see ``SqliteSaver.sweep``)."""
        return await self._run_steps(sweep_steps(self._core, time.time(), dry_run))

    async def avacuum(self, *, full: bool = False) -> int:
        await self._ensure_setup()
        auto_vacuum = await self._plain(SQL.GET_AUTO_VACUUM)
        if full or not auto_vacuum or int(auto_vacuum[0][0]) != 2:
            await self._plain(SQL.FULL_VACUUM)
        else:
            await self._script(SQL.INCREMENTAL_VACUUM)
        await self._plain(SQL.WAL_CHECKPOINT_TRUNCATE)
        return await self._read(self._core.size_txn)
