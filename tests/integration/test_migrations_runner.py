"""The shared migrations runner on a real SQLite file and a real Postgres database."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from langgraph_memory._migrations import Migration, MigrationTable, migrate
from langgraph_memory.errors import MigrationError

SQLITE_TABLE = MigrationTable(
    create="CREATE TABLE IF NOT EXISTS t_migrations (version INTEGER PRIMARY KEY, name TEXT, ts)",
    select_applied="SELECT version FROM t_migrations",
    insert_applied="INSERT INTO t_migrations (version, name, ts) VALUES (?, ?, ?)",
)
POSTGRES_TABLE = MigrationTable(
    create=(
        "CREATE TABLE IF NOT EXISTS t_migrations "
        "(version INTEGER PRIMARY KEY, name TEXT, applied DOUBLE PRECISION)"
    ),
    select_applied="SELECT version FROM t_migrations",
    insert_applied="INSERT INTO t_migrations (version, name, applied) VALUES (%s, %s, %s)",
    lock="SELECT pg_advisory_xact_lock(4242)",
)

TransactionFactory = Callable[[], AbstractContextManager[Callable[..., list[Any]]]]


def _sqlite(path: Path) -> tuple[sqlite3.Connection, TransactionFactory]:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)

    @contextmanager
    def transaction() -> Iterator[Callable[..., list[Any]]]:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield lambda sql, params=(): conn.execute(sql, params).fetchall()
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    return conn, transaction


def _postgres(dsn: str) -> tuple[Any, TransactionFactory]:
    import psycopg

    conn = psycopg.connect(dsn, autocommit=True)

    @contextmanager
    def transaction() -> Iterator[Callable[..., list[Any]]]:
        with conn.transaction():

            def execute(sql: str, params: Any = ()) -> list[Any]:
                cur = conn.execute(sql, params)
                return cur.fetchall() if cur.description else []

            yield execute

    return conn, transaction


STEPS = (
    Migration(1, "notes", ("CREATE TABLE notes (body TEXT)",)),
    Migration(2, "notes_ts", ("ALTER TABLE notes ADD COLUMN ts REAL",)),
)


def test_sqlite_applies_in_order_once_and_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    conn, tx = _sqlite(path)
    assert migrate(tx, SQLITE_TABLE, list(reversed(STEPS)), where=str(path)) == [1, 2]
    conn.execute("INSERT INTO notes (body, ts) VALUES ('x', 1.0)")
    conn.close()
    conn, tx = _sqlite(path)
    assert migrate(tx, SQLITE_TABLE, STEPS, where=str(path)) == []
    assert conn.execute("SELECT body, ts FROM notes").fetchall() == [("x", 1.0)]


def test_sqlite_failed_migration_leaves_no_applied_row_nor_partial_schema(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    conn, tx = _sqlite(path)
    broken = (
        *STEPS,
        Migration(3, "half", ("CREATE TABLE half (a TEXT)", "CREATE TABLE notes (dup TEXT)")),
    )
    with pytest.raises(MigrationError, match=r"Migration 3 \('half'\) failed"):
        migrate(tx, SQLITE_TABLE, broken, where=str(path))
    versions = [r[0] for r in conn.execute("SELECT version FROM t_migrations ORDER BY version")]
    assert versions == [1, 2]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "half" not in tables


def test_sqlite_refuses_a_file_from_a_newer_release(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    _conn, tx = _sqlite(path)
    migrate(tx, SQLITE_TABLE, (*STEPS, Migration(3, "future", ("SELECT 1",))), where="f.db")
    with pytest.raises(MigrationError, match=r"newer release.*\[3\].*knows up to 2"):
        migrate(tx, SQLITE_TABLE, STEPS, where="f.db")


def test_postgres_same_runner_and_concurrent_starts_apply_once(pg_dsn: str) -> None:
    errors: list[BaseException] = []
    results: list[list[int]] = []

    def start() -> None:
        conn, tx = _postgres(pg_dsn)
        try:
            results.append(migrate(tx, POSTGRES_TABLE, STEPS, where="pg"))
        except BaseException as exc:
            errors.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(v for r in results for v in r) == [1, 2]  # each applied exactly once
    conn, tx = _postgres(pg_dsn)
    with tx() as execute:
        execute(POSTGRES_TABLE.insert_applied, (9, "future", 0.0))
    with pytest.raises(MigrationError, match="newer release"):
        migrate(tx, POSTGRES_TABLE, STEPS, where="pg")
    conn.close()
