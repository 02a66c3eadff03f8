"""The recall message: the metadata it carries, the state update that installs it, reading it back.

``recall_update`` wraps a ``PackedRecall`` in the one ``SystemMessage`` (fixed id)
that replaces the previous turn's block, with ``additional_kwargs["langgraph_memory"]``
saying what was injected (``recall_metadata``); ``recalled_block`` and
``recalled_metadata`` find the block and that metadata in a message list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AnyMessage, BaseMessage, SystemMessage

from langgraph_memory.nodes._messages import message_text, upsert_memory_message
from langgraph_memory.nodes.recall._block import PackedRecall
from langgraph_memory.prompts.recall import RECALL_MESSAGE_ID

# The key of the recall message's ``additional_kwargs`` that says what was injected.
RECALL_METADATA_KEY = "langgraph_memory"


def recall_metadata(
    packed: PackedRecall, query: str | None, *, explain: bool = False
) -> dict[str, Any]:
    """``{"memory_ids", "profile_ids", "query"}`` (+ ``"explain"`` rows) for the message."""
    metadata: dict[str, Any] = {
        "memory_ids": list(packed.memory_ids),
        "profile_ids": list(packed.profile_ids),
        "query": query,
    }
    if explain:
        metadata["explain"] = [
            {
                "memory_id": d.memory_id,
                "part": d.part,
                "reason": d.reason,
                "injected": d.injected,
                "note": d.note,
            }
            for d in packed.decisions
        ]
    return metadata


def recall_update(
    messages: Sequence[AnyMessage],
    packed: PackedRecall,
    query: str | None = None,
    *,
    explain: bool = False,
) -> dict[str, Any]:
    """The state update that installs this turn's block (replacing the previous one).

    The message carries ``additional_kwargs["langgraph_memory"]`` (see
    :func:`recall_metadata`) so tools and tests can see exactly what was injected.
    """
    message = SystemMessage(
        content=packed.text,
        id=RECALL_MESSAGE_ID,
        additional_kwargs={RECALL_METADATA_KEY: recall_metadata(packed, query, explain=explain)},
    )
    for existing in messages:
        if (
            existing.id == RECALL_MESSAGE_ID
            and existing.content == message.content
            and existing.additional_kwargs == message.additional_kwargs
        ):
            return {}  # unchanged: no write, no checkpoint churn
    return {"messages": upsert_memory_message(messages, message)}


def recalled_block(messages: Sequence[BaseMessage]) -> str | None:
    """The current recall block in a message list, if any (handy in tests and demos)."""
    for message in messages:
        if message.id == RECALL_MESSAGE_ID:
            return message_text(message)
    return None


def recalled_metadata(messages: Sequence[BaseMessage]) -> dict[str, Any] | None:
    """What the current recall block injected: ``{"memory_ids", "profile_ids", "query"}``.

    Read from the recall message's ``additional_kwargs["langgraph_memory"]``; ``None``
    when there is no recall block (or it was written by a version without metadata).
    """
    for message in messages:
        if message.id == RECALL_MESSAGE_ID:
            metadata = message.additional_kwargs.get(RECALL_METADATA_KEY)
            return dict(metadata) if isinstance(metadata, dict) else None
    return None
