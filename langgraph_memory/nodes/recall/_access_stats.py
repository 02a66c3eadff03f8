"""Access statistics off the reply path: the ``store.touch`` worker and its flushes."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

# The recall node's logger, by the name it has always had (log filters, tests).
logger = logging.getLogger("langgraph_memory.nodes.recall")


class _AccessStatsWorker:
    """Runs ``store.touch`` off the reply path; failures are logged, never raised.

    One worker thread serialises touches (they are cheap, small writes), and
    async touches are tasks kept referenced until done so they are not
    garbage-collected mid-flight.
    """

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._futures: set[Future[None]] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def submit(self, store: Any, user_id: str, ids: Sequence[str], kwargs: dict[str, Any]) -> None:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lgm-touch")
            future = self._executor.submit(self._touch, store, user_id, tuple(ids), kwargs)
            self._futures.add(future)
        future.add_done_callback(self._futures.discard)

    @staticmethod
    def _touch(store: Any, user_id: str, ids: tuple[str, ...], kwargs: dict[str, Any]) -> None:
        try:
            store.touch(user_id, ids, **kwargs)
        except Exception:  # access stats are best effort; the reply must not fail
            logger.warning("recall: store.touch failed for %d memories", len(ids), exc_info=True)

    def asubmit(self, store: Any, user_id: str, ids: Sequence[str], kwargs: dict[str, Any]) -> None:
        async def touch() -> None:
            try:
                await store.atouch(user_id, tuple(ids), **kwargs)
            except Exception:
                logger.warning(
                    "recall: store.atouch failed for %d memories", len(ids), exc_info=True
                )

        task = asyncio.get_running_loop().create_task(touch())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def flush(self, timeout: float | None = 10.0) -> None:
        with self._lock:
            pending = list(self._futures)
        for future in pending:
            future.result(timeout=timeout)

    async def aflush(self) -> None:
        pending = [t for t in self._tasks if not t.done()]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        await asyncio.to_thread(self.flush)


_ACCESS_STATS = _AccessStatsWorker()


def flush_access_stats(timeout: float | None = 10.0) -> None:
    """Wait until every background ``touch`` started by recall has finished.

    Useful before closing a store or at the end of a test; the reply never waits on it.
    """
    _ACCESS_STATS.flush(timeout)


async def aflush_access_stats() -> None:
    """Async twin of ``flush_access_stats`` (also waits for ``atouch`` tasks)."""
    await _ACCESS_STATS.aflush()
