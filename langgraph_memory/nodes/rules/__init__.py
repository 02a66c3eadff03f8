"""Offline, rule-based memory extraction (no model needed), English and Chinese.

``RuleBasedExtractor`` reads only the user's own messages, so everything it
proposes is ``user_stated``. A turn is cut into sentences and clause-sized
segments (``_text.py``: decimals never split, "2.5万" stays whole), and each
segment is matched anywhere, not only at its start, by the rules:

- who the user is (``_profile.py``): name and how to address them, reply
  language, allergies and health facts of the user *and their household*
  ("my son is allergic to peanuts" -> ``allergy.son.peanuts``), diet, home city;
- business facts (``_business.py``): budget, group size, membership, order and
  ticket numbers, purchases, and any "my X is Y" / "我的X是Y";
- what the user wants (``_preferences.py``): likes, shipping, contact channel,
  standing instructions opening with any word;
- forget requests anywhere in a sentence (``_forget.py``);
- corrections and updates however phrased ("actually", "scratch that",
  "不是…是…", "改成", "提高到", "moved to") keep the slot's key (``_clause.py``);
- dated events (flights, trains, hotels, restaurants, 高铁 ...) with
  ``event_time`` and ``expires_at``, and time-bounded states (``_events.py``,
  relative times in ``nodes/_rules_time.py``).

Cantonese (唔/冇/钟意/食) is matched through a Mandarin normalisation. Jokes,
hypotheticals ("if I were ..."), questions and assistant turns stay out.

**Evidence.** What no rule understood is not thrown away: the segments of a
user turn that state something about the user (first person, not a greeting,
not a question) become ONE low-importance episodic "evidence" memory
("User said: ..."), so recall can still find them. Its key is
``evidence.<turn digest>``: unique per turn, so it never supersedes a fact, and
it is recognisable (``is_evidence_key``). What keeps it from serving an old
value as current:

- a segment a rule turned into a fact is *not* part of the evidence: the keyed
  fact alone carries that value and is superseded by the next one;
- denials ("I'm not vegetarian"), questions, jokes, hypotheticals and tentative
  statements ("I might switch ...") are left out;
- an update ("I switched to ...", "改成", "搬到", "收到了") supersedes the pieces
  of older evidence on its topic and keeps the rest (``_evidence.py``,
  ``_retire.py``), a forget request deletes the evidence on its topic, and dated
  evidence expires (reconcile applies it);
- digit runs the redactor missed are masked.

Its limit, measured on the planted-fact exam: an update that shares no word
with the turn it updates, and carries no update marker, leaves the old raw turn
active (stale recall). ``evidence=False`` trades recall for that risk.

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> from langgraph_memory.nodes.rules import RuleBasedExtractor
    >>> [c.text for c in RuleBasedExtractor().extract([HumanMessage("以后叫我老王", id="m1")])]
    ['用户希望被称为老王']
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langgraph_memory.clock import Clock, message_time, wall_clock
from langgraph_memory.config import PrivacyPolicy
from langgraph_memory.errors import ConfigurationError, RedactionRejectedError
from langgraph_memory.nodes._rules_time import bound_of, moment_of, stated_end
from langgraph_memory.nodes.extract import message_ids_for, message_text, redact_text
from langgraph_memory.nodes.rules._clause import match_clause, match_sentence
from langgraph_memory.nodes.rules._commitments import commitment
from langgraph_memory.nodes.rules._events import with_time
from langgraph_memory.nodes.rules._forget import bare_forget, forget_request, mentions_topic
from langgraph_memory.nodes.rules._match import Match
from langgraph_memory.nodes.rules._replies import accepts, acknowledges, offer_text
from langgraph_memory.nodes.rules._retire import fold_self_corrections
from langgraph_memory.nodes.rules._text import (
    CJK,
    HYPOTHETICAL,
    JOKE,
    TENTATIVE,
    TRIM,
    about_someone_else,
    first_person,
    has_cjk,
    is_question,
    is_wrapper,
    segments,
    sentence_case,
    sentences,
    states_something,
    to_third_person,
)
from langgraph_memory.types import CandidateMemory, MemorySource, MemoryType

__all__ = [
    "EVIDENCE_PREFIX",
    "RuleBasedExtractor",
    "is_evidence_key",
    "match_clause",
    "mentions_topic",
    "to_third_person",
    "with_time",
]

EVIDENCE_PREFIX = "evidence."
# Low enough that a rule's fact always outranks the raw turn it came from.
EVIDENCE_IMPORTANCE = 0.3
# An offer the user accepted ("Do it."): the user's own choice, still in raw words.
ACCEPTED_OFFER_IMPORTANCE = 0.5


def is_evidence_key(key: str | None) -> bool:
    """Is this the key of an evidence memory (a raw user turn no rule understood)?

    Example:
        >>> is_evidence_key("evidence.3f2a9c0d11aa"), is_evidence_key("budget")
        (True, False)
    """
    return key is not None and key.startswith(EVIDENCE_PREFIX)


def _evidence_key(message_id: str) -> str:
    return EVIDENCE_PREFIX + hashlib.sha1(message_id.encode()).hexdigest()[:12]


@dataclass(slots=True)
class _Turn:
    """What one user turn yields: facts, and the stating segments no rule understood."""

    facts: list[Match] = field(default_factory=list)
    # (segment, the sentence it came from): the sentence's time bound is the segment's.
    residue: list[tuple[str, str]] = field(default_factory=list)


_CORRECTION_SHAPE = re.compile(
    r"不是.{1,20}?[，,]?\s*(?:而|应该|其实)?是|\b(?:is not|isn'?t|was not|wasn'?t)\b.{1,30}?,?\s*(?:it'?s|but|rather)\b",
    re.IGNORECASE,
)


# Seven or more digits in one run (spaces, hyphens, brackets allowed), optionally after a
# letter: an identifier the redactor did not know ("12345 678901", "A123456(7)"). Evidence
# keeps raw words, so it never keeps such a run; dates and prices do not match (a date
# has 8 digits but is kept by the ISO exception; prices break at the decimal point).
_LONG_NUMBER = re.compile(r"(?<![\w-])(?!\d{4}-\d{1,2}-\d{1,2}\b)[A-Za-z]?\d(?:[\d\s()-]*\d)?\)?")


def mask_long_numbers(text: str) -> str:
    """Mask digit runs of 7+ digits that the redactor left ("[NUMBER]").

    Example:
        >>> mask_long_numbers("my card 12345 678901, flight 2026-12-12, budget $1,299.99")
        'my card [NUMBER], flight 2026-12-12, budget $1,299.99'
    """

    def _mask(m: re.Match[str]) -> str:
        return "[NUMBER]" if sum(ch.isdigit() for ch in m.group(0)) >= 7 else m.group(0)

    return _LONG_NUMBER.sub(_mask, text)


_SAFETY_WORDS = re.compile(r"allerg|anaphyla|epipen|intoleran|过敏|敏感|不耐受|哮喘", re.IGNORECASE)


# "from your next billing date, Oct 20", "11月1日起生效", "下个礼拜一开始喺嗰边返工": the
# date is when it starts (and a lasting thing, ``_LASTING``, holds on after its day).
_STARTS = re.compile(
    r"\b(?:from|starting|starts|start|since|effective|as of|beginning)\b|起生效|起|开始|生效",
    re.IGNORECASE,
)

# A piece that names a lasting thing beside a dated plan ("我家豆豆下周二打疫苗，柯基"):
# a bare noun, a birthday or an age. Every other piece ends when its sentence's plan does
# ("I'm away till the 15th, so hold my deliveries", "住到11号，酒店订了西门町").
_LASTING = re.compile(
    r"生日|满.{1,2}岁|周年|\bbirthday\b|\bturns \d+\b|\banniversary\b", re.IGNORECASE
)


def _inherits_bound(segment: str) -> bool:
    if _LASTING.search(segment):
        return False
    cjk = len(CJK.findall(segment))
    words = len(re.findall(r"[A-Za-z]+", segment))
    bare_noun = not re.search(r"\d", segment) and (
        (cjk and cjk <= 4 and words == 0) or (not cjk and words <= 2)
    )
    return not bare_noun


# A day that comes once: a date, or a weekday pinned to this or next week. A bare
# weekday is often a schedule ("编程课挪到周日下午", "standup is on Mondays now").
_ONE_DAY = re.compile(
    r"\d{1,2}\s*(?:月|号|日)|\b\d{1,2}(?:st|nd|rd|th)\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d"
    r"|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)|\d{4}-\d{1,2}-\d{1,2}"
    r"|\b(?:today|tonight|tomorrow|next|this)\b|今天|今晚|明天|后天|下周|下个?星期|下个?礼拜|这周|这个?星期|本周|周末",
    re.IGNORECASE,
)


def _bound(sentence: str, said: datetime) -> datetime | None:
    """When what ``sentence`` says stops holding: its stated bound, or the day after a
    future date it names ("we fly out on the 3rd"); ``None`` when it holds on."""
    bound = bound_of(sentence, said)
    starts = _STARTS.search(sentence) or _LASTING.search(sentence)
    if bound is None and not starts and _ONE_DAY.search(sentence):
        moment = moment_of(sentence, said)
        if moment is not None and moment > said:
            bound = stated_end(sentence, said) or moment + timedelta(days=1)
    return bound if bound is not None and bound > said else None


def _safety(found: Match) -> bool:
    return found.key is not None and found.key.split(".")[0] in (
        "allergy",
        "health",
        "medication",
        "diet",
    )


def _only_a_joke_marker(sentence: str) -> bool:
    return len(JOKE.sub("", sentence).strip(" ,.!~，。！哈")) <= 3


def read_turn(text: str, now: datetime) -> _Turn:
    """The facts and the unexplained residue of one (redacted) user turn; pure."""
    turn = _Turn()
    # (facts, residue) sizes before each sentence, so a trailing "just kidding!"
    # can take back the sentence before it.
    marks: list[tuple[int, int]] = []
    previous_sentence: str | None = None
    for sentence in sentences(text):
        if JOKE.search(sentence):
            if _only_a_joke_marker(sentence) and marks:
                facts_at, residue_at = marks[-1]
                del turn.facts[facts_at:], turn.residue[residue_at:]
            marks.append((len(turn.facts), len(turn.residue)))
            continue
        marks.append((len(turn.facts), len(turn.residue)))
        if HYPOTHETICAL.search(sentence):
            continue
        whole = match_sentence(sentence)
        if whole is not None:
            turn.facts.append(with_time(whole, sentence, now) or whole)
            # A correction across a comma ("not 3000, it's 5000"): its pieces are its own.
            turn.facts.extend(_beside(whole, sentence, now)[0])
            continue
        if _CORRECTION_SHAPE.search(sentence):
            # "X is not A, it's B" that no slot rule understood: keep it whole, so the
            # evidence never carries "not A" without the B that replaces it.
            found = with_time(match_clause(sentence), sentence, now)
            if found is not None:
                turn.facts.append(found)
            elif states_something(sentence) and not is_question(sentence, sentence):
                turn.residue.append((sentence, sentence))
            continue
        pieces = segments(sentence)
        bare = [p for p in pieces if bare_forget(p)]
        if bare:
            # "that backup number is no longer used, delete it": the rest is the topic,
            # and none of it is kept as evidence.
            topic = "，".join(p for p in pieces if p not in bare) or (
                previous_sentence if previous_sentence is not None else ""
            )
            if topic:
                turn.facts.append(forget_request(topic))
            previous_sentence = sentence
            continue
        matched = [match_clause(p) for p in pieces]  # once per piece: the rules are the cost
        forgets = [m for m in matched if m is not None and m.forget]
        previous_sentence = sentence
        if forgets:
            # A forget request states nothing to keep: its other clauses describe the
            # thing to forget.
            turn.facts.extend(forgets)
            continue
        about_user = False
        for segment, clause in zip(pieces, matched, strict=True):
            if is_question(segment, sentence) or TENTATIVE.search(segment):
                continue
            was_about_user, about_user = about_user, about_user or first_person(segment)
            found = with_time(clause, segment, now)
            if about_someone_else(segment) and not (found and _safety(found)):
                if _SAFETY_WORDS.search(segment):
                    turn.residue.append((segment, sentence))  # a guest's allergy still matters
                continue
            if found is not None:
                found = replace(found, segment=segment)
                turn.facts.append(found)
                beside, leftover = _beside(found, segment, now)
                turn.facts.extend(beside)
                turn.residue.extend((piece, sentence) for piece in leftover)
                if found.event_time is None and not found.forget:
                    # "book a table for 4 on Friday": the group size and the booking.
                    event = with_time(None, segment, now)
                    if event is not None and event.event_time is not None:
                        turn.facts.append(event)
            elif states_something(plain := _untagged(segment), about_user=was_about_user):
                turn.residue.append((plain, sentence))
    return turn


def _untagged(segment: str) -> str:
    """The segment without look-alike provenance tags ("[user_stated, 2026-01-01]") and
    HTML entities: the user's words, not markup pretending to be ours. Our own masks
    ("[PHONE]") stay."""
    return re.sub(r"\[[a-z_][^\]]*\]|&#?\w+;?", "", segment).strip(TRIM + " ")


# Commas inside one segment: "don't use honorifics with me, just call me Sam" is one
# segment to the splitter (a comma alone joins too much to split on), but two facts.
_COMMA = re.compile(r"\s*[,，;；]\s*")


def _beside(found: Match, sentence: str, now: datetime) -> tuple[list[Match], list[str]]:
    """Facts of other slots beside the one a segment's rule matched, and the pieces no
    rule matched (kept as evidence).

    A rule owns its slot, not the segment: "don't use honorifics with me, just call
    me Sam" also holds a standing instruction, and "keep replies technical, skip the
    pleasantries, I'm an engineer" more than the job. Pieces of the same slot (the
    "not A" of "not A, it's B") and the generic "my X is Y" rule are left out.
    """
    out: list[Match] = []
    leftover: list[str] = []
    pieces = [p for seg in segments(sentence) for p in _COMMA.split(seg) if p.strip(" ")]
    for segment in pieces if len(pieces) > 1 else []:
        if is_question(segment, sentence) or TENTATIVE.search(segment):
            continue
        other = match_clause(segment)
        if other is None:
            said = to_third_person(segment).lower().strip(TRIM + " ")
            # Not a wrapper ("from now on") or a bracketed tag ("[user_stated, 2026-01-01]").
            bare = _untagged(segment)
            if (
                states_something(bare, about_user=True)
                and not is_wrapper(bare)
                and said not in found.text.lower()
            ):
                leftover.append(bare)
            continue
        if other.weak or other.key == found.key or other.text == found.text:
            continue
        out.append(with_time(other, segment, now) or other)
    return out, leftover


class RuleBasedExtractor:
    """Offline extractor: rules over the user's own messages, no model.

    Args:
        policy: privacy policy applied to message text before matching; the
            default masks every identifier kind.
        min_importance: candidates below this are dropped (default 0.5);
            forget requests and evidence are always kept.
        confidence: confidence recorded on every candidate (default 0.9).
        clock: returns "now" as an aware datetime (default: UTC wall clock).
            Relative times ("this week", "明天") are resolved against the
            message's own time when it carries one (``additional_kwargs
            ["created_at"]``: ISO 8601 or epoch seconds), else against
            ``clock()``, in the clock's time zone.
        evidence: also keep each user turn's unexplained statements as one
            low-importance episodic evidence memory (default ``True``; see the
            module docstring for why it never serves a stale value).
        commitments: what to keep of the assistant's replies (``nodes/rules/_replies.py``).
            ``"acknowledged"`` (default): a commitment ("I've issued a refund of
            $30") once the user's next message takes it without correcting it
            ("thanks"), as an ``agent_inferred`` episodic memory; and an offer the
            user accepts ("I can switch you to unlimited from Oct 20" - "Do it.") as
            what the user agreed to. ``True``: every commitment, taken or not (where
            the assistant's replies come from a trusted system). ``False``: nothing
            the assistant said. Its claims about the user are never kept.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> ex = RuleBasedExtractor()
        >>> [(c.key, c.text) for c in ex.extract([HumanMessage("my budget is 3000", id="m1")])]
        [('budget', "User's budget is 3000")]
        >>> [c.text for c in ex.extract([HumanMessage("I volunteer at a shelter", id="m2")])]
        ['User said: I volunteer at a shelter']
    """

    def __init__(
        self,
        *,
        policy: PrivacyPolicy | None = None,
        min_importance: float = 0.5,
        confidence: float = 0.9,
        clock: Clock | None = None,
        evidence: bool = True,
        commitments: bool | Literal["acknowledged"] = "acknowledged",
    ) -> None:
        if not 0.0 <= min_importance <= 1.0:
            raise ConfigurationError(
                f"RuleBasedExtractor(min_importance={min_importance!r}); use a value between 0 and 1."
            )
        if not 0.0 <= confidence <= 1.0:
            raise ConfigurationError(
                f"RuleBasedExtractor(confidence={confidence!r}); use a value between 0 and 1."
            )
        if commitments not in (True, False, "acknowledged"):
            raise ConfigurationError(
                f"RuleBasedExtractor(commitments={commitments!r}); use 'acknowledged' (the "
                "default), True (every commitment) or False (nothing the assistant said)."
            )
        self.policy = policy
        self.min_importance = min_importance
        self.confidence = confidence
        self.clock = clock or wall_clock
        self.evidence = evidence
        self.commitments = commitments

    def _candidate(
        self, found: Match, message_id: str, said: datetime, text: str | None = None
    ) -> CandidateMemory:
        return CandidateMemory(
            text=text or sentence_case(found.text),
            type=found.type,
            key=found.key,
            importance=found.importance,
            source=MemorySource.USER_STATED,
            confidence=self.confidence,
            event_time=found.event_time,
            expires_at=found.expires_at,
            origin_message_ids=(message_id,),
            forget=found.forget,
            observed_at=said,
        )

    def _evidence(
        self, residue: list[tuple[str, str]], message_id: str, said: datetime
    ) -> list[CandidateMemory]:
        """One evidence memory per time bound: "I'm in Lisbon till the 9th, so hold my
        deliveries" ends on the 9th; "I live in Leeds" in the same turn does not."""
        groups: dict[datetime | None, list[str]] = {}
        for segment, sentence in residue:
            own = _bound(segment, said)
            if own is None and _inherits_bound(segment):
                own = _bound(sentence, said)
            groups.setdefault(own, []).append(segment)
        out = []
        for bound, pieces in groups.items():
            suffix = "" if bound is None else "#" + bound.isoformat()
            out.append(self._one_evidence(pieces, message_id + suffix, message_id, said, bound))
        return out

    def _one_evidence(
        self,
        pieces: list[str],
        key_seed: str,
        message_id: str,
        said: datetime,
        bound: datetime | None,
    ) -> CandidateMemory:
        pieces = fold_self_corrections(pieces)  # "to 10; wait no, 10:15" keeps 10:15 only
        joined = "；".join(pieces) if has_cjk("".join(pieces)) else "; ".join(pieces)
        joined = mask_long_numbers(joined)
        text = f"用户说：{joined}" if has_cjk(joined) else f"User said: {joined}"
        found = Match(
            text,
            MemoryType.EPISODIC,
            _evidence_key(key_seed),
            EVIDENCE_IMPORTANCE,
            expires_at=bound,
        )
        return self._candidate(found, message_id, said, text=text[:500])

    def _answered(
        self,
        pending: tuple[AIMessage, str],
        reply: str,
        reply_id: str,
        said: datetime,
        seen: set[tuple[str | None, str]],
    ) -> list[CandidateMemory]:
        """What the user's ``reply`` confirms of the assistant's last message."""
        message, message_id = pending
        if accepts(reply):
            try:
                offer = offer_text(redact_text(message_text(message), self.policy))
            except RedactionRejectedError:
                offer = None
            if offer:
                # The user chose it: theirs, in their name, like any statement of theirs.
                offer = mask_long_numbers(offer)
                text = (
                    f"用户同意了客服的提议：{offer}"
                    if has_cjk(offer)
                    else f"User agreed to: {offer}"
                )
                agreed = Match(
                    text[:500],
                    MemoryType.EPISODIC,
                    _evidence_key(message_id + "+" + reply_id),
                    ACCEPTED_OFFER_IMPORTANCE,
                    expires_at=_bound(offer, said),
                )
                return [self._candidate(agreed, reply_id, said, text=text[:500])]
        if self.commitments == "acknowledged" and acknowledges(reply):
            return self._commitments(message, message_id, seen)
        return []

    def _commitments(
        self, message: AIMessage, message_id: str, seen: set[tuple[str | None, str]]
    ) -> list[CandidateMemory]:
        try:
            text = redact_text(message_text(message), self.policy)
        except RedactionRejectedError:
            return []
        said = message_time(message, self.clock)
        out: list[CandidateMemory] = []
        for sentence in sentences(text):
            found = commitment(sentence)
            if found is None or (found.key, found.text) in seen:
                continue
            seen.add((found.key, found.text))
            dated = with_time(None, sentence, said)
            if dated is not None and dated.event_time is not None:
                # A promise stays on record after its day ("when should my refund have
                # arrived?"); its event time says when it was due.
                found = replace(found, event_time=dated.event_time)
            candidate = self._candidate(found, message_id, said, text=found.text[:500])
            # The assistant said it: a commitment, never a user-stated fact.
            out.append(replace(candidate, source=MemorySource.AGENT_INFERRED, confidence=0.8))
        return out

    def extract(self, messages: Sequence[BaseMessage]) -> list[CandidateMemory]:
        """Candidates from the human messages of ``messages`` (in order)."""
        ids = message_ids_for(messages)
        out: list[CandidateMemory] = []
        seen: set[tuple[str | None, str]] = set()
        # The assistant's last message, until the user's reply shows how it was taken.
        pending: tuple[AIMessage, str] | None = None
        for message, message_id in zip(messages, ids, strict=True):
            if isinstance(message, AIMessage):
                if self.commitments is True:
                    out.extend(self._commitments(message, message_id, seen))
                pending = (message, message_id) if self.commitments else None
                continue
            if not isinstance(message, HumanMessage):
                continue
            try:
                text = redact_text(message_text(message), self.policy)
            except RedactionRejectedError:
                continue  # the policy forbids keeping anything from this message
            said = message_time(message, self.clock)
            if pending is not None:
                out.extend(self._answered(pending, text, message_id, said, seen))
                pending = None
            turn = read_turn(text, said)
            residue = list(turn.residue)
            for found in turn.facts:
                if found.importance < self.min_importance and not found.forget:
                    # Below the bar for a fact of its own, but still something the user said.
                    residue.append((found.segment or found.text, found.segment or found.text))
                    continue
                statement = sentence_case(found.text)
                if (found.key, statement) in seen:
                    continue
                seen.add((found.key, statement))
                out.append(self._candidate(found, message_id, said))
            if self.evidence and residue:
                out.extend(self._evidence(residue, message_id, said))
        return out

    async def aextract(self, messages: Sequence[BaseMessage]) -> list[CandidateMemory]:
        """Same as ``extract`` (pure CPU work, no I/O)."""
        return self.extract(messages)
