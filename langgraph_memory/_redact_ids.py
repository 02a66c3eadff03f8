"""Identity and account numbers and addresses: resident and national IDs, passports,
bank cards, accounts and IBANs, IP addresses. Pure, stdlib-only."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from typing import Final

from langgraph_memory._checksums import (
    is_valid_hkid,
    is_valid_iban,
    is_valid_nric,
    is_valid_resident_id,
    is_valid_ssn,
    is_valid_taiwan_id,
    luhn_valid,
)
from langgraph_memory._checksums import valid_birth_date as _valid_birth_date
from langgraph_memory._redact_text import (
    _NUM_LEFT,
    _NUM_RIGHT,
    _Candidate,
    _clause_before,
    _digits,
    _in_negative_context,
)

_RESIDENT_ID: Final = re.compile(
    _NUM_LEFT
    + r"[1-9][0-9]{5}(?P<sep>[ \-]?)(?:18|19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])"
    + r"(?P=sep)[0-9]{3}[0-9Xx]"
    + r"(?![0-9A-Za-z_])"
)


# Right after its keyword an 18-character ID is taken without its check digit:
# people mistype one digit, and what they typed is still their ID number.
_ID_KEYWORD: Final = re.compile(
    r"(?:身份证|身份證|证件|證件|居民身份|ID\s?(?:card|number|no\.?|#))(?:号码|號碼|号|號)?"
    r"(?:\s*(?:是|为|為|系|:|：|=|is)\s*|\s*)$",
    re.IGNORECASE,
)


def _detect_resident_id(folded: str) -> Iterator[_Candidate]:
    for m in _RESIDENT_ID.finditer(folded):
        keyed = _ID_KEYWORD.search(folded[max(0, m.start() - 16) : m.start()]) is not None
        if is_valid_resident_id(m.group(), check_char=not keyed):
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
    r"|(?:银行|收款|付款|对公|对私|开户|汇款|转账|结算|还款|工资)卡?(?:账|帐)(?:号|户)(?:号码?)?"
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
# India: PAN (five letters, the fourth the holder type, four digits, a letter) and Aadhaar
# (twelve digits, the first 2-9); both only after their own word or an ID word, since
# product codes and order numbers share the shapes.
_PAN: Final = re.compile(r"(?<![0-9A-Za-z])[A-Z]{3}[ABCFGHJLPT][A-Z][0-9]{4}[A-Z](?![0-9A-Za-z])")
_PAN_WORD: Final = re.compile(
    r"(?<![A-Za-z])(?:pan|permanent\s+account\s+number)(?![A-Za-z])", re.I
)
_AADHAAR: Final = re.compile(
    r"(?<![0-9])[2-9][0-9]{3}(?P<sep>[ -]?)[0-9]{4}(?P=sep)[0-9]{4}(?![0-9])"
)
_AADHAAR_WORD: Final = re.compile(r"(?<![A-Za-z])(?:aadhaa?r|uidai|uid)(?![A-Za-z])|आधार", re.I)


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
    for pattern, word, prefix in ((_PAN, _PAN_WORD, "INPAN"), (_AADHAAR, _AADHAAR_WORD, "INUID")):
        for m in pattern.finditer(folded):
            before = _clause_before(folded, m.start())
            if not _in_negative_context(folded, m.start()) and (
                word.search(before) or _ID_WORD.search(before)
            ):
                yield _Candidate("national_id", m.start(), m.end(), prefix + compact(m.group()))
    for m in _NINO.finditer(folded) if letter_ids else ():
        if _in_negative_context(folded, m.start()):
            continue
        if m.group("sep") or _NINO_WORD.search(_clause_before(folded, m.start())):
            yield _Candidate("national_id", m.start(), m.end(), "UK" + compact(m.group()))


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


def _is_netmask(address: str) -> bool:
    """255.255.255.0 and its kin (ones, then zeros) name a subnet size, not a host
    (255.255.255.255, all ones, stays an address: the broadcast one)."""
    bits = int(ipaddress.IPv4Address(address))
    return address.startswith("255.") and bits != 0xFFFFFFFF and (bits | (bits - 1)) == 0xFFFFFFFF


def _detect_ip(folded: str) -> Iterator[_Candidate]:
    for m in _IPV4.finditer(folded):
        if _VERSION_CONTEXT.search(folded[max(0, m.start() - 12) : m.start()]):
            continue
        if _is_netmask(m.group()):
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
