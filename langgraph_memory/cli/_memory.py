"""Commands on the long-term store: memories, forget, and a user's export / import.

Only the store's public methods (``list_memories``, ``search_memories``,
``put_memory``, ``forget_user``) are used.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict
from datetime import datetime
from typing import Any, TextIO

from langgraph_memory.errors import ConfigurationError
from langgraph_memory.types import MemoryRecord

MEMORY_EXPORT_KIND = "langgraph-memory/memories"


def _when(value: datetime | None) -> str | None:
    return value.isoformat(timespec="seconds") if value is not None else None


def memory_row(record: MemoryRecord) -> dict[str, Any]:
    """What an operator needs to judge one memory: type, provenance, validity."""
    return {
        "id": record.id,
        "type": record.type.value,
        "status": record.status.value,
        "text": record.text,
        "key": record.key,
        "source": record.source.value,
        "confidence": record.confidence,
        "importance": record.importance,
        "origin_thread_id": record.origin_thread_id,
        "origin_message_ids": list(record.origin_message_ids),
        "valid_from": _when(record.valid_from),
        "valid_to": _when(record.valid_to),
        "expires_at": _when(record.expires_at),
        "supersedes": list(record.supersedes),
        "superseded_by": record.superseded_by,
        "access_count": record.access_count,
        "last_accessed_at": _when(record.last_accessed_at),
    }


def memories(
    store: Any, user_id: str, *, query: str | None, limit: int, history: bool
) -> list[dict[str, Any]]:
    """A user's memories; with ``query``, ranked, each with why it would be recalled."""
    if query is None:
        records = store.list_memories(user_id, include_history=history)
        return [memory_row(r) for r in records[:limit]]
    scored = store.search_memories(
        user_id, query, limit=limit, explain=True, include_history=history
    )
    rows = []
    for item in scored:
        row = memory_row(item.record)
        row["score"] = round(item.score, 4)
        row["why"] = (
            {k: round(v, 4) for k, v in asdict(item.breakdown).items()} if item.breakdown else None
        )
        rows.append(row)
    return rows


def forget(store: Any, user_id: str, saver: Any | None) -> dict[str, Any]:
    """``forget_user``: the receipt (counts only, never content)."""
    receipt = store.forget_user(user_id, checkpointer=saver)
    out = asdict(receipt)
    out["completed_at"] = _when(receipt.completed_at)
    return out


def export_memories(store: Any, user_id: str, out: TextIO, *, history: bool) -> int:
    """Write a header line, then one ``MemoryRecord.to_dict()`` per line."""
    records = store.list_memories(user_id, include_history=history)
    out.write(json.dumps({"kind": MEMORY_EXPORT_KIND, "version": 1, "user_id": user_id}) + "\n")
    for record in records:
        out.write(json.dumps(record.to_dict(), default=str) + "\n")
    return len(records)


def import_memories(store: Any, lines: Iterable[str], user_id: str | None) -> dict[str, Any]:
    """Store each exported record (under ``user_id`` if given); ids are kept, so
    importing a file twice stores each memory once."""
    rows = [line for line in lines if line.strip()]
    if not rows:
        raise ConfigurationError("the file is empty; pass a `langgraph-memory export --user` file.")
    try:
        header = json.loads(rows[0])
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"line 1 is not JSON ({exc}).") from exc
    if header.get("kind") != MEMORY_EXPORT_KIND:
        raise ConfigurationError(
            f"the first line says kind={header.get('kind')!r}, not {MEMORY_EXPORT_KIND!r}; "
            "for threads use `import --db`."
        )
    target = user_id or str(header["user_id"])
    stored = 0
    for number, raw in enumerate(rows[1:], start=2):
        try:
            data = json.loads(raw)
            record = MemoryRecord.from_dict({**data, "user_id": target})
        except (json.JSONDecodeError, TypeError, ValueError, KeyError) as exc:
            raise ConfigurationError(f"line {number} is not a memory record ({exc}).") from exc
        store.put_memory(record)
        stored += 1
    return {"user_id": target, "memories": stored}
