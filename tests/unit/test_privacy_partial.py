"""The default ``partial`` mask: what identifies nobody stays, so the user can be answered.

"Which number do you have for me?" needs "the one ending 1937", not "[PHONE]"; the raw
identifier must still never be stored.
"""

from __future__ import annotations

from types import MappingProxyType

import pytest

from langgraph_memory.config import PrivacyPolicy
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.privacy import Redactor, redact


@pytest.mark.parametrize(
    ("text", "masked", "raw"),
    [
        ("我换号了，新的是 18655021937", "我换号了，新的是 [PHONE:*1937]", "18655021937"),
        ("new mobile 0433 120 776 please", "new mobile [PHONE:*0776] please", "0433 120 776"),
        ("mail me at wing.lam.tko@outlook.com", "mail me at [EMAIL:@outlook.com]", "wing.lam"),
        (
            "card 4111 1111 1111 1111 expires 09/28",
            "card [BANK_CARD:*1111] expires 09/28",
            "4111 1111",
        ),
        # Kinds whose every part identifies the holder are masked whole.
        ("身份证 110101199003074514", "身份证 [ID_NUMBER]", "110101199003074514"),
        ("password: hunter2!", "password: [PASSWORD]", "hunter2"),
    ],
)
def test_partial_keeps_only_the_tail_that_identifies_nobody(
    text: str, masked: str, raw: str
) -> None:
    result = redact(text)
    assert result.text == masked
    assert raw not in result.text
    assert result.changed


def test_mask_still_masks_whole_and_hash_still_hashes() -> None:
    whole = PrivacyPolicy(actions=MappingProxyType({"cn_mobile": "mask"}))
    assert Redactor(whole).redact("13800138000").text == "[PHONE]"
    hashed = PrivacyPolicy(actions=MappingProxyType({"cn_mobile": "hash"}))
    assert Redactor(hashed).redact("13800138000").text.startswith("[PHONE:")
    assert "*" not in Redactor(hashed).redact("13800138000").text


def test_an_unknown_action_names_the_choices() -> None:
    with pytest.raises(ConfigurationError, match="'partial', 'mask', 'hash'"):
        PrivacyPolicy(actions=MappingProxyType({"email": "tail"}))  # type: ignore[dict-item]


@pytest.mark.parametrize(
    ("text", "raw"),
    [
        ("My PAN is BQLPK4471M, what documents does the CA need?", "BQLPK4471M"),
        ("PAN card no. AAAPL1234C", "AAAPL1234C"),
        ("Aadhaar: 4829 1734 5521", "4829 1734 5521"),
        ("my aadhaar number is 482917345521", "482917345521"),
    ],
)
def test_indian_pan_and_aadhaar_after_their_word_are_masked(text: str, raw: str) -> None:
    result = redact(text)
    assert raw not in result.text and "[ID_NUMBER]" in result.text


@pytest.mark.parametrize(
    "text", ["order BQLPK4471M shipped", "SKU ABCPD1234E in stock", "tracking 4829 1734 5521"]
)
def test_the_same_shapes_without_their_word_are_no_identifier(text: str) -> None:
    assert redact(text).text == text
