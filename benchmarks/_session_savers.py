"""Every checkpointer the session benchmark measures, behind one small interface.

A :class:`SaverSpec` knows how to open its saver on a fresh location (a new SQLite
file, a new Postgres database, nothing for ``InMemorySaver``), whether it is
driven through ``graph.invoke`` (``mode="sync"``) or ``graph.ainvoke``
(``mode="async"``), and how many bytes its storage takes on disk.

Savers that cannot be imported (ours before they exist, Postgres without a
server) are reported as unavailable with the reason, never silently dropped.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import sqlite3
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Mode = Literal["sync", "async"]
Backend = Literal["memory", "sqlite", "postgres"]
Family = Literal["memory", "official", "ours"]

PG_ADMIN_DSN = os.environ.get(
    "LGM_BENCH_PG_DSN",
    os.environ.get("LGM_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres"),
)
# The official async Postgres saver is given the same pool size as ours for the
# "20 runs in flight" measurement (issue 3 measures it "with a pool of 10").
PG_POOL_SIZE = 10


@dataclass(frozen=True)
class SaverSpec:
    """One saver in one mode, e.g. ours ``SqliteSaver`` driven by ``graph.invoke``."""

    key: str
    label: str
    family: Family
    backend: Backend
    mode: Mode
    # location -> (async) context manager yielding a set-up saver
    opener: Callable[[str], Any]

    def open_sync(self, location: str) -> contextlib.AbstractContextManager[Any]:
        return self.opener(location)  # type: ignore[no-any-return]

    def open_async(self, location: str) -> contextlib.AbstractAsyncContextManager[Any]:
        return self.opener(location)  # type: ignore[no-any-return]


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


async def _async_setup(saver: Any) -> None:
    # Our async classes expose ``asetup()``; the official ones an async ``setup()``.
    if hasattr(saver, "asetup"):
        await _maybe_await(saver.asetup())
    else:
        await _maybe_await(saver.setup())


# ---------------------------------------------------------------- openers


@contextlib.contextmanager
def _open_memory(_location: str) -> Iterator[Any]:
    from langgraph.checkpoint.memory import InMemorySaver

    yield InMemorySaver()


@contextlib.asynccontextmanager
async def _aopen_memory(_location: str) -> AsyncIterator[Any]:
    from langgraph.checkpoint.memory import InMemorySaver

    yield InMemorySaver()


@contextlib.contextmanager
def _open_official_sqlite(path: str) -> Iterator[Any]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(path) as saver:
        saver.setup()
        yield saver


@contextlib.asynccontextmanager
async def _aopen_official_sqlite(path: str) -> AsyncIterator[Any]:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async with AsyncSqliteSaver.from_conn_string(path) as saver:
        await saver.setup()
        yield saver


@contextlib.contextmanager
def _open_ours_sqlite(path: str) -> Iterator[Any]:
    from langgraph_memory.session import SqliteSaver

    with SqliteSaver.from_conn_string(path) as saver:
        saver.setup()
        yield saver


@contextlib.asynccontextmanager
async def _aopen_ours_sqlite(path: str) -> AsyncIterator[Any]:
    from langgraph_memory.session import AsyncSqliteSaver

    async with AsyncSqliteSaver.from_conn_string(path) as saver:
        await _async_setup(saver)
        yield saver


@contextlib.contextmanager
def _open_official_postgres(dsn: str) -> Iterator[Any]:
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(dsn) as saver:
        saver.setup()
        yield saver


@contextlib.asynccontextmanager
async def _aopen_official_postgres(dsn: str) -> AsyncIterator[Any]:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg import AsyncConnection
    from psycopg.rows import DictRow, dict_row
    from psycopg_pool import AsyncConnectionPool

    # The documented way to give the official saver a pool: autocommit, no
    # prepared statements, dict rows.
    pool: AsyncConnectionPool[AsyncConnection[DictRow]] = AsyncConnectionPool(
        dsn,
        min_size=1,
        max_size=PG_POOL_SIZE,
        open=False,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
    )
    await pool.open(wait=True)
    try:
        saver = AsyncPostgresSaver(pool)
        await saver.setup()
        yield saver
    finally:
        await pool.close()


def _pool_kwargs(factory: Any) -> dict[str, Any]:
    """Pool options our ``from_conn_string`` accepts (names per the postgres helper)."""
    params = inspect.signature(factory).parameters
    for name in ("pool_size", "max_size", "pool_max_size", "max_pool_size"):
        if name in params:
            return {name: PG_POOL_SIZE}
    return {}


@contextlib.contextmanager
def _open_ours_postgres(dsn: str) -> Iterator[Any]:
    from langgraph_memory.session import PostgresSaver

    with PostgresSaver.from_conn_string(
        dsn, **_pool_kwargs(PostgresSaver.from_conn_string)
    ) as saver:
        saver.setup()
        yield saver


@contextlib.asynccontextmanager
async def _aopen_ours_postgres(dsn: str) -> AsyncIterator[Any]:
    from langgraph_memory.session import AsyncPostgresSaver

    async with AsyncPostgresSaver.from_conn_string(
        dsn, **_pool_kwargs(AsyncPostgresSaver.from_conn_string)
    ) as saver:
        await _async_setup(saver)
        yield saver


ALL_SPECS: tuple[SaverSpec, ...] = (
    SaverSpec("memory-sync", "InMemorySaver", "memory", "memory", "sync", _open_memory),
    SaverSpec("memory-async", "InMemorySaver", "memory", "memory", "async", _aopen_memory),
    SaverSpec(
        "official-sqlite-sync",
        "official SqliteSaver",
        "official",
        "sqlite",
        "sync",
        _open_official_sqlite,
    ),
    SaverSpec(
        "official-sqlite-async",
        "official AsyncSqliteSaver",
        "official",
        "sqlite",
        "async",
        _aopen_official_sqlite,
    ),
    SaverSpec("ours-sqlite-sync", "ours SqliteSaver", "ours", "sqlite", "sync", _open_ours_sqlite),
    SaverSpec(
        "ours-sqlite-async",
        "ours AsyncSqliteSaver",
        "ours",
        "sqlite",
        "async",
        _aopen_ours_sqlite,
    ),
    SaverSpec(
        "official-postgres-sync",
        "official PostgresSaver",
        "official",
        "postgres",
        "sync",
        _open_official_postgres,
    ),
    SaverSpec(
        "official-postgres-async",
        "official AsyncPostgresSaver (pool 10)",
        "official",
        "postgres",
        "async",
        _aopen_official_postgres,
    ),
    SaverSpec(
        "ours-postgres-sync",
        "ours PostgresSaver",
        "ours",
        "postgres",
        "sync",
        _open_ours_postgres,
    ),
    SaverSpec(
        "ours-postgres-async",
        "ours AsyncPostgresSaver",
        "ours",
        "postgres",
        "async",
        _aopen_ours_postgres,
    ),
)


def unavailable_reason(spec: SaverSpec) -> str | None:
    """Why ``spec`` cannot run here (missing class, no server), or None."""
    try:
        if spec.family == "ours":
            import langgraph_memory.session as ours

            wanted = {
                ("sqlite", "sync"): "SqliteSaver",
                ("sqlite", "async"): "AsyncSqliteSaver",
                ("postgres", "sync"): "PostgresSaver",
                ("postgres", "async"): "AsyncPostgresSaver",
            }[(spec.backend, spec.mode)]
            if not hasattr(ours, wanted):
                return f"langgraph_memory.session.{wanted} does not exist yet"
        if spec.backend == "postgres":
            import psycopg

            with psycopg.connect(PG_ADMIN_DSN, connect_timeout=3):
                pass
        if spec.family == "official":
            importlib.import_module(f"langgraph.checkpoint.{spec.backend}")
    except Exception as exc:  # any failure means "cannot run"; reported in the results
        return f"{type(exc).__name__}: {exc}"
    return None


# ---------------------------------------------------------------- locations and sizes


@contextlib.contextmanager
def fresh_location(backend: Backend) -> Iterator[str]:
    """A brand-new SQLite file path or Postgres database DSN, removed afterwards."""
    if backend == "memory":
        yield ""
    elif backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix="lgm-bench-") as tmp:
            yield str(Path(tmp) / "checkpoints.sqlite")
    else:
        import psycopg

        dbname = f"lgm_bench_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{dbname}"')
        base, _, _ = PG_ADMIN_DSN.rpartition("/")
        try:
            yield f"{base}/{dbname}"
        finally:
            with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')


_PG_SIZE_SQL = """
SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'm', 'p')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg_toast%'
"""


def disk_bytes(backend: Backend, location: str) -> int | None:
    """Bytes the saver's storage takes now.

    SQLite: main file + WAL after a ``wal_checkpoint(TRUNCATE)`` from a separate
    connection. Postgres: ``pg_total_relation_size`` (heap + TOAST + indexes) of every
    table in the saver's own fresh database. ``InMemorySaver``: None (not on disk).
    """
    if backend == "memory":
        return None
    if backend == "sqlite":
        path = Path(location)
        with contextlib.closing(sqlite3.connect(location, timeout=30)) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        total = 0
        for suffix in ("", "-wal"):
            part = Path(str(path) + suffix)
            if part.exists():
                total += part.stat().st_size
        return total
    import psycopg

    with psycopg.connect(location, autocommit=True) as conn:
        row = conn.execute(_PG_SIZE_SQL).fetchone()
    return int(row[0]) if row else 0
