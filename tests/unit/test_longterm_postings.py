"""The Postgres catalog's in-process postings: FTS5's BM25, versions, eviction (no service)."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest

from langgraph_memory.longterm import postings
from langgraph_memory.longterm.postings import KeywordPostings, bm25_top


def _reference_bm25(
    rows: dict[int, dict[str, int]], lengths: dict[int, int], terms: list[str], n: int, tokens: int
) -> dict[int, float]:
    """FTS5's formula written out per row and term (what the SQL statement computes)."""
    avg = tokens / n
    out: dict[int, float] = {}
    for term in terms:
        df = sum(1 for tf in rows.values() if term in tf)
        idf = max(math.log((n - df + 0.5) / (df + 0.5)), 1e-6)
        for rowid, tf in rows.items():
            if term in tf:
                f = tf[term]
                part = idf * f * 2.2 / (f + 1.2 * (1 - 0.75 + 0.75 * lengths[rowid] / avg))
                out[rowid] = out.get(rowid, 0.0) + part
    return out


def test_docstring_example_runs() -> None:
    result = doctest.testmod(postings)
    assert result.attempted > 0 and result.failed == 0


def test_scores_and_order_are_fts5s_with_ties_to_the_older_row() -> None:
    rows = {
        3: {"a": 1, "b": 2},
        5: {"a": 1},
        9: {"b": 1, "c": 3},
        11: {"a": 1},  # ties with row 5: same terms, same length
        12: {"c": 1},
    }
    lengths = {3: 5, 5: 4, 9: 7, 11: 4, 12: 2}
    found = {
        term: [
            [r for r in rows if term in rows[r]],
            [rows[r][term] for r in rows if term in rows[r]],
            [lengths[r] for r in rows if term in rows[r]],
        ]
        for term in ("a", "b", "c")
    }
    entry = KeywordPostings().merge("p", 1, len(rows), found, ["a", "b", "c", "zz"])
    assert entry is not None
    expected = _reference_bm25(rows, lengths, ["a", "b", "zz"], n=40, tokens=200)
    ranked, matched = bm25_top(entry, ["a", "b", "zz"], 40, 200, 10)
    assert matched == 4
    for rowid, score in ranked:
        assert math.isclose(score, expected[rowid], rel_tol=1e-12)
    assert [r for r, _ in ranked] == sorted(expected, key=lambda r: (-expected[r], r))
    assert [r for r, _ in ranked].index(5) + 1 == [r for r, _ in ranked].index(11)
    top, matched = bm25_top(entry, ["a", "b", "zz"], 40, 200, 2)
    assert top == ranked[:2] and matched == 4
    assert bm25_top(entry, ["zz"], 40, 200, 5) == ([], 0)


def test_a_copy_is_extended_at_its_version_replaced_by_a_newer_one_never_an_older() -> None:
    cache = KeywordPostings()
    one = {"a": [[1], [1], [3]]}
    first = cache.merge("p", 5, 10, one, ["a"])
    assert first is not None and cache.get("p") is first
    # Same version, more terms: extended (items not re-read: None).
    extended = cache.merge("p", 5, None, {"b": [[2], [1], [4]]}, ["b"])
    assert extended is first and set(first.terms) == {"a", "b"}
    # A newer version replaces the copy, with every term read again.
    newer = cache.merge("p", 8, 11, {"a": [[1, 7], [1, 1], [3, 2]]}, ["a"])
    assert newer is not None and cache.get("p") is newer and newer.doc_freq(["a"]) == {"a": 2}
    # An older read (a statement that ran before the newer commit) never replaces it.
    older = cache.merge("p", 5, 10, one, ["a"])
    assert older is not None and older is not newer and cache.get("p") is newer
    # Extending a copy that was replaced meanwhile: the caller must read again.
    assert cache.merge("p", 5, None, {"b": [[2], [1], [4]]}, ["b"]) is None
    # No version (the partition lost its last item): the copy is dropped.
    gone = cache.merge("p", None, 0, None, ["a"])
    assert gone is not None and gone.doc_freq(["a"]) == {"a": 0} and cache.get("p") is None


def test_least_recently_used_partitions_leave_past_the_bound_and_zero_keeps_nothing() -> None:
    found = {"t": [list(range(100)), [1] * 100, [5] * 100]}
    size = KeywordPostings().merge("x", 1, 100, found, ["t"]).nbytes  # type: ignore[union-attr]
    cache = KeywordPostings(max_bytes=2 * size)
    for name in ("a", "b", "c"):
        assert cache.merge(name, 1, 100, found, ["t"]) is not None
        cache.get("a")  # "a" stays the most recently used
    assert cache.get("a") is not None and cache.get("b") is None and cache.get("c") is not None
    off = KeywordPostings(max_bytes=0)
    assert off.merge("a", 1, 100, found, ["t"]) is not None and off.get("a") is None


def test_the_plain_python_path_for_few_postings_ranks_as_numpy_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(3)
    found = {}
    for i in range(6):
        rowids = sorted(rng.choice(500, 12, replace=False).tolist())
        found[f"t{i}"] = [rowids, rng.integers(1, 4, 12).tolist(), rng.integers(2, 9, 12).tolist()]
    entry = KeywordPostings().merge("p", 1, 500, found, list(found))
    assert entry is not None
    small = bm25_top(entry, list(found), 900, 5000, 30)
    monkeypatch.setattr(postings, "SMALL_POSTINGS", 0)
    assert bm25_top(entry, list(found), 900, 5000, 30) == small
    assert len(small[0]) == 30 and small[1] > 30
