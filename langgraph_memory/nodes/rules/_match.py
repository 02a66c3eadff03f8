"""What a rule returns: one ``Match`` (a statement, its slot key and its time)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from langgraph_memory.nodes.rules._text import TRIM
from langgraph_memory.types import MemoryType


@dataclass(frozen=True, slots=True)
class Match:
    """One fact a rule found in a segment.

    ``weak`` marks the generic "my X is Y" rule: a dated event in the same
    segment wins over it ("my flight is on 12 Dec" is ``event.flight``).
    """

    text: str
    type: MemoryType = MemoryType.SEMANTIC
    key: str | None = None
    importance: float = 0.6
    forget: bool = False
    event_time: datetime | None = None
    expires_at: datetime | None = None
    weak: bool = False
    # The user's own words it came from (``read_turn`` sets it), kept as evidence
    # when the fact is below the extractor's importance bar.
    segment: str = ""


Rule = Callable[[str], "Match | None"]

# Where a value stops: the next clause, a reason, a politeness tail.
_EN_VALUE_STOP: Final = re.compile(
    r"\s*(?:[,;(]|\b(?:but|so|because|since|which|who|please|thanks|thank you|though|although|"
    r"now|anymore|any more|too|as well|from now on|going forward|right now|these days|lately|"
    r"and (?:i|my|we|our|please|also)|if you|when you|for (?:now|the record)|btw|by the way|"
    r"last (?:week|month|year|night)|yesterday|today|tomorrow|tonight|ago|this (?:week|month|year|morning)|"
    r"next (?:week|month|year))\b)",
    re.IGNORECASE,
)
_ZH_VALUE_STOP: Final = re.compile(
    r"[，,。；;（(]|所以|因为|但是|不过|而且|麻烦|谢谢|请你|请|的话|这件事|这个事|这事|了吧|吧|啊|呀|哦|呢|啦|了$"
)


def en_value(text: str, max_words: int = 8) -> str:
    """The value at the start of ``text``, cut at the next clause: "peanuts so please ..." -> "peanuts"."""
    stop = _EN_VALUE_STOP.search(text)
    value = text[: stop.start()] if stop else text
    words = value.strip(TRIM).split()
    return " ".join(words[:max_words]).strip(TRIM)


def zh_value(text: str, max_chars: int = 16) -> str:
    """The value at the start of ``text``: "花生所以别推荐" -> "花生"."""
    stop = _ZH_VALUE_STOP.search(text)
    value = text[: stop.start()] if stop else text
    return value.strip(TRIM)[:max_chars].strip(TRIM)


NUMBER_WORDS: Final = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2,
    "一": 1, "两": 2, "二": 2, "俩": 2, "三": 3, "仨": 3, "四": 4, "五": 5, "六": 6,
    "七": 7, "八": 8, "九": 9, "十": 10, "十一": 11, "十二": 12,
}  # fmt: skip


def as_int(raw: str) -> int | None:
    raw = raw.strip().lower()
    if raw.isdigit():
        return int(raw)
    return NUMBER_WORDS.get(raw)
