"""A customer-service agent with all three memory layers.

It looks orders up and files complaints (tools), and remembers each customer
across sessions: preferences, past complaints, and standing instructions such
as "no honorifics", which recall pins on every turn.

* Terminal chat: ``python -m graphs.customer_service`` (a scripted three-session
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

# A tiny order book, enough for the tools to answer something real.
ORDERS: dict[str, dict[str, str]] = {
    "1042": {"item": "ceramic teapot", "status": "delivered on 2026-11-28, box damaged"},
    "1077": {"item": "green tea sampler", "status": "in transit, due 2026-12-03"},
}
COMPLAINTS: list[dict[str, str]] = []


@tool
def lookup_order(order_id: str) -> str:
    """Status of an order by its number."""
    order = ORDERS.get(order_id)
    if order is None:
        return f"There is no order {order_id}."
    return f"Order {order_id} ({order['item']}): {order['status']}."


@tool
def file_complaint(order_id: str, problem: str) -> str:
    """Open a complaint about an order; returns the ticket number."""
    COMPLAINTS.append({"order_id": order_id, "problem": problem})
    return f"Complaint #{len(COMPLAINTS)} filed for order {order_id}: {problem}."


EXAMPLE = Example(
    name="customer_service",
    system_prompt=(
        "You are a customer-service agent for a tea shop. Use the tools for orders and "
        "complaints. Follow the customer's standing instructions from memory."
    ),
    tools=[lookup_order, file_complaint],
    rules=[
        (
            re.compile(r"complain\w*.*?order (\d+)[^a-z]*(.*)", re.IGNORECASE),
            "file_complaint",
            lambda m: {"order_id": m.group(1), "problem": m.group(2) or "see conversation"},
        ),
        (
            re.compile(r"order (\d+)", re.IGNORECASE),
            "lookup_order",
            lambda m: {"order_id": m.group(1)},
        ),
    ],
    script=(
        ("monday", "From now on, don't use honorifics with me. Just call me Lin."),
        ("monday", "I prefer green tea, never black tea."),
        ("monday", "Where is my order 1042?"),
        ("tuesday", "I want to complain about order 1042: the box arrived damaged."),
        ("friday", "Any news on order 1077?"),
        ("friday", "What tea would you recommend for me?"),
    ),
)


async def make_graph() -> Any:
    """The compiled agent for ``langgraph dev`` (no checkpointer: the server's);
    built off the server's event loop, where opening the store would block."""
    return await asyncio.to_thread(EXAMPLE.factory)


if __name__ == "__main__":
    raise SystemExit(main(EXAMPLE))
