"""Phone numbers: mainland mobiles and landlines, international and national formats
(the ``cn_mobile``, ``cn_landline`` and ``phone`` kinds). Pure, stdlib-only."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from langgraph_memory._redact_text import (
    _CJK,
    _NUM_LEFT,
    _NUM_RIGHT,
    _PHONE_CUE,
    _Candidate,
    _digits,
    _in_negative_context,
    _in_positive_context,
    _phone_cue_before,
)

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


# International: "+" or "00", a country code, then digit groups joined by one
# space/dash, optionally a parenthesised area code. 8-15 digits in all (E.164).
_INTL_PHONE: Final = re.compile(
    # Not after "digits + space": "6217 0012 3456 7890" is one long number.
    r"(?<![0-9A-Za-z_+])(?<![0-9][ \-.])(?:\+|\b00)[1-9][0-9]{0,2}"
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
# Ten digits without a trunk prefix, right after a phone word: India's mobiles
# ("registered mobile is 9822013456", "98220 13456") and North America's written
# solid ("my cell is 4155550123"). Any ten digits could be an account number, so only
# with the cue.
_CUED_TEN_DIGIT: Final = re.compile(
    r"(?<![0-9A-Za-z_])(?<![0-9][ .\-])(?:[2-9][0-9]{9}|[6-9][0-9]{4}[ \-][0-9]{5})"
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
    for m in _CUED_TEN_DIGIT.finditer(folded) if cue_anywhere else ():
        if _phone_cue_before(folded, m.start()) and not _in_negative_context(folded, m.start()):
            yield _Candidate("phone", m.start(), m.end(), _digits(m.group()))
    for m in _BRACKETED_COUNTRY.finditer(folded) if "(" in folded else ():
        digits = _digits(m.group())
        if 9 <= len(digits) <= 13 and not _in_negative_context(folded, m.start()):
            yield _Candidate("phone", m.start(), m.end(), digits)
