"""The dialect-independent core of the session savers, written "sans I/O".

Every database operation is a generator that *yields* statements
(:class:`Execute`, :class:`ExecuteMany`, :class:`Fetch`) and receives their
results; it never touches a connection. The sync shell drives it with
``sqlite3``, the async shell with ``aiosqlite`` (a Postgres shell would drive the
same generators with psycopg), so validation, encoding, row mapping, retention
and every decision exist once. The SQL itself comes from a dialect module
(``_sql_sqlite.py``) passed in as ``sql``.

CPU-heavy work (serialising a put, decoding a read) happens outside the
transaction: ``prepare_*`` before it, ``build_*`` after it.

Where it lives (each module imports only those before it; none imports this one):

* ``_statements.py``: the statements (``Execute``, ``ExecuteMany``, ``Fetch``),
  ``Txn`` and ``drive``;
* ``_encoding.py``: config parsing (``CheckpointKey``, ``parse_config``),
  version keys, inline scalars, msgpack chunk merging;
* ``_prepared.py``: prepared puts and writes, ``PutOutcome``, when writes may
  wait for the next put (``EndedSteps``);
* ``_paging.py``: ``ListQuery`` and ``ListPager``;
* ``_activity.py`` and ``_rewrites.py``: per-process memory of each thread's
  activity row and of recent value rewrites;
* ``_core_base.py``: ``CoreBase``, the settings and state every part shares,
  and thread ownership;
* ``_core_writes.py``, ``_core_reads.py``, ``_core_maintenance.py``: the
  put/put_writes, read/list/DeltaChannel-history and deletion/erasure/
  retention/copy/reseal transactions, as the parts of :class:`SaverCore` below.

Every name the savers and tests import from this module is still importable
from here.
"""

from __future__ import annotations

from langgraph_memory.limits import MAX_THREAD_ID_BYTES
from langgraph_memory.session._activity import ACTIVITY_WRITE_SECONDS, ThreadActivity
from langgraph_memory.session._core_base import CoreBase
from langgraph_memory.session._core_maintenance import CoreMaintenance
from langgraph_memory.session._core_reads import ANCESTOR_BATCH, CoreReads
from langgraph_memory.session._core_writes import CoreWrites
from langgraph_memory.session._encoding import (
    COMPACT_BLOCK,
    INLINE_MAX_STR_CHARS,
    INLINE_VALUES_KEY,
    CheckpointKey,
    body_versions,
    checkpoint_config,
    is_inline_value,
    merge_msgpack_chunks,
    parse_config,
    parse_thread_id,
    version_key,
)
from langgraph_memory.session._paging import LIST_PAGE_SIZE, ListPager, ListQuery
from langgraph_memory.session._prepared import (
    DURABILITY_CONFIG_KEY,
    RUNTIME_CONFIG_KEY,
    STEP_ENDING_CHANNELS,
    EndedSteps,
    FastWrite,
    PreparedPut,
    PreparedValue,
    PreparedWrites,
    PutOutcome,
    writes_may_wait_for_checkpoint,
)
from langgraph_memory.session._rewrites import (
    RECENT_REWRITE_SECONDS,
    RECENT_REWRITE_THREADS,
    RecentRewrites,
    ValueRewrite,
)
from langgraph_memory.session._statements import (
    Execute,
    ExecuteMany,
    Fetch,
    Statement,
    T,
    Txn,
    drive,
)

__all__ = [
    "ACTIVITY_WRITE_SECONDS",
    "ANCESTOR_BATCH",
    "COMPACT_BLOCK",
    "DURABILITY_CONFIG_KEY",
    "INLINE_MAX_STR_CHARS",
    "INLINE_VALUES_KEY",
    "LIST_PAGE_SIZE",
    "MAX_THREAD_ID_BYTES",
    "RECENT_REWRITE_SECONDS",
    "RECENT_REWRITE_THREADS",
    "RUNTIME_CONFIG_KEY",
    "STEP_ENDING_CHANNELS",
    "CheckpointKey",
    "CoreBase",
    "CoreMaintenance",
    "CoreReads",
    "CoreWrites",
    "EndedSteps",
    "Execute",
    "ExecuteMany",
    "FastWrite",
    "Fetch",
    "ListPager",
    "ListQuery",
    "PreparedPut",
    "PreparedValue",
    "PreparedWrites",
    "PutOutcome",
    "RecentRewrites",
    "SaverCore",
    "Statement",
    "T",
    "ThreadActivity",
    "Txn",
    "ValueRewrite",
    "body_versions",
    "checkpoint_config",
    "drive",
    "is_inline_value",
    "merge_msgpack_chunks",
    "parse_config",
    "parse_thread_id",
    "version_key",
    "writes_may_wait_for_checkpoint",
]

# ------------------------------------------------------------------ the core


class SaverCore(CoreWrites, CoreReads, CoreMaintenance):
    """Everything a session saver does, minus the connection.

    Args:
        sql: the dialect module (``_sql_sqlite``) with the named statements.
        serde: LangGraph serializer (``dumps_typed``/``loads_typed``).
        cache_size: lists remembered per (thread, ns, channel) for delta puts and
            cache-served reads; 0 disables the cache.
        retention: what to keep; ``None`` keeps everything.
        redactor: redacts the messages of values and writes before they are stored.
        encryption: seals every stored blob and the metadata's content-bearing keys
            (``session/_sealing.py``); ``None`` stores them in clear.
    """
