"""``PostgresSaver``: the Postgres checkpointer on psycopg 3, sync, serving ``invoke`` and ``ainvoke``.

This module only runs what the core (``_core.py``) yields, inside
transactions on connections borrowed from a pool, and retries when that is
safe. Its ``a*`` methods run the same sync path in a worker thread, so one
saver object serves both ``graph.invoke`` and ``graph.ainvoke``; for a pure
asyncio application :class:`~langgraph_memory.session.AsyncPostgresSaver`
drives the same core on ``psycopg.AsyncConnection``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any, TypeVar

try:
    import psycopg
    from psycopg.rows import tuple_row
    from psycopg_pool import ConnectionPool
except ModuleNotFoundError as exc:  # the 'postgres' extra is not installed
    from langgraph_memory._extras import raise_missing_extra

    raise_missing_extra("postgres", "PostgresSaver", exc)

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_memory._pg_erase import wait_for_older_snapshots
from langgraph_memory.config import PrivacyPolicy, RetentionPolicy
from langgraph_memory.encryption import EncryptionKeys
from langgraph_memory.errors import CheckpointStorageError
from langgraph_memory.session import _pg_connections as PG
from langgraph_memory.session import _pg_fast as FAST
from langgraph_memory.session import _sql_postgres as SQL
from langgraph_memory.session._bridges import iter_pages
from langgraph_memory.session._core import (
    EndedSteps,
    Execute,
    ExecuteMany,
    Fetch,
    PreparedPut,
    PreparedWrites,
    SaverCore,
    Statement,
    Txn,
    drive,
    parse_config,
)
from langgraph_memory.session._deferred import DeferredWritesTimer, log_dropped
from langgraph_memory.session._pg_serde import CompressedDicts
from langgraph_memory.session._retention import StorageStats, SweepReport
from langgraph_memory.session._shell import WRITE, Steps, SyncShell
from langgraph_memory.session._shell import sweep_steps as shared_sweep_steps

T = TypeVar("T")

logger = logging.getLogger(__name__)


class _Connections:
    """Where transactions run: a pool (each call borrows its own connection, so
    calls run in parallel), or one connection passed in (calls take turns)."""

    def __init__(
        self, *, pool: ConnectionPool | None, conn: psycopg.Connection[Any] | None, owns: bool
    ) -> None:
        self._pool = pool
        self._conn = conn
        self._owns = owns
        self._lock = threading.Lock()
        self._closed = False

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        if self._closed:
            raise CheckpointStorageError("the saver is closed; open a new one.")
        if self._pool is not None:
            with self._pool.connection() as conn:
                yield conn
            return
        assert self._conn is not None
        with self._lock:
            PG.check_idle(self._conn)
            yield self._conn

    def single_pool(self) -> ConnectionPool | None:
        """The pool, for a one-statement call to borrow from directly (``None``:
        a connection passed in, which goes through :meth:`connection`)."""
        if self._closed:
            raise CheckpointStorageError("the saver is closed; open a new one.")
        return self._pool

    def check(self) -> None:
        """After a lost connection: drop every pooled connection the server closed too."""
        if self._pool is not None and not self._closed:
            self._pool.check()

    def close(self) -> None:
        self._closed = True
        if self._owns and self._pool is not None:
            self._pool.close()


class _DeferredWrites:
    """Task writes ``put_writes`` queued (LangGraph's ``durability="async"``)
    until the next write or read of the saver; ``with_allowlist`` clones share it.

    A batch is "in flight" from the moment a caller takes the queue until its
    statement (and the fallback of any refused item) is done; a read waits for
    the batches in flight when it starts, so it sees every write queued before.
    ``get_tuple`` only does so when its thread has writes queued or in flight
    (``unsettled``): with many runs at once some other run nearly always has.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._finished = threading.Condition(self.lock)
        self.items: list[PreparedWrites] = []
        self.in_flight: set[int] = set()
        # thread id -> its writes queued or in flight
        self.unsettled = FAST.UnsettledThreads()
        self._batches = 0
        self.timer = DeferredWritesTimer()

    def add(self, p: PreparedWrites, ended: EndedSteps) -> bool:
        """Queue ``p``; ``False``: its step got an error or interrupt write since
        ``p`` was prepared, so store it now (checked under the queue's lock: the
        failing task's write stores the queue after marking its step, so ``p`` is
        either in that queue or not queued at all)."""
        with self.lock:
            if p.step in ended:
                return False
            self.items.append(p)
            thread_id = p.key.thread_id
            self.unsettled.add(thread_id)
            return True

    def take(self) -> tuple[int, list[PreparedWrites]]:
        """Empty the queue: (batch number, writes); pass the number to :meth:`finished`."""
        with self.lock:
            items, self.items = self.items, []
            if not items:
                return 0, items
            self.timer.stored()
            self._batches += 1
            self.in_flight.add(self._batches)
            return self._batches, items

    def finished(self, batch: int, items: list[PreparedWrites]) -> None:
        with self.lock:
            self.in_flight.discard(batch)
            for p in items:
                self.unsettled.settle(p.key.thread_id)
            self._finished.notify_all()

    def wait_in_flight(self) -> None:
        """Wait until the batches in flight now are stored (not for later ones)."""
        with self.lock:
            waiting = set(self.in_flight)
            while waiting & self.in_flight:
                self._finished.wait()


def _runner(cur: psycopg.Cursor[Any], *, pipelined: bool) -> Callable[[Statement], Any]:
    """Run one statement. In pipeline mode only a ``Fetch``, or an ``Execute``
    with RETURNING, waits for the server: other statements are queued and sent
    with the next one, so a put costs one round trip per query whose answer the
    core reads (see ``UnknownRowcount``)."""

    def run(statement: Statement) -> Any:
        if type(statement) is Fetch:
            cur.execute(statement.sql, statement.params or None)
            return cur.fetchall()
        if type(statement) is Execute:
            cur.execute(statement.sql, statement.params or None)
            if not pipelined:
                return cur.rowcount
            if PG.returns_rows(statement.sql):
                return len(cur.fetchall())
            return PG.UNKNOWN_ROWCOUNT
        assert isinstance(statement, ExecuteMany)
        if statement.rows:
            cur.executemany(statement.sql, statement.rows)
        return None

    return run


def retry_delay(exc: psycopg.Error, attempt: int, *, idempotent: bool, started: float) -> float:
    """How long to wait before try ``attempt + 1`` of a call that failed with
    ``exc``; raises ``FastPathRefused`` (the core runs the call instead) or
    ``CheckpointStorageError`` when it must not be retried."""
    if FAST.is_refusal(exc):
        raise FAST.FastPathRefused from exc
    if PG.should_retry(exc, idempotent=idempotent, started=started, now=time.monotonic()):
        return PG.retry_delay(attempt)
    raise CheckpointStorageError(
        f"Postgres refused the operation after {attempt} attempt(s): {type(exc).__name__}: {exc}"
    ) from exc


def pool_options(
    conn_string: str,
    *,
    pool_size: int,
    min_pool_size: int | None,
    max_idle: float,
    prepare_threshold: int | None,
    synchronous_commit: bool,
) -> tuple[dict[str, Any], bool]:
    """``from_conn_string``'s pool arguments (the same for the sync and the async
    pool), and whether each connection sets asynchronous commit once when it opens."""
    min_size = PG.validate_pool_options(
        pool_size=pool_size,
        min_pool_size=min_pool_size,
        max_idle=max_idle,
        prepare_threshold=prepare_threshold,
        conn_string=conn_string,
    )
    options = {
        "conninfo": conn_string,
        "min_size": min_size,
        "max_size": pool_size,
        "max_idle": max_idle,
        "kwargs": PG.connection_kwargs(prepare_threshold),
        "open": False,
    }
    return options, PG.session_async_commit(prepare_threshold, synchronous_commit)


def pool_open_error(exc: psycopg.Error, min_size: int, timeout: float) -> CheckpointStorageError:
    return CheckpointStorageError(
        f"could not open {min_size} connection(s) to Postgres within "
        f"{timeout:g} s ({exc}); check the DSN and that the server is up."
    )


def remove_threads_steps(
    core: SaverCore, now: float, expired: list[str], evicted: list[str]
) -> Steps[tuple[list[str], list[str]]]:
    """The sweep's thread removals, each re-checking under the thread's row lock
    (``SKIP LOCKED``): returns the threads really removed."""
    policy = core.retention
    done_expired: list[str] = []
    if policy is not None and policy.thread_ttl_seconds is not None:
        cutoff = now - policy.thread_ttl_seconds
        for tid in expired:
            if (yield WRITE, partial(PG.expire_thread_txn, core, tid, cutoff)):
                done_expired.append(tid)
                core.cache.discard_thread(tid)
    done_evicted: list[str] = []
    for tid in evicted:
        if (yield WRITE, partial(PG.evict_thread_txn, core, tid)):
            done_evicted.append(tid)
            core.cache.discard_thread(tid)
    return done_expired, done_evicted


def sweep_steps(core: SaverCore, now: float, dry_run: bool) -> Steps[SweepReport]:
    """``sweep``/``asweep`` on Postgres."""
    return shared_sweep_steps(
        core,
        now,
        dry_run,
        remove_threads=remove_threads_steps,
        keep_last_txn=partial(PG.sweep_keep_last_txn, core),
    )


class PostgresSaver(SyncShell):
    """A LangGraph checkpointer on Postgres: linear storage, retention, real pool concurrency.

    Every call borrows its own connection from a psycopg pool (no lock around
    the pool), so 20 runs in flight use up to ``pool_size`` connections at
    once. Write transactions on one thread queue on that thread's row, so
    several app instances can share one database safely. A connection the
    server dropped (restart, ``pg_terminate_backend``, a proxy timeout) is
    discarded by the pool's check, and an idempotent call is retried on a fresh one.

    Args:
        conn: a ``psycopg_pool.ConnectionPool`` (preferred) or a
            ``psycopg.Connection`` (calls then take turns on it). Either
            autocommit mode works; the saver opens and commits its own
            transactions. Prefer :meth:`from_conn_string`, which owns its pool.
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
        cache_size: lists remembered per (thread, namespace, channel) so a ``put``
            stores only new items without reading back; 0 disables it.
        pipeline: run each transaction in psycopg pipeline mode (autocommit
            connections only); see :meth:`from_conn_string`.
        synchronous_commit: wait for the WAL flush at each commit; see
            :meth:`from_conn_string`.

    Raises:
        InvalidConnectionError: an async connection or pool, a closed one, or
            one with an open transaction.

    Example:
        >>> import os
        >>> from langgraph.graph import StateGraph, MessagesState, START
        >>> from langgraph_memory.session import PostgresSaver
        >>> dsn = os.environ.get("LGM_DOCTEST_PG_DSN")
        >>> builder = StateGraph(MessagesState)
        >>> _ = builder.add_node("echo", lambda s: {"messages": [("ai", "hi")]})
        >>> _ = builder.add_edge(START, "echo")
        >>> if dsn:  # a Postgres DSN, e.g. postgresql://postgres@127.0.0.1:5432/postgres
        ...     with PostgresSaver.from_conn_string(dsn, pool_size=4) as saver:
        ...         graph = builder.compile(checkpointer=saver)
        ...         out = graph.invoke({"messages": [("user", "hello")]},
        ...                            {"configurable": {"thread_id": "doctest-t1"}})
        ...         saver.delete_thread("doctest-t1")
    """

    _MIGRATIONS = SQL.MIGRATIONS
    # forget_user runs vacuum(full=True) here: a plain VACUUM leaves a deleted
    # row's bytes in its page's free space (README, "Privacy": Postgres).
    erase_with_full_vacuum = True

    def __init__(
        self,
        conn: psycopg.Connection[Any] | ConnectionPool,
        *,
        serde: SerializerProtocol | None = None,
        retention: RetentionPolicy | None = None,
        redact_messages: bool | PrivacyPolicy = False,
        encryption: EncryptionKeys | None = None,
        cache_size: int = 256,
        pipeline: bool = True,
        synchronous_commit: bool = False,
    ) -> None:
        kind = PG.check_connection(conn, want_async=False)
        connections = _Connections(
            pool=conn if kind == "pool" else None,  # type: ignore[arg-type]
            conn=conn if kind == "conn" else None,  # type: ignore[arg-type]
            owns=False,
        )
        self._init(
            connections,
            serde=serde,
            retention=retention,
            redact_messages=redact_messages,
            encryption=encryption,
            cache_size=cache_size,
            pipeline=pipeline,
            synchronous_commit=synchronous_commit,
        )

    def _init(
        self,
        connections: _Connections,
        *,
        serde: SerializerProtocol | None,
        retention: RetentionPolicy | None,
        redact_messages: bool | PrivacyPolicy,
        encryption: EncryptionKeys | None,
        cache_size: int,
        pipeline: bool,
        synchronous_commit: bool,
    ) -> None:
        super().__init__(serde=serde)
        self._connections = connections
        self._pipeline = bool(pipeline)
        # Each write transaction asks for an asynchronous commit, unless our
        # own pool already set it once per connection (see from_conn_string).
        self._set_local_async_commit = not synchronous_commit
        self._core = self._new_core(
            SQL, CompressedDicts(self.serde), cache_size, retention, redact_messages, encryption
        )
        self._latest = FAST.LatestVersions()
        self._deferred = _DeferredWrites()
        self._setup_lock = threading.Lock()
        self.is_setup = False

    @classmethod
    @contextmanager
    def from_conn_string(
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
    ) -> Iterator[PostgresSaver]:
        """Open a saver with its own connection pool, set up, closed on exit.

        Args:
            conn_string: libpq DSN, e.g. ``postgresql://user:pw@host:5432/db``.
            pool_size: most connections open at once; calls beyond it wait
                for one (each call holds a connection for one transaction).
            min_pool_size: connections kept open even when idle (default:
                ``pool_size``, so bursts never wait for a connect).
            max_idle: seconds an idle connection above ``min_pool_size`` stays
                open; keep it below a proxy's idle timeout. (Connections the
                server or a proxy dropped anyway are replaced on use.)
            prepare_threshold: runs before a statement is prepared server-side;
                ``None`` never prepares, which pgbouncer in transaction mode needs.
            pipeline: send the statements of a transaction in psycopg pipeline
                mode (one round trip per query whose rows are needed, instead of
                one per statement).
            synchronous_commit: wait for each commit's WAL flush (survives a
                crash of the Postgres server or its OS, at one fsync per
                checkpoint). By default commits are acknowledged before the
                flush: nothing is lost when the app, a backend or a connection
                dies, but a server crash can drop the last ~0.6 s of checkpoints.
            check_connections: check each connection as it leaves the pool
                (psycopg's ``ConnectionPool.check_connection``: one extra round
                trip per call, and the pool backs off >= 1 s after a failed
                check). Off by default: a dropped connection is found by the
                call that uses it, which checks the pool (dropping every dead
                connection at once) and retries on a fresh one: always when the
                loss came before COMMIT was sent, otherwise for every operation
                but ``copy_thread`` (all others are idempotent).
            connect_timeout: seconds to wait for the first connection.
            serde: LangGraph serializer.
            retention: what to keep.
            redact_messages: store messages with identifiers redacted.
            encryption: seal rows at rest (see the class docstring).
            cache_size: see the class docstring.

        Yields:
            A set-up saver.

        Raises:
            ConfigurationError: ``conn_string`` is not a DSN.
            DatabaseConnectionError: the server refused the first connection
                (no such database, role or password; nothing listening). Raised
                at once with libpq's reason, before any pool is opened.
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
            psycopg.connect(conn_string, **PG.probe_kwargs(conn_string, connect_timeout)).close()
        except psycopg.Error as exc:
            raise PG.connect_error(exc, conn_string) from None
        pool = ConnectionPool(
            **options,
            configure=PG.configure_async_commit if session_async else None,
            check=ConnectionPool.check_connection if check_connections else None,
            name="langgraph-memory",
        )
        try:
            pool.open(wait=True, timeout=connect_timeout)
        except psycopg.Error as exc:
            pool.close()
            raise pool_open_error(exc, options["min_size"], connect_timeout) from exc
        saver = cls.__new__(cls)
        saver._init(
            _Connections(pool=pool, conn=None, owns=True),
            serde=serde,
            retention=retention,
            redact_messages=redact_messages,
            encryption=encryption,
            cache_size=cache_size,
            pipeline=pipeline,
            synchronous_commit=synchronous_commit,
        )
        saver._set_local_async_commit = not synchronous_commit and not session_async
        try:
            saver.setup()
            yield saver
        finally:
            saver.close()

    def close(self) -> None:
        """Store queued task writes, then close the pool this saver opened (a
        connection or pool passed in stays open)."""
        try:
            self._store_deferred()
        finally:
            self._deferred.timer.close()
            self._connections.close()

    # ---------------------------------------------------------------- running transactions

    def _attempt(self, factory: Callable[[], Txn[T]], read: bool, single: bool) -> T:
        with self._connections.connection() as conn:
            cur = conn.cursor(row_factory=tuple_row)
            commit_sent = False
            try:
                if single and conn.autocommit:
                    # One statement is its own transaction: no BEGIN/COMMIT,
                    # one round trip. It may commit before a lost connection
                    # is noticed, hence "sent".
                    commit_sent = True
                    return drive(factory(), _runner(cur, pipelined=False))
                if self._pipeline and conn.autocommit:
                    # BEGIN, the queued writes and COMMIT ride along with the
                    # fetches; leaving the block waits for COMMIT's answer.
                    with conn.pipeline():
                        cur.execute(SQL.BEGIN_READ if read else SQL.BEGIN_WRITE)
                        if not read and self._set_local_async_commit:
                            cur.execute(SQL.SET_ASYNC_COMMIT)
                        result = drive(factory(), _runner(cur, pipelined=True))
                        commit_sent = True
                        cur.execute(SQL.COMMIT)
                    return result
                if conn.autocommit:
                    cur.execute(SQL.BEGIN_READ if read else SQL.BEGIN_WRITE)
                elif read:  # psycopg itself opens the transaction on the first statement
                    cur.execute(SQL.SET_READ_SNAPSHOT)
                if not read and self._set_local_async_commit:
                    cur.execute(SQL.SET_ASYNC_COMMIT)
                result = drive(factory(), _runner(cur, pipelined=False))
                commit_sent = True
                if conn.autocommit:
                    cur.execute(SQL.COMMIT)
                else:
                    conn.commit()
                return result
            except psycopg.Error as exc:
                lost = PG.as_connection_loss(exc, conn, commit_sent=commit_sent)
                if not conn.closed:
                    # A connection the server dropped cannot roll back; the pool discards it.
                    with contextlib.suppress(psycopg.Error):
                        conn.rollback()
                if lost is exc:
                    raise
                raise lost from exc
            except BaseException:
                if not conn.closed:
                    with contextlib.suppress(psycopg.Error):
                        conn.rollback()
                raise
            finally:
                cur.close()

    def _run(
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
                return self._attempt(factory, read, single)
            except psycopg.Error as exc:
                attempt += 1
                time.sleep(retry_delay(exc, attempt, idempotent=idempotent, started=started))
                self._connections.check()

    def _write(
        self, factory: Callable[[], Txn[T]], *, idempotent: bool = True, single: bool = False
    ) -> T:
        self._ensure_setup()
        if self._deferred.items or self._deferred.in_flight:
            self._store_deferred()
        return self._run(factory, idempotent=idempotent, single=single)

    def _write_fast(self, factory: Callable[[], Txn[T]]) -> T | None:
        """Run a one-call fast path (``_pg_fast``); ``None`` if it left the call to the core."""
        try:
            return self._single(factory, read=False)
        except FAST.FastPathRefused:
            return None

    def _read(
        self, factory: Callable[[], Txn[T]], *, single: bool = False, stored: bool = False
    ) -> T:
        """A read transaction; first the queued task writes unless ``stored`` (the
        caller made sure its thread has none)."""
        self._ensure_setup()
        if not stored and (self._deferred.items or self._deferred.in_flight):
            self._store_deferred()  # read-your-writes
        return self._run(factory, read=True, single=single)

    def _single(self, factory: Callable[[], Txn[T]], *, read: bool) -> T:
        """A one-statement transaction (the ``_pg_fast`` calls: a put, a
        put_writes, the latest-checkpoint read) straight on a pooled autocommit
        connection: no retry frame, transaction driver or connection wrapper
        until something fails, then ``_run`` takes over (refusal, retries,
        connection loss) with a fresh transaction. Replayed chat-turn calls,
        both paths interleaved in one process (2 runs, median client CPU):
        put 331 -> 310 and 415 -> 396 us, put_writes 223 -> 194 and
        262 -> 254 us; a sync put holds the GIL for all of it.
        """
        self._ensure_setup()
        pool = self._connections.single_pool()
        if pool is None:
            return self._run(factory, read=read, single=True)
        started = time.monotonic()
        gen = factory()
        statement = next(gen)
        assert type(statement) is Fetch, statement
        failure: psycopg.Error | None = None
        needs_transaction = False
        rows: list[Any] = []
        try:
            with pool.connection() as conn:
                if not conn.autocommit:  # a pool passed in: BEGIN/COMMIT needed
                    needs_transaction = True
                else:
                    cur = conn.cursor(row_factory=tuple_row)
                    try:
                        cur.execute(statement.sql, statement.params or None)
                        rows = cur.fetchall()
                    except psycopg.Error as exc:
                        # Autocommit: the failed statement rolled itself back,
                        # unless the connection died after sending it.
                        failure = PG.as_connection_loss(exc, conn, commit_sent=True)
                    finally:
                        cur.close()
        except psycopg.Error as exc:  # no connection within the pool's timeout
            failure = exc
        if failure is not None or needs_transaction:
            gen.close()
            if failure is not None:
                time.sleep(retry_delay(failure, 1, idempotent=True, started=started))
                self._connections.check()
            return self._run(factory, read=read, single=True)
        try:
            gen.send(rows)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        raise AssertionError("a one-statement transaction asked for a second statement")

    # ---------------------------------------------------------------- deferred task writes

    def _store_deferred(self) -> None:
        """Store the queued task writes now, and wait for those another call is storing."""
        batch, items = self._deferred.take()
        if items:
            self._store_with(batch, items, None)
        if self._deferred.in_flight:
            self._deferred.wait_in_flight()

    def _store_queued(self) -> None:
        """The timer's call: store whatever is queued."""
        batch, items = self._deferred.take()
        if items:
            self._store_with(batch, items, None)

    def _store_with(
        self, batch: int, items: list[PreparedWrites], call: PreparedPut | PreparedWrites | None
    ) -> Any:
        """Store queued writes, and ``call`` (the caller's own put or writes) in the
        same ``lgm_put_all`` statement: one round trip and one commit. Returns
        ``call``'s answer (``None``: refused, run the core's transaction).

        If any item would be refused, ``lgm_put_all`` stores nothing and the
        batch goes again to ``lgm_put_batch``, where each item is its own
        subtransaction, so a refused write (a deleted thread, a locked row)
        does not undo the others: it is stored alone
        through the core, or logged and dropped (its ``put_writes`` returned
        long ago). Only ``call``'s own failure reaches the caller.
        """
        try:
            batch_items: list[FAST.BatchItem] = list(items)
            if call is not None:
                batch_items.append(call)
            factory = partial(
                FAST.batch_txn, batch_items, async_commit=self._set_local_async_commit
            )
            try:
                try:
                    # All or nothing, and cheaper; refused: item by item.
                    answers = self._single(partial(factory, whole=True), read=False)
                except FAST.FastPathRefused:
                    answers = self._single(factory, read=False)
            except Exception:
                # The whole statement failed (after retries): each write on its own.
                for p in items:
                    self._store_alone(p)
                if call is None:
                    return None
                raise
            for p, stored in zip(items, answers[: len(items)], strict=True):
                if not stored:
                    self._store_alone(p)
            return answers[-1] if call is not None else None
        finally:
            self._deferred.finished(batch, items)

    def _store_alone(self, p: PreparedWrites) -> None:
        """A deferred write the batch refused, through the core (never raises)."""
        try:
            self._run(lambda: self._core.writes_txn(p))
        except Exception as exc:
            log_dropped(logger, p, exc)

    def _write_once(self, factory: Callable[[], Txn[T]]) -> T:
        # Not retried after a lost connection: it may have committed.
        return self._write(factory, idempotent=False)

    def _thread_locked(self, thread_id: str, factory: Callable[[], Txn[T]]) -> Callable[[], Txn[T]]:
        return PG.thread_txn(thread_id, factory)

    def _core_serde(self, serde: SerializerProtocol) -> SerializerProtocol:
        return CompressedDicts(serde)

    # ---------------------------------------------------------------- setup

    def setup(self) -> None:
        """Create or migrate the schema. Idempotent; safe when many instances start at once.

        Each migration runs in one transaction with its "applied" row, under a
        transaction-scoped advisory lock, so concurrent callers apply it once.
        Works on autocommit and non-autocommit connections alike.
        """
        self._set_up_once()

    def _migrate(self, step: Callable[[], Txn[Any]]) -> None:
        self._run(PG.migration_txn(step))

    # ---------------------------------------------------------------- BaseCheckpointSaver API

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint named by ``config`` (latest of the thread/namespace if no id)."""
        self._check_owner(self._core.owner_check(config), claim=False)
        key = parse_config(config)
        if key.thread_id in self._deferred.unsettled:
            self._store_deferred()  # read-your-writes
        if key.checkpoint_id is None:
            # The latest checkpoint in one statement when this process knows
            # which values it references (see _pg_fast.latest_txn).
            guess = self._latest.guess(key.thread_id, key.checkpoint_ns)
            try:
                loaded = self._single(lambda: FAST.latest_txn(self._core, config, guess), read=True)
            except FAST.PrefetchMiss:
                loaded = self._read(lambda: self._core.get_tuple_txn(config), stored=True)
        else:
            loaded = self._read(lambda: self._core.get_tuple_txn(config), stored=True)
        if loaded is not None:
            raw = loaded[0]
            self._latest.remember(raw.thread_id, raw.checkpoint_ns, raw.row_versions())
        return self._core.build_tuple(loaded)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first, read in keyset pages of ``LIST_PAGE_SIZE``.

        Memory stays bounded by one page, no connection is held while yielding,
        and channel values decode on first access.
        """
        query = self._core.list_query(config, filter=filter, before=before, limit=limit)
        return iter_pages(self._core, query, self._list_page)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint in one transaction; lists store only their new items.

        A new run's first checkpoint (root namespace, no parent) on a deleted
        thread starts the thread afresh; see :meth:`delete_thread`.

        Raises:
            ThreadDeletedError: the thread was deleted after this put's run began.
        """
        self._check_owner(self._core.owner_check(config), claim=True)
        prepared = self._core.prepare_put(config, checkpoint, metadata, new_versions)
        async_commit = self._set_local_async_commit
        if self._deferred.items:
            # The task writes queued since the last put ride in this statement.
            outcome = self._store_with(*self._deferred.take(), prepared)
        else:
            outcome = self._write_fast(lambda: FAST.put_txn(prepared, async_commit=async_commit))
        if outcome is None:
            outcome = self._put_restarting(
                prepared, lambda: self._write(lambda: self._core.put_txn(prepared))
            )
        saved = self._core.finish_put(prepared, outcome)
        key = prepared.key
        self._latest.remember(key.thread_id, key.checkpoint_ns, prepared.row_versions)
        if outcome.retention_due and self._core.retention is not None:
            self._keep_last(key.thread_id)
        return saved

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes in one transaction.

        In LangGraph's ``durability="async"`` mode (its default; LangGraph does
        not wait for this call there) a task's regular writes are only queued:
        the ``put`` LangGraph makes right after the step sends them in its own
        statement, and any other read or write of this saver, ``close()``, or
        at the latest a timer ~0.1 s later, stores them first. Errors,
        interrupts, other modes and direct calls are stored before this
        returns. See docs/session-storage.md.

        Raises:
            ThreadDeletedError: the thread was deleted; it stays deleted.
        """
        self._check_owner(self._core.owner_check(config), claim=True)
        prepared = self._core.prepare_writes(config, writes, task_id, task_path)
        deferred = self._deferred
        if FAST.fast_writes(prepared):
            if prepared.may_wait and deferred.add(prepared, self._core.ended_steps):
                deferred.timer.deferred(self._store_queued)
                return
            if deferred.items and self._store_with(*deferred.take(), prepared):
                return
            fast = FAST.writes_txn(prepared, async_commit=self._set_local_async_commit)
            if fast is not None and self._write_fast(fast):
                return
        self._write(lambda: self._core.writes_txn(prepared))

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint and write of the thread and tombstone its id.

        The next new run on this id (from any instance) starts a fresh thread;
        a run that began before the delete gets ``ThreadDeletedError`` (see
        ``SqliteSaver.delete_thread``).
        """
        self._write(PG.delete_thread_txn(self._core, thread_id))
        self._core.cache.discard_thread(str(thread_id))

    def undelete_thread(self, thread_id: str) -> None:
        """Remove a deleted thread's tombstone so the id can be used again (starting empty)."""
        self._write(lambda: self._core.undelete_thread_txn(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) created by these runs."""
        self._write(lambda: self._core.delete_for_runs_txn(run_ids))
        self._core.cache.clear()

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> PostgresSaver:
        """A clone whose serializer accepts ``extra_allowlist`` (LangGraph calls this in
        ``compile``); it shares connections and cache with this saver, but its core
        decodes with the clone's serializer."""
        return self._clone_with_allowlist(extra_allowlist)  # type: ignore[no-any-return]

    # ---------------------------------------------------------------- retention and storage

    def sweep(self, dry_run: bool = False) -> SweepReport:
        """Apply the retention policy to the whole database now; safe while others write.

        Deletes (and tombstones) threads idle past ``thread_ttl_seconds``, then the
        least recently active threads while our tables exceed ``max_bytes``, and
        trims every live thread to ``keep_last`` checkpoints per namespace. A
        thread another instance is writing at that moment is skipped (row lock
        with ``SKIP LOCKED``), and idleness is re-checked under the lock.

        Args:
            dry_run: report what would be deleted without deleting anything.
        """
        return self._run_steps(sweep_steps(self._core, time.time(), dry_run))

    def storage_stats(self, thread_id: str | None = None) -> StorageStats:
        """Bytes of our tables (heap, TOAST, indexes) and per-thread payload and checkpoints."""
        return self._read(lambda: self._core.stats_txn(thread_id))

    def vacuum(self, *, full: bool = False) -> int:
        """``VACUUM`` our tables; returns their size afterwards.

        Args:
            full: ``VACUUM FULL``: rewrites the tables and returns space to the
                OS, but locks each table exclusively while it runs. It is what
                takes deleted threads' bytes off the pages (``forget_user`` runs
                it), so it first waits (<= 10 s) for older snapshots to end
                (``langgraph_memory._pg_erase``).
        """
        self._ensure_setup()
        self._store_deferred()
        pending = self._read(self._core.erase_pending_txn) if full else []
        self._vacuum(SQL.FULL_VACUUM_TABLES if full else SQL.VACUUM_TABLES, full=full)
        self._write(partial(self._core.clear_erase_pending_txn, pending))
        return self._read(self._core.size_txn)

    def erase_pending(self) -> int:
        """``VACUUM FULL`` the tables that deletes left dead tuples in; returns how many.

        A ``delete_thread`` (retention's too) or a rewrite of a thread's values
        leaves the old rows on the pages until a ``VACUUM FULL``, which locks the
        table while it runs, so each marks the tables it touched instead
        (``lgm_erase_pending``, in its own transaction). This rewrites only those,
        once for all the deletes since the last pass, after waiting (<= 10 s) for
        older snapshots; with nothing marked it reads one small table and locks
        nothing. Run it from the memory writer's sweep
        (``MemoryWriter(checkpointer=saver)``), a scheduled job, or right after a
        delete that must be gone now (README, "Erasure on Postgres").
        """
        self._ensure_setup()
        pending = self._read(self._core.erase_pending_txn)
        if not pending:
            return 0
        # Names come from the table but only ours are spliced into SQL.
        self._vacuum(
            [v for r, _, _ in pending if (v := SQL.FULL_VACUUM_RELATION.get(r))], full=True
        )
        self._write(partial(self._core.clear_erase_pending_txn, pending))
        return len(pending)

    def _vacuum(self, statements: Sequence[str], *, full: bool) -> None:
        with self._connections.connection() as conn:
            was_autocommit = conn.autocommit
            conn.autocommit = True  # VACUUM cannot run inside a transaction
            try:
                if full:
                    wait_for_older_snapshots(conn)
                for statement in statements:
                    conn.execute(statement)
            finally:
                conn.autocommit = was_autocommit
