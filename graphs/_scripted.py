"""The base of the example agents' offline models: rules over the prompt, real tool calls.

A ``RuleDrivenAgentModel`` sees exactly what an LLM would (our system messages
with the recalled memory block and the summary, the conversation, tool
results) and answers through ``decide(view)``. Subclasses write the rules; the
base parses the prompt into a ``PromptView`` and builds tool-call messages that
LangGraph's ``ToolNode`` executes like any model's.

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> class Echo(RuleDrivenAgentModel):
    ...     def decide(self, view):
    ...         return self.say(f"{address(view)} you said {view.latest!r}")
    >>> Echo().invoke([HumanMessage("hi")]).content
    "Hello, you said 'hi'"
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from graphs._models import RecordingChatModel, block_lines, memory_lines
from langgraph_memory.prompts.compress import SUMMARY_MESSAGE_ID

_NAME = re.compile(
    r"\b(?i:call(?:ed)?(?: me| the user)?|wants to be called|name is)\s+([A-Z][\w-]*)"
)
OFFLINE_BANNER = (
    "[offline] This is a scripted, rule-driven stand-in model (no LLM): it calls the tools and "
    "answers from the memory block. Set OPENAI_API_KEY (or OPENAI_BASE_URL) for a real model."
)

_PLAIN = re.compile(r"honorific|敬语|first name", re.IGNORECASE)


@dataclass
class PromptView:
    """What the rules read: memories, summary, this turn's text and tool results."""

    memories: list[str]
    summary: list[str]
    said: list[str]
    latest: str
    tool_results: list[ToolMessage] = field(default_factory=list)

    @classmethod
    def of(cls, messages: Sequence[BaseMessage]) -> PromptView:
        said = [str(m.text) for m in messages if isinstance(m, HumanMessage)]
        last_human = max(
            (i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1
        )
        results = [m for m in messages[last_human + 1 :] if isinstance(m, ToolMessage)]
        summary = [line.lstrip("- ") for line in block_lines(messages, SUMMARY_MESSAGE_ID)[1:-1]]
        return cls(memory_lines(messages), summary, said, said[-1] if said else "", results)

    @property
    def known(self) -> list[str]:
        """Memories, then the summary, then what the user said (later wins)."""
        return [*self.memories, *self.summary, *self.said]

    def find(self, pattern: str) -> list[str]:
        """Every known line matching ``pattern`` (case-insensitive), in order."""
        return [line for line in self.known if re.search(pattern, line, re.IGNORECASE)]


def preferred_name(view: PromptView) -> str | None:
    names = [n for line in view.known for n in _NAME.findall(line)]
    return names[-1] if names else None


def address(view: PromptView, formal: str = "Hello") -> str:
    """``"Sam,"`` once the user asked for no honorifics, else a formal greeting."""
    name = preferred_name(view)
    if any(_PLAIN.search(line) for line in view.known):
        return f"{name}," if name else "Hi,"
    return f"Dear {name}," if name else f"{formal},"


class RuleDrivenAgentModel(RecordingChatModel):
    """Offline chat model whose replies and tool calls come from ``decide``.

    Every prompt is kept in ``calls`` so tests can assert on what it received. With
    ``announce=True`` (the ``langgraph dev`` factories, where no terminal shows the
    banner) the first reply of each conversation starts with ``OFFLINE_BANNER``.
    """

    announce: bool = False

    @property
    def _llm_type(self) -> str:
        return "rule-driven-offline-model"

    def decide(self, view: PromptView) -> AIMessage:
        raise NotImplementedError

    @staticmethod
    def say(text: str) -> AIMessage:
        return AIMessage(text)

    @staticmethod
    def call(*calls: tuple[str, dict[str, Any]]) -> AIMessage:
        """An ``AIMessage`` requesting the given ``(tool name, arguments)`` calls."""
        return AIMessage(
            "",
            tool_calls=[
                {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:12]}"}
                for name, args in calls
            ],
        )

    def reply(self, messages: list[BaseMessage]) -> AIMessage:
        message = self.decide(PromptView.of(messages))
        first_reply = not any(isinstance(m, AIMessage) and not m.tool_calls for m in messages)
        if self.announce and first_reply and not message.tool_calls:
            message = AIMessage(f"{OFFLINE_BANNER}\n{message.text}")
        return message
