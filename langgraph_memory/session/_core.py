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
"""

from __future__ import annotations

import copy
import json
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Protocol, TypeVar, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    PendingWrite,
    get_serializable_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.types import ERROR, INTERRUPT, RESUME

from langgraph_memory.config import RetentionPolicy
from langgraph_memory.encryption import EncryptionKeys
from langgraph_memory.errors import (
    ConfigurationError,
    ThreadDeletedError,
)
from langgraph_memory.limits import (
    MAX_CHECKPOINT_ID_BYTES,
    MAX_CHECKPOINT_NS_BYTES,
    MAX_THREAD_ID_BYTES,
)
from langgraph_memory.session._channels import (
    ENCODING_EMPTY,
    ENCODING_ITEMS,
    ENCODING_VALUE,
    MAX_CHUNK_ITEMS,
    CachedList,
    ListCache,
    ListPlan,
    Range,
    fingerprint,
    full_list_plan,
    plan_list_encoding,
    ranges_from_json,
    ranges_length,
    ranges_to_json,
)
from langgraph_memory.session._inputs import (
    check_before,
    check_filter,
    check_limit,
    check_put_arguments,
    check_text,
    check_writes,
    checked_id,
    checked_key,
    serialization_refused,
)
from langgraph_memory.session._owner import OwnerCache, config_user_id, ownership_refused
from langgraph_memory.session._reads import (
    ChunkStore,
    LazyChannelValues,
    RawCheckpoint,
    RawValue,
    msgpack_array_header,
)
from langgraph_memory.session._redaction import MessageRedactor
from langgraph_memory.session._retention import (
    CheckpointSkeleton,
    StorageStats,
    StoredValue,
    SweepReport,
    ThreadStats,
    close_over_delta_history,
    keep_newest,
    plan_garbage,
    threads_to_evict,
)
from langgraph_memory.session._sealing import RowSealer

T = TypeVar("T")


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


# ------------------------------------------------------------------ statements


@dataclass(frozen=True, slots=True)
class Execute:
    """Run one statement; the shell sends back its rowcount."""

    sql: str
    params: Sequence[Any] = ()


@dataclass(frozen=True, slots=True)
class ExecuteMany:
    """Run one statement per parameter row; the shell sends back the total rowcount
    (``None`` or -1 if its driver cannot tell)."""

    sql: str
    rows: Sequence[Sequence[Any]]


@dataclass(frozen=True, slots=True)
class Fetch:
    """Run a query; the shell sends back all rows as a list of tuples."""

    sql: str
    params: Sequence[Any] = ()


Statement = Execute | ExecuteMany | Fetch
Txn = Generator[Statement, Any, T]

# How many rows one list() page reads before the lock is released and rows are yielded.
LIST_PAGE_SIZE = 100
# Ancestors fetched per step of the DeltaChannel history walk.
ANCESTOR_BATCH = 256

# Small chunks inside each block of this many item numbers are merged once
# the block is complete (see SaverCore._compact_block).
COMPACT_BLOCK = 32

# Small scalar channel values (a counter, a flag, a short string, a branch
# channel's None) travel inside the checkpoint body under this key, every put,
# instead of as value rows: a chat turn's put writes ~5.4 rows instead of ~6.6
# and dirties ~8 pages instead of ~9.8, and reads look up fewer rows (the
# official Postgres saver inlines primitives the same way). Repeating them in
# every body costs a few bytes each; a channel whose version did not change
# needs no row shared with an older checkpoint. Migration 3 (SQLite) / 5
# (Postgres) makes older releases, which would not know the key, refuse.
INLINE_VALUES_KEY = "lgm_inline"
INLINE_MAX_STR_CHARS = 256
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def is_inline_value(value: Any) -> bool:
    """Whether ``value`` is stored in the checkpoint body. Exact types only: a
    subclass (IntEnum, StrEnum) keeps its row and its serializer's type tag."""
    kind = type(value)
    if value is None or kind is bool or kind is float:
        return True
    if kind is int:
        return bool(_INT64_MIN <= value <= _INT64_MAX)
    return kind is str and len(value) <= INLINE_MAX_STR_CHARS


def _msgpack_array_body(blob: bytes) -> tuple[int, bytes] | None:
    """(element count, element bytes) of a msgpack array, or None if not an array."""
    if not blob:
        return None
    head = blob[0]
    if 0x90 <= head <= 0x9F:
        return head & 0x0F, blob[1:]
    if head == 0xDC:
        return int.from_bytes(blob[1:3], "big"), blob[3:]
    if head == 0xDD:
        return int.from_bytes(blob[1:5], "big"), blob[5:]
    return None


def merge_msgpack_chunks(
    rows: Sequence[Sequence[Any]],
) -> tuple[int, int, str, bytes] | None:
    """One chunk ``(seq_lo, seq_hi, "msgpack", blob)`` from contiguous msgpack chunks.

    Returns None (do not merge) unless every row is a msgpack array whose
    length matches its ``[seq_lo, seq_hi)`` and the rows are contiguous.
    """
    bodies: list[bytes] = []
    total = 0
    expected_lo = int(rows[0][0])
    for seq_lo, seq_hi, c_type, blob in rows:
        if c_type != "msgpack" or int(seq_lo) != expected_lo:
            return None
        parsed = _msgpack_array_body(bytes(blob))
        if parsed is None or parsed[0] != int(seq_hi) - int(seq_lo):
            return None
        bodies.append(parsed[1])
        total += parsed[0]
        expected_lo = int(seq_hi)
    header = msgpack_array_header(total)
    return int(rows[0][0]), expected_lo, "msgpack", header + b"".join(bodies)


# ------------------------------------------------------------------ config parsing


@dataclass(frozen=True, slots=True)
class CheckpointKey:
    """``configurable`` of a RunnableConfig, validated."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str | None

    def config(self, checkpoint_id: str | None = None) -> RunnableConfig:
        return {
            "configurable": {
                "thread_id": self.thread_id,
                "checkpoint_ns": self.checkpoint_ns,
                "checkpoint_id": checkpoint_id or self.checkpoint_id,
            }
        }


def checkpoint_config(thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": checkpoint_ns,
            "checkpoint_id": checkpoint_id,
        }
    }


def parse_thread_id(thread_id: Any) -> str:
    if thread_id is None or isinstance(thread_id, bool):
        raise ConfigurationError(
            f"thread_id={thread_id!r} is not usable; pass a non-empty string, e.g. "
            "config={'configurable': {'thread_id': 'user-42-chat'}}."
        )
    if not isinstance(thread_id, (str, int, uuid.UUID)):
        raise ConfigurationError(
            f"thread_id={thread_id!r} ({type(thread_id).__name__}) is not usable; "
            "pass a string (ints and UUIDs are converted)."
        )
    text = str(thread_id)
    if not text:
        raise ConfigurationError(
            "thread_id='' is empty; pass a non-empty string, e.g. 'user-42-chat'."
        )
    return checked_id("thread_id", text, MAX_THREAD_ID_BYTES)


def parse_config(config: RunnableConfig | None, *, what: str = "config") -> CheckpointKey:
    """Validate ``config["configurable"]`` and return its thread, namespace and id."""
    # Fast path (every put/put_writes): plain dicts with a str thread id skip the
    # ABC isinstance checks, ~3 us per call; anything else takes the full checks.
    configurable = config.get("configurable") if type(config) is dict else None
    if type(configurable) is dict:
        thread_id = configurable.get("thread_id")
        ns = configurable.get("checkpoint_ns") or ""
        checkpoint_id = configurable.get("checkpoint_id")
        if (
            type(thread_id) is str
            and thread_id
            and type(ns) is str
            and (checkpoint_id is None or type(checkpoint_id) is str)
        ):
            checked_key(thread_id, ns, checkpoint_id or None)
            return CheckpointKey(thread_id, ns, checkpoint_id or None)
    if not isinstance(config, Mapping):
        raise ConfigurationError(
            f"{what}={config!r} is not a RunnableConfig; pass "
            "{'configurable': {'thread_id': ...}}."
        )
    configurable = config.get("configurable")
    if not isinstance(configurable, Mapping) or "thread_id" not in configurable:
        raise ConfigurationError(
            f"{what} has no configurable.thread_id (got {configurable!r}); pass "
            "{'configurable': {'thread_id': ...}}."
        )
    thread_id = parse_thread_id(configurable["thread_id"])
    ns = configurable.get("checkpoint_ns") or ""
    if not isinstance(ns, str):
        raise ConfigurationError(
            f"{what} checkpoint_ns={ns!r} must be a string ('' for the root graph)."
        )
    checkpoint_id = configurable.get("checkpoint_id")
    if checkpoint_id is not None and not isinstance(checkpoint_id, str):
        raise ConfigurationError(
            f"{what} checkpoint_id={checkpoint_id!r} must be a string id returned by put()."
        )
    checked_key(thread_id, ns, checkpoint_id or None)
    return CheckpointKey(thread_id, ns, checkpoint_id or None)


def version_key(version: Any) -> str:
    """Versions may be int, float or str; rows store them as text."""
    return version if isinstance(version, str) else str(version)


def body_versions(body: Mapping[str, Any]) -> dict[str, str]:
    """A decoded checkpoint body's channel versions, as rows key them."""
    return {ch: version_key(v) for ch, v in body.get("channel_versions", {}).items()}


# ------------------------------------------------------------------ put preparation


@dataclass(slots=True)
class PreparedValue:
    channel: str
    version: str
    encoding: str
    type: str | None = None
    blob: bytes | None = None
    plan: ListPlan | None = None
    # chunks of new items, each (offset into plan.new_items, count, type, blob)
    chunks: list[tuple[int, int, str, bytes]] = field(default_factory=list)
    value: Any = None
    # Lists: the item number the new items will most likely start at (from the
    # cache); the one-statement put assumes it and the database checks it.
    next_seq: int = 0


@dataclass(slots=True)
class PreparedPut:
    key: CheckpointKey
    checkpoint_id: str
    parent_id: str | None
    run_id: str | None
    type: str
    body: bytes
    metadata: str
    values: list[PreparedValue]
    now: float
    # The checkpoint's channel versions whose values live in rows (not inline).
    row_versions: dict[str, str]
    # Write the thread's activity row in this put (else only read its tombstone).
    touch_thread: bool = True


@dataclass(slots=True)
class PutOutcome:
    retention_due: bool
    # channel -> resolved (ranges, version) for list values actually stored / reused
    stored_lists: dict[str, tuple[str, tuple[Range, ...]]] = field(default_factory=dict)
    conflicted: set[str] = field(default_factory=set)
    # channel -> the next free item number after this put, where known
    next_seqs: dict[str, int] = field(default_factory=dict)


# A write as rows of the dialect's one-statement path (``put_rows``,
# ``writes_rows``) and what the write returns once they are stored.
FastWrite = tuple[list[tuple[Any, ...]], Any]


# Keys LangGraph puts in the config of the saver calls its loop makes (langgraph's
# CONFIG_KEY_DURABILITY and CONFIG_KEY_RUNTIME; their module is private, so they are
# spelled here). The durability key is there only when a run names its mode; a run
# that does not runs in LangGraph's default, "async".
DURABILITY_CONFIG_KEY = "__pregel_durability"
RUNTIME_CONFIG_KEY = "__pregel_runtime"


def writes_may_wait_for_checkpoint(
    config: RunnableConfig, writes: Sequence[tuple[str, Any]]
) -> bool:
    """Whether a task's writes may be stored with the next write instead of at once.

    Only when LangGraph says so: a run in ``durability="async"`` (LangGraph's
    default) does not wait for ``put_writes`` at all, and saves the step's
    checkpoint right after the step's writes, so a shell can store them in
    that ``put``'s statement (one commit, or one round trip, instead of two).
    Never for special writes (errors, interrupts, resumes, scheduled tasks: a
    run may end right after them), in ``sync`` mode, or for callers outside
    LangGraph's loop (no runtime in the config): those are stored at once.
    """
    configurable = config.get("configurable") or {}
    if RUNTIME_CONFIG_KEY not in configurable or not writes:
        return False
    if configurable.get(DURABILITY_CONFIG_KEY, "async") != "async":
        return False
    return not any(channel in WRITES_IDX_MAP for channel, _ in writes)


# Writes after which LangGraph saves no checkpoint for the step (it raised, or was
# interrupted): a sibling task's writes that come later must not wait for a put.
STEP_ENDING_CHANNELS = frozenset((ERROR, INTERRUPT))


class EndedSteps:
    """The checkpoints whose step lately got an error or interrupt write here.

    A step's writes reach the saver from several worker threads (or tasks) in
    any order; when the failing task's write comes first, its siblings' writes
    come after it with no ``put`` to follow, so they are stored at once
    (``PreparedWrites.may_wait`` is False). LRU-bounded, thread-safe.
    """

    def __init__(self, capacity: int = 1024) -> None:
        self.capacity = capacity
        self._steps: OrderedDict[tuple[str, str, str], None] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, step: tuple[str, str, str]) -> None:
        with self._lock:
            self._steps[step] = None
            self._steps.move_to_end(step)
            while len(self._steps) > self.capacity:
                self._steps.popitem(last=False)

    def discard(self, step: tuple[str, str, str]) -> None:
        with self._lock:
            self._steps.pop(step, None)

    def __contains__(self, step: tuple[str, str, str]) -> bool:
        return step in self._steps


@dataclass(slots=True)
class PreparedWrites:
    key: CheckpointKey
    checkpoint_id: str
    replace: bool
    rows: list[tuple[Any, ...]]
    now: float
    # see writes_may_wait_for_checkpoint
    may_wait: bool = False

    @property
    def step(self) -> tuple[str, str, str]:
        """The step these writes belong to, as ``EndedSteps`` keys it."""
        return (self.key.thread_id, self.key.checkpoint_ns, self.checkpoint_id)


@dataclass(frozen=True, slots=True)
class ListQuery:
    thread_id: str | None
    checkpoint_ns: str | None
    checkpoint_id: str | None
    before_id: str | None
    metadata_filter: Mapping[str, Any] | None
    limit: int | None
    # (thread id, user id) to check before the first page (session/_owner.py).
    owner: tuple[str, str] | None = None


class ListPager:
    """Keyset paging of one ``list()`` call: the size of the next page and where
    it starts. Shells loop ``while (size := pager.next_size()) is not None``."""

    def __init__(self, query: ListQuery) -> None:
        self.query = query
        self.remaining = query.limit
        self.after: tuple[str, str, str] | None = None
        self.finished = False

    def next_size(self) -> int | None:
        if self.finished or (self.remaining is not None and self.remaining <= 0):
            return None
        return LIST_PAGE_SIZE if self.remaining is None else min(LIST_PAGE_SIZE, self.remaining)

    def advance(self, raws: Sequence[RawCheckpoint], size: int) -> None:
        if len(raws) < size:
            self.finished = True
        if raws:
            last = raws[-1]
            self.after = (last.checkpoint_id, last.thread_id, last.checkpoint_ns)
        if self.remaining is not None:
            self.remaining -= len(raws)


def _json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


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


# ------------------------------------------------------------------ the core


class SaverCore:
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

    def __init__(
        self,
        sql: ModuleType,
        serde: SerializerProtocol,
        *,
        cache_size: int = 256,
        retention: RetentionPolicy | None = None,
        redactor: MessageRedactor | None = None,
        encryption: EncryptionKeys | None = None,
    ) -> None:
        if cache_size < 0:
            raise ConfigurationError(f"cache_size={cache_size!r}; use an integer >= 0.")
        if retention is not None and not isinstance(retention, RetentionPolicy):
            raise ConfigurationError(
                f"retention={retention!r}; pass a langgraph_memory.config.RetentionPolicy."
            )
        self.sql = sql
        self.serde = serde
        self.cache = ListCache(cache_size)
        self.retention = retention
        # The savers' redact_messages option (session/_redaction.py).
        self.redactor = redactor
        self.sealer = RowSealer(encryption)
        self.activity = ThreadActivity()
        self.owners = OwnerCache()
        self.ended_steps = EndedSteps()
        self.recent_rewrites = RecentRewrites()
        # Dialects whose write lock covers the whole database may skip the
        # thread-row write on most puts (it doubles as a per-thread lock elsewhere).
        self._single_writer = bool(getattr(sql, "SINGLE_WRITER", False))

    def with_serde(self, serde: SerializerProtocol) -> SaverCore:
        """The same core (SQL, cache, retention) with another serializer."""
        clone = copy.copy(self)
        clone.serde = serde
        return clone

    # ---------------------------------------------------------------- migrations

    # The schema's transactions come from the shared runner (``_migrations.py``),
    # adapted in ``_shell.migration_steps``.

    # ---------------------------------------------------------------- ownership

    def owner_check(self, config: RunnableConfig | None) -> tuple[str, str] | None:
        """(thread id, user id) to check before this call, or ``None`` when the call
        names no user or no thread, or this process confirmed that user recently."""
        user_id = config_user_id(config)
        if user_id is None:
            return None
        configurable = config.get("configurable") if isinstance(config, Mapping) else None
        raw_thread = configurable.get("thread_id") if isinstance(configurable, Mapping) else None
        if raw_thread is None:
            return None
        thread_id = parse_thread_id(raw_thread)
        if self.owners.confirmed(thread_id, user_id):
            return None
        return thread_id, user_id

    def owner_txn(self, thread_id: str, user_id: str, *, claim: bool) -> Txn[bool]:
        """Check (and, for a write, claim) the thread's owner; True once ``user_id``
        is its owner. Raises ``ThreadOwnershipError`` for another user's thread."""
        sql = self.sql
        if claim:
            now = time.time()
            yield Execute(sql.CLAIM_THREAD_OWNER, (thread_id, now, now, user_id))
        rows = yield Fetch(sql.SELECT_THREAD_OWNER, (thread_id,))
        owner = rows[0][0] if rows else None
        if owner is None:
            return False  # unowned (a read, or a tombstoned thread): nothing to confirm
        if owner != user_id:
            raise ownership_refused(thread_id, owner, user_id)
        return True

    def owned_threads_txn(self, user_id: str) -> Txn[list[str]]:
        rows = yield Fetch(self.sql.SELECT_OWNED_THREADS, (user_id,))
        return [str(r[0]) for r in rows]

    # ---------------------------------------------------------------- put

    def prepare_put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> PreparedPut:
        key = parse_config(config)
        check_put_arguments(checkpoint, metadata, new_versions)
        checkpoint_id = checkpoint.get("id")
        if not isinstance(checkpoint_id, str) or not checkpoint_id:
            raise ConfigurationError(
                f"checkpoint id {checkpoint_id!r} must be a non-empty string (LangGraph's uuid6 id)."
            )
        checked_id("checkpoint id", checkpoint_id, MAX_CHECKPOINT_ID_BYTES)
        values = checkpoint.get("channel_values") or {}
        if self.redactor is not None:
            values = {ch: self.redactor.value(v) for ch, v in values.items()}
        if self.recent_rewrites:
            values = {ch: self.recent_rewrites.apply(key.thread_id, v) for ch, v in values.items()}
        body = {k: v for k, v in checkpoint.items() if k != "channel_values"}
        versions = checkpoint.get("channel_versions") or {}
        inline = {ch: v for ch, v in values.items() if ch in versions and is_inline_value(v)}
        if inline:
            body[INLINE_VALUES_KEY] = inline
        try:
            type_, blob = self.serde.dumps_typed(body)
        except (TypeError, ValueError) as exc:
            raise serialization_refused("the checkpoint", body, exc) from exc
        sealer = self.sealer
        ident = (key.thread_id, key.checkpoint_ns)
        type_, blob = sealer.seal(type_, blob, "checkpoint", *ident, checkpoint_id)
        meta = get_serializable_checkpoint_metadata(config, metadata)
        try:
            meta_text = sealer.seal_metadata(meta, _json_default, *ident, checkpoint_id)
        except (TypeError, ValueError) as exc:
            raise serialization_refused("metadata", metadata, exc) from exc
        check_text("metadata", meta_text)
        run_id = meta.get("run_id")
        now = time.time()
        prepared: list[PreparedValue] = []
        for channel, version in new_versions.items():
            ver = version_key(version)
            if channel not in values or channel in inline:
                # A version without a value (a consumed trigger or branch
                # channel, a third of a chat turn's rows) stores no row: a
                # read finds no row and leaves the channel out, as it would
                # for an "empty" row. One index leaf fewer per commit:
                # 20x50 sync, WAL frames per turn 50 -> 46, +2% turns/s.
                continue
            value = values[channel]
            if type(value) is list:
                cached = self.cache.get((key.thread_id, key.checkpoint_ns, channel))
                plan = plan_list_encoding(value, cached)
                pv = self._prepared_list(key, channel, ver, plan, value)
                if cached is not None:
                    pv.next_seq = cached.guess_next_seq()
                prepared.append(pv)
            else:
                try:
                    v_type, v_blob = self.serde.dumps_typed(value)
                except (TypeError, ValueError) as exc:
                    raise serialization_refused(f"channel {channel!r}", value, exc) from exc
                v_type, v_blob = sealer.seal(v_type, v_blob, "value", *ident, channel, ver)
                prepared.append(PreparedValue(channel, ver, ENCODING_VALUE, v_type, v_blob))
        return PreparedPut(
            key=key,
            checkpoint_id=checkpoint_id,
            parent_id=key.checkpoint_id,
            run_id=str(run_id) if run_id is not None else None,
            type=type_,
            body=blob,
            metadata=meta_text,
            values=prepared,
            now=now,
            row_versions={ch: version_key(v) for ch, v in versions.items() if ch not in inline},
            touch_thread=not self._single_writer or self.activity.needs_write(key.thread_id, now),
        )

    def _prepared_list(
        self, key: CheckpointKey, channel: str, version: str, plan: ListPlan, value: list[Any]
    ) -> PreparedValue:
        chunks: list[tuple[int, int, str, bytes]] = []
        new_items = plan.new_items
        for start in range(0, len(new_items), MAX_CHUNK_ITEMS):
            part = list(new_items[start : start + MAX_CHUNK_ITEMS])
            try:
                c_type, c_blob = self.serde.dumps_typed(part)
            except (TypeError, ValueError) as exc:
                raise serialization_refused(f"an item of channel {channel!r}", part, exc) from exc
            c_type, c_blob = self.sealer.seal(
                c_type, c_blob, "chunk", key.thread_id, key.checkpoint_ns, channel
            )
            chunks.append((start, len(part), c_type, c_blob))
        return PreparedValue(
            channel, version, ENCODING_ITEMS, plan=plan, chunks=chunks, value=value
        )

    def put_txn(self, p: PreparedPut) -> Txn[PutOutcome]:
        sql = self.sql
        key = p.key
        # Without a thread-row write, the checkpoint insert itself checks the
        # tombstone (one statement fewer) if the dialect has that statement;
        # raising there rolls back the values stored before it.
        insert_if_live = None if p.touch_thread else getattr(sql, "INSERT_CHECKPOINT_IF_LIVE", None)
        if p.touch_thread:
            # Creates/touches the thread row; a tombstone makes it return no row.
            rows = yield Fetch(
                sql.UPSERT_THREAD_ON_PUT, (key.thread_id, p.now, p.now, p.parent_id, p.parent_id)
            )
            if not rows:
                raise _put_refused(key.thread_id)
        elif insert_if_live is None and (yield Fetch(sql.SELECT_TOMBSTONE, (key.thread_id,))):
            raise _put_refused(key.thread_id)
        outcome = PutOutcome(retention_due=False)
        plain_rows: list[tuple[Any, ...]] = []
        for pv in p.values:
            if pv.encoding != ENCODING_ITEMS:
                plain_rows.append(
                    (
                        key.thread_id,
                        key.checkpoint_ns,
                        pv.channel,
                        pv.version,
                        pv.encoding,
                        pv.type,
                        pv.blob,
                        None,
                    )
                )
                continue
            yield from self._store_list(p, pv, outcome)
        if plain_rows:
            yield ExecuteMany(sql.INSERT_CHANNEL_VALUE, plain_rows)
        row = (
            key.thread_id,
            key.checkpoint_ns,
            p.checkpoint_id,
            p.parent_id,
            p.run_id,
            p.type,
            p.body,
            p.metadata,
        )
        if insert_if_live is None:
            yield Execute(sql.INSERT_CHECKPOINT, row)
        elif not (yield Execute(insert_if_live, (*row, key.thread_id, p.parent_id))):
            raise _put_refused(key.thread_id)
        return outcome

    @staticmethod
    def restarts_thread(p: PreparedPut) -> bool:
        """Whether this put, refused on a deleted thread, starts it afresh: a new
        run's first checkpoint (root namespace, no parent). A run that began
        before the delete always has a parent, and stays refused."""
        return p.parent_id is None and p.key.checkpoint_ns == ""

    def restart_thread_txn(self, p: PreparedPut) -> Txn[bool]:
        """Make a deleted thread live again for ``p``'s run; from now on its
        puts with an older parent, and writes to older checkpoints, are refused
        (``reset_before``, SQLite migration 5 / Postgres migration 7)."""
        self.activity.forget(p.key.thread_id)
        self.cache.discard_thread(p.key.thread_id)
        done = yield Fetch(self.sql.RESTART_THREAD, (p.checkpoint_id, p.now, p.key.thread_id))
        return bool(done)

    def _store_list(self, p: PreparedPut, pv: PreparedValue, outcome: PutOutcome) -> Txn[None]:
        sql = self.sql
        key = p.key
        plan = pv.plan
        assert plan is not None
        base = (key.thread_id, key.checkpoint_ns, pv.channel)
        next_seq: int | None = None
        if plan.base_version is not None:
            # The next item number does not depend on the plan, so it is read
            # together with the base check even if the plan falls back below.
            rows = yield Fetch(
                sql.SELECT_BASE_EXISTS_AND_NEXT_ITEM_SEQ, (*base, plan.base_version, *base)
            )
            still_there, next_seq = bool(rows[0][0]), int(rows[0][1])
            if not still_there:
                # Retention elsewhere removed our base: store the whole list.
                full = self._prepared_list(
                    key, pv.channel, pv.version, full_list_plan(pv.value, plan.marks), pv.value
                )
                plan, pv.plan, pv.chunks = full.plan, full.plan, full.chunks
                assert plan is not None
        first_seq = 0
        if plan.new_items:
            if next_seq is None:
                rows = yield Fetch(sql.SELECT_NEXT_ITEM_SEQ, base)
                next_seq = int(rows[0][0])
            first_seq = next_seq
            outcome.next_seqs[pv.channel] = first_seq + len(plan.new_items)
        elif next_seq is not None:
            outcome.next_seqs[pv.channel] = next_seq
        ranges = plan.resolve_ranges(first_seq)
        inserted = yield Execute(
            sql.INSERT_CHANNEL_VALUE,
            (*base, pv.version, ENCODING_ITEMS, None, None, ranges_to_json(ranges)),
        )
        if not inserted:
            # This version is already stored (first writer wins); keep it.
            outcome.conflicted.add(pv.channel)
            return
        if plan.new_items:
            yield ExecuteMany(
                sql.INSERT_CHUNK,
                [
                    (*base, first_seq + offset, first_seq + offset + count, c_type, c_blob)
                    for offset, count, c_type, c_blob in pv.chunks
                ],
            )
            end = first_seq + len(plan.new_items)
            if first_seq // COMPACT_BLOCK != end // COMPACT_BLOCK:
                yield from self._compact_block(base, (end // COMPACT_BLOCK) * COMPACT_BLOCK)
        outcome.stored_lists[pv.channel] = (pv.version, ranges)

    def put_rows(self, p: PreparedPut) -> FastWrite | None:
        """The put as rows for the dialect's one-statement write (SQLite:
        ``lgm_write_rows``, see ``_sql_sqlite.insert_write_rows``), and
        its outcome once they are stored; None when only ``put_txn`` can store it.

        The rows assume the common case: each list's base version is still
        stored, its new items start at the number the cache expects, and the
        version is not stored yet. The dialect refuses the whole statement when
        an assumption fails (or the thread is tombstoned), and the shell runs
        ``put_txn`` instead, which reads what it needs and decides.
        """
        key = p.key
        thread_id, ns = key.thread_id, key.checkpoint_ns
        rows: list[tuple[Any, ...]] = []
        if p.touch_thread:
            rows.append(("thread", thread_id, ns, None, None, None, None, None, None, p.now, None))
        outcome = PutOutcome(retention_due=False)
        for pv in p.values:
            if pv.encoding != ENCODING_ITEMS:
                rows.append(
                    (
                        *("value", thread_id, ns, pv.channel, pv.version, pv.type, pv.blob),
                        *(None, None, None, None),
                    )
                )
                continue
            plan = pv.plan
            assert plan is not None
            added = len(plan.new_items)
            if added and plan.base_version is None and self.cache.capacity <= 0:
                return None  # no cache, no guess: every put of an old thread would be refused
            first = pv.next_seq if added else 0
            if added and first // COMPACT_BLOCK != (first + added) // COMPACT_BLOCK:
                return None  # a block is complete: put_txn compacts it
            ranges = plan.resolve_ranges(first)
            rows.append(
                (
                    *("list", thread_id, ns, pv.channel, pv.version, None, None),
                    *(ranges_to_json(ranges), plan.base_version, first if added else None, None),
                )
            )
            for offset, count, c_type, c_blob in pv.chunks:
                rows.append(
                    (
                        *("chunk", thread_id, ns, pv.channel, None, c_type, c_blob, None, None),
                        *(first + offset, first + offset + count),
                    )
                )
            outcome.stored_lists[pv.channel] = (pv.version, ranges)
            if added:
                outcome.next_seqs[pv.channel] = first + added
            elif plan.base_version is not None:
                # Still the cache's number (a removal must not lower the guess).
                outcome.next_seqs[pv.channel] = pv.next_seq
        rows.append(
            (
                *("checkpoint", thread_id, ns, p.checkpoint_id, p.parent_id, p.type, p.body),
                *(p.metadata, p.run_id, None, None),
            )
        )
        return rows, outcome

    def _compact_block(self, base: tuple[str, str, str], boundary: int) -> Txn[None]:
        """Merge the small chunks lying wholly inside the block just completed.

        A put appending one message makes a one-message chunk, and reading a
        long thread would mean fetching hundreds of rows. Chunks only hold item
        numbers (versions store ranges of numbers, not chunk ids), so merging
        them changes no version: each item is rewritten at most once more, and
        a read fetches ~1 row per COMPACT_BLOCK items. msgpack chunks merge as
        bytes (arrays concatenate), without decoding.
        """
        select = getattr(self.sql, "SELECT_CHUNKS_IN_SPAN", None)
        if select is None:
            return  # the dialect does not support compaction
        lo = boundary - COMPACT_BLOCK
        rows = yield Fetch(select, (*base, lo, boundary))
        if len(rows) < 2:
            return
        sealer = self.sealer
        if sealer.enabled:
            rows = [(r[0], r[1], *sealer.open(r[2], r[3], "chunk", *base)) for r in rows]
        merged = merge_msgpack_chunks(rows)
        if merged is None:
            return
        if sealer.enabled:
            merged = (*merged[:2], *sealer.seal(merged[2], merged[3], "chunk", *base))
        yield Execute(self.sql.DELETE_CHUNKS_IN_GAP, (*base, lo, boundary))
        yield Execute(self.sql.INSERT_CHUNK, (*base, *merged))

    def finish_put(self, p: PreparedPut, outcome: PutOutcome) -> RunnableConfig:
        """After commit: remember the stored lists so the next put is a delta."""
        key = p.key
        for pv in p.values:
            if pv.encoding != ENCODING_ITEMS:
                continue
            cache_key = (key.thread_id, key.checkpoint_ns, pv.channel)
            stored = outcome.stored_lists.get(pv.channel)
            if stored is None or pv.plan is None:
                self.cache.discard(cache_key)
                continue
            version, ranges = stored
            self.cache.put(
                cache_key,
                CachedList(
                    version,
                    tuple(pv.value),
                    pv.plan.marks,
                    ranges,
                    outcome.next_seqs.get(pv.channel),
                ),
            )
        puts = self.activity.record_put(key.thread_id, p.now, wrote=p.touch_thread)
        policy = self.retention
        if policy is not None and policy.keep_last is not None and puts >= policy.apply_every:
            # keep_last is applied incrementally, every `apply_every` puts of this process.
            outcome.retention_due = True
            self.activity.reset_puts(key.thread_id)
        return checkpoint_config(key.thread_id, key.checkpoint_ns, p.checkpoint_id)

    # ---------------------------------------------------------------- put_writes

    def prepare_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> PreparedWrites:
        key = parse_config(config)
        if key.checkpoint_id is None:
            raise ConfigurationError(
                "put_writes() needs config.configurable.checkpoint_id (the config put() returned)."
            )
        writes = check_writes(writes, task_id, task_path)
        ident = (key.thread_id, key.checkpoint_ns, key.checkpoint_id)
        rows: list[tuple[Any, ...]] = []
        for idx, (channel, value) in enumerate(writes):
            if self.redactor is not None:
                value = self.redactor.value(value)
            if self.recent_rewrites:
                value = self.recent_rewrites.apply(key.thread_id, value)
            try:
                w_type, w_blob = self.serde.dumps_typed(value)
            except (TypeError, ValueError) as exc:
                raise serialization_refused(f"the write to {channel!r}", value, exc) from exc
            w_idx = WRITES_IDX_MAP.get(channel, idx)
            w_type, w_blob = self.sealer.seal(
                w_type, w_blob, "write", *ident, task_id, w_idx, channel
            )
            rows.append((*ident, task_id, task_path, w_idx, channel, w_type, w_blob))
        # Special writes (errors, interrupts) replace; regular ones are idempotent.
        replace = all(w[0] in WRITES_IDX_MAP for w in writes)
        may_wait = writes_may_wait_for_checkpoint(config, writes)
        prepared = PreparedWrites(key, key.checkpoint_id, replace, rows, time.time(), may_wait)
        if any(channel in STEP_ENDING_CHANNELS for channel, _ in writes):
            self.ended_steps.add(prepared.step)
        elif any(channel == RESUME for channel, _ in writes):
            self.ended_steps.discard(prepared.step)  # the step runs again, and a put follows it
        elif may_wait and prepared.step in self.ended_steps:
            prepared.may_wait = False
        return prepared

    def writes_rows(self, p: PreparedWrites) -> FastWrite | None:
        """The writes as rows for the dialect's one-statement write (``put_rows``);
        a tombstone refuses them there, and ``writes_txn`` then raises."""
        if not p.rows:
            return None  # nothing to insert; writes_txn still checks the tombstone
        kind = "write_replace" if p.replace else "write"
        rows = [
            (kind, thread_id, ns, channel, cid, w_type, w_blob, task_path, task_id, idx, None)
            for thread_id, ns, cid, task_id, task_path, idx, channel, w_type, w_blob in p.rows
        ]
        return rows, None

    def writes_txn(self, p: PreparedWrites) -> Txn[None]:
        # Pending writes do not count as thread activity: the tombstone is only
        # read (a read costs no page write in the log). Dialects with
        # `*_IF_LIVE` statements check it inside the insert (one statement
        # fewer) and read it only when fewer rows than given were stored.
        sql = self.sql
        thread_id = p.key.thread_id
        live = getattr(sql, "UPSERT_WRITE_IF_LIVE", None)
        if live is not None and p.rows:
            stmt = live if p.replace else sql.INSERT_WRITE_IF_ABSENT_IF_LIVE
            stored = yield ExecuteMany(stmt, [(*row, thread_id, p.checkpoint_id) for row in p.rows])
            if isinstance(stored, int) and 0 <= stored == len(p.rows):
                return
        if (yield Fetch(sql.SELECT_WRITES_REFUSED, (thread_id, p.checkpoint_id))):
            raise ThreadDeletedError(
                f"thread_id={thread_id!r} was deleted after checkpoint {p.checkpoint_id!r}; "
                "late writes of a run that began before the delete are refused, so the "
                "deleted thread never comes back (a new run on the id starts it afresh)."
            )
        if p.rows and live is None:
            stmt = sql.UPSERT_WRITE if p.replace else sql.INSERT_WRITE_IF_ABSENT
            yield ExecuteMany(stmt, p.rows)

    # ---------------------------------------------------------------- reads

    def _raw_from_row(self, row: Sequence[Any]) -> RawCheckpoint:
        thread_id, ns, cid, parent, type_, body, metadata = row
        type_, body = self.sealer.open(type_, body, "checkpoint", thread_id, ns, cid)
        return RawCheckpoint(thread_id, ns, cid, parent, type_, body, metadata)

    def _open_writes(
        self, thread_id: str, ns: str, cid: str, rows: Sequence[Sequence[Any]]
    ) -> list[tuple[str, str, str, bytes, str, int]]:
        """Write rows ``(task_id, channel, type, blob, task_path, idx)``, opened."""
        sealer = self.sealer
        opened = []
        for task_id, channel, w_type, w_blob, task_path, idx in rows:
            w_type, w_blob = sealer.open(
                w_type, w_blob, "write", thread_id, ns, cid, task_id, idx, channel
            )
            opened.append((task_id, channel, w_type, w_blob, task_path, idx))
        return opened

    def _decode_body(self, raw: RawCheckpoint) -> dict[str, Any]:
        if raw.body_decoded is None:
            raw.body_decoded = dict(self.serde.loads_typed((raw.type, raw.body)))
            raw.inline = raw.body_decoded.pop(INLINE_VALUES_KEY, None) or {}
            raw.channel_versions = body_versions(raw.body_decoded)
        return raw.body_decoded

    def get_tuple_txn(self, config: RunnableConfig) -> Txn[tuple[RawCheckpoint, ChunkStore] | None]:
        key = parse_config(config)
        if key.checkpoint_id is not None:
            rows = yield Fetch(
                self.sql.SELECT_CHECKPOINT_BY_ID,
                (key.thread_id, key.checkpoint_ns, key.checkpoint_id),
            )
        else:
            rows = yield Fetch(
                self.sql.SELECT_LATEST_CHECKPOINT, (key.thread_id, key.checkpoint_ns)
            )
        if not rows:
            return None
        raw = self._raw_from_row(rows[0])
        # Decoding the small body here (not the values) tells us which versions to read.
        self._decode_body(raw)
        store = ChunkStore()
        yield from self._load_values([raw], store, use_cache=True)
        w_rows = yield Fetch(
            self.sql.SELECT_WRITES, (raw.thread_id, raw.checkpoint_ns, raw.checkpoint_id)
        )
        raw.writes = self._open_writes(raw.thread_id, raw.checkpoint_ns, raw.checkpoint_id, w_rows)
        return raw, store

    def _load_values(
        self, raws: Sequence[RawCheckpoint], store: ChunkStore, *, use_cache: bool
    ) -> Txn[None]:
        """Read the value rows (and list chunks) of checkpoints of one or more (thread, ns)."""
        by_ns: dict[tuple[str, str], list[RawCheckpoint]] = {}
        for raw in raws:
            by_ns.setdefault((raw.thread_id, raw.checkpoint_ns), []).append(raw)
        for (thread_id, ns), group in by_ns.items():
            wanted: dict[tuple[str, str], list[RawCheckpoint]] = {}
            for raw in group:
                for ch, ver in raw.row_versions().items():
                    if use_cache:
                        hit = self.cache.fresh_items((thread_id, ns, ch), ver)
                        if hit is not None:
                            raw.cached_lists[ch] = hit
                            continue
                    wanted.setdefault((ch, ver), []).append(raw)
            if not wanted:
                continue
            found: dict[tuple[str, str], RawValue] = {}
            rows = yield Fetch(
                self.sql.SELECT_CHANNEL_VALUES, (json.dumps(list(wanted)), thread_id, ns)
            )
            sealer = self.sealer
            for ch, ver, encoding, v_type, v_blob, ranges in rows:
                if v_blob is not None:
                    v_type, v_blob = sealer.open(v_type, v_blob, "value", thread_id, ns, ch, ver)
                found[(ch, ver)] = RawValue(
                    encoding,
                    v_type,
                    v_blob,
                    ranges_from_json(ranges) if encoding == ENCODING_ITEMS and ranges else (),
                )
            bounds: dict[str, tuple[int, int]] = {}
            for pair, rv in found.items():
                for raw in wanted[pair]:
                    raw.values[pair[0]] = rv
                if rv.encoding == ENCODING_ITEMS and rv.ranges:
                    lo = min(r[0] for r in rv.ranges)
                    hi = max(r[1] for r in rv.ranges)
                    old = bounds.get(pair[0])
                    bounds[pair[0]] = (
                        (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
                    )
            for ch, (lo, hi) in sorted(bounds.items()):
                chunk_rows = yield Fetch(self.sql.SELECT_CHUNKS, (thread_id, ns, ch, hi, lo))
                store.raw[(thread_id, ns, ch)] = [
                    (r[0], r[1], *sealer.open(r[2], r[3], "chunk", thread_id, ns, ch))
                    for r in chunk_rows
                ]

    def _decode_values(self, raw: RawCheckpoint, store: ChunkStore) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for ch, rv in raw.values.items():
            if rv.encoding == ENCODING_VALUE:
                values[ch] = self.serde.loads_typed((cast(str, rv.type), cast(bytes, rv.blob)))
            elif rv.encoding == ENCODING_ITEMS:
                items = store.items(self.serde, (raw.thread_id, raw.checkpoint_ns, ch), rv.ranges)
                if len(items) != ranges_length(rv.ranges):
                    raise RuntimeError(f"channel {ch!r}: stored list is incomplete")
                values[ch] = items
        values.update(raw.cached_lists)
        values.update(raw.inline)
        return values

    def _decode_writes(
        self, rows: Sequence[tuple[str, str, str, bytes, str, int]]
    ) -> list[PendingWrite]:
        ordered = sorted(rows, key=lambda r: writes_sort_key(r[4], r[0], r[5]))
        return [
            (task_id, channel, self.serde.loads_typed((w_type, w_blob)))
            for task_id, channel, w_type, w_blob, _path, _idx in ordered
        ]

    def _tuple(self, raw: RawCheckpoint, channel_values: dict[str, Any]) -> CheckpointTuple:
        body = self._decode_body(raw)
        checkpoint = cast(Checkpoint, {**body, "channel_values": channel_values})
        return CheckpointTuple(
            config=checkpoint_config(raw.thread_id, raw.checkpoint_ns, raw.checkpoint_id),
            checkpoint=checkpoint,
            metadata=cast(
                CheckpointMetadata,
                self.sealer.open_metadata(
                    raw.metadata, raw.thread_id, raw.checkpoint_ns, raw.checkpoint_id
                ),
            ),
            parent_config=(
                checkpoint_config(raw.thread_id, raw.checkpoint_ns, raw.parent_id)
                if raw.parent_id
                else None
            ),
            pending_writes=self._decode_writes(raw.writes),
        )

    def build_tuple(
        self, loaded: tuple[RawCheckpoint, ChunkStore] | None
    ) -> CheckpointTuple | None:
        """Decode a ``get_tuple_txn`` result (outside the transaction) and warm the cache."""
        if loaded is None:
            return None
        raw, store = loaded
        values = self._decode_values(raw, store)
        for ch, rv in raw.values.items():
            if rv.encoding == ENCODING_ITEMS and ch not in raw.cached_lists:
                items = values[ch]
                self.cache.put(
                    (raw.thread_id, raw.checkpoint_ns, ch),
                    CachedList(
                        raw.channel_versions[ch],
                        tuple(items),
                        tuple(fingerprint(x) for x in items),
                        rv.ranges,
                    ),
                )
        return self._tuple(raw, values)

    # ---------------------------------------------------------------- list

    def list_query(
        self,
        config: RunnableConfig | None,
        *,
        filter: Mapping[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> ListQuery:
        thread_id = ns = checkpoint_id = None
        if config is not None:
            configurable = (
                (config.get("configurable") or {}) if isinstance(config, Mapping) else None
            )
            if not isinstance(configurable, Mapping):
                raise ConfigurationError(
                    f"list() config={config!r} is not a RunnableConfig; pass None or "
                    "{'configurable': {'thread_id': ...}}."
                )
            if configurable.get("thread_id") is not None:
                thread_id = parse_thread_id(configurable["thread_id"])
            raw_ns = configurable.get("checkpoint_ns")
            if raw_ns is not None:
                if not isinstance(raw_ns, str):
                    raise ConfigurationError(f"checkpoint_ns={raw_ns!r} must be a string.")
                ns = checked_id("checkpoint_ns", raw_ns, MAX_CHECKPOINT_NS_BYTES)
            checkpoint_id = configurable.get("checkpoint_id") or None
            if checkpoint_id is not None:
                if not isinstance(checkpoint_id, str):
                    raise ConfigurationError(
                        f"checkpoint_id={checkpoint_id!r} must be a string id returned by put()."
                    )
                checked_id("checkpoint_id", checkpoint_id, MAX_CHECKPOINT_ID_BYTES)
        before_id = check_before(before)
        limit = check_limit(limit)
        if filter is not None and not isinstance(filter, Mapping):
            raise ConfigurationError(f"filter={filter!r}; use a mapping of metadata key -> value.")
        # Validate filter keys and values now, before any page is read.
        self.sql.metadata_predicates(filter or {})
        check_filter(filter or {})
        self.sealer.check_filter(filter)
        owner = None
        if thread_id is not None:
            owner = self.owner_check(config)
        elif config_user_id(config) is not None:
            raise ConfigurationError(
                "list() with a user_id but no thread_id would list every user's threads; "
                "pass the thread_id, or call threads_of_user(user_id) and list each."
            )
        return ListQuery(thread_id, ns, checkpoint_id, before_id, filter or None, limit, owner)

    def list_page_txn(
        self, q: ListQuery, after_key: tuple[str, str, str] | None, page_size: int
    ) -> Txn[tuple[list[RawCheckpoint], ChunkStore]]:
        if q.thread_id is not None and q.checkpoint_ns is None:
            # One thread, every namespace: the primary key (thread, ns, id) can
            # only serve "newest first" per namespace, so read a page from each
            # namespace and merge, instead of sorting the whole thread.
            namespaces = yield Fetch(self.sql.SELECT_THREAD_NAMESPACES, (q.thread_id,))
            rows = []
            for (ns,) in namespaces:
                rows.extend((yield from self._page_rows(q, ns, after_key, page_size)))
            rows.sort(key=lambda r: (r[2], r[0], r[1]), reverse=True)
            del rows[page_size:]
        else:
            rows = yield from self._page_rows(q, q.checkpoint_ns, after_key, page_size)
        raws = [self._raw_from_row(r) for r in rows]
        store = ChunkStore()
        if not raws:
            return raws, store
        for raw in raws:
            self._decode_body(raw)
        yield from self._load_values(raws, store, use_cache=False)
        by_ns: dict[tuple[str, str], dict[str, RawCheckpoint]] = {}
        for raw in raws:
            by_ns.setdefault((raw.thread_id, raw.checkpoint_ns), {})[raw.checkpoint_id] = raw
        for (thread_id, ns), group in by_ns.items():
            w_rows = yield Fetch(
                self.sql.SELECT_WRITES_FOR_CHECKPOINTS, (json.dumps(list(group)), thread_id, ns)
            )
            for cid, *rest in w_rows:
                group[cid].writes.extend(self._open_writes(thread_id, ns, cid, [rest]))
        return raws, store

    def _page_rows(
        self,
        q: ListQuery,
        checkpoint_ns: str | None,
        after_key: tuple[str, str, str] | None,
        page_size: int,
    ) -> Txn[list[Any]]:
        # Within one thread, LangGraph's uuid6 checkpoint ids are unique across
        # namespaces, so "id < last id" is the keyset condition for every namespace.
        where, params = self.sql.list_where(
            thread_id=q.thread_id,
            checkpoint_ns=checkpoint_ns,
            checkpoint_id=q.checkpoint_id,
            before_id=q.before_id,
            metadata_filter=q.metadata_filter,
            after_key=after_key,
        )
        rows = yield Fetch(
            self.sql.SELECT_CHECKPOINT_PAGE.format(where=where), (*params, page_size)
        )
        return list(rows)

    def build_list_tuple(self, raw: RawCheckpoint, store: ChunkStore) -> CheckpointTuple:
        """A listed checkpoint whose channel values decode on first access."""
        keys = [ch for ch, rv in raw.values.items() if rv.encoding != ENCODING_EMPTY]
        keys.extend(raw.inline)
        values = LazyChannelValues(keys, lambda: self._decode_values(raw, store))
        return self._tuple(raw, values)

    # ---------------------------------------------------------------- DeltaChannel history

    def delta_history_txn(
        self, config: RunnableConfig, channels: Sequence[str]
    ) -> Txn[
        tuple[
            dict[str, list[str]],
            dict[str, RawCheckpoint],
            list[Any],
            ChunkStore,
            dict[str, tuple[str, str]],
        ]
    ]:
        """Walk the parent chain once for all channels; see ``build_delta_history``."""
        key = parse_config(config)
        cid = key.checkpoint_id
        if cid is None:
            rows = yield Fetch(
                self.sql.SELECT_LATEST_CHECKPOINT, (key.thread_id, key.checkpoint_ns)
            )
            if not rows:
                return {}, {}, [], ChunkStore(), {}
            cid = rows[0][2]
        chain_by_ch: dict[str, list[str]] = {ch: [] for ch in channels}
        seed_at: dict[str, tuple[str, str]] = {}  # channel -> (checkpoint id, version)
        remaining = set(channels)
        visited: set[str] = set()
        cursor: str | None = cid
        is_target = True
        while cursor is not None and remaining:
            # Up to ANCESTOR_BATCH + 1 consecutive ancestors, starting at `cursor`.
            rows = yield Fetch(
                self.sql.SELECT_ANCESTORS,
                (
                    key.thread_id,
                    key.checkpoint_ns,
                    cursor,
                    key.thread_id,
                    key.checkpoint_ns,
                    ANCESTOR_BATCH,
                ),
            )
            if not rows:
                break
            batch: list[tuple[str, str | None, dict[str, str]]] = []
            for a_id, a_parent, a_type, a_body in rows:
                a_type, a_body = self.sealer.open(
                    a_type, a_body, "checkpoint", key.thread_id, key.checkpoint_ns, a_id
                )
                body = self.serde.loads_typed((a_type, a_body))
                batch.append((a_id, a_parent, body_versions(body)))
            pairs = sorted({(ch, v[ch]) for _, _, v in batch for ch in remaining if ch in v})
            stored: set[tuple[str, str]] = set()
            if pairs:
                enc_rows = yield Fetch(
                    self.sql.SELECT_CHANNEL_ENCODINGS,
                    (json.dumps(pairs), key.thread_id, key.checkpoint_ns),
                )
                stored = {(ch, ver) for ch, ver, enc in enc_rows if enc != ENCODING_EMPTY}
            cursor = None
            for a_id, a_parent, versions in batch:
                if a_id in visited:  # a cycle from re-putting an existing id
                    cursor = None
                    break
                visited.add(a_id)
                cursor = a_parent
                if is_target:
                    is_target = False  # the target's own writes are pending, not history
                    continue
                for ch in list(remaining):
                    chain_by_ch[ch].append(a_id)
                    ver = versions.get(ch)
                    if ver is not None and (ch, ver) in stored:
                        seed_at[ch] = (a_id, ver)
                        remaining.discard(ch)
                if not remaining:
                    break
        # Seeds: read their values (lists via chunks).
        seeds: dict[str, RawCheckpoint] = {}
        store = ChunkStore()
        seed_raws: list[RawCheckpoint] = []
        for ch, (a_id, ver) in seed_at.items():
            raw = RawCheckpoint(key.thread_id, key.checkpoint_ns, a_id, None, "", b"", "{}")
            raw.body_decoded = {}
            raw.channel_versions = {ch: ver}
            seeds[ch] = raw
            seed_raws.append(raw)
        if seed_raws:
            yield from self._load_values(seed_raws, store, use_cache=False)
        all_ids = sorted({c for chain in chain_by_ch.values() for c in chain})
        writes: list[Any] = []
        if all_ids:
            w_rows = yield Fetch(
                self.sql.SELECT_WRITES_FOR_CHECKPOINTS,
                (json.dumps(all_ids), key.thread_id, key.checkpoint_ns),
            )
            for w_cid, *rest in w_rows:
                (opened,) = self._open_writes(key.thread_id, key.checkpoint_ns, w_cid, [rest])
                writes.append((w_cid, *opened))
        return chain_by_ch, seeds, writes, store, seed_at

    def build_delta_history(
        self,
        channels: Sequence[str],
        loaded: tuple[
            dict[str, list[str]],
            dict[str, RawCheckpoint],
            list[Any],
            ChunkStore,
            dict[str, tuple[str, str]],
        ],
    ) -> dict[str, DeltaChannelHistory]:
        chain_by_ch, seeds, writes, store, _seed_at = loaded
        by_cid: dict[str, list[tuple[str, str, str, bytes, str, int]]] = {}
        for cid, task_id, channel, w_type, w_blob, task_path, idx in writes:
            by_cid.setdefault(cid, []).append((task_id, channel, w_type, w_blob, task_path, idx))
        result: dict[str, DeltaChannelHistory] = {}
        for ch in channels:
            collected: list[PendingWrite] = []
            for cid in reversed(chain_by_ch.get(ch, [])):
                rows = [r for r in by_cid.get(cid, []) if r[1] == ch]
                collected.extend(self._decode_writes(rows))
            entry: DeltaChannelHistory = {"writes": collected}
            if ch in seeds:
                values = self._decode_values(seeds[ch], store)
                if ch in values:
                    entry["seed"] = values[ch]
            result[ch] = entry
        return result

    # ---------------------------------------------------------------- deletion

    def delete_thread_txn(self, thread_id: str, *, tombstone: bool = True) -> Txn[None]:
        sql = self.sql
        tid = parse_thread_id(thread_id)
        self.activity.forget(tid)
        self.owners.forget(tid)
        self.recent_rewrites.forget(tid)
        for stmt in (
            sql.DELETE_THREAD_CHECKPOINTS,
            sql.DELETE_THREAD_WRITES,
            sql.DELETE_THREAD_CHANNEL_VALUES,
            sql.DELETE_THREAD_CHUNKS,
        ):
            yield Execute(stmt, (tid,))
        now = time.time()
        if tombstone:
            yield Execute(sql.TOMBSTONE_THREAD, (tid, now, now, now))
        yield from self._mark_erase_pending(sql.THREAD_RELATIONS, now)

    def _mark_erase_pending(self, relations: Sequence[str], now: float) -> Txn[None]:
        """Record, in the erasing transaction, the relations whose dead tuples a
        later ``erase_pending()`` must rewrite (Postgres; SQLite erases at once)."""
        mark = self.sql.MARK_ERASE_PENDING
        if mark is not None and relations:
            yield ExecuteMany(mark, [(relation, now) for relation in relations])

    def erase_pending_txn(self) -> Txn[list[tuple[str, int, float]]]:
        """The marked relations as ``(relation, generation, since)``."""
        if self.sql.MARK_ERASE_PENDING is None:
            return []
        rows = yield Fetch(self.sql.SELECT_ERASE_PENDING)
        return [(str(r), int(g), float(t)) for r, g, t in rows]

    def clear_erase_pending_txn(self, done: Sequence[tuple[str, int, float]]) -> Txn[None]:
        """Clear the marks a rewrite served (a mark renewed meanwhile stays)."""
        if done:
            yield ExecuteMany(self.sql.CLEAR_ERASE_PENDING, [(r, g) for r, g, _ in done])

    # ---------------------------------------------------------------- rewriting values

    def rewrite_values_txn(self, thread_id: str, rewrite: ValueRewrite) -> Txn[int]:
        """Rewrite the thread's stored values in place with ``rewrite``; returns the rows
        changed. Used to erase one deleted memory from the recall blocks a thread's
        checkpoints keep (``nodes/recall_erasure.py``).

        Every channel value, list chunk and pending write of the thread is opened
        (sealed rows too) and decoded, unless it is plain msgpack and
        ``rewrite.may_touch`` says its bytes cannot hold what is erased; a value
        ``rewrite`` returns unchanged (the same object) is not written. A chunk
        keeps its item count: chunks are addressed by item numbers. Checkpoint
        bodies are not read: they carry only versions and scalars of up to 256
        characters, never a message.
        """
        sql = self.sql
        tid = parse_thread_id(thread_id)
        sealer, serde = self.sealer, self.serde

        def redo(type_: Any, blob: Any, kind: str, *ident: Any) -> tuple[str, bytes] | None:
            c_type, c_blob = sealer.open(type_, blob, kind, *ident)
            raw = bytes(c_blob)
            if c_type == "msgpack" and not rewrite.may_touch(raw):
                return None
            value = serde.loads_typed((c_type, raw))
            new = rewrite(value)
            if new is value:
                return None
            if kind == "chunk" and (type(new) is not list or len(new) != len(value)):
                raise ConfigurationError(
                    f"rewrite {rewrite!r} changed the length of a stored list (thread "
                    f"{tid!r}); a rewrite must map each item to one item."
                )
            n_type, n_blob = serde.dumps_typed(new)
            return sealer.seal(n_type, n_blob, kind, *ident)

        count = 0
        updates: list[tuple[Any, ...]] = []
        for ns, ch, ver, v_type, blob in (yield Fetch(sql.SELECT_THREAD_VALUE_BLOBS, (tid,))):
            done = redo(v_type, blob, "value", tid, ns, ch, ver)
            if done is not None:
                updates.append((*done, tid, ns, ch, ver))
        if updates:
            yield ExecuteMany(sql.UPDATE_VALUE_BLOB, updates)
        count += len(updates)
        updates = []
        for ns, ch, seq_lo, c_type, blob in (yield Fetch(sql.SELECT_THREAD_CHUNK_BLOBS, (tid,))):
            done = redo(c_type, blob, "chunk", tid, ns, ch)
            if done is not None:
                updates.append((*done, tid, ns, ch, seq_lo))
        if updates:
            yield ExecuteMany(sql.UPDATE_CHUNK_BLOB, updates)
        count += len(updates)
        updates = []
        rows = yield Fetch(sql.SELECT_THREAD_WRITE_BLOBS, (tid,))
        for ns, cid, task_id, idx, ch, w_type, blob in rows:
            done = redo(w_type, blob, "write", tid, ns, cid, task_id, idx, ch)
            if done is not None:
                updates.append((*done, tid, ns, cid, task_id, idx))
        if updates:
            yield ExecuteMany(sql.UPDATE_WRITE_BLOB, updates)
        count += len(updates)
        if count:
            self.cache.discard_thread(tid)  # reads must not serve the old items
            yield from self._mark_erase_pending(sql.REWRITE_RELATIONS, time.time())
        return count

    def undelete_thread_txn(self, thread_id: str) -> Txn[None]:
        tid = parse_thread_id(thread_id)
        self.activity.forget(tid)
        self.owners.forget(tid)
        yield Execute(self.sql.CLEAR_TOMBSTONE, (tid,))

    def delete_for_runs_txn(self, run_ids: Sequence[str]) -> Txn[int]:
        ids = [str(r) for r in run_ids]
        if not ids:
            return 0
        rows = yield Fetch(self.sql.SELECT_CHECKPOINTS_FOR_RUNS, (json.dumps(ids),))
        touched: set[tuple[str, str]] = set()
        for thread_id, ns, cid in rows:
            yield Execute(self.sql.DELETE_CHECKPOINT, (thread_id, ns, cid))
            yield Execute(self.sql.DELETE_CHECKPOINT_WRITES, (thread_id, ns, cid))
            touched.add((thread_id, ns))
        for thread_id, ns in sorted(touched):
            yield from self._collect_garbage(thread_id, ns, keep=None)
        return len(rows)

    def _namespace_state(
        self, thread_id: str, ns: str
    ) -> Txn[tuple[list[CheckpointSkeleton], dict[tuple[str, str], StoredValue], list[str]]]:
        rows = yield Fetch(self.sql.SELECT_NAMESPACE_CHECKPOINTS, (thread_id, ns))
        skeletons = []
        for cid, parent, c_type, c_body, metadata in rows:
            c_type, c_body = self.sealer.open(c_type, c_body, "checkpoint", thread_id, ns, cid)
            body = self.serde.loads_typed((c_type, c_body))
            inline = body.get(INLINE_VALUES_KEY) or {}
            # A value the checkpoint carries inline needs no row (an older
            # checkpoint's row of the same version can go with that checkpoint).
            versions = {ch: v for ch, v in body_versions(body).items() if ch not in inline}
            meta = json.loads(metadata) if isinstance(metadata, (str, bytes)) else metadata or {}
            counters = meta.get("counters_since_delta_snapshot") or {}
            skeletons.append(CheckpointSkeleton(cid, parent, versions, frozenset(counters)))
        v_rows = yield Fetch(self.sql.SELECT_NAMESPACE_CHANNEL_VALUES, (thread_id, ns))
        stored = {
            (ch, ver): StoredValue(
                ch, ver, enc, ranges_from_json(ranges) if enc == ENCODING_ITEMS and ranges else ()
            )
            for ch, ver, enc, ranges in v_rows
        }
        c_rows = yield Fetch(self.sql.SELECT_CHUNK_CHANNELS, (thread_id, ns))
        return skeletons, stored, [r[0] for r in c_rows]

    def _collect_garbage(self, thread_id: str, ns: str, *, keep: int | None) -> Txn[int]:
        """Drop checkpoints beyond ``keep`` (None: none) and everything nobody needs."""
        skeletons, stored, item_channels = yield from self._namespace_state(thread_id, ns)
        if keep is None:
            kept = {s.checkpoint_id for s in skeletons}
        else:
            kept = close_over_delta_history(keep_newest(skeletons, keep), skeletons, stored)
        plan = plan_garbage(skeletons, kept, stored, item_channels)
        sql = self.sql
        for cid in plan.checkpoints:
            yield Execute(sql.DELETE_CHECKPOINT, (thread_id, ns, cid))
            yield Execute(sql.DELETE_CHECKPOINT_WRITES, (thread_id, ns, cid))
        if plan.channel_values:
            yield ExecuteMany(
                sql.DELETE_CHANNEL_VALUE,
                [(thread_id, ns, ch, ver) for ch, ver in plan.channel_values],
            )
        for ch, gaps in plan.chunk_gaps.items():
            yield ExecuteMany(
                sql.DELETE_CHUNKS_IN_GAP, [(thread_id, ns, ch, lo, hi) for lo, hi in gaps]
            )
        return len(plan.checkpoints)

    def prune_txn(self, thread_id: str, strategy: str) -> Txn[int]:
        tid = parse_thread_id(thread_id)
        if strategy == "delete":
            yield from self.delete_thread_txn(tid, tombstone=False)
            return 0
        if strategy != "keep_latest":
            raise ConfigurationError(f"prune strategy={strategy!r}; use 'keep_latest' or 'delete'.")
        return (yield from self.keep_last_txn(tid, 1))

    def keep_last_txn(self, thread_id: str, keep: int) -> Txn[int]:
        rows = yield Fetch(self.sql.SELECT_THREAD_NAMESPACES, (thread_id,))
        removed = 0
        for (ns,) in rows:
            removed += yield from self._collect_garbage(thread_id, ns, keep=keep)
        yield Execute(self.sql.RESET_RETENTION_COUNTER, (thread_id,))
        return removed

    # ---------------------------------------------------------------- copy

    def copy_thread_txn(self, source_thread_id: str, target_thread_id: str) -> Txn[None]:
        sql = self.sql
        src = parse_thread_id(source_thread_id)
        dst = parse_thread_id(target_thread_id)
        if src == dst:
            raise ConfigurationError(
                f"copy_thread source and target are both {src!r}; pass two different thread ids."
            )
        tomb = yield Fetch(sql.SELECT_TOMBSTONE, (dst,))
        if tomb:
            raise ThreadDeletedError(
                f"copy_thread target {dst!r} was deleted; deleted threads stay deleted. "
                "Use a new id, or undelete_thread() it first."
            )
        existing = yield Fetch(sql.SELECT_THREAD_NAMESPACES, (dst,))
        if existing:
            raise ConfigurationError(
                f"copy_thread target {dst!r} already has checkpoints; copy into a new thread id "
                "or delete_thread() the target first."
            )
        namespaces = yield Fetch(sql.SELECT_THREAD_NAMESPACES, (src,))
        if not namespaces:
            return
        for stmt in (
            sql.COPY_CHECKPOINTS,
            sql.COPY_WRITES,
            sql.COPY_CHANNEL_VALUES,
            sql.COPY_CHUNKS,
        ):
            yield Execute(stmt, (dst, src))
        if self.sealer.enabled:
            # Rows are bound to their thread: the copies open only once resealed as dst's.
            yield from self.reseal_thread_txn(dst, source_thread_id=src)
        now = time.time()
        yield Fetch(sql.UPSERT_THREAD_ON_WRITES, (dst, now, now))

    # ---------------------------------------------------------------- encryption: reseal

    def threads_with_rows_txn(self, after: str, limit: int) -> Txn[list[str]]:
        rows = yield Fetch(self.sql.SELECT_THREADS_WITH_ROWS_AFTER, (after, limit))
        return [str(r[0]) for r in rows]

    def reseal_thread_txn(
        self,
        thread_id: str,
        *,
        source_thread_id: str | None = None,
        encrypt_plaintext: bool = False,
    ) -> Txn[int]:
        """Rewrite the thread's rows that are not sealed under the current key
        (every row, when they were copied from ``source_thread_id``); returns how
        many rows were rewritten. Rows under the current key are only read, so
        a second run after an interruption costs reads, not writes."""
        sealer = self.sealer
        if not sealer.enabled:
            raise ConfigurationError(
                "reencrypt() needs a saver opened with encryption=EncryptionKeys(...)."
            )
        sql = self.sql
        tid = thread_id
        src = source_thread_id or thread_id
        moved = src != tid
        plain = encrypt_plaintext

        def due(type_: Any, blob: Any) -> bool:
            return moved or sealer.needs_reseal(type_, blob)

        count = 0
        rows = yield Fetch(sql.SELECT_THREAD_CHECKPOINT_BLOBS, (tid,))
        updates: list[tuple[Any, ...]] = []
        for ns, cid, c_type, body, meta in rows:
            if not (due(c_type, body) or sealer.metadata_needs_reseal(meta)):
                continue
            c_type, body = sealer.reseal(
                c_type, body, "checkpoint", (src, ns, cid), (tid, ns, cid), encrypt_plaintext=plain
            )
            meta = sealer.reseal_metadata(
                meta, _json_default, (src, ns, cid), (tid, ns, cid), encrypt_plaintext=plain
            )
            updates.append((c_type, body, meta, tid, ns, cid))
        if updates:
            yield ExecuteMany(sql.UPDATE_CHECKPOINT_BLOB, updates)
        count += len(updates)
        rows = yield Fetch(sql.SELECT_THREAD_VALUE_BLOBS, (tid,))
        updates = [
            (
                *sealer.reseal(
                    v_type,
                    blob,
                    "value",
                    (src, ns, ch, ver),
                    (tid, ns, ch, ver),
                    encrypt_plaintext=plain,
                ),
                tid,
                ns,
                ch,
                ver,
            )
            for ns, ch, ver, v_type, blob in rows
            if due(v_type, blob)
        ]
        if updates:
            yield ExecuteMany(sql.UPDATE_VALUE_BLOB, updates)
        count += len(updates)
        rows = yield Fetch(sql.SELECT_THREAD_CHUNK_BLOBS, (tid,))
        updates = [
            (
                *sealer.reseal(
                    c_type, blob, "chunk", (src, ns, ch), (tid, ns, ch), encrypt_plaintext=plain
                ),
                tid,
                ns,
                ch,
                seq_lo,
            )
            for ns, ch, seq_lo, c_type, blob in rows
            if due(c_type, blob)
        ]
        if updates:
            yield ExecuteMany(sql.UPDATE_CHUNK_BLOB, updates)
        count += len(updates)
        rows = yield Fetch(sql.SELECT_THREAD_WRITE_BLOBS, (tid,))
        updates = [
            (
                *sealer.reseal(
                    w_type,
                    blob,
                    "write",
                    (src, ns, cid, task_id, idx, ch),
                    (tid, ns, cid, task_id, idx, ch),
                    encrypt_plaintext=plain,
                ),
                tid,
                ns,
                cid,
                task_id,
                idx,
            )
            for ns, cid, task_id, idx, ch, w_type, blob in rows
            if due(w_type, blob)
        ]
        if updates:
            yield ExecuteMany(sql.UPDATE_WRITE_BLOB, updates)
        return count + len(updates)

    # ---------------------------------------------------------------- retention sweep, stats

    def stats_txn(self, thread_id: str | None) -> Txn[StorageStats]:
        tid = parse_thread_id(thread_id) if thread_id is not None else None
        size = yield Fetch(self.sql.SELECT_DB_SIZE)
        free = yield Fetch(self.sql.SELECT_FREE_BYTES)
        rows = yield Fetch(self.sql.SELECT_THREAD_STATS, (tid, tid))
        threads = tuple(
            ThreadStats(r[0], int(r[1]), int(r[2]), int(r[3]), int(r[4]), int(r[5]), float(r[6]))
            for r in rows
            if int(r[1]) > 0 or tid is not None
        )
        return StorageStats(int(size[0][0]), int(free[0][0]), threads)

    def sweep_plan_txn(self, now: float) -> Txn[tuple[list[str], list[str], int]]:
        """Threads to expire (TTL) and evict (size cap), and the used bytes."""
        policy = self.retention
        expired: list[str] = []
        evicted: list[str] = []
        size = yield Fetch(self.sql.SELECT_DB_SIZE)
        free = yield Fetch(self.sql.SELECT_FREE_BYTES)
        used = int(size[0][0]) - int(free[0][0])
        if policy is None:
            return expired, evicted, used
        if policy.thread_ttl_seconds is not None:
            rows = yield Fetch(self.sql.SELECT_IDLE_THREADS, (now - policy.thread_ttl_seconds,))
            expired = [r[0] for r in rows]
        if policy.max_bytes is not None and used > policy.max_bytes:
            activity = yield Fetch(self.sql.SELECT_THREAD_ACTIVITY)
            stats = yield Fetch(self.sql.SELECT_THREAD_STATS, (None, None))
            payload = {r[0]: int(r[2]) + int(r[3]) + int(r[4]) + int(r[5]) for r in stats}
            evicted = threads_to_evict(
                [(r[0], float(r[1])) for r in activity],
                payload,
                used_bytes=used,
                max_bytes=policy.max_bytes,
                already_deleted=expired,
            )
        return expired, evicted, used

    def live_threads_txn(self) -> Txn[list[str]]:
        rows = yield Fetch(self.sql.SELECT_THREAD_ACTIVITY)
        return [r[0] for r in rows]

    def size_txn(self) -> Txn[int]:
        size = yield Fetch(self.sql.SELECT_DB_SIZE)
        return int(size[0][0])

    @staticmethod
    def report(
        *,
        dry_run: bool,
        expired: Sequence[str],
        evicted: Sequence[str],
        pruned: int,
        before: int,
        after: int,
    ) -> SweepReport:
        return SweepReport(
            dry_run=dry_run,
            expired_threads=tuple(expired),
            evicted_threads=tuple(evicted),
            pruned_checkpoints=pruned,
            bytes_before=before,
            bytes_after=after,
        )


def _put_refused(thread_id: str) -> ThreadDeletedError:
    return ThreadDeletedError(
        f"thread_id={thread_id!r} was deleted; a run that began before the delete "
        "cannot write to it again. A new run on this id starts a fresh thread (or use "
        "a new thread id, or call undelete_thread() first)."
    )


def drive(gen: Txn[T], execute: Any) -> T:
    """Run a transaction generator with a synchronous ``execute(statement)``."""
    try:
        statement = next(gen)
        while True:
            statement = gen.send(execute(statement))
    except StopIteration as stop:
        return cast(T, stop.value)
