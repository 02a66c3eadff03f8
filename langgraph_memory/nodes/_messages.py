"""Pure message, JSON and redaction helpers shared by the nodes and the write pipeline.

State and header helpers serve ``recall`` and ``compress``.

The memory nodes keep two messages of their own at the top of the
conversation, right after the user's leading system prompt(s)::

    [user's leading SystemMessage(s)] [summary] [recall] [conversation ...]

Both have fixed ids, so later turns replace them in place (``add_messages``
merges by id) instead of piling up. The first time one of them is inserted the
list is rebuilt once (``RemoveMessage(REMOVE_ALL_MESSAGES)`` + the ordered
list), because ``add_messages`` can only append new ids at the end and several
providers (Anthropic among them) refuse system messages in the middle of a
conversation.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from langgraph_memory.config import PrivacyPolicy
from langgraph_memory.privacy import Redactor
from langgraph_memory.prompts.compress import SUMMARY_MESSAGE_ID
from langgraph_memory.prompts.recall import RECALL_MESSAGE_ID

MEMORY_MESSAGE_IDS: tuple[str, ...] = (SUMMARY_MESSAGE_ID, RECALL_MESSAGE_ID)


def state_value(state: Any, key: str, default: Any = None) -> Any:
    """Read a key from a dict state or an attribute from a dataclass/pydantic state."""
    if isinstance(state, Mapping):
        return state.get(key, default)
    return getattr(state, key, default)


def state_messages(state: Any) -> list[AnyMessage]:
    messages = state_value(state, "messages", None)
    return list(messages or [])


def message_text(message: BaseMessage) -> str:
    """The plain text of a message (text blocks only; images and tool payloads skipped)."""
    return message.text


# Set on a reply the writer holds as unanswered (``MemoryWriter.submit_unanswered``): the
# thread went quiet after it, so the extractor reads it without a user's answer.
UNANSWERED_FLAG = "lgm_unanswered"


def mark_unanswered(message: BaseMessage) -> BaseMessage:
    kwargs = {**message.additional_kwargs, UNANSWERED_FLAG: True}
    return message.model_copy(update={"additional_kwargs": kwargs})


def is_unanswered(message: BaseMessage) -> bool:
    return message.additional_kwargs.get(UNANSWERED_FLAG) is True


def is_memory_message(message: BaseMessage) -> bool:
    return message.id in MEMORY_MESSAGE_IDS


def split_header(
    messages: Sequence[AnyMessage],
) -> tuple[list[AnyMessage], dict[str, AnyMessage], list[AnyMessage]]:
    """Split into (user's leading system messages, our memory messages by id, conversation)."""
    leading: list[AnyMessage] = []
    ours: dict[str, AnyMessage] = {}
    conversation: list[AnyMessage] = []
    in_leading = True
    for message in messages:
        if is_memory_message(message):
            ours[str(message.id)] = message
            continue
        if in_leading and isinstance(message, SystemMessage):
            leading.append(message)
            continue
        in_leading = False
        conversation.append(message)
    return leading, ours, conversation


def header_is_ordered(messages: Sequence[AnyMessage]) -> bool:
    """True when our memory messages sit right after the leading system messages, in order."""
    leading, ours, _ = split_header(messages)
    expected = [m for mid in MEMORY_MESSAGE_IDS if (m := ours.get(mid)) is not None]
    window = list(messages[len(leading) : len(leading) + len(expected)])
    return [m.id for m in window] == [m.id for m in expected]


def rebuild_with(
    messages: Sequence[AnyMessage],
    *,
    replace: Mapping[str, BaseMessage | None],
    drop_ids: frozenset[str] = frozenset(),
) -> list[BaseMessage]:
    """The whole list in canonical order, as a ``REMOVE_ALL_MESSAGES`` update.

    Args:
        messages: Current state messages.
        replace: Memory-message id -> new message (``None`` removes it).
        drop_ids: Conversation message ids to leave out (evicted).
    """
    leading, present, conversation = split_header(messages)
    ours: dict[str, BaseMessage | None] = {**present, **replace}
    header = [m for mid in MEMORY_MESSAGE_IDS if (m := ours.get(mid)) is not None]
    kept = [m for m in conversation if m.id not in drop_ids]
    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *leading, *header, *kept]


def upsert_memory_message(
    messages: Sequence[AnyMessage], new_message: BaseMessage
) -> list[BaseMessage]:
    """The ``messages`` update that puts ``new_message`` (a memory message) in place.

    In place (one message) when its id is already at the right spot; otherwise one
    rebuild that moves our messages to the top.
    """
    present = any(m.id == new_message.id for m in messages)
    if present and header_is_ordered(messages):
        return [new_message]
    return rebuild_with(messages, replace={str(new_message.id): new_message})


def latest_human_index(messages: Sequence[AnyMessage]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return index
    return None


def tool_call_ids(message: AnyMessage) -> set[str]:
    if isinstance(message, AIMessage):
        return {str(call["id"]) for call in message.tool_calls if call.get("id")}
    return set()


def tool_result_id(message: AnyMessage) -> str | None:
    if isinstance(message, ToolMessage):
        return str(message.tool_call_id)
    return None


# --- message ids, redaction, keys, JSON answers (extract / rules / reconcile / writer) ---

_KEY_RE = re.compile(r"^[\w][\w.\-]{0,63}$")
_FENCE_RE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def message_ids_for(messages: Sequence[BaseMessage]) -> list[str]:
    """Each message's id; a stable content digest for messages without one.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> message_ids_for([HumanMessage("hi", id="a"), HumanMessage("hi")])[0]
        'a'
    """
    out: list[str] = []
    for message in messages:
        if message.id:
            out.append(str(message.id))
        else:
            digest = hashlib.sha1(f"{message.type}\x00{message.text}".encode()).hexdigest()
            out.append(f"msg-{digest[:16]}")
    return out


def redact_text(text: str, policy: PrivacyPolicy | None) -> str:
    """``privacy.redact`` under ``policy``; raises ``RedactionRejectedError`` on ``reject``."""
    return Redactor(policy).redact(text).text


def normalize_key(key: str | None) -> str | None:
    """A profile-slot key in canonical form, or ``None`` if it is not a usable key.

    Example:
        >>> normalize_key(" Address City ")
        'address_city'
        >>> normalize_key("???") is None
        True
    """
    if key is None:
        return None
    cleaned = re.sub(r"\s+", "_", str(key).strip().lower())
    return cleaned if _KEY_RE.match(cleaned) else None


def new_messages_since(
    messages: Sequence[BaseMessage], extracted_through: str | None
) -> list[BaseMessage]:
    """Conversation messages after ``extracted_through`` (system messages skipped).

    When ``extracted_through`` is no longer in the list (``compress`` evicted it,
    after handing it to extraction), every remaining message is newer than it.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> msgs = [HumanMessage("a", id="1"), AIMessage("b", id="2"), HumanMessage("c", id="3")]
        >>> [m.id for m in new_messages_since(msgs, "2")]
        ['3']
    """
    conversation = [m for m in messages if not isinstance(m, SystemMessage | RemoveMessage)]
    if extracted_through is None:
        return conversation
    ids = message_ids_for(conversation)
    for index, message_id in enumerate(ids):
        if message_id == extracted_through:
            return conversation[index + 1 :]
    return conversation


def parse_json_answer(text: str) -> Any:
    """The first JSON value in a model answer (code fences and chatter tolerated).

    Raises:
        ValueError: No JSON object or array can be decoded.

    Example:
        >>> parse_json_answer('Sure! ```json\\n{"memories": []}\\n```')
        {'memories': []}
    """
    if not text or not text.strip():
        raise ValueError("the answer is empty; expected a JSON object")
    fenced = _FENCE_RE.search(text)
    body = fenced.group(1) if fenced else text
    decoder = json.JSONDecoder()
    for index, char in enumerate(body):
        if char in "{[":
            try:
                value, _ = decoder.raw_decode(body, index)
                return value
            except json.JSONDecodeError:
                continue
    raise ValueError(f"no JSON object found in the answer {text[:200]!r}")
