"""Keep freed process memory out of embedded Chroma's files.

Chroma's embedded engine keeps each collection's HNSW graph in buffers from
``malloc`` and persists them whole (``data_level0.bin``), including bytes it
never wrote: whatever this process freed there before. Measured here: in 8 of
100 runs of the forget-user test under CPU load, a forgotten user's memory JSON
(freed SQLite page-cache memory) reappeared inside *another* user's
``data_level0.bin``, so text would reach Chroma although we never give it any.

glibc can fill memory when it is handed out and when it is freed
(``mallopt(M_PERTURB)``, the runtime form of ``MALLOC_PERTURB_``): with it on,
the same test ran 300 times without a leak. It is process-wide, so
``ChromaMemoryStore.embedded`` turns it on once (``scrub_heap=False`` opts out)
and logs that it did. A Chroma *server* runs in its own process: set
``MALLOC_PERTURB_`` in its environment.
"""

from __future__ import annotations

import ctypes
import logging
import sys
import threading

logger = logging.getLogger(__name__)

_M_PERTURB = -6  # glibc <malloc.h>
_PERTURB_BYTE = 0xA5
_lock = threading.Lock()
_state: bool | None = None  # None: not tried yet


def scrub_freed_memory() -> bool:
    """Ask glibc to overwrite memory on malloc and free; True when it is on.

    False (and a one-time warning) where the C library has no ``M_PERTURB``
    (not Linux, or musl): there, start the process with ``MALLOC_PERTURB_``-like
    tooling of that allocator if the guarantee matters.
    """
    global _state
    with _lock:
        if _state is None:
            _state = _enable()
            if _state:
                logger.info("langgraph-memory: glibc M_PERTURB on (freed memory is overwritten)")
            else:
                logger.warning(
                    "langgraph-memory: could not turn on glibc M_PERTURB; embedded Chroma's "
                    "HNSW files may contain stale process memory"
                )
        return _state


def _enable() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # musl's mallopt is a stub returning 0; glibc returns 1 on success.
    return bool(mallopt(_M_PERTURB, _PERTURB_BYTE) == 1)
