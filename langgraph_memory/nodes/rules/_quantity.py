"""A value that moved: the same thing counted again with another number.

"Dad is on Glycomet 500" then "the doctor raised dad's Glycomet to 1000"; "25 tables
for the banquet" then "make it 28 tables"; "额度是两万" then "额度提到三万了". No
update word is needed and none is listed: two pieces that name the same thing
(``anchors``) with different numbers say that the value changed, and the newer one
stands. Dates and clock times are left to the time rules; codes and ids ("WS-44817",
"order 12345") are names, not amounts.

Example:
    >>> moves_quantity("make it 28 tables", "we're doing 25 tables for the banquet")
    True
    >>> moves_quantity("my son is 7", "I have 2 kids")
    False
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

from langgraph_memory._redact_text import PLACEHOLDER_PATTERN
from langgraph_memory.nodes.rules._evidence import DATE_OR_TIME, LABEL
from langgraph_memory.nodes.rules._text import cjk_pairs, word_set

_ZH_DIGITS: Final = "零一二两三四五六七八九十百千万萬半"
# An amount: a currency sign may come first, a unit may stick to it ("$55", "20kg", "5%",
# "500M", "5k", "两万", "半片"). Not part of a code ("HI-73310", "A09876543", "#12345").
_AMOUNT: Final = re.compile(
    r"(?<![A-Za-z0-9#\-_/])(?:rs\.?\s?|₹|\$|£|€|¥|s\$|rm\s?)?"
    r"(\d+(?:[.,]\d+)*|["
    + _ZH_DIGITS
    + r"]+(?=[片粒颗顆毫克斤公桌张張个個块塊元蚊万萬千百岁歲人位]))"
    r"(k|m|g|x|\s?(?:kg|mg|ml|gb|mb|%))?(?![A-Za-z0-9\-_/])",
    re.IGNORECASE,
)
# Long digit strings written without separators are ids or phone numbers; 19xx/20xx a year.
_ID_LIKE: Final = re.compile(r"^\d{5,}$|^(?:19|20)\d\d$")
_MEASURE: Final = re.compile(r"[片粒颗顆毫克斤公桌张張个個块塊元蚊万萬千百岁歲人位次]")
# More of the same is not a new value: "order 2 more shirts", "再加两桌".
_ADDS: Final = re.compile(
    r"\b(?:more|another|extra|additional|also|plus|as well)\b|再|又|另外|多加", re.IGNORECASE
)
_CLOCK: Final = re.compile(
    r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\b\d{1,2}\s*(?:to|-|till|until)\s*\d{1,2}\b(?=\s*(?:pm|am|o'?clock|shift))",
    re.IGNORECASE,
)


def singular(word: str) -> str:
    """ "tables" -> "table", "batteries" -> "battery": enough for two mentions of one thing
    to meet (the keyword index's stemmer lives in ``longterm``, which this light module
    must not import: the rules run without the long-term extra)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


# Words that never tie two amounts together: time ("3 days" counts time, not the thing;
# weekdays and months name dates) and words that name no thing of their own.
_NO_ANCHOR: Final = frozenset(
    singular(w)
    for w in word_set(
        "day days week weeks month months year years hour hours minute minutes times time "
        "monday tuesday wednesday thursday friday saturday sunday today tomorrow tonight "
        "january february march april june july august september october november december "
        "twice once every per each about around only just "
        # "the 139 a year one", "make it 28", "the 60 dollar one".
        "one ones thing things stuff bit lot kind sort make made get got take took put set go "
        "went come came want need dollar dollars buck bucks euro euros pound pounds rupee "
        "rupees price total hourly daily weekly monthly yearly "
        # Function words of three letters or more (shorter ones never count).
        "the and for are was were our your his her its this that these those with from been "
        "have has had you they she them not yes can will would could should but all any now "
        "who what which when where than then very just also please"
    )
)
# Characters of grammar: a pair holding one ties any two Chinese sentences together.
_ZH_FUNCTION: Final = re.compile(
    r"[了的个個是到成为為每次吃在有我你他她佢们們这這那嗰咗吗嗎呢吧啊呀就都也还還要改换換提升加涨漲降减減调調现而今]"
)
_SUBJECT: Final = re.compile(r"\buser(?:'s)?\b|用户|用戶", re.IGNORECASE)


class Amount(NamedTuple):
    """One number of a piece: its value as compared ("5000.0"; Chinese numerals as
    written), its unit or currency ("kg", "$", "万"; "" when none) and the words beside it."""

    value: str
    unit: str
    anchors: frozenset[str]


def _normal(number: str, unit: str) -> str:
    digits = number.replace(",", "")
    if unit.lower() == "k" and re.fullmatch(r"\d+(?:\.\d+)?", digits):
        return str(float(digits) * 1000)
    try:
        return str(float(digits))
    except ValueError:
        return digits  # Chinese numerals compare as written


def amounts(piece: str) -> list[Amount]:
    """The amounts of one piece, each with the words next to it (Latin: content words
    within four either side; Chinese: the piece's word pairs and the measure word)."""
    body = _CLOCK.sub(" ", DATE_OR_TIME.sub(" ", LABEL.sub("", piece)))
    # A masked value ("[PHONE:*5678]") is no amount, and the fact's own subject ("User's",
    # "用户的") names nothing the user counts.
    body = _SUBJECT.sub(" ", re.sub(PLACEHOLDER_PATTERN, " ", body))
    out: list[Amount] = []
    for m in _AMOUNT.finditer(body):
        number, unit = m.group(1), (m.group(2) or "")
        if _ID_LIKE.match(number):
            continue
        left = re.findall(r"[a-z]+", body[: m.start()].lower())[-4:]
        right = re.findall(r"[a-z]+", body[m.end() :].lower())[:4]
        anchors = {singular(w) for w in left + right if len(w) > 2}
        anchors -= _NO_ANCHOR
        anchors |= {p for p in cjk_pairs(body) if not _ZH_FUNCTION.search(p)}
        after = body[m.end() : m.end() + 1]
        if after and _MEASURE.match(after):
            unit = unit or after
        unit = unit.strip()
        sign = m.group(0)[: m.start(1) - m.start()].strip().lower()
        out.append(Amount(_normal(number, unit), (sign + unit).lower(), frozenset(anchors)))
    return out


def moves_quantity(update: str, old: str) -> bool:
    """Does ``update`` give something ``old`` counts a different number (same thing named
    beside both numbers, same unit where both have one)? A question asks and more of the
    same adds: neither changes anything. An update that says the old number again moves it
    only where the change started from it ("from 5,000 to 8,000")."""
    body = LABEL.sub("", update).strip()
    if body.endswith(("?", "？", "吗", "嗎")) or _ADDS.search(body):
        return False
    new, before = amounts(update), amounts(old)
    for b in before:
        same = [
            a for a in new if a.anchors & b.anchors and not (a.unit and b.unit and a.unit != b.unit)
        ]
        restated = any(a.value == b.value for a in same)
        if any(a.value != b.value for a in same) and (not restated or _FROM.search(body)):
            return True
    return False


# "from 5,000 to 8,000", "从两万提到三万": the old number said as where the change started.
_FROM: Final = re.compile(r"\bfrom\b|从|從|由", re.IGNORECASE)
