"""Extract: turn a batch of new turns into candidate memories with ONE model call.

The pure core renders the (redacted) transcript, parses and validates the
model's JSON, and checks every candidate against the transcript: a candidate
that cites no human message cannot be ``user_stated`` (an assistant's guess
such as "since you are diabetic" never becomes a fact about the user). The thin
shells ``LLMMemoryExtractor.extract`` / ``aextract`` only call the model: once,
plus one retry with the validation error fed back, then ``ModelOutputError``.

``create_extract_node`` is the graph node placed after the model: it hands the
turns newer than ``state["extracted_through"]`` to a ``MemoryWriter`` and
returns the new ``extracted_through``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, tzinfo
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig, RunnableLambda
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from langgraph_memory.clock import Clock, message_time, parse_time
from langgraph_memory.clock import now as clock_now
from langgraph_memory.config import PrivacyPolicy
from langgraph_memory.errors import (
    ConfigurationError,
    ModelOutputError,
    RedactionRejectedError,
)
from langgraph_memory.nodes._context import resolve_thread_id, resolve_user_id
from langgraph_memory.nodes._messages import (
    message_ids_for,
    message_text,
    new_messages_since,
    normalize_key,
    parse_json_answer,
    redact_text,
)
from langgraph_memory.privacy import Redactor, redact_for_log
from langgraph_memory.prompts.extract import (
    ExtractPrompts,
)
from langgraph_memory.types import CandidateMemory, MemorySource, MemoryType

if TYPE_CHECKING:
    from langgraph_memory.pipeline.writer import MemoryWriter

logger = logging.getLogger(__name__)

__all__ = [
    "ExtractPrompts",
    "ExtractedMemory",
    "ExtractionAnswer",
    "LLMMemoryExtractor",
    "MemoryExtractor",
    "create_extract_node",
    # Re-exported from nodes._messages (their home since 0.2) for earlier callers.
    "message_ids_for",
    "message_text",
    "new_messages_since",
    "normalize_key",
    "parse_json_answer",
    "redact_text",
]

# Enough for a long user turn; a pasted document is not a memory.
MAX_CHARS_PER_MESSAGE = 4000
MAX_MEMORY_CHARS = 500
MAX_MEMORIES_PER_ANSWER = 50


# --- the model's answer ----------------------------------------------------------


def _aware(value: str | None, tz: tzinfo = UTC) -> datetime | None:
    """An ISO string as an aware datetime; naive values (and bare dates) are in ``tz``."""
    return parse_time(value, tz) if value else None


Category = Literal[
    "preference", "identity", "business_fact", "correction", "event", "procedure",
    "forget", "chit_chat", "other",
]  # fmt: skip


def _lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


class ExtractedMemory(BaseModel):
    """One memory as the model states it (validated, then checked against the transcript)."""

    model_config = ConfigDict(extra="ignore")

    text: str = Field(min_length=1, max_length=2000)
    type: Literal["semantic", "episodic", "procedural"] = "semantic"
    key: str | None = None
    category: Category = "other"
    importance: float = Field(ge=0.0, le=1.0)
    source: Literal["user_stated", "agent_inferred"] = "user_stated"
    message_ids: list[str] = Field(default_factory=list, max_length=50)
    forget: bool = False
    # ISO 8601, resolved by the model against the cited message's own time
    # (the transcript shows it); a date alone means that day, in the user's zone.
    event_time: str | None = None
    expires_at: str | None = None

    _lower_enums = field_validator("type", "category", "source", mode="before")(_lower)

    @field_validator("event_time", "expires_at", mode="before")
    @classmethod
    def _iso_time(cls, value: Any) -> Any:
        if value is None or (
            isinstance(value, str) and value.strip().lower() in ("", "null", "none")
        ):
            return None
        if not isinstance(value, str) or parse_time(value) is None:
            raise ValueError(
                f"{value!r} is not an ISO 8601 date or datetime; use e.g. '2026-12-12' or "
                "'2026-12-12T18:00:00+08:00', or null"
            )
        return value.strip()

    @model_validator(mode="after")
    def _ends_after_it_starts(self) -> ExtractedMemory:
        start, end = _aware(self.event_time), _aware(self.expires_at)
        if start is not None and end is not None and end < start:
            raise ValueError(
                f"expires_at {self.expires_at!r} is before event_time {self.event_time!r}; "
                "expires_at is when the memory stops being true (at or after the event)"
            )
        return self

    @field_validator("message_ids", mode="before")
    @classmethod
    def _ids_as_strings(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [value]
        if isinstance(value, list):
            return [str(v) for v in value]
        return value


class ExtractionAnswer(BaseModel):
    """The whole answer: ``{"memories": [...]}``; an empty list is a normal answer."""

    model_config = ConfigDict(extra="ignore")

    memories: list[ExtractedMemory] = Field(
        default_factory=list, max_length=MAX_MEMORIES_PER_ANSWER
    )


def parse_extraction(text: str) -> ExtractionAnswer:
    """Parse and validate an extraction answer.

    Raises:
        ValueError: Not JSON, or not the expected shape (pydantic's message kept).
    """
    value = parse_json_answer(text)
    if isinstance(value, list):  # a bare list of memories is an easy, harmless slip
        value = {"memories": value}
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object with 'memories', got {type(value).__name__}")
    try:
        return ExtractionAnswer.model_validate(value)
    except ValidationError as exc:
        raise ValueError(_short_validation_error(exc)) from exc


def _short_validation_error(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(str(p) for p in error["loc"])
        parts.append(f"{where}: {error['msg']} (got {error.get('input')!r:.80})")
    return "; ".join(parts)


# --- the transcript --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Transcript:
    """The redacted batch as the model sees it, with aliases mapped back to ids."""

    text: str
    alias_to_id: Mapping[str, str]
    human_ids: frozenset[str]

    @property
    def has_human_turn(self) -> bool:
        return bool(self.human_ids)


def _role(message: BaseMessage) -> str | None:
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage):
        return "assistant"
    if isinstance(message, ToolMessage):
        return "tool"
    return None  # system messages (our own recall block among them) are not the user's words


def _said_at(message: BaseMessage, clock: Clock | None) -> str:
    """``2026-12-01T10:00+08:00 Tue``: the message's own time, for resolving "明天"."""
    moment = message_time(message, clock)
    return f"{moment.isoformat(timespec='minutes')} {moment.strftime('%a')}"


def build_transcript(
    messages: Sequence[BaseMessage],
    policy: PrivacyPolicy | None = None,
    clock: Clock | None = None,
) -> Transcript:
    """Render ``[m1] user (2026-12-01T10:00+00:00 Tue): ...`` lines from redacted message text.

    Short aliases (``m1``, ``m2``) instead of 36-character ids: fewer tokens and
    fewer mistyped ids. Each line shows when the message was said (its own
    ``created_at``, else ``clock``), so the model resolves "tomorrow" against
    that time, not against today. A message the privacy policy rejects is left out.
    """
    redactor = Redactor(policy)
    lines: list[str] = []
    alias_to_id: dict[str, str] = {}
    human_ids: set[str] = set()
    for message, message_id in zip(messages, message_ids_for(messages), strict=True):
        role = _role(message)
        if role is None:
            continue
        try:
            text = redactor.redact(message_text(message)).text
        except RedactionRejectedError:
            logger.info(
                "extract: message %s left out, the privacy policy rejects its content", message_id
            )
            continue
        if isinstance(message, AIMessage) and message.tool_calls:
            calls = ", ".join(call["name"] for call in message.tool_calls)
            text = f"{text} (called tools: {calls})".strip()
        if not text:
            continue
        if len(text) > MAX_CHARS_PER_MESSAGE:
            text = text[:MAX_CHARS_PER_MESSAGE] + " [...]"
        alias = f"m{len(alias_to_id) + 1}"
        alias_to_id[alias] = message_id
        if role == "user":
            human_ids.add(message_id)
        lines.append(f"[{alias}] {role} ({_said_at(message, clock)}): {text}")
    return Transcript("\n".join(lines), alias_to_id, frozenset(human_ids))


def candidates_from_answer(
    answer: ExtractionAnswer,
    transcript: Transcript,
    *,
    policy: PrivacyPolicy | None = None,
    min_importance: float = 0.5,
    keep_agent_inferred: bool = False,
    tz: tzinfo = UTC,
) -> list[CandidateMemory]:
    """Validate the model's memories against the transcript; pure.

    ``event_time`` / ``expires_at`` without an offset (or bare dates) are read in ``tz``
    (the user's zone: the clock's).

    - cited ids must be in the transcript (aliases or real ids); others are dropped;
    - a memory citing no human message is ``agent_inferred``; those are dropped
      unless ``keep_agent_inferred``; a "forget" request must cite a human message;
    - chit-chat and importance below ``min_importance`` are dropped (forget requests stay);
    - the text is redacted again: the model may have rebuilt an identifier.
    """
    redactor = Redactor(policy)
    known_ids = set(transcript.alias_to_id.values())
    out: list[CandidateMemory] = []
    seen: set[tuple[str | None, str]] = set()
    for item in answer.memories:
        cited: list[str] = []
        for ref in item.message_ids:
            ref = ref.strip().strip("[]")
            real = transcript.alias_to_id.get(ref, ref if ref in known_ids else None)
            if real is None:
                logger.info(
                    "extract: ignoring cited message id %r not in this batch",
                    redact_for_log(ref, 80),
                )
            elif real not in cited:
                cited.append(real)
        from_user = any(mid in transcript.human_ids for mid in cited)
        source = MemorySource(item.source)
        if source is MemorySource.USER_STATED and not from_user:
            source = MemorySource.AGENT_INFERRED  # only the assistant (or nobody) said it
        if item.forget and not from_user:
            logger.info("extract: dropping a forget request no user message asked for")
            continue
        if source is MemorySource.AGENT_INFERRED and not keep_agent_inferred:
            continue
        if item.category == "chit_chat" and not item.forget:
            continue
        if item.importance < min_importance and not item.forget:
            continue
        try:
            text = redactor.redact(" ".join(item.text.split())).text
        except RedactionRejectedError:
            continue
        text = text[:MAX_MEMORY_CHARS]
        key = normalize_key(item.key)
        if (key, text) in seen:
            continue
        seen.add((key, text))
        out.append(
            CandidateMemory(
                text=text,
                type=MemoryType(item.type),
                key=key,
                importance=item.importance,
                source=source,
                # An assistant's inference is a hypothesis, never certain.
                confidence=1.0 if source is MemorySource.USER_STATED else 0.5,
                origin_message_ids=tuple(cited),
                forget=item.forget,
                event_time=_aware(item.event_time, tz),
                expires_at=_aware(item.expires_at, tz),
            )
        )
    return out


# --- the extractor ---------------------------------------------------------------


@runtime_checkable
class MemoryExtractor(Protocol):
    """Anything that turns messages into candidates (``LLMMemoryExtractor``, ``RuleBasedExtractor``)."""

    def extract(self, messages: Sequence[BaseMessage]) -> list[CandidateMemory]: ...
    async def aextract(self, messages: Sequence[BaseMessage]) -> list[CandidateMemory]: ...


def _answer_text(answer: Any) -> str:
    if isinstance(answer, BaseMessage):
        return answer.text
    return str(answer)


class LLMMemoryExtractor:
    """Extract candidate memories with any ``BaseChatModel``: one call per batch.

    By default the model answers in JSON that is parsed and validated with
    pydantic here, so models without native structured output work too. With
    ``structured_output="native"`` the model's own tool calling is used
    (``with_structured_output(ExtractionAnswer, include_raw=True)``). Either way
    an invalid answer gets one retry with the validation error fed back, then
    ``ModelOutputError``.

    Args:
        model: Any LangChain chat model.
        prompts: Override the default prompts (``ExtractPrompts``).
        policy: Privacy policy applied before the model sees anything, and again
            to what it returns. ``None`` masks every identifier kind.
        min_importance: Candidates below this are not stored (default 0.5).
        keep_agent_inferred: Keep claims only the assistant made, as
            ``agent_inferred`` with confidence 0.5 (default ``False``: drop them).
        structured_output: ``"json"`` (default, any model) or ``"native"``
            (models that implement ``bind_tools``).
        clock: "Now" for messages without their own ``created_at``
            (``langgraph_memory.clock``; default the UTC wall clock).

    Raises:
        ConfigurationError: A bad argument, or ``"native"`` for a model without
            tool calling.

    Example:
        >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
        >>> from langchain_core.messages import HumanMessage
        >>> model = FakeListChatModel(responses=['{"memories": [{"text": "User is vegan", '
        ...     '"key": "diet", "importance": 0.8, "message_ids": ["m1"]}]}'])
        >>> [c.text for c in LLMMemoryExtractor(model).extract([HumanMessage("I am vegan")])]
        ['User is vegan']
    """

    def __init__(
        self,
        model: BaseChatModel,
        *,
        prompts: ExtractPrompts | None = None,
        policy: PrivacyPolicy | None = None,
        min_importance: float = 0.5,
        keep_agent_inferred: bool = False,
        structured_output: Literal["json", "native"] = "json",
        clock: Clock | None = None,
    ) -> None:
        if not isinstance(model, BaseChatModel):
            raise ConfigurationError(
                f"LLMMemoryExtractor(model={model!r}): pass a langchain BaseChatModel."
            )
        if not 0.0 <= min_importance <= 1.0:
            raise ConfigurationError(
                f"LLMMemoryExtractor(min_importance={min_importance!r}); use a value between 0 and 1."
            )
        if structured_output not in ("json", "native"):
            raise ConfigurationError(
                f"LLMMemoryExtractor(structured_output={structured_output!r}); use 'json' or 'native'."
            )
        self.model = model
        self.prompts = prompts or ExtractPrompts()
        self.policy = policy
        self.min_importance = min_importance
        self.keep_agent_inferred = keep_agent_inferred
        self.structured_output = structured_output
        self.clock = clock
        self._runnable: Any = model
        if structured_output == "native":
            try:
                self._runnable = model.with_structured_output(ExtractionAnswer, include_raw=True)
            except NotImplementedError as exc:
                raise ConfigurationError(
                    f"LLMMemoryExtractor(structured_output='native'): {type(model).__name__} has "
                    "no tool calling; use structured_output='json' (works with any model)."
                ) from exc

    def _first_request(self, transcript: Transcript) -> list[BaseMessage]:
        return [
            SystemMessage(self.prompts.system),
            HumanMessage(self.prompts.user_template.format(transcript=transcript.text)),
        ]

    def _retry_request(
        self, request: list[BaseMessage], answer: Any, error: str
    ) -> list[BaseMessage]:
        retry = HumanMessage(self.prompts.retry_template.format(error=error))
        if self.structured_output == "native":
            # A tool call without its tool result is refused by several providers.
            return [*request, retry]
        return [*request, AIMessage(_answer_text(answer)[:2000]), retry]

    def _interpret(self, answer: Any) -> ExtractionAnswer:
        """The validated answer; ``ValueError`` says what is wrong with it."""
        if self.structured_output == "json":
            return parse_extraction(_answer_text(answer))
        parsed = answer.get("parsed") if isinstance(answer, dict) else None
        if isinstance(parsed, ExtractionAnswer):
            return parsed
        error = answer.get("parsing_error") if isinstance(answer, dict) else None
        if isinstance(error, ValidationError):
            raise ValueError(_short_validation_error(error))
        if error is not None:
            raise ValueError(str(error)[:500])
        raise ValueError("the answer called no tool; call ExtractionAnswer exactly once")

    def _interpret_or_raise(self, answer: Any, first_error: str) -> ExtractionAnswer:
        try:
            return self._interpret(answer)
        except ValueError as exc:
            shown = _answer_text(answer.get("raw") if isinstance(answer, dict) else answer)
            raise ModelOutputError(
                f"The extraction model answered invalid output twice: first {first_error}; "
                f"then {exc} (answer {shown[:200]!r}). Use a model that follows JSON "
                "instructions, or RuleBasedExtractor for offline extraction."
            ) from exc

    def _needs_model(self, transcript: Transcript) -> bool:
        # Without a human turn nothing can be user_stated; skip the call.
        return bool(transcript.text) and (transcript.has_human_turn or self.keep_agent_inferred)

    def _finish(
        self,
        answer: ExtractionAnswer,
        transcript: Transcript,
        messages: Sequence[BaseMessage],
    ) -> list[CandidateMemory]:
        found = candidates_from_answer(
            answer,
            transcript,
            policy=self.policy,
            min_importance=self.min_importance,
            keep_agent_inferred=self.keep_agent_inferred,
            tz=clock_now(self.clock).tzinfo or UTC,
        )
        # Valid from when it was said: the latest message the memory cites.
        said = {
            mid: message_time(m, self.clock)
            for m, mid in zip(messages, message_ids_for(messages), strict=True)
        }
        fallback = clock_now(self.clock)
        return [
            replace(
                c,
                observed_at=max(
                    (said[mid] for mid in c.origin_message_ids if mid in said), default=fallback
                ),
            )
            for c in found
        ]

    def extract(self, messages: Sequence[BaseMessage]) -> list[CandidateMemory]:
        """Candidates for ``messages``; at most one model call (two when the first is invalid).

        Raises:
            ModelOutputError: The answer was invalid twice.
        """
        transcript = build_transcript(messages, self.policy, self.clock)
        if not self._needs_model(transcript):
            return []
        request = self._first_request(transcript)
        first = self._runnable.invoke(request)
        try:
            return self._finish(self._interpret(first), transcript, messages)
        except ValueError as exc:
            error = str(exc)
        second = self._runnable.invoke(self._retry_request(request, first, error))
        return self._finish(self._interpret_or_raise(second, error), transcript, messages)

    async def aextract(self, messages: Sequence[BaseMessage]) -> list[CandidateMemory]:
        """Async twin of ``extract``."""
        transcript = build_transcript(messages, self.policy, self.clock)
        if not self._needs_model(transcript):
            return []
        request = self._first_request(transcript)
        first = await self._runnable.ainvoke(request)
        try:
            return self._finish(self._interpret(first), transcript, messages)
        except ValueError as exc:
            error = str(exc)
        second = await self._runnable.ainvoke(self._retry_request(request, first, error))
        return self._finish(self._interpret_or_raise(second, error), transcript, messages)


def as_extractor(extractor: MemoryExtractor | BaseChatModel) -> MemoryExtractor:
    """Wrap a bare chat model in ``LLMMemoryExtractor``; pass extractors through."""
    if isinstance(extractor, BaseChatModel):
        return LLMMemoryExtractor(extractor)
    if not isinstance(extractor, MemoryExtractor):
        raise ConfigurationError(
            f"extractor={extractor!r}: pass a BaseChatModel, an LLMMemoryExtractor, a "
            "RuleBasedExtractor, or an object with extract()/aextract()."
        )
    return extractor


# --- the graph node --------------------------------------------------------------


def through_last_user_turn(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """``messages`` up to and including the last human message (``[]`` without one).

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> msgs = [AIMessage("I can switch you", id="a1"), HumanMessage("Do it", id="h2"),
        ...         AIMessage("Done", id="a2")]
        >>> [m.id for m in through_last_user_turn(msgs)]
        ['a1', 'h2']
    """
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return list(messages[: index + 1])
    return []


def _final_reply(after_user: Sequence[BaseMessage]) -> BaseMessage | None:
    """The assistant's closing text reply after the user's latest message, if any (not a
    tool call, whose result and the reply after it are still to come)."""
    last = after_user[-1] if after_user else None
    if isinstance(last, AIMessage) and not last.tool_calls and last.text.strip():
        return last
    return None


def _state_value(state: Any, key: str) -> Any:
    if isinstance(state, Mapping):
        return state.get(key)
    return getattr(state, key, None)


def create_extract_node(
    *,
    writer: MemoryWriter,
    name: str = "extract",
) -> RunnableLambda[Any, dict[str, Any]]:
    """The node after the model: submit the turns newer than ``extracted_through``.

    The writer decides when the work happens (``mode="background"``: a durable
    queue, off the reply path; ``mode="sync"``: inline). The node returns
    ``{"extracted_through": <id of the last submitted message>}`` so no turn is
    extracted twice or skipped; it returns ``{}`` when there is nothing new.

    What is submitted ends at the user's latest message: the assistant's reply
    goes with the next turn, together with the user's answer to it, since only
    that answer shows whether an offer was accepted ("I can switch you to
    unlimited" - "Do it.") or a commitment taken or corrected. The reply is also
    held (``MemoryWriter.submit_unanswered``): if the thread goes quiet, the
    confirmation that ended it ("Done: your refund of $30 is on its way") is read
    alone; the next turn cancels the hold.

    Raises:
        MissingUserIdError: No user id in the Runtime context or ``configurable``.

    Example:
        >>> from langgraph_memory.nodes import create_extract_node  # doctest: +SKIP
        >>> builder.add_node("extract", create_extract_node(writer=writer))  # doctest: +SKIP
    """

    def _plan(
        state: Any, config: RunnableConfig | None
    ) -> tuple[str, str, list[BaseMessage], BaseMessage | None]:
        user_id = resolve_user_id(config)
        thread_id = resolve_thread_id(config) or "default"
        messages = list(_state_value(state, "messages") or [])
        new = new_messages_since(messages, _state_value(state, "extracted_through"))
        through = through_last_user_turn(new)
        return user_id, thread_id, through, _final_reply(new[len(through) :])

    def _result(new: Sequence[BaseMessage]) -> dict[str, Any]:
        return {"extracted_through": message_ids_for(new)[-1]}

    def extract_sync(state: Any, config: RunnableConfig) -> dict[str, Any]:
        user_id, thread_id, new, reply = _plan(state, config)
        if not new:
            return {}
        writer.submit(user_id, thread_id, new)
        if reply is not None:
            writer.submit_unanswered(user_id, thread_id, reply)
        return _result(new)

    async def extract_async(state: Any, config: RunnableConfig) -> dict[str, Any]:
        user_id, thread_id, new, reply = _plan(state, config)
        if not new:
            return {}
        await writer.asubmit(user_id, thread_id, new)
        if reply is not None:
            await writer.asubmit_unanswered(user_id, thread_id, reply)
        return _result(new)

    return RunnableLambda(extract_sync, afunc=extract_async, name=name)
