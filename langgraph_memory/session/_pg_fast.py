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
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

try:
    import psycopg
except ModuleNotFoundError as exc:  # the 'postgres' extra is not installed
    from langgraph_memory._extras import raise_missing_extra

    raise_missing_extra("postgres", "PostgresSaver", exc)

from langchain_core.runnables import RunnableConfig

from langgraph_memory.session import _sql_postgres as SQL
from langgraph_memory.session._channels import ENCODING_ITEMS, ListPlan
from langgraph_memory.session._core import (
    COMPACT_BLOCK,
    Fetch,
    PreparedPut,
    PreparedWrites,
    PutOutcome,
    SaverCore,
    Statement,
    Txn,
    drive,
    parse_config,
    version_key,
)
from langgraph_memory.session._reads import ChunkStore, RawCheckpoint

# The functions refuse a put that completes a block of list items when the core
# would compact it; NULL (this dialect has no SELECT_CHUNKS_IN_SPAN) never refuses.
COMPACT_EVERY = COMPACT_BLOCK if hasattr(SQL, "SELECT_CHUNKS_IN_SPAN") else None


class FastPathRefused(Exception):
    """The one-call function left this call to the core's transaction (nothing was written)."""


def is_refusal(exc: BaseException) -> bool:
    return isinstance(exc, psycopg.Error) and exc.sqlstate == SQL.FAST_PATH_REFUSED


class Blobs:
    """The binary values of one call, sent as one ``bytea[]``; rows refer to them
    by 1-based position (SQL arrays), so no blob is ever escaped into JSON."""

    def __init__(self) -> None:
        self.values: list[bytes] = []

    def ref(self, blob: bytes | None) -> int | None:
        if blob is None:
            return None
        self.values.append(blob)
        return len(self.values)

    def param(self) -> list[bytes] | None:
        return self.values or None


@dataclass(frozen=True, slots=True)
class PutCall:
    """One put packed for ``lgm_put_checkpoint``: its JSON rows and what it stores."""

    rows: dict[str, list[list[Any]]]
    body: int
    lists: tuple[tuple[str, str, ListPlan], ...]  # (channel, version, plan) in row order


def pack_put(p: PreparedPut, blobs: Blobs) -> PutCall:
    plain: list[list[Any]] = []
    lists: list[list[Any]] = []
    chunks: list[list[Any]] = []
    stored: list[tuple[str, str, ListPlan]] = []
    for pv in p.values:
        if pv.encoding != ENCODING_ITEMS:
            plain.append([pv.channel, pv.version, pv.encoding, pv.type, blobs.ref(pv.blob)])
            continue
        plan = pv.plan
        assert plan is not None
        lists.append(
            [pv.channel, pv.version, plan.base_version, plan.segments, len(plan.new_items)]
        )
        stored.append((pv.channel, pv.version, plan))
        for offset, count, c_type, c_blob in pv.chunks:
            chunks.append([len(lists), offset, count, c_type, blobs.ref(c_blob)])
    body = blobs.ref(p.body)
    assert body is not None
    return PutCall({"v": plain, "l": lists, "c": chunks}, body, tuple(stored))


def put_outcome(call: PutCall, firsts: Sequence[int] | None) -> PutOutcome:
    """The core's ``PutOutcome`` from the first item number the function gave each list."""
    outcome = PutOutcome(retention_due=False)
    for (channel, version, plan), first in zip(call.lists, firsts or (), strict=True):
        # The function stored exactly these ranges (the same resolution rule).
        outcome.stored_lists[channel] = (version, plan.resolve_ranges(int(first)))
    return outcome


def put_txn(p: PreparedPut, *, async_commit: bool) -> Txn[PutOutcome]:
    """``SaverCore.put_txn``'s common case as one function call (same rows, same outcome)."""
    key = p.key
    blobs = Blobs()
    call = pack_put(p, blobs)
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
            json.dumps(call.rows, separators=(",", ":")),
            blobs.param(),
            COMPACT_EVERY,
        ),
    )
    return put_outcome(call, rows[0][0])


def fast_writes(p: PreparedWrites) -> bool:
    """Whether ``lgm_put_writes`` can store these writes. Special writes (errors,
    interrupts) replace earlier rows and stay on the core's path."""
    return not p.replace and bool(p.rows)


def pack_writes(p: PreparedWrites, blobs: Blobs) -> list[list[Any]]:
    # Rows are (thread_id, ns, checkpoint_id, task_id, task_path, idx, channel, type, blob).
    return [[r[5], r[6], r[7], blobs.ref(r[8])] for r in p.rows]


def writes_txn(p: PreparedWrites, *, async_commit: bool) -> Callable[[], Txn[bool]] | None:
    """``SaverCore.writes_txn`` as one function call (its factory), or ``None`` when
    not :func:`fast_writes`. The transaction returns ``True`` (stored)."""
    if not fast_writes(p):
        return None
    return partial(_writes_call, p, async_commit)


def _writes_call(p: PreparedWrites, async_commit: bool) -> Txn[bool]:
    blobs = Blobs()
    rows = json.dumps(pack_writes(p, blobs), separators=(",", ":"))
    tid, ns, cid, task_id, task_path = p.rows[0][:5]
    yield Fetch(
        SQL.CALL_PUT_WRITES,
        (tid, ns, cid, task_id, task_path, async_commit, rows, blobs.param()),
    )
    return True


# ------------------------------------------------------------------ group commit (async saver)

BatchItem = PreparedPut | PreparedWrites


def batch_txn(
    items: Sequence[BatchItem], *, async_commit: bool, whole: bool = False
) -> Txn[list[Any]]:
    """Puts and regular writes of concurrent callers in one ``lgm_put_batch`` call.

    Returns one answer per item, in order: a ``PutOutcome`` (put stored),
    ``True`` (writes stored) or ``None`` (refused: that caller runs the core's
    transaction). Items go to the server sorted by thread id, so concurrent
    batches take thread row locks in one order (no deadlock between them).

    ``whole``: ``lgm_put_all`` instead, cheaper (no subtransaction per item)
    but all or nothing: if any item would be refused the call raises
    ``FAST_PATH_REFUSED`` (``FastPathRefused`` in the shells), nothing is
    stored, and the shell sends the batch again without ``whole``.
    """
    blobs = Blobs()
    order = sorted(range(len(items)), key=lambda i: items[i].key.thread_id)
    packed: list[list[Any]] = []
    calls: dict[int, PutCall] = {}
    for i in order:
        item = items[i]
        key = item.key
        if isinstance(item, PreparedPut):
            call = calls[i] = pack_put(item, blobs)
            packed.append(
                [
                    "p",
                    key.thread_id,
                    key.checkpoint_ns,
                    item.now,
                    item.checkpoint_id,
                    item.parent_id,
                    item.run_id,
                    item.type,
                    call.body,
                    item.metadata,
                    call.rows,
                ]
            )
        else:
            first = item.rows[0]
            packed.append(["w", first[0], first[1], first[2], first[3], first[4]])
            packed[-1].append(pack_writes(item, blobs))
    params: tuple[Any, ...] = (
        json.dumps(packed, separators=(",", ":")),
        blobs.param(),
        async_commit,
        COMPACT_EVERY,
    )
    if whole:
        # Which threads the function checks how (cheaper here than in SQL).
        put_threads = {i.key.thread_id for i in items if isinstance(i, PreparedPut)}
        write_threads = {i.key.thread_id for i in items} - put_threads
        params += (json.dumps([sorted(put_threads), sorted(write_threads)]),)
    rows = yield Fetch(SQL.CALL_PUT_ALL if whole else SQL.CALL_PUT_BATCH, params)
    answers: list[Any] = [None] * len(items)
    for i, answer in zip(order, rows[0][0], strict=True):
        if answer is None:
            continue
        answers[i] = put_outcome(calls[i], answer) if i in calls else True
    return answers


# ------------------------------------------------------------------ get_tuple in one statement


class PrefetchMiss(Exception):
    """The one-statement read did not hold what the core asked for; read the usual way."""


class LatestVersions:
    """Per (thread, ns), the [channel, version] pairs of the latest checkpoint this
    process wrote or read: what the next ``get_tuple`` will most likely need.

    Only a guess: the read checks it against the checkpoint it actually finds
    (another instance may have written a newer one) and misses if it differs.
    """

    def __init__(self, capacity: int = 10_000) -> None:
        self.capacity = capacity
        self._pairs: OrderedDict[tuple[str, str], list[list[str]]] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, thread_id: str, ns: str, versions: Mapping[str, Any]) -> None:
        pairs = [[ch, version_key(v)] for ch, v in versions.items()]
        with self._lock:
            self._pairs[(thread_id, ns)] = pairs
            self._pairs.move_to_end((thread_id, ns))
            while len(self._pairs) > self.capacity:
                self._pairs.popitem(last=False)

    def guess(self, thread_id: str, ns: str) -> list[list[str]]:
        with self._lock:
            return self._pairs.get((thread_id, ns), [])


def latest_txn(
    core: SaverCore, config: RunnableConfig, guess: list[list[str]]
) -> Txn[tuple[RawCheckpoint, ChunkStore] | None]:
    """``SaverCore.get_tuple_txn`` for the latest checkpoint, in one statement.

    The core's own generator runs unchanged; its queries are answered from the
    one prefetched row instead of the server. A query the row cannot answer
    (values outside ``guess``, list chunks the cache lacks, another checkpoint)
    raises :class:`PrefetchMiss` and the shell runs the core's transaction.
    """
    key = parse_config(config)
    rows = yield Fetch(
        SQL.SELECT_LATEST_PREFETCH,
        (key.thread_id, key.checkpoint_ns, json.dumps(guess, separators=(",", ":"))),
    )
    row = rows[0] if rows else None
    guessed = {(ch, ver) for ch, ver in guess}

    def answer(statement: Statement) -> Any:
        if type(statement) is not Fetch:
            raise PrefetchMiss
        if statement.sql == SQL.SELECT_LATEST_CHECKPOINT:
            return [row[:7]] if row is not None else []
        if row is None:
            raise PrefetchMiss
        if statement.sql == SQL.SELECT_CHANNEL_VALUES:
            wanted = {(ch, ver) for ch, ver in json.loads(statement.params[0])}
            if not wanted <= guessed:
                raise PrefetchMiss
            return [r for r in zip(*_columns(row, 7, 13), strict=True) if (r[0], r[1]) in wanted]
        if statement.sql == SQL.SELECT_WRITES and statement.params[2] == row[2]:
            return list(zip(*_columns(row, 13, 19), strict=True))
        raise PrefetchMiss

    return drive(core.get_tuple_txn(config), answer)


def _columns(row: Sequence[Any], start: int, stop: int) -> list[list[Any]]:
    """Parallel arrays of one aggregate (NULL when it matched no rows)."""
    arrays = row[start:stop]
    if arrays[0] is None:
        return [[] for _ in arrays]
    return list(arrays)


# ------------------------------------------------------------------ deferred task writes


class UnsettledThreads:
    """Per thread id, how many of its deferred task writes are queued or in flight
    (``get_tuple`` of a thread with none needs not store the queue first).
    Callers hold their own lock (sync) or run on one event loop (async)."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def add(self, thread_id: str) -> None:
        self._counts[thread_id] = self._counts.get(thread_id, 0) + 1

    def settle(self, thread_id: str) -> None:
        left = self._counts[thread_id] - 1
        if left:
            self._counts[thread_id] = left
        else:
            del self._counts[thread_id]

    def __contains__(self, thread_id: object) -> bool:
        return thread_id in self._counts
