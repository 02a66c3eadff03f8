"""Text similarity for reconcile (pure, language-agnostic): near-duplicates by bigram Dice."""

from __future__ import annotations

import re

# --- similarity (pure, language-agnostic) -----------------------------------------

_NON_WORD = re.compile(r"[^\w\u3400-\u9fff]+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _bigrams(text: str) -> set[str]:
    folded = _NON_WORD.sub(" ", text.lower()).strip()
    folded = re.sub(r"\s+", " ", folded)
    return {folded[i : i + 2] for i in range(max(len(folded) - 1, 1))} if folded else set()


def text_similarity(a: str, b: str) -> float:
    """Dice coefficient of character bigrams: 1.0 identical, 0.0 nothing shared.

    Numbers must agree: "budget is 3000" and "budget is 5000" are not duplicates.

    Example:
        >>> text_similarity("User likes green tea", "user likes green tea.")
        1.0
        >>> text_similarity("User's budget is 3000", "User's budget is 5000")
        0.0
    """
    if _NUMBER.findall(a) != _NUMBER.findall(b):
        return 0.0
    x, y = _bigrams(a), _bigrams(b)
    if not x or not y:
        return 0.0
    return 2 * len(x & y) / (len(x) + len(y))


def _same_text(a: str, b: str) -> bool:
    return _NON_WORD.sub("", a.lower()) == _NON_WORD.sub("", b.lower())
