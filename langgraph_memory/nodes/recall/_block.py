"""The recall block as text: each memory's line, the sections, and packing into a budget (pure).

``render_recall_block`` lays out the header, the core profile, then one section
per memory kind; ``pack_memories`` chooses the memories whose rendered block fits
the token budget (``_BlockBudget`` keeps the running cost) and records every
candidate's ``RecallDecision`` in the ``PackedRecall``; ``explain_recall`` reads
those decisions back as text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from langchain_core.messages import SystemMessage

from langgraph_memory.nodes._profile import ProfileEntry
from langgraph_memory.privacy import neutralize_markup
from langgraph_memory.prompts.recall import DEFAULT_RECALL_PROMPT, RecallPrompt
from langgraph_memory.tokens import TokenCounter, count_message_tokens, text_token_counter
from langgraph_memory.types import MemoryRecord, MemorySource, MemoryType, ScoredMemory

# Rendered in section order: the core profile, then MemoryType values.
_SECTION_ORDER: tuple[str, ...] = ("profile", "semantic", "episodic", "procedural")
# A memory may not open/close our block or start a new section of its own.
_WHITESPACE = re.compile(r"\s+")


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
