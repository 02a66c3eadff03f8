"""Relative time expressions for the rule-based extractor, English and Chinese.

Pure: every function takes the reference moment (the message time) and returns
an aware datetime in the reference's time zone, so the same message with the
same ``now`` always gives the same answer.

Two questions are answered:

- ``bound_of(clause, now)``: when does a time-bounded fact stop being true?
  ("this week" -> next Monday 00:00, "until Friday" / "周五之前" -> the end of
  Friday, "for 3 days" -> now + 3 days, "今天" -> midnight).
- ``moment_of(clause, now)``: when does an event happen? ("on 12 Dec",
  "next Wednesday", "下周三", "明天", "12月12日", "2026-12-12").

Weeks start on Monday, as in ISO 8601 and in Chinese usage (周一). Cantonese
and traditional day words are read as Mandarin first (听日 = 明天, 后日 = 后天,
下個禮拜 = 下个礼拜). An ordinal or a number before a place is not a day ("the
3rd floor", "3号楼").

Example:
    >>> from datetime import datetime, timezone
    >>> now = datetime(2026, 11, 30, 18, 0, tzinfo=timezone.utc)  # a Monday
    >>> bound_of("I'm travelling this week", now).isoformat()
    '2026-12-07T00:00:00+00:00'
    >>> moment_of("下周三面试", now).date().isoformat()
    '2026-12-09'
"""

from __future__ import annotations

import contextlib
import re
from datetime import date, datetime, time, timedelta
from typing import Final

__all__ = ["bound_of", "moment_of", "month_end", "month_of", "stated_end", "time_words"]

_EN_WEEKDAYS: Final = {
    "monday": 0, "mon": 0, "tuesday": 1, "tue": 1, "tues": 1, "wednesday": 2, "wed": 2,
    "thursday": 3, "thu": 3, "thur": 3, "thurs": 3, "friday": 4, "fri": 4,
    "saturday": 5, "sat": 5, "sunday": 6, "sun": 6,
}  # fmt: skip
_ZH_WEEKDAYS: Final = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_EN_MONTHS: Final = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8,
    "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_ZH_NUMBERS: Final = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
                      "八": 8, "九": 9, "十": 10, "半": 0}  # fmt: skip

_EN_WEEKDAY: Final = (
    r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues?|wed|thur?s?|fri|sat|sun)"
)
_ZH_WEEKDAY: Final = r"(?:周|星期|礼拜)([一二三四五六日天])"
_EN_MONTH: Final = r"(jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec)[a-z]*\.?"
_EN_DATE: Final = re.compile(
    rf"\b(?:(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_EN_MONTH}|{_EN_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?)\b",
    re.IGNORECASE,
)
_ISO_DATE: Final = re.compile(r"\b(20\d\d)-(\d{1,2})-(\d{1,2})\b")
_ZH_DATE: Final = re.compile(r"(?:(\d{1,2})月)(\d{1,2})(?:日|号)")
# "the 3rd floor", "3号楼", "5号线": an ordinal or a number of a place, not a day.
_NOT_A_DAY: Final = (
    r"(?!\s+(?:floor|flr|storey|story|time|times|place|grade|year|row|gen\w*|edition|street|st|"
    r"ave\w*|avenue|round|attempt|try|century|person|child|kid|son|daughter|baby|item|lesson|class|"
    r"level|stage|gate|seat|house|door|bedroom|room|birthday|anniversary|one|week|month|day)\b)"
)
# "3号楼", "5号线", "2号床": a number of a place, not a day.
_ZH_NOT_A_DAY: Final = (
    r"(?!楼|线|门|馆|口|床|房|车厢|位|桌|窗口|站台|台|柜|仓|机|店|院|厅|栋|座|单元)"
)
_ZH_DAY_ONLY: Final = re.compile(r"(?<![\d月])(\d{1,2})(?:日|号)" + _ZH_NOT_A_DAY)


# Cantonese and traditional spellings of the time words below, read as Mandarin:
# "听日" is tomorrow, "后日" the day after, "下個禮拜" next week.
_ZH_VARIANTS: Final = (
    ("聽日", "明天"), ("听日", "明天"), ("聽朝", "明早"), ("听朝", "明早"), ("聽晚", "明晚"),
    ("听晚", "明晚"), ("後日", "后天"), ("后日", "后天"), ("今朝", "今早"), ("琴日", "昨天"),
    ("尋日", "昨天"), ("寻日", "昨天"), ("禮拜", "礼拜"), ("週", "周"), ("個", "个"),
    ("這", "这"), ("號", "号"), ("後", "后"), ("點", "点"), ("聖誕", "圣诞"), ("開始", "开始"),
    ("呢个", "这个"),
)  # fmt: skip


# "11 月 20 日", "22 号": digits spaced off the date characters they belong to.
_SPACED_DATE: Final = re.compile(
    r"(?<=\d)\s+(?=[月日号])|(?<=[月到至])\s+(?=\d)|(?<=\d)\s+(?=[到至]\s*\d)|(?<=\d[日号])\s+(?=[\u4e00-\u9fff])"
)
# "11/19 走", "到 11/24": a month-first slash date in a Chinese plan (a bare "1/2 杯" is no date).
_ZH_SLASH_DATE: Final = re.compile(
    r"(?<![\d/.:])(1[0-2]|0?[1-9])/(3[01]|[12]\d|0?[1-9])(?![\d/])"
    r"(?=\s*(?:[到至~～]|就|才|会|要|回|返|走|出发|飞|去|入住|退房|结束|离开|开始|之前|以前|前|起))"
    r"|(?<=[到至])(1[0-2]|0?[1-9])/(3[01]|[12]\d|0?[1-9])(?![\d/])"
)
# A day named without its month, after one named with it: "11月15到22号", "下个月3号飞，8号回",
# "from November 3rd until the 7th".
_ZH_MONTH_CONTEXT: Final = re.compile(r"(下个?月|(?<!\d)\d{1,2}月)\s*(\d{1,2})?")
_ZH_BARE_DAY: Final = re.compile(
    r"(?<![\d月/.:])(\d{1,2})(?=\s*(?:[日号]|(?:到|至|-|~|～)\s*\d{1,2}\s*[日号])"
    + _ZH_NOT_A_DAY
    + r")(?!\d)"
)
_EN_MONTH_CONTEXT: Final = re.compile(
    rf"\b(?:(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_EN_MONTH}|{_EN_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?)\b",
    re.IGNORECASE,
)
_EN_BARE_DAY: Final = re.compile(r"\bthe\s+(\d{1,2})(?:st|nd|rd|th)\b", re.IGNORECASE)
_ZH_MONTH_OR_BARE_DAY: Final = re.compile(_ZH_MONTH_CONTEXT.pattern + "|" + _ZH_BARE_DAY.pattern)
_EN_MONTH_OR_BARE_DAY: Final = re.compile(
    _EN_MONTH_CONTEXT.pattern + "|" + _EN_BARE_DAY.pattern + _NOT_A_DAY, re.IGNORECASE
)
_EN_MONTH_NAMES: Final = ("January", "February", "March", "April", "May", "June", "July",
                          "August", "September", "October", "November", "December")  # fmt: skip


def _zh_months_filled(clause: str) -> str:
    """Give each bare day the month named before it; a smaller day than the last one
    named in that month is in the next month ("11月28号走，3号回" comes back in December)."""
    out, last, month, day = [], 0, None, 0
    for m in _ZH_MONTH_OR_BARE_DAY.finditer(clause):
        if m.group(1):
            label = m.group(1)
            month = label if label.startswith("下") else int(label[:-1])
            day = int(m.group(2) or 0)
            continue
        if month is None or m.group(3) is None:
            continue
        bare = int(m.group(3))
        if isinstance(month, int) and bare < day:
            month = month % 12 + 1
        day = bare
        out.append(clause[last : m.start()] + (month if isinstance(month, str) else f"{month}月"))
        last = m.start()
    return "".join(out) + clause[last:]


def _en_months_filled(clause: str) -> str:
    """Give each bare "the 7th" the month named before it ("from November 3rd until the
    7th" ends in November); a smaller day than the last one named is in the next month."""
    out, last, month, day = [], 0, 0, 0
    for m in _EN_MONTH_OR_BARE_DAY.finditer(clause):
        if m.group(5) is None:
            month = _EN_MONTHS[(m.group(2) or m.group(3)).lower()[:3]]
            day = int(m.group(1) or m.group(4))
            continue
        if not month:
            continue
        bare = int(m.group(5))
        if bare < day:
            month = month % 12 + 1
        day = bare
        out.append(clause[last : m.start()] + f"{_EN_MONTH_NAMES[month - 1]} {bare}")
        last = m.end()
    return "".join(out) + clause[last:]


# A holiday named as a bound ("off sugar till Christmas", "元旦之前"): its date.
_EN_HOLIDAY_BOUND: Final = re.compile(
    r"\b(until|till|til|through|before|by|over|after)\s+(?:the\s+)?"
    r"(christmas eve|christmas(?: day)?|xmas|new year'?s eve|new year'?s(?: day)?|new year)\b",
    re.IGNORECASE,
)
_EN_HOLIDAYS: Final = {"christmas eve": "December 24", "new year's eve": "December 31",
                       "new years eve": "December 31"}  # fmt: skip
_ZH_HOLIDAY_BOUND: Final = re.compile(
    r"(?<=[到至])(圣诞节?|平安夜|元旦|跨年)|(圣诞节?|平安夜|元旦|跨年)(?=之?前|以前|为止)"
)
_ZH_HOLIDAYS: Final = {"平安夜": "12月24日", "元旦": "1月1日", "跨年": "12月31日"}
# A holiday named as a period ("国庆期间我回老家", "五一假期去三亚"): the days it spans, as the
# date range the patterns read. Only holidays on fixed dates (not 春节, which moves).
_ZH_HOLIDAY_PERIOD: Final = re.compile(
    r"(?:(国庆|十一(?=长假|假期|黄金周))(?:节)?|(五一|劳动节))(?!节?(?:后|前|之后|之前|以后|以前|过后|当天))"
    r"(?:期间|假期|长假|黄金周|那几天|那周|七天|放假)?"
)
_ZH_HOLIDAY_SPANS: Final = {"国庆": "10月1日到10月7日", "十一": "10月1日到10月7日", "五一": "5月1日到5月5日",
                            "劳动节": "5月1日到5月5日"}  # fmt: skip
# "for the rest of November / the month / the week": until its end.
_EN_REST_OF: Final = re.compile(
    r"\b(?:for |during )?the rest of (?:the )?(month|week|year|"
    r"january|february|march|april|may|june|july|august|september|october|november|december)\b",
    re.IGNORECASE,
)
# "下周一到周五": the second weekday of a range is in the first one's week.
_ZH_WEEKDAY_RANGE: Final = re.compile(
    r"(下个?(?:周|星期|礼拜)[一二三四五六日天])\s*(到|至|-|~)\s*(?=(?:周|星期|礼拜)[一二三四五六日天])"
)
_EN_WEEKDAY_RANGE: Final = re.compile(
    rf"\b(?P<first>next\s+{_EN_WEEKDAY})\s+(?P<to>to|until|till|through|thru|-)\s+(?=(?:{_EN_WEEKDAY[1:-1]})\b)",
    re.IGNORECASE,
)


def _en_holiday(m: re.Match[str]) -> str:
    name = m.group(2).lower()
    day = _EN_HOLIDAYS.get(name, "January 1" if name.startswith("new year") else "December 25")
    return f"{m.group(1)} {day}"


def _until_the_end_of(m: re.Match[str]) -> str:
    period = m.group(1)
    return f"until the end of {'the ' + period if period.lower() in ('month', 'week', 'year') else period}"


def time_words(clause: str) -> str:
    """A clause with its dates in the forms the patterns read: Cantonese and traditional
    time words as Mandarin, spaced digits closed up, slash dates of a Chinese plan as
    月/日, and bare days given the month named before them. Only dates change.

    Example:
        >>> time_words("听日要带身份证"), time_words("下個禮拜一")
        ('明天要带身份证', '下个礼拜一')
        >>> time_words("我们 11 月去 Bali，15 到 22 号"), time_words("11/19 走，11/24 回")
        ('我们 11月去 Bali，11月15到11月22号', '11月19日走，11月24日回')
        >>> time_words("from November 3rd until the 7th")
        'from November 3rd until November 7'
    """
    clause = _EN_WEEKDAY_RANGE.sub(
        r"\g<first> \g<to> next ", _EN_HOLIDAY_BOUND.sub(_en_holiday, clause)
    )
    clause = _EN_REST_OF.sub(_until_the_end_of, clause)
    if not re.search(r"[\u3400-\u9fff]", clause):
        return _en_months_filled(clause)
    for variant, mandarin in _ZH_VARIANTS:
        clause = clause.replace(variant, mandarin)
    clause = _ZH_SLASH_DATE.sub(
        lambda m: f"{m.group(1) or m.group(3)}月{m.group(2) or m.group(4)}日", clause
    )
    clause = _SPACED_DATE.sub("", clause)
    clause = _ZH_HOLIDAY_BOUND.sub(
        lambda m: _ZH_HOLIDAYS.get(m.group(1) or m.group(2), "12月25日"), clause
    )
    if not re.search(r"\d{1,2}\s*[号號日]?\s*(?:到|至|-|~)\s*\d", clause):
        # "国庆我要回老家，1号到7号都在那边" names its own days.
        clause = _ZH_HOLIDAY_PERIOD.sub(
            lambda m: _ZH_HOLIDAY_SPANS[m.group(1) or m.group(2)], clause
        )
    clause = _ZH_WEEKDAY_RANGE.sub(r"\1\2下", clause)
    return _en_months_filled(_zh_months_filled(clause))


def _day_start(day: date, now: datetime) -> datetime:
    return datetime.combine(day, time(0, 0), tzinfo=now.tzinfo)


def _day_end(day: date, now: datetime) -> datetime:
    """The first moment after ``day`` (exclusive end)."""
    return _day_start(day + timedelta(days=1), now)


def _next_weekday(now: datetime, weekday: int, *, next_week: bool = False) -> date:
    today = now.date()
    if next_week:
        monday = today - timedelta(days=today.weekday()) + timedelta(days=7)
        return monday + timedelta(days=weekday)
    return today + timedelta(days=(weekday - today.weekday()) % 7)


def _week_end(now: datetime, weeks_ahead: int = 0) -> datetime:
    today = now.date()
    monday = today - timedelta(days=today.weekday())
    return _day_start(monday + timedelta(days=7 * (weeks_ahead + 1)), now)


def _month_end(now: datetime) -> datetime:
    today = now.date()
    first_next = date(today.year + (today.month == 12), today.month % 12 + 1, 1)
    return _day_start(first_next, now)


def _future_date(now: datetime, month: int, day: int) -> date | None:
    """``month``/``day`` this year, or next year when that date has passed."""
    today = now.date()
    for year in (today.year, today.year + 1):
        try:
            candidate = date(year, month, day)
        except ValueError:
            return None
        if candidate >= today:
            return candidate
    return None


def _explicit_date(clause: str, now: datetime) -> date | None:
    m = _ISO_DATE.search(clause)
    if m:
        try:
            return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            return None
    m = _EN_DATE.search(clause)
    if m:
        day = m.group(1) or m.group(4)
        month = m.group(2) or m.group(3)
        return _future_date(now, _EN_MONTHS[month.lower()[:3]], int(day))
    m = re.search(r"下个?月\s*(\d{1,2})(?:日|号)", clause)
    if m:  # "下个月14号": that day of next month
        return _future_date(now, now.date().month % 12 + 1, int(m.group(1)))
    m = _ZH_DATE.search(clause)
    if m:
        return _future_date(now, int(m.group(1)), int(m.group(2)))
    m = _ZH_DAY_ONLY.search(clause)
    if m:
        today = now.date()
        day = int(m.group(1))
        month = today.month if day >= today.day else today.month % 12 + 1
        return _future_date(now, month, day)
    return None


def _named_day(clause: str, now: datetime) -> date | None:
    """Today, tomorrow, a weekday (this or next week), or an explicit date."""
    lowered = clause.lower()
    today = now.date()
    if re.search(r"\bday after tomorrow\b|后天", lowered):
        return today + timedelta(days=2)
    if re.search(r"\btomorrow\b|明天|明早|明晚", lowered):
        return today + timedelta(days=1)
    if re.search(
        r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b|今天|今晚|今早|今日", lowered
    ):
        return today
    # A written date beside its weekday is the date: "11月22号星期日", "Sunday Nov 22".
    explicit = _explicit_date(clause, now)
    if explicit is not None:
        return explicit
    m = re.search(r"下(?:个)?" + _ZH_WEEKDAY, clause)
    if m:
        return _next_weekday(now, _ZH_WEEKDAYS[m.group(1)], next_week=True)
    m = re.search(r"\bnext\s+" + _EN_WEEKDAY + r"\b", lowered)
    if m:
        return _next_weekday(now, _EN_WEEKDAYS[m.group(1)], next_week=True)
    m = re.search(r"(?:这|本)?" + _ZH_WEEKDAY, clause)
    if m:
        return _next_weekday(now, _ZH_WEEKDAYS[m.group(1)])
    m = re.search(r"\b(?:on\s+|this\s+|by\s+|until\s+|till\s+)?" + _EN_WEEKDAY + r"\b", lowered)
    if m:
        return _next_weekday(now, _EN_WEEKDAYS[m.group(1)])
    m = re.search(r"\b(?:on\s+)?the\s+(\d{1,2}(?:st|nd|rd|th))\b" + _NOT_A_DAY, lowered)
    return _ordinal_day(m.group(1), now) if m else None


_MONTH_ONLY: Final = re.compile(
    rf"\b(?:in|during|for|this|next|early|late|mid)[- ]{_EN_MONTH}(?!\s*\d)|(?<![\d/])(\d{{1,2}})月份?(?![\d日号])"
    r"|([一二三四五六七八九十]{1,3})月份"
    # "整个十一月": a month in characters, unmistakable after 整个 without 份.
    r"|(?<=整个)([一二三四五六七八九十]{1,3})月"
    # "十二月底": a month in characters before 底 (the end of it).
    r"|(?<![一二三四五六七八九十两几个])([一二三四五六七八九十]{1,3})月(?=份?底)",
    re.IGNORECASE,
)
_ZH_MONTHS: Final = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
                     "九": 9, "十": 10, "十一": 11, "十二": 12}  # fmt: skip


def month_of(clause: str, now: datetime) -> date | None:
    """The first day of a month named without a day ("in April", "4月份", "next month").

    Example:
        >>> from datetime import datetime, timezone
        >>> now = datetime(2026, 11, 30, 18, 0, tzinfo=timezone.utc)
        >>> month_of("a trip to Japan in April", now).isoformat()
        '2027-04-01'
        >>> month_of("下个月去成都", now).isoformat()
        '2026-12-01'
    """
    clause = time_words(clause)
    today = now.date()
    if re.search(r"\bnext month\b|下个?月", clause, re.IGNORECASE):
        return date(today.year + (today.month == 12), today.month % 12 + 1, 1)
    m = _MONTH_ONLY.search(clause)
    if m is None:
        return None
    if m.group(1):
        month = _EN_MONTHS[m.group(1).lower()[:3]]
    elif m.group(2):
        month = int(m.group(2))
    else:
        month = _ZH_MONTHS.get(m.group(3) or m.group(4) or m.group(5), 0)
    if not 1 <= month <= 12:
        return None
    year = today.year if month >= today.month else today.year + 1
    return date(year, month, 1)


def month_end(day: date, now: datetime) -> datetime:
    """The first moment after the month of ``day``."""
    return _day_start(date(day.year + (day.month == 12), day.month % 12 + 1, 1), now)


# A part of a month: "early November", "the first week of November", "by the end of Oct",
# "11月上旬/中旬/下旬", "月底". Its end is the day after that part.
_EN_PART_OF_MONTH: Final = re.compile(
    r"\b(early|mid|late|the end of|end of|the first week of|first week of|the last week of|"
    r"last week of|the start of|start of|the beginning of|beginning of|the first half of|"
    r"first half of|the second half of|second half of)[- ]+" + _EN_MONTH + r"(?!\s*\d)",
    re.IGNORECASE,
)
_ZH_PART_OF_MONTH: Final = re.compile(
    r"(\d{1,2}|[一二三四五六七八九十]{1,3})月(上旬|初|中旬|下旬|底|末)"
)
_PART_LAST_DAY: Final = {
    "early": 10, "start of": 7, "beginning of": 7, "first week of": 7, "mid": 20,
    "first half of": 15, "上旬": 10, "初": 10, "中旬": 20,
}  # fmt: skip


def part_of_month_end(clause: str, now: datetime) -> datetime | None:
    """The end of the part of a month ``clause`` names, or ``None``.

    Example:
        >>> from datetime import datetime, timezone
        >>> now = datetime(2026, 9, 1, tzinfo=timezone.utc)
        >>> part_of_month_end("GCSE mocks in the first week of November", now).date().isoformat()
        '2026-11-08'
        >>> part_of_month_end("券11月底到期", now).date().isoformat()
        '2026-12-01'
    """
    m = _EN_PART_OF_MONTH.search(clause)
    if m:
        part, month = m.group(1).lower().removeprefix("the "), _EN_MONTHS[m.group(2).lower()[:3]]
    else:
        z = _ZH_PART_OF_MONTH.search(clause)
        if z is None:
            return None
        raw = z.group(1)
        part, month = z.group(2), int(raw) if raw.isdigit() else _ZH_MONTHS.get(raw, 0)
        if not 1 <= month <= 12:
            return None
    year = now.year if month >= now.month else now.year + 1
    last = _PART_LAST_DAY.get(part)
    if last is None:  # late, the end of, the last week of, the second half of, 下旬, 底, 末
        return month_end(date(year, month, 1), now)
    return _day_end(date(year, month, last), now)


_EN_UNTIL: Final = re.compile(r"\b(?:until|till|til|through|thru|by)\s+(.+)$", re.IGNORECASE)
_ZH_UNTIL: Final = re.compile(
    # "挪到周日", "改到19号": a new time for something, not the end of a state.
    r"(?<![挪改推调移换])(?<!提前)(?<!推迟)(?:到|直到|一直到|截至)(.{1,12}?)(?:为止|之前|以前|前)?(?:[，,。]|$)"
    r"|(.{1,12}?)(?:之前|以前)"
)
_EN_FOR: Final = re.compile(
    r"\bfor\s+(?:the\s+next\s+)?(\d+|a|an|one|two|three)\s+(day|week|month)s?\b", re.IGNORECASE
)
_ZH_FOR: Final = re.compile(
    r"(?:这|未来|接下来)?(\d+|[一两二三四五六七八九十])\s*(?:个)?(天|周|星期|礼拜|月)(?:内|里|之内)?"
)
_EN_COUNTS: Final = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3}


# An explicit end: "back on the 12th", "returning Dec 12", "check out on Friday",
# "until 12 Dec", "Dec 3-5", "from Dec 3 to Dec 5", "12号回来", "住到5号", "3号到5号".
_EN_END: Final = re.compile(
    r"\b(?:back|return(?:ing|s)?|home|fly(?:ing)? back|flying home|check(?:ing)? out|checkout|"
    r"ends?|ending|until|till|til|through|thru|from\s+.{1,20}?\s+to"
    # "next Monday to Friday" (read as "next Monday to next Friday"): the range's last day.
    r"|next\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day\s+(?:to|-))\s+(?:on\s+|by\s+|the\s+)*(.{1,24})$",
    re.IGNORECASE,
)
_EN_RANGE: Final = re.compile(
    rf"\b{_EN_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?\s*(?:-|–|~|to|until|through|thru)\s*(\d{{1,2}})(?:st|nd|rd|th)?\b"
    rf"|\b(\d{{1,2}})(?:st|nd|rd|th)?\s*(?:-|–|~|to|until|through|thru)\s*(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_EN_MONTH}",
    re.IGNORECASE,
)
# Two days of a month with no month named: "the 10th to the 14th", "10th-14th".
_ORDINAL_RANGE: Final = re.compile(
    r"\b(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)\s*(?:-|–|to|until|till|through|thru)\s*(?:the\s+)?"
    r"(\d{1,2})(?:st|nd|rd|th)\b",
    re.IGNORECASE,
)
_ZH_END: Final = re.compile(
    r"(?:下个?月|(\d{1,2})月)?(\d{1,2})[日号](?:就|才|会|要)?(?:回来|返回|回国|回家|回|结束|退房|离开|走|返(?![工学]))"
    r"|(?:到|至|住到|待到|呆到|一直到|直到)(?:下个?月|(\d{1,2})月)?(\d{1,2})[日号]"
    r"|(?:(?:下|这|本)(?:个)?(?:周|星期|礼拜)[一二三四五六日天])(?:就|才|会|要)?(?:回来|返回|回国|回家|结束|退房)"
)


# One full date in any of the forms users write: "Oct 20", "20 October", "10月20日",
# "2026-10-20", "10/20" (month first; day first only when the first number can't be a
# month: "20/10"). A bare "10/20" is read only as one end of a range below, never alone
# ("1/2 cup", "50/50").
_ANY_DATE: Final = (
    rf"(?:{_EN_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_EN_MONTH}"
    r"|\d{1,2}月\d{1,2}[日号]?|20\d\d-\d{1,2}-\d{1,2}|(?<![\d/.:])\d{1,2}/\d{1,2}(?![\d/]))"
)
# Two dates joined by a range word: "Oct 20 to Nov 10", "10/20 到 11/10", "10/20-11/10".
_DATE_SPAN: Final = re.compile(
    rf"(?P<start>{_ANY_DATE})\s*(?:-|–|—|~|～|to|until|till|through|thru|到|至)\s*(?P<end>{_ANY_DATE})",
    re.IGNORECASE,
)
_SLASH_DATE: Final = re.compile(r"^(\d{1,2})/(\d{1,2})$")


def _day_first(*texts: str) -> bool:
    """Slash dates are day first when one of them can only be ("20/10 - 2/11")."""
    return any((m := _SLASH_DATE.match(t.strip())) and int(m.group(1)) > 12 for t in texts)


def _one_date(text: str, now: datetime, *, day_first: bool = False) -> date | None:
    """A date of ``_ANY_DATE``'s forms, the next one on or after ``now``."""
    text = text.strip()
    m = _SLASH_DATE.match(text)
    if m is None:
        return _explicit_date(text + "日" if text[-1].isdigit() and "月" in text else text, now)
    month, day = int(m.group(1)), int(m.group(2))
    if day_first:
        month, day = day, month
    return _future_date(now, month, day) if month <= 12 else None


def _span_end(clause: str, now: datetime) -> date | None:
    """The last day of a range of two full dates, crossing months or not."""
    m = _DATE_SPAN.search(clause)
    if m is None:
        return None
    day_first = _day_first(m.group("start"), m.group("end"))
    start = _one_date(m.group("start"), now, day_first=day_first)
    if start is None:
        return None
    # The end is the next such day from the start: "Dec 28 to Jan 3" ends next year.
    return _one_date(m.group("end"), _day_start(start, now), day_first=day_first)


def span_end(clause: str, now: datetime) -> datetime | None:
    """The exclusive end of a range of two full dates ("10/13 至 10/17", "Oct 14 to Oct 20"),
    or ``None``: a period something runs for, as a roaming pass or a booking does."""
    day = _span_end(time_words(clause), now)
    return _day_end(day, now) if day is not None else None


def stated_end(clause: str, now: datetime) -> datetime | None:
    """An end date the user states outright (exclusive end of that day), or ``None``.

    A stated end wins over a vague one: "away until the end of next week, back
    on Dec 9" ends after 9 December.

    Example:
        >>> from datetime import datetime, timezone
        >>> now = datetime(2026, 11, 30, 18, 0, tzinfo=timezone.utc)  # Monday
        >>> stated_end("hotel in Kyoto Dec 3-5", now).date().isoformat()
        '2026-12-06'
        >>> stated_end("我下周末之前都在日本，12号回来", now).date().isoformat()
        '2026-12-13'
    """
    clause = time_words(clause)
    span = _span_end(clause, now)
    if span is not None:
        return _day_end(span, now)
    m = _EN_RANGE.search(clause)
    if m:
        if m.group(1):
            month, last = _EN_MONTHS[m.group(1).lower()[:3]], int(m.group(3))
        else:
            month, last = _EN_MONTHS[m.group(6).lower()[:3]], int(m.group(5))
        found = _future_date(now, month, last)
        if found is not None:
            return _day_end(found, now)
    m = _ORDINAL_RANGE.search(clause)
    if m:
        # "the 10th to the 14th": the last day, in the month the first day falls in.
        first = _ordinal_day(f"{m.group(1)}th", now)
        if first is not None:
            last = int(m.group(2))
            month = first.month if last >= first.day else first.month % 12 + 1
            year = first.year + (1 if month < first.month else 0)
            with contextlib.suppress(ValueError):
                return _day_end(date(year, month, last), now)
    for m in _EN_END.finditer(clause):
        tail = m.group(1)
        if re.match(r"(?:the\s+)?end of\b", tail, re.IGNORECASE):
            continue
        end = _explicit_date(tail, now) or _weekday_in(tail, now) or _ordinal_day(tail, now)
        if end is not None:
            return _day_end(end, now)
    # The last end named: "19号走，24号回" leaves on the 19th and is over after the 24th.
    zh_ends = [
        day
        for m in _ZH_END.finditer(clause)
        if (day := _explicit_date(m.group(0), now) or _named_day(m.group(0), now)) is not None
    ]
    return _day_end(max(zh_ends), now) if zh_ends else None


def _ordinal_day(text: str, now: datetime) -> date | None:
    """ "12th" / "the 3rd": that day of this month, or of next month once it passed."""
    m = re.match(r"(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)\b" + _NOT_A_DAY, text, re.IGNORECASE)
    if m is None:
        return None
    today, day = now.date(), int(m.group(1))
    month = today.month if day >= today.day else today.month % 12 + 1
    return _future_date(now, month, day)


def _weekday_in(text: str, now: datetime) -> date | None:
    lowered = text.lower()
    m = re.match(r"(?:next\s+)?" + _EN_WEEKDAY + r"\b", lowered)
    if m:
        return _next_weekday(now, _EN_WEEKDAYS[m.group(1)], next_week=lowered.startswith("next"))
    return None


# Words that put an end on what is said: "until", "runs out", "expires", "到期".
_ENDS_BY: Final = re.compile(
    r"\b(?:until|till|til|through|thru|by|runs? out|expires?|expiring|ends|ending|valid|good)\b|到期|截止|为止|之前"
)
_VAGUE_START: Final = re.compile(
    r"\b(?:from|starting|start|starts|beginning|as of|effective)\s+(?:(?:next|this)\s+(?:week|month)|today|tonight|now)\b"
    r"|(?:下周|下个?星期|下个?礼拜|这周|本周|这个?星期|这个?礼拜|这个月|本月|今天|今日|今晚)(?:开始|起)"
    r"|从(?:下周|下个?星期|下个?礼拜|这周|本周|这个月|本月|今天|今日|今晚)"
)


# "all of November", "throughout May": read as "in November" to find the month.
_WHOLE_OF: Final = r"\b(?:all of|all through|throughout|the whole of|all|for all of)\s+"


def bound_of(clause: str, now: datetime) -> datetime | None:
    """When a time-bounded statement in ``clause`` stops holding, or ``None``.

    An end the user states outright (``stated_end``) wins over a vague one.

    Example:
        >>> from datetime import datetime, timezone
        >>> now = datetime(2026, 11, 30, 18, 0, tzinfo=timezone.utc)  # Monday
        >>> bound_of("away until Friday", now).isoformat()
        '2026-12-05T00:00:00+00:00'
        >>> bound_of("明天之前给我回复", now).isoformat()
        '2026-12-01T00:00:00+00:00'
        >>> bound_of("I live in Paris", now) is None
        True
    """
    clause = time_words(clause)
    lowered = clause.lower()
    stated = stated_end(clause, now)
    if stated is not None:
        return stated
    m = _EN_UNTIL.search(clause)
    if m:
        day = _named_day(m.group(1), now)
        if day is not None:
            return _day_end(day, now)
    m = _ZH_UNTIL.search(clause)
    if m:
        target = m.group(1) or m.group(2)
        day = _named_day(target, now)
        if day is not None:
            # "明天之前" ends when tomorrow starts; "到周五" includes Friday.
            before = re.search(r"(?:之前|以前)", clause[m.start() : m.end()]) is not None
            return _day_start(day, now) if before else _day_end(day, now)
    m = _EN_FOR.search(clause)
    if m:
        count = int(m.group(1)) if m.group(1).isdigit() else _EN_COUNTS[m.group(1).lower()]
        unit = {"day": 1, "week": 7, "month": 30}[m.group(2).lower()]
        return now + timedelta(days=count * unit)
    m = _ZH_FOR.search(clause)
    if m and re.search(r"(?:内|里|之内)|^(?:这|未来|接下来)", clause[m.start() : m.end()] + " "):
        raw = m.group(1)
        count = int(raw) if raw.isdigit() else _ZH_NUMBERS[raw]
        unit = {"天": 1, "周": 7, "星期": 7, "礼拜": 7, "月": 30}[m.group(2)]
        return now + timedelta(days=count * unit)
    if _VAGUE_START.search(lowered):
        # "下周开始去 ML platform", "starting next week I'm on nights": the vague time is when a
        # lasting state begins, not when it ends.
        return None
    if _ENDS_BY.search(lowered) and (part := part_of_month_end(clause, now)) is not None:
        # "on leave until early November", "the code runs out at the end of October".
        return part
    m = re.search(
        rf"\b(?:until|till|til|through|thru|valid until|good until)\s+(?:the\s+end\s+of\s+)?{_EN_MONTH}(?!\s*\d)",
        lowered,
    )
    if m:
        # "valid until April": the whole of April.
        month = _EN_MONTHS[m.group(1)[:3]]
        year = now.year if month >= now.month else now.year + 1
        return month_end(date(year, month, 1), now)
    if re.search(
        rf"{_WHOLE_OF}{_EN_MONTH}(?!\s*\d)"
        r"|(?:\d{1,2}|[一二三四五六七八九十]{1,3})月份?(?:都|一整个月|整个月|全月)|整个(?:\d{1,2}|[一二三四五六七八九十]{1,3})月",
        lowered,
    ) and (whole_month := month_of(re.sub(_WHOLE_OF, "in ", lowered), now)):
        # "我十一月份都在国外", "away all of November": the whole month.
        return month_end(whole_month, now)
    if re.search(
        r"\b(?:until|till|by|before) (?:the )?end of (?:the |this )?year\b|到年底|年底前|年底之前|今年底",
        lowered,
    ):
        return _day_start(date(now.year + 1, 1, 1), now)
    if re.search(r"\b(?:until|till|before) next month\b|下个?月(?:之前|以前|前)", lowered):
        return _month_end(now)
    if re.search(
        r"\bfor (?:a few|a couple of|the next few|a couple|several) days\b|这几天|这两天|这些天",
        lowered,
    ):
        return now + timedelta(days=3)
    if re.search(r"\bnext weekend\b|\bend of next week\b|下个?周末|下周末", lowered):
        return _week_end(now, weeks_ahead=1)
    named_month_end = re.search(r"((?:\d{1,2}|[一二三四五六七八九十]{1,3})月)(?:份)?底", lowered)
    if named_month_end and (named := month_of(named_month_end.group(0), now)):
        # "上到十二月底": the end of the month named, not of this one.
        return month_end(named, now)
    if re.search(r"\bend of (?:the|this) month\b|月底|这个月底", lowered):
        return _month_end(now)
    if re.search(r"\b(?:this|for the|over the|at the) weekend\b|这个?周末|本周末", lowered):
        return _week_end(now)
    if re.search(r"\bthis week and next\b|这周和下周|这个?星期和下个?星期", lowered):
        return _week_end(now, weeks_ahead=1)
    if re.search(
        r"\bthis week\b|(?:这周|这个星期|这个礼拜|本周)(?![一二三四五六日天末])|这一周", lowered
    ):
        return _week_end(now)
    if re.search(r"\bnext week\b|下周|下个?星期|下个?礼拜", lowered) and not re.search(
        r"下(?:个)?(?:周|星期|礼拜)[一二三四五六日天]|next\s+" + _EN_WEEKDAY, lowered
    ):
        return _week_end(now, weeks_ahead=1)
    if re.search(r"\bthis month\b|这个月|本月", lowered):
        return _month_end(now)
    if re.search(r"\b(?:today|tonight|right now|at the moment)\b|今天|今晚|今日", lowered):
        return _day_end(now.date(), now)
    return None


def moment_of(clause: str, now: datetime) -> datetime | None:
    """The day an event in ``clause`` happens (its start, 00:00), or ``None``.

    Example:
        >>> from datetime import datetime, timezone
        >>> now = datetime(2026, 11, 30, 18, 0, tzinfo=timezone.utc)
        >>> moment_of("my flight is on 12 Dec", now).date().isoformat()
        '2026-12-12'
        >>> moment_of("I like tea", now) is None
        True
    """
    clause = time_words(clause)
    day = _named_day(clause, now)
    if day is not None:
        return _day_start(day, now)
    if re.search(r"\bnext week\b|下周|下个?星期|下个?礼拜", clause.lower()):
        today = now.date()
        return _day_start(today - timedelta(days=today.weekday()) + timedelta(days=7), now)
    month = month_of(clause, now)
    return _day_start(month, now) if month is not None else None
