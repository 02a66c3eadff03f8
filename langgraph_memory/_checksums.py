"""Check digits of the identifiers the redactor recognises; pure, stdlib-only.

A check digit is what lets the redactor accept a bare number without a keyword
in front of it: a random string of the right shape passes the Luhn check one
time in 10, ISO 7064 mod 97 (IBAN) one time in 97, the ID checksums one time in
10 or 11. ``privacy`` re-exports the public ones.
"""

from __future__ import annotations

from datetime import date
from typing import Final

_ID_WEIGHTS: Final = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK_CHARS: Final = "10X98765432"


def resident_id_check_char(first17: str) -> str:
    """The GB 11643-1999 check character for the first 17 digits of an ID."""
    total = sum(int(d) * w for d, w in zip(first17, _ID_WEIGHTS, strict=True))
    return _ID_CHECK_CHARS[total % 11]


def valid_birth_date(digits8: str) -> bool:
    """``YYYYMMDD`` is a real date between 1900-01-01 and today."""
    try:
        born = date(int(digits8[:4]), int(digits8[4:6]), int(digits8[6:8]))
    except ValueError:
        return False
    return date(1900, 1, 1) <= born <= date.today()


def is_valid_resident_id(value: str, *, check_char: bool = True) -> bool:
    """True for an 18-character resident ID with a real birth date and check char.

    Spaces and dashes between the groups are ignored. ``check_char=False`` skips the
    check character (an ID right after its keyword: a mistyped digit is still the ID).

    Example:
        >>> is_valid_resident_id("11010519491231002X"), is_valid_resident_id("110105194912310021")
        (True, False)
        >>> is_valid_resident_id("110105194912310021", check_char=False)
        True
    """
    compact = value.replace(" ", "").replace("-", "").upper()
    if len(compact) != 18 or not compact[:17].isdigit() or compact[0] == "0":
        return False
    if not valid_birth_date(compact[6:14]):
        return False
    return not check_char or resident_id_check_char(compact[:17]) == compact[17]


def luhn_valid(digits: str) -> bool:
    """True when the digit string passes the Luhn (mod 10) check.

    Example:
        >>> luhn_valid("4111111111111111"), luhn_valid("4111111111111112")
        (True, False)
    """
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


# IBAN length per country (ISO 13616 registry; the countries users here bank in
# and the rest of SEPA). A code not listed is not taken for an IBAN.
_IBAN_LENGTHS: Final[dict[str, int]] = {
    "AD": 24, "AE": 23, "AT": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29, "CH": 21,
    "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "EE": 20, "ES": 24, "FI": 18, "FR": 27,
    "GB": 22, "GI": 23, "GR": 27, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IS": 26,
    "IT": 27, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MT": 31, "NL": 18,
    "NO": 15, "PK": 24, "PL": 28, "PT": 25, "QA": 29, "RO": 24, "SA": 24, "SE": 24,
    "SI": 19, "SK": 24, "SM": 27, "TR": 26, "UA": 29,
}  # fmt: skip


def is_valid_iban(value: str) -> bool:
    """True for an IBAN of its country's length whose ISO 7064 mod-97 check passes.

    Example:
        >>> is_valid_iban("DE89 3704 0044 0532 0130 00"), is_valid_iban("DE88 3704 0044 0532 0130 00")
        (True, False)
    """
    compact = value.replace(" ", "").upper()
    if _IBAN_LENGTHS.get(compact[:2]) != len(compact) or not compact.isalnum():
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


def is_valid_hkid(value: str) -> bool:
    """True for a Hong Kong identity card number whose check digit matches.

    Example:
        >>> is_valid_hkid("A123456(3)"), is_valid_hkid("A1234563"), is_valid_hkid("A123456(4)")
        (True, True, False)
    """
    compact = value.replace("(", "").replace(")", "").replace(" ", "").upper()
    letters, body = compact[:-7], compact[-7:-1]
    if not (1 <= len(letters) <= 2 and letters.isalpha() and body.isdigit()):
        return False
    # One-letter numbers weigh a virtual leading space worth 36.
    values = [36] * (2 - len(letters)) + [ord(ch) - 55 for ch in letters] + [int(d) for d in body]
    remainder = (11 - sum(v * w for v, w in zip(values, range(9, 1, -1), strict=True)) % 11) % 11
    return compact[-1] == ("A" if remainder == 10 else str(remainder))


def is_valid_nric(value: str) -> bool:
    """True for a Singapore NRIC/FIN (``S``/``T``/``F``/``G`` + 7 digits + check letter).

    Example:
        >>> is_valid_nric("S9812381D"), is_valid_nric("S9812381E")
        (True, False)
    """
    value = value.upper()
    if len(value) != 9 or value[0] not in "STFG" or not value[1:8].isdigit():
        return False
    total = sum(int(d) * w for d, w in zip(value[1:8], (2, 7, 6, 5, 4, 3, 2), strict=True))
    total += 4 if value[0] in "TG" else 0
    table = "JZIHGFEDCBA" if value[0] in "ST" else "XWUTRQPNMLK"
    return value[8] == table[total % 11]


# Taiwan: the letter stands for a two-digit region code.
_TW_LETTERS: Final = "ABCDEFGHJKLMNPQRSTUVXYWZIO"


def is_valid_taiwan_id(value: str) -> bool:
    """True for a Taiwan national ID (a letter, 1 or 2, 8 digits, the last a check digit).

    Example:
        >>> is_valid_taiwan_id("A123456789"), is_valid_taiwan_id("A123456788")
        (True, False)
    """
    value = value.upper()
    if len(value) != 10 or value[0] not in _TW_LETTERS or value[1] not in "12":
        return False
    if not value[1:].isdigit():
        return False
    code = _TW_LETTERS.index(value[0]) + 10
    weights = (8, 7, 6, 5, 4, 3, 2, 1, 1)
    total = (
        code // 10
        + (code % 10) * 9
        + sum(int(d) * w for d, w in zip(value[1:], weights, strict=True))
    )
    return total % 10 == 0


def is_valid_ssn(value: str) -> bool:
    """True for a US social security number the SSA could issue (area not 000, 666
    or 9xx, group not 00, serial not 0000).

    Example:
        >>> is_valid_ssn("536-22-1947"), is_valid_ssn("666-22-1947"), is_valid_ssn("536-00-1947")
        (True, False, False)
    """
    digits = "".join(ch for ch in value if ch.isdigit())
    if len(digits) != 9:
        return False
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"
