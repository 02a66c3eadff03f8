"""Pure mapping between store values, SQLite rows, LangGraph items and memory records.

Example:
    >>> item_id_for("alice", "memories.alice", "m1") == item_id_for("alice", "memories.alice", "m1")
    True
    >>> len(item_id_for("alice", "memories.alice", "m1"))
    32
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import Item, SearchItem
from langgraph.store.base.embed import get_text_at_path

from langgraph_memory.encryption import EncryptionKeys, is_sealed_text, row_aad, text_envelope
from langgraph_memory.errors import DecryptionError
from langgraph_memory.longterm.where import decode_namespace
from langgraph_memory.scoring import importance_score, last_active_at
from langgraph_memory.types import MemoryRecord

# Value fields embedded and keyword-indexed when the index config names none:
# ``text`` (MemoryRecord) and ``content`` (langmem's manage_memory tool).
DEFAULT_TEXT_FIELDS: tuple[str, ...] = ("text", "content")
_RECORD_MARKERS = frozenset({"text", "type", "status", "importance"})


@dataclass(frozen=True, slots=True)
class ItemRow:
    """One ``lt_items`` row, as selected by ``_sql.ITEM_COLUMNS``."""

    rowid: int
    item_id: str
    partition: str
    namespace: str
    key: str
    value: str
    created_ts: float
    updated_ts: float
    ttl_minutes: float | None
    expires_ts: float | None
    has_vector: int
    mem_importance: float | None
    mem_active_ts: float | None

    @classmethod
    def from_tuple(cls, row: Sequence[Any], keys: EncryptionKeys | None = None) -> ItemRow:
        """The row, its stored value opened when the store has ``encryption=``."""
        value = row[5]
        if keys is not None or is_sealed_text(value):
            fields = list(row[:13])
            fields[5] = open_value(keys, str(row[2]), str(row[1]), value)
            return cls(*fields)
        return cls(*row[:13])

    def value_dict(self) -> dict[str, Any]:
        loaded = json.loads(self.value)
        return loaded if isinstance(loaded, dict) else {"value": loaded}


def _memory_label(partition: str, item_id: str) -> str:
    return f"the memory row (user={partition!r}, item_id={item_id!r})"


def seal_value(keys: EncryptionKeys | None, partition: str, item_id: str, text: str) -> str:
    """The ``value`` column for a store value's JSON ``text``: sealed, bound to the
    memory's user (partition) and item id (which hashes its namespace and key)."""
    if keys is None:
        return text
    return keys.seal_text(text, row_aad("memory", partition, item_id))


def open_value(keys: EncryptionKeys | None, partition: str, item_id: str, stored: str) -> str:
    """The value JSON of a stored ``value`` column (``seal_value``'s inverse).

    Raises:
        PlaintextRowError: a clear value read by a store with ``encryption=``.
        DecryptionError: a sealed value moved to another memory or user, altered,
            under a key the ring lacks, or read by a store without ``encryption=``.
    """
    label = _memory_label(partition, item_id)
    if keys is None:
        raise DecryptionError(
            f"{label} is encrypted, but this store was opened without encryption=; open it "
            "with encryption=EncryptionKeys(...) holding its key.",
            row=label,
        )
    return keys.open_text(stored, row_aad("memory", partition, item_id), row=label)


def reseal_value(
    keys: EncryptionKeys, partition: str, item_id: str, stored: str, *, encrypt_plaintext: bool
) -> str | None:
    """``stored`` sealed again under the current key, or ``None`` when it already is.
    A clear value is sealed only with ``encrypt_plaintext`` (else PlaintextRowError)."""
    if is_sealed_text(stored):
        if keys.key_id_of(text_envelope(stored, _memory_label(partition, item_id))) == keys.current:
            return None
        text = open_value(keys, partition, item_id, stored)
    elif encrypt_plaintext:
        text = stored
    else:
        text = open_value(keys, partition, item_id, stored)  # raises PlaintextRowError
    return seal_value(keys, partition, item_id, text)


def item_id_for(partition: str, namespace: str, key: str) -> str:
    """Opaque, stable id shared by the catalog, FTS5 and Chroma: no text leaks into Chroma."""
    digest = hashlib.blake2b(
        "\x1f".join((partition, namespace, key)).encode(), digest_size=16
    ).hexdigest()
    return digest


def partition_token(partition: str) -> str:
    """The FTS5 token standing for a partition (hex only, so it is one unicode61 token)."""
    return "p" + hashlib.blake2b(partition.encode(), digest_size=12).hexdigest()


def term_scope(partition: str) -> str:
    """The prefix that makes a keyword term belong to one partition's term list.

    FTS5 keeps one posting list per term for the whole file, so an unscoped
    "coffee" lists every user's rows and a query reads them all (5.5 ms at 100k
    memories, growing with the store). Prefixed with this, a term lists one
    partition's rows only. 40 bits: two partitions sharing a prefix would only
    share posting lists (cost), never results, since every query also binds
    ``partition = ?``. Hex after a letter, so prefix + term stays one unicode61 token.

    Example:
        >>> scope = term_scope("alice")
        >>> len(scope), scope[0], scope == term_scope("alice") != term_scope("bob")
        (11, 'u', True)
    """
    return "u" + hashlib.blake2b(partition.encode(), digest_size=5).hexdigest()


def to_ts(value: datetime | None) -> float | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.timestamp()


def from_ts(value: float) -> datetime:
    return datetime.fromtimestamp(value, tz=UTC)


def redact_value(value: Any, redact_text: Callable[[str], str]) -> Any:
    """Redact every string inside a JSON-like value (dict keys are left alone)."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {k: redact_value(v, redact_text) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v, redact_text) for v in value]
    return value


def texts_to_index(
    value: Mapping[str, Any], fields: Sequence[str] | None, index: bool | list[str] | None
) -> list[str]:
    """The texts of a value to embed and keyword-index, following LangGraph's rules.

    ``index=False`` indexes nothing; a list overrides the configured fields; a
    ``"$"`` path means the whole value as JSON.
    """
    if index is False:
        return []
    paths = list(index) if isinstance(index, list) else list(fields or DEFAULT_TEXT_FIELDS)
    texts: list[str] = []
    for path in paths:
        if path == "$":
            texts.append(json.dumps(value, ensure_ascii=False, sort_keys=True))
            continue
        texts.extend(t for t in get_text_at_path(value, path) if t)
    return texts


def looks_like_record(value: Mapping[str, Any]) -> bool:
    """A value written by ``MemoryRecord.to_dict`` (typed columns are derived from it)."""
    return value.keys() >= _RECORD_MARKERS


def record_columns(value: Mapping[str, Any]) -> tuple[Any, ...]:
    """``(mem_status, mem_type, mem_key, valid_from_ts, valid_to_ts, mem_expires_ts,
    mem_importance, mem_active_ts)``; all ``None`` for values that are not records."""
    if not looks_like_record(value):
        return (None,) * 8
    record = MemoryRecord.from_dict(value)
    return (
        record.status.value,
        record.type.value,
        record.key,
        to_ts(record.valid_from),
        to_ts(record.valid_to),
        to_ts(record.expires_at),
        importance_score(record),
        to_ts(last_active_at(record)),
    )


def row_to_item(row: ItemRow, score: float | None = None, *, search: bool = False) -> Item:
    kwargs: dict[str, Any] = {
        "namespace": decode_namespace(row.namespace),
        "key": row.key,
        "value": row.value_dict(),
        "created_at": from_ts(row.created_ts),
        "updated_at": from_ts(row.updated_ts),
    }
    if search:
        return SearchItem(score=score, **kwargs)
    return Item(**kwargs)


def row_to_record(row: ItemRow) -> MemoryRecord:
    return MemoryRecord.from_dict(row.value_dict())


# Parsed records kept per store: a recall turn at 10k memories parses ~25 rows
# (winners and profile candidates, mostly the same rows every turn) at ~30 us
# each (JSON decode, datetimes, enums, __post_init__ validation): ~0.8 ms of a
# ~6 ms store call. 4,096 entries of ~1 kB each.
DEFAULT_RECORD_CACHE_ENTRIES = 4096


class RecordCache:
    """``MemoryRecord``s parsed from catalog rows, keyed by ``(partition, value text)``.

    Exact by construction: the key is the stored JSON itself, so a row whose
    value changed (an update, a touch, a supersede, another instance's write)
    misses and is parsed again; records are frozen, so sharing them is safe.
    Text a store deletes is dropped with its partition (:meth:`drop`, called by
    the delete paths); an entry another instance deleted can only be evicted,
    never returned, since no row carries its text any more.

    Example:
        >>> row = ItemRow(1, "i", "alice", "memories\x1falice", "m1",
        ...     '{"text": "User likes tea", "type": "semantic", "status": "active",'
        ...     ' "importance": 0.5, "id": "m1"}', 0.0, 0.0, None, None, 0, 0.5, 0.0)
        >>> cache = RecordCache()
        >>> cache.record(row) is cache.record(row), cache.record(row).text
        (True, 'User likes tea')
        >>> cache.drop("alice"); len(cache)
        0
    """

    def __init__(self, max_entries: int = DEFAULT_RECORD_CACHE_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: dict[tuple[str, str], MemoryRecord] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def record(self, row: ItemRow) -> MemoryRecord:
        key = (row.partition, row.value)
        found = self._entries.get(key)
        if found is not None:
            return found
        record = row_to_record(row)  # raises on a bad value, as uncached
        if self.max_entries > 0:
            with self._lock:
                while len(self._entries) >= self.max_entries:
                    del self._entries[next(iter(self._entries))]  # oldest first
                self._entries[key] = record
        return record

    def carry(self, partition: str, old_value: str, new_value: str, **changes: Any) -> None:
        """Key the cached record of ``old_value`` under ``new_value`` too, with ``changes``.

        For writes that change a few fields of a stored value and nothing else
        (``touch``: ``last_accessed_at`` and ``access_count``): the next turn finds
        the record instead of parsing it again (~30 us each, ~8 per turn). The
        caller passes each changed field as ``MemoryRecord.from_dict`` would parse
        it, so the carried record equals a fresh parse of ``new_value``.
        """
        old = self._entries.get((partition, old_value))
        if old is None or self.max_entries <= 0:
            return
        record = replace(old, **changes)
        with self._lock:
            while len(self._entries) >= self.max_entries:
                del self._entries[next(iter(self._entries))]
            self._entries[(partition, new_value)] = record

    def drop(self, partition: str) -> None:
        """Forget every record of ``partition`` (after it lost rows)."""
        with self._lock:
            for key in [k for k in self._entries if k[0] == partition]:
                del self._entries[key]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
