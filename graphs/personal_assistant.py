"""A personal assistant with all three memory layers.

It keeps a schedule (tools) and remembers the user across sessions: family,
allergies, and plans, which expire once their date has passed (the rule-based
extractor dates "this weekend", "tomorrow", ...; expired memories are no
longer recalled).

* Terminal chat: ``python -m graphs.personal_assistant`` (a scripted
  conversation; ``--interactive`` to type your own).
* ``langgraph dev``: ``langgraph.json`` names :func:`make_graph`.

Offline it runs a scripted model and says so in its first line; see
``graphs/_example.py`` for ``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from langchain_core.tools import tool

from graphs._example import Example, main

SCHEDULE: list[tuple[str, str]] = []


@tool
def add_event(when: str, what: str) -> str:
    """Put an event in the user's calendar."""
    SCHEDULE.append((when, what))
    return f"Added to your calendar: {what} ({when})."


@tool
def list_events() -> str:
    """The events in the user's calendar."""
    if not SCHEDULE:
        return "Your calendar is empty."
    return "Your calendar: " + "; ".join(f"{what} ({when})" for when, what in SCHEDULE) + "."


EXAMPLE = Example(
    name="personal_assistant",
    system_prompt=(
        "You are a personal assistant. Use the calendar tools. Keep the user's family, "
        "allergies and plans in mind."
    ),
    tools=[add_event, list_events],
    rules=[
        (
            re.compile(r"(?:remind me|schedule|book)\s+(.+?)\s+(on \w+|tomorrow|at [\w:]+)", re.I),
            "add_event",
            lambda m: {"when": m.group(2), "what": m.group(1)},
        ),
        (re.compile(r"\b(calendar|schedule)\b", re.IGNORECASE), "list_events", lambda m: {}),
    ],
    script=(
        ("monday", "My daughter is called Mei and I am allergic to peanuts."),
        ("monday", "Schedule dentist appointment on Thursday."),
        ("monday", "This weekend we plan to visit grandma in Suzhou."),
        ("wednesday", "What is on my calendar?"),
        ("wednesday", "I am hungry. What snack is safe for my allergy?"),
    ),
    formal_greeting="Hello,",
)


async def make_graph() -> Any:
    """The compiled agent for ``langgraph dev`` (no checkpointer: the server's);
    built off the server's event loop, where opening the store would block."""
    return await asyncio.to_thread(EXAMPLE.factory)


if __name__ == "__main__":
    raise SystemExit(main(EXAMPLE))
