"""One schema-migrations runner for every SQLite and Postgres file we own.

A :class:`Migration` is a version, a name and its statements. :func:`migrate`
applies the pending ones in version order, each in its own transaction together
with its "applied" row, so a crash leaves every migration either fully applied
and recorded or not at all. A database already migrated by a newer release
(a recorded version this code does not know) is refused with
:class:`~langgraph_memory.errors.MigrationError` before anything is touched:
an older release writing into a newer schema could corrupt it silently.

Dialects differ only in their bookkeeping statements (:class:`MigrationTable`):
the table, how to read and record versions, and an optional lock statement run
first in every migration transaction (Postgres: an advisory lock, so two app
instances starting at once apply each migration exactly once).

The rules are written once, as transactions that yield their statements as data
(:func:`migration_transactions`); :func:`migrate` runs them on a synchronous
``transaction()``, and the session savers run the same transactions through
their own sync and async shells (``session/_shell.py``).

Example:
    >>> import sqlite3
    >>> from contextlib import contextmanager
    >>> conn = sqlite3.connect(":memory:", isolation_level=None)
    >>> @contextmanager
    ... def transaction():
    ...     conn.execute("BEGIN IMMEDIATE")
    ...     try:
    ...         yield lambda sql, params=(): conn.execute(sql, params).fetchall()
    ...     except BaseException:
    ...         conn.execute("ROLLBACK")
    ...         raise
    ...     conn.execute("COMMIT")
    >>> table = MigrationTable(
    ...     create="CREATE TABLE IF NOT EXISTS m (version INTEGER PRIMARY KEY, name, ts)",
    ...     select_applied="SELECT version FROM m",
    ...     insert_applied="INSERT INTO m (version, name, ts) VALUES (?, ?, ?)",
    ... )
    >>> steps = [Migration(1, "notes", ("CREATE TABLE notes (body TEXT)",))]
    >>> migrate(transaction, table, steps, where="demo")
    [1]
    >>> migrate(transaction, table, steps, where="demo")
    []
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from langgraph_memory.errors import MigrationError

# ``execute(sql, params) -> rows`` inside one open transaction.
Execute = Callable[..., list[Any]]
Transaction = Callable[[], AbstractContextManager[Execute]]


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: ``version`` (1, 2, ...), a ``name`` for messages, its statements."""

    version: int
    name: str
    statements: tuple[str, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.version, int) or self.version < 1:
            raise ValueError(f"Migration version={self.version!r}; use an integer >= 1.")


@dataclass(frozen=True, slots=True)
class MigrationTable:
    """A dialect's bookkeeping statements.

    ``insert_applied`` receives ``(version, name, applied_ts)`` (SQLite may bind
    a subset with ``?2``-style numbers); ``select_applied`` returns one row per
    applied version, version first.
    """

    create: str
    select_applied: str
    insert_applied: str
    lock: str | None = None
    # The "applied" row's timestamp (the session savers keep ISO-8601 text).
    stamp: Callable[[], Any] = field(default=time.time)


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement of a migration transaction; with ``rows`` the runner sends
    back its rows, otherwise an empty list."""

    sql: str
    params: tuple[Any, ...] = ()
    rows: bool = False


# A transaction as data: yields statements, receives their rows, returns a result.
Steps = Generator[Statement, list[Any], Any]


def _refuse_newer(applied: set[int], known: Sequence[Migration], where: str) -> None:
    newest = max((m.version for m in known), default=0)
    unknown = sorted(v for v in applied if v > newest)
    if unknown:
        raise MigrationError(
            f"{where} was migrated by a newer release of langgraph-memory (schema versions "
            f"{unknown}, this release knows up to {newest}); upgrade langgraph-memory, or "
            "point this release at another database."
        )


def _applied_steps(table: MigrationTable) -> Generator[Statement, list[Any], set[int]]:
    rows = yield Statement(table.select_applied, rows=True)
    return {int(row[0]) for row in rows}


def _bookkeeping_txn(
    table: MigrationTable, known: Sequence[Migration], where: str
) -> Generator[Statement, list[Any], set[int]]:
    """The first transaction: the bookkeeping table, then a newer release's database
    is refused before anything is touched. Returns the applied versions."""
    if table.lock:
        yield Statement(table.lock, rows=True)
    yield Statement(table.create)
    applied = yield from _applied_steps(table)
    _refuse_newer(applied, known, where)
    return applied


def _migration_txn(
    table: MigrationTable, migration: Migration, known: Sequence[Migration], where: str
) -> Generator[Statement, list[Any], bool]:
    """One migration and its "applied" row; ``False`` when it was applied already
    (by this database's history, or by another instance while we waited for the lock)."""
    try:
        if table.lock:
            yield Statement(table.lock, rows=True)
        applied = yield from _applied_steps(table)
        _refuse_newer(applied, known, where)
        if migration.version in applied:
            return False
        for statement in migration.statements:
            yield Statement(statement)
        yield Statement(table.insert_applied, (migration.version, migration.name, table.stamp()))
        return True
    except MigrationError:
        raise
    except Exception as exc:  # thrown in by the runner: a statement failed
        raise _failed(migration, where, exc) from exc


def _failed(migration: Migration, where: str, exc: BaseException) -> MigrationError:
    return MigrationError(
        f"Migration {migration.version} ({migration.name!r}) failed on {where}: {exc}. "
        "The database may be damaged or changed by hand; restore a backup or use a "
        "new database."
    )


def migration_transactions(
    table: MigrationTable, migrations: Sequence[Migration], *, where: str
) -> list[Callable[[], Steps]]:
    """Every transaction of a migration run, in order: the bookkeeping one, then one
    per migration (each returns whether it applied its migration). Run each in its
    own transaction; see :func:`run_steps` for how a runner answers a statement."""
    ordered = sorted(migrations, key=lambda m: m.version)
    if len({m.version for m in ordered}) != len(ordered):
        raise ValueError(f"Duplicate migration versions in {[m.version for m in ordered]}.")
    return [
        partial(_bookkeeping_txn, table, ordered, where),
        *(partial(_migration_txn, table, m, ordered, where) for m in ordered),
    ]


def run_steps(steps: Steps, execute: Execute) -> Any:
    """Run one transaction's statements with ``execute(sql, params) -> rows``; a
    failing statement is thrown back into the transaction (which names its migration)."""
    try:
        statement = next(steps)
        while True:
            try:
                rows = execute(statement.sql, statement.params)
            except Exception as exc:
                statement = steps.throw(exc)
                continue
            statement = steps.send(list(rows or []) if statement.rows else [])
    except StopIteration as stop:
        return stop.value


def migrate(
    transaction: Transaction,
    table: MigrationTable,
    migrations: Sequence[Migration],
    *,
    where: str,
) -> list[int]:
    """Apply every pending migration in version order; returns the versions applied.

    Args:
        transaction: Opens one transaction and yields its ``execute(sql, params=())``
            returning rows; commits on exit, rolls back on error.
        table: The dialect's bookkeeping statements.
        migrations: Every migration this release knows (any order, unique versions).
        where: What the database is, for messages (a path or a redacted DSN).

    Raises:
        MigrationError: the database is from a newer release, or a statement failed
            (the failed migration is rolled back; earlier ones stay applied).
    """
    first, *each = migration_transactions(table, migrations, where=where)
    with transaction() as execute:
        applied: set[int] = run_steps(first(), execute)
    ordered = sorted(migrations, key=lambda m: m.version)
    done: list[int] = []
    for migration, txn in zip(ordered, each, strict=True):
        if migration.version in applied:
            continue  # an applied migration never becomes unapplied: no transaction
        try:
            with transaction() as execute:
                if run_steps(txn(), execute):
                    done.append(migration.version)
        except MigrationError:
            raise
        except Exception as exc:  # the commit itself failed
            raise _failed(migration, where, exc) from exc
    return done
