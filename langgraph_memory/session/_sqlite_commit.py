"""Running the core's transactions on a ``sqlite3`` connection, one by one or grouped.

``run_transaction`` and ``run_reads`` drive generators inside one transaction;
``commit_batch`` runs several writes in ONE transaction (the group commit of
``SqliteSaver._write``, ``sqlite.py``), whose waiting writes are
``_QueuedWrite`` entries in a ``_GroupCommit`` queue; ``insert_rows`` is the
one-statement path (``lgm_write_rows``). ``AsyncSqliteSaver`` (``aio.py``)
runs ``commit_batch``, ``run_reads`` and ``run_transaction`` on its connection.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from langgraph_memory.errors import CheckpointStorageError, InvalidConnectionError
from langgraph_memory.session import _sql_sqlite as SQL
from langgraph_memory.session._core import (
    Execute,
    ExecuteMany,
    FastWrite,
    Fetch,
    PreparedWrites,
    Statement,
    Txn,
    drive,
)
from langgraph_memory.session._deferred import DeferredWritesTimer, log_dropped
from langgraph_memory.session._sqlite_connections import is_busy_error

T = TypeVar("T")

# Named after the saver's module, where the queue lived: a dropped deferred
# write is logged under ``langgraph_memory.session.sqlite``, as before.
logger = logging.getLogger("langgraph_memory.session.sqlite")


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
