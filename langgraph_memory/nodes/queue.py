"""A durable job queue for memory writing, in the same SQLite file as the checkpoints.

Extraction and reconciliation run off the reply path: ``MemoryWriter.submit``
only inserts a row here; a worker picks jobs up later. The queue lives in its
own tables (``lgm_memory_*``) created by an idempotent migration on its own
connection, so it never touches the checkpointer's tables.

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

Example:
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "checkpoints.sqlite")
    >>> with SqliteMemoryQueue.from_conn_string(path) as queue:
    ...     queue.stats()["pending"]
    0
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, messages_from_dict, messages_to_dict

from langgraph_memory.errors import ConfigurationError, JobLeaseLostError, MigrationError
from langgraph_memory.nodes.extract import message_ids_for
from langgraph_memory.nodes.reconcile import (
    candidate_from_dict,
    candidate_to_dict,
    op_from_dict,
    op_to_dict,
)
from langgraph_memory.types import CandidateMemory, MemoryOp

__all__ = ["AuditEntry", "Job", "JobInfo", "SqliteMemoryQueue"]

# --- SQL (SQLite dialect), as named constants --------------------------------------

CREATE_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS lgm_memory_queue_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at REAL NOT NULL
)"""

MIGRATIONS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (
        1,
        "memory jobs, queued message ids, audit log",
        (
            """CREATE TABLE lgm_memory_jobs (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                job_id TEXT NOT NULL UNIQUE,
                job_key TEXT NOT NULL UNIQUE,
                user_id TEXT NOT NULL,
                thread_id TEXT NOT NULL,
                status TEXT NOT NULL CHECK (status IN ('pending', 'leased', 'done', 'failed')),
                stage TEXT NOT NULL CHECK (stage IN ('new', 'extracted', 'planned')),
                messages TEXT NOT NULL,
                candidates TEXT,
                ops TEXT,
                applied_ops INTEGER NOT NULL DEFAULT 0,
                attempts INTEGER NOT NULL DEFAULT 0,
                last_error TEXT,
                not_before REAL NOT NULL,
                lease_owner TEXT,
                lease_expires_at REAL,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                finished_at REAL
            )""",
            "CREATE INDEX lgm_memory_jobs_ready ON lgm_memory_jobs (status, not_before)",
            "CREATE INDEX lgm_memory_jobs_user ON lgm_memory_jobs (user_id, seq)",
            "CREATE INDEX lgm_memory_jobs_thread ON lgm_memory_jobs (user_id, thread_id, seq)",
            """CREATE TABLE lgm_memory_job_messages (
                user_id TEXT NOT NULL,
                thread_id TEXT NOT NULL,
                message_id TEXT NOT NULL,
                job_id TEXT NOT NULL,
                PRIMARY KEY (user_id, thread_id, message_id)
            )""",
            """CREATE TABLE lgm_memory_audit (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                job_id TEXT,
                op_index INTEGER,
                user_id TEXT NOT NULL,
                thread_id TEXT,
                action TEXT NOT NULL,
                target_ids TEXT NOT NULL,
                result_id TEXT,
                reason TEXT NOT NULL,
                op TEXT NOT NULL,
                created_at REAL NOT NULL,
                UNIQUE (job_id, op_index)
            )""",
            "CREATE INDEX lgm_memory_audit_user ON lgm_memory_audit (user_id, seq)",
        ),
    ),
)

SELECT_APPLIED_VERSIONS = "SELECT version FROM lgm_memory_queue_migrations"
INSERT_MIGRATION = (
    "INSERT INTO lgm_memory_queue_migrations (version, name, applied_at) VALUES (?, ?, ?)"
)

SELECT_QUEUED_MESSAGE_IDS = """
SELECT message_id FROM lgm_memory_job_messages
WHERE user_id = ? AND thread_id = ? AND message_id IN ({placeholders})"""

SELECT_LATEST_THREAD_JOB = """
SELECT job_id, status, stage, attempts, messages, created_at, not_before FROM lgm_memory_jobs
WHERE user_id = ? AND thread_id = ? ORDER BY seq DESC LIMIT 1"""

INSERT_JOB = """
INSERT INTO lgm_memory_jobs
    (job_id, job_key, user_id, thread_id, status, stage, messages, not_before, created_at, updated_at)
VALUES (?, ?, ?, ?, 'pending', 'new', ?, ?, ?, ?)"""

COALESCE_JOB = """
UPDATE lgm_memory_jobs SET job_key = ?, messages = ?, not_before = ?, updated_at = ?
WHERE job_id = ? AND status = 'pending' AND stage = 'new'"""

INSERT_QUEUED_MESSAGE = """
INSERT OR IGNORE INTO lgm_memory_job_messages (user_id, thread_id, message_id, job_id)
VALUES (?, ?, ?, ?)"""

# The oldest ready job whose user has no older unfinished job: one job per user
# at a time, in submission order. A lease that expired counts as ready (its
# worker died or hung).
SELECT_CLAIMABLE = """
SELECT job_id, attempts, status FROM lgm_memory_jobs AS j
WHERE ((j.status = 'pending' AND j.not_before <= :now)
       OR (j.status = 'leased' AND j.lease_expires_at <= :now))
  AND NOT EXISTS (
      SELECT 1 FROM lgm_memory_jobs AS o
      WHERE o.user_id = j.user_id AND o.seq < j.seq AND o.status IN ('pending', 'leased'))
ORDER BY j.not_before, j.seq
LIMIT 1"""

SELECT_JOB_FOR_CLAIM = """
SELECT j.job_id, j.attempts, j.status FROM lgm_memory_jobs AS j
WHERE j.job_id = :job_id
  AND (j.status = 'pending' OR (j.status = 'leased' AND j.lease_expires_at <= :now))"""

LEASE_JOB = """
UPDATE lgm_memory_jobs
SET status = 'leased', lease_owner = ?, lease_expires_at = ?, attempts = attempts + 1, updated_at = ?
WHERE job_id = ?"""

SELECT_JOB = """
SELECT job_id, job_key, user_id, thread_id, stage, messages, candidates, ops, applied_ops, attempts
FROM lgm_memory_jobs WHERE job_id = ?"""

GIVE_UP_JOB = """
UPDATE lgm_memory_jobs
SET status = 'failed', last_error = ?, lease_owner = NULL, lease_expires_at = NULL,
    updated_at = ?, finished_at = ?
WHERE job_id = ?"""

# Every write of a running job checks that the writer still holds the lease.
_HELD = "job_id = ? AND lease_owner = ? AND status = 'leased'"

RENEW_LEASE = f"UPDATE lgm_memory_jobs SET lease_expires_at = ?, updated_at = ? WHERE {_HELD}"
SAVE_CANDIDATES = f"""
UPDATE lgm_memory_jobs SET stage = 'extracted', candidates = ?, lease_expires_at = ?, updated_at = ?
WHERE {_HELD}"""
SAVE_PLAN = f"""
UPDATE lgm_memory_jobs SET stage = 'planned', ops = ?, applied_ops = 0, lease_expires_at = ?, updated_at = ?
WHERE {_HELD}"""
MARK_APPLIED = f"""
UPDATE lgm_memory_jobs SET applied_ops = ?, lease_expires_at = ?, updated_at = ?
WHERE {_HELD} AND applied_ops = ?"""
INSERT_AUDIT = """
INSERT OR IGNORE INTO lgm_memory_audit
    (job_id, op_index, user_id, thread_id, action, target_ids, result_id, reason, op, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
# A finished job keeps its row (its key keeps re-submits idempotent) but not the
# conversation text: the audit log holds what was decided.
COMPLETE_JOB = f"""
UPDATE lgm_memory_jobs
SET status = 'done', messages = '[]', candidates = NULL, lease_owner = NULL,
    lease_expires_at = NULL, last_error = NULL, updated_at = ?, finished_at = ?
WHERE {_HELD}"""
RETRY_JOB = f"""
UPDATE lgm_memory_jobs
SET status = 'pending', not_before = ?, last_error = ?, lease_owner = NULL, lease_expires_at = NULL,
    updated_at = ?
WHERE {_HELD}"""
FAIL_JOB = f"""
UPDATE lgm_memory_jobs
SET status = 'failed', last_error = ?, lease_owner = NULL, lease_expires_at = NULL,
    updated_at = ?, finished_at = ?
WHERE {_HELD}"""
# A graceful stop hands the job back without spending an attempt.
RELEASE_JOB = f"""
UPDATE lgm_memory_jobs
SET status = 'pending', attempts = MAX(attempts - 1, 0), lease_owner = NULL, lease_expires_at = NULL,
    updated_at = ?
WHERE {_HELD}"""
REQUEUE_FAILED = """
UPDATE lgm_memory_jobs
SET status = 'pending', attempts = 0, not_before = ?, finished_at = NULL, updated_at = ?
WHERE status = 'failed'"""

SELECT_JOB_INFOS = """
SELECT job_id, user_id, thread_id, status, stage, attempts, messages, last_error,
       not_before, created_at, updated_at, lease_owner
FROM lgm_memory_jobs WHERE status IN ({statuses}) ORDER BY seq"""

SELECT_STATUS_COUNTS = "SELECT status, COUNT(*) FROM lgm_memory_jobs GROUP BY status"
SELECT_OLDEST_WAITING = (
    "SELECT MIN(created_at) FROM lgm_memory_jobs WHERE status IN ('pending', 'leased')"
)
SELECT_AUDIT_COUNT = "SELECT COUNT(*) FROM lgm_memory_audit"
SELECT_AUDIT = """
SELECT seq, job_id, op_index, user_id, thread_id, op, created_at FROM lgm_memory_audit
WHERE (:user_id IS NULL OR user_id = :user_id) ORDER BY seq DESC LIMIT :limit"""

DELETE_USER_JOBS = "DELETE FROM lgm_memory_jobs WHERE user_id = ?"
DELETE_USER_MESSAGES = "DELETE FROM lgm_memory_job_messages WHERE user_id = ?"
DELETE_USER_AUDIT = "DELETE FROM lgm_memory_audit WHERE user_id = ?"
DELETE_DONE_BEFORE = "DELETE FROM lgm_memory_jobs WHERE status = 'done' AND finished_at < ?"


# --- records -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Job:
    """A leased job as the worker runs it."""

    job_id: str
    job_key: str
    user_id: str
    thread_id: str
    stage: str
    messages: list[BaseMessage]
    candidates: list[CandidateMemory] | None
    ops: list[MemoryOp] | None
    applied_ops: int
    attempts: int
    lease_owner: str


@dataclass(frozen=True, slots=True)
class JobInfo:
    """A job as ``pending()`` / ``failed()`` show it (no message text)."""

    job_id: str
    user_id: str
    thread_id: str
    status: str
    stage: str
    attempts: int
    message_count: int
    last_error: str | None
    not_before: float
    created_at: float
    updated_at: float
    lease_owner: str | None


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One reconcile decision as recorded in the audit log."""

    seq: int
    job_id: str | None
    op_index: int | None
    user_id: str
    thread_id: str | None
    op: MemoryOp
    created_at: float


_FAR_FUTURE = 1e18  # "any time": claims ignoring debounce and backoff delays


def job_key_for(user_id: str, thread_id: str, message_ids: Sequence[str]) -> str:
    """The idempotency key of a job: its user, thread and message ids."""
    raw = "\x1f".join([user_id, thread_id, *message_ids])
    return hashlib.sha256(raw.encode()).hexdigest()[:40]


def backoff_seconds(attempt: int, base: float, cap: float) -> float:
    """Delay before retry number ``attempt`` (1-based): base, 2*base, 4*base ... capped.

    Example:
        >>> [backoff_seconds(n, 1.0, 5.0) for n in (1, 2, 3, 4)]
        [1.0, 2.0, 4.0, 5.0]
    """
    return float(min(cap, base * (2 ** max(attempt - 1, 0))))


def _positive(name: str, value: float, *, allow_zero: bool = False) -> None:
    if value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ConfigurationError(f"SqliteMemoryQueue({name}={value!r}); use a number {bound}.")


# --- the queue ---------------------------------------------------------------------


class SqliteMemoryQueue:
    """The durable memory-writing queue on a SQLite file (the checkpoints' file).

    Args:
        path: The SQLite database file, typically the one your ``SqliteSaver``
            uses. ``":memory:"`` is refused: the queue must survive a restart.
        debounce_seconds: How long a thread's newest job waits for more messages.
        max_debounce_seconds: Cap on how long coalescing may delay a job.
        lease_seconds: How long a worker owns a job without renewing; a job whose
            worker died is retried after this.
        max_attempts: Attempts before a job is marked ``failed``.
        backoff_base_seconds / backoff_max_seconds: Retry delays (doubling, capped).
        clock: Time source (seconds); injectable for tests.

    Raises:
        ConfigurationError: A value is out of range or ``path`` is ``":memory:"``.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        debounce_seconds: float = 1.0,
        max_debounce_seconds: float = 10.0,
        lease_seconds: float = 120.0,
        max_attempts: int = 5,
        backoff_base_seconds: float = 2.0,
        backoff_max_seconds: float = 300.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if str(path) in ("", ":memory:") or str(path).startswith("file::memory:"):
            raise ConfigurationError(
                f"SqliteMemoryQueue(path={str(path)!r}): the queue must survive a restart; "
                "pass the path of a database file (the one your checkpointer uses)."
            )
        _positive("debounce_seconds", debounce_seconds, allow_zero=True)
        _positive("max_debounce_seconds", max_debounce_seconds, allow_zero=True)
        _positive("lease_seconds", lease_seconds)
        _positive("backoff_base_seconds", backoff_base_seconds, allow_zero=True)
        _positive("backoff_max_seconds", backoff_max_seconds, allow_zero=True)
        if max_attempts < 1:
            raise ConfigurationError(
                f"SqliteMemoryQueue(max_attempts={max_attempts!r}); use an integer >= 1."
            )
        self.path = str(path)
        self.debounce_seconds = float(debounce_seconds)
        self.max_debounce_seconds = float(max(max_debounce_seconds, debounce_seconds))
        self.lease_seconds = float(lease_seconds)
        self.max_attempts = int(max_attempts)
        self.backoff_base_seconds = float(backoff_base_seconds)
        self.backoff_max_seconds = float(backoff_max_seconds)
        self.clock = clock
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._is_setup = False
        self._closed = False

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

    # connections ------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        if self._closed:
            raise ConfigurationError(f"SqliteMemoryQueue({self.path!r}) is closed; open a new one.")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            # One connection per thread; autocommit so transactions are explicit.
            conn = sqlite3.connect(
                self.path,
                timeout=30.0,
                isolation_level=None,
                check_same_thread=False,
                uri=self.path.startswith("file:"),
            )
            conn.execute("PRAGMA busy_timeout = 30000")
            conn.execute("PRAGMA journal_mode = WAL")
            self._local.conn = conn
            with self._connections_lock:
                self._connections.append(conn)
        return conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction; IMMEDIATE takes the write lock up front (no upgrade deadlock)."""
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")

    def close(self) -> None:
        """Close every connection this queue opened (idempotent)."""
        with self._connections_lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()
        self._closed = True

    # migrations -------------------------------------------------------------------

    def setup(self) -> None:
        """Create the queue's tables; idempotent, each migration commits with its row."""
        if self._is_setup:
            return
        conn = self._conn()
        conn.execute(CREATE_MIGRATIONS_TABLE)
        for version, name, statements in MIGRATIONS:
            with self._write() as tx:
                applied = {row[0] for row in tx.execute(SELECT_APPLIED_VERSIONS)}
                if version in applied:
                    continue
                try:
                    for statement in statements:
                        tx.execute(statement)
                except sqlite3.Error as exc:
                    raise MigrationError(
                        f"memory queue migration {version} ({name!r}) failed on {self.path!r}: {exc}. "
                        "Check the file is a writable SQLite database not created by another tool."
                    ) from exc
                tx.execute(INSERT_MIGRATION, (version, name, self.clock()))
        self._is_setup = True

    async def asetup(self) -> None:
        """Async twin of ``setup``."""
        await asyncio.to_thread(self.setup)

    # submitting -------------------------------------------------------------------

    def enqueue(self, user_id: str, thread_id: str, messages: Sequence[BaseMessage]) -> str | None:
        """Queue ``messages`` for extraction; returns the job id, or ``None`` when
        every message was queued before (nothing is queued twice).

        Messages of the same thread that arrive while its newest job still waits
        join that job (debounce).
        """
        self.setup()
        if not messages:
            return None
        ids = message_ids_for(messages)
        now = self.clock()
        with self._write() as tx:
            queued = {
                row[0]
                for row in tx.execute(
                    SELECT_QUEUED_MESSAGE_IDS.format(placeholders=",".join("?" * len(ids))),
                    (user_id, thread_id, *ids),
                )
            }
            fresh = [(m, i) for m, i in zip(messages, ids, strict=True) if i not in queued]
            # The same id twice in one call: keep the first.
            unique: dict[str, BaseMessage] = {}
            for message, message_id in fresh:
                unique.setdefault(message_id, message)
            if not unique:
                return None
            new_dicts = messages_to_dict(list(unique.values()))
            latest = tx.execute(SELECT_LATEST_THREAD_JOB, (user_id, thread_id)).fetchone()
            job_id: str
            if (
                latest is not None
                and latest[1] == "pending"
                and latest[2] == "new"
                and latest[3] == 0
                and now <= latest[6]  # still inside its debounce window
                and now < latest[5] + self.max_debounce_seconds
            ):
                job_id = latest[0]
                all_dicts = json.loads(latest[4]) + new_dicts
                all_ids = message_ids_for(messages_from_dict(all_dicts))
                not_before = min(now + self.debounce_seconds, latest[5] + self.max_debounce_seconds)
                tx.execute(
                    COALESCE_JOB,
                    (
                        job_key_for(user_id, thread_id, all_ids),
                        json.dumps(all_dicts),
                        not_before,
                        now,
                        job_id,
                    ),
                )
            else:
                job_id = uuid.uuid4().hex
                tx.execute(
                    INSERT_JOB,
                    (
                        job_id,
                        job_key_for(user_id, thread_id, list(unique)),
                        user_id,
                        thread_id,
                        json.dumps(new_dicts),
                        now + self.debounce_seconds,
                        now,
                        now,
                    ),
                )
            tx.executemany(
                INSERT_QUEUED_MESSAGE, [(user_id, thread_id, mid, job_id) for mid in unique]
            )
        return job_id

    async def aenqueue(
        self, user_id: str, thread_id: str, messages: Sequence[BaseMessage]
    ) -> str | None:
        """Async twin of ``enqueue`` (a short SQLite write in a worker thread)."""
        return await asyncio.to_thread(self.enqueue, user_id, thread_id, messages)

    # running ----------------------------------------------------------------------

    def claim(
        self, worker_id: str, *, job_id: str | None = None, ignore_debounce: bool = False
    ) -> Job | None:
        """Lease the next ready job (or ``job_id``); ``None`` when nothing is ready.

        A job whose lease expired is taken over; one that has used all its
        attempts that way (its worker keeps dying) is marked ``failed`` instead.
        """
        self.setup()
        while True:
            now = self.clock()
            with self._write() as tx:
                if job_id is not None:
                    row = tx.execute(
                        SELECT_JOB_FOR_CLAIM, {"job_id": job_id, "now": now}
                    ).fetchone()
                else:
                    horizon = _FAR_FUTURE if ignore_debounce else now
                    row = tx.execute(
                        SELECT_CLAIMABLE.replace(
                            "j.not_before <= :now", "j.not_before <= :horizon"
                        ),
                        {"now": now, "horizon": horizon},
                    ).fetchone()
                if row is None:
                    return None
                found_id, attempts, status = row
                if status == "leased" and attempts >= self.max_attempts:
                    tx.execute(
                        GIVE_UP_JOB,
                        (
                            f"worker lease expired {attempts} times (worker crashed or hung)",
                            now,
                            now,
                            found_id,
                        ),
                    )
                    if job_id is not None:
                        return None
                    continue
                tx.execute(LEASE_JOB, (worker_id, now + self.lease_seconds, now, found_id))
                loaded = tx.execute(SELECT_JOB, (found_id,)).fetchone()
            return _job_from_row(loaded, worker_id)

    def _held_update(self, sql: str, params: Sequence[Any], job: Job) -> None:
        with self._write() as tx:
            if tx.execute(sql, params).rowcount != 1:
                raise JobLeaseLostError(
                    f"memory job {job.job_id} is no longer leased to worker {job.lease_owner!r} "
                    "(its lease expired and another worker took it over); this worker stops "
                    "working on it. Raise lease_seconds if your model calls take longer."
                )

    def renew_lease(self, job: Job) -> None:
        """Extend the lease of a running job."""
        now = self.clock()
        self._held_update(
            RENEW_LEASE, (now + self.lease_seconds, now, job.job_id, job.lease_owner), job
        )

    def save_candidates(self, job: Job, candidates: Sequence[CandidateMemory]) -> None:
        """Persist the extraction result: a re-run after a crash does not call the model again."""
        now = self.clock()
        payload = json.dumps([candidate_to_dict(c) for c in candidates], ensure_ascii=False)
        self._held_update(
            SAVE_CANDIDATES,
            (payload, now + self.lease_seconds, now, job.job_id, job.lease_owner),
            job,
        )

    def save_plan(self, job: Job, ops: Sequence[MemoryOp]) -> None:
        """Persist the planned ops (with their deterministic result ids) before applying any."""
        now = self.clock()
        payload = json.dumps([op_to_dict(op) for op in ops], ensure_ascii=False)
        self._held_update(
            SAVE_PLAN, (payload, now + self.lease_seconds, now, job.job_id, job.lease_owner), job
        )

    def mark_applied(self, job: Job, index: int, op: MemoryOp) -> None:
        """Record that op ``index`` was applied, with its audit row, in one transaction."""
        now = self.clock()
        with self._write() as tx:
            updated = tx.execute(
                MARK_APPLIED,
                (index + 1, now + self.lease_seconds, now, job.job_id, job.lease_owner, index),
            ).rowcount
            if updated != 1:
                raise JobLeaseLostError(
                    f"memory job {job.job_id}: op {index} could not be marked applied by worker "
                    f"{job.lease_owner!r} (lease lost or op already recorded)."
                )
            tx.execute(
                INSERT_AUDIT, _audit_params(job.job_id, index, job.user_id, job.thread_id, op, now)
            )

    def complete(self, job: Job) -> None:
        """Mark a job done (its message text is dropped; the audit log keeps the decisions)."""
        now = self.clock()
        self._held_update(COMPLETE_JOB, (now, now, job.job_id, job.lease_owner), job)

    def fail(self, job: Job, error: str) -> str:
        """Record a failed attempt; returns the new status (``pending`` with backoff, or ``failed``)."""
        now = self.clock()
        error = error[:2000]
        if job.attempts >= self.max_attempts:
            self._held_update(FAIL_JOB, (error, now, now, job.job_id, job.lease_owner), job)
            return "failed"
        delay = backoff_seconds(job.attempts, self.backoff_base_seconds, self.backoff_max_seconds)
        self._held_update(RETRY_JOB, (now + delay, error, now, job.job_id, job.lease_owner), job)
        return "pending"

    def release(self, job: Job) -> None:
        """Hand a job back unfinished (graceful stop); its saved stages are kept."""
        self._held_update(RELEASE_JOB, (self.clock(), job.job_id, job.lease_owner), job)

    def retry_failed(self) -> int:
        """Put every failed job back in the queue with fresh attempts; returns how many."""
        self.setup()
        now = self.clock()
        with self._write() as tx:
            return int(tx.execute(REQUEUE_FAILED, (now, now)).rowcount)

    # audit ------------------------------------------------------------------------

    def record_audit(self, user_id: str, thread_id: str | None, ops: Sequence[MemoryOp]) -> None:
        """Append decisions made outside a job (the standalone reconcile node)."""
        self.setup()
        now = self.clock()
        with self._write() as tx:
            tx.executemany(
                INSERT_AUDIT, [_audit_params(None, None, user_id, thread_id, op, now) for op in ops]
            )

    async def arecord_audit(
        self, user_id: str, thread_id: str | None, ops: Sequence[MemoryOp]
    ) -> None:
        """Async twin of ``record_audit``."""
        await asyncio.to_thread(self.record_audit, user_id, thread_id, ops)

    def audit(self, user_id: str | None = None, *, limit: int = 100) -> list[AuditEntry]:
        """The newest decisions first, optionally for one user."""
        self.setup()
        rows = self._conn().execute(SELECT_AUDIT, {"user_id": user_id, "limit": limit}).fetchall()
        return [
            AuditEntry(seq, job_id, op_index, uid, tid, op_from_dict(json.loads(op)), created)
            for seq, job_id, op_index, uid, tid, op, created in rows
        ]

    # inspection -------------------------------------------------------------------

    def _infos(self, statuses: Sequence[str]) -> list[JobInfo]:
        self.setup()
        sql = SELECT_JOB_INFOS.format(statuses=",".join("?" * len(statuses)))
        out = []
        for row in self._conn().execute(sql, tuple(statuses)):
            (job_id, user_id, thread_id, status, stage, attempts, messages,
             last_error, not_before, created_at, updated_at, lease_owner) = row  # fmt: skip
            out.append(
                JobInfo(
                    job_id,
                    user_id,
                    thread_id,
                    status,
                    stage,
                    attempts,
                    len(json.loads(messages)),
                    last_error,
                    not_before,
                    created_at,
                    updated_at,
                    lease_owner,
                )
            )
        return out

    def pending(self) -> list[JobInfo]:
        """Jobs waiting or running (``pending`` and ``leased``), oldest first."""
        return self._infos(("pending", "leased"))

    def failed(self) -> list[JobInfo]:
        """Jobs that used all their attempts, with their last error."""
        return self._infos(("failed",))

    def stats(self) -> dict[str, Any]:
        """Counts per status, the age of the oldest waiting job (s) and the audit size."""
        self.setup()
        conn = self._conn()
        counts = {"pending": 0, "leased": 0, "done": 0, "failed": 0}
        counts.update({status: n for status, n in conn.execute(SELECT_STATUS_COUNTS)})
        oldest = conn.execute(SELECT_OLDEST_WAITING).fetchone()[0]
        return {
            **counts,
            "oldest_waiting_seconds": None if oldest is None else max(0.0, self.clock() - oldest),
            "audit_entries": conn.execute(SELECT_AUDIT_COUNT).fetchone()[0],
        }

    def unfinished(self) -> int:
        """How many jobs are pending or leased."""
        stats = self.stats()
        return int(stats["pending"] + stats["leased"])

    # housekeeping -----------------------------------------------------------------

    def forget_user(self, user_id: str) -> int:
        """Delete a user's jobs, queued message ids and audit entries; returns rows deleted."""
        self.setup()
        with self._write() as tx:
            return sum(
                int(tx.execute(sql, (user_id,)).rowcount)
                for sql in (DELETE_USER_JOBS, DELETE_USER_MESSAGES, DELETE_USER_AUDIT)
            )

    def purge_done(self, older_than_seconds: float) -> int:
        """Delete finished job rows older than this (their message ids stay, so nothing is re-queued)."""
        self.setup()
        with self._write() as tx:
            return int(
                tx.execute(DELETE_DONE_BEFORE, (self.clock() - older_than_seconds,)).rowcount
            )


def _audit_params(
    job_id: str | None,
    index: int | None,
    user_id: str,
    thread_id: str | None,
    op: MemoryOp,
    now: float,
) -> tuple[Any, ...]:
    return (
        job_id,
        index,
        user_id,
        thread_id,
        op.action,
        json.dumps(list(op.target_ids)),
        op.result_id,
        op.reason,
        json.dumps(op_to_dict(op), ensure_ascii=False),
        now,
    )


def _job_from_row(row: Sequence[Any], worker_id: str) -> Job:
    job_id, job_key, user_id, thread_id, stage, messages, candidates, ops, applied_ops, attempts = (
        row
    )
    return Job(
        job_id=job_id,
        job_key=job_key,
        user_id=user_id,
        thread_id=thread_id,
        stage=stage,
        messages=messages_from_dict(json.loads(messages)),
        candidates=None
        if candidates is None
        else [candidate_from_dict(c) for c in json.loads(candidates)],
        ops=None if ops is None else [op_from_dict(o) for o in json.loads(ops)],
        applied_ops=applied_ops,
        attempts=attempts,
        lease_owner=worker_id,
    )
