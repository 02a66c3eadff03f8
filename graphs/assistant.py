"""A personal assistant with all three memory layers: schedule, family, allergies, plans.

Run ``python -m graphs.assistant --user lin`` and chat (or pipe lines on stdin).
Long-term memory keeps who is in the family, who is allergic to what,
appointments (a rescheduled one replaces the old date) and time-boxed plans
("I'm in Berlin this week"), which stop being recalled once they lapse. The
one tool, ``today``, gives the model the date the memory layer works in.
``langgraph dev`` loads ``make_graph`` from ``langgraph.json``.

Example:
    >>> import tempfile
    >>> from langchain_core.messages import HumanMessage
    >>> from graphs._agent import MemoryLayers
    >>> layers = MemoryLayers.open(tempfile.mkdtemp())
    >>> graph = build_assistant(layers, AssistantModel())
    >>> config = {"configurable": {"thread_id": "t1", "user_id": "lin"}}
    >>> graph.invoke({"messages": [HumanMessage("Call me Lin.")]}, config)["messages"][-1].text
    'Dear Lin, noted.'
    >>> layers.close()
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool

from graphs._agent import MemoryLayers, build_agent_graph, dev_graph, run_chat
from graphs._scripted import PromptView, RuleDrivenAgentModel, address
from langgraph_memory.clock import Clock, now

SYSTEM_PROMPT = (
    "You are a personal assistant. Use long-term memory for the user's schedule, family, "
    "allergies and plans; never suggest food someone in the family is allergic to. Call the "
    "today tool before answering anything about dates. Keep replies short."
)

_SCHEDULE = re.compile(r"schedule|calendar|appointment|what do i have|when is|日程|安排", re.I)
_FOOD = re.compile(r"cook|dinner|lunch|eat|restaurant|recipe|food|吃|餐", re.I)
_WHERE = re.compile(r"where am i|where will i be|this week|trip|travel|在哪", re.I)
_FAMILY = re.compile(r"family|daughter|son|kids?|wife|husband|mother|father|家人", re.I)
_QUESTION = re.compile(
    r"\?|？|^(?:what|when|where|who|which|how|do|does|did|can|could|should|tell|list)\b|吗|什么",
    re.I,
)
_EVENT_LINE = r"appointment|meeting|interview|birthday|flight|dentist|\(\d{4}-\d\d-\d\d\)"
_FAMILY_LINE = r"daughter|son\b|wife|husband|mother|father|partner|kids?\b|女儿|儿子"
_DIET_LINE = r"allerg|vegetarian|vegan|gluten|过敏|素食"


def make_tools(clock: Clock | None = None) -> list[BaseTool]:
    """``today``: the current date in the memory layer's clock."""

    @tool
    def today() -> str:
        """Today's date (ISO 8601) and weekday."""
        moment = now(clock)
        return f"{moment.date().isoformat()} ({moment.strftime('%A')})"

    return [today]


class AssistantModel(RuleDrivenAgentModel):
    """The offline assistant: asks ``today`` for date questions, answers from memory."""

    @property
    def _llm_type(self) -> str:
        return "assistant-offline-model"

    def decide(self, view: PromptView) -> AIMessage:
        latest = view.latest
        parts = [address(view)]
        if not _QUESTION.search(latest):
            return self.say(f"{parts[0]} noted.")
        if _SCHEDULE.search(latest) and not view.tool_results:
            return self.call(("today", {}))
        if view.tool_results:
            parts.append(f"today is {view.tool_results[-1].text}.")
        if _SCHEDULE.search(latest):
            events = _recalled(view, _EVENT_LINE)
            parts.append(
                "on your calendar: " + "; ".join(events) + "."
                if events
                else "I have nothing on your calendar."
            )
        elif _FOOD.search(latest):
            diet = _recalled(view, _DIET_LINE)
            if diet:
                parts.append(
                    "keeping in mind: " + "; ".join(diet) + ". How about a vegetable curry "
                    "with rice (no nuts, no seafood)?"
                )
            else:
                parts.append("how about pasta tonight?")
        elif re.search(r"where am i|where will i be|在哪", latest, re.I):
            plans = _recalled(view, r"\bis in\b|\bin \w+ (?:this|next|until)|until \d{4}")
            parts.append(plans[-1] + "." if plans else "I don't know of any trip right now.")
        elif _FAMILY.search(latest) and not re.search(_FAMILY_LINE, latest, re.I):
            family = _recalled(view, _FAMILY_LINE)
            parts.append("; ".join(family) + "." if family else "tell me about your family.")
        else:
            parts.append("noted.")
        return self.say(" ".join(parts))


def _recalled(view: PromptView, pattern: str) -> list[str]:
    """Recalled memories (not the conversation) matching ``pattern``, said to the user."""
    return [_to_you(line) for line in view.memories if re.search(pattern, line, re.IGNORECASE)]


_TO_YOU = (
    (re.compile(r"^User asked to remember:\s*", re.I), ""),
    (re.compile(r"\bUser is\b", re.I), "you are"),
    (re.compile(r"\bUser has\b", re.I), "you have"),
    (re.compile(r"\bUser's\b", re.I), "your"),
    (re.compile(r"\bUser\b", re.I), "you"),
)


def _to_you(line: str) -> str:
    """ "User is in Berlin" -> "you are in Berlin" (memories are stored in the third person)."""
    for pattern, replacement in _TO_YOU:
        line = pattern.sub(replacement, line)
    return line


def build_assistant(
    layers: MemoryLayers,
    model: BaseChatModel,
    *,
    online: bool = False,
    clock: Clock | None = None,
    **kwargs: Any,
) -> Any:
    """The compiled assistant graph over ``layers`` (``kwargs`` go to ``build_agent_graph``)."""
    return build_agent_graph(
        model=model,
        tools=make_tools(clock),
        system_prompt=SYSTEM_PROMPT,
        layers=layers,
        online=online,
        clock=clock,
        **kwargs,
    )


async def make_graph(config: RunnableConfig) -> Any:
    """The ``langgraph dev`` factory (``langgraph.json``: ``./graphs/assistant.py:make_graph``).

    Memory lives in ``$LANGGRAPH_MEMORY_DATA_DIR/assistant`` (default
    ``./.langgraph-memory/assistant``); pass ``user_id`` in the run's ``configurable``.
    """
    return await asyncio.to_thread(dev_graph, "assistant", AssistantModel, _build_for_dev)


def _build_for_dev(layers: MemoryLayers, model: BaseChatModel, offline: bool) -> Any:
    return build_assistant(layers, model, online=not offline)


def main(argv: Sequence[str] | None = None) -> int:
    return run_chat(
        argv,
        description="Personal assistant with long-term memory (terminal chat).",
        default_user="lin",
        build=_build_for_dev,
        offline_model=AssistantModel,
    )


if __name__ == "__main__":
    raise SystemExit(main())
