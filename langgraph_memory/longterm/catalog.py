"""The SQLite side of the store: item catalog, FTS5 keyword index, partition map.

One file, one connection, guarded by a lock so the sync API and the async
shells (which run it in worker threads) can share it. Every statement comes
from ``_sql.py``; every ``WHERE`` fragment from ``where.py``.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langgraph_memory.errors import MigrationError
from langgraph_memory.longterm import _sql
from langgraph_memory.longterm.rows import ItemRow


class SqliteCatalog:
    """Owns the SQLite file of a :class:`ChromaMemoryStore`."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self.lock = threading.RLock()
        for pragma in _sql.PRAGMAS:
            self.conn.execute(pragma)
        self._migrate()

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    def _migrate(self) -> None:
        with self.lock:
            self.conn.execute(_sql.CREATE_MIGRATIONS_TABLE)
            applied = {r[0] for r in self.conn.execute(_sql.SELECT_APPLIED_MIGRATIONS)}
            for name, statements in _sql.MIGRATIONS:
                if name in applied:
                    continue
                try:
                    with self.transaction():
                        for statement in statements:
                            self.conn.execute(statement)
                        self.conn.execute(_sql.INSERT_APPLIED_MIGRATION, (name, time.time()))
                except sqlite3.Error as exc:
                    raise MigrationError(
                        f"Migration {name!r} failed on {self.path!r}: {exc}. The file may be "
                        "from a newer version or damaged; restore a backup or use a new path."
                    ) from exc

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on error); re-entrant under the lock."""
        with self.lock:
            if self.conn.in_transaction:
                yield self.conn
                return
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            else:
                self.conn.execute("COMMIT")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.lock:
            return self.conn.execute(sql, params).fetchall()

    def items(self, sql: str, params: Sequence[Any] = ()) -> list[ItemRow]:
        return [ItemRow.from_tuple(r) for r in self.query(sql, params)]

    def meta(self, name: str) -> str | None:
        rows = self.query(_sql.SELECT_META, (name,))
        return str(rows[0][0]) if rows else None

    def set_meta(self, name: str, value: str) -> None:
        with self.transaction() as conn:
            conn.execute(_sql.UPSERT_META, (name, value))

    def scrub(self) -> None:
        """Push deleted text out of the file: FTS5 optimize, VACUUM, WAL truncate."""
        with self.lock:
            self.conn.execute(_sql.FTS_OPTIMIZE)
            self.conn.execute(_sql.VACUUM)
            self.conn.execute(_sql.WAL_TRUNCATE)
