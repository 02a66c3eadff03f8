"""Take a deleted memory out of the recall blocks that threads already saved (pure).

The recall node saves its block in the thread's state: one ``SystemMessage``
(id ``RECALL_MESSAGE_ID``) whose text renders each injected memory as one line
and whose ``additional_kwargs["langgraph_memory"]`` lists the injected ids
(``nodes/recall/``). Every checkpoint of that turn keeps the message, and so
does the node's pending write; a later turn replaces it in the live state, not
in the history. Deleting the memory from the store leaves those copies.

:class:`RecallScrub` is the rewrite the savers apply to a thread's stored values
(``saver.rewrite_threads``; ``store.delete_memory(..., checkpointer=saver)``
drives it over the user's threads, ``longterm/erasure.py``). In each recall
message that names a deleted id or quotes a deleted text:

* every line quoting the memory (its text as rendered) becomes ``DELETED_LINE``
  (a block whose metadata lists other ids only is left alone: the same words
  there are another memory; a block without metadata, from an older version, is
  matched on the text alone);
* its id leaves ``memory_ids``, ``profile_ids`` and the ``explain`` rows;
* a block that names the id but has no line quoting it (the text was
  overwritten since, or the caller passed only ids) is replaced whole by
  ``DELETED_BLOCK``: the block is history, a turn that already ran, so losing
  its other lines costs nothing later turns use (each turn renders afresh).

No separate ledger of "which memory was injected on which thread" is kept: the
block itself lists its ids, and the saver's thread owners (an indexed column)
say which threads are the user's, so nothing can fall out of step with what the
checkpoints hold, and a turn pays no extra write. The price is that a delete
reads all of the user's threads, skipping undecoded every blob whose bytes hold
neither the recall message's id nor the memory (``may_touch``).

Other messages are left alone: what the user or the model *said* about the
memory is the conversation, which goes with the thread (``delete_thread``).
The summary block never holds a recall block: compress summarises the
conversation turns only (``nodes/_messages.split_header`` sets our blocks apart).

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> from langgraph_memory.nodes.recall import pack_memories, recall_update
    >>> from langgraph_memory.types import MemoryRecord, ScoredMemory
    >>> pet = MemoryRecord("User's pet is a zebra finch", id="m1")
    >>> tea = MemoryRecord("User drinks green tea", id="m2")
    >>> packed = pack_memories([ScoredMemory(pet, 0.9), ScoredMemory(tea, 0.8)], budget_tokens=400)
    >>> update = recall_update([HumanMessage("hi", id="h")], packed)
    >>> block = next(m for m in update["messages"] if m.id == RECALL_MESSAGE_ID)
    >>> scrub = RecallScrub(["m1"], [pet.text])
    >>> [clean] = scrub([block])
    >>> "zebra" in clean.content, "green tea" in clean.content, DELETED_LINE in clean.content
    (False, True, True)
    >>> clean.additional_kwargs["langgraph_memory"]["memory_ids"]
    ['m2']
    >>> scrub([clean])[0] is clean  # nothing left to erase: the same object back
    True
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langchain_core.messages import BaseMessage

from langgraph_memory.errors import ConfigurationError
from langgraph_memory.nodes.recall import RECALL_METADATA_KEY, clean_memory_text
from langgraph_memory.prompts.recall import RECALL_MESSAGE_ID

__all__ = ["DELETED_BLOCK", "DELETED_LINE", "RecallScrub", "check_rewritable"]

# What stands where a deleted memory's line was: the model reading an old block
# (a fork, a replay) sees that something was there and is gone, never the text.
DELETED_LINE = "- [memory deleted]"
DELETED_BLOCK = (
    "<long_term_memory>\n[this block quoted a memory that was deleted]\n</long_term_memory>"
)
# Values nest messages this deep at most: a write's list, a ``__start__`` dict's list.
_MAX_DEPTH = 4
_RECALL_ID_BYTES = RECALL_MESSAGE_ID.encode()


class RecallScrub:
    """A saver's ``ValueRewrite``: recall blocks without the given memories.

    Args:
        memory_ids: the deleted memories' ids.
        texts: their texts as stored (redacted), for the lines that quote them;
            without them a block naming an id is replaced whole.
    """

    def __init__(self, memory_ids: Iterable[str], texts: Iterable[str] = ()) -> None:
        self.memory_ids = frozenset(str(m) for m in memory_ids)
        self.lines = tuple(dict.fromkeys(c for t in texts if (c := clean_memory_text(t))))
        self._needles = tuple(n.encode() for n in (*self.memory_ids, *self.lines) if n)

    def __repr__(self) -> str:  # never the texts: reprs reach logs and errors
        return f"RecallScrub({len(self.memory_ids)} ids, {len(self.lines)} texts)"

    def may_touch(self, blob: bytes) -> bool:
        """A plain msgpack blob can only need a rewrite if it holds a recall message
        and one of the ids or lines (msgpack keeps strings as their UTF-8 bytes)."""
        return _RECALL_ID_BYTES in blob and any(n in blob for n in self._needles)

    def __call__(self, value: Any, depth: int = 0) -> Any:
        if isinstance(value, BaseMessage):
            return self._message(value) if value.id == RECALL_MESSAGE_ID else value
        if depth >= _MAX_DEPTH:
            return value
        if type(value) in (list, tuple):
            items = [self(item, depth + 1) for item in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return items if type(value) is list else tuple(items)
        if type(value) is dict:
            out = {k: self(v, depth + 1) for k, v in value.items()}
            return out if any(out[k] is not v for k, v in value.items()) else value
        return value

    def _message(self, message: BaseMessage) -> BaseMessage:
        metadata = message.additional_kwargs.get(RECALL_METADATA_KEY)
        listed = metadata.get("memory_ids") if isinstance(metadata, dict) else None
        named = isinstance(listed, list) and bool(self.memory_ids & {str(i) for i in listed})
        if isinstance(listed, list) and not named:
            # The block says what it holds, and not these: a line with the same
            # words is another memory (the fact said again later, under a new id).
            return message
        content = message.content
        if isinstance(content, str):
            lines = content.split("\n")
            kept = [DELETED_LINE if any(t in line for t in self.lines) else line for line in lines]
            quoted = kept != lines
            text = "\n".join(kept)
        else:  # content blocks: not what the recall node writes; erase the whole block
            quoted, text = named, DELETED_BLOCK
        if not (quoted or named):
            return message
        if named and not quoted:
            text = DELETED_BLOCK  # the id is there, its line cannot be told apart
        kwargs = dict(message.additional_kwargs)
        if isinstance(metadata, dict):
            kwargs[RECALL_METADATA_KEY] = self._metadata(metadata)
        return message.model_copy(update={"content": text, "additional_kwargs": kwargs})

    def _metadata(self, metadata: dict[str, Any]) -> dict[str, Any]:
        out = dict(metadata)
        for key in ("memory_ids", "profile_ids"):
            if isinstance(out.get(key), list):
                out[key] = [i for i in out[key] if str(i) not in self.memory_ids]
        if isinstance(out.get("explain"), list):
            out["explain"] = [
                row
                for row in out["explain"]
                if not (isinstance(row, dict) and str(row.get("memory_id")) in self.memory_ids)
            ]
        return out


def check_rewritable(checkpointer: Any) -> None:
    """Refuse, before anything is deleted, a checkpointer that cannot rewrite its rows."""
    if not callable(getattr(checkpointer, "rewrite_threads", None)):
        raise ConfigurationError(
            f"checkpointer={type(checkpointer).__name__}: erasing a memory from saved "
            "recall blocks needs a langgraph_memory saver (SqliteSaver, AsyncSqliteSaver, "
            "PostgresSaver, AsyncPostgresSaver), which can rewrite its rows; pass one, or "
            "leave checkpointer out and delete the user's threads instead."
        )
