"""A memory job's life in the queue: enqueued, claimed, its stages saved, finished.

``JobLifecycle`` is the part of ``MemoryQueue`` the writer drives: ``enqueue``
(idempotent per message, debounced per thread) and ``enqueue_unanswered``;
``claim`` (ordered per user, leases taken over when a worker died); each stage
saved under the lease (``save_candidates``, ``save_plan``, ``mark_applied``);
then ``complete``, ``fail`` (retried with backoff), ``release`` or
``retry_failed``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, messages_from_dict, messages_to_dict

from langgraph_memory.errors import DecryptionError, JobLeaseLostError
from langgraph_memory.nodes._messages import message_ids_for
from langgraph_memory.pipeline import _queue_sql as queue_sql
from langgraph_memory.pipeline._queue_base import QueueBase
from langgraph_memory.pipeline._queue_records import (
    Job,
    _audit_params,
    _job_from_row,
    backoff_seconds,
    job_key_for,
    new_job_id,
    unanswered_key_for,
)
from langgraph_memory.types import CandidateMemory, MemoryOp

__all__ = ["JobLifecycle"]


_FAR_FUTURE = 1e18  # "any time": claims ignoring debounce and backoff delays


class JobLifecycle(QueueBase):
    """Enqueue, claim, save each stage under the lease, finish (part of ``MemoryQueue``)."""

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
