"""``recall_memories``: one pass that answers a recall turn's two searches.

It must return exactly what the two separate ``search_memories`` calls return
(the recall node used to make them), in every partition layout: shard tier,
dedicated with the vector cache, dedicated without it, keyword-only; and the
per-query term plan must never hide a memory written a moment ago.
"""

from __future__ import annotations

import asyncio
import random
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from langgraph_memory.config import ScoringWeights
from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.longterm import retrieval as retrieval_module
from langgraph_memory.nodes import create_recall_node
from langgraph_memory.types import MemoryRecord, MemoryType, ScoredMemory

USER = "alice"
NOW = datetime.now(UTC)  # one clock for both paths: recency must not differ
PINNED = ScoringWeights(relevance=0.2, recency=0.2, importance=0.6, min_relevance=0.0)
TOPICS = ["hotel", "flight", "budget", "museum", "train", "tea", "seafood", "visa"]
QUERIES = [
    "which hotel near the lake fits the budget",
    "train or flight to Hangzhou",
    "seafood allergy at dinner",
    "green tea in the morning",
    "visa paperwork for the museum trip",
    "something unrelated entirely",
]


def _seed(store: ChromaMemoryStore, n: int) -> None:
    rng = random.Random(5)
    for i in range(n):
        a, b = rng.sample(TOPICS, 2)
        # Filler of a different length per memory: BM25 scores rarely tie, so the
        # candidate cut-offs of both paths are comparable row for row.
        filler = " ".join(f"f{i}w{j}" for j in range(i % 53))
        store.put_memory(
            MemoryRecord(
                text=f"note {i}: the {a} and the {b} option {i % 7} {filler}",
                type=MemoryType.PROCEDURAL
                if i % 9 == 0
                else (MemoryType.EPISODIC if i % 4 == 0 else MemoryType.SEMANTIC),
                importance=(i % 10) / 10,
                user_id=USER,
            )
        )


def _ids(found: list[ScoredMemory]) -> list[tuple[str, float]]:
    return [(m.record.id, round(m.score, 9)) for m in found]


LAYOUTS = {
    "shard": (60, {}),
    "dedicated-cached": (400, {}),
    "dedicated-uncached": (400, {"vector_cache_bytes": 0}),
    "keyword-only": (400, {"embeddings": None}),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_one_pass_equals_the_two_searches(tmp_path: Path, layout: str) -> None:
    n, options = LAYOUTS[layout]
    kwargs: dict[str, Any] = {"embeddings": HashingEmbeddings(dimensions=64), **options}
    store = ChromaMemoryStore.embedded(tmp_path, **kwargs)
    _seed(store, n)
    if store.embeddings is not None:
        dedicated = store.catalog.query("SELECT dedicated FROM lt_partitions")[0][0]
        assert bool(dedicated) == (n > store.dedicated_threshold)
    for query in QUERIES:
        got = store.recall_memories(
            USER,
            query,
            limit=5,
            pinned_types=[MemoryType.PROCEDURAL],
            pinned_limit=3,
            pinned_weights=PINNED,
            now=NOW,
        )
        found = store.search_memories(USER, query, limit=5, now=NOW)
        pinned = store.search_memories(
            USER,
            query,
            limit=3,
            types=[MemoryType.PROCEDURAL],
            weights=PINNED,
            min_relevance=0.0,
            now=NOW,
        )
        assert _ids(got.found) == _ids(found), query
        assert _ids(got.pinned) == _ids(pinned), query
        assert all(m.record.type == MemoryType.PROCEDURAL for m in got.pinned)
        if query != QUERIES[-1]:
            assert got.found and got.pinned
        async_got = asyncio.run(
            store.arecall_memories(
                USER,
                query,
                limit=5,
                pinned_types=[MemoryType.PROCEDURAL],
                pinned_limit=3,
                pinned_weights=PINNED,
                now=NOW,
            )
        )
        assert _ids(async_got.found) == _ids(found)
        assert _ids(async_got.pinned) == _ids(pinned)
    store.close()


def test_cosines_on_the_worker_give_the_same_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Large cached partitions compute the turn's cosines (and top rows) on a worker
    while the keyword pass runs: found, pinned and profile must equal the serial path."""
    store = ChromaMemoryStore.embedded(tmp_path, embeddings=HashingEmbeddings(dimensions=64))
    _seed(store, 400)
    threads: list[str] = []
    score = store._score_cached

    def spy(plan: Any, ids: Any, matrix: Any) -> None:
        threads.append(threading.current_thread().name)
        score(plan, ids, matrix)

    monkeypatch.setattr(store, "_score_cached", spy)
    kwargs: dict[str, Any] = {
        "limit": 5,
        "pinned_types": [MemoryType.PROCEDURAL],
        "pinned_limit": 3,
        "pinned_weights": PINNED,
        "profile_limit": 8,
        "now": NOW,
    }

    def answers(parallel_from: int) -> list[Any]:
        monkeypatch.setattr(retrieval_module, "PARALLEL_COSINE_MIN_VECTORS", parallel_from)
        out = []
        for query in QUERIES:
            got = store.recall_memories(USER, query, **kwargs)
            again = asyncio.run(store.arecall_memories(USER, query, **kwargs))
            for one in (got, again):
                out.append((_ids(one.found), _ids(one.pinned), [r.id for r in one.profile]))
        return out

    serial = answers(10**9)
    assert threads and not any(t.startswith("lgm-cosine") for t in threads)
    threads.clear()
    assert answers(1) == serial
    # The worker computed them on every call with keyword terms (the last query has
    # none: no keyword SQL to overlap, computed on first use).
    assert sum(t.startswith("lgm-cosine") for t in threads) == 2 * (len(QUERIES) - 1)
    assert len(threads) == 2 * len(QUERIES)
    store.close()


def test_many_pinned_rows_fall_back_to_separate_keyword_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ChromaMemoryStore.embedded(tmp_path, embeddings=HashingEmbeddings(dimensions=64))
    _seed(store, 400)
    monkeypatch.setattr(retrieval_module, "MAX_SHARED_PINNED_ROWS", 3)
    for query in QUERIES[:3]:
        got = store.recall_memories(
            USER,
            query,
            pinned_types=[MemoryType.PROCEDURAL],
            pinned_limit=3,
            pinned_weights=PINNED,
            now=NOW,
        )
        pinned = store.search_memories(
            USER,
            query,
            limit=3,
            types=[MemoryType.PROCEDURAL],
            weights=PINNED,
            min_relevance=0.0,
            now=NOW,
        )
        assert _ids(got.found) == _ids(store.search_memories(USER, query, now=NOW))
        assert _ids(got.pinned) == _ids(pinned)
    store.close()


def test_superseded_keyword_winners_do_not_shrink_the_results(tmp_path: Path) -> None:
    """Rank-first keyword search filters after ranking: when most top matches are
    no longer current it must fall back, not return fewer results."""
    store = ChromaMemoryStore.embedded(tmp_path, embeddings=None)
    for i in range(150):
        store.put_memory(MemoryRecord(text=f"filler memory number {i} about weather", user_id=USER))
    old = [
        store.put_memory(MemoryRecord(text=f"kiwi kiwi kiwi fruit {i}", user_id=USER))
        for i in range(70)
    ]
    for i, record in enumerate(old):
        store.supersede(USER, record.id, MemoryRecord(text=f"plain note {i}", user_id=USER))
    current = [
        store.put_memory(MemoryRecord(text=f"kiwi once in a long sentence {i} here", user_id=USER))
        for i in range(8)
    ]
    found = store.search_memories(USER, "kiwi", limit=5)
    assert len(found) == 5
    assert {m.record.id for m in found} <= {r.id for r in current}
    store.close()


def test_term_plan_never_hides_a_new_memory(tmp_path: Path) -> None:
    """Terms no memory contains are left out of the FTS5 query; the document
    counts behind that are cached only until the file changes, by this store or
    by another process."""
    store = ChromaMemoryStore.embedded(tmp_path, embeddings=None)
    for i in range(120):  # above the size where term planning starts
        store.put_memory(MemoryRecord(text=f"memory {i} about the weather", user_id=USER))
    assert store.search_memories(USER, "zebra crossing") == []
    store.put_memory(MemoryRecord(text="saw a zebra at the zoo", user_id=USER))
    assert [m.record.text for m in store.search_memories(USER, "zebra crossing")] == [
        "saw a zebra at the zoo"
    ]
    assert store.search_memories(USER, "giraffe") == []
    other = ChromaMemoryStore.embedded(tmp_path, embeddings=None)  # another connection
    other.put_memory(MemoryRecord(text="a giraffe ate the leaves", user_id=USER))
    other.close()
    assert [m.record.text for m in store.search_memories(USER, "giraffe")] == [
        "a giraffe ate the leaves"
    ]
    store.close()


class _Counting(ChromaMemoryStore):
    calls: list[str]

    def search_memories(self, *args: Any, **kwargs: Any) -> list[ScoredMemory]:
        self.calls.append("search_memories")
        return super().search_memories(*args, **kwargs)

    def recall_memories(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append("recall_memories")
        return super().recall_memories(*args, **kwargs)


class _TwoSearches:
    """The same store seen through the plain ``LongTermMemory`` protocol (no
    ``recall_memories``): the node then makes its two separate searches."""

    def __init__(self, real: ChromaMemoryStore) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        if name in ("recall_memories", "arecall_memories"):
            raise AttributeError(name)
        return getattr(self._real, name)


def test_recall_node_makes_one_store_call_and_sees_the_same_memories(tmp_path: Path) -> None:
    store = _Counting.embedded(tmp_path, embeddings=HashingEmbeddings(dimensions=64))
    store.calls = []
    _seed(store, 400)
    one_pass = create_recall_node(store=store, update_access_stats=False)
    two_searches = create_recall_node(store=_TwoSearches(store), update_access_stats=False)
    config = {"configurable": {"user_id": USER}}
    for query in QUERIES:
        state = {"messages": [HumanMessage(query, id="h")]}
        store.calls.clear()
        got = one_pass.invoke(state, config)
        assert store.calls == ["recall_memories"]
        store.calls.clear()
        expected = two_searches.invoke(state, config)
        assert sorted(store.calls) == ["search_memories", "search_memories"]
        assert got["messages"][0].content == expected["messages"][0].content
        assert asyncio.run(one_pass.ainvoke(state, config)) == got
    store.close()
