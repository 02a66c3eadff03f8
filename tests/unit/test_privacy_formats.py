"""Redaction of the formats added for the broad corpus: national phone numbers, non-mainland
ID numbers, IBANs and bank accounts, one-time codes, URL credentials, vendor tokens; their
check digits; and the time redaction takes on hostile inputs."""

from __future__ import annotations

import string
import time
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_memory.config import PrivacyPolicy
from langgraph_memory.errors import RedactionRejectedError
from langgraph_memory.privacy import (
    Redactor,
    is_valid_hkid,
    is_valid_iban,
    is_valid_nric,
    is_valid_ssn,
    is_valid_taiwan_id,
    redact,
)


def kinds_and_spans(text: str) -> list[tuple[str, str]]:
    return [(f.kind, text[f.start : f.end]) for f in Redactor().find(text)]


# --- check digits ---------------------------------------------------------------


def _hkid_check(letters: str, digits: str) -> str:
    values = [36] * (2 - len(letters)) + [ord(c) - 55 for c in letters] + [int(d) for d in digits]
    r = (11 - sum(v * w for v, w in zip(values, range(9, 1, -1), strict=True)) % 11) % 11
    return "A" if r == 10 else str(r)


def _iban(country: str, bban: str) -> str:
    number = int("".join(str(int(c, 36)) for c in bban + country + "00"))
    return f"{country}{98 - number % 97:02d}{bban}"


@pytest.mark.parametrize(
    ("check", "valid", "invalid"),
    [
        (is_valid_hkid, ["A123456(3)", "K987654(5)", "XA135792(9)", "A1234563"], ["A123456(4)"]),
        (is_valid_nric, ["S9812381D", "T0123456G", "G1234567X"], ["S9812381E", "M1234567K"]),
        (is_valid_taiwan_id, ["A123456789", "F228765431"], ["A123456788", "A323456789"]),
        (
            is_valid_ssn,
            ["536-22-1947", "412 67 8890"],
            ["000-12-3456", "900-12-3456", "536-22-0000"],
        ),
        (
            is_valid_iban,
            ["DE89 3704 0044 0532 0130 00", "GB29NWBK60161331926819", "NL91ABNA0417164300"],
            ["DE89 3704 0044 0532 0130 01", "DE89370400440532013", "XX89370400440532013000"],
        ),
    ],
)
def test_check_digits(check: object, valid: list[str], invalid: list[str]) -> None:
    assert callable(check)
    assert all(check(v) for v in valid), [v for v in valid if not check(v)]
    assert not any(check(v) for v in invalid), [v for v in invalid if check(v)]


@settings(max_examples=150, deadline=None)
@given(
    st.text(string.ascii_uppercase, min_size=1, max_size=2),
    st.text("0123456789", min_size=6, max_size=6),
)
def test_every_valid_hkid_is_caught_and_every_other_check_digit_is_not(
    letters: str, digits: str
) -> None:
    check = _hkid_check(letters, digits)
    assert kinds_and_spans(f"HKID {letters}{digits}({check})") == [
        ("national_id", f"{letters}{digits}({check})")
    ]
    for wrong in "0123456789A":
        if wrong != check:
            assert redact(f"HKID {letters}{digits}({wrong})").findings == ()


@settings(max_examples=150, deadline=None)
@given(st.text("0123456789", min_size=18, max_size=18))
def test_every_valid_iban_is_caught_and_one_digit_off_is_not(bban: str) -> None:
    iban = _iban("DE", bban)
    assert kinds_and_spans(f"IBAN {iban}") == [("bank_card", iban)]
    off = iban[:10] + str((int(iban[10]) + 1) % 10) + iban[11:]
    assert all(f.kind != "bank_card" for f in redact(f"IBAN {off}").findings)


# --- phones -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "span"),
    [
        ("My mobile is 07700 900123", "phone", "07700 900123"),
        # Ten digits after a phone word: India's mobiles, North America written solid.
        ("My registered mobile is 9822013456", "phone", "9822013456"),
        ("new number 99001 54872, please update", "phone", "99001 54872"),
        ("my cell is 4155550123", "phone", "4155550123"),
        ("call me on 07700900123 after six", "phone", "07700900123"),
        ("Office: 020 7946 0958", "phone", "020 7946 0958"),
        ("广州办公室 020 8765 4321", "cn_landline", "020 8765 4321"),  # same shape, Chinese text
        ("Our Beijing office line is 010 6552 9988.", "cn_landline", "010 6552 9988"),
        ("Meine Handynummer ist 0151 23456789", "phone", "0151 23456789"),
        ("Mon portable : 06 12 34 56 78", "phone", "06 12 34 56 78"),
        ("法国办公室 01.23.45.67.89", "phone", "01.23.45.67.89"),
        ("携帯は090-1234-5678です", "phone", "090-1234-5678"),
        ("Our toll-free line: 1-800-555-0199", "phone", "1-800-555-0199"),
        ("His number is 415 555 2671", "phone", "415 555 2671"),
        ("WhatsApp 我：9123 4567", "phone", "9123 4567"),
        ("佢嘅電話係 (852) 6123 4567", "phone", "(852) 6123 4567"),
        ("新号 138.1234.5678，旧号停机了", "cn_mobile", "138.1234.5678"),
    ],
)
def test_national_phone_formats_detected(text: str, kind: str, span: str) -> None:
    assert kinds_and_spans(text) == [(kind, span)]


@pytest.mark.parametrize(
    "text",
    [
        "双色球 01 05 12 18 23 + 07",  # pairs with spaces need a phone word
        "order 9822013456 arrived yesterday",  # ten digits without a phone word
        "the sequence 01 02 03 04 05",
        "distances 200 400 1500 metres",  # three numbers in a row need a phone word
        "Zoom meeting ID 812 345 6789",
        "腾讯会议号 8123 4567",
        "订单 91234567 已退款",  # 8 digits without a phone word
        "卡号 6217 0012 3456 7890 123",  # "0012 ..." inside a longer number is no "00" prefix
        "编号 0123-4567-8901",
        "日期 02.12.2026 10:30",
        "ISBN 0-306-40615-2",
        "versions 0.12.3 and 0.12.4",
        "子网掩码 255.255.255.0，netmask 255.255.240.0",  # a subnet size, not a host
    ],
)
def test_number_shapes_that_are_not_identifiers(text: str) -> None:
    assert redact(text).findings == ()


# --- ID numbers, accounts ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("香港身份证 A123456(3)", "A123456(3)"),
        ("HKID A1234563", "A1234563"),
        ("SSN 536-22-1947", "536-22-1947"),
        ("my SSN is 536221947", "536221947"),
        ("National Insurance number AB 12 34 56 C", "AB 12 34 56 C"),
        ("NI number: JG103759A", "JG103759A"),
        ("NRIC S9812381D", "S9812381D"),
        ("身分證 A123456789", "A123456789"),
    ],
)
def test_national_id_detected(text: str, span: str) -> None:
    assert kinds_and_spans(text) == [("national_id", span)]


@pytest.mark.parametrize(
    "text",
    [
        "A1234563",  # a bare HK number without brackets needs an ID word
        "型号 A123456(3) 的滤芯",  # a model-code clause vetoes even a valid check digit
        "serial 536-22-1947",
        "536221947",  # 9 digits alone are no SSN
        "JG103759A",  # a compact NINO needs "NI"
        "SKU T0123456X",  # wrong check letter
        "编号 S9812381D 的样品",
    ],
)
def test_national_id_rejected(text: str) -> None:
    assert redact(text).findings == ()


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("银行账号：6222 0000 1111 2222 333，开户行招商银行", "6222 0000 1111 2222 333"),
        ("bank account number 12345678, sort code 20-00-00", "12345678"),
        ("routing 021000021, account no. 123456789012", "123456789012"),
        ("对公账号 310066726018010123456", "310066726018010123456"),
        ("我的工资卡账号 6217 0000 1234 5678 901", "6217 0000 1234 5678 901"),
        ("Pay to GB29 NWBK 6016 1331 9268 19, ref INV-2291", "GB29 NWBK 6016 1331 9268 19"),
    ],
)
def test_bank_accounts_detected(text: str, span: str) -> None:
    assert kinds_and_spans(text) == [("bank_card", span)]


@pytest.mark.parametrize(
    "text",
    [
        "游戏账号 12345678 被盗了",  # a login account, not a bank account
        "宽带账号 02112345678",
        "卡号 6222372651676122 显示无效",  # after a card word the Luhn check still applies
        "会员卡号 6225881234567890",
        "银行账户余额 12,345.67 元",
        "DE12 3456 7890 is not an IBAN",
    ],
)
def test_bank_accounts_rejected(text: str) -> None:
    assert all(f.kind != "bank_card" for f in redact(text).findings)


# --- secrets ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("验证码 583920", "583920"),
        ("短信验证码583920，5分钟内有效", "583920"),
        ("your verification code is 739201", "739201"),
        ("OTP: 482913", "482913"),
        ("Use code 552031 to sign in to your account", "552031"),
        ("204816 is your Google verification code", "204816"),
        ("the door code is 4417#", "4417#"),
        ("CVV 123", "123"),
        ("postgres://admin:S3cretPw@db.internal:5432/app", "S3cretPw"),
        ("密码如下：abc123", "abc123"),
        ("我 HSBC 个 password 系 Tiger#88!, 成日唔记得", "Tiger#88!"),  # Cantonese copula
    ],
)
def test_codes_and_url_credentials_detected(text: str, span: str) -> None:
    assert kinds_and_spans(text) == [("password", span)]


@pytest.mark.parametrize(
    "text",
    [
        "验证码 5 分钟内有效",
        "use code 2026 at checkout",  # a numeric promo code, not a login code
        "error code 1234 again",
        "5000 is your credit limit",
        "快递柜取件码 4921",
        "密码规则如下：至少8位",
        "git@github.com:org/repo.git",
        "postgresql://user:password@host:5432/dbname",  # a stand-in, as in docs
        "icon@2x.png and icon@3x.png",
    ],
)
def test_codes_rejected(text: str) -> None:
    assert redact(text).findings == ()


@pytest.mark.parametrize(
    "token",
    [
        "glpat-x7Yz9Q2wErT5uI8oP1aS",
        "hf_" + "aB3" * 11,
        "npm_" + "Zx9" * 12,
        "SG.abcdefghijklmnop1234.ABCDEFGHIJKLMNOPQRSTUV0123456789",
    ],
)
def test_vendor_token_formats_without_a_keyword(token: str) -> None:
    assert kinds_and_spans(f"pasted {token} by mistake") == [("api_key", token)]


def test_alibaba_access_key_pair_in_camel_case() -> None:
    text = "AccessKeyId=LTAI5tABCDEFGH123456 AccessKeySecret=AbCdEfGhIjKlMnOpQrStUvWxYz0123"
    assert kinds_and_spans(text) == [
        ("api_key", "LTAI5tABCDEFGH123456"),
        ("api_key", "AbCdEfGhIjKlMnOpQrStUvWxYz0123"),
    ]


@pytest.mark.parametrize(
    ("text", "kind", "span"),
    [
        # Traditional characters fold to the simplified keywords.
        ("密碼是 abc123", "password", "abc123"),
        ("我嘅密碼係 Cat2024!", "password", "Cat2024!"),
        ("你的認證碼是 482913", "password", "482913"),
        ("我的護照號碼是 E12345678", "passport", "E12345678"),
        ("銀行帳戶：12345678901234", "bank_card", "12345678901234"),
        # Password words of other languages; the short "pw"/"pass" before ":" or "=".
        ("Passwort: Geheim123", "password", "Geheim123"),
        ("mot de passe : Soleil2026", "password", "Soleil2026"),
        ("パスワードは abc12345 です", "password", "abc12345"),
        ("暗証番号 4821", "password", "4821"),
        ("user: admin pass: admin123", "password", "admin123"),
        ("pw=hunter22", "password", "hunter22"),
        # Dots after the country code; an area code in brackets.
        ("tel: +1.415.555.2671", "phone", "+1.415.555.2671"),
        ("Sydney office (02) 9876 5432", "phone", "(02) 9876 5432"),
        # Glued, quoted, infixed and prose forms of the secret classes.
        ("passwordAbc123!", "password", "Abc123!"),
        ("PIN号4821", "password", "4821"),
        ('"password": "hunter2"', "password", "hunter2"),
        ('{"pin": "4821"}', "password", "4821"),
        ("我把 wifi 密码发你：Home@5678", "password", "Home@5678"),
        ("the token I use is 9f8e7d6c5b4a3928", "api_key", "9f8e7d6c5b4a3928"),
        ("my openai key is sk2Hf8Kd0Qw7Lm3Np9Zx", "api_key", "sk2Hf8Kd0Qw7Lm3Np9Zx"),
        (
            "my session id is 7f3b2c1d9e8a4b5c6d7e8f9a0b1c2d3e",
            "api_key",
            "7f3b2c1d9e8a4b5c6d7e8f9a0b1c2d3e",
        ),
        ("https://api.example.com/v1?api_key=8f7e6d5c4b3a2910&x=1", "api_key", "8f7e6d5c4b3a2910"),
        ("我登录不上，密码应该是 Qq123456 没错啊", "password", "Qq123456"),
        ("mysql -u root -pS3cret123 mydb", "password", "S3cret123"),
        ("the PIN number is 2580", "password", "2580"),
        (
            "webhook https://hooks.slack.com/services/T0AB12CD3/B0EF45GH6/aBcDeFgHiJkLmNoPqRsTuVwX",
            "api_key",
            "https://hooks.slack.com/services/T0AB12CD3/B0EF45GH6/aBcDeFgHiJkLmNoPqRsTuVwX",
        ),
    ],
)
def test_traditional_chinese_other_languages_and_more_phone_shapes(
    text: str, kind: str, span: str
) -> None:
    assert kinds_and_spans(text) == [(kind, span)]


@pytest.mark.parametrize(
    "text",
    [
        "boarding pass: 12A",
        "season pass: 2026",
        "密碼錯誤，請重試",
        "驗證碼已發送",
        "密码到期时间：2026-12-31",
        "密码有效期：180天",
        "the password you set is too short",
        "passwordless login is coming",
        "my key is in the drawer",
        "the key is 42",
    ],
)
def test_short_password_words_and_traditional_prose_rejected(text: str) -> None:
    assert redact(text).findings == ()


# --- policy and placeholders -------------------------------------------------------


def test_national_id_uses_the_id_number_placeholder_and_follows_the_policy() -> None:
    text = "SSN 536-22-1947"
    assert redact(text).text == "SSN [ID_NUMBER]"
    hashed = Redactor(PrivacyPolicy(actions=MappingProxyType({"national_id": "hash"})))
    # The digest ignores the separators: the same number hashes alike however written.
    assert hashed.redact(text).text == hashed.redact("my SSN is 536 22 1947").text.replace(
        "my SSN is", "SSN"
    )
    rejecting = Redactor(PrivacyPolicy(actions=MappingProxyType({"national_id": "reject"})))
    with pytest.raises(RedactionRejectedError, match="national_id"):
        rejecting.redact(text)


# --- time on hostile inputs ---------------------------------------------------------

HOSTILE = [
    "0" + " 12" * 4000,
    "银行账号" + "1234 " * 4000,
    "1" * 20000,
    "o'" * 10000 + "@",
    "AB 12 34 " * 3000,
    "DE89 " + "3704 " * 4000,
    "验证码" * 5000,
    "postgres://" + "a:" * 5000 + "@",
    "(852) " + "12 " * 5000,
]


@pytest.mark.parametrize("text", HOSTILE, ids=lambda t: repr(t[:12]))
def test_hostile_inputs_take_linear_time(text: str) -> None:
    def seconds(sample: str) -> float:
        started = time.perf_counter()
        redact(sample)
        return time.perf_counter() - started

    small, large = text[: len(text) // 4], text
    seconds(small)  # warm
    # 4x the input in well under 16x the time (a quadratic pattern would take 16x).
    assert seconds(large) < max(8 * seconds(small), 0.05) + 0.2


# --- docstring examples -------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["langgraph_memory.privacy", "langgraph_memory._checksums", "langgraph_memory._redact_ids"],
)
def test_docstring_examples_run(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(
    ("topic", "text"),
    [
        ("my SSN", "SSN 536-22-1947"),
        ("我的香港身份证", "香港身份证 A123456(3)"),
        ("my IBAN", "IBAN DE89 3704 0044 0532 0130 00"),
        ("the bank account number", "bank account number 12345678"),
        ("那个验证码", "验证码 583920"),
    ],
)
def test_forget_topics_reach_the_placeholders_of_the_new_formats(topic: str, text: str) -> None:
    from langgraph_memory.nodes.rules._forget import forget_reaches

    # The memory as stored: redacted, so only the placeholder's kind is left to match.
    stored = redact(text).text
    assert "[" in stored and forget_reaches(topic, stored)


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("pasted my github token by mistake ghp_8fK2mQx91LzR4tYw0pNc ignore", "api_key",
         "ghp_8fK2mQx91LzR4tYw0pNc"),
        ("hf token hf_Ab12Cd34Ef56Gh78 for the space", "api_key", "hf_Ab12Cd34Ef56Gh78"),
        ("the call box code is K9-3317 so couriers can buzz", "password", "K9-3317"),
        ("Lockbox code: 4B7-22#", "password", "4B7-22#"),
        ("garage pin 7781", "password", "7781"),
        ("身份证号是110105194912310021，麻烦登记", "cn_resident_id", "110105194912310021"),
        ("my ID number is 440305199102190741", "cn_resident_id", "440305199102190741"),
    ],
)  # fmt: skip
def test_prefixed_tokens_entry_codes_and_keyed_ids(text: str, kind: str, value: str) -> None:
    """A distinctive vendor prefix with a short body, a door-entry code with letters,
    and an ID number right after its keyword even with a mistyped check digit."""
    assert (kind, value) in kinds_and_spans(text)


@pytest.mark.parametrize(
    "text",
    [
        "the building code of 1998 was strict",
        "door code is open until 5pm",
        "gh_pages deploys from the docs branch",
        "order 110105194912310021 shipped yesterday",  # no keyword: the check digit decides
        "room 1203, gate B12",
    ],
)
def test_entry_code_and_keyed_id_negatives(text: str) -> None:
    assert kinds_and_spans(text) == []
