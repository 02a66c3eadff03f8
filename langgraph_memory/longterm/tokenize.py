"""Tokenisation for the keyword index, done in Python so Chinese works in FTS5.

FTS5's built-in tokenisers split on separators, and Chinese has none: a whole
sentence would become one token. So we pre-tokenise here and hand FTS5 a
space-separated string (its ``unicode61`` tokeniser then only splits on the
spaces we put in):

* Chinese / Japanese / Korean runs: every character (unigram) and every pair of
  neighbours (bigram). Bigrams carry most of the meaning ("海鲜", "过敏");
  unigrams keep recall when a paraphrase shares single characters.
* Latin text: lowercased words with a light suffix stemmer ("allergies",
  "allergic" -> "allerg"), so plural and tense paraphrases still match.

Example:
    >>> index_tokens("User is allergic to seafood")
    ['user', 'allerg', 'seafood']
    >>> index_tokens("对海鲜过敏")
    ['对', '海', '鲜', '过', '敏', '对海', '海鲜', '鲜过', '过敏']
"""

from __future__ import annotations

import re

# Han, Hiragana/Katakana, Hangul: scripts written without spaces between words.
_CJK_RUN = r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+"
_TOKEN_RE = re.compile(rf"({_CJK_RUN})|([0-9a-z]+)")

# Function words that would make almost every memory a keyword match.
ENGLISH_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "do",
        "does",
        "did",
        "for",
        "from",
        "has",
        "have",
        "had",
        "he",
        "her",
        "his",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "will",
        "with",
        "you",
        "your",
        "about",
        "also",
        "am",
        "can",
        "could",
        "would",
        "should",
        "just",
        "very",
    ]
)
# Single characters that appear in most Chinese sentences; as unigrams they
# match everything. Bigrams containing them are kept.
CJK_STOP_CHARS = frozenset("的了是我你他她它在吗呢啊吧和也都就有这那个一不很要说会")

_SUFFIXES = (
    "ational", "ization", "iveness", "fulness", "ousness",
    "ations", "ation", "ments", "ingly", "ement", "ities", "ness", "ment",
    "ions", "ies", "ied", "ing", "ion", "ity", "ers", "ics", "ive", "ize", "ful",
    "ous", "ed", "er", "es", "ic", "ly", "s", "y", "e",
)  # fmt: skip


def stem(word: str) -> str:
    """Strip one common English suffix, keeping a stem of at least 3 letters.

    Light on purpose: it only needs to make paraphrases meet, not to be Porter.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _cjk_tokens(run: str, *, drop_stop_chars: bool) -> list[str]:
    unigrams = [c for c in run if not (drop_stop_chars and c in CJK_STOP_CHARS)]
    bigrams = [run[i : i + 2] for i in range(len(run) - 1)]
    return unigrams + bigrams


def tokens(text: str, *, drop_stopwords: bool) -> list[str]:
    """Tokens in text order (CJK unigrams of a run first, then its bigrams)."""
    out: list[str] = []
    for cjk, word in _TOKEN_RE.findall(text.lower()):
        if cjk:
            out.extend(_cjk_tokens(cjk, drop_stop_chars=drop_stopwords))
        elif not (drop_stopwords and word in ENGLISH_STOPWORDS):
            out.append(stem(word))
    return out


def index_tokens(text: str) -> list[str]:
    """Tokens stored in the FTS5 index for one memory text."""
    return tokens(text, drop_stopwords=True)


def index_text(text: str) -> str:
    """The space-separated string FTS5 indexes."""
    return " ".join(index_tokens(text))


def scoped_index_text(text: str, scope: str) -> str:
    """:func:`index_text` with every token prefixed by a partition's ``scope``.

    Example:
        >>> scoped_index_text("对海鲜过敏", "uab")
        'uab对 uab海 uab鲜 uab过 uab敏 uab对海 uab海鲜 uab鲜过 uab过敏'
    """
    return scope_tokens(index_text(text), scope)


def scope_tokens(body: str, scope: str) -> str:
    """Prefix every space-separated token of an indexed ``body`` with ``scope``."""
    return " ".join(scope + token for token in body.split())


def query_tokens(text: str) -> list[str]:
    """Distinct query tokens, stopwords dropped, first occurrence order."""
    return list(dict.fromkeys(tokens(text, drop_stopwords=True)))


def match_expression(query_terms: list[str]) -> str | None:
    """An FTS5 ``MATCH`` expression OR-ing the quoted terms, or None if empty.

    Every term is quoted (and tokens only ever contain letters, digits and CJK
    characters), so user text can never inject FTS5 syntax such as ``NEAR``
    or column filters.
    """
    if not query_terms:
        return None
    return " OR ".join(f'"{term}"' for term in query_terms)
