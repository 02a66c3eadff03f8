"""Reading a database written by LangGraph's official savers.

Checkpoints are read through the official saver classes themselves
(``langgraph-checkpoint-sqlite`` / ``-postgres``), so every on-disk format
they ever wrote (inline values, ``checkpoint_blobs``, ``DeltaChannel``
sentinels) decodes exactly as it would in the app. Pending writes are read
from their tables directly, because the official ``list()`` drops each
write's ``task_path`` and ``idx``, which ``DeltaChannel`` replay orders by.

Nothing here writes: the SQLite file is opened read-only, and the official
savers' ``setup()`` (which would create or alter tables) is never called.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_memory._extras import require_extra
from langgraph_memory.errors import ConfigurationError, DatabaseConnectionError
from langgraph_memory.migrate._warning import OFFICIAL_POSTGRES_TABLES, OFFICIAL_SQLITE_TABLES


def is_postgres_dsn(location: str) -> bool:
    """Whether ``location`` names a Postgres server rather than a SQLite file."""
    text = location.strip()
    return text.startswith(("postgres://", "postgresql://")) or (
        "=" in text and any(key in text for key in ("host=", "dbname=", "user="))
    )


@dataclass(frozen=True, slots=True)
class RawWrite:
    """One row of the official writes table, its value decoded."""

    checkpoint_ns: str
    checkpoint_id: str
    task_id: str
    task_path: str
    idx: int
    channel: str
    value: Any


def _decode_writes(rows: Sequence[Sequence[Any]], serde: SerializerProtocol) -> list[RawWrite]:
    return [
        RawWrite(
            checkpoint_ns=ns,
            checkpoint_id=cid,
            task_id=task_id,
            task_path=task_path or "",
            idx=int(idx),
            channel=channel,
            value=serde.loads_typed((type_, bytes(value) if value is not None else b"")),
        )
        for ns, cid, task_id, task_path, idx, channel, type_, value in rows
    ]


class _Source:
    """What both dialects share; each names its writes table, value column and
    parameter mark, and runs a query (``_rows``)."""

    label: str
    _saver: BaseCheckpointSaver[Any]
    _serde: SerializerProtocol
    _task_path: str
    _writes_table: str
    _value_column: str
    _mark: str

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def thread_ids(self) -> list[str]:
        rows = self._rows(
            f"SELECT thread_id FROM checkpoints UNION SELECT thread_id FROM {self._writes_table} "
            "ORDER BY 1"
        )
        return [str(r[0]) for r in rows]

    def checkpoints(self, thread_id: str) -> list[CheckpointTuple]:
        return list(self._saver.list({"configurable": {"thread_id": thread_id}}))

    def writes(self, thread_id: str) -> list[RawWrite]:
        rows = self._rows(
            f"SELECT checkpoint_ns, checkpoint_id, task_id, {self._task_path}, idx, channel, "
            f"type, {self._value_column} FROM {self._writes_table} WHERE thread_id = {self._mark} "
            "ORDER BY checkpoint_ns, checkpoint_id, task_id, idx",
            (thread_id,),
        )
        return _decode_writes(rows, self._serde)


class SqliteSource(_Source):
    """A SQLite file written by ``langgraph.checkpoint.sqlite`` (sync or async)."""

    _writes_table, _value_column, _mark = "writes", "value", "?"

    def __init__(self, path: str, serde: SerializerProtocol) -> None:
        from langgraph.checkpoint.sqlite import SqliteSaver as OfficialSqliteSaver

        self.label = path
        self._serde = serde
        self._conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        names = {r[0] for r in self._conn.execute("SELECT name FROM sqlite_master")}
        missing = [t for t in OFFICIAL_SQLITE_TABLES if t not in names]
        if missing:
            self._conn.close()
            raise ConfigurationError(
                f"{path!r} holds no official LangGraph checkpoints (no {', '.join(missing)} "
                "table); point migrate at the file your app's langgraph-checkpoint-sqlite "
                "SqliteSaver/AsyncSqliteSaver used."
            )
        columns = {r[1] for r in self._conn.execute("PRAGMA table_info(writes)")}
        self._task_path = "task_path" if "task_path" in columns else "''"
        self._saver = OfficialSqliteSaver(self._conn, serde=serde)
        self._saver.is_setup = True  # never run its setup(): it may alter tables
        self._saver._has_task_path = "task_path" in columns

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return list(self._conn.execute(sql, params).fetchall())

    def close(self) -> None:
        self._conn.close()


class PostgresSource(_Source):
    """A Postgres database written by ``langgraph.checkpoint.postgres`` (sync or async)."""

    _writes_table, _value_column, _mark = "checkpoint_writes", "blob", "%s"

    def __init__(self, dsn: str, serde: SerializerProtocol) -> None:
        require_extra("postgres", feature="migrate from a Postgres database")
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver as OfficialPostgresSaver
        from psycopg.rows import dict_row

        from langgraph_memory.session import _pg_connections as PG

        self.label = PG.describe_dsn(dsn)
        self._serde = serde
        try:
            self._conn = psycopg.connect(
                dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row, connect_timeout=10
            )
        except psycopg.Error as exc:
            raise PG.connect_error(exc, dsn) from None
        found = {
            r["table_name"]
            for r in self._conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema()"
            )
        }
        missing = [t for t in OFFICIAL_POSTGRES_TABLES if t not in found]
        if missing:
            self._conn.close()
            raise ConfigurationError(
                f"{self.label} holds no official LangGraph checkpoints (no "
                f"{', '.join(missing)} table); point migrate at the database your app's "
                "langgraph-checkpoint-postgres PostgresSaver used."
            )
        columns = {
            r["column_name"]
            for r in self._conn.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND table_name = 'checkpoint_writes'"
            )
        }
        self._task_path = "task_path" if "task_path" in columns else "''"
        self._saver = OfficialPostgresSaver(self._conn, serde=serde)

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        from psycopg.rows import tuple_row

        return list(self._conn.cursor(row_factory=tuple_row).execute(sql, params).fetchall())

    def close(self) -> None:
        self._conn.close()


@contextmanager
def open_source(
    location: str, serde: SerializerProtocol
) -> Iterator[SqliteSource | PostgresSource]:
    """The official database at ``location`` (a SQLite path or a Postgres DSN)."""
    source: SqliteSource | PostgresSource
    if is_postgres_dsn(location):
        source = _needs_official("postgres", lambda: PostgresSource(location, serde))
    else:
        if not os.path.isfile(location):
            raise DatabaseConnectionError(
                f"no SQLite file at {location!r}; pass the path your app gave "
                "langgraph-checkpoint-sqlite's SqliteSaver.from_conn_string."
            )
        source = _needs_official("sqlite", lambda: SqliteSource(location, serde))
    try:
        yield source
    finally:
        source.close()


def _needs_official(kind: str, build: Any) -> Any:
    try:
        return build()
    except ModuleNotFoundError as exc:
        if "langgraph.checkpoint" not in str(exc):
            raise
        raise ConfigurationError(
            f"reading the official {kind} saver's tables needs its package; "
            f"pip install langgraph-checkpoint-{kind} (your app already had it)."
        ) from exc
