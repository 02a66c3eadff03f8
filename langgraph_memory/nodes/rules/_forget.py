"""Forget requests, anywhere in a sentence, English and Chinese.

"btw, could you forget my old address", "and please delete my phone number
from your records", "I don't want you to remember my budget anymore",
"帮我把地址删掉", "不要再记着我的预算了", "麻烦把我的电话忘掉". What is to be
forgotten must be the user's ("my ...", "that I ...", a known topic): "please
delete the file" and "我忘了带钥匙" are not requests to forget memories.

``FORGET_TOPICS`` maps a topic to the slot key it forgets; reconcile deletes
every memory with that key (and its sub-keys), plus evidence turns that
mention the topic (``mentions_topic``).
"""

from __future__ import annotations

import re
from typing import Final

from langgraph_memory.nodes.rules._evidence import salient_terms
from langgraph_memory.nodes.rules._match import Match
from langgraph_memory.nodes.rules._text import TRIM, cjk_pairs, to_third_person, word_set

FORGET_TOPICS: Final[tuple[tuple[str, str], ...]] = (
    (r"address|地址|住址", "address"),
    (
        r"\bcity\b|where i live|\bi live\b|\bwe live\b|哪里住|住在|住哪|城市|(?:我|我们|我家)(?:现在)?住",
        "address.city",
    ),
    (r"nickname|what to call me|怎么称呼|称呼|叫我", "preferred_name"),
    (r"\bname\b|名字|姓名", "name"),
    (r"budget|预算", "budget"),
    (r"allerg|过敏", "allergy"),
    (r"\bdiet\b|饮食|吃素|vegetarian|vegan", "diet"),
    (r"phone|电话|手机号", "phone"),
    (r"e-?mail|邮箱", "email"),
    (r"health|medical|condition|病|健康", "health"),
    (r"membership|会员", "membership"),
    (r"group size|how many people|人数", "group_size"),
    (r"flight|航班|机票", "event.flight"),
    (r"birthday|生日", "birthday"),
)


def forget_key(topic: str) -> str | None:
    for pattern, key in FORGET_TOPICS:
        if re.search(pattern, topic, re.IGNORECASE):
            return key
    return None


def mentions_topic(text: str, key: str) -> bool:
    """Does ``text`` talk about the topic forgotten under ``key`` ("address" -> "地址")?

    Example:
        >>> mentions_topic("User said: my address is [ADDRESS]", "address")
        True
        >>> mentions_topic("User said: I like tea", "address")
        False
    """
    patterns = [p for p, k in FORGET_TOPICS if k == key or k.startswith(key + ".")]
    return any(re.search(p, text, re.IGNORECASE) for p in patterns)


_EN_FORGET: Final = re.compile(
    r"\b(?:forget|erase|delete|remove|wipe|clear|drop|purge|scrap|get rid of|stop remembering|stop storing|"
    r"no need to (?:remember|keep|store)|don'?t (?:remember|keep|store|save|hold on to)|"
    r"do not (?:remember|keep|store|save)|no longer (?:remember|keep|store)|"
    r"(?:don'?t|do not) want you to (?:remember|keep|store|know)|(?:don'?t|do not) need to (?:remember|know))\s+"
    r"(?:about\s+|that\s+|what you know about\s+|everything (?:about|you know about)\s+|all about\s+)?(.+)$",
    re.IGNORECASE,
)
_EN_PERSONAL: Final = re.compile(
    r"^(?:my|mine|me|what you know|everything|all|the fact that|i\b|i'm|i am|where i|how i|what i)\b|"
    r"^(?:that|the)\s+(?:i|my)\b",
    re.IGNORECASE,
)
_EN_NOT_FORGET: Final = re.compile(
    r"\b(?:don'?t|do not|never) forget\b|\bi forgot\b|\bforgot (?:my|to|the)\b|\bforget it\b",
    re.IGNORECASE,
)
_ZH_VERB: Final = r"(?:忘记|忘掉|删除|删掉|删了|清除|清掉|抹掉|抹去|去掉|别记了|不用记了|忘了吧)"
# "删除我的预算" / "不要再记着我的预算了": the verb, then the topic.
_ZH_FORGET_AFTER: Final = re.compile(
    r"(?:忘记|忘掉|删除|删掉|清除|清掉|抹去|不要再记住?|别再记住?|不要再记着|别再记着|别记住?|不要记住?|不要记得|别记得|"
    r"不用记住?|不用再记|别存|不要存|不要保留|别保留|从记录里删除|从记录中删除)"
    r"(?:掉)?(?:我的|关于我的?|我)?(.+)$"
)
# "帮我把地址删掉" / "我的电话忘掉吧": the topic, then the verb.
_ZH_FORGET_BEFORE: Final = re.compile(
    r"(?:把|将)(?:我的|关于我的?)?(.{1,12}?)(?:给)?" + _ZH_VERB + r"|^(?:我的)(.{1,8}?)" + _ZH_VERB
)


# A forget verb with no topic of its own ("delete it", "帮我删掉", "删咗佢", "你们也别留着了"):
# the topic is the rest of the sentence ("that backup number is no longer used, delete it").
_BARE_FORGET: Final = re.compile(
    r"^(?:(?:ok|okay|so|and|also|please|pls|can you|could you|would you|just)[,\s]+)*"
    r"(?:forget|delete|erase|remove|wipe|drop|scrap|clear)\s*(?:it|that|this|them|those|that one|this one)?"
    r"(?:\s+(?:please|too|as well|for me|from (?:your|the|my) \w+(?: \w+)?))*"
    # "delete it from the ticket and forget it"
    r"(?:\s+(?:and|&)\s+(?:forget|delete|erase|remove|wipe|drop)\s*(?:it|that|this|them|about it)?)*"
    r"(?:\s+please)?$"
    r"|^(?:(?:ok|okay|and|also)[,\s]+)*(?:don'?t|do not|no need to|stop) (?:keep|store|save|remember|hold on to)(?:ing)?\s*"
    r"(?:it|that|this|them|those)?(?:\s+(?:on file|anymore|any more|either|please))*$"
    r"|^(?:你们?|您)?(?:也|就)?(?:帮我|给我|麻烦|请)?(?:把它|把这个|把那个|把他|把她|把佢)?(?:给)?"
    r"(?:删掉|删了|删除|删咗|删|忘掉|忘了吧|清掉|清除|去掉|抹掉|别记了|不用记了|别留着?了?|不要留着?了?|唔好留|别存了?)"
    r"(?:它|佢|他|她|吧|了|啦|掉|咗|嘅|呀|啊)*$"
    r"|^(?:我)?(?:唔想|不想|不要|别)再(?:提|讲|说|记)(?:了|啦|吧)?$",
    re.IGNORECASE,
)


def bare_forget(segment: str) -> bool:
    """A forget request whose topic is elsewhere in the sentence ("..., delete it").

    Example:
        >>> bare_forget("帮我删掉"), bare_forget("delete it please"), bare_forget("delete the file")
        (True, True, False)
    """
    return bool(_BARE_FORGET.match(segment.strip(TRIM + " ")))


# The redactor's placeholders a topic refers to: "delete that card number" covers every
# memory holding a masked card, whatever its wording ("User's Mastercard is [BANK_CARD]").
_PLACEHOLDER_TOPICS: Final[tuple[tuple[str, str], ...]] = (
    (r"card|卡号|银行卡|信用卡|iban|bank account|银行账号|银行账户", "[BANK_CARD"),
    (r"phone|mobile|电话|号码|手机", "[PHONE"),
    (r"e-?mail|邮箱", "[EMAIL"),
    (r"address|地址|住址", "[ADDRESS"),
    (r"\bid\b|passport|身份证|证件|\bssn\b|social security|hkid|nric", "[ID_NUMBER"),
    (r"password|pin|passcode|密码|验证码|\botp\b", "[PASSWORD"),
)


def forget_reaches(topic: str, text: str) -> bool:
    """Does a forget request on ``topic`` cover a memory reading ``text``?

    It does when the memory holds a masked identifier of the kind the topic names,
    or a content word of the topic (4+ letters, whole or inside a longer word:
    "card" in "Mastercard"; a name such as "Kenny"; a Chinese word pair).

    Example:
        >>> forget_reaches("that card number I typed", "User's Mastercard is [BANK_CARD]")
        True
        >>> forget_reaches("之前讲 Kenny 嗰啲嘢", "用户说：我前男友 Kenny 成日 WhatsApp 我")
        True
        >>> forget_reaches("my old address", "User likes tea")
        False
    """
    for pattern, placeholder in _PLACEHOLDER_TOPICS:
        if placeholder in text and re.search(pattern, topic, re.IGNORECASE):
            return True
    lowered = text.lower()
    words = {w for w in salient_terms(topic) if w.isascii()} - _GENERIC_TOPIC_WORDS
    if any(word.removesuffix("'s") in lowered for word in words):
        return True
    # Chinese: two shared content pairs ("备用" + "号码"), so one common pair never deletes.
    pairs = {p for p in cjk_pairs(topic) if not _ZH_FUNCTION.search(p)} - _GENERIC_TOPIC_WORDS
    return sum(pair in text for pair in pairs) >= 2


_ZH_FUNCTION: Final = re.compile(
    r"[了的不是在有我你他她它们个那这就也都还要会能可吧呢吗啊呀嗰啲咗佢唔嘅讲说帮把给用]"
)

# Words every forget request shares with many memories; they alone never reach one.
_GENERIC_TOPIC_WORDS: Final = word_set(
    "number last time typed told said gave mentioned earlier before thing stuff that "
    "user user's users venting kept keep remember forget delete please "
    "用户 之前 以前 那个 这个 上次 刚才 东西 事情 要求 忘记"
)


def forget_request(topic: str) -> Match:
    """The forget candidate for ``topic`` (its slot key when the topic names one)."""
    topic = topic.strip(TRIM + " ")
    if re.search(r"[\u3400-\u9fff]", topic):
        return Match(
            f"用户要求忘记：{to_third_person(topic)}",
            key=forget_key(topic),
            importance=1.0,
            forget=True,
        )
    return Match(
        f"User asked to forget: {to_third_person(topic)}",
        key=forget_key(topic),
        importance=1.0,
        forget=True,
    )


def rule_forget(segment: str) -> Match | None:
    if _EN_NOT_FORGET.search(segment):
        return None
    m = _EN_FORGET.search(segment)
    if m:
        topic = m.group(1).strip(TRIM)
        topic = re.sub(r"\s+(?:from (?:your|the) (?:records?|memory|files?|system)|please|anymore|any more|now)\b.*$",
                       "", topic, flags=re.IGNORECASE).strip(TRIM)  # fmt: skip
        key = forget_key(topic)
        personal = (
            bool(_EN_PERSONAL.match(topic))
            or key is not None
            or re.search(
                r"\bi (?:gave|told|mentioned|said|shared|typed|sent|entered|wrote|put|left|provided)\b"
                r"|\bmy\b|\b(?:that|the|this) (?:card|number|pin|password|address|info)",
                topic,
                re.IGNORECASE,
            )
            is not None
        )
        if topic and personal:
            return Match(
                f"User asked to forget: {to_third_person(topic).strip(TRIM)}",
                key=key,
                importance=1.0,
                forget=True,
            )
        return None
    if re.search(
        r"忘了(?!记)|忘记(?:带|拿|买|说|做|了)", segment
    ):  # "我忘了带钥匙": the user forgot
        return None
    m = _ZH_FORGET_AFTER.search(segment)
    if m is None or not re.sub(r"[了吧吗啊呀]", "", m.group(1)).strip(TRIM):
        m = _ZH_FORGET_BEFORE.search(segment)
    if m:
        topic = re.sub(r"[了吧啊呀]+$", "", next((g for g in m.groups() if g), "")).strip(TRIM)
        if not topic:
            return None
        key = forget_key(topic)
        mine = "我" in segment[: m.end()] or key is not None
        if mine and not re.match(r"^(?:这个|那个)?(?:文件|图片|照片|邮件|记录|订单)$", topic):
            return Match(
                f"用户要求忘记：{to_third_person(topic).strip(TRIM)}",
                key=key,
                importance=1.0,
                forget=True,
            )
    return None
