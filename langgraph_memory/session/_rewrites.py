"""Rewriting a thread's stored values, and re-applying a rewrite to what is stored next.

:class:`ValueRewrite` is what ``SaverCore.rewrite_values_txn``
(``_core_maintenance.py``) applies to a thread's rows (the recall erasure of
``nodes/recall_erasure.py``); :class:`RecentRewrites` re-applies it, for a
while, to the puts and writes of a run that still holds the old values.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any, Protocol


class ValueRewrite(Protocol):
    """What :meth:`SaverCore.rewrite_values_txn` applies to a thread's stored values."""

    def may_touch(self, blob: bytes) -> bool:
        """Whether a plain msgpack blob may hold something to rewrite (a cheap
        byte test; ``False`` skips decoding it)."""
        ...

    def __call__(self, value: Any) -> Any:
        """The rewritten value, or ``value`` itself (the same object) when unchanged."""
        ...


# A run in progress when a thread's values are rewritten still holds the old
# values in memory, and its next put would store them again (the rewrite drops
# the thread's list cache, so that put stores every item afresh): a memory the
# writer deletes from inside a turn (sync mode) came back in the same run's next
# checkpoint. So, in this process, the thread's puts and writes pass through the
# rewrite for a while after it ran; a run longer than this, or in another
# process, is not covered (README, "Recall blocks already saved").
RECENT_REWRITE_SECONDS = 3600.0
RECENT_REWRITE_THREADS = 10_000


class RecentRewrites:
    """The rewrites applied to each thread lately, re-applied to what is stored next."""

    def __init__(self) -> None:
        self._by_thread: OrderedDict[str, list[tuple[float, ValueRewrite]]] = OrderedDict()
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        return bool(self._by_thread)

    def add(self, thread_id: str, rewrite: ValueRewrite) -> None:
        now = time.monotonic()
        with self._lock:
            kept = [e for e in self._by_thread.pop(thread_id, []) if e[0] > now]
            self._by_thread[thread_id] = [*kept, (now + RECENT_REWRITE_SECONDS, rewrite)]
            while len(self._by_thread) > RECENT_REWRITE_THREADS:
                self._by_thread.popitem(last=False)

    def apply(self, thread_id: str, value: Any) -> Any:
        with self._lock:
            entries = self._by_thread.get(thread_id)
            if not entries:
                return value
            now = time.monotonic()
            live = [rewrite for until, rewrite in entries if until > now]
            if len(live) < len(entries):
                if live:
                    self._by_thread[thread_id] = [e for e in entries if e[0] > now]
                else:
                    del self._by_thread[thread_id]
        for rewrite in live:
            value = rewrite(value)
        return value

    def discard(self, thread_id: str, rewrite: ValueRewrite) -> None:
        """Take back a rewrite whose transaction failed."""
        with self._lock:
            entries = [e for e in self._by_thread.get(thread_id, []) if e[1] is not rewrite]
            if entries:
                self._by_thread[thread_id] = entries
            else:
                self._by_thread.pop(thread_id, None)

    def forget(self, thread_id: str) -> None:
        with self._lock:
            self._by_thread.pop(thread_id, None)
