"""Redaction: the labelled corpus, each detector with its checksum edge cases, policies, messages."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date
from pathlib import Path
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from benchmarks.privacy import CORPUS_PATH, MAX_NEGATIVE_TOUCH_RATE, load_corpus, score_corpus
from langgraph_memory.config import IDENTIFIER_KINDS, PrivacyPolicy, RedactionAction
from langgraph_memory.errors import (
    ConfigurationError,
    InvalidUserIdError,
    LangGraphMemoryError,
    RedactionRejectedError,
)
from langgraph_memory.privacy import (
    Finding,
    Redactor,
    fingerprint_user_id,
    is_valid_legacy_resident_id,
    is_valid_resident_id,
    luhn_valid,
    redact,
    redact_messages,
    resident_id_check_char,
)

REPO_ROOT = Path(__file__).resolve().parents[2]


def policy(salt: str = "test-salt", **actions: RedactionAction) -> PrivacyPolicy:
    """Every kind masked whole unless named: these tests pin the placeholders (the default
    ``partial`` tails are in ``test_privacy_partial.py``)."""
    whole = PrivacyPolicy.every_kind("mask").actions
    return PrivacyPolicy(actions=MappingProxyType({**whole, **actions}), hash_salt=salt)


def kinds_and_spans(text: str, redactor: Redactor | None = None) -> list[tuple[str, str]]:
    return [(f.kind, text[f.start : f.end]) for f in (redactor or Redactor()).find(text)]


# --- the corpus ---------------------------------------------------------------


# The first corpus, and a broader one written afterwards without looking at the
# patterns: phones of a dozen countries in their national formats, non-mainland
# ID numbers, IBANs and bank accounts, one-time codes, vendor token formats,
# and hard negatives aimed at each of those shapes.
CORPORA = (CORPUS_PATH, CORPUS_PATH.with_name("redaction_corpus_broad.jsonl"))


@pytest.mark.parametrize("path", CORPORA, ids=lambda p: p.stem)
def test_corpus_every_identifier_caught_and_negatives_untouched(path: Path) -> None:
    lines = load_corpus(path)
    score = score_corpus(lines, Redactor())
    print(
        f"\n{path.name}: {len(lines)} lines; recall {score.caught}/{score.identifiers} "
        f"= {score.recall:.1%}; negatives touched {score.negatives_touched}/{score.negatives} "
        f"= {score.negative_touch_rate:.1%}; extra findings {score.extra_findings}"
    )
    assert len(lines) >= 200
    assert score.negatives >= 100 and score.identifiers >= 150
    # Both languages are represented.
    assert any("\u4e00" <= ch <= "\u9fff" for line in lines for ch in line.text)
    missed = [p for p in score.problems if "missed" in p]
    assert not missed, "\n".join(missed)
    assert score.negative_touch_rate <= MAX_NEGATIVE_TOUCH_RATE, "\n".join(score.problems)
    assert score.extra_findings <= 0.02 * score.identifiers, "\n".join(score.problems)


def test_corpora_cover_every_kind() -> None:
    kinds = {kind for path in CORPORA for line in load_corpus(path) for kind, _ in line.expected}
    assert kinds == set(IDENTIFIER_KINDS)


@pytest.mark.parametrize("path", CORPORA, ids=lambda p: p.stem)
def test_corpus_redacted_text_keeps_everything_but_the_identifiers(path: Path) -> None:
    for line in load_corpus(path):
        result = redact(line.text, policy())
        if not line.expected:
            assert result.text == line.text
            continue
        expected_text = line.text
        for kind, span in line.expected:
            assert span not in result.text, (kind, line.line_no)
        # Rebuild the expected output from the labels alone.
        for finding in sorted(result.findings, key=lambda f: f.start, reverse=True):
            label = {
                "cn_mobile": "PHONE",
                "phone": "PHONE",
                "cn_resident_id": "ID_NUMBER",
                "bank_card": "BANK_CARD",
                "email": "EMAIL",
                "ip_address": "IP_ADDRESS",
                "password": "PASSWORD",
                "api_key": "API_KEY",
                "cn_landline": "PHONE",
                "passport": "PASSPORT",
                "national_id": "ID_NUMBER",
            }[finding.kind]
            expected_text = (
                expected_text[: finding.start] + f"[{label}]" + expected_text[finding.end :]
            )
        assert result.text == expected_text


# --- detectors ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("13800138000", "13800138000"),
        ("手机13800138000。", "13800138000"),
        ("+86 138 0013 8000", "+86 138 0013 8000"),
        ("+86-138-0013-8000", "+86-138-0013-8000"),
        ("0086 13800138000", "0086 13800138000"),
        ("(+86)13800138000", "(+86)13800138000"),
        ("＋８６ １３８００１３８０００", "＋８６ １３８００１３８０００"),
        ("call 199-1234-5678 now", "199-1234-5678"),
    ],
)
def test_cn_mobile_detected(text: str, span: str) -> None:
    assert kinds_and_spans(text) == [("cn_mobile", span)]


@pytest.mark.parametrize(
    "text",
    [
        "12800138000",  # 12x is not a mobile prefix
        "11800138000",
        "138001380001",  # 12 digits
        "1380013800",  # 10 digits
        "SF13800138000",  # glued to letters: a tracking code
        "13800138000X",
        "order_13800138000",
        "3.13800138000",  # decimal
        "订单号13800138000",
        "tracking number 13800138000",
    ],
)
def test_cn_mobile_rejected(text: str) -> None:
    assert [k for k, _ in kinds_and_spans(text)] == []


def test_resident_id_checksum_matches_the_standard_example() -> None:
    # The GB 11643-1999 worked example: 11010519491231002X.
    assert resident_id_check_char("11010519491231002") == "X"
    assert is_valid_resident_id("11010519491231002X")
    assert is_valid_resident_id("11010519491231002x")


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("11010519491231002X", True),
        ("110105194912310021", False),  # wrong check digit
        ("440305199202290749", True),  # 29 Feb in a leap year
        ("440305199102290740", False),  # 29 Feb 1991 does not exist
        ("110105190002290015", False),  # 1900 is not a leap year
        ("110105199013310012", False),  # month 13
        ("110105199002300010", False),  # 30 Feb
        ("110105189912310012", False),  # before 1900
        ("110105209912310015", False),  # born in the future
        ("010105194912310025", False),  # region code cannot start with 0
        ("11010519491231002", False),  # 17 characters
    ],
)
def test_resident_id_validation(value: str, valid: bool) -> None:
    assert is_valid_resident_id(value) is valid
    found = kinds_and_spans(f"编号 {value} 。")
    assert (("cn_resident_id", value) in found) is valid
    # Right after its keyword only the check character is forgiven (a mistyped ID is
    # still the user's ID); an impossible date or length is not.
    keyed = kinds_and_spans(f"证件号 {value} 。")
    plausible = valid or value == "110105194912310021"
    assert (("cn_resident_id", value) in keyed) is plausible


def test_resident_id_every_wrong_check_char_is_rejected() -> None:
    first17 = "31010419880516404"
    right = resident_id_check_char(first17)
    for check in "0123456789X":
        text = f"ID {first17}{check}"
        kinds = [k for k, _ in kinds_and_spans(text)]
        assert ("cn_resident_id" in kinds) is (check == right)
        # A wrong-checksum ID is not re-read as a bank card either.
        assert "bank_card" not in kinds


@pytest.mark.parametrize(
    ("digits", "valid"),
    [
        ("4111111111111111", True),
        ("4111111111111112", False),
        ("5500005555555559", True),
        ("378282246310005", True),  # Amex, 15 digits
        ("6011000990139424", True),
        ("79927398713", True),  # the classic Luhn example (11 digits)
        ("79927398710", False),
    ],
)
def test_luhn(digits: str, valid: bool) -> None:
    assert luhn_valid(digits) is valid


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("card 4111111111111111", "4111111111111111"),
        ("card 4111 1111 1111 1111.", "4111 1111 1111 1111"),
        ("card 4111-1111-1111-1111", "4111-1111-1111-1111"),
        ("amex 3782 822463 10005", "3782 822463 10005"),
        ("卡号 6222029351819093780", "6222029351819093780"),  # 19 digits
        ("visa 4000852808415", "4000852808415"),  # 13 digits
    ],
)
def test_bank_card_detected(text: str, span: str) -> None:
    assert kinds_and_spans(text) == [("bank_card", span)]


@pytest.mark.parametrize(
    "text",
    [
        "card 4111111111111112",  # fails Luhn
        "card 411111111111",  # 12 digits: too short
        "card 41111111111111111113",  # 20 digits: too long
        "0000000000000000",  # all the same digit passes Luhn but is no card
        "card 4111 1111-1111 1111",  # mixed separators are not a card layout
        "invoice 4111111111111111",
        "订单号 4111111111111111",
    ],
)
def test_bank_card_rejected(text: str) -> None:
    assert [k for k, _ in kinds_and_spans(text) if k == "bank_card"] == []


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("mail a@b.co", "a@b.co"),
        ("Mail: First.Last+tag@sub.example.com.", "First.Last+tag@sub.example.com"),
        ("邮箱是zhang_san@qq.com，谢谢", "zhang_san@qq.com"),
        ("<x-y@host-name.io>", "x-y@host-name.io"),
    ],
)
def test_email_detected(text: str, span: str) -> None:
    assert kinds_and_spans(text) == [("email", span)]


@pytest.mark.parametrize("text", ["user@localhost", "@handle", "a@b", "name at example dot com"])
def test_email_rejected(text: str) -> None:
    assert kinds_and_spans(text) == []


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("+44 20 7946 0958", "+44 20 7946 0958"),
        ("+1 (415) 555-2671", "+1 (415) 555-2671"),
        ("+14155552671", "+14155552671"),
        ("0049 30 12345678", "0049 30 12345678"),
        ("(212) 555-0142", "(212) 555-0142"),
        ("212-555-0142", "212-555-0142"),
        ("+86 10 6552 9988", "+86 10 6552 9988"),
    ],
)
def test_international_phone_detected(text: str, span: str) -> None:
    assert kinds_and_spans(text) == [("phone", span)]


@pytest.mark.parametrize(
    "text", ["+1 for that", "+15%", "+46.8523, -121.7603", "+123 456", "2026-11-30", "1-800"]
)
def test_international_phone_rejected(text: str) -> None:
    assert kinds_and_spans(text) == []


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("ip 192.168.1.1", "192.168.1.1"),
        ("ip 255.255.255.255.", "255.255.255.255"),
        ("ip 0.0.0.0", "0.0.0.0"),
        ("v6 2001:db8::1 ok", "2001:db8::1"),
        ("v6 fe80::1ff:fe23:4567:890a.", "fe80::1ff:fe23:4567:890a"),
        ("mapped ::ffff:192.0.2.128 here", "::ffff:192.0.2.128"),
        ("full 2001:0db8:0000:0000:0000:ff00:0042:8329", "2001:0db8:0000:0000:0000:ff00:0042:8329"),
    ],
)
def test_ip_detected(text: str, span: str) -> None:
    assert kinds_and_spans(text) == [("ip_address", span)]


@pytest.mark.parametrize(
    "text",
    [
        "ip 256.1.1.1",
        "ip 192.168.01.1",  # leading zero
        "ip 1.2.3",
        "ip 1.2.3.4.5",
        "v1.2.3.4",
        "version 1.2.3.4",
        "版本号 1.2.3.4",
        "12:30:45",
        "00:1A:2B:3C:4D:5E",
        "::1",
        "ratio 16:9",
    ],
)
def test_ip_rejected(text: str) -> None:
    assert kinds_and_spans(text) == []


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("密码是abc123", "abc123"),
        ("密码：abc123。", "abc123"),
        ("密码为 abc123，", "abc123"),
        ("口令=Open_Sesame1", "Open_Sesame1"),
        ("password: hunter2.", "hunter2"),
        ("Password is 'with space 1'", "with space 1"),
        ('my password is "sunshine"', "sunshine"),
        ("password: sunshine", "sunshine"),
        ('pwd="x!y@z#"', "x!y@z#"),
        ("passwd = (abc)123)", "(abc)123"),
        ("my PIN: 0000", "0000"),
        ("PIN码是１２３４", "１２３４"),
        ("the password for my bank account is Pa55!", "Pa55!"),
        ("wifi密码 12345678", "12345678"),
        ("WiFi password sunshine2026", "sunshine2026"),
    ],
)
def test_password_detected(text: str, span: str) -> None:
    assert kinds_and_spans(text) == [("password", span)]


@pytest.mark.parametrize(
    "text",
    [
        "忘记密码",
        "密码是什么",
        "password is incorrect",
        "the password is required.",
        "password: ********",
        "密码是[PASSWORD]",
        "PIN is stuck",
        "pin: abc",
        "spinning wheel: 123456",  # "pin" inside a word
        "passwords: 12",
        "password reset link",
        "password 2 times",
        "my password was stolen last year",
    ],
)
def test_password_rejected(text: str) -> None:
    assert kinds_and_spans(text) == []


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("sk-abcdefghijklmnopqrstuvwx1234", "sk-abcdefghijklmnopqrstuvwx1234"),
        ("sk-proj-abc_DEF-123456789012345678", "sk-proj-abc_DEF-123456789012345678"),
        ("ghp_" + "a1" * 18, "ghp_" + "a1" * 18),
        ("github_pat_" + "A1_" * 10, "github_pat_" + "A1_" * 10),
        ("AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
        ("xoxp-1234567890-abcdef", "xoxp-1234567890-abcdef"),
        ("AIza" + "B" * 35, "AIza" + "B" * 35),
        ("jwt eyJhbGciOi.eyJzdWIiOi.sig-nature_1", "eyJhbGciOi.eyJzdWIiOi.sig-nature_1"),
        ("Authorization: Bearer abcdef0123456789xyz", "abcdef0123456789xyz"),
        ("Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"),
        ("api key: 0123abcd4567efgh", "0123abcd4567efgh"),
        ("API_KEY=ZyXwVuTsRqPoNmLk", "ZyXwVuTsRqPoNmLk"),
        ("密钥是 k3y-Va1ue-2026", "k3y-Va1ue-2026"),
        ("access token = 'abc123def456ghi'", "abc123def456ghi"),
    ],
)
def test_api_key_detected(text: str, span: str) -> None:
    assert kinds_and_spans(text) == [("api_key", span)]


@pytest.mark.parametrize(
    "text",
    [
        "token is expired",
        "the secret is patience",
        "max_tokens: 4096",
        "api key: [API_KEY]",
        "sk-short",
        "AKIA1234",
        "Bearer tokens are common",
        "token: something",  # all lower case, no digit, short: prose
    ],
)
def test_api_key_rejected(text: str) -> None:
    assert kinds_and_spans(text) == []


# --- overlaps and positions ----------------------------------------------------


def test_longest_match_wins_over_inner_number() -> None:
    # The mobile number inside the e-mail is part of the e-mail.
    assert kinds_and_spans("13800138000@163.com") == [("email", "13800138000@163.com")]
    # A valid ID is also Luhn-valid here: the ID (more specific) wins the tie.
    value = "110105198001010753"
    assert is_valid_resident_id(value) and luhn_valid(value)
    assert kinds_and_spans(f"ID {value}") == [("cn_resident_id", value)]
    # +86 mobile: cn_mobile beats the generic international pattern.
    assert kinds_and_spans("+86 13800138000") == [("cn_mobile", "+86 13800138000")]


def test_finding_offsets_index_the_original_text_with_full_width_digits() -> None:
    text = "电话：１３８００１３８０００，邮箱ａ@b.cn"
    result = redact(text, policy())
    spans = [text[f.start : f.end] for f in result.findings]
    assert spans[0] == "１３８００１３８０００"
    assert result.text.startswith("电话：[PHONE]，")


def test_redaction_is_idempotent() -> None:
    text = "手机13800138000 邮箱a@b.com 密码是Abc123! key sk-proj-Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0L"
    once = redact(text)
    twice = redact(once.text)
    assert twice.text == once.text and twice.findings == ()
    hashed_policy = policy(email="hash", cn_mobile="hash")
    hashed = redact(text, hashed_policy).text
    assert redact(hashed, hashed_policy).text == hashed


def test_empty_and_identifier_free_text_is_returned_unchanged() -> None:
    assert redact("").text == "" and redact("").findings == ()
    text = "Nothing personal here: 2026-11-30, ¥7999, RTX-4090."
    result = redact(text)
    assert result.text is text or result.text == text
    assert result.findings == () and not result.changed


# --- policies -------------------------------------------------------------------


def test_mask_uses_stable_placeholders() -> None:
    text = "a@b.com, 13800138000, +44 20 7946 0958, 11010519491231002X, 4111111111111111, 10.0.0.1"
    assert redact(text, policy()).text == (
        "[EMAIL], [PHONE], [PHONE], [ID_NUMBER], [BANK_CARD], [IP_ADDRESS]"
    )


def test_hash_is_stable_salted_and_format_independent() -> None:
    hashed = policy(cn_mobile="hash", email="hash")
    a = redact("手机 138 0013 8000", hashed).text
    b = redact("phone +86-13800138000", hashed).text
    c = redact("手机13800138001", hashed).text
    assert a.endswith(b[-len("[PHONE:12345678]") :])  # same number, different layout
    digest_a = a[a.index("[PHONE:") :]
    assert digest_a == b[b.index("[PHONE:") :]
    assert digest_a != c[c.index("[PHONE:") :]
    assert redact("X@Example.COM", hashed).text == redact("x@example.com", hashed).text
    other_salt = policy(salt="another-deployment", cn_mobile="hash")
    assert redact("13800138000", other_salt).text != redact("13800138000", hashed).text
    # Determinism across processes (no Python hash() randomisation).
    code = (
        "from types import MappingProxyType as M;"
        "from langgraph_memory.config import PrivacyPolicy as P;"
        "from langgraph_memory.privacy import redact;"
        "print(redact('13800138000', P(actions=M({'cn_mobile':'hash'}), hash_salt='test-salt')).text)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "PYTHONHASHSEED": "777"},
    ).stdout.strip()
    assert out == redact("13800138000", hashed).text


def test_reject_raises_naming_kind_and_position_never_the_value() -> None:
    text = "ok so my card is 4111 1111 1111 1111 thanks"
    with pytest.raises(RedactionRejectedError) as excinfo:
        redact(text, policy(bank_card="reject"))
    message = str(excinfo.value)
    assert "bank_card" in message and "17-36" in message
    assert "4111" not in message and "1111" not in message
    assert isinstance(excinfo.value, ValueError) and isinstance(excinfo.value, LangGraphMemoryError)
    # Other kinds set to reject do not fire on text without them.
    assert redact(text, policy(email="reject")).text == "ok so my card is [BANK_CARD] thanks"


def test_keep_reports_but_does_not_change() -> None:
    text = "email a@b.com phone 13800138000"
    result = redact(text, policy(email="keep"))
    assert result.text == "email a@b.com phone [PHONE]"
    assert [(f.kind, f.action) for f in result.findings] == [
        ("email", "keep"),
        ("cn_mobile", "mask"),
    ]
    kept_only = redact("a@b.com", policy(email="keep"))
    assert kept_only.text == "a@b.com" and not kept_only.changed


def test_find_does_not_raise_for_reject() -> None:
    redactor = Redactor(policy(email="reject"))
    assert [(f.kind, f.action) for f in redactor.find("a@b.com")] == [("email", "reject")]


def test_counts_per_kind() -> None:
    result = redact("a@b.com c@d.org 13800138000")
    assert result.counts() == {"email": 2, "cn_mobile": 1}


def test_findings_never_carry_the_raw_value() -> None:
    text = "密码是Zx9!kLm2 邮箱secret.person@example.com 卡 4111111111111111"
    result = redact(text, policy(email="hash"))
    for finding in result.findings:
        assert set(Finding.__slots__) == {"kind", "start", "end", "action"}
        rendered = repr(finding) + str(finding)
        for raw in ("Zx9!kLm2", "secret.person", "4111111111111111"):
            assert raw not in rendered
    assert "secret.person" not in repr(result)


@settings(max_examples=150, deadline=None)
@given(
    prefix=st.text(max_size=40),
    suffix=st.text(max_size=40),
    number=st.from_regex(r"1[3-9][0-9]{9}", fullmatch=True),
    user=st.from_regex(r"[a-z][a-z0-9._]{0,12}[a-z0-9]", fullmatch=True),
)
def test_inserted_identifiers_never_survive(
    prefix: str, suffix: str, number: str, user: str
) -> None:
    text = f"{prefix} 手机{number}，邮箱 {user}@example.com {suffix}"
    result = redact(text)
    assert number not in result.text
    assert f"{user}@example.com" not in result.text
    for finding in result.findings:
        assert 0 <= finding.start < finding.end <= len(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_never_crashes_and_offsets_are_ordered(text: str) -> None:
    result = redact(text)
    previous_end = 0
    for finding in result.findings:
        assert previous_end <= finding.start < finding.end <= len(text)
        previous_end = finding.end
    if not result.findings:
        assert result.text == text


# --- bad input ----------------------------------------------------------------------


def test_bad_policy_and_bad_text_raise_typed_errors() -> None:
    with pytest.raises(ConfigurationError, match="PrivacyPolicy"):
        Redactor({"email": "mask"})  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="unknown identifier kind"):
        PrivacyPolicy(actions=MappingProxyType({"licence_plate": "mask"}))  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="needs a str"):
        redact(b"13800138000")  # type: ignore[arg-type]


# --- messages -------------------------------------------------------------------------


def test_redact_messages_returns_redacted_copies() -> None:
    human = HumanMessage("我的手机是13800138000", id="h1")
    ai = AIMessage(
        content=[{"type": "text", "text": "Saved a@b.com"}, {"type": "image", "url": "x"}],
        id="a1",
        tool_calls=[
            {
                "name": "save",
                "args": {"note": "card 4111111111111111", "n": 3, "tags": ["x@y.org"]},
                "id": "c1",
            }
        ],
    )
    system = SystemMessage("no identifiers")
    out = redact_messages([human, ai, system], policy())
    assert out[0].content == "我的手机是[PHONE]" and out[0].id == "h1"
    assert isinstance(out[1], AIMessage)
    assert out[1].content == [
        {"type": "text", "text": "Saved [EMAIL]"},
        {"type": "image", "url": "x"},
    ]
    assert out[1].tool_calls[0]["args"] == {"note": "card [BANK_CARD]", "n": 3, "tags": ["[EMAIL]"]}
    assert out[1].id == "a1" and out[2].content == "no identifiers"
    # The originals are untouched.
    assert human.content == "我的手机是13800138000"
    assert ai.tool_calls[0]["args"]["note"] == "card 4111111111111111"


def test_redact_messages_applies_reject() -> None:
    with pytest.raises(RedactionRejectedError):
        redact_messages([HumanMessage("pwd: hunter22")], policy(password="reject"))


# --- user fingerprints -----------------------------------------------------------------


def test_fingerprint_user_id_is_stable_salted_and_opaque() -> None:
    fp = fingerprint_user_id("alice@example.com")
    assert fp == fingerprint_user_id("alice@example.com")
    assert fp != fingerprint_user_id("bob@example.com")
    assert fp != fingerprint_user_id("alice@example.com", salt="other")
    assert "alice" not in fp and fp.startswith("user:") and len(fp) == len("user:") + 16
    with pytest.raises(InvalidUserIdError, match="non-empty"):
        fingerprint_user_id("")
    with pytest.raises(InvalidUserIdError):
        fingerprint_user_id(None)  # type: ignore[arg-type]


# --- generated identifiers ------------------------------------------------------------


@st.composite
def resident_ids(draw: st.DrawFn) -> str:
    region = draw(st.sampled_from(["110105", "310104", "440305", "330106", "510107", "650102"]))
    born = draw(st.dates(min_value=date(1900, 1, 1), max_value=date(2020, 12, 31)))
    sequence = draw(st.integers(min_value=0, max_value=999))
    first17 = f"{region}{born:%Y%m%d}{sequence:03d}"
    return first17 + resident_id_check_char(first17)


@st.composite
def luhn_numbers(draw: st.DrawFn) -> str:
    prefix = draw(st.sampled_from(["4", "51", "55", "62", "6222", "6011", "35"]))
    length = draw(st.sampled_from([16, 16, 19]))
    body = prefix + "".join(
        draw(
            st.lists(
                st.sampled_from("0123456789"),
                min_size=length - len(prefix) - 1,
                max_size=length - len(prefix) - 1,
            )
        )
    )
    check = next(d for d in "0123456789" if luhn_valid(body + d))
    return body + check


@settings(max_examples=200, deadline=None)
@given(value=resident_ids(), context=st.sampled_from(["身份证号 {} 。", "ID: {}", "{}"]))
def test_every_valid_resident_id_is_caught_and_every_wrong_check_char_is_not(
    value: str, context: str
) -> None:
    assert kinds_and_spans(context.format(value)) == [("cn_resident_id", value)]
    wrong = next(c for c in "0123456789X" if c != value[-1])
    mistyped = kinds_and_spans(context.format(value[:-1] + wrong))
    if context.startswith("身份证"):  # right after its keyword a mistyped ID is still masked
        assert mistyped == [("cn_resident_id", value[:-1] + wrong)]
    else:
        assert not [k for k, _ in mistyped]


@settings(max_examples=200, deadline=None)
@given(value=luhn_numbers(), grouped=st.booleans())
def test_every_luhn_valid_card_is_caught_and_one_digit_off_is_not(
    value: str, grouped: bool
) -> None:
    if len(set(value)) == 1:
        return
    shown = " ".join(value[i : i + 4] for i in range(0, len(value), 4)) if grouped else value
    assert kinds_and_spans(f"card {shown}.") == [("bank_card", shown)]
    last = int(value[-1])
    broken = value[:-1] + str((last + 1) % 10)
    assert kinds_and_spans(f"card {broken}.") == []


# --- landlines, passports, legacy IDs, IPs after "server" ------------------------------


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("座机 010-12345678", "010-12345678"),
        ("办公室 0755-1234567", "0755-1234567"),
        ("(021) 6123 4567 是前台", "(021) 6123 4567"),
        ("fax 0571 88886666", "0571 88886666"),
        ("电话01012345678", "01012345678"),  # contiguous: only with a phone word
        ("总机 0531-88776655-802", "0531-88776655-802"),
        ("ring 020-8765 4321 now", "020-8765 4321"),
    ],
)
def test_cn_landline_detected(text: str, span: str) -> None:
    assert kinds_and_spans(text) == [("cn_landline", span)]


@pytest.mark.parametrize(
    "text",
    [
        "01012345678",  # 11 bare digits, no phone word
        "订单号 0755-12345678",
        "4111 0755 1234 5678",  # inside a longer group sequence
        "010-1234567",  # Beijing takes 8-digit local numbers
        "0755-123456",  # too short
        "0755-1234567A",
        "区号 010",
        "0.755-1234567",
    ],
)
def test_cn_landline_rejected(text: str) -> None:
    assert kinds_and_spans(text) == []


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("护照: E12345678", "E12345678"),
        ("护照号是G1234567", "G1234567"),
        ("passport: G1234567", "G1234567"),
        ("my passport number is 563829104", "563829104"),
        ("Passport No. K87654321", "K87654321"),
        ("港澳通行证 C12345678", "C12345678"),
    ],
)
def test_passport_after_keyword_detected(text: str, span: str) -> None:
    assert kinds_and_spans(text) == [("passport", span)]


@pytest.mark.parametrize(
    "text",
    [
        "E12345678",  # no keyword: a product code as much as a passport
        "护照有效期到2030年",
        "passport photos are 35 x 45",
        "passport fee 120000 VND",
        "护照 E123",
    ],
)
def test_passport_rejected(text: str) -> None:
    assert kinds_and_spans(text) == []


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("110105491231002", True),
        ("330106750523041", True),
        ("990105491231002", False),  # no province 99
        ("110105491331002", False),  # month 13
        ("110105490230002", False),  # 30 February
        ("110005491231002", False),  # city part "00"
        ("110100491231002", False),  # county part "00"
        ("11010549123100", False),
        ("11010549123100X", False),
    ],
)
def test_legacy_resident_id_validation(value: str, valid: bool) -> None:
    assert is_valid_legacy_resident_id(value) is valid


def test_legacy_resident_id_detected_unless_an_order_or_imei_clause() -> None:
    assert kinds_and_spans("老身份证 110105491231002") == [("cn_resident_id", "110105491231002")]
    assert kinds_and_spans("登记 110105491231002 张三") == [("cn_resident_id", "110105491231002")]
    assert kinds_and_spans("订单号 110105491231002") == []
    assert kinds_and_spans("IMEI 351234491231002") == []


@pytest.mark.parametrize(
    "text",
    ["server 203.0.113.77", "the server 203.0.113.77 is down", "observer 203.0.113.77"],
)
def test_ip_after_server_detected(text: str) -> None:
    # "ver" used to match the tail of "server" and mark the address a version.
    assert kinds_and_spans(text) == [("ip_address", "203.0.113.77")]


def test_new_kinds_follow_the_policy() -> None:
    text = "座机 010-12345678，护照 E12345678"
    assert redact(text, policy(cn_landline="keep")).text == "座机 010-12345678，护照 [PASSPORT]"
    with pytest.raises(RedactionRejectedError, match="'passport'"):
        redact(text, policy(passport="reject"))
    hashed = redact("座机 010-12345678", policy(cn_landline="hash")).text
    assert hashed == redact("座机 (010) 1234 5678", policy(cn_landline="hash")).text


def test_redact_messages_covers_every_payload_field_and_keeps_the_wiring() -> None:
    phone = "13800138000"
    ai = AIMessage(
        content=[
            {"type": "text", "text": f"texting {phone}"},
            {"type": "tool_use", "id": "toolu_1", "name": "sms", "input": {"to": phone}},
            {"type": "thinking", "thinking": f"user gave {phone}", "signature": "c2ln"},
            {"type": "image", "source_type": "base64", "data": "MTM4MDAxMzgwMDA="},
        ],
        id="a1",
        tool_calls=[{"name": "sms", "args": {"to": phone}, "id": "call_13800138000"}],
        invalid_tool_calls=[
            {"name": "sms", "args": f'{{"to": "{phone}"', "id": "c2", "error": "bad json"}
        ],
        additional_kwargs={
            "tool_calls": [
                {
                    "id": "call_13800138000",
                    "type": "function",
                    "function": {"name": "sms", "arguments": f'{{"to": "{phone}"}}'},
                }
            ]
        },
        response_metadata={"model_name": "m", "note": f"echo {phone}"},
    )
    tool = ToolMessage(
        f"sent to {phone}", tool_call_id="call_13800138000", artifact={"to": [phone]}
    )
    out_ai, out_tool = redact_messages([ai, tool], policy())
    dumped = repr(out_ai.model_dump()) + repr(out_tool.model_dump())
    # The only remaining occurrences are the tool-call ids, which pair call and result.
    assert dumped.count(phone) == dumped.count("call_13800138000")
    assert isinstance(out_ai, AIMessage) and isinstance(out_tool, ToolMessage)
    assert out_ai.tool_calls[0]["id"] == out_tool.tool_call_id == "call_13800138000"
    assert out_ai.tool_calls[0]["args"] == {"to": "[PHONE]"}
    assert out_ai.invalid_tool_calls[0]["args"] == '{"to": "[PHONE]"'
    assert out_ai.additional_kwargs["tool_calls"][0]["function"]["arguments"] == '{"to": "[PHONE]"}'
    assert out_ai.content[1] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "sms",
        "input": {"to": "[PHONE]"},
    }
    assert out_ai.content[2] == {
        "type": "thinking",
        "thinking": "user gave [PHONE]",
        "signature": "c2ln",
    }
    assert out_ai.content[3] == ai.content[3]  # media payloads are kept as they are
    assert out_ai.response_metadata == {"model_name": "m", "note": "echo [PHONE]"}
    assert out_tool.artifact == {"to": ["[PHONE]"]} and out_tool.content == "sent to [PHONE]"
    # The inputs are untouched.
    assert ai.additional_kwargs["tool_calls"][0]["function"]["arguments"] == f'{{"to": "{phone}"}}'
