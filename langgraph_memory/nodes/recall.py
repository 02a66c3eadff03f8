"""``recall``: put the current user's relevant long-term memories in front of the model.

Per turn: build a query from the latest human message (plus a little recent
context), search the user's memories, and pack into a token budget, with their
provenance: first the user's **core profile** (allergies and other safety facts,
identity and address form, standing instructions, current key slots: shown
whatever the query, within its own share of the budget; ``nodes/_profile.py``
says how a memory qualifies), then the memories most relevant to this turn,
grouped by kind. The block is one ``SystemMessage`` with a fixed id that replaces
the previous turn's; its ``additional_kwargs["langgraph_memory"]`` lists the
injected ``memory_ids``, the ``profile_ids`` and the ``query``
(:func:`recalled_metadata`). Access statistics (``store.touch``) are updated in
the background so they never delay the reply.

The planning (query, profile selection, packing, rendering, state update,
:func:`explain_recall`) is pure; the sync and async node functions only run the
searches and hand ``touch`` to a worker.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda

from langgraph_memory._pools import shared_pool
from langgraph_memory.clock import Clock
from langgraph_memory.clock import now as clock_now
from langgraph_memory.config import ScoringWeights, check_int, check_number
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.nodes._context import resolve_store, resolve_user_id
from langgraph_memory.nodes._messages import (
    latest_human_index,
    message_text,
    state_messages,
    upsert_memory_message,
)
from langgraph_memory.nodes._profile import (
    DEFAULT_PROFILE_POLICY,
    ProfileEntry,
    ProfilePolicy,
    is_about_me,
    is_current,
    profile_share,
    select_profile,
)
from langgraph_memory.privacy import neutralize_markup
from langgraph_memory.prompts.recall import (
    DEFAULT_RECALL_PROMPT,
    RECALL_MESSAGE_ID,
    RecallPrompt,
)
from langgraph_memory.tokens import (
    TokenCounter,
    count_message_tokens,
    default_token_counter,
    estimate_tokens,
    text_token_counter,
)
from langgraph_memory.types import (
    LongTermMemory,
    MemoryRecord,
    MemorySource,
    MemoryStatus,
    MemoryType,
    ScoredMemory,
)

__all__ = [
    "RECALL_MESSAGE_ID",
    "RECALL_METADATA_KEY",
    "PackedRecall",
    "ProfilePolicy",
    "RecallDecision",
    "aflush_access_stats",
    "build_recall_query",
    "create_recall_node",
    "explain_recall",
    "flush_access_stats",
    "pack_memories",
    "plan_recall",
    "recalled_block",
    "recalled_metadata",
    "render_recall_block",
]

logger = logging.getLogger(__name__)

# Rendered in section order: the core profile, then MemoryType values.
_SECTION_ORDER: tuple[str, ...] = ("profile", "semantic", "episodic", "procedural")
# A memory may not open/close our block or start a new section of its own.
_WHITESPACE = re.compile(r"\s+")
# Context from earlier turns helps short follow-ups ("and tonight?"), but too
# much of it dilutes the keyword part of the hybrid search.
_CONTEXT_CHARS_PER_MESSAGE = 160
_QUERY_MAX_CHARS = 1000
# A latest message of at least this many tokens stands on its own: earlier turns
# would only pull the search towards the previous topic (and double its cost).
_SELF_CONTAINED_TOKENS = 12


# --------------------------------------------------------------------------- pure core


def build_recall_query(messages: Sequence[AnyMessage], *, context_messages: int = 1) -> str | None:
    """The search query for this turn: the latest human message plus a little context.

    The context is the user's own earlier messages (each cut to 160 characters),
    newest first, added only when the latest message is a short follow-up (under
    12 tokens: "and tonight?", "那明天呢？"); the assistant's words are left out so
    its guesses do not steer what is recalled.

    Args:
        messages: The conversation so far.
        context_messages: How many earlier human messages to append.

    Returns:
        The query, or ``None`` when there is no human message to answer.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> build_recall_query([HumanMessage("I am planning a trip to Japan"), AIMessage("Nice!"),
        ...                     HumanMessage("what should I eat there?")])
        'what should I eat there? I am planning a trip to Japan'
    """
    index = latest_human_index(messages)
    if index is None:
        return None
    parts = [message_text(messages[index]).strip()]
    if estimate_tokens(parts[0]) >= _SELF_CONTAINED_TOKENS:
        context_messages = 0
    earlier = [m for m in messages[:index] if isinstance(m, HumanMessage)]
    for message in reversed(earlier[-context_messages:] if context_messages else []):
        text = message_text(message).strip()
        if text:
            parts.append(text[:_CONTEXT_CHARS_PER_MESSAGE])
    query = " ".join(p for p in parts if p)[:_QUERY_MAX_CHARS]
    return query or None


@lru_cache(maxsize=16384)
def clean_memory_text(text: str) -> str:
    """A memory's text as its line renders it (what ``nodes/recall_erasure.py`` matches)."""
    # Cached by text: the line cache below misses whenever a record's access
    # statistics change (every turn it is recalled), the text rarely does.
    # Look-alike tags (fullwidth, spaced, zero-width joined, entity-encoded) and
    # fake provenance tags are neutralised too (privacy.neutralize_markup).
    return _WHITESPACE.sub(" ", neutralize_markup(text)).strip()


def _memory_date(record: MemoryRecord) -> str:
    moment = record.event_time or record.valid_from or record.created_at
    return moment.date().isoformat()


def render_memory_line(record: MemoryRecord, prompt: RecallPrompt = DEFAULT_RECALL_PROMPT) -> str:
    """One memory as a line of the block (cached: the same memories come back every turn)."""
    return _memory_line(record, prompt)


@lru_cache(maxsize=16384)
def _memory_line(record: MemoryRecord, prompt: RecallPrompt) -> str:
    source = record.source.value if isinstance(record.source, MemorySource) else str(record.source)
    return prompt.line.format(
        text=clean_memory_text(record.text),
        source=source,
        date=_memory_date(record),
        key=record.key or "",
    )


def _section_of(record: MemoryRecord, profile_ids: frozenset[str]) -> str:
    # Standing instructions stay in their own section even when pinned by the profile.
    if record.id in profile_ids and record.type is not MemoryType.PROCEDURAL:
        return "profile"
    return record.type.value


def render_recall_block(
    records: Sequence[MemoryRecord],
    prompt: RecallPrompt = DEFAULT_RECALL_PROMPT,
    *,
    profile_ids: Iterable[str] = (),
) -> str:
    """The text of the recall message: header, the core profile, then one section per kind.

    Example:
        >>> from langgraph_memory.types import MemoryRecord
        >>> allergy = MemoryRecord("User is allergic to seafood", id="a")
        >>> print(render_recall_block([allergy], profile_ids=["a"]).splitlines()[2])
        ## Core profile (always keep in mind: safety, identity, key facts)
    """
    profile = frozenset(profile_ids)
    lines = [prompt.open_tag, prompt.header]
    if not records:
        lines.append("(no stored memories are relevant to this turn)")
    for section in _SECTION_ORDER:
        chosen = [r for r in records if _section_of(r, profile) == section]
        if chosen:
            lines.append(f"## {prompt.title_for(section)}")
            lines.extend(render_memory_line(r, prompt) for r in chosen)
    lines.append(prompt.close_tag)
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class RecallDecision:
    """Why one candidate memory is or is not in this turn's block (``explain_recall``).

    Attributes:
        memory_id / text: The memory.
        part: ``"profile"`` (shown every turn; ``reason`` is its family) or ``"relevant"``
            (found for this query; ``reason`` is its score).
        injected: Whether it is in the block; ``note`` says why not.
    """

    memory_id: str
    text: str
    part: str
    reason: str
    injected: bool
    note: str = ""


@dataclass(frozen=True, slots=True)
class PackedRecall:
    """What recall will inject: the block text, the memory ids in it, its token count.

    ``memory_ids`` lists every injected memory (profile first); ``profile_ids`` the
    core-profile subset; ``decisions`` every candidate with the reason it is in or out.
    """

    text: str
    memory_ids: tuple[str, ...]
    tokens: int
    profile_ids: tuple[str, ...] = ()
    profile_tokens: int = 0
    decisions: tuple[RecallDecision, ...] = ()


class _BlockBudget:
    """Token cost of a block as lines are added, without re-counting the whole block.

    A line costs what the counter says for it alone (plus its newline), a section its
    title; the chosen block is measured once at the end and trimmed if the sum was low.
    """

    def __init__(self, prompt: RecallPrompt, token_counter: TokenCounter) -> None:
        self.prompt = prompt
        self.counter = token_counter
        # Our own counters count plain text directly (no message objects per line).
        self.text_tokens = text_token_counter(token_counter)
        self.empty = token_counter([SystemMessage(content="")])
        self.base = token_counter([SystemMessage(content=render_recall_block([], prompt))])
        self.sections: set[str] = set()
        self.used = self.base
        self.lines: dict[str, str] = {}

    def text_cost(self, text: str) -> int:
        if self.text_tokens is not None:
            return self.text_tokens(text + "\n")
        return max(0, self.counter([SystemMessage(content=text + "\n")]) - self.empty)

    def cost(self, record: MemoryRecord, section: str) -> int:
        extra = (
            0
            if section in self.sections
            else self.text_cost(f"## {self.prompt.title_for(section)}")
        )
        line = self.lines.get(record.id)
        if line is None:
            line = self.lines[record.id] = render_memory_line(record, self.prompt)
        return extra + self.text_cost(line)

    def add(self, section: str, cost: int) -> None:
        self.sections.add(section)
        self.used += cost


def pack_memories(
    scored: Sequence[ScoredMemory],
    *,
    budget_tokens: int,
    pinned: Sequence[ScoredMemory] = (),
    profile: Sequence[ProfileEntry] = (),
    profile_budget_tokens: int | None = None,
    fill: Sequence[ScoredMemory] = (),
    prompt: RecallPrompt = DEFAULT_RECALL_PROMPT,
    token_counter: TokenCounter = count_message_tokens,
) -> PackedRecall:
    """Choose the memories whose rendered block fits ``budget_tokens``.

    The core ``profile`` goes first, in its order, within ``profile_budget_tokens``
    (default: the whole budget); then ``pinned`` memories (standing instructions) in
    their order; then the rest greedily by score (a lower-scored short memory may
    still fit after a long one was skipped); then ``fill`` in its order. The block is measured as the
    ``SystemMessage`` it becomes, so the budget holds for what the model receives.
    When not even the header fits, the block says there are no memories.

    Example:
        >>> from langgraph_memory.types import MemoryRecord, ScoredMemory
        >>> packed = pack_memories([ScoredMemory(MemoryRecord("User is vegan"), 0.9)],
        ...                        budget_tokens=200)
        >>> "User is vegan" in packed.text, packed.tokens <= 200
        (True, True)
    """
    budget = _BlockBudget(prompt, token_counter)
    profile_cap = budget_tokens if profile_budget_tokens is None else profile_budget_tokens
    chosen: list[MemoryRecord] = []
    profile_ids: list[str] = []
    decisions: list[RecallDecision] = []
    seen: set[str] = set()

    profile_used = 0  # tokens of the profile's facts (not its standing instructions)

    def offer(record: MemoryRecord, part: str, reason: str, share_cap: int | None = None) -> None:
        nonlocal profile_used

        def decide(injected: bool, note: str = "") -> None:
            decisions.append(RecallDecision(record.id, record.text, part, reason, injected, note))

        if record.id in seen:
            return decide(False, "already in the block")
        if not record.text.strip():
            return decide(False, "blank text")
        section = (
            "profile"
            if part == "profile" and record.type is not MemoryType.PROCEDURAL
            else record.type.value
        )
        cost = budget.cost(record, section)
        if share_cap is not None and profile_used + cost > share_cap:
            return decide(False, f"over the profile share ({profile_used + cost} > {share_cap})")
        if budget.used + cost > budget_tokens:
            return decide(False, f"over the budget ({budget.used + cost} > {budget_tokens})")
        budget.add(section, cost)
        if share_cap is not None:
            profile_used += cost
        chosen.append(record)
        seen.add(record.id)
        if part == "profile":
            profile_ids.append(record.id)
        decide(True)

    for entry in profile:
        # The share is of the memory lines, not of the fixed header. Standing
        # instructions keep the whole budget (they were pinned before the profile).
        instruction = entry.family == "instruction"
        offer(entry.record, "profile", entry.family, None if instruction else profile_cap)
    profile_tokens = budget.used - budget.base
    for item in pinned:
        offer(item.record, "pinned", f"score {item.score:.3f}")
    for item in sorted(scored, key=lambda s: s.score, reverse=True):
        offer(item.record, "relevant", f"score {item.score:.3f}")
    for item in fill:
        offer(item.record, "recent", "newest of the rest")

    def measure() -> tuple[str, int]:
        text = render_recall_block(chosen, prompt, profile_ids=profile_ids)
        return text, token_counter([SystemMessage(content=text)])

    text, tokens = measure()
    while tokens > budget_tokens and chosen:
        # The per-line sum ran low (tokens merging across lines): drop the last choice.
        dropped = chosen.pop()
        if dropped.id in profile_ids:
            profile_ids.remove(dropped.id)
        decisions = [
            replace(d, injected=False, note="over the budget once the block was measured")
            if d.memory_id == dropped.id and d.injected
            else d
            for d in decisions
        ]
        text, tokens = measure()
    return PackedRecall(
        text=text,
        memory_ids=tuple(r.id for r in chosen),
        tokens=tokens,
        profile_ids=tuple(profile_ids),
        profile_tokens=profile_tokens,
        decisions=tuple(decisions),
    )


def explain_recall(packed: PackedRecall) -> str:
    """A readable account of what recall injected this turn and why (pure).

    One line per candidate: ``+`` injected, ``-`` left out (with the reason), its
    part (``profile`` with its family, ``pinned``, ``relevant`` with its score).

    Example:
        >>> from langgraph_memory.types import MemoryRecord, ScoredMemory
        >>> packed = pack_memories([ScoredMemory(MemoryRecord("User likes tea", id="t"), 0.5)],
        ...                        budget_tokens=400)
        >>> print(explain_recall(packed).splitlines()[1])
        + t relevant (score 0.500): User likes tea
    """
    lines = [
        f"recall: {len(packed.memory_ids)} memories, {packed.tokens} tokens "
        f"(profile {len(packed.profile_ids)} memories, {packed.profile_tokens} tokens)"
    ]
    for d in packed.decisions:
        mark = "+" if d.injected else "-"
        note = f" [{d.note}]" if d.note else ""
        lines.append(
            f"{mark} {d.memory_id} {d.part} ({d.reason}): {clean_memory_text(d.text)}{note}"
        )
    return "\n".join(lines)


# The key of the recall message's ``additional_kwargs`` that says what was injected.
RECALL_METADATA_KEY = "langgraph_memory"


def recall_metadata(
    packed: PackedRecall, query: str | None, *, explain: bool = False
) -> dict[str, Any]:
    """``{"memory_ids", "profile_ids", "query"}`` (+ ``"explain"`` rows) for the message."""
    metadata: dict[str, Any] = {
        "memory_ids": list(packed.memory_ids),
        "profile_ids": list(packed.profile_ids),
        "query": query,
    }
    if explain:
        metadata["explain"] = [
            {
                "memory_id": d.memory_id,
                "part": d.part,
                "reason": d.reason,
                "injected": d.injected,
                "note": d.note,
            }
            for d in packed.decisions
        ]
    return metadata


def recall_update(
    messages: Sequence[AnyMessage],
    packed: PackedRecall,
    query: str | None = None,
    *,
    explain: bool = False,
) -> dict[str, Any]:
    """The state update that installs this turn's block (replacing the previous one).

    The message carries ``additional_kwargs["langgraph_memory"]`` (see
    :func:`recall_metadata`) so tools and tests can see exactly what was injected.
    """
    message = SystemMessage(
        content=packed.text,
        id=RECALL_MESSAGE_ID,
        additional_kwargs={RECALL_METADATA_KEY: recall_metadata(packed, query, explain=explain)},
    )
    for existing in messages:
        if (
            existing.id == RECALL_MESSAGE_ID
            and existing.content == message.content
            and existing.additional_kwargs == message.additional_kwargs
        ):
            return {}  # unchanged: no write, no checkpoint churn
    return {"messages": upsert_memory_message(messages, message)}


def plan_recall(
    query: str,
    found: Sequence[ScoredMemory],
    pool: Sequence[ScoredMemory],
    *,
    budget_tokens: int,
    profile: ProfilePolicy | None = DEFAULT_PROFILE_POLICY,
    pinned_types: Sequence[MemoryType] = (MemoryType.PROCEDURAL,),
    pinned_k: int = 3,
    fill_k: int = 0,
    fill_window: timedelta | None = None,
    now: datetime | None = None,
    prompt: RecallPrompt = DEFAULT_RECALL_PROMPT,
    token_counter: TokenCounter = count_message_tokens,
) -> PackedRecall:
    """One turn's block from the two searches' results (pure).

    ``found`` is the query search, ``pool`` the profile search (ranked by
    importance, no relevance gate). The profile (``select_profile``) gets
    ``profile.share`` of ``budget_tokens`` (``about_me_share`` when the query is an
    "about me" question); standing instructions (``pinned_types``, at most
    ``pinned_k``) are part of it; the query's memories come next. When the query
    found fewer than ``fill_k``, the free places go to the newest of the pool's
    other current memories (part ``recent``): a question worded unlike anything
    stored ("which day does my stock come?" against "deliveries on Tuesday
    instead") still sees the latest context, and the budget still caps the block.
    ``now`` (when given) also drops anything no longer current.

    Example:
        >>> from langgraph_memory.types import MemoryRecord, ScoredMemory
        >>> allergy = ScoredMemory(MemoryRecord("User is allergic to seafood", key="allergy"), 0.9)
        >>> packed = plan_recall("what should I cook tonight?", [], [allergy], budget_tokens=600)
        >>> packed.profile_ids == (allergy.record.id,)
        True
    """
    about_me = is_about_me(query)
    instructions = pinned_k if MemoryType.PROCEDURAL in pinned_types else 0
    entries: list[ProfileEntry] = []
    pinned: list[ScoredMemory] = []
    if profile is not None:
        entries = select_profile(
            # A qualifying memory the query found counts too (an unkeyed allergy in a
            # large partition reaches the profile when the turn touches it).
            [*(s.record for s in pool), *(s.record for s in found)],
            profile,
            now=now,
            about_me=about_me,
            max_instructions=instructions,
        )
        profile_budget = int(budget_tokens * profile_share(profile, about_me))
    else:
        pinned = [s for s in pool if s.record.type in pinned_types and is_current(s.record, now)]
        pinned = pinned[:pinned_k]
        profile_budget = 0
    relevant = [s for s in found if is_current(s.record, now)]
    return pack_memories(
        relevant,
        budget_tokens=budget_tokens,
        pinned=pinned,
        profile=entries,
        profile_budget_tokens=profile_budget,
        fill=_recent_fill(
            pool, relevant, entries, pinned, fill_k, now, fill_window or RECENT_FILL_WINDOW
        ),
        prompt=prompt,
        token_counter=token_counter,
    )


# How far back from the user's newest memory the recent fill reaches: about one
# stretch of conversation. Measured on the planted-fact exam (README): a longer reach
# finds more needed facts and serves more statements that later ones replaced.
RECENT_FILL_WINDOW = timedelta(days=180)


def _recent_fill(
    pool: Sequence[ScoredMemory],
    relevant: Sequence[ScoredMemory],
    entries: Sequence[ProfileEntry],
    pinned: Sequence[ScoredMemory],
    fill_k: int,
    now: datetime | None,
    window: timedelta = RECENT_FILL_WINDOW,
) -> list[ScoredMemory]:
    """The pool's current memories not already chosen, newest first, for the free places."""
    free = fill_k - len(relevant)
    if free <= 0:
        return []
    taken = {s.record.id for s in relevant} | {e.record.id for e in entries}
    taken |= {s.record.id for s in pinned}
    rest = {
        s.record.id: s
        for s in pool
        if s.record.id not in taken
        and is_current(s.record, now)
        and s.record.source is MemorySource.USER_STATED
    }
    newest = sorted(rest.values(), key=lambda s: s.record.valid_from, reverse=True)
    if newest:
        # Only the latest stretch of the conversation: older statements are the ones
        # later ones may have replaced, so they come back only when the query asks.
        since = newest[0].record.valid_from - window
        newest = [s for s in newest if s.record.valid_from >= since]
    return newest[:free]


# --------------------------------------------------------------------------- store access


def _item_to_scored(item: Any, user_id: str) -> ScoredMemory | None:
    value = getattr(item, "value", None)
    if not isinstance(value, dict):
        return None
    if "text" in value:
        record = MemoryRecord.from_dict({"user_id": user_id, "id": item.key, **value})
    elif isinstance(value.get("content"), str):
        record = MemoryRecord(text=value["content"], id=str(item.key), user_id=user_id)
    else:
        return None
    if record.status != MemoryStatus.ACTIVE:
        return None
    return ScoredMemory(record=record, score=float(getattr(item, "score", None) or 0.0))


def _search_kwargs(
    limit: int, weights: ScoringWeights | None, min_relevance: float | None
) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"limit": limit}
    if weights is not None:
        kwargs["weights"] = weights
    if min_relevance is not None:
        kwargs["min_relevance"] = min_relevance
    return kwargs


# Recall's own relevance gate (see create_recall_node's ``min_relevance``). On the
# planted-fact exam's true-facts-seeded run the store default 0.15 with k=5 found 84%
# of the needed facts; 0.05 with k=8 and the profile, 96%, with no more false recall.
DEFAULT_MIN_RELEVANCE = 0.05

# The profile and standing instructions are recalled whatever the query: ranked by
# importance (and a little recency) with no relevance gate (an allergy matters for a
# question about dinner, an instruction about honorifics for one about the weather).
# With relevance at 0 the boosts are used as given (scoring.boost_scale).
_PROFILE_WEIGHTS = ScoringWeights(relevance=0.0, recency=0.1, importance=0.9, min_relevance=0.0)


def _pinned_kwargs(
    pinned_k: int, pinned_types: Sequence[MemoryType], profile: ProfilePolicy | None
) -> dict[str, Any] | None:
    """The profile search: every type when the profile is on, else the pinned types."""
    types = list(MemoryType) if profile is not None else list(pinned_types)
    limit = max(pinned_k if pinned_types else 0, profile.pool if profile is not None else 0)
    if not types or not limit:
        return None
    return {"limit": limit, "types": types, "min_relevance": 0.0, "weights": _PROFILE_WEIGHTS}


def _base_store_searches(query: str, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    """Keyword arguments of ``BaseStore.search`` calls equivalent to one memory search."""
    types = kwargs.get("types")
    if not types:
        return [{"query": query, "limit": kwargs["limit"]}]
    return [{"filter": {"type": t.value}, "limit": kwargs["limit"]} for t in types]


def _search(store: Any, user_id: str, query: str, **kwargs: Any) -> list[ScoredMemory]:
    if isinstance(store, LongTermMemory):
        return list(store.search_memories(user_id, query, **kwargs))
    # Any other LangGraph BaseStore: memories as MemoryRecord dicts in ("memories", user).
    found = []
    for call in _base_store_searches(query, kwargs):
        items = store.search(("memories", user_id), **call)
        found += [s for item in items if (s := _item_to_scored(item, user_id))]
    return found


async def _asearch(store: Any, user_id: str, query: str, **kwargs: Any) -> list[ScoredMemory]:
    if isinstance(store, LongTermMemory):
        return list(await store.asearch_memories(user_id, query, **kwargs))
    found = []
    for call in _base_store_searches(query, kwargs):
        items = await store.asearch(("memories", user_id), **call)
        found += [s for item in items if (s := _item_to_scored(item, user_id))]
    return found


@runtime_checkable
class _OnePassRecall(Protocol):
    """A store that answers a turn's query and pinned searches in one pass
    (``ChromaMemoryStore.recall_memories``): one query embedding, one term plan,
    one cosine pass, no second thread."""

    def recall_memories(self, user_id: str, query: str, **kwargs: Any) -> Any: ...
    async def arecall_memories(self, user_id: str, query: str, **kwargs: Any) -> Any: ...


def _one_pass_kwargs(
    search: dict[str, Any],
    pinned_k: int,
    pinned_types: Sequence[MemoryType],
    profile: ProfilePolicy | None,
) -> dict[str, Any]:
    """``recall_memories`` arguments: the query search, the standing instructions
    (pinned search) and, with a profile, the store's profile pass (``profile_limit``:
    candidates by importance straight from the catalog, whatever the query)."""
    kwargs = dict(search)
    if pinned_k and pinned_types:
        kwargs.update(
            pinned_types=list(pinned_types),
            pinned_limit=pinned_k,
            pinned_weights=_PROFILE_WEIGHTS,
        )
    if profile is not None:
        kwargs["profile_limit"] = profile.pool
    return kwargs


def _one_pass_pool(got: Any) -> list[ScoredMemory]:
    """Profile candidates of a one-pass answer: the profile pass, then the pinned ones."""
    profile = [ScoredMemory(record, 0.0) for record in getattr(got, "profile", ())]
    return [*profile, *got.pinned]


class _AccessStatsWorker:
    """Runs ``store.touch`` off the reply path; failures are logged, never raised.

    One worker thread serialises touches (they are cheap, small writes), and
    async touches are tasks kept referenced until done so they are not
    garbage-collected mid-flight.
    """

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._futures: set[Future[None]] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def submit(self, store: Any, user_id: str, ids: Sequence[str], kwargs: dict[str, Any]) -> None:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lgm-touch")
            future = self._executor.submit(self._touch, store, user_id, tuple(ids), kwargs)
            self._futures.add(future)
        future.add_done_callback(self._futures.discard)

    @staticmethod
    def _touch(store: Any, user_id: str, ids: tuple[str, ...], kwargs: dict[str, Any]) -> None:
        try:
            store.touch(user_id, ids, **kwargs)
        except Exception:  # access stats are best effort; the reply must not fail
            logger.warning("recall: store.touch failed for %d memories", len(ids), exc_info=True)

    def asubmit(self, store: Any, user_id: str, ids: Sequence[str], kwargs: dict[str, Any]) -> None:
        async def touch() -> None:
            try:
                await store.atouch(user_id, tuple(ids), **kwargs)
            except Exception:
                logger.warning(
                    "recall: store.atouch failed for %d memories", len(ids), exc_info=True
                )

        task = asyncio.get_running_loop().create_task(touch())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def flush(self, timeout: float | None = 10.0) -> None:
        with self._lock:
            pending = list(self._futures)
        for future in pending:
            future.result(timeout=timeout)

    async def aflush(self) -> None:
        pending = [t for t in self._tasks if not t.done()]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        await asyncio.to_thread(self.flush)


_ACCESS_STATS = _AccessStatsWorker()


def flush_access_stats(timeout: float | None = 10.0) -> None:
    """Wait until every background ``touch`` started by recall has finished.

    Useful before closing a store or at the end of a test; the reply never waits on it.
    """
    _ACCESS_STATS.flush(timeout)


async def aflush_access_stats() -> None:
    """Async twin of ``flush_access_stats`` (also waits for ``atouch`` tasks)."""
    await _ACCESS_STATS.aflush()


# --------------------------------------------------------------------------- the node


def create_recall_node(
    *,
    store: Any = None,
    k: int = 8,
    token_budget: int | None = None,
    prompt_budget_tokens: int = 8000,
    max_share: float = 0.3,
    weights: ScoringWeights | None = None,
    min_relevance: float | None = DEFAULT_MIN_RELEVANCE,
    context_messages: int = 1,
    pinned_types: Sequence[MemoryType] = (MemoryType.PROCEDURAL,),
    pinned_k: int = 3,
    profile: ProfilePolicy | None = DEFAULT_PROFILE_POLICY,
    recent_fill: bool = True,
    recent_fill_window: timedelta = RECENT_FILL_WINDOW,
    explain: bool = False,
    update_access_stats: bool = True,
    prompt: RecallPrompt | None = None,
    token_counter: TokenCounter | None = None,
    clock: Clock | None = None,
) -> RunnableLambda[Any, dict[str, Any]]:
    """Create the ``recall`` node (sync and async) for a graph or middleware.

    Each turn injects one block: the user's **core profile** (safety facts such as
    allergies, identity and address form, standing instructions, current values of
    key slots; see ``nodes/_profile.py`` for how a memory qualifies), shown whatever
    the query within its own share of the budget, then the memories most relevant to
    this turn. The message carries ``additional_kwargs["langgraph_memory"] =
    {"memory_ids": [...], "profile_ids": [...], "query": ...}`` (every injected id,
    profile first; the profile subset; the search query), plus ``"explain"`` rows
    with ``explain=True`` (:func:`explain_recall` renders the same as text).

    Args:
        store: A ``LongTermMemory`` store such as ``ChromaMemoryStore`` (or any LangGraph
            ``BaseStore`` holding ``MemoryRecord`` dicts under ``("memories", user_id)``).
            ``None`` uses the graph's store (``compile(store=...)``). A store with
            ``recall_memories`` (``ChromaMemoryStore``) answers the query and the
            profile search in one call; others get two searches.
        k: At most this many query-relevant memories per turn (8; the budget still
            caps the block).
        token_budget: Tokens the memory block may use; defaults to
            ``max_share * prompt_budget_tokens``.
        prompt_budget_tokens: The model's prompt budget (context window you allow).
        max_share: Share of the prompt budget recall may use when ``token_budget`` is
            not given (default 0.3).
        weights: Ranking weights passed to the store's search.
        min_relevance: Drop query results below this relevance (0.05: any real keyword
            or vector overlap; the block is budgeted and the profile bounded, so a weak
            match costs little and a missed fact costs the answer). ``None`` uses the
            store's default (``ScoringWeights.min_relevance``, 0.15).
        context_messages: Earlier human messages added to the query of a short
            follow-up (a latest message under 12 tokens).
        pinned_types: Memory types shown on every turn as standing instructions
            (default procedural: "never use honorifics"), ranked by importance and recency.
        pinned_k: At most this many standing instructions per turn (0 disables them).
        profile: The core profile's policy (share of the budget, item caps,
            thresholds); ``None`` disables the profile (then only standing
            instructions are pinned).
        recent_fill: When the query finds fewer than ``k`` memories, give the free
            places to the user's newest other memories among the profile pass's
            candidates (default on; the offline embeddings miss paraphrases, and the
            budget still caps the block). Needs ``profile``.
        recent_fill_window: How far back from the user's newest memory the fill
            reaches (180 days): older statements are the ones later ones may have
            replaced, so they come back only when the query asks for them.
        explain: Put each candidate's decision (in or out, and why) in the message's
            metadata under ``"explain"``.
        update_access_stats: Call ``store.touch`` for recalled memories, in the background.
        prompt: Override the block's wording (``prompts.recall.RecallPrompt``).
        token_counter: Counts tokens of a message list; ``None`` uses the offline
            estimate calibrated for Chinese and English (``langgraph_memory.tokens``).
        clock: "Now" for recency and validity, passed to the store's search as ``now``
            and to its ``touch`` as ``at`` (``langgraph_memory.clock``); ``None``
            leaves both to the store's own clock.

    Returns:
        A ``RunnableLambda`` named ``recall`` returning a state update
        (``{"messages": [...]}``, or ``{}`` when nothing changes).

    Raises:
        ConfigurationError: A budget, share or ``k`` out of range.
        MissingUserIdError: At run time, when the run has no user id.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langgraph_memory.types import MemoryRecord
        >>> store = InMemoryStore()
        >>> store.put(("memories", "u1"), "m1", MemoryRecord("User is vegan", id="m1").to_dict())
        >>> store.put(("memories", "u1"), "m2",
        ...           MemoryRecord("User is allergic to seafood", id="m2", key="allergy").to_dict())
        >>> recall = create_recall_node(store=store)
        >>> update = recall.invoke({"messages": [HumanMessage("vegan dinner ideas?", id="h1")]},
        ...                        {"configurable": {"user_id": "u1"}})
        >>> block = recalled_block(update["messages"])
        >>> "User is vegan" in block, "allergic to seafood" in block
        (True, True)
        >>> recalled_metadata(update["messages"])["profile_ids"]
        ['m2']
    """
    for arg, value, optional in (
        ("k", k, False),
        ("token_budget", token_budget, True),
        ("prompt_budget_tokens", prompt_budget_tokens, False),
        ("context_messages", context_messages, False),
        ("pinned_k", pinned_k, False),
    ):
        check_int(f"create_recall_node({arg})", value, optional=optional)
    check_number("create_recall_node(max_share)", max_share)
    check_number("create_recall_node(min_relevance)", min_relevance, optional=True)
    if k < 1:
        raise ConfigurationError(f"create_recall_node(k={k!r}): use an integer >= 1.")
    if not 0 < max_share <= 1:
        raise ConfigurationError(
            f"create_recall_node(max_share={max_share!r}): use a share in (0, 1]; 0.3 is the default."
        )
    if prompt_budget_tokens < 1:
        raise ConfigurationError(
            f"create_recall_node(prompt_budget_tokens={prompt_budget_tokens!r}): use tokens >= 1."
        )
    budget = int(prompt_budget_tokens * max_share) if token_budget is None else token_budget
    if budget < 1:
        raise ConfigurationError(
            f"create_recall_node(token_budget={budget!r}): the memory block needs at least 1 "
            "token; raise token_budget or prompt_budget_tokens."
        )
    if context_messages < 0:
        raise ConfigurationError(
            f"create_recall_node(context_messages={context_messages!r}): use an integer >= 0."
        )
    if pinned_k < 0:
        raise ConfigurationError(
            f"create_recall_node(pinned_k={pinned_k!r}): use an integer >= 0 (0 disables pinning)."
        )
    if profile is not None and not isinstance(profile, ProfilePolicy):
        raise ConfigurationError(
            f"create_recall_node(profile={profile!r}): pass a ProfilePolicy, or None to "
            "disable the core profile."
        )
    pinned_types = tuple(pinned_types) if pinned_k else ()
    pinned_kwargs = _pinned_kwargs(pinned_k, pinned_types, profile)
    recall_prompt = prompt or DEFAULT_RECALL_PROMPT
    counter = token_counter or default_token_counter()
    search_kwargs = _search_kwargs(k, weights, min_relevance)
    one_pass_kwargs = _one_pass_kwargs(search_kwargs, pinned_k, pinned_types, profile)

    def plan(
        state: Any, config: RunnableConfig | None
    ) -> tuple[Any, str, str, list[AnyMessage]] | None:
        messages = state_messages(state)
        query = build_recall_query(messages, context_messages=context_messages)
        user_id = resolve_user_id(config)  # fail closed even when there is nothing to recall
        if query is None:
            return None
        target = resolve_store(store, config)
        if target is None:
            raise ConfigurationError(
                "recall has no store: pass create_recall_node(store=...) or compile the "
                "graph with compile(store=...)."
            )
        return target, user_id, query, messages

    def finish(
        messages: list[AnyMessage],
        query: str,
        found: list[ScoredMemory],
        pool: list[ScoredMemory],
    ) -> tuple[dict[str, Any], tuple[str, ...]]:
        packed = plan_recall(
            query,
            found,
            pool,
            budget_tokens=budget,
            profile=profile,
            pinned_types=pinned_types,
            pinned_k=pinned_k,
            fill_k=k if recent_fill else 0,
            fill_window=recent_fill_window,
            now=None if clock is None else clock_now(clock),
            prompt=recall_prompt,
            token_counter=counter,
        )
        return recall_update(messages, packed, query, explain=explain), packed.memory_ids

    def at_now(kwargs: dict[str, Any], name: str = "now") -> dict[str, Any]:
        # Only a given clock is passed: a store without a ``now`` argument keeps working.
        # The touch gets it as ``at``: it runs later on a worker, and is stamped with this
        # turn's time so recency never depends on the worker's delay.
        return kwargs if clock is None else {**kwargs, name: clock_now(clock)}

    def recall(state: Any, config: RunnableConfig) -> dict[str, Any]:
        planned = plan(state, config)
        if planned is None:
            return {}
        target, user_id, query, messages = planned
        if isinstance(target, _OnePassRecall):
            got = target.recall_memories(user_id, query, **at_now(one_pass_kwargs))
            found, pool = list(got.found), _one_pass_pool(got)
        elif pinned_kwargs:
            # The two searches overlap: the store spends most of it in SQLite/Chroma
            # calls that release the GIL.
            pool_future = shared_pool("recall").submit(
                _search, target, user_id, query, **pinned_kwargs
            )
            found = _search(target, user_id, query, **search_kwargs)
            pool = pool_future.result()
        else:
            found, pool = _search(target, user_id, query, **search_kwargs), []
        update, ids = finish(messages, query, found, pool)
        if ids and update_access_stats and hasattr(target, "touch"):
            _ACCESS_STATS.submit(target, user_id, ids, at_now({}, "at"))
        return update

    async def arecall(state: Any, config: RunnableConfig) -> dict[str, Any]:
        planned = plan(state, config)
        if planned is None:
            return {}
        target, user_id, query, messages = planned
        if isinstance(target, _OnePassRecall):
            got = await target.arecall_memories(user_id, query, **at_now(one_pass_kwargs))
            found, pool = list(got.found), _one_pass_pool(got)
        elif pinned_kwargs:
            found, pool = await asyncio.gather(
                _asearch(target, user_id, query, **search_kwargs),
                _asearch(target, user_id, query, **pinned_kwargs),
            )
        else:
            found, pool = await _asearch(target, user_id, query, **search_kwargs), []
        update, ids = finish(messages, query, found, pool)
        if ids and update_access_stats and hasattr(target, "atouch"):
            _ACCESS_STATS.asubmit(target, user_id, ids, at_now({}, "at"))
        return update

    return RunnableLambda(recall, afunc=arecall, name="recall")


def recalled_block(messages: Sequence[BaseMessage]) -> str | None:
    """The current recall block in a message list, if any (handy in tests and demos)."""
    for message in messages:
        if message.id == RECALL_MESSAGE_ID:
            return message_text(message)
    return None


def recalled_metadata(messages: Sequence[BaseMessage]) -> dict[str, Any] | None:
    """What the current recall block injected: ``{"memory_ids", "profile_ids", "query"}``.

    Read from the recall message's ``additional_kwargs["langgraph_memory"]``; ``None``
    when there is no recall block (or it was written by a version without metadata).
    """
    for message in messages:
        if message.id == RECALL_MESSAGE_ID:
            metadata = message.additional_kwargs.get(RECALL_METADATA_KEY)
            return dict(metadata) if isinstance(metadata, dict) else None
    return None
