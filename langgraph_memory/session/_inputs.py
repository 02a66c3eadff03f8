"""Checks of what callers hand a saver, so every bad input fails with a typed
error that names the value and says the fix (never an ``AttributeError`` from
deep inside a put, a ``UnicodeEncodeError`` from the driver, or a database
error after retries). The limits are those of :mod:`langgraph_memory.limits`.

The hot path pays little: an ASCII id within its limit is accepted after two
string scans (``isascii`` and a NUL search, ~0.1 us); everything else takes
the full check.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph_memory.errors import ConfigurationError, InvalidCheckpointError, InvalidFilterError
from langgraph_memory.limits import (
    MAX_CHECKPOINT_ID_BYTES,
    MAX_CHECKPOINT_NS_BYTES,
    MAX_THREAD_ID_BYTES,
    check_id_bytes,
)

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def checked_id(name: str, value: str, limit: int) -> str:
    """``value`` (a str) if it fits ``limit`` UTF-8 bytes and holds no NUL or lone surrogate."""
    if value.isascii() and len(value) <= limit and "\x00" not in value:
        return value
    return check_id_bytes(name, value, limit)


def checked_key(thread_id: str, ns: str, checkpoint_id: str | None) -> None:
    checked_id("thread_id", thread_id, MAX_THREAD_ID_BYTES)
    if ns:
        checked_id("checkpoint_ns", ns, MAX_CHECKPOINT_NS_BYTES)
    if checkpoint_id is not None:
        checked_id("checkpoint_id", checkpoint_id, MAX_CHECKPOINT_ID_BYTES)


def check_put_arguments(checkpoint: Any, metadata: Any, new_versions: Any) -> None:
    """The shapes ``put`` needs: a Checkpoint dict, a metadata mapping, a versions mapping."""
    if not isinstance(checkpoint, Mapping):
        raise InvalidCheckpointError(
            f"checkpoint={_short(checkpoint)} ({type(checkpoint).__name__}) is not a "
            "Checkpoint; pass the dict LangGraph builds (langgraph.checkpoint.base."
            "empty_checkpoint() has its shape)."
        )
    for name in ("channel_values", "channel_versions"):
        part = checkpoint.get(name)
        if part is not None and not isinstance(part, Mapping):
            raise InvalidCheckpointError(
                f"checkpoint[{name!r}]={_short(part)} must be a dict of channel -> value."
            )
    if not isinstance(metadata, Mapping):
        raise InvalidCheckpointError(
            f"metadata={_short(metadata)} ({type(metadata).__name__}) is not a mapping; pass "
            "CheckpointMetadata, e.g. {'source': 'loop', 'step': 1} ({} if there is none)."
        )
    if not isinstance(new_versions, Mapping):
        raise InvalidCheckpointError(
            f"new_versions={_short(new_versions)} ({type(new_versions).__name__}) is not a "
            "mapping; pass ChannelVersions (channel -> version), {} when nothing changed."
        )
    for channel, version in new_versions.items():
        if isinstance(version, bool) or not isinstance(version, (str, int, float)):
            raise InvalidCheckpointError(
                f"new_versions[{channel!r}]={_short(version)} is not a version; use the "
                "str/int/float that get_next_version() returned."
            )


def check_writes(writes: Any, task_id: Any, task_path: Any) -> Sequence[tuple[str, Any]]:
    """``put_writes``' arguments: a sequence of (channel, value) pairs and string task ids."""
    if isinstance(writes, (str, bytes)) or not isinstance(writes, Sequence):
        raise InvalidCheckpointError(
            f"writes={_short(writes)} ({type(writes).__name__}) must be a list of "
            "(channel, value) pairs, e.g. [('messages', [...])]."
        )
    for index, write in enumerate(writes):
        if not isinstance(write, (tuple, list)) or len(write) != 2 or not isinstance(write[0], str):
            raise InvalidCheckpointError(
                f"writes[{index}]={_short(write)} is not a (channel, value) pair with a "
                "string channel name."
            )
        checked_id(f"writes[{index}] channel", write[0], MAX_CHECKPOINT_ID_BYTES)
    if not isinstance(task_id, str) or not task_id:
        raise InvalidCheckpointError(
            f"task_id={task_id!r} must be a non-empty string (LangGraph passes the task's id)."
        )
    checked_id("task_id", task_id, MAX_CHECKPOINT_ID_BYTES)
    if not isinstance(task_path, str):
        raise InvalidCheckpointError(f"task_path={task_path!r} must be a string ('' if none).")
    checked_id("task_path", task_path, MAX_CHECKPOINT_NS_BYTES)
    return writes


def check_text(name: str, text: str) -> str:
    """``text`` if a database can store it as UTF-8 (no lone surrogate, no NUL)."""
    if text.isascii() and "\x00" not in text:
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidCheckpointError(
            f"{name} contains a lone surrogate {text[exc.start]!r} at position {exc.start} "
            f"(near {text[max(0, exc.start - 20) : exc.start + 20]!r}); pass valid Unicode."
        ) from None
    if "\x00" in text:
        at = text.index("\x00")
        raise InvalidCheckpointError(
            f"{name} contains a NUL character at position {at} "
            f"(near {text[max(0, at - 20) : at + 20]!r}); databases cannot store it in text."
        )
    return text


def serialization_refused(what: str, value: Any, exc: Exception) -> InvalidCheckpointError:
    return InvalidCheckpointError(
        f"{what}={_short(value)} ({type(value).__name__}) cannot be serialized: {exc}. "
        "Store JSON-like values, LangChain messages, dataclasses or pydantic models, or "
        "pass a serde= that handles this type."
    )


def check_before(before: Any) -> str | None:
    """``list(before=...)``: a RunnableConfig naming a checkpoint id, or None."""
    if before is None:
        return None
    configurable = before.get("configurable") if isinstance(before, Mapping) else None
    if not isinstance(configurable, Mapping):
        raise ConfigurationError(
            f"before={_short(before)} is not a RunnableConfig; pass the config of a "
            "checkpoint, e.g. {'configurable': {'thread_id': ..., 'checkpoint_id': ...}}."
        )
    checkpoint_id = configurable.get("checkpoint_id")
    if checkpoint_id is None or checkpoint_id == "":
        return None
    if not isinstance(checkpoint_id, str):
        raise ConfigurationError(
            f"before checkpoint_id={checkpoint_id!r} must be a string id returned by put()."
        )
    return checked_id("before checkpoint_id", checkpoint_id, MAX_CHECKPOINT_ID_BYTES)


def check_limit(limit: Any) -> int | None:
    if limit is None:
        return None
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise ConfigurationError(f"limit={limit!r}; use an integer >= 0 or None.")
    return limit


def check_filter(metadata_filter: Mapping[str, Any]) -> None:
    """Values a metadata filter can compare: JSON scalars within int64, finite
    floats, text without lone surrogates or NUL, and dicts/lists of those."""
    for key, value in metadata_filter.items():
        _check_filter_value(key, value, value)


def _check_filter_value(key: Any, value: Any, whole: Any) -> None:
    bad: str | None = None
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        if not INT64_MIN <= value <= INT64_MAX:
            bad = "an integer outside the 64-bit range the metadata column stores"
    elif isinstance(value, float):
        if not math.isfinite(value):
            bad = "not a finite number"
    elif isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            bad = "text with a lone surrogate"
        else:
            if "\x00" in value:
                bad = "text with a NUL character"
    elif isinstance(value, Mapping):
        for item in value.values():
            _check_filter_value(key, item, whole)
        for item_key in value:
            _check_filter_value(key, item_key, whole)
        return
    elif isinstance(value, (list, tuple)):
        for item in value:
            _check_filter_value(key, item, whole)
        return
    if bad is not None:
        raise InvalidFilterError(
            f"list(filter={{{key!r}: {_short(whole)}}}): the value is {bad}, so no "
            "checkpoint's metadata can equal it; filter on a value the metadata holds "
            "(JSON text, a 64-bit integer, a finite float, a bool or None)."
        )


def _short(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:60] + f"... ({len(text)} characters)"
