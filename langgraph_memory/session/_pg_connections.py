"""What the sync and async Postgres savers share besides the core: connection
checks, pool options, retry rules, and the lock statements they wrap around
the core's transactions.

Nothing here runs I/O. The shells (``postgres.py``, ``postgres_aio.py``) open
pools with :func:`pool_kwargs`, classify errors with :func:`is_retryable`, and
drive the generators below exactly like the core's own.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from typing import Any, TypeVar

try:
    import psycopg
    from psycopg import pq
    from psycopg.conninfo import conninfo_to_dict
except ModuleNotFoundError as exc:  # the 'postgres' extra is not installed
    from langgraph_memory._extras import raise_missing_extra

    raise_missing_extra("postgres", "PostgresSaver", exc)

from langgraph_memory.errors import (
    ConfigurationError,
    DatabaseConnectionError,
    InvalidConnectionError,
)
from langgraph_memory.session import _sql_postgres as SQL
from langgraph_memory.session._core import Execute, Fetch, SaverCore, Txn, parse_thread_id

T = TypeVar("T")

DEFAULT_POOL_SIZE = 10
# psycopg's own default: a statement is prepared server-side after 5 runs.
DEFAULT_PREPARE_THRESHOLD = 5
DEFAULT_MAX_IDLE = 600.0

# ------------------------------------------------------------------ options


def validate_pool_options(
    *,
    pool_size: int,
    min_pool_size: int | None,
    max_idle: float,
    prepare_threshold: int | None,
    conn_string: Any,
) -> int:
    """Check ``from_conn_string``'s options; return the pool's minimum size."""
    if not isinstance(conn_string, str) or not conn_string:
        raise ConfigurationError(
            f"conn_string={conn_string!r}; pass a libpq DSN such as "
            "'postgresql://user:password@host:5432/dbname'."
        )
    if not isinstance(pool_size, int) or isinstance(pool_size, bool) or pool_size < 1:
        raise ConfigurationError(f"pool_size={pool_size!r}; use an integer >= 1.")
    if min_pool_size is None:
        min_pool_size = pool_size
    if (
        not isinstance(min_pool_size, int)
        or isinstance(min_pool_size, bool)
        or not 0 <= min_pool_size <= pool_size
    ):
        raise ConfigurationError(
            f"min_pool_size={min_pool_size!r}; use an integer from 0 to pool_size={pool_size}."
        )
    if not isinstance(max_idle, (int, float)) or max_idle <= 0:
        raise ConfigurationError(f"max_idle={max_idle!r}; use seconds > 0.")
    if prepare_threshold is not None and (
        not isinstance(prepare_threshold, int)
        or isinstance(prepare_threshold, bool)
        or prepare_threshold < 0
    ):
        raise ConfigurationError(
            f"prepare_threshold={prepare_threshold!r}; use an integer >= 0, or None to never "
            "prepare statements server-side (needed behind pgbouncer in transaction mode)."
        )
    return min_pool_size


# ------------------------------------------------------------------ the first connection

# A pool opened on a DSN that cannot work (no such database, wrong role or
# password, nothing listening) retries in the background until its timeout
# (30 s by default) and logs a warning per attempt. One plain connection made
# first fails in milliseconds with libpq's own reason, which we then quote.
_FIXES: tuple[tuple[str, str], ...] = (
    (
        r'database "[^"]*" does not exist',
        "create it (createdb, or CREATE DATABASE) or fix the database name in the DSN",
    ),
    (r'role "[^"]*" does not exist', "fix the user name in the DSN, or create that role"),
    (r"password authentication failed", "check the user's password in the DSN"),
    (r"no password supplied", "put the password in the DSN or in PGPASSWORD / ~/.pgpass"),
    (r"Connection refused", "start the server, or fix the host and port in the DSN"),
    (r"could not translate host name|Name or service not known", "fix the host name in the DSN"),
    (r"timeout expired", "check that the host is reachable and the port is open"),
)


def probe_kwargs(conn_string: str, connect_timeout: float) -> dict[str, Any]:
    """Arguments of the one connection ``from_conn_string`` makes before its
    pool: the DSN checked for syntax, and libpq's ``connect_timeout`` (whole
    seconds) unless the DSN sets its own."""
    try:
        params = conninfo_to_dict(conn_string)
    except psycopg.ProgrammingError as exc:
        raise ConfigurationError(
            f"conn_string is not a valid libpq DSN ({str(exc).strip()}); write it as "
            "'postgresql://user:password@host:5432/dbname' or 'host=... dbname=...'."
        ) from exc
    kwargs: dict[str, Any] = {"autocommit": True}
    if "connect_timeout" not in params:
        kwargs["connect_timeout"] = max(2, math.ceil(connect_timeout))
    return kwargs


def describe_dsn(conn_string: str) -> str:
    """``user@host:port/dbname`` of a DSN, never its password."""
    try:
        params = conninfo_to_dict(conn_string)
    except psycopg.Error:
        return "the server in the DSN"
    user = params.get("user") or "(default user)"
    host = params.get("host") or params.get("hostaddr") or "(default host)"
    port = params.get("port") or "5432"
    dbname = params.get("dbname") or "(default database)"
    return f"{user}@{host}:{port}/{dbname}"


def connect_error(exc: psycopg.Error, conn_string: str) -> DatabaseConnectionError:
    """A failed first connection as a typed error: where, libpq's reason, the fix."""
    text = str(exc).strip()
    # libpq: 'connection failed: connection to server at "h", port p failed: FATAL:  reason'
    reason = " ".join(re.split(r"failed: (?:FATAL:\s+)?", text)[-1].split()) or text
    fix = next(
        (fix for pattern, fix in _FIXES if re.search(pattern, text)),
        "check the DSN and that the server is up",
    )
    return DatabaseConnectionError(
        f"cannot connect to Postgres at {describe_dsn(conn_string)}: {reason}; {fix}."
    )


def session_async_commit(prepare_threshold: int | None, synchronous_commit: bool) -> bool:
    """Whether the saver's own pool sets ``synchronous_commit=off`` once per connection.

    Saves one statement per write transaction. Not behind pgbouncer in
    transaction mode (``prepare_threshold=None``), where session settings would
    leak to other clients sharing the server connection: there each write
    transaction says ``SET LOCAL`` instead.
    """
    return not synchronous_commit and prepare_threshold is not None


def configure_async_commit(conn: psycopg.Connection[Any]) -> None:
    """Pool ``configure`` hook: this connection's commits do not wait for the WAL flush."""
    conn.execute(SQL.SET_SESSION_ASYNC_COMMIT)


async def aconfigure_async_commit(conn: psycopg.AsyncConnection[Any]) -> None:
    await conn.execute(SQL.SET_SESSION_ASYNC_COMMIT)


def connection_kwargs(prepare_threshold: int | None) -> dict[str, Any]:
    """Options of every connection the saver's own pool opens.

    ``autocommit=True``: the saver opens and commits its own transactions, so a
    connection never sits "idle in transaction" between calls (pgbouncer in
    transaction mode then hands it back to other clients at once).
    """
    return {"autocommit": True, "prepare_threshold": prepare_threshold}


# ------------------------------------------------------------------ user connections

_SYNC_FIX = (
    "pass a psycopg.Connection or psycopg_pool.ConnectionPool, or use "
    "PostgresSaver.from_conn_string(dsn)"
)
_ASYNC_FIX = (
    "pass a psycopg.AsyncConnection or psycopg_pool.AsyncConnectionPool, or use "
    "AsyncPostgresSaver.from_conn_string(dsn)"
)


def check_connection(conn: Any, *, want_async: bool) -> str:
    """Refuse a connection or pool the saver cannot use; return ``"conn"`` or ``"pool"``.

    Row factories need no check: the saver reads through its own tuple-row
    cursors whatever the connection's default is.
    """
    import psycopg_pool

    name = type(conn).__name__
    saver = "AsyncPostgresSaver" if want_async else "PostgresSaver"
    if isinstance(conn, str):
        raise InvalidConnectionError(
            f"{saver}(conn) takes an open connection or pool, not the string {conn!r}; "
            f"for a DSN use `{'async ' if want_async else ''}with {saver}.from_conn_string(dsn) "
            "as saver:`."
        )
    if want_async:
        if isinstance(conn, (psycopg.Connection, psycopg_pool.ConnectionPool)):
            raise InvalidConnectionError(
                f"AsyncPostgresSaver got a synchronous {name}; {_ASYNC_FIX}. For a sync "
                "connection use PostgresSaver (its a* methods also serve graph.ainvoke)."
            )
        kinds: tuple[tuple[type, str], ...] = (
            (psycopg.AsyncConnection, "conn"),
            (psycopg_pool.AsyncConnectionPool, "pool"),
        )
        fix = _ASYNC_FIX
    else:
        if isinstance(conn, (psycopg.AsyncConnection, psycopg_pool.AsyncConnectionPool)):
            raise InvalidConnectionError(
                f"PostgresSaver got an asynchronous {name}; use AsyncPostgresSaver for it, "
                f"or {_SYNC_FIX}."
            )
        kinds = ((psycopg.Connection, "conn"), (psycopg_pool.ConnectionPool, "pool"))
        fix = _SYNC_FIX
    matched = [kind for cls, kind in kinds if isinstance(conn, cls)]
    if not matched:
        raise InvalidConnectionError(f"cannot use a {name} as a Postgres connection; {fix}.")
    kind = matched[0]
    if kind == "pool":
        if conn.closed:
            raise InvalidConnectionError(
                f"the {name} is closed or was never opened; open it first "
                "(pool.open() / `with pool:` / `async with pool:`)."
            )
        return kind
    if conn.closed:
        raise InvalidConnectionError(f"the {name} is closed; pass an open connection.")
    check_idle(conn)
    return kind


def check_idle(conn: Any) -> None:
    """A connection the saver starts a transaction on must not be inside one already."""
    status = conn.info.transaction_status
    if status == pq.TransactionStatus.IDLE:
        return
    if status in (pq.TransactionStatus.INTRANS, pq.TransactionStatus.INERROR):
        raise InvalidConnectionError(
            "the connection has an open transaction (autocommit=False and a statement ran "
            "without commit); the saver's writes would not commit with it. Commit or roll it "
            "back first, or open the connection with autocommit=True."
        )
    if status == pq.TransactionStatus.ACTIVE:
        raise InvalidConnectionError(
            "the connection is busy running another query; give the saver its own "
            "connection or a pool."
        )
    raise InvalidConnectionError(
        "the connection is broken (its server closed it); pass a pool so the saver can "
        "reconnect, e.g. PostgresSaver.from_conn_string(dsn)."
    )


# ------------------------------------------------------------------ pipeline mode


class UnknownRowcount:
    """What a pipelined ``Execute`` sends back to the core: its rowcount is not known yet.

    Pipelining only pays if statements whose answers nobody reads do not wait
    for them. The core reads a rowcount only for statements our SQL marks with
    ``RETURNING`` (answered with a real count); reading this one raises, so a
    future core that starts relying on another rowcount fails loudly in tests
    instead of misbehaving (the fix: add ``RETURNING 1`` to that statement).
    """

    __slots__ = ()

    def _refuse(self, *_: Any) -> Any:
        raise RuntimeError(
            "the rowcount of a pipelined Postgres statement was read; add RETURNING to "
            "that statement in _sql_postgres.py so the shell waits for its answer."
        )

    __bool__ = __int__ = __index__ = __eq__ = __ne__ = __lt__ = __gt__ = _refuse
    __le__ = __ge__ = __add__ = __radd__ = __sub__ = __rsub__ = _refuse
    __hash__ = None  # type: ignore[assignment]


UNKNOWN_ROWCOUNT = UnknownRowcount()

_RETURNS_ROWS: dict[str, bool] = {}


def returns_rows(sql: str) -> bool:
    """Whether an ``Execute`` statement has a RETURNING clause (its rowcount is read)."""
    known = _RETURNS_ROWS.get(sql)
    if known is None:
        known = _RETURNS_ROWS[sql] = "RETURNING" in sql.upper()
    return known


# ------------------------------------------------------------------ retries


class ConnectionLostBeforeCommit(psycopg.OperationalError):
    """The connection died before COMMIT was sent: nothing of the transaction
    was committed, so running it again is safe for every operation."""


def is_retryable(exc: BaseException, *, idempotent: bool) -> bool:
    """Errors after which running the whole transaction again is safe and useful.

    * Deadlocks / serialization failures: the server rolled the transaction back.
    * A connection lost before COMMIT was sent: nothing was committed.
    * A connection lost later (server restart, ``pg_terminate_backend``, a proxy
      or pgbouncer dropping it, "SSL connection has been closed unexpectedly"):
      the commit may have gone through, so only idempotent operations (all but
      ``copy_thread``) are retried.
    """
    if isinstance(exc, (psycopg.errors.TransactionRollback, ConnectionLostBeforeCommit)):
        return True
    if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
        state = getattr(exc, "sqlstate", None)
        if state is not None and state.startswith("40"):
            # 40001 serialization_failure / 40P01 deadlock_detected: psycopg does
            # not file them under TransactionRollback, but the server rolled back.
            return True
        if state is not None and state[:2] not in TRANSIENT_SQLSTATE_CLASSES:
            # The server answered and refused the statement itself: psycopg
            # files "program limit exceeded" (54000, e.g. a 3,000-character
            # thread id above the index row limit) and friends under
            # OperationalError, and running it again fails the same way.
            return False
        return idempotent
    return False


# SQLSTATE classes of an OperationalError worth running again: connection
# exceptions (08), transaction rollbacks (40), insufficient resources (53, e.g.
# too many connections), operator intervention (57: admin shutdown, statement
# timeout), object in use / lock not available (55), system errors (58).
# Errors without a SQLSTATE (the client lost the connection) are retried too.
TRANSIENT_SQLSTATE_CLASSES = frozenset(("08", "40", "53", "55", "57", "58"))


# A server restart or failover takes seconds, during which every attempt fails
# fast (each dead pooled connection fails once and is discarded), so retries
# continue with capped exponential backoff until this deadline, then raise
# CheckpointStorageError.
RETRY_SECONDS = 15.0


def retry_delay(attempt: int) -> float:
    """Exponential backoff from 20 ms, capped at 500 ms (``attempt`` counts from 1)."""
    return min(0.5, 0.01 * 2.0**attempt)


def should_retry(exc: BaseException, *, idempotent: bool, started: float, now: float) -> bool:
    return now - started < RETRY_SECONDS and is_retryable(exc, idempotent=idempotent)


def as_connection_loss(exc: psycopg.Error, conn: Any, *, commit_sent: bool) -> psycopg.Error:
    """Classify an error raised on a connection that is now broken as a lost connection.

    When the server closes a connection in the middle of a pipelined
    transaction, libpq may report it as some other error (e.g. a result that
    does not match the statement); what matters for retrying is that the
    connection is gone, and whether COMMIT could have reached the server.
    """
    if not (conn.closed or conn.broken):
        return exc
    cls = psycopg.OperationalError if commit_sent else ConnectionLostBeforeCommit
    if type(exc) is cls:
        return exc
    lost = cls(f"connection lost: {type(exc).__name__}: {exc}")
    lost.__cause__ = exc
    return lost


# ------------------------------------------------------------------ locks around core transactions


def locked(first: Fetch | Execute, factory: Callable[[], Txn[T]]) -> Callable[[], Txn[T]]:
    """``factory`` whose transaction first runs ``first`` (a lock statement)."""

    def txn() -> Txn[T]:
        yield first
        return (yield from factory())

    return txn


def migration_txn(factory: Callable[[], Txn[T]]) -> Callable[[], Txn[T]]:
    """Serialise schema changes of every instance on one advisory lock."""
    return locked(Fetch(SQL.LOCK_MIGRATIONS, (SQL.MIGRATION_LOCK_KEY,)), factory)


def thread_txn(thread_id: Any, factory: Callable[[], Txn[T]]) -> Callable[[], Txn[T]]:
    """Run ``factory`` holding the thread's row lock (retention, prune, copy)."""
    return locked(Fetch(SQL.LOCK_THREAD, (parse_thread_id(thread_id),)), factory)


def delete_thread_txn(core: SaverCore, thread_id: Any) -> Callable[[], Txn[None]]:
    """Lock and tombstone first: a put or put_writes racing the delete blocks on
    the row, then sees the tombstone. FOR UPDATE, not just the tombstone's own
    NO KEY UPDATE lock, so put_writes' FOR KEY SHARE (SELECT_TOMBSTONE) waits too."""
    tid = parse_thread_id(thread_id)
    now = time.time()
    return locked(
        Fetch(SQL.LOCK_THREAD, (tid,)),
        locked(
            Execute(SQL.TOMBSTONE_THREAD, (tid, now, now, now)),
            lambda: core.delete_thread_txn(tid),
        ),
    )


def expire_thread_txn(core: SaverCore, thread_id: str, idle_before: float) -> Txn[bool]:
    """Delete (and tombstone) ``thread_id`` only if it is still idle and nobody holds it."""
    rows = yield Fetch(SQL.LOCK_IDLE_THREAD, (thread_id, idle_before))
    if not rows:
        return False
    yield from core.delete_thread_txn(thread_id)
    return True


def evict_thread_txn(core: SaverCore, thread_id: str) -> Txn[bool]:
    """Delete (and tombstone) ``thread_id`` for the size cap unless another instance holds it."""
    rows = yield Fetch(SQL.LOCK_THREAD_SKIP_LOCKED, (thread_id,))
    if not rows:
        return False
    yield from core.delete_thread_txn(thread_id)
    return True


def sweep_keep_last_txn(core: SaverCore, thread_id: str, keep: int) -> Txn[int]:
    """Trim one thread, skipping it if another instance is writing it right now."""
    rows = yield Fetch(SQL.LOCK_THREAD_SKIP_LOCKED, (thread_id,))
    if not rows:
        return 0
    return (yield from core.keep_last_txn(thread_id, keep))
