"""MemoryWriter: extract + reconcile, off the reply path on a durable queue, or inline.

``submit(user_id, thread_id, messages)`` is what ``compress`` (for evicted
turns) and the extract node (for new turns) call.

- ``mode="background"`` (default): ``submit`` only writes the (redacted)
  messages to the queue (``SqliteMemoryQueue`` in the checkpoints' file, or
  ``PostgresMemoryQueue``) - a few milliseconds - and a worker thread
  runs extract and reconcile later. Start the worker with ``start()`` / ``stop()``
  or ``with writer:`` / ``async with writer:``; ``drain(timeout)`` waits for
  the queue to empty (tests, shutdown).
- ``mode="sync"``: ``submit`` runs extract and reconcile before returning
  (tests, notebooks). With a queue it still goes through the queue (same
  idempotency, same audit log); without one, the audit is kept in memory.

A job runs in stages, each saved under the job's lease: candidates (one
extract call), the plan (at most one reconcile call), then each op. A worker
that dies is replaced by the next one, which resumes at the saved stage; ops
are applied idempotently, so nothing is applied twice and nothing is lost.

Forgetting is scheduled too (``pipeline/sweep.py``): every ``MemorySweepPolicy.interval``
of memory time the background worker applies ``store.expire_due`` and
``store.archive_stale``. Without a worker (sync mode) call ``maybe_sweep()``
after turns or from a scheduler, or ``sweep()`` from a cron-style job.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from langgraph_memory._drive import Blocking, Call, Steps, arun, run
from langgraph_memory.clock import Clock
from langgraph_memory.clock import now as clock_now
from langgraph_memory.config import PrivacyPolicy
from langgraph_memory.errors import (
    ConfigurationError,
    JobLeaseLostError,
    MissingUserIdError,
    RedactionRejectedError,
)
from langgraph_memory.nodes._messages import mark_unanswered, message_ids_for
from langgraph_memory.nodes.extract import MemoryExtractor, as_extractor
from langgraph_memory.nodes.recall_erasure import check_rewritable
from langgraph_memory.nodes.reconcile import Reconciler
from langgraph_memory.pipeline.queue import AuditEntry, Job, MemoryQueue
from langgraph_memory.pipeline.sweep import MemorySweepPolicy, MemorySweepReport, Sweeper
from langgraph_memory.privacy import Redactor, redact_for_log
from langgraph_memory.types import LongTermMemory, MemoryOp

logger = logging.getLogger(__name__)

__all__ = ["MemorySweepPolicy", "MemorySweepReport", "MemoryWriter", "WriteReceipt"]

WriterMode = Literal["background", "sync"]


@dataclass(frozen=True, slots=True)
class WriteReceipt:
    """What ``submit`` did: the job it queued (if any) and, in sync mode, the decisions."""

    job_id: str | None
    ops: tuple[MemoryOp, ...] = ()
    # False when every message had been submitted before (nothing queued twice).
    queued: bool = True


class MemoryWriter:
    """Writes long-term memory from conversation turns: extract, then reconcile.

    Args:
        store: The long-term store (``ChromaMemoryStore`` or any ``LongTermMemory``).
        extractor: A chat model (wrapped in ``LLMMemoryExtractor``), an
            ``LLMMemoryExtractor`` or a ``RuleBasedExtractor`` (offline).
        model_for_reconcile: Chat model for the one judgement per batch;
            ``None`` uses the offline reconcile rules.
        mode: ``"background"`` (queue + worker thread) or ``"sync"`` (inline).
        queue: A ``SqliteMemoryQueue`` / ``PostgresMemoryQueue``; required in background mode.
        policy: Privacy policy; messages are redacted before they are queued.
        poll_interval: How often an idle worker looks for ready jobs (seconds).
        worker_id: Name of this writer's worker in leases (default: random).
        clock: Stamps messages that carry no ``created_at`` and the memories reconcile
            creates (``langgraph_memory.clock``; default the UTC wall clock). Queue
            leases and debounce keep real time; the sweep follows this clock.
        sweep: When to apply expiry and decay (``MemorySweepPolicy``); ``None`` (default) is
            ``MemorySweepPolicy()`` (every hour of memory time), ``False`` turns the
            scheduled sweep off (``sweep()`` still works).
        checkpointer: The graph's saver (one of this package's). A memory the writer
            deletes (the user asked to forget it) is then also taken out of the recall
            blocks saved in the user's threads, and its queue jobs
            (``store.delete_memory(..., checkpointer=, memory_queue=)``); the sweep
            applies the saver's pending erasure on Postgres (``erase_pending``).
        unanswered_after_seconds: How long the reply that ends a thread's latest turn is
            held for the user's answer before it is read alone (``submit_unanswered``;
            default 300 s; ``None``: never, such a reply is then only read once the
            user answers it). Needs a queue.

    Raises:
        ConfigurationError: Unknown mode, or background mode without a queue.

    Example:
        >>> import tempfile
        >>> from langchain_core.messages import HumanMessage
        >>> from langgraph_memory.embeddings import HashingEmbeddings
        >>> from langgraph_memory.longterm import ChromaMemoryStore
        >>> from langgraph_memory.nodes.rules import RuleBasedExtractor
        >>> store = ChromaMemoryStore.embedded(tempfile.mkdtemp(), embeddings=HashingEmbeddings())
        >>> writer = MemoryWriter(store, extractor=RuleBasedExtractor(), mode="sync")
        >>> receipt = writer.submit("u1", "t1", [HumanMessage("my budget is 3000", id="h1")])
        >>> [op.action for op in receipt.ops]
        ['add']
        >>> receipt = writer.submit("u1", "t1", [HumanMessage("预算改成5000", id="h2")])
        >>> [(op.action, m.text) for op in receipt.ops for m in store.list_memories("u1")]
        [('supersede', '用户的预算是5000')]
        >>> store.close()
    """

    def __init__(
        self,
        store: LongTermMemory,
        *,
        extractor: MemoryExtractor | BaseChatModel,
        model_for_reconcile: BaseChatModel | None = None,
        mode: WriterMode = "background",
        queue: MemoryQueue | None = None,
        policy: PrivacyPolicy | None = None,
        poll_interval: float = 0.2,
        worker_id: str | None = None,
        clock: Clock | None = None,
        sweep: MemorySweepPolicy | Literal[False] | None = None,
        checkpointer: Any = None,
        unanswered_after_seconds: float | None = 300.0,
    ) -> None:
        if mode not in ("background", "sync"):
            raise ConfigurationError(f"MemoryWriter(mode={mode!r}); use 'background' or 'sync'.")
        if mode == "background" and queue is None:
            raise ConfigurationError(
                "MemoryWriter(mode='background') needs queue=SqliteMemoryQueue(<your checkpoint "
                "database file>); or use mode='sync' to write inline."
            )
        if unanswered_after_seconds is not None and not unanswered_after_seconds >= 0:
            raise ConfigurationError(
                f"MemoryWriter(unanswered_after_seconds={unanswered_after_seconds!r}); use "
                "seconds >= 0, or None to never read a reply nobody answered."
            )
        if poll_interval <= 0:
            raise ConfigurationError(
                f"MemoryWriter(poll_interval={poll_interval!r}); use seconds > 0."
            )
        self.store = store
        self.extractor = as_extractor(extractor)
        self.clock = clock
        self.reconciler = Reconciler(store, model=model_for_reconcile, policy=policy, clock=clock)
        self.checkpointer = checkpointer
        if checkpointer is not None:
            check_rewritable(checkpointer)
            if "checkpointer" not in inspect.signature(store.delete_memory).parameters:
                raise ConfigurationError(
                    f"MemoryWriter(checkpointer=...): {type(store).__name__}.delete_memory "
                    "takes no checkpointer=, so a deleted memory would stay in the saved "
                    "recall blocks; use ChromaMemoryStore, or leave checkpointer out."
                )
            self.reconciler.delete_options = {"checkpointer": checkpointer, "memory_queue": queue}
        self.unanswered_after_seconds = unanswered_after_seconds
        self.mode: WriterMode = mode
        self.queue = queue
        self.policy = policy
        self.poll_interval = poll_interval
        self.worker_id = worker_id or f"writer-{uuid.uuid4().hex[:8]}"
        # Without a queue (sync mode only) the audit log lives here, newest last.
        self.audit_log: deque[tuple[str, str, MemoryOp]] = deque(maxlen=10_000)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._idle = threading.Event()
        # Without a queue: message ids already written, so that compress handing
        # over turns the extract node already submitted costs no model call.
        self._written: OrderedDict[tuple[str, str, str], None] = OrderedDict()
        self._written_lock = threading.Lock()
        self._current: Job | None = None
        self._heartbeat: threading.Thread | None = None
        if sweep is not None and sweep is not False and not isinstance(sweep, MemorySweepPolicy):
            raise ConfigurationError(
                f"MemoryWriter(sweep={sweep!r}); pass a MemorySweepPolicy(...), None for the "
                "default policy, or False to turn the scheduled sweep off."
            )
        self.sweeper = Sweeper(
            store,
            None if sweep is False else (sweep or MemorySweepPolicy()),
            clock=clock,
            checkpointer=checkpointer,
        )

    # sweeping (expiry and decay) --------------------------------------------------

    @property
    def last_sweep(self) -> MemorySweepReport | None:
        """The latest sweep's report (``None`` before the first)."""
        return self.sweeper.last

    def sweep(self) -> MemorySweepReport:
        """Apply expiry and decay to the whole store now, at ``now(clock)``."""
        return self.sweeper.sweep()

    def maybe_sweep(self) -> MemorySweepReport | None:
        """Sweep if the policy's interval of memory time has passed (else ``None``); never raises.

        The background worker calls it on every loop; a sync-mode app calls it
        after turns or from its scheduler.
        """
        return self.sweeper.maybe_sweep()

    # submitting -------------------------------------------------------------------

    def _redacted(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        """Redacted copies with their original ids; a message the policy rejects is left out."""
        redactor = Redactor(self.policy)
        out: list[BaseMessage] = []
        for message, message_id in zip(messages, message_ids_for(messages), strict=True):
            try:
                copy = redactor.redact_messages([message])[0]
            except RedactionRejectedError:
                logger.info(
                    "memory writer: message %s not kept, the privacy policy rejects it", message_id
                )
                continue
            out.append(self._stamped(copy, message_id))
        return out

    def _stamped(self, message: BaseMessage, message_id: str) -> BaseMessage:
        """The message with its id and the time it was said.

        A message without its own ``created_at`` is stamped at submission (right after
        its turn), so a queued job extracted later still resolves "tomorrow" and
        ``valid_from`` against when it was said, not when the worker ran.
        """
        update: dict[str, Any] = {}
        if not message.id:
            update["id"] = message_id
        if "created_at" not in message.additional_kwargs:
            update["additional_kwargs"] = {
                **message.additional_kwargs,
                "created_at": clock_now(self.clock).isoformat(),
            }
        return message.model_copy(update=update) if update else message

    def _unwritten(
        self, user_id: str, thread_id: str, messages: Sequence[BaseMessage]
    ) -> list[BaseMessage]:
        """Messages this queue-less writer has not written yet."""
        with self._written_lock:
            return [
                m
                for m, mid in zip(messages, message_ids_for(messages), strict=True)
                if (user_id, thread_id, mid) not in self._written
            ]

    def _mark_written(self, user_id: str, thread_id: str, messages: Sequence[BaseMessage]) -> None:
        # Marked only after success, so a failed write is tried again; the last 100k are kept.
        with self._written_lock:
            for message_id in message_ids_for(messages):
                self._written[(user_id, thread_id, message_id)] = None
            while len(self._written) > 100_000:
                self._written.popitem(last=False)

    def submit_steps(
        self, user_id: str, thread_id: str, messages: Sequence[BaseMessage]
    ) -> Steps[WriteReceipt]:
        """``submit`` written once for both drivers (``langgraph_memory._drive``)."""
        _check_ids(user_id, thread_id)
        safe = self._redacted(messages)
        if self.queue is None:  # sync mode without a queue
            safe = self._unwritten(user_id, thread_id, safe)
            if not safe:
                return WriteReceipt(None, (), queued=False)
            seed = _batch_seed(user_id, thread_id, safe)
            candidates = yield Call(self.extractor, "extract", (safe,))
            ops = yield from self.reconciler.reconcile_steps(
                user_id, candidates, thread_id=thread_id, seed=seed
            )
            self._mark_written(user_id, thread_id, safe)
            self.audit_log.extend((user_id, thread_id, op) for op in ops)
            return WriteReceipt(None, tuple(ops), queued=False)
        job_id = yield Call(self.queue, "enqueue", (user_id, thread_id, safe))
        if job_id is None:
            return WriteReceipt(None, (), queued=False)
        if self.mode == "background":
            return WriteReceipt(job_id)
        # sync mode: the caller waits and sees failures
        done = yield Blocking(lambda: self.run_job(job_id, reraise=True))
        return WriteReceipt(job_id, tuple(done or ()))

    def submit(self, user_id: str, thread_id: str, messages: Sequence[BaseMessage]) -> WriteReceipt:
        """Hand turns to long-term memory writing.

        Background mode queues them (idempotent: already-submitted messages are
        skipped) and returns at once; sync mode also extracts and reconciles.
        """
        return run(self.submit_steps(user_id, thread_id, messages))

    async def asubmit(
        self, user_id: str, thread_id: str, messages: Sequence[BaseMessage]
    ) -> WriteReceipt:
        """Async twin of ``submit``."""
        return await arun(self.submit_steps(user_id, thread_id, messages))

    def submit_unanswered_steps(
        self, user_id: str, thread_id: str, message: BaseMessage
    ) -> Steps[str | None]:
        """``submit_unanswered`` written once for both drivers."""
        _check_ids(user_id, thread_id)
        if self.queue is None or self.unanswered_after_seconds is None:
            return None
        (safe,) = self._redacted([message])
        job_id: str | None = yield Call(
            self.queue,
            "enqueue_unanswered",
            (user_id, thread_id, mark_unanswered(safe)),
            {"hold_seconds": self.unanswered_after_seconds},
        )
        return job_id

    def submit_unanswered(self, user_id: str, thread_id: str, message: BaseMessage) -> str | None:
        """Hold the reply that ends the thread's latest turn (the extract node's tail).

        A reply is normally read with the user's answer to it ("I've booked the 7pm
        table" - "thanks" keeps the booking; "no, 8pm" does not). When the thread goes
        quiet for ``unanswered_after_seconds``, the reply is read alone: what the
        assistant committed to stays on record (an offer nobody took does not). The
        thread's next turn cancels the hold. Needs a queue; returns the held job's id,
        or ``None`` (no queue, turned off, or already queued). ``RuleBasedExtractor``
        reads such a reply; ``LLMMemoryExtractor`` makes no call for a batch without a
        user turn unless it was built with ``keep_agent_inferred=True``.
        """
        return run(self.submit_unanswered_steps(user_id, thread_id, message))

    async def asubmit_unanswered(
        self, user_id: str, thread_id: str, message: BaseMessage
    ) -> str | None:
        """Async twin of ``submit_unanswered``."""
        return await arun(self.submit_unanswered_steps(user_id, thread_id, message))

    # running jobs -----------------------------------------------------------------

    def _require_queue(self) -> MemoryQueue:
        if self.queue is None:
            raise ConfigurationError(
                "this MemoryWriter has no queue; pass queue=SqliteMemoryQueue(...)."
            )
        return self.queue

    def _stopping(self) -> bool:
        return self._stop.is_set() and self._thread is not None

    def process(self, job: Job, *, reraise: bool = False) -> list[MemoryOp] | None:
        """Run one leased job from its saved stage to the end; ``None`` if it did not finish.

        Failures are recorded on the job (retry with backoff, then ``failed``)
        and re-raised when ``reraise``; a lost lease means another worker owns
        the job now, so this one stops.
        """
        queue = self._require_queue()
        self._current = job  # the heartbeat keeps its lease while a model call runs
        try:
            candidates = job.candidates
            if job.stage == "new" or candidates is None:
                candidates = self.extractor.extract(job.messages)
                queue.save_candidates(job, candidates)
                if self._stopping():
                    queue.release(job)  # the next worker plans from the saved candidates
                    return None
            ops = job.ops
            if job.stage != "planned" or ops is None:
                # The job id seeds the result ids: a re-plan after a crash reuses them.
                ops = self.reconciler.plan(job.user_id, candidates, seed=job.job_id)
                queue.save_plan(job, ops)
                start = 0
            else:
                start = job.applied_ops
            for index in range(start, len(ops)):
                if self._stopping():
                    queue.release(job)  # graceful stop: the next worker resumes at this op
                    return None
                self.reconciler.apply_op(job.user_id, ops[index], thread_id=job.thread_id)
                queue.mark_applied(job, index, ops[index])
            queue.complete(job)
            return list(ops)
        except JobLeaseLostError as exc:
            logger.warning("memory writer: %s", redact_for_log(exc))
            return None
        except Exception as exc:  # any failure is recorded on the job and retried
            # The error is stored and logged: it may quote model or user text.
            error_note = f"{type(exc).__name__}: {redact_for_log(exc, 500)}"
            status = queue.fail(job, error_note)
            logger.warning(
                "memory writer: job %s attempt %d failed (%s): %s",
                job.job_id,
                job.attempts,
                status,
                error_note,
            )
            if reraise:
                raise
            return None
        finally:
            self._current = None

    def run_job(self, job_id: str, *, reraise: bool = False) -> list[MemoryOp] | None:
        """Claim and run one specific job now (ignores debounce); ``None`` if not claimable/finished.

        With ``reraise`` a failure is still recorded on the job, then raised.
        """
        job = self._require_queue().claim(self.worker_id, job_id=job_id)
        return None if job is None else self.process(job, reraise=reraise)

    def run_pending(self, *, ignore_debounce: bool = False, max_jobs: int | None = None) -> int:
        """Run ready jobs in this thread until none is ready; returns how many ran."""
        queue = self._require_queue()
        ran = 0
        while max_jobs is None or ran < max_jobs:
            job = queue.claim(self.worker_id, ignore_debounce=ignore_debounce)
            if job is None:
                break
            self.process(job)
            ran += 1
        return ran

    # the worker thread ------------------------------------------------------------

    def _work(self) -> None:
        queue = self._require_queue()
        while not self._stop.is_set():
            self.maybe_sweep()
            try:
                job = queue.claim(self.worker_id)
            except Exception:  # a locked/broken database must not kill the worker
                logger.exception("memory writer: could not claim a job; retrying")
                job = None
            if job is None:
                self._idle.set()
                self._stop.wait(self.poll_interval)
                continue
            self._idle.clear()
            try:
                self.process(job)
            except Exception:  # e.g. the database refused to record a failure; keep working
                logger.exception("memory writer: job %s could not be processed", job.job_id)
                self._stop.wait(self.poll_interval)

    def _beat(self) -> None:
        """Renew the running job's lease every third of the lease, so a slow model
        call (longer than ``lease_seconds``) does not hand the job to another worker."""
        queue = self._require_queue()
        interval = max(queue.lease_seconds / 3, 0.05)
        while not self._stop.wait(interval):
            job = self._current
            if job is None:
                continue
            try:
                queue.renew_lease(job)
            except JobLeaseLostError:
                continue  # finished meanwhile, or really lost: process() finds out itself
            except Exception:
                logger.exception("memory writer: could not renew the lease of job %s", job.job_id)

    def start(self) -> MemoryWriter:
        """Start the background worker thread (idempotent)."""
        queue = self._require_queue()
        queue.setup()
        if self._thread is not None and self._thread.is_alive():
            return self
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._work, name=f"lgm-{self.worker_id}", daemon=True
        )
        self._heartbeat = threading.Thread(
            target=self._beat, name=f"lgm-{self.worker_id}-lease", daemon=True
        )
        self._thread.start()
        self._heartbeat.start()
        return self

    def stop(self, timeout: float | None = 30.0) -> None:
        """Stop the worker after its current step; an unfinished job goes back to the queue."""
        self._stop.set()
        if self._heartbeat is not None:
            self._heartbeat.join(timeout)
            self._heartbeat = None
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                logger.warning(
                    "memory writer: worker still busy after %.1f s; it stops after its current step",
                    timeout or 0,
                )
            else:
                self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def drain(self, timeout: float = 30.0) -> bool:
        """Wait until no job is pending or leased; ``True`` when the queue emptied in time.

        With the worker running this waits for it, and not for the replies it holds
        for the user's answer (``submit_unanswered``); otherwise every job is run in
        the calling thread, debounce and holds ignored.
        """
        queue = self._require_queue()
        deadline = time.monotonic() + timeout

        def left() -> int:
            return queue.unfinished(held=not self.running)

        while time.monotonic() < deadline:
            if not self.running:
                self.run_pending(ignore_debounce=True)
            if left() == 0:
                return True
            time.sleep(min(self.poll_interval, 0.05))
        return left() == 0

    async def adrain(self, timeout: float = 30.0) -> bool:
        """Async twin of ``drain``."""
        return await asyncio.to_thread(self.drain, timeout)

    def audit(
        self, user_id: str | None = None, *, limit: int = 100
    ) -> list[AuditEntry] | list[MemoryOp]:
        """The decisions log: the queue's audit table, or the in-memory log without a queue."""
        if self.queue is not None:
            return self.queue.audit(user_id, limit=limit)
        return [op for uid, _, op in reversed(self.audit_log) if user_id is None or uid == user_id][
            :limit
        ]

    def __enter__(self) -> MemoryWriter:
        return self.start() if self.mode == "background" else self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> MemoryWriter:
        if self.mode == "background":
            await asyncio.to_thread(self.start)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.stop)


def _batch_seed(user_id: str, thread_id: str, messages: Sequence[BaseMessage]) -> str:
    """Result-id seed of an unqueued batch: the same turns plan the same ids."""
    return uuid.uuid5(
        uuid.NAMESPACE_URL, "\x1f".join([user_id, thread_id, *message_ids_for(messages)])
    ).hex


def _check_ids(user_id: Any, thread_id: Any) -> None:
    if not isinstance(user_id, str) or not user_id.strip():
        raise MissingUserIdError(
            f"MemoryWriter.submit(user_id={user_id!r}): pass the id of the user these turns belong to."
        )
    if not isinstance(thread_id, str) or not thread_id:
        raise ConfigurationError(
            f"MemoryWriter.submit(thread_id={thread_id!r}): pass the conversation's thread id as a string."
        )
