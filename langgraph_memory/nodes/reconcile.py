"""Reconcile: decide how each candidate memory meets what the user's memory already holds.

Three steps, each kept apart so the decisions are testable without a store:

1. gather (I/O): for each candidate, the same user's active memories with the
   same key, and the most similar memories (``store.search_memories``);
2. plan (pure): same key -> a deterministic supersede; everything else is
   decided by ONE model judgement per batch (labels ``contradicts``,
   ``updates``, ``duplicates``, ``adds``, ``unrelated``) filtered through
   guardrails, or - without a model - by offline rules (near-duplicate by text
   similarity -> ignore/merge, else add). Result ids are derived from a seed
   (the queue's job key), so a re-run plans the same ids;
3. apply (I/O): each ``MemoryOp`` is applied idempotently (an op whose result
   already exists is skipped), so a batch interrupted half-way and run again
   applies nothing twice.

Guardrails on the model's judgement: referenced ids must be among the memories
shown for that candidate (invented ids and other users' ids are ignored and
logged); a contradiction supersedes and never hard-deletes; the new fact always
survives unless a valid duplicate already holds it; ``agent_inferred`` never
supersedes ``user_stated``; only an explicit "forget" request deletes.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal, Protocol, runtime_checkable

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from langgraph_memory._drive import Call, Steps, arun, run
from langgraph_memory.clock import Clock, now
from langgraph_memory.config import PrivacyPolicy, ScoringWeights
from langgraph_memory.errors import (
    ConfigurationError,
    MemoryNotFoundError,
    RedactionRejectedError,
)
from langgraph_memory.nodes._context import resolve_store, resolve_thread_id, resolve_user_id
from langgraph_memory.nodes._messages import parse_json_answer, redact_text
from langgraph_memory.nodes.extract import MAX_MEMORY_CHARS
from langgraph_memory.nodes.rules import is_evidence_key, mentions_topic
from langgraph_memory.nodes.rules._evidence import LABEL, topics, updates
from langgraph_memory.nodes.rules._forget import (
    PREVIOUS_STATEMENT_KEY,
    forget_reaches,
    reach_score,
    touches_topic,
)
from langgraph_memory.nodes.rules._profile import HOUSEHOLD_KEY_PARTS
from langgraph_memory.nodes.rules._retire import (
    calendar_dates,
    continued_part,
    done,
    happened,
    has_own_subject,
    join_pieces,
    moved_part,
    moves_a_date,
    moves_a_value,
    opens_an_ask,
    restated_part,
    retired_dates,
    retired_part,
    retires_instruction,
    retires_slot,
    says_something,
    split_pieces,
    without_old_value,
)
from langgraph_memory.poisoning import flag_override
from langgraph_memory.privacy import redact_for_log
from langgraph_memory.prompts.reconcile import (
    ReconcilePrompts,
)
from langgraph_memory.types import (
    CandidateMemory,
    LongTermMemory,
    MemoryOp,
    MemoryRecord,
    MemorySource,
    MemoryStatus,
    MemoryType,
    ScoredMemory,
)

logger = logging.getLogger(__name__)

__all__ = [
    "CandidateContext",
    "ReconcileJudge",
    "ReconcilePrompts",
    "Reconciler",
    "candidate_from_dict",
    "candidate_to_dict",
    "create_reconcile_node",
    "op_from_dict",
    "op_to_dict",
    "plan_ops",
    "text_similarity",
]

# The reason of an op rejected by the provenance guardrail (not a duplicate:
# later ops of the batch must not treat the rejected memory as stored).
AGENT_GUARD = "agent_inferred never supersedes user_stated"

_ID_NAMESPACE = uuid.UUID("6f1d3c52-8f0e-4c7e-9a57-2f4a4b3c9e10")


# --- serialisation (the queue persists plans) ------------------------------------


def candidate_to_dict(candidate: CandidateMemory) -> dict[str, Any]:
    """``candidate.to_dict()`` (kept for callers of the 0.1 name)."""
    return candidate.to_dict()


def candidate_from_dict(data: Mapping[str, Any]) -> CandidateMemory:
    """``CandidateMemory.from_dict(data)`` (kept for callers of the 0.1 name)."""
    return CandidateMemory.from_dict(data)


def op_to_dict(op: MemoryOp) -> dict[str, Any]:
    """``op.to_dict()`` (kept for callers of the 0.1 name)."""
    return op.to_dict()


def op_from_dict(data: Mapping[str, Any]) -> MemoryOp:
    """``MemoryOp.from_dict(data)`` (kept for callers of the 0.1 name)."""
    return MemoryOp.from_dict(data)


# --- similarity (pure, language-agnostic) -----------------------------------------

_NON_WORD = re.compile(r"[^\w\u3400-\u9fff]+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _bigrams(text: str) -> set[str]:
    folded = _NON_WORD.sub(" ", text.lower()).strip()
    folded = re.sub(r"\s+", " ", folded)
    return {folded[i : i + 2] for i in range(max(len(folded) - 1, 1))} if folded else set()


def text_similarity(a: str, b: str) -> float:
    """Dice coefficient of character bigrams: 1.0 identical, 0.0 nothing shared.

    Numbers must agree: "budget is 3000" and "budget is 5000" are not duplicates.

    Example:
        >>> text_similarity("User likes green tea", "user likes green tea.")
        1.0
        >>> text_similarity("User's budget is 3000", "User's budget is 5000")
        0.0
    """
    if _NUMBER.findall(a) != _NUMBER.findall(b):
        return 0.0
    x, y = _bigrams(a), _bigrams(b)
    if not x or not y:
        return 0.0
    return 2 * len(x & y) / (len(x) + len(y))


def _same_text(a: str, b: str) -> bool:
    return _NON_WORD.sub("", a.lower()) == _NON_WORD.sub("", b.lower())


def key_matches(record_key: str | None, key: str) -> bool:
    """``address`` matches ``address`` and ``address.city`` (a forget covers the sub-slots)."""
    return record_key is not None and (record_key == key or record_key.startswith(key + "."))


def _retraction(key: str) -> bool:
    """A forget keyed to one value of a slot ("allergy.aspirin"): the rules' retraction of
    a fact the user now says was never true (``retracted_allergies``); a user's own forget
    request names a whole slot ("allergy")."""
    return key.startswith("allergy.")


# A topic (or an evidence turn) that is about someone other than the user.
_NAMES_A_PERSON: Final = re.compile(
    r"\b(?:he|she|his|her|him|they|their|mum|mom|mother|dad|father|son|daughter|kids?|child|wife|"
    r"husband|partner|brother|sister|grand\w+|baby)\b|他|她|佢|妈|媽|爸|儿子|兒子|女儿|女兒|老婆|老公|"
    r"孩子|哥|姐|弟|妹|奶奶|爷爷|外婆|外公|家人",
    re.IGNORECASE,
)


def forget_covers(record: MemoryRecord, key: str, topic: str = "") -> bool:
    """A forget request for ``key`` covers its slot, sub-slots, and evidence turns on its topic.

    Evidence (a raw user turn, ``evidence.<digest>``) has no slot of its own, so
    "forget my address" also deletes the raw turns that talk about an address. A request
    that names no one else ("之前那个体检贫血的事你删了吧") leaves the household's facts
    ("health.mother.高血压", "她每天早上吃一片氨氯地平").
    """
    about_others = bool(_NAMES_A_PERSON.search(topic)) or not topic
    if key_matches(record.key, key):
        parts = set((record.key or "").split(".")[1:])
        return about_others or not parts & HOUSEHOLD_KEY_PARTS
    return (
        is_evidence_key(record.key)
        and mentions_topic(record.text, key)
        and (about_others or not _NAMES_A_PERSON.search(LABEL.sub("", record.text)))
    )


# How many of the newest episodic memories an update is compared with.
_UPDATE_LOOKBACK = 48
# How many older loose memories one update may retire (the nearest first).
_MAX_RETIRED = 4
# A forget request that reaches nothing outright erases what holds the most of its topic,
# when that is at least one name, noun, kin word, Chinese pair or coarse topic.
_FORGET_FALLBACK_MIN = 1
_NEWEST_FIRST = ScoringWeights(relevance=0.0, recency=1.0, importance=0.0, min_relevance=0.0)


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


def _same_turn(targets: Sequence[str], records: Sequence[MemoryRecord]) -> list[str]:
    """Versions of the same evidence turn as a forgotten one (what an update kept of it):
    a forgotten turn goes with every piece it left."""
    keys = {r.key for r in records if r.id in targets and is_evidence_key(r.key)}
    return [r.id for r in records if r.key in keys and r.id not in targets]


def _said_with(
    topic: str, targets: Sequence[str], records: Sequence[MemoryRecord]
) -> tuple[str, ...]:
    """The evidence turns said in the same message as a forgotten memory whose pieces
    name the topic ("帮我记一下我老公穿42码 …" beside "用户要求记住：用户老公穿42码"): the
    raw words go with the fact (their other pieces stay, ``_left_by_forget``)."""
    origins = {m for r in records if r.id in targets for m in r.origin_message_ids}
    return tuple(
        r.id
        for r in records
        if r.id not in targets
        and r.status == MemoryStatus.ACTIVE
        and is_evidence_key(r.key)
        and origins & set(r.origin_message_ids)
        and _goes_on_about(topic, split_pieces(r.text)[1])
    )


def _goes_on_about(topic: str, pieces: Sequence[str]) -> bool:
    """Do an evidence turn's pieces name the forgotten topic, or go on about the fact
    said just before them with no subject of their own ("下周二我有个面试" and then
    "在腾讯；有点紧张")? An ask of its own never goes on about it."""
    if any(touches_topic(topic, p, coarse=False) for p in pieces):
        return True
    return bool(pieces) and not has_own_subject(pieces[0]) and not opens_an_ask(pieces[0])


def _points_back(cand: CandidateMemory) -> bool:
    """A whole-turn "forget that" ("Actually, forget that."), about the message before it."""
    return cand.forget and cand.key == PREVIOUS_STATEMENT_KEY


# How far back "forget that" reaches for the message it points at: one conversation.
_PREVIOUS_STATEMENT_WINDOW: Final = timedelta(hours=12)


def _previous_statement(cand: CandidateMemory, records: Sequence[MemoryRecord]) -> tuple[str, ...]:
    """What the user's message before ``cand``'s left stored ("Actually, forget that."):
    every active user-stated memory of the newest earlier message, if it is recent."""
    mine = set(cand.origin_message_ids)
    said = [
        r
        for r in records
        if r.status == MemoryStatus.ACTIVE
        and r.source == MemorySource.USER_STATED
        and r.origin_message_ids
        and not mine & set(r.origin_message_ids)
        and (cand.observed_at is None or r.valid_from <= cand.observed_at)
    ]
    if not said:
        return ()
    newest = max(said, key=lambda r: r.valid_from)
    if cand.observed_at is not None and cand.observed_at - newest.valid_from > (
        _PREVIOUS_STATEMENT_WINDOW
    ):
        return ()
    message = newest.origin_message_ids[-1]
    return tuple(r.id for r in said if message in r.origin_message_ids)


def _left_by_forget(
    topic: str, reached: Sequence[MemoryRecord], threshold: float
) -> tuple[tuple[str, str], ...]:
    """What a forget request leaves of the evidence turns it reached: the pieces that are
    not on its topic ("我刚入了个华为Mate 70" stays when "我爸拿我旧手机用的事" goes). A turn
    none of whose pieces the request reaches alone (it matched the whole) goes whole."""
    out: list[tuple[str, str]] = []
    for r in reached:
        if r.status != MemoryStatus.ACTIVE or not is_evidence_key(r.key):
            continue
        prefix, pieces = split_pieces(r.text)
        similar = [text_similarity(topic, p) >= threshold for p in pieces]
        touched = [
            touches_topic(topic, p, coarse=False) or s for p, s in zip(pieces, similar, strict=True)
        ]
        if not any(touched):
            # Only a coarse topic in common: "我爸拿我旧手机用的事" names the old phone, and
            # "我刚入了个华为Mate 70" (a phone too) stays once a piece shares its words.
            touched = [touches_topic(topic, p) or s for p, s in zip(pieces, similar, strict=True)]
        if not any(touched):
            continue
        first = touched.index(True)
        # A piece after the forgotten one may go on about it ("Ben 面 London job；成了的话我们
        # 可能要搬"): it stays only when it has a subject of its own.
        left = [
            p for i, p in enumerate(pieces) if not touched[i] and (i < first or has_own_subject(p))
        ]
        # A change asked as a question ("can you do it Saturday mornings instead?") was kept
        # as evidence for what it changes, and stays so.
        if left and len(left) < len(pieces) and any(says_something(p) or updates(p) for p in left):
            out.append((r.id, join_pieces(prefix, left)))
    return tuple(out)


def _kept(stale: Sequence[tuple[MemoryRecord, str]]) -> tuple[tuple[str, str], ...]:
    return tuple((r.id, text) for r, text in stale if text)


def kept_id(result_id: str, target_id: str) -> str:
    """Deterministic id of what stays true of ``target_id`` after the op ``result_id``."""
    return uuid.uuid5(_ID_NAMESPACE, f"{result_id}:kept:{target_id}").hex


def _forget_topic(cand: CandidateMemory) -> str:
    return re.sub(r"^.*?[:：]\s*", "", cand.text)  # "User asked to forget: X" -> "X"


# --- planning (pure) -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CandidateContext:
    """One candidate with what the store holds near it."""

    candidate: CandidateMemory
    # Active memories with the same key; for a forget request every version with
    # a matching key, history included.
    same_key: tuple[MemoryRecord, ...] = ()
    similar: tuple[ScoredMemory, ...] = ()
    # The plan or statement of the user's previous message in this batch, which a bare
    # change ("can we do the 6th instead?") refers to.
    previous: MemoryRecord | None = None


def result_id_for(seed: str, index: int) -> str:
    """Deterministic id of the memory candidate ``index`` of a batch creates."""
    return uuid.uuid5(_ID_NAMESPACE, f"{seed}:{index}").hex


def _upgrades(cand: CandidateMemory, existing: MemorySource) -> bool:
    """The user now states what was only inferred: the same text, a better source."""
    return cand.source is MemorySource.USER_STATED and existing is MemorySource.AGENT_INFERRED


def _keyed_op(
    index: int,
    ctx: CandidateContext,
    seed: str,
    batch_by_key: dict[str, tuple[str, CandidateMemory]],
) -> MemoryOp | None:
    """Deterministic decision for a candidate with a key, or ``None`` when it needs more."""
    cand = ctx.candidate
    key = cand.key
    if key is None or _points_back(cand):
        return None  # "forget that" is found by time (_offline_op), not by key or words
    if cand.forget and _retraction(key):
        # "aspirin 其实没问题": that one allergy goes, nothing else that names aspirin (the
        # father's aspirin), and with nothing under the key nothing is erased.
        taken_back = tuple(
            r.id for r in ctx.same_key if r.key == key and r.status == MemoryStatus.ACTIVE
        )
        if not taken_back:
            return MemoryOp("ignore", cand, (), f"nothing stored under {key!r} to take back")
        return MemoryOp(
            "delete", cand, taken_back, f"the user took back {key!r}: it was never true"
        )
    if cand.forget:
        # The slot's versions, plus evidence turns on the topic among the neighbours.
        topic = _forget_topic(cand)
        nearby = [s.record for s in ctx.similar if s.record.status != MemoryStatus.DELETED]
        targets = tuple(
            dict.fromkeys(
                [
                    *(
                        r.id
                        for r in (*ctx.same_key, *nearby)
                        if forget_covers(r, key, topic) and r.status != MemoryStatus.DELETED
                    ),
                    *(r.id for r in nearby if forget_reaches(topic, r.text)),
                ]
            )
        )
        targets += tuple(_same_turn(targets, nearby))
        planned = tuple(rid for k, (rid, _) in batch_by_key.items() if key_matches(k, key))
        if not targets and not planned:
            return None  # nothing with that key; similar memories may still match
        for k in [k for k in batch_by_key if key_matches(k, key)]:
            del batch_by_key[k]
        reason = f"user asked to forget key {key!r}"
        if planned:  # an earlier candidate's memory under that key, maybe one it matched
            reason += " (with the versions of this batch)"
        return MemoryOp("delete", cand, targets + planned, reason)
    active = [r for r in ctx.same_key if r.status == MemoryStatus.ACTIVE and r.key == key]
    earlier = batch_by_key.get(key)
    if earlier is not None:  # a later value in the same batch wins over the earlier one
        earlier_id, earlier_cand = earlier
        if _same_text(earlier_cand.text, cand.text) and not _upgrades(cand, earlier_cand.source):
            return MemoryOp(
                "ignore", cand, (earlier_id,), "duplicate of an earlier memory in this batch"
            )
        if (
            cand.source is MemorySource.AGENT_INFERRED
            and earlier_cand.source is MemorySource.USER_STATED
        ):
            return MemoryOp("ignore", cand, (earlier_id,), AGENT_GUARD)
        result_id = result_id_for(seed, index)
        batch_by_key[key] = (result_id, cand)
        return MemoryOp(
            "supersede",
            cand,
            (earlier_id,),
            f"newer value for key {key!r} in this batch",
            result_id,
        )
    if not active:
        return None
    for record in active:
        if _same_text(record.text, cand.text) and not _upgrades(cand, record.source):
            return MemoryOp(
                "ignore", cand, (record.id,), f"same value already stored for key {key!r}"
            )
    if cand.source is MemorySource.AGENT_INFERRED and any(
        r.source is MemorySource.USER_STATED for r in active
    ):
        return MemoryOp(
            "ignore",
            cand,
            tuple(r.id for r in active),
            AGENT_GUARD,
        )
    result_id = result_id_for(seed, index)
    batch_by_key[key] = (result_id, cand)
    details = _continuations(cand, active, [s.record for s in ctx.similar])
    return MemoryOp(
        "supersede",
        cand,
        (*(r.id for r in active), *(r.id for r, _ in details)),
        f"same key {key!r}: new value replaces the old",
        result_id,
        kept=_kept(details),
    )


def _offline_op(
    index: int,
    ctx: CandidateContext,
    seed: str,
    duplicate_threshold: float,
    forget_threshold: float,
) -> MemoryOp:
    """Decision without a model: near-duplicates are ignored or merged, the rest added."""
    cand = ctx.candidate
    active = [s.record for s in ctx.similar if s.record.status == MemoryStatus.ACTIVE]
    if _points_back(cand):
        records = [s.record for s in ctx.similar]
        targets = _previous_statement(cand, records)
        if not targets:
            return MemoryOp("ignore", cand, (), "forget request with nothing said just before it")
        return MemoryOp(
            "delete",
            cand,
            targets + tuple(_same_turn(targets, records)),
            "user asked to forget what they had just said; deleted its memories",
            result_id_for(seed, index),
        )
    if cand.forget:
        topic = _forget_topic(cand)
        active = [s.record for s in ctx.similar if s.record.status != MemoryStatus.DELETED]
        targets = tuple(
            dict.fromkeys(
                [
                    *(r.id for r in active if text_similarity(topic, r.text) >= forget_threshold),
                    *(r.id for r in active if forget_reaches(topic, r.text)),
                ]
            )
        )
        if not targets:
            # Nothing holds enough of the topic ("我姐住哪儿那条" against "我姐叫刘静；住望京那
            # 边"): the user asked to forget something, so what holds the most of it goes.
            scores = {
                r.id: reach_score(topic, r.text) for r in active if r.status == MemoryStatus.ACTIVE
            }
            best = max(scores.values(), default=0)
            if best >= _FORGET_FALLBACK_MIN:
                targets = tuple(i for i, n in scores.items() if n == best)
        targets += _said_with(topic, targets, active)
        reached = [r for r in active if r.id in targets]
        targets += tuple(_same_turn(targets, active))
        if not targets:
            return MemoryOp(
                "ignore", cand, (), "forget request matched no stored memory; nothing deleted"
            )
        return MemoryOp(
            "delete",
            cand,
            targets,
            "user asked to forget; deleted the closely matching memories",
            result_id_for(seed, index),
            kept=_left_by_forget(topic, reached, forget_threshold),
        )
    scored = sorted(((text_similarity(cand.text, r.text), r) for r in active), key=lambda p: -p[0])
    # "I switched to the unlimited plan" retires the raw turn that said "50GB plan":
    # evidence has no key, so the same-key supersede cannot (nodes/rules/_evidence.py).
    stale = _stale_loose(cand, [r for _, r in scored])[:_MAX_RETIRED]
    stale += _continuations(cand, [r for r, kept in stale if not kept], active)
    previous = ctx.previous
    if previous is not None and (_past(previous, cand.observed_at) or happened(previous.text)):
        previous = None  # "the sofa came today, it's torn" is no plan "the 27th instead?" moves
    if not stale and previous is not None and moves_a_value(cand.text) and not topics(cand.text):
        # "Can we do the 6th instead?" right after "a table at Rocco's for the 5th": a
        # change with no subject of its own changes what the user just said.
        stale = _stale_loose(replace(cand, text=f"{cand.text} {previous.text}"), [previous])
    if stale and not (scored and scored[0][0] >= duplicate_threshold):
        ends = [r.expires_at for r, _ in stale]
        # Not once the plan's day has come: "搬好了，新家在莘庄" after "下个月要搬家" reports
        # how it went, and lasts.
        at = cand.observed_at
        came = done(cand.text) or (
            at is not None
            and any(r.event_time is not None and r.event_time <= at for r, _ in stale)
        )
        lasting = came or _NEW_HOME.search(cand.text) is not None
        if cand.expires_at is None and not lasting and all(end is not None for end in ends):
            # "change of plan: we'll stay at my brother's instead" changes a dated
            # plan, and ends when it would have.
            cand = replace(cand, expires_at=max(e for e in ends if e is not None))
        if is_evidence_key(cand.key):
            cand = replace(cand, text=without_old_value(cand.text))
        return MemoryOp(
            "supersede",
            cand,
            tuple(r.id for r, _ in stale),
            "an update: the older raw statements on the same topic are superseded",
            result_id_for(seed, index),
            kept=_kept(stale),
        )
    if scored and scored[0][0] >= duplicate_threshold:
        similarity, record = scored[0]
        upgrade = (
            cand.source is MemorySource.USER_STATED and record.source is MemorySource.AGENT_INFERRED
        )
        if upgrade or cand.importance > record.importance:
            merged = replace(
                cand, key=cand.key or record.key, importance=max(cand.importance, record.importance)
            )
            return MemoryOp(
                "merge",
                merged,
                (record.id,),
                f"near-duplicate (similarity {similarity:.2f}); the newer statement replaces it",
                result_id_for(seed, index),
            )
        return MemoryOp(
            "ignore",
            cand,
            (record.id,),
            f"near-duplicate (similarity {similarity:.2f}) already stored",
        )
    return MemoryOp("add", cand, (), "new information", result_id_for(seed, index))


# --- the model's judgement --------------------------------------------------------

Label = Literal["contradicts", "updates", "duplicates", "adds", "unrelated"]
_LABEL_SYNONYMS = {
    "contradict": "contradicts", "contradiction": "contradicts", "update": "updates",
    "duplicate": "duplicates", "add": "adds", "new": "adds", "unrelated": "unrelated",
}  # fmt: skip


class Decision(BaseModel):
    """One label of the model's judgement."""

    model_config = ConfigDict(extra="ignore")

    new: int
    label: Label
    targets: list[str] = Field(default_factory=list, max_length=50)
    merged_text: str | None = Field(default=None, max_length=2000)
    reason: str = Field(default="", max_length=2000)

    @field_validator("label", mode="before")
    @classmethod
    def _label(cls, value: Any) -> Any:
        if isinstance(value, str):
            folded = value.strip().lower()
            return _LABEL_SYNONYMS.get(folded, folded)
        return value

    @field_validator("targets", mode="before")
    @classmethod
    def _targets(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        if isinstance(value, list):
            return [str(v) for v in value]
        return value


class Judgement(BaseModel):
    model_config = ConfigDict(extra="ignore")

    decisions: list[Decision] = Field(default_factory=list, max_length=200)


def parse_judgement(text: str) -> Judgement:
    """Parse and validate a reconcile answer. Raises ``ValueError``."""
    value = parse_json_answer(text)
    if isinstance(value, list):
        value = {"decisions": value}
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object with 'decisions', got {type(value).__name__}")
    try:
        return Judgement.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']} (got {e.get('input')!r:.80})"
            for e in exc.errors()[:5]
        )
        raise ValueError(problems) from exc


@dataclass(frozen=True, slots=True)
class JudgementRequest:
    """What the model is asked, with the aliases it may answer with."""

    text: str
    # Candidate number (1-based, as shown) -> batch index.
    numbers: Mapping[int, int]
    # Per batch index: alias or real id -> record, only the memories shown for it.
    allowed: Mapping[int, Mapping[str, MemoryRecord]]


def _when(record: MemoryRecord) -> str:
    return record.valid_from.date().isoformat() if isinstance(record.valid_from, datetime) else "?"


def build_judgement_request(
    contexts: Sequence[CandidateContext], undecided: Sequence[int]
) -> JudgementRequest:
    """Render the undecided candidates and their neighbours; aliases E1, E2 ... per record."""
    alias_of: dict[str, str] = {}
    blocks: list[str] = []
    numbers: dict[int, int] = {}
    allowed: dict[int, dict[str, MemoryRecord]] = {}
    for number, index in enumerate(undecided, start=1):
        ctx = contexts[index]
        cand = ctx.candidate
        numbers[number] = index
        kind = "FORGET REQUEST" if cand.forget else "NEW"
        hint = " - choose the memories it refers to" if cand.forget else ""
        lines = [
            f'{kind} {number} (source: {cand.source.value}, key: {cand.key or "none"}){hint}: "{cand.text}"'
        ]
        shown: dict[str, MemoryRecord] = {}
        for scored in ctx.similar:
            record = scored.record
            if record.status != MemoryStatus.ACTIVE:
                continue
            alias = alias_of.setdefault(record.id, f"E{len(alias_of) + 1}")
            shown[alias] = record
            shown[record.id] = record
            lines.append(
                f'  {alias}: "{record.text}" (key: {record.key or "none"}, source: '
                f"{record.source.value}, since {_when(record)})"
            )
        allowed[index] = shown
        blocks.append("\n".join(lines))
    return JudgementRequest("\n\n".join(blocks), numbers, allowed)


def _safe_text(text: str, policy: PrivacyPolicy | None) -> str | None:
    try:
        cleaned = redact_text(" ".join(text.split()), policy)
    except RedactionRejectedError:
        return None
    return cleaned[:MAX_MEMORY_CHARS] or None


def _judged_op(
    index: int,
    ctx: CandidateContext,
    decision: Decision | None,
    request: JudgementRequest,
    seed: str,
    policy: PrivacyPolicy | None,
) -> MemoryOp:
    """Turn one model decision into a ``MemoryOp``, enforcing every guardrail."""
    cand = ctx.candidate
    new_id = result_id_for(seed, index)
    if decision is None:
        if cand.forget:
            return MemoryOp("ignore", cand, (), "model chose no memory to forget; nothing deleted")
        return MemoryOp("add", cand, (), "model gave no decision; the new fact is kept", new_id)
    shown = request.allowed.get(index, {})
    targets: list[MemoryRecord] = []
    for ref in decision.targets:
        record = shown.get(ref.strip())
        if record is None:
            logger.warning(
                "reconcile: ignoring id %r the model referenced but was not shown",
                redact_for_log(ref, 80),
            )
        elif record not in targets:
            targets.append(record)
    note = f"model: {decision.label}" + (f" ({decision.reason[:200]})" if decision.reason else "")
    if cand.forget:
        if not targets:
            return MemoryOp(
                "ignore", cand, (), note + "; no valid memory to forget, nothing deleted"
            )
        return MemoryOp(
            "delete", cand, tuple(r.id for r in targets), note + "; user asked to forget"
        )
    if decision.label in ("adds", "unrelated") or not targets:
        suffix = (
            ""
            if decision.label in ("adds", "unrelated")
            else "; no valid target, the new fact is kept"
        )
        return MemoryOp("add", cand, (), note + suffix, new_id)
    protected = [r for r in targets if r.source is MemorySource.USER_STATED]
    if cand.source is MemorySource.AGENT_INFERRED and protected:
        # The user's own statement wins over the assistant's inference.
        return MemoryOp(
            "ignore",
            cand,
            tuple(r.id for r in protected),
            f"{note}; {AGENT_GUARD}",
        )
    ids = tuple(r.id for r in targets)
    if decision.label == "duplicates":
        merged_text = _safe_text(decision.merged_text, policy) if decision.merged_text else None
        if merged_text is None:
            return MemoryOp("ignore", cand, ids, note + "; already stored")
        key = cand.key or next((r.key for r in targets if r.key), None)
        importance = max([cand.importance, *(r.importance for r in targets)])
        merged = replace(cand, text=merged_text, key=key, importance=importance)
        return MemoryOp("merge", merged, ids, note + "; merged into one memory", new_id)
    # updates / contradicts: supersede, never a hard delete (history stays, valid_to set).
    return MemoryOp("supersede", cand, ids, note + "; old memory superseded", new_id)


def plan_ops(
    contexts: Sequence[CandidateContext],
    *,
    seed: str,
    judgement: Judgement | None = None,
    request: JudgementRequest | None = None,
    policy: PrivacyPolicy | None = None,
    duplicate_threshold: float = 0.9,
    forget_threshold: float = 0.5,
) -> list[MemoryOp]:
    """All decisions for a batch, in candidate order; pure.

    ``judgement`` (with the ``request`` it answers) decides the candidates that
    were sent to the model; without it the offline rules decide them.
    """
    decided, undecided = first_pass(contexts, seed)
    by_index: dict[int, Decision] = {}
    if judgement is not None and request is not None:
        for decision in judgement.decisions:
            index = request.numbers.get(decision.new)
            if index is None:
                logger.warning(
                    "reconcile: ignoring a decision for unknown new memory %r",
                    redact_for_log(decision.new, 80),
                )
            elif index not in by_index:
                by_index[index] = decision
    for index in undecided:
        ctx = contexts[index]
        if (
            request is not None
            and index in request.numbers.values()
            and not _points_back(ctx.candidate)
        ):
            decided[index] = _judged_op(index, ctx, by_index.get(index), request, seed, policy)
        else:
            ctx = _with_batch_evidence(ctx, contexts, decided, index, seed)
            decided[index] = _offline_op(index, ctx, seed, duplicate_threshold, forget_threshold)
    return _without_phantom_targets([decided[i] for i in range(len(contexts))], seed)


def _with_batch_evidence(
    ctx: CandidateContext,
    contexts: Sequence[CandidateContext],
    decided: Mapping[int, MemoryOp],
    index: int,
    seed: str,
) -> CandidateContext:
    """An update (and a forget request) also sees what was written earlier in its own batch.

    "I need a room Dec 11 to 14" and "can we do Dec 12 to 15 instead?" often come
    in one conversation: the second must replace the first before either is stored.
    """
    cand = ctx.candidate
    # A forget request ("膝盖的事你别记了", "Actually, forget that.") may be about a message
    # of its own batch: the writer's debounce coalesces a chat's turns into one job.
    if not cand.forget and not updates(cand.text):
        return ctx
    earlier: list[ScoredMemory] = []
    priors: list[CandidateMemory] = []
    mine = set(cand.origin_message_ids)
    for i in range(index):
        op = decided.get(i)
        prior = contexts[i].candidate
        loose = cand.forget or is_evidence_key(prior.key) or _generic_key(prior.key)
        if op is None or op.action not in ("add", "supersede") or not loose:
            continue
        if mine and mine >= set(prior.origin_message_ids):
            # Said in the same message: "moved to the growth team; my new manager is
            # Priyanka" is one statement in two memories, neither replaces the other.
            continue
        record = MemoryRecord(
            text=prior.text,
            type=prior.type,
            key=prior.key,
            importance=prior.importance,
            source=prior.source,
            id=op.result_id or result_id_for(seed, i),
            valid_from=prior.observed_at or cand.observed_at or _EPOCH,
            expires_at=prior.expires_at,
            origin_message_ids=prior.origin_message_ids,
        )
        earlier.append(ScoredMemory(record, 0.0))
        priors.append(prior)
    if not earlier:
        return ctx
    # The latest loose memory from an earlier message than this one's.
    previous = next(
        (
            s.record
            for s, prior in zip(reversed(earlier), reversed(priors), strict=True)
            if not mine & set(prior.origin_message_ids)
        ),
        None,
    )
    return replace(ctx, similar=(*ctx.similar, *earlier), previous=previous)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _without_phantom_targets(ops: list[MemoryOp], seed: str) -> list[MemoryOp]:
    """Point in-batch references at memories that are actually kept.

    A keyed candidate left to the model is provisionally "the current value" of
    its key for later candidates of the batch, and a repeated candidate points
    at its first occurrence. If that earlier candidate is in the end not stored,
    a later op must not point at a memory that never existed: it follows the
    earlier one's duplicate targets, or else the new fact is added.
    """
    provisional = {result_id_for(seed, i): i for i in range(len(ops))}
    kept: set[str] = set()
    # provisional id of an ignored duplicate -> the stored memories it duplicates
    alias: dict[str, tuple[str, ...]] = {}
    out: list[MemoryOp] = []
    for index, op in enumerate(ops):
        targets: list[str] = []
        for target in op.target_ids:
            if target not in provisional or target in kept:
                targets.append(target)
            else:
                targets.extend(alias.get(target, ()))
        targets = list(dict.fromkeys(targets))
        if tuple(targets) != op.target_ids:
            if targets:
                op = replace(op, target_ids=tuple(targets))
            elif op.action == "delete":
                note = "; nothing stored to forget"
                op = replace(op, action="ignore", target_ids=(), reason=op.reason + note)
            elif op.action == "ignore" and op.candidate is not None and op.candidate.forget:
                op = replace(op, target_ids=())
            else:  # supersede/merge/ignore of a value that was not kept: the new fact is added
                note = "; the earlier value in this batch was not kept"
                op = replace(
                    op,
                    action="add",
                    target_ids=(),
                    reason=op.reason + note,
                    result_id=op.result_id or result_id_for(seed, index),
                )
        if op.result_id and op.action in ("add", "supersede", "merge"):
            kept.add(op.result_id)
        elif op.action == "ignore" and op.target_ids and AGENT_GUARD not in op.reason:
            alias[result_id_for(seed, index)] = op.target_ids
        out.append(op)
    return out


@runtime_checkable
class ReconcileJudge(Protocol):
    """The policy seam: an app's own judgement over a batch's planned ops.

    ``review`` gets each candidate's context (the same-key memories and the similar
    ones that were looked up) and the ops the built-in rules (and the model, if any)
    planned, in candidate order, and returns the ops to apply: change an action,
    drop a target, turn an add into an ignore. It runs inside the same guardrails
    as the model (``guard_reviewed_ops``): ids it was not shown are dropped, it
    cannot hard-delete unless the user asked to forget, and an ``agent_inferred``
    candidate never supersedes a ``user_stated`` memory. Keep it pure and fast; it
    runs once per batch.

    Example:
        >>> class NeverForget:
        ...     def review(self, contexts, ops):
        ...         return [replace(op, action="ignore", target_ids=())
        ...                 if op.action == "delete" else op for op in ops]
        >>> isinstance(NeverForget(), ReconcileJudge)
        True
    """

    def review(
        self, contexts: Sequence[CandidateContext], ops: Sequence[MemoryOp]
    ) -> Sequence[MemoryOp]: ...


def guard_reviewed_ops(
    ops: Sequence[MemoryOp], contexts: Sequence[CandidateContext], seed: str
) -> list[MemoryOp]:
    """Hold a judge's ops to the model's guardrails; pure.

    One op per candidate, in order (missing ones are added back as planned
    adds); targets must be memories shown for that candidate or results of this
    batch; only a forget request deletes; ``agent_inferred`` never replaces a
    ``user_stated`` memory (the new fact is added beside it instead).
    """
    if len(ops) != len(contexts):
        raise ConfigurationError(
            f"ReconcileJudge.review returned {len(ops)} ops for {len(contexts)} candidates; "
            "return exactly one op per candidate, in order."
        )
    batch_ids = {result_id_for(seed, i) for i in range(len(contexts))}
    out: list[MemoryOp] = []
    for index, (op, ctx) in enumerate(zip(ops, contexts, strict=True)):
        shown = {r.id: r for r in ctx.same_key} | {s.record.id: s.record for s in ctx.similar}
        targets = tuple(t for t in op.target_ids if t in shown or t in batch_ids)
        cand = ctx.candidate
        if op.action == "delete" and not cand.forget:
            op = replace(op, action="supersede" if targets else "add")
        if cand.source is MemorySource.AGENT_INFERRED and op.action in (
            "add",
            "supersede",
            "merge",
        ):
            # A guess never replaces the user's words: not as a target, and not by taking
            # a slot (same key) the user filled, earlier or in this batch.
            stated = {
                t for t in targets if t in shown and shown[t].source is MemorySource.USER_STATED
            }
            if cand.key:
                stated |= {r.id for r in ctx.same_key if r.source is MemorySource.USER_STATED}
                stated |= {
                    result_id_for(seed, i)
                    for i, earlier in enumerate(contexts[:index])
                    if earlier.candidate.key == cand.key
                    and earlier.candidate.source is MemorySource.USER_STATED
                }
            if stated:
                reason = f"{op.reason}; {AGENT_GUARD}" if op.reason else AGENT_GUARD
                out.append(MemoryOp("ignore", cand, tuple(sorted(stated)), reason))
                continue
        if op.action in ("supersede", "merge") and not targets:
            op = replace(op, action="add")
        if op.action in ("add", "supersede", "merge") and op.result_id is None:
            op = replace(op, result_id=result_id_for(seed, index))
        out.append(replace(op, target_ids=targets, candidate=op.candidate or cand))
    return out


def first_pass(
    contexts: Sequence[CandidateContext], seed: str
) -> tuple[dict[int, MemoryOp], list[int]]:
    """Deterministic same-key decisions and exact in-batch duplicates; the rest is undecided."""
    decided: dict[int, MemoryOp] = {}
    undecided: list[int] = []
    batch_by_key: dict[str, tuple[str, CandidateMemory]] = {}
    seen_texts: dict[str, int] = {}
    for index, ctx in enumerate(contexts):
        cand = ctx.candidate
        folded = _NON_WORD.sub("", cand.text.lower())
        first = seen_texts.get(folded)
        stronger = (
            first is not None
            and cand.source is MemorySource.USER_STATED
            and contexts[first].candidate.source is MemorySource.AGENT_INFERRED
        )
        if not cand.forget and first is not None and not stronger:
            decided[index] = MemoryOp(
                "ignore",
                cand,
                (result_id_for(seed, first),),  # resolved once the first one's fate is known
                f"repeats memory {first + 1} of this batch",
            )
            continue
        op = _keyed_op(index, ctx, seed, batch_by_key)
        if op is not None and op.action == "supersede" and _slot_value(cand):
            # The slot's new value also retires the raw statements on its topic.
            nearby = [s.record for s in ctx.similar]
            extra = [p for p in _stale_loose(cand, nearby) if p[0].id not in op.target_ids]
            extra = extra[:_MAX_RETIRED]
            if extra:
                op = replace(
                    op,
                    target_ids=(*op.target_ids, *(r.id for r, _ in extra)),
                    kept=_kept(extra),
                )
        if op is not None:
            decided[index] = op
        else:
            undecided.append(index)
            if cand.key and not cand.forget:
                batch_by_key[cand.key] = (result_id_for(seed, index), cand)
        if not cand.forget:
            seen_texts[folded] = index
    return decided, undecided


def needs_model(contexts: Sequence[CandidateContext], undecided: Sequence[int]) -> list[int]:
    """Undecided candidates with at least one active neighbour: the only ones worth asking about."""
    return [
        i
        for i in undecided
        if any(s.record.status == MemoryStatus.ACTIVE for s in contexts[i].similar)
    ]


def record_for(op: MemoryOp, user_id: str, thread_id: str | None, now: datetime) -> MemoryRecord:
    """The memory an add/supersede/merge op creates, stamped at ``now``.

    It is valid from when the user said it (``observed_at``), never from the future.
    """
    cand = op.candidate
    if cand is None or op.result_id is None:
        raise ValueError(f"op {op.action!r} has no candidate/result id to create a memory from")
    said = cand.observed_at
    return MemoryRecord(
        text=cand.text,
        type=cand.type,
        key=cand.key,
        importance=cand.importance,
        source=cand.source,
        confidence=cand.confidence,
        id=op.result_id,
        user_id=user_id,
        created_at=now,
        updated_at=now,
        valid_from=said if said is not None and said <= now else now,
        event_time=cand.event_time,
        expires_at=cand.expires_at,
        supersedes=op.target_ids if op.action in ("supersede", "merge") else (),
        origin_thread_id=thread_id,
        origin_message_ids=cand.origin_message_ids,
    )


def _kept_record(old: MemoryRecord, kept: str, text: str, now: datetime) -> MemoryRecord:
    """``old`` cut down to the pieces that stay true, as its own current version."""
    return replace(
        old,
        id=kept,
        text=text[:MAX_MEMORY_CHARS],
        created_at=now,
        updated_at=now,
        last_accessed_at=None,
        access_count=0,
        valid_to=None,
        status=MemoryStatus.ACTIVE,
        supersedes=(old.id,),
        superseded_by=None,
    )


# --- the reconciler (thin I/O shells around the pure plan) -------------------------


@dataclass
class _ModelExchange:
    request: JudgementRequest
    messages: list[BaseMessage] = field(default_factory=list)


class Reconciler:
    """Plan and apply ``MemoryOp``s for one user's candidates against a long-term store.

    Args:
        store: A ``LongTermMemory`` (``ChromaMemoryStore``).
        model: Chat model for the one judgement per batch; ``None`` = offline rules.
        prompts: Override the default prompts.
        policy: Privacy policy for text the model writes (``merged_text``).
        neighbours: Similar memories looked up per candidate (default 5).
        duplicate_threshold: Offline near-duplicate cut-off (bigram Dice, default 0.9).
        forget_threshold: Offline: how close a memory must be to a key-less
            forget request to be deleted (default 0.5).
        clock: Stamps the memories it creates (``langgraph_memory.clock``; default
            the UTC wall clock).
        judge: Your own judgement over each batch's planned ops (``ReconcileJudge``),
            applied last, inside the same guardrails as the model's.

    Example:
        >>> import tempfile
        >>> from langgraph_memory.embeddings import HashingEmbeddings
        >>> from langgraph_memory.longterm import ChromaMemoryStore
        >>> store = ChromaMemoryStore.embedded(tempfile.mkdtemp(), embeddings=HashingEmbeddings())
        >>> reconciler = Reconciler(store)  # no model: the offline rules
        >>> ops = reconciler.reconcile("u1", [CandidateMemory("User is vegan", key="diet")])
        >>> ops = reconciler.reconcile("u1", [CandidateMemory("User eats fish", key="diet")])
        >>> [(op.action, op.reason) for op in ops]
        [('supersede', "same key 'diet': new value replaces the old")]
        >>> store.close()
    """

    def __init__(
        self,
        store: LongTermMemory,
        *,
        model: BaseChatModel | None = None,
        prompts: ReconcilePrompts | None = None,
        policy: PrivacyPolicy | None = None,
        neighbours: int = 5,
        duplicate_threshold: float = 0.9,
        forget_threshold: float = 0.5,
        clock: Clock | None = None,
        judge: ReconcileJudge | None = None,
    ) -> None:
        if model is not None and not isinstance(model, BaseChatModel):
            raise ConfigurationError(
                f"Reconciler(model={model!r}): pass a langchain BaseChatModel or None."
            )
        if neighbours < 1:
            raise ConfigurationError(f"Reconciler(neighbours={neighbours!r}); use an integer >= 1.")
        for name, value in (
            ("duplicate_threshold", duplicate_threshold),
            ("forget_threshold", forget_threshold),
        ):
            if not 0.0 < value <= 1.0:
                raise ConfigurationError(f"Reconciler({name}={value!r}); use a value in (0, 1].")
        self.store = store
        self.model = model
        # Passed to store.delete_memory (MemoryWriter(checkpointer=...): the recall
        # blocks and queue jobs that quote a deleted memory are erased with it).
        self.delete_options: dict[str, Any] = {}
        self.prompts = prompts or ReconcilePrompts()
        self.policy = policy
        self.neighbours = neighbours
        self.duplicate_threshold = duplicate_threshold
        self.forget_threshold = forget_threshold
        self.clock = clock
        if judge is not None and not isinstance(judge, ReconcileJudge):
            raise ConfigurationError(
                f"Reconciler(judge={judge!r}): pass an object with "
                "review(contexts, ops) -> ops (see ReconcileJudge), or None."
            )
        self.judge = judge

    # gather ------------------------------------------------------------------------
    # Each operation is written once, as a generator of store/model calls
    # (``langgraph_memory._drive``); the public sync and async methods only drive it.

    def _context(
        self, cand: CandidateMemory, similar: list[ScoredMemory], keyed: Sequence[MemoryRecord]
    ) -> CandidateContext:
        # A forget request also reaches the older versions of what it names: "当没听过" erases
        # the history too, not only the current value.
        own = [
            s
            for s in similar
            if s.record.status == MemoryStatus.ACTIVE
            or (cand.forget and s.record.status == MemoryStatus.SUPERSEDED)
        ]
        if cand.forget and cand.key:
            keyed = [r for r in keyed if key_matches(r.key, cand.key)]
        else:
            keyed = [r for r in keyed if r.key == cand.key and r.status == MemoryStatus.ACTIVE]
        return CandidateContext(cand, tuple(keyed), tuple(own))

    def gather_steps(
        self, user_id: str, candidates: Sequence[CandidateMemory]
    ) -> Steps[list[CandidateContext]]:
        """The store's view around each candidate (2 searches per candidate)."""
        store = self.store
        contexts: list[CandidateContext] = []
        history: list[MemoryRecord] | None = None
        for cand in map(flag_override, candidates):  # overrides become flagged events
            similar = yield Call(
                store, "search_memories", (user_id, cand.text), {"limit": self.neighbours}
            )
            if not cand.forget and (updates(cand.text) or _slot_value(cand)):
                # An update may replace a raw statement that shares no word with it ("we
                # moved to Bath" and "we're in Clifton"): also look at the newest evidence
                # and slot values ("User lives in Canton").
                recent = yield Call(
                    store,
                    "search_memories",
                    (user_id, cand.text),
                    {
                        "limit": _UPDATE_LOOKBACK,
                        "types": [MemoryType.EPISODIC, MemoryType.SEMANTIC],
                        "min_relevance": 0.0,
                        "weights": _NEWEST_FIRST,
                    },
                )
                seen = {s.record.id for s in similar}
                similar = [*similar, *(s for s in recent if s.record.id not in seen)]
            keyed: Sequence[MemoryRecord] = ()
            if cand.forget:
                # A forget request may reach any memory on its topic, not only the few
                # nearest ones (forget_reaches); requests are rare, so one listing is cheap.
                if history is None:
                    history = yield Call(
                        store, "list_memories", (user_id,), {"include_history": True}
                    )
                seen = {s.record.id for s in similar}
                similar = [
                    *similar,
                    *(ScoredMemory(r, 0.0) for r in history or () if r.id not in seen),
                ]
                keyed = (history or ()) if cand.key else ()
            elif cand.key:
                found = yield Call(
                    store,
                    "search_memories",
                    (user_id, cand.text),
                    {"limit": self.neighbours, "keys": [cand.key], "min_relevance": 0.0},
                )
                keyed = [s.record for s in found]
            contexts.append(self._context(cand, list(similar), keyed))
        return contexts

    def gather(self, user_id: str, candidates: Sequence[CandidateMemory]) -> list[CandidateContext]:
        """The store's view around each candidate (2 searches per candidate)."""
        return run(self.gather_steps(user_id, candidates))

    async def agather(
        self, user_id: str, candidates: Sequence[CandidateMemory]
    ) -> list[CandidateContext]:
        """Async twin of ``gather``."""
        return await arun(self.gather_steps(user_id, candidates))

    # plan ----------------------------------------------------------------------------

    def _exchange(self, contexts: Sequence[CandidateContext], seed: str) -> _ModelExchange | None:
        if self.model is None:
            return None
        _, undecided = first_pass(contexts, seed)
        ask = needs_model(contexts, undecided)
        if not ask:
            return None  # nothing ambiguous: no model call at all
        request = build_judgement_request(contexts, ask)
        messages: list[BaseMessage] = [
            SystemMessage(self.prompts.system),
            HumanMessage(self.prompts.user_template.format(items=request.text)),
        ]
        return _ModelExchange(request, messages)

    def _retry(self, exchange: _ModelExchange, answer: str, error: str) -> list[BaseMessage]:
        return [
            *exchange.messages,
            AIMessage(answer[:2000]),
            HumanMessage(self.prompts.retry_template.format(error=error)),
        ]

    def _plan(
        self,
        contexts: Sequence[CandidateContext],
        seed: str,
        exchange: _ModelExchange | None,
        judgement: Judgement | None,
    ) -> list[MemoryOp]:
        ops = plan_ops(
            contexts,
            seed=seed,
            judgement=judgement,
            request=exchange.request if exchange and judgement is not None else None,
            policy=self.policy,
            duplicate_threshold=self.duplicate_threshold,
            forget_threshold=self.forget_threshold,
        )
        if exchange is not None and judgement is None:
            ops = [
                replace(
                    op, reason=op.reason + " (offline rule: the model's judgement was unusable)"
                )
                if i in exchange.request.numbers.values()
                else op
                for i, op in enumerate(ops)
            ]
        if self.judge is not None:
            # The app's own judgement has the last word, inside the same guardrails:
            # ids it invents are dropped like the model's.
            reviewed = list(self.judge.review(contexts, ops))
            ops = _without_phantom_targets(guard_reviewed_ops(reviewed, contexts, seed), seed)
        return ops

    def plan_steps(
        self, user_id: str, candidates: Sequence[CandidateMemory], *, seed: str
    ) -> Steps[list[MemoryOp]]:
        """Decide the ops for a batch: at most one model call (two if the first answer is invalid).

        An answer that is invalid twice falls back to the offline rules for that
        batch (logged, and noted in each op's reason) rather than losing the facts.
        """
        contexts = yield from self.gather_steps(user_id, candidates)
        exchange = self._exchange(contexts, seed)
        judgement: Judgement | None = None
        if exchange is not None and self.model is not None:
            first = _text((yield Call(self.model, "invoke", (exchange.messages,))))
            judgement = _try_parse(first)
            if judgement is None:
                retry = self._retry(exchange, first, _parse_error(first))
                judgement = _try_parse(_text((yield Call(self.model, "invoke", (retry,)))))
        return self._plan(contexts, seed, exchange, judgement)

    def plan(
        self, user_id: str, candidates: Sequence[CandidateMemory], *, seed: str
    ) -> list[MemoryOp]:
        """Decide the ops for a batch (see ``plan_steps``)."""
        return run(self.plan_steps(user_id, candidates, seed=seed))

    async def aplan(
        self, user_id: str, candidates: Sequence[CandidateMemory], *, seed: str
    ) -> list[MemoryOp]:
        """Async twin of ``plan``."""
        return await arun(self.plan_steps(user_id, candidates, seed=seed))

    # apply ---------------------------------------------------------------------------

    def apply_steps(
        self, user_id: str, op: MemoryOp, *, thread_id: str | None = None
    ) -> Steps[bool]:
        """Apply one op; ``False`` when it was already applied (idempotent re-run)."""
        store = self.store
        if op.action == "ignore":
            return False
        if op.action == "delete":
            changed = False
            # What the request left of a turn is written before the turn is erased, so a
            # re-run after a crash between the two still has it, once.
            for target, text in op.kept:
                kept = kept_id(op.result_id or "", target)
                old = yield Call(store, "get_memory", (user_id, target))
                if old is None or (yield Call(store, "get_memory", (user_id, kept))) is not None:
                    continue
                # Its own key, so storing it does not supersede the turn it is cut from (that
                # turn is erased, and nothing links back to it).
                record = replace(
                    _kept_record(old, kept, text, now(self.clock)),
                    key=f"{old.key}.{kept[:6]}",
                    supersedes=(),
                )
                yield Call(store, "put_memory", (record,))
                changed = True
            for target in op.target_ids:
                try:
                    if (yield Call(store, "get_memory", (user_id, target))) is None:
                        continue
                    yield Call(store, "delete_memory", (user_id, target), self.delete_options)
                    changed = True
                except MemoryNotFoundError:
                    continue
            return changed
        stamp = now(self.clock)
        record = record_for(op, user_id, thread_id, stamp)
        changed = False
        if (yield Call(store, "get_memory", (user_id, record.id))) is None:
            active_targets = []
            for target in op.target_ids:
                old = yield Call(store, "get_memory", (user_id, target))
                if old is not None and old.status == MemoryStatus.ACTIVE:
                    active_targets.append(target)
            if not active_targets:
                yield Call(store, "put_memory", (record,))
            for target in active_targets:
                yield Call(store, "supersede", (user_id, target, record))
            changed = True
        # What stays true of a partly retired memory is stored again under its key (a re-run
        # after a crash between the two writes still adds it, once).
        for target, text in op.kept:
            kept = kept_id(record.id, target)
            if (yield Call(store, "get_memory", (user_id, kept))) is not None:
                continue
            old = yield Call(store, "get_memory", (user_id, target))
            if old is None or old.superseded_by != record.id:
                continue  # it was no longer current when this op ended it
            yield Call(store, "put_memory", (_kept_record(old, kept, text, stamp),))
            changed = True
        return changed

    def apply_op(self, user_id: str, op: MemoryOp, *, thread_id: str | None = None) -> bool:
        """Apply one op; ``False`` when it was already applied (idempotent re-run)."""
        return run(self.apply_steps(user_id, op, thread_id=thread_id))

    async def aapply_op(self, user_id: str, op: MemoryOp, *, thread_id: str | None = None) -> bool:
        """Async twin of ``apply_op``."""
        return await arun(self.apply_steps(user_id, op, thread_id=thread_id))

    def reconcile_steps(
        self,
        user_id: str,
        candidates: Sequence[CandidateMemory],
        *,
        thread_id: str | None = None,
        seed: str | None = None,
    ) -> Steps[list[MemoryOp]]:
        """Plan and apply in one go; returns the ops (the audit trail)."""
        seed = seed or default_seed(user_id, candidates)
        ops = yield from self.plan_steps(user_id, candidates, seed=seed)
        for op in ops:
            yield from self.apply_steps(user_id, op, thread_id=thread_id)
        return ops

    def reconcile(
        self,
        user_id: str,
        candidates: Sequence[CandidateMemory],
        *,
        thread_id: str | None = None,
        seed: str | None = None,
    ) -> list[MemoryOp]:
        """Plan and apply in one go; returns the ops (the audit trail)."""
        return run(self.reconcile_steps(user_id, candidates, thread_id=thread_id, seed=seed))

    async def areconcile(
        self,
        user_id: str,
        candidates: Sequence[CandidateMemory],
        *,
        thread_id: str | None = None,
        seed: str | None = None,
    ) -> list[MemoryOp]:
        """Async twin of ``reconcile``."""
        return await arun(self.reconcile_steps(user_id, candidates, thread_id=thread_id, seed=seed))


def default_seed(user_id: str, candidates: Sequence[CandidateMemory]) -> str:
    """A seed from the batch itself: the same batch plans the same ids."""
    parts = [user_id] + [f"{c.text}|{','.join(c.origin_message_ids)}" for c in candidates]
    return uuid.uuid5(_ID_NAMESPACE, "\x1f".join(parts)).hex


def _text(answer: Any) -> str:
    return answer.text if isinstance(answer, BaseMessage) else str(answer)


def _try_parse(text: str) -> Judgement | None:
    try:
        return parse_judgement(text)
    except ValueError as exc:
        logger.warning("reconcile: unusable model judgement: %s", redact_for_log(exc))
        return None


def _parse_error(text: str) -> str:
    try:
        parse_judgement(text)
    except ValueError as exc:
        return str(exc)
    return "unknown error"


# --- the graph node --------------------------------------------------------------


def _as_candidate(value: Any) -> CandidateMemory:
    if isinstance(value, CandidateMemory):
        return value
    if isinstance(value, Mapping) and "text" in value:
        return candidate_from_dict(value)
    raise ConfigurationError(
        f"reconcile node: {value!r:.80} is not a CandidateMemory or a dict with 'text'; "
        "put CandidateMemory objects in the candidates state key."
    )


def create_reconcile_node(
    *,
    store: LongTermMemory | None = None,
    model: BaseChatModel | None = None,
    queue: Any = None,
    candidates_key: str = "memory_candidates",
    ops_key: str = "memory_ops",
    policy: PrivacyPolicy | None = None,
    name: str = "reconcile",
) -> RunnableLambda[Any, dict[str, Any]]:
    """A standalone reconcile node for graphs that want extract and reconcile as explicit nodes.

    Reads ``state[candidates_key]`` (``CandidateMemory`` objects or their dicts),
    reconciles them for the current user against ``store`` (or the graph's
    store), records the ops in ``queue``'s audit log when given, and returns
    ``{candidates_key: [], ops_key: [MemoryOp, ...]}``.

    Raises:
        MissingUserIdError: No user id in the Runtime context or ``configurable``.
        ConfigurationError: No store given and none compiled into the graph.

    Example:
        >>> node = create_reconcile_node(store=store)  # doctest: +SKIP
    """

    def _setup(
        state: Any, config: RunnableConfig | None
    ) -> tuple[Reconciler, str, str | None, list[CandidateMemory]]:
        user_id = resolve_user_id(config)
        the_store = resolve_store(store, config)
        if the_store is None:
            raise ConfigurationError(
                "reconcile node: no long-term store; pass create_reconcile_node(store=...) "
                "or compile the graph with store=..."
            )
        raw = (
            state.get(candidates_key)
            if isinstance(state, Mapping)
            else getattr(state, candidates_key, None)
        )
        candidates = [_as_candidate(v) for v in (raw or [])]
        return (
            Reconciler(the_store, model=model, policy=policy),
            user_id,
            resolve_thread_id(config),
            candidates,
        )

    def reconcile_sync(state: Any, config: RunnableConfig) -> dict[str, Any]:
        reconciler, user_id, thread_id, candidates = _setup(state, config)
        if not candidates:
            return {}
        ops = reconciler.reconcile(user_id, candidates, thread_id=thread_id)
        if queue is not None:
            queue.record_audit(user_id, thread_id, ops)
        return {candidates_key: [], ops_key: ops}

    async def reconcile_async(state: Any, config: RunnableConfig) -> dict[str, Any]:
        reconciler, user_id, thread_id, candidates = _setup(state, config)
        if not candidates:
            return {}
        ops = await reconciler.areconcile(user_id, candidates, thread_id=thread_id)
        if queue is not None:
            await queue.arecord_audit(user_id, thread_id, ops)
        return {candidates_key: [], ops_key: ops}

    return RunnableLambda(reconcile_sync, afunc=reconcile_async, name=name)
