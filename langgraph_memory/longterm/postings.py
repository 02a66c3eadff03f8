"""In-process keyword postings of the Postgres catalog's partitions, and BM25 over them.

The shared catalog's keyword statement cost ~1 ms of server time and ~0.5 ms of
the caller's per search (a few thousand postings aggregated in SQL), on top of
the round trip. An instance instead keeps the postings of the terms its
searches asked for, per partition, and ranks in numpy (~0.1 ms for 2,000
postings). A copy is valid while the partition's keyword version in the
catalog (``lt_keyword_versions``, moved by triggers on every keyword row and
item change, whichever instance wrote) is the one it was read with: every
search reads that version in its first statement, and the postings come in
the same statement (one snapshot), so a copy never mixes two states.

Scores are FTS5's (``_sql_postgres.py``'s formula and constants): document
frequencies are the copied postings' lengths, N and the average length the
index's totals read by the same statement.

Example:
    >>> cache = KeywordPostings(max_bytes=1 << 20)
    >>> entry = cache.merge("alice", 7, 3, {"ut": [[1, 2], [1, 2], [4, 6]]}, ["ut", "ux"])
    >>> sorted(entry.terms), entry.doc_freq(["ut", "ux"])
    (['ut', 'ux'], {'ut': 2, 'ux': 0})
    >>> [(rowid, round(score, 4)) for rowid, score in bm25_top(entry, ["ut"], 10, 40, 5)[0]]
    [(2, 1.4752), (1, 1.2238)]
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from langgraph_memory.longterm._sql_postgres import BM25_B, BM25_K1

# (rowids int64, term frequencies int32, document lengths int32) of one term.
Postings = tuple[np.ndarray, np.ndarray, np.ndarray]
_NONE: Postings = (
    np.empty(0, np.int64),
    np.empty(0, np.int32),
    np.empty(0, np.int32),
)
# Bookkeeping per cached term beyond its arrays' bytes (dict slot, tuple, 3 headers).
_TERM_OVERHEAD_BYTES = 400
DEFAULT_KEYWORD_CACHE_BYTES = 64 * 1024 * 1024
# Up to this many postings a query is ranked in plain Python (see _bm25_top_small).
SMALL_POSTINGS = 100  # numpy wins past ~150 (73 vs 110 us at 100)


@dataclass(slots=True)
class PartitionPostings:
    """One partition's copied postings at one keyword version."""

    version: int
    items: int  # the partition's item count (term pruning, ``catalog.choose_terms``)
    terms: dict[str, Postings] = field(default_factory=dict)
    nbytes: int = 0

    def add(self, term: str, postings: Postings) -> int:
        """Adds a term's postings; returns the bytes it added (0 if it was there)."""
        if term in self.terms:
            return 0
        self.terms[term] = postings
        size = _TERM_OVERHEAD_BYTES + sum(int(a.nbytes) for a in postings)
        self.nbytes += size
        return size

    def doc_freq(self, terms: Sequence[str]) -> dict[str, int]:
        return {t: len(self.terms[t][0]) for t in terms}


def parse_postings(raw: Sequence[Sequence[int]]) -> Postings:
    """``[[rowid...], [tf...], [doc_len...]]`` (``SELECT_PLAN``'s JSON) as arrays."""
    rowids, tfs, lens = raw
    return (np.asarray(rowids, np.int64), np.asarray(tfs, np.int32), np.asarray(lens, np.int32))


def bm25_top(
    entry: PartitionPostings, terms: Sequence[str], docs: int, tokens: int, limit: int
) -> tuple[list[tuple[int, float]], int]:
    """The ``limit`` best ``(rowid, score)`` by FTS5's BM25 over ``terms``, ties to
    the lower rowid (as ``KEYWORD_RANK_THEN_FILTER_TEMPLATE`` orders them), and
    how many rows matched at all."""
    parts = [entry.terms[t] for t in terms]
    lengths = np.fromiter((len(p[0]) for p in parts), np.int64, len(parts))
    total = int(lengths.sum())
    if not total:
        return [], 0
    n = float(max(docs, 1))
    avg_len = float(max(tokens, 1)) / n
    if total <= SMALL_POSTINGS:
        return _bm25_top_small(parts, n, avg_len, limit)
    df = lengths.astype(np.float64)
    idf = np.maximum(np.log((n - df + 0.5) / (df + 0.5)), 1e-6)
    rowids = np.concatenate([p[0] for p in parts])
    tf = np.concatenate([p[1] for p in parts]).astype(np.float64)
    doc_len = np.concatenate([p[2] for p in parts]).astype(np.float64)
    weights = (
        np.repeat(idf, lengths)
        * tf
        * (BM25_K1 + 1)
        / (tf + BM25_K1 * (1 - BM25_B + BM25_B * doc_len / avg_len))
    )
    hits, at = np.unique(rowids, return_inverse=True)
    scores = np.bincount(at, weights=weights)
    order = np.lexsort((hits, -scores))[:limit]
    return [(int(hits[i]), float(scores[i])) for i in order], len(hits)


def _bm25_top_small(
    parts: Sequence[Postings], n: float, avg_len: float, limit: int
) -> tuple[list[tuple[int, float]], int]:
    """:func:`bm25_top` in plain Python, the same arithmetic in the same order: for a
    few dozen postings numpy's per-call overhead (~100 us) is most of the cost."""
    scores: dict[int, float] = {}
    for rowids, tfs, lens in parts:
        if not len(rowids):
            continue
        df = float(len(rowids))
        idf = max(math.log((n - df + 0.5) / (df + 0.5)), 1e-6)
        for rowid, tf, doc_len in zip(rowids.tolist(), tfs.tolist(), lens.tolist(), strict=True):
            weight = (
                idf
                * tf
                * (BM25_K1 + 1)
                / (tf + BM25_K1 * (1 - BM25_B + BM25_B * doc_len / avg_len))
            )
            scores[rowid] = scores.get(rowid, 0.0) + weight
    ranked = sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
    return ranked[:limit], len(scores)


class KeywordPostings:
    """Partitions' copied postings, least recently used evicted past ``max_bytes``."""

    def __init__(self, max_bytes: int = DEFAULT_KEYWORD_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, PartitionPostings] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, partition: str) -> PartitionPostings | None:
        with self._lock:
            entry = self._entries.get(partition)
            if entry is not None:
                self._entries.move_to_end(partition)
            return entry

    def merge(
        self,
        partition: str,
        version: int | None,
        items: int | None,
        found: Mapping[str, Any] | None,
        asked: Sequence[str],
    ) -> PartitionPostings | None:
        """What a ``SELECT_PLAN`` read for ``asked`` (terms absent from ``found``
        have no postings), added to the copy at ``version`` or replacing an older
        one. Returns the partition's postings covering ``asked``, or ``None`` when
        they cannot be (the copy this read extends was replaced meanwhile: read
        every term again). ``version`` None (no items): nothing is kept."""
        fetched = {t: parse_postings(found[t]) if found and t in found else _NONE for t in asked}
        with self._lock:
            entry = self._entries.get(partition)
            if version is None or (entry is not None and entry.version > version):
                if version is None and entry is not None:
                    self._drop(partition)
                return None if items is None else _fresh(version or 0, items, fetched)
            if entry is not None and entry.version == version:
                for term, postings in fetched.items():
                    self._bytes += entry.add(term, postings)
                self._entries.move_to_end(partition)
                self._evict()
                return entry
            if items is None:  # extends a copy that is gone: the caller reads again
                return None
            if entry is not None:
                self._drop(partition)
            entry = _fresh(version, items, fetched)
            if self.max_bytes > 0 and entry.nbytes <= self.max_bytes:
                self._entries[partition] = entry
                self._bytes += entry.nbytes
                self._evict()
            return entry

    def _drop(self, partition: str) -> None:
        self._bytes -= self._entries.pop(partition).nbytes

    def _evict(self) -> None:
        while self._bytes > self.max_bytes and self._entries:
            _, entry = self._entries.popitem(last=False)
            self._bytes -= entry.nbytes


def _fresh(version: int, items: int, fetched: Mapping[str, Postings]) -> PartitionPostings:
    entry = PartitionPostings(version, items)
    for term, postings in fetched.items():
        entry.add(term, postings)
    return entry
