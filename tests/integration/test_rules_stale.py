"""What ends an old memory, end to end (rules -> reconcile -> real Chroma store).

An update that shares a topic but no word with what it replaces, a pending request
that is settled, and a forget request that points back at something said must each
end the old memory; the still-true pieces of the same turn, and everything about
other people or other topics, must stay.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from langgraph_memory.clock import ManualClock
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.nodes.reconcile import Reconciler, kept_id
from langgraph_memory.nodes.rules import RuleBasedExtractor
from langgraph_memory.nodes.writer import MemoryWriter
from langgraph_memory.types import MemoryStatus
from tests.integration._rules_world import rules_store, rules_writer, say_as

U = "dana"


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


def say(writer: MemoryWriter, clock: ManualClock, text: str, mid: str) -> None:
    say_as(writer, clock, U, text, mid)


def active(store: ChromaMemoryStore) -> list[str]:
    return [r.text for r in store.list_memories(U)]


def say_then_change(
    writer: MemoryWriter,
    store: ChromaMemoryStore,
    clock: ManualClock,
    first: str,
    change: str,
    *,
    gone: str,
    new: str,
) -> None:
    """``first``, a day later ``change``: nothing current holds ``gone``, something ``new``."""
    say(writer, clock, first, "h1")
    say(writer, clock, change, "h2")
    texts = active(store)
    assert not any(gone in t for t in texts), texts
    assert any(new in t for t in texts), texts


@pytest.mark.parametrize(
    ("first", "change", "gone", "new"),
    [
        (
            "I take my atenolol every morning with tea",
            "the cardiologist switched my heart pills, I'm on bisoprolol now",
            "atenolol",
            "bisoprolol",
        ),
        (
            "We're driving to Cornwall for the wedding",
            "change of plan, we'll get the coach from Exeter instead",
            "driving",
            "coach",
        ),
        ("我每天晚上吃一片阿托伐他汀", "医生给我换药了，现在吃瑞舒伐他汀", "阿托伐他汀", "瑞舒伐"),
        ("我们打算开车去黄山", "不开车了，改坐高铁去", "开车去黄山", "高铁"),
    ],
)
def test_an_update_on_the_same_topic_ends_the_old_statement(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    first: str,
    change: str,
    gone: str,
    new: str,
) -> None:
    say_then_change(writer, store, clock, first, change, gone=gone, new=new)


def test_the_still_true_pieces_of_a_partly_changed_turn_stay(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "We're on the Team plan, 8 seats, the workspace is called nightowl", "h1")
    say(writer, clock, "btw we renamed our workspace, it's dawnfox now", "h2")
    texts = active(store)
    assert not any("nightowl" in t for t in texts), texts
    assert any("Team plan" in t and "8 seats" in t for t in texts), texts
    history = store.list_memories(U, include_history=True)
    (old,) = [r for r in history if "nightowl" in r.text]
    assert old.status is MemoryStatus.SUPERSEDED
    (kept,) = [r for r in history if "Team plan" in r.text and r.status is MemoryStatus.ACTIVE]
    assert kept.key == old.key and kept.supersedes == (old.id,)


def test_a_settled_request_ends_the_pending_one(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "Still no sign of the 60 quid refund for the broken kettle", "h1")
    say(writer, clock, "我上个月的电费被扣了两次，请退一笔", "h2")
    say(writer, clock, "The 60 finally came through, thanks", "h3")
    say(writer, clock, "退款到账了，谢谢", "h4")
    texts = active(store)
    assert not any("kettle" in t for t in texts), texts
    assert not any("扣了两次" in t for t in texts), texts


def test_a_settled_refund_leaves_a_promised_gift_pending(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "你们说好补偿送我一个保温杯，到现在还没收到", "h1")
    say(writer, clock, "电费多扣的钱退回来了", "h2")
    assert any("保温杯" in t for t in active(store))


def test_a_users_change_leaves_other_peoples_facts_alone(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "My nephew stays with us on weekends, he's allergic to sesame", "h1")
    say(writer, clock, "I've gone fully vegan now, no more eggs", "h2")
    assert any("sesame" in t for t in active(store))


@pytest.mark.parametrize(
    ("told", "other", "ask", "gone", "stays"),
    [
        (
            "我跟我姐为了装修的钱闹翻了，现在不说话",
            "我姐夫是医生，在协和",
            "之前跟你说我跟我姐那事儿，你就当没听过吧，删了",
            "装修",
            "协和",
        ),
        (
            "Priya is interviewing at a bank in Dublin, keep it quiet",
            "Priya is my oldest friend from school",
            "forget the priya dublin stuff please",
            "Dublin",
            "oldest friend",
        ),
        (
            "Joel 在面 Tokyo 的一个 job，成了我们可能要搬",
            "Joel 是我老公，做设计的",
            "之前说 Joel 面 Tokyo job 那个事你删掉吧，他不想让人知道",
            "Tokyo",
            "做设计",
        ),
    ],
)
def test_a_forget_request_that_points_back_reaches_its_topic(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    told: str,
    other: str,
    ask: str,
    gone: str,
    stays: str,
) -> None:
    say(writer, clock, told, "h1")
    say(writer, clock, other, "h2")
    say(writer, clock, ask, "h3")
    texts = active(store)
    assert not any(gone in t for t in texts), texts
    assert any(stays in t for t in texts), texts
    # The request itself is never kept as something the user said.
    assert not any("删" in t or "forget" in t.lower() for t in texts), texts


def test_a_self_correction_keeps_only_the_last_value(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "the choir rehearsal is at 7 every Wednesday", "h1")
    say(writer, clock, "choir rehearsal moved to 8, wait no, 8:30", "h2")
    texts = active(store)
    assert any("8:30" in t for t in texts), texts
    assert not any("at 7" in t or "to 8," in t or "to 8 " in t for t in texts), texts


def test_the_kept_pieces_are_written_once_when_an_op_is_applied_again(
    store: ChromaMemoryStore, clock: ManualClock
) -> None:
    extractor, reconciler = RuleBasedExtractor(clock=clock), Reconciler(store, clock=clock)
    first = extractor.extract(
        [HumanMessage("We're on the Team plan, the workspace is owlery", id="a")]
    )
    reconciler.reconcile(U, first)
    clock.advance(timedelta(days=1))
    second = extractor.extract([HumanMessage("we renamed our workspace to larkspur", id="b")])
    (op,) = [o for o in reconciler.plan(U, second, seed="s") if o.kept]
    assert reconciler.apply_op(U, op) is True
    assert reconciler.apply_op(U, op) is False  # idempotent: nothing new the second time
    ((target, _),) = op.kept
    assert op.result_id is not None
    kept = store.get_memory(U, kept_id(op.result_id, target))
    assert kept is not None and "Team plan" in kept.text and "owlery" not in kept.text
    assert sum("Team plan" in t for t in active(store)) == 1


def test_a_forget_request_erases_the_older_versions_and_kept_pieces_too(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "我家养了只黑猫；物业上门时记得关门；周末我在家", "h1")
    say(writer, clock, "物业的师傅来过了，门禁修好了", "h2")
    say(writer, clock, "之前说的猫那个事不用记了，删了吧", "h3")
    everything = [r.text for r in store.list_memories(U, include_history=True)]
    assert not any("黑猫" in t for t in everything), everything


def test_a_date_move_leaves_a_statement_whose_day_is_past(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    # One conversation over a week: the damage report is bound to its day, which has
    # passed when the date change comes, so the change moves something else.
    said = clock()
    later = said + timedelta(days=6)
    writer.submit(
        U,
        "t",
        [
            HumanMessage(
                "my wardrobe came today but one door is cracked",
                id="h1",
                additional_kwargs={"created_at": said.isoformat()},
            ),
            HumanMessage(
                "can you do the 27th instead?",
                id="h2",
                additional_kwargs={"created_at": later.isoformat()},
            ),
        ],
    )
    history = store.list_memories(U, include_history=True)
    (report,) = [r for r in history if "cracked" in r.text]
    assert report.status is not MemoryStatus.SUPERSEDED


def test_a_date_change_right_after_a_report_does_not_move_the_report(
    store: ChromaMemoryStore, writer: MemoryWriter
) -> None:
    writer.submit(
        U,
        "t",
        [
            HumanMessage("my bookcase arrived this morning but a shelf is split", id="h1"),
            HumanMessage("can you do Friday the 13th instead?", id="h2"),
        ],
    )
    history = store.list_memories(U, include_history=True)
    (report,) = [r for r in history if "shelf is split" in r.text]
    assert report.status is MemoryStatus.ACTIVE


def test_a_later_date_change_does_not_move_an_earlier_report(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "my bookcase arrived this morning but a shelf is split", "h1")
    clock.advance(timedelta(hours=-23))  # the same day
    say(writer, clock, "can you do Friday the 13th instead?", "h2")
    history = store.list_memories(U, include_history=True)
    (report,) = [r for r in history if "shelf is split" in r.text]
    assert report.status is MemoryStatus.ACTIVE


def test_a_moved_date_also_ends_the_assistants_confirmation_of_the_old_dates(
    store: ChromaMemoryStore, clock: ManualClock
) -> None:
    """The user asks for a cabin Mar 20 to 23; the assistant confirms it (acknowledged);
    "can we do Mar 21 to 24 instead?" then moves both the request and the confirmation,
    while an unrelated dated plan stays."""
    from langchain_core.messages import AIMessage

    writer = MemoryWriter(
        store, extractor=RuleBasedExtractor(clock=clock), mode="sync", clock=clock
    )
    writer.submit(
        U,
        "t",
        [
            HumanMessage("dentist appointment on Apr 2 at 9am", id="h0"),
            HumanMessage("please book me a lake cabin, Mar 20 to 23, two adults", id="h1"),
            AIMessage("Booked: Pine Lake cabin, Mar 20-23, 2 adults, ref PL-5512.", id="a1"),
            HumanMessage("great, thanks", id="h2"),
        ],
    )
    clock.advance(timedelta(days=1))
    assert any("Mar 20-23" in t for t in active(store)), active(store)
    say(writer, clock, "plans shifted, can we do Mar 21 to 24 instead?", "h3")
    now = active(store)
    assert not any("Mar 20" in t for t in now), now
    assert any("Apr 2" in t for t in now), now


@pytest.mark.parametrize(
    ("first", "change", "gone", "new"),
    [
        # A rule's slot value ended by a raw update that only names the topic.
        (
            "I live in Leeds",
            "we got the keys to our new flat in York, moved in on Saturday",
            "Leeds",
            "York",
        ),
        ("我住在海淀", "上个月搬家了，新房子在通州", "海淀", "通州"),
        ("我是小学老师", "我现在转行做产品经理了", "老师", "产品经理"),
        ("I'm vegetarian", "I've gone pescatarian since summer", "vegetarian", "pescatarian"),
    ],
)
def test_an_update_ends_a_slot_value_it_shares_no_word_with(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    first: str,
    change: str,
    gone: str,
    new: str,
) -> None:
    say_then_change(writer, store, clock, first, change, gone=gone, new=new)
    (old,) = [r for r in store.list_memories(U, include_history=True) if gone in r.text]
    assert old.status is MemoryStatus.SUPERSEDED  # kept as history, with its validity end


@pytest.mark.parametrize(
    ("first", "other"),
    [
        ("I live in Leeds", "my brother just moved to Bristol"),
        ("I'm a teacher", "my daughter became a vet"),
        ("I live in Leeds", "my cat Miso has a new favourite box"),
    ],
)
def test_someone_elses_change_leaves_the_users_slot_value(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock, first: str, other: str
) -> None:
    say(writer, clock, first, "h1")
    say(writer, clock, other, "h2")
    assert any(first.removeprefix("I live in ").removeprefix("I'm a ") in t for t in active(store))


def test_a_pet_stays_when_the_user_moves_house(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "my dog biscuit rules this apartment", "h1")
    say(writer, clock, "got a place across town, moving in on the 29th", "h2")
    assert any("biscuit" in t for t in active(store)), active(store)


@pytest.mark.parametrize(
    ("said", "forget"),
    [
        (
            "Between us, I had a biopsy on my arm last month, it came back benign.",
            "Oh, and the biopsy business - forget I ever mentioned it, would you.",
        ),
        ("我有糖尿病，每天打胰岛素", "我身体方面的情况你们就别记了"),
        ("I have high blood pressure and take amlodipine", "please forget my health stuff"),
    ],
)
def test_a_forget_request_by_category_or_by_back_reference_erases_it(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock, said: str, forget: str
) -> None:
    say(writer, clock, said, "h1")
    say(writer, clock, "I prefer window seats", "h2")
    say(writer, clock, forget, "h3")
    texts = active(store)
    assert texts and all(
        w not in t for t in texts for w in ("biopsy", "糖尿病", "胰岛素", "amlodipine", "blood")
    ), texts
    assert any("window" in t for t in texts), texts


@pytest.mark.parametrize(
    "said",
    [
        "we're away 12/20 - 1/3, hold the deliveries",
        "我们 3/20 到 4/2 不在家，先暂停配送",
        "in Japan from Mar 20 to Apr 2, pause the box",
    ],
)
def test_a_stated_date_range_ends_the_statement_after_its_last_day(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock, said: str
) -> None:
    say(writer, clock, said, "h1")
    records = store.list_memories(U)
    assert records
    for record in records:  # the away status and the held deliveries end together
        assert record.expires_at is not None, record.text
        last = record.expires_at - timedelta(days=1)
        assert (last.month, last.day) in {(1, 3), (4, 2)}, (record.text, record.expires_at)


@pytest.mark.parametrize(
    ("first", "change", "gone", "new"),
    [
        # Traditional script and career words: "放棄了", "跳到", "transfer".
        (
            "我最近在做 keto，晚餐不吃 pasta",
            "Keto 放棄了，太痛苦，現在就正常吃",
            "不吃 pasta",
            "正常吃",
        ),
        ("我在网易上班", "我跳槽去美团了", "网易", "美团"),
        (
            "I'm on the search team writing backend",
            "I'm transferring to the payments team next month",
            "search team",
            "payments",
        ),
    ],
)
def test_an_update_in_other_words_or_script_ends_the_old_statement(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    first: str,
    change: str,
    gone: str,
    new: str,
) -> None:
    say_then_change(writer, store, clock, first, change, gone=gone, new=new)


def test_a_plan_carried_out_lasts_past_the_plans_date(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    """ "搬好了，新家在莘庄" after "下个月要搬家" reports how it went: it keeps no end."""
    say(writer, clock, "我们下个月要搬家，到时候再找你们", "h1")
    clock.advance(timedelta(days=40))
    say(writer, clock, "搬好了，累死。新家在闵行莘庄", "h2")
    (home,) = [r for r in store.list_memories(U) if "莘庄" in r.text]
    assert home.expires_at is None
    clock.advance(timedelta(days=90))
    assert any("莘庄" in t for t in active(store))


@pytest.mark.parametrize(
    "said",
    [
        "lol if it drops again during the playoffs I'm switching to carrier pigeons",
        "if they're late again we're cancelling everything",
    ],
)
def test_a_threat_on_a_condition_is_no_fact(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock, said: str
) -> None:
    say(writer, clock, said, "h1")
    assert active(store) == []


@pytest.mark.parametrize(
    "forget",
    [
        "我之前提过我表哥借我旧电脑的事，这个你别记了，跟你们业务没关系",
        "Oh 我上次讲表哥借电脑的 thing，你不用 keep 在我这边",
    ],
)
def test_a_forget_that_points_back_erases_its_topic_and_not_the_phone_number(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock, forget: str
) -> None:
    say(writer, clock, "我手机号13917734520，以后有活动发短信就行", "h0")
    say(writer, clock, "我表哥借了我的旧电脑去用", "h1")
    say(writer, clock, forget, "h2")
    texts = active(store)
    assert not any("旧电脑" in t for t in texts), texts
    assert any("[PHONE]" in t or "短信" in t for t in texts), texts


def test_away_for_the_weekend_ends_with_the_weekend(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(
        writer,
        clock,
        "Cancel Friday's order, we're at the in-laws in Al Ain for the weekend.",
        "h1",
    )
    (record,) = [r for r in store.list_memories(U) if "Al Ain" in r.text]
    assert record.expires_at is not None and record.expires_at - clock() <= timedelta(days=7)


@pytest.mark.parametrize(
    ("first", "change", "gone", "new"),
    [
        (
            "机票选座帮我选靠窗的，我每次都要靠窗",
            "我要靠过道，靠窗是我老公喜欢的",
            "选靠窗",
            "过道",
        ),
        (
            "I always book a window seat",
            "I'm an aisle person now, my knees need it",
            "window",
            "aisle",
        ),
        # Someone named: "Chloe 的 piano" is "我女兒 Chloe"'s lesson.
        (
            "我女兒 Chloe 每週六早上十點上 piano",
            "Chloe 的 piano 老師換時段, 改到禮拜天下午兩點了",
            "每週六",
            "禮拜天",
        ),
        (
            "Book club is Thursday afternoons at the library",
            "They've moved book club to Wednesdays",
            "Thursday",
            "Wednesdays",
        ),
        ("最近在减脂，晚饭基本不碰主食", "减脂那个先停了，医生让正常吃饭", "不碰主食", "正常吃饭"),
    ],
)
def test_a_changed_seat_lesson_club_or_diet_ends_the_old_one(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    first: str,
    change: str,
    gone: str,
    new: str,
) -> None:
    say_then_change(writer, store, clock, first, change, gone=gone, new=new)


def test_a_forget_in_its_own_sentence_takes_the_sentence_before_and_keeps_none_of_it(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "roaming 去 Malaysia 常常没有 signal", "h1")
    say(
        writer,
        clock,
        "Oh 我上次讲 roaming 没 signal 的 thing, 其实是我老公的 line. 你不用 keep 在我这边.",
        "h2",
    )
    assert not any("roaming" in t for t in active(store)), active(store)


def test_a_window_table_is_no_seat_preference(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "I need a table at Rocco's for the 5th, window seat.", "h1")
    assert not any(r.key == "preference.seat" for r in store.list_memories(U))


def test_a_forget_leaves_the_other_pieces_of_the_turn_it_reached(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    """ "我爸拿我旧手机用的事" goes; "我刚入了个华为Mate 70" from the same turn stays, as its
    own memory; nothing of the forgotten piece is left in any version."""
    say(writer, clock, "我刚入了个华为Mate 70，原来那台iPhone 12给我爸用了", "h1")
    say(writer, clock, "我之前提过我爸拿我旧手机用的事，这个你别记了", "h2")
    assert active(store) == ["用户说：我刚入了个华为Mate 70"]
    history = store.list_memories(U, include_history=True)
    assert not any("我爸" in r.text or "iPhone" in r.text for r in history), history
    (kept,) = history
    assert kept.supersedes == ()  # no link back to what was erased


def test_a_forget_keeps_a_piece_that_shares_only_a_coarse_topic_with_it(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    """Both pieces are about phones; only the one that shares the request's words goes."""
    say(writer, clock, "I just got a Pixel 9; my old iPhone 12 went to my brother", "h1")
    say(writer, clock, "forget what I said about my brother using my old iPhone", "h2")
    assert active(store) == ["User said: I just got a Pixel 9"]


def test_a_new_handset_retires_the_old_one_and_keeps_other_purchases(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "我的手机是 iPhone 13，信号一直不好", "h1")
    say(writer, clock, "上周买的扫地机器人很好用", "h2")
    clock.advance(timedelta(days=30))
    say(writer, clock, "我现在用的是小米 14 了", "h3")
    texts = active(store)
    assert not any("iPhone" in t for t in texts), texts
    assert any("扫地机器人" in t for t in texts) and any("小米 14" in t for t in texts), texts


@pytest.mark.parametrize(
    ("first", "change", "new"),
    [
        (
            "唔該你send份計劃去我個登記電郵啦，wing.old@hkmail.com",
            "email 都轉埋，以後用 wing.new@outlook.com",
            "用户的邮箱是[EMAIL:@outlook.com]",
        ),
        (
            "please send the quote to my email, sam@oldmail.com",
            "from now on use sam.k@fastmail.com",
            "User's email is [EMAIL:@fastmail.com]",
        ),
    ],
)
def test_a_new_address_to_use_from_now_on_is_the_contact_slot(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    first: str,
    change: str,
    new: str,
) -> None:
    say(writer, clock, first, "h1")
    clock.advance(timedelta(days=3))
    say(writer, clock, change, "h2")
    texts = active(store)
    assert new in texts, texts
    assert not any("mail.com]" in t and t != new for t in texts), texts
    assert not any(r.type.value == "procedural" for r in store.list_memories(U))


@pytest.mark.parametrize(
    ("said", "forget", "gone"),
    [
        ("顺便帮我记一下我老公穿42码，他那双篮球鞋也想买", "我老公鞋码那个你别记了删掉吧", "42码"),
        (
            "please remember my husband wears a size 11, he wants the same trainers",
            "actually forget my husband's shoe size, he doesn't want it stored",
            "size 11",
        ),
    ],
)
def test_a_forget_takes_the_raw_words_said_with_the_fact(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    said: str,
    forget: str,
    gone: str,
) -> None:
    """The remembered fact and the evidence turn of the same message both go."""
    say(writer, clock, said, "h1")
    assert sum(gone in t for t in active(store)) == 2, active(store)
    say(writer, clock, forget, "h2")
    assert not any(gone in t for t in active(store)), active(store)


def test_a_forget_keeps_a_change_asked_as_a_question_in_the_turn_it_reached(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "My dad had knee surgery last month", "h1")
    say(
        writer,
        clock,
        "can you do the bin reminder on Friday nights instead? Thursdays I'm at my dad's",
        "h2",
    )
    say(writer, clock, "please don't keep the thing about my dad's surgery", "h3")
    assert active(store) == ["User said: can you do the bin reminder on Friday nights instead?"]


# A month apart: an old value, then its change in everyday words (no slot keyword, often no
# shared word): the old value must be on no active memory afterwards.
UPDATES_IN_EVERYDAY_WORDS = [
    # Providers, weight, pregnancy, grades, a car sold, a pet's food, Cantonese job moves.
    ("My broadband is the 100Mb fibre package", "We went up to the 500Mb one last month", "100Mb"),
    (
        "I bank with Barclays",
        "Closed my Barclays account, everything's with Monzo now",
        "bank with",
    ),
    ("We usually eat dinner around 7", "Dinner's at 8 these days because of my shifts", "around 7"),
    ("I'm learning French on Duolingo", "Gave up on French, doing Italian now", "Duolingo"),
    (
        "The kids' dentist is Dr Patel in Hove",
        "We switched the kids to a dentist in Brighton",
        "Patel",
    ),
    ("I'm pregnant, due in May", "The baby arrived early, a little girl", "due in May"),
    ("My flight to Rome is on the 14th", "The airline moved my Rome flight to the 16th", "14th"),
    ("I get paid on the 25th", "My payday has changed to the last Friday of the month", "25th"),
    ("We're renting in Fitzroy", "Bought a place in Brunswick, moved in last week", "Fitzroy"),
    ("My username is bluefox88", "I changed my username to redfox", "bluefox88"),
    ("Our wifi provider is Optus", "We've left Optus for Aussie Broadband", "wifi provider"),
    ("My cat Luna is on a diet food", "Luna's back on normal food, vet's happy", "diet food"),
    ("我老公在华为上班", "我老公辞职了，现在自己创业", "华为"),
    ("我们家宽带是电信的", "宽带换成联通了", "电信"),
    ("我的工资卡是招商银行的", "工资卡改成建行了", "招商"),
    ("我在学日语", "日语不学了，改学韩语", "在学"),
    ("我体重七十公斤", "现在六十五公斤了", "七十公斤"),
    ("女儿在二中读初二", "女儿转学去了实验中学", "二中"),
    ("我们每周日去看我爸妈", "现在改成每周六去看爸妈了", "每周日"),
    ("我的车牌是粤B12345", "车卖了，现在没车", "粤B"),
    ("我喺观塘返工", "我转咗工，而家喺中环", "观塘"),
    ("我个仔读紧小三", "佢而家升咗小四", "小三"),
    (
        "I live in Clapham with two flatmates",
        "We've moved to Brixton now, just the two of us",
        "Clapham",
    ),
    (
        "My gym sessions are Tuesday and Thursday mornings",
        "I've switched my gym days to Monday and Wednesday evenings",
        "Tuesday",
    ),
    (
        "I drive a 2015 Honda Civic",
        "Sold the Civic, I'm driving a Tesla Model 3 these days",
        "2015",
    ),
    ("I work at Deloitte as an auditor", "I left Deloitte last month, I'm at KPMG now", "auditor"),
    (
        "My daughter Mia is in year 3 at St Mary's",
        "Mia moved schools, she's at Greenfield Primary now",
        "St Mary",
    ),
    ("I'm on the Basic plan at 9.99", "Upgraded to Premium last week", "Basic"),
    ("My son's piano lesson is on Wednesdays at 5", "Piano's moved to Fridays at 4", "Wednesdays"),
    ("I take 10mg of atorvastatin at night", "The doctor has me on 20mg now", "10mg"),
    ("We have a golden retriever called Max", "Sadly Max passed away in October", "retriever"),
    ("My budget for the sofa is 1500", "I can stretch to 2000 for the sofa now", "1500"),
    (
        "Please deliver to my office on King Street",
        "Send deliveries to my home address from now on",
        "King Street",
    ),
    ("I'm vegetarian", "I've started eating fish again", "vegetarian"),
    (
        "My partner Alex and I are planning a June wedding",
        "The wedding's pushed to September",
        "June",
    ),
    (
        "I'm training for the Berlin marathon",
        "Dropped out of Berlin, knee's not good, doing the half in Lisbon instead",
        "marathon",
    ),
    ("my bank card ends 4421", "Got a new card, old one was cloned", "4421"),
    (
        "I'm usually free after 6pm for calls",
        "These days I'm only free for calls at lunchtime",
        "6pm",
    ),
    ("My mum lives in Leeds", "Mum's moved in with us in Bristol", "Leeds"),
    ("我住在朝阳区", "我们搬到海淀了", "朝阳"),
    ("我每周三晚上打羽毛球", "羽毛球改到周五了", "周三"),
    ("我在阿里做产品经理", "我跳槽去腾讯了", "阿里"),
    ("儿子在读幼儿园大班", "儿子上一年级了", "大班"),
    ("我用的是移动的58元套餐", "套餐升级成128的了", "58"),
    ("我每天早上吃一片二甲双胍", "医生让我改成早晚各一片", "每天早上"),
    ("快递放门口就行", "以后快递放驿站吧", "门口"),
    ("我预算五千左右", "预算加到八千", "五千"),
    ("我在减肥，晚上不吃主食", "减肥结束了，现在正常吃", "不吃主食"),
    ("我女儿学钢琴，每周六上午", "钢琴课调到周日下午了", "周六"),
    ("我开的是一辆比亚迪", "换车了，现在开理想", "比亚迪"),
    ("我们计划十月去日本", "日本不去了，改去泰国", "十月"),
    ("我媽住喺荃灣", "阿媽搬咗去沙田", "荃灣"),
    ("我每朝七點返工", "而家轉咗夜更", "七點"),
]


@pytest.mark.parametrize(("old", "new", "stale"), UPDATES_IN_EVERYDAY_WORDS)
def test_an_update_in_everyday_words_retires_the_old_value(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    old: str,
    new: str,
    stale: str,
) -> None:
    say(writer, clock, old, "h1")
    assert any(stale in t for t in active(store)), active(store)
    clock.advance(timedelta(days=30))
    say(writer, clock, new, "h2")
    assert not any(stale in t for t in active(store)), active(store)


def test_a_forget_about_the_user_leaves_the_households_health_facts(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "我妈高血压，吃的氨氯地平，每天早上一片，出门在外别让她忘了。", "h1")
    say(writer, clock, "体检说我有点贫血，医生让正常吃饭。", "h2")
    say(writer, clock, "之前那个体检贫血的事你删了吧，不想留着。", "h3")
    texts = active(store)
    assert not any("贫血" in t for t in texts), texts
    assert any("高血压" in t for t in texts) and any("氨氯地平" in t for t in texts), texts


@pytest.mark.parametrize(
    ("first", "correction", "gone", "new"),
    [
        (
            "I'm allergic to penicillin",
            "turns out it's amoxicillin I react to, not penicillin",
            "penicillin",
            "User is allergic to amoxicillin",
        ),
        ("我对青霉素过敏", "医生说我其实是对头孢过敏，不是青霉素", "青霉素", "用户对头孢过敏"),
    ],
)
def test_an_allergy_corrected_to_another_replaces_it(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    first: str,
    correction: str,
    gone: str,
    new: str,
) -> None:
    say(writer, clock, first, "h1")
    say(writer, clock, correction, "h2")
    texts = active(store)
    assert new in texts and not any(gone in t for t in texts), texts
    assert not any("correct name" in t for t in texts), texts


def test_a_piece_that_goes_on_about_the_forgotten_one_goes_with_it(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "老公 Ben 在面 London 的 job，成了的话我们可能要搬，我在做 compliance", "h1")
    say(writer, clock, "之前说 Ben 面 London job 那个事你删掉吧", "h2")
    texts = active(store)
    assert not any("London" in t or "要搬" in t for t in texts), texts
    assert any("compliance" in t for t in texts), texts


def test_a_partial_forget_applied_twice_keeps_one_copy(
    store: ChromaMemoryStore, clock: ManualClock
) -> None:
    """A re-run of the same delete (a crash after the kept piece was written) writes it once."""
    writer = rules_writer(store, clock)
    say(writer, clock, "我刚入了个华为Mate 70，原来那台iPhone 12给我爸用了", "h1")
    reconciler = Reconciler(store, clock=clock)
    from langgraph_memory.types import CandidateMemory, MemorySource

    forget = CandidateMemory(
        text="用户要求忘记：用户爸拿用户旧手机用的事",
        source=MemorySource.USER_STATED,
        forget=True,
        observed_at=clock(),
    )
    (op,) = reconciler.plan(U, [forget], seed="s1")
    assert op.action == "delete" and op.kept
    assert reconciler.apply_op(U, op) is True
    reconciler.apply_op(U, op)
    assert active(store) == ["用户说：我刚入了个华为Mate 70"]


@pytest.mark.parametrize(
    ("first", "change", "gone", "new"),
    [
        (
            "My registered mobile is 9822013456",
            "My new mobile number is 9900154872",
            "registered",
            "new mobile",
        ),
        (
            "my email is old@example.com",
            "my new email address is new@example.com",
            "User's email",
            "new email",
        ),
        ("我的手机号是13812345678", "我的新手机号是13987654321", "的手机号", "新手机号"),
    ],
)
def test_a_contact_detail_is_one_slot_whatever_it_is_called(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    first: str,
    change: str,
    gone: str,
    new: str,
) -> None:
    say_then_change(writer, store, clock, first, change, gone=gone, new=new)


@pytest.mark.parametrize(
    ("first", "change", "old", "new"),
    [
        (
            "我住在沙田第一城",
            "仲有我搬咗屋，由沙田搬咗去將軍澳日出康城，帳單地址幫我改埋",
            "沙田",
            "將軍澳",
        ),
        (
            "I take atenolol every morning",
            "the cardiologist switched me from atenolol to bisoprolol",
            "atenolol",
            "bisoprolol",
        ),
    ],
)
def test_a_change_keeps_where_it_went_and_the_old_value_only_in_history(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    first: str,
    change: str,
    old: str,
    new: str,
) -> None:
    say(writer, clock, first, "h1")
    say(writer, clock, change, "h2")
    texts = active(store)
    assert any(new in t for t in texts) and not any(old in t for t in texts), texts
    history = store.list_memories(U, include_history=True)
    assert any(old in r.text and r.status is MemoryStatus.SUPERSEDED for r in history)


@pytest.mark.parametrize(
    "said",
    [
        "if this goes well I'm retiring to a cabin in Vermont by 40",
        "豆豆要是会说话，第一句肯定是要吃鸡腿",
    ],
)
def test_what_would_follow_from_a_condition_is_no_fact(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock, said: str
) -> None:
    say(writer, clock, said, "h1")
    assert active(store) == []


@pytest.mark.parametrize(
    ("first", "forget", "gone", "stays"),
    [
        # Only one of the topic's words is in the memory: the request still reaches it.
        (
            "我哥搬去杭州了，住西湖区那边",
            "另外我哥住哪那条你也删了吧，他不想让人知道",
            "西湖区",
            None,
        ),
        (
            "my knee has been bad since the ski trip, booking physio",
            "please delete the bit about my knee from my notes",
            "knee",
            None,
        ),
        # A medicine by name is on "吃药的事" (a coarse topic shared, no word).
        (
            "我爸最近血糖高，医生让他每天吃两次 metformin",
            "我爸吃药的事你就别记了，他不想别人知道",
            "metformin",
            None,
        ),
        # Two verbs in a row, and what the request says to keep stays.
        (
            "我女儿穿130的衣服，鞋子穿31码",
            "我女儿鞋码那个你别记了删掉吧",
            "31码",
            None,
        ),
        (
            "I had a complaint about the late delivery on the 3rd, ticket was raised",
            "还有那个 late delivery 的 complaint, 可以帮我 delete 掉那个 record 吗",
            "late delivery",
            None,
        ),
        (
            "my partner Alex adores that little Georgian bakery on Elm Road",
            "oh and scratch the Georgian bakery thing for Alex, we went off it",
            "Georgian",
            None,
        ),
    ],
)
def test_a_forget_request_reaches_what_holds_the_most_of_its_topic(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    first: str,
    forget: str,
    gone: str,
    stays: str | None,
) -> None:
    say(writer, clock, first, "h1")
    assert any(gone in t for t in active(store)), active(store)
    say(writer, clock, forget, "h2")
    texts = active(store)
    assert not any(gone in t for t in texts), texts


def test_a_forget_reaching_nothing_outright_spares_what_shares_nothing_with_it(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    """The fallback takes the best match, not everything: "我哥住哪那条" erases the brother's
    address and leaves the user's own coffee habit and the dog alone."""
    say(writer, clock, "我每天早上喝一杯美式", "h1")
    say(writer, clock, "我哥搬去杭州了，住西湖区那边", "h2")
    say(writer, clock, "我家狗叫豆豆，是柯基", "h3")
    say(writer, clock, "我哥住哪那条你删了吧", "h4")
    texts = active(store)
    assert not any("西湖区" in t for t in texts), texts
    assert any("美式" in t for t in texts) and any("豆豆" in t for t in texts), texts


def test_what_a_forget_request_says_to_keep_stays(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    """ "少吃糖那个可以留着" is no part of the topic: the sugar habit stays."""
    say(writer, clock, "医生让我每天吃降糖药", "h1")
    say(writer, clock, "我最近在少吃糖，奶茶都戒了", "h2")
    say(writer, clock, "我吃药那个事你别记着了，删了吧，少吃糖那个可以留着", "h3")
    texts = active(store)
    assert not any("降糖药" in t for t in texts), texts
    assert any("少吃糖" in t for t in texts), texts


@pytest.mark.parametrize(
    ("first", "change", "gone", "new"),
    [
        (
            "我最近在练冥想，每天睡前二十分钟",
            "冥想坚持不下去了，改成睡前听播客",
            "每天睡前二十分钟",
            "播客",
        ),
        (
            "I'm racing the Cardiff 10k on the 9th, training most evenings",
            "pulled my calf so I'm out of the 10k, deferred to spring",
            "racing",
            "deferred",
        ),
    ],
)
def test_giving_something_up_is_an_update(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    first: str,
    change: str,
    gone: str,
    new: str,
) -> None:
    say_then_change(writer, store, clock, first, change, gone=gone, new=new)


def test_cantonese_grammar_pairs_tie_no_two_statements_together(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    """ "嗰個" and "個啦" are in half of what a Cantonese speaker says: a change of the
    mother's plan must not end the user's own plan through them."""
    say(writer, clock, "諗清楚喇，轉 50GB 嗰個啦，$238 嗰個", "h1")
    say(writer, clock, "我阿爸個計劃，佢話唔要喇，幫我cut咗佢嗰個啦", "h2")
    assert any("50GB" in t for t in active(store)), active(store)


@pytest.mark.parametrize(
    ("said", "lasting"),
    [
        ("换部门了，下周开始去数据平台组", "数据平台组"),
        ("starting next week I'm on the night shift at the depot", "night shift"),
        ("从这个月起我每周三在家办公", "在家办公"),
    ],
)
def test_a_vague_time_that_starts_a_state_does_not_end_it(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock, said: str, lasting: str
) -> None:
    """ "下周开始" is when a lasting state begins: a month on it still holds ("下周我在北京
    出差" ends with that week)."""
    say(writer, clock, said, "h1")
    clock.advance(timedelta(days=40))
    store.expire_due()
    assert any(lasting in t for t in active(store)), active(store)


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("换部门了，老板换成 Grace，周会也改到周四下午", "Grace"),
        ("my new manager is Dana, and our 1:1 moves to Thursdays", "Dana"),
        ("我领导现在是老周，人挺好", "老周"),
    ],
)
def test_who_holds_a_role_for_the_user_is_the_users_fact(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock, said: str, kept: str
) -> None:
    say(writer, clock, said, "h1")
    assert any(kept in t for t in active(store)), active(store)


def test_a_masked_email_is_no_sentence_break(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    """The partial mask keeps the domain ("[EMAIL:@outlook.com]"): its dot must not end
    the sentence and leave "com]" as a statement of its own."""
    say(writer, clock, "btw my new email is wing.lam.tko@outlook.com, use that from now on", "h1")
    texts = active(store)
    assert any("[EMAIL:@outlook.com]" in t for t in texts), texts
    assert not any(t.rstrip().endswith(("com]", "outlook")) and "[EMAIL" not in t for t in texts), (
        texts
    )
    assert not any("wing.lam" in t for t in texts), texts


# --- a fact the user takes back --------------------------------------------------------------


def test_a_taken_back_allergy_goes_and_nothing_else_that_names_it(
    writer: MemoryWriter, store: ChromaMemoryStore, clock: ManualClock
) -> None:
    say(writer, clock, "我对 aspirin 过敏，吃了会起风团", "m1")
    say(writer, clock, "我爸每天吃 aspirin 100mg", "m2")
    say(writer, clock, "我儿子对鸡蛋过敏", "m3")
    assert any("aspirin过敏" in t.replace(" ", "") for t in active(store))
    say(
        writer,
        clock,
        "对了上次说我对 aspirin 过敏，我说错了，是布洛芬。aspirin 其实没问题，鸡蛋也没问题",
        "m4",
    )
    texts = active(store)
    assert not any("aspirin过敏" in t.replace(" ", "") for t in texts), texts  # taken back
    assert any("100mg" in t for t in texts), texts  # the father's aspirin stays
    assert any("鸡蛋过敏" in t for t in texts), texts  # the son's egg allergy stays
    assert not any("其实没问题" in t for t in texts), texts  # the retraction names it again


def test_not_allergic_after_all_in_english(
    writer: MemoryWriter, store: ChromaMemoryStore, clock: ManualClock
) -> None:
    say(writer, clock, "I'm allergic to penicillin.", "m1")
    say(
        writer,
        clock,
        "Actually I got it wrong before, I'm not allergic to penicillin… it's amoxicillin.",
        "m2",
    )
    assert not any("penicillin" in t.lower() for t in active(store)), active(store)


def test_one_message_never_supersedes_its_own_facts(
    writer: MemoryWriter, store: ChromaMemoryStore, clock: ManualClock
) -> None:
    """A turn stored as a rule's fact and the rest of it as evidence: the evidence is an
    update of what came before, not of the fact said beside it."""
    say(
        writer,
        clock,
        "quick context: I'm an analyst on the risk team, my manager is Tomasz Nowak",
        "h1",
    )
    say(
        writer,
        clock,
        "heads up, I'm being transferred to the pricing team from Monday, my new manager is "
        "Ines Duarte. Tomasz is great but this fits me better",
        "h2",
    )
    texts = active(store)
    assert any("Ines Duarte" in t for t in texts), texts
    assert not any("risk team" in t for t in texts), texts


def test_an_update_that_puts_a_standing_instructions_value_right_replaces_it(
    writer: MemoryWriter, store: ChromaMemoryStore, clock: ManualClock
) -> None:
    """Instructions are pinned on every turn: a stale one would be in every prompt."""
    say(writer, clock, "另外以后打给我请在晚上六点以后，白天上班不方便", "h1")
    assert any(r.type.value == "procedural" for r in store.list_memories(U))
    say(writer, clock, "然后晚上六点那个，其实九点以后比较好，最近老加班", "h2")
    texts = active(store)
    assert not any("六点以后" in t for t in texts), texts
    assert any("九点以后" in t for t in texts), texts


def test_an_update_on_something_else_leaves_a_standing_instruction(
    writer: MemoryWriter, store: ChromaMemoryStore, clock: ManualClock
) -> None:
    say(writer, clock, "from now on never call me before 10, I work nights", "h1")
    say(writer, clock, "we moved to Leeds now, new flat near the station", "h2")
    say(writer, clock, "actually the 10 o'clock bus works better for the school run", "h3")
    assert any("never call me before 10" in t for t in active(store)), active(store)


@pytest.mark.parametrize(
    ("first", "change", "gone", "new"),
    [
        (
            "We're doing 25 tables for the banquet, at the Lotus Hall",
            "make it 28 tables",
            "25 tables",
            "28",
        ),
        (
            "Dad is on Glycomet 500 twice a day",
            "Doctor raised dad's Glycomet to 1000",
            "500",
            "1000",
        ),
        ("阿姨的工资是每月6500", "阿姨工资涨到7000了", "6500", "7000"),
        ("我的信用卡额度是两万", "额度提到三万了", "两万", "三万"),
        # The update names no one, but the piece's own drug: it is about the same person.
        ("我妈每晚吃华法林三毫克", "医生说华法林改成四毫克了", "三毫克", "四毫克"),
    ],
)
def test_a_thing_counted_again_with_another_number_ends_the_old_value(
    store: ChromaMemoryStore,
    writer: MemoryWriter,
    clock: ManualClock,
    first: str,
    change: str,
    gone: str,
    new: str,
) -> None:
    """No update word is needed: the same thing named beside a new number moved it."""
    say_then_change(writer, store, clock, first, change, gone=gone, new=new)


def test_someone_elses_amount_is_not_moved_by_the_users(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "Please keep my mother's add-on card limit at 25,000", "h1")
    say(writer, clock, "Increase my own card limit to 60,000", "h2")
    assert any("25,000" in t for t in active(store)), active(store)


def test_more_of_the_same_keeps_the_first_amount(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "I ordered 3 shirts from the autumn sale", "h1")
    say(writer, clock, "can I order 2 more shirts in blue", "h2")
    texts = active(store)
    assert any("3 shirts" in t for t in texts), texts


def test_a_dose_change_keeps_the_condition(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    say(writer, clock, "我爸帕金森吃美多芭半片一天三次", "h1")
    say(writer, clock, "我爸美多芭加到一片了", "h2")
    texts = active(store)
    assert any("帕金森" in t for t in texts), texts
    assert not any("半片" in t for t in texts), texts


def test_a_move_to_a_new_home_outlasts_the_lease_it_replaces(
    store: ChromaMemoryStore, writer: MemoryWriter, clock: ManualClock
) -> None:
    """A bounded lease ends; the move that replaces it is lasting, not bounded like it."""
    say(
        writer,
        clock,
        "你好，我是 Mia, 刚 relocate 到 Munich 做 data analyst, 在 Schwabing 租了个 WG 的房间, 只租到 4 月底。",
        "h1",
    )
    say(writer, clock, "找到长期的房子了! 5 月 1 号搬去 Haidhausen。", "h2")
    (home,) = [r for r in store.list_memories(U) if "Haidhausen" in r.text]
    assert home.expires_at is None, home


@pytest.mark.parametrize(
    ("first", "change", "gone", "new"),
    [
        # A relative's drug replaced ends the drug and the dose said with it.
        (
            "My mum is on warfarin, 5mg every evening.",
            "The GP switched mum to apixaban last week.",
            "warfarin",
            "apixaban",
        ),
        # A move named "relocated", sharing only the plain word "office".
        (
            "My office is on Baker Street.",
            "We relocated to the Canary Wharf office this month.",
            "Baker Street",
            "Canary Wharf",
        ),
        # A change of channel said alone ("改发邮件吧") is the channel's new value.
        ("以后都用微信联系我。", "以后别用微信了，改发邮件吧。", "通过微信", "邮件"),
        ("I drink oat milk in my coffee", "I've switched to soy milk these days", "oat milk", "soy milk"),
    ],
)
def test_a_change_named_in_plain_words_ends_the_old_value(
    writer: MemoryWriter, store: ChromaMemoryStore, clock: ManualClock,
    first: str, change: str, gone: str, new: str,
) -> None:  # fmt: skip
    say_then_change(writer, store, clock, first, change, gone=gone, new=new)


def test_the_details_said_with_a_replaced_value_go_with_it(
    writer: MemoryWriter, store: ChromaMemoryStore, clock: ManualClock
) -> None:
    say(writer, clock, "My mum is on warfarin, 5mg every evening.", "h1")
    say(writer, clock, "The GP switched mum to apixaban last week.", "h2")
    assert not any("5mg" in t for t in active(store)), active(store)


def test_details_on_another_topic_or_person_stay(
    writer: MemoryWriter, store: ChromaMemoryStore, clock: ManualClock
) -> None:
    say(writer, clock, "换39码吧，我平时都穿39的。我是你们家的月卡会员，每个月自动扣那个", "h1")
    say(writer, clock, "还有那个月卡，能不能改成年卡", "h2")
    texts = active(store)
    assert any("39" in t for t in texts), texts
    say(writer, clock, "My mum is on warfarin, she is allergic to penicillin.", "h3")
    say(writer, clock, "The GP switched mum to apixaban.", "h4")
    assert any("penicillin" in t for t in active(store)), active(store)


def test_my_x_is_y_ends_an_older_raw_statement_of_x(
    writer: MemoryWriter, store: ChromaMemoryStore, clock: ManualClock
) -> None:
    say_then_change(
        writer, store, clock,
        "we moved in last year, our office is near Baker Street, parking is free",
        "my office is on Fleet Street",
        gone="Baker Street", new="Fleet Street",
    )  # fmt: skip
    assert any("parking is free" in t for t in active(store)), active(store)


@pytest.mark.parametrize(
    ("first", "change", "gone"),
    [
        ("Only call me after 6pm.", "You can call me any time now, I'm working from home.", "6pm"),
        ("Never schedule anything on weekends for me.", "Weekends are fine now, I've changed jobs.", "never schedule"),
    ],
)
def test_a_standing_instruction_changed_in_plain_words_is_no_longer_pinned(
    writer: MemoryWriter, store: ChromaMemoryStore, clock: ManualClock, first: str, change: str, gone: str
) -> None:
    say(writer, clock, first, "h1")
    say(writer, clock, change, "h2")
    texts = active(store)
    assert not any(gone in t.lower() for t in texts), texts


def test_a_new_answer_style_replaces_the_old_one(
    writer: MemoryWriter, store: ChromaMemoryStore, clock: ManualClock
) -> None:
    say_then_change(
        writer, store, clock,
        "Keep your answers short, bullet points please.",
        "Actually I prefer detailed explanations now.",
        gone="short", new="detailed",
    )  # fmt: skip


def test_a_plan_restated_with_another_date_ends_the_old_date(
    writer: MemoryWriter, store: ChromaMemoryStore, clock: ManualClock
) -> None:
    say_then_change(
        writer, store, clock,
        "朵朵学校3月11日下午三点开家长会。",
        "家长会是3月12日下午两点。",
        gone="3月11日", new="3月12日",
    )  # fmt: skip
