"""``AsyncSqliteSaver``: the same saver over ``aiosqlite``.

It drives exactly the transaction generators ``SqliteSaver`` drives (from
``_core.py``), awaiting each statement on aiosqlite's connection thread; only
the way a statement is executed differs.
"""

from __future__ import annotations

import asyncio
import logging
import os
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

from langgraph_memory.config import PrivacyPolicy, RetentionPolicy
from langgraph_memory.encryption import EncryptionKeys
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
    PreparedWrites,
    Statement,
    Txn,
)
from langgraph_memory.session._deferred import DEFERRED_WRITES_MAX_DELAY, log_dropped
from langgraph_memory.session._retention import SweepReport
from langgraph_memory.session._shell import AsyncShell
from langgraph_memory.session.sqlite import (
    DEFAULT_BUSY_TIMEOUT_MS,
    DEFAULT_RETRY_SECONDS,
    commit_batch,
    is_busy_error,
    open_error,
    resolve_conn_string,
    retry_delay,
    run_reads,
    run_transaction,
    sweep_steps,
)

T = TypeVar("T")

logger = logging.getLogger(__name__)


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


class _Deferred:
    """Stands in for the future of a task write nobody waits for: the drain
    settles it like a caller's future, and a failure can only be logged."""

    __slots__ = ("prepared", "settled")

    def __init__(self, prepared: PreparedWrites) -> None:
        self.prepared = prepared
        self.settled = False

    def done(self) -> bool:
        return self.settled

    def set_result(self, result: Any) -> None:
        self.settled = True

    def set_exception(self, error: BaseException) -> None:
        self.settled = True
        log_dropped(logger, self.prepared, error)


_Queued = tuple[Callable[[], Txn[Any]], "asyncio.Future[Any] | _Deferred"]


class _AsyncGroupCommit:
    """Writes waiting for the next commit, ``get_tuple`` reads waiting for the
    next hop to aiosqlite's thread, task writes waiting for the next of either,
    and the task running them."""

    def __init__(self) -> None:
        self.queue: list[_Queued] = []
        self.reads: list[_Queued] = []
        self.draining = False
        self.drain_task: asyncio.Future[None] | None = None
        # Task writes of durability="async" runs (see AsyncSqliteSaver.aput_writes):
        # moved into ``queue`` by the next read or write, or by ``timer``.
        self.deferred: list[_Queued] = []
        # loop.time() when the oldest of ``deferred`` was queued
        self.deferred_since = 0.0
        self.timer: asyncio.TimerHandle | None = None
        self.closed = False

    def take_deferred(self) -> None:
        """Queue the deferred task writes for the next commit, in order, ahead of
        whatever is queued after this call."""
        if self.deferred:
            self.queue.extend(self.deferred)
            self.deferred = []


def commit_then_reads(
    conn: sqlite3.Connection,
    reads: Sequence[Callable[[], Txn[Any]]],
    writes: Sequence[Callable[[], Txn[Any]]],
) -> tuple[list[tuple[bool, Any]] | None, list[tuple[bool, Any]]]:
    """One hop's work on aiosqlite's thread: the queued writes in one write
    transaction, then the queued reads in one read transaction, so a read sees
    the task writes ``aput_writes`` deferred before it was called.

    A busy error in the reads after the writes committed returns ``None`` for
    the reads: the caller retries them alone (the writes must not run twice).
    """
    outcomes = commit_batch(conn, writes) if writes else []
    if not reads:
        return [], outcomes
    try:
        return run_reads(conn, reads), outcomes
    except sqlite3.OperationalError as exc:
        if writes and is_busy_error(exc):
            return None, outcomes
        raise


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
        redact_messages: ``True`` (or a ``PrivacyPolicy``) stores messages with
            identifiers redacted; the model then sees placeholders on later turns
            too (see ``session/_redaction.py``). Default off.
        encryption: an :class:`~langgraph_memory.encryption.EncryptionKeys`: checkpoints,
            channel values, pending writes and the content-bearing metadata keys are
            sealed with AES-GCM, each bound to its thread, namespace and checkpoint
            (``session/_sealing.py``); clear or moved rows fail with ``DecryptionError``.
            ``None`` (default) stores rows in clear.
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
        redact_messages: bool | PrivacyPolicy = False,
        encryption: EncryptionKeys | None = None,
        cache_size: int = 256,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        retry_seconds: float = DEFAULT_RETRY_SECONDS,
    ) -> None:
        super().__init__(serde=serde)
        check_async_connection(conn)
        if retry_seconds <= 0:
            raise ConfigurationError(f"retry_seconds={retry_seconds!r}; use seconds > 0.")
        self.conn = conn
        self._core = self._new_core(
            SQL, self.serde, cache_size, retention, redact_messages, encryption
        )
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
        # from_conn_string opened the connection: aclose() closes it.
        self._owns_conn = False

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str | os.PathLike[str],
        *,
        serde: SerializerProtocol | None = None,
        retention: RetentionPolicy | None = None,
        redact_messages: bool | PrivacyPolicy = False,
        encryption: EncryptionKeys | None = None,
        cache_size: int = 256,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        retry_seconds: float = DEFAULT_RETRY_SECONDS,
    ) -> AsyncIterator[AsyncSqliteSaver]:
        """Open a saver that owns (and closes) its aiosqlite connection.

        Args:
            conn_string: a file path (``str`` or ``pathlib.Path``), ``file:`` URI,
                or ``":memory:"``.
            serde: LangGraph serializer.
            retention: what to keep.
            redact_messages: store messages with identifiers redacted.
            encryption: seal rows at rest (see the class docstring).
            cache_size: see the class docstring.
            busy_timeout_ms: how long SQLite waits for the write lock per attempt.
            retry_seconds: how long busy transactions are retried.

        Yields:
            A set-up saver.

        Raises:
            DatabaseConnectionError: the file's directory does not exist, or
                SQLite cannot open the file.
        """
        conn_string = resolve_conn_string(conn_string)
        try:
            conn = await aiosqlite.connect(
                conn_string,
                isolation_level=None,
                timeout=busy_timeout_ms / 1000,
                uri=conn_string.startswith("file:"),
                cached_statements=256,
            )
        except sqlite3.OperationalError as exc:
            if "unable to open" not in str(exc):
                raise
            raise open_error(exc, conn_string) from exc
        try:
            saver = cls(
                conn,
                serde=serde,
                retention=retention,
                redact_messages=redact_messages,
                encryption=encryption,
                cache_size=cache_size,
                busy_timeout_ms=busy_timeout_ms,
                retry_seconds=retry_seconds,
            )
        except BaseException:
            await conn.close()
            raise
        saver._owns_conn = True
        try:
            await saver.asetup()
            yield saver
        finally:
            await saver.aclose()

    async def aclose(self) -> None:
        """Store the task writes still queued (see :meth:`aput_writes`), then close
        the connection if :meth:`from_conn_string` opened it (a connection passed
        in stays open; call this before closing it yourself).

        Later task writes are stored at once, so a write after this fails in
        its own call rather than being dropped.
        """
        group = self._group
        group.closed = True
        if group.timer is not None:
            group.timer.cancel()
            group.timer = None
        try:
            await self._store_deferred()
        finally:
            if self._owns_conn:
                await self.conn.close()

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
        group = self._group
        # Deferred task writes go first (a read runs after the writes of its
        # hop): every read or write stores them before its own work.
        group.take_deferred()
        # Looked up now, not before the await: the drain swaps these lists.
        (group.reads if read else group.queue).append((factory, done))
        self._start_drain()
        return await asyncio.shield(done)

    def _start_drain(self) -> None:
        if not self._group.draining:
            # The drain runs as its own task, so a cancelled caller never strands
            # the writes batched with its own (they still commit and get results).
            self._group.draining = True
            self._group.drain_task = asyncio.ensure_future(self._drain())

    def _defer(self, prepared: PreparedWrites) -> None:
        """Queue a task's writes for the next read or write of this saver (or the
        timer), and return at once (see :meth:`aput_writes`)."""
        group = self._group
        if not group.deferred:
            group.deferred_since = self.loop.time()
            if group.timer is None:
                group.timer = self.loop.call_at(
                    group.deferred_since + DEFERRED_WRITES_MAX_DELAY, self._on_timer
                )
        group.deferred.append((lambda: self._core.writes_txn(prepared), _Deferred(prepared)))

    def _on_timer(self) -> None:
        """Store deferred task writes that have waited DEFERRED_WRITES_MAX_DELAY.

        The timer is not cancelled when a put stores them first (that would be
        a cancel and a new timer per step); it fires at most once per
        DEFERRED_WRITES_MAX_DELAY while writes are being deferred, and re-arms
        for the oldest write still waiting.
        """
        group = self._group
        group.timer = None
        if not group.deferred or group.closed:
            return
        due = group.deferred_since + DEFERRED_WRITES_MAX_DELAY
        if due - self.loop.time() > 0.001:
            group.timer = self.loop.call_at(due, self._on_timer)
            return
        group.take_deferred()
        self._start_drain()

    async def _store_deferred(self) -> None:
        """Return once every task write deferred so far is stored (or dropped)."""
        group = self._group
        if not group.deferred and not group.draining:
            return
        await self._ensure_setup()
        group.take_deferred()
        self._start_drain()
        # The drain ends when its queue is empty, so this waits for the writes
        # queued before this call; its errors went to their own callers (or log).
        while group.draining and group.drain_task is not None:
            await asyncio.wait([group.drain_task])

    async def _drain(self) -> None:
        try:
            while self._group.queue or self._group.reads:
                batch, self._group.queue = self._group.queue, []
                reads, self._group.reads = self._group.reads, []
                try:
                    maybe_reads, outcomes = await self._retrying(
                        partial(self._commit_batch, batch, reads)
                    )
                    if maybe_reads is None:  # the writes committed, the reads were busy
                        maybe_reads, _ = await self._retrying(
                            partial(self._commit_batch, [], reads)
                        )
                    assert maybe_reads is not None
                    read_outcomes = maybe_reads
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
    ) -> tuple[list[tuple[bool, Any]] | None, list[tuple[bool, Any]]]:
        """Writes, then reads (see ``commit_then_reads``)."""
        factories = [factory for factory, _ in batch]
        read_factories = [factory for factory, _ in reads]
        async with self._lock:
            if self._worker is not None:
                return await self._worker(  # type: ignore[no-any-return]
                    commit_then_reads, self.conn._conn, read_factories, factories
                )
            # Fallback without aiosqlite's worker hook: one transaction each.
            outcomes = await self._each_alone(SQL.BEGIN_WRITE, factories)
            try:
                return await self._each_alone(SQL.BEGIN_READ, read_factories), outcomes
            except sqlite3.OperationalError:
                if factories:
                    return None, outcomes
                raise

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
        # Through the queue, after the writes queued before it (read-your-writes
        # for deferred task writes), sharing a hop with queued aget_tuple calls.
        return await self._enqueue(factory, read=True)  # type: ignore[no-any-return]

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
        await self._check_owner(self._core.owner_check(config), claim=False)
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
        await self._check_owner(self._core.owner_check(config), claim=True)
        prepared = self._core.prepare_put(config, checkpoint, metadata, new_versions)
        outcome = await self._put_restarting(
            prepared, lambda: self._write(lambda: self._core.put_txn(prepared))
        )
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
        """Store a task's pending writes.

        In LangGraph's ``durability="async"`` mode (its default; LangGraph does
        not wait for this call there) a task's regular writes are only queued:
        the ``aput`` LangGraph makes right after the step stores them in its
        own transaction, and any other read or write of this saver,
        :meth:`aclose` (leaving :meth:`from_conn_string`), or at the latest a
        timer 0.1 s later, stores them first. Errors, interrupts, other modes,
        direct calls, and the writes of a step that already got an error or
        interrupt write are committed before this returns. See
        docs/session-storage.md.

        Raises:
            ThreadDeletedError: the thread was deleted; it stays deleted (a
                queued write refused this way is logged and dropped instead).
        """
        await self._check_owner(self._core.owner_check(config), claim=True)
        prepared = self._core.prepare_writes(config, writes, task_id, task_path)
        # may_wait is False for the writes of a step that got an error or
        # interrupt write (the core's EndedSteps): no put follows that step.
        if prepared.may_wait and self.is_setup and not self._group.closed:
            self._defer(prepared)
            return
        await self._write(lambda: self._core.writes_txn(prepared))

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete the thread and tombstone its id, leaving none of its rows in the
        files (see ``SqliteSaver.delete_thread``)."""
        await self._write(lambda: self._core.delete_thread_txn(thread_id))
        self._core.cache.discard_thread(str(thread_id))
        await self._plain(SQL.WAL_CHECKPOINT_TRUNCATE)

    async def _after_erase(self) -> None:
        await self._plain(SQL.WAL_CHECKPOINT_TRUNCATE)  # older WAL frames hold the old rows

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> AsyncSqliteSaver:
        """A clone whose serializer accepts ``extra_allowlist``; shares connection,
        cache and commit queue with this saver."""
        return self._clone_with_allowlist(extra_allowlist)  # type: ignore[no-any-return]

    async def asweep(self, dry_run: bool = False) -> SweepReport:
        """Apply the retention policy now (see ``SqliteSaver.sweep``)."""
        return await self._run_steps(sweep_steps(self._core, time.time(), dry_run))

    async def avacuum(self, *, full: bool = False) -> int:
        await self._ensure_setup()
        await self._store_deferred()
        auto_vacuum = await self._plain(SQL.GET_AUTO_VACUUM)
        if full or not auto_vacuum or int(auto_vacuum[0][0]) != 2:
            await self._plain(SQL.FULL_VACUUM)
        else:
            await self._script(SQL.INCREMENTAL_VACUUM)
        await self._plain(SQL.WAL_CHECKPOINT_TRUNCATE)
        return await self._read(self._core.size_txn)
