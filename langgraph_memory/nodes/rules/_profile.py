"""Rules for who the user is: name and address form, health and safety, diet, home.

Each rule takes one segment (fillers stripped, Cantonese normalised) and looks
for its pattern anywhere in it (``re.search``), so "Hi, I'm calling about my
order, my name is Ann Lee and ..." still yields ``name``. Values are cut at
the next clause (``en_value`` / ``zh_value``).

Family members' safety facts are facts about the user's household and are
keyed per person: "my son is allergic to peanuts" is ``allergy.son.peanuts``,
"我女儿对鸡蛋过敏" is ``allergy.daughter.鸡蛋``.
"""

from __future__ import annotations

import re
from typing import Final

from langgraph_memory.nodes.rules._match import Match, en_value, zh_value
from langgraph_memory.nodes.rules._text import (
    TRIM,
    about_someone_else,
    sentence_case,
    slug,
    to_simplified,
    to_third_person,
    word_set,
)
from langgraph_memory.types import MemoryType

NEGATED: Final = re.compile(
    r"\b(?:don'?t|do not|never|stop|not|no longer|isn'?t|aren'?t|wasn'?t|am not|'m not)\b"
    r"|不要|别|不用|不是|没有|并非|不再",
    re.IGNORECASE,
)

# Relatives whose safety facts belong to the user's household.
_EN_RELATIVES: Final = {
    "son": "son", "daughter": "daughter", "kid": "child", "kids": "children", "child": "child",
    "children": "children", "baby": "child", "toddler": "child", "wife": "wife",
    "husband": "husband", "partner": "partner", "mom": "mother", "mum": "mother",
    "mother": "mother", "dad": "father", "father": "father", "brother": "brother",
    "sister": "sister", "grandma": "grandmother", "grandmother": "grandmother",
    "grandpa": "grandfather", "grandfather": "grandfather", "boyfriend": "partner",
    "girlfriend": "partner", "fiance": "partner", "fiancee": "partner",
}  # fmt: skip
_ZH_RELATIVES: Final = {
    "儿子": "son", "女儿": "daughter", "孩子": "child", "小孩": "child", "宝宝": "child",
    "娃": "child", "老婆": "wife", "妻子": "wife", "太太": "wife", "媳妇": "wife",
    "爱人": "partner", "老公": "husband", "丈夫": "husband", "先生": "husband",
    "妈妈": "mother", "母亲": "mother", "我妈": "mother", "爸爸": "father", "父亲": "father",
    "我爸": "father", "哥哥": "brother", "弟弟": "brother", "姐姐": "sister", "妹妹": "sister",
    "奶奶": "grandmother", "外婆": "grandmother", "姥姥": "grandmother", "爷爷": "grandfather",
    "外公": "grandfather", "姥爷": "grandfather", "男朋友": "partner", "女朋友": "partner",
}  # fmt: skip
# The household labels keys carry ("allergy.son.peanuts", "health.mother.高血压").
HOUSEHOLD_KEY_PARTS: Final = frozenset(_EN_RELATIVES.values())
_EN_REL: Final = "|".join(sorted(_EN_RELATIVES, key=len, reverse=True))
_ZH_REL: Final = "|".join(sorted(_ZH_RELATIVES, key=len, reverse=True))
_ZH_REL_LABEL: Final = {
    "son": "儿子", "daughter": "女儿", "child": "孩子", "children": "孩子们", "wife": "妻子",
    "husband": "丈夫", "partner": "伴侣", "mother": "母亲", "father": "父亲",
    "brother": "兄弟", "sister": "姐妹", "grandmother": "奶奶", "grandfather": "爷爷",
}  # fmt: skip

_NAME_STOP: Final = word_set(
    "and but so i i'm im my from here calling speaking please thanks thank by the a "
    "an with at in on for to who which that is was will would just also really not"
)
_NOT_NAMES: Final = word_set(
    "sorry fine good ok okay here back home ready done sure glad happy tired busy "
    "sick allergic vegan vegetarian looking calling writing trying going planning "
    "interested new just not still also afraid worried pregnant diabetic chinese "
    "english american british french german japanese korean a an the in at on from so "
    "very really"
)


def _en_name(text: str) -> str | None:
    """ "Ann Lee and I need ..." -> "Ann Lee" (up to three words, none a stop word)."""
    words: list[str] = []
    text = re.split(r"[,;!?，。]|\.(?:\s|$)", text, maxsplit=1)[0]
    for word in re.findall(r"[A-Za-z][\w.'-]*", text)[:4]:
        if word.lower() in _NAME_STOP or len(words) == 3:
            break
        words.append(word.strip(".'"))
    if not words or words[0].lower() in _NOT_NAMES:
        return None
    return " ".join(w[:1].upper() + w[1:] for w in words)


_ZH_NAME: Final = r"([\u4e00-\u9fff·]{2,4}?|[A-Za-z][A-Za-z'-]{1,20})"
_ZH_NAME_END: Final = (
    r"(?=[，,。.！!？?\s]|$|就行|就好|就可以|即可|好了|吧|啊|呀|哈|想|要|今年|来自|住|在|是|的|"
    r"我|请|有|因为|现在|打算|准备|需要|刚|又|也|平时|一般|，)"
)


_WHEN_TO_CALL: Final = re.compile(
    r"(?:back|before|after|at|on|in|around|between|from|tomorrow|tonight|today|later|again|when|if|"
    r"anytime|any time|once|this|next|only|first|asap|\d)\b",
    re.IGNORECASE,
)


def rule_preferred_name(segment: str) -> Match | None:
    m = re.search(
        r"\b(?:you (?:can|may|should) |please |just |pls )?(?:call me|address me as|refer to me as)\s+"
        r"(.+)$|\bi (?:go by|prefer (?:to be called|being called))\s+(.+)$"
        # What others call the user: "everyone calls me Liz", "my friends just call me Mo".
        r"|\b(?:everyone|everybody|people|most people|my friends|friends)\s+(?:just\s+|all\s+)?calls?\s+me\s+(.+)$",
        segment,
        re.IGNORECASE,
    )
    # "never call me sir" / "不要叫我老王" is an instruction, not a name.
    negated = re.search(
        r"\b(?:never|don'?t|didn'?t|do not|stop|not)\b.{0,12}\b(?:call|address|refer)|不要|别|不许|不准",
        segment,
        re.IGNORECASE,
    )
    # "call me before 9", "call me back tomorrow": a phone call, not a name.
    if m and m.group(1) and _WHEN_TO_CALL.match(m.group(1)):
        m = None
    if m and m.group(3) and not m.group(3)[:1].isupper():
        m = None  # "people call me all sorts": a name is written with a capital
    if m and not negated:
        name = _en_name(m.group(1) or m.group(2) or m.group(3))
        if name and name.lower() not in ("anything", "whatever", "that", "it"):
            return Match(f"User wants to be called {name}", key="preferred_name", importance=0.9)
    m = re.search(r"(?:叫我|称呼我|喊我|称我为?)\s*" + _ZH_NAME + _ZH_NAME_END, segment)
    if m and not negated and not m.group(1).startswith(("了", "去", "来", "做", "帮", "一下")):
        return Match(f"用户希望被称为{m.group(1)}", key="preferred_name", importance=0.9)
    return None


def rule_name(segment: str) -> Match | None:
    m = re.search(
        r"\bmy (?:full |first |real )?name(?:'s| is)\s+(.+)$|\bi am called\s+(.+)$",
        segment,
        re.IGNORECASE,
    ) or re.search(
        # "I'm Ann" / "This is Ann Lee speaking" / "Ann here": the name must be capitalised.
        r"^(?:(?i:hi|hello|hey)[,!]?\s*)?(?i:i'?m|i am|this is)\s+([A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)"
        r"(?:\s+(?i:from|here|speaking|calling)\b.*)?$|^([A-Z][a-z]+(?:\s+[A-Z][a-z]+)?) here$",
        segment,
    )
    if m:
        raw = next(g for g in m.groups() if g)
        name = _en_name(raw)
        if name:
            return Match(f"User's name is {name}", key="name", importance=0.8)
    m = re.search(
        r"(?:我叫|我的名字是|我的名字叫|本人叫|本人是|我名叫)\s*" + _ZH_NAME + _ZH_NAME_END, segment
    ) or re.search(
        # "我是 Leo" / "我系 Mei": a capitalised Latin name only ("我是老师" is a job, not a name).
        r"(?:^|[，,\s])我[是系]\s*([A-Z][a-z]{1,20}(?: [A-Z][a-z]{1,20})?)(?=[，,。.！!？?\s]|$)",
        segment,
    )
    if m and not m.group(1).startswith(("了", "过", "外卖", "车")):
        return Match(f"用户的名字是{m.group(1)}", key="name", importance=0.8)
    m = re.search(r"我姓([\u4e00-\u9fff]{1,2}?)(?=[，,。！!]|$|叫|名|，)", segment)
    if m:
        return Match(f"用户姓{m.group(1)}", key="name.surname", importance=0.75)
    return None


# Adverbs between the person and "allergic": "I've always been", "I'm actually", "she's also".
_EN_ALLERGY_ADVERBS: Final = (
    r"(?:(?:also|very|severely|deathly|mildly|really|actually|always|still|seriously|badly|quite|"
    r"extremely|highly|super|so|pretty|kind of|kinda|definitely|even)\s+){0,3}"
)
# "is", "'s", "has been", "have always been": what joins the person to "allergic".
_EN_IS_ALLERGIC: Final = (
    rf"(?:'s|'re|'m|is|are|am|(?:'ve|'s|has|have)\s+{_EN_ALLERGY_ADVERBS}been)\s+"
    rf"{_EN_ALLERGY_ADVERBS}allergic to\s+(.+)$"
)
_EN_RELATIVE_ALLERGY: Final = (
    # "my daughter is 6 and she's allergic to sesame": the pronoun is the relative.
    re.compile(
        rf"\bmy ({_EN_REL})\b.{{0,40}}?\b(?:she|he|they)\s*{_EN_ALLERGY_ADVERBS}{_EN_IS_ALLERGIC}",
        re.IGNORECASE,
    ),
    re.compile(
        rf"\bmy ({_EN_REL})\s*{_EN_ALLERGY_ADVERBS}{_EN_IS_ALLERGIC}",
        re.IGNORECASE,
    ),
    re.compile(
        rf"\bmy ({_EN_REL})(?:'s)?\s+(?:is|are|has|have|'s)\s+(?:also\s+|very\s+|severely\s+|deathly\s+)?"
        r"(?:allergic to\s+(.+)$|an?\s+(?:severe\s+|bad\s+|mild\s+)?(.+?)\s+allergy\b)"
        rf"|\bmy ({_EN_REL})(?:'s)?\s+(.+?)\s+allergy\b",
        re.IGNORECASE,
    ),
)


def _relative_allergy(segment: str) -> Match | None:
    for pattern in _EN_RELATIVE_ALLERGY:
        m = pattern.search(segment)
        if m is None or re.search(r"\bnot\b|n't\b|no longer", segment[: m.end()], re.I):
            continue
        groups = m.groups()
        relative = _EN_RELATIVES[(groups[0] or groups[3 if len(groups) > 3 else 0]).lower()]
        what = en_value(next((g for g in groups[1:] if g and g.lower() not in _EN_RELATIVES), ""))
        if what:
            return Match(
                f"User's {relative} is allergic to {what}",
                key=f"allergy.{relative}.{slug(what)}",
                importance=0.95,
            )
    return None


# What may stand between 我 and the allergen: a hedge or an adverb, never the allergen.
_ZH_ALLERGY_HEDGE: Final = re.compile(
    r"^(?:其实|其實|是|对|對|有|只|就是|就|也|都|还|還|又|一直|一向|向来|向來|本来|本來|真的|确实|確實|"
    r"从小|從小|天生|特别|特別|好像|貌似|以前|以来|以來|一直以来|一直以來)+"
)


# Not an allergy one has now: a suspicion ("我怀疑我对麸质过敏", "I suspect I'm allergic"), a
# maybe ("他可能对猫过敏"), one outgrown ("我小时候对牛奶过敏，现在好了").
_NOT_A_CURRENT_ALLERGY: Final = re.compile(
    r"怀疑|懷疑|疑似|可能|也许|也許|或许|或許|不确定|不確定|小时候|小時候|以前(?!就|开始|開始)|曾经|曾經|现在好了|現在好了|现在不|現在不"
    r"|\b(?:suspect|might|may be|maybe|possibly|probably|not sure|as a (?:kid|child)|grew out of|outgrew)\b",
    re.IGNORECASE,
)
# "Allergic" said of a thing no body reacts to: "I'm allergic to Mondays", "对加班过敏".
_FIGURATIVE_ALLERGEN: Final = re.compile(
    r"^(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|mornings?|work|meetings?|exercise|people|"
    r"bad \w+|nonsense|drama|commitment|effort|maths?|homework|small talk|queues?)\b"
    r"|上班|加班|开会|開會|早起|你们|你們|服务|服務|数学|數學|作业|作業",
    re.IGNORECASE,
)


# "我對盤尼西林敏感㗎": Cantonese (and much Mandarin) says 敏感 for a drug or food allergy.
# Only of a substance: "我对价格很敏感" is no allergy.
_SENSITIVE_TO_SUBSTANCE: Final = re.compile(
    r"([对對][\u4e00-\u9fffA-Za-z]{0,8}?(?:林|素|芬|星|霉素|药|藥|粉|奶|蛋|虾|蝦|蟹|贝|貝|花生|海鲜|海鮮|芒果|"
    r"麸质|麩質|坚果|堅果|酒精|乳糖|毛|花粉|尘螨|塵蟎|penicillin|aspirin))(?:严重|嚴重|非常|很|有点|有啲|有些)?敏感"
)


def rule_allergy(segment: str) -> Match | None:
    segment = _SENSITIVE_TO_SUBSTANCE.sub(r"\1过敏", segment)
    found = _allergy(segment)
    if found is None or _NOT_A_CURRENT_ALLERGY.search(segment):
        return None
    allergen = re.sub(r"^.*?(?:allergic to |对|對)", "", found.text)
    return None if _FIGURATIVE_ALLERGEN.search(allergen) else found


def _allergy(segment: str) -> Match | None:
    found = _relative_allergy(segment)
    if found is not None:
        return found
    m = re.search(
        r"\bit'?s\s+([\w-]{3,20})\s+(?:that\s+)?i(?:'m| am)?\s+(?:react to|allergic to)\b",
        segment,
        re.IGNORECASE,
    )
    if m:  # "turns out it's amoxicillin I react to"
        return Match(
            f"User is allergic to {m.group(1)}", key=f"allergy.{slug(m.group(1))}", importance=0.95
        )
    m = re.search(
        rf"\bi\s*{_EN_ALLERGY_ADVERBS}{_EN_IS_ALLERGIC}"
        r"|\bi have an?\s+(?:severe\s+|bad\s+|mild\s+|serious\s+)?(.+?)\s+allergy\b"
        r"|\bi(?:'ve| have) got an?\s+(.+?)\s+allergy\b",
        segment,
        re.IGNORECASE,
    )
    if m and not re.search(r"\bnot\b|n't\b|no longer", segment[: m.end()], re.IGNORECASE):
        what = en_value(next(g for g in m.groups() if g))
        if what and what.lower() not in ("anything", "nothing"):
            return Match(
                f"User is allergic to {what}", key=f"allergy.{slug(what)}", importance=0.95
            )
    m = re.search(rf"({_ZH_REL})(?:的)?(?:对)?(.{{1,10}}?)(?:严重|非常|很|有点|有些)?过敏", segment)
    if m and not re.search(r"不|没", m.group(2)):
        relative = _ZH_RELATIVES[m.group(1)]
        what = m.group(2).strip(TRIM + "有")
        # "我儿子小宇对芒果过敏": the name stays with the person, not the allergen.
        name, _, allergen = what.rpartition("对") if "对" in what else ("", "", what)
        if allergen:
            label = _ZH_REL_LABEL.get(relative, m.group(1)) + name
            return Match(
                f"用户的{label}对{allergen}过敏",
                key=f"allergy.{relative}.{slug(allergen)}",
                importance=0.95,
            )
    # "我们家狗狗对鸡肉过敏", "我家猫对鱼过敏": 我 owns the subject; it is not the user.
    m = re.search(
        r"我(?:们)?(?:家|的)(?:的)?([\u4e00-\u9fff]{1,4}?)对(.{1,10}?)(?:严重|非常|很|有点|有些)?过敏",
        segment,
    )
    if m and not re.search(r"不|没", segment[: m.end()]):
        who, what = m.group(1), m.group(2).strip(TRIM + "有")
        if what:
            return Match(
                f"用户家的{who}对{what}过敏",
                key=f"allergy.{slug(who)}.{slug(what)}",
                importance=0.95,
            )
    m = re.search(
        r"我(?!们家|们的|家|的)(?:对|有)?(.{1,10}?)(?:严重|非常|很|有点|有些)?过敏", segment
    ) or re.search(r"^(?:有)?([\u3400-\u9fff]{1,6}?)(?:严重|非常|很)?过敏", segment)
    if m and not re.search(r"不|没", segment[: m.end()]):
        # "我其实是对头孢过敏": the allergen, not the hedge in front of it.
        # Likewise an adverb: "我就是对花生过敏", "我一直对海鲜过敏", "我从小对芒果过敏".
        what = re.sub(_ZH_ALLERGY_HEDGE, "", m.group(1).strip(TRIM + "对有"))
        who, _, allergen = what.partition("对")
        if who in ("他", "她", "它", "他们", "她们", "佢", "佢哋") or about_someone_else(
            to_simplified(who)
        ):
            # "佢对花生敏感": whose allergy only the turn's evidence can say; "我同事对海鲜
            # 过敏": not the household's, so no profile fact (as in English).
            return None
        if allergen and who and "我" not in who and len(who) <= 4:
            # "我表姐对芒果过敏": someone the user names, not the user.
            return Match(
                f"用户的{who}对{allergen}过敏",
                key=f"allergy.{slug(who)}.{slug(allergen)}",
                importance=0.95,
            )
        # "我儿子过敏" names no allergen (and no allergy of the user's).
        if what and what not in ("都", "什么") and what not in _ZH_RELATIVES:
            return Match(f"用户对{what}过敏", key=f"allergy.{slug(what)}", importance=0.95)
    return None


# A retraction of one's own allergy: "I'm not allergic to penicillin after all", "aspirin 其实没问题",
# "我对青霉素不过敏". The fact was never true, so it goes (``retracted_allergies``).
_EN_NOT_ALLERGIC: Final = re.compile(
    r"\b(?:i'?m|i am)\s+(?:not|no longer|actually not)\s+allergic to\s+([\w -]{2,30}?)"
    r"(?=\s*(?:after all|actually|at all|any ?more|[,.;!…]|$))"
    r"|\b([\w-]{3,20}) (?:is|'s) (?:actually |totally |perfectly )?(?:fine|ok|okay|no problem) for me\b"
    # "it's amoxicillin I react to, not penicillin": the one named after "not" is taken back.
    r"|\b(?:react|reacts|allergic) to,? (?:and )?not (?!(?:really|sure|quite|exactly|that|the|so|much)\b)([\w-]{3,20})\b",
    re.IGNORECASE,
)
_ZH_NOT_ALLERGIC: Final = re.compile(
    r"(?:我|我自己)?(?:对|對)([\w\u3400-\u9fff]{1,10}?)(?:其实|其實)?(?:不|没|沒|冇|唔)(?:过敏|過敏)"
    r"|([A-Za-z][\w-]{2,20}|[\u3400-\u9fff]{2,6}?)\s*(?:其实|其實|其实是|倒是|都)?"
    r"(?:没问题|沒問題|冇问题|冇問題|没事|沒事|不过敏|不過敏|唔过敏|可以吃|可以用)"
    # "其实是对头孢过敏，不是青霉素": the one after 不是 is taken back.
    r"|(?:过敏|過敏)[，,\s]*(?:而)?不是(?:对|對)?([A-Za-z][\w-]{2,20}|[\u3400-\u9fff]{2,6}?)(?=[，,。.！!]|$)"
)


def retracted_allergies(turn: str) -> list[str]:
    """The allergies of the user's own that a turn takes back, as the key fragments of the
    rule that stored them ("aspirin" for ``allergy.aspirin``).

    Example:
        >>> retracted_allergies("上次说我对 aspirin 过敏，我说错了，是 ibuprofen。aspirin 其实没问题。")
        ['aspirin']
        >>> retracted_allergies("I'm not allergic to penicillin after all, it's amoxicillin.")
        ['penicillin']
        >>> retracted_allergies("牛奶没问题"), retracted_allergies("I'm not allergic to anything")
        ([], [])
    """
    found: list[str] = []
    if re.search(r"allerg|react to|过敏|過敏", turn, re.IGNORECASE):
        for m in _EN_NOT_ALLERGIC.finditer(turn):
            found.append(en_value(next(g for g in m.groups() if g)))
        for m in _ZH_NOT_ALLERGIC.finditer(turn):
            found.append(next(g for g in m.groups() if g).strip(TRIM + "对對有"))
    nothing = {
        "anything",
        "everything",
        "nothing",
        "it",
        "that",
        "this",
        "them",
        "什么",
        "任何",
        "都",
    }
    return [slug(w) for w in dict.fromkeys(found) if w and slug(w) and w.lower() not in nothing]


_EN_CONDITIONS: Final = (
    r"type [12] diabetes|diabetes|diabetic|asthma|asthmatic|hypertension|high blood pressure|"
    r"low blood pressure|a heart condition|heart condition|heart disease|a weak heart|epilepsy|"
    r"epileptic|celiac(?: disease)?|coeliac(?: disease)?|lactose intolerant|lactose intolerance|"
    r"gluten intolerant|gluten intolerance|pregnant|arthritis|migraines?|a bad back|bad back|"
    r"back problems|bad knees?|a bad knee|a bad hip|anemia|anaemic|anemic|gout|kidney disease|"
    r"kidney stones|depression|an anxiety disorder|adhd|autism|autistic|insomnia|sleep apnea|"
    r"blind|deaf|hard of hearing|in a wheelchair|use a wheelchair|a wheelchair user|mobility issues|"
    r"high cholesterol|ibs|crohn'?s|vertigo|motion sickness|seasick|carsick|a pacemaker|"
    r"on insulin|on blood thinners|taking blood thinners|on warfarin|on metformin|"
    r"on antidepressants|afraid of heights|claustrophobic|a fear of flying|afraid of flying|"
    r"immunocompromised|g6pd deficiency|a nut allergy|"
    # Long-term illnesses a carer talks about: "Dad has Parkinson's", "Mum had a stroke".
    r"parkinson'?s(?: disease)?|alzheimer'?s(?: disease)?|dementia|copd|emphysema|a stroke|had a stroke|"
    r"cancer|leukemia|leukaemia|lymphoma|multiple sclerosis|lupus|hiv|hepatitis [abc]|"
    r"hypothyroidism|hyperthyroidism|an underactive thyroid|an overactive thyroid|osteoporosis|"
    r"glaucoma|cataracts?|heart failure|atrial fibrillation|afib|angina|sciatica|scoliosis|"
    r"fibromyalgia|endometriosis|pcos|eczema|psoriasis|dialysis|on dialysis|chemo(?:therapy)?"
)
_ZH_CONDITIONS: Final = (
    r"糖尿病|哮喘|高血压|低血压|心脏病|心脏不好|癫痫|乳糖不耐受?|麸质不耐受|怀孕|孕妇|关节炎|偏头痛|"
    r"腰不好|腰椎间盘突出|膝盖不好|贫血|痛风|肾结石|肾病|抑郁症|焦虑症|失眠|色盲|坐轮椅|行动不便|残疾|"
    r"高血脂|胆固醇高|晕车|晕船|心脏起搏器|打胰岛素|胰岛素|降压药|恐高|幽闭恐惧症?|胃病|胃不好|低血糖|"
    r"甲亢|甲减|蚕豆病|免疫力低下|怕冷|不能久站|"
    r"帕金森|柏金遜|柏金逊|老年痴呆|阿尔茨海默|阿茲海默|认知障碍|中风|中風|脑梗|腦梗|心梗|冠心病|心衰|房颤|"
    r"癌症|[肺胃肝肠乳腺]癌|白血病|淋巴瘤|慢阻肺|肺气肿|乙肝|肝炎|甲状腺|骨质疏松|青光眼|白内障|"
    r"湿疹|银屑病|牛皮癣|脊柱侧弯|坐骨神经痛|透析|洗肾|化疗"
)


# What follows a condition and is about its treatment ("..., takes half a Madopar", "吃美多芭
# 半片"): a dose changes, the condition stays, so the fact ends with the condition.
_AFTER_CONDITION: Final = re.compile(
    r"^\s*(?:,|;|\band\b|\bso\b|\bbut\b)|^\s*[，,；;]?\s*(?:每天|每次|一天|要|在|吃|服|用|打|靠)"
)


# Said of oneself, these are a joke about a bad memory ("I must have dementia lol").
_FORGETFUL_IDIOM: Final = re.compile(
    r"(?i:dementia|alzheimer'?s(?: disease)?)|老年痴呆|阿尔茨海默|阿茲海默|认知障碍"
)


def _up_to_condition(segment: str, end: int) -> str:
    return segment[:end] if _AFTER_CONDITION.match(segment[end:]) else segment


# A condition naming a kind of thing, not a body: "I need diabetic meals on both flights",
# "a gluten intolerance menu", "糖尿病餐" (a "diabetic diet" the doctor put one on is one).
_NOT_A_CONDITION_OF: Final = (
    r"(?!\s+(?:meals?|menus?|food|options?|friendly|snacks?|socks|supplies|kits?|chocolates?|"
    r"versions?|range|recipes?|cookbook|products?|section))"
)


def rule_health(segment: str) -> Match | None:
    """Health and safety facts of the user or a relative: "I have type 2 diabetes"."""
    m = re.search(rf"\b({_EN_CONDITIONS})\b{_NOT_A_CONDITION_OF}", segment, re.IGNORECASE)
    if m:
        before = segment[: m.start()]
        # "my dad has ...", or the family name alone: "Dad has Parkinson's".
        subject = re.search(rf"\bmy ({_EN_REL})\b|^({_EN_REL})\b", before, re.IGNORECASE)
        first_person = re.search(r"\b(?:i|i'm|i've|i am|i have|me)\b", before, re.IGNORECASE)
        joke = not subject and _FORGETFUL_IDIOM.fullmatch(m.group(1))
        if (
            (subject or first_person)
            and not joke
            and not re.search(r"\bnot\b|n't\b|no longer|\bno\b", before, re.IGNORECASE)
        ):
            condition = slug(m.group(1))
            relative = next((g for g in subject.groups() if g), "") if subject else ""
            who = f"{_EN_RELATIVES[relative.lower()]}." if relative else ""
            return Match(
                sentence_case(to_third_person(_up_to_condition(segment, m.end()))),
                key=f"health.{who}{condition}",
                importance=0.95,
            )
    m = re.search(rf"({_ZH_CONDITIONS})(?!餐|饮食|食品|套餐|专用)", segment)
    if m:
        before = segment[: m.start()]
        subject = re.search(rf"({_ZH_REL})", before)
        # "我真是老年痴呆了" is forgetfulness said as a joke, not a diagnosis of the user's own.
        joke = not subject and _FORGETFUL_IDIOM.fullmatch(m.group(1))
        if (
            (subject or "我" in before or not before)
            and not joke
            and not re.search(r"不是|没有|没|不", before)
        ):
            who = f"{_ZH_RELATIVES[subject.group(1)]}." if subject else ""
            said = _up_to_condition(segment, m.end())
            return Match(
                sentence_case(to_third_person(said if before else "我" + said)),
                key=f"health.{who}{slug(m.group(1))}",
                importance=0.95,
            )
    return None


# What "have"/"touch" takes when it is not food: "I don't have her address anywhere",
# "I never have the time", "I can't have a car in the city".
_NOT_FOOD: Final = (
    r"(?:a|an|the|my|your|his|her|its|our|their|any|no|much|many|enough|to|it|that|this|these|those|"
    r"one|anything|someone|anyone|time|money|access|kids?|children|pets?|a car|cash)\b"
)


def rule_diet(segment: str) -> Match | None:
    m = re.search(
        r"\b(?:i'?m|i am|i've been|we'?re|we are"
        # A diet taken up: "I've gone vegan", "I went vegetarian last year", "turned vegan".
        r"|i'?ve (?:just |recently )?(?:gone|turned|become|switched to(?: being)?)|i have (?:gone|turned|become)"
        r"|i (?:just |recently )?(?:went|turned|became|switched to(?: being)?))"
        r"\s+(?:a\s+|now\s+|also\s+)?((?:strictly|fully|completely|full|totally)\s+)?"
        # Not "vegan-ish": a leaning, not the diet.
        r"(vegetarian|vegan|pescatarian|pescetarian|halal|kosher|keto|plant[- ]based|on a keto diet|"
        r"on a low[- ]carb diet|on a diet|gluten[- ]free|dairy[- ]free)\b(?!-?ish)"
        r"|\bi (?:only )?eat (halal|kosher)\b|\bi keep (kosher|halal)\b",
        segment,
        re.IGNORECASE,
    )
    if m and not re.search(r"\bnot\b|n't\b|no longer", segment[: m.start() + 8], re.IGNORECASE):
        how, diet = (m.group(1) or ""), (m.group(2) or m.group(3) or m.group(4))
        diet = (how.lower() + diet.lower()).replace("plant based", "plant-based")
        return Match(f"User is {diet}", key="diet", importance=0.85)
    # "我开始吃素了", "改吃素", "而家食素" (Cantonese), "吃斋".
    m = re.search(
        r"我(?:们)?(?:现在|而家|已经|最近)?(?:是|只|一直|都|开始|改|转|转为|改为|也)?"
        r"(?:吃素|食素|素食者?|吃斋|食斋|吃清真|清真|只吃素)",
        segment,
    )
    if m and not re.search(r"不|没", segment[: m.end()]):
        label = "吃清真" if "清真" in m.group(0) else "吃素"
        return Match(f"用户{label}", key="diet", importance=0.85)
    m = re.search(
        r"\bi (?:don'?t|do not|never|can'?t|cannot|won'?t|avoid|no longer) "
        r"(?:eat|drink|(?:have|touch)\s+(?!" + _NOT_FOOD + r"))\s*(.+)$"
        r"|\bi avoid\s+(.+)$",
        segment,
        re.IGNORECASE,
    )
    if m:
        what = en_value(m.group(1) or m.group(2))
        if what and what.lower() not in ("that", "it", "this", "anything"):
            return Match(
                f"User does not eat {what}", key=f"diet.avoid.{slug(what)}", importance=0.85
            )
    m = re.search(
        r"我(?:从来|一直|完全|平时)?(?:不吃|不能吃|吃不了|不碰|忌口|不喝|不能喝)(.+)$", segment
    )
    if m:
        what = zh_value(m.group(1))
        if what and what not in ("这个", "那个", "东西"):
            verb = "不喝" if "喝" in m.group(0) else "不吃"
            return Match(f"用户{verb}{what}", key=f"diet.avoid.{slug(what)}", importance=0.85)
    return None


_EN_PLACE: Final = r"([A-Za-z][\w.'-]*(?:\s+[A-Za-z][\w.'-]*){0,3})"
_PLACE_STOP: Final = word_set(
    "now with for since last recently because and but so this next a an the with my our"
)


def _place(text: str) -> str | None:
    words: list[str] = []
    for word in text.split():
        clean = word.strip(TRIM)
        if not clean or clean.lower() in _PLACE_STOP or len(words) == 4:
            break
        words.append(clean)
        if word.endswith((",", ".")):
            break
    place = " ".join(words)
    # "we moved in June", "moved in last week": a time, not a place.
    if re.fullmatch(
        r"(?:jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec)[a-z]*\.?(?:\s+\d+\w*)?|"
        r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|spring|summer|autumn|fall|"
        r"winter|january|february|march|april|june|july|august|september|october|november|december)",
        place,
        re.IGNORECASE,
    ):
        return None
    return place or None


_WIDER_PLACE: Final = re.compile(r"^\s*,\s*((?:in\s+)?[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*){0,2})\s*$")


def rule_location(segment: str) -> Match | None:
    m = re.search(
        r"\bmy (?:home |shipping |delivery |new )?address is\s+(.+)$", segment, re.IGNORECASE
    )
    if m:
        return Match(f"User's address is {m.group(1).strip(TRIM)}", key="address", importance=0.8)
    m = re.search(r"我的(?:家庭|收货|家|新)?地址(?:是|在|改成了?|变成了?)(.+)$", segment)
    if m:
        return Match(f"用户的地址是{m.group(1).strip(TRIM)}", key="address", importance=0.8)
    m = re.search(
        r"\b(?:i|we)\s*(?:'ve|have)?\s+(?:just\s+|recently\s+|finally\s+|now\s+|currently\s+|also\s+)?"
        r"(?:live|lived|moved|relocated|am based|'m based|are based|'re based|am living|'m living|"
        r"are living|'re living|settled)\s+(?:in|to|at)\s+"
        + _EN_PLACE
        + r"|\bmy (?:home )?(?:city|hometown) is (?:now )?"
        + _EN_PLACE,
        segment,
        re.IGNORECASE,
    )
    if m and not re.search(r"\bnot\b|n't\b|no longer", segment[: m.start() + 12], re.IGNORECASE):
        place = _place(m.group(1) or m.group(2))
        # "in Canton, in Cardiff", "in Clifton, Bristol": the wider place belongs to it.
        wider = _WIDER_PLACE.match(segment[m.end() :])
        if place and wider and place == (m.group(1) or m.group(2)).strip():
            place = f"{place}, {wider.group(1)}"
        if place and not re.search(r"\b(?:used to|lived)\b", m.group(0), re.IGNORECASE):
            return Match(f"User lives in {place}", key="address.city", importance=0.75)
    m = re.search(
        r"我(?:现在)?(?:住的|所在的?|的)城市(?:现在)?(?:是|在|改成了?)([\u4e00-\u9fff]{2,8})",
        segment,
    )
    if m:
        return Match(f"用户住在{zh_value(m.group(1))}", key="address.city", importance=0.75)
    m = re.search(
        r"(?:^|我)(?:们)?(?:家)?(?:现在|目前|已经|刚刚?|最近)?(?:住在|搬到了?|搬去了?|定居在|定居|生活在|安家在|在)"
        r"([\u4e00-\u9fffA-Za-z]{2,12}?)(?=[了啦，,。！!]|$|的|住|工作|上班|生活|附近|这边|那边|现在|已经|定居)",
        segment,
    )
    if (
        m
        and re.search(r"住|搬|定居|生活|安家", m.group(0) + segment[m.end() : m.end() + 3])
        and not re.search(r"不|没", segment[: m.start() + 2])
        and "出差" not in segment
    ):
        return Match(f"用户住在{m.group(1)}", key="address.city", importance=0.75)
    m = re.search(r"我(?:的)?(?:家乡|老家)(?:是|在)([\u4e00-\u9fff]{2,8})", segment) or re.search(
        r"\bi'?m (?:originally )?from\s+" + _EN_PLACE, segment, re.IGNORECASE
    )
    if m:
        place = _place(m.group(1)) if not re.search(r"[\u4e00-\u9fff]", m.group(1)) else m.group(1)
        if place:
            text = (
                f"用户老家在{place}"
                if re.search(r"[\u4e00-\u9fff]", place)
                else f"User is from {place}"
            )
            return Match(text, key="hometown", importance=0.65)
    return None


_LANGUAGES_EN: Final = "english|chinese|mandarin|cantonese|japanese|korean|french|german|spanish"
_LANGUAGES_ZH: Final = "繁体中文|简体中文|繁体字|简体字|繁体|简体|中文|英文|英语|汉语|普通话|粤语|广东话|日语|日文|韩语|法语|德语"


def rule_language(segment: str) -> Match | None:
    if NEGATED.search(segment) and not re.search(r"\bnot in\b|不要用英|别用英", segment):
        return None
    m = re.search(
        r"\b(?:reply|respond|answer|talk|speak|write|communicate|chat)(?:\s+to me)?\s+(?:only\s+)?in\s+"
        rf"({_LANGUAGES_EN})\b|\bi prefer\s+({_LANGUAGES_EN})\b|\bin ({_LANGUAGES_EN}) please\b",
        segment,
        re.IGNORECASE,
    )
    if m:
        language = next(g for g in m.groups() if g).capitalize()
        return Match(
            f"User wants replies in {language}",
            MemoryType.PROCEDURAL,
            key="preference.language",
            importance=0.85,
        )
    m = re.search(
        rf"(?:用|说|讲)({_LANGUAGES_ZH})(?:来)?(?:回复|回答|跟我|和我|交流|沟通|聊天?|写)"
        rf"|(?:回复|回答)(?:我)?(?:请|都|一律)?用({_LANGUAGES_ZH})"
        # "以后同我倾偈用广东话", "跟我聊天的时候用英文"
        rf"|(?:跟|和|同|与)我(?:倾偈|倾计|倾|聊天?|说话|讲话|讲东西|交流|沟通)?(?:的时候|时)?(?:请|都|一律)?用({_LANGUAGES_ZH})",
        segment,
    )
    if m:
        return Match(
            f"用户希望用{next(g for g in m.groups() if g)}交流",
            MemoryType.PROCEDURAL,
            key="preference.language",
            importance=0.85,
        )
    return None


PROFILE_RULES: Final = (
    rule_language,
    rule_preferred_name,
    rule_name,
    rule_allergy,
    rule_health,
    rule_diet,
    rule_location,
)
