"""One turn's plan (pure): the search query, then the block from the searches' results.

``build_recall_query`` turns the conversation into this turn's query;
``plan_recall`` selects the core profile (``nodes/_profile.py``), the standing
instructions, the query's memories and the recent fill (``_recent_fill``), and
packs them (``_block.pack_memories``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from langchain_core.messages import AnyMessage, HumanMessage

from langgraph_memory.nodes._messages import latest_human_index, message_text
from langgraph_memory.nodes._profile import (
    DEFAULT_PROFILE_POLICY,
    ProfileEntry,
    ProfilePolicy,
    is_about_me,
    is_current,
    profile_share,
    select_profile,
)
from langgraph_memory.nodes.recall._block import PackedRecall, pack_memories
from langgraph_memory.prompts.recall import DEFAULT_RECALL_PROMPT, RecallPrompt
from langgraph_memory.tokens import TokenCounter, count_message_tokens, estimate_tokens
from langgraph_memory.types import MemorySource, MemoryType, ScoredMemory

# Context from earlier turns helps short follow-ups ("and tonight?"), but too
# much of it dilutes the keyword part of the hybrid search.
_CONTEXT_CHARS_PER_MESSAGE = 160
_QUERY_MAX_CHARS = 1000
# A latest message of at least this many tokens stands on its own: earlier turns
# would only pull the search towards the previous topic (and double its cost).
_SELF_CONTAINED_TOKENS = 12


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
