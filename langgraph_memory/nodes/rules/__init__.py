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

Cantonese (唔/冇/钟意/食) and traditional characters (請/們/體) are matched
through a Mandarin normalisation; a fact keeps the user's own characters
("回覆請用繁體中文" -> "用户希望用繁體中文交流"). Jokes ("just kidding", "开玩笑的"),
hypotheticals ("if I were ..."), questions and assistant turns stay out.
Laughter is weaker than a joke marker: it takes back only the clause it closes
("he's 6, he's a sheep lol" keeps "he's 6"); leading laughter is a reaction.

**Evidence.** What no rule understood is not thrown away: the segments of a
user turn that state something (not small talk, not a question) become ONE
low-importance episodic "evidence" memory per time bound ("User said: ..."), so
recall can still find them. A statement needs no "I": once the turn is about
the user its subjectless sentences are too ("hey we moved! its a house now,
ground floor"), and English drops the subject ("got a place in Jersey City"),
names it ("Clive's gone veggie") or reports on a thing ("sofa came today, the
arm is torn"). Clauses after someone else's subject stay theirs ("我邻居也买了
台冰箱，说噪音大"). A question keeps the user's detail it carries ("the ottoman I
ordered, #FN-451077, says backordered?"), a piece that is only a pronoun carries
the piece before it ("my sister Anjali ... … her bday is dec 3"). A past report
does not lapse with its day; only a future date or a stated end bounds it. Its key is
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
from typing import Final, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langgraph_memory._redact_text import PLACEHOLDER_PATTERN
from langgraph_memory.clock import Clock, message_time, wall_clock
from langgraph_memory.config import PrivacyPolicy
from langgraph_memory.errors import ConfigurationError, RedactionRejectedError
from langgraph_memory.nodes._messages import is_unanswered
from langgraph_memory.nodes._rules_time import (
    bound_of,
    moment_of,
    part_of_month_end,
    span_end,
    stated_end,
    time_words,
)
from langgraph_memory.nodes.extract import message_ids_for, message_text, redact_text
from langgraph_memory.nodes.rules._clause import match_clause, match_sentence
from langgraph_memory.nodes.rules._commitments import VALIDITY, commitment
from langgraph_memory.nodes.rules._events import MOVE_TO_A_HOME, UNTIL_THEN, with_time
from langgraph_memory.nodes.rules._evidence import shares_salient_term
from langgraph_memory.nodes.rules._forget import (
    bare_forget,
    forget_it_topic,
    forget_previous,
    forget_request,
    is_filler,
    keeps,
    mentions_topic,
    only_forget_requests,
)
from langgraph_memory.nodes.rules._match import Match
from langgraph_memory.nodes.rules._preferences import STANDING_EN
from langgraph_memory.nodes.rules._profile import retracted_allergies
from langgraph_memory.nodes.rules._replies import (
    accepts,
    acknowledges,
    assistant_claims,
    offer_text,
    rebuts,
)
from langgraph_memory.nodes.rules._retire import (
    OWED,
    REPORTED_SAYING,
    fold_self_corrections,
    quotes_a_mistake,
)
from langgraph_memory.nodes.rules._text import (
    CJK,
    EN_REPORT,
    HYPOTHETICAL,
    JOKE,
    LAUGH,
    REPORT,
    TENTATIVE,
    TRIM,
    about_someone_else,
    first_person,
    has_cjk,
    is_hearsay,
    is_question,
    is_wrapper,
    laughed_at,
    restore_script,
    segments,
    sentence_case,
    sentences,
    states_something,
    strip_fillers,
    to_simplified,
    to_third_person,
    uncleft_en,
    without_request_tag,
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
# (Only a Latin letter or digit before it joins it to a word: "身份证110105..." is a number.)
_LONG_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_-])(?!\d{4}-\d{1,2}-\d{1,2}\b)[A-Za-z]?\d(?:[\d\s()-]*\d)?\)?"
)


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
    # (A party or a dinner for it is a plan: "anniversary dinner this Saturday".)
    r"生日(?!派对|聚会|宴|饭|趴|会)|满.{1,2}岁|周年(?!庆|派对|聚会|饭|宴)|\bturns \d+\b"
    r"|\b(?:birthday|b-?day|bday|birthdays|anniversary)\b(?!\s+(?:dinner|party|lunch|meal|trip|getaway|do|drinks))"
    # A move to a new home: the day is when it starts ("12月1号搬去 Prenzlauer Berg").
    r"|" + MOVE_TO_A_HOME,
    re.IGNORECASE,
)


# A short Chinese piece that is a clause, not a bare noun: "在家办公" after "这周我感冒了"
# ends with the week; "柯基" beside a dated plan does not.
_ZH_CLAUSE_START: Final = re.compile(r"^(?:在|去|要|得|会|不|没|先|再|还|也|都|就|改|换|请|住|回)")


def _inherits_bound(segment: str) -> bool:
    if _LASTING.search(segment):
        return False
    if re.search(r"[那这]趟|\b(?:the|that|this) trip\b", segment, re.IGNORECASE):
        return True  # "东京那趟，11/19 走": the trip the dates are of
    cjk = len(CJK.findall(segment))
    words = len(re.findall(r"[A-Za-z]+", segment))
    bare_noun = not re.search(r"\d", segment) and (
        (cjk and cjk <= 4 and words == 0 and not _ZH_CLAUSE_START.match(segment))
        or (not cjk and words <= 2)
    )
    return not bare_noun


# A day that comes once: a date, or a weekday pinned to this or next week. A bare
# weekday is often a schedule ("编程课挪到周日下午", "standup is on Mondays now").
_ONE_DAY = re.compile(
    r"\d{1,2}\s*(?:月|号|日)|\b\d{1,2}(?:st|nd|rd|th)\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d"
    r"|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)|\d{4}-\d{1,2}-\d{1,2}"
    r"|\b(?:today|tonight|tomorrow|next|this)\b|今天|今晚|今早|明天|明早|明晚|后天|下周|下个?星期|下个?礼拜|这周"
    r"|这个?星期|本周|周末"
    # A visit on a weekday comes once: "the plumber is coming Thursday".
    r"|\b(?:coming|comes|arriving|arrives|due|visiting)\s+(?:on\s+)?"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day\b",
    re.IGNORECASE,
)


def _next_midnight(said: datetime) -> datetime:
    return datetime.combine(
        said.date() + timedelta(days=1), datetime.min.time(), tzinfo=said.tzinfo
    )


# What makes a rule lasting whatever its sentence dates: "from now on", "always", "以后".
_LASTING_RULE: Final = re.compile(
    STANDING_EN.pattern
    + r"|以后|以後|今后|今後|往后|从现在开始|每次|一律|总是|總是|永远|永遠|一直|再也",
    re.IGNORECASE,
)
# Days a rule names for itself, or a week that comes round: "周末别 ping 我，周一再说", "每周六".
_OWN_DAYS: Final = re.compile(
    r"周末|週末|工作日|平日|每周|每週|每天|每晚|\b(?:weekends?|weekdays?|every|each|mondays|tuesdays|"
    r"wednesdays|thursdays|fridays|saturdays|sundays)\b",
    re.IGNORECASE,
)
_WEEK_DAY_WORD: Final = re.compile(
    r"\b(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|weekend)s?\b", re.IGNORECASE
)


def _bound(sentence: str, said: datetime) -> datetime | None:
    """When what ``sentence`` says stops holding: its stated bound, or the day after a
    future date it names ("we fly out on the 3rd"); ``None`` when it holds on."""
    sentence = time_words(sentence)
    bound = bound_of(sentence, said)
    if bound is not None and REPORT.search(sentence) and bound <= _next_midnight(said):
        # "the sofa came today but the arm is torn": what happened stays true; only a
        # state of today ("I'm off today") ends with it.
        bound = None
    elif (
        bound is not None
        and EN_REPORT.search(sentence)
        and _WEEK_DAY_WORD.search(sentence)
        and stated_end(sentence, said) is None
    ):
        # "got the keys at the weekend", "the engineer came on Friday": in the past tense a
        # weekday is the last one, not the next (a stated end still holds: "was extended
        # till Friday").
        bound = None
    starts = _STARTS.search(sentence) or _LASTING.search(sentence)
    if bound is None and not starts and not REPORT.search(sentence):
        # "GCSE mocks in the first week of November", "11月下旬出差": over after that part.
        bound = part_of_month_end(sentence, said)
    if bound is None and not starts and _ONE_DAY.search(sentence):
        moment = moment_of(sentence, said)
        if (
            moment is not None
            and moment > said
            and not (REPORT.search(sentence) and moment - said > timedelta(days=180))
        ):
            # (A report naming a month or day that only comes round next year names the
            # past one: "我10月份话费扣了两回" said in November.)
            bound = stated_end(sentence, said) or moment + timedelta(days=1)
    return bound if bound is not None and bound > said else None


# A commitment about "it" ("It's valid until Nov 30") needs the question it answered.
_REFERS_TO_IT = re.compile(
    r"^(?:Assistant (?:said|committed)|客服承诺|客服说)[:：]\s*(?:it|it'?s|that|this|they|它|这)\b",
    re.I,
)


_VISIT = re.compile(
    r"^(?:Assistant said|客服说)[:：].*(?:\b(?:pick ?up|collection|visit|technician|engineer|installer|"
    r"install\w*)\b|上门|取件|安装|师傅)"
    # A commitment that is only a new slot: "客服承诺：已改为10月19日下午2点到5点", "Moved to Tue 2-5pm".
    r"|^(?:Assistant committed|客服承诺)[:：]\s*(?:已?(?:改|调|换)(?:为|到|成)|(?:re)?scheduled (?:for|to)|moved to|"
    r"booked for)?\s*[^,，;；。.]{0,16}?(?:\d{1,2}(?::\d{2})?\s*(?:am|pm)?\s*(?:-|–|to)\s*\d{1,2}(?::\d{2})?\s*(?:am|pm)"
    r"|\d{1,2}[点點](?:半)?\s*(?:到|至|-|~)\s*\d{1,2}[点點])\W*$",
    re.IGNORECASE,
)


def _valid_until(sentence: str, said: datetime) -> datetime | None:
    end = stated_end(time_words(sentence), said) or bound_of(time_words(sentence), said)
    return end if end is not None and end > said else None


def _safety(found: Match) -> bool:
    return found.key is not None and found.key.split(".")[0] in (
        "allergy",
        "health",
        "medication",
        "diet",
    )


def _only_a_joke_marker(sentence: str) -> bool:
    return len(LAUGH.sub("", JOKE.sub("", sentence)).strip(" ,.!~，。！哈")) <= 3


def _without_laughed_clause(sentence: str) -> str:
    """The sentence without its laughter and without the clause the laughter closes
    ("he's 6, he's a sheep lol" -> "he's 6"); empty when nothing else is left."""
    plain, closing = laughed_at(sentence)
    if not closing:
        return plain
    pieces = segments(plain)
    # One segment to the splitter: a comma still closes the laughed-at clause.
    last_comma = max(plain.rfind(","), plain.rfind("，"))
    cut = plain.rfind(pieces[-1]) if len(pieces) > 1 else last_comma
    return plain[:cut].strip(TRIM + " ") if cut > 0 else ""


def read_turn(text: str, now: datetime) -> _Turn:
    """The facts and the unexplained residue of one (redacted) user turn; pure."""
    turn = _Turn()
    # (facts, residue) sizes before each sentence, so a trailing "just kidding!"
    # can take back the sentence before it.
    marks: list[tuple[int, int]] = []
    previous_sentence: str | None = None
    # Once the turn is about the user ("hey we moved!"), its subjectless sentences are
    # too ("its a house now, ground floor").
    about_user = False
    # The stating pieces of this sentence and of the one before, for "her bday is dec 3".
    said_here: list[str] = []
    said_before: list[str] = []
    retracted = retracted_allergies(text)
    for what in retracted:
        # "aspirin 其实没问题", "I'm not allergic to penicillin after all": never true, so
        # the stored allergy goes like a forgotten one (its key only).
        turn.facts.append(
            Match(
                f"用户说对{what}不过敏"
                if has_cjk(what) or has_cjk(text)
                else f"User is not allergic to {what}",
                key=f"allergy.{what}",
                importance=1.0,
                forget=True,
            )
        )
    mistaken = quotes_a_mistake(text)
    for sentence in map(uncleft_en, sentences(text)):
        if said_here:
            said_before, said_here = said_here, []
        if JOKE.search(sentence) or (LAUGH.search(sentence) and _only_a_joke_marker(sentence)):
            if _only_a_joke_marker(sentence) and marks:
                facts_at, residue_at = marks[-1]
                del turn.facts[facts_at:], turn.residue[residue_at:]
            marks.append((len(turn.facts), len(turn.residue)))
            continue
        marks.append((len(turn.facts), len(turn.residue)))
        if LAUGH.search(sentence):
            sentence = _without_laughed_clause(sentence)
            if not sentence:
                continue
        if HYPOTHETICAL.search(sentence):
            continue
        it_topic = forget_it_topic(sentence)
        if it_topic is not None:
            turn.facts.append(forget_request(it_topic))
            previous_sentence = sentence
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
            found = with_time(_clause(sentence), sentence, now)
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
            topic = "，".join(
                p for p in pieces if p not in bare and not keeps(p) and not is_filler(p)
            )
            if (
                not topic
                and previous_sentence is not None
                and len(marks) >= 2
                and not only_forget_requests(previous_sentence)
            ):
                # "我上次讲 roaming 的 thing, 其实是我老公的 line. 你不用 keep.": the sentence
                # before is the topic, and what it left is no longer kept either.
                topic = previous_sentence
                facts_at, residue_at = marks[-2]
                del turn.facts[facts_at:], turn.residue[residue_at:]
            if topic:
                turn.facts.append(forget_request(topic))
            elif len(marks) == 1 and only_forget_requests(text):
                # "Actually, please forget that." as the whole turn: what it points at
                # is the user's message before this one.
                turn.facts.append(forget_previous(has_cjk(sentence)))
            previous_sentence = sentence
            continue
        pieces = [without_request_tag(p) for p in pieces]
        read_as = _with_carried_subject(pieces)
        matched = [_read(p, r) for p, r in zip(pieces, read_as, strict=True)]
        forgets = [m for m in matched if m is not None and m.forget]
        previous_sentence = sentence
        if forgets:
            # A forget request states nothing to keep: its other clauses describe the
            # thing to forget.
            turn.facts.extend(forgets)
            continue
        someone_else = False
        instruction: int | None = None  # the fact of this sentence's last standing instruction
        for segment, as_read, clause in zip(pieces, read_as, matched, strict=True):
            if TENTATIVE.search(segment) or (mistaken and REPORTED_SAYING.match(segment)):
                # "上次说我对 aspirin 过敏，我说错了": what the user now says was wrong.
                continue
            if is_question(segment, sentence):
                # "where is my order #FN-22841?", "the lamp i ordered, #LX-2210, says
                # delayed?": the question asks, but the detail it carries is the user's.
                if clause is not None and _is_record(clause):
                    turn.facts.append(replace(clause, segment=segment))
                elif _carries_own_detail(segment):
                    turn.residue.append((_untagged(segment), sentence))
                continue
            was_about_user, about_user = about_user, about_user or first_person(segment)
            found = with_time(clause, segment, now, sentence)
            if about_someone_else(segment) or is_hearsay(segment):
                someone_else = True
            elif first_person(segment) or _NAMED_SUBJECT_START.match(segment):
                someone_else = False
            # "我邻居也买了台冰箱，说噪音大得睡不着": the clauses after it are still the
            # neighbour's until the user names a new subject.
            if someone_else and not (found and _safety(found)):
                if _SAFETY_WORDS.search(segment):
                    turn.residue.append((segment, sentence))  # a guest's allergy still matters
                continue
            if found is not None:
                found = replace(found, segment=segment)
                if (
                    found.type is MemoryType.PROCEDURAL
                    and found.expires_at is None
                    and not _LASTING_RULE.search(segment)
                    and not _OWN_DAYS.search(sentence)
                    and (end := _bound(sentence, now)) is not None
                ):
                    # "儿子下周一到周三期中考试，晚上别安排事": a rule for the dated plan it
                    # is said with ends with it; "from now on" or "always" makes it lasting.
                    found = replace(found, expires_at=end)
                turn.facts.append(found)
                instruction = len(turn.facts) - 1 if found.type is MemoryType.PROCEDURAL else None
                beside, leftover = _beside(found, as_read if _safety(found) else segment, now)
                turn.facts.extend(beside)
                turn.residue.extend((piece, sentence) for piece in leftover)
                if found.event_time is None and not found.forget:
                    # "book a table for 4 on Friday": the group size and the booking.
                    event = with_time(None, segment, now, sentence)
                    if event is not None and event.event_time is not None:
                        turn.facts.append(event)
            elif instruction is not None and _ELABORATES.match(plain := _untagged(segment)):
                # "以后回我别整那么长，三五句话就行": the clause after an instruction says how.
                last = turn.facts[instruction]
                joiner = "，" if has_cjk(plain) else ", "
                text = f"{last.text.rstrip(TRIM)}{joiner}{plain}"
                turn.facts[instruction] = replace(last, text=text)
            elif states_something(plain := _untagged(segment), about_user=was_about_user):
                # "her bday is dec 3" after "my sister Anjali ...": the evidence carries
                # who "her" is, the piece before it (dropped again if its group has it).
                context = said_here[-1:] or said_before[-1:]
                if context and _POINTS_BACK.search(plain):
                    plain = f"{context[0]}{_CONTEXT}{plain}"
                turn.residue.append((plain, sentence))
                instruction = None
            said_here.append(_untagged(segment))
    if retracted:
        # The retraction itself ("aspirin 其实没问题") would still name the allergy.
        turn.residue = [(p, w) for p, w in turn.residue if not retracted_allergies("过敏 " + p)]
    return turn


# A new subject that is not the user: a name ("Clive's gone veggie") or kin ("my wife").
_NAMED_SUBJECT_START = re.compile(
    r"^(?-i:[A-Z][a-z]+)(?:'s|\s+(?:is|was|has|had))\b|^(?:my|our)\s+(?:wife|husband|son|daughter|"
    r"kids?|children|mum|mom|dad|mother|father|partner|sister|brother|baby)\b"
    r"|^(?:我)?(?:老婆|老公|妻子|丈夫|儿子|女儿|孩子|爸|妈|父亲|母亲|哥|姐|弟|妹)",
    re.IGNORECASE,
)


# Between a pronoun piece and the piece it refers back to: the bound is the pronoun
# piece's own ("my sister is visiting next week … her bday is dec 3" does not lapse).
_CONTEXT = " … "


# A piece whose subject is only a pronoun ("her bday is dec 3", "他下周生日").
_NAMES_NO_ONE = re.compile(
    r"^(?:(?:and|but|so|also)\s+)?(?:he|she|they|his|her|their|him|them|he'?s|she'?s|they'?re|"
    r"it|it'?s|its|it was|that was)\b"
    r"(?!.*(?<!^)\b(?!(?:mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
    r"[a-z]*\b)(?-i:[A-Z][a-z]+))|^(?:他|她|佢|他们|她们|他的|她的)(?![^，。]*(?-i:[A-Z][a-z]))",
    re.IGNORECASE,
)
# A piece that points back at the one before ("... for it", "她...").
_POINTS_BACK = re.compile(
    _NAMES_NO_ONE.pattern
    + r"|\b(?:for|to|at|about|with|after|before) (?:it|that|them|him|her)\s*$",
    re.IGNORECASE,
)


# Chinese drops a subject it just named: "我儿子叫小宝，今年五岁，对花生过敏" - the
# allergy is the son's. A piece that opens with a kin word or a pet sets the subject;
# one that opens with a pronoun or another subject ends it.
_ZH_KIN_SUBJECT = re.compile(
    r"^(?:我|我们)?(?:家|的|家的)?(儿子|女儿|闺女|孩子|小孩|宝宝|娃|老婆|妻子|太太|媳妇|老公|丈夫|爱人|"
    r"妈妈|母亲|我妈|爸爸|父亲|我爸|哥哥|弟弟|姐姐|妹妹|奶奶|外婆|姥姥|爷爷|外公|姥爷|狗狗|狗|猫咪|猫|宠物)"
)
_ZH_OWN_SUBJECT = re.compile(r"^(?:我|你|您|他|她|它|咱|这|那|[A-Za-z])")


# English names the subject once too: "my wife Ana, she's allergic to shellfish",
# "my son Leo, he's 5, allergic to kiwi".
_EN_KIN_SUBJECT = re.compile(
    r"\b(?:my|our)\s+(son|daughter|kid|child|baby|wife|husband|partner|mum|mom|mother|dad|father|"
    r"brother|sister|grandson|granddaughter|grandma|grandpa|dog|cat)\b",
    re.IGNORECASE,
)
_EN_PRONOUN_OPENING = re.compile(
    r"^(?:(?:and|but|also|so|plus)\s+)?(?:he|she|they)(?:'s|'re)?\b", re.IGNORECASE
)
_EN_BARE_PREDICATE = re.compile(
    r"^(?:allergic|intolerant|lactose|diabetic|coeliac|celiac|vegetarian|vegan)\b", re.IGNORECASE
)


def _en_with_subject(piece: str, subject: str) -> str | None:
    """ "she's allergic to shellfish" -> "my wife is allergic to shellfish"; None if the
    piece does not open with the pronoun or a bare predicate."""
    m = _EN_PRONOUN_OPENING.match(piece)
    if m is not None:
        verb = {"'s": " is", "'re": " are"}.get(m.group(0)[-2:].lower(), "")
        return f"{subject}{verb}{piece[m.end() :]}"
    if _EN_BARE_PREDICATE.match(piece):
        return f"{subject} is {piece}"
    return None


def _read(piece: str, as_read: str) -> Match | None:
    """The rules on one piece (once per piece: the rules are the cost). With its subject
    put back only a safety fact is taken ("she's allergic to shellfish" is the wife's);
    anything else is read as said, so the generic "my X is Y" slot is not overwritten."""
    if as_read != piece:
        carried = _clause(as_read)
        if carried is not None and _safety(carried):
            return carried
    return _clause(piece)


def _with_carried_subject(pieces: list[str]) -> list[str]:
    """The pieces as the rules should read them, a dropped subject put back."""
    out: list[str] = []
    subject: str | None = None
    for piece in pieces:
        if not has_cjk(piece):
            kin_en = next(reversed(list(_EN_KIN_SUBJECT.finditer(piece))), None)  # the last named
            carried = _en_with_subject(piece, subject) if subject else None
            if kin_en is not None:
                subject = f"my {kin_en.group(1).lower()}"
            elif carried is None:
                subject = None
            out.append(carried or piece)
            continue
        kin = _ZH_KIN_SUBJECT.match(piece)
        if kin is not None:
            pet = kin.group(1) in ("狗狗", "狗", "猫咪", "猫", "宠物")
            subject = ("我家" if pet else "我") + kin.group(1)
        elif _ZH_OWN_SUBJECT.match(piece):
            subject = None
        elif subject is not None:
            out.append(subject + piece)
            continue
        out.append(piece)
    return out


def _is_record(found: Match) -> bool:
    """An identifier the user gave: order, ticket, booking or tracking number."""
    return found.key is not None and found.key.split(".")[0] in (
        "order",
        "ticket",
        "case",
        "booking",
        "reservation",
        "confirmation",
        "tracking",
    )


# A code, an amount, a date or a masked identifier: "#FN-451077", "$249", "12月3号", "[EMAIL]".
_DETAIL = re.compile(
    r"#?\b[A-Z]{1,5}-?\d{3,}\b|[$¥£€]\s?\d|\d+\s?(?:元|块|号|日|月)|\d{3,}|"
    + PLACEHOLDER_PATTERN
    + r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d",
    re.IGNORECASE,
)


# "can I move my flight to Dec 12?", "如果改到12号要加钱吗": asking about a change is not one.
_ASKS_ABOUT_A_CHANGE = re.compile(
    r"^(?:can|could|should|may|would|is it possible|how (?:do|can))\s+(?:i|we)\b"
    r"|\b(?:change|move|switch|cancel|upgrade|downgrade|reschedule|swap)\b|改|换|取消|如果|要是",
    re.IGNORECASE,
)


# A short clause with no subject of its own, after a standing instruction: how to follow
# it ("三五句话就行", "just the code"), not a new statement ("我手机上看", "I'm on mobile").
_ELABORATES = re.compile(
    r"^(?!(?:我|你|他|她|咱|i|i'm|we|my|you|he|she|they|it|its|it's|that|this)\b)"
    r"(?:[\u4e00-\u9fff\w]{1,10}(?:就行|就好|就可以|即可|足够|够了)$"
    r"|(?:just|only|max|at most|no more than)\b[^,.;]{1,30}$)",
    re.IGNORECASE,
)


def _carries_own_detail(segment: str) -> bool:
    """A question that names something of the user's by its detail ("my refund of $40?")."""
    return (
        first_person(segment)
        and bool(_DETAIL.search(segment))
        and not HYPOTHETICAL.search(segment)
        and not _ASKS_ABOUT_A_CHANGE.search(segment)
    )


def _clause(segment: str) -> Match | None:
    """``match_clause``, with the user's traditional characters put back into the fact
    ("回覆請用繁體中文" -> "用户希望用繁體中文交流"): the rules read simplified."""
    found = match_clause(segment)
    if found is None:
        return None
    plain = strip_fillers(segment)
    simple = to_simplified(plain)
    return (
        found if simple == plain else replace(found, text=restore_script(found.text, simple, plain))
    )


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
    read_as = _with_carried_subject(pieces)
    for segment, as_read in zip(pieces if len(pieces) > 1 else [], read_as, strict=False):
        if is_question(segment, sentence) or TENTATIVE.search(segment):
            continue
        other = _read(segment, as_read)
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


# A reply that puts an end date on what the user asked for: "the Shinjuku rate is held until
# 20 November", "the price is locked till Friday", "名额给您保留到周五".
_HELD_UNTIL: Final = re.compile(
    r"\b(?:held|holding|on hold|reserved|kept|locked|frozen)\b[^.;!?]{0,40}?\b(?:until|till|through)\b"
    r"|保留(?:到|至)|留到|锁定到|冻结到|预留到",
    re.IGNORECASE,
)


def _bound_by_reply(
    out: list[CandidateMemory],
    asked: Sequence[int],
    reply: AIMessage,
    policy: PrivacyPolicy | None,
    clock: Clock,
) -> None:
    """The user's request ends when the assistant's answer bounds it: "can you hold that
    Shinjuku rate?" - "Yes, held until 20 November". Only the evidence of the message the
    reply answers, and only pieces naming what the bounded sentence names."""
    if not asked:
        return
    try:
        text = redact_text(message_text(reply), policy)
    except RedactionRejectedError:
        return
    said = message_time(reply, clock)
    for sentence in sentences(text):
        if not (VALIDITY.search(sentence) or _HELD_UNTIL.search(sentence)):
            continue
        end = _valid_until(sentence, said)
        if end is None:
            continue
        for i in asked:
            cand = out[i]
            if cand.expires_at is None and shares_salient_term(cand.text, sentence):
                out[i] = replace(cand, expires_at=end)


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
        self, residue: list[tuple[str, str]], message_id: str, said: datetime, turn: str = ""
    ) -> list[CandidateMemory]:
        """One evidence memory per time bound: "I'm in Lisbon till the 9th, so hold my
        deliveries" ends on the 9th; "I live in Leeds" in the same turn does not. "Until
        then" ends when the day named before it in the turn comes ("We move on the 7th.
        Until then, post to my mum's")."""
        groups: dict[datetime | None, list[str]] = {}
        for segment, sentence in residue:
            own_words = segment.rsplit(_CONTEXT, 1)[-1]
            own = _bound(own_words, said)
            if own is None and UNTIL_THEN.search(own_words) and sentence in turn:
                then = moment_of(time_words(turn[: turn.index(sentence)]), said)
                own = then if then is not None and then > said else None
            if own is None and _inherits_bound(own_words):
                own = _bound(sentence, said)
            elif own is not None and (end := stated_end(time_words(sentence), said)) and end > own:
                # "11/19 走，11/24 回": the day out is part of a trip that ends on the 24th.
                own = end
            group = groups.setdefault(own, [])
            context = segment[: -len(own_words) - len(_CONTEXT)] if own_words != segment else ""
            if context and all(piece in group for piece in context.split("; ")):
                segment = own_words  # its referent is already in the same memory
            group.append(segment)
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
        asked: str = "",
    ) -> list[CandidateMemory]:
        """What the user's ``reply`` confirms of the assistant's last message (which
        answered the user's ``asked``)."""
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
        if self.commitments == "acknowledged":
            if acknowledges(reply):
                return self._commitments(message, message_id, seen, asked)
            # "Eh? Tama's passport is fine" after "Updated: Rarotonga 14 to 20 Dec. I've also
            # noted Tama's passport expires": what the reply disputes goes, the rest holds.
            return self._commitments(message, message_id, seen, asked, disputed=reply)
        return []

    def _commitments(
        self,
        message: AIMessage,
        message_id: str,
        seen: set[tuple[str | None, str]],
        asked: str = "",
        disputed: str = "",
    ) -> list[CandidateMemory]:
        """The commitments in one assistant message; ``asked`` is the user's message it
        answered, kept beside a commitment that only says "it" ("It's valid until Nov 30").
        ``disputed``: the user's reply questioned or corrected the message; only the
        commitments it shares no word with are kept, and none when it touches none of them
        (then it may dispute the whole message: "is that the morning one?")."""
        try:
            text = redact_text(message_text(message), self.policy)
        except RedactionRejectedError:
            return []
        said = message_time(message, self.clock)
        found_by_key: dict[str | None, tuple[Match, str]] = {}
        touched = False
        for sentence in sentences(text):
            if disputed and shares_salient_term(sentence, disputed):
                touched = True  # the reply names what it disputes
                continue
            found = commitment(sentence)
            if found is None:
                continue
            if found.key in found_by_key:
                # "It ships Oct 8; delivery window Oct 12-14": one slot, one memory.
                earlier, first = found_by_key[found.key]
                found = replace(
                    earlier, text=f"{earlier.text.rstrip(';；')}; {sentence.strip(TRIM + ';；')}"
                )
                sentence = f"{first}; {sentence}"
            found_by_key[found.key] = (found, sentence)
        if disputed and not touched:
            return []
        out: list[CandidateMemory] = []
        for found, sentence in found_by_key.values():
            if (found.key, found.text) in seen:
                continue
            seen.add((found.key, found.text))
            if asked and _REFERS_TO_IT.search(found.text):
                found = replace(found, text=f"{found.text} (re: {mask_long_numbers(asked)[:120]})")
            dated = with_time(None, sentence, said)
            if dated is not None and dated.event_time is not None:
                # A promise stays on record after its day ("when should my refund have
                # arrived?"); its event time says when it was due.
                found = replace(found, event_time=dated.event_time)
            if _VISIT.search(found.text) and (moment := moment_of(time_words(sentence), said)):
                # "11月6日下午顺丰上门取件": a visit the business scheduled is over after
                # its day (an order's ETA is not: the order goes on).
                found = replace(found, event_time=moment, expires_at=moment + timedelta(days=1))
            if (
                found.expires_at is None
                and not OWED.search(found.text)
                and (end := span_end(sentence, said)) is not None
            ):
                # "已為您預約日本漫遊日租型，10/13 至 10/17": a service booked for a period is
                # over after it (money owed is not: "refund between Nov 3 and Nov 5").
                found = replace(found, expires_at=end)
            if VALIDITY.search(sentence):
                # "valid until Nov 30", "有效期到11月30日": a voucher that lapses.
                found = replace(found, expires_at=_valid_until(sentence, said))
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
        asked = ""  # the user's last message: what the assistant's next one answers
        asked_evidence: list[int] = []  # where the user's last message's evidence sits in out
        for message, message_id in zip(messages, ids, strict=True):
            if isinstance(message, AIMessage):
                _bound_by_reply(out, asked_evidence, message, self.policy, self.clock)
                asked_evidence = []
                if self.commitments is True:
                    out.extend(self._commitments(message, message_id, seen, asked))
                pending = (message, message_id) if self.commitments else None
                continue
            if not isinstance(message, HumanMessage):
                continue
            try:
                text = redact_text(message_text(message), self.policy)
            except RedactionRejectedError:
                continue  # the policy forbids keeping anything from this message
            said = message_time(message, self.clock)
            claims = ""
            if pending is not None:
                out.extend(self._answered(pending, text, message_id, said, seen, asked))
                claims = assistant_claims(message_text(pending[0]))
                pending = None
            asked = text
            turn = read_turn(text, said)
            # "我没去 Japan leh" after the assistant's "you used the Japan pass" is not kept: the
            # rebuttal would carry the wrong claim's words.
            residue = [(piece, whole) for piece, whole in turn.residue if not rebuts(piece, claims)]
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
                start = len(out)
                out.extend(self._evidence(residue, message_id, said, text))
                asked_evidence = list(range(start, len(out)))
        if pending is not None and self.commitments == "acknowledged" and is_unanswered(pending[0]):
            # The thread went quiet after it (``MemoryWriter.submit_unanswered``): no one
            # corrected its commitments ("Done: refund of $30 issued, 3-5 days").
            out.extend(self._commitments(pending[0], pending[1], seen, asked))
        return out

    async def aextract(self, messages: Sequence[BaseMessage]) -> list[CandidateMemory]:
        """Same as ``extract`` (pure CPU work, no I/O)."""
        return self.extract(messages)
