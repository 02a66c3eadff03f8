"""Offline, rule-based memory extraction (no model needed), English and Chinese.

``RuleBasedExtractor`` reads only the user's own messages, so everything it
proposes is ``user_stated``. It recognises explicit requests ("remember ...",
"记住...", "from now on ...", "以后...", "don't ...", "不要...", "forget ...",
"忘记...") and common profile statements (name, how to be addressed, allergies,
budget, city/address, diet, reply language, shipping carrier, contact channel,
likes/dislikes, order numbers, corrections).

Every clause is matched by the first rule that fits; wrappers such as
"remember that" and "以后" are stripped and the rest is matched again, so
"以后叫我老王" becomes the ``preferred_name`` fact, not a generic instruction.

Keys are chosen for reconcile, which supersedes an active memory with the same
key deterministically:

- a correction keeps the slot's key ("我的预算不是3000，是5000" -> ``budget``);
- a dated event gets ``event.<kind>`` and ``event_time`` ("下周三面试" ->
  ``event.interview``), so a rescheduled one replaces the old date;
- a time-bounded state gets ``expires_at`` and a key under ``status.`` (or
  ``temporary.<slot>``), never the permanent slot: "I'm in Tokyo this week"
  must not supersede ``address.city``. Recall drops it once it expires.

Relative times are resolved against the message time (see ``_rules_time.py``).

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> from langgraph_memory.nodes.rules import RuleBasedExtractor
    >>> [c.text for c in RuleBasedExtractor().extract([HumanMessage("以后叫我老王", id="m1")])]
    ['用户希望被称为老王']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from langchain_core.messages import BaseMessage, HumanMessage

from langgraph_memory.clock import Clock, message_time, wall_clock
from langgraph_memory.config import PrivacyPolicy
from langgraph_memory.errors import ConfigurationError, RedactionRejectedError
from langgraph_memory.nodes._rules_time import bound_of, moment_of
from langgraph_memory.nodes.extract import message_ids_for, message_text, redact_text
from langgraph_memory.types import CandidateMemory, MemorySource, MemoryType

_CJK = re.compile(r"[\u3400-\u9fff]")
# Clause boundaries; commas stay inside a clause ("以后，叫我老王").
_CLAUSE_SPLIT = re.compile(r"(?<=[.!?;。！？；])\s*|\n+")
_JOKE = re.compile(r"\b(?:just kidding|jk|kidding|joking)\b|开玩笑|逗你的?|骗你的", re.IGNORECASE)
_QUESTION_START = re.compile(
    r"^(?:do|does|did|can|could|would|will|is|are|what|which|who|where|when|why|how)\b",
    re.IGNORECASE,
)
_AMOUNT = r"([$¥￥€£]?\s*\d[\d,.]*\s*(?:k|w|万|千|元|块钱?|yuan|rmb|dollars?|usd|eur|euros?)?)"
_TRIM = " \t,，:：、.。!！~"


def _has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


def _slug(text: str) -> str:
    """A key fragment: lower case, words joined by '_', CJK kept."""
    words = re.findall(r"[\w\u3400-\u9fff]+", text.lower())
    return "_".join(words)[:40]


_EN_VERBS_3RD = {
    "like": "likes", "love": "loves", "hate": "hates", "prefer": "prefers",
    "want": "wants", "need": "needs", "live": "lives", "work": "works",
    "eat": "eats", "drink": "drinks", "use": "uses", "have": "has", "do": "does",
    "don't": "doesn't", "own": "owns", "enjoy": "enjoys", "dislike": "dislikes",
}  # fmt: skip


def to_third_person(clause: str) -> str:
    """Rewrite a first-person clause about the user in the third person.

    Example:
        >>> to_third_person("I like green tea and my cat")
        "user likes green tea and user's cat"
        >>> to_third_person("I usually take my coffee black")
        "user usually takes user's coffee black"
        >>> to_third_person("我的猫叫咪咪")
        '用户的猫叫咪咪'
    """
    if _has_cjk(clause):
        return clause.replace("我们", "用户和其他人").replace("我", "用户")
    out = re.sub(r"\bI(?:'m| am)\b", "user is", clause)
    out = re.sub(r"\bI(?:'ve| have)\b", "user has", out)
    out = re.sub(r"\bI was\b", "user was", out)
    out = re.sub(r"\bmyself\b", "the user", out, flags=re.IGNORECASE)
    out = re.sub(r"\bmine\b", "the user's", out, flags=re.IGNORECASE)
    out = re.sub(r"\bmy\b", "user's", out, flags=re.IGNORECASE)
    out = re.sub(r"\bme\b", "the user", out, flags=re.IGNORECASE)

    def _verb(match: re.Match[str]) -> str:
        adverb, verb = match.group(1) or "", match.group(2)
        return "user " + adverb + _third_person_verb(verb)

    out = re.sub(r"\bI\s+((?:" + _ADVERBS + r")\s+)?([\w']+)", _verb, out)
    return out


_ADVERBS = "really|also|usually|always|often|sometimes|normally|still|only|just|mostly|generally"


def _third_person_verb(verb: str) -> str:
    """``take`` -> ``takes``, ``watch`` -> ``watches``, ``fly`` -> ``flies``."""
    lowered = verb.lower()
    if lowered in _EN_VERBS_3RD:
        return _EN_VERBS_3RD[lowered]
    if not verb.isalpha() or lowered in ("will", "can", "could", "would", "should", "must", "may"):
        return verb
    if lowered.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(verb) > 2 and lowered.endswith("y") and lowered[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _sentence(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip(_TRIM)
    return text[:1].upper() + text[1:] if text else text


@dataclass(frozen=True, slots=True)
class _Match:
    text: str
    type: MemoryType = MemoryType.SEMANTIC
    key: str | None = None
    importance: float = 0.6
    forget: bool = False
    event_time: datetime | None = None
    expires_at: datetime | None = None


_Rule = Callable[[str], "_Match | None"]

_FORGET_TOPICS: tuple[tuple[str, str], ...] = (
    (r"address|地址|住址", "address"),
    (r"\bcity\b|哪里住|住在", "address.city"),
    (r"nickname|what to call me|怎么称呼|称呼|叫我", "preferred_name"),
    (r"\bname\b|名字|姓名", "name"),
    (r"budget|预算", "budget"),
    (r"allerg|过敏", "allergy"),
    (r"\bdiet\b|饮食|吃素", "diet"),
    (r"phone|电话|手机号", "phone"),
    (r"e-?mail|邮箱", "email"),
)


def _forget_key(topic: str) -> str | None:
    for pattern, key in _FORGET_TOPICS:
        if re.search(pattern, topic, re.IGNORECASE):
            return key
    return None


def _rule_forget(clause: str) -> _Match | None:
    m = re.match(
        r"^(?:please\s+|can you\s+)?(?:forget|erase|delete|remove|stop remembering)\s+"
        r"(?:about\s+|that\s+|what you know about\s+|everything about\s+)?(.+)$",
        clause,
        re.IGNORECASE,
    )
    if m and (
        clause.lower().startswith(("forget", "please forget", "stop remembering", "can you forget"))
        or re.match(r"^(?:my|what you know|everything about)\b", m.group(1), re.IGNORECASE)
    ):
        topic = m.group(1)
        return _Match(
            f"User asked to forget: {to_third_person(topic).strip(_TRIM)}",
            key=_forget_key(topic),
            importance=1.0,
            forget=True,
        )
    m = re.match(
        r"^(?:请|你)?(?:忘记|忘掉|删除|删掉|不要再记住?|别再记住?)(?:我的|关于)?(.+)$", clause
    )
    if m:
        topic = m.group(1)
        return _Match(
            f"用户要求忘记：{to_third_person(topic).strip(_TRIM)}",
            key=_forget_key(topic),
            importance=1.0,
            forget=True,
        )
    return None


def _rule_preferred_name(clause: str) -> _Match | None:
    m = re.search(
        r"\b(?:please\s+)?call me\s+([\w .'-]{1,40}?)(?:\s+(?:please|from now on))?$",
        clause,
        re.IGNORECASE,
    )
    # "never call me sir" / "不要叫我老王" is an instruction, not a name.
    negated = re.search(
        r"\b(?:never|don'?t|do not|stop)\b|不要|别|不许|不准", clause, re.IGNORECASE
    )
    if m and not negated:
        return _Match(
            f"User wants to be called {m.group(1).strip()}", key="preferred_name", importance=0.9
        )
    m = re.search(r"叫我([\u3400-\u9fffA-Za-z·]{1,8}?)(?:吧|就行了?|就好|好了|即可)?$", clause)
    if m and not negated and not m.group(1).startswith(("了", "去", "来", "做")):
        return _Match(f"用户希望被称为{m.group(1)}", key="preferred_name", importance=0.9)
    return None


def _rule_name(clause: str) -> _Match | None:
    m = re.match(r"^(?:hi,?\s+|hello,?\s+)?my name is\s+([\w .'-]{1,40})$", clause, re.IGNORECASE)
    if m:
        return _Match(f"User's name is {m.group(1).strip()}", key="name", importance=0.8)
    m = re.match(
        r"^(?:你好，?)?(?:我叫|我的名字是|我的名字叫)([\u3400-\u9fffA-Za-z·]{1,8})$", clause
    )
    if m and not m.group(1).startswith(("了", "过")):
        return _Match(f"用户的名字是{m.group(1)}", key="name", importance=0.8)
    return None


def _rule_allergy(clause: str) -> _Match | None:
    m = re.search(
        r"\b(?:i'?m|i am)\s+(?:very\s+|severely\s+)?allergic to\s+(.+)$", clause, re.IGNORECASE
    )
    if m is None:
        m = re.search(r"\bi have an?\s+(.+?)\s+allergy$", clause, re.IGNORECASE)
    if m:
        what = m.group(1).strip(_TRIM)
        return _Match(f"User is allergic to {what}", key=f"allergy.{_slug(what)}", importance=0.95)
    m = re.search(r"我对(.+?)(?:严重|非常|很)?过敏", clause) or re.search(
        r"^我?(?:有)?([\u3400-\u9fff]{1,6}?)(?:严重|非常|很)?过敏$", clause
    )
    if m and "不" not in clause[: m.start(1)]:
        what = m.group(1).strip(_TRIM)
        return _Match(f"用户对{what}过敏", key=f"allergy.{_slug(what)}", importance=0.95)
    return None


def _rule_budget(clause: str) -> _Match | None:
    m = re.search(
        r"\bbudget\s+(?:is\s+|of\s+|=\s*|:\s*)?(?:now\s+|changed to\s+|around\s+|about\s+|up to\s+)?"
        + _AMOUNT,
        clause,
        re.IGNORECASE,
    )
    if m is None:
        m = re.search(
            r"\b(?:change|update|set|raise|increase|lower|reduce|bump)\s+(?:my\s+|the\s+)?budget\s+to\s+"
            + _AMOUNT,
            clause,
            re.IGNORECASE,
        )
    if m:
        return _Match(f"User's budget is {m.group(1).strip()}", key="budget", importance=0.8)
    m = re.search(
        r"预算(?:是|为|有|在|改成|改为|调整到|提高到|降到|大概|大约|只有|最多|:|：|\s)*" + _AMOUNT,
        clause,
    )
    if m:
        return _Match(f"用户的预算是{m.group(1).strip()}", key="budget", importance=0.8)
    return None


def _rule_location(clause: str) -> _Match | None:
    m = re.search(r"\bmy (?:home |shipping |delivery )?address is\s+(.+)$", clause, re.IGNORECASE)
    if m:
        return _Match(f"User's address is {m.group(1).strip(_TRIM)}", key="address", importance=0.8)
    m = re.search(r"我的(?:家庭|收货|家)?地址是(.+)$", clause)
    if m:
        return _Match(f"用户的地址是{m.group(1).strip(_TRIM)}", key="address", importance=0.8)
    m = re.search(
        r"\bi (?:live in|moved to|am based in|'m based in)\s+(.+)$", clause, re.IGNORECASE
    )
    if m:
        return _Match(
            f"User lives in {m.group(1).strip(_TRIM)}", key="address.city", importance=0.7
        )
    m = re.search(r"我(?:现在)?(?:住在|搬到了?|定居在)(.+)$", clause)
    if m:
        return _Match(f"用户住在{m.group(1).strip(_TRIM)}", key="address.city", importance=0.7)
    return None


def _rule_diet(clause: str) -> _Match | None:
    m = re.search(
        r"\b(?:i'?m|i am)\s+(?:a\s+)?(vegetarian|vegan|pescatarian)\b", clause, re.IGNORECASE
    )
    if m:
        return _Match(f"User is {m.group(1).lower()}", key="diet", importance=0.85)
    if re.search(r"我(?:是)?(?:吃素|素食者?)", clause):
        return _Match("用户吃素", key="diet", importance=0.85)
    m = re.search(r"\bi (?:don'?t|do not|never|can'?t|cannot) eat\s+(.+)$", clause, re.IGNORECASE)
    if m:
        what = m.group(1).strip(_TRIM)
        return _Match(f"User does not eat {what}", key=f"diet.avoid.{_slug(what)}", importance=0.85)
    m = re.search(r"我(?:从来)?(?:不吃|不能吃|忌口)(.+)$", clause)
    if m:
        what = m.group(1).strip(_TRIM)
        return _Match(f"用户不吃{what}", key=f"diet.avoid.{_slug(what)}", importance=0.85)
    return None


def _rule_order(clause: str) -> _Match | None:
    m = re.search(
        r"\border\s*(?:number|no\.?|#|id)?\s*(?:is\s*)?[:#]?\s*([A-Z0-9][A-Z0-9-]{3,})\b",
        clause,
        re.IGNORECASE,
    )
    if m and any(ch.isdigit() for ch in m.group(1)):
        number = m.group(1)
        return _Match(
            f"User's order number is {number}", key=f"order.{number.lower()}", importance=0.7
        )
    m = re.search(r"订单(?:号|编号)?(?:是|为|:|：)?\s*([A-Za-z0-9][A-Za-z0-9-]{3,})", clause)
    if m and any(ch.isdigit() for ch in m.group(1)):
        number = m.group(1)
        return _Match(f"用户的订单号是{number}", key=f"order.{number.lower()}", importance=0.7)
    return None


def _slot_correction(clause: str) -> _Match | None:
    """ "我的预算不是3000，是5000" / "my budget is not 3000, it's 5000": the slot's
    own rule on the corrected statement, so the fact keeps its key (``budget``)
    and reconcile supersedes the old value deterministically."""
    m = re.match(r"^(.+?)(?:并)?不是(.+?)[，,]\s*(?:而)?(?:应该)?是(.+)$", clause)
    if m:
        fixed = f"{m.group(1)}是{m.group(3).strip(_TRIM)}"
    else:
        m = re.match(
            r"^(.+?)\s+(?:is not|isn'?t|was not|wasn'?t|is no longer)\s+(.+?),?\s+"
            r"(?:it'?s|it is|but|but it'?s|but it is)\s+(.+)$",
            clause,
            re.IGNORECASE,
        )
        if m is None:
            return None
        fixed = f"{m.group(1)} is {m.group(3).strip(_TRIM)}"
    found = _match_specific(fixed)
    if found is None or found.key is None:
        return None
    return _Match(found.text, found.type, found.key, max(found.importance, 0.85), found.forget)


def _rule_correction(clause: str) -> _Match | None:
    slot = _slot_correction(clause)
    if slot is not None:
        return slot
    m = re.search(
        r"\bit(?:'?s| is) (?:called|spelled|named)\s+(.+?),?\s+not\s+(.+)$"
        r"|\bit(?:'?s| is)\s+(.+?),?\s+not\s+(.+)$",
        clause,
        re.IGNORECASE,
    )
    if m:
        right = (m.group(1) or m.group(3)).strip(_TRIM)
        wrong = (m.group(2) or m.group(4)).strip(_TRIM)
        return _Match(
            f"The correct name is {right}, not {wrong}",
            key=f"correction.{_slug(wrong)}",
            importance=0.8,
        )
    m = re.search(r"不是(.+?)[，,]\s*(?:而)?(?:应该)?是(.+)$", clause)
    if m:
        wrong, right = m.group(1).strip(_TRIM), m.group(2).strip(_TRIM)
        return _Match(
            f"正确的是{right}，不是{wrong}", key=f"correction.{_slug(wrong)}", importance=0.8
        )
    return None


_LANGUAGES_EN = "english|chinese|mandarin|cantonese|japanese|korean|french|german|spanish"
_LANGUAGES_ZH = "中文|英文|英语|汉语|普通话|粤语|日语|日文|韩语|法语|德语"
_NEGATED = re.compile(r"\b(?:don'?t|do not|never|stop)\b|不要|别|不用", re.IGNORECASE)


def _rule_language(clause: str) -> _Match | None:
    if _NEGATED.search(clause):
        return None
    m = re.search(
        r"\b(?:reply|respond|answer|talk|speak|write|communicate|chat)(?:\s+to me)?\s+(?:only\s+)?in\s+"
        rf"({_LANGUAGES_EN})\b|\bi prefer\s+({_LANGUAGES_EN})\b",
        clause,
        re.IGNORECASE,
    )
    if m:
        language = (m.group(1) or m.group(2)).capitalize()
        return _Match(
            f"User wants replies in {language}",
            MemoryType.PROCEDURAL,
            key="preference.language",
            importance=0.85,
        )
    m = re.search(
        rf"(?:用|说|讲)({_LANGUAGES_ZH})(?:来)?(?:回复|回答|跟我|和我|交流|沟通|聊天?|写)"
        rf"|(?:回复|回答)(?:请|都|一律)?用({_LANGUAGES_ZH})",
        clause,
    )
    if m:
        return _Match(
            f"用户希望用{m.group(1) or m.group(2)}交流",
            MemoryType.PROCEDURAL,
            key="preference.language",
            importance=0.85,
        )
    return None


_CARRIERS_ZH = "顺丰|京东|中通|圆通|申通|韵达|EMS|邮政|德邦|极兔"


def _rule_shipping(clause: str) -> _Match | None:
    if _NEGATED.search(clause):
        return None
    m = re.search(
        r"\b(?:ship|send|deliver|post)(?:ping)?\s+(?:it\s+|them\s+|my\s+orders?\s+|everything\s+|orders\s+)?"
        r"(?:with|via|by|through|using)\s+([A-Z][\w&.\-]*(?:\s+[A-Z][\w&.\-]*){0,2})",
        clause,
        re.IGNORECASE,
    )
    if m and m.group(1).lower() not in ("the", "a", "my", "post", "mail"):
        return _Match(
            f"User prefers shipping with {m.group(1).strip()}",
            key="shipping.carrier",
            importance=0.75,
        )
    m = re.search(
        rf"(?:快递|发货|寄件?|配送)?(?:请|都|只|一律)?(?:用|走|发|寄)({_CARRIERS_ZH})", clause
    )
    if m and re.search(r"快递|发货|寄|配送|发" + m.group(1), clause):
        return _Match(f"用户希望快递用{m.group(1)}", key="shipping.carrier", importance=0.75)
    return None


def _rule_contact(clause: str) -> _Match | None:
    m = re.search(
        r"\b(?:contact|reach|notify|message|ping)\s+me\s+(?:only\s+)?(?:by|via|through|on|over)\s+"
        r"(e-?mail|phone|text|sms|wechat|whatsapp|telegram|signal)\b"
        r"|\b(e-?mail|text|message|wechat)\s+me\s+instead\b",
        clause,
        re.IGNORECASE,
    )
    if m and not _NEGATED.search(clause[: m.start()]):
        channel = (m.group(1) or m.group(2)).lower().replace("e-mail", "email")
        return _Match(
            f"User prefers to be contacted by {channel}", key="contact.channel", importance=0.75
        )
    m = re.search(
        r"(?:用|通过|发|走)(微信|短信|邮件|邮箱|电话|QQ|钉钉)(?:来)?(?:联系|通知|找)我"
        r"|联系我(?:请|的话)?(?:用|发|打|走)(微信|短信|邮件|电话|QQ|钉钉)",
        clause,
    )
    if m and not re.search(r"不要|别", clause[: m.start()]):
        return _Match(
            f"用户希望通过{m.group(1) or m.group(2)}联系", key="contact.channel", importance=0.75
        )
    return None


def _rule_like(clause: str) -> _Match | None:
    m = re.search(
        r"\bi (?:really |much |also )?(like|love|prefer|enjoy|hate|dislike|can't stand|don'?t like|do not like)\s+(.+)$",
        clause,
        re.IGNORECASE,
    )
    if m:
        verb = m.group(1).lower()
        verb = {"don't like": "does not like", "dont like": "does not like", "do not like": "does not like",
                "can't stand": "cannot stand"}.get(verb, _EN_VERBS_3RD.get(verb, verb))  # fmt: skip
        return _Match(f"User {verb} {to_third_person(m.group(2)).strip(_TRIM)}", importance=0.6)
    m = re.search(
        r"我(?:很|最|特别|比较|也|真的|非常)?(不喜欢|更喜欢|喜欢|讨厌|偏好|爱吃|爱喝|不爱)(.+)$",
        clause,
    )
    if m:
        return _Match(f"用户{m.group(1)}{to_third_person(m.group(2)).strip(_TRIM)}", importance=0.6)
    return None


def _rule_instruction(clause: str) -> _Match | None:
    m = re.match(r"^(?:please\s+)?(don'?t|do not|never|always|stop)\s+(.+)$", clause, re.IGNORECASE)
    if m:
        return _Match(
            f"User's standing instruction: {m.group(1).lower()} {m.group(2).strip(_TRIM)}",
            type=MemoryType.PROCEDURAL,
            importance=0.8,
        )
    m = re.match(r"^(?:请你?|你)?(不要|别再?|千万别|永远不要|总是|一定要|每次都要?)(.+)$", clause)
    if m:
        return _Match(
            f"用户的长期要求：{m.group(1)}{m.group(2).strip(_TRIM)}",
            type=MemoryType.PROCEDURAL,
            importance=0.8,
        )
    return None


# Specific facts first: they carry a key, so later values supersede earlier ones.
_SPECIFIC_RULES: tuple[_Rule, ...] = (
    _rule_forget,
    _rule_language,
    _rule_contact,
    _rule_shipping,
    _rule_preferred_name,
    _rule_name,
    _rule_correction,
    _rule_allergy,
    _rule_budget,
    _rule_location,
    _rule_diet,
    _rule_order,
    _rule_like,
    _rule_instruction,
)

_REMEMBER = re.compile(
    r"^(?:please\s+|and\s+)?(?:remember|keep in mind|note|don't forget|do not forget)\s*(?:that\s+|:\s*)?(.+)$"
    r"|^(?:请|你要|要)?(?:记住|记一下|记得|别忘了|不要忘了)[，,：:]?\s*(.+)$",
    re.IGNORECASE,
)
_FROM_NOW_ON = re.compile(
    r"^(?:from now on|going forward|in the future|henceforth)[,:]?\s+(.+)$"
    r"|^(?:.{0,6}?)(?:以后|今后|从现在开始|从今以后|往后)[，,：:]?\s*(.+)$",
    re.IGNORECASE,
)
# What a standing instruction starts with once "from now on"/"以后" is stripped.
_IMPERATIVE = re.compile(
    r"^(?!(?:i|we|you and i)\b)[a-z]"
    r"|^(?:请|不要|别|要|都|每次|总是|一律|必须|只|用|说|回复|回答|给我|称呼|记得|先|务必)",
    re.IGNORECASE,
)
_CORRECTION_PREFIX = re.compile(
    r"^(?:actually|correction|sorry|no|wait)[,:]?\s+(?:i meant\s+)?(.+)$|^(?:其实|更正一下|更正|纠正一下|不对)[，,：:]?\s*(.+)$",
    re.IGNORECASE,
)


# --- time: bounded facts and events (needs the message time) -----------------------

_EVENTS: tuple[tuple[str, str], ...] = (
    (r"\bflights?\b|航班|飞机|机票", "flight"),
    (r"\binterview\b|面试", "interview"),
    (r"\b(?:appointment|dentist|doctor)\b|预约|看医生|看牙|复诊", "appointment"),
    (r"\bexam\b|考试", "exam"),
    (r"\bsurgery\b|\boperation\b|手术", "surgery"),
    (r"\bwedding\b|婚礼", "wedding"),
    (r"\bcheck-?up\b|体检", "checkup"),
    (r"\bdeadline\b|\bis due\b|截止", "deadline"),
    (r"\bmeeting\b|会议|开会", "meeting"),
    (r"\bparty\b|聚会|派对", "party"),
    (r"\bmove out\b|\bmoving\b|搬家", "move"),
)
# A state that holds for a while: "I'm travelling", "我在出差", "I'm in Tokyo".
_STATES: tuple[tuple[str, str], ...] = (
    (r"travel|trip|abroad|出差|旅行|旅游|出国", "status.travel"),
    (r"vacation|holiday|\boff\b|\baway\b|休假|放假|请假|不在", "status.away"),
    (r"\bsick\b|\bill\b|生病|感冒|不舒服|住院", "status.health"),
    (r"working from home|\bwfh\b|在家办公|居家办公", "status.work_location"),
    (r"\bbusy\b|\bin meetings\b|很忙|忙|开会", "status.busy"),
    (
        r"\b(?:i'?m|i am|i'll be|i will be|staying)\s+(?:\w+\s+)?in\s+[A-Z]|我(?:都|会|将)?在[\u3400-\u9fff]{2,}",
        "status.location",
    ),
)
_UNTIL_OR_NEGATION = re.compile(
    r"\b(?:until|till|til|through|not|no|never|cancel(?:led|ed)?)\b|n't\b|之前|以前|直到|为止|不|没|取消",
    re.IGNORECASE,
)
_FIRST_PERSON_STATE = re.compile(
    r"\b(?:i'?m|i am|i'll be|i will be|i'?ve been|i have been|we'?re|we are)\b|我", re.IGNORECASE
)


def _topic(clause: str, table: tuple[tuple[str, str], ...]) -> str | None:
    for pattern, name in table:
        if re.search(pattern, clause, re.IGNORECASE):
            return name
    return None


def _last_day(expires_at: datetime) -> str:
    # expires_at is exclusive (the next midnight); show the last day it holds.
    return (expires_at - timedelta(microseconds=1)).date().isoformat()


def with_time(found: _Match | None, clause: str, now: datetime) -> _Match | None:
    """Add the time dimension to a clause's match, relative to the message time ``now``.

    - An event ("my flight is on 12 Dec", "下周三面试") becomes an episodic
      memory with ``event_time`` and key ``event.<kind>``, so a rescheduled
      flight supersedes the old date.
    - A time-bounded statement ("I'm travelling this week", "这周我在出差",
      "until Friday") gets ``expires_at``; its key lives under ``status.`` (or
      ``temporary.<key>`` for a profile slot), so a temporary state never
      supersedes the permanent fact ("I'm vegetarian this week" leaves ``diet``).
    """
    if found is not None and (found.forget or (found.type is MemoryType.PROCEDURAL and found.key)):
        return found
    event = _topic(clause, _EVENTS)
    # "until Friday I'm in meetings" bounds a state; "周五不开会" is a cancelled
    # or recurring habit: neither is a dated event.
    dated_event = event is not None and not _UNTIL_OR_NEGATION.search(clause)
    if dated_event and event is not None and (found is None or found.key is None):
        moment = moment_of(clause, now)
        if moment is not None:
            statement = _sentence(to_third_person(clause))
            suffix = (
                f"（{moment.date().isoformat()}）"
                if _has_cjk(clause)
                else f" ({moment.date().isoformat()})"
            )
            return _Match(
                statement + suffix, MemoryType.EPISODIC, f"event.{event}", 0.75, event_time=moment
            )
    bound = bound_of(clause, now)
    if bound is None:
        return found
    if found is None:
        # Only known states: "I'm tired today" is chit-chat, not a memory.
        key = _topic(clause, _STATES)
        if key is None or not _FIRST_PERSON_STATE.search(clause):
            return None
        found = _Match(_sentence(to_third_person(clause)), key=key, importance=0.7)
    elif found.key is not None and found.type is not MemoryType.PROCEDURAL:
        found = replace(found, key=f"temporary.{found.key}")
    suffix = (
        f"（有效至{_last_day(bound)}）" if _has_cjk(found.text) else f" (until {_last_day(bound)})"
    )
    return replace(found, text=found.text + suffix, expires_at=bound)


def _first(match: re.Match[str]) -> str:
    return next(g for g in match.groups() if g)


def _match_specific(clause: str) -> _Match | None:
    for rule in _SPECIFIC_RULES:
        found = rule(clause)
        if found is not None:
            return found
    return None


def _is_question(clause: str, raw: str) -> bool:
    if raw.rstrip().endswith(("?", "？")):
        return True
    if re.search(r"[吗呢]$", clause):
        return True
    return bool(_QUESTION_START.match(clause)) and not clause.lower().startswith(
        ("do not", "don't")
    )


def match_clause(clause: str) -> _Match | None:
    """Apply the rules to one clause; ``None`` when nothing worth keeping."""
    clause = clause.strip(_TRIM)
    if not clause:
        return None
    wrapped = _REMEMBER.match(clause)
    if wrapped:
        inner = _first(wrapped).strip(_TRIM)
        found = _match_specific(inner)
        if found is not None:
            return _Match(
                found.text, found.type, found.key, max(found.importance, 0.9), found.forget
            )
        if _has_cjk(inner):
            return _Match(f"用户要求记住：{to_third_person(inner)}", importance=0.9)
        return _Match(f"User asked to remember: {to_third_person(inner)}", importance=0.9)
    wrapped = _FROM_NOW_ON.match(clause)
    if wrapped:
        inner = _first(wrapped).strip(_TRIM)
        found = _match_specific(inner)
        if found is not None:
            return _Match(
                found.text, found.type, found.key, max(found.importance, 0.85), found.forget
            )
        if not _IMPERATIVE.match(inner):
            return None  # "以后我们再聊" is a plan, not a standing instruction
        if _has_cjk(inner):
            return _Match(f"用户的长期要求：{inner}", MemoryType.PROCEDURAL, importance=0.85)
        return _Match(
            f"User's standing instruction: {inner}", MemoryType.PROCEDURAL, importance=0.85
        )
    wrapped = _CORRECTION_PREFIX.match(clause)
    if wrapped:
        found = _match_specific(_first(wrapped).strip(_TRIM))
        if found is not None:
            return _Match(
                found.text, found.type, found.key, max(found.importance, 0.8), found.forget
            )
    return _match_specific(clause)


class RuleBasedExtractor:
    """Offline extractor: regular rules over the user's own messages, no model.

    Args:
        policy: privacy policy applied to message text before matching; the
            default masks every identifier kind.
        min_importance: candidates below this are dropped (default 0.5).
        confidence: confidence recorded on every candidate (rules are precise
            but narrow, default 0.9).
        clock: returns "now" as an aware datetime (default: UTC wall clock).
            Relative times ("this week", "明天") are resolved against the
            message's own time when it carries one (``additional_kwargs
            ["created_at"]``: ISO 8601 or epoch seconds), else against
            ``clock()``, in the clock's time zone; a fixed clock makes
            extraction deterministic.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> ex = RuleBasedExtractor()
        >>> [(c.key, c.text) for c in ex.extract([HumanMessage("my budget is 3000", id="m1")])]
        [('budget', "User's budget is 3000")]
    """

    def __init__(
        self,
        *,
        policy: PrivacyPolicy | None = None,
        min_importance: float = 0.5,
        confidence: float = 0.9,
        clock: Clock | None = None,
    ) -> None:
        if not 0.0 <= min_importance <= 1.0:
            raise ConfigurationError(
                f"RuleBasedExtractor(min_importance={min_importance!r}); use a value between 0 and 1."
            )
        if not 0.0 <= confidence <= 1.0:
            raise ConfigurationError(
                f"RuleBasedExtractor(confidence={confidence!r}); use a value between 0 and 1."
            )
        self.policy = policy
        self.min_importance = min_importance
        self.confidence = confidence
        self.clock = clock or wall_clock

    def _message_time(self, message: BaseMessage) -> datetime:
        return message_time(message, self.clock)

    def extract(self, messages: Sequence[BaseMessage]) -> list[CandidateMemory]:
        """Candidates from the human messages of ``messages`` (in order)."""
        ids = message_ids_for(messages)
        out: list[CandidateMemory] = []
        seen: set[tuple[str | None, str]] = set()
        for message, message_id in zip(messages, ids, strict=True):
            if not isinstance(message, HumanMessage):
                continue
            try:
                text = redact_text(message_text(message), self.policy)
            except RedactionRejectedError:
                continue  # the policy forbids keeping anything from this message
            if _JOKE.search(text):
                continue
            message_time = self._message_time(message)
            for raw in _CLAUSE_SPLIT.split(text):
                clause = raw.strip(_TRIM)
                if not clause or _is_question(clause, raw):
                    continue
                found = with_time(match_clause(clause), clause, message_time)
                if found is None or (found.importance < self.min_importance and not found.forget):
                    continue
                statement = _sentence(found.text)
                if (found.key, statement) in seen:
                    continue
                seen.add((found.key, statement))
                out.append(
                    CandidateMemory(
                        text=statement,
                        type=found.type,
                        key=found.key,
                        importance=found.importance,
                        source=MemorySource.USER_STATED,
                        confidence=self.confidence,
                        event_time=found.event_time,
                        expires_at=found.expires_at,
                        origin_message_ids=(message_id,),
                        forget=found.forget,
                        observed_at=message_time,
                    )
                )
        return out

    async def aextract(self, messages: Sequence[BaseMessage]) -> list[CandidateMemory]:
        """Same as ``extract`` (pure CPU work, no I/O)."""
        return self.extract(messages)
