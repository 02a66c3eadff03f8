"""Dated plans in the ways people write them: every memory of the plan ends when it does.

Our own sentences (not an exam's): spaced digits ("11 月 20 日"), slash dates in a
Chinese plan ("11/19 走"), a day named without its month after one named with it
("11月15到22号", "下个月3号飞，8号回", "from November 3rd until the 7th"), Cantonese
("16號返嚟"), and trips whose day out and day back are separate clauses.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from langchain_core.messages import HumanMessage

from langgraph_memory.clock import ManualClock
from langgraph_memory.nodes._rules_time import time_words
from langgraph_memory.nodes.rules import RuleBasedExtractor
from langgraph_memory.nodes.rules._text import to_third_person
from langgraph_memory.types import CandidateMemory, MemoryType

SAID = datetime(2026, 10, 6, 9, tzinfo=UTC)  # a Tuesday

DATED_PLANS = [
    ("我们 11 月去 Bali 度假，15 到 22 号", "11-22"),
    ("我们11月去巴厘岛，15号到22号", "11-22"),
    ("东京那趟，11/19 走，11/24 回", "11-24"),
    ("11/19 出发，11/24 回来", "11-24"),
    ("我下个月3号飞成都，8号回", "11-08"),
    ("10月20号到25号我在上海出差", "10-25"),
    ("10 月 20 日至 10 月 25 日在上海", "10-25"),
    ("我哋11月12號去大阪，16號返嚟", "11-16"),
    ("下个月 12 号到 16 号我不在家", "11-16"),
    ("国庆后我去三亚，10月12到15号", "10-15"),
    ("We're in Lisbon 12–16 November", "11-16"),
    ("We're in Lisbon from 12 to 16 November", "11-16"),
    ("I'll be in Berlin from November 3rd until the 7th", "11-07"),
    ("Heading to Rome on the 14th, flying home on the 20th", "10-20"),
    ("We fly out Nov 2 and come back Nov 9", "11-09"),
    ("Away 11/2 to 11/9, please hold my mail", "11-09"),
    ("My parents are staying with us from Oct 20 till Oct 27", "10-27"),
    ("I'm on leave Oct 19 - Oct 23", "10-23"),
    ("The conference runs 18-20 Nov in Sydney", "11-20"),
    ("Out of office until 22 October", "10-22"),
    ("I'm in hospital till Friday", "10-09"),
    ("在医院住到周五", "10-09"),
    ("这周五之前我都在外地", "10-08"),
    ("I'm in Manchester next week for training", "10-18"),
    ("下周我在杭州培训", "10-18"),
    ("Our flight is Oct 30, back Nov 4", "11-04"),
    ("We leave on the 28th and get back on the 3rd", "11-03"),
    ("酒店订了 11 月 2 日入住，5 日退房", "11-05"),
    ("Checking in 2 Nov, checking out 5 Nov", "11-05"),
    ("我 12 月 1 号到 12 月 10 号回老家", "12-10"),
]


def _last_days(text: str, said: datetime = SAID) -> list[str | None]:
    found = RuleBasedExtractor(clock=ManualClock(said)).extract([HumanMessage(text, id="m1")])
    assert found, text
    return sorted(
        {
            (c.expires_at - timedelta(microseconds=1)).strftime("%m-%d") if c.expires_at else None
            for c in found
        },
        key=str,
    )


@pytest.mark.parametrize(("text", "last_day"), DATED_PLANS)
def test_every_memory_of_a_dated_plan_ends_with_it(text: str, last_day: str) -> None:
    assert _last_days(text) == [last_day]


@pytest.mark.parametrize(
    "text",
    [
        "找到长期的房子了! 12 月 1 号搬去 Prenzlauer Berg。",
        "Found a proper flat! Moving to Prenzlauer Berg on Dec 1.",
        "我们下个月 3 号搬到浦东",
    ],
)
def test_a_move_to_a_new_home_holds_on_after_its_day(text: str) -> None:
    assert _last_days(text, datetime(2026, 11, 25, 9, tzinfo=UTC)) == [None]


def test_a_move_out_is_over_after_its_day() -> None:
    assert "12-01" in _last_days(
        "We move out of the flat on Dec 1", datetime(2026, 11, 25, tzinfo=UTC)
    )


@pytest.mark.parametrize(
    ("clause", "read_as"),
    [
        ("11月28号走，3号回", "11月28号走，12月3号回"),  # a smaller day is the next month
        ("下个月3号飞成都，8号回", "下个月3号飞成都，下个月8号回"),
        ("10 月 20 日至 10 月 25 日", "10月20日至10月25日"),
        ("1/2 杯糖", "1/2 杯糖"),  # a fraction is no date
        ("住3号楼，11月5号搬", "住3号楼，11月5号搬"),  # no month before the building number
        ("11月搬进3号楼", "11月搬进3号楼"),
        ("Nov 28 out, back on the 3rd", "Nov 28 out, back on December 3"),
        ("the 3rd floor in May 2", "the 3rd floor in May 2"),
    ],
)
def test_dates_are_read_with_the_month_named_before_them(clause: str, read_as: str) -> None:
    assert time_words(clause) == read_as


@pytest.mark.parametrize("we", ["我们", "我們", "我哋", "咱们"])
def test_we_is_the_user_and_others_not_the_user_alone(we: str) -> None:
    assert to_third_person(f"{we}11月去大阪") == "用户和其他人11月去大阪"


# Bounds named by a holiday, a weekday range, a whole month or "this week and next".
# SAID is Tuesday 6 October 2026.
NAMED_BOUNDS = [
    ("Hold my parcels till Christmas, I'm away", "12-25"),
    ("我在伦敦待到圣诞", "12-25"),
    ("I'm with my parents till New Year's Eve", "12-31"),
    ("我元旦之前都不在家，快递先别寄", "12-31"),
    ("We're at my in-laws over New Year", "01-01"),
    ("下周一到周五我在深圳出差", "10-16"),
    ("I'm on a course next Monday to Friday", "10-16"),
    ("I'm visiting family next Tuesday to Thursday", "10-15"),
    ("呢个星期我唔喺香港", "10-11"),
    ("I'm off this week and next", "10-18"),
    ("这周和下周我都在外地", "10-18"),
    ("这周五我要去医院复查", "10-09"),
    ("我十一月份都在国外", "11-30"),
    ("整个十一月我都在老家", "11-30"),
    ("I'm abroad all of November", "11-30"),
    ("Back on Oct 15, don't ship anything before then", "10-15"),
    ("我20号回来，在那之前别打电话", "10-20"),
    ("Our anniversary dinner is this Saturday at 7", "10-10"),
    ("我生日派对在这周六", "10-10"),
    ("The plumber is coming Thursday", "10-08"),
    # Two days of a month with no month named; the end of a month named in characters.
    ("I'm in Denver for a conference the 20th to the 24th", "10-24"),
    ("We're at the cottage from the 28th to the 2nd", "11-02"),
    ("我报了个继续教育的课，上到十二月底", "12-31"),
    ("12月底之前我都在上海", "12-31"),
    ("在 Kreuzberg 租了个 WG 的房间, 只租到 11 月底", "11-30"),  # not this month's end
]


@pytest.mark.parametrize(("text", "last_day"), NAMED_BOUNDS)
def test_a_plan_bounded_by_a_named_time_ends_with_it(text: str, last_day: str) -> None:
    assert _last_days(text) == [last_day]


@pytest.mark.parametrize(
    "text", ["Our anniversary is 3 May", "My birthday is on 12 March", "我们结婚周年是5月3号"]
)
def test_a_yearly_date_does_not_expire(text: str) -> None:
    assert _last_days(text) == [None]


def test_an_instruction_until_then_lasts_as_long_as_the_plan_and_says_so() -> None:
    found = RuleBasedExtractor(clock=ManualClock(SAID)).extract(
        [HumanMessage("I'm in Lisbon till the 9th, please don't call me before then", id="m1")]
    )
    instruction = next(c for c in found if c.type.value == "procedural")
    assert instruction.text.endswith("(until 2026-10-09)")
    assert instruction.expires_at == datetime(2026, 10, 10, tzinfo=UTC)


def test_cancelling_by_the_imperative_is_an_update() -> None:
    from langgraph_memory.nodes.rules._evidence import updates

    assert updates("User said: Cancel the Edinburgh one actually")
    assert updates("用户说：取消爱丁堡那个")
    assert not updates("User said: I booked Edinburgh for March")


@pytest.mark.parametrize(
    ("text", "last_day"),
    [
        ("We're moving house on the 20th. Until then, post anything to my mum's place", "10-19"),
        ("我们下个月3号搬家。在那之前快递寄到我妈家", "11-02"),
    ],
)
def test_until_then_in_the_next_sentence_ends_the_day_before_the_date_named(
    text: str, last_day: str
) -> None:
    found = RuleBasedExtractor(clock=ManualClock(SAID)).extract([HumanMessage(text, id="m1")])
    until_then = next(c for c in found if "Until then" in c.text or "在那之前" in c.text)
    assert until_then.expires_at is not None
    assert (until_then.expires_at - timedelta(microseconds=1)).strftime("%m-%d") == last_day


@pytest.mark.parametrize(
    ("text", "last_day"),
    [
        ("国庆期间我回老家", "10-07"),
        ("十一长假我在杭州", "10-07"),
        ("国庆节那几天寄到我妈家", "10-07"),
        ("五一假期我们去三亚", "05-05"),
        ("For the rest of November I'm working from the Berlin office", "11-30"),
        ("for the rest of the month I'm on nights", "09-30"),
    ],
)
def test_a_holiday_or_the_rest_of_a_month_is_a_period(text: str, last_day: str) -> None:
    assert _last_days(text, datetime(2026, 9, 20, 9, tzinfo=UTC)) == [last_day]


def test_after_a_holiday_is_not_during_it() -> None:
    # "国庆后" names when the trip starts; its own dates bound it.
    assert _last_days("国庆后我去三亚，10月12到15号", datetime(2026, 9, 20, 9, tzinfo=UTC)) == ["10-15"]


@pytest.mark.parametrize(
    ("text", "last_day"),
    [
        # A written date beside its weekday is the date (10 Oct 2026 is a Saturday).
        ("帮我约 10 月 18 号星期日朝早", "10-18"),
        ("幫我約 10 月 18 號星期日朝早", "10-18"),
        ("Book the check-up for Sunday Oct 18, morning", "10-18"),
    ],
)
def test_a_date_with_its_weekday_ends_on_the_date(text: str, last_day: str) -> None:
    assert _last_days(text) == [last_day]


@pytest.mark.parametrize(
    "text",
    [
        "We're in Leeds now, Chapel Allerton, got the keys at the weekend",
        "the engineer came on Friday and fixed the boiler",
    ],
)
def test_a_weekday_in_the_past_tense_is_the_last_one_and_ends_nothing(text: str) -> None:
    assert _last_days(text) == [None]


def test_a_stated_end_in_the_past_tense_still_ends_it() -> None:
    assert _last_days("the sale was extended till Friday, I'm told") == ["10-09"]


@pytest.mark.parametrize(
    ("text", "last_day"),
    [
        # A part of a month ends with that part (SAID is 6 Oct 2026).
        ("I've got a 15% code that runs out at the end of October", "10-31"),
        ("I'm on parental leave until early November", "11-10"),
        ("my daughter has her GCSE mocks in the first week of November, keep evenings free", "11-07"),
        ("我有张满200减30的券，11月底到期", "11-30"),
    ],
)
def test_a_part_of_a_month_ends_with_that_part(text: str, last_day: str) -> None:
    assert last_day in _last_days(text), _last_days(text)


def test_a_move_at_the_end_of_a_month_holds_on() -> None:
    assert _last_days("we're moving to Leeds at the end of October") == [None]


def _rules_of(text: str) -> list[CandidateMemory]:
    found = RuleBasedExtractor(clock=ManualClock(SAID)).extract([HumanMessage(text, id="m1")])
    return [c for c in found if c.type is MemoryType.PROCEDURAL]


@pytest.mark.parametrize(
    "text",
    ["儿子下周一到周三期中考试，晚上别安排事", "I'm in Rome from the 12th to the 16th, don't call me during the day"],
)
def test_a_rule_said_with_a_dated_plan_ends_with_it(text: str) -> None:
    rules = _rules_of(text)
    assert rules and all(c.expires_at is not None for c in rules), rules


@pytest.mark.parametrize(
    "text",
    [
        "儿子下周一到周三期中考试，以后晚上都别安排事",
        "每周六下午去攀岩馆. 还有周末别 ping 我工作上的事, 周一再说, 下周三前把报告给我",
    ],
)
def test_a_lasting_or_recurring_rule_said_with_a_date_holds_on(text: str) -> None:
    rules = _rules_of(text)
    assert rules and all(c.expires_at is None for c in rules), rules


def test_a_short_chinese_clause_ends_with_its_sentence_a_bare_noun_does_not() -> None:
    assert _last_days("这周我感冒了，在家办公") == ["10-11"]
    assert None in _last_days("我家豆豆下周二打疫苗，柯基")
