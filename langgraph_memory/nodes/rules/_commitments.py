"""What the assistant committed to on the business's behalf: a refund issued, a table booked.

The assistant's *claims about the user* never become facts ("since you are
diabetic ..." stays out). Its *commitments* are different: "I've issued a
refund of $30", "我已为您补发一个充电器" are facts about the account that the
user will ask about later ("when does my refund arrive?"). Only first-person
past/future actions with a business verb qualify; the memory is recorded as
``agent_inferred`` (the assistant said it, not the user), so it never
supersedes anything the user stated.

Example:
    >>> commitment("I've issued a refund of $30, it will arrive in 3-5 days.").text
    'Assistant committed: issued a refund of $30, it will arrive in 3-5 days'
    >>> commitment("Since you are vegetarian, try the tofu.") is None
    True
"""

from __future__ import annotations

import re
from typing import Final

from langgraph_memory.nodes.rules._match import Match
from langgraph_memory.nodes.rules._text import TRIM, slug
from langgraph_memory.types import MemoryType

_EN_COMMIT: Final = re.compile(
    # "As a goodwill gesture I've credited ...": a short lead-in before the action.
    r"^(?:ok(?:ay)?[,!]?\s+|sure[,!]?\s+|done[,!]?\s+|great[,!]?\s+|[a-z][\w ,'-]{0,40}?\s)?"
    r"(?:i|we)(?:'ve| have|'ll| will| just| already|'ve just|'ve already| have just)*\s+"
    r"((?:issued|refunded|sent|booked|reserved|scheduled|arranged|upgraded|credited|waived|"
    r"shipped|cancell?ed|processed|escalated|applied|rebooked|replaced|extended|added|"
    r"issue|refund|send|book|reserve|schedule|arrange|upgrade|credit|waive|ship|cancel|process|"
    r"escalate|apply|rebook|replace|extend|call you|email you|text you)\b.+)$",
    re.IGNORECASE,
)
_ZH_COMMIT: Final = re.compile(
    r"(?:我|我们)?(?:已经?|会|将|马上|稍后)(?:为您|给您|帮您|替您)?"
    r"((?:办理|退款|退还|补发|预约|预订|订好|升级|延期|取消|安排|寄出|发出|赔付|补偿|返还|开通|改签)"
    r"[^。！？]{0,40})"
)


def commitment(sentence: str) -> Match | None:
    """The assistant's commitment in one sentence of its reply, or ``None``."""
    text = sentence.strip(TRIM)
    m = _EN_COMMIT.match(text)
    if m and not re.search(r"\b(?:if|could|would you like|can i|shall i|should i)\b", text, re.I):
        what = m.group(1).strip(TRIM)
        return Match(
            f"Assistant committed: {what}",
            MemoryType.EPISODIC,
            key=f"promise.{slug(what)[:30]}",
            importance=0.7,
        )
    m = _ZH_COMMIT.search(text)
    if m and not re.search(r"如果|是否|要不要|需要我|可以吗|吗$", text):
        what = m.group(1).strip(TRIM)
        return Match(
            f"客服承诺：{what}",
            MemoryType.EPISODIC,
            key=f"promise.{slug(what)[:30]}",
            importance=0.7,
        )
    return None
