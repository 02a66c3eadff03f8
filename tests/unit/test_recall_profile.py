"""The core profile: critical facts shown every turn, bounded, explained (issue 15, part 3)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.graph.message import add_messages

from langgraph_memory.errors import ConfigurationError
from langgraph_memory.nodes._profile import (
    ProfilePolicy,
    is_about_me,
    profile_reason,
    select_profile,
)
from langgraph_memory.nodes.recall import (
    RECALL_METADATA_KEY,
    create_recall_node,
    explain_recall,
    pack_memories,
    plan_recall,
    recalled_block,
    recalled_metadata,
)
from langgraph_memory.tokens import count_message_tokens
from langgraph_memory.types import (
    MemoryRecord,
    MemorySource,
    MemoryStatus,
    MemoryType,
    ScoredMemory,
)
from tests.unit.test_recall import CONFIG, ListMemoryStore, record

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def scored(records: list[MemoryRecord], score: float = 0.5) -> list[ScoredMemory]:
    return [ScoredMemory(r, score) for r in records]


# --------------------------------------------------------------------------- who qualifies


@pytest.mark.parametrize(
    ("memory", "family"),
    [
        (record("User is allergic to seafood", key="allergy.seafood", importance=0.95), "safety"),
        (record("用户对花生过敏", key="allergy:peanut"), "safety"),
        (record("User's son is allergic to peanuts", importance=0.3), "safety"),  # evidence
        (record("用户的女儿有哮喘", importance=0.7), "safety"),
        (record("User takes blood pressure medication daily", type=MemoryType.EPISODIC), "safety"),
        (
            record("User wants to be called Lao Wang", key="preferred_name", importance=0.9),
            "identity",
        ),
        (record("用户希望被称为王老师", importance=0.8), "identity"),
        (record("Never use honorifics", type=MemoryType.PROCEDURAL, importance=0.4), "instruction"),
        (record("User lives in Hangzhou", key="address.city", importance=0.7), "slot"),
        (record("用户住在成都", importance=0.7), "slot"),
        (record("User's budget is 5000 yuan", key="budget", importance=0.8), "slot"),
        (record("User is vegetarian", key="diet", importance=0.85), "slot"),
        (record("User's home city is Xi'an", key="home_city", importance=0.8), "slot"),
        (record("User is a gold member of the store", importance=0.9), "important"),
        (record("User's order A123 ships Friday", key="order.a123", importance=0.7), "important"),
    ],
)
def test_families(memory: MemoryRecord, family: str) -> None:
    assert profile_reason(memory) == family


@pytest.mark.parametrize(
    "memory",
    [
        record("User likes jazz"),  # ordinary preference, importance 0.5
        record("User lives in Hangzhou", key="address.city", importance=0.4),  # too unimportant
        record("User is allergic to seafood", status=MemoryStatus.SUPERSEDED),
        record("User is in Tokyo this week", key="temporary.location", importance=0.9),
        record(
            "User is probably vegetarian",
            key="diet",
            importance=0.9,
            source=MemorySource.AGENT_INFERRED,
            confidence=0.5,
        ),
        record("User's order A123 shipped", key="order.a123", importance=0.5),
        record("User went hiking last spring", type=MemoryType.EPISODIC, importance=0.9),
        record("Agent thinks the user is a gold member", source=MemorySource.AGENT_INFERRED),
    ],
)
def test_non_members(memory: MemoryRecord) -> None:
    assert profile_reason(memory) is None


def test_ended_and_expired_memories_never_qualify_at_now() -> None:
    ended = record("User lives in Hangzhou", key="address.city", importance=0.8, valid_to=NOW)
    expired = record("User is allergic to pollen", expires_at=NOW - timedelta(days=1))
    later = record("User is allergic to pollen", expires_at=NOW + timedelta(days=1))
    assert profile_reason(ended, now=NOW) is None
    assert profile_reason(expired, now=NOW) is None
    assert profile_reason(later, now=NOW) == "safety"


def test_events_are_important_only_while_ahead_or_time_boxed() -> None:
    trip = record(
        "User flies to Tokyo", type=MemoryType.EPISODIC, importance=0.8, event_time=NOW + DAY
    )
    promo = record(
        "User's coupon is valid", type=MemoryType.EPISODIC, importance=0.7, expires_at=NOW + DAY
    )
    assert profile_reason(trip, now=NOW) == "important"
    assert profile_reason(trip, now=NOW + 2 * DAY) is None  # the flight is over
    assert profile_reason(trip) is None  # no clock: cannot tell, left to the query
    assert profile_reason(promo, now=NOW) == "important"
    assert profile_reason(promo, now=NOW + 2 * DAY) is None  # lapsed


def test_order_is_family_then_user_stated_then_importance_and_one_per_key() -> None:
    picked = select_profile(
        [
            record("User lives in Hangzhou", key="address.city", importance=0.7),
            record("User is allergic to cats", importance=0.6),
            record(
                "User seems allergic to dust",
                source=MemorySource.AGENT_INFERRED,
                confidence=0.9,
                importance=0.9,
            ),
            record("User is allergic to seafood", key="allergy", importance=0.95),
            record("User is allergic to shellfish", key="allergy", importance=0.9),  # same slot
            record("Reply in Chinese", type=MemoryType.PROCEDURAL, importance=0.8),
            record("User is called Lao Wang", key="name", importance=0.8),
        ]
    )
    assert [p.record.text for p in picked] == [
        "User is allergic to seafood",
        "User is allergic to cats",
        "User seems allergic to dust",
        "Reply in Chinese",
        "User is called Lao Wang",
        "User lives in Hangzhou",
    ]


def test_caps_on_facts_and_instructions() -> None:
    facts = [record(f"User is allergic to thing {i}", importance=0.9) for i in range(30)]
    rules = [record(f"Rule {i}", type=MemoryType.PROCEDURAL) for i in range(5)]
    policy = ProfilePolicy(max_items=4, about_me_items=10)
    picked = select_profile([*facts, *rules], policy, max_instructions=2)
    assert sum(p.family == "safety" for p in picked) == 4
    assert sum(p.family == "instruction" for p in picked) == 2
    assert len(select_profile(facts, policy, about_me=True)) == 10


@pytest.mark.parametrize(
    ("query", "about_me"),
    [
        ("What do you know about me?", True),
        ("who am I", True),
        ("Tell me about myself", True),
        ("what do you remember?", True),
        ("我是谁", True),
        ("你记得我什么？", True),
        ("你对我有多少了解", True),
        ("你知道我哪些事情", True),
        ("what do you know about Paris?", False),
        ("remember to book the hotel", False),
        ("我想知道成都有什么好吃的", False),
    ],
)
def test_about_me_questions(query: str, about_me: bool) -> None:
    assert is_about_me(query) is about_me


@pytest.mark.parametrize(
    "kwargs",
    [{"share": 0}, {"share": 1.0}, {"about_me_share": 1.5}, {"max_items": 0}, {"pool": 0}],
)
def test_bad_policies_are_rejected(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError, match="ProfilePolicy"):
        ProfilePolicy(**kwargs)


# --------------------------------------------------------------------------- packing


def test_profile_is_shown_for_a_need_that_never_names_it() -> None:
    allergy = record("User is allergic to seafood", key="allergy", importance=0.95)
    jazz = record("User likes jazz")
    packed = plan_recall(
        "what should I cook tonight?", [], scored([allergy, jazz]), budget_tokens=600
    )
    assert packed.profile_ids == (allergy.id,)
    assert "User is allergic to seafood" in packed.text and "jazz" not in packed.text
    assert "## Core profile" in packed.text


def test_profile_cannot_crowd_out_relevant_memories() -> None:
    profile_facts = [
        record(f"User is allergic to ingredient number {i} " + "x " * 10, importance=0.9)
        for i in range(20)
    ]
    relevant = [record(f"Hotel note {i}: lake view rooms cost 600 a night") for i in range(5)]
    budget = 600
    packed = plan_recall(
        "lake view hotel?",
        scored(relevant, 0.8),
        scored(profile_facts),
        budget_tokens=budget,
        profile=ProfilePolicy(share=0.25, max_items=20),
    )
    assert packed.tokens <= budget
    assert 0 < packed.profile_tokens <= 0.25 * budget
    assert all(r.id in packed.memory_ids for r in relevant)  # all five still fit
    assert len(packed.profile_ids) < 20


def test_about_me_gets_a_larger_share() -> None:
    facts = [record(f"User is allergic to food number {i} " + "x " * 8) for i in range(20)]
    normal = plan_recall("hotel ideas?", [], scored(facts), budget_tokens=800)
    about_me = plan_recall("what do you know about me?", [], scored(facts), budget_tokens=800)
    assert len(about_me.profile_ids) > len(normal.profile_ids)
    assert about_me.profile_tokens > 0.25 * 800 >= normal.profile_tokens


def test_standing_instructions_keep_the_whole_budget() -> None:
    facts = [record(f"User is allergic to food number {i} " + "x " * 8) for i in range(10)]
    rule = record("Never use honorifics", type=MemoryType.PROCEDURAL)
    packed = plan_recall(
        "hi", [], scored([*facts, rule]), budget_tokens=200, profile=ProfilePolicy(share=0.1)
    )
    assert rule.id in packed.profile_ids
    assert "## How to act" in packed.text


def test_profile_off_keeps_the_old_pinning() -> None:
    rule = record("Never use honorifics", type=MemoryType.PROCEDURAL)
    allergy = record("User is allergic to seafood", key="allergy")
    packed = plan_recall("hi", [], scored([rule, allergy]), budget_tokens=600, profile=None)
    assert packed.memory_ids == (rule.id,) and packed.profile_ids == ()


def test_now_filters_what_the_store_let_through() -> None:
    stale = record("User lives in Hangzhou", key="address.city", importance=0.8, valid_to=NOW)
    found = record("User likes hot pot", expires_at=NOW - timedelta(hours=1))
    packed = plan_recall(
        "hot pot in Hangzhou?", scored([found]), scored([stale]), budget_tokens=600, now=NOW
    )
    assert packed.memory_ids == ()


def test_explain_says_what_is_in_and_why_the_rest_is_out() -> None:
    facts = [
        record(f"User is allergic to food {i} " + "x " * 20, id=f"f{i}", importance=0.9 - i / 100)
        for i in range(6)
    ]
    tea = record("User likes green tea", id="tea")
    packed = plan_recall("tea?", scored([tea, facts[0]], 0.7), scored(facts), budget_tokens=300)
    text = explain_recall(packed)
    assert text.splitlines()[0].startswith(f"recall: {len(packed.memory_ids)} memories")
    assert "+ f0 profile (safety)" in text
    assert "+ tea relevant (score 0.700)" in text
    assert "- f0 relevant (score 0.700)" in text and "already in the block" in text
    assert "over the profile share" in text


def test_tight_measure_drops_the_last_choice() -> None:
    """The per-line sum may undercount; the measured block still respects the budget."""

    def lumpy(messages: Any) -> int:  # every newline costs 5: lines are not additive
        return count_message_tokens(messages) + 5 * sum(
            str(m.content).count("\n") for m in messages
        )

    many = [record(f"Fact {i} about hotels and lakes") for i in range(30)]
    packed = pack_memories(scored(many), budget_tokens=200, token_counter=lumpy)
    assert packed.tokens == lumpy([SystemMessage(packed.text)]) <= 200


# --------------------------------------------------------------------------- the node


def apply(messages: list[Any], update: dict[str, Any]) -> list[Any]:
    return add_messages(messages, update.get("messages", [])) if update else messages


def test_node_metadata_lists_what_was_injected() -> None:
    allergy = record("User is allergic to seafood", key="allergy", importance=0.95)
    tea = record("User likes green tea")
    store = ListMemoryStore([allergy, tea, record("User likes jazz")])
    recall = create_recall_node(store=store, update_access_stats=False, recent_fill=False)
    msgs = [HumanMessage("green tea or coffee?", id="h1")]
    msgs = apply(msgs, recall.invoke({"messages": msgs}, CONFIG))
    metadata = recalled_metadata(msgs)
    assert metadata == {
        "memory_ids": [allergy.id, tea.id],
        "profile_ids": [allergy.id],
        "query": "green tea or coffee?",
    }
    block = recalled_block(msgs) or ""
    assert "jazz" not in block
    message = next(m for m in msgs if m.id and m.id.startswith("langgraph-memory:recall"))
    assert message.additional_kwargs[RECALL_METADATA_KEY]["query"] == "green tea or coffee?"


def test_node_explain_rows() -> None:
    store = ListMemoryStore([record("User is allergic to seafood", key="allergy")])
    recall = create_recall_node(store=store, explain=True, update_access_stats=False)
    msgs = [HumanMessage("dinner?", id="h1")]
    metadata = recalled_metadata(apply(msgs, recall.invoke({"messages": msgs}, CONFIG))) or {}
    assert metadata["explain"] == [
        {
            "memory_id": store.records[0].id,
            "part": "profile",
            "reason": "safety",
            "injected": True,
            "note": "",
        }
    ]


def test_node_answers_about_me_in_chinese() -> None:
    facts = [
        record("用户希望被称为老王", key="preferred_name", importance=0.9),
        record("用户住在杭州", key="address.city", importance=0.7),
        record("用户对海鲜过敏", key="allergy.海鲜", importance=0.95),
        record("用户喜欢爵士乐"),
    ]
    recall = create_recall_node(store=ListMemoryStore(facts), update_access_stats=False)
    msgs = [HumanMessage("你记得我什么？", id="h1")]
    block = recalled_block(apply(msgs, recall.invoke({"messages": msgs}, CONFIG))) or ""
    for text in ("老王", "杭州", "海鲜"):
        assert text in block


def test_metadata_change_alone_rewrites_the_block() -> None:
    store = ListMemoryStore([record("User is allergic to seafood", key="allergy")])
    recall = create_recall_node(store=store, update_access_stats=False, context_messages=0)
    msgs = [HumanMessage("dinner?", id="h1")]
    msgs = apply(msgs, recall.invoke({"messages": msgs}, CONFIG))
    msgs = [*msgs, HumanMessage("lunch?", id="h2")]
    update = recall.invoke({"messages": msgs}, CONFIG)  # same block text, new query
    assert (recalled_metadata(apply(msgs, update)) or {})["query"] == "lunch?"


def test_a_bad_profile_argument_is_rejected() -> None:
    with pytest.raises(ConfigurationError, match="ProfilePolicy"):
        create_recall_node(profile=0.3)  # type: ignore[arg-type]
