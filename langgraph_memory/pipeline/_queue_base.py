"""The memory queue's base: settings, backend hooks, connections, transactions, setup.

Everything the other parts of ``MemoryQueue`` stand on: the validated settings,
the hooks a backend fills in (``_connect``, ``_transaction``, the statements that
differ per dialect), one connection per thread, the ``_write`` transaction
(``_Tx``: ``:name`` SQL, translated for the dialect) and the migration run.
``_queue_jobs.py`` (a job's life) and ``_queue_admin.py`` (audit, inspection,
erasure) build on it; ``pipeline/queue.py`` puts them together.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from langgraph_memory._migrations import Migration, MigrationTable, migrate
from langgraph_memory.encryption import EncryptionKeys
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.pipeline import _queue_sql as queue_sql
from langgraph_memory.pipeline._queue_sealing import JobSealer

__all__ = ["QueueBase"]


class _Tx:
    """One open transaction: ``execute`` with ``:name`` SQL and a dict of parameters."""

    def __init__(self, conn: Any, translate: Callable[[str], str]) -> None:
        self._conn = conn
        self._translate = translate

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> Any:
        return self._conn.execute(self._translate(sql), params or {})

    def executemany(self, sql: str, rows: Sequence[Mapping[str, Any]]) -> None:
        if not rows:
            return
        cursor = self._conn.cursor()
        try:
            cursor.executemany(self._translate(sql), rows)
        finally:
            cursor.close()


class QueueBase:
    """What every part of ``MemoryQueue`` stands on: settings, connections, transactions.

    The settings are ``MemoryQueue``'s (its docstring lists them). Subclasses (the
    backends) provide connections (``_connect``), transactions (``_transaction``)
    and the few statements that differ.
    """

    _migrations: tuple[Migration, ...] = ()
    _migration_table: MigrationTable = queue_sql.SQLITE_MIGRATION_TABLE
    _select_queued_ids = ""
    _select_claimable = queue_sql.SELECT_CLAIMABLE
    _lock_thread: str | None = None

    def __init__(
        self,
        *,
        debounce_seconds: float = 1.0,
        max_debounce_seconds: float = 10.0,
        lease_seconds: float = 120.0,
        max_attempts: int = 5,
        backoff_base_seconds: float = 2.0,
        backoff_max_seconds: float = 300.0,
        clock: Callable[[], float] = time.time,
        encryption: EncryptionKeys | None = None,
    ) -> None:
        owner = type(self).__name__
        self._sealer = JobSealer(encryption)
        for name, value, allow_zero in (
            ("debounce_seconds", debounce_seconds, True),
            ("max_debounce_seconds", max_debounce_seconds, True),
            ("lease_seconds", lease_seconds, False),
            ("backoff_base_seconds", backoff_base_seconds, True),
            ("backoff_max_seconds", backoff_max_seconds, True),
        ):
            if value < 0 or (value == 0 and not allow_zero):
                bound = ">= 0" if allow_zero else "> 0"
                raise ConfigurationError(f"{owner}({name}={value!r}); use a number {bound}.")
        if max_attempts < 1:
            raise ConfigurationError(
                f"{owner}(max_attempts={max_attempts!r}); use an integer >= 1."
            )
        self.debounce_seconds = float(debounce_seconds)
        self.max_debounce_seconds = float(max(max_debounce_seconds, debounce_seconds))
        self.lease_seconds = float(lease_seconds)
        self.max_attempts = int(max_attempts)
        self.backoff_base_seconds = float(backoff_base_seconds)
        self.backoff_max_seconds = float(backoff_max_seconds)
        self.clock = clock
        self._local = threading.local()
        self._connections: list[Any] = []
        self._connections_lock = threading.Lock()
        self._is_setup = False
        self._closed = False

    # backend hooks ------------------------------------------------------------------

    def _describe(self) -> str:
        raise NotImplementedError

    def _connect(self) -> Any:
        raise NotImplementedError

    def _transaction(self, conn: Any) -> Any:
        """A context manager that opens, commits or rolls back a write transaction."""
        raise NotImplementedError

    def _translate(self, sql: str) -> str:
        return sql

    def _ids_param(self, ids: Sequence[str]) -> Any:
        return list(ids)

    # connections ----------------------------------------------------------------------

    def _conn(self) -> Any:
        if self._closed:
            raise ConfigurationError(f"{self._describe()} is closed; open a new one.")
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()  # one connection per thread
            self._local.conn = conn
            with self._connections_lock:
                self._connections.append(conn)
        return conn

    @contextmanager
    def _write(self) -> Iterator[_Tx]:
        conn = self._conn()
        with self._transaction(conn):
            yield _Tx(conn, self._translate)

    def _read(self, sql: str, params: Mapping[str, Any] | None = None) -> list[Any]:
        with self._write() as tx:
            return list(tx.execute(sql, params).fetchall())

    def close(self) -> None:
        """Close every connection this queue opened (idempotent)."""
        with self._connections_lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()
        self._closed = True

    # migrations -----------------------------------------------------------------------

    def setup(self) -> None:
        """Create the queue's tables; idempotent, each migration commits with its row.

        Raises:
            MigrationError: The database was migrated by a newer release, or a
                migration failed (it is rolled back; earlier ones stay applied).
        """
        if self._is_setup:
            return
        conn = self._conn()

        @contextmanager
        def transaction() -> Iterator[Callable[..., list[Any]]]:
            with self._transaction(conn):

                def execute(sql: str, params: Sequence[Any] = ()) -> list[Any]:
                    cursor = conn.execute(sql, tuple(params)) if params else conn.execute(sql)
                    return list(cursor.fetchall()) if cursor.description else []

                yield execute

        migrate(transaction, self._migration_table, self._migrations, where=self._describe())
        self._is_setup = True

    async def asetup(self) -> None:
        """Async twin of ``setup``."""
        await asyncio.to_thread(self.setup)
