"""``SqliteSaver``: the SQLite checkpointer, sync, serving ``invoke`` and ``ainvoke``.

This module only runs what the core (``_core.py``) yields, inside
transactions, with retries. Its ``a*`` methods run the same sync path in a
worker thread, so one saver object serves both ``graph.invoke`` and
``graph.ainvoke``.

Where it lives: the connection string, the checks of a connection passed in,
busy retries and the connection pool are in ``_sqlite_connections.py``; the
transaction runners, the group-commit queue and the one-statement write are
in ``_sqlite_commit.py``. Their names are importable from here as before.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any, TypeVar

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
from langgraph_memory.errors import CheckpointStorageError, ConfigurationError
from langgraph_memory.session import _sql_sqlite as SQL
from langgraph_memory.session._bridges import iter_pages
from langgraph_memory.session._core import FastWrite, PreparedWrites, SaverCore, Txn
from langgraph_memory.session._retention import StorageStats, SweepReport
from langgraph_memory.session._shell import WRITE, Steps, SyncShell
from langgraph_memory.session._shell import sweep_steps as shared_sweep_steps
from langgraph_memory.session._sqlite_commit import (
    MAX_GROUP_WRITES,
    MAX_WRITE_ROWS,
    _GroupCommit,
    _nothing,
    _QueuedWrite,
    commit_batch,
    insert_rows,
    is_fast_path_refusal,
    run_reads,
    run_transaction,
)
from langgraph_memory.session._sqlite_connections import (
    DEFAULT_BUSY_TIMEOUT_MS,
    DEFAULT_RETRY_SECONDS,
    _Connections,
    backoff_delay,
    check_user_connection,
    database_file,
    is_busy_error,
    open_error,
    resolve_conn_string,
    retry_delay,
)

__all__ = [
    "DEFAULT_BUSY_TIMEOUT_MS",
    "DEFAULT_RETRY_SECONDS",
    "MAX_GROUP_WRITES",
    "MAX_WRITE_ROWS",
    "SqliteSaver",
    "backoff_delay",
    "check_user_connection",
    "commit_batch",
    "database_file",
    "insert_rows",
    "is_busy_error",
    "is_fast_path_refusal",
    "open_error",
    "remove_threads_steps",
    "resolve_conn_string",
    "retry_delay",
    "run_reads",
    "run_transaction",
    "sweep_steps",
]

T = TypeVar("T")


def remove_threads_steps(
    core: SaverCore, now: float, expired: list[str], evicted: list[str]
) -> Steps[tuple[list[str], list[str]]]:
    """The sweep's thread removals: one delete transaction per thread."""
    for thread_id in [*expired, *evicted]:
        yield WRITE, partial(core.delete_thread_txn, thread_id)
        core.cache.discard_thread(str(thread_id))
    return expired, evicted


def sweep_steps(core: SaverCore, now: float, dry_run: bool) -> Steps[SweepReport]:
    """``sweep``/``asweep`` on SQLite."""
    return shared_sweep_steps(
        core, now, dry_run, remove_threads=remove_threads_steps, keep_last_txn=core.keep_last_txn
    )


class SqliteSaver(SyncShell):
    """A LangGraph checkpointer on one SQLite file: linear storage, retention, no lock errors.

    One object serves ``graph.invoke`` and ``graph.ainvoke`` (its ``a*`` methods
    run the sync path in a worker thread). Threads draw connections to the file
    from a small pool, so reads run in parallel and writes queue on SQLite's
    own lock (WAL mode, ``BEGIN IMMEDIATE``, busy timeout, then bounded
    retries with jitter).

    Args:
        conn: an open ``sqlite3.Connection`` (opened with ``check_same_thread=False``;
            ``isolation_level=None`` recommended). Prefer :meth:`from_conn_string`,
            which owns its connections.
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

    Example:
        >>> from langgraph.graph import StateGraph, MessagesState, START
        >>> from langgraph_memory.session import SqliteSaver
        >>> builder = StateGraph(MessagesState)
        >>> _ = builder.add_node("echo", lambda s: {"messages": [("ai", "hi")]})
        >>> _ = builder.add_edge(START, "echo")
        >>> with SqliteSaver.from_conn_string(":memory:") as saver:
        ...     graph = builder.compile(checkpointer=saver)
        ...     out = graph.invoke({"messages": [("user", "hello")]},
        ...                        {"configurable": {"thread_id": "t1"}})
        ...     len(out["messages"])
        2
    """

    _MIGRATIONS = SQL.MIGRATIONS

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        serde: SerializerProtocol | None = None,
        retention: RetentionPolicy | None = None,
        redact_messages: bool | PrivacyPolicy = False,
        encryption: EncryptionKeys | None = None,
        cache_size: int = 256,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        retry_seconds: float = DEFAULT_RETRY_SECONDS,
    ) -> None:
        check_user_connection(conn)
        self._init(
            _Connections(
                path=None, shared=conn, busy_timeout_ms=busy_timeout_ms, owns_shared=False
            ),
            serde=serde,
            retention=retention,
            redact_messages=redact_messages,
            encryption=encryption,
            cache_size=cache_size,
            retry_seconds=retry_seconds,
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
        retry_seconds: float,
    ) -> None:
        super().__init__(serde=serde)
        if retry_seconds <= 0:
            raise ConfigurationError(f"retry_seconds={retry_seconds!r}; use seconds > 0.")
        self._connections = connections
        self._core = self._new_core(
            SQL, self.serde, cache_size, retention, redact_messages, encryption
        )
        self._retry_seconds = retry_seconds
        self._setup_lock = threading.Lock()
        # Held by reference so a with_allowlist() clone shares the same queue.
        self._group = _GroupCommit()
        self.is_setup = False

    @classmethod
    @contextmanager
    def from_conn_string(
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
    ) -> Iterator[SqliteSaver]:
        """Open a saver on a file path (or ``":memory:"``) that owns and closes its connections.

        Args:
            conn_string: a file path (``str`` or ``pathlib.Path``), ``file:`` URI,
                or ``":memory:"``.
            serde: LangGraph serializer.
            retention: what to keep.
            redact_messages: store messages with identifiers redacted.
            encryption: seal rows at rest (see the class docstring).
            cache_size: see the class docstring.
            busy_timeout_ms: how long SQLite waits for the write lock per attempt.
            retry_seconds: how long busy transactions are retried before
                ``CheckpointStorageError``.

        Yields:
            A set-up saver.

        Raises:
            DatabaseConnectionError: the file's directory does not exist, or
                SQLite cannot open the file.
        """
        conn_string = resolve_conn_string(conn_string)
        in_memory = conn_string == ":memory:" or "mode=memory" in conn_string
        if in_memory:
            shared = sqlite3.connect(
                conn_string,
                check_same_thread=False,
                isolation_level=None,
                uri=conn_string.startswith("file:"),
            )
            connections = _Connections(
                path=None, shared=shared, busy_timeout_ms=busy_timeout_ms, owns_shared=True
            )
        else:
            connections = _Connections(
                path=conn_string,
                shared=None,
                busy_timeout_ms=busy_timeout_ms,
                owns_shared=True,
                uri=conn_string.startswith("file:"),
            )
        saver = cls.__new__(cls)
        saver._init(
            connections,
            serde=serde,
            retention=retention,
            redact_messages=redact_messages,
            encryption=encryption,
            cache_size=cache_size,
            retry_seconds=retry_seconds,
        )
        try:
            saver.setup()
            yield saver
        finally:
            saver.close()

    def close(self) -> None:
        """Store queued task writes, then close every connection this saver opened
        (a connection passed in stays open)."""
        try:
            if self._group.timer.oldest is not None:
                self._store_deferred()
        finally:
            self._group.timer.close()
            self._connections.close()

    # ---------------------------------------------------------------- running transactions

    def _retrying(self, attempt_fn: Callable[[], T]) -> T:
        deadline = time.monotonic() + self._retry_seconds
        attempt = 0
        while True:
            try:
                return attempt_fn()
            except sqlite3.OperationalError as exc:
                attempt += 1
                time.sleep(retry_delay(exc, attempt, deadline, self._retry_seconds))

    def _transaction(self, begin: str, factory: Callable[[], Txn[T]]) -> T:
        run = self._connections.run
        return self._retrying(lambda: run(lambda conn: run_transaction(conn, begin, factory)))

    def _write(self, factory: Callable[[], Txn[T]], fast: FastWrite | None = None) -> T:
        """Run one write transaction, committed before this returns (group commit).

        Writers of this process queue here, not on SQLite's lock (SQLite's busy
        handler sleeps 1, 2, 5, 10 ... ms between tries, and LangGraph runs a
        step's ``put`` and ``put_writes`` on concurrent worker threads). Whoever
        finds no commit in progress becomes the leader and runs every queued
        write in ONE transaction (writes queued while it runs join it before
        COMMIT); the others wait for that commit. Nobody returns before their
        data is committed. A write that also comes as ``fast`` (its rows and
        what it returns then) goes through the one-statement path when every
        write of the batch does; ``factory`` runs if that is refused.
        """
        self._ensure_setup()
        op = _QueuedWrite(factory, fast)
        with self._group.changed:
            self._group.queue.append(op)
            while not op.finished and self._group.leader_active:
                self._group.changed.wait()
            if op.finished:
                return op.outcome()  # type: ignore[no-any-return]
            self._group.leader_active = True
            batch = self._group.take()
        try:
            self._commit_batch(batch)
        finally:
            with self._group.changed:
                self._group.leader_active = False
                self._group.committed()
                for queued in batch:
                    if not queued.finished:  # the leader itself was interrupted
                        queued.fail(CheckpointStorageError("the write was interrupted"))
                self._group.changed.notify_all()
        return op.outcome()  # type: ignore[no-any-return]

    def _commit_batch(self, batch: list[_QueuedWrite]) -> None:
        fast_writes = [queued.fast for queued in batch]
        if all(fast is not None for fast in fast_writes):
            rows = [row for fast in fast_writes if fast is not None for row in fast[0]]
            if not rows:  # only _store_deferred's marker: the deferred writes went earlier
                for queued in batch:
                    queued.succeed(None)
                return
            run = self._connections.run
            try:
                self._retrying(lambda: run(lambda conn: insert_rows(conn, rows)))
            except sqlite3.Error:
                # Refused (a trigger's RAISE) or a constraint: nothing was kept;
                # the core's transactions below read, decide, and isolate failures.
                pass
            except Exception as exc:
                for queued in batch:
                    queued.fail(exc)
                return
            else:
                for queued, fast in zip(batch, fast_writes, strict=True):
                    queued.succeed(fast[1] if fast is not None else None)
                return

        def joiners() -> list[Callable[[], Txn[Any]]]:
            # Writes queued while the leader's transaction ran join it before
            # COMMIT: LangGraph issues a step's put_writes and the next put
            # back to back, and they then share one commit.
            with self._group.changed:
                extra = self._group.take(MAX_GROUP_WRITES - len(batch))
            batch.extend(extra)
            return [queued.factory for queued in extra]

        run = self._connections.run
        try:
            outcomes = self._retrying(
                lambda: run(lambda conn: commit_batch(conn, [q.factory for q in batch], joiners))
            )
        except Exception as exc:
            for queued in batch:
                queued.fail(exc)
            return
        for queued, (ok, value) in zip(batch, outcomes, strict=True):
            if ok:
                queued.succeed(value)
            else:
                queued.fail(value)

    def _read(self, factory: Callable[[], Txn[T]]) -> T:
        self._ensure_setup()
        if self._group.timer.oldest is not None:
            self._store_deferred()  # read-your-writes
        return self._transaction(SQL.BEGIN_READ, factory)

    def _store_deferred(self) -> None:
        """Commit the task writes queued by ``put_writes`` (if any) before returning."""
        self._write(_nothing, ([], None))

    def _plain(self, sql: str) -> list[Any]:
        """A statement that must run outside any transaction (PRAGMA, VACUUM)."""

        def attempt() -> list[Any]:
            with self._connections.connection() as conn:
                return conn.execute(sql).fetchall()

        return self._retrying(attempt)

    def _script(self, sql: str) -> None:
        """Run to completion; ``PRAGMA incremental_vacuum`` frees one page per
        step, and ``execute`` steps a row-less statement only once."""

        def attempt() -> None:
            with self._connections.connection() as conn:
                conn.executescript(sql)

        self._retrying(attempt)

    # ---------------------------------------------------------------- setup

    def setup(self) -> None:
        """Create or migrate the schema. Idempotent; safe when many processes start at once.

        WAL is switched on with retries; each migration runs in its own
        ``BEGIN IMMEDIATE`` transaction together with its "applied" row, so
        concurrent callers apply it exactly once.
        """
        self._set_up_once()

    def _before_migrations(self) -> None:
        self._plain(SQL.SET_AUTO_VACUUM_INCREMENTAL)
        self._plain(SQL.SET_WAL)

    def _migrate(self, step: Callable[[], Txn[Any]]) -> None:
        self._transaction(SQL.BEGIN_WRITE, step)

    # ---------------------------------------------------------------- BaseCheckpointSaver API

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint named by ``config`` (latest of the thread/namespace if no id).

        Example:
            >>> with SqliteSaver.from_conn_string(":memory:") as saver:
            ...     saver.get_tuple({"configurable": {"thread_id": "none"}}) is None
            True
        """
        self._check_owner(self._core.owner_check(config), claim=False)
        loaded = self._read(lambda: self._core.get_tuple_txn(config))
        return self._core.build_tuple(loaded)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first, read in pages; no lock is held while yielding.

        Channel values of listed checkpoints decode on first access.
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
        outcome = self._put_restarting(
            prepared,
            lambda: self._write(
                lambda: self._core.put_txn(prepared), self._core.put_rows(prepared)
            ),
        )
        saved = self._core.finish_put(prepared, outcome)
        if outcome.retention_due and self._core.retention is not None:
            self._keep_last(prepared.key.thread_id)
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
        the ``put`` LangGraph makes right after the step stores them in its
        own statement, and any other read or write of this saver, ``close()``,
        or at the latest a timer 0.1 s later, stores them first. Errors,
        interrupts, other modes and direct calls are committed before this
        returns. See docs/session-storage.md.

        Raises:
            ThreadDeletedError: the thread was deleted; it stays deleted.
        """
        self._check_owner(self._core.owner_check(config), claim=True)
        prepared = self._core.prepare_writes(config, writes, task_id, task_path)
        fast = self._core.writes_rows(prepared)
        if prepared.may_wait and fast is not None:
            self._defer(prepared, fast)
            return
        self._write(lambda: self._core.writes_txn(prepared), fast)

    def _defer(self, prepared: PreparedWrites, fast: FastWrite) -> None:
        self._ensure_setup()
        op = _QueuedWrite(lambda: self._core.writes_txn(prepared), fast, deferred=prepared)
        with self._group.changed:
            # Rechecked under the queue's lock (as PostgresSaver does): a sibling
            # task's error or interrupt write marks the step before it queues
            # itself, so this write is either in the queue that write stores or
            # sees the mark here, and is not left for the timer.
            ended = prepared.step in self._core.ended_steps
            if not ended:
                self._group.queue.append(op)
        if ended:
            self._write(op.factory, fast)
            return
        self._group.timer.deferred(self._store_deferred)

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint and write of the thread and tombstone its id.

        "Delete to reset" works as with LangGraph's savers: the next *new run*
        on this id (its first checkpoint: root namespace, no parent) starts a
        fresh thread. What the tombstone guards stays guarded: a run that began
        before the delete (its puts have a parent, its writes a checkpoint, from
        before) gets ``ThreadDeletedError``, before and after such a restart.

        Nothing of the thread stays in the files: ``secure_delete`` zeroes the
        deleted rows and freed pages, and the write-ahead log, whose older
        frames still hold the rows, is checkpointed and truncated (when another
        connection is reading, SQLite truncates it at the next checkpoint that
        finds no reader; ``vacuum()`` forces one). The tombstone keeps the id.

        Example:
            >>> from langgraph.checkpoint.base import empty_checkpoint
            >>> from langgraph_memory.errors import ThreadDeletedError
            >>> with SqliteSaver.from_conn_string(":memory:") as saver:
            ...     fresh = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
            ...     in_flight = saver.put(fresh, empty_checkpoint(), {}, {})
            ...     saver.delete_thread("t")
            ...     _ = saver.put(fresh, empty_checkpoint(), {}, {})  # a new run: fresh thread
            ...     try:
            ...         saver.put(in_flight, empty_checkpoint(), {}, {})  # the old run's next put
            ...     except ThreadDeletedError:
            ...         print("refused")
            refused
        """
        self._write(lambda: self._core.delete_thread_txn(thread_id))
        self._core.cache.discard_thread(str(thread_id))
        self._plain(SQL.WAL_CHECKPOINT_TRUNCATE)

    def _after_erase(self) -> None:
        self._plain(SQL.WAL_CHECKPOINT_TRUNCATE)  # older WAL frames hold the old rows

    def undelete_thread(self, thread_id: str) -> None:
        """Remove a deleted thread's tombstone so the id can be used again (starting
        empty), by any write, including one whose run began before the delete.

        Example:
            >>> from langgraph.checkpoint.base import empty_checkpoint
            >>> from langgraph_memory.errors import ThreadDeletedError
            >>> with SqliteSaver.from_conn_string(":memory:") as saver:
            ...     config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
            ...     in_flight = saver.put(config, empty_checkpoint(), {}, {})
            ...     saver.delete_thread("t")
            ...     try:
            ...         saver.put(in_flight, empty_checkpoint(), {}, {})
            ...     except ThreadDeletedError:
            ...         print("refused")
            ...     saver.undelete_thread("t")
            ...     _ = saver.put(in_flight, empty_checkpoint(), {}, {})
            refused
        """
        self._write(lambda: self._core.undelete_thread_txn(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) created by these runs.

        Note:
            As with LangGraph's savers, deleting a run whose writes a later
            ``DeltaChannel`` value is rebuilt from breaks that rebuild.
        """
        self._write(lambda: self._core.delete_for_runs_txn(run_ids))
        self._core.cache.clear()

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> SqliteSaver:
        """A clone whose serializer accepts ``extra_allowlist`` (LangGraph calls this in
        ``compile``); it shares connections, cache and commit queue with this saver."""
        return self._clone_with_allowlist(extra_allowlist)  # type: ignore[no-any-return]

    # ---------------------------------------------------------------- retention and storage

    def sweep(self, dry_run: bool = False) -> SweepReport:
        """Apply the retention policy to the whole database now.

        Deletes (and tombstones) threads idle past ``thread_ttl_seconds``, then the
        least recently active threads while the database exceeds ``max_bytes``,
        and trims every live thread to ``keep_last`` checkpoints per namespace.

        Args:
            dry_run: report what would be deleted without deleting anything.

        Example:
            >>> from langgraph_memory.config import RetentionPolicy
            >>> policy = RetentionPolicy(keep_last=5, thread_ttl_seconds=30 * 86400)
            >>> with SqliteSaver.from_conn_string(":memory:", retention=policy) as saver:
            ...     report = saver.sweep(dry_run=True)
            ...     report.dry_run, report.deleted_threads
            (True, ())
        """
        return self._run_steps(sweep_steps(self._core, time.time(), dry_run))

    def storage_stats(self, thread_id: str | None = None) -> StorageStats:
        """File size, free pages and per-thread payload bytes and checkpoint counts.

        Example:
            >>> with SqliteSaver.from_conn_string(":memory:") as saver:
            ...     saver.storage_stats().thread_count
            0
        """
        return self._read(lambda: self._core.stats_txn(thread_id))

    def vacuum(self, *, full: bool = False) -> int:
        """Give free pages back to the file system; returns the file size afterwards.

        Args:
            full: run ``VACUUM`` (rewrites the file; needs free disk space of the
                database size) instead of ``PRAGMA incremental_vacuum``.
        """
        self._ensure_setup()
        auto_vacuum = self._plain(SQL.GET_AUTO_VACUUM)
        if full or not auto_vacuum or int(auto_vacuum[0][0]) != 2:
            self._plain(SQL.FULL_VACUUM)
        else:
            self._script(SQL.INCREMENTAL_VACUUM)
        self._plain(SQL.WAL_CHECKPOINT_TRUNCATE)
        return self._read(self._core.size_txn)
