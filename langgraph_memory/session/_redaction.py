"""The savers' privacy option: redact identifiers in messages as they are stored.

``SqliteSaver(..., redact_messages=True)`` (or a ``PrivacyPolicy``) runs every
LangChain message a checkpoint or a pending write holds through
:class:`~langgraph_memory.privacy.Redactor` before it is serialised, so phone
numbers, ids, cards, e-mails, passwords and keys never reach the database.

The trade-off: what is stored is what the graph reads back, so from the next
turn on the model sees ``[PHONE]`` where the user typed a number (within one
run, LangGraph keeps the original in memory until the run ends). Use it when
conversations must not be kept verbatim; leave it off when the agent must act
on an identifier in a later turn (call that number, look up that order), and
redact the long-term memories instead (they always are).

Each message is redacted once per process: a bounded memo maps the message
object (held, so its id cannot be reused) to its redacted copy, and a message
edited in place is redacted again.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from langchain_core.messages import BaseMessage

from langgraph_memory.config import PrivacyPolicy
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.privacy import Redactor
from langgraph_memory.session._channels import fingerprint

MEMO_SIZE = 8192
MAX_DEPTH = 3


class MessageRedactor:
    """Redacted copies of the messages in a channel value or a write, memoised."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self._memo: OrderedDict[int, tuple[BaseMessage, Any, BaseMessage]] = OrderedDict()

    def value(self, value: Any, depth: int = 0) -> Any:
        """``value`` with each message redacted: a message, or one inside a list or a
        dict (a graph's input reaches ``__start__`` as ``{"messages": [...]}``), down
        to ``MAX_DEPTH`` levels; strings outside messages are left as they are."""
        if isinstance(value, BaseMessage):
            return self._message(value)
        if depth >= MAX_DEPTH:
            return value
        if type(value) is list:
            items = [self.value(item, depth + 1) for item in value]
            return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
        if type(value) is dict:
            redacted = {k: self.value(v, depth + 1) for k, v in value.items()}
            return redacted if any(redacted[k] is not v for k, v in value.items()) else value
        return value

    def _message(self, message: BaseMessage) -> BaseMessage:
        key = id(message)
        seen = self._memo.get(key)
        shape = fingerprint(message)
        if seen is not None and seen[0] is message and seen[1] == shape:
            self._memo.move_to_end(key)
            return seen[2]
        redacted = self.redactor.redact_messages([message])[0]
        self._memo[key] = (message, shape, redacted)
        if len(self._memo) > MEMO_SIZE:
            self._memo.popitem(last=False)
        return redacted


def message_redactor(option: bool | PrivacyPolicy) -> MessageRedactor | None:
    """The savers' ``redact_messages=`` argument as a redactor (None when off)."""
    if option is False:
        return None
    if option is True:
        return MessageRedactor(Redactor())
    if isinstance(option, PrivacyPolicy):
        return MessageRedactor(Redactor(option))
    raise ConfigurationError(
        f"redact_messages={option!r}; pass True, False or a langgraph_memory.config.PrivacyPolicy."
    )
