"""The memory queue's records and pure helpers: no connection, no I/O.

What the queue hands out (``Job`` to a worker, ``JobInfo`` to ``pending()`` /
``failed()``, ``AuditEntry`` to ``audit()``), how a job's key and id are made,
the retry delay, and the mapping between rows and records. The queue's classes
(``pipeline/queue.py``) and its parts (``_queue_base.py``, ``_queue_jobs.py``,
``_queue_admin.py``) only execute what these return.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from langchain_core.messages import BaseMessage, messages_from_dict

from langgraph_memory.pipeline import _queue_sql as queue_sql
from langgraph_memory.pipeline._queue_sealing import JobSealer
from langgraph_memory.types import CandidateMemory, MemoryOp

__all__ = [
    "AuditEntry",
    "Job",
    "JobInfo",
    "backoff_seconds",
    "job_key_for",
    "new_job_id",
    "unanswered_key_for",
]


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
