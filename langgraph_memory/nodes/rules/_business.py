"""Rules for business facts: budget, group size, membership, orders, purchases, any "my X is Y".

Values raised or changed in passing keep the slot's key, so reconcile
supersedes the old value: "now that my budget went up to 8000", "预算提高到2.5万",
"we're 6 people now", "人数改成6个".

Amounts keep their decimals and separators ("2.5万", "$1,299.99"): the clause
splitter never cuts at a decimal point.
"""

from __future__ import annotations

import re
from typing import Final

from langgraph_memory.nodes.rules._evidence import topics
from langgraph_memory.nodes.rules._match import Match, as_int, en_value, zh_value
from langgraph_memory.nodes.rules._text import TRIM, slug

# "S$2.1 million", "HK$8,000", "GBP 25", "2.5万", "$1,299.99": the prefix and the
# magnitude are part of the value (a budget of "$1.8" is not "S$1.8 million").
_MAGNITUDE: Final = (
    r"(?:\s*(?:million|mil|mn|billion|bn|thousand|grand|k|m|w|百万|千万|万|千|亿))?"
    r"(?:\s*(?:元|块钱?|yuan|rmb|dollars?|usd|sgd|hkd|eur|euros?|pounds?|quid|bucks))?"
)
AMOUNT: Final = (
    r"((?:[A-Z]{1,3})?[$¥￥€£]\s*\d[\d,]*(?:\.\d+)?"
    + _MAGNITUDE
    + r"|(?:GBP|USD|EUR|RMB|CNY|SGD|HKD|AUD|CAD|JPY)\s*\d[\d,]*(?:\.\d+)?"
    + _MAGNITUDE
    + r"|\d[\d,]*(?:\.\d+)?"
    + _MAGNITUDE
    + ")"
)
# An amount alone in a clause: "Budget 调高一点, S$2.1 million" joins it to the clause before.
AMOUNT_ONLY: Final = re.compile(
    r"^(?:(?:about|around|roughly|up to|max|大概|大约|差不多|最多)\s*)?"
    + AMOUNT
    + r"(?:\s*(?:左右|上下))?$",
    re.IGNORECASE,
)


def _amount(raw: str) -> str:
    return re.sub(r"\s+", " ", raw).strip(TRIM + " ")


def rule_budget(segment: str) -> Match | None:
    m = re.search(
        r"\bbudget\b[^\d$¥￥€£.]{0,40}?"
        + AMOUNT
        + r"|\b(?:spend|pay|afford)\s+(?:up to|at most|no more than|max(?:imum)?|around|about)\s+"
        + AMOUNT
        + r"|\bi (?:only )?have\s+"
        + AMOUNT
        + r"\s+(?:to spend|for this|for it|budgeted)",
        segment,
        re.IGNORECASE,
    )
    if m and not re.search(r"\bnot\b|n't\b", segment[: m.start()], re.IGNORECASE):
        return Match(
            f"User's budget is {_amount(next(g for g in m.groups() if g))}",
            key="budget",
            importance=0.8,
        )
    m = re.search(
        r"预算[^\d$¥￥€£]{0,12}?"
        + AMOUNT
        + r"|(?:最多|顶多|最高)(?:只)?(?:能)?(?:花|出|付|接受)"
        + AMOUNT
        + r"|(?:花费|开销|价位|价格)(?:控制在|不超过|在)"
        + AMOUNT
        + r"|预算[^\d$¥￥€£一二两三四五六七八九十]{0,8}?"
        r"([一二两三四五六七八九十]+[百千万][一二两三四五六七八九十百千万]*(?:块钱?|元)?)",
        segment,
    )
    if m and not re.search(r"不是", segment[: m.start()]):
        return Match(
            f"用户的预算是{_amount(next(g for g in m.groups() if g))}", key="budget", importance=0.8
        )
    return None


_EN_COUNT: Final = (
    r"(\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of)"
)
_ZH_COUNT: Final = r"(\d{1,3}|十[一二]?|[一两二俩三仨四五六七八九十])"


def rule_group_size(segment: str) -> Match | None:
    m = re.search(
        rf"\b(?:party of|table for|group of|booking for|reservation for|book for|seats? for|"
        rf"tickets? for|room for)\s+{_EN_COUNT}\b(?!\s*(?:pm|am|o'?clock|nights?|days?|:))"
        rf"|\b(?:we(?:'re| are| will be|'ll be)|there(?:'s| is| are|'ll be| will be)|it'?s|"
        rf"make it|make that|change it to|now)\s+(?:going to be\s+|a total of\s+|now\s+)?{_EN_COUNT}"
        r"\s+(?:people|persons|guests|adults|of us|travell?ers|pax|diners)\b"
        rf"|\b{_EN_COUNT}\s+of us\b|\b{_EN_COUNT}\s+(?:people|persons|guests|adults)\s+(?:in total|total|"
        r"altogether|are coming|will come|in our (?:group|party))",
        segment,
        re.IGNORECASE,
    )
    if m:
        count = as_int(next(g for g in m.groups() if g))
        if count:
            return Match(f"User's group size is {count} people", key="group_size", importance=0.75)
    m = re.search(
        rf"(?:我们|咱们|一共|总共|共|一行|人数)(?:一共|总共|共)?(?:有|是|改成|改为|变成|增加到|减少到|定为)?"
        rf"{_ZH_COUNT}\s*(?:个人|个大人|人|位|口人)"
        rf"|一家{_ZH_COUNT}口|{_ZH_COUNT}\s*(?:个人|位)(?:用餐|入住|出行|参加|一起|同行|出游|吃饭)"
        rf"|(?:改成|改为|变成)\s*{_ZH_COUNT}\s*(?:个人|位|人)",
        segment,
    )
    if m:
        count = as_int(next(g for g in m.groups() if g))
        if count:
            return Match(f"用户一行共{count}人", key="group_size", importance=0.75)
    return None


def rule_membership(segment: str) -> Match | None:
    m = re.search(
        r"\b(?:i'?m|i am|i'?ve been)\s+(?:now\s+)?(?:a|an)\s+([\w-]+(?:\s+[\w-]+)?)\s+(?:member|subscriber|customer)\b"
        r"|\bmy (?:membership|member(?:ship)? (?:tier|level|status)|tier|plan|subscription)\s+"
        r"(?:level\s+|tier\s+)?(?:is|was changed to|changed to|was upgraded to|is now)\s+(?:now\s+)?(?:the\s+)?"
        r"([\w-]+(?:\s+[\w-]+)?)"
        r"|\bi (?:have|'ve got|got|just got)\s+(?:a|an|the)\s+([\w-]+)\s+(?:membership|subscription|plan)\b"
        r"|\b(?:i|we)(?:'ve| have)?\s+(?:just\s+)?(?:upgraded|downgraded|switched|moved)\s+(?:my \w+ )?to\s+(?:the\s+)?([\w-]+(?:\s+[\w-]+)?)"
        r"\s+(?:plan|tier|membership|level)",
        segment,
        re.IGNORECASE,
    )
    if m and not re.search(r"\bnot\b|n't\b", segment[: m.start()], re.IGNORECASE):
        level = en_value(next(g for g in m.groups() if g), 3)
        if level and level.lower() not in ("new", "long-time", "loyal", "regular", "good"):
            return Match(f"User's membership is {level}", key="membership", importance=0.75)
    m = re.search(
        r"我(?:现在)?是(?:你们|你們|您们|贵店|貴店)?(?:家)?的?([\u4e00-\u9fffA-Za-z0-9]{1,6}?)会员"
        r"|会员(?:等级|级别|卡)?(?:是|为|现在是|升级到|升到|升级成|变成)了?([\u4e00-\u9fffA-Za-z0-9]{1,6})"
        r"|(?:升级|升)(?:成|到|为)了?([\u4e00-\u9fffA-Za-z0-9]{1,6}?)会员",
        segment,
    )
    if m and not re.search(r"不是|没有", segment[: m.start() + 2]):
        level = zh_value(next(g for g in m.groups() if g), 8)
        if level:
            return Match(f"用户是{level}会员", key="membership", importance=0.75)
    return None


def rule_order(segment: str) -> Match | None:
    m = re.search(
        r"\b(order|ticket|case|booking|reservation|confirmation|tracking)\s*(?:number|no\.?|#|id|code)?"
        r"\s*(?:is\s*)?[:#]?\s*([A-Z0-9][A-Z0-9-]{3,})\b",
        segment,
        re.IGNORECASE,
    )
    if m and any(ch.isdigit() for ch in m.group(2)):
        kind, number = m.group(1).lower(), m.group(2)
        return Match(
            f"User's {kind} number is {number}", key=f"{kind}.{number.lower()}", importance=0.7
        )
    m = re.search(
        r"(订单|工单|预订|快递单|运单)(?:号|编号|单号)?(?:是|为|:|：)?\s*([A-Za-z0-9][A-Za-z0-9-]{3,})",
        segment,
    )
    if m and any(ch.isdigit() for ch in m.group(2)):
        kinds = {
            "订单": "order",
            "工单": "ticket",
            "预订": "booking",
            "快递单": "tracking",
            "运单": "tracking",
        }
        number = m.group(2)
        return Match(
            f"用户的{m.group(1)}号是{number}",
            key=f"{kinds[m.group(1)]}.{number.lower()}",
            importance=0.7,
        )
    return None


def rule_purchase(segment: str) -> Match | None:
    """A product the user bought or owns: business context for later support."""
    m = re.search(
        r"(?i:\bi (?:just |recently )?(?:bought|purchased|ordered|upgraded to)\s+(?:a |an |the |two |some )?)(.+)$"
        r"|(?i:\bi (?:own|use|have) (?:a|an|the) )((?:[A-Z]|[a-z][A-Z])[\w-]*(?:\s+[\w-]+){0,3})",
        segment,
    )
    if m:
        what = en_value(m.group(1) or m.group(2), 6)
        if what and len(what) > 2 and what.lower() not in ("it", "that", "this", "one"):
            verb = "owns" if m.group(2) else "bought"
            return Match(f"User {verb} {what}", key=f"product.{slug(what)}", importance=0.65)
    m = re.search(
        r"我(?:刚|最近|上周|昨天|前几天)?(?:买了|购买了|下单了|订购了|入手了|用的是|在用)(?:一[台个部件双])?(.+)$",
        segment,
    )
    if m:
        what = zh_value(m.group(1), 20)
        if what and len(what) > 1 and what not in ("东西", "这个", "那个"):
            return Match(f"用户购买了{what}", key=f"product.{slug(what)}", importance=0.65)
    return None


_GENERIC_SKIP: Final = re.compile(
    r"^(?:name|order|budget|address|flight|question|problem|issue|point|bad|mistake|fault|"
    r"pleasure|turn|guess|bet|opinion|answer|plan|idea|day|week|month|morning|evening|life|"
    r"phone|email|number|[a-z]+ number|account|password)$",
    re.IGNORECASE,
)


# "my new mobile number", "my registered mobile", "我的新手机号": one slot whatever the user
# calls it, so the new value supersedes the old one (and a forget of "my phone" reaches it).
_ATTRIBUTE_MODIFIER: Final = re.compile(
    r"^(?:new|old|current|updated|latest|registered|main|primary|present|usual)\s+", re.IGNORECASE
)
_ZH_ATTRIBUTE_MODIFIER: Final = re.compile(r"^(?:新的?|现在的?|目前的?|现|最新的?|常用的?)")
_CONTACT_SLOTS: Final = {
    "mobile": "phone", "mobile number": "phone", "mobile no": "phone", "cell": "phone",
    "cell number": "phone", "cellphone": "phone", "phone number": "phone", "phone": "phone",
    "contact number": "phone", "number": "phone", "whatsapp number": "phone",
    "email": "email", "email address": "email", "e-mail": "email", "mail": "email",
    "手机": "phone", "手机号": "phone", "手机号码": "phone", "电话": "phone", "电话号码": "phone",
    "联系电话": "phone", "号码": "phone", "邮箱": "email", "电子邮箱": "email", "邮箱地址": "email",
}  # fmt: skip


def _attribute_slot(attribute: str, value: str = "") -> str | None:
    """``phone`` / ``email`` for a contact detail however it is named, ``device`` for a
    phone that is a handset ("我的手机是 iPhone 13", "my phone is a Pixel 8"), else ``None``."""
    bare = _ZH_ATTRIBUTE_MODIFIER.sub("", _ATTRIBUTE_MODIFIER.sub("", attribute.strip().lower()))
    slot = _CONTACT_SLOTS.get(bare)
    if slot == "phone" and "device" in topics(value) and not _NUMBER_LIKE.search(value):
        return "device"
    return slot


# A phone number as the redactor leaves it, or one it missed.
_NUMBER_LIKE: Final = re.compile(r"\[PHONE|\d[\d -]{5,}\d")


def rule_my_attribute(segment: str) -> Match | None:
    """Any "my X is (now) Y" / "我的X是Y": a keyed fact, so a new value supersedes it.

    Weak: a dated event in the same segment wins ("my flight is on 12 Dec").
    """
    m = re.search(
        r"\bmy ([a-z][a-z' -]{1,30}?) (?:is|are|has been|was changed to|changed to|went up to|went down to|"
        r"was raised to|increased to|dropped to|was moved to|moved to) (?:now |still |actually )?(.+)$",
        segment,
        re.IGNORECASE,
    )
    contact = _attribute_slot(m.group(1), m.group(2)) if m else None
    if m and (contact or not _GENERIC_SKIP.match(_ATTRIBUTE_MODIFIER.sub("", m.group(1).strip()))):
        attribute, value = m.group(1).strip(), en_value(m.group(2), 10)
        bare = _ATTRIBUTE_MODIFIER.sub("", attribute)
        if value and not re.match(r"(?:not|n't|no)\b", value, re.IGNORECASE):
            return Match(
                f"User's {attribute} is {value}",
                key=contact or f"profile.{slug(bare)}",
                importance=0.7 if contact else 0.65,
                weak=contact is None,
            )
    m = re.search(
        r"我(?:的|家的?)([\u4e00-\u9fff]{1,8}?)(?:现在|目前|已经)?(?:是|叫|为|改成了?|改为|变成了?|换成了?|提高到|涨到|降到)(.+)$",
        segment,
    )
    if m and m.group(1) not in ("名字", "预算", "地址", "订单", "问题", "意思", "想法"):
        value = zh_value(m.group(2), 20)
        contact = _attribute_slot(m.group(1), m.group(2))
        bare = _ZH_ATTRIBUTE_MODIFIER.sub("", m.group(1)) or m.group(1)
        if value and not value.startswith(("不", "没")):
            return Match(
                f"用户的{m.group(1)}是{value}",
                key=contact or f"profile.{slug(bare)}",
                importance=0.7 if contact else 0.65,
                weak=contact is None,
            )
    return None


_OCCUPATIONS_EN: Final = (
    r"nurse|teacher|doctor|physician|surgeon|dentist|engineer|software engineer|developer|programmer|"
    r"designer|lawyer|accountant|student|chef|cook|driver|manager|consultant|architect|pharmacist|"
    r"researcher|scientist|professor|journalist|writer|photographer|freelancer|sales rep|"
    r"salesperson|shop owner|business owner|small business owner|retiree|pilot|police officer|"
    r"firefighter|electrician|plumber|farmer|vet|veterinarian|therapist|translator|data scientist"
)
_OCCUPATIONS_ZH: Final = (
    r"护士|老师|教师|医生|大夫|工程师|程序员|设计师|律师|会计|学生|研究生|大学生|厨师|司机|经理|顾问|"
    r"建筑师|药剂师|研究员|科学家|教授|记者|作家|摄影师|自由职业者?|销售|公务员|老板|店主|退休|飞行员|"
    r"警察|消防员|电工|农民|兽医|翻译|产品经理|运营|会计师|客服|创业者"
)


def rule_occupation(segment: str) -> Match | None:
    m = re.search(
        rf"\bi(?:'m| am) (?:an? |the )?((?:\w+ )?(?:{_OCCUPATIONS_EN}))\b|\bi work as (?:an? )?(.+)$"
        r"|\bi (?:run|own) (?:an? |my own )(.+)$",
        segment,
        re.IGNORECASE,
    )
    if m and not re.search(r"\bnot\b|n't\b|no longer|used to", segment[: m.end()], re.IGNORECASE):
        if m.group(3):
            return Match(f"User runs {en_value(m.group(3), 8)}", key="occupation", importance=0.7)
        job = en_value(m.group(1) or m.group(2), 6)
        if job:
            return Match(f"User works as {job}", key="occupation", importance=0.7)
    m = re.search(
        rf"我(?:是|现在是|目前是)(?:一名|一个|个)?((?:[\u4e00-\u9fff]{{0,4}})(?:{_OCCUPATIONS_ZH}))"
        r"|我(?:是)?做([\u4e00-\u9fff]{1,8}?)的(?:$|，)|我在([\u4e00-\u9fffA-Za-z]{2,12}?)(?:工作|上班|实习)",
        segment,
    )
    if m and not re.search(r"不是|没有", segment[: m.start() + 3]):
        if m.group(3):
            return Match(f"用户在{m.group(3)}工作", key="workplace", importance=0.7)
        job = m.group(1) or f"做{m.group(2)}的"
        return Match(f"用户是{job}", key="occupation", importance=0.7)
    return None


def rule_promise(segment: str) -> Match | None:
    """What the user says the business promised them: "you promised me a refund"."""
    m = re.search(
        r"\b(?:you|your (?:agent|colleague|team|support)|the agent|they)\s+(?:promised|said (?:you|they) would|"
        r"agreed to|told me (?:you|they) would|guaranteed)\s+(?:me\s+)?(.+)$",
        segment,
        re.IGNORECASE,
    )
    if m:
        what = en_value(m.group(1), 14)
        if what:
            return Match(
                f"User was promised {what}", key=f"promise.{slug(what)[:30]}", importance=0.75
            )
    m = re.search(
        r"(?:你们|客服|你)(?:之前|上次|已经)?(?:答应|承诺|保证|说好)(?:了|过)?(?:我|给我)?(.+)$",
        segment,
    )
    if m:
        what = zh_value(m.group(1), 24)
        if what:
            return Match(f"用户被承诺：{what}", key=f"promise.{slug(what)[:30]}", importance=0.75)
    return None


BUSINESS_RULES: Final = (
    rule_budget,
    rule_group_size,
    rule_membership,
    rule_order,
    rule_promise,
    rule_occupation,
)
LATE_RULES: Final = (rule_purchase, rule_my_attribute)
