"""Deterministic offline chat models for the demo, the notebooks, tests and benchmarks.

* ``ScriptedChatModel`` answers from a script (messages, strings, exceptions or
  callables) and records every prompt it was called with, so a test can assert
  on what the model actually received.
* ``MemoryAwareChatModel`` is the demo's "assistant": it reads the
  long-term-memory block and the conversation summary from its prompt and
  visibly uses them (addressing rules, allergies, budgets, product names), so a
  run without any LLM still shows memory at work.

Neither touches the network.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, Field, PrivateAttr

from langgraph_memory.prompts.compress import SUMMARY_MESSAGE_ID
from langgraph_memory.prompts.recall import RECALL_MESSAGE_ID

ScriptStep = BaseMessage | str | BaseException | Callable[[list[BaseMessage]], Any]


class RecordingChatModel(BaseChatModel):
    """Base of the offline models: keeps every prompt in ``calls``; tools bind to itself.

    The subclasses decide which tool calls to make, so ``bind_tools`` returns the model.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    _calls: list[list[BaseMessage]] = PrivateAttr(default_factory=list)

    @property
    def calls(self) -> list[list[BaseMessage]]:
        return self._calls

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self

    def reply(self, messages: list[BaseMessage]) -> AIMessage:
        """The answer to one prompt (the subclass's rules)."""
        raise NotImplementedError

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self._calls.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self.reply(list(messages)))])


class ScriptedChatModel(RecordingChatModel):
    """Answers with the next step of ``script`` and records each prompt in ``calls``.

    A step is an ``AIMessage`` (returned as is), a ``str`` (wrapped in an
    ``AIMessage``), an exception (raised), or a callable that receives the prompt
    and returns one of those. When the script runs out, ``default`` is used (or
    ``IndexError`` raised when it is ``None``).

    Example:
        >>> model = ScriptedChatModel(script=["hello"])
        >>> model.invoke("hi").content, len(model.calls)
        ('hello', 1)
    """

    script: list[Any] = Field(default_factory=list)
    default: Any = None
    _position: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return "scripted-chat-model"

    def _next_step(self, messages: list[BaseMessage]) -> AIMessage:
        if self._position < len(self.script):
            step = self.script[self._position]
            self._position += 1
        elif self.default is not None:
            step = self.default
        else:
            raise IndexError(f"ScriptedChatModel: script exhausted after {self._position} calls")
        if callable(step) and not isinstance(step, BaseMessage):
            step = step(messages)
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, str):
            return AIMessage(content=step)
        if isinstance(step, AIMessage):
            return step
        raise TypeError(f"ScriptedChatModel: unsupported script step {step!r}")

    def reply(self, messages: list[BaseMessage]) -> AIMessage:
        return self._next_step(messages)


def block_lines(messages: Sequence[BaseMessage], message_id: str) -> list[str]:
    """The content lines of one of our memory messages (recall or summary) in a prompt."""
    for message in messages:
        if message.id == message_id:
            return [line.strip() for line in message.text.splitlines() if line.strip()]
    return []


def memory_lines(messages: Sequence[BaseMessage]) -> list[str]:
    """The memory lines (``- text [source, date]``) of the recall block in a prompt."""
    return [
        line[2:].rsplit(" [", 1)[0]
        for line in block_lines(messages, RECALL_MESSAGE_ID)
        if line.startswith("- ")
    ]


_BUDGET = re.compile(r"budget\D{0,20}(\d[\d,]*)", re.IGNORECASE)
_CALL_ME = re.compile(r"\bcall(?:ed)?(?: me| the user| him| her)? ([A-Z]\w*(?: [A-Z]\w*)?)")


class MemoryAwareChatModel(RecordingChatModel):
    """A rule-following offline assistant that shows what memory gives it.

    It answers the latest human message and explicitly uses the recalled
    memories, the summary and what the user said in the visible conversation (which
    wins when they disagree): how to address the user, allergies to avoid, the
    current budget. Calls are recorded in ``calls``.
    """

    @property
    def _llm_type(self) -> str:
        return "memory-aware-offline-model"

    def reply(self, messages: list[BaseMessage]) -> AIMessage:
        return AIMessage(self.answer(messages))

    @staticmethod
    def answer(messages: Sequence[BaseMessage]) -> str:
        memories = memory_lines(messages)
        summary = [line.lstrip("- ") for line in block_lines(messages, SUMMARY_MESSAGE_ID)[2:-1]]
        said_now = [m.text for m in messages if isinstance(m, HumanMessage)]
        # Memory first, then the visible conversation, which wins when they disagree.
        facts = memories + summary + said_now
        known = " ".join(facts)
        latest = said_now[-1] if said_now else ""
        parts: list[str] = []
        # Without a memory saying otherwise this assistant is formal, so the effect of a
        # "no honorifics" memory is visible in every answer.
        plain = re.search(r"honorific|敬语", known, re.IGNORECASE)
        names = _CALL_ME.findall(known)
        name = names[-1] if names else None
        if plain:
            parts.append(f"{name}," if name else "")
        else:
            parts.append(f"Dear Mr. {name}," if name else "Dear Sir or Madam,")
        if re.search(r"allerg|过敏", known, re.IGNORECASE) and re.search(
            r"\b(eat|dinner|lunch|food|restaurant)\b|吃|餐", latest, re.IGNORECASE
        ):
            allergy = next(f for f in facts if re.search(r"allerg|过敏", f, re.IGNORECASE))
            parts.append(
                f"Keeping in mind that {allergy[:1].lower() + allergy[1:]}, "
                "I suggest the vegetable hot pot."
            )
        if (budgets := _BUDGET.findall(known)) and re.search(
            r"budget|afford|price|预算|cost", latest, re.IGNORECASE
        ):
            parts.append(f"Your budget is {budgets[-1]}.")
        if len(parts) == 1:
            parts.append(f"noted: {latest[:120]}")
        if memories:
            parts.append(f"(I recalled {len(memories)} memories.)")
        return " ".join(p for p in parts if p)


def system_text(messages: Sequence[BaseMessage]) -> str:
    """All system-message text in a prompt, joined (handy in assertions)."""
    return "\n".join(m.text for m in messages if isinstance(m, SystemMessage))


def iter_prompts(model: RecordingChatModel) -> Iterator[list[BaseMessage]]:
    yield from model.calls
