"""The in-process vector cache never serves a vector older than the stored one."""

from __future__ import annotations

from pathlib import Path

import pytest

from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.longterm import ChromaMemoryStore


@pytest.mark.parametrize("memories", [3, 300], ids=["shard", "dedicated"])
def test_rewritten_memory_is_ranked_by_its_new_vector(tmp_path: Path, memories: int) -> None:
    embeddings = HashingEmbeddings(dimensions=64)
    store = ChromaMemoryStore.embedded(tmp_path, embeddings=embeddings)
    namespace = ("memories", "alice")
    for i in range(memories - 1):
        store.put(namespace, f"filler{i}", {"text": f"note number {i} about the weather"})
    store.put(namespace, "k", {"text": "likes green tea in the morning"})
    assert store.search(namespace, query="green tea", limit=1)[0].key == "k"  # fills the cache
    store.put(namespace, "k", {"text": "owns a red bicycle for commuting"})

    # Scores mix BM25 and cosine: a stale cached vector would change "k"'s score.
    warm = store.search(namespace, query="red bicycle", limit=3)
    fresh_store = ChromaMemoryStore.embedded(tmp_path, embeddings=embeddings)
    fresh = fresh_store.search(namespace, query="red bicycle", limit=3)
    assert warm[0].key == "k"
    assert [(i.key, round(i.score or 0.0, 6)) for i in warm] == [
        (i.key, round(i.score or 0.0, 6)) for i in fresh
    ]
    store.close()
    fresh_store.close()
