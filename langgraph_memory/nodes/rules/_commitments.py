"""What the assistant committed to on the business's behalf: a refund issued, a table booked.

The assistant's *claims about the user* never become facts ("since you are
diabetic ..." stays out). Its *commitments* are different: "I've issued a
refund of $30", "我已为您补发一个充电器" are facts about the account that the
user will ask about later ("when does my refund arrive?"). Three shapes
qualify, the same in both languages: a first-person action with a business verb
("I've issued ...", "我已为您补发 ..."), a record in the passive ("Return moved to
Dec 14", "Claim DMG-55120 opened", "已改为 ..."), and a date the business gave
for something of the user's ("New ETA is Dec 9", "11月6日下午顺丰上门取件"; one
slot per order, so a newer date replaces the older). A validity date ("valid
until Nov 30", "有效期到 ...") ends the memory. It is recorded as
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
from langgraph_memory.nodes.rules._text import TRIM, has_cjk, slug, to_simplified
from langgraph_memory.types import MemoryType

_EN_COMMIT: Final = re.compile(
    # "As a goodwill gesture I've credited ...": a short lead-in before the action.
    r"^(?:ok(?:ay)?[,!]?\s+|sure[,!]?\s+|done[,!]?\s+|great[,!]?\s+|[a-z][\w ,'-]{0,40}?\s)?"
    r"(?:i|we)(?:'ve| have|'ll| will| just| already| now| also|'ve just|'ve already| have just)*\s+"
    r"((?:issued|refunded|sent|booked|reserved|scheduled|arranged|upgraded|credited|waived|"
    r"shipped|cancell?ed|processed|escalated|applied|rebooked|replaced|extended|added|"
    r"swapped|moved|changed|updated|opened|logged|flagged|reimbursed|confirmed|removed|fixed|"
    r"issue|refund|send|book|reserve|schedule|arrange|upgrade|credit|waive|ship|cancel|process|"
    r"escalate|apply|rebook|replace|extend|swap|move|change|update|open|log|flag|reimburse|"
    r"confirm|remove|fix|pick (?:it |them )?up|deliver|hold|call you|email you|text you)\b.+)$",
    re.IGNORECASE,
)
_ZH_COMMIT: Final = re.compile(
    r"(?:我|我们)?(?:已经?|会|将|马上|稍后|承诺|保证)(?:重新|再次|再)?(?:为您|给您|帮您|替您)?"
    r"((?:办理|退款|退还|补发|补退|退回|加急|预约|预订|订好|升级|延期|取消|安排|寄出|发出|赔付|补偿|返还|开通|改签|"
    r"登记|申请|提交|创建|派|赠送|加固|处理|延长|生效|到账|更新|改为|改成|修改|更改|备注|预订|批准|核准|审批)"
    r"[^。！？]{0,60})"
    # "投诉已登记，工单号 TS-77120，三个工作日内派师傅免费加固": the record and its number.
    r"|((?:工单|单号|订单|维修单|票号|编号)(?:号)?[:：]?\s*[A-Z]{1,4}-?\d[\w-]*[^。！？]{0,60})"
)


# "Escalated as ticket ESC-1043; a technician will fit the leg on Nov 20", "Refund of
# $30 issued", "Return moved to Dec 14", "Claim DMG-55120 opened": an action in the
# passive, with what it produced (the English of "已改为…", "已办理…").
_PASSIVE: Final = (
    r"escalated|logged|opened|raised|filed|booked|refunded|credited|issued|scheduled|upgraded|"
    r"switched|renewed|cancell?ed|processed|moved|changed|added|waived|updated|rescheduled|"
    r"extended|applied|reserved|confirmed|removed|replaced|reimbursed|approved|dispatched|shipped"
)
_EN_RECORD: Final = re.compile(
    rf"^((?:{_PASSIVE})\b.{{0,120}}|(?:ticket|case|order|booking|reference|ref|claim)\s*"
    r"(?:#|no\.?|number)?\s*[A-Z]{0,4}-?\d[\w-]*\b.{0,120}"
    rf"|[\w$€£¥][\w$€£¥ ()'.,-]{{0,60}}?\s(?:(?:is|are|has been|have been|was|were)\s)?(?:{_PASSIVE})"
    r"(?:\s+(?:to|as|for|on|in|into|from|at|with|by)\b.{0,120}|[,;:]\s*.{0,120}|\s*$))$",
    re.IGNORECASE,
)
# A date the business gave for something of the user's: "New ETA is Dec 9", "estimated
# to ship Dec 2", "It's valid until Nov 30" (the English of "预计10月14日发出", "有效期到…").
_EN_STATUS: Final = re.compile(
    r"\b(?:eta|arrival|delivery (?:date|window)|ships?|shipping|dispatch(?:es)?|estimated|expected|"
    r"valid|expires?|due|arrives?|decision|refund|credit|pick ?up|collection|visit|technician|engineer|"
    r"install(?:ation|er)?|appointment)\b.{0,40}?"
    r"\b(?:(?:jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec)[a-z]*\.?\s+\d{1,2}|\d{1,2}(?:st|nd|rd|th)?\s+"
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec)|(?:mon|tues?|wed|thu(?:rs)?|fri|sat|sun)[a-z]*"
    r"|\d+\s*(?:-\s*\d+\s*)?(?:business |working )?days)\b",
    re.IGNORECASE,
)
# What a date of validity marks: the commitment ends then ("valid until Nov 30", "有效期到11月30日").
VALIDITY: Final = re.compile(
    r"\b(?:valid|validity|expires?|expiring|good (?:until|till|through))\b|有效期|有效至|到期|过期",
    re.IGNORECASE,
)
# "11月6日下午顺丰上门取件", "预计11月15日送达": a date the business gave, in Chinese.
_ZH_STATUS: Final = re.compile(
    r"(?:\d{1,2}月\d{1,2}[日号]|\d{1,2}[日号]|明天|后天|周[一二三四五六日天]|下周[一二三四五六日天]?)"
    r"[^。！？]{0,16}?(上门|取件|送达|送货|发货|发出|到账|到货|安装|派送|配送|生效|到期)"
)
_CODE: Final = re.compile(r"\b[A-Z]{1,5}-?\d{3,}\b")


_EN_LEAD_IN: Final = re.compile(
    r"^(?:(?:ok(?:ay)?|sure|done|great|noted|understood|yes|yep|apologies|sorry(?: about that)?|"
    r"so sorry|thanks|thank you|got it|all set|good news)[,.!:;]?\s+)+",
    re.IGNORECASE,
)
_ZH_LEAD_IN: Final = re.compile(
    r"^(?:(?:好的|好|收到|明白|非常抱歉|很抱歉|抱歉|不好意思|您好)[，,。！!\s]*)+"
)


# "The pregnancy note is removed", "I've deleted it from your profile", "已为您删除这条记录":
# a confirmation that something was erased names what was erased; kept, it would bring
# the forgotten topic back.
_ERASED: Final = re.compile(
    r"\b(?:removed|deleted|erased|cleared|wiped|forgotten|taken (?:it |that |this )?off|dropped)\b"
    r".{0,40}\b(?:note|notes|profile|records?|file|details|memory|info|information|history)\b"
    r"|\b(?:note|notes|profile|records?|file|details|memory|info|information|history)\b.{0,30}"
    r"\b(?:removed|deleted|erased|cleared|wiped|gone)\b"
    r"|\b(?:won'?t|will not|no longer)\s+(?:remember|keep|store|record|mention|bring (?:it|that) up)\b"
    r"|删除|删掉|删了|清除|移除|抹去|不会再记|不再记录|不会再提|已忘记|忘掉",
    re.IGNORECASE,
)


def commitment(sentence: str) -> Match | None:
    """The assistant's commitment in one sentence of its reply, or ``None``."""
    text = _EN_LEAD_IN.sub("", sentence.strip(TRIM + ";；"))
    if _ERASED.search(to_simplified(text)):
        return None
    asks = re.search(
        r"\b(?:if|could|would you like|can i|shall i|should i|can'?t|cannot|unable|won'?t store|"
        r"won'?t keep|please)\b|\?$",
        text,
        re.I,
    )
    m = _EN_COMMIT.match(text) or _EN_RECORD.match(text)
    if m and not asks and len(re.findall(r"[\w$€£¥]+", m.group(1))) >= 3:  # not a bare "Updated."
        what = m.group(1).strip(TRIM)
        return Match(
            f"Assistant committed: {what}",
            MemoryType.EPISODIC,
            key=f"promise.{slug(what)[:30]}",
            importance=0.7,
        )
    if _EN_STATUS.search(text) and not asks and not has_cjk(text):
        # One slot per order for its date: "New ETA is Dec 9" replaces "estimated to ship Dec 2".
        code = _CODE.search(text)
        kind = "valid" if VALIDITY.search(text) else "eta"
        key = f"promise.{kind}" + (f".{code.group(0).lower()}" if code else "")
        return Match(f"Assistant said: {text}", MemoryType.EPISODIC, key=key, importance=0.7)
    m = _ZH_COMMIT.search(to_simplified(text))  # "已重新處理" reads as "已重新处理"
    if m and not re.search(r"如果|是否|要不要|需要我|可以吗|吗$", to_simplified(text)):
        # The whole sentence ("多出的是跨区流量 $312.40，我已申请 credit 返还"), without
        # its politeness lead-in.
        what = _ZH_LEAD_IN.sub("", text)[:120]
        return Match(
            f"客服承诺：{what}",
            MemoryType.EPISODIC,
            key=f"promise.{slug(what)[:30]}",
            importance=0.7,
        )
    # One slot per order for its date, as in English.
    zh_status = _ZH_STATUS.search(to_simplified(text)) if has_cjk(text) else None
    if zh_status and not re.search(r"如果|是否|要不要|需要我|可以吗|吗$", to_simplified(text)):
        what = _ZH_LEAD_IN.sub("", text)[:120]
        code = _CODE.search(text)
        kind = "valid" if VALIDITY.search(text) else "eta"
        key = f"promise.{kind}" + (f".{code.group(0).lower()}" if code else "")
        return Match(f"客服说：{what}", MemoryType.EPISODIC, key=key, importance=0.7)
    return None
