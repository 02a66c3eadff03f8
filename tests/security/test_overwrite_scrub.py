"""An overwritten value (``put`` over an existing key) leaves its old tokens in
FTS5's segments until an ``optimize``; the writer's sweep runs it (per write it
would cost a rewrite of the whole index: ``pipeline/sweep.py``). Issue 18, part 2."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.pipeline.sweep import MemorySweepPolicy, Sweeper


def _catalog_bytes(path: Path) -> bytes:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return b"".join(
        Path(str(path) + s).read_bytes() for s in ("", "-wal") if Path(str(path) + s).exists()
    )


def test_the_sweep_scrubs_an_overwritten_values_old_tokens(tmp_path: Path) -> None:
    import chromadb
    from chromadb.config import Settings

    catalog = tmp_path / "catalog.sqlite3"
    client = chromadb.PersistentClient(
        path=str(tmp_path / "chroma"), settings=Settings(anonymized_telemetry=False)
    )
    store = ChromaMemoryStore(
        client=client, embeddings=HashingEmbeddings(), keyword_index_path=catalog
    )
    try:
        for i in range(30):  # other rows, so the old tokens sit among others' segments
            store.put(("memories", "alice"), f"k{i}", {"text": f"alice note number {i}"})
        store.put(("memories", "alice"), "pet", {"text": "my pet is a CAPYBARA"})
        store.put(("memories", "alice"), "pet", {"text": "my pet is a parrot"})
        assert b"capybara" in _catalog_bytes(catalog)  # the control: FTS5 still holds it
        assert store.get(("memories", "alice"), "pet").value == {"text": "my pet is a parrot"}
        report = Sweeper(store, MemorySweepPolicy()).sweep()
        assert report.keyword_index_scrubbed
        assert b"capybara" not in _catalog_bytes(catalog).lower()
        assert store.search(("memories", "alice"), query="parrot")[0].key == "pet"
        assert len(store.search(("memories", "alice"), query="note", limit=50)) == 31
        off = Sweeper(store, MemorySweepPolicy(scrub_keyword_index=False)).sweep()
        assert not off.keyword_index_scrubbed
    finally:
        store.close()
