"""The zero-dependency default: a deterministic hashing embedder.

:class:`HashingEmbeddings` is real code, not a
stub: it maps Chinese and English text into a fixed-size vector by signed
feature hashing of

* CJK characters (unigrams, weight 0.5) and character bigrams (weight 1.0),
  so 海鲜过敏 and 对海鲜过敏 share most of their features without a segmenter;
* Latin words after light normalisation (NFKC, lower case, plural ``-s``),
  plus character 3-grams of each word with boundary marks (``<al``, ``all``,
  ... ``gy>``), so ``allergy`` and ``allergic`` still overlap.

Frequent function words (the, is, 的, 了 ...) get a tenth of the weight so two
unrelated sentences do not look alike because both contain "the". Term
frequency is sublinear (``1 + ln tf``) and vectors are L2-normalised, so the
dot product is the cosine. Features are hashed with keyed BLAKE2b, never
Python's ``hash()``, so a vector is the same in every process and on every
machine: it can be stored in Chroma and compared later.

It is lexical: "Can I eat shrimp?" shares nothing with "User is allergic to
seafood". ``models.py`` has the semantic models that ship inside PyPI packages.

Example:
    >>> emb = HashingEmbeddings(dimensions=64)
    >>> len(emb.embed_query("用户对海鲜过敏"))
    64
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Final

import numpy as np
from langchain_core.embeddings import Embeddings

from langgraph_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["HashingEmbeddings", "iter_features"]

_CJK_RANGES: Final = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uac00-\ud7af"  # hangul syllables
)
# A run of CJK characters, or a run of letters/digits that are not CJK
# ("iphone手机" is two tokens: "iphone" and the CJK run "手机").
_TOKEN: Final = re.compile(rf"(?P<cjk>[{_CJK_RANGES}]+)|(?P<word>[^\W_{_CJK_RANGES}]+)")

# Function words: a tenth of the weight (not zero: "not" and "不" still matter).
_EN_FUNCTION_TEXT: Final = (
    "a an the is are was were be been am i me my you your he she it its we our they their "
    "him her them this that these those to of in on at for with by from as and or but if "
    "so do does did has have had will would can could should shall may might must not no "
    "there here what which who whom how when where than then too very just also"
)
_EN_FUNCTION_WORDS: Final = frozenset(_EN_FUNCTION_TEXT.split())
_CJK_FUNCTION_CHARS: Final = frozenset("的了是我你他她它们在有和就不也都这那吗呢吧啊么个一要会说")
_FUNCTION_WEIGHT: Final = 0.1

_CJK_UNIGRAM_WEIGHT: Final = 0.5
_CJK_BIGRAM_WEIGHT: Final = 1.0
_WORD_WEIGHT: Final = 1.0
_CHAR_TRIGRAM_WEIGHT: Final = 0.35
# Every text gets at least this feature, so "" still embeds to a unit vector
# (Chroma rejects zero vectors under cosine distance).
_EMPTY_FEATURE: Final = "\x00empty"


def _normalise_word(word: str) -> str:
    # Plural folding only; a full stemmer would be a dependency for little gain
    # since the character 3-grams already cover most inflection.
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def iter_features(text: str) -> Iterator[tuple[str, float]]:
    """Yield ``(feature, weight)`` pairs for ``text``; exposed for tests and debugging.

    Example:
        >>> sorted({f for f, _ in iter_features("海鲜")})
        ['b:海鲜', 'u:海', 'u:鲜']
    """
    normalised = unicodedata.normalize("NFKC", text).lower()
    for match in _TOKEN.finditer(normalised):
        run = match.group("cjk")
        if run is not None:
            for index, char in enumerate(run):
                weight = _FUNCTION_WEIGHT if char in _CJK_FUNCTION_CHARS else 1.0
                yield f"u:{char}", _CJK_UNIGRAM_WEIGHT * weight
                if index + 1 < len(run):
                    pair = run[index : index + 2]
                    both_function = (
                        pair[0] in _CJK_FUNCTION_CHARS and pair[1] in _CJK_FUNCTION_CHARS
                    )
                    yield (
                        f"b:{pair}",
                        _CJK_BIGRAM_WEIGHT * (_FUNCTION_WEIGHT if both_function else 1.0),
                    )
            continue
        word = match.group("word")
        if word in _EN_FUNCTION_WORDS:
            yield f"w:{word}", _WORD_WEIGHT * _FUNCTION_WEIGHT
            continue
        word = _normalise_word(word)
        yield f"w:{word}", _WORD_WEIGHT
        if word.isdigit() or len(word) < 3:
            continue
        marked = f"<{word}>"
        for index in range(len(marked) - 2):
            yield f"c:{marked[index : index + 3]}", _CHAR_TRIGRAM_WEIGHT


@lru_cache(maxsize=1 << 18)
def _bucket(feature: str, dimensions: int, seed: str) -> tuple[int, float]:
    digest = hashlib.blake2b(
        feature.encode("utf-8"), digest_size=8, key=seed.encode("utf-8")[:64]
    ).digest()
    index = int.from_bytes(digest[:4], "little") % dimensions
    # Signed hashing: collisions cancel out on average instead of piling up.
    sign = 1.0 if digest[4] & 1 else -1.0
    return index, sign


class HashingEmbeddings(Embeddings):
    """Deterministic offline embeddings by character n-gram feature hashing.

    Good enough to rank paraphrases that share words or characters above
    unrelated text, in Chinese and English; not a substitute for a semantic
    model on paraphrases with no lexical overlap ("car" vs "automobile").

    Args:
        dimensions: Vector size (8-65536). 384 matches MiniLM, so a collection
            can switch models without changing its dimension.
        seed: Keys the feature hash. Vectors made with different seeds are not
            comparable; keep the default unless you want separate spaces.

    Raises:
        ConfigurationError: ``dimensions`` or ``seed`` is out of range.

    Example:
        >>> emb = HashingEmbeddings()
        >>> a, b, c = emb.embed_documents(
        ...     ["user is allergic to seafood", "seafood allergy", "weather in Paris"]
        ... )
        >>> cos = lambda x, y: sum(p * q for p, q in zip(x, y))
        >>> cos(a, b) > cos(a, c)
        True
    """

    def __init__(self, dimensions: int = 384, *, seed: str = "langgraph-memory/hashing-v1") -> None:
        if (
            isinstance(dimensions, bool)
            or not isinstance(dimensions, int)
            or not 8 <= dimensions <= 65536
        ):
            raise ConfigurationError(
                f"HashingEmbeddings(dimensions={dimensions!r}); use an integer between 8 and 65536 "
                "(384 matches all-MiniLM-L6-v2)."
            )
        if not isinstance(seed, str) or not seed:
            raise ConfigurationError(
                f"HashingEmbeddings(seed={seed!r}); use a non-empty string (it keys the feature hash)."
            )
        self.dimensions = dimensions
        self.seed = seed

    def __repr__(self) -> str:
        return f"HashingEmbeddings(dimensions={self.dimensions}, seed={self.seed!r})"

    @property
    def model_identity(self) -> str:
        """The name a store records for this space (dimensions and seed both change it)."""
        return repr(self)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed each text; the result is L2-normalised, so dot product = cosine."""
        return [self._embed(text).tolist() for text in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed a query; queries and documents share one space."""
        vector: list[float] = self._embed(text).tolist()
        return vector

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        # Pure CPU work of microseconds per text: a thread hop would cost more.
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_query(text)

    def _embed(self, text: str) -> NDArray[np.float64]:
        if not isinstance(text, str):
            raise TypeError(
                f"HashingEmbeddings embeds str, got {type(text).__name__}: {text!r:.60}"
            )
        weights: dict[str, float] = {}
        counts: Counter[str] = Counter()
        for feature, weight in iter_features(text):
            counts[feature] += 1
            weights[feature] = max(weight, weights.get(feature, 0.0))
        if not counts:
            counts[_EMPTY_FEATURE] = 1
            weights[_EMPTY_FEATURE] = 1.0
        indices = np.empty(len(counts), dtype=np.int64)
        values = np.empty(len(counts), dtype=np.float64)
        for position, (feature, count) in enumerate(counts.items()):
            index, sign = _bucket(feature, self.dimensions, self.seed)
            indices[position] = index
            values[position] = sign * weights[feature] * (1.0 + math.log(count))
        vector = np.bincount(indices, weights=values, minlength=self.dimensions)
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            # All features cancelled out in colliding buckets (vanishingly rare):
            # fall back to the empty-text vector rather than a zero vector.
            return self._embed("")
        unit: NDArray[np.float64] = vector / norm
        return unit
