"""Commands on the checkpoint database: threads, show, recalled, sweep, stats,
and a thread's export / import.

Each command returns plain data (lists of dicts); ``__init__`` prints it as a
table or, with ``--json``, as JSON. Nothing here formats text.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TextIO

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from langgraph_memory.errors import ConfigurationError
from langgraph_memory.migrate import RawWrite, copy_thread
from langgraph_memory.prompts.recall import RECALL_MESSAGE_ID

THREAD_EXPORT_KIND = "langgraph-memory/thread"
PREVIEW_CHARS = 80


def iso(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")


def threads(saver: Any, limit: int | None) -> list[dict[str, Any]]:
    """Every live thread: checkpoints, payload bytes, last activity (newest first)."""
    stats = sorted(saver.storage_stats().threads, key=lambda t: t.updated_at, reverse=True)
    return [
        {
            "thread_id": t.thread_id,
            "checkpoints": t.checkpoints,
            "bytes": t.total_bytes,
            "last_activity": iso(t.updated_at),
        }
        for t in stats[:limit]
    ]


def thread_tuples(saver: Any, thread_id: str) -> list[CheckpointTuple]:
    """The thread's checkpoints (every namespace, newest first), or a clear error."""
    tuples = list(saver.list({"configurable": {"thread_id": thread_id}}))
    if not tuples:
        raise ConfigurationError(
            f"no thread {thread_id!r} in this database (deleted, never written, or a typo); "
            "`langgraph-memory threads --db ...` lists the threads there."
        )
    return tuples


def _message_text(message: Any) -> str:
    content = getattr(message, "content", None)
    if content is None and isinstance(message, Mapping):
        content = message.get("content")
    if isinstance(content, list):
        content = " ".join(
            str(part.get("text", "")) if isinstance(part, Mapping) else str(part)
            for part in content
        )
    return str(content or "")


def _message_type(message: Any) -> str:
    return str(
        getattr(message, "type", None)
        or (message.get("type") if isinstance(message, Mapping) else "?")
    )


def _preview(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def show(saver: Any, thread_id: str, limit: int | None) -> list[dict[str, Any]]:
    """The thread's history, newest first: one row per checkpoint."""
    rows = []
    for tup in thread_tuples(saver, thread_id)[:limit]:
        values = tup.checkpoint.get("channel_values") or {}
        messages = values.get("messages") if isinstance(values, Mapping) else None
        last = messages[-1] if isinstance(messages, list) and messages else None
        conf = tup.config["configurable"]
        rows.append(
            {
                "checkpoint_id": conf["checkpoint_id"],
                "namespace": conf.get("checkpoint_ns", ""),
                "step": tup.metadata.get("step"),
                "source": tup.metadata.get("source"),
                "created_at": tup.checkpoint.get("ts"),
                "parent_id": (tup.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
                "messages": len(messages) if isinstance(messages, list) else None,
                "last_message": (
                    f"{_message_type(last)}: {_preview(_message_text(last))}"
                    if last is not None
                    else None
                ),
                "pending_writes": len(tup.pending_writes or ()),
            }
        )
    return rows


def recalled(saver: Any, thread_id: str) -> list[dict[str, Any]]:
    """What the recall node injected on each turn, oldest first.

    Read from the thread's own history: the recall block is the
    ``SystemMessage`` with id ``RECALL_MESSAGE_ID``; a turn is listed when
    that block changed. The recall node records the memory ids it used in
    ``additional_kwargs["langgraph_memory"]["memory_ids"]``; blocks written
    before it did show ``memory_ids: null``.
    """
    root = [
        t
        for t in thread_tuples(saver, thread_id)
        if not t.config["configurable"].get("checkpoint_ns")
    ]
    turns: list[dict[str, Any]] = []
    previous: str | None = None
    for tup in reversed(root):
        messages = (tup.checkpoint.get("channel_values") or {}).get("messages") or []
        block = next((m for m in messages if getattr(m, "id", None) == RECALL_MESSAGE_ID), None)
        if block is None:
            continue
        text = _message_text(block)
        if text == previous:
            continue
        previous = text
        extra = (getattr(block, "additional_kwargs", None) or {}).get("langgraph_memory") or {}
        human = next((m for m in reversed(messages) if _message_type(m) == "human"), None)
        turns.append(
            {
                "checkpoint_id": tup.config["configurable"]["checkpoint_id"],
                "step": tup.metadata.get("step"),
                "created_at": tup.checkpoint.get("ts"),
                "user_message": _preview(_message_text(human)) if human is not None else None,
                "memory_ids": list(extra["memory_ids"]) if "memory_ids" in extra else None,
                "block": text,
            }
        )
    return turns


def sweep(saver: Any, dry_run: bool, keep_last: int | None) -> dict[str, Any]:
    """``sweep()``; a dry run also says how many checkpoints ``keep_last`` would
    remove at most (the saver's dry run plans thread removals only; it may keep
    a few more, the ancestors a ``DeltaChannel`` value is rebuilt from)."""
    report = saver.sweep(dry_run=dry_run)
    out = {
        "dry_run": report.dry_run,
        "expired_threads": list(report.expired_threads),
        "evicted_threads": list(report.evicted_threads),
        "pruned_checkpoints": report.pruned_checkpoints,
        "bytes_before": report.bytes_before,
        "bytes_after": report.bytes_after,
    }
    if dry_run and keep_last is not None:
        removed = set(report.deleted_threads)
        beyond = 0
        for t in saver.storage_stats().threads:
            if t.thread_id in removed:
                continue
            per_ns: dict[str, int] = {}
            for tup in saver.list({"configurable": {"thread_id": t.thread_id}}):
                ns = tup.config["configurable"].get("checkpoint_ns", "")
                per_ns[ns] = per_ns.get(ns, 0) + 1
            beyond += sum(max(0, n - keep_last) for n in per_ns.values())
        out["prunable_checkpoints_at_most"] = beyond
    return out


def stats(saver: Any) -> dict[str, Any]:
    stats = saver.storage_stats()
    threads = stats.threads
    return {
        "database_bytes": stats.database_bytes,
        "free_bytes": stats.free_bytes,
        "threads": len(threads),
        "checkpoints": sum(t.checkpoints for t in threads),
        "payload_bytes": sum(t.total_bytes for t in threads),
        "largest_thread": max(threads, key=lambda t: t.total_bytes).thread_id if threads else None,
        "last_activity": iso(max((t.updated_at for t in threads), default=None)),
    }


# ------------------------------------------------------------------ export / import

_SERDE = JsonPlusSerializer()


def _typed(value: Any) -> list[str]:
    type_, blob = _SERDE.dumps_typed(value)
    return [type_, base64.b64encode(blob).decode("ascii")]


def _untyped(pair: Sequence[str]) -> Any:
    return _SERDE.loads_typed((pair[0], base64.b64decode(pair[1])))


def export_thread(saver: Any, thread_id: str, out: TextIO) -> int:
    """Write the thread as JSONL (a header, then one line per checkpoint, oldest
    first, each with its pending writes); returns the checkpoints written.

    Values are LangGraph's own typed serialisation, base64-encoded, so every
    message and object round-trips. Write order within a task is kept; the
    task path is not (``list()`` does not return it), which matters only for
    ``DeltaChannel`` threads with parallel tasks.
    """
    tuples = thread_tuples(saver, thread_id)
    out.write(json.dumps({"kind": THREAD_EXPORT_KIND, "version": 1, "thread_id": thread_id}) + "\n")
    for tup in reversed(tuples):
        conf = tup.config["configurable"]
        # list() decodes channel values on first access; items() makes a plain dict.
        checkpoint = {
            **tup.checkpoint,
            "channel_values": dict(tup.checkpoint["channel_values"].items()),
        }
        line = {
            "checkpoint_ns": conf.get("checkpoint_ns", ""),
            "parent_checkpoint_id": (tup.parent_config or {})
            .get("configurable", {})
            .get("checkpoint_id"),
            "checkpoint": _typed(checkpoint),
            "metadata": _typed(dict(tup.metadata)),
            "writes": [
                [task_id, channel, _typed(value)]
                for task_id, channel, value in tup.pending_writes or ()
            ],
        }
        out.write(json.dumps(line) + "\n")
    return len(tuples)


def read_thread_export(
    lines: Iterable[str], thread_id: str | None
) -> tuple[str, list[CheckpointTuple], list[RawWrite]]:
    """Parse ``export_thread`` output; ``thread_id`` renames the thread."""
    it: Iterator[str] = (line for line in lines if line.strip())
    try:
        header = json.loads(next(it))
    except (StopIteration, json.JSONDecodeError) as exc:
        raise ConfigurationError(
            "the file is empty or not JSONL; pass a `langgraph-memory export --thread` file."
        ) from exc
    if header.get("kind") != THREAD_EXPORT_KIND:
        raise ConfigurationError(
            f"the first line says kind={header.get('kind')!r}, not {THREAD_EXPORT_KIND!r}; "
            "for memories use `import --user`."
        )
    target = thread_id or str(header["thread_id"])
    tuples: list[CheckpointTuple] = []
    writes: list[RawWrite] = []
    for number, raw in enumerate(it, start=2):
        try:
            line = json.loads(raw)
            checkpoint = _untyped(line["checkpoint"])
            metadata = _untyped(line["metadata"])
        except (json.JSONDecodeError, KeyError, ValueError, TypeError) as exc:
            raise ConfigurationError(f"line {number} is not a checkpoint line ({exc}).") from exc
        ns = line.get("checkpoint_ns", "")
        config: RunnableConfig = {
            "configurable": {
                "thread_id": target,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint["id"],
            }
        }
        parent = line.get("parent_checkpoint_id")
        parent_config: RunnableConfig | None = (
            {"configurable": {"thread_id": target, "checkpoint_ns": ns, "checkpoint_id": parent}}
            if parent
            else None
        )
        tuples.append(CheckpointTuple(config, checkpoint, metadata, parent_config))
        per_task: dict[str, int] = {}
        for task_id, channel, value in line.get("writes", []):
            idx = per_task.get(task_id, 0)
            per_task[task_id] = idx + 1
            writes.append(
                RawWrite(ns, checkpoint["id"], task_id, "", idx, channel, _untyped(value))
            )
    return target, tuples, writes


def import_thread(saver: Any, lines: Iterable[str], thread_id: str | None) -> dict[str, Any]:
    target, tuples, writes = read_thread_export(lines, thread_id)
    if next(iter(saver.list({"configurable": {"thread_id": target}}, limit=1)), None) is not None:
        raise ConfigurationError(
            f"thread {target!r} already exists in the target database; pass --thread-id NEW to "
            "import it under another id, or delete it first."
        )
    checkpoints, stored = copy_thread(saver, tuples, writes)
    return {"thread_id": target, "checkpoints": checkpoints, "writes": stored}
