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

from langgraph_memory.nodes.rules._match import Match
from langgraph_memory.nodes.rules._text import TRIM, to_third_person

FORGET_TOPICS: Final[tuple[tuple[str, str], ...]] = (
    (r"address|地址|住址", "address"),
    (r"\bcity\b|where i live|哪里住|住在|住哪|城市", "address.city"),
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
            or re.search(r"\bi (?:gave|told|mentioned|said|shared)\b|\bmy\b", topic) is not None
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
