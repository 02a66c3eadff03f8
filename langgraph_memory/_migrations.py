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
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
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


def _applied(execute: Execute, table: MigrationTable) -> set[int]:
    return {int(row[0]) for row in execute(table.select_applied)}


def _refuse_newer(applied: set[int], known: Sequence[Migration], where: str) -> None:
    newest = max((m.version for m in known), default=0)
    unknown = sorted(v for v in applied if v > newest)
    if unknown:
        raise MigrationError(
            f"{where} was migrated by a newer release of langgraph-memory (schema versions "
            f"{unknown}, this release knows up to {newest}); upgrade langgraph-memory, or "
            "point this release at another database."
        )


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
    ordered = sorted(migrations, key=lambda m: m.version)
    if len({m.version for m in ordered}) != len(ordered):
        raise ValueError(f"Duplicate migration versions in {[m.version for m in ordered]}.")
    with transaction() as execute:
        if table.lock:
            execute(table.lock)
        execute(table.create)
        applied = _applied(execute, table)
    _refuse_newer(applied, ordered, where)
    done: list[int] = []
    for migration in ordered:
        if migration.version in applied:
            continue
        try:
            with transaction() as execute:
                if table.lock:
                    execute(table.lock)
                    # Another instance may have applied it while we waited for the lock.
                    if migration.version in _applied(execute, table):
                        continue
                for statement in migration.statements:
                    execute(statement)
                execute(table.insert_applied, (migration.version, migration.name, time.time()))
        except MigrationError:
            raise
        except Exception as exc:
            raise MigrationError(
                f"Migration {migration.version} ({migration.name!r}) failed on {where}: {exc}. "
                "The database may be damaged or changed by hand; restore a backup or use a "
                "new database."
            ) from exc
        done.append(migration.version)
    return done
