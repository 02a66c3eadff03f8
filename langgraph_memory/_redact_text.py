"""What every redaction detector shares: the candidate type, text folding, number
boundaries and the clause context around a number. Pure, stdlib-only."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

# Every placeholder the redactor writes: "[PHONE]", hashed "[PHONE:3f9a1c2b]", partial
# "[PHONE:*1937]" / "[EMAIL:@outlook.com]". Code that reads redacted text matches this one.
PLACEHOLDER_PATTERN: Final = r"\[[A-Z_]+(?::(?:[0-9a-f]{8}|\*\d{2,4}|@[A-Za-z0-9.-]+))?\]"


@dataclass(frozen=True, slots=True)
class _Candidate:
    kind: str
    start: int
    end: int
    # Canonical form used only for the salted digest, so that
    # "+86 138-0013-8000" and "13800138000" hash alike. Never leaves the redactor.
    canonical: str


# --- text preparation -------------------------------------------------------

# Full-width ASCII (U+FF01-U+FF5E) and the ideographic space map 1:1 to ASCII,
# so offsets in the folded text are offsets in the original.
_FOLD_WIDTH: Final[dict[int, int]] = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
_FOLD_WIDTH[0x3000] = 0x20
# Traditional characters of the keywords, folded to their simplified forms (also
# 1:1), so 密碼/驗證碼/護照號碼/銀行帳戶/電話 from Hong Kong and Taiwan users match
# the same patterns as 密码/验证码/护照号码/银行帐户/电话.
_TRADITIONAL: Final = (
    "碼码驗验證证認认動动確确權权門门開开鑰钥護护號号編编電电話话機机傳传聯联撥拨熱热線线"
    "銀银儲储記记帳帐賬账戶户對对匯汇轉转結结還还訂订單单運运遞递發发條条車车會会議议級级"
    "節节設设變变為为現现經经輸输寫写錄录陸陆員员積积學学購购園园飯饭簡简訊讯"
)
_FOLD_WIDTH.update(
    {ord(_TRADITIONAL[i]): ord(_TRADITIONAL[i + 1]) for i in range(0, len(_TRADITIONAL), 2)}
)

# A number touching a letter, digit or underscore is part of a longer token
# (SF1234567890123, order_13800138000); one glued to a decimal point is a
# decimal (3.14159265358979, coordinates).
_NUM_LEFT: Final = r"(?<![0-9A-Za-z_])(?<![0-9][.,])"
_NUM_RIGHT: Final = r"(?![0-9A-Za-z_])(?![.,][0-9])"

# The clause before a number that says it is not personal (checked back to the
# last clause break, and only if no "this is a phone/card" word comes later).
_NEGATIVE_CONTEXT: Final = re.compile(
    r"订单|单号|运单|快递|物流|包裹|发票|流水|编号|序列号|工单|交易号|批次|型号|条码|条形码|票号|航班|车次|会议|"
    r"\b(?:order|tracking|track|invoice|serial|ticket|ref|reference|confirmation|"
    r"transaction|txn|sku|isbn|batch|shipment|parcel|waybill|booking|model|part|imei|meid|meeting)\b|串号",
    re.IGNORECASE,
)
_POSITIVE_CONTEXT: Final = re.compile(
    r"电话|手机|座机|传真|联系|致电|打给|卡号|银行卡|信用卡|储蓄卡|身份证|"
    r"\b(?:phone|mobile|cell|tel|fax|landline|call|text|whatsapp|card|visa|mastercard|amex)\b",
    re.IGNORECASE,
)
_CLAUSE_BREAK: Final = re.compile(r"[。；;！？!?\n,，、]")
_CONTEXT_WINDOW: Final = 24


def _clause_before(folded: str, start: int) -> str:
    window = folded[max(0, start - _CONTEXT_WINDOW) : start]
    breaks = list(_CLAUSE_BREAK.finditer(window))
    return window[breaks[-1].end() :] if breaks else window


def _in_positive_context(folded: str, start: int) -> bool:
    return _POSITIVE_CONTEXT.search(_clause_before(folded, start)) is not None


# Words that make a weak number shape (8 bare digits, a national number written
# without separators) a phone. Kept apart from _POSITIVE_CONTEXT, which also
# cancels an order/invoice veto: "发票号码" must stay an invoice number.
_PHONE_CUE: Final = re.compile(
    r"电话|手机|座机|传真|联系|致电|打给|拨打|号码|热线|微信|電話|携帯|"
    r"\b(?:phone|mobile|cell|tel|fax|landline|call|text|whatsapp|wechat|signal|telegram|"
    r"ring|dial|reach|number|handy|portable|t[ée]l[ée]phone|mobil)\b",
    re.IGNORECASE,
)
_CJK: Final = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def _phone_cue_before(folded: str, start: int) -> bool:
    return _PHONE_CUE.search(_clause_before(folded, start)) is not None


def _in_negative_context(folded: str, start: int) -> bool:
    window = _clause_before(folded, start)
    negatives = list(_NEGATIVE_CONTEXT.finditer(window))
    if not negatives:
        return False
    last_negative = negatives[-1].end()
    return not any(m.start() >= last_negative for m in _POSITIVE_CONTEXT.finditer(window))


def _digits(value: str) -> str:
    return "".join(ch for ch in value if ch.isdigit())


# Each detector scans the folded text and yields candidates; overlaps are
# resolved afterwards (privacy._resolve_overlaps), so a detector never needs to
# know about the others.
_Detector = Callable[[str], Iterator[_Candidate]]


_DIGIT: Final = re.compile(r"[0-9]")
