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
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from langchain_core.messages import BaseMessage, messages_from_dict, messages_to_dict

from langgraph_memory._extras import require_extra
from langgraph_memory._migrations import Migration, MigrationTable, migrate
from langgraph_memory._pg_erase import wait_for_older_snapshots
from langgraph_memory.encryption import EncryptionKeys, ReencryptReport, is_sealed_text
from langgraph_memory.errors import (
    ConfigurationError,
    DecryptionError,
    InvalidConnectionError,
    JobLeaseLostError,
)
from langgraph_memory.nodes._messages import message_ids_for
from langgraph_memory.pipeline import _queue_sql as queue_sql
from langgraph_memory.pipeline._queue_sealing import DONE_MESSAGES, ROLES, JobSealer
from langgraph_memory.types import CandidateMemory, MemoryOp

__all__ = [
    "AuditEntry",
    "Job",
    "JobInfo",
    "MemoryQueue",
    "PostgresMemoryQueue",
    "SqliteMemoryQueue",
]


_FAR_FUTURE = 1e18  # "any time": claims ignoring debounce and backoff delays


# --- records ---------------------------------------------------------------------------


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
    """One reconcile decision as recorded in the audit log: action, target and result
    ids; never text (``op.candidate`` is ``None`` and ``op.reason`` empty)."""

    seq: int
    job_id: str | None
    op_index: int | None
    user_id: str
    thread_id: str | None
    op: MemoryOp
    created_at: float


def job_key_for(user_id: str, thread_id: str, message_ids: Sequence[str]) -> str:
    """The idempotency key of a job: its user, thread and message ids."""
    raw = "\x1f".join([user_id, thread_id, *message_ids])
    return hashlib.sha256(raw.encode()).hexdigest()[:40]


_JOB_ID_NAMESPACE: Final = uuid.UUID("0b7d2f9e-3c41-4d8a-b6e5-91f0c2a7d436")


def new_job_id(job_key: str, previous_job_id: str | None) -> str:
    """A new job's id, from its key and the thread's latest job: the same history queues
    the same ids (and so plans the same memory ids), and no two rows can share one, since
    a row inserted after ``previous_job_id`` is the thread's latest until it is deleted."""
    return uuid.uuid5(_JOB_ID_NAMESPACE, f"{job_key}\x1f{previous_job_id or ''}").hex


def unanswered_key_for(user_id: str, thread_id: str, message_id: str) -> str:
    """The key of the held job of one reply nobody has answered yet."""
    return queue_sql.UNANSWERED_KEY_PREFIX + job_key_for(user_id, thread_id, [message_id])


def backoff_seconds(attempt: int, base: float, cap: float) -> float:
    """Delay before retry number ``attempt`` (1-based): base, 2*base, 4*base ... capped.

    Example:
        >>> [backoff_seconds(n, 1.0, 5.0) for n in (1, 2, 3, 4)]
        [1.0, 2.0, 4.0, 5.0]
    """
    return float(min(cap, base * (2 ** max(attempt - 1, 0))))


def _audit_params(
    job_id: str | None,
    index: int | None,
    user_id: str,
    thread_id: str | None,
    op: MemoryOp,
    now: float,
) -> dict[str, Any]:
    # Ids and decisions only: the candidate's text and the model's reason (which
    # often quotes it) would outlive a deleted memory in the audit log.
    decision = MemoryOp(op.action, None, op.target_ids, "", op.result_id)
    return {
        "job_id": job_id,
        "op_index": index,
        "user_id": user_id,
        "thread_id": thread_id,
        "action": op.action,
        "target_ids": json.dumps(list(op.target_ids)),
        "result_id": op.result_id,
        "reason": "",
        "op": json.dumps(decision.to_dict(), ensure_ascii=False),
        "now": now,
    }


def _mentions(raw: str, needle: str) -> bool:
    """Whether a stored JSON payload contains ``needle`` (as written, or JSON-escaped)."""
    return needle in raw or json.dumps(needle, ensure_ascii=False)[1:-1] in raw


def _job_from_row(row: Sequence[Any], worker_id: str, sealer: JobSealer) -> Job:
    job_id, job_key, user_id, thread_id, stage, messages, candidates, ops, applied, attempts = row
    who = (user_id, thread_id, job_id)
    messages = sealer.open("messages", messages, *who)
    candidates = sealer.open_optional("candidates", candidates, *who)
    ops = sealer.open_optional("ops", ops, *who)
    return Job(
        job_id=job_id,
        job_key=job_key,
        user_id=user_id,
        thread_id=thread_id,
        stage=stage,
        messages=messages_from_dict(json.loads(messages)),
        candidates=None
        if candidates is None
        else [CandidateMemory.from_dict(c) for c in json.loads(candidates)],
        ops=None if ops is None else [MemoryOp.from_dict(o) for o in json.loads(ops)],
        applied_ops=applied,
        attempts=attempts,
        lease_owner=worker_id,
    )


# --- the dialect-independent core --------------------------------------------------------


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


class MemoryQueue:
    """The queue's logic, shared by the SQLite and Postgres backends.

    Subclasses provide connections (``_connect``), transactions (``_transaction``)
    and the few statements that differ; everything else happens here.

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

    # submitting -----------------------------------------------------------------------

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
        scope = {"user_id": user_id, "thread_id": thread_id}
        with self._write() as tx:
            if self._lock_thread:
                tx.execute(self._lock_thread, scope)
            rows = tx.execute(
                self._select_queued_ids, {**scope, "message_ids": self._ids_param(ids)}
            ).fetchall()
            queued = {row[0] for row in rows}
            # New messages only; the same id twice in one call keeps the first.
            unique: dict[str, BaseMessage] = {}
            for message, message_id in zip(messages, ids, strict=True):
                if message_id not in queued:
                    unique.setdefault(message_id, message)
            if not unique:
                return None
            # The thread went on: a reply held as unanswered comes in this batch with
            # the user's answer to it.
            tx.executemany(
                queue_sql.CANCEL_UNANSWERED_JOB,
                [{"job_key": unanswered_key_for(user_id, thread_id, mid)} for mid in unique],
            )
            new_dicts = messages_to_dict(list(unique.values()))
            latest = tx.execute(queue_sql.SELECT_LATEST_THREAD_JOB, scope).fetchone()
            if (
                latest is not None
                and not latest[7].startswith(queue_sql.UNANSWERED_KEY_PREFIX)
                and latest[1] == "pending"
                and latest[2] == "new"
                and latest[3] == 0
                and now <= latest[6]  # still inside its debounce window
                and now < latest[5] + self.max_debounce_seconds
            ):
                job_id: str = latest[0]
                waiting = self._sealer.open("messages", latest[4], user_id, thread_id, job_id)
                all_dicts = json.loads(waiting) + new_dicts
                all_ids = message_ids_for(messages_from_dict(all_dicts))
                tx.execute(
                    queue_sql.COALESCE_JOB,
                    {
                        "job_key": job_key_for(user_id, thread_id, all_ids),
                        "messages": self._sealer.seal(
                            "messages", json.dumps(all_dicts), user_id, thread_id, job_id
                        ),
                        "not_before": min(
                            now + self.debounce_seconds, latest[5] + self.max_debounce_seconds
                        ),
                        "now": now,
                        "job_id": job_id,
                    },
                )
            else:
                key = job_key_for(user_id, thread_id, list(unique))
                job_id = new_job_id(key, latest[0] if latest is not None else None)
                tx.execute(
                    queue_sql.INSERT_JOB,
                    {
                        **scope,
                        "job_id": job_id,
                        "job_key": key,
                        "messages": self._sealer.seal(
                            "messages", json.dumps(new_dicts), user_id, thread_id, job_id
                        ),
                        "not_before": now + self.debounce_seconds,
                        "now": now,
                    },
                )
            tx.executemany(
                queue_sql.INSERT_QUEUED_MESSAGE,
                [{**scope, "message_id": mid, "job_id": job_id} for mid in unique],
            )
        return job_id

    async def aenqueue(
        self, user_id: str, thread_id: str, messages: Sequence[BaseMessage]
    ) -> str | None:
        """Async twin of ``enqueue`` (a short write in a worker thread)."""
        return await asyncio.to_thread(self.enqueue, user_id, thread_id, messages)

    def enqueue_unanswered(
        self, user_id: str, thread_id: str, message: BaseMessage, *, hold_seconds: float
    ) -> str | None:
        """Hold the reply that ends a thread's latest turn; returns the job id, or ``None``
        when it is queued already.

        The job waits ``hold_seconds``: if the thread goes on, its next batch carries the
        reply with the user's answer and cancels this job (``enqueue``); if not, the reply
        is read as one nobody answered (a confirmation that ended the conversation).
        Like every job it runs in the user's submission order.
        """
        self.setup()
        (message_id,) = message_ids_for([message])
        scope = {"user_id": user_id, "thread_id": thread_id}
        key = unanswered_key_for(user_id, thread_id, message_id)
        now = self.clock()
        with self._write() as tx:
            if self._lock_thread:
                tx.execute(self._lock_thread, scope)
            queued = tx.execute(
                self._select_queued_ids, {**scope, "message_ids": self._ids_param([message_id])}
            ).fetchall()
            if queued or tx.execute(queue_sql.SELECT_JOB_BY_KEY, {"job_key": key}).fetchone():
                return None
            latest = tx.execute(queue_sql.SELECT_LATEST_THREAD_JOB, scope).fetchone()
            job_id = new_job_id(key, latest[0] if latest is not None else None)
            payload = json.dumps(messages_to_dict([message]))
            tx.execute(
                queue_sql.INSERT_JOB,
                {
                    **scope,
                    "job_id": job_id,
                    "job_key": key,
                    "messages": self._sealer.seal("messages", payload, user_id, thread_id, job_id),
                    "not_before": now + hold_seconds,
                    "now": now,
                },
            )
        return job_id

    async def aenqueue_unanswered(
        self, user_id: str, thread_id: str, message: BaseMessage, *, hold_seconds: float
    ) -> str | None:
        """Async twin of ``enqueue_unanswered``."""
        return await asyncio.to_thread(
            self.enqueue_unanswered, user_id, thread_id, message, hold_seconds=hold_seconds
        )

    # running --------------------------------------------------------------------------

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
                        queue_sql.SELECT_JOB_FOR_CLAIM, {"job_id": job_id, "now": now}
                    ).fetchone()
                else:
                    horizon = _FAR_FUTURE if ignore_debounce else now
                    row = tx.execute(
                        self._select_claimable, {"now": now, "horizon": horizon}
                    ).fetchone()
                if row is None:
                    return None
                found_id, attempts, status = row
                if status == "leased" and attempts >= self.max_attempts:
                    error = f"worker lease expired {attempts} times (worker crashed or hung)"
                    if self._sealer.enabled:
                        uid, tid = tx.execute(
                            queue_sql.SELECT_JOB_IDENTITY, {"job_id": found_id}
                        ).fetchone()
                        error = self._sealer.seal("last_error", error, uid, tid, found_id)
                    tx.execute(
                        queue_sql.GIVE_UP_JOB, {"error": error, "now": now, "job_id": found_id}
                    )
                    if job_id is not None:
                        return None
                    continue
                tx.execute(
                    queue_sql.LEASE_JOB,
                    {
                        "worker": worker_id,
                        "lease_until": now + self.lease_seconds,
                        "now": now,
                        "job_id": found_id,
                    },
                )
                loaded = tx.execute(queue_sql.SELECT_JOB, {"job_id": found_id}).fetchone()
            try:
                return _job_from_row(loaded, worker_id, self._sealer)
            except DecryptionError as exc:
                # Fail closed, and out of the way: a job whose payload does not open
                # is marked failed (the error names ids only) instead of blocking
                # its user's later jobs until its lease runs out, every retry. Fix
                # the keyring or run reencrypt(), then retry_failed().
                self._refuse(loaded, exc)
                raise

    def _refuse(self, row: Sequence[Any], exc: DecryptionError) -> None:
        job_id, _key, user_id, thread_id = row[:4]
        error = self._sealer.seal(
            "last_error", f"refused: {exc}"[:2000], user_id, thread_id, job_id
        )
        with self._write() as tx:
            tx.execute(
                queue_sql.GIVE_UP_JOB, {"error": error, "now": self.clock(), "job_id": job_id}
            )

    def _held(self, job: Job, **params: Any) -> dict[str, Any]:
        now = self.clock()
        return {
            "job_id": job.job_id,
            "worker": job.lease_owner,
            "now": now,
            "lease_until": now + self.lease_seconds,
            **params,
        }

    def _held_update(self, sql: str, params: Mapping[str, Any], job: Job) -> None:
        with self._write() as tx:
            if tx.execute(sql, params).rowcount != 1:
                raise JobLeaseLostError(
                    f"memory job {job.job_id} is no longer leased to worker {job.lease_owner!r} "
                    "(its lease expired and another worker took it over); this worker stops "
                    "working on it. Raise lease_seconds if your model calls take longer."
                )

    def _seal_for(self, job: Job, role: str, text: str) -> str:
        return self._sealer.seal(role, text, job.user_id, job.thread_id, job.job_id)

    def renew_lease(self, job: Job) -> None:
        """Extend the lease of a running job."""
        self._held_update(queue_sql.RENEW_LEASE, self._held(job), job)

    def save_candidates(self, job: Job, candidates: Sequence[CandidateMemory]) -> None:
        """Persist the extraction result: a re-run after a crash does not call the model again."""
        payload = self._seal_for(
            job, "candidates", json.dumps([c.to_dict() for c in candidates], ensure_ascii=False)
        )
        self._held_update(queue_sql.SAVE_CANDIDATES, self._held(job, payload=payload), job)

    def save_plan(self, job: Job, ops: Sequence[MemoryOp]) -> None:
        """Persist the planned ops (with their deterministic result ids) before applying any."""
        payload = self._seal_for(
            job, "ops", json.dumps([op.to_dict() for op in ops], ensure_ascii=False)
        )
        self._held_update(queue_sql.SAVE_PLAN, self._held(job, payload=payload), job)

    def mark_applied(self, job: Job, index: int, op: MemoryOp) -> None:
        """Record that op ``index`` was applied, with its audit row, in one transaction."""
        params = self._held(job, applied=index + 1, index=index)
        with self._write() as tx:
            if tx.execute(queue_sql.MARK_APPLIED, params).rowcount != 1:
                raise JobLeaseLostError(
                    f"memory job {job.job_id}: op {index} could not be marked applied by worker "
                    f"{job.lease_owner!r} (lease lost or op already recorded)."
                )
            tx.execute(
                queue_sql.INSERT_AUDIT,
                _audit_params(job.job_id, index, job.user_id, job.thread_id, op, params["now"]),
            )

    def complete(self, job: Job) -> None:
        """Mark a job done (its message text is dropped; the audit log keeps the decisions)."""
        self._held_update(queue_sql.COMPLETE_JOB, self._held(job), job)

    def fail(self, job: Job, error: str) -> str:
        """Record a failed attempt; returns the new status (``pending`` with backoff, or ``failed``)."""
        error = self._seal_for(job, "last_error", error[:2000])
        if job.attempts >= self.max_attempts:
            self._held_update(queue_sql.FAIL_JOB, self._held(job, error=error), job)
            return "failed"
        delay = backoff_seconds(job.attempts, self.backoff_base_seconds, self.backoff_max_seconds)
        params = self._held(job, error=error)
        params["not_before"] = params["now"] + delay
        self._held_update(queue_sql.RETRY_JOB, params, job)
        return "pending"

    def release(self, job: Job) -> None:
        """Hand a job back unfinished (graceful stop); its saved stages are kept."""
        self._held_update(queue_sql.RELEASE_JOB, self._held(job), job)

    def retry_failed(self) -> int:
        """Put every failed job back in the queue with fresh attempts; returns how many."""
        self.setup()
        with self._write() as tx:
            return int(tx.execute(queue_sql.REQUEUE_FAILED, {"now": self.clock()}).rowcount)

    # audit ----------------------------------------------------------------------------

    def record_audit(self, user_id: str, thread_id: str | None, ops: Sequence[MemoryOp]) -> None:
        """Append decisions made outside a job (the standalone reconcile node)."""
        self.setup()
        now = self.clock()
        with self._write() as tx:
            tx.executemany(
                queue_sql.INSERT_AUDIT,
                [_audit_params(None, None, user_id, thread_id, op, now) for op in ops],
            )

    async def arecord_audit(
        self, user_id: str, thread_id: str | None, ops: Sequence[MemoryOp]
    ) -> None:
        """Async twin of ``record_audit``."""
        await asyncio.to_thread(self.record_audit, user_id, thread_id, ops)

    def audit(self, user_id: str | None = None, *, limit: int = 100) -> list[AuditEntry]:
        """The newest decisions first, optionally for one user."""
        self.setup()
        rows = self._read(queue_sql.SELECT_AUDIT, {"user_id": user_id, "limit": limit})
        return [
            AuditEntry(seq, job_id, op_index, uid, tid, MemoryOp.from_dict(json.loads(op)), created)
            for seq, job_id, op_index, uid, tid, op, created in rows
        ]

    # inspection -----------------------------------------------------------------------

    def _infos(self, statuses: Sequence[str]) -> list[JobInfo]:
        self.setup()
        out = []
        for row in self._read(queue_sql.SELECT_JOB_INFOS_COUNTED):
            (job_id, user_id, thread_id, status, stage, attempts, message_count,
             last_error, not_before, created_at, updated_at, lease_owner) = row  # fmt: skip
            if status not in statuses:
                continue
            try:
                last_error = self._sealer.open_optional(
                    "last_error", last_error, user_id, thread_id, job_id
                )
            except DecryptionError as exc:
                # Inspection must work exactly when a row is broken: say why, show nothing.
                last_error = f"(not shown: {exc})"
            out.append(
                JobInfo(
                    job_id,
                    user_id,
                    thread_id,
                    status,
                    stage,
                    attempts,
                    int(message_count),
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
        counts = {"pending": 0, "leased": 0, "done": 0, "failed": 0}
        counts.update({status: int(n) for status, n in self._read(queue_sql.SELECT_STATUS_COUNTS)})
        oldest = self._read(queue_sql.SELECT_OLDEST_WAITING)[0][0]
        return {
            **counts,
            "oldest_waiting_seconds": None if oldest is None else max(0.0, self.clock() - oldest),
            "audit_entries": int(self._read(queue_sql.SELECT_AUDIT_COUNT)[0][0]),
        }

    def unfinished(self, *, held: bool = True) -> int:
        """How many jobs are pending or leased (``held=False``: not counting the replies
        still held for the user's answer, ``enqueue_unanswered``)."""
        stats = self.stats()
        waiting = (
            0 if held else int(self._read(queue_sql.SELECT_HELD_COUNT, {"now": self.clock()})[0][0])
        )
        return int(stats["pending"] + stats["leased"]) - waiting

    # housekeeping ---------------------------------------------------------------------

    def forget_user(self, user_id: str) -> int:
        """Delete a user's jobs, queued message ids and audit entries; returns rows deleted."""
        self.setup()
        with self._write() as tx:
            deleted = sum(
                int(tx.execute(sql, {"user_id": user_id}).rowcount)
                for sql in (
                    queue_sql.DELETE_USER_JOBS,
                    queue_sql.DELETE_USER_MESSAGES,
                    queue_sql.DELETE_USER_AUDIT,
                )
            )
        if deleted:
            self._after_erase()
        return deleted

    def forget_thread(self, thread_id: str) -> int:
        """Delete a thread's jobs (their turns' text) and queued message ids; returns rows
        deleted. Call it beside ``checkpointer.delete_thread(thread_id)``: a pending job
        holds the thread's latest turns. Audit rows (ids and decisions) stay."""
        self.setup()
        with self._write() as tx:
            deleted = sum(
                int(tx.execute(sql, {"thread_id": thread_id}).rowcount)
                for sql in (queue_sql.DELETE_THREAD_JOBS, queue_sql.DELETE_THREAD_MESSAGES)
            )
        if deleted:
            self._after_erase()
        return deleted

    def forget_memory(self, user_id: str, memory_id: str, texts: Sequence[str] = ()) -> int:
        """Remove what the queue holds of one deleted memory; returns rows changed.

        Finished jobs and audit rows written by this version hold no text. What
        can: a failed job (its turns, candidates and plan wait for
        ``retry_failed``) naming the memory's id or containing one of ``texts``,
        which is deleted; and, written by an older version, this user's finished
        jobs (their plan is dropped) and audit rows (rewritten to ids and
        decisions). Pending jobs are the conversation still to be read;
        ``delete_thread`` + ``forget_thread``, or ``forget_user``, remove those.
        """
        self.setup()
        # The id as a JSON string (a plan's result or target id), so a short id
        # such as "m1" never matches inside another job's text.
        needles = [json.dumps(memory_id), *(t for t in texts if t)]
        changed = 0
        with self._write() as tx:
            rows = tx.execute(queue_sql.SELECT_USER_FAILED_JOB_PAYLOADS, {"user_id": user_id})
            for job_id, thread_id, *stored in list(rows.fetchall()):
                # Sealed payloads are opened to be matched; a clear one (written
                # before encryption was on) is matched as it is, so it is erased too.
                payloads = [
                    self._sealer.open(role, p, user_id, thread_id, job_id)
                    if p is not None and (not self._sealer.enabled or is_sealed_text(p))
                    else p
                    for role, p in zip(ROLES, stored, strict=False)
                ]
                raw = "\n".join(p for p in payloads if p)
                if any(_mentions(raw, n) for n in needles):
                    changed += int(tx.execute(queue_sql.DELETE_JOB, {"job_id": job_id}).rowcount)
            changed += int(
                tx.execute(queue_sql.SCRUB_USER_DONE_JOBS, {"user_id": user_id}).rowcount
            )
            audit = tx.execute(queue_sql.SELECT_USER_AUDIT_OPS, {"user_id": user_id})
            for seq, action, target_ids, result_id, op, reason in list(audit.fetchall()):
                data = json.loads(op)
                if data.get("candidate") is None and not data.get("reason") and not reason:
                    continue
                # From the row's id columns, not the old JSON (which may lack them).
                decision = MemoryOp(action, None, tuple(json.loads(target_ids)), "", result_id)
                op_json = json.dumps(decision.to_dict(), ensure_ascii=False)
                changed += int(
                    tx.execute(queue_sql.SCRUB_AUDIT_ROW, {"op": op_json, "seq": seq}).rowcount
                )
        if changed:
            self._after_erase()
        return changed

    def reencrypt(
        self, *, after: int | None = None, batch_size: int = 500, encrypt_plaintext: bool = False
    ) -> ReencryptReport:
        """Rewrite every job payload not sealed under the current key (key rotation).

        One short transaction per batch of jobs, so it can run while workers run;
        the old key keeps opening payloads until the pass ends. Each rewrite is a
        compare-and-set: a payload a worker changed meanwhile is left to that
        write (which seals under the current key). Finished jobs hold no payload
        and are only read.

        Args:
            after: resume after this job seq (``int(report.cursor)`` of an
                interrupted pass); a fresh pass only re-reads finished rows.
            batch_size: jobs per transaction.
            encrypt_plaintext: also seal payloads queued before ``encryption=`` was on.

        Raises:
            ConfigurationError: the queue has no ``encryption=``, or a bad ``batch_size``.
            PlaintextRowError: a clear payload, without ``encrypt_plaintext``.
            DecryptionError: a payload does not open under any key of the ring.

        Example:
            >>> import tempfile, os
            >>> from langgraph_memory.encryption import EncryptionKeys
            >>> keys = EncryptionKeys.generate("k1")
            >>> path = os.path.join(tempfile.mkdtemp(), "checkpoints.sqlite")
            >>> with SqliteMemoryQueue.from_conn_string(path, encryption=keys) as q:
            ...     q.reencrypt().rewritten
            0
        """
        sealer = self._sealer
        if not sealer.enabled:
            raise ConfigurationError(
                f"{self._describe()}.reencrypt() needs a queue opened with "
                "encryption=EncryptionKeys(...)."
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigurationError(f"batch_size={batch_size!r}; use an integer >= 1.")
        self.setup()
        cursor = 0 if after is None else int(after)
        scanned = rewritten = 0
        while True:
            with self._write() as tx:
                rows = tx.execute(
                    queue_sql.SELECT_JOB_PAYLOADS_AFTER, {"after": cursor, "limit": batch_size}
                ).fetchall()
                for seq, job_id, user_id, thread_id, status, *stored in rows:
                    cursor = int(seq)
                    new = list(stored)
                    for i, (role, value) in enumerate(zip(ROLES, stored, strict=True)):
                        if value is None or (
                            role == "messages" and status == "done" and value == DONE_MESSAGES
                        ):
                            continue
                        sealed = sealer.reseal(
                            role, value, user_id, thread_id, job_id,
                            encrypt_plaintext=encrypt_plaintext,
                        )  # fmt: skip
                        if sealed is not None:
                            new[i] = sealed
                    if new == list(stored):
                        continue
                    params = dict(zip(ROLES, new, strict=True))
                    params.update({f"old_{r}": v for r, v in zip(ROLES, stored, strict=True)})
                    params["job_id"] = job_id
                    rewritten += int(tx.execute(queue_sql.RESEAL_JOB_PAYLOADS, params).rowcount)
            scanned += len(rows)
            if len(rows) < batch_size:
                return ReencryptReport(scanned, rewritten, str(cursor) if cursor else None)

    async def areencrypt(
        self, *, after: int | None = None, batch_size: int = 500, encrypt_plaintext: bool = False
    ) -> ReencryptReport:
        """Async twin of ``reencrypt`` (the batches run in a worker thread)."""
        return await asyncio.to_thread(
            self.reencrypt, after=after, batch_size=batch_size, encrypt_plaintext=encrypt_plaintext
        )

    def _after_erase(self) -> None:
        """Push erased rows out of the database's files (SQLite: truncate the WAL;
        Postgres: ``VACUUM FULL`` the queue's tables). Runs when a forget changed rows."""

    def purge_done(self, older_than_seconds: float) -> int:
        """Delete finished job rows older than this (their message ids stay, so nothing is re-queued)."""
        self.setup()
        with self._write() as tx:
            before = self.clock() - older_than_seconds
            return int(tx.execute(queue_sql.DELETE_DONE_BEFORE, {"before": before}).rowcount)


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
