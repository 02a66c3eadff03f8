"""``SqliteSaver``: the SQLite checkpointer, sync, serving ``invoke`` and ``ainvoke``.

This module only runs what the core (``_core.py``) yields, inside
transactions, with retries. Its ``a*`` methods run the same sync path in a
worker thread, so one saver object serves both ``graph.invoke`` and
``graph.ainvoke``.
"""

from __future__ import annotations

import logging
import os
import random
import sqlite3
import threading
import time
import urllib.parse
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
from langgraph_memory.errors import (
    CheckpointStorageError,
    ConfigurationError,
    DatabaseConnectionError,
    InvalidConnectionError,
)
from langgraph_memory.session import _sql_sqlite as SQL
from langgraph_memory.session._bridges import iter_pages
from langgraph_memory.session._core import (
    Execute,
    ExecuteMany,
    FastWrite,
    Fetch,
    PreparedWrites,
    SaverCore,
    Statement,
    Txn,
    drive,
)
from langgraph_memory.session._deferred import DeferredWritesTimer, log_dropped
from langgraph_memory.session._retention import StorageStats, SweepReport
from langgraph_memory.session._shell import WRITE, Steps, SyncShell
from langgraph_memory.session._shell import sweep_steps as shared_sweep_steps

T = TypeVar("T")

logger = logging.getLogger(__name__)

# SQLite waits this long for a lock itself before reporting SQLITE_BUSY ...
DEFAULT_BUSY_TIMEOUT_MS = 5_000
# ... and we retry a busy transaction, with jittered backoff, for this long.
DEFAULT_RETRY_SECONDS = 60.0


def is_busy_error(exc: BaseException) -> bool:
    """SQLITE_BUSY / SQLITE_LOCKED, whatever wording the driver uses."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED (+ extended codes)
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def backoff_delay(attempt: int) -> float:
    """Full-jitter exponential backoff: 2 ms doubling up to 250 ms."""
    return random.uniform(0, min(0.25, 0.002 * (2 ** min(attempt, 10))))


def retry_delay(
    exc: sqlite3.OperationalError, attempt: int, deadline: float, retry_seconds: float
) -> float:
    """How long to wait before try ``attempt + 1`` of a transaction that failed
    with ``exc``; raises ``CheckpointStorageError`` unless it was busy and
    ``deadline`` (``time.monotonic()``) has not passed."""
    if not is_busy_error(exc):
        raise CheckpointStorageError(f"SQLite refused the operation: {exc}") from exc
    if time.monotonic() >= deadline:
        raise CheckpointStorageError(
            f"the database stayed busy for {retry_seconds:.0f} s "
            f"({attempt} attempts); another process holds its write lock. "
            "Raise retry_seconds or reduce concurrent writers."
        ) from exc
    return backoff_delay(attempt)


def resolve_conn_string(conn_string: Any) -> str:
    """``from_conn_string``'s argument as the string ``sqlite3.connect`` takes.

    Accepts ``str`` and ``os.PathLike`` (``pathlib.Path``, as the official saver
    does). A file in a directory that does not exist fails here, naming the
    path, instead of as SQLite's "unable to open database file" later.
    """
    if isinstance(conn_string, os.PathLike):
        conn_string = os.fspath(conn_string)
    if isinstance(conn_string, bytes):
        conn_string = os.fsdecode(conn_string)
    if not isinstance(conn_string, str) or not conn_string:
        raise ConfigurationError(
            f"conn_string={conn_string!r}; pass a file path such as 'checkpoints.sqlite' "
            "(str or pathlib.Path) or ':memory:'."
        )
    path = database_file(conn_string)
    if path is not None:
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise DatabaseConnectionError(
                f"cannot create the SQLite database {path!r}: its directory {directory!r} "
                f"does not exist; create it first (os.makedirs({directory!r}, exist_ok=True) "
                "or `mkdir -p`)."
            )
    return conn_string


def database_file(conn_string: str) -> str | None:
    """The file a connection string opens (``None`` for an in-memory database)."""
    if conn_string == ":memory:" or "mode=memory" in conn_string:
        return None
    if conn_string.startswith("file:"):
        return urllib.parse.unquote(urllib.parse.urlparse(conn_string).path) or None
    return conn_string


def open_error(exc: sqlite3.Error, conn_string: str) -> DatabaseConnectionError:
    """SQLite's "unable to open database file", with the path and what to check."""
    path = database_file(conn_string) or conn_string
    return DatabaseConnectionError(
        f"SQLite could not open {path!r} ({exc}); check that the path is a file (not a "
        "directory), that its directory exists and that this process may write there."
    )


def check_user_connection(conn: Any) -> None:
    """Refuse a connection the saver cannot use safely, saying how to fix it."""
    if not isinstance(conn, sqlite3.Connection):
        raise InvalidConnectionError(
            f"SqliteSaver needs a sqlite3.Connection, got {type(conn).__name__}; use "
            "SqliteSaver.from_conn_string(path) or sqlite3.connect(path, check_same_thread=False, "
            "isolation_level=None). For aiosqlite use AsyncSqliteSaver."
        )
    if getattr(conn, "autocommit", None) is False:
        raise InvalidConnectionError(
            "the connection was opened with autocommit=False, which keeps a transaction open "
            "at all times; open it with sqlite3.connect(path, check_same_thread=False, "
            "isolation_level=None)."
        )
    if conn.text_factory is not str:
        raise InvalidConnectionError(
            f"connection.text_factory={conn.text_factory!r}; the saver needs the default (str)."
        )
    if conn.in_transaction:
        raise InvalidConnectionError(
            "the connection has an open transaction; commit or roll it back before handing "
            "it to the saver (or open it with isolation_level=None)."
        )
    # check_same_thread cannot be read back; probe it from another thread, since
    # the a* methods and LangGraph's background writer run in worker threads.
    failure: list[BaseException] = []

    def probe() -> None:
        try:
            conn.execute("SELECT 1").close()
        except sqlite3.ProgrammingError as exc:
            failure.append(exc)

    worker = threading.Thread(target=probe, name="lgm-sqlite-connection-probe")
    worker.start()
    worker.join()
    if failure:
        raise InvalidConnectionError(
            "the connection was opened with check_same_thread=True, but the saver is used "
            "from LangGraph's worker threads; open it with sqlite3.connect(path, "
            "check_same_thread=False, isolation_level=None)."
        ) from failure[0]


class _Connections:
    """Where statements run: a small pool of connections to a file we own, or one
    shared, lock-guarded connection (``:memory:`` or a connection passed in).

    A pool, not one connection per thread: LangGraph runs checkpoint writes on
    short-lived worker threads, and per-thread connections would open (and
    leak) a connection per invocation.
    """

    def __init__(
        self,
        *,
        path: str | None,
        shared: sqlite3.Connection | None,
        busy_timeout_ms: int,
        owns_shared: bool,
        uri: bool = False,
        max_connections: int = 8,
    ) -> None:
        self._path = path
        self._uri = uri
        self._shared = shared
        self._owns_shared = owns_shared
        self._busy_timeout_ms = busy_timeout_ms
        self._lock = threading.RLock()
        self._pool_lock = threading.Condition()
        self._idle: list[sqlite3.Connection] = []
        self._open_count = 0
        self._max = max_connections
        self._closed = False
        if shared is not None:
            self._configure(shared, user=not owns_shared)

    def _configure(self, conn: sqlite3.Connection, *, user: bool) -> None:
        for pragma in SQL.CONNECTION_PRAGMAS:
            if user and any(
                name in pragma for name in ("foreign_keys", "wal_autocheckpoint", "journal_size")
            ):
                continue  # leave the user's own settings alone
            conn.execute(pragma.format(busy_timeout_ms=self._busy_timeout_ms)).close()

    def _open(self) -> sqlite3.Connection:
        assert self._path is not None
        try:
            conn = sqlite3.connect(
                self._path,
                check_same_thread=False,
                isolation_level=None,
                timeout=self._busy_timeout_ms / 1000,
                uri=self._uri,
                cached_statements=256,
            )
            self._configure(conn, user=False)
        except sqlite3.OperationalError as exc:
            if "unable to open" not in str(exc):
                raise
            raise open_error(exc, self._path) from exc
        return conn

    def _checkout(self) -> sqlite3.Connection:
        with self._pool_lock:
            while True:
                if self._closed:
                    raise CheckpointStorageError("the saver is closed; open a new one.")
                if self._idle:
                    return self._idle.pop()
                if self._open_count < self._max:
                    self._open_count += 1
                    break
                self._pool_lock.wait()
        try:
            return self._open()
        except BaseException:
            with self._pool_lock:
                self._open_count -= 1
                self._pool_lock.notify()
            raise

    def _checkin(self, conn: sqlite3.Connection) -> None:
        with self._pool_lock:
            if self._closed or conn.in_transaction:
                self._open_count -= 1
                conn.close()
            else:
                self._idle.append(conn)
            self._pool_lock.notify()

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        if self._closed:
            raise CheckpointStorageError("the saver is closed; open a new one.")
        if self._shared is not None:
            with self._lock:
                yield self._shared
            return
        conn = self._checkout()
        try:
            yield conn
        finally:
            self._checkin(conn)

    def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work(conn)`` on a connection; what :meth:`connection` does, without
        a generator-based context manager on every put (the hot path)."""
        if self._closed:
            raise CheckpointStorageError("the saver is closed; open a new one.")
        if self._shared is not None:
            with self._lock:
                return work(self._shared)
        conn = self._checkout()
        try:
            return work(conn)
        finally:
            self._checkin(conn)

    def close(self) -> None:
        with self._pool_lock:
            self._closed = True
            idle, self._idle = self._idle, []
            self._open_count -= len(idle)
            self._pool_lock.notify_all()
        for conn in idle:
            conn.close()
        if self._shared is not None and self._owns_shared:
            with self._lock:
                self._shared.close()


class _GroupCommit:
    """Writes waiting for the next commit, and whether a leader is committing.

    The queue also holds task writes nobody waits for (``_QueuedWrite.deferred``,
    see ``SqliteSaver.put_writes``); the next commit of any write stores them,
    and ``timer`` stores them when nothing else does.
    """

    def __init__(self) -> None:
        self.queue: list[_QueuedWrite] = []
        self.changed = threading.Condition()
        self.leader_active = False
        self.timer = DeferredWritesTimer()

    def take(self, count: int | None = None) -> list[_QueuedWrite]:
        """Remove and return the first ``count`` queued writes (all by default);
        call holding ``changed``."""
        if count is None:
            taken, self.queue = self.queue, []
        else:
            taken = self.queue[:count]
            del self.queue[:count]
        return taken

    def committed(self) -> None:
        """A leader's commit ended; call holding ``changed``. Deferred writes count
        as queued until then, so a read meanwhile waits for that commit."""
        if self.timer.oldest is not None and not any(q.deferred for q in self.queue):
            self.timer.stored()


class _QueuedWrite:
    """One caller's write waiting for (or done by) a group commit."""

    __slots__ = ("deferred", "error", "factory", "fast", "finished", "result")

    def __init__(
        self,
        factory: Callable[[], Txn[Any]],
        fast: FastWrite | None = None,
        deferred: PreparedWrites | None = None,
    ) -> None:
        self.factory = factory
        # The same write as rows of the one-statement path, and its result then.
        self.fast = fast
        # Task writes nobody waits for: named in the log if they fail.
        self.deferred = deferred
        self.finished = False
        self.result: Any = None
        self.error: BaseException | None = None

    def succeed(self, result: Any) -> None:
        self.result, self.finished = result, True

    def fail(self, error: BaseException) -> None:
        self.error, self.finished = error, True
        if self.deferred is not None:
            log_dropped(logger, self.deferred, error)

    def outcome(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.result


def _nothing() -> Txn[None]:
    """A write with nothing to do: queued after deferred writes, it waits for their commit."""
    return
    yield  # pragma: no cover - makes this a generator


def _storage_error(exc: sqlite3.Error) -> CheckpointStorageError:
    error = CheckpointStorageError(f"SQLite refused the operation: {exc}")
    error.__cause__ = exc
    return error


def _check_no_foreign_transaction(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        raise InvalidConnectionError(
            "the connection has an open transaction not started by the saver; "
            "commit it, or open the connection with isolation_level=None."
        )


def run_transaction(conn: sqlite3.Connection, begin: str, factory: Callable[[], Txn[T]]) -> T:
    """Run one generator inside ``begin`` ... COMMIT on ``conn`` (rolled back on error)."""
    _check_no_foreign_transaction(conn)
    cursor = conn.cursor()
    cursor.row_factory = None
    try:
        cursor.execute(begin)
        result = drive(factory(), _execute(cursor))
        cursor.execute(SQL.COMMIT)
        return result
    except BaseException:
        if conn.in_transaction:
            conn.execute(SQL.ROLLBACK)
        raise
    finally:
        cursor.close()


# A group commit takes at most this many writes into one transaction.
MAX_GROUP_WRITES = 64
# Rows per INSERT of the one-statement path (11 parameters each; SQLite allows 32766).
MAX_WRITE_ROWS = 500


def is_fast_path_refusal(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.IntegrityError) and SQL.FAST_PATH_REFUSED in str(exc)


def insert_rows(conn: sqlite3.Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    """Store ``rows`` through ``lgm_write_rows``, committed before this returns.

    On a connection in autocommit mode (ours) one INSERT is its own
    transaction: one ``sqlite3_step`` instead of BEGIN, 2-6 statements and
    COMMIT, so the writer thread waits for the GIL once per write instead of
    once per statement (see docs/session-storage.md). Raises like ``execute``;
    after a refusal (``is_fast_path_refusal``) nothing of ``rows`` is stored.
    """
    if len(rows) <= MAX_WRITE_ROWS and conn.isolation_level is None:
        _check_no_foreign_transaction(conn)
        params = [value for row in rows for value in row]
        conn.execute(SQL.insert_write_rows(len(rows)), params).close()
        return
    # Too many rows for one statement, or a connection that opens transactions
    # implicitly: the parts in one explicit transaction.
    run_transaction(conn, SQL.BEGIN_WRITE, lambda: _insert_rows_txn(rows))


def _insert_rows_txn(rows: Sequence[tuple[Any, ...]]) -> Txn[None]:
    for start in range(0, len(rows), MAX_WRITE_ROWS):
        part = rows[start : start + MAX_WRITE_ROWS]
        yield Execute(SQL.insert_write_rows(len(part)), [v for row in part for v in row])


def commit_batch(
    conn: sqlite3.Connection,
    factories: Sequence[Callable[[], Txn[Any]]],
    more: Callable[[], Sequence[Callable[[], Txn[Any]]]] | None = None,
) -> list[tuple[bool, Any]]:
    """Run several writes in ONE transaction; ``(ok, result_or_error)`` per write.

    ``more()`` hands over writes queued while this transaction ran; they join
    it before COMMIT. No savepoint per write (two statements each, on every
    write): a write that fails (a tombstoned thread) rolls the transaction
    back, is reported failed, and the others run again in a new transaction;
    failures are rare. A busy error aborts the whole batch (the caller
    retries it).
    """
    _check_no_foreign_transaction(conn)
    pending = list(factories)
    failed: dict[int, BaseException] = {}
    cursor = conn.cursor()
    cursor.row_factory = None
    execute = _execute(cursor)
    try:
        while True:
            results: list[Any] = []
            cursor.execute(SQL.BEGIN_WRITE)
            index = 0
            error: BaseException | None = None
            while error is None:
                while index < len(pending):
                    if index not in failed:
                        try:
                            results.append(drive(pending[index](), execute))
                        except sqlite3.OperationalError as exc:
                            if is_busy_error(exc):
                                raise
                            error = _storage_error(exc)
                        except Exception as exc:
                            error = exc
                        if error is not None:
                            failed[index] = error
                            break
                    else:
                        results.append(None)
                    index += 1
                if error is None:
                    extra = more() if more is not None else ()
                    if not extra:
                        break
                    pending.extend(extra)
            if error is not None:
                conn.execute(SQL.ROLLBACK)
                continue  # the others again, without the failed write
            cursor.execute(SQL.COMMIT)
            return [
                (False, failed[i]) if i in failed else (True, result)
                for i, result in enumerate(results)
            ]
    except BaseException:
        if conn.in_transaction:
            conn.execute(SQL.ROLLBACK)
        raise
    finally:
        cursor.close()


def run_reads(
    conn: sqlite3.Connection, factories: Sequence[Callable[[], Txn[Any]]]
) -> list[tuple[bool, Any]]:
    """Run several read generators in ONE read transaction (one snapshot);
    ``(ok, result_or_error)`` per read. A busy error aborts them all (the
    caller retries); any other error fails only its read."""
    _check_no_foreign_transaction(conn)
    cursor = conn.cursor()
    cursor.row_factory = None
    execute = _execute(cursor)
    outcomes: list[tuple[bool, Any]] = []
    try:
        cursor.execute(SQL.BEGIN_READ)
        for factory in factories:
            try:
                outcomes.append((True, drive(factory(), execute)))
            except sqlite3.OperationalError as exc:
                if is_busy_error(exc):
                    raise
                outcomes.append((False, _storage_error(exc)))
            except Exception as exc:
                outcomes.append((False, exc))
        cursor.execute(SQL.COMMIT)
        return outcomes
    except BaseException:
        if conn.in_transaction:
            conn.execute(SQL.ROLLBACK)
        raise
    finally:
        cursor.close()


def _execute(cursor: sqlite3.Cursor) -> Callable[[Statement], Any]:
    def run(statement: Statement) -> Any:
        if type(statement) is Fetch:
            return cursor.execute(statement.sql, statement.params).fetchall()
        if type(statement) is Execute:
            return cursor.execute(statement.sql, statement.params).rowcount
        assert isinstance(statement, ExecuteMany)
        return cursor.executemany(statement.sql, statement.rows).rowcount

    return run


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
