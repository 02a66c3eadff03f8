"""How the core keys and encodes rows, pure.

A RunnableConfig parsed into a validated :class:`CheckpointKey`
(``parse_config``, ``parse_thread_id``), channel versions as rows key them
(``version_key``, ``body_versions``), the small scalars a checkpoint body
carries inline instead of as value rows (``is_inline_value``), merging msgpack
list chunks as bytes (``merge_msgpack_chunks``, ``COMPACT_BLOCK``), and the
JSON fallback for metadata (``_json_default``).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig

from langgraph_memory.errors import ConfigurationError
from langgraph_memory.limits import MAX_THREAD_ID_BYTES
from langgraph_memory.session._inputs import checked_id, checked_key
from langgraph_memory.session._reads import msgpack_array_header

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


def _json_default(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)
