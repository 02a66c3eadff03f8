"""What the offline write path keeps, and with what time bounds (issue 15, class by class).

Statements that used to be dropped: laughter at one clause, a greeting before the
news, subjectless and named-person statements, details carried by a question,
standing rules phrased as questions or conditions, traditional characters,
pronouns whose referent is in the piece before. Time bounds: a past report does
not lapse, an ordinal before a noun is not a day, a notice period is not a
validity, birthdays last, Cantonese day words resolve. English assistant
commitments are kept like Chinese ones. Negatives stay out in each class.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langgraph_memory.nodes._messages import mark_unanswered
from langgraph_memory.nodes._rules_time import moment_of, time_words
from langgraph_memory.nodes.rules import RuleBasedExtractor, is_evidence_key
from langgraph_memory.nodes.rules._text import laughed_at, restore_script, to_simplified
from langgraph_memory.types import CandidateMemory, MemorySource, MemoryType

NOW = datetime(2026, 11, 30, 18, 0, tzinfo=UTC)  # a Monday
EXTRACTOR = RuleBasedExtractor(clock=lambda: NOW)


def found(text: str) -> list[CandidateMemory]:
    return EXTRACTOR.extract([HumanMessage(text, id="m1")])


def said(text: str) -> str:
    """Everything kept from one user turn, as one lower-case string."""
    return " | ".join(c.text for c in found(text)).lower()


def evidence(text: str) -> list[CandidateMemory]:
    return [c for c in found(text) if is_evidence_key(c.key)]


def procedures(text: str) -> list[str]:
    return [c.text for c in found(text) if c.type is MemoryType.PROCEDURAL]


# -- laughter closes one clause, not the turn ------------------------------------------


def test_laughter_takes_back_only_the_clause_it_closes() -> None:
    kept = said(
        "my nephew Sam, he's 9, has a recital on the 12th March, and I'm the real star haha"
    )
    assert "recital" in kept and "star" not in kept


def test_leading_laughter_is_a_reaction_not_a_joke() -> None:
    assert "pixel" in said("haha my cat is called Pixel")
    assert "lisbon" in said("lol no, we're in Lisbon now. I moved in June")
    assert "lives in june" not in said("lol no, we're in Lisbon now. I moved in June")


@pytest.mark.parametrize(
    "text",
    ["I'm the queen of Spain lol", "我是宇宙第一帅哥哈哈哈", "lol", "I own three yachts 😂"],
)
def test_a_laughed_at_claim_stays_out(text: str) -> None:
    assert found(text) == []


def test_laughed_at_splits_text_and_flag() -> None:
    assert laughed_at("haha ok then") == ("ok then", False)
    assert laughed_at("我升职了哈哈哈！") == ("我升职了", True)


# -- statements without "I" -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("hi we just moved", "we just moved"),
        ("hey, we got married last month!", "married"),
        ("started pottery classes on tuesdays", "pottery"),
        ("got a job offer from a bakery in Leeds", "bakery"),
        ("Priya's switched to decaf", "decaf"),
        ("Tomas has a gluten intolerance, so keep bread away", "gluten"),
        ("I've got news! new flat, top floor, no lift", "top floor"),
        ("早晨，我系阿芬，喺屯门做护士", "护士"),
    ],
)
def test_subjectless_and_named_person_statements_are_kept(text: str, needle: str) -> None:
    assert needle in said(text), said(text)


@pytest.mark.parametrize(
    "text", ["that is funny", "hey", "looks good", "ok thanks", "早晨", "I see"]
)
def test_small_talk_still_says_nothing(text: str) -> None:
    assert found(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "my husband says his boss is moving to Oslo",
        "我老婆说她同事家的猫丢了",
        "my friend bought the same lamp and hers arrived broken lol",
    ],
)
def test_reports_about_someone_elses_people_stay_out(text: str) -> None:
    assert found(text) == []


# -- questions that carry the user's details ---------------------------------------------


def test_a_question_keeps_the_code_it_carries() -> None:
    kept = evidence("the blender I returned, #RT-55123, still not refunded?")
    assert kept and "RT-55123" in kept[0].text


def test_a_question_with_an_order_number_keeps_the_number() -> None:
    assert "order.pk-40917" in {c.key for c in found("hi, where is my order #PK-40917?")}
    assert any("DD88123456" in c.text for c in found("我的订单DD88123456怎么还没发货？"))


@pytest.mark.parametrize(
    "text", ["is it going to rain?", "what time do you open?", "can I pay by card?"]
)
def test_questions_without_a_detail_of_the_user_stay_out(text: str) -> None:
    assert found(text) == []


# -- pronouns carry their referent ------------------------------------------------------


def test_household_members_as_subjects_are_kept() -> None:
    out = evidence("The kids are off school next week, half term")
    assert out and "half term" in out[0].text and out[0].expires_at is not None


def test_a_clock_time_stays_with_its_clause() -> None:
    out = evidence("我女儿下周五学校开放日，下午两点")
    assert len(out) == 1 and "下午两点" in out[0].text


def test_a_pronoun_piece_carries_the_piece_it_refers_to() -> None:
    kept = evidence("my cousin Mira is moving in. her rent is 900 a month")
    assert any("Mira" in c.text and "900" in c.text for c in kept), kept


def test_pointing_back_does_not_tie_two_time_bounds_together() -> None:
    out = found(
        "our niece Bo has her school concert on the 9th December. we're taking the train for it"
    )
    concert = [c for c in out if "concert" in c.text and "train" not in c.text]
    train = [c for c in out if "train" in c.text]
    assert concert and train and "concert" in train[0].text  # the train piece says what "it" is
    assert train[0].expires_at is None


# -- time bounds -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "the parcel arrived today but the box was crushed",
        "sofa got delivered today, one leg is cracked",
        "我们住在5号楼，电梯坏了",
        "we're on the 5th floor, no lift",
        "the landlord needs 24h notice for repairs",
        "my mum's bday is on the 14th",
        "her b-day is Jan 3",
    ],
)
def test_reports_floors_notice_periods_and_birthdays_do_not_lapse(text: str) -> None:
    out = found(text)
    assert out and all(c.expires_at is None for c in out), [(c.text, c.expires_at) for c in out]


def test_a_state_of_today_still_lapses_tonight() -> None:
    out = found("I'm working from home today")
    assert out and out[0].expires_at == datetime(2026, 12, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "days"),
    [("听日去睇医生", 1), ("後日要交报告", 2), ("聽朝开会", 1), ("下個禮拜三飲茶", 9)],
)
def test_cantonese_and_traditional_day_words_resolve(text: str, days: int) -> None:
    moment = moment_of(text, NOW)
    assert moment is not None and moment.date() == (NOW + timedelta(days=days)).date()


def test_time_words_reads_variants_as_mandarin() -> None:
    assert time_words("听日同后日") == "明天同后天"
    assert time_words("no chinese here") == "no chinese here"


def test_a_cantonese_tomorrow_plan_expires_after_tomorrow() -> None:
    out = [c for c in found("听日要带护照俾新公司") if "护照" in c.text]
    assert out and out[0].expires_at == datetime(2026, 12, 2, tzinfo=UTC)


# -- standing instructions however phrased ----------------------------------------------


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("回覆請用繁體中文", "繁體"),
        ("以后有事直接发邮件，别打电话", "发邮件"),
        ("以后同我讲嘢用普通话得唔得？", "普通话"),
        ("from now on answer in bullet points, ok?", "bullet"),
        ("when I send a recipe, convert it to metric", "metric"),
        ("whenever we talk about money just give me the number first", "number first"),
        ("if the parcel is late just refund me", "refund me"),
        ("no nuts in anything you suggest please", "no nuts"),
    ],
)
def test_standing_rules_phrased_as_questions_conditions_or_filters(text: str, needle: str) -> None:
    assert any(needle in p for p in procedures(text)), found(text)


@pytest.mark.parametrize(
    "text",
    [
        "when I get back I'll email you",
        "when i get home, i will call you",
        "if it rains, we stay home",
        "以后我们再聊",
        "if I won the lottery just give me a yacht",
    ],
)
def test_plans_and_hypotheticals_are_not_standing_rules(text: str) -> None:
    assert procedures(text) == []


def test_traditional_characters_are_put_back() -> None:
    assert to_simplified("請用繁體") == "请用繁体"
    assert restore_script("用户希望用繁体中文交流", "请用繁体中文", "請用繁體中文") == (
        "用户希望用繁體中文交流"
    )


# -- assistant commitments in English and Chinese ---------------------------------------


def conversation(*turns: str) -> list[CandidateMemory]:
    messages: list[BaseMessage] = []
    for index, text in enumerate(turns):
        kind = AIMessage if index % 2 else HumanMessage
        messages.append(kind(text, id=f"m{index}"))
    return [c for c in EXTRACTOR.extract(messages) if c.source is MemorySource.AGENT_INFERRED]


@pytest.mark.parametrize(
    ("assistant", "needle"),
    [
        ("Refund moved to your original card, arriving Dec 4.", "dec 4"),
        ("Claim RX-20411 opened; we cover up to 80 euros.", "rx-20411"),
        ("New delivery date is Jan 6.", "jan 6"),
        ("Sorry about that. Your table has been moved to 8pm.", "8pm"),
        ("We'll swap it for a new one on Friday.", "swap"),
        ("已重新處理，12月5日前到帳。", "12月5日"),
    ],
)
def test_taken_commitments_are_kept_in_both_languages(assistant: str, needle: str) -> None:
    kept = conversation("any news?", assistant, "ok thanks")
    assert kept and needle in kept[0].text.lower(), kept


def test_a_later_date_for_the_same_thing_replaces_the_earlier_slot() -> None:
    first = conversation("any news?", "Estimated to ship Dec 2.", "fine")
    later = conversation("and now?", "New ETA is Dec 9.", "ok")
    assert first[0].key == later[0].key == "promise.eta"


def test_a_validity_date_expires_the_commitment_and_says_what_it_is() -> None:
    kept = conversation("does the voucher expire?", "It's valid until Dec 31.", "great")
    assert kept[0].expires_at == datetime(2027, 1, 1, tzinfo=UTC)
    assert "voucher" in kept[0].text


@pytest.mark.parametrize(
    ("assistant", "after"),
    [
        ("已为您开通韩国漫游日租包，12/18 至 12/22。", datetime(2026, 12, 23, tzinfo=UTC)),
        (
            "I've booked the courtesy car for you, Dec 9 to Dec 12.",
            datetime(2026, 12, 13, tzinfo=UTC),
        ),
    ],
)
def test_a_service_booked_for_a_period_expires_after_it(assistant: str, after: datetime) -> None:
    kept = conversation("can you set that up?", assistant, "thanks")
    assert kept and kept[0].expires_at == after, kept


def test_money_owed_over_a_period_does_not_expire() -> None:
    # "When should my refund have arrived?" is asked after the window has passed.
    kept = conversation(
        "and my refund?", "Your refund of $40 will land between Dec 9 and Dec 11.", "ok"
    )
    assert kept and kept[0].expires_at is None, kept


@pytest.mark.parametrize(
    ("assistant", "reply"),
    [
        ("Done, I've cancelled the order.", "no I said keep it"),
        ("Done, I've cancelled the order.", "NO don't cancel it!!"),
        ("Updated.", "ok"),
        ("Changed to Nov 24.", "is that the morning one?"),
        ("We can't guarantee it but we'll try.", "ok"),
    ],
)
def test_corrected_bare_or_unconfirmed_commitments_stay_out(assistant: str, reply: str) -> None:
    assert conversation("hi", assistant, reply) == []


def test_a_reply_the_thread_ended_on_keeps_its_commitments_but_not_its_offers() -> None:
    done = mark_unanswered(AIMessage("Done: refund of $30 issued, 3-5 days.", id="a1"))
    kept = [c for c in EXTRACTOR.extract([done]) if c.source is MemorySource.AGENT_INFERRED]
    assert kept and "refund of $30" in kept[0].text
    offer = mark_unanswered(AIMessage("I can switch you to unlimited from Oct 20.", id="a2"))
    assert EXTRACTOR.extract([offer]) == []
    # Without the mark the reply still waits for the user's answer.
    assert EXTRACTOR.extract([AIMessage("Done: refund of $30 issued, 3-5 days.", id="a3")]) == []


@pytest.mark.parametrize(
    ("assistant", "reply", "kept", "gone"),
    [
        (
            "I see you used the Japan roaming pass in November.",
            "我没去 Japan leh, 是 12 月才出发",
            "12 月才出发",
            "japan",
        ),
        ("你的計劃包牙科，補牙可以全數報銷。", "我個計劃唔包牙科㗎，我想問眼科", "眼科", "牙科"),
        (
            "Since you sync from BigQuery, the switch is easy.",
            "We're on Postgres, not BigQuery.",
            "postgres",
            None,
        ),
    ],
)
def test_a_denial_of_the_assistants_claim_is_not_kept_as_what_the_user_said(
    assistant: str, reply: str, kept: str, gone: str | None
) -> None:
    messages = [
        HumanMessage("hi", id="h0"),
        AIMessage(assistant, id="a0"),
        HumanMessage(reply, id="h1"),
    ]
    said = " ".join(c.text.lower() for c in EXTRACTOR.extract(messages))
    assert kept in said, said
    assert gone is None or gone not in said, said


@pytest.mark.parametrize(
    "assistant",
    [
        "Done, the pregnancy note is removed from your profile.",
        "I've deleted your old address from our records.",
        "好的，已为您删除这条记录。",
        "Noted, I won't mention it again.",
    ],
)
def test_a_confirmation_that_something_was_erased_is_not_kept(assistant: str) -> None:
    assert conversation("please forget that", assistant, "thanks") == []


@pytest.mark.parametrize(
    ("assistant", "reply", "kept", "gone"),
    [
        (
            "Updated: Rarotonga 14 to 20 December. I've also noted Tama's passport expires in January.",
            "Eh? Tama's passport is fine. It's Nikau's that runs out.",
            "rarotonga",
            "passport",
        ),
        (
            "I've opened claim CL-77310 for escape of water. A loss adjuster will ring you to arrange a visit.",
            "Please don't ring, I said before. Email me.",
            "cl-77310",
            "ring",
        ),
    ],
)
def test_a_reply_that_disputes_one_commitment_keeps_the_others(
    assistant: str, reply: str, kept: str, gone: str
) -> None:
    found = " ".join(c.text.lower() for c in conversation("hi", assistant, reply))
    assert kept in found and gone not in found, found


@pytest.mark.parametrize(
    ("assistant", "reply", "gone"),
    [
        ("您的钻石会员积分已到账。", "我什么时候成钻石会员了", "钻石"),
        ("已经把赠品寄到您杭州的地址了。", "我哪有杭州的地址", "杭州"),
        (
            "Your Platinum upgrade is applied too.",
            "that's not me, must be another account",
            "platinum",
        ),
    ],
)
def test_a_claim_asked_back_or_denied_as_someone_elses_is_not_kept(
    assistant: str, reply: str, gone: str
) -> None:
    found = " ".join(c.text.lower() for c in conversation("hi", assistant, reply))
    assert gone not in found, found


def test_an_allergy_put_on_the_right_person_is_theirs_not_the_users() -> None:
    # The assistant's wrong claim, and the user saying whose it is.
    found = conversation("hi", "考虑到您对头孢过敏，建议先问医生。", "头孢过敏的是我妈，不是我")
    assert found == [], found  # the claim is disputed
    texts = [c.text for c in EXTRACTOR.extract([HumanMessage("头孢过敏的是我妈，不是我", id="m")])]
    assert "用户对头孢过敏" not in texts and any("头孢" in t and "母亲" in t for t in texts), texts
    texts = [c.text for c in EXTRACTOR.extract([HumanMessage("过敏的是我儿子，不是女儿", id="m")])]
    assert not any(t.startswith("用户对") for t in texts), texts
    kept = conversation("hi", "您女儿的花生过敏已备注。", "过敏的是我儿子，不是女儿")
    assert not any("女儿" in c.text for c in kept), kept


def test_someone_named_before_an_allergy_keeps_their_own_name() -> None:
    texts = {c.key: c.text for c in EXTRACTOR.extract([HumanMessage("我表姐对芒果过敏", id="m")])}
    assert texts.get("allergy.表姐.芒果") == "用户的表姐对芒果过敏", texts
    texts = {
        c.key: c.text for c in EXTRACTOR.extract([HumanMessage("我儿子小宇对花生过敏", id="m")])
    }
    assert texts.get("allergy.son.花生") == "用户的儿子小宇对花生过敏", texts


def test_removing_a_fee_is_still_a_commitment() -> None:
    kept = conversation("that fee is wrong", "I've removed the late fee from your bill.", "thanks")
    assert kept and "late fee" in kept[0].text


def test_a_not_later_in_the_reply_is_the_users_own_news() -> None:
    kept = conversation(
        "hi", "Refund issued, 7-10 business days.", "ok. and we fly back the 9th now, not the 7th"
    )
    assert kept and "refund issued" in kept[0].text.lower()


def test_a_scheduled_visit_is_over_after_its_day_but_an_eta_is_not() -> None:
    visit = conversation("那上门取件啥时候", "12月3日下午顺丰上门取件。", "好")
    assert visit and visit[0].expires_at == datetime(2026, 12, 4, tzinfo=UTC)
    eta = conversation("and the lamp?", "New ETA is Dec 9.", "ok")
    assert eta and eta[0].expires_at is None


def test_chinese_status_lines_and_more_business_verbs_are_commitments() -> None:
    refund = conversation("少了300", "抱歉，我们会补退300元，12月20日前到账。", "好")
    assert refund and "补退300元" in refund[0].text
    rushed = conversation("这次别再出岔子", "已加急，预计12月15日送达。", "行")
    assert rushed and "加急" in rushed[0].text


def test_clauses_after_someone_elses_subject_stay_theirs() -> None:
    assert found("我邻居也买了台冰箱，说噪音大得睡不着") == []
    kept = said("my neighbour bought the same fridge, says it's noisy, and I want a refund")
    assert "noisy" not in kept and "refund" in kept


@pytest.mark.parametrize(
    "text",
    [
        "If I win the lotto I'm buying a flat in Nice",
        "if we hit the jackpot we're moving to Bali",
        "假如我中咗六合彩，我即刻去环游世界",
        "my wife says if she wins the lottery she'll buy a boat",
    ],
)
def test_windfall_dreams_stay_out_even_without_laughter(text: str) -> None:
    assert found(text) == []


def test_a_long_number_glued_to_chinese_is_masked_in_evidence() -> None:
    # After 证件号 the redactor masks it as an ID; after a plain word the evidence's own
    # digit-run masking does.
    kept = evidence("机主就是我，证件号440301198807150012，你们核对一下")
    assert kept and "440301198807150012" not in kept[0].text and "[ID_NUMBER]" in kept[0].text
    kept = evidence("机主就是我，编号440301198807150012，你们核对一下")
    assert kept and "440301198807150012" not in kept[0].text and "[NUMBER]" in kept[0].text


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("我儿子叫小宝，今年五岁，对花生过敏", "allergy.son.花生"),
        ("我女儿乐乐，芒果过敏", "allergy.daughter.芒果"),
        ("我们家狗狗叫旺财，三岁了，对鸡肉过敏", "allergy.狗狗.鸡肉"),
    ],
)
def test_a_dropped_chinese_subject_is_the_one_just_named(text: str, key: str) -> None:
    keys = {c.key for c in found(text)}
    assert key in keys and not any(
        k and k.count(".") == 1 and k.startswith("allergy.") for k in keys
    )


def test_a_new_subject_ends_the_carried_one() -> None:
    assert "allergy.花生" in {c.key for c in found("我儿子叫小宝，我对花生过敏")}
    assert "allergy.猫毛" in {c.key for c in found("我对猫毛过敏")}


def test_an_english_pronoun_after_a_named_relative_is_that_relative() -> None:
    assert "allergy.wife.shellfish" in {
        c.key for c in found("my wife Ana, she's allergic to shellfish")
    }
    out = found(
        "I'm travelling with my daughter Giulia, she's 4, and she has a severe sesame allergy"
    )
    assert "allergy.daughter.sesame" in {c.key for c in out}
    assert not any(c.key == "allergy.sesame" for c in out)
    # only safety facts are read with the carried subject; the rest stays as said
    assert [c.key for c in found("my mum is visiting, she's vegetarian")].count("profile.mum") == 1
