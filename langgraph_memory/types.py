"""The data shapes shared by the store, the nodes and the wiring.

A long-term memory is a ``MemoryRecord``; the store returns ``ScoredMemory``
from searches; ``reconcile`` decides ``MemoryOp``s. Records are plain frozen
dataclasses that round-trip through ``to_dict``/``from_dict`` so that they
can be stored as a ``BaseStore`` item value (a JSON-able dict).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from enum import Enum
from typing import Any, Literal, Protocol, runtime_checkable

from langgraph_memory.errors import InvalidMemoryError
from langgraph_memory.limits import MAX_MEMORY_ID_CHARS, check_memory_text

# Memory ids are uuid4 hex (32 characters) unless a caller picks its own.


def utc_now() -> datetime:
    return datetime.now(UTC)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _from_iso(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else None


class MemoryType(str, Enum):
    """What kind of knowledge a memory holds."""

    SEMANTIC = "semantic"  # facts and preferences: "user is allergic to seafood"
    EPISODIC = "episodic"  # events: "on 2026-11-02 the user's order 123 arrived late"
    PROCEDURAL = "procedural"  # how to act: "never use honorifics with this user"


class MemorySource(str, Enum):
    """Who said it. An agent's guess never outranks what the user said."""

    USER_STATED = "user_stated"
    AGENT_INFERRED = "agent_inferred"


class MemoryStatus(str, Enum):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    EXPIRED = "expired"
    DELETED = "deleted"


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """One durable memory of one user.

    ``key`` names a profile-style slot (``diet``, ``budget``); two active
    memories never share a key: a new value supersedes the old one, which
    keeps its text with ``status=superseded`` and ``valid_to`` set.
    """

    text: str
    type: MemoryType = MemoryType.SEMANTIC
    key: str | None = None
    importance: float = 0.5
    source: MemorySource = MemorySource.USER_STATED
    confidence: float = 1.0
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    user_id: str = ""
    created_at: datetime = field(default_factory=utc_now)
    updated_at: datetime = field(default_factory=utc_now)
    last_accessed_at: datetime | None = None
    access_count: int = 0
    event_time: datetime | None = None
    valid_from: datetime = field(default_factory=utc_now)
    valid_to: datetime | None = None
    expires_at: datetime | None = None
    status: MemoryStatus = MemoryStatus.ACTIVE
    supersedes: tuple[str, ...] = ()
    superseded_by: str | None = None
    origin_thread_id: str | None = None
    origin_message_ids: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Refuse a field of the wrong type or range with a message naming it.

        Enum fields also take their string values (``type="episodic"``) and
        sequences become tuples, so records built from JSON compare equal.

        Example:
            >>> MemoryRecord("User is vegetarian", importance=0.8).importance
            0.8
            >>> MemoryRecord("x", importance="high")
            Traceback (most recent call last):
            ...
            langgraph_memory.errors.InvalidMemoryError: MemoryRecord importance='high' (str) must be a number between 0 and 1, e.g. importance=0.7.
        """
        _validate_record(self)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict: enums as values, datetimes as ISO-8601 strings."""
        out: dict[str, Any] = {}
        for name, value in asdict(self).items():
            if isinstance(value, Enum):
                value = value.value
            elif isinstance(value, datetime):
                value = value.isoformat()
            elif isinstance(value, tuple):
                value = list(value)
            out[name] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryRecord:
        # The field names once per class, not per call (~5 us of ~25 per record).
        known = _FIELD_NAMES.get(cls)
        if known is None:
            known = _FIELD_NAMES[cls] = frozenset(f.name for f in fields(cls))
        kwargs: dict[str, Any] = {k: v for k, v in data.items() if k in known}
        for name in (
            "created_at",
            "updated_at",
            "last_accessed_at",
            "event_time",
            "valid_from",
            "valid_to",
            "expires_at",
        ):
            value = kwargs.get(name)
            if isinstance(value, str):
                kwargs[name] = datetime.fromisoformat(value)
        if "type" in kwargs:
            kwargs["type"] = MemoryType(kwargs["type"])
        if "source" in kwargs:
            kwargs["source"] = MemorySource(kwargs["source"])
        if "status" in kwargs:
            kwargs["status"] = MemoryStatus(kwargs["status"])
        for name in ("supersedes", "origin_message_ids"):
            if name in kwargs and kwargs[name] is not None:
                kwargs[name] = tuple(kwargs[name])
        return cls(**kwargs)

    def evolve(self, **changes: Any) -> MemoryRecord:
        return replace(self, **changes)


_FIELD_NAMES: dict[type, frozenset[str]] = {}


def _refuse(name: str, value: Any, want: str) -> InvalidMemoryError:
    shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:60] + "..."
    return InvalidMemoryError(
        f"MemoryRecord {name}={shown} ({type(value).__name__}) must be {want}."
    )


def _coerce_enum(record: MemoryRecord, name: str, enum: type[Enum]) -> None:
    value = getattr(record, name)
    if isinstance(value, enum):
        return
    try:
        object.__setattr__(record, name, enum(value))
    except ValueError:
        allowed = ", ".join(repr(m.value) for m in enum)
        raise _refuse(name, value, f"one of {allowed}") from None


def _validate_record(record: MemoryRecord) -> None:
    check_memory_text(record.text, what="MemoryRecord text")
    for name, enum in (("type", MemoryType), ("source", MemorySource), ("status", MemoryStatus)):
        _coerce_enum(record, name, enum)
    for name in ("importance", "confidence"):
        value = getattr(record, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise _refuse(name, value, f"a number between 0 and 1, e.g. {name}=0.7")
    if not isinstance(record.id, str) or not record.id or len(record.id) > MAX_MEMORY_ID_CHARS:
        raise _refuse(
            "id", record.id, f"a non-empty string of at most {MAX_MEMORY_ID_CHARS} characters"
        )
    # user_id is left to the store, which fails closed on a missing or crafted id.
    for name in ("key", "superseded_by", "origin_thread_id"):
        value = getattr(record, name)
        if value is not None and (not isinstance(value, str) or len(value) > MAX_MEMORY_ID_CHARS):
            raise _refuse(
                name, value, f"None or a string of at most {MAX_MEMORY_ID_CHARS} characters"
            )
    access_count = record.access_count
    if isinstance(access_count, bool) or not isinstance(access_count, int) or access_count < 0:
        raise _refuse("access_count", access_count, "an integer >= 0")
    for name in ("created_at", "updated_at", "valid_from"):
        if not isinstance(getattr(record, name), datetime):
            raise _refuse(name, getattr(record, name), "a datetime")
    for name in ("last_accessed_at", "event_time", "valid_to", "expires_at"):
        value = getattr(record, name)
        if value is not None and not isinstance(value, datetime):
            raise _refuse(name, value, "None or a datetime")
    for name in ("supersedes", "origin_message_ids"):
        value = getattr(record, name)
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise _refuse(name, value, "a tuple of id strings")
        if not all(isinstance(item, str) for item in value):
            raise _refuse(name, value, "a tuple of id strings")
        if not isinstance(value, tuple):
            object.__setattr__(record, name, tuple(value))


@dataclass(frozen=True, slots=True)
class ScoreBreakdown:
    """Why a memory ranked where it did (returned when ``explain=True``)."""

    keyword: float
    vector: float
    relevance: float
    recency: float
    importance: float
    final: float


@dataclass(frozen=True, slots=True)
class ScoredMemory:
    record: MemoryRecord
    score: float
    breakdown: ScoreBreakdown | None = None


@dataclass(frozen=True, slots=True)
class CandidateMemory:
    """What ``extract`` proposes; ``reconcile`` turns it into ``MemoryOp``s."""

    text: str
    type: MemoryType = MemoryType.SEMANTIC
    key: str | None = None
    importance: float = 0.5
    source: MemorySource = MemorySource.USER_STATED
    confidence: float = 1.0
    event_time: datetime | None = None
    expires_at: datetime | None = None
    origin_message_ids: tuple[str, ...] = ()
    # A "forget X" request: reconcile deletes what matches instead of adding.
    forget: bool = False
    # When the user said it (the message's own time); the memory's ``valid_from``.
    observed_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict (enums as values, datetimes as ISO-8601): what the queue stores."""
        return {
            "text": self.text,
            "type": self.type.value,
            "key": self.key,
            "importance": self.importance,
            "source": self.source.value,
            "confidence": self.confidence,
            "event_time": _iso(self.event_time),
            "expires_at": _iso(self.expires_at),
            "origin_message_ids": list(self.origin_message_ids),
            "forget": self.forget,
            "observed_at": _iso(self.observed_at),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CandidateMemory:
        """Inverse of ``to_dict``; missing fields take their defaults."""
        return cls(
            text=str(data["text"]),
            type=MemoryType(data.get("type", "semantic")),
            key=data.get("key"),
            importance=float(data.get("importance", 0.5)),
            source=MemorySource(data.get("source", "user_stated")),
            confidence=float(data.get("confidence", 1.0)),
            event_time=_from_iso(data.get("event_time")),
            expires_at=_from_iso(data.get("expires_at")),
            origin_message_ids=tuple(data.get("origin_message_ids") or ()),
            forget=bool(data.get("forget", False)),
            observed_at=_from_iso(data.get("observed_at")),
        )


MemoryAction = Literal["add", "supersede", "merge", "ignore", "delete"]


@dataclass(frozen=True, slots=True)
class MemoryOp:
    """One decision of ``reconcile``, kept in its audit log."""

    action: MemoryAction
    candidate: CandidateMemory | None
    target_ids: tuple[str, ...] = ()
    reason: str = ""
    result_id: str | None = None
    # (target id, text): what stays true of a superseded target ("we're on the Pro plan"
    # once "the workspace was renamed" retires the rest of that turn), stored again
    # under the target's key.
    kept: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict: what the queue's plan and audit rows store."""
        out: dict[str, Any] = {
            "action": self.action,
            "candidate": self.candidate.to_dict() if self.candidate else None,
            "target_ids": list(self.target_ids),
            "reason": self.reason,
            "result_id": self.result_id,
        }
        if self.kept:
            out["kept"] = [list(pair) for pair in self.kept]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryOp:
        """Inverse of ``to_dict``."""
        candidate = data.get("candidate")
        return cls(
            action=data["action"],
            candidate=CandidateMemory.from_dict(candidate) if candidate else None,
            target_ids=tuple(data.get("target_ids") or ()),
            reason=str(data.get("reason", "")),
            result_id=data.get("result_id"),
            kept=tuple((str(t), str(text)) for t, text in data.get("kept") or ()),
        )


@dataclass(frozen=True, slots=True)
class ForgetReceipt:
    """What ``forget_user`` removed: counts only, never content."""

    user_id_hash: str
    memories_deleted: int
    keyword_rows_deleted: int
    threads_deleted: int
    completed_at: datetime
    # Jobs, queued message ids and audit rows removed from the memory writer's queue.
    queue_rows_deleted: int = 0
    # What was searched and erased, by name: "catalog", "keyword_index",
    # "vectors:embedded" / "vectors:server", "queue_jobs", "queue_audit", "checkpoints".
    scanned: tuple[str, ...] = ()
    # Chroma collections re-created without the user's vectors (their shard, also
    # after a promotion), and the other users' vectors copied into them.
    vector_collections_rebuilt: int = 0
    vectors_rewritten: int = 0
    # A Chroma server keeps dropped segment directories and free pages in its own
    # directory: run ``compact_chroma_directory`` (or the CLI) on the server.
    server_compaction_needed: bool = False


@runtime_checkable
class LongTermMemory(Protocol):
    """What the nodes need from a long-term store (``ChromaMemoryStore`` implements it).

    Every method is scoped to one ``user_id``; implementations fail closed on a
    missing or malformed id. Async twins carry an ``a`` prefix.
    """

    def search_memories(
        self,
        user_id: str,
        query: str,
        *,
        limit: int = 5,
        types: Sequence[MemoryType] | None = None,
        keys: Sequence[str] | None = None,
        include_history: bool = False,
        as_of: datetime | None = None,
        explain: bool = False,
        min_relevance: float | None = None,
        weights: Any = None,
    ) -> list[ScoredMemory]: ...

    async def asearch_memories(
        self,
        user_id: str,
        query: str,
        *,
        limit: int = 5,
        types: Sequence[MemoryType] | None = None,
        keys: Sequence[str] | None = None,
        include_history: bool = False,
        as_of: datetime | None = None,
        explain: bool = False,
        min_relevance: float | None = None,
        weights: Any = None,
    ) -> list[ScoredMemory]: ...

    def put_memory(self, record: MemoryRecord) -> MemoryRecord: ...
    async def aput_memory(self, record: MemoryRecord) -> MemoryRecord: ...
    def get_memory(self, user_id: str, memory_id: str) -> MemoryRecord | None: ...
    async def aget_memory(self, user_id: str, memory_id: str) -> MemoryRecord | None: ...
    def list_memories(
        self, user_id: str, *, include_history: bool = False
    ) -> list[MemoryRecord]: ...
    async def alist_memories(
        self, user_id: str, *, include_history: bool = False
    ) -> list[MemoryRecord]: ...
    def supersede(self, user_id: str, old_id: str, new: MemoryRecord) -> MemoryRecord: ...
    async def asupersede(self, user_id: str, old_id: str, new: MemoryRecord) -> MemoryRecord: ...
    def delete_memory(self, user_id: str, memory_id: str) -> None: ...
    async def adelete_memory(self, user_id: str, memory_id: str) -> None: ...
    def touch(
        self, user_id: str, memory_ids: Sequence[str], *, at: datetime | None = None
    ) -> None: ...
    async def atouch(
        self, user_id: str, memory_ids: Sequence[str], *, at: datetime | None = None
    ) -> None: ...
    def forget_user(
        self, user_id: str, *, checkpointer: Any = None, memory_queue: Any = None
    ) -> ForgetReceipt: ...
    async def aforget_user(
        self, user_id: str, *, checkpointer: Any = None, memory_queue: Any = None
    ) -> ForgetReceipt: ...
