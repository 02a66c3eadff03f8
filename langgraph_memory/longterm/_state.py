"""What every part of :class:`~langgraph_memory.longterm.ChromaMemoryStore` shares.

The store is one class assembled from parts, one module each (see
``longterm/__init__.py`` for the map). This module holds what they all read:
the tuning constants (with the numbers behind them), the small value types
passed between parts, and :class:`StoreState`, the attributes the constructor
sets and the helpers every part uses.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from langgraph_memory.clock import Clock, now_seconds
from langgraph_memory.config import ScoringWeights
from langgraph_memory.privacy import Redactor
from langgraph_memory.types import MemoryRecord, ScoredMemory

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langgraph.store.base import TTLConfig

    from langgraph_memory.longterm.catalog import Catalog
    from langgraph_memory.longterm.rows import RecordCache
    from langgraph_memory.longterm.vectors import ChromaVectors, PartitionVectorCache

# Candidates fetched from each index before fusion (at least 5x the limit): the
# fused top-k rarely comes from below either index's top 30, and every extra
# candidate costs a row fetch.
MIN_CANDIDATE_POOL = 30
# A partition moves from a shared shard to its own collection past this many
# vectors: exact numpy ranking of 256 vectors fetched by id costs about what one
# HNSW query does (~2 ms), beyond that the dedicated collection wins.
DEFAULT_DEDICATED_THRESHOLD = 256
DEFAULT_SHARDS = 64
# Keyword matches ranked before the catalog filter: 2x the pool, so a few
# superseded or expired winners still leave a full pool (else an exact fallback).
RANK_FIRST_OVERFETCH = 2
# Query terms found in more than half of all memories are left out of the FTS5
# query (unless every term is that common): their IDF is ~0, their cost is not.
COMMON_TERM_SHARE = 0.5
# Partitions up to this many vectors are ranked exactly from the in-process cache:
# 20k x 384 float32 is 30 MB and one matrix-vector product of ~2 ms; beyond, the
# dedicated collection's HNSW index is cheaper per query.
DEFAULT_CACHE_MAX_VECTORS = 20_000
DEFAULT_VECTOR_CACHE_BYTES = 256 * 1024 * 1024

# ``(collection, dedicated, vector_count, version)`` of a partition.
Layout = tuple[str, bool, int, int]


@dataclass(slots=True)
class PreparedPut:
    """One validated, redacted write (``value=None`` deletes), vector filled by embedding."""

    partition: str
    namespace: str
    key: str
    value: dict[str, Any] | None  # None deletes
    texts: list[str] = field(default_factory=list)
    ttl_minutes: float | None = None
    vector: list[float] | None = None


@dataclass(slots=True)
class Hit:
    """A candidate row with whatever each index said about it."""

    row: Any  # rows.ItemRow
    bm25: float = 0.0
    cosine: float | None = None


class RecalledMemories(NamedTuple):
    """What :meth:`ChromaMemoryStore.recall_memories` returns.

    ``profile``: with ``profile_limit``, the user's current memories ranked by
    importance whatever the query (the recall node's core-profile candidates).
    """

    found: list[ScoredMemory]
    pinned: list[ScoredMemory]
    profile: tuple[MemoryRecord, ...] = ()


@dataclass(frozen=True, slots=True)
class RankedKeywords:
    """Keyword matches already ranked by BM25 for one search, best first, before
    the catalog filter: ``(rowid, score)`` pairs, and whether they are every
    match of that search (else the pairs are a top cut-off)."""

    pairs: list[tuple[int, float]]
    exhaustive: bool


@dataclass(slots=True)
class QueryPlan:
    """One query's shared inputs: planned keyword terms, layout, query vector."""

    partition: str
    # The keyword templates' leading parameters (``Catalog.match_params``): None = no terms.
    match_params: tuple[Any, ...] | None
    vector: Sequence[float] | None
    layout: Layout | None
    # (ids, id -> row, cosine per row) of a cached partition, filled on first use.
    cached_scores: tuple[list[str], dict[str, int], np.ndarray] | None = None
    # A worker filling ``cached_scores`` and ``tops`` meanwhile (``Retrieval._cosines_beside``).
    pending: Future[Any] | None = None
    # Candidate pool -> row positions of its best cosines (``retrieval._top_positions``).
    tops: dict[int, Sequence[int]] = field(default_factory=dict)


def candidate_pool(limit: int) -> int:
    return max(MIN_CANDIDATE_POOL, limit * 5)


class StoreState:
    """Attributes set by ``ChromaMemoryStore.__init__`` and helpers every part uses."""

    clock: Clock | None
    catalog: Catalog
    vectors: ChromaVectors
    vector_cache: PartitionVectorCache
    record_cache: RecordCache
    redactor: Redactor
    weights: ScoringWeights
    ttl_config: TTLConfig | None
    shards: int
    dedicated_threshold: int
    user_roots: tuple[str, ...]
    collection_prefix: str
    cache_max_vectors: int
    embeddings: Embeddings | None
    index_fields: list[str]
    index_config: dict[str, Any] | None
    _sweeper: threading.Thread | None
    _sweeper_stop: threading.Event

    def _now_ts(self) -> float:
        return now_seconds(self.clock)

    def _redact(self, text: str) -> str:
        return self.redactor.redact(text).text

    def _memory_namespace(self, user_id: str) -> tuple[str, str]:
        return (self.user_roots[0], user_id)

    def _partition_layout(self, partition: str) -> Layout | None:
        """``(collection, dedicated, vector_count, version)`` or ``None`` before the first write."""
        rows = self.catalog.query(self.catalog.sql.SELECT_PARTITION, (partition,))
        return layout_from_row(rows[0]) if rows else None


def layout_from_row(row: Sequence[Any]) -> Layout:
    """A ``SELECT_PARTITION`` row as a :data:`Layout`."""
    collection, dedicated, count, version = row
    return str(collection), bool(dedicated), int(count), int(version)
