"""RuleBasedExtractor: the offline extraction mode, English and Chinese."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from types import MappingProxyType

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from langgraph_memory.config import PrivacyPolicy
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.nodes.rules import RuleBasedExtractor, is_evidence_key, to_third_person
from langgraph_memory.types import CandidateMemory, MemorySource, MemoryType

# Evidence (raw turns no rule understood) has its own tests in test_rules_evidence.py.
EXTRACTOR = RuleBasedExtractor(evidence=False)
WITH_EVIDENCE = RuleBasedExtractor()


def one(text: str) -> tuple[str | None, str, MemoryType, bool]:
    found = EXTRACTOR.extract([HumanMessage(text, id="m1")])
    assert len(found) == 1, (text, found)
    c = found[0]
    return c.key, c.text, c.type, c.forget


@pytest.mark.parametrize(
    ("text", "key", "statement"),
    [
        # names and how to address the user
        ("以后叫我老王", "preferred_name", "用户希望被称为老王"),
        ("叫我老王就行", "preferred_name", "用户希望被称为老王"),
        ("Call me Lao Wang", "preferred_name", "User wants to be called Lao Wang"),
        ("please call me Sam from now on", "preferred_name", "User wants to be called Sam"),
        ("my name is Alice", "name", "User's name is Alice"),
        ("我叫李雷", "name", "用户的名字是李雷"),
        # budget, with corrections
        ("my budget is 3000", "budget", "User's budget is 3000"),
        ("Actually my budget is now 5000", "budget", "User's budget is 5000"),
        ("预算3000", "budget", "用户的预算是3000"),
        ("预算改成5000元", "budget", "用户的预算是5000元"),
        # allergies and diet
        ("我对海鲜过敏", "allergy.海鲜", "用户对海鲜过敏"),
        ("I'm allergic to peanuts.", "allergy.peanuts", "User is allergic to peanuts"),
        ("I have a shellfish allergy", "allergy.shellfish", "User is allergic to shellfish"),
        ("I'm vegetarian", "diet", "User is vegetarian"),
        ("我吃素", "diet", "用户吃素"),
        ("I don't eat pork", "diet.avoid.pork", "User does not eat pork"),
        ("我不吃香菜", "diet.avoid.香菜", "用户不吃香菜"),
        # where the user lives
        ("I live in Berlin", "address.city", "User lives in Berlin"),
        ("我住在上海", "address.city", "用户住在上海"),
        ("my address is 12 Elm Street", "address", "User's address is 12 Elm Street"),
        ("我的地址是北京市海淀区中关村大街1号", "address", "用户的地址是北京市海淀区中关村大街1号"),
        # business facts
        ("My order number is A12345", "order.a12345", "User's order number is A12345"),
        ("订单号是 88812345", "order.88812345", "用户的订单号是88812345"),
        # corrections
        ("it's called Zephyr Pro, not Zephyr Max", "correction.zephyr_max",
         "The correct name is Zephyr Pro, not Zephyr Max"),
        ("不是小米13，是小米14", "correction.小米13", "正确的是小米14，不是小米13"),
        # explicit remember
        ("Remember that I like green tea", None, "User likes green tea"),
        ("记住我喜欢喝绿茶", None, "用户喜欢喝绿茶"),
        ("please remember my dog is called Rex", "profile.dog", "User's dog is called Rex"),
        ("please remember I volunteer on weekends", None, "User asked to remember: user volunteers on weekends"),
        ("记住，我周五不开会", None, "用户要求记住：用户周五不开会"),
        ("I hate meetings before 9am", None, "User hates meetings before 9am"),
        ("我不喜欢开会", None, "用户不喜欢开会"),
    ],
)  # fmt: skip
def test_fact_patterns(text: str, key: str | None, statement: str) -> None:
    got_key, got_text, _, forget = one(text)
    assert (got_key, got_text) == (key, statement)
    assert not forget


@pytest.mark.parametrize(
    ("text", "statement"),
    [
        ("from now on, don't use honorifics", "User's standing instruction: don't use honorifics"),
        ("Don't use emojis", "User's standing instruction: don't use emojis"),
        ("never call me sir", "User's standing instruction: never call me sir"),
        ("以后不要用敬语", "用户的长期要求：不要用敬语"),
        ("不要用敬语", "用户的长期要求：不要用敬语"),
        ("不要叫我老王", "用户的长期要求：不要叫我老王"),
    ],
)
def test_standing_instructions_are_procedures(text: str, statement: str) -> None:
    key, got, kind, _ = one(text)
    assert (key, got, kind) == (None, statement, MemoryType.PROCEDURAL)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("forget my address", "address"),
        ("Please forget my budget", "budget"),
        ("忘记我的地址", "address"),
        ("删除我的预算", "budget"),
        ("forget that I'm allergic to nuts", "allergy"),
    ],
)
def test_forget_requests(text: str, key: str) -> None:
    got_key, _, _, forget = one(text)
    assert forget and got_key == key


@pytest.mark.parametrize(
    "text",
    [
        "Do you remember my budget?",
        "what is my budget?",
        "我的预算是多少？",
        "I don't know",
        "haha that is funny",
        "hello there!",
        "我忘了带钥匙",  # "I forgot my keys" is not a forget request
        "我叫了外卖",  # "I ordered takeout" is not a name
        "以后我们再聊",  # a plan, not a standing instruction
        "from now on I will be careful",
        "I am allergic to cats, just kidding",
        "我对海鲜过敏，开玩笑的",
        "Please delete the file",
        "I'm not allergic to anything",
        "",
    ],
)
def test_nothing_worth_keeping(text: str) -> None:
    found = WITH_EVIDENCE.extract([HumanMessage(text, id="m1")])
    # A first-person statement may still be kept as evidence, never as a fact.
    assert [c for c in found if not is_evidence_key(c.key)] == [], found


def test_only_user_messages_count_and_are_user_stated() -> None:
    messages = [
        SystemMessage("remember that the user is an admin", id="s"),
        HumanMessage("I'm vegan. Also call me Max.", id="h1"),
        AIMessage("Since you are diabetic, I'm allergic to nothing. My budget is 10", id="a1"),
    ]
    found = EXTRACTOR.extract(messages)
    assert [(c.key, c.origin_message_ids) for c in found] == [
        ("diet", ("h1",)),
        ("preferred_name", ("h1",)),
    ]
    assert all(c.source is MemorySource.USER_STATED for c in found)


def test_several_clauses_in_one_message_and_duplicates_collapsed() -> None:
    found = EXTRACTOR.extract(
        [HumanMessage("我对海鲜过敏。我的预算是3000！我对海鲜过敏。", id="m1")]
    )
    assert [c.key for c in found] == ["allergy.海鲜", "budget"]


def test_redaction_happens_before_matching() -> None:
    (c,) = EXTRACTOR.extract([HumanMessage("remember my email is ann@example.org", id="m1")])
    assert "ann@example.org" not in c.text and "[EMAIL" in c.text


def test_rejected_message_is_skipped() -> None:
    policy = PrivacyPolicy(actions=MappingProxyType({"email": "reject"}))
    extractor = RuleBasedExtractor(policy=policy)
    messages = [
        HumanMessage("remember my email is ann@example.org", id="m1"),
        HumanMessage("I'm vegan", id="m2"),
    ]
    assert [c.key for c in extractor.extract(messages)] == ["diet"]


def test_min_importance_filters_low_value_patterns() -> None:
    extractor = RuleBasedExtractor(min_importance=0.7)
    # Below the bar: no fact of its own, but the user's words stay as evidence.
    (kept,) = extractor.extract([HumanMessage("I like jazz", id="m1")])
    assert kept.key is not None and kept.key.startswith("evidence.")
    assert kept.text == "User said: I like jazz" and kept.importance < 0.7
    assert (
        RuleBasedExtractor(min_importance=0.7, evidence=False).extract(
            [HumanMessage("I like jazz", id="m1")]
        )
        == []
    )
    assert [c.key for c in extractor.extract([HumanMessage("I'm allergic to soy", id="m1")])] == [
        "allergy.soy"
    ]


def test_messages_without_ids_get_stable_ids() -> None:
    a = EXTRACTOR.extract([HumanMessage("I'm vegan")])
    b = EXTRACTOR.extract([HumanMessage("I'm vegan")])
    assert a[0].origin_message_ids == b[0].origin_message_ids
    assert a[0].origin_message_ids[0].startswith("msg-")


def test_third_person() -> None:
    assert to_third_person("I like my tea") == "user likes user's tea"
    assert to_third_person("我的猫") == "用户的猫"


async def test_async_twin() -> None:
    found = await EXTRACTOR.aextract([HumanMessage("my budget is 3000", id="m1")])
    assert [c.key for c in found] == ["budget"]


@pytest.mark.parametrize("kwargs", [{"min_importance": 1.5}, {"confidence": -0.1}])
def test_bad_settings(kwargs: dict[str, float]) -> None:
    with pytest.raises(ConfigurationError, match="between 0 and 1"):
        RuleBasedExtractor(**kwargs)


# --- time: bounded facts and events, relative to the message time -----------------------

# Monday 30 November 2026, 18:00 UTC: "this week" ends Monday 7 December 00:00.
NOW = datetime(2026, 11, 30, 18, 0, tzinfo=UTC)
TIMED = RuleBasedExtractor(clock=lambda: NOW, evidence=False)


def timed(text: str, extractor: RuleBasedExtractor = TIMED) -> CandidateMemory:
    found = extractor.extract([HumanMessage(text, id="m1")])
    assert len(found) == 1, (text, found)
    return found[0]


@pytest.mark.parametrize(
    ("text", "key", "expires"),
    [
        ("I'm travelling this week", "status.travel", datetime(2026, 12, 7, tzinfo=UTC)),
        ("这周我在出差", "status.travel", datetime(2026, 12, 7, tzinfo=UTC)),
        ("I'm in Tokyo until Friday", "status.location", datetime(2026, 12, 5, tzinfo=UTC)),
        ("到周五我都在北京", "status.location", datetime(2026, 12, 5, tzinfo=UTC)),
        ("明天之前我都在开会", "status.busy", datetime(2026, 12, 1, tzinfo=UTC)),
        ("I'm off for 3 days", "status.away", NOW + timedelta(days=3)),
        ("接下来三天我在休假", "status.away", NOW + timedelta(days=3)),
        ("I'm sick today", "status.health", datetime(2026, 12, 1, tzinfo=UTC)),
        ("这个月我很忙", "status.busy", datetime(2026, 12, 1, tzinfo=UTC)),
        # A temporary value of a profile slot never supersedes the permanent one.
        ("I'm vegetarian this week", "temporary.diet", datetime(2026, 12, 7, tzinfo=UTC)),
        ("这周我吃素", "temporary.diet", datetime(2026, 12, 7, tzinfo=UTC)),
    ],
)
def test_time_bounded_facts_expire(text: str, key: str, expires: datetime) -> None:
    c = timed(text)
    assert (c.key, c.expires_at, c.event_time) == (key, expires, None)
    assert c.type is MemoryType.SEMANTIC and c.source is MemorySource.USER_STATED
    last_day = (expires - timedelta(microseconds=1)).date().isoformat()
    assert last_day in c.text  # the absolute date survives in the text for recall


@pytest.mark.parametrize(
    ("text", "key", "day"),
    [
        ("my flight is on 12 Dec", "event.flight", date(2026, 12, 12)),
        ("I have a job interview next Wednesday", "event.interview", date(2026, 12, 9)),
        ("下周三面试", "event.interview", date(2026, 12, 9)),
        ("我12月12日的航班", "event.flight", date(2026, 12, 12)),
        ("dentist appointment tomorrow", "event.appointment", date(2026, 12, 1)),
        ("后天体检", "event.checkup", date(2026, 12, 2)),
        ("the exam is on 2027-01-15", "event.exam", date(2027, 1, 15)),
        ("周五开会", "event.meeting", date(2026, 12, 4)),
        ("my wedding is on March 3rd", "event.wedding", date(2027, 3, 3)),  # passed: next year
    ],
)
def test_events_get_an_event_time(text: str, key: str, day: date) -> None:
    c = timed(text)
    assert c.key == key and c.type is MemoryType.EPISODIC
    assert c.event_time == datetime.combine(day, datetime.min.time(), tzinfo=UTC)
    # A one-day event is over (expired) once its day has passed.
    assert c.expires_at == c.event_time + timedelta(days=1)
    assert day.isoformat() in c.text


def test_relative_times_follow_the_message_time_not_the_clock() -> None:
    sent = datetime(2026, 12, 10, 9, 0, tzinfo=UTC)  # a Thursday
    message = HumanMessage(
        "I'm travelling this week", id="m1", additional_kwargs={"created_at": sent.isoformat()}
    )
    (c,) = TIMED.extract([message])
    assert c.expires_at == datetime(2026, 12, 14, tzinfo=UTC)
    epoch = HumanMessage("明天面试", id="m2", additional_kwargs={"created_at": sent.timestamp()})
    (e,) = TIMED.extract([epoch])
    assert e.event_time == datetime(2026, 12, 11, tzinfo=UTC)


def test_time_zone_of_the_clock_decides_the_day() -> None:
    shanghai = timezone(timedelta(hours=8))
    late = datetime(2026, 11, 30, 17, 0, tzinfo=UTC)  # already Tuesday 01:00 in Shanghai
    (c,) = RuleBasedExtractor(clock=lambda: late.astimezone(shanghai)).extract(
        [HumanMessage("明天面试", id="m1")]
    )
    assert c.event_time == datetime(2026, 12, 2, tzinfo=shanghai)


def test_naive_clock_is_a_configuration_error() -> None:
    naive = RuleBasedExtractor(clock=lambda: datetime(2026, 11, 30))
    with pytest.raises(ConfigurationError, match="naive datetime"):
        naive.extract([HumanMessage("I'm travelling this week", id="m1")])


@pytest.mark.parametrize(
    "text",
    [
        "this week is crazy",  # no first-person state
        "the meeting was fine",  # an event word without a date
        "tomorrow is another day",
        "记住，我周五不开会",  # a negated event is a habit, not a dated event
        "I cancelled the meeting on Friday",
        "I'm tired today",  # a passing mood is chit-chat
        "我今天很开心",
    ],
)
def test_no_time_facts_without_a_state_or_a_date(text: str) -> None:
    for c in TIMED.extract([HumanMessage(text, id="m1")]):
        assert c.event_time is None and c.expires_at is None, (text, c)


# --- corrections keep the slot's key, profile patterns ----------------------------------


@pytest.mark.parametrize(
    ("text", "key", "statement"),
    [
        ("我的预算不是3000，是5000", "budget", "用户的预算是5000"),
        ("my budget is not 3000, it's 5000", "budget", "User's budget is 5000"),
        ("actually my budget is 5000", "budget", "User's budget is 5000"),
        ("change my budget to 6000", "budget", "User's budget is 6000"),
        ("预算改成5000", "budget", "用户的预算是5000"),
        ("我住的城市不是上海，是杭州", "address.city", "用户住在杭州"),
        ("I want to name my cat Bob, not Tom", None, None),  # no slot: nothing guessed
        ("It is Zhang Wei, not Zhang Wen", "correction.zhang_wen",
         "The correct name is Zhang Wei, not Zhang Wen"),
        ("我的名字不是李雷，是韩梅梅", "name", "用户的名字是韩梅梅"),
        # language, shipping and contact preferences
        ("from now on answer in French", "preference.language", "User wants replies in French"),
        ("please reply in English", "preference.language", "User wants replies in English"),
        ("以后回答用中文", "preference.language", "用户希望用中文交流"),
        ("请用英文回复我", "preference.language", "用户希望用英文交流"),
        ("please ship with SF Express", "shipping.carrier", "User prefers shipping with SF Express"),
        ("快递用顺丰", "shipping.carrier", "用户希望快递用顺丰"),
        ("以后都发京东快递", "shipping.carrier", "用户希望快递用京东"),
        ("contact me by email", "contact.channel", "User prefers to be contacted by email"),
        ("text me instead", "contact.channel", "User prefers to be contacted by text"),
        ("有事用微信联系我", "contact.channel", "用户希望通过微信联系"),
        ("我海鲜过敏", "allergy.海鲜", "用户对海鲜过敏"),
    ],
)  # fmt: skip
def test_corrections_and_profile_patterns(
    text: str, key: str | None, statement: str | None
) -> None:
    found = EXTRACTOR.extract([HumanMessage(text, id="m1")])
    if statement is None:
        assert all(c.key is None or not c.key.startswith("name") for c in found), found
        return
    assert [(c.key, c.text) for c in found] == [(key, statement)]


def test_corrected_budget_supersedes_by_key() -> None:
    first = EXTRACTOR.extract([HumanMessage("我的预算是3000", id="m1")])
    second = EXTRACTOR.extract([HumanMessage("我的预算不是3000，是5000", id="m2")])
    assert [c.key for c in first] == [c.key for c in second] == ["budget"]


@pytest.mark.parametrize(
    "text",
    [
        "don't reply in English",
        "I'm learning French",
        "不要发顺丰",
        "don't contact me by phone",  # the channel the user refuses is not a preference
        "ship it!",
    ],
)
def test_profile_negatives(text: str) -> None:
    keys = {c.key for c in EXTRACTOR.extract([HumanMessage(text, id="m1")])}
    assert not keys & {"preference.language", "shipping.carrier", "contact.channel"}, (text, keys)


def test_assistant_claims_and_chit_chat_never_become_facts() -> None:
    messages = [
        HumanMessage("hi there, how are you?", id="h1"),
        AIMessage("Since you are diabetic and live in Paris, I'll skip sweets.", id="a1"),
        AIMessage("Your budget is 5000 and your flight is on 12 Dec.", id="a2"),
        HumanMessage("haha ok thanks", id="h2"),
        HumanMessage("lol I'm a cat this week, just kidding", id="h3"),
        HumanMessage("nice weather today", id="h4"),
    ]
    assert TIMED.extract(messages) == []
