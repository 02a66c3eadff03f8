"""What an update retires, without a model (pure): the offline stale rules.

A new statement replaces older loose memories (evidence turns, generic facts,
promises, dated plans) on its topic (``_stale_loose``), what it restates
(``_restated``), counts again with another number (``_moved_values``), and the
details said beside a slot value it replaces (``_continuations``); each with what
stays true of it (``_kept``). The reading of the words is ``nodes/rules/_retire.py``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Final

from langgraph_memory.nodes.rules import is_evidence_key
from langgraph_memory.nodes.rules._evidence import updates
from langgraph_memory.nodes.rules._retire import (
    calendar_dates,
    continued_part,
    happened,
    moved_part,
    moves_a_date,
    restated_part,
    retired_dates,
    retired_part,
    retires_instruction,
    retires_slot,
)
from langgraph_memory.types import (
    CandidateMemory,
    MemoryRecord,
    MemorySource,
    MemoryStatus,
    MemoryType,
)

# How many older loose memories one update may retire (the nearest first).
_MAX_RETIRED = 4


def _generic_key(key: str | None) -> bool:
    """Keys as loose as evidence: the generic "my X is Y" rule's (``profile.<x>``), the
    assistant's commitments (``promise.<x>``) and dated plans (``event.<x>``), which a
    change on the same topic replaces ("can we do the 6th instead?")."""
    return key is not None and key.startswith(("profile.", "promise.", "event."))


def _slot_value(cand: CandidateMemory) -> bool:
    """A rule's value for a single-valued slot ("User lives in Portobello"): it replaces
    older raw statements on the slot's topic even without an update word."""
    return (
        cand.key is not None
        and not cand.forget
        and not is_evidence_key(cand.key)
        and not _generic_key(cand.key)
        and cand.type is not MemoryType.PROCEDURAL
    )


def _one_value_slot(record: MemoryRecord) -> bool:
    """An active rule value of a slot (not evidence, a generic fact or a procedure)."""
    return (
        record.key is not None
        and record.status == MemoryStatus.ACTIVE
        and not is_evidence_key(record.key)
        and not _generic_key(record.key)
        and record.type is not MemoryType.PROCEDURAL
    )


def _stale_loose(
    cand: CandidateMemory, records: Sequence[MemoryRecord]
) -> list[tuple[MemoryRecord, str]]:
    """Older loose memories (evidence, generic facts, promises, plans) ``cand`` replaces,
    each with what stays true of it (``""``: nothing): on an update, the pieces on its
    topic (or, failing that, naming what it names); for a slot value, the pieces on the
    slot's coarse topic (``retired_part``); with or without an update word, what counts one
    of its things again with another number (``_moved_values``)."""
    if cand.forget:
        return []
    recounted = _moved_values(cand, records) + _restated(cand, records)
    if updates(cand.text):
        topic_only = False
    elif _slot_value(cand) and cand.expires_at is None:
        # A lasting value only: "in Dubai Nov 3 to 10 for work" replaces nothing that lasts.
        topic_only = True
    else:
        return recounted
    out: list[tuple[MemoryRecord, str]] = []
    dated: list[MemoryRecord] = []
    eligible: list[MemoryRecord] = []
    for r in records:
        # The user's update of something the user said before (a slot value, an instruction).
        user_restates = (
            not topic_only
            and cand.source is MemorySource.USER_STATED
            and r.source is MemorySource.USER_STATED
            and r.valid_from <= (cand.observed_at or r.valid_from)
        )
        if (
            user_restates
            and (is_evidence_key(cand.key) or _generic_key(cand.key))
            and _one_value_slot(r)
            and retires_slot(cand.text, r.text, r.key or "")
        ):
            out.append((r, ""))
            continue
        if (
            user_restates
            and r.type is MemoryType.PROCEDURAL
            and r.status == MemoryStatus.ACTIVE
            and retires_instruction(cand.text, r.text)
        ):
            # A standing instruction is pinned on every turn: a stale one is never out of sight.
            out.append((r, ""))
            continue
        if not (
            (is_evidence_key(r.key) or _generic_key(r.key))
            # What the assistant said replaces only what the assistant said.
            and (cand.source is MemorySource.USER_STATED or r.source is cand.source)
            and _older_and_current(cand, r)
        ):
            continue
        eligible.append(r)
        kept = retired_part(cand.text, r.text, split=is_evidence_key(r.key), topic_only=topic_only)
        if kept is not None:
            out.append((r, kept))
        elif moves_a_date(cand.text) and _pending(r, cand.observed_at) and not happened(r.text):
            dated.append(r)
    if not out and dated:
        # Only a new date: it moves the latest dated plan (its dates; the rest stays).
        latest = max(dated, key=lambda r: r.valid_from)
        kept = retired_dates(latest.text) if is_evidence_key(latest.key) else ""
        if kept is not None:
            out.append((latest, kept))
            # What echoes the moved dates goes with them ("Booked: ..., Dec 11-14" after
            # "a room Dec 11 to 14"): a confirmation of the old dates is stale too.
            moved = calendar_dates(latest.text)
            for r in eligible:
                echo = r is not latest and moved & calendar_dates(r.text)
                if echo and not happened(r.text):
                    left = retired_dates(r.text) if is_evidence_key(r.key) else ""
                    out.append((r, left or ""))
    taken = {r.id for r, _ in out}
    return out + [(r, kept) for r, kept in recounted if r.id not in taken]


def _restated(
    cand: CandidateMemory, records: Sequence[MemoryRecord]
) -> list[tuple[MemoryRecord, str]]:
    """Older raw statements of the user's saying what the generic slot ``cand`` sets
    ("my office is on Fleet Street" after "our office is near Baker Street"), with what
    stays of each (``restated_part``). No update word is needed: the slot says it anew."""
    if cand.source is not MemorySource.USER_STATED or not (cand.key or "").startswith("profile."):
        return []
    out: list[tuple[MemoryRecord, str]] = []
    for r in records:
        if r.source is not MemorySource.USER_STATED or not is_evidence_key(r.key):
            continue
        if not _older_and_current(cand, r):
            continue
        kept = restated_part(cand.text, r.text, split=True)
        if kept is not None:
            out.append((r, kept))
    return out


def _continuations(
    cand: CandidateMemory, retired: Sequence[MemoryRecord], records: Sequence[MemoryRecord]
) -> list[tuple[MemoryRecord, str]]:
    """Evidence turns said in the same message as a slot value ``cand`` retires that go on
    about it ("near the station" beside "User's office is on Baker Street"), with what stays
    of each (``continued_part``): the old value's details must not outlive it."""
    taken = {r.id for r in retired}
    out: list[tuple[MemoryRecord, str]] = []
    for value in retired:
        if is_evidence_key(value.key):
            continue
        for r in records:
            if (
                r.id in taken
                or r.status != MemoryStatus.ACTIVE
                or not is_evidence_key(r.key)
                or not set(value.origin_message_ids) & set(r.origin_message_ids)
            ):
                continue
            kept = continued_part(cand.text, value.text, r.text)
            if kept is not None:
                out.append((r, kept))
                taken.add(r.id)
    return out


def _older_and_current(cand: CandidateMemory, r: MemoryRecord) -> bool:
    """``r`` is still current, said no later than ``cand``, and not ``cand``'s own key:
    something ``cand`` may retire."""
    return (
        r.status == MemoryStatus.ACTIVE
        and r.valid_from <= (cand.observed_at or r.valid_from)
        and r.key != cand.key
    )


def _moved_values(
    cand: CandidateMemory, records: Sequence[MemoryRecord]
) -> list[tuple[MemoryRecord, str]]:
    """Older statements of the user's that ``cand`` counts again with another number
    ("25 tables" -> "make it 28 tables"), with what stays of each (``moved_part``)."""
    if cand.source is not MemorySource.USER_STATED:
        return []
    out: list[tuple[MemoryRecord, str]] = []
    for r in records:
        if (
            r.source is not MemorySource.USER_STATED
            or not _older_and_current(cand, r)
            or not (is_evidence_key(r.key) or _generic_key(r.key) or _one_value_slot(r))
            # A condition stays when its dose moves ("Dad has Parkinson's, half a Madopar").
            or (r.key or "").startswith(("health", "allergy"))
        ):
            continue
        kept = moved_part(cand.text, r.text, split=is_evidence_key(r.key))
        if kept is not None:
            out.append((r, kept))
    return out


# A move to a new home lasts, even when what it replaces was bounded ("只租到 4 月底" ->
# "5 月 1 号搬去 Haidhausen"): it does not end when the old lease would have.
_NEW_HOME: Final = re.compile(
    r"搬(?:去|到|进|過去|过去)|新家|新房子|\bmov(?:e|es|ing|ed) (?:in ?to|over to) (?:a|an|the|our|my) "
    r"(?:new )?(?:\w+ )?(?:flat|house|apartment|place|home|condo|unit)\b|\bnew (?:flat|house|apartment|home|place)\b",
    re.IGNORECASE,
)


def _pending(record: MemoryRecord, at: datetime | None) -> bool:
    """A dated plan still ahead when ``at`` comes ("a table on the 5th"), not a statement
    bounded to a day already past ("the sofa came today")."""
    if record.expires_at is None and record.event_time is None:
        return False
    end = record.expires_at or record.event_time
    return at is None or end is None or end > at


def _past(record: MemoryRecord, at: datetime | None) -> bool:
    return record.expires_at is not None and at is not None and record.expires_at <= at


def _kept(stale: Sequence[tuple[MemoryRecord, str]]) -> tuple[tuple[str, str], ...]:
    return tuple((r.id, text) for r, text in stale if text)
