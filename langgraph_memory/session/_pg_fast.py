"""One-call ``put`` and ``put_writes`` on Postgres: the common case in one round trip.

A put through the core's ``put_txn`` is ~8 statements and 3-4 round trips
(BEGIN, thread upsert, list checks, inserts, COMMIT), and most of its client
CPU is psycopg sending, waiting and parsing per statement. Here the same rows
go to one server-side function (``lgm_put_checkpoint`` / ``lgm_put_writes``,
installed by migration 2 in ``_sql_postgres.py``) as a few arrays: one
execute, run in its own implicit transaction.

The functions only take the happy path. Wherever the core would branch on what
it reads (a tombstone, a list base that retention removed, a version already
stored, a block of list items due for compaction) they raise
``SQL.FAST_PATH_REFUSED``, which rolls the call back, and the shell runs the
core's transaction instead: the core stays the one full implementation, and
this module only packs its prepared rows and unpacks the answer. Nothing here
runs I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Any

import psycopg

from langgraph_memory.session import _sql_postgres as SQL
from langgraph_memory.session._channels import ENCODING_ITEMS, ListPlan
from langgraph_memory.session._core import (
    COMPACT_BLOCK,
    Fetch,
    PreparedPut,
    PreparedWrites,
    PutOutcome,
    Txn,
)


class FastPathRefused(Exception):
    """The one-call function left this call to the core's transaction (nothing was written)."""


def is_refusal(exc: BaseException) -> bool:
    return isinstance(exc, psycopg.Error) and exc.sqlstate == SQL.FAST_PATH_REFUSED


def put_txn(p: PreparedPut, *, async_commit: bool) -> Txn[PutOutcome]:
    """``SaverCore.put_txn``'s common case as one function call (same rows, same outcome)."""
    key = p.key
    blobs: list[bytes] = []

    def blob_ref(blob: bytes | None) -> int | None:
        if blob is None:
            return None
        blobs.append(blob)
        return len(blobs)  # 1-based, as SQL arrays

    plain: list[list[Any]] = []
    lists: list[list[Any]] = []
    chunks: list[list[Any]] = []
    stored: list[tuple[str, str, ListPlan]] = []
    for pv in p.values:
        if pv.encoding != ENCODING_ITEMS:
            plain.append([pv.channel, pv.version, pv.encoding, pv.type, blob_ref(pv.blob)])
            continue
        plan = pv.plan
        assert plan is not None
        lists.append(
            [pv.channel, pv.version, plan.base_version, plan.segments, len(plan.new_items)]
        )
        stored.append((pv.channel, pv.version, plan))
        for offset, count, c_type, c_blob in pv.chunks:
            chunks.append([len(lists), offset, count, c_type, blob_ref(c_blob)])
    rows = yield Fetch(
        SQL.CALL_PUT_CHECKPOINT,
        (
            key.thread_id,
            key.checkpoint_ns,
            p.now,
            async_commit,
            p.checkpoint_id,
            p.parent_id,
            p.run_id,
            p.type,
            p.body,
            p.metadata,
            json.dumps({"v": plain, "l": lists, "c": chunks}, separators=(",", ":")),
            blobs or None,
            COMPACT_BLOCK,
        ),
    )
    firsts: list[int] = rows[0][0] or []
    outcome = PutOutcome(retention_due=False)
    for (channel, version, plan), first in zip(stored, firsts, strict=True):
        # The function stored exactly these ranges (the same resolution rule).
        outcome.stored_lists[channel] = (version, plan.resolve_ranges(int(first)))
    return outcome


def writes_txn(p: PreparedWrites, *, async_commit: bool) -> Callable[[], Txn[bool]] | None:
    """``SaverCore.writes_txn`` as one function call (its factory), or ``None`` for
    special writes (errors, interrupts), which replace earlier rows and stay on
    the core's path. The transaction returns ``True`` (stored)."""
    if p.replace or not p.rows:
        return None
    return partial(_writes_call, p, async_commit)


def _writes_call(p: PreparedWrites, async_commit: bool) -> Txn[bool]:
    # Rows are (thread_id, ns, checkpoint_id, task_id, task_path, idx, channel, type, blob).
    tid, ns, cid, task_id, task_path = p.rows[0][:5]
    described = json.dumps([[r[5], r[6], r[7]] for r in p.rows], separators=(",", ":"))
    yield Fetch(
        SQL.CALL_PUT_WRITES,
        (tid, ns, cid, task_id, task_path, async_commit, described, [r[8] for r in p.rows]),
    )
    return True
