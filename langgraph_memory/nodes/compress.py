"""``compress``: keep the working context under budget with a rolling summary.

When the conversation passes a trigger (a fraction of the context budget, or a
token / message threshold), the oldest turns are evicted:

1. the last ``keep_last_turns`` turns stay verbatim (a turn starts at a human
   message, so the latest human message always stays, and an AI tool call is
   never separated from its tool results: the cut moves earlier until no pair
   straddles it);
2. evicted turns not yet handed to long-term extraction (``extracted_through``)
   go to the ``MemoryWriter`` first, so no fact leaves the window unextracted;
3. the new summary is written from *the previous summary plus the evicted
   turns* (one level, never a summary of summaries of summaries);
4. evicted messages are removed with ``RemoveMessage`` and the summary is kept
   in ``state["summary"]`` and shown to the model as one system message with a
   fixed id.

Without a model (``model=None``) a deterministic extractive summariser is used:
a real offline mode that keeps the user's sentences carrying names, numbers,
preferences, requests, decisions and to-dos, within the same token cap.

With a model, a summary that cannot be written (the provider errors, or answers
empty or with tool calls, after ``max_retries`` more attempts) falls back to the
extractive summary with a warning (``fallback_to_extractive=True``, the default):
compress runs after the reply, and the user's turn must never fail over its
bookkeeping. ``fallback_to_extractive=False`` raises ``ModelOutputError`` instead.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import MappingProxyType
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig, RunnableLambda

from langgraph_memory.clock import Clock
from langgraph_memory.clock import now as clock_now
from langgraph_memory.config import PrivacyPolicy, check_int, check_number
from langgraph_memory.errors import ConfigurationError, ModelOutputError
from langgraph_memory.nodes._context import resolve_store, resolve_thread_id, resolve_user_id
from langgraph_memory.nodes._messages import (
    header_is_ordered,
    message_text,
    rebuild_with,
    split_header,
    state_messages,
    state_value,
    tool_call_ids,
    tool_result_id,
)
from langgraph_memory.nodes._redaction_memo import RedactionMemo
from langgraph_memory.privacy import Redactor, neutralize_markup
from langgraph_memory.prompts.compress import (
    DEFAULT_COMPRESS_PROMPT,
    SUMMARY_CLOSE_TAG,
    SUMMARY_MESSAGE_ID,
    SUMMARY_OPEN_TAG,
    CompressPrompt,
)
from langgraph_memory.tokens import TokenCounter, count_message_tokens, default_token_counter
from langgraph_memory.types import MemoryRecord, MemorySource, MemoryType

__all__ = [
    "SUMMARY_MESSAGE_ID",
    "CompressionPlan",
    "create_compress_node",
    "extractive_summary",
    "plan_compression",
    "render_turns",
]

logger = logging.getLogger(__name__)


# What the summariser sees of one evicted message: long tool outputs and pasted
# documents are cut so the summary call itself stays far below the context budget.
_MAX_CHARS_PER_MESSAGE = 2000
_MAX_CHARS_PER_TOOL_RESULT = 500
_BLANK_LINES = re.compile(r"\n{3,}")


# --------------------------------------------------------------------------- planning


@dataclass(frozen=True, slots=True)
class CompressionPlan:
    """Which messages leave the window and which go to extraction first."""

    evicted: tuple[AnyMessage, ...]
    kept: tuple[AnyMessage, ...]
    # Evicted messages not yet handed to the memory writer (system messages excluded).
    handover: tuple[AnyMessage, ...]
    # New value of ``extracted_through`` after the handover (None: unchanged).
    extracted_through: str | None
    tokens_before: int


def _turn_starts(conversation: Sequence[AnyMessage]) -> list[int]:
    return [i for i, m in enumerate(conversation) if isinstance(m, HumanMessage)]


def _safe_cut(conversation: Sequence[AnyMessage], cut: int) -> int:
    """Move ``cut`` earlier until no AI tool call and its results straddle it."""
    while cut > 0:
        evicted_calls: dict[str, int] = {}
        for index in range(cut):
            for call_id in tool_call_ids(conversation[index]):
                evicted_calls[call_id] = index
        kept_results = {rid for m in conversation[cut:] if (rid := tool_result_id(m)) is not None}
        straddling = [evicted_calls[c] for c in kept_results if c in evicted_calls]
        # A tool result evicted while its call stays is impossible (results follow calls),
        # so only calls that stay answered by kept results can pull the cut back.
        if not straddling:
            return cut
        # Back to the start of the turn holding that call, so a kept turn is whole.
        earliest = min(straddling)
        starts = [i for i in _turn_starts(conversation) if i <= earliest]
        cut = starts[-1] if starts else 0
    return cut


def _handover(
    evicted: Sequence[AnyMessage],
    all_conversation: Sequence[AnyMessage],
    extracted_through: str | None,
) -> tuple[tuple[AnyMessage, ...], str | None]:
    """Evicted messages newer than ``extracted_through`` and the id to advance it to."""
    candidates = [m for m in evicted if not isinstance(m, SystemMessage)]
    if not candidates:
        return (), None
    ids = [m.id for m in all_conversation]
    if extracted_through is not None and extracted_through in ids:
        done_upto = ids.index(extracted_through)
        position = {id(m): i for i, m in enumerate(all_conversation)}
        candidates = [m for m in candidates if position[id(m)] > done_upto]
    # Not found: it was evicted earlier (after its handover), so everything left is newer.
    if not candidates:
        return (), None
    return tuple(candidates), str(candidates[-1].id) if candidates[-1].id else None


def plan_compression(
    messages: Sequence[AnyMessage],
    *,
    max_tokens: int,
    trigger_fraction: float = 0.65,
    trigger_tokens: int | None = None,
    trigger_messages: int | None = None,
    keep_last_turns: int = 2,
    summary_max_tokens: int = 300,
    extracted_through: str | None = None,
    token_counter: TokenCounter = count_message_tokens,
    force: bool = False,
) -> CompressionPlan | None:
    """Decide whether to compress and what to evict; ``None`` means leave the state alone.

    Pure: reads the message list, returns the plan. ``force=True`` skips the trigger
    check (used by benchmarks and tests).

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> msgs = []
        >>> for i in range(6):
        ...     msgs += [HumanMessage(f"q{i}", id=f"h{i}"), AIMessage(f"a{i}", id=f"a{i}")]
        >>> plan = plan_compression(msgs, max_tokens=10_000, trigger_messages=10,
        ...                         keep_last_turns=2)
        >>> [m.id for m in plan.kept]
        ['h4', 'a4', 'h5', 'a5']
    """
    _, _, conversation = split_header(messages)
    tokens = token_counter(messages)
    threshold = int(max_tokens * trigger_fraction)
    triggered = (
        force
        or tokens >= threshold
        or (trigger_tokens is not None and tokens >= trigger_tokens)
        or (trigger_messages is not None and len(conversation) >= trigger_messages)
    )
    if not triggered:
        return None
    starts = _turn_starts(conversation)
    if not starts:
        return None  # nothing a user said yet; no turn boundary to cut at
    keep = min(keep_last_turns, len(starts))
    # Fewer verbatim turns when even those would not fit under the trigger again;
    # the latest turn always stays whole.
    target = min(threshold, trigger_tokens or threshold)
    while keep > 1:
        kept_tokens = token_counter(conversation[starts[-keep] :])
        if kept_tokens + summary_max_tokens < target:
            break
        keep -= 1
    cut = _safe_cut(conversation, starts[-keep])
    if cut <= 0:
        return None
    evicted = tuple(conversation[:cut])
    handover, new_through = _handover(evicted, conversation, extracted_through)
    return CompressionPlan(
        evicted=evicted,
        kept=tuple(conversation[cut:]),
        handover=handover,
        extracted_through=new_through,
        tokens_before=tokens,
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def render_turns(messages: Sequence[BaseMessage]) -> str:
    """The evicted messages as a plain transcript for the summariser.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> print(render_turns([HumanMessage("Call me Lao Wang"), AIMessage("Sure, Lao Wang.")]))
        User: Call me Lao Wang
        Assistant: Sure, Lao Wang.
    """
    lines: list[str] = []
    for message in messages:
        text = message_text(message).strip()
        if isinstance(message, HumanMessage):
            lines.append(f"User: {_clip(text, _MAX_CHARS_PER_MESSAGE)}")
        elif isinstance(message, AIMessage):
            if text:
                lines.append(f"Assistant: {_clip(text, _MAX_CHARS_PER_MESSAGE)}")
            for call in message.tool_calls:
                lines.append(
                    f"Assistant called tool {call['name']}({_clip(str(call.get('args')), 200)})"
                )
        elif isinstance(message, ToolMessage):
            name = message.name or "tool"
            lines.append(f"Tool {name} returned: {_clip(text, _MAX_CHARS_PER_TOOL_RESULT)}")
        elif isinstance(message, SystemMessage):
            lines.append(f"System note: {_clip(text, _MAX_CHARS_PER_MESSAGE)}")
        elif text:
            lines.append(f"{message.type}: {_clip(text, _MAX_CHARS_PER_MESSAGE)}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- summaries


def _text_tokens(text: str, token_counter: TokenCounter) -> int:
    # Count the text alone: the per-message overhead is the summary message's, not the text's.
    return max(0, token_counter([HumanMessage(content=text)]) - token_counter([HumanMessage("")]))


def clean_summary(text: str) -> str:
    """Neutralise our block tags and their look-alikes (a summary cannot close its
    block; ``privacy.neutralize_markup``) and collapse blank-line runs."""
    return _BLANK_LINES.sub("\n\n", neutralize_markup(text)).strip()


def fit_to_tokens(text: str, max_tokens: int, token_counter: TokenCounter) -> str:
    """Cut ``text`` to ``max_tokens``, at a line or sentence end when possible."""
    if _text_tokens(text, token_counter) <= max_tokens:
        return text
    lines = text.splitlines()
    while len(lines) > 1 and _text_tokens("\n".join(lines), token_counter) > max_tokens:
        lines.pop()
    text = "\n".join(lines)
    while _text_tokens(text, token_counter) > max_tokens and text:
        sentences = re.split(r"(?<=[.!?。！？])\s*", text)
        if len(sentences) > 2:
            text = "".join(sentences[:-2]).strip()
        else:
            text = text[: max(0, int(len(text) * 0.9) - 1)].rstrip()
    return text


_SENTENCE_SPLIT = re.compile(r"(?<=[.!?。！？;；])\s+|(?<=[。！？；])|\n+")
# Words that mark what a summary must keep (see the prompt): identity, preferences,
# requests, corrections, decisions, to-dos; English and Chinese.
# What a summary must keep (see the prompt): identity, preferences, standing
# requests, corrections, decisions, to-dos; English and Chinese. Strong words mark
# such a sentence; weak ones ("please", "want") are in half of all sentences.
_STRONG_WORDS = re.compile(
    r"\b(my name|call me|i am|i'm|prefer\w*|favou?rite|love|hate|dislike|allerg\w*|"
    r"never|always|don't|do not|remember|from now on|budget|order|deadline|"
    r"actually|instead|correct\w*|decid\w*|agreed|promis\w*|todo|to-do|remind\w*|must)\b"
    r"|记住|以后|不要|别|喜欢|讨厌|过敏|预算|叫我|我是|订单|决定|改成|其实|提醒|待办|承诺|必须",
    re.IGNORECASE,
)
_WEAK_WORDS = re.compile(
    r"\b(please|need|want|like|should|will|next|plan\w*|change\w*)\b|需要|想要|计划", re.IGNORECASE
)
_CHITCHAT = re.compile(
    r"^((hi|hello|hey)( there| all| everyone)?|thanks?( a lot)?|thank you( so much)?|ok(ay)?|"
    r"great|cool|sure|lol|(ha)+|bye|good (morning|afternoon|evening|night))\W*$"
    r"|^(你好|您好|谢谢|好的|哈哈+|嗯+|再见|早上好|晚安)\W*$",
    re.IGNORECASE,
)
# A capitalised word after a lower-case one: "call me Lao Wang", not "Dear Sir" or "Tell".
_NAME_LIKE = re.compile(r"(?<=[a-z,] )[A-Z][a-z]+")
# Sentences scoring below this are left out even when there is room.
_MIN_SCORE = 1.0
_CARRY_BONUS = 0.5


@dataclass(order=True, slots=True)
class _Line:
    score: float
    order: int
    text: str = field(compare=False)


def _sentence_score(sentence: str, from_user: bool) -> float:
    if _CHITCHAT.match(sentence.strip()) or len(sentence.strip()) < 3:
        return 0.0
    score = 1.0 if from_user else 0.3
    if _STRONG_WORDS.search(sentence):
        score += 1.5
    if _WEAK_WORDS.search(sentence):
        score += 0.3
    if re.search(r"\d", sentence):
        score += 0.5
    if _NAME_LIKE.search(sentence):
        score += 0.5
    return score


def extractive_summary(
    previous_summary: str,
    evicted: Sequence[BaseMessage],
    *,
    max_tokens: int = 300,
    token_counter: TokenCounter = count_message_tokens,
) -> str:
    """Deterministic offline summary: the highest-signal sentences, in order, within the cap.

    Lines of the previous summary compete with the new sentences (with a small
    carry-over bonus), so the result is still "previous summary + evicted
    turns", never a summary of summaries. User sentences outrank assistant
    sentences; preference/request/correction/decision/to-do words, then digits
    and names raise a sentence's score; greetings, thanks and assistant
    sentences without such signals are dropped.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> extractive_summary("", [HumanMessage("Hi! My budget is 5000 yuan."),
        ...                         AIMessage("Great, noted.")], max_tokens=50)
        '- User: My budget is 5000 yuan.'
    """
    candidates: list[_Line] = []
    order = 0
    for line in previous_summary.splitlines():
        text = line.strip().lstrip("-• ").strip()
        if text:
            from_user = text.lower().startswith("user")
            candidates.append(_Line(_sentence_score(text, from_user) + _CARRY_BONUS, order, text))
            order += 1
    for message in evicted:
        if isinstance(message, HumanMessage):
            speaker, from_user = "User", True
        elif isinstance(message, AIMessage):
            speaker, from_user = "Assistant", False
        else:
            continue  # tool output and system notes are too bulky/noisy to quote
        for sentence in _SENTENCE_SPLIT.split(message_text(message)):
            sentence = sentence.strip()
            score = _sentence_score(sentence, from_user)
            if score < _MIN_SCORE:
                continue
            # Later sentences win ties: a correction comes after what it corrects.
            candidates.append(
                _Line(score + order * 1e-6, order, f"{speaker}: {_clip(sentence, 240)}")
            )
            order += 1
    chosen: list[_Line] = []
    seen: set[str] = set()
    used = 0
    for candidate in sorted(candidates, key=lambda c: (-c.score, -c.order)):
        # The same sentence from the other speaker (an echo) adds nothing.
        key = candidate.text.split(": ", 1)[-1].strip().lower()
        if key in seen:
            continue
        cost = _text_tokens(f"- {candidate.text}\n", token_counter)
        if used + cost > max_tokens:
            continue
        seen.add(key)
        chosen.append(candidate)
        used += cost
    chosen.sort(key=lambda c: c.order)
    return fit_to_tokens("\n".join(f"- {c.text}" for c in chosen), max_tokens, token_counter)


class _SummaryAttempts:
    """The retry logic of one model summary, shared by the sync and async shells.

    Empty, non-text (tool calls only) or truncated answers are retried; an answer
    over the cap gets one "shorter, please" follow-up and is then cut to the cap.
    After ``max_attempts`` failures it raises ``ModelOutputError``.
    """

    def __init__(
        self,
        prompt: CompressPrompt,
        previous_summary: str,
        evicted: Sequence[BaseMessage],
        *,
        max_tokens: int,
        max_attempts: int,
        token_counter: TokenCounter,
    ) -> None:
        self._prompt = prompt
        self._max_tokens = max_tokens
        self._max_attempts = max_attempts
        self._token_counter = token_counter
        self._attempt = 0
        self._problems: list[str] = []
        self._base: list[BaseMessage] = [
            SystemMessage(content=prompt.system.format(max_tokens=max_tokens)),
            HumanMessage(
                content=prompt.user.format(
                    previous_summary=previous_summary.strip() or prompt.no_previous_summary,
                    turns=render_turns(evicted),
                )
            ),
        ]
        self._follow_up: list[BaseMessage] = []

    def request(self) -> list[BaseMessage]:
        self._attempt += 1
        return [*self._base, *self._follow_up]

    def failed(self, exc: BaseException) -> None:
        """Record a call that raised; raise ``ModelOutputError`` when out of attempts."""
        self._problems.append(f"attempt {self._attempt}: {type(exc).__name__}: {exc}")
        self._maybe_give_up(exc)

    def _maybe_give_up(self, cause: BaseException | None = None) -> None:
        if self._attempt >= self._max_attempts:
            raise ModelOutputError(
                f"compress: the summary model gave no usable summary in {self._attempt} "
                f"attempt(s) ({'; '.join(self._problems)}). Check the model, or keep "
                "fallback_to_extractive=True (the default) to fall back to the offline "
                "summariser. Nothing was evicted."
            ) from cause

    def receive(self, response: Any) -> str | None:
        """The final summary, or ``None`` when another attempt should be made."""
        text = response.text if isinstance(response, BaseMessage) else str(response or "")
        text = clean_summary(text)
        metadata = getattr(response, "response_metadata", None) or {}
        truncated = metadata.get("finish_reason") in ("length", "max_tokens") or metadata.get(
            "stop_reason"
        ) in ("max_tokens",)
        if not text:
            calls = getattr(response, "tool_calls", None)
            self._problems.append(
                f"attempt {self._attempt}: "
                + ("tool calls instead of text" if calls else f"empty answer {text!r}")
            )
            self._maybe_give_up()
            return None
        if truncated:
            # Cut mid-sentence by the provider's output limit: keep complete lines only.
            complete = "\n".join(text.splitlines()[:-1]).strip()
            if complete:
                text = complete
        tokens = _text_tokens(text, self._token_counter)
        if tokens <= self._max_tokens:
            return text
        if self._attempt >= self._max_attempts or self._follow_up:
            logger.warning(
                "compress: summary still %d tokens > cap %d; cutting it", tokens, self._max_tokens
            )
            return fit_to_tokens(text, self._max_tokens, self._token_counter)
        self._problems.append(f"attempt {self._attempt}: {tokens} tokens > cap")
        self._follow_up = [
            AIMessage(content=text),
            HumanMessage(
                content=self._prompt.shorten.format(
                    actual_tokens=tokens, max_tokens=self._max_tokens
                )
            ),
        ]
        return None


# --------------------------------------------------------------------------- the node


# Messages a quiet turn redacts ahead for the summariser (see ``_redaction_memo``).
_PREPARE_MESSAGES = 8


def summariser_redactor(policy: PrivacyPolicy | None) -> Redactor:
    """The redactor for what a summary model sees: the policy's, with ``reject`` as
    ``mask`` (a turn already answered must not fail because its summary would quote
    an identifier). ``keep`` is kept: the caller chose to send that kind.

    Example:
        >>> summariser_redactor(None).redact("call me on 13812345678").text
        'call me on [PHONE]'
    """
    policy = policy or PrivacyPolicy()
    actions = {k: ("mask" if a == "reject" else a) for k, a in policy.actions.items()}
    return Redactor(replace(policy, actions=MappingProxyType(actions)))


def _summary_message(summary: str, prompt: CompressPrompt) -> SystemMessage:
    return SystemMessage(
        content=prompt.summary_message.format(summary=summary), id=SUMMARY_MESSAGE_ID
    )


def compression_update(
    messages: Sequence[AnyMessage],
    plan: CompressionPlan,
    summary: str,
    prompt: CompressPrompt = DEFAULT_COMPRESS_PROMPT,
) -> dict[str, Any]:
    """The state update: ``RemoveMessage`` per evicted message, summary in state and in place.

    When the summary message is not yet at the top (first compression), the list is
    rebuilt once in canonical order instead (see ``_messages``).
    """
    summary_message = _summary_message(summary, prompt)
    evicted_ids = [m.id for m in plan.evicted]
    present = any(m.id == SUMMARY_MESSAGE_ID for m in messages)
    if present and header_is_ordered(messages) and all(evicted_ids):
        update_messages: list[BaseMessage] = [RemoveMessage(id=str(i)) for i in evicted_ids]
        update_messages.append(summary_message)
    else:
        update_messages = rebuild_with(
            messages,
            replace={SUMMARY_MESSAGE_ID: summary_message},
            drop_ids=frozenset(str(i) for i in evicted_ids if i),
        )
        if not all(evicted_ids):  # id-less messages (outside a graph): drop by identity
            evicted = {id(m) for m in plan.evicted}
            update_messages = [m for m in update_messages if id(m) not in evicted]
    update: dict[str, Any] = {"messages": update_messages, "summary": summary}
    if plan.extracted_through is not None:
        update["extracted_through"] = plan.extracted_through
    return update


def _archive_record(
    summary: str, user_id: str, thread_id: str, plan: CompressionPlan, now: datetime
) -> MemoryRecord:
    # One archived summary per thread, overwritten as it rolls (stable id).
    digest = hashlib.sha256(f"{user_id}\x00{thread_id}".encode()).hexdigest()[:24]
    return MemoryRecord(
        id=f"summary-{digest}",
        text=f"Summary of an earlier conversation: {summary}",
        type=MemoryType.EPISODIC,
        source=MemorySource.AGENT_INFERRED,  # a paraphrase never outranks the user's words
        importance=0.4,
        user_id=user_id,
        created_at=now,
        updated_at=now,
        valid_from=now,
        origin_thread_id=thread_id,
        origin_message_ids=tuple(str(m.id) for m in plan.evicted if m.id),
    )


def create_compress_node(
    *,
    model: BaseChatModel | None,
    max_tokens: int,
    trigger_fraction: float = 0.65,
    trigger_tokens: int | None = None,
    trigger_messages: int | None = None,
    keep_last_turns: int = 2,
    summary_max_tokens: int = 300,
    writer: Any = None,
    archive_summary: bool = False,
    store: Any = None,
    max_retries: int = 2,
    fallback_to_extractive: bool = True,
    prompt: CompressPrompt | None = None,
    token_counter: TokenCounter | None = None,
    name: str = "compress",
    clock: Clock | None = None,
    redact_for_summariser: bool = True,
    privacy_policy: PrivacyPolicy | None = None,
) -> RunnableLambda[Any, dict[str, Any]]:
    """Create the ``compress`` node (sync and async).

    Args:
        model: Chat model that writes the rolling summary; ``None`` selects the
            deterministic extractive summariser (offline mode).
        max_tokens: The model's context budget in tokens.
        trigger_fraction: Compress once the prompt reaches this share of ``max_tokens``.
        trigger_tokens: Also compress at this many tokens (optional).
        trigger_messages: Also compress at this many conversation messages (optional).
        keep_last_turns: Turns (from a human message to the next) kept verbatim; fewer
            when they alone would exceed the trigger, never fewer than one.
        summary_max_tokens: Cap on the summary's length.
        writer: A ``MemoryWriter`` (``submit``/``asubmit``) that receives evicted turns
            not yet extracted, before they are removed.
        archive_summary: Also store the summary as an episodic, ``agent_inferred``
            memory of the user (one per thread, overwritten as it rolls).
        store: Store for ``archive_summary``; ``None`` uses the graph's store.
        max_retries: Extra attempts after a failed or unusable model answer.
        fallback_to_extractive: When the model gives no usable summary after its
            retries (errors, empty or tool-call answers), log a warning and use the
            extractive summary, so the user's turn never fails because a summary could
            not be written (default). ``False`` raises ``ModelOutputError`` instead and
            leaves the state unchanged.
        prompt: Override the summariser prompt (``prompts.compress.CompressPrompt``).
        token_counter: Counts tokens of a message list; ``None`` uses
            ``langgraph_memory.tokens.default_token_counter(model)``: the model's own
            counter when its class has one, else the offline estimate calibrated for
            Chinese and English (cl100k).
        name: The runnable's name.
        clock: Stamps the archived summary memory (``langgraph_memory.clock``; default
            the UTC wall clock).
        redact_for_summariser: Redact identifiers (phones, ids, cards, emails,
            secrets: ``langgraph_memory.privacy``) in the evicted turns and the previous
            summary before they go to ``model`` (default on): the summariser is often
            another provider or a cheaper model, and the summary is kept and shown on
            every later turn. The extractive summariser (``model=None``) runs in
            process and sees the turns as they are.
        privacy_policy: What to do per identifier kind for the summariser
            (``None`` masks every kind; ``reject`` is treated as ``mask``).

    Returns:
        A ``RunnableLambda`` returning ``{}`` below the trigger, else an update with
        ``messages`` (removals + summary message), ``summary`` and possibly
        ``extracted_through``.

    Raises:
        ConfigurationError: A threshold out of range.
        ModelOutputError: At run time, only with ``fallback_to_extractive=False``, when
            the model gave no usable summary after retries (the state is left unchanged,
            nothing is lost).

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> compress = create_compress_node(model=None, max_tokens=4000, trigger_messages=6,
        ...                                 keep_last_turns=1)
        >>> msgs = [HumanMessage("Call me Lao Wang", id="h1"), AIMessage("OK", id="a1"),
        ...         HumanMessage("My budget is 5000", id="h2"), AIMessage("Noted", id="a2"),
        ...         HumanMessage("Any hotel ideas?", id="h3"), AIMessage("Try X", id="a3")]
        >>> update = compress.invoke({"messages": msgs}, {"configurable": {"user_id": "u1"}})
        >>> print(update["summary"])
        - User: Call me Lao Wang
        - User: My budget is 5000
    """
    for arg, value, optional in (
        ("max_tokens", max_tokens, False),
        ("trigger_tokens", trigger_tokens, True),
        ("trigger_messages", trigger_messages, True),
        ("keep_last_turns", keep_last_turns, False),
        ("summary_max_tokens", summary_max_tokens, False),
        ("max_retries", max_retries, False),
    ):
        check_int(f"create_compress_node({arg})", value, optional=optional)
    check_number("create_compress_node(trigger_fraction)", trigger_fraction)
    if max_tokens < 1:
        raise ConfigurationError(
            f"create_compress_node(max_tokens={max_tokens!r}): use tokens >= 1."
        )
    if not 0 < trigger_fraction <= 1:
        raise ConfigurationError(
            f"create_compress_node(trigger_fraction={trigger_fraction!r}): use a share in (0, 1]."
        )
    for arg, value in (("trigger_tokens", trigger_tokens), ("trigger_messages", trigger_messages)):
        if value is not None and value < 1:
            raise ConfigurationError(f"create_compress_node({arg}={value!r}): use >= 1 or None.")
    if keep_last_turns < 1:
        raise ConfigurationError(
            f"create_compress_node(keep_last_turns={keep_last_turns!r}): use >= 1; the latest "
            "turn is always kept."
        )
    if summary_max_tokens < 16:
        raise ConfigurationError(
            f"create_compress_node(summary_max_tokens={summary_max_tokens!r}): use >= 16."
        )
    if max_retries < 0:
        raise ConfigurationError(f"create_compress_node(max_retries={max_retries!r}): use >= 0.")
    compress_prompt = prompt or DEFAULT_COMPRESS_PROMPT
    counter = token_counter or default_token_counter(model)
    redactor = summariser_redactor(privacy_policy) if redact_for_summariser else None
    redacted = RedactionMemo(redactor) if redactor is not None else None

    def plan(
        state: Any, config: RunnableConfig | None
    ) -> tuple[list[AnyMessage], CompressionPlan] | None:
        messages = state_messages(state)
        found = plan_compression(
            messages,
            max_tokens=max_tokens,
            trigger_fraction=trigger_fraction,
            trigger_tokens=trigger_tokens,
            trigger_messages=trigger_messages,
            keep_last_turns=keep_last_turns,
            summary_max_tokens=summary_max_tokens,
            extracted_through=state_value(state, "extracted_through"),
            token_counter=counter,
        )
        return None if found is None else (messages, found)

    def attempts(previous: str, found: CompressionPlan) -> _SummaryAttempts:
        evicted: Sequence[BaseMessage] = found.evicted
        if redactor is not None and redacted is not None:  # placeholders, never identifiers
            evicted = redacted.redact_messages(evicted)
            previous = redactor.redact(previous).text
        return _SummaryAttempts(
            compress_prompt,
            previous,
            evicted,
            max_tokens=summary_max_tokens,
            max_attempts=1 + max_retries,
            token_counter=counter,
        )

    def offline(previous: str, found: CompressionPlan) -> str:
        return extractive_summary(
            previous, found.evicted, max_tokens=summary_max_tokens, token_counter=counter
        )

    def fallback(exc: ModelOutputError, previous: str, found: CompressionPlan) -> str:
        # The turn was answered already; a summary that could not be written must not
        # fail it. The extractive summary keeps the same cap and loses no user fact
        # the writer has not seen (the handover ran first).
        if not fallback_to_extractive:
            raise exc
        logger.warning("compress: %s Using the extractive summary instead.", exc)
        return offline(previous, found)

    def summarize(previous: str, found: CompressionPlan) -> str:
        if model is None:
            return offline(previous, found)
        tries = attempts(previous, found)
        try:
            while True:
                try:
                    response = model.invoke(tries.request())
                except Exception as exc:  # provider errors are retried like bad answers
                    tries.failed(exc)
                    continue
                if (summary := tries.receive(response)) is not None:
                    return summary
        except ModelOutputError as exc:
            return fallback(exc, previous, found)

    async def asummarize(previous: str, found: CompressionPlan) -> str:
        if model is None:
            return offline(previous, found)
        tries = attempts(previous, found)
        try:
            while True:
                try:
                    response = await model.ainvoke(tries.request())
                except Exception as exc:
                    tries.failed(exc)
                    continue
                if (summary := tries.receive(response)) is not None:
                    return summary
        except ModelOutputError as exc:
            return fallback(exc, previous, found)

    def ids(config: RunnableConfig | None, needs_user: bool) -> tuple[str | None, str]:
        user_id = resolve_user_id(config) if needs_user else None
        return user_id, resolve_thread_id(config) or "default"

    def quiet_turn(state: Any) -> dict[str, Any]:
        # Redact this turn's messages now (the last few: a turn with tool calls has
        # several), so the turn that summarises finds them ready.
        if redacted is not None and model is not None:
            recent = state_messages(state)[-_PREPARE_MESSAGES:]
            redacted.prepare(
                [m for m in recent if isinstance(m, HumanMessage | AIMessage | ToolMessage)]
            )
        return {}

    def compress(state: Any, config: RunnableConfig) -> dict[str, Any]:
        planned = plan(state, config)
        if planned is None:
            return quiet_turn(state)
        messages, found = planned
        user_id, thread_id = ids(config, writer is not None or archive_summary)
        if writer is not None and found.handover:
            writer.submit(user_id, thread_id, list(found.handover))  # before anything is dropped
        summary = summarize(str(state_value(state, "summary", "") or ""), found)
        if archive_summary and user_id is not None:
            target = resolve_store(store, config)
            if target is None:
                raise ConfigurationError("compress(archive_summary=True) needs a store.")
            target.put_memory(_archive_record(summary, user_id, thread_id, found, clock_now(clock)))
        return compression_update(messages, found, summary, compress_prompt)

    async def acompress(state: Any, config: RunnableConfig) -> dict[str, Any]:
        planned = plan(state, config)
        if planned is None:
            return quiet_turn(state)
        messages, found = planned
        user_id, thread_id = ids(config, writer is not None or archive_summary)
        if writer is not None and found.handover:
            await writer.asubmit(user_id, thread_id, list(found.handover))
        summary = await asummarize(str(state_value(state, "summary", "") or ""), found)
        if archive_summary and user_id is not None:
            target = resolve_store(store, config)
            if target is None:
                raise ConfigurationError("compress(archive_summary=True) needs a store.")
            await target.aput_memory(
                _archive_record(summary, user_id, thread_id, found, clock_now(clock))
            )
        return compression_update(messages, found, summary, compress_prompt)

    return RunnableLambda(compress, afunc=acompress, name=name)


def summary_text_in(messages: Sequence[BaseMessage]) -> str | None:
    """The summary block currently shown to the model, if any."""
    for message in messages:
        if message.id == SUMMARY_MESSAGE_ID:
            text = message_text(message)
            return text.replace(SUMMARY_OPEN_TAG, "").replace(SUMMARY_CLOSE_TAG, "").strip()
    return None
