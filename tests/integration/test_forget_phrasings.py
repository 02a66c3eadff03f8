"""Forget requests in the many ways people ask, end to end (rules -> reconcile -> real Chroma).

Our own sentences, English, Mandarin and Cantonese: a record named by its subject ("the
landlord info", "车牌号码"), a question about the user ("which bank I use"), verbs only
a memory takes ("别再记着旺财了", "工资信息请不要保存"), 忘了...吧 as an ask, and topics
that share no word with the fact ("my salary" / "85k", "therapy" / "therapist",
"工资" / "月薪"). What the user asked to forget leaves the store; a fact on another
topic stays. And updates that share only a topic with what they replace (a relative's
medicine, working hours, a bank branch, how a plan is paid, a weight).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_memory.clock import ManualClock
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.nodes.writer import MemoryWriter
from tests.integration._rules_world import rules_store, rules_writer, say_as

U = "noor"

FORGET_REQUESTS = [
    (
        "I'm seeing a therapist called Dr Lane every Tuesday",
        "Please don't keep anything about my therapy",
        "Lane",
    ),
    ("I see a counsellor on Fridays", "Can you not keep the counselling stuff?", "counsellor"),
    ("I take sertraline 50mg", "Remove the medication note please", "sertraline"),
    ("My bank is Monzo", "No need to remember which bank I use", "Monzo"),
    ("I bank with HSBC", "Forget which bank I'm with", "HSBC"),
    ("My landlord is called Mr Patel", "You can drop the landlord info now", "Patel"),
    ("My physio is Dr Okafor at Bupa", "Please get rid of the physio details", "Okafor"),
    ("My salary is 85k", "I'd rather you didn't store my salary", "85k"),
    ("I earn about 60 grand", "Don't hold on to what I earn", "60"),
    ("My PIN hint is my cat's name", "Wipe that PIN hint from your notes", "hint"),
    ("我前男友叫张伟", "忘了我前男友的事吧", "张伟"),
    ("我月薪两万五", "我的工资信息请不要保存", "两万五"),
    ("我每个月工资一万二", "别存我的收入情况", "一万二"),
    ("我家狗叫旺财", "别再记着旺财了，它送人了", "旺财"),
    ("我住在朝阳区望京", "望京那个地址你删了吧", "望京"),
    ("我的房东姓王", "房东的信息删除一下", "房东"),
    ("我的车牌是京A12345", "车牌号码帮我清除一下", "京A"),
    ("我女儿在实验小学上学", "女儿学校那条帮我删了吧", "实验小学"),
    ("我在看心理咨询师", "心理咨询的事你别记着了", "心理"),
    ("我喺汇丰做嘢", "唔好记住我喺边度做嘢", "汇丰"),
    ("My credit score is 540", "Scrub the credit score thing", "540"),
    (
        "I'm on a payment plan for my debts with StepChange",
        "Can you delete the bit about my debts? It's private",
        "StepChange",
    ),
    ("I got fired from Tesco last month", "Don't save the stuff about me getting fired", "Tesco"),
    ("我在跟老公闹离婚", "离婚这事别记下来", "离婚"),
    ("我哥在戒毒所", "把关于我哥的都删了", "戒毒"),
    ("我欠了信用卡八万", "我欠钱的事你当没听过", "八万"),
    ("我儿子有多动症", "别把我儿子的病记下来", "多动症"),
    ("我上个月被公司裁了", "被裁员那件事请删除", "裁"),
    ("我有抑郁症在吃药", "我不想让你记住我有抑郁症", "抑郁"),
    ("我老豆喺医院", "我老豆嗰样嘢唔好记低", "医院"),
    # Cantonese with its own particles and "as if never said"; a topic before the verb.
    ("我膝头哥上个月做咗手术", "膝头嗰单嘢你唔使记住喇", "手术"),
    ("我膝头痛咗好耐，医生话要做物理治疗", "之前讲嘅膝头嘢，当我冇讲过", "物理治疗"),
    ("我同老公嗌交，佢成晚冇返屋企", "嗌交嗰单嘢你唔使记住喇", "冇返"),
    ("我跟我老公吵架了，他一晚没回家", "吵架那个你不用记住了哦", "没回家"),
    # The request in its own clause after the topic, or asked as a question.
    (
        "I lent Suresh Rs 50,000 in August",
        "That whole Suresh loan - you don't need to keep that",
        "Suresh",
    ),
    (
        "My knee's been playing up since the op",
        "Actually can you not hold onto the knee stuff? I'd rather it wasn't on file",
        "knee",
    ),
    (
        "My husband lost his job at the port",
        "the thing about my husband's job, can you delete it?",
        "port",
    ),
    ("提醒我打电话给银行报告那笔盗刷", "盗刷那件事已经处理好了，这条提醒可以删掉了", "盗刷"),
    # Singapore English: the request asked as "can ... or not?".
    (
        "My husband kena retrenched from his job last month",
        "eh the thing about my husband's job, can delete or not? he paiseh",
        "retrenched",
    ),
    # Code-switched: an English verb on a Chinese topic.
    ("我儿子下个月要打 NIP 疫苗", "那个 NIP 的事情 forget 掉吧", "NIP"),
    # Asks that name no "forget" verb: letting go, not knowing, not bringing up, not keeping
    # on record; a politeness opening ("you can bin it", "唔该"); a request relayed by someone.
    (
        "I lent my cousin Suresh 50,000 rupees",
        "You can let go of the info about the Suresh loan",
        "Suresh",
    ),
    (
        "I lent my cousin Suresh 50,000 rupees",
        "Never mind about the Suresh loan, just erase it from memory",
        "Suresh",
    ),
    (
        "I have a job interview at Shopee next month",
        "The Shopee interview note is no longer relevant, you can bin it",
        "Shopee",
    ),
    ("My husband and I are getting a divorce", "Please stop bringing up my divorce", "divorce"),
    (
        "I was made redundant from Barclays in July",
        "I'd prefer you didn't know about the Barclays redundancy",
        "Barclays",
    ),
    (
        "My brother Karthik is in rehab in Chennai",
        "I don't want the Karthik stuff on your records anymore",
        "rehab",
    ),
    (
        "My wife and I had a huge fight last night",
        "About the fight with my wife - please don't remember that",
        "fight",
    ),
    ("我投诉了陈经理态度不好", "那个投诉陈经理的记录帮我撤销一下", "陈经理"),
    ("提醒我下周一去银行报骗案", "骗案那个不用提醒我了，已经报了", "骗案"),
    ("我婆婆跟我们住，老吵架", "以后别再提我婆婆的事了", "婆婆"),
    ("我老公上个月俾公司炒咗", "我老公俾人炒嗰件事，唔该帮我剷咗佢", "炒"),
    ("我跟老公吵架了，他一晚没回家", "吵架的事你就别记在心上了", "吵架"),
    ("我上个月被裁员了", "裁员那个信息不需要保留", "裁员"),
]


# A relayed request forgets its topic, not everything said about the one who relayed it.
def test_a_relayed_request_keeps_the_rest_about_the_relayer(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say_as(writer, clock, U, "我太太 Sophie 膝盖 ACL 撕裂，医生说可能要手术", "h1")
    say_as(writer, clock, U, "Sophie 12 月 8 号在 Parkway 做膝盖手术", "h2")
    say_as(writer, clock, U, "OK. 顺便 Sophie 说 ACL 那个 detail 你们别留，删掉。", "h3")
    texts = active(store)
    assert not any("ACL" in t for t in texts), texts
    assert any("Parkway" in t for t in texts), texts


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime(2026, 3, 2, 9, 0, tzinfo=UTC))


@pytest.fixture
def store(tmp_path: Path, clock: ManualClock) -> Iterator[ChromaMemoryStore]:
    s = rules_store(tmp_path, clock)
    yield s
    s.close()


@pytest.fixture
def writer(store: ChromaMemoryStore, clock: ManualClock) -> MemoryWriter:
    return rules_writer(store, clock)


def test_forgetting_what_a_named_person_has_keeps_the_rest_about_them(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    said = (
        "My wife Amara will travel with me, she's on a separate booking, please seat us "
        "together. She is six months pregnant, so an aisle seat for her."
    )
    say_as(writer, clock, U, said, "h1")
    say_as(writer, clock, U, "That thing I told you about Amara being pregnant, remove it from my profile", "h2")
    texts = active(store)
    assert not any("pregnant" in t for t in texts), texts
    assert any("travel with me" in t for t in texts), texts  # whose it was, not what goes


def active(store: ChromaMemoryStore) -> list[str]:
    return [r.text for r in store.list_memories(U)]


@pytest.mark.parametrize(("said", "forget", "gone"), FORGET_REQUESTS)
def test_what_the_user_asked_to_forget_leaves_and_the_rest_stays(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    said: str,
    forget: str,
    gone: str,
) -> None:
    say_as(writer, clock, U, said, "h1")
    say_as(writer, clock, U, "I prefer window seats", "h2")
    assert any(gone in t for t in active(store)), active(store)
    say_as(writer, clock, U, forget, "h3")
    texts = active(store)
    assert not any(gone in t for t in texts), texts
    assert any("window" in t for t in texts), texts


@pytest.mark.parametrize(
    "text",
    [
        "我忘了带钥匙",
        "那条裤子帮我删了吧",
        "帮我把那个订单删了吧",
        "I forgot my keys",
        "delete the file",
        "我都唔记得喇",
        "can you delete the file I uploaded?",
        # Told about, not asked: letting go, someone else's stopping, a website's profile.
        "We had to let go of our old car last year, I live in Leeds now",
        "I wish my boss would stop mentioning my bank",
        "I don't want my bank details on my profile page",
        "你别再提价格了，直接说有没有货",
    ],
)
def test_forgetting_something_else_is_no_forget_request(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock, text: str
) -> None:
    say_as(writer, clock, U, "My bank is Monzo, I live in Leeds", "h1")
    before = sorted(active(store))
    say_as(writer, clock, U, text, "h2")
    assert all(t in active(store) for t in before), active(store)


# An update that shares a topic, not a word, with what it replaces ends it.
UPDATES = [
    (
        "My mum takes warfarin for her heart",
        "The GP has taken mum off warfarin, she's on apixaban now",
        "for her heart",
    ),
    ("我妈每天吃华法林", "医生给我妈换成利伐沙班了", "华法林"),
    ("I work 10 to 7 on weekdays", "New hours from next week: 9 to 6", "10 to 7"),
    ("我的户口开在旺角分行", "我已经转去观塘分行了", "旺角"),
    ("我买的是月供计划", "我想改成年付，已经申请了", "月供"),
    ("我体重140斤", "这个月瘦到132斤了", "140"),
    ("I weighed 38.5 stone at the start", "I'm down to 36.2 stone this week", "38.5"),
    # A day put right, a relative's event that moved, a product named in mixed case.
    ("Sports day is 12 June at 2pm", "Sorry, sports day is on the 13th, not the 12th", "12 June"),
    (
        "We're flying over for my brother's graduation, it is 18 July",
        "The graduation is the 25th now",
        "18 July",
    ),
    ("ZipBox 帮我改成年付吧", "ZipBox 我想取消掉", "年付"),
    # An eating window is the diet: "16:8" ends when the fasting does.
    (
        "我最近在试间歇性断食，18:6，早上十点到下午四点之间吃饭",
        "断食撑不住了，改回一日三餐",
        "18:6",
    ),
    # What the user drinks, across languages; a pet's named medicine; a code-switched job change.
    ("我最近在戒咖啡，一天最多一杯拿铁", "coffee 那个我放弃了，现在一天两杯", "一杯"),
    (
        "I'm cutting down on coffee, one latte a day max",
        "I've given up on cutting down coffee, I'm back to three a day",
        "one latte",
    ),
    (
        "My dog Rex is on Librela for his joints",
        "The vet took Rex off the pills, he's on injections now instead",
        "Librela",
    ),
    ("我现在在 data team 做报表，老板是 Lisa", "换 team 了，老板换成 Tom", "Lisa"),
]


@pytest.mark.parametrize(("said", "update", "gone"), UPDATES)
def test_an_update_on_the_same_topic_ends_the_old_value(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    said: str,
    update: str,
    gone: str,
) -> None:
    say_as(writer, clock, U, said, "h1")
    say_as(writer, clock, U, "I prefer window seats", "h2")
    say_as(writer, clock, U, update, "h3")
    texts = active(store)
    assert not any(gone in t for t in texts), texts
    assert any("window" in t for t in texts), texts


def test_driving_down_to_a_place_is_no_update(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say_as(writer, clock, U, "Alfie has his nativity play on the 17th December", "h1")
    say_as(writer, clock, U, "We're driving down to Bristol for it", "h2")
    assert any("nativity" in t for t in active(store)), active(store)


@pytest.mark.parametrize(
    ("said", "update", "stays"),
    [
        # The day changed, not the gift: "getting Ana a glaze set" has no day to move.
        (
            "Ana's birthday is 14 May; I'm getting Ana a glaze set",
            "Ana's birthday is 4 May not the 14th",
            "glaze",
        ),
        # The user's own birthday is not Mum's.
        ("My mum's birthday is 3 May", "My birthday is actually 5 May", "mum"),
    ],
)
def test_an_update_leaves_what_it_does_not_change(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    said: str,
    update: str,
    stays: str,
) -> None:
    say_as(writer, clock, U, said, "h1")
    say_as(writer, clock, U, update, "h2")
    assert any(stays in t.lower() for t in active(store)), active(store)


def _at(writer: MemoryWriter, clock: ManualClock, messages: list[Any]) -> None:
    """Messages through the writer in one batch, then a few minutes pass (one chat)."""
    writer.submit(U, "t", messages)
    clock.advance(timedelta(minutes=3))


# "Forget that" as the whole turn: "that" is the user's message before it.
FORGET_THE_LAST_MESSAGE = [
    ("My husband got laid off from Boeing last month", "Actually, please forget that.", "Boeing"),
    (
        "I got fired from Tesco last month",
        "Hmm, don't keep that. I'd rather not have it stored.",
        "Tesco",
    ),
    ("我老公上个月被裁员了，挺难受的", "算了，这个你别记了。", "裁员"),
    ("我欠了信用卡八万", "当我没说过吧", "八万"),
    ("我哥喺戒毒所", "嗰个，唔该帮我剷咗佢。", "戒毒"),  # a pointer alone names no topic
]


@pytest.mark.parametrize(("said", "forget", "gone"), FORGET_THE_LAST_MESSAGE)
@pytest.mark.parametrize("one_batch", [False, True], ids=["next-batch", "same-batch"])
def test_forget_that_takes_the_message_before_it(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    said: str,
    forget: str,
    gone: str,
    one_batch: bool,
) -> None:
    _at(writer, clock, [HumanMessage("I prefer window seats", id="h0")])
    if one_batch:  # the writer's debounce coalesced both turns into one job
        ok = AIMessage("Noted.", id="a1")
        _at(writer, clock, [HumanMessage(said, id="h1"), ok, HumanMessage(forget, id="h2")])
    else:
        _at(writer, clock, [HumanMessage(said, id="h1")])
        assert any(gone in t for t in active(store)), active(store)
        _at(writer, clock, [AIMessage("Noted.", id="a1"), HumanMessage(forget, id="h2")])
    texts = active(store)
    assert not any(gone in t for t in texts), texts
    assert any("window" in t for t in texts), texts  # the message before that one stays
    assert not any("forget" in t.lower() or "忘记" in t for t in texts), texts


@pytest.mark.parametrize(
    "after",
    [
        "Forget it, I'll book the table myself.",  # an idiom, not a request
        "Please delete it. My old number 0771 234 567 is no longer in use.",  # it = that number
        "Can you delete the file I uploaded?",
    ],
)
def test_what_is_no_forget_that_keeps_the_message_before(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock, after: str
) -> None:
    _at(writer, clock, [HumanMessage("I'm allergic to peanuts", id="h1")])
    _at(writer, clock, [AIMessage("Noted.", id="a1"), HumanMessage(after, id="h2")])
    assert any("peanut" in t for t in active(store)), active(store)


def test_forget_that_a_day_later_points_at_nothing(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    _at(writer, clock, [HumanMessage("I'm allergic to peanuts", id="h1")])
    clock.advance(timedelta(days=1))
    _at(writer, clock, [HumanMessage("Actually, please forget that.", id="h2")])
    assert any("peanut" in t for t in active(store)), active(store)


@pytest.mark.parametrize(
    ("said", "forget", "gone"),
    [
        ("我下周五做膝盖手术", "膝盖的事你别记了", "膝盖"),
        (
            "My knee surgery is on Friday at St Mary's",
            "Actually please forget the knee stuff",
            "Mary",
        ),
        ("I lent Suresh Rs 50,000 in August", "Scrub the Suresh loan from your notes", "Suresh"),
    ],
)
def test_a_forget_request_reaches_what_its_own_batch_said(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    said: str,
    forget: str,
    gone: str,
) -> None:
    """The writer's debounce coalesces a chat's turns into one job: the fact is not stored
    yet when its forget request is reconciled."""
    ok = AIMessage("Noted.", id="a1")
    later = HumanMessage("I prefer window seats", id="h3")
    _at(writer, clock, [HumanMessage(said, id="h1"), ok, HumanMessage(forget, id="h2"), later])
    texts = active(store)
    assert not any(gone in t for t in texts), texts
    assert any("window" in t for t in texts), texts


@pytest.mark.parametrize(
    ("said", "forget", "gone", "kept"),
    [
        ("下周二我有个面试，在腾讯，有点紧张", "面试那件事你就别记着了，取消了", "腾讯", None),
        # An ask of its own said with it ("remind me to order something by dec 7") stays:
        # reconcile's _ASKS; an exam user's reminder is the case that found it.
    ],
)
def test_what_goes_on_about_a_forgotten_fact_goes_with_it(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    said: str,
    forget: str,
    gone: str,
    kept: str | None,
) -> None:
    """The pieces said right after a forgotten fact with no subject of their own ("在腾讯",
    "有点紧张") are about it; an ask of its own ("remind me to ...") is not."""
    say_as(writer, clock, U, said, "h1")
    say_as(writer, clock, U, forget, "h2")
    texts = active(store)
    assert not any(gone in t for t in texts), texts
    if kept is not None:
        assert any(kept in t for t in texts), texts
