"""When this process last wrote each thread's activity row (:class:`ThreadActivity`).

The row is what the idle TTL measures; the same entry counts the puts since
the thread's last ``keep_last`` pass (``RetentionPolicy.apply_every``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

# ------------------------------------------------------------------ thread activity

# A thread's activity time (what the idle TTL measures) is written at most this
# often per process; the puts in between only *read* the tombstone, which
# dirties no page. The TTL is days, so a one-second lag is invisible, and a put
# saves a page write in the log.
ACTIVITY_WRITE_SECONDS = 1.0


class ThreadActivity:
    """Per-process memory of when each thread's row was last written, and how many
    puts it has had since its last retention pass (LRU-bounded)."""

    def __init__(self, capacity: int = 10_000) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def needs_write(self, thread_id: str, now: float) -> bool:
        with self._lock:
            entry = self._entries.get(thread_id)
            return entry is None or now - entry[0] >= ACTIVITY_WRITE_SECONDS

    def record_put(self, thread_id: str, now: float, *, wrote: bool) -> int:
        """Count a committed put; returns puts since the last retention pass."""
        with self._lock:
            entry = self._entries.get(thread_id)
            if entry is None:
                entry = self._entries[thread_id] = [now, 0.0]
            self._entries.move_to_end(thread_id)
            if wrote:
                entry[0] = now
            entry[1] += 1
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
            return int(entry[1])

    def reset_puts(self, thread_id: str) -> None:
        with self._lock:
            entry = self._entries.get(thread_id)
            if entry is not None:
                entry[1] = 0.0

    def forget(self, thread_id: str) -> None:
        with self._lock:
            self._entries.pop(thread_id, None)
