"""A keyword index written before migration 0002 (one global term list per word) still works.

Migration 0002 moves the FTS5 index to per-partition terms. The file is built by
the current store, then turned back into the 0001 layout by hand (bodies
unscoped, the partition token column back), and reopened.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.longterm.rows import partition_token, term_scope
from langgraph_memory.longterm.store import KEYWORD_INDEX_FILENAME
from langgraph_memory.types import MemoryRecord


def _downgrade_to_0001(path: Path) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(
        "CREATE VIRTUAL TABLE lt_fts USING fts5(part, body, tokenize = 'unicode61 remove_diacritics 0')"
    )
    rows = conn.execute(
        "SELECT k.rowid, i.partition, k.body FROM lt_keywords k JOIN lt_items i ON i.rowid = k.rowid"
    ).fetchall()
    for rowid, partition, body in rows:
        scope = term_scope(partition)
        plain = " ".join(token.removeprefix(scope) for token in body.split())
        assert scope not in plain
        conn.execute(
            "INSERT INTO lt_fts (rowid, part, body) VALUES (?, ?, ?)",
            (rowid, partition_token(partition), plain),
        )
    conn.execute("DROP TABLE lt_keywords")
    conn.execute("DELETE FROM lt_migrations WHERE name = '0002_partition_scoped_terms'")
    conn.close()


def test_pre_0002_keyword_index_is_migrated_and_stays_partitioned(tmp_path: Path) -> None:
    store = ChromaMemoryStore.embedded(tmp_path, embeddings=None)
    store.put_memory(MemoryRecord(text="Alice is allergic to seafood", user_id="alice"))
    store.put_memory(MemoryRecord(text="Alice drinks green tea", user_id="alice"))
    store.put_memory(MemoryRecord(text="Bob is allergic to seafood too", user_id="bob"))
    store.close()
    index = tmp_path / KEYWORD_INDEX_FILENAME
    _downgrade_to_0001(index)

    reopened = ChromaMemoryStore.embedded(tmp_path, embeddings=None)
    try:
        found = reopened.search_memories("alice", "seafood allergy")
        assert [m.record.text for m in found] == ["Alice is allergic to seafood"]
        assert [m.record.text for m in reopened.search_memories("bob", "seafood")] == [
            "Bob is allergic to seafood too"
        ]
        # New writes land in the migrated index beside the rewritten rows.
        reopened.put_memory(MemoryRecord(text="Alice likes oolong tea", user_id="alice"))
        texts = {m.record.text for m in reopened.search_memories("alice", "tea", limit=5)}
        assert texts == {"Alice drinks green tea", "Alice likes oolong tea"}
    finally:
        reopened.close()
    conn = sqlite3.connect(index)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    applied = {r[0] for r in conn.execute("SELECT name FROM lt_migrations")}
    conn.close()
    assert "lt_fts" not in tables and "lt_keywords" in tables
    assert "0002_partition_scoped_terms" in applied
