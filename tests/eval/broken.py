"""Deliberately broken memory systems, plugged into the exam through ``MemorySystem`` hooks.

Each breaks one guarantee the exam measures, on top of the real components:

* ``never_supersedes``: the writer's store drops every ``key`` and turns ``supersede``
  into a plain add, so old values stay active (stale recall);
* ``ignores_user_id``: recall searches every user's memories (isolation leaks);
* ``stores_assistant_claims``: the extractor reads the assistant's turns as the user's
  own words (false recall of assistant errors);
* ``never_expires``: the extractor drops ``expires_at`` (expired recall).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langgraph_memory.eval.runner import BuildContext, MemorySystem
from langgraph_memory.nodes.rules import RuleBasedExtractor
from langgraph_memory.types import CandidateMemory, MemoryRecord, ScoredMemory


class _Delegating:
    """Every ``LongTermMemory`` method delegates to ``inner``; not a one-pass store."""

    def __init__(self, inner: Any, ctx: BuildContext) -> None:
        self._inner = inner
        self._ctx = ctx

    def __getattr__(self, name: str) -> Any:
        if name in ("recall_memories", "arecall_memories"):
            raise AttributeError(name)  # recall then uses search_memories, which we override
        return getattr(self._inner, name)


class _KeylessStore(_Delegating):
    def put_memory(self, record: MemoryRecord) -> MemoryRecord:
        return self._inner.put_memory(record.evolve(key=None))

    async def aput_memory(self, record: MemoryRecord) -> MemoryRecord:
        return self.put_memory(record)

    def supersede(self, user_id: str, old_id: str, new: MemoryRecord) -> MemoryRecord:
        return self.put_memory(new)

    async def asupersede(self, user_id: str, old_id: str, new: MemoryRecord) -> MemoryRecord:
        return self.put_memory(new)


class _EveryUserStore(_Delegating):
    def search_memories(self, user_id: str, query: str, **kwargs: Any) -> list[ScoredMemory]:
        found = [
            s for u in self._ctx.user_ids for s in self._inner.search_memories(u, query, **kwargs)
        ]
        found.sort(key=lambda s: s.score, reverse=True)
        return found[: kwargs.get("limit", 5)]

    async def asearch_memories(self, user_id: str, query: str, **kwargs: Any) -> list[ScoredMemory]:
        return self.search_memories(user_id, query, **kwargs)


_SWAPS = (
    (r"\byou're\b", "I'm"),
    (r"\byou are\b", "I am"),
    (r"\byour\b", "my"),
    (r"\byou\b", "I"),
    ("[你您]", "我"),
)


def _as_user(message: AIMessage) -> HumanMessage:
    text = message.text
    for pattern, repl in _SWAPS:
        text = re.sub(pattern, repl, text, flags=re.IGNORECASE)
    return HumanMessage(text, id=message.id, additional_kwargs=dict(message.additional_kwargs))


class _AssistantAsUser:
    def __init__(self, inner: RuleBasedExtractor) -> None:
        self.inner = inner

    def extract(self, messages: Sequence[BaseMessage]) -> list[CandidateMemory]:
        return self.inner.extract(
            [_as_user(m) if isinstance(m, AIMessage) else m for m in messages]
        )

    async def aextract(self, messages: Sequence[BaseMessage]) -> list[CandidateMemory]:
        return self.extract(messages)


class _NoExpiry:
    def __init__(self, inner: RuleBasedExtractor) -> None:
        self.inner = inner

    def extract(self, messages: Sequence[BaseMessage]) -> list[CandidateMemory]:
        return [dataclasses.replace(c, expires_at=None) for c in self.inner.extract(messages)]

    async def aextract(self, messages: Sequence[BaseMessage]) -> list[CandidateMemory]:
        return self.extract(messages)


def _rules(ctx: BuildContext) -> RuleBasedExtractor:
    return RuleBasedExtractor(clock=ctx.clock)


BROKEN: dict[str, MemorySystem] = {
    "never_supersedes": MemorySystem("never_supersedes", writer_store=_KeylessStore),
    "ignores_user_id": MemorySystem("ignores_user_id", recall_store=_EveryUserStore),
    "stores_assistant_claims": MemorySystem(
        "stores_assistant_claims", extractor=lambda ctx: _AssistantAsUser(_rules(ctx))
    ),
    "never_expires": MemorySystem("never_expires", extractor=lambda ctx: _NoExpiry(_rules(ctx))),
}
