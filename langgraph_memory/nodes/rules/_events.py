"""The time dimension: dated events and time-bounded states (needs the message time).

- An **event** ("my flight is on 12 Dec", "下周三面试", "booked a table for
  Friday", "高铁票是周五的") becomes an episodic memory with ``event_time`` and key
  ``event.<kind>``, so a rescheduled one supersedes the old date. It also gets
  ``expires_at``: the end the user stated ("back on the 12th", "Dec 3-5",
  "12号回来"), else the end of the event's day (the end of the week for "next
  week"). A trip that ended is no longer current.
- A **time-bounded state** ("I'm travelling this week", "这周我在出差",
  "until Friday") gets ``expires_at``; its key lives under ``status.`` (or
  ``temporary.<key>`` for a profile slot), so a temporary state never
  supersedes the permanent fact ("I'm vegetarian this week" leaves ``diet``).
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Final

from langgraph_memory.nodes._rules_time import (
    bound_of,
    moment_of,
    month_end,
    month_of,
    stated_end,
)
from langgraph_memory.nodes.rules._match import Match
from langgraph_memory.nodes.rules._text import REPORT, has_cjk, sentence_case, to_third_person
from langgraph_memory.types import MemoryType

EVENTS: Final[tuple[tuple[str, str], ...]] = (
    (r"\bflights?\b|\bfly(?:ing)?\b|\bplane\b|航班|飞机|机票|登机", "flight"),
    (r"\btrain\b|\bhigh[- ]speed rail\b|高铁|动车|火车|列车", "train"),
    (
        r"\bhotel\b|\bairbnb\b|\bcheck[- ]?in\b|\bhostel\b|\bresort\b|酒店|宾馆|民宿|入住|住宿",
        "hotel",
    ),
    (
        r"\brestaurant\b|\btable for\b|\bdinner reservation\b|\b(?:booked|reserved|book|reserve|got) a table\b|\btable at\b|餐厅|饭店|订座|订位|订了位|包间|订桌",
        "restaurant",
    ),
    (r"\binterview\b|面试", "interview"),
    (r"\b(?:appointment|dentist|doctor)\b|预约|看医生|看牙|复诊|挂号", "appointment"),
    (r"\bexam\b|考试", "exam"),
    (r"\bsurgery\b|\boperation\b|手术", "surgery"),
    (r"\bwedding\b|婚礼", "wedding"),
    (r"\bcheck-?up\b|体检", "checkup"),
    (r"\bdeadline\b|\bis due\b|截止", "deadline"),
    (r"\bconcert\b|\bshow\b|\bgame\b|\bmatch\b|演唱会|音乐会|演出|话剧|比赛", "show"),
    (r"\bdelivery\b|\bpackage\b|\bparcel\b|\barriv(?:e|es|ing)\b|包裹|快递|送达|到货", "delivery"),
    (r"\bmeeting\b|会议|开会", "meeting"),
    (r"\bdinner\b|\blunch\b|\bbrunch\b|吃饭|晚饭|午饭|晚餐|午餐", "meal"),
    (r"\bparty\b|聚会|派对|聚餐", "party"),
    (r"\bmove out\b|\bmoving\b|搬家", "move"),
    (
        r"\btrip\b|\bvacation\b|\bholiday\b|\btravel(?:l?ing)? to\b|(?-i:\b(?:going|heading|off) to [A-Z])"
        r"|\bvisiting\b|旅行|旅游|度假|出差|去[\u4e00-\u9fff]{2,6}(?:玩|旅游|出差|度假|看|一趟)"
        r"|(?:去|飞|到)[\u4e00-\u9fff]{2,4}$",
        "trip",
    ),
)
# A state that holds for a while: "I'm travelling", "我在出差", "I'm in Tokyo".
STATES: Final[tuple[tuple[str, str], ...]] = (
    (r"travel|trip|abroad|出差|旅行|旅游|出国", "status.travel"),
    (r"vacation|holiday|\boff\b|\baway\b|休假|放假|请假|不在", "status.away"),
    (r"\bsick\b|\bill\b|生病|感冒|不舒服|住院", "status.health"),
    (r"working from home|\bwfh\b|在家办公|居家办公", "status.work_location"),
    (r"\bbusy\b|\bin meetings\b|很忙|忙|开会", "status.busy"),
    (
        r"\b(?:i'?m|i am|i'll be|i will be|staying)\s+(?:\w+\s+)?in\s+[A-Z]|我[^，,。]{0,8}?(?:都|会|将|要)?在[\u3400-\u9fff]{2,}",
        "status.location",
    ),
)
_UNTIL_OR_NEGATION: Final = re.compile(
    r"\b(?:until|till|til|not|no|never|cancel(?:led|ed)?)\b|n't\b|之前|以前|直到|为止|不|没|取消",
    re.IGNORECASE,
)
_FIRST_PERSON_STATE: Final = re.compile(
    r"\b(?:i'?m|i am|i'll be|i will be|i'?ve been|i have been|we'?re|we are)\b|我", re.IGNORECASE
)
# Recurring dates are not events: a birthday does not expire.
_RECURRING: Final = re.compile(
    r"\b(?:birthday|b-?day|bday)\b|\banniversary\b|生日|纪念日|\bevery\b|每周|每个?月|每天",
    re.IGNORECASE,
)


_BOOKED: Final = re.compile(
    r"\b(?:dinner|lunch|table|reservation|reserved|booked|party|trip|flight)\b|订|聚餐|吃饭|派对",
    re.IGNORECASE,
)


# "能不能改到周四" asks; its 不 negates nothing.
_ASKING: Final = re.compile(r"能不能|可不可以|要不要|是不是|行不行|好不好|会不会")


def topic(clause: str, table: tuple[tuple[str, str], ...]) -> str | None:
    for pattern, name in table:
        if re.search(pattern, clause, re.IGNORECASE):
            return name
    return None


def _last_day(expires_at: datetime) -> str:
    # expires_at is exclusive (the next midnight); show the last day it holds.
    return (expires_at - timedelta(microseconds=1)).date().isoformat()


def _event_end(clause: str, moment: datetime, now: datetime, sentence: str) -> datetime:
    """When the event is over: the stated end (of its clause, else of its sentence: "11月12號去
    大阪，16號返嚟" is over after the 16th), else the end of its day (or week)."""
    for text in (clause, sentence):
        end = stated_end(text, now)
        if end is not None and end > moment:
            return end
    if _MONTH_END.search(clause):
        # "上到十二月底", "until the end of May": over when that month is.
        vague = bound_of(clause, now)
        if vague is not None and vague > moment:
            return vague
    if month_of(clause, now) is not None and _named_day_absent(clause, now):
        return month_end(moment.date(), now)  # "in April" / "下个月": the whole month
    if (
        re.search(r"\bnext week\b|下周|下个?星期|下个?礼拜", clause.lower())
        and moment.weekday() == 0
    ):
        vague = bound_of(clause, now)
        if vague is not None and vague > moment:
            return vague
    return moment + timedelta(days=1)


_MONTH_END: Final = re.compile(r"月份?底|\bend of (?:the |this )?month\b", re.IGNORECASE)


def _named_day_absent(clause: str, now: datetime) -> bool:
    """No day more precise than a month: "in April", not "on 3 April"."""
    return moment_of(_MONTH_WORDS.sub("", clause), now) is None


_MONTH_WORDS: Final = re.compile(
    r"\b(?:in|during|for|this|next|early|late|mid)[- ](?:jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec)"
    r"[a-z]*\.?(?!\s*\d)|\bnext month\b|下个?月|(?<![\d/])\d{1,2}月份?(?![\d日号])|[一二三四五六七八九十]{1,3}月份",
    re.IGNORECASE,
)


# A move to a new home, which holds on after the day of the move.
MOVE_TO_A_HOME: Final = (
    r"搬(?:去|到|进|过去)|\bmov(?:e|es|ing|ed) (?:to|into|over to)\b|\brelocat\w* to\b"
)


UNTIL_THEN: Final = re.compile(
    r"\b(?:before|until|till|til|up to) then\b|\buntil I'?m back\b|在那之前|那之前|到时候之前|回来之前|返嚟之前",
    re.IGNORECASE,
)


def with_time(
    found: Match | None, clause: str, now: datetime, sentence: str | None = None
) -> Match | None:
    """Add the time dimension to a segment's match, relative to the message time ``now``;
    ``sentence``, when the clause is one segment of it, may state when the event ends."""
    if (
        found is not None
        and found.type is MemoryType.PROCEDURAL
        and sentence
        and UNTIL_THEN.search(clause)
    ):
        # "back on Oct 15, don't ship before then": an instruction that lasts until the date
        # the sentence names.
        moment = moment_of(sentence, now)
        bound = bound_of(sentence, now) or (moment + timedelta(days=1) if moment else None)
        if bound is not None and bound > now:
            suffix = (
                f"（有效至{_last_day(bound)}）"
                if has_cjk(found.text)
                else f" (until {_last_day(bound)})"
            )
            return replace(found, text=found.text + suffix, expires_at=bound)
    if found is not None and (found.forget or (found.type is MemoryType.PROCEDURAL and found.key)):
        return found
    event = topic(clause, EVENTS)
    # "until Friday I'm in meetings" bounds a state; "周五不开会" is a cancelled
    # or recurring habit: neither is a dated event.
    dated_event = (
        event is not None
        and not _UNTIL_OR_NEGATION.search(_ASKING.sub("", clause))
        and not (_RECURRING.search(clause) and not _BOOKED.search(clause))
    )
    if dated_event and (found is None or found.key is None or found.weak):
        moment = moment_of(clause, now)
        if moment is not None:
            statement = sentence_case(to_third_person(clause))
            day = moment.date().isoformat()
            suffix = f"（{day}）" if has_cjk(clause) else f" ({day})"
            return Match(
                statement + suffix,
                MemoryType.EPISODIC,
                f"event.{event}",
                0.75,
                event_time=moment,
                # "the parcel arrived today but the box was crushed": a report of what
                # happened stays true; a plan ends with its day.
                expires_at=None
                if (moment <= now and REPORT.search(clause))
                or re.search(MOVE_TO_A_HOME, clause, re.IGNORECASE)
                else _event_end(clause, moment, now, sentence or clause),
            )
    if found is not None and _RECURRING.search(clause):
        return found
    bound = bound_of(clause, now)
    if bound is None or bound <= now:
        return found
    if found is None:
        # Only known states: "I'm tired today" is chit-chat, not a memory.
        key = topic(clause, STATES)
        if key is None or not _FIRST_PERSON_STATE.search(clause):
            return None
        found = Match(sentence_case(to_third_person(clause)), key=key, importance=0.7)
    elif found.key is not None and found.type is not MemoryType.PROCEDURAL:
        found = replace(found, key=f"temporary.{found.key}")
    suffix = (
        f"（有效至{_last_day(bound)}）" if has_cjk(found.text) else f" (until {_last_day(bound)})"
    )
    return replace(found, text=found.text + suffix, expires_at=bound)
