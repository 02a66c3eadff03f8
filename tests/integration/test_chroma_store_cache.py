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


def _cached_vectors(store: ChromaMemoryStore, partition: str) -> dict[str, list[float]]:
    """The cache's current entry for ``partition``, as ``{item_id: vector}`` (rounded)."""
    layout = store.catalog.query(store.catalog.sql.SELECT_PARTITION, (partition,))[0]
    entry = store.vector_cache.get(partition, int(layout[3]))
    assert entry is not None, "the partition is not cached at its current version"
    ids, matrix = entry
    return {i: [round(float(x), 5) for x in row] for i, row in zip(ids, matrix, strict=True)}


class _CountingLoads:
    """Counts the store's vector loads from Chroma (the cache's reload path)."""

    def __init__(self, store: ChromaMemoryStore) -> None:
        self.calls = 0
        self._real = store.vectors.vectors_by_id
        store.vectors.vectors_by_id = self  # type: ignore[method-assign]

    def __call__(self, *args: object, **kwargs: object) -> object:
        self.calls += 1
        return self._real(*args, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("memories", [3, 300], ids=["shard", "dedicated"])
def test_own_writes_carry_the_cache_forward_without_a_reload(tmp_path: Path, memories: int) -> None:
    """A put, an overwrite and a delete by this store move its cached partition to
    the new version in place: no reload from Chroma, and the cached vectors are
    exactly what a fresh store loads from disk."""
    embeddings = HashingEmbeddings(dimensions=64)
    store = ChromaMemoryStore.embedded(tmp_path, embeddings=embeddings)
    namespace = ("memories", "alice")
    for i in range(memories):
        store.put(namespace, f"filler{i}", {"text": f"note number {i} about the weather"})
    store.search(namespace, query="weather", limit=1)  # fills the cache
    loads = _CountingLoads(store)

    store.put(namespace, "new", {"text": "owns a red bicycle for commuting"})
    store.put(namespace, "filler0", {"text": "drinks green tea every morning"})
    store.delete(namespace, f"filler{memories - 1}")
    loads.calls = 0  # the delete's erasure rebuild reads vectors too; only the search counts
    warm = store.search(namespace, query="red bicycle green tea", limit=5)

    assert loads.calls == 0, "an own write made the next search reload from Chroma"
    fresh_store = ChromaMemoryStore.embedded(tmp_path, embeddings=embeddings)
    fresh = fresh_store.search(namespace, query="red bicycle green tea", limit=5)
    assert [(i.key, round(i.score or 0.0, 6)) for i in warm] == [
        (i.key, round(i.score or 0.0, 6)) for i in fresh
    ]
    assert _cached_vectors(store, "alice") == _cached_vectors(fresh_store, "alice")
    store.close()
    fresh_store.close()


def test_a_rolled_back_write_leaves_the_cache_at_the_committed_state(tmp_path: Path) -> None:
    """A write whose transaction rolls back never reaches the cache: the next
    search still ranks the committed vectors (no ghost of the failed put)."""
    embeddings = HashingEmbeddings(dimensions=64)
    store = ChromaMemoryStore.embedded(tmp_path, embeddings=embeddings)
    namespace = ("memories", "alice")
    for i in range(300):
        store.put(namespace, f"filler{i}", {"text": f"note number {i} about the weather"})
    store.search(namespace, query="weather", limit=1)
    before = _cached_vectors(store, "alice")

    with pytest.raises(RuntimeError, match="after the vectors"), store.catalog.transaction():
        store.put(namespace, "ghost", {"text": "a ghost memory that never committed"})
        raise RuntimeError("fails after the vectors were written")

    assert _cached_vectors(store, "alice") == before
    found = store.search(namespace, query="ghost memory never committed", limit=3)
    assert "ghost" not in [i.key for i in found]
    store.close()
