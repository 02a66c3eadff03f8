"""The memory queue's audit log, inspection and erasure: what an operator calls.

``QueueAdmin`` is the part of ``MemoryQueue`` that reads and removes rather than
runs jobs: the audit log (``record_audit``, ``audit``), inspection
(``pending``, ``failed``, ``stats``, ``unfinished``), erasure (``forget_user``,
``forget_thread``, ``forget_memory``, then the backend's ``_after_erase``), key
rotation (``reencrypt``) and ``purge_done``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from langgraph_memory.encryption import ReencryptReport, is_sealed_text
from langgraph_memory.errors import ConfigurationError, DecryptionError
from langgraph_memory.pipeline import _queue_sql as queue_sql
from langgraph_memory.pipeline._queue_base import QueueBase
from langgraph_memory.pipeline._queue_records import (
    AuditEntry,
    JobInfo,
    _audit_params,
    _mentions,
)
from langgraph_memory.pipeline._queue_sealing import DONE_MESSAGES, ROLES
from langgraph_memory.types import MemoryOp

__all__ = ["QueueAdmin"]


class QueueAdmin(QueueBase):
    """Audit log, inspection, erasure, key rotation and purging (part of ``MemoryQueue``)."""

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
            >>> from langgraph_memory.pipeline.queue import SqliteMemoryQueue
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
