"""Redaction of personal identifiers and secrets before anything is stored.

Pure and stdlib-only: no I/O, no logging of values. Every memory text passes
through :class:`Redactor` before it is embedded, indexed or logged, so the
vector store, the keyword index and the logs only ever see placeholders.

Detected kinds (names as in ``config.IDENTIFIER_KINDS``):

=================  ===============================================================
``cn_mobile``      mainland-China mobile numbers, ``1[3-9]`` + 9 digits, optional
                   ``+86``/``0086``, spaces, dashes or dots as ``138 0013 8000``
``cn_resident_id`` 18-digit resident ID numbers: valid birth date and the
                   GB 11643 check character (last char may be ``X``), compact or
                   grouped 6-8-4; legacy 15-digit numbers: province code and a
                   valid 19YYMMDD date
``national_id``    identity numbers outside the mainland, each with its check
                   digit: Hong Kong ``A123456(7)``, Taiwan ``A123456789``,
                   Singapore ``S1234567D``, US SSN ``123-45-6789``, UK National
                   Insurance ``AB 12 34 56 C`` (the compact and undashed forms
                   only after their keyword)
``bank_card``      13-19 digits, contiguous or in groups, passing the Luhn check;
                   IBANs (mod-97 and the country's length); 8-30 digits after a
                   bank-account keyword (银行账号/收款账户/bank account/account no.)
``email``          e-mail addresses (not ``icon@2x.png``, not ``git@host:repo``)
``phone``          international numbers (``+44 20 7946 0958``, ``0049 30 123456``),
                   US-style ``(415) 555-2671`` / ``1-800-555-0199``, national numbers
                   with their trunk 0 (``07700 900123``, ``0151 23456789``,
                   ``06 12 34 56 78``, ``090-1234-5678``); after a phone word also
                   ``415 555 2671``, 8-digit HK/SG numbers and compact national ones
``cn_landline``    mainland-China landlines without a country code: ``010-12345678``,
                   ``0755-1234567``, ``(021) 6123 4567``, extensions; 11 contiguous
                   digits (``01012345678``) only after a phone word (电话/座机/tel);
                   ``020 7946 0958`` (London's shape too) only in a text with Chinese
``passport``       passport and HK/Macau permit numbers after 护照/通行证/passport
                   (``E12345678``, ``G1234567``, 6-9 digits, ``C01X00T47``), JSON keys
``ip_address``     IPv4 (octets 0-255, no leading zeros) and IPv6 (validated)
``password``       the value after 密码/口令/password/passwd/pwd and ``:``, ``：``,
                   ``=``, ``是``, ``为``, ``is``/``was`` (quoted values whole, CJK
                   included), or after only a space when it has a digit
                   (``wifi密码 12345678``); 4-12 digits after PIN/PIN码; one-time
                   and door codes (验证码 583920, ``OTP: 482913``, ``552031 is your
                   code``), CVVs, the password in ``scheme://user:password@host``
``api_key``        the value after api key/token/secret/密钥/令牌..., and known
                   formats: ``sk-``, ``sk-proj-``, ``ghp_``, ``github_pat_``, ``AKIA``,
                   ``xoxb-``/``xoxp-``, ``AIza``, ``glpat-``, ``hf_``, ``npm_``,
                   SendGrid ``SG.``, Stripe-style ``sk_live_``, JWTs,
                   ``Bearer <token>``, ``Authorization: Basic <base64>``
=================  ===============================================================

Hard negatives are kept on purpose: order and tracking numbers (a number whose
clause starts with 订单号/运单号/order/tracking/meeting ... is not a phone or a
card, unless a word such as 电话/phone/card follows), dates, prices, model
numbers, version and section strings (``v1.2.3.4``, "Chapter 12.3.4.5" are not
IPs), an 18-digit string whose check character is wrong, a 16-digit number
failing Luhn, prose such as "the password is incorrect", a landline-shaped
group inside a longer digit sequence, a passport-shaped code without its
keyword, a 15-digit number in an order/IMEI clause, lottery draws and number
lists, numeric promo codes, pickup codes. Not detected: street addresses,
licence plates, names, secrets that look like ordinary words.

Full-width digits and letters (``１３８``) are folded to ASCII, and the
Traditional characters of the keywords (密碼, 驗證碼, 護照號碼, 電話) to their
simplified forms, before matching; finding offsets always index the original
text. Password words of other languages count too (Passwort, mot de passe,
パスワード, 暗証番号, 비밀번호), as do ``pw:``/``pass:`` with a value holding a digit,
JSON keys (``"password": "..."``), a clause between keyword and value ("the token I
use is ...", 密码发你：...), "my ... key is <generated>", AK/SK labels and session ids;
a value inside a URL query ends at the next ``&name=``.

Example:
    >>> redact("call me on 138 0013 8000 or mail li.lei@example.com").text
    'call me on [PHONE] or mail [EMAIL]'
    >>> redact("订单号 202611301234567890 已发货").findings
    ()
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from langgraph_memory._checksums import (
    is_valid_hkid,
    is_valid_iban,
    is_valid_nric,
    is_valid_resident_id,
    is_valid_ssn,
    is_valid_taiwan_id,
    luhn_valid,
    resident_id_check_char,
)
from langgraph_memory._checksums import valid_birth_date as _valid_birth_date
from langgraph_memory.config import IDENTIFIER_KINDS, PrivacyPolicy, RedactionAction
from langgraph_memory.errors import (
    ConfigurationError,
    InvalidUserIdError,
    RedactionRejectedError,
)

# The poisoning defence lives in its own module (this one is redaction); both
# are privacy's public API.
from langgraph_memory.poisoning import is_instruction_override, neutralize_markup

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

__all__ = [
    "PLACEHOLDER_LABELS",
    "Finding",
    "RedactionResult",
    "Redactor",
    "fingerprint_user_id",
    "is_instruction_override",
    "is_valid_hkid",
    "is_valid_iban",
    "is_valid_nric",
    "is_valid_resident_id",
    "is_valid_ssn",
    "is_valid_taiwan_id",
    "luhn_valid",
    "neutralize_markup",
    "redact",
    "redact_for_log",
    "redact_messages",
    "resident_id_check_char",
]

# Placeholder label per kind: ``[PHONE]`` when masked, ``[PHONE:3f9a1c2b]`` when hashed.
# Both phone kinds share a label so a hashed number matches across formats.
PLACEHOLDER_LABELS: Final[Mapping[str, str]] = {
    "cn_mobile": "PHONE",
    "cn_resident_id": "ID_NUMBER",
    "bank_card": "BANK_CARD",
    "email": "EMAIL",
    "phone": "PHONE",
    "ip_address": "IP_ADDRESS",
    "password": "PASSWORD",
    "api_key": "API_KEY",
    "cn_landline": "PHONE",
    "passport": "PASSPORT",
    # Same label as the mainland ID: "forget my ID number" reaches both.
    "national_id": "ID_NUMBER",
}

# When two candidates overlap, the longer one wins; on equal length the kind
# listed first here wins (a valid ID checksum is stronger evidence than Luhn).
_SPECIFICITY: Final[Mapping[str, int]] = {
    kind: rank
    for rank, kind in enumerate(
        (
            "api_key",
            "email",
            "cn_resident_id",
            "national_id",
            "passport",
            "bank_card",
            "cn_mobile",
            "cn_landline",
            "ip_address",
            "phone",
            "password",
        )
    )
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One identifier found in a text: its kind, its place, what was done.

    ``start``/``end`` index the *original* text (``text[start:end]`` is the
    identifier). A finding never holds the identifier itself, so findings can
    be logged and stored in receipts.
    """

    kind: str
    start: int
    end: int
    action: RedactionAction


@dataclass(frozen=True, slots=True)
class RedactionResult:
    """The redacted text and what was found in the original.

    Example:
        >>> result = redact("my email is ann@example.org")
        >>> result.text, [f.kind for f in result.findings]
        ('my email is [EMAIL]', ['email'])
    """

    text: str
    findings: tuple[Finding, ...]

    @property
    def changed(self) -> bool:
        """True when at least one identifier was masked or hashed."""
        return any(f.action in ("mask", "hash") for f in self.findings)

    def counts(self) -> dict[str, int]:
        """Number of findings per kind, e.g. for a content-free receipt."""
        out: dict[str, int] = {}
        for finding in self.findings:
            out[finding.kind] = out.get(finding.kind, 0) + 1
        return out


@dataclass(frozen=True, slots=True)
class _Candidate:
    kind: str
    start: int
    end: int
    # Canonical form used only for the salted digest, so that
    # "+86 138-0013-8000" and "13800138000" hash alike. Never leaves this module.
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


# --- checksums --------------------------------------------------------------
# In ``_checksums.py``; the public ones are re-exported here.

# --- detectors ----------------------------------------------------------------
# Each detector scans the width-folded text and yields candidates; overlaps are
# resolved afterwards, so a detector never needs to know about the others.

_Detector = Callable[[str], Iterator[_Candidate]]

_CN_MOBILE: Final = re.compile(
    _NUM_LEFT
    + r"(?:(?:\+|00)\s?86[ \-]?|\(\+?86\)\s?)?"
    + r"1[3-9][0-9](?:[0-9]{8}|[ \-][0-9]{4}[ \-][0-9]{4}|[0-9]{4}[ \-][0-9]{4}|[ \-][0-9]{8}"
    + r"|\.[0-9]{4}\.[0-9]{4})"  # 138.1234.5678, only as three dotted groups
    + _NUM_RIGHT
)


def _detect_cn_mobile(folded: str) -> Iterator[_Candidate]:
    for m in _CN_MOBILE.finditer(folded):
        has_country_code = "86" in folded[m.start() : m.end() - 11] or folded[m.start()] in "+0("
        if not has_country_code and _in_negative_context(folded, m.start()):
            continue
        yield _Candidate("cn_mobile", m.start(), m.end(), _digits(m.group())[-11:])


_RESIDENT_ID: Final = re.compile(
    _NUM_LEFT
    + r"[1-9][0-9]{5}(?P<sep>[ \-]?)(?:18|19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])"
    + r"(?P=sep)[0-9]{3}[0-9Xx]"
    + r"(?![0-9A-Za-z_])"
)


def _detect_resident_id(folded: str) -> Iterator[_Candidate]:
    for m in _RESIDENT_ID.finditer(folded):
        if is_valid_resident_id(m.group()):
            yield _Candidate(
                "cn_resident_id",
                m.start(),
                m.end(),
                m.group().replace(" ", "").replace("-", "").upper(),
            )


# Legacy 15-digit ID numbers (issued until 1999): 6-digit region, YYMMDD birth
# date in the 1900s, 3-digit sequence, no check character. Without a checksum
# the evidence is weaker, so the region must start with a real province code,
# the date must exist, and an order/tracking/IMEI clause vetoes it.
_RESIDENT_ID_15: Final = re.compile(
    _NUM_LEFT
    + r"[1-8][0-9]{5}[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])[0-9]{3}"
    + _NUM_RIGHT
)
_PROVINCE_CODES: Final = frozenset(
    [
        "11",
        "12",
        "13",
        "14",
        "15",
        "21",
        "22",
        "23",
        "31",
        "32",
        "33",
        "34",
        "35",
        "36",
        "37",
        "41",
        "42",
        "43",
        "44",
        "45",
        "46",
        "50",
        "51",
        "52",
        "53",
        "54",
        "61",
        "62",
        "63",
        "64",
        "65",
        "71",
        "81",
        "82",
    ]
)


def is_valid_legacy_resident_id(value: str) -> bool:
    """True for a 15-digit (pre-1999) resident ID: a province code and a real 19YY birth date.

    Example:
        >>> is_valid_legacy_resident_id("110105491231002"), is_valid_legacy_resident_id("990105491231002")
        (True, False)
    """
    return (
        len(value) == 15
        and value.isdigit()
        and value[:2] in _PROVINCE_CODES
        # IDs carry a county-level code: neither the city nor the county part is "00".
        and value[2:4] != "00"
        and value[4:6] != "00"
        and _valid_birth_date("19" + value[6:12])
    )


def _detect_resident_id_15(folded: str) -> Iterator[_Candidate]:
    for m in _RESIDENT_ID_15.finditer(folded):
        if is_valid_legacy_resident_id(m.group()) and not _in_negative_context(folded, m.start()):
            yield _Candidate("cn_resident_id", m.start(), m.end(), m.group())


_BANK_CARD: Final = re.compile(
    _NUM_LEFT
    + r"(?:[1-9][0-9]{12,18}"  # contiguous
    + r"|[1-9][0-9]{3}([ \-])[0-9]{4}(?:\1[0-9]{4}){1,2}(?:\1[0-9]{1,4})?"  # 4-4-4-4(-n)
    + r"|3[47][0-9]{2}([ \-])[0-9]{6}\2[0-9]{5}"  # American Express 4-6-5
    + r"|[1-9][0-9]{5}[ \-][0-9]{7,13})"  # 6 + the rest, as Chinese bank apps show it
    + _NUM_RIGHT
)
# Shape of a resident ID (6-digit region + plausible birth date); used to keep
# an 18-digit ID with a wrong check character from being re-read as a card.
_ID_SHAPE: Final = re.compile(r"[1-9][0-9]{5}(?:18|19|20)[0-9]{2}(?:0[1-9]|1[0-2])[0-3][0-9]")


def _detect_bank_card(folded: str) -> Iterator[_Candidate]:
    for m in _BANK_CARD.finditer(folded):
        digits = _digits(m.group())
        if not 13 <= len(digits) <= 19 or len(set(digits)) == 1 or not luhn_valid(digits):
            continue
        if len(digits) == 18 and _ID_SHAPE.match(digits) and _valid_birth_date(digits[6:14]):
            continue
        if _in_negative_context(folded, m.start()):
            continue
        yield _Candidate("bank_card", m.start(), m.end(), digits)
    for m in _ACCOUNT_NUMBER.finditer(folded) if _ACCOUNT_HINT.search(folded) else ():
        digits = _digits(m.group("number"))
        if m.group("card") and not (13 <= len(digits) <= 19 and luhn_valid(digits)):
            continue  # a card number carries the Luhn check ("卡号 ... 校验不过" is no card)
        if 8 <= len(digits) <= 30 and len(set(digits)) > 1:
            yield _Candidate("bank_card", m.start("number"), m.end("number"), digits)
    for m in _IBAN.finditer(folded):
        if is_valid_iban(m.group()):
            yield _Candidate("bank_card", m.start(), m.end(), m.group().replace(" ", ""))


# A number right after a bank-account keyword is the account whatever its
# checksum (many account numbers carry none); after a card keyword it may come
# in any grouping but must pass Luhn. "账号"/"account" alone is also a login
# name, so the keyword must say bank: 银行账号, 收款账户, bank account, account
# number. A membership, transit or campus card's "卡号" is not a bank card.
_ACCOUNT_NUMBER: Final = re.compile(
    r"(?:(?P<card>(?<!会员)(?<!积分)(?<!公交)(?<!学生)(?<!门禁)(?<!购物)(?<!加油)(?<!校园)(?<!饭)"
    r"(?:银行|信用|储蓄|借记)?卡号(?:码)?|(?<![A-Za-z])card\s?(?:number|no\.?|#))"
    r"|(?:银行|收款|付款|对公|对私|开户|汇款|转账|结算|还款|工资)(?:账|帐)(?:号|户)(?:号码?)?"
    r"|(?<![A-Za-z])(?:bank\s+account(?:\s+(?:number|no\.?|#))?|account\s?(?:number|no\.?|#)"
    r"|acct\.?(?:\s?(?:number|no\.?|#))?|a/c(?:\s?no\.?)?))"
    r"\s*(?:[:：=]|是|为|為|系|係|(?<![A-Za-z])is(?![A-Za-z]))?\s*"
    r"(?<![0-9])(?P<number>[0-9]{4,30}(?:[ \-][0-9]{2,30}){0,6})(?![0-9A-Za-z])",
    re.IGNORECASE,
)
# Literals every _ACCOUNT_NUMBER match contains; searching them first is ~10x
# cheaper than trying the keyword's lookbehinds at every position.
_ACCOUNT_HINT: Final = re.compile(r"卡号|账|帐|acc|a/c|card", re.IGNORECASE)
# IBAN: country, two check digits, up to 30 letters and digits, compact or in
# groups of four; the mod-97 check (1 in 97 random strings pass) and the
# country's length decide.
_IBAN: Final = re.compile(
    r"(?<![A-Za-z0-9])[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])"
)


# Landlines without a country code: 0 + area code (010 and 020-029 take an
# 8-digit local number, 0[3-9]xx takes 7 or 8), as "010-12345678",
# "0755 1234567", "(021) 6123 4567", with an optional extension. A number
# glued to further digit groups ("4111 0755 1234 5678") is part of something
# longer, so neighbouring "digit + space/dash" on either side vetoes it.
_CN_LANDLINE: Final = re.compile(
    _NUM_LEFT
    + r"(?<![0-9][ \-])"
    + r"(?:\((?P<paren>0(?:10|2[0-9]|[3-9][0-9]{2}))\)\s?"
    + r"|(?P<area>0(?:10|2[0-9]|[3-9][0-9]{2}))(?P<sep>[ \-]?))"
    + r"(?P<local>[1-9][0-9]{2,3}[ \-]?[0-9]{4})"
    + r"(?:(?:-|转|ext\.?\s?)[0-9]{1,5})?"
    + _NUM_RIGHT
    + r"(?![ \-][0-9])"
)


def _detect_cn_landline(folded: str) -> Iterator[_Candidate]:
    has_cjk: bool | None = None
    for m in _CN_LANDLINE.finditer(folded):
        area = m.group("paren") or m.group("area")
        local = _digits(m.group("local"))
        if len(local) != 8 and (len(area) == 3 or len(local) != 7):
            continue
        # "020 7946 0958" is Guangzhou and London alike (the UK's 02x areas take 8
        # digits too). Mainland style joins the area code with a dash or brackets;
        # with a space or nothing, in a text with no Chinese or Japanese in it,
        # the national-number rule reports it as a phone instead.
        if area.startswith("02") and m.group("sep") in (" ", ""):
            has_cjk = _CJK.search(folded) is not None if has_cjk is None else has_cjk
            if not has_cjk:
                continue
        # "01012345678" alone is any 11-digit number; it needs a phone word.
        contiguous = m.group("paren") is None and not m.group("sep")
        if contiguous and not _in_positive_context(folded, m.start()):
            continue
        if _in_negative_context(folded, m.start()):
            continue
        yield _Candidate("cn_landline", m.start(), m.end(), area + local)


# Passport (and HK/Macau travel permit) numbers: only after the keyword, as
# the bare shape (a letter and 8 digits) is also a product or order code.
_PASSPORT: Final = re.compile(
    r"(?:护照|通行证|(?<![A-Za-z])passport(?![A-Za-z]))"
    r"(?:[\s_]*(?:号码|号|编号|#|(?<![A-Za-z])(?:no\.?|number|num)))?"
    # JSON and key=value forms too: "passport_no": "E12345678".
    r"[\"']?\s*(?:[:：=]|是|为|系|係|(?<![A-Za-z])is(?![A-Za-z]))?\s*[\"'“「]?"
    # Letters then digits (E12345678, EA1234567, 533380006), or the 9 mixed
    # characters of German and Dutch passports (C01X00T47), 4+ digits either way.
    r"(?<![0-9A-Za-z])(?P<value>[A-Za-z]{0,2}[0-9]{6,9}|[A-Za-z0-9]{9})(?![0-9A-Za-z])",
    re.IGNORECASE,
)


def _detect_passport(folded: str) -> Iterator[_Candidate]:
    for m in _PASSPORT.finditer(folded):
        value = m.group("value")
        if sum(ch.isdigit() for ch in value) < 4 or (not value.isdigit() and not value.isupper()):
            continue
        yield _Candidate("passport", m.start("value"), m.end("value"), value.upper())


# Identity numbers outside the mainland, each with its check digit:
# Hong Kong A123456(7) (bare A1234567 only after an ID word), Taiwan
# A123456789, Singapore NRIC/FIN S1234567D, US SSN 123-45-6789 (spaces or no
# separator only after "SSN"), UK National Insurance AB 12 34 56 C (compact
# only after "NI"/"NINO").
_HKID: Final = re.compile(
    r"(?<![0-9A-Za-z])[A-Z]{1,2}[0-9]{6}(?P<paren>\([0-9A]\))?(?(paren)|[0-9A])(?![0-9A-Za-z])"
)
_TAIWAN_ID: Final = re.compile(r"(?<![0-9A-Za-z])[A-Z][12][0-9]{8}(?![0-9A-Za-z])")
_NRIC: Final = re.compile(r"(?<![0-9A-Za-z])[STFG][0-9]{7}[A-Z](?![0-9A-Za-z])")
_SSN: Final = re.compile(
    r"(?<![0-9A-Za-z_\-.])[0-9]{3}(?P<sep>[ \-]?)[0-9]{2}(?P=sep)[0-9]{4}(?![0-9A-Za-z_]|[\-.][0-9])"
)
_NINO: Final = re.compile(
    r"(?<![0-9A-Za-z])(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
    r"(?P<sep> ?)[0-9]{2}(?P=sep)[0-9]{2}(?P=sep)[0-9]{2}(?P=sep)[A-D](?![0-9A-Za-z])"
)
_ID_WORD: Final = re.compile(
    r"身份证|身份證|证件|證件|(?<![A-Za-z])(?:hkid|id|identity|ic|nric|fin)(?![A-Za-z])",
    re.IGNORECASE,
)
# An upper-case letter before two digits: present in every HK, TW, SG and UK number.
_LETTER_ID_HINT: Final = re.compile(r"[A-Z] ?[0-9]{2}")
_SSN_WORD: Final = re.compile(r"(?<![A-Za-z])(?:ssn|social\s+security)|社会安全|社會安全", re.I)
_NINO_WORD: Final = re.compile(r"(?<![A-Za-z])(?:ni|nino|national\s+insurance)(?![A-Za-z])", re.I)


def _detect_national_id(folded: str) -> Iterator[_Candidate]:
    def compact(value: str) -> str:
        return re.sub(r"[^0-9A-Z]", "", value)

    letter_ids = _LETTER_ID_HINT.search(folded) is not None
    for m in _HKID.finditer(folded) if letter_ids else ():
        if _in_negative_context(folded, m.start()):
            continue
        if is_valid_hkid(m.group()) and (
            m.group("paren") or _ID_WORD.search(_clause_before(folded, m.start()))
        ):
            yield _Candidate("national_id", m.start(), m.end(), "HK" + compact(m.group()))
    for pattern, valid, prefix in (
        (_TAIWAN_ID, is_valid_taiwan_id, "TW"),
        (_NRIC, is_valid_nric, "SG"),
    ):
        for m in pattern.finditer(folded) if letter_ids else ():
            if valid(m.group()) and not _in_negative_context(folded, m.start()):
                yield _Candidate("national_id", m.start(), m.end(), prefix + m.group())
    for m in _SSN.finditer(folded):
        dashed = m.group("sep") == "-"
        if not is_valid_ssn(m.group()) or _in_negative_context(folded, m.start()):
            continue
        if dashed or _SSN_WORD.search(_clause_before(folded, m.start())):
            yield _Candidate("national_id", m.start(), m.end(), "US" + _digits(m.group()))
    for m in _NINO.finditer(folded) if letter_ids else ():
        if _in_negative_context(folded, m.start()):
            continue
        if m.group("sep") or _NINO_WORD.search(_clause_before(folded, m.start())):
            yield _Candidate("national_id", m.start(), m.end(), "UK" + compact(m.group()))


_EMAIL: Final = re.compile(
    r"(?<![A-Za-z0-9._%+\-])"
    # An apostrophe may sit inside the local part (o'brien.k@...), not at its ends.
    r"[A-Za-z0-9](?:[A-Za-z0-9._%+\-']{0,62}[A-Za-z0-9._%+\-])?@"
    r"[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}"
    r"(?![A-Za-z0-9\-])"
)


# "icon@2x.png" is an image, not a mailbox: a file extension is no domain.
_EXTENSION_WORDS: Final = """
    png jpg jpeg gif svg webp bmp ico tif tiff pdf txt csv json yaml yml xml html htm css js ts
    mp3 mp4 mov wav zip gz log lock
"""
_FILE_EXTENSIONS: Final = frozenset(_EXTENSION_WORDS.split())
# "postgres://admin:S3cret@db.internal": the part before "@" is a password
# (reported by the password detector), not a mailbox.
_URL_USERINFO: Final = re.compile(
    r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{1,15}://[^\s/@:]{0,64}:(?P<secret>[^\s/@]{1,128})@"
)


def _detect_email(folded: str) -> Iterator[_Candidate]:
    for m in _EMAIL.finditer(folded):
        if m.group().rsplit(".", 1)[-1].lower() in _FILE_EXTENSIONS:
            continue
        if folded.startswith(":", m.end()) and folded[m.end() + 1 : m.end() + 2].strip():
            continue  # git@github.com:org/repo.git, an scp-style address
        if "://" in folded[max(0, m.start() - 80) : m.start()] and any(
            u.start("secret") <= m.start() < u.end("secret")
            for u in _URL_USERINFO.finditer(folded, max(0, m.start() - 100))
        ):
            continue
        yield _Candidate("email", m.start(), m.end(), m.group().lower())


# International: "+" or "00", a country code, then digit groups joined by one
# space/dash, optionally a parenthesised area code. 8-15 digits in all (E.164).
_INTL_PHONE: Final = re.compile(
    r"(?<![0-9A-Za-z_+])(?:\+|\b00)[1-9][0-9]{0,2}"
    # Atomic groups: a long digit run must not be re-split every possible way.
    r"(?>[ \-]?\(?0?[0-9]{1,5}\)?)?"
    r"(?>[ \-.]?[0-9]{1,8}){1,5}" + _NUM_RIGHT
)
_US_PHONE: Final = re.compile(
    r"(?<![0-9A-Za-z_])(?:1[ \-.])?"  # 1-800-555-0199
    r"(?:\([2-9][0-9]{2}\)\s?|[2-9][0-9]{2}[\-.])[0-9]{3}[\-.][0-9]{4}" + _NUM_RIGHT
)
# "415 555 2671": with spaces only, as any three numbers in a row could read,
# so it needs a phone word before it (and a valid exchange, NXX NXX XXXX).
_US_PHONE_SPACED: Final = re.compile(
    r"(?<![0-9A-Za-z_])(?<![0-9][ \-])[2-9][0-9]{2} [2-9][0-9]{2} [0-9]{4}"
    + _NUM_RIGHT
    + r"(?![ \-][0-9])"
)
# National numbers written with their trunk prefix 0 and no country code: UK
# "07700 900123", "020 7946 0958", DE "0151 23456789", FR "06 12 34 56 78",
# JP "090-1234-5678", AU "0412 345 678", TW "0912-345-678". 10-12 digits in
# 2-5 groups joined by one kind of separator; the same digits without
# separators need a phone word. Mainland landlines also fit and are reported
# as cn_landline (equal spans: the more specific kind wins).
_NATIONAL_PHONE: Final = re.compile(
    r"(?<![0-9A-Za-z_+.\-])(?<![0-9][ ])"
    r"(?:0[1-9][0-9]{0,4}(?P<sep>[ .\-])[0-9]{2,8}(?:(?P=sep)[0-9]{2,8}){0,3}"
    # The area code in brackets: AU "(02) 9876 5432", JP "(03) 1234-5678".
    r"|\((?P<trunk>0[1-9][0-9]{0,3})\)\s?[0-9]{2,8}(?:[ \-][0-9]{2,8}){0,2}"
    r"|(?P<bare>0[1-9][0-9]{8,10}))" + _NUM_RIGHT + r"(?![ .\-][0-9])"
)
_CN_AREA_CODE: Final = re.compile(r"0(?:10|2[0-9]|[3-9][0-9]{2})")
# Hong Kong and Singapore numbers have 8 digits and no trunk prefix; so does
# much else, so only right after a phone word ("WhatsApp 我：9123 4567").
_EIGHT_DIGIT_PHONE: Final = re.compile(
    r"(?<![0-9A-Za-z_])(?<![0-9][ .\-])[2-9][0-9]{3}[ \-]?[0-9]{4}"
    + _NUM_RIGHT
    + r"(?![ .\-][0-9])"
)
# A country code in brackets without "+": "(852) 6123 4567".
_BRACKETED_COUNTRY: Final = re.compile(
    r"(?<![0-9A-Za-z_])\([1-9][0-9]{1,2}\)\s?[0-9]{2,5}(?:[ \-][0-9]{2,5}){1,3}" + _NUM_RIGHT
)


def _detect_phone(folded: str) -> Iterator[_Candidate]:
    for m in _INTL_PHONE.finditer(folded):
        digits = _digits(m.group())
        if folded.startswith("00", m.start()):
            digits = digits[2:]
        if 8 <= len(digits) <= 15 and not _in_negative_context(folded, m.start()):
            yield _Candidate("phone", m.start(), m.end(), digits)
    for m in _US_PHONE.finditer(folded):
        if not _in_negative_context(folded, m.start()):
            yield _Candidate("phone", m.start(), m.end(), "1" + _digits(m.group())[-10:])
    cue_anywhere = _PHONE_CUE.search(folded) is not None
    for m in _US_PHONE_SPACED.finditer(folded) if cue_anywhere else ():
        if _phone_cue_before(folded, m.start()) and not _in_negative_context(folded, m.start()):
            yield _Candidate("phone", m.start(), m.end(), "1" + _digits(m.group()))
    for m in _NATIONAL_PHONE.finditer(folded):
        digits = _digits(m.group())
        if not 10 <= len(digits) <= 12 or _in_negative_context(folded, m.start()):
            continue
        # No separators, or pairs with spaces ("06 12 34 56 78" and lottery
        # draws "01 05 12 18 23" alike): only after a phone word.
        pairs = m.group("sep") == " " and all(len(g) == 2 for g in m.group().split(" ")[1:])
        if (m.group("bare") or pairs) and not _phone_cue_before(folded, m.start()):
            continue
        # "0755-123456": a mainland area code, a dash, one local block of the
        # wrong length is a malformed mainland number, not a foreign one.
        head, _, rest = m.group().partition("-")
        if rest and "-" not in rest and _CN_AREA_CODE.fullmatch(head):
            continue
        if m.group("trunk") and _CN_AREA_CODE.fullmatch(m.group("trunk")):
            continue  # "(021) 6123 4567" is the landline rule's
        yield _Candidate("phone", m.start(), m.end(), digits)
    for m in _EIGHT_DIGIT_PHONE.finditer(folded) if cue_anywhere else ():
        if _phone_cue_before(folded, m.start()) and not _in_negative_context(folded, m.start()):
            yield _Candidate("phone", m.start(), m.end(), _digits(m.group()))
    for m in _BRACKETED_COUNTRY.finditer(folded) if "(" in folded else ():
        digits = _digits(m.group())
        if 9 <= len(digits) <= 13 and not _in_negative_context(folded, m.start()):
            yield _Candidate("phone", m.start(), m.end(), digits)


_OCTET: Final = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_IPV4: Final = re.compile(
    r"(?<![0-9A-Za-z_.])" + rf"(?:{_OCTET}\.){{3}}{_OCTET}" + r"(?![0-9A-Za-z_])(?!\.[0-9])"
)
_IPV6_CANDIDATE: Final = re.compile(r"(?<![0-9A-Za-z_:.])[0-9A-Fa-f:][0-9A-Fa-f:.]{2,44}")
# Word-bounded: "ver" must not match the end of "server".
# Sections and upgrades read like versions: "Chapter 12.3.4.5", "升级到 2.4.10.1".
_VERSION_CONTEXT: Final = re.compile(
    r"(?:版本号?|固件|升级到?|更新到?|第|章节?|条款?|"
    r"(?<![A-Za-z])(?:version|ver\.?|release|build|v|chapter|section|sec\.|clause|step|rule|§"
    r"|(?:upgrade|update)d?\s+to))\s*[:：]?\s*$",
    re.I,
)


def _detect_ip(folded: str) -> Iterator[_Candidate]:
    for m in _IPV4.finditer(folded):
        if _VERSION_CONTEXT.search(folded[max(0, m.start() - 12) : m.start()]):
            continue
        yield _Candidate("ip_address", m.start(), m.end(), m.group())
    for m in _IPV6_CANDIDATE.finditer(folded):
        raw = m.group()
        # A sentence may end right after the address: drop a trailing "." or ":".
        while raw.endswith(".") or (raw.endswith(":") and not raw.endswith("::")):
            raw = raw[:-1]
        if raw.count(":") < 2:
            continue
        end = m.start() + len(raw)
        if end < len(folded) and (folded[end].isalnum() or folded[end] == "_"):
            continue
        try:
            address = ipaddress.IPv6Address(raw)
        except ValueError:
            continue
        # "::1"-like strings carry nothing personal, and "a::b" is C++ scope:
        # three groups, or two with a digit in them (fe80::1).
        groups = [group for group in raw.split(":") if group]
        if len(groups) < 2 or (len(groups) == 2 and not any(ch.isdigit() for ch in raw)):
            continue
        yield _Candidate("ip_address", m.start(), end, address.compressed)


# Words that follow "password is" / "token is" in prose and are not secrets.
_PROSE_WORDS: Final = """
    a an the my your his her our their its this that it not no none null n/a na blank empty
    incorrect wrong correct invalid valid expired required optional mandatory needed missing
    weak strong secure insecure long short too very also still now here there below above
    same different changed reset set saved stored sent hidden encrypted protected forgotten
    updated unknown ok okay fine case-sensitive sensitive being correctly just stuck
    what which where when why how mine yours safe unsafe easy hard simple complex new old
"""
_NOT_A_SECRET: Final = frozenset(_PROSE_WORDS.split())
_PLACEHOLDER: Final = re.compile(r"\[[A-Z_]+(?::[0-9a-f]{8})?\]")

# The separator between a keyword and its value: 是/为/系 (Cantonese)/：/=/is/was, with a few
# Chinese adverbs (密码一直是 ...) and English "for <account>" (password for gmail is ...).
_SEPARATOR: Final = (
    # JSON and quoted keys: "password": "hunter2".
    r"[\"']?"
    r"(?:\s+for\s+(?:[^\s:=]{1,30}\s+){0,3}?[^\s:=]{1,30})?"
    # "the token I use is ...", "the password we set was ...".
    r"(?:\s+(?:that\s+)?(?:i|we|you|he|she|they)\s+(?:use|used|have|got|set|chose|picked|typed|entered))?"
    # "密码如下：", "token 登录：": a verb between the keyword and its colon.
    r"(?:\s*(?:如下|登录|登陆|输入|填写|填入)(?=\s*[:：]))?"
    r"\s*(?:"
    r"(?:都|也|还|一直|仍然|现在|已经|已|就)?(?:是|为|為|系|係|は|(?:改|重置|重设|换|设|设置|更新|变)(?:成|为|為)了?)\s*[:]?"
    r"|[:=]"
    r"|\s(?P<prose>is|was)(?:\s*:)?(?=\s)"
    r")\s*"
)
_SECRET_VALUE: Final = (
    r"(?:\"(?P<dq>[^\"\n]{1,200})\"|'(?P<sq>[^'\n]{1,200})'|“(?P<cq>[^”\n]{1,200})”"
    r"|「(?P<jq>[^」\n]{1,200})」|`(?P<bq>[^`\n]{1,200})`|(?P<bare>[!-~]{1,200}))"
)
_PASSWORD_KEYWORD: Final = (
    r"(?:密码|口令|パスワード|暗証番号|비밀번호|(?<![A-Za-z])(?:password|passwd|passcode|passphrase|pwd"
    r"|passwort|kennwort|mot de passe|contraseña|senha)(?![A-Za-z]))"
)
# "user: admin pass: admin123", "pw=hunter22": the short keywords only before ":"
# or "=" and a value with a digit, and not a boarding/bus/season pass.
_SHORT_PASSWORD: Final = re.compile(
    r"(?<![A-Za-z])(?<!boarding )(?<!bus )(?<!season )(?<!day )(?<!ski )(?<!press )"
    r"(?:pw|pass)\s?[:=]\s*(?P<bare>[!-~]*[0-9][!-~]*)",
    re.IGNORECASE,
)
_PASSWORD: Final = re.compile(_PASSWORD_KEYWORD + _SEPARATOR + _SECRET_VALUE, re.IGNORECASE)
# "wifi密码 12345678": only a space between keyword and value. Accepted only
# when the value has a digit, so "password reset" stays prose.
_PASSWORD_SPACED: Final = re.compile(
    _PASSWORD_KEYWORD + r"[ \t]+(?P<bare>[!-~]*[0-9][!-~]*)", re.IGNORECASE
)
# "邮箱密码Zx9!kLm2", "pwd2024!x": the value glued to its keyword. After a
# Chinese keyword any printable-ASCII run with a digit (密码学 stays a word);
# after an English one the value must start with a digit ("passwords",
# "password-protected" stay prose) and have 4+ characters ("password123"
# named as an example has 3).
_PASSWORD_GLUED: Final = re.compile(
    r"(?:密码|口令)(?![:=])(?P<bare>[!-~]{0,100}[0-9][!-~]{0,100})"
    r"|(?<![A-Za-z])(?i:password|passwd|passcode|pwd)"
    # "password123abc", "passwordAbc123!": a digit first, or a capital and a digit later
    # ("passwords", "passwordless", "password-protected" stay words).
    r"(?P<latin>[0-9][!-~]{3,199}|[A-Z](?=[!-~]{0,60}[0-9])[!-~]{3,199})",
)
# "PIN4921", "PIN码0912", "pin码 1379": 4-12 digits right after the keyword
# ("PIN1", "GPIO pin17" are pin labels, too short to be a PIN).
_PIN_GLUED: Final = re.compile(
    r"(?<![A-Za-z])PIN(?:码|号)?[ \t]*(?P<pin>[0-9]{4,12})(?![0-9A-Za-z])", re.IGNORECASE
)
# A PIN is digits only, so "PIN is stuck in the machine" stays prose.
_PIN: Final = re.compile(
    r"(?<![A-Za-z])PIN(?:码|\s?code)?(?![A-Za-z])"
    + _SEPARATOR
    + r"[\"']?(?P<pin>[0-9]{4,12})(?![0-9A-Za-z])",
    re.IGNORECASE,
)
# "我把 wifi 密码发你：Home@5678": a few Chinese words between the keyword and a
# colon. "密码到期时间：2026-12-31" reads the same, so the value needs a letter and
# a digit.
_PASSWORD_INFIX: Final = re.compile(
    r"(?:密码|口令)[\u4e00-\u9fff]{1,4}\s*[:：]\s*(?P<bare>[!-~]{4,100})"
)
# "my key is 1a2b3c4d5e6f7g8h", "百度 AK: ... SK: ...": "key" alone and the AK/SK
# abbreviations, only with a value that looks generated.
_PROSE_KEY: Final = re.compile(
    r"(?<![A-Za-z])(?:(?i:(?:my|our|your|the|his|her|their)\s+(?:[A-Za-z]+\s+)?key\s+is)"
    r"|(?:AK|SK)\s*[:=：])\s*(?P<bare>[!-~]{12,200})"
)
_KEYED_KEYWORD: Final = (
    r"(?:密钥|秘钥|私钥|令牌|(?<![A-Za-z])(?:api[\s_\-]?key|apikey|access[\s_\-]?key(?:[\s_\-]?id)?"
    r"|secret[\s_\-]?access[\s_\-]?key|secret(?:[\s_\-]?key)?|client[\s_\-]?secret"
    r"|app[\s_\-]?secret|(?:access|auth|refresh|api|bearer|session)?[\s_\-]?token"
    r"|session[\s_\-]?id)(?![A-Za-z]))"
)
_KEYED_SECRET: Final = re.compile(_KEYED_KEYWORD + _SEPARATOR + _SECRET_VALUE, re.IGNORECASE)
# "use the token 9f8e7d6c5b4a3928 to log in": a key named in prose with only
# a space before it. Accepted when the value looks generated: 12+ characters
# with a letter and a digit ("token count 1200", "secret santa" stay prose).
_KEYED_SPACED: Final = re.compile(
    _KEYED_KEYWORD + r"[ \t]+(?P<bare>[!-+\--~]{12,200})", re.IGNORECASE
)
# Cloud access key ids; the secret that travels with one (AWS: 40 base64
# characters) is redacted too when it follows within a short span, whatever
# joins them ("AKIA... / wJalr...", "AKIA...:wJalr...", "... with secret ...").
_ACCESS_KEY_ID: Final = re.compile(
    r"(?<![A-Za-z0-9])(?:(?:AKIA|ASIA)[0-9A-Z]{16}|LTAI[0-9A-Za-z]{12,24}|AKID[0-9A-Za-z]{32})"
    r"(?![A-Za-z0-9])"
)
_PAIRED_SECRET: Final = re.compile(
    r"(?<![A-Za-z0-9/+=_\-])[A-Za-z0-9/+]{24,64}={0,2}(?![A-Za-z0-9/+=_\-])"
)
_PAIR_WINDOW = 80
_KNOWN_KEY_FORMATS: Final = re.compile(
    r"(?<![A-Za-z0-9_\-])(?:"
    r"sk-(?:proj-|ant-[a-z0-9]{2,8}-|live_|test_)?[A-Za-z0-9_\-]{20,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}"
    # Stripe-style live/test keys: "sk_live_...", "pk_test_...", "tk_live_...", "whsec_..."
    r"|[a-z]{2,6}_(?:live|test|prod)_[A-Za-z0-9]{10,}"
    r"|whsec_[A-Za-z0-9]{16,}"
    # GitLab, Hugging Face, npm, PyPI, SendGrid, DigitalOcean, Shopify, Slack app tokens
    r"|glpat-[A-Za-z0-9_\-]{20,}|hf_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{36}"
    r"|pypi-[A-Za-z0-9_\-]{50,}|SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"
    r"|do[por]_v1_[a-f0-9]{64}|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}|xapp-[0-9A-Za-z\-]{20,}"
    r"|github_pat_[A-Za-z0-9_]{22,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|LTAI[0-9A-Za-z]{12,24}|AKID[0-9A-Za-z]{32}"
    r"|xox[bpoars]-[A-Za-z0-9\-]{10,}"
    r"|AIza[0-9A-Za-z_\-]{35}"
    r"|eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*"
    r")(?![A-Za-z0-9_\-])"
)
_BEARER: Final = re.compile(
    r"(?<![A-Za-z])Bearer\s+(?P<token>[A-Za-z0-9\-._~+/]{16,}=*)"
    # HTTP Basic credentials are base64("user:password").
    r"|Authorization\s*[:=]\s*Basic\s+(?P<basic>[A-Za-z0-9+/]{8,}={0,2})",
    re.IGNORECASE,
)


_NEXT_PARAMETER: Final = re.compile(r"&(?=[A-Za-z_][A-Za-z0-9_.\-]*=)")


def _secret_span(m: re.Match[str]) -> tuple[int, int] | None:
    for group in ("dq", "sq", "cq", "jq", "bq"):
        if group in m.re.groupindex and m.group(group) is not None:
            return m.start(group), m.end(group)
    start, end = m.start("bare"), m.end("bare")
    value = m.group("bare")
    # In a URL query the value ends where the next parameter starts.
    value = _NEXT_PARAMETER.split(value, maxsplit=1)[0]
    end = start + len(value)
    # Sentence punctuation after the value is not part of it; a closing
    # bracket is, unless it closes nothing.
    while value and (
        value[-1] in ".,;"
        or (value[-1] == ")" and value.count(")") > value.count("("))
        or (value[-1] == "]" and value.count("]") > value.count("["))
    ):
        value = value[:-1]
        end -= 1
    return (start, end) if value else None


def _is_filler(value: str) -> bool:
    return (
        value.lower() in _NOT_A_SECRET
        or _PLACEHOLDER.fullmatch(value) is not None
        or set(value) <= set("*•x·.")
    )


def _is_prose_word(m: re.Match[str], value: str) -> bool:
    # "my password was stolen": after English "is"/"was", an unquoted
    # lower-case word is prose. Quote it, or use ":", to have it redacted.
    return (
        m.group("prose") is not None
        and m.group("bare") is not None
        and value.isalpha()
        and value.islower()
    )


# One-time and door codes: digits after 验证码/动态码/verification code/OTP/door
# code ... (4-8 of them, so "验证码 5 分钟内有效" stays prose), card CVVs (3-4),
# and the two phrasings of a code SMS: "Use code 552031 to sign in", "552031
# is your verification code".
_CODE_KEYWORD: Final = (
    r"(?:(?:短信|登录|登陆|手机|邮箱)?(?:验证码|校验码|认证码|动态码|确认码|授权码)|门禁码|开门码"
    r"|(?<![A-Za-z])(?:(?:verification|confirmation|security|one[\s\-]?time|login|sign[\s\-]?in"
    r"|access|auth(?:entication)?|2fa|mfa|otp|door|gate|entry|alarm|unlock)\s?(?:pass)?code"
    r"|otp|totp)(?![A-Za-z]))"
)
# Literals every code match contains (a cheap search before the keyword patterns).
_CODE_HINT: Final = re.compile(r"码|code|otp|cv[vc]|pin", re.IGNORECASE)
_ONE_TIME_CODE: Final = re.compile(
    _CODE_KEYWORD
    + r"(?:"
    + _SEPARATOR
    + r"|[ \t]*)[\"'“「]?(?P<code>[0-9]{4,8}[#*]?)(?![0-9A-Za-z])",
    re.IGNORECASE,
)
_CVV: Final = re.compile(
    r"(?<![A-Za-z])(?:cvv2?|cvc2?|安全码)(?:"
    + _SEPARATOR
    + r"|[ \t]*)(?P<code>[0-9]{3,4})(?![0-9A-Za-z])",
    re.IGNORECASE,
)
_CODE_SMS: Final = re.compile(
    r"(?<![A-Za-z])(?:use|enter|type|input)\s+(?:the\s+)?(?:code|pin)\s*[:：]?\s*"
    # "to sign in", not "at checkout": a login code, not a numeric promo code.
    r"(?P<use>[0-9]{4,8})(?![0-9A-Za-z])(?=\s+(?:to|for)\s+(?:sign|log|verify|confirm|continue"
    r"|reset|complete|access|authenticate|unlock))"
    r"|(?<![0-9A-Za-z])(?P<yours>[0-9]{4,8})\s+is\s+your\s+(?:[A-Za-z\-]+\s+){0,3}?"
    r"(?:code|pin|otp|passcode|password)(?![A-Za-z])",
    re.IGNORECASE,
)


# Literals in every keyword of the patterns below; one search skips them all
# on most turns.
_PASSWORD_HINT: Final = re.compile(
    r"密码|口令|パスワード|暗証|비밀번호|pass|pwd|pw|pin|kennwort|contrase|senha", re.IGNORECASE
)
_KEY_HINT: Final = re.compile(r"密钥|秘钥|私钥|令牌|key|secret|token|session", re.IGNORECASE)


def _detect_password(folded: str) -> Iterator[_Candidate]:
    if _DIGIT.search(folded) and _CODE_HINT.search(folded):
        for pattern in (_ONE_TIME_CODE, _CVV):
            for m in pattern.finditer(folded):
                yield _Candidate("password", m.start("code"), m.end("code"), m.group("code"))
        for m in _CODE_SMS.finditer(folded):
            group = "use" if m.group("use") is not None else "yours"
            yield _Candidate("password", m.start(group), m.end(group), m.group(group))
    if "://" in folded:
        for m in _URL_USERINFO.finditer(folded):
            yield _Candidate("password", m.start("secret"), m.end("secret"), m.group("secret"))
    if _PASSWORD_HINT.search(folded) is None:
        return
    for m in _PASSWORD.finditer(folded):
        span = _secret_span(m)
        if span is None:
            continue
        value = folded[span[0] : span[1]]
        if len(value) < 3 or _is_filler(value) or _is_prose_word(m, value):
            continue
        yield _Candidate("password", span[0], span[1], value)
    for m in _PASSWORD_GLUED.finditer(folded):
        group = "bare" if m.group("bare") is not None else "latin"
        value = m.group(group).rstrip(".,;)]")
        if len(value) >= 4 and not _is_filler(value):
            yield _Candidate("password", m.start(group), m.start(group) + len(value), value)
    for m in _PASSWORD_SPACED.finditer(folded):
        span = _secret_span(m)
        if span is None or span[1] - span[0] < 4:
            continue
        yield _Candidate("password", span[0], span[1], folded[span[0] : span[1]])
    for m in _PASSWORD_INFIX.finditer(folded):
        span = _secret_span(m)
        if span is None:
            continue
        value = folded[span[0] : span[1]]
        if any(ch.isalpha() for ch in value) and any(ch.isdigit() for ch in value):
            yield _Candidate("password", span[0], span[1], value)
    for m in _SHORT_PASSWORD.finditer(folded):
        span = _secret_span(m)
        if span is not None and span[1] - span[0] >= 4:
            yield _Candidate("password", span[0], span[1], folded[span[0] : span[1]])
    for m in _PIN_GLUED.finditer(folded):
        yield _Candidate("password", m.start("pin"), m.end("pin"), m.group("pin"))
    for m in _PIN.finditer(folded):
        yield _Candidate("password", m.start("pin"), m.end("pin"), m.group("pin"))


def _looks_like_key(value: str) -> bool:
    # A key has digits or mixed case, or is long; "token is expired" is prose.
    has_digit = any(ch.isdigit() for ch in value)
    mixed_case = any(ch.isupper() for ch in value) and any(ch.islower() for ch in value)
    return len(value) >= 8 and (has_digit or mixed_case or len(value) >= 20)


def _generated(value: str) -> bool:
    return (
        len(value) >= 12 and any(ch.isdigit() for ch in value) and any(ch.isalpha() for ch in value)
    )


def _detect_api_key(folded: str) -> Iterator[_Candidate]:
    for m in _KNOWN_KEY_FORMATS.finditer(folded):
        yield _Candidate("api_key", m.start(), m.end(), m.group())
    for m in _ACCESS_KEY_ID.finditer(folded):
        window = folded[m.end() : m.end() + _PAIR_WINDOW]
        paired = _PAIRED_SECRET.search(window)
        if (
            paired is not None
            and _generated(paired.group())
            and not _ACCESS_KEY_ID.match(paired.group())
        ):
            start = m.end() + paired.start()
            yield _Candidate("api_key", start, start + len(paired.group()), paired.group())
    for m in _BEARER.finditer(folded):
        group = "token" if m.group("token") is not None else "basic"
        yield _Candidate("api_key", m.start(group), m.end(group), m.group(group))
    if _KEY_HINT.search(folded) is None and "K" not in folded:  # "K": the AK/SK labels
        return
    for m in _PROSE_KEY.finditer(folded):
        span = _secret_span(m)
        if span is not None and _generated(folded[span[0] : span[1]]):
            yield _Candidate("api_key", span[0], span[1], folded[span[0] : span[1]])
    for m in _KEYED_SPACED.finditer(folded):
        span = _secret_span(m)
        if span is None:
            continue
        value = folded[span[0] : span[1]]
        if _generated(value) and not _is_filler(value):
            yield _Candidate("api_key", span[0], span[1], value)
    for m in _KEYED_SECRET.finditer(folded):
        span = _secret_span(m)
        if span is None:
            continue
        value = folded[span[0] : span[1]]
        if _is_filler(value) or not _looks_like_key(value):
            continue
        yield _Candidate("api_key", span[0], span[1], value)


# Detectors that only run on a text with a digit in it: every number kind
# (IPv6 included: an address with no decimal digit is not reported). Most
# conversation turns have none, and then only the key, e-mail and password
# detectors run.
_DIGIT: Final = re.compile(r"[0-9]")
_DETECTORS: Final[tuple[_Detector, ...]] = (_detect_api_key, _detect_password)
_DIGIT_DETECTORS: Final[tuple[_Detector, ...]] = (
    _detect_resident_id,
    _detect_resident_id_15,
    _detect_national_id,
    _detect_passport,
    _detect_bank_card,
    _detect_cn_mobile,
    _detect_cn_landline,
    _detect_ip,
    _detect_phone,
)


def _resolve_overlaps(candidates: list[_Candidate]) -> list[_Candidate]:
    """Keep the longest candidate of each overlapping group (most specific on ties)."""
    ordered = sorted(candidates, key=lambda c: (-(c.end - c.start), _SPECIFICITY[c.kind], c.start))
    kept: list[_Candidate] = []
    for candidate in ordered:
        if all(candidate.end <= k.start or candidate.start >= k.end for k in kept):
            kept.append(candidate)
    return sorted(kept, key=lambda c: c.start)


# --- hashing ------------------------------------------------------------------


@lru_cache(maxsize=32)
def _salt_key(salt: str) -> bytes:
    # blake2b keys are at most 64 bytes; hashing the salt accepts any length.
    return hashlib.blake2b(salt.encode("utf-8"), digest_size=32).digest()


def _digest(label: str, canonical: str, salt: str) -> str:
    return hashlib.blake2b(
        canonical.encode("utf-8"),
        digest_size=4,
        key=_salt_key(salt),
        person=label.encode("ascii")[:16],
    ).hexdigest()


def fingerprint_user_id(user_id: str, *, salt: str = "langgraph-memory") -> str:
    """A salted, stable fingerprint of a user id for content-free receipts and logs.

    Args:
        user_id: The user id to fingerprint.
        salt: Deployment secret; the same id gives a different fingerprint under
            another salt, so fingerprints cannot be joined across deployments.

    Raises:
        InvalidUserIdError: ``user_id`` is not a non-empty string.

    Example:
        >>> fp = fingerprint_user_id("alice")
        >>> fp.startswith("user:"), len(fp), fp == fingerprint_user_id("alice")
        (True, 21, True)
    """
    if not isinstance(user_id, str) or not user_id:
        raise InvalidUserIdError(
            f"fingerprint_user_id() needs a non-empty string user id, got {user_id!r}."
        )
    digest = hashlib.blake2b(
        user_id.encode("utf-8"), digest_size=8, key=_salt_key(salt), person=b"lgm-user-id"
    ).hexdigest()
    return f"user:{digest}"


# --- public API ---------------------------------------------------------------

# Message fields besides ``content`` that can carry user text into storage.
_MESSAGE_PAYLOAD_FIELDS: Final = (
    "tool_calls",
    "invalid_tool_calls",
    "tool_call_chunks",
    "additional_kwargs",
    "response_metadata",
    "artifact",
)
# Keys whose values are wiring, not text: redacting an id would unpair a tool
# call from its result, and a thinking block's signature is opaque.
_STRUCTURAL_KEYS: Final = frozenset(
    {"id", "tool_call_id", "type", "name", "index", "signature", "model_name", "model"}
)
_MEDIA_BLOCK_TYPES: Final = frozenset(
    {"image", "image_url", "file", "audio", "input_audio", "video", "document"}
)


class Redactor:
    """Finds identifiers and applies a :class:`PrivacyPolicy` to them.

    Patterns are compiled once at import; a ``Redactor`` only binds a policy,
    so building one is cheap and instances are safe to share across threads.

    Args:
        policy: What to do per identifier kind; ``None`` masks every kind.

    Raises:
        ConfigurationError: ``policy`` is not a ``PrivacyPolicy``.

    Example:
        >>> from types import MappingProxyType
        >>> policy = PrivacyPolicy(actions=MappingProxyType({"email": "hash"}))
        >>> Redactor(policy).redact("write to Ann@Example.org").text  # doctest: +ELLIPSIS
        'write to [EMAIL:...]'
    """

    __slots__ = ("_actions", "_salt", "policy")

    def __init__(self, policy: PrivacyPolicy | None = None) -> None:
        if policy is None:
            policy = PrivacyPolicy()
        if not isinstance(policy, PrivacyPolicy):
            raise ConfigurationError(
                f"Redactor(policy={policy!r}): pass a langgraph_memory.config.PrivacyPolicy or None."
            )
        self.policy = policy
        self._actions: dict[str, RedactionAction] = {
            kind: policy.action_for(kind) for kind in IDENTIFIER_KINDS
        }
        self._salt = policy.hash_salt

    def find(self, text: str) -> tuple[Finding, ...]:
        """Locate identifiers without changing the text or raising for ``reject``.

        Example:
            >>> [(f.kind, f.start, f.end) for f in Redactor().find("IP 10.0.0.8")]
            [('ip_address', 3, 11)]
        """
        return tuple(
            Finding(c.kind, c.start, c.end, self._actions[c.kind]) for c in self._scan(text)
        )

    def redact(self, text: str) -> RedactionResult:
        """Apply the policy to every identifier in ``text``.

        Raises:
            RedactionRejectedError: An identifier's kind is set to ``reject``;
                the message names the kind and position, never the value.
            TypeError: ``text`` is not a string.

        Example:
            >>> Redactor().redact("我的手机号是13800138000").text
            '我的手机号是[PHONE]'
        """
        candidates = self._scan(text)
        for candidate in candidates:
            if self._actions[candidate.kind] == "reject":
                raise RedactionRejectedError(
                    f"Text contains a {candidate.kind!r} identifier at characters "
                    f"{candidate.start}-{candidate.end}, and the privacy policy rejects "
                    f"{candidate.kind!r}. Remove it from the text, or set "
                    f"PrivacyPolicy(actions={{{candidate.kind!r}: 'mask'}}) (or 'hash')."
                )
        pieces: list[str] = []
        cursor = 0
        findings: list[Finding] = []
        for candidate in candidates:
            action = self._actions[candidate.kind]
            findings.append(Finding(candidate.kind, candidate.start, candidate.end, action))
            if action == "keep":
                continue
            label = PLACEHOLDER_LABELS[candidate.kind]
            if action == "hash":
                replacement = f"[{label}:{_digest(label, candidate.canonical, self._salt)}]"
            else:
                replacement = f"[{label}]"
            pieces.append(text[cursor : candidate.start])
            pieces.append(replacement)
            cursor = candidate.end
        pieces.append(text[cursor:])
        return RedactionResult("".join(pieces), tuple(findings))

    def redact_messages(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        """Copies of LangChain messages with redacted content; the inputs are untouched.

        Everything a message carries into storage (the memory queue serialises
        whole messages) is covered: string content; every string inside
        content blocks (``text``, a ``tool_use`` block's ``input``, reasoning)
        except media blocks and structural fields; ``tool_calls`` args,
        ``invalid_tool_calls`` and ``tool_call_chunks`` args (raw JSON strings);
        ``additional_kwargs`` (a provider's raw ``function.arguments``);
        ``response_metadata``; a ``ToolMessage``'s ``artifact``. Ids, names and
        types are kept, so tool calls still pair with their results.

        Example:
            >>> from langchain_core.messages import AIMessage, HumanMessage
            >>> Redactor().redact_messages([HumanMessage("pwd: hunter2!")])[0].content
            'pwd: [PASSWORD]'
            >>> call = {"name": "sms", "args": {"to": "13800138000"}, "id": "c1"}
            >>> Redactor().redact_messages([AIMessage("", tool_calls=[call])])[0].tool_calls[0]["args"]
            {'to': '[PHONE]'}
        """
        out: list[BaseMessage] = []
        for message in messages:
            update: dict[str, Any] = {"content": self._redact_content(message.content)}
            for field_name in _MESSAGE_PAYLOAD_FIELDS:
                value = getattr(message, field_name, None)
                if value:
                    update[field_name] = self._redact_value(value)
            out.append(message.model_copy(update=update))
        return out

    def _redact_content(self, content: str | list[str | dict[Any, Any]]) -> Any:
        if isinstance(content, str):
            return self.redact(content).text
        blocks: list[str | dict[Any, Any]] = []
        for block in content:
            if isinstance(block, str):
                blocks.append(self.redact(block).text)
            elif block.get("type") in _MEDIA_BLOCK_TYPES:
                blocks.append(block)  # base64 payloads and URLs, not prose
            else:
                blocks.append(self._redact_value(block))
        return blocks

    def _redact_value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact(value).text
        if isinstance(value, dict):
            return {
                key: item if key in _STRUCTURAL_KEYS else self._redact_value(item)
                for key, item in value.items()
            }
        if isinstance(value, list | tuple):
            return type(value)(self._redact_value(item) for item in value)
        return value

    def _scan(self, text: str) -> list[_Candidate]:
        if not isinstance(text, str):
            raise TypeError(f"redact() needs a str, got {type(text).__name__}: {text!r:.60}")
        if not text:
            return []
        folded = text.translate(_FOLD_WIDTH)
        detectors = _DETECTORS + _DIGIT_DETECTORS if _DIGIT.search(folded) else _DETECTORS
        candidates = [c for detect in detectors for c in detect(folded)]
        if "@" in folded:
            candidates.extend(_detect_email(folded))
        return _resolve_overlaps(candidates) if candidates else []


_DEFAULT_REDACTOR: Final = Redactor()


def redact(text: str, policy: PrivacyPolicy | None = None) -> RedactionResult:
    """Redact identifiers in ``text`` under ``policy`` (``None``: mask everything).

    Example:
        >>> redact("card 4111 1111 1111 1111, ID 11010519491231002X").text
        'card [BANK_CARD], ID [ID_NUMBER]'
    """
    redactor = _DEFAULT_REDACTOR if policy is None else Redactor(policy)
    return redactor.redact(text)


def redact_for_log(value: object, limit: int = 160) -> str:
    """``str(value)`` with every identifier masked, cut to ``limit`` characters.

    For log lines and stored error notes that quote model or user text (a cited
    id, a validation error echoing the model's answer): logs are kept longer and
    read by more people than the memories themselves.

    Example:
        >>> redact_for_log("bad id 'call 13812345678 now'")
        "bad id 'call [PHONE] now'"
    """
    text = _DEFAULT_REDACTOR.redact(str(value)).text
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "\u2026"


def redact_messages(
    messages: Sequence[BaseMessage], policy: PrivacyPolicy | None = None
) -> list[BaseMessage]:
    """Copies of ``messages`` with identifiers redacted (see :meth:`Redactor.redact_messages`)."""
    redactor = _DEFAULT_REDACTOR if policy is None else Redactor(policy)
    return redactor.redact_messages(messages)
