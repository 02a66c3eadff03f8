"""A value that moved: the same thing counted again with another number, no update word.

The sentences are this file's own, English and Chinese, with the reverse cases beside
them: more of the same, a question, other things that happen to carry numbers, codes,
dates and someone else's value must not retire anything.
"""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from langgraph_memory.nodes.rules import RuleBasedExtractor
from langgraph_memory.nodes.rules._quantity import amounts, moves_quantity
from langgraph_memory.nodes.rules._retire import moved_part

EXTRACTOR = RuleBasedExtractor()


def health_facts(text: str) -> list[str]:
    found = EXTRACTOR.extract([HumanMessage(text, id="h1")])
    return [c.text for c in found if (c.key or "").startswith("health")]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Dad is on Glycomet 500 twice a day", "Doctor raised dad's Glycomet to 1000"),
        ("We're doing 25 tables for the wedding banquet", "make it 28 tables"),
        ("User's hourly rate is $55", "I raised my rate to $65 an hour starting January"),
        ("The insurance claim is for 62,500", "They revised the claim amount to 58,000"),
        ("Rent is 1,800 a month", "Landlord put the rent up to 1,950"),
        ("monthly SIP of Rs 5,000", "Bumped the SIP from 5,000 to 8,000"),
        (
            "Standing instruction: move 5% of salary to savings",
            "Change the standing instruction to 10%",
        ),
        ("用户的信用卡额度是两万", "额度提到三万了"),
        ("阿姨的工资是每月6500", "阿姨工资涨到7000了"),
        ("宽带是500M的套餐", "宽带升级成1000M了"),
        ("我们 budget 大概 5k", "budget 加到 8k 啦"),
    ],
)
def test_the_same_thing_with_another_number_moves_it(old: str, new: str) -> None:
    assert moves_quantity(new, old)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I ordered 3 shirts", "order 2 more shirts"),  # more of the same
        ("25 tables", "is it still 25 tables?"),  # a question
        ("25 tables", "25 tables and 3 high chairs"),  # the old value said again
        ("I have 2 kids", "my son is 7"),  # two different things
        ("my son is 7", "my daughter is 5"),
        ("my suitcase is 20kg", "I weigh 70 kg"),
        ("I went annual, the 139 a year one", "the 60 dollar one, ship it there"),
        ("order 114-7734219 came", "order 114-9902115 is too big"),  # codes are names
        ("flight on Dec 11", "hotel on Dec 14"),  # dates are the time rules' business
        ("我们订了25桌", "再加两桌"),
    ],
)
def test_other_numbers_move_nothing(old: str, new: str) -> None:
    assert not moves_quantity(new, old)


def test_an_amount_keeps_its_unit_and_neighbours() -> None:
    (rate,) = amounts("User said: my hourly rate is $55")
    assert (rate.value, rate.unit) == ("55.0", "$")
    assert "rate" in rate.anchors
    assert amounts("call me on 5550123 or at 20:30") == []


def test_only_the_moved_piece_of_a_turn_goes() -> None:
    old = "User said: we're doing 25 tables; the venue is the Marriott"
    assert moved_part("User said: make it 28 tables", old, split=True) == (
        "User said: the venue is the Marriott"
    )
    assert moved_part("User said: the venue has 3 floors", old, split=True) is None


def test_someone_elses_value_is_not_the_users() -> None:
    old = "User said: my mum takes 3mg of warfarin"
    assert moved_part("User said: I take 5mg of warfarin now", old, split=True) is None


def test_a_condition_is_kept_apart_from_its_dose() -> None:
    """A dose moves; the diagnosis stays: the health fact ends with the condition."""
    for text, condition in [
        ("我爸帕金森吃美多芭半片一天三次", "帕金森"),
        ("Dad has Parkinson's and takes half a Madopar three times a day", "Parkinson's"),
    ]:
        (health,) = health_facts(text)
        assert health.endswith(condition), health


def test_forgetfulness_said_as_a_joke_is_no_diagnosis() -> None:
    for text in ["哎我真是老年痴呆了，又忘了带钥匙", "lol I must have dementia, forgot my keys"]:
        assert not health_facts(text)
    (mum,) = health_facts("我妈有老年痴呆")
    assert "老年痴呆" in mum


def test_a_masked_value_and_the_facts_subject_tie_nothing() -> None:
    assert amounts("用户的手机号是[PHONE:*5678]") == []
    assert not moves_quantity("用户的手机号是[PHONE:*5678]", "用户的预算是5000")
    assert not moves_quantity("User's order total is 40", "User's budget is 5000")
