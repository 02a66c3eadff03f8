"""Copy threads from LangGraph's official savers into langgraph-memory's tables.

An app that switches from ``langgraph-checkpoint-sqlite`` or
``langgraph-checkpoint-postgres`` to our savers keeps its database: the
official tables (``checkpoints``, ``writes`` / ``checkpoint_blobs``,
``checkpoint_writes``) stay where they are, untouched, and this module copies
every thread, checkpoint (ids, parents, metadata, timestamps: so history,
forks and ``DeltaChannel`` replay carry over) and pending write (interrupts,
errors, sends) into our ``lgm_`` tables, by default in the same database.

* **Idempotent**: checkpoints and writes keep their ids, so copying one twice
  stores it once.
* **Resumable**: each thread is recorded in ``lgm_migration_progress`` when it
  is done; a second run skips finished threads and redoes an interrupted one.
* **Safe**: a thread that already has checkpoints of ours that the migration
  did not write (the app ran on our saver first) is skipped and reported,
  never merged. The source is opened read-only.

From the shell: ``langgraph-memory migrate checkpoints.sqlite`` (or a DSN).

Example:
    >>> import tempfile, os
    >>> from langgraph.checkpoint.sqlite import SqliteSaver as OfficialSaver
    >>> from langgraph.graph import START, StateGraph
    >>> from typing_extensions import TypedDict
    >>> class S(TypedDict):
    ...     n: int
    >>> builder = StateGraph(S)
    >>> _ = builder.add_node("inc", lambda s: {"n": s["n"] + 1})
    >>> _ = builder.add_edge(START, "inc")
    >>> path = os.path.join(tempfile.mkdtemp(), "app.sqlite")
    >>> with OfficialSaver.from_conn_string(path) as official:
    ...     _ = builder.compile(checkpointer=official).invoke(
    ...         {"n": 1}, {"configurable": {"thread_id": "t1"}})
    >>> report = migrate_official(path, progress=False)
    >>> report.threads_copied, report.checkpoints
    (1, 3)
    >>> from langgraph_memory import SqliteSaver
    >>> with SqliteSaver.from_conn_string(path) as ours:
    ...     builder.compile(checkpointer=ours).get_state(
    ...         {"configurable": {"thread_id": "t1"}}).values
    {'n': 2}
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import WRITES_IDX_MAP, BaseCheckpointSaver, CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from langgraph_memory._extras import require_extra
from langgraph_memory.errors import ThreadDeletedError
from langgraph_memory.migrate._sources import RawWrite, is_postgres_dsn, open_source
from langgraph_memory.migrate._warning import (
    MIGRATE_COMMAND,
    OFFICIAL_POSTGRES_TABLES,
    OFFICIAL_SQLITE_TABLES,
    unmigrated_warning,
)

logger = logging.getLogger(__name__)

__all__ = [
    "MIGRATE_COMMAND",
    "OFFICIAL_POSTGRES_TABLES",
    "OFFICIAL_SQLITE_TABLES",
    "MigrationReport",
    "RawWrite",
    "copy_thread",
    "is_postgres_dsn",
    "migrate_official",
    "parents_first",
    "unmigrated_warning",
]

# The progress table lives beside our tables in the target database. Its own
# statements, not a schema migration: only this tool reads or writes it.
_PROGRESS_SQL = {
    "sqlite": (
        "CREATE TABLE IF NOT EXISTS lgm_migration_progress (source TEXT NOT NULL, "
        "thread_id TEXT NOT NULL, checkpoints INTEGER NOT NULL, writes INTEGER NOT NULL, "
        "finished_at REAL, PRIMARY KEY (source, thread_id))",
        "SELECT thread_id, finished_at FROM lgm_migration_progress WHERE source = ?",
        "INSERT INTO lgm_migration_progress VALUES (?, ?, 0, 0, NULL) "
        "ON CONFLICT (source, thread_id) DO NOTHING",
        "UPDATE lgm_migration_progress SET checkpoints = ?, writes = ?, finished_at = ? "
        "WHERE source = ? AND thread_id = ?",
    ),
    "postgres": (
        "CREATE TABLE IF NOT EXISTS lgm_migration_progress (source TEXT NOT NULL, "
        "thread_id TEXT NOT NULL, checkpoints INTEGER NOT NULL, writes INTEGER NOT NULL, "
        "finished_at DOUBLE PRECISION, PRIMARY KEY (source, thread_id))",
        "SELECT thread_id, finished_at FROM lgm_migration_progress WHERE source = %s",
        "INSERT INTO lgm_migration_progress VALUES (%s, %s, 0, 0, NULL) "
        "ON CONFLICT (source, thread_id) DO NOTHING",
        "UPDATE lgm_migration_progress SET checkpoints = %s, writes = %s, finished_at = %s "
        "WHERE source = %s AND thread_id = %s",
    ),
}


@dataclass(slots=True)
class MigrationReport:
    """What one ``migrate_official`` run did."""

    source: str
    target: str
    threads_seen: int = 0
    threads_copied: int = 0
    # Finished by an earlier run.
    threads_already_done: int = 0
    # Had checkpoints of ours the migration did not write, or were deleted in ours.
    threads_skipped: list[str] = field(default_factory=list)
    checkpoints: int = 0
    writes: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "threads_seen": self.threads_seen,
            "threads_copied": self.threads_copied,
            "threads_already_done": self.threads_already_done,
            "threads_skipped": list(self.threads_skipped),
            "checkpoints": self.checkpoints,
            "writes": self.writes,
            "seconds": round(self.seconds, 3),
        }


def migrate_official(
    source: str | os.PathLike[str],
    target: str | os.PathLike[str] | None = None,
    *,
    serde: SerializerProtocol | None = None,
    progress: bool = True,
    on_thread: Callable[[str], None] | None = None,
) -> MigrationReport:
    """Copy every thread of an official saver's database into our tables.

    Args:
        source: The official database: a SQLite path or a Postgres DSN.
        target: Where our tables live; default: the same database.
        serde: The serializer the app used (default LangGraph's
            ``JsonPlusSerializer``, as in both official savers); used to read
            and to write.
        progress: Show a tqdm progress bar (one tick per thread) on stderr.
        on_thread: Called with each thread id once it is copied.

    Returns:
        A :class:`MigrationReport`.

    Raises:
        ConfigurationError: ``source`` holds no official tables, or the
            official package needed to read them is not installed.
        DatabaseConnectionError: a file or server cannot be opened.
    """
    started = time.monotonic()
    source_text = os.fspath(source)
    target_text = source_text if target is None else os.fspath(target)
    serde = serde or JsonPlusSerializer()
    with (
        open_source(source_text, serde) as src,
        _open_target(target_text, serde) as (
            saver,
            progress_db,
        ),
    ):
        report = MigrationReport(source=src.label, target=_label(target_text))
        threads = src.thread_ids()
        report.threads_seen = len(threads)
        done, started_before = progress_db.load(src.label)
        bar = _progress_bar(len(threads), progress)
        try:
            for thread_id in threads:
                if thread_id in done:
                    report.threads_already_done += 1
                elif thread_id not in started_before and _has_own_checkpoints(saver, thread_id):
                    logger.warning(
                        "migrate: thread %r already has langgraph-memory checkpoints; skipped "
                        "(delete it in langgraph-memory first to copy the official one)",
                        thread_id,
                    )
                    report.threads_skipped.append(thread_id)
                else:
                    progress_db.start(src.label, thread_id)
                    try:
                        copied = copy_thread(
                            saver, src.checkpoints(thread_id), src.writes(thread_id)
                        )
                    except ThreadDeletedError:
                        logger.warning(
                            "migrate: thread %r was deleted in langgraph-memory; skipped", thread_id
                        )
                        report.threads_skipped.append(thread_id)
                    else:
                        progress_db.finish(src.label, thread_id, *copied)
                        report.threads_copied += 1
                        report.checkpoints += copied[0]
                        report.writes += copied[1]
                        if on_thread is not None:
                            on_thread(thread_id)
                bar.update(1)
        finally:
            bar.close()
    report.seconds = time.monotonic() - started
    return report


def copy_thread(
    saver: BaseCheckpointSaver[Any],
    checkpoints: Sequence[CheckpointTuple],
    writes: Sequence[RawWrite],
) -> tuple[int, int]:
    """Put one thread's checkpoints (parents first) and pending writes into
    ``saver``; returns ``(checkpoints, writes)`` stored."""
    by_checkpoint: dict[tuple[str, str], list[RawWrite]] = defaultdict(list)
    for write in writes:
        by_checkpoint[(write.checkpoint_ns, write.checkpoint_id)].append(write)
    stored_writes = 0
    ordered = parents_first(checkpoints)
    for tup in ordered:
        configurable = tup.config["configurable"]
        ns = configurable.get("checkpoint_ns", "")
        put_config: RunnableConfig = {
            "configurable": {"thread_id": configurable["thread_id"], "checkpoint_ns": ns}
        }
        if tup.parent_config is not None:
            parent_id = tup.parent_config["configurable"].get("checkpoint_id")
            if parent_id:
                put_config["configurable"]["checkpoint_id"] = parent_id
        checkpoint = tup.checkpoint
        saver.put(put_config, checkpoint, tup.metadata, dict(checkpoint["channel_versions"]))
        write_config: RunnableConfig = {
            "configurable": {
                "thread_id": configurable["thread_id"],
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint["id"],
            }
        }
        for (task_id, task_path), group in _task_groups(
            by_checkpoint.pop((ns, checkpoint["id"]), [])
        ):
            saver.put_writes(
                write_config, [(w.channel, w.value) for w in group], task_id, task_path
            )
            stored_writes += len(group)
    # Writes whose checkpoint the official saver no longer has are not copied:
    # nothing could read them there either.
    return len(ordered), stored_writes


def parents_first(checkpoints: Sequence[CheckpointTuple]) -> list[CheckpointTuple]:
    """Checkpoints ordered so each comes after its parent (by id otherwise).

    Ids sort by time only within one process, so id order alone may put a
    child before its parent; the put of a list delta needs the parent first.
    """
    by_key = {
        (t.config["configurable"].get("checkpoint_ns", ""), t.checkpoint["id"]): t
        for t in checkpoints
    }
    ordered: list[CheckpointTuple] = []
    placed: set[tuple[str, str]] = set()
    for key in sorted(by_key):
        chain: list[tuple[str, str]] = []
        current: tuple[str, str] | None = key
        while current is not None and current in by_key and current not in placed:
            if current in chain:  # a loop (official INSERT OR REPLACE can make one)
                break
            chain.append(current)
            parent = by_key[current].parent_config
            parent_id = parent["configurable"].get("checkpoint_id") if parent else None
            current = (current[0], parent_id) if parent_id else None
        for item in reversed(chain):
            placed.add(item)
            ordered.append(by_key[item])
    return ordered


def _task_groups(writes: list[RawWrite]) -> Iterator[tuple[tuple[str, str], list[RawWrite]]]:
    """One ``put_writes`` call per task and kind: LangGraph stores a task's
    regular writes (idx 0..n-1) and its special ones (errors, interrupts:
    fixed negative idx) in separate calls, and ``put_writes`` numbers them the
    same way again."""
    groups: dict[tuple[str, str, bool], list[RawWrite]] = defaultdict(list)
    for write in sorted(writes, key=lambda w: (w.task_id, w.task_path, w.idx)):
        special = write.channel in WRITES_IDX_MAP
        groups[(write.task_id, write.task_path, special)].append(write)
    for (task_id, task_path, special), group in groups.items():
        if special:  # one call per special write: each keeps its own fixed idx
            for write in group:
                yield (task_id, task_path), [write]
        else:
            yield (task_id, task_path), sorted(group, key=lambda w: w.idx)


def _has_own_checkpoints(saver: BaseCheckpointSaver[Any], thread_id: str) -> bool:
    return (
        next(iter(saver.list({"configurable": {"thread_id": thread_id}}, limit=1)), None)
        is not None
    )


def _label(location: str) -> str:
    if is_postgres_dsn(location):
        from langgraph_memory.session._pg_connections import describe_dsn

        return describe_dsn(location)
    return location


class _ProgressTable:
    def __init__(
        self, execute: Callable[[str, Sequence[Any]], list[tuple[Any, ...]]], dialect: str
    ):
        self._execute = execute
        self._sql = _PROGRESS_SQL[dialect]
        execute(self._sql[0], ())

    def load(self, source: str) -> tuple[set[str], set[str]]:
        """(finished threads, threads started but not finished) of ``source``."""
        rows = self._execute(self._sql[1], (source,))
        return {r[0] for r in rows if r[1] is not None}, {r[0] for r in rows if r[1] is None}

    def start(self, source: str, thread_id: str) -> None:
        self._execute(self._sql[2], (source, thread_id))

    def finish(self, source: str, thread_id: str, checkpoints: int, writes: int) -> None:
        self._execute(self._sql[3], (checkpoints, writes, time.time(), source, thread_id))


class _DropUnmigratedWarning(logging.Filter):
    """The migration is what the warning asks for: do not log it while migrating."""

    def filter(self, record: logging.LogRecord) -> bool:
        return MIGRATE_COMMAND not in record.getMessage()


@contextmanager
def _open_target(
    location: str, serde: SerializerProtocol
) -> Iterator[tuple[BaseCheckpointSaver[Any], _ProgressTable]]:
    setup_logger = logging.getLogger("langgraph_memory.session.setup")
    quiet = _DropUnmigratedWarning()
    setup_logger.addFilter(quiet)
    try:
        with _open_target_quietly(location, serde) as opened:
            setup_logger.removeFilter(quiet)
            yield opened
    finally:
        setup_logger.removeFilter(quiet)


@contextmanager
def _open_target_quietly(
    location: str, serde: SerializerProtocol
) -> Iterator[tuple[BaseCheckpointSaver[Any], _ProgressTable]]:
    """Our saver on ``location`` (no retention: every checkpoint is copied) and
    the progress table beside it."""
    if is_postgres_dsn(location):
        require_extra("postgres", feature="migrate to a Postgres database")
        import psycopg

        from langgraph_memory.session.postgres import PostgresSaver

        with (
            PostgresSaver.from_conn_string(
                location, pool_size=2, min_pool_size=1, serde=serde
            ) as pg_saver,
            psycopg.connect(location, autocommit=True) as pg_conn,
        ):

            def run_pg(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
                cur = pg_conn.execute(sql, params)
                return list(cur.fetchall()) if cur.description else []

            yield pg_saver, _ProgressTable(run_pg, "postgres")
        return
    from langgraph_memory.session.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(location, serde=serde) as saver:
        conn = sqlite3.connect(location, isolation_level=None, timeout=30)
        try:

            def run_sqlite(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
                return list(conn.execute(sql, params).fetchall())

            yield saver, _ProgressTable(run_sqlite, "sqlite")
        finally:
            conn.close()


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(total: int, enabled: bool) -> Any:
    if not enabled:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, unit="thread", desc="migrate", leave=True)
