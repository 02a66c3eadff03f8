"""RuleBasedExtractor: the offline extraction mode, English and Chinese."""

from __future__ import annotations

from types import MappingProxyType

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from langgraph_memory.config import PrivacyPolicy
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.nodes.rules import RuleBasedExtractor, to_third_person
from langgraph_memory.types import MemorySource, MemoryType

EXTRACTOR = RuleBasedExtractor()


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
        ("please remember my dog is called Rex", None, "User asked to remember: user's dog is called Rex"),
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
        ("以后回答用中文", "用户的长期要求：回答用中文"),
        ("不要叫我老王", "用户的长期要求：不要叫我老王"),
        ("from now on answer in French", "User's standing instruction: answer in French"),
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
    assert EXTRACTOR.extract([HumanMessage(text, id="m1")]) == []


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
    assert "ann@example.org" not in c.text and "[EMAIL]" in c.text


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
    assert extractor.extract([HumanMessage("I like jazz", id="m1")]) == []
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
