"""Evidence end to end (rules -> reconcile -> real Chroma store), under a ManualClock.

Evidence keeps what no rule understood; it must never serve a superseded value
as current, must go when the user asks to forget its topic, and must expire
when it was time-bound.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from langgraph_memory.clock import ManualClock
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.nodes.rules import is_evidence_key
from langgraph_memory.nodes.writer import MemoryWriter
from tests.integration._rules_world import rules_store, rules_writer, say_as

U = "carol"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2026, 11, 30, 9, 0, tzinfo=UTC))


@pytest.fixture
def store(tmp_path: Path, clock: ManualClock) -> Iterator[ChromaMemoryStore]:
    s = rules_store(tmp_path, clock)
    yield s
    s.close()


@pytest.fixture
def writer(store: ChromaMemoryStore, clock: ManualClock) -> MemoryWriter:
    return rules_writer(store, clock)


def say(writer: MemoryWriter, clock: ManualClock, text: str, mid: str) -> None:
    say_as(writer, clock, U, text, mid)


def recalled(store: ChromaMemoryStore, query: str) -> list[str]:
    return [s.record.text for s in store.search_memories(U, query, limit=10)]


@pytest.mark.parametrize(
    ("first", "move", "old", "new"),
    [
        (
            "I live in Beijing and I volunteer at a children's hospital",
            "I moved to Shanghai last month, the commute is fine",
            "Beijing",
            "Shanghai",
        ),
        ("我住在北京，在一家儿童医院当护士", "我搬到上海了，通勤还行", "北京", "上海"),
    ],
)
def test_a_move_never_leaves_the_old_city_current(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    first: str,
    move: str,
    old: str,
    new: str,
) -> None:
    say(writer, clock, first, "h1")
    active = store.list_memories(U)
    assert any(
        is_evidence_key(r.key) and ("hospital" in r.text or "医院" in r.text) for r in active
    )
    say(writer, clock, move, "h2")
    # Neither the old fact nor any evidence holds the old city as current.
    assert not any(old in r.text for r in store.list_memories(U))
    texts = recalled(store, f"where do I live {old} {new}")
    assert any(new in t for t in texts), texts
    assert not any(old in t for t in texts), texts
    (city,) = [r for r in store.list_memories(U) if r.key == "address.city"]
    assert new in city.text
    history = store.list_memories(U, include_history=True)
    assert any(old in r.text and r.valid_to is not None for r in history)


def test_forget_deletes_the_evidence_on_that_topic(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "The parcel should go to my office address near the central station", "h1")
    say(writer, clock, "I'm a keen birdwatcher on weekends", "h2")
    assert len([r for r in store.list_memories(U) if is_evidence_key(r.key)]) == 2
    say(writer, clock, "btw, could you forget my address", "h3")
    left = [r.text for r in store.list_memories(U)]
    assert not any("address" in t for t in left), left
    assert any("birdwatcher" in t for t in left), left


def test_time_bound_evidence_expires_with_the_sweep(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "I'm doing night shifts this week so mornings are hard", "h1")
    (evidence,) = [r for r in store.list_memories(U) if is_evidence_key(r.key)]
    assert evidence.expires_at == datetime(2026, 12, 7, tzinfo=UTC)
    clock.set(datetime(2026, 12, 7, 0, 1, tzinfo=UTC))
    assert recalled(store, "night shifts mornings") == []
    assert store.expire_due(U) == 1


@pytest.mark.parametrize(
    ("first", "update", "old", "new"),
    [
        ("I'm on the 50GB mobile data package", "I switched to the unlimited data package",
         "50GB", "unlimited"),
        ("周末我一般去游泳馆游泳", "现在周末改成去健身房了，不去游泳馆", "游泳馆游泳", "健身房"),
    ],
)  # fmt: skip
def test_an_update_supersedes_the_raw_turn_it_updates(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    first: str,
    update: str,
    old: str,
    new: str,
) -> None:
    say(writer, clock, first, "h1")
    say(writer, clock, update, "h2")
    active = [r.text for r in store.list_memories(U)]
    assert any(new in t for t in active), active
    assert not any(old in t and new not in t for t in active), active
    history = store.list_memories(U, include_history=True)
    assert any(old in r.text and r.superseded_by for r in history)


def test_forget_deletes_evidence_sharing_a_term_with_the_request(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "I keep my bicycle in the basement storage room", "h1")
    say(writer, clock, "please forget what I said about my bicycle", "h2")
    assert not any(
        "bicycle" in r.text for r in store.list_memories(U) if not r.key or "forget" not in r.text
    )


def test_evidence_never_keeps_a_number_the_redactor_missed(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "the code on my locker tag reads 12345 678901 A", "h1")
    texts = [r.text for r in store.list_memories(U, include_history=True)]
    assert texts and not any("678901" in t for t in texts), texts


# --- updates, forgets and time bounds that share no word with what they change ----------


def _active_texts(store: ChromaMemoryStore) -> list[str]:
    return [r.text for r in store.list_memories(U)]


def test_an_update_on_the_same_topic_retires_the_old_statement(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "We're renting a flat in Leith, two cats.", "h1")
    say(writer, clock, "My GP moved my appointment to Friday.", "h2")
    # A change that is not about home leaves the home statement alone.
    assert any("Leith" in t for t in _active_texts(store))
    say(writer, clock, "Big news, we moved to Portobello last month.", "h3")
    texts = _active_texts(store)
    assert not any("Leith" in t for t in texts), texts
    assert any("Portobello" in t for t in texts)
    history = store.list_memories(U, include_history=True)
    (old,) = [r for r in history if "Leith" in r.text]
    assert old.status.value == "superseded" and old.valid_to is not None


def test_a_change_later_in_the_same_conversation_replaces_the_earlier_turn(
    store: ChromaMemoryStore, writer: MemoryWriter
) -> None:
    writer.submit(
        U,
        "t",
        [
            HumanMessage("I need a table at Rocco's for the 5th, window seat.", id="h1"),
            HumanMessage("Change of plan, can we do the 6th instead? Same table.", id="h2"),
        ],
    )
    texts = _active_texts(store)
    assert not any("the 5th" in t for t in texts), texts
    assert any("6th" in t for t in texts)


def test_forget_requests_reach_their_topic_wherever_it_is_said(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "My spare number is 07700 900123, use it on weekends.", "h1")
    say(writer, clock, "My ex Tomasz keeps emailing me about the car.", "h2")
    say(writer, clock, "I had a knee operation last month, so no stairs.", "h3")
    say(writer, clock, "That spare number is dead now, please delete it.", "h4")
    say(writer, clock, "Oh and forget what I said about Tomasz, I was venting.", "h5")
    say(writer, clock, "And delete the card number I typed last time.", "h6")
    texts = _active_texts(store)
    assert not any("[PHONE]" in t or "spare" in t for t in texts), texts
    assert not any("Tomasz" in t for t in texts), texts
    # "last time" is not a topic: the knee stays.
    assert any("knee" in t for t in texts), texts
    # The requests themselves are not kept as things the user said.
    assert not any("delete" in t.lower() or "venting" in t for t in texts), texts


def test_an_accepted_offer_replaces_the_plan_it_changes(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    from langchain_core.messages import AIMessage

    say(writer, clock, "I'm on the 10GB plan, £12 a month.", "h1")
    writer.submit(
        U,
        "t",
        [
            AIMessage("The 50GB plan is £20 a month. I can move you from the 1st.", id="a1"),
            HumanMessage("Yes please, do it.", id="h2"),
        ],
    )
    texts = _active_texts(store)
    assert not any("10GB" in t for t in texts), texts
    assert any(t.startswith("User agreed to:") and "50GB" in t for t in texts), texts


def test_dated_pieces_expire_and_lasting_ones_stay(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "我儿子小宇12月3号满八岁，派对想在家办。", "h1")
    say(writer, clock, "We're in Krakow till the 9th, so pause the deliveries.", "h2")
    later = clock() + timedelta(days=40)
    assert store.expire_due(U, now=later) >= 1
    texts = [r.text for r in store.list_memories(U)]
    assert any("小宇" in t for t in texts), texts  # a birthday holds on after its day
    assert not any("Krakow" in t or "deliveries" in t for t in texts), texts


@pytest.mark.parametrize(
    "text",
    [
        "My colleague is off to Lisbon next week for a conference.",
        "我同事小何下个月去冰岛看极光。",
        "如果以后换工作，我就搬去深圳。",
        "If my parents ever move in we'd need a bigger place.",
        # A consequence after a comma, idle talk, what a boss does.
        "我老婆说要是这次面试顺利，年底干脆搬去深圳，她也就是嘴上说说",
        "my brother reckons we should all move to Perth, he's just talking",
        "my boss is off to Iceland next week",
        "我老板是个工作狂",
    ],
)
def test_other_peoples_plans_and_conditions_stay_out(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock, text: str
) -> None:
    say(writer, clock, text, "h1")
    assert _active_texts(store) == []
