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
    r"(?:我|我们)?(?:已经?|会|将|马上|稍后|承诺|保证)(?:为您|给您|帮您|替您)?"
    r"((?:办理|退款|退还|补发|预约|预订|订好|升级|延期|取消|安排|寄出|发出|赔付|补偿|返还|开通|改签|"
    r"登记|申请|提交|创建|派|赠送|加固|处理|延长|生效|到账|更新|改为|改成|修改|更改|备注|预订)"
    r"[^。！？]{0,60})"
    # "投诉已登记，工单号 TS-77120，三个工作日内派师傅免费加固": the record and its number.
    r"|((?:工单|单号|订单|维修单|票号|编号)(?:号)?[:：]?\s*[A-Z]{1,4}-?\d[\w-]*[^。！？]{0,60})"
)


# "Escalated as ticket ESC-1043; a technician will fit the leg on Nov 20", "Refund of
# $30 issued": an action in the passive, with what it produced.
_EN_RECORD: Final = re.compile(
    r"^((?:escalated|logged|opened|raised|filed|booked|refunded|credited|issued|scheduled|upgraded|"
    r"switched|renewed|cancell?ed|processed)\b.{0,120}|(?:ticket|case|order|booking|reference|ref)\s*"
    r"(?:#|no\.?|number)?\s*[A-Z]{0,4}-?\d[\w-]*\b.{0,120})$",
    re.IGNORECASE,
)


_ZH_LEAD_IN: Final = re.compile(
    r"^(?:(?:好的|好|收到|明白|非常抱歉|很抱歉|抱歉|不好意思|您好)[，,。！!\s]*)+"
)


def commitment(sentence: str) -> Match | None:
    """The assistant's commitment in one sentence of its reply, or ``None``."""
    text = sentence.strip(TRIM)
    m = _EN_COMMIT.match(text) or _EN_RECORD.match(text)
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
        # The whole sentence ("多出的是跨区流量 $312.40，我已申请 credit 返还"), without
        # its politeness lead-in.
        what = _ZH_LEAD_IN.sub("", text)[:120]
        return Match(
            f"客服承诺：{what}",
            MemoryType.EPISODIC,
            key=f"promise.{slug(what)[:30]}",
            importance=0.7,
        )
    return None
