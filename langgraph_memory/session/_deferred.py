"""The deadline for task writes that wait for their checkpoint (sync shells).

In LangGraph's ``durability="async"`` mode a task's regular writes may be
queued in memory and stored with the next write or read of the saver (see
``writes_may_wait_for_checkpoint`` in ``_prepared.py``); LangGraph saves the step's
checkpoint right after, so they normally ride in that ``put``'s statement.
When nothing follows (a run cancelled or timed out mid-step) this timer stores
them at most :data:`DEFERRED_WRITES_MAX_DELAY` seconds after they were queued.

It costs the hot path nothing: no thread start and no wake-up per step. One
daemon thread per saver polls every half deadline while writes are being
deferred, and sleeps without a timeout after :data:`IDLE_AFTER_SECONDS` without
any, until the next deferral wakes it.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langgraph_memory.session._core import PreparedWrites

logger = logging.getLogger(__name__)

# Queued task writes are stored at most this long after put_writes returned.
DEFERRED_WRITES_MAX_DELAY = 0.1
# The polling thread goes to sleep after this long without a deferral.
IDLE_AFTER_SECONDS = 2.0


def log_dropped(log: logging.Logger, p: PreparedWrites, error: BaseException) -> None:
    """Say that deferred task writes were dropped: their ``put_writes`` returned
    long ago, so the shell's log is the only place left to say so."""
    log.warning(
        "deferred task writes of thread_id=%r checkpoint_ns=%r task_id=%r were dropped: %s "
        "(checkpoint_id=%r)",
        *(p.key.thread_id, p.key.checkpoint_ns, p.rows[0][3], error, p.checkpoint_id),
    )


class DeferredWritesTimer:
    """Calls ``store`` when writes have waited :data:`DEFERRED_WRITES_MAX_DELAY`.

    The shell calls :meth:`deferred` with its bound ``store`` method when it
    queues writes, and :meth:`stored` when none are queued any more. ``store``
    is held weakly, so the timer never keeps a saver alive; the thread ends
    with :meth:`close` or when the last saver that deferred is gone (savers
    sharing one queue, such as ``with_allowlist`` clones, share one timer).
    """

    def __init__(self, *, max_delay: float = DEFERRED_WRITES_MAX_DELAY) -> None:
        self._store_ref: weakref.WeakMethod[Callable[[], None]] | None = None
        self.max_delay = max_delay
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._sleeping = False
        self._closed = False
        # monotonic time of the oldest queued write, None when none is queued
        self.oldest: float | None = None
        self._last_deferral = 0.0

    def deferred(self, store: Callable[[], None]) -> None:
        """Writes were queued (call after queueing them); ``store`` stores them."""
        now = time.monotonic()
        with self._lock:
            if self._closed:
                return
            current = self._store_ref() if self._store_ref is not None else None
            if current is None or current.__self__ is not store.__self__:  # type: ignore[attr-defined]
                self._store_ref = weakref.WeakMethod(store)
            if self.oldest is None:
                self.oldest = now
            self._last_deferral = now
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="langgraph-memory-deferred-writes", daemon=True
                )
                self._thread.start()
            elif self._sleeping:
                self._sleeping = False
                self._wake.set()

    def stored(self) -> None:
        """No queued writes are left."""
        self.oldest = None

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._wake.set()

    def _run(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
                idle = (
                    self.oldest is None
                    and time.monotonic() - self._last_deferral > IDLE_AFTER_SECONDS
                )
                if idle:
                    self._sleeping = True
                    self._wake.clear()
            if idle:
                self._wake.wait()
                continue
            time.sleep(self.max_delay / 2)
            oldest = self.oldest
            if oldest is None or time.monotonic() - oldest < self.max_delay:
                continue
            store = self._store_ref() if self._store_ref is not None else None
            if store is None:
                with self._lock:
                    self._thread = None
                return
            try:
                store()
            except Exception:  # the next read or write stores them; say why this one failed
                logger.warning("storing deferred task writes failed; retried later", exc_info=True)
            del store
