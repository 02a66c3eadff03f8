"""What ends an old memory, as pure rules: topic families, resolutions, pieces an update
retires, self-corrections inside one message, and forget requests that point back.

The sentences are this file's own (not the exam's), in English and Chinese, with the
reverse cases beside each class: what must NOT be retired or deleted.
"""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from langgraph_memory.nodes.rules import RuleBasedExtractor
from langgraph_memory.nodes.rules._clause import match_clause
from langgraph_memory.nodes.rules._evidence import topics, updates
from langgraph_memory.nodes.rules._forget import forget_reaches
from langgraph_memory.nodes.rules._retire import (
    fold_self_corrections,
    moves_a_date,
    moves_a_value,
    retired_dates,
    retired_part,
    split_pieces,
)
from langgraph_memory.types import CandidateMemory, MemoryOp

EXTRACTOR = RuleBasedExtractor()

# --- topic families: an update and what it replaces share a topic, not a word ----------


@pytest.mark.parametrize(
    ("old", "new", "topic"),
    [
        ("I have my metformin with breakfast", "the GP put me on insulin instead", "medication"),
        (
            "I take two ramipril tablets a day",
            "they've changed my blood pressure pills",
            "medication",
        ),
        ("我每天早上吃降压药", "医生给我换了一种药", "medication"),
        ("we'll drive up to Inverness", "we're taking the sleeper train now", "transport"),
        ("打算自驾去杭州", "改坐高铁了", "transport"),
        ("I still have dairy in my coffee", "gone fully plant-based, no more dairy", "diet"),
        ("我不吃牛肉", "最近开始吃肉了", "diet"),
        ("the team sync is at 11 every Monday", "the sync moved to 2pm", "schedule"),
        ("my manager is Tomasz", "I switched teams last week", "work"),
        ("I'm on the monthly plan", "switch me to annual, it works out cheaper", "plan"),
        ("we pay for the membership yearly", "I've gone monthly again", "plan"),
        ("组长是老周", "调岗了，组长换成小林", "work"),
        ("每周三晚上开例会", "例会改到周四了", "schedule"),
        ("our workspace is called pinecrest", "the workspace got renamed", "account"),
        ("账号叫 moonpie", "账号改名了", "account"),
        ("still waiting for my refund on the kettle", "the refund came through", "refund"),
        ("上个月扣费扣了两次", "退款到账了", "refund"),
        ("you promised me a voucher for the delay", "the voucher arrived", "compensation"),
        ("洗衣机漏水", "师傅修好了，不漏水了", "repair"),
        ("下个月去厦门旅游", "旅游取消了", "trip"),
        ("I'm on 10GB of data", "I've bought a 30GB data top-up", "data"),
        ("我们家在三楼", "我们搬家了，现在住一楼", "home"),
        # Where the user's things are: the service at "X 家里" is at home.
        ("我 Bedok 家里的宽带老是断", "我们现在住 Clementi 了", "home"),
        ("新莊家裡的網路很慢", "我們家現在在桃園", "home"),
        (
            "my iPhone 13 keeps dropping calls at home",
            "switched to a Galaxy S24 last week",
            "device",
        ),
        ("用户购买了iPhone 15 Pro", "我现在用的是荣耀 Magic 6", "device"),
        ("手機是 iPhone 12", "換咗部 OPPO Find X7", "device"),
        ("我是你们家的月卡会员", "能不能改成年卡", "plan"),
    ],
)
def test_an_update_shares_a_topic_with_what_it_replaces(old: str, new: str, topic: str) -> None:
    assert topic in topics(old) & topics(new)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # A data pack is not the broadband tier, a gift is not the refund, a shipment is
        # not the pickup of a return.
        ("流量包也跟着改", "升级到千兆"),
        ("退的99块收到了", "说好补偿送我一个音箱"),
        ("still not shipped", "when will you collect it"),
        # The boss of the flat is not a job.
        ("my cat is the boss of this apartment", "started a new job today"),
        # A work email is a way to reach the user, not the job.
        ("new work email for meeting invites", "my new manager is Ines"),
        # The family at home is no home.
        ("我家里人都不吃辣", "我们搬家了"),
        # "live ops" is a team, "周四晚上" an evening (not nights of a stay).
        ("my team does live ops", "we live in Leith"),
        ("瑜伽我去周四晚上那班了", "酒店订了三晚"),
    ],
)
def test_neighbouring_families_stay_apart(a: str, b: str) -> None:
    assert topics(a) and topics(b) and not topics(a) & topics(b)


# --- what counts as an update ------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "the parcel finally arrived",
        "the money came through this morning",
        "got my deposit back",
        "the leak is fixed",
        "退款到账了",
        "空调修好了",
        "问题已经解决了",
        "别再打电话了",
        "stop emailing me about it",
        "I'm eating normally again",
        "升吧",
        # A value put right by a better one.
        "下午三点那个，其实五点以后比较方便",
        "游泳我去周六早上那班了",
        "the 9am slot, actually 11 works better",
    ],
)
def test_resolutions_and_cessations_are_updates(text: str) -> None:
    assert updates(text)


@pytest.mark.parametrize(
    "text",
    [
        "提前三天提醒我",
        "I like the blue one",
        "我想升千兆",
        "remind me two days before",
        "ok got it",
        "我到了",
        "其实我挺喜欢这家店的",
        "actually it works fine",
    ],
)
def test_not_every_sentence_with_a_time_word_is_an_update(text: str) -> None:
    assert not updates(text)


def test_a_change_of_date_is_told_from_other_changes() -> None:
    assert moves_a_date("User said: can we do the 9th instead?")
    assert moves_a_date("用户说：改到周五吧")
    assert not moves_a_date("User said: the refund arrived on the 9th")  # a topic of its own
    assert moves_a_value("User said: make it 7 people")
    assert not moves_a_value("用户说：这次别再出岔子")


# --- which pieces of an older statement an update retires -------------------------------


def test_only_the_pieces_on_the_changed_topic_are_retired() -> None:
    old = "User said: we're on the Team plan; 8 seats; the workspace is called nightowl"
    new = "User said: the workspace got renamed to dawnfox"
    assert retired_part(new, old, split=True) == "User said: we're on the Team plan; 8 seats"


def test_a_chinese_turn_keeps_what_the_update_does_not_touch() -> None:
    old = "用户说：我们家在天通苑；周末常去奥森跑步"
    new = "用户说：我们搬家了，现在住亦庄"
    assert retired_part(new, old, split=True) == "用户说：周末常去奥森跑步"


def test_a_piece_that_leans_on_the_one_before_goes_with_it() -> None:
    old = "User said: I take my levothyroxine at 7; so if I ask about breakfast remind me"
    new = "User said: my doctor switched my thyroid tablets"
    assert retired_part(new, old, split=True) == ""
    _, pieces = split_pieces(old)
    assert len(pieces) == 1


def test_each_piece_of_an_update_retires_what_it_changes() -> None:
    # A time move in one piece narrows only that piece's reach, not the other changes'.
    old = "用户说：我在数据组做报表；组长是老周；每周二上午九点开周会"
    new = "用户说：调岗了；组长换成小林，周会也改到周四下午三点"
    assert retired_part(new, old, split=True) == ""
    old_en = "User said: I'm on the billing team; my manager is Dana; our 1:1 is Mondays at 9"
    new_en = "User said: I switched teams; my new manager is Omar, and the 1:1 is moved to Thursdays at 4"
    assert retired_part(new_en, old_en, split=True) == ""
    # The time alone moved: who the manager is stays.
    assert retired_part("User said: our 1:1 moved to Thursdays at 4", old_en, split=True) == (
        "User said: I'm on the billing team; my manager is Dana"
    )


def test_a_change_named_right_after_its_marker_retires_that_topic() -> None:
    old = "用户说：我在一家银行做风控；组长是老周"
    new = "用户说：我现在在 growth 那边；老板是 Ruth；下周开始每周四开周会"
    assert retired_part(new, old, split=True) == ""
    # Not a marker and a change of its own: "回来了；会员我想取消" leaves the rest alone.
    kept = "用户说：上次的午餐送错了；来的是炒饭"
    assert retired_part("用户说：回来了；会员我想取消掉；我很少点了", kept, split=True) is None


def test_an_arrival_ends_the_wait_not_a_standing_rule() -> None:
    old = "User said: always leave parcels with the concierge; order LX-5521 hasn't shipped yet"
    assert retired_part("User said: order LX-5521 arrived today", old, split=True) == (
        "User said: always leave parcels with the concierge"
    )
    rule = "用户说：以后发货别用韵达；上次丢过件"
    assert retired_part("用户说：咖啡机到了；就是盒子压扁了", rule, split=True) in (None, rule)
    noted = "客服承诺：已为您备注：不使用韵达，优先顺丰"
    assert retired_part("用户说：咖啡机到了；就是盒子压扁了", noted, split=False) is None


def test_a_resolution_retires_the_pending_request_it_settles() -> None:
    old = "User said: still waiting on the 40 pound refund; it was promised last week"
    assert retired_part("User said: the 40 came through btw", old, split=True) == ""


def test_unrelated_statements_are_not_touched() -> None:
    old = "User said: I volunteer at the food bank on Saturdays"
    assert retired_part("User said: I switched to the unlimited plan", old, split=True) is None


def test_dates_never_make_two_statements_the_same_subject() -> None:
    old = "用户说：10月1号开始用新套餐"
    assert retired_part("用户说：出差改成12月10号", old, split=True) is None


def test_someone_elses_safety_fact_survives_the_users_change() -> None:
    old = "User said: my nephew is staying over; he's allergic to sesame"
    assert retired_part("User said: I've gone vegan now", old, split=True) is None
    old = "User said: my mum is coeliac, no gluten for her"
    assert retired_part("User said: I switched diets, low carb now", old, split=True) is None


def test_who_travels_survives_a_moved_flight() -> None:
    old = "User said: I'm flying with my son Tom; out on the 3rd"
    kept = retired_part("User said: the flight moved, out on the 5th instead", old, split=True)
    assert kept is not None and "Tom" in kept and "3rd" not in kept


def test_the_return_leg_leaves_the_outbound_one() -> None:
    outbound = "User needs to fly out on the 24th, same booking"
    assert retired_part("User said: coming back on the 14th now", outbound, split=False) is None
    assert retired_part("User said: flying out on the 25th instead", outbound, split=False) == ""


def test_a_phone_number_and_a_phone_case_are_no_device() -> None:
    for text in (
        "我手机号换了",
        "帮我找个手机壳",
        "call my phone after 6",
        "my phone number is new",
    ):
        assert "device" not in topics(text), text


def test_a_new_handset_ends_the_old_one_and_not_other_purchases() -> None:
    from langgraph_memory.nodes.rules._retire import retires_slot

    update = "用户说：空调的钱退回来了；我现在用的是 vivo X100；帮我看看有什么壳"
    assert retires_slot(update, "用户购买了iPhone 15 Pro", "product.iphone_15_pro")
    assert not retires_slot(update, "用户购买了空气炸锅", "product.空气炸锅")
    en = "User said: I'm on a Pixel 9 now"
    assert retires_slot(en, "User bought a Samsung Galaxy S22", "product.galaxy_s22")
    assert not retires_slot(en, "User bought a standing desk", "product.desk")


def test_a_payment_at_work_is_not_money_owed() -> None:
    old = "User said: I work on the payment service at Adyen; my manager is Kevin"
    assert (
        retired_part("User said: I've changed jobs, I'm at Monzo now", old, split=True) is not None
    )
    owed = "User said: still waiting on the refund for the double payment"
    assert retired_part("User said: I've changed jobs, I'm at Monzo now", owed, split=True) is None


def test_an_owed_refund_is_ended_only_by_its_resolution() -> None:
    owed = "客服承诺：已登记投诉，退还当晚房费并赠送一次升级"
    assert retired_part("客服承诺：已修改入住日期，改成三晚", owed, split=False) is None
    assert retired_part("用户说：房费退回来了", owed, split=False) == ""


def test_a_date_only_change_moves_the_dates_and_keeps_the_rest() -> None:
    old = "User said: a table at Nonna's; Friday the 6th; by the window"
    assert retired_dates(old) == "User said: a table at Nonna's; by the window"
    assert retired_dates("User said: I like jazz") is None


# --- a value corrected inside one message --------------------------------------------------


@pytest.mark.parametrize(
    ("pieces", "folded"),
    [
        (["piano moved to 4", "no wait, 4:30"], ["piano moved to 4:30"]),
        (["the dentist is on Tuesday, sorry, Wednesday"], ["the dentist is on Wednesday"]),
        (["聚餐改到周五", "不对", "周六"], ["聚餐改到周六"]),
        (["预算是8000，不对，是9000"], ["预算是9000"]),
        # Not a bare value: both stay.
        (["we're 4", "actually it's complicated"], ["we're 4", "actually it's complicated"]),
        (["no, 5"], ["no, 5"]),
    ],
)
def test_self_corrections_keep_only_the_last_value(pieces: list[str], folded: list[str]) -> None:
    assert fold_self_corrections(pieces) == folded


# --- forget requests that point back at what was said ---------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "之前说我表姐离婚那个事你删掉吧",
        "上次讲的 Marta 那件事你就别记了",
        "我跟我爸吵架那事儿不用记了",
        "forget the marta stuff",
        "could you forget that whole visa business",
        "please forget about Marta",
        "delete what I said about my landlord",
    ],
)
def test_back_references_are_forget_requests(text: str) -> None:
    found = match_clause(text)
    assert found is not None and found.forget, text


@pytest.mark.parametrize(
    ("text", "topic_word"),
    [
        (
            "我阿媽嗰個高血壓嘅嘢你幫我刪咗佢啦，佢話唔想有佢嘅病歷",
            "高血壓",
        ),  # Cantonese, "delete it"
        ("之前跟你們講我媽洗腎的那件事，我不想被記著", "洗腎"),  # not wanting it on record
        ("Then that thing about Ngozi being pregnant, abeg remove it from my profile", "Ngozi"),
        ("the bit about my knee, please take it off my file", "knee"),
        ("my brother's court case, he doesn't want it recorded", "court case"),
    ],
)
def test_a_request_that_only_says_it_forgets_what_the_sentence_named(
    text: str, topic_word: str
) -> None:
    found = EXTRACTOR.extract([HumanMessage(text, id="h1")])
    forgets = [c for c in found if c.forget]
    assert forgets and topic_word in forgets[0].text, found
    assert not [c for c in found if not c.forget and topic_word in c.text], found  # not kept


@pytest.mark.parametrize(
    "text",
    [
        "I took it off my list",
        "I don't want it delivered before noon",
        "我不想被打扰，晚上别打电话",
    ],
)
def test_taking_it_off_a_list_or_not_wanting_a_delivery_forgets_nothing(text: str) -> None:
    assert not [c for c in EXTRACTOR.extract([HumanMessage(text, id="h1")]) if c.forget]


@pytest.mark.parametrize(
    "text", ["我忘了带钥匙", "please delete the file", "forget it", "don't forget the milk"]
)
def test_look_alikes_are_not_forget_requests(text: str) -> None:
    found = match_clause(text)
    assert found is None or not found.forget


@pytest.mark.parametrize(
    ("topic", "memory", "reached"),
    [
        ("the marta stuff", "User said: my flatmate marta owes me rent", True),
        ("the marta stuff", "User said: we had a smart meter fitted", False),  # not "smarta"
        # Several names: two must be there.
        ("Tom 面 Berlin job 那个事", "用户说：Tom 在面 Berlin 的 job", True),
        ("Tom 面 Berlin job 那个事", "用户说：Tom 是我老公", False),
        # Kin words and the head noun of a back-reference.
        ("用户跟用户爸那事儿", "用户说：跟我爸为了买房吵了一架", True),
        ("用户跟用户爸那事儿", "用户说：我爸妈下周来", False),
        ("猫那个事别记了，猫送人了", "用户说：我家的猫怕生人", True),
        ("房子那事", "用户说：我儿子上小学了", False),
    ],
)
def test_forget_reaches_the_memories_its_topic_names(
    topic: str, memory: str, reached: bool
) -> None:
    assert forget_reaches(topic, memory) is reached


@pytest.mark.parametrize(
    ("text", "topic_word"),
    [
        ("I'd rather you didn't hold on to my blood test results", "blood test"),
        ("Drop the bit about Sam from your notes", "Sam"),
        ("Take my sister's address off your records", "sister"),
        ("Let's keep Kayla's pottery thing off the record", "pottery"),
        ("Ignore what I said about the pregnancy", "pregnancy"),
        ("That info about my brother's arrest, please get rid of it", "arrest"),
        ("Strike that detail about my mother-in-law's hip from your notes", "hip"),
        ("Don't hang on to my passport number", "passport"),
        ("那条关于我姐离婚的，不要保存", "离婚"),
        ("我之前跟你讲的那个地址作废吧", "地址"),
        ("麻烦把我女朋友做陶艺那条撤掉", "陶艺"),
        ("我老公工作那个别留档", "工作"),
        ("我阿媽血壓高嗰樣唔好記住", "血壓"),
        ("唔好save我張卡", "卡"),
        ("我爸听力的事情你那边清一下", "听力"),
    ],
)
def test_forget_verbs_beyond_forget_and_delete(text: str, topic_word: str) -> None:
    requests = [c for c in EXTRACTOR.extract([HumanMessage(text, id="m1")]) if c.forget]
    assert requests and topic_word in requests[0].text, requests
    assert not requests[0].text.endswith(("notes", "住")), requests


@pytest.mark.parametrize(
    "text",
    [
        "can you drop me off at the station",
        "take the kids off the bus at 3",
        "get rid of the old sofa for me",
        "帮我把购物车清一下",
        "把我的订单撤掉",
    ],
)
def test_errands_with_forget_like_verbs_are_no_forget_request(text: str) -> None:
    assert not any(c.forget for c in EXTRACTOR.extract([HumanMessage(text, id="m1")]))


def test_a_call_at_a_time_is_no_name() -> None:
    for text in ("I'd rather you didn't call me before 9", "you can call me back tomorrow"):
        assert not any(
            c.key == "preferred_name" for c in EXTRACTOR.extract([HumanMessage(text, id="m")])
        )


# --- the op that keeps the still-true pieces survives the queue ------------------------------


def test_kept_pieces_round_trip_through_the_plan_record() -> None:
    op = MemoryOp(
        "supersede",
        CandidateMemory("User said: the workspace got renamed"),
        ("old-1",),
        "an update",
        "new-1",
        kept=(("old-1", "User said: we're on the Team plan"),),
    )
    assert MemoryOp.from_dict(op.to_dict()) == op
    plain = MemoryOp("add", CandidateMemory("x"), (), "", "r")
    assert "kept" not in plain.to_dict() and MemoryOp.from_dict(plain.to_dict()) == plain


@pytest.mark.parametrize(
    "text",
    [
        "那个 blood test 的事你 forget 掉 ok，不想留 record",
        "上次说我弟欠钱那件事，你们那别记了",
        "之前給你的地址那個，當作沒看到好嗎，從你們那邊刪掉",
    ],
)
def test_code_switched_traditional_and_polite_forget_requests(text: str) -> None:
    """A forget request in a code-switched, traditional-script or polite-question form is
    a forget request: nothing of the turn is stored as the user's fact."""
    found = RuleBasedExtractor().extract([HumanMessage(text, id="m")])
    assert found and all(c.forget for c in found), [(c.forget, c.text) for c in found]


@pytest.mark.parametrize(
    "text",
    [
        "再这样我就去投诉了，开个玩笑，你们快点就行",
        "When I retire I'm buying a yacht, ha. Anyway",
        "如果 we move to Perth, 要办什么手续",
    ],
)
def test_jokes_and_code_switched_conditions_stay_out(text: str) -> None:
    found = RuleBasedExtractor().extract([HumanMessage(text, id="m")])
    assert not [c.text for c in found if "yacht" in c.text or "投诉" in c.text or "Perth" in c.text]


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("我担心我妈是不是得了青光眼", "青光眼"),
        ("我爸最近老咳嗽，不会是肺炎吧", "肺炎"),
        ("我怕我对磺胺过敏", "磺胺"),
        ("我以为我对阿司匹林过敏，后来查了不是", "阿司匹林"),
        ("I'm worried my mum might have glaucoma", "glaucoma"),
        ("the GP wants to rule out gout", "gout"),
        ("I thought I was allergic to ibuprofen but the test came back clear", "ibuprofen"),
        ("people keep telling me I look like a nurse", "nurse"),
        ("我总被当成大学生", "大学生"),
    ],
)
def test_a_worry_a_suspicion_or_a_belief_that_was_wrong_is_no_fact(text: str, word: str) -> None:
    found = RuleBasedExtractor().extract([HumanMessage(text, id="m")])
    assert not any(word in c.text for c in found), [c.text for c in found]


@pytest.mark.parametrize(
    ("text", "word"),
    [("我对磺胺过敏", "磺胺"), ("my mum has glaucoma", "glaucoma"), ("我爸确诊了痛风", "痛风")],
)
def test_a_stated_health_fact_is_still_kept(text: str, word: str) -> None:
    found = RuleBasedExtractor().extract([HumanMessage(text, id="m")])
    assert any(word in c.text for c in found), [c.text for c in found]


@pytest.mark.parametrize(
    "text",
    [
        "My sister thinks I should learn Spanish",
        "A guy at the gym told me creatine is magic",
        "I dreamt I was living in Tokyo",
        "我妈总说我应该早点结婚",
        "听说那家店要倒闭了",
        "隔壁老王家的狗叫旺财",
        "如果能重来我想学医",
        "我男朋友说漫游很贵，他说他去年去大阪买网卡才三百多块",
        # Dreams, jokes told as such, laughing at it, someone's own plan in their words.
        "my dream would be a little olive farm in Crete",
        "skydiving in Namibia is on my bucket list",
        "we joked about moving to Svalbard if rents keep rising",
        "at this rate I'll be living at the station",
        "梦想是退休后去新疆自驾",
        "再这样下去我就去西藏出家",
        "我女儿说长大要当赛车手，笑死",
        "我老公话想养只鳄鱼，癫咗",
        "佢话佢下年去加拿大读书",
    ],
)
def test_advice_hearsay_dreams_and_others_stories_are_not_the_users_facts(text: str) -> None:
    found = RuleBasedExtractor().extract([HumanMessage(text, id="m")])
    words = ("Spanish", "creatine", "Tokyo", "结婚", "倒闭", "旺财", "学医", "大阪", "Crete")
    words += ("Namibia", "Svalbard", "station", "新疆", "西藏", "赛车", "鳄鱼", "加拿大")
    assert not any(w in c.text for c in found for w in words), [c.text for c in found]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("my GP says I need to cut salt", "salt"),
        ("the app says my order shipped", "shipped"),
        ("I heard back from the bank, the loan is approved", "loan"),
        ("apparently my flight got cancelled", "cancelled"),
        ("我老公说他下周出差", "出差"),
    ],
)
def test_what_a_doctor_an_app_or_the_household_says_stays(text: str, needle: str) -> None:
    found = RuleBasedExtractor().extract([HumanMessage(text, id="m")])
    assert any(needle in c.text for c in found), [c.text for c in found]


def test_cantonese_now_and_moved_are_updates_and_fasting_is_diet() -> None:
    assert updates("公司搬咗去荃湾，我而家喺嗰边返工")
    assert updates("我而家食素")
    assert "diet" in topics("doing intermittent fasting, eating window 11 to 7")
    assert "diet" in topics("最近在做轻断食")


def test_a_forget_with_zhe_is_a_forget_request() -> None:
    found = RuleBasedExtractor().extract(
        [HumanMessage("之前说的我胃不好那个事，你们别记着了", id="m")]
    )
    assert found and all(c.forget for c in found)


# --- a change of when retires the old time, not what it was the time of ---------------------


@pytest.mark.parametrize(
    ("update", "old", "left"),
    [
        (
            "用户说：朵朵幼儿园改时间了；现在八点半之前到就行",
            "用户说：闺女朵朵下周一开始上幼儿园中班了；每天早上八点前得送到",
            "用户说：闺女朵朵下周一开始上幼儿园中班了",
        ),
        (
            "User said: the dentist got rescheduled to Friday at 3pm",
            "User said: dentist on Tuesday at 10am; bring the x-rays",
            "User said: bring the x-rays",
        ),
        # Not a time move: a home move still retires the old home.
        (
            "User said: we moved to Bath",
            "User said: we're in Clifton; near the bridge",
            "User said: near the bridge",
        ),
    ],
)
def test_a_time_move_retires_the_pieces_with_a_time_of_that_kind(
    update: str, old: str, left: str
) -> None:
    assert retired_part(update, old, split=True) == left


@pytest.mark.parametrize(
    ("update", "old", "left"),
    [
        # The order stands once its goods arrive; only the wait for them ends.
        (
            "User said: Six of the Earl Grey tins arrived dented",
            "Assistant committed: order WS-44817, 24 Assam, 12 Earl Grey",
            None,
        ),
        ("User said: the 75 did arrive", "User said: still waiting on the 75", ""),
        (
            "User said: the 75 did arrive",
            "Assistant committed: The change fee of 75 euros is waived",
            "",
        ),
        ("用户说：洗碗机到了", "用户说：洗碗机到现在还没发货", ""),
    ],
)
def test_an_arrival_ends_the_wait_and_what_was_owed_not_the_order(
    update: str, old: str, left: str | None
) -> None:
    assert retired_part(update, old, split=True) == left


# --- a time-bounded statement gets its end -------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ends_by"),
    [
        ("I'm in Lisbon until the 9th, so hold my deliveries", "2026-03-10"),
        ("Working from my parents' place this week", "2026-03-09"),
        ("I'm on leave till next Monday", "2026-03-10"),
        ("Until the end of the month, ship everything to my office", "2026-04-01"),
        ("We're staying at the Hilton from the 5th to the 8th", "2026-03-09"),
        ("For the next two weeks I'm on night shifts", "2026-03-17"),
        ("My temporary number while abroad is 0412 555 111, valid until April", "2026-05-01"),
        ("This weekend my sister is staying with us", "2026-03-09"),
        ("I have a cold, so keep meal ideas light for a few days", "2026-03-06"),
        ("这周我在上海出差", "2026-03-09"),
        ("下个月之前快递都寄到我公司", "2026-04-01"),
        ("我这阵子住宿舍，到年底", "2027-01-01"),
        ("这两天嗓子疼，推荐清淡点的", "2026-03-05"),
        ("月底前我都在休产假", "2026-04-01"),
        ("我下周一到周三在深圳开会", "2026-03-12"),
    ],
)
def test_a_time_bounded_statement_ends_by_its_stated_or_vague_end(text: str, ends_by: str) -> None:
    """Said on Monday 2 March 2026: every candidate of the turn expires, no later than ``ends_by``."""
    from datetime import UTC, date, datetime

    from langgraph_memory.clock import ManualClock

    clock = ManualClock(datetime(2026, 3, 2, 9, 0, tzinfo=UTC))
    found = RuleBasedExtractor(clock=clock).extract([HumanMessage(text, id="m")])
    assert found, text
    for c in found:
        assert c.expires_at is not None, (c.text, text)
        assert date(2026, 3, 3) <= c.expires_at.date() <= date.fromisoformat(ends_by), c.expires_at


# --- a change named in plain words, with no topic family, name or code in common --------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "User said: I keep all my notes in Notion",
            "User said: I've switched to Obsidian for my notes",
        ),
        (
            "User said: I drink oat milk in my coffee",
            "User said: I've switched to soy milk these days",
        ),
        (
            "User said: please send the parcels to my office",
            "User said: from now on, parcels go to the front desk instead",
        ),
    ],
)
def test_a_replacement_naming_the_same_thing_retires_it(old: str, new: str) -> None:
    assert retired_part(new, old, split=True) == ""


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # "drop" is a verb in the old piece, "the drops" a noun in the update.
        (
            "User said: honestly the gig is overkill; drop me to 500, not all the way back to 300",
            "User said: and cancel the tech on the 20th, the drops stopped after you swapped the modem",
        ),
        # "shop" sits in a clause that changes nothing ("chaos in the shop now").
        (
            "User said: we're opening a second shop in York in January so volumes will go up",
            "User said: Thursdays are chaos in the shop now, can deliveries come Tuesday mornings instead?",
        ),
    ],
)
def test_a_shared_word_outside_the_replacing_clause_retires_nothing(old: str, new: str) -> None:
    assert retired_part(new, old, split=True) is None


def test_a_drug_replaced_for_the_same_person_ends_the_old_one() -> None:
    from langgraph_memory.nodes.rules._retire import retires_slot

    old, key = "User's mum is on warfarin", "health.mother.on_warfarin"
    assert retires_slot("User said: The GP switched mum to apixaban last week", old, key)
    assert not retires_slot("User said: The GP switched dad to apixaban last week", old, key)
    assert not retires_slot("User said: I switched to the annual plan", old, key)


def test_a_detail_goes_with_the_value_it_went_on_about() -> None:
    from langgraph_memory.nodes.rules._retire import continued_part

    update, value = "User said: The GP switched mum to apixaban", "User's mum is on warfarin"
    assert continued_part(update, value, "User said: 5mg every evening") == ""
    assert continued_part(update, value, "User said: 5mg every evening; I work nights") == (
        "User said: I work nights"
    )
    # Not a piece on another topic, nor one with a subject of its own.
    assert continued_part(update, value, "User said: 换39码吧") is None
    assert continued_part(update, value, "User said: she is allergic to penicillin") is None


def test_a_generic_slot_said_anew_retires_what_said_it_before() -> None:
    from langgraph_memory.nodes.rules._retire import restated_part

    value = "User's office is on Fleet Street"
    old = "User said: we moved in last year; our office is near Baker Street; parking is free"
    assert (
        restated_part(value, old, split=True) == "User said: we moved in last year; parking is free"
    )
    assert restated_part(
        "用户的车是特斯拉 Model 3", "用户说：我的车是比亚迪的；平时上班开", split=True
    ) == ("用户说：平时上班开")
    # The same value again, someone else's slot, or another slot: nothing goes.
    assert (
        restated_part(value, "User said: the office is on Fleet Street, 3rd floor", split=True)
        is None
    )
    assert restated_part(value, "User said: my sister's office is in Leeds", split=True) is None
    assert restated_part(value, "User said: our flat is near Baker Street", split=True) is None


@pytest.mark.parametrize(
    ("update", "instruction"),
    [
        (
            "User said: You can call me any time now; I'm working from home",
            "User's standing instruction: only call me after 6pm",
        ),
        (
            "User said: Weekends are fine now",
            "User's standing instruction: never schedule anything on weekends for me",
        ),
    ],
)
def test_a_change_naming_an_instructions_action_in_plain_words_retires_it(
    update: str, instruction: str
) -> None:
    from langgraph_memory.nodes.rules._retire import retires_instruction

    assert retires_instruction(update, instruction)


@pytest.mark.parametrize(
    ("update", "instruction"),
    [
        # A change of something else, or no change at all.
        (
            "User said: I moved to the new office now",
            "User's standing instruction: only call me after 6pm",
        ),
        (
            "User said: we now have a dog",
            "User's standing instruction: never schedule anything on weekends for me",
        ),
        ("User said: call me on my mobile", "User's standing instruction: only call me after 6pm"),
        # Saying no to the instruction's action now is not a change of the instruction.
        (
            "User said: no, don't cancel the order now; keep it",
            "User's standing instruction: if it arrives late just cancel it and refund me",
        ),
    ],
)
def test_an_instruction_stays_beside_other_changes(update: str, instruction: str) -> None:
    from langgraph_memory.nodes.rules._retire import retires_instruction

    assert not retires_instruction(update, instruction)


def test_when_the_user_is_free_is_kept_as_evidence() -> None:
    for text in ("Weekends are fine now.", "Mornings are no good any more"):
        assert [c.text for c in EXTRACTOR.extract([HumanMessage(text, id="m1")])], text


@pytest.mark.parametrize(
    ("update", "old", "moved"),
    [
        ("用户说：家长会是11月12日下午两点", "用户说：朵朵学校11月11日下午三点开家长会", True),
        ("User said: the Rome flight is Dec 20", "User said: my flight to Rome is on Dec 18", True),
        # Another of the same kind, a question, or the same date again: nothing moves.
        ("User said: I have another dentist check-up on Dec 20", "User said: dentist check-up Dec 10", False),
        ("User said: is the Rome flight Dec 20?", "User said: my flight to Rome is on Dec 18", False),
        ("User said: the Rome flight is Dec 18, window seat", "User said: my flight to Rome is on Dec 18", False),
        # Another thing on another date; another person's date.
        ("User said: the party is on Dec 20", "User said: my flight to Rome is on Dec 18", False),
        ("User's birthday is 5 May", "User's mum's birthday is 3 May", False),
        ("User said: Ben's birthday is 5 May", "User said: Ana's birthday is 3 May", False),
    ],
)
def test_the_same_thing_given_another_calendar_date_moves_it(update: str, old: str, moved: bool) -> None:
    from langgraph_memory.nodes.rules._retire import moved_part

    assert (moved_part(update, old, split=True) is not None) is moved


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A billing term changed; the appositive after the old term goes with it.
        (
            "User said: I pay for ShopPlus monthly; the 14.99 one",
            "User said: I went annual on ShopPlus last week; the 139 a year one",
        ),
        ("User said: 我办的是月卡；39那个", "User said: 月卡改成年卡了"),
        # Where the user is now, said as "the X place".
        (
            "User said: address on the account is right; the Summit St apartment in Columbus",
            "User said: we're at the Grandview place now; 1450 Oak Ave; ship there",
        ),
    ],
)
def test_a_new_billing_term_or_place_retires_the_old_one_whole(old: str, new: str) -> None:
    assert retired_part(new, old, split=True) == ""


@pytest.mark.parametrize(
    ("update", "old"),
    [
        ("用户说：我看错群消息了；是周四，12号，时间还是下午三点", "用户说：朵朵学校下周三下午三点开家长会"),
        ("User said: sorry, I misread the email; it's Thursday the 10th, same time", "User said: the school play is next Wednesday at 3"),
    ],
)
def test_the_user_putting_a_day_right_moves_the_plan(update: str, old: str) -> None:
    from langgraph_memory.nodes.rules._retire import moves_a_date, retired_dates

    assert moves_a_date(update)
    assert retired_dates(old) == ""


@pytest.mark.parametrize("text", ["你们搞错了，我订的是周四", "最近不对劲，周四老是加班"])
def test_the_business_mistake_or_an_odd_feeling_is_no_correction(text: str) -> None:
    from langgraph_memory.nodes.rules._retire import moves_a_date

    assert not moves_a_date(f"用户说：{text}")


@pytest.mark.parametrize("update", ["用户说：22 號我要返工；29 號朝早得唔得？", "用户说：周四下午可以吗？"])
def test_another_time_offered_as_a_question_moves_the_plan(update: str) -> None:
    from langgraph_memory.nodes.rules._evidence import updates
    from langgraph_memory.nodes.rules._retire import moves_a_date

    assert updates(update) and moves_a_date(update)


def test_another_time_offered_as_a_question_is_kept() -> None:
    assert [c.text for c in EXTRACTOR.extract([HumanMessage("29 號朝早得唔得？", id="m1")])]


def test_a_question_about_a_time_that_offers_none_is_no_move() -> None:
    from langgraph_memory.nodes.rules._retire import moves_a_date

    assert not moves_a_date("用户说：几点开门？")


@pytest.mark.parametrize(
    ("update", "old", "key"),
    [
        # Leaving the employer named right after the verb ends the job there.
        ("User said: I left St Mary's; I'm at the Royal Free now", "User works as nurse at St Mary's", "occupation"),
        ("用户说：我从腾讯离职了；现在在字节", "用户在腾讯做产品经理", "occupation"),
        # Eating the avoided food again ends that avoidance only.
        ("用户说：最近开始能吃点辣了", "用户不吃辣", "diet.avoid.辣"),
        ("User said: I can eat dairy again now", "User does not eat dairy", "diet.avoid.dairy"),
    ],
)
def test_a_named_end_retires_the_slot_value(update: str, old: str, key: str) -> None:
    from langgraph_memory.nodes.rules._retire import retires_slot

    assert retires_slot(update, old, key)


@pytest.mark.parametrize(
    ("update", "old", "key"),
    [
        ("User said: I left the keys at St Mary's reception", "User works as nurse at St Mary's", "occupation"),
        ("User said: my wife left St Mary's", "User works as nurse at St Mary's", "occupation"),
        ("用户说：最近开始能吃点辣了", "用户不吃香菜", "diet.avoid.香菜"),
        ("用户说：最近开始能吃点辣了", "用户吃素", "diet"),
    ],
)
def test_a_named_end_leaves_other_values(update: str, old: str, key: str) -> None:
    from langgraph_memory.nodes.rules._retire import retires_slot

    assert not retires_slot(update, old, key)


def test_a_time_move_naming_the_thing_by_one_word_pair_retires_it() -> None:
    assert retired_part("用户说：周会挪到周四上午十点了", "用户说：每周三下午两点跟王总开周会", split=True) == ""
    # The move word shared ("改到") names no thing.
    assert (
        retired_part(
            "用户说：胃镜改期了；医院刚打电话；改到11月20号下午两点",
            "用户说：羽毛球那个改了；馆子装修；改到每周五晚上七点，去朝阳体育中心打",
            split=True,
        )
        is None
    )
