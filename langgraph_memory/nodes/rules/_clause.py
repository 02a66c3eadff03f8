"""One segment -> at most one ``Match``: wrappers, corrections, then the slot rules.

Every segment is matched by the first rule that fits; wrappers such as
"remember that", "以后", "actually", "scratch that" are stripped and the rest is
matched again, so "以后叫我老王" becomes the ``preferred_name`` fact, not a
generic instruction, and "scratch that, make it 6 people" updates
``group_size``.

A correction keeps the slot's key, so reconcile supersedes the old value:
"我的预算不是3000，是5000" and "my budget is not 3000, it's 5000" are ``budget``.
Those patterns span a comma, so ``match_sentence`` tries them on the whole
sentence before it is cut into segments.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Final

from langgraph_memory.nodes.rules._business import BUSINESS_RULES, LATE_RULES
from langgraph_memory.nodes.rules._forget import rule_forget
from langgraph_memory.nodes.rules._match import Match, Rule
from langgraph_memory.nodes.rules._preferences import (
    LIKE_RULES,
    PREFERENCE_RULES,
    keyed_answer_style,
)
from langgraph_memory.nodes.rules._profile import PROFILE_RULES
from langgraph_memory.nodes.rules._text import (
    TRIM,
    has_cjk,
    normalize_dialect,
    slug,
    strip_fillers,
    to_third_person,
    uncleft,
    uncleft_en,
)
from langgraph_memory.types import MemoryType


def _slot_correction(sentence: str) -> Match | None:
    """ "我的预算不是3000，是5000" / "my budget is not 3000, it's 5000": the slot's
    own rule on the corrected statement, so the fact keeps its key."""
    m = re.search(r"^(.*?)(?:并)?不是(.+?)(?:[，,]\s*|\s*)(?:而)?(?:应该|其实)?是(.+)$", sentence)
    if m:
        subject = m.group(1)
        fixed = f"{subject}是{m.group(3).strip(TRIM)}" if subject else ""
    else:
        m = re.search(
            r"^(.+?)\s+(?:is not|isn'?t|was not|wasn'?t|is no longer)\s+(.+?),?\s+"
            r"(?:it'?s|it is|but|but it'?s|but it is|rather)\s+(.+)$",
            sentence,
            re.IGNORECASE,
        )
        if m is None:
            return None
        fixed = f"{m.group(1)} is {m.group(3).strip(TRIM)}"
    if not fixed:
        return None
    found = match_specific(fixed)
    if found is None or found.key is None or found.forget:
        return None
    return replace(found, importance=max(found.importance, 0.85), weak=False)


def _rule_correction(segment: str) -> Match | None:
    slot = _slot_correction(segment)
    if slot is not None:
        return slot
    if re.search(r"allerg|react to|过敏|過敏", segment, re.IGNORECASE):
        return None  # an allergy corrected is the allergy rules' (a new one, one taken back)
    m = re.search(
        r"\bit(?:'?s| is) (?:called|spelled|named)\s+(.+?),?\s+not\s+(.+)$"
        r"|\bit(?:'?s| is)\s+(.+?),?\s+not\s+(.+)$",
        segment,
        re.IGNORECASE,
    )
    if m:
        right = (m.group(1) or m.group(3)).strip(TRIM)
        wrong = (m.group(2) or m.group(4)).strip(TRIM)
        return Match(
            f"The correct name is {right}, not {wrong}",
            key=f"correction.{slug(wrong)}",
            importance=0.8,
        )
    m = re.search(r"不是(.+?)[，,]\s*(?:而)?(?:应该)?是(.+)$", segment)
    if m:
        wrong, right = m.group(1).strip(TRIM), m.group(2).strip(TRIM)
        return Match(
            f"正确的是{right}，不是{wrong}", key=f"correction.{slug(wrong)}", importance=0.8
        )
    return None


# Specific facts first: they carry a key, so later values supersede earlier ones.
SPECIFIC_RULES: Final[tuple[Rule, ...]] = (
    rule_forget,
    PROFILE_RULES[0],  # reply language before names ("reply in English")
    *PREFERENCE_RULES,
    *PROFILE_RULES[1:3],  # preferred name, name
    _rule_correction,
    *PROFILE_RULES[3:],  # allergy, health, diet, location
    *BUSINESS_RULES,
    *LIKE_RULES,
    *LATE_RULES,
)


def match_specific(segment: str) -> Match | None:
    for rule in SPECIFIC_RULES:
        found = rule(segment)
        if found is not None:
            return keyed_answer_style(found)
    return None


_REMEMBER: Final = re.compile(
    r"^(?:please\s+|and\s+|also\s+)?(?:remember|keep in mind|note|make a note|don't forget|do not forget)"
    r"(?!\s+to\b)\s*(?:that\s+|:\s*|,\s*)?(.+)$"
    r"|^(?:请|你要|要|帮我)?(?:记住|记一下|记得|别忘了|不要忘了|记下)[，,：:]?\s*(.+)$",
    re.IGNORECASE,
)
_PARTICLES: Final = "呀啊吖喔哦啦喇嘛呢哈㗎囉咯吧"
_FROM_NOW_ON: Final = re.compile(
    r"^(?:from now on|going forward|in the future|henceforth|for future reference)[,:]?\s+(.+)$"
    r"|^(?:.{0,6}?)(?:以后|今后|从现在开始|从今以后|往后)[，,：:]?\s*(.+)$",
    re.IGNORECASE,
)
# What a standing instruction starts with once "from now on"/"以后" is stripped.
_IMPERATIVE: Final = re.compile(
    r"^(?!(?:i|we|you and i)\b)[a-z]"
    r"|^(?:请|不要|别|要|都|每次|总是|一律|必须|只|用|说|回复|回答|给我|称呼|记得|先|务必)"
    # "以后有事直接发短信", "以后同我倾偈用广东话": a condition or an addressee, then the ask.
    r"|^(?:有(?:什么|咩|啥)?事(?:就|请|的话)?|直接|跟我|同我|和我|对我)"
    # "以后帮我排 meeting 不要放周五下午": an errand with a standing rule in it.
    r"|^(?:帮我|给我)[^，,。]{0,16}?(?:不要|别|都|只|先|一律)"
    # "以后发货别用中通", "以后快递都放前台": what it is about, then the ask.
    r"|^(?![我咱你他她])[\u4e00-\u9fff]{1,6}(?:不要|别|都要|只要|只用|一律|请)",
    re.IGNORECASE,
)
_CORRECTION_PREFIX: Final = re.compile(
    r"^(?:actually|correction|sorry|no|wait|oops|my bad|scratch that|i mean|i meant|rather|"
    r"let me correct (?:that|myself)|update|small change|change of plans?)[,:!]?\s+(?:i meant\s+|it'?s\s+)?(.+)$"
    r"|^(?:其实|更正一下|更正|纠正一下|不对|说错了|我说错了|改一下|应该是|变一下|计划有变)[，,：:]?\s*(.+)$",
    re.IGNORECASE,
)


def _first(match: re.Match[str]) -> str:
    return next(g for g in match.groups() if g)


def _stronger(found: Match, importance: float) -> Match:
    return replace(found, importance=max(found.importance, importance))


def match_clause(segment: str) -> Match | None:
    """Apply the rules to one segment; ``None`` when nothing worth keeping.

    Example:
        >>> match_clause("Oh and btw, scratch that, make it 6 people").key
        'group_size'
        >>> match_clause("我唔食牛肉").text
        '用户不吃牛肉'
    """
    segment = uncleft(uncleft_en(normalize_dialect(strip_fillers(segment))))
    if not segment:
        return None
    wrapped = _REMEMBER.match(segment)
    if wrapped:
        # "記住呀": the ask with only a particle after it remembers nothing new.
        inner = strip_fillers(_first(wrapped)).strip(TRIM + _PARTICLES)
        found = match_specific(inner)
        if found is not None:
            return _stronger(found, 0.9)
        if not inner:
            return None
        if has_cjk(inner):
            return Match(f"用户要求记住：{to_third_person(inner)}", importance=0.9)
        return Match(f"User asked to remember: {to_third_person(inner)}", importance=0.9)
    wrapped = _FROM_NOW_ON.match(segment)
    if wrapped:
        inner = strip_fillers(_first(wrapped))
        found = match_specific(inner)
        if found is not None:
            return _stronger(found, 0.85)
        if not inner or not _IMPERATIVE.match(inner):
            return None  # "以后我们再聊" is a plan, not a standing instruction
        contact = _new_contact(inner)
        if contact is not None:
            return contact
        if has_cjk(inner):
            return Match(f"用户的长期要求：{inner}", MemoryType.PROCEDURAL, importance=0.85)
        return Match(
            f"User's standing instruction: {inner}", MemoryType.PROCEDURAL, importance=0.85
        )
    wrapped = _CORRECTION_PREFIX.match(segment)
    if wrapped:
        found = match_specific(strip_fillers(_first(wrapped)))
        if found is not None:
            return _stronger(found, 0.8)
    return match_specific(segment)


# "以后用 [EMAIL:@x.com]", "from now on use [PHONE:*1234]": a new contact detail, the
# slot's value (it supersedes the old one), not a standing instruction.
_USE_CONTACT: Final = re.compile(
    r"^(?:请|請)?(?:用|用返|改用|发到|發到|寄到|打|use|send (?:it |them |everything )?to|email|call|text)\s*"
    r"(\[(EMAIL|PHONE)(?::[^\]]*)?\])(?:[^\w\[]*)$",
    re.IGNORECASE,
)


def _new_contact(inner: str) -> Match | None:
    m = _USE_CONTACT.match(inner.strip())
    if m is None:
        return None
    value, kind = m.group(1), "email" if m.group(2) == "EMAIL" else "phone"
    if has_cjk(inner):
        text = f"用户的{'邮箱' if kind == 'email' else '电话'}是{value}"
    else:
        text = f"User's {'email' if kind == 'email' else 'phone number'} is {value}"
    return Match(text, key=kind, importance=0.7)


# A new number or address said across a comma: "got a new phone number, it's [PHONE]",
# "new email: [EMAIL]". Cut at the comma, neither half names the slot and its value.
_NEW_CONTACT_SENTENCE: Final = re.compile(
    r"\bnew (?:(phone|mobile|cell|contact|whatsapp) )?(number|no\.?|email|e-mail)(?: address)?\b"
    r"[^\[]{0,24}?(\[(?:PHONE|EMAIL)(?::[^\]]*)?\])",
    re.IGNORECASE,
)


def match_sentence(sentence: str) -> Match | None:
    """A correction that spans a comma ("不是3000，是5000"), or a new contact detail
    ("got a new phone number, it's ..."), tried on the whole sentence."""
    text = normalize_dialect(strip_fillers(sentence))
    prefixed = _CORRECTION_PREFIX.match(text)
    found = _slot_correction(_first(prefixed) if prefixed else text)
    if found is not None:
        return found
    m = _NEW_CONTACT_SENTENCE.search(text)
    if m is None or len(re.findall(r"\[(?:PHONE|EMAIL)", text)) != 1:
        return None
    if not re.search(r"[,;，；:：-]", text[m.start() : m.start(3)]):
        return None  # "my new mobile number is ...": one clause, read by the clause rules
    kind = "email" if m.group(3).startswith("[EMAIL") else "phone"
    if (kind == "email") != m.group(2).lower().startswith("e"):
        return None  # "new number, email me at ..." names one slot and gives the other
    label = "email" if kind == "email" else "phone number"
    return Match(f"User's {label} is {m.group(3)}", key=kind, importance=0.7)
