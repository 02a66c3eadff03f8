"""Process-wide worker pools, one per purpose, created on first use."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

_POOLS: dict[str, ThreadPoolExecutor] = {}
_LOCK = threading.Lock()


def shared_pool(name: str, workers: int = 4) -> ThreadPoolExecutor:
    """The pool for ``name`` (threads named ``lgm-<name>``), shared by every caller."""
    with _LOCK:
        pool = _POOLS.get(name)
        if pool is None:
            pool = _POOLS[name] = ThreadPoolExecutor(
                max_workers=workers, thread_name_prefix=f"lgm-{name}"
            )
        return pool
