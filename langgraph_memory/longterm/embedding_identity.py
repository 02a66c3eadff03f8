"""Which embedding model made a store's vectors: record it, recognise it, refuse a swap.

A dimension check alone lets a same-size swap through (HashingEmbeddings(384)
for multilingual-e5-small, or one hashing seed for another), and vector scores
then quietly become noise. So a store records an :class:`EmbeddingIdentity`:

* ``name``: what the model says it is (:func:`embedding_name`);
* ``dimensions``;
* ``probe``: the model's vectors for :data:`PROBE_TEXTS` (an English and a
  Chinese sentence), each scaled to int8 (384 bytes for 384 dimensions);
* ``fingerprint``: 12 hex digits of BLAKE2b over the quantised probe, for messages.

Two identities are the same model when their probes agree
(:func:`probe_agreement` >= :data:`SAME_MODEL_AGREEMENT`), whatever their names: a
renamed wrapper around the same model is accepted, a different model under the
same name is not. Comparing vectors rather than hashes keeps the check stable
under the last-bit noise of threaded float sums, which would flip a hash.

Everything here is pure except :func:`probe_identity` / :func:`aprobe_identity`,
which call the model once (two short texts).

Example:
    >>> from langgraph_memory.embeddings import HashingEmbeddings
    >>> a = probe_identity(HashingEmbeddings(seed="one"))
    >>> b = probe_identity(HashingEmbeddings(seed="two"))
    >>> compare_identities(a, probe_identity(HashingEmbeddings(seed="one"))).same_model
    True
    >>> compare_identities(a, b).same_model
    False
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from langgraph_memory.errors import ConfigurationError, EmbeddingModelMismatchError

__all__ = [
    "PROBE_TEXTS",
    "SAME_MODEL_AGREEMENT",
    "EmbeddingIdentity",
    "IdentityComparison",
    "ReembedProgress",
    "aprobe_identity",
    "compare_identities",
    "embedding_name",
    "identity_from_vectors",
    "mismatch_error",
    "probe_agreement",
    "probe_identity",
]

# One English and one Chinese sentence: a model that only differs on one script
# still shows. Changing these changes every fingerprint: never edit, add a v2.
PROBE_TEXTS: Final = (
    "langgraph-memory embedding probe v1: the user is allergic to seafood and prefers tea.",
    "langgraph-memory 嵌入探针 v1：用户对海鲜过敏，喜欢喝茶。",
)
# Same model: the probe vectors agree to within quantisation and float noise.
# int8 quantisation alone keeps cosine above 0.9999; two runs of one model with
# different thread counts differ around 1e-6. A 4-bit vs float32 build of one
# model agrees at ~0.98-0.99 and two different models well below 0.95, so 0.999
# calls those different, as it should: mixing their vectors degrades ranking.
SAME_MODEL_AGREEMENT: Final = 0.999
_FINGERPRINT_HEX: Final = 12


def _dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


def embedding_name(embeddings: Any) -> str:
    """The model name an embedder reports, for the store's record and for messages.

    In order: an explicit ``model_identity`` string (this package's embedders
    define one); ``model`` / ``model_name`` / ``model_id`` / ``deployment`` (what
    LangChain's OpenAI, HuggingFace, Ollama ... embedders carry), prefixed by the
    class name; the wrapped function of LangGraph's ``EmbeddingsLambda``; else
    the class's dotted path.

    Example:
        >>> from langgraph_memory.embeddings import HashingEmbeddings
        >>> embedding_name(HashingEmbeddings(dimensions=64, seed="s"))
        "HashingEmbeddings(dimensions=64, seed='s')"
    """
    explicit = getattr(embeddings, "model_identity", None)
    if isinstance(explicit, str) and explicit:
        return explicit
    cls = type(embeddings)
    for attr in ("model", "model_name", "model_id", "deployment"):
        value = getattr(embeddings, attr, None)
        if isinstance(value, str) and value:
            return f"{cls.__name__}:{value}"
    func = getattr(embeddings, "func", None) or getattr(embeddings, "afunc", None)
    if callable(func):
        module = getattr(func, "__module__", None) or "?"
        qualname = getattr(func, "__qualname__", None) or type(func).__qualname__
        return f"{cls.__name__}:{module}.{qualname}"
    return f"{cls.__module__}.{cls.__qualname__}"


def _quantise(vector: Sequence[float]) -> bytes:
    array = np.asarray(vector, dtype=np.float64)
    if array.ndim != 1 or array.size == 0 or not np.all(np.isfinite(array)):
        raise ConfigurationError(
            f"The embedding model returned an unusable probe vector (shape {array.shape}, "
            f"first values {array.ravel()[:4].tolist()!r}); it must return one finite, "
            "non-empty vector per text."
        )
    peak = float(np.max(np.abs(array)))
    if peak == 0.0:
        return bytes(array.size)
    # Cosine is scale-free, so each vector gets its own scale and only int8 is kept.
    return np.rint(array / peak * 127.0).astype(np.int8).tobytes()


@dataclass(frozen=True)
class EmbeddingIdentity:
    """What a store records about the model that made its vectors.

    Attributes:
        name: The model's name (:func:`embedding_name`).
        dimensions: Vector size.
        probe: The int8-quantised vectors of :data:`PROBE_TEXTS`, one per text.
        fingerprint: Short hash of ``probe``, shown in messages.
    """

    name: str
    dimensions: int
    probe: tuple[bytes, ...]
    fingerprint: str

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ConfigurationError(f"EmbeddingIdentity(name={self.name!r}); use a non-empty str.")
        if not self.probe or any(len(p) != self.dimensions for p in self.probe):
            raise ConfigurationError(
                f"EmbeddingIdentity({self.name!r}): every probe must hold dimensions="
                f"{self.dimensions} int8 values, got lengths {[len(p) for p in self.probe]}."
            )

    def describe(self) -> str:
        """``name`` (dims, fingerprint), as messages show it.

        Example:
            >>> from langgraph_memory.embeddings import HashingEmbeddings
            >>> probe_identity(HashingEmbeddings(dimensions=8)).describe().startswith(
            ...     "HashingEmbeddings(dimensions=8, seed='langgraph-memory/hashing-v1') (8 dims, ")
            True
        """
        return f"{self.name} ({self.dimensions} dims, fingerprint {self.fingerprint})"

    def to_json(self) -> str:
        """The form kept in the store's metadata table.

        Example:
            >>> from langgraph_memory.embeddings import HashingEmbeddings
            >>> ident = probe_identity(HashingEmbeddings(dimensions=8))
            >>> EmbeddingIdentity.from_json(ident.to_json()) == ident
            True
        """
        return _dumps(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (probes in base64)."""
        return {
            "version": 1,
            "name": self.name,
            "dimensions": self.dimensions,
            "probe": [base64.b64encode(p).decode("ascii") for p in self.probe],
            "fingerprint": self.fingerprint,
        }

    @classmethod
    def from_json(cls, raw: str) -> EmbeddingIdentity:
        """Read :meth:`to_json`'s form back.

        Raises:
            ConfigurationError: ``raw`` is not a recorded identity (a damaged
                or hand-edited metadata row).
        """
        try:
            return cls.from_dict(json.loads(raw))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise ConfigurationError(
                f"The store's recorded embedding identity {raw[:120]!r} cannot be read ({exc}); "
                "the metadata row is damaged: restore a backup, or re-embed with "
                "store.reembed(embeddings) to record it anew."
            ) from exc

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EmbeddingIdentity:
        """Inverse of :meth:`to_dict` (raises ``ValueError``/``KeyError`` on damage)."""
        if data.get("version") != 1:
            raise ValueError(f"unknown version {data.get('version')!r}")
        return cls(
            name=str(data["name"]),
            dimensions=int(data["dimensions"]),
            probe=tuple(base64.b64decode(p, validate=True) for p in data["probe"]),
            fingerprint=str(data["fingerprint"]),
        )


def identity_from_vectors(name: str, vectors: Sequence[Sequence[float]]) -> EmbeddingIdentity:
    """The identity of a model named ``name`` whose probe vectors are ``vectors`` (pure).

    Raises:
        ConfigurationError: The vectors are not one finite vector per probe
            text, all of one size.

    Example:
        >>> identity_from_vectors("toy", [[1.0, 0.0], [0.0, 1.0]]).dimensions
        2
    """
    if len(vectors) != len(PROBE_TEXTS):
        raise ConfigurationError(
            f"The embedding model {name!r} returned {len(vectors)} vectors for "
            f"{len(PROBE_TEXTS)} probe texts; embed_documents must return one vector per text."
        )
    probe = tuple(_quantise(v) for v in vectors)
    sizes = {len(p) for p in probe}
    if len(sizes) != 1:
        raise ConfigurationError(
            f"The embedding model {name!r} returned vectors of sizes {sorted(sizes)} for the "
            "probe texts; one model must return one size."
        )
    digest = hashlib.blake2b(b"".join(probe), digest_size=16).hexdigest()[:_FINGERPRINT_HEX]
    return EmbeddingIdentity(name=name, dimensions=sizes.pop(), probe=probe, fingerprint=digest)


def probe_identity(embeddings: Any) -> EmbeddingIdentity:
    """Embed :data:`PROBE_TEXTS` with ``embeddings`` and return its identity."""
    vectors = embeddings.embed_documents(list(PROBE_TEXTS))
    return identity_from_vectors(embedding_name(embeddings), vectors)


async def aprobe_identity(embeddings: Any) -> EmbeddingIdentity:
    """Async twin of :func:`probe_identity`."""
    vectors = await embeddings.aembed_documents(list(PROBE_TEXTS))
    return identity_from_vectors(embedding_name(embeddings), vectors)


def probe_agreement(a: EmbeddingIdentity, b: EmbeddingIdentity) -> float:
    """The lowest cosine between matching probe vectors of ``a`` and ``b`` (-1..1).

    0.0 when the dimensions or probe counts differ (nothing to compare).

    Example:
        >>> x = identity_from_vectors("x", [[1.0, 0.0], [0.0, 1.0]])
        >>> y = identity_from_vectors("y", [[1.0, 0.1], [0.0, 1.0]])
        >>> round(probe_agreement(x, y), 3)
        0.995
    """
    if a.dimensions != b.dimensions or len(a.probe) != len(b.probe):
        return 0.0
    lowest = 1.0
    for left, right in zip(a.probe, b.probe, strict=True):
        u = np.frombuffer(left, dtype=np.int8).astype(np.float64)
        v = np.frombuffer(right, dtype=np.int8).astype(np.float64)
        norms = float(np.linalg.norm(u) * np.linalg.norm(v))
        cosine = float(u @ v) / norms if norms else (1.0 if not u.any() and not v.any() else 0.0)
        lowest = min(lowest, cosine)
    return lowest if math.isfinite(lowest) else 0.0


@dataclass(frozen=True)
class IdentityComparison:
    """How an opened model relates to the recorded one.

    Attributes:
        same_model: The probes agree: the vectors are comparable.
        renamed: Same model under another name (the record may take the new name).
        agreement: :func:`probe_agreement` of the two.
    """

    same_model: bool
    renamed: bool
    agreement: float


def compare_identities(
    recorded: EmbeddingIdentity, current: EmbeddingIdentity
) -> IdentityComparison:
    """Compare the model a store was built with to the one it is opened with (pure).

    Example:
        >>> x = identity_from_vectors("x", [[1.0, 0.0], [0.0, 1.0]])
        >>> compare_identities(x, identity_from_vectors("x2", [[1.0, 0.0], [0.0, 1.0]]))
        IdentityComparison(same_model=True, renamed=True, agreement=1.0)
    """
    agreement = probe_agreement(recorded, current)
    same = recorded.dimensions == current.dimensions and agreement >= SAME_MODEL_AGREEMENT
    return IdentityComparison(
        same_model=same, renamed=same and recorded.name != current.name, agreement=agreement
    )


def mismatch_error(
    recorded: EmbeddingIdentity,
    current: EmbeddingIdentity,
    where: str,
    *,
    agreement: float | None = None,
) -> EmbeddingModelMismatchError:
    """The error for opening ``where`` (a store path) with another model than it was built with.

    Example:
        >>> x = identity_from_vectors("model-a", [[1.0, 0.0], [0.0, 1.0]])
        >>> y = identity_from_vectors("model-b", [[0.0, 1.0], [1.0, 0.0]])
        >>> "model-a" in str(mismatch_error(x, y, "/data/store"))
        True
    """
    agreement = probe_agreement(recorded, current) if agreement is None else agreement
    if recorded.dimensions != current.dimensions:
        why = f"their dimensions differ ({recorded.dimensions} vs {current.dimensions})"
    elif recorded.name == current.name:
        why = (
            f"both are named {current.name!r} but their probe vectors agree only to cosine "
            f"{agreement:.3f} (same model needs >= {SAME_MODEL_AGREEMENT}): the weights, "
            "version or settings changed"
        )
    else:
        why = (
            f"same size, but their probe vectors agree only to cosine {agreement:.3f} "
            f"(same model needs >= {SAME_MODEL_AGREEMENT}): scores across the two are noise"
        )
    return EmbeddingModelMismatchError(
        f"The store at {where!r} holds vectors made by {recorded.describe()}, but it was "
        f"opened with {current.describe()}; {why}. Open it with the model it was built with, "
        "or move it to the new model with store.reembed(new_embeddings) (rewrites every "
        "vector; resumable), or use a new store directory.",
        recorded=recorded,
        current=current,
    )


@dataclass(frozen=True)
class ReembedProgress:
    """Where a re-embed stands; reported after every batch and kept for resuming.

    Attributes:
        target: The identity being moved to.
        after_rowid: Every vector-bearing item with a smaller or equal catalog
            rowid is done (items are rewritten in rowid order).
        done: Vectors rewritten so far (across resumed runs).
        total: Vector-bearing items when this run started (``done`` included).
    """

    target: EmbeddingIdentity
    after_rowid: int
    done: int
    total: int

    @property
    def finished(self) -> bool:
        """Every vector was rewritten."""
        return self.done >= self.total

    def to_json(self) -> str:
        """The form kept in the store's metadata table between batches."""
        return _dumps(
            {
                "target": self.target.to_dict(),
                "after_rowid": self.after_rowid,
                "done": self.done,
                "total": self.total,
            }
        )

    @classmethod
    def from_json(cls, raw: str) -> ReembedProgress:
        """Read :meth:`to_json`'s form back.

        Raises:
            ConfigurationError: The row is damaged.
        """
        try:
            data = json.loads(raw)
            return cls(
                target=EmbeddingIdentity.from_dict(data["target"]),
                after_rowid=int(data["after_rowid"]),
                done=int(data["done"]),
                total=int(data["total"]),
            )
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise ConfigurationError(
                f"The store's re-embed progress row {raw[:120]!r} cannot be read ({exc}); "
                "run store.reembed(new_embeddings) again: it starts over."
            ) from exc
