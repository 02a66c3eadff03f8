"""A customer-service agent with all three memory layers and two real tools.

Run ``python -m graphs.support --user sam`` and chat (or pipe lines on stdin).
The agent looks up orders and opens tickets over a small in-memory order
table (``OrderDesk``); memory carries the customer's preferences (contact
channel, carrier), order numbers, complaints and standing instructions such as
"no honorifics" from one session to the next. ``langgraph dev`` loads
``make_graph`` from ``langgraph.json``.

Example:
    >>> import tempfile
    >>> from langchain_core.messages import HumanMessage
    >>> from graphs._agent import MemoryLayers
    >>> layers = MemoryLayers.open(tempfile.mkdtemp())
    >>> graph = build_support(layers, SupportModel(), OrderDesk())
    >>> config = {"configurable": {"thread_id": "t1", "user_id": "sam"}}
    >>> graph.invoke({"messages": [HumanMessage("Where is order 1042?")]}, config)[
    ...     "messages"][-1].text
    'Hello, order 1042 (a blender) is shipped with UPS; it should arrive on 2026-12-04.'
    >>> layers.close()
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool

from graphs._agent import MemoryLayers, build_agent_graph, dev_graph, run_chat
from graphs._scripted import PromptView, RuleDrivenAgentModel, address

SYSTEM_PROMPT = (
    "You are the customer-service agent of a small kitchenware shop. Use lookup_order for "
    "any question about an order and create_ticket for any complaint or damaged item. "
    "Follow the customer's standing instructions in long-term memory (how to address them, "
    "how to contact them) and keep replies short."
)

ORDERS: dict[str, dict[str, str]] = {
    "1042": {"item": "blender", "status": "shipped", "carrier": "UPS", "eta": "2026-12-04"},
    "1077": {"item": "cast-iron pan", "status": "delivered", "carrier": "DHL", "eta": "2026-11-20"},
    "1103": {"item": "knife set", "status": "processing", "carrier": "-", "eta": "2026-12-09"},
}


@dataclass
class OrderDesk:
    """The shop's back office: an order table and the tickets opened this process."""

    orders: dict[str, dict[str, str]] = field(default_factory=lambda: dict(ORDERS))
    tickets: list[dict[str, str]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def tools(self) -> list[BaseTool]:
        """``lookup_order`` and ``create_ticket`` bound to this desk."""

        @tool
        def lookup_order(order_id: str) -> str:
            """Status, item, carrier and expected date of one order (e.g. "1042")."""
            order = self.orders.get(order_id.strip().lstrip("#"))
            if order is None:
                return json.dumps({"order_id": order_id, "error": "no such order"})
            return json.dumps({"order_id": order_id, **order})

        @tool
        def create_ticket(order_id: str, summary: str) -> str:
            """Open a support ticket about an order; returns the ticket id."""
            with self._lock:
                order = self.orders.get(order_id.strip().lstrip("#"), {})
                ticket = {
                    "ticket_id": f"T-{len(self.tickets) + 1:04d}",
                    "order_id": order_id,
                    "item": order.get("item", "unknown item"),
                    "summary": summary,
                }
                self.tickets.append(ticket)
            return json.dumps(ticket)

        return [lookup_order, create_ticket]


_ORDER_ID = re.compile(r"(?:order|#|订单)\D{0,12}(\d{4})\b", re.IGNORECASE)
_COMPLAINT = re.compile(
    r"broken|damaged|defect|complain|refund|wrong item|missing|cracked|坏|投诉|退款", re.IGNORECASE
)
_CONTACT = re.compile(r"\b(email|e-mail|phone|sms|text messages?|whatsapp)\b", re.IGNORECASE)


class SupportModel(RuleDrivenAgentModel):
    """The offline support agent: order questions call ``lookup_order``, complaints
    ``create_ticket``; the reply uses the memory block (address, contact channel).

    An order number missing from the message is taken from memory, so "the blender
    arrived broken" in a later session still opens a ticket on the right order.
    """

    @property
    def _llm_type(self) -> str:
        return "support-offline-model"

    def decide(self, view: PromptView) -> AIMessage:
        if view.tool_results:
            return self.say(self._answer_from_tools(view))
        order_id = _order_in(view.latest)
        complaint = bool(_COMPLAINT.search(view.latest))
        if complaint:
            order_id = order_id or _order_in(" ".join(view.find(r"order")))
            if order_id:
                return self.call(
                    ("create_ticket", {"order_id": order_id, "summary": view.latest[:200]})
                )
            return self.say(f"{address(view)} I'm sorry to hear that. Which order is it about?")
        if order_id is None and re.search(r"\b(?:my )?order\b|订单", view.latest, re.IGNORECASE):
            order_id = _order_in(" ".join(view.find(r"order")))  # "is my order late?"
        if order_id:
            return self.call(("lookup_order", {"order_id": order_id}))
        return self.say(f"{address(view)} {self._small_talk(view)}")

    def _answer_from_tools(self, view: PromptView) -> str:
        parts = [address(view)]
        for result in view.tool_results:
            data = json.loads(result.text)
            if "ticket_id" in data:
                channel = _contact_channel(view)
                parts.append(
                    f"I opened ticket {data['ticket_id']} for order {data['order_id']} "
                    f"(the {data['item']}); "
                    f"we will follow up by {channel or 'email'}"
                    f"{' as you prefer' if channel else ''}."
                )
            elif "error" in data:
                parts.append(f"I can't find order {data['order_id']}; please check the number.")
            else:
                parts.append(
                    f"order {data['order_id']} (a {data['item']}) is {data['status']}"
                    + (f" with {data['carrier']}" if data["carrier"] != "-" else "")
                    + f"; it should arrive on {data['eta']}."
                )
        return " ".join(parts)

    @staticmethod
    def _small_talk(view: PromptView) -> str:
        if re.search(r"\b(?:contact|reach) me\b|how will you", view.latest, re.IGNORECASE):
            channel = _contact_channel(view)
            return f"we'll contact you by {channel}." if channel else "how should we contact you?"
        carrier = view.find(r"shipp\w* with")
        if carrier and re.search(r"ship|deliver|carrier", view.latest, re.IGNORECASE):
            return f"noted; on file: {carrier[-1][0].lower() + carrier[-1][1:]}."
        if view.memories:
            return f"noted. (I have {len(view.memories)} notes about you from earlier chats.)"
        return "noted. How can I help with your order?"


def _order_in(text: str) -> str | None:
    match = _ORDER_ID.search(text)
    return match.group(1) if match else None


def _contact_channel(view: PromptView) -> str | None:
    for line in reversed(view.find(r"prefer|contact|reach")):
        if match := _CONTACT.search(line):
            return match.group(1).lower()
    return None


def build_support(
    layers: MemoryLayers,
    model: BaseChatModel,
    desk: OrderDesk | None = None,
    *,
    online: bool = False,
    **kwargs: Any,
) -> Any:
    """The compiled support graph over ``layers`` (``kwargs`` go to ``build_agent_graph``)."""
    return build_agent_graph(
        model=model,
        tools=(desk or OrderDesk()).tools(),
        system_prompt=SYSTEM_PROMPT,
        layers=layers,
        online=online,
        **kwargs,
    )


_DESK = OrderDesk()


async def make_graph(config: RunnableConfig) -> Any:
    """The ``langgraph dev`` factory (``langgraph.json``: ``./graphs/support.py:make_graph``).

    Memory lives in ``$LANGGRAPH_MEMORY_DATA_DIR/support`` (default
    ``./.langgraph-memory/support``); pass ``user_id`` in the run's
    ``configurable`` (recall fails closed without one).
    """
    return await asyncio.to_thread(dev_graph, "support", SupportModel, _build_for_dev)


def _build_for_dev(layers: MemoryLayers, model: BaseChatModel, offline: bool) -> Any:
    return build_support(layers, model, _DESK, online=not offline)


def main(argv: Sequence[str] | None = None) -> int:
    return run_chat(
        argv,
        description="Customer-service agent with long-term memory (terminal chat).",
        default_user="sam",
        build=lambda layers, model, offline: build_support(layers, model, online=not offline),
        offline_model=SupportModel,
    )


if __name__ == "__main__":
    raise SystemExit(main())
