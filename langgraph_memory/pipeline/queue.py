"""A durable job queue for memory writing, in the same database as the checkpoints.

Extraction and reconciliation run off the reply path: ``MemoryWriter.submit``
only inserts a row here; a worker picks jobs up later. The queue lives in its
own tables (``lgm_memory_*``) created by an idempotent migration on its own
connection, so it never touches the checkpointer's tables. Two backends share
one core: ``SqliteMemoryQueue`` (the checkpoints' SQLite file) and
``PostgresMemoryQueue`` (the checkpoints' Postgres database).

What it guarantees:

- **idempotent**: a message (user, thread, message id) is queued at most once,
  ever; a job's key is its thread plus its message ids (unique);
- **debounced per thread**: messages of a thread arriving while its newest job
  still waits (``debounce_seconds``, at most ``max_debounce_seconds`` since the
  job was created) join that job instead of making a new one;
- **ordered per user**: a user's jobs run one at a time, oldest first, so "budget
  3000" is never applied after "budget 5000";
- **retried with backoff**: a failed job waits ``backoff_base * 2**(attempt-1)``
  seconds (capped) and is retried up to ``max_attempts`` times, then ``failed``;
- **survives a restart**: a job runs under a lease; a job whose worker died is
  picked up again when the lease expires. Each stage (candidates, plan, each
  applied op) is saved under the lease, so a re-run resumes where the dead
  worker stopped and applies nothing twice;
- **inspectable**: ``pending()``, ``failed()``, ``stats()``, ``audit()``.

Where it lives: this module holds the public classes (``MemoryQueue`` put
together from its parts, and its two backends); ``_queue_records.py`` the
records and pure helpers (``Job``, ``JobInfo``, ``AuditEntry``, job keys and
ids, backoff); ``_queue_base.py`` settings, connections, transactions and
setup; ``_queue_jobs.py`` a job's life (enqueue, claim, save, finish);
``_queue_admin.py`` the audit log, inspection and erasure; ``_queue_sql.py``
every statement; ``_queue_sealing.py`` the payloads' encryption.

Example:
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "checkpoints.sqlite")
    >>> with SqliteMemoryQueue.from_conn_string(path) as queue:
    ...     queue.stats()["pending"]
    0
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langgraph_memory._extras import require_extra
from langgraph_memory._pg_erase import wait_for_older_snapshots
from langgraph_memory.errors import ConfigurationError, InvalidConnectionError
from langgraph_memory.pipeline import _queue_sql as queue_sql
from langgraph_memory.pipeline._queue_admin import QueueAdmin
from langgraph_memory.pipeline._queue_jobs import JobLifecycle
from langgraph_memory.pipeline._queue_records import AuditEntry, Job, JobInfo

# The module's public helpers, still importable from here (tests import backoff_seconds).
from langgraph_memory.pipeline._queue_records import backoff_seconds as backoff_seconds
from langgraph_memory.pipeline._queue_records import job_key_for as job_key_for
from langgraph_memory.pipeline._queue_records import new_job_id as new_job_id
from langgraph_memory.pipeline._queue_records import unanswered_key_for as unanswered_key_for

__all__ = [
    "AuditEntry",
    "Job",
    "JobInfo",
    "MemoryQueue",
    "PostgresMemoryQueue",
    "SqliteMemoryQueue",
]


# --- the dialect-independent core --------------------------------------------------------


class MemoryQueue(JobLifecycle, QueueAdmin):
    """The queue's logic, shared by the SQLite and Postgres backends.

    Subclasses provide connections (``_connect``), transactions (``_transaction``)
    and the few statements that differ; everything else happens here, in its
    parts: ``QueueBase`` (``_queue_base.py``: settings, connections, transactions,
    setup), ``JobLifecycle`` (``_queue_jobs.py``: enqueue, claim, save, finish) and
    ``QueueAdmin`` (``_queue_admin.py``: audit, inspection, erasure, key rotation).

    Args:
        debounce_seconds: How long a thread's newest job waits for more messages.
        max_debounce_seconds: Cap on how long coalescing may delay a job.
        lease_seconds: How long a worker owns a job without renewing; a job whose
            worker died is retried after this.
        max_attempts: Attempts before a job is marked ``failed``.
        backoff_base_seconds / backoff_max_seconds: Retry delays (doubling, capped).
        clock: Time source (seconds); injectable for tests.
        encryption: An :class:`~langgraph_memory.encryption.EncryptionKeys` (the
            savers' and the store's keyring): every payload that can hold what a
            user said (a job's turns, candidates, plan and last error) is sealed
            with AES-GCM, bound to its job, user and thread
            (``pipeline/_queue_sealing.py``). Clear and moved payloads fail closed;
            ``reencrypt()`` rotates keys. Ids, statuses and the audit log (ids and
            decisions only) stay in clear.

    Raises:
        ConfigurationError: A value is out of range, or ``encryption`` is not a keyring.
    """


# --- SQLite --------------------------------------------------------------------------------


class SqliteMemoryQueue(MemoryQueue):
    """The durable memory-writing queue on a SQLite file (the checkpoints' file).

    Args:
        path: The SQLite database file, typically the one your ``SqliteSaver``
            uses. ``":memory:"`` is refused: the queue must survive a restart.
        **settings: See ``MemoryQueue`` (debounce, lease, attempts, backoff, clock,
            encryption).

    Raises:
        ConfigurationError: A value is out of range or ``path`` is ``":memory:"``.
    """

    _migrations = queue_sql.SQLITE_MIGRATIONS
    _migration_table = queue_sql.SQLITE_MIGRATION_TABLE
    _select_queued_ids = queue_sql.SELECT_QUEUED_MESSAGE_IDS_SQLITE

    def __init__(self, path: str | Path, **settings: Any) -> None:
        if str(path) in ("", ":memory:") or str(path).startswith("file::memory:"):
            raise ConfigurationError(
                f"SqliteMemoryQueue(path={str(path)!r}): the queue must survive a restart; "
                "pass the path of a database file (the one your checkpointer uses)."
            )
        super().__init__(**settings)
        self.path = str(path)

    @classmethod
    @contextmanager
    def from_conn_string(cls, path: str | Path, **settings: Any) -> Iterator[SqliteMemoryQueue]:
        """A set-up queue on ``path``, closed on exit.

        Example:
            >>> import tempfile, os
            >>> with SqliteMemoryQueue.from_conn_string(os.path.join(tempfile.mkdtemp(), "db")) as q:
            ...     q.pending()
            []
        """
        queue = cls(path, **settings)
        try:
            queue.setup()
            yield queue
        finally:
            queue.close()

    def _describe(self) -> str:
        return f"SqliteMemoryQueue({self.path!r})"

    def _connect(self) -> sqlite3.Connection:
        # Autocommit so that transactions are explicit; 30 s busy timeout because the
        # checkpointer writes to the same file.
        conn = sqlite3.connect(
            self.path,
            timeout=30.0,
            isolation_level=None,
            check_same_thread=False,
            uri=self.path.startswith("file:"),
        )
        conn.execute("PRAGMA busy_timeout = 30000")
        conn.execute("PRAGMA journal_mode = WAL")
        # Per connection: rows this connection deletes or shrinks (a finished job's
        # turns, forget_user) are zeroed in the file, as the savers' are.
        conn.execute("PRAGMA secure_delete = ON")
        return conn

    def _after_erase(self) -> None:
        self._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @contextmanager
    def _transaction(self, conn: sqlite3.Connection) -> Iterator[None]:
        # IMMEDIATE takes the write lock up front: no read-to-write upgrade deadlock.
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")

    def _ids_param(self, ids: Sequence[str]) -> Any:
        return json.dumps(list(ids))


# --- Postgres ------------------------------------------------------------------------------


class PostgresMemoryQueue(MemoryQueue):
    """The durable memory-writing queue in a Postgres database (the checkpoints' database).

    Several worker processes may share it: claims use ``FOR UPDATE SKIP LOCKED``
    and a user's jobs still run one at a time, oldest first.

    Args:
        conn_string: A libpq connection string / URL (``postgresql://...``).
        **settings: See ``MemoryQueue`` (debounce, lease, attempts, backoff, clock,
            encryption).

    Raises:
        InvalidConnectionError: ``conn_string`` is not a string.
        ConfigurationError: A setting is out of range.
    """

    _migrations = queue_sql.POSTGRES_MIGRATIONS
    _migration_table = queue_sql.POSTGRES_MIGRATION_TABLE
    _select_queued_ids = queue_sql.SELECT_QUEUED_MESSAGE_IDS_POSTGRES
    _select_claimable = queue_sql.SELECT_CLAIMABLE_POSTGRES
    _lock_thread = queue_sql.LOCK_THREAD_POSTGRES

    def __init__(self, conn_string: str, **settings: Any) -> None:
        if not isinstance(conn_string, str) or not conn_string.strip():
            raise InvalidConnectionError(
                f"PostgresMemoryQueue(conn_string={conn_string!r}): pass a connection string "
                "such as 'postgresql://user@host:5432/db'."
            )
        require_extra("postgres", feature="PostgresMemoryQueue")
        super().__init__(**settings)
        self.conn_string = conn_string

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string: str, **settings: Any) -> Iterator[PostgresMemoryQueue]:
        """A set-up queue on ``conn_string``, closed on exit."""
        queue = cls(conn_string, **settings)
        try:
            queue.setup()
            yield queue
        finally:
            queue.close()

    def _describe(self) -> str:
        # Never echo a password from the connection string.
        safe = re.sub(r"//([^:/@]+):[^@]*@", r"//\1:***@", self.conn_string)
        safe = re.sub(r"password=\S+", "password=***", safe)
        return f"PostgresMemoryQueue({safe!r})"

    def _connect(self) -> Any:
        import psycopg

        return psycopg.connect(self.conn_string, autocommit=True)

    def _transaction(self, conn: Any) -> Any:
        return conn.transaction()

    def _after_erase(self) -> None:
        # The connection is in autocommit, as VACUUM needs. Dead tuples would
        # otherwise keep the erased text until autovacuum and later page reuse.
        conn = self._conn()
        wait_for_older_snapshots(conn)  # else the rewrite keeps rows they can see
        conn.execute(queue_sql.VACUUM_FULL_POSTGRES)

    def _translate(self, sql: str) -> str:
        return _pg_sql(sql)


_PG_CACHE: dict[str, str] = {}


def _pg_sql(sql: str) -> str:
    cached = _PG_CACHE.get(sql)
    if cached is None:
        cached = _PG_CACHE[sql] = queue_sql.to_pyformat(sql)
    return cached
