"""Opening and sharing SQLite connections for ``SqliteSaver`` (``sqlite.py``).

The busy-error test and the jittered retry delay, the connection string
(``resolve_conn_string``, ``database_file``, ``open_error``), the checks of a
connection passed in (``check_user_connection``), and ``_Connections``: a small
pool of connections to a file the saver owns, or one shared, lock-guarded
connection. ``AsyncSqliteSaver`` (``aio.py``) uses the same helpers.
"""

from __future__ import annotations

import os
import random
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from langgraph_memory.errors import (
    CheckpointStorageError,
    ConfigurationError,
    DatabaseConnectionError,
    InvalidConnectionError,
)
from langgraph_memory.session import _sql_sqlite as SQL

T = TypeVar("T")

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
