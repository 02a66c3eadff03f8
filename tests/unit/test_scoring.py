"""Unit tests of the pure ranking core (langgraph_memory.scoring)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langgraph_memory.config import ScoringWeights
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.scoring import (
    COMPARABLE_MARGIN,
    Candidate,
    boost_scale,
    composite_score,
    cosine_to_score,
    decayed_importance,
    importance_score,
    normalise_bm25,
    rank_candidates,
    recency_score,
)
from langgraph_memory.types import MemoryRecord, MemorySource

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def test_recency_halves_every_half_life_and_clamps_future() -> None:
    assert recency_score(NOW, NOW, 30) == 1.0
    assert recency_score(NOW - timedelta(days=30), NOW, 30) == pytest.approx(0.5)
    assert recency_score(NOW - timedelta(days=90), NOW, 30) == pytest.approx(0.125)
    assert recency_score(NOW + timedelta(days=5), NOW, 30) == 1.0  # clock skew


def test_importance_discounts_agent_guesses_by_confidence() -> None:
    stated = MemoryRecord(text="x", importance=0.8)
    guessed = MemoryRecord(
        text="x", importance=0.8, source=MemorySource.AGENT_INFERRED, confidence=0.5
    )
    assert importance_score(stated) == pytest.approx(0.8)
    assert importance_score(guessed) == pytest.approx(0.4)


def test_bm25_normalisation_and_cosine_clamp() -> None:
    assert normalise_bm25([2.0, 1.0, 0.0]) == [1.0, 0.5, 0.0]
    assert normalise_bm25([0.0, 0.0]) == [0.0, 0.0]
    assert cosine_to_score(-0.3) == 0.0
    assert cosine_to_score(1.2) == 1.0
    assert cosine_to_score(float("nan")) == 0.0


def test_composite_defaults_match_docstring_formula() -> None:
    weights = ScoringWeights()
    parts = composite_score(keyword=1.0, vector=0.8, recency=0.5, importance=0.9, weights=weights)
    assert parts.relevance == pytest.approx(0.9)
    scale = boost_scale(weights)
    assert scale == pytest.approx(0.6 * COMPARABLE_MARGIN / 0.4)
    assert parts.final == pytest.approx(0.6 * 0.9 + (0.2 * 0.5 + 0.2 * 0.9) * scale)


@given(
    rel_hi=st.floats(0.0, 1.0),
    gap=st.floats(COMPARABLE_MARGIN + 1e-6, 1.0),
    rec_lo=st.floats(0.0, 1.0),
    imp_lo=st.floats(0.0, 1.0),
    rec_hi=st.floats(0.0, 1.0),
    imp_hi=st.floats(0.0, 1.0),
    a=st.floats(0.05, 1.0),
    b=st.floats(0.0, 1.0),
    c=st.floats(0.0, 1.0),
)
def test_boosts_never_overturn_a_clear_relevance_gap(
    rel_hi: float,
    gap: float,
    rec_lo: float,
    imp_lo: float,
    rec_hi: float,
    imp_hi: float,
    a: float,
    b: float,
    c: float,
) -> None:
    """Whatever the weights, a memory more relevant by > margin stays ahead."""
    rel_lo = rel_hi - gap
    if rel_lo < 0:
        return
    weights = ScoringWeights(relevance=a, recency=b, importance=c, keyword_share=0.0)
    hi = composite_score(
        keyword=0.0, vector=rel_hi, recency=rec_hi, importance=imp_hi, weights=weights
    )
    lo = composite_score(
        keyword=0.0, vector=rel_lo, recency=rec_lo, importance=imp_lo, weights=weights
    )
    assert hi.final > lo.final


def _candidate(ref: str, *, cosine: float, age_days: float, importance: float) -> Candidate:
    return Candidate(
        ref=ref,
        cosine=cosine,
        last_active_ts=(NOW - timedelta(days=age_days)).timestamp(),
        importance=importance,
        tie=ref,
    )


def test_recency_and_importance_reorder_only_comparably_relevant_memories() -> None:
    weights = ScoringWeights(keyword_share=0.0)
    clearly_relevant_old = _candidate("old-relevant", cosine=0.80, age_days=400, importance=0.1)
    fresh_important_weaker = _candidate("fresh-weaker", cosine=0.60, age_days=0, importance=1.0)
    near_tie_old = _candidate("near-old", cosine=0.55, age_days=300, importance=0.2)
    near_tie_fresh = _candidate("near-fresh", cosine=0.53, age_days=1, importance=0.9)
    ranked = rank_candidates(
        [fresh_important_weaker, near_tie_old, clearly_relevant_old, near_tie_fresh],
        weights=weights,
        now=NOW,
    )
    order = [c.ref for c, _ in ranked]
    # 0.80 vs 0.60 is a clear gap: relevance wins despite age and low importance.
    assert order[0] == "old-relevant"
    # 0.55 vs 0.53 is comparable: the fresh, important one goes first.
    assert order.index("near-fresh") < order.index("near-old")


def test_plain_cosine_would_rank_differently_than_composite_within_margin() -> None:
    """Guards the test above: without boosts the near-tie order is the opposite."""
    no_boost = ScoringWeights(recency=0.0, importance=0.0, keyword_share=0.0)
    ranked = rank_candidates(
        [
            _candidate("near-old", cosine=0.55, age_days=300, importance=0.2),
            _candidate("near-fresh", cosine=0.53, age_days=1, importance=0.9),
        ],
        weights=no_boost,
        now=NOW,
    )
    assert [c.ref for c, _ in ranked] == ["near-old", "near-fresh"]


def test_min_relevance_gate_drops_before_boosts_can_rescue() -> None:
    weights = ScoringWeights(keyword_share=0.0, min_relevance=0.3)
    ranked = rank_candidates(
        [
            _candidate("weak-but-fresh", cosine=0.2, age_days=0, importance=1.0),
            _candidate("relevant", cosine=0.5, age_days=100, importance=0.0),
        ],
        weights=weights,
        now=NOW,
    )
    assert [c.ref for c, _ in ranked] == ["relevant"]
    loose = rank_candidates(
        [_candidate("weak-but-fresh", cosine=0.2, age_days=0, importance=1.0)],
        weights=weights,
        now=NOW,
        min_relevance=0.1,
    )
    assert [c.ref for c, _ in loose] == ["weak-but-fresh"]


def test_keyword_only_candidate_gets_zero_vector_score_and_fusion_mixes() -> None:
    weights = ScoringWeights(keyword_share=0.5, min_relevance=0.0)
    ranked = rank_candidates(
        [
            Candidate(ref="kw", bm25=4.0, cosine=None, last_active_ts=NOW.timestamp(), tie="kw"),
            Candidate(ref="both", bm25=2.0, cosine=0.9, last_active_ts=NOW.timestamp(), tie="b"),
        ],
        weights=weights,
        now=NOW,
    )
    parts = {c.ref: p for c, p in ranked}
    assert parts["kw"].keyword == 1.0 and parts["kw"].vector == 0.0
    assert parts["both"].keyword == 0.5 and parts["both"].vector == pytest.approx(0.9)
    assert parts["both"].relevance == pytest.approx(0.7)
    assert [c.ref for c, _ in ranked] == ["both", "kw"]


def test_ties_break_deterministically_on_id() -> None:
    weights = ScoringWeights(keyword_share=0.0)
    same = {"cosine": 0.5, "age_days": 1.0, "importance": 0.5}
    ranked = rank_candidates(
        [_candidate("b", **same), _candidate("a", **same)], weights=weights, now=NOW
    )
    assert [c.ref for c, _ in ranked] == ["a", "b"]


def test_pure_recency_weights_still_order_by_recency() -> None:
    weights = ScoringWeights(relevance=0.0, recency=1.0, importance=0.0, keyword_share=0.0)
    assert boost_scale(weights) == 1.0
    ranked = rank_candidates(
        [
            _candidate("old", cosine=0.9, age_days=50, importance=0.5),
            _candidate("new", cosine=0.5, age_days=0, importance=0.5),
        ],
        weights=weights,
        now=NOW,
    )
    assert [c.ref for c, _ in ranked] == ["new", "old"]


def test_decayed_importance_uses_last_access() -> None:
    record = MemoryRecord(
        text="x",
        importance=0.8,
        updated_at=NOW - timedelta(days=60),
        last_accessed_at=NOW - timedelta(days=30),
    )
    assert decayed_importance(record, NOW, 30) == pytest.approx(0.4)


def test_bad_weights_are_rejected_with_the_value() -> None:
    with pytest.raises(ConfigurationError, match=r"1\.5"):
        ScoringWeights(relevance=1.5)
