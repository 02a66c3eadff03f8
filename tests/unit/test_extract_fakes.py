"""Test doubles for the memory-writing tests: a scripted chat model and a small store.

``ScriptedChatModel`` is a real ``BaseChatModel`` that answers from a script
and counts its calls, so the tests drive the real parsing, validation, retry
and error paths. ``FileMemoryStore`` is a small ``LongTermMemory`` kept in a
JSON file (so a killed subprocess and its successor share it); the writer tests
also run on the real ``ChromaMemoryStore`` when it is available.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

from langgraph_memory.errors import MemoryNotFoundError
from langgraph_memory.nodes.reconcile import text_similarity
from langgraph_memory.types import MemoryRecord, MemoryStatus, ScoredMemory

Reply = str | Exception | Callable[[list[BaseMessage]], str]


class ScriptedChatModel(BaseChatModel):
    """Answers each call with the next scripted reply; records every request."""

    replies: list[Any]
    repeat_last: bool = False
    _calls: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def calls(self) -> list[list[BaseMessage]]:
        return self._calls

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self._lock:
            self._calls.append(list(messages))
            index = len(self._calls) - 1
            if index >= len(self.replies):
                if not self.repeat_last or not self.replies:
                    raise AssertionError(f"ScriptedChatModel: unexpected call #{index + 1}")
                index = len(self.replies) - 1
            reply = self.replies[index]
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, AIMessage):
            return ChatResult(generations=[ChatGeneration(message=reply)])
        text = reply(list(messages)) if callable(reply) else reply
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])


class ToolCallingScriptedModel(ScriptedChatModel):
    """A scripted model with tool calling, for native structured output."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self  # the scripted replies already carry the tool calls


def tool_answer(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": "call-1"}])


def _similarity(query: str, text: str) -> float:
    # Ignore the numbers rule of text_similarity: a search must find "budget 3000" for "budget 5000".
    stripped_q = "".join(ch for ch in query if not ch.isdigit())
    stripped_t = "".join(ch for ch in text if not ch.isdigit())
    return text_similarity(stripped_q, stripped_t)


class FileMemoryStore:
    """A small ``LongTermMemory`` over a dict, optionally persisted to a JSON file."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else None
        self._lock = threading.RLock()
        self.records: dict[str, MemoryRecord] = {}
        self.writes = 0
        if self.path and self.path.exists():
            for data in json.loads(self.path.read_text()):
                record = MemoryRecord.from_dict(data)
                self.records[record.id] = record

    def _save(self) -> None:
        self.writes += 1
        if self.path:
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps([r.to_dict() for r in self.records.values()]))
            tmp.replace(self.path)

    def search_memories(
        self,
        user_id: str,
        query: str,
        *,
        limit: int = 5,
        types: Sequence[Any] | None = None,
        keys: Sequence[str] | None = None,
        include_history: bool = False,
        **_: Any,
    ) -> list[ScoredMemory]:
        with self._lock:
            found = []
            for record in self.records.values():
                if record.user_id != user_id:
                    continue
                if not include_history and record.status != MemoryStatus.ACTIVE:
                    continue
                if keys is not None and record.key not in keys:
                    continue
                if types is not None and record.type not in types:
                    continue
                score = _similarity(query, record.text)
                if keys is None and score < 0.05:
                    continue
                found.append(ScoredMemory(record, score))
            found.sort(key=lambda s: -s.score)
            return found[:limit]

    async def asearch_memories(self, user_id: str, query: str, **kwargs: Any) -> list[ScoredMemory]:
        return self.search_memories(user_id, query, **kwargs)

    def put_memory(self, record: MemoryRecord) -> MemoryRecord:
        with self._lock:
            self.records[record.id] = record
            self._save()
            return record

    async def aput_memory(self, record: MemoryRecord) -> MemoryRecord:
        return self.put_memory(record)

    def get_memory(self, user_id: str, memory_id: str) -> MemoryRecord | None:
        record = self.records.get(memory_id)
        return record if record is not None and record.user_id == user_id else None

    async def aget_memory(self, user_id: str, memory_id: str) -> MemoryRecord | None:
        return self.get_memory(user_id, memory_id)

    def list_memories(self, user_id: str, *, include_history: bool = False) -> list[MemoryRecord]:
        return [
            r
            for r in self.records.values()
            if r.user_id == user_id and (include_history or r.status == MemoryStatus.ACTIVE)
        ]

    async def alist_memories(
        self, user_id: str, *, include_history: bool = False
    ) -> list[MemoryRecord]:
        return self.list_memories(user_id, include_history=include_history)

    def supersede(self, user_id: str, old_id: str, new: MemoryRecord) -> MemoryRecord:
        with self._lock:
            old = self.get_memory(user_id, old_id)
            if old is None:
                raise MemoryNotFoundError(f"no memory {old_id!r} for this user")
            now = datetime.now(UTC)
            self.records[old_id] = replace(
                old, status=MemoryStatus.SUPERSEDED, valid_to=now, superseded_by=new.id
            )
            supersedes = tuple(dict.fromkeys((*new.supersedes, old_id)))
            self.records[new.id] = replace(new, user_id=user_id, supersedes=supersedes)
            self._save()
            return self.records[new.id]

    async def asupersede(self, user_id: str, old_id: str, new: MemoryRecord) -> MemoryRecord:
        return self.supersede(user_id, old_id, new)

    def delete_memory(self, user_id: str, memory_id: str) -> None:
        with self._lock:
            if self.get_memory(user_id, memory_id) is None:
                raise MemoryNotFoundError(f"no memory {memory_id!r} for this user")
            del self.records[memory_id]
            self._save()

    async def adelete_memory(self, user_id: str, memory_id: str) -> None:
        self.delete_memory(user_id, memory_id)

    def touch(self, user_id: str, memory_ids: Sequence[str]) -> None:
        return None

    async def atouch(self, user_id: str, memory_ids: Sequence[str]) -> None:
        return None

    def forget_user(self, user_id: str, *, checkpointer: Any = None) -> Any:
        raise NotImplementedError

    async def aforget_user(self, user_id: str, *, checkpointer: Any = None) -> Any:
        raise NotImplementedError

    # test helpers
    def active(self, user_id: str) -> list[MemoryRecord]:
        return self.list_memories(user_id)


def memories_json(*items: dict[str, Any]) -> str:
    return json.dumps({"memories": list(items)}, ensure_ascii=False)


def decisions_json(*items: dict[str, Any]) -> str:
    return json.dumps({"decisions": list(items)}, ensure_ascii=False)
