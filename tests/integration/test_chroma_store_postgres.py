"""The Postgres catalog gives the embedded catalog's answers: same BM25, same top-k.

Each test builds the same data in an embedded store (SQLite FTS5 catalog) and
in a store whose catalog is a fresh Postgres database (vectors in an embedded
Chroma directory here; the multi-instance tests use a ``chroma run`` server).
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chromadb
import pytest
from chromadb.config import Settings
from langgraph.store.base import PutOp

from langgraph_memory.config import ScoringWeights
from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.errors import ConfigurationError, InvalidFilterError
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.longterm.catalog_postgres import PostgresCatalog
from langgraph_memory.longterm.rows import term_scope
from langgraph_memory.types import MemoryRecord, MemoryType
from tests.conftest import IN_CI, PG_ADMIN_DSN, _dsn_for, postgres_reachable
from tests.integration.test_retrieval_quality import MEMORIES, QUERIES, USER

OTHER_USERS = {
    "bob": ["Bob is allergic to seafood", "鲍勃喜欢喝绿茶", "Bob flies to Tokyo on Friday"],
    "carol": ["Carol's seat is 14C", "卡罗尔对花生过敏", "Carol prefers window seats"],
}


def _fresh_database() -> Iterator[str]:
    reason = postgres_reachable()
    if reason is not None:
        if IN_CI:
            pytest.fail(f"PostgreSQL at {PG_ADMIN_DSN} is unreachable ({reason})")
        pytest.skip(f"PostgreSQL at {PG_ADMIN_DSN} is unreachable ({reason})")
    import psycopg

    name = f"lgm_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _dsn_for(name)
    finally:
        with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _pg_store(dsn: str, embeddings: HashingEmbeddings | None) -> ChromaMemoryStore:
    client = chromadb.PersistentClient(
        path=tempfile.mkdtemp(prefix="lgm-pg-vectors-"),
        settings=Settings(anonymized_telemetry=False),
    )
    return ChromaMemoryStore(client=client, catalog=dsn, embeddings=embeddings)


def _fill(store: ChromaMemoryStore) -> None:
    """One batch (one Chroma call per collection): embedded Chroma costs ~70 ms per
    upsert on the shared CI box, so 306 single puts took 45 s per store."""
    records = [MemoryRecord(text=text, user_id=USER, id=memory_id) for memory_id, text in MEMORIES]
    for user, texts in OTHER_USERS.items():
        records += [
            MemoryRecord(text=t, user_id=user, id=f"{user}-{i}") for i, t in enumerate(texts)
        ]
    store.batch(PutOp(("memories", r.user_id), r.id, r.to_dict()) for r in records)


@pytest.fixture(scope="module")
def module_pg_dsn() -> Iterator[str]:
    """One database for the read-mostly comparisons of this module."""
    yield from _fresh_database()


@pytest.fixture(scope="module")
def both(
    module_pg_dsn: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, ChromaMemoryStore]]:
    embeddings = HashingEmbeddings(dimensions=384)
    stores = {
        "sqlite": ChromaMemoryStore.embedded(
            tmp_path_factory.mktemp("embedded"), embeddings=embeddings
        ),
        "postgres": _pg_store(module_pg_dsn, embeddings),
    }
    for store in stores.values():
        _fill(store)
    yield stores
    for store in stores.values():
        store.close()


def _bm25_by_key(store: ChromaMemoryStore, user: str, query: str) -> dict[str, float]:
    plan = store._plan_query(user, query, None)
    if plan.match_params is None:
        return {}
    sql = store.catalog.sql.KEYWORD_SEARCH_TEMPLATE.format(where="1 = 1")
    rows = store.catalog.query(sql, [*plan.match_params, user, 10_000])
    return {str(row[4]): float(row[-1]) for row in rows}


def test_bm25_scores_equal_the_embedded_fts5_scores(both: dict[str, ChromaMemoryStore]) -> None:
    compared = 0
    for _, query in QUERIES:
        embedded = _bm25_by_key(both["sqlite"], USER, query)
        shared = _bm25_by_key(both["postgres"], USER, query)
        assert shared.keys() == embedded.keys(), query
        for key, score in embedded.items():
            assert shared[key] == pytest.approx(score, rel=1e-9, abs=1e-12), (query, key)
            compared += 1
    assert compared > 1000  # the queries really matched (English and Chinese)
    for user in OTHER_USERS:
        assert _bm25_by_key(both["postgres"], user, "seafood 过敏") == pytest.approx(
            _bm25_by_key(both["sqlite"], user, "seafood 过敏")
        )


def test_same_top_k_on_the_retrieval_quality_set(both: dict[str, ChromaMemoryStore]) -> None:
    weights = ScoringWeights(recency=0.0, importance=0.0, min_relevance=0.0)
    for _, query in QUERIES:
        got = {
            name: store.search_memories(USER, query, limit=10, weights=weights)
            for name, store in both.items()
        }
        assert [m.record.id for m in got["postgres"]] == [m.record.id for m in got["sqlite"]]
        assert [m.score for m in got["postgres"]] == pytest.approx(
            [m.score for m in got["sqlite"]], abs=1e-6
        )


def test_recall_history_filters_and_namespaces_match(both: dict[str, ChromaMemoryStore]) -> None:
    for store in both.values():
        store.put_memory(MemoryRecord(text="Drinks green tea", user_id="dan", key="drink"))
        store.put_memory(MemoryRecord(text="Drinks black coffee now", user_id="dan", key="drink"))
        store.put_memory(
            MemoryRecord(text="Never use honorifics", user_id="dan", type=MemoryType.PROCEDURAL)
        )
        store.put(("docs",), "d1", {"content": "tea guide", "n": 3, "flag": True, "x": None})
        store.put(("docs",), "d2", {"content": "coffee guide", "n": 1, "flag": False})

    def view(store: ChromaMemoryStore) -> tuple[object, ...]:
        recalled = store.recall_memories(
            "dan",
            "what does dan drink",
            pinned_types=[MemoryType.PROCEDURAL],
            pinned_limit=3,
            pinned_weights=ScoringWeights(min_relevance=0.0),
        )
        return (
            [m.record.text for m in recalled.found],
            [m.record.text for m in recalled.pinned],
            sorted(m.text for m in store.list_memories("dan")),
            sorted(
                (m.text, m.status.value) for m in store.list_memories("dan", include_history=True)
            ),
            [i.key for i in store.search(("docs",), filter={"n": {"$gte": 2}})],
            [i.key for i in store.search(("docs",), filter={"flag": False})],
            [i.key for i in store.search(("docs",), filter={"x": None})],
            [i.key for i in store.search(("docs",), filter={"n": {"$in": [1, 3]}})],
            store.list_namespaces(prefix=("docs",)),
        )

    assert view(both["postgres"]) == view(both["sqlite"])
    assert len(both["postgres"].list_memories("dan")) == 2  # tea superseded by coffee
    with pytest.raises(InvalidFilterError):
        both["postgres"].search(("docs",), filter={"n": {"$regex": "x"}})


def test_forget_user_and_ttl_sweep_on_postgres(pg_dsn: str) -> None:
    store = _pg_store(pg_dsn, HashingEmbeddings(dimensions=64))
    try:
        records = [MemoryRecord(text=f"fact {i} about tea", user_id="erin") for i in range(300)]
        # Past the dedicated threshold: the partition gets a collection of its own.
        store.batch(PutOp(("memories", "erin"), r.id, r.to_dict()) for r in records)
        assert store._partition_layout("erin")[1] is True  # type: ignore[index]
        store.put(("tmp",), "k", {"content": "short lived"}, ttl=1)
        assert store.sweep_ttl(now=store._now_ts() + 120) == 1
        receipt = store.forget_user("erin")
        assert receipt.memories_deleted == 300
        assert store.list_memories("erin") == []
        assert store._partition_layout("erin") is None
        rows = store.catalog.query("SELECT count(*) FROM lt_keywords")
        assert rows[0][0] == 0
    finally:
        store.close()


def test_a_catalog_needs_exactly_one_location(pg_dsn: str, tmp_path: Path) -> None:
    client = chromadb.PersistentClient(
        path=str(tmp_path / "c"), settings=Settings(anonymized_telemetry=False)
    )
    with pytest.raises(ConfigurationError, match="exactly one"):
        ChromaMemoryStore(client=client, embeddings=None)
    with pytest.raises(ConfigurationError, match="exactly one"):
        ChromaMemoryStore(client=client, keyword_index_path=tmp_path / "k.sqlite3", catalog=pg_dsn)
    with pytest.raises(ConfigurationError, match="postgresql://"):
        ChromaMemoryStore(client=client, catalog="mysql://nope", embeddings=None)
    with pytest.raises(ConfigurationError, match=r"Could not connect.*127\.0\.0\.1:1/none"):
        PostgresCatalog("postgresql://postgres@127.0.0.1:1/none", connect_timeout=1)


def test_core_profile_is_served_from_the_postgres_catalog(
    pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The profile pass runs on Postgres (it used to return nothing there) and ranks
    like the embedded catalog: by importance, current values only, keyed slots only
    past ``PROFILE_SCAN_MAX_ROWS``; the recall node injects the same profile."""
    from datetime import UTC, datetime, timedelta

    from langchain_core.messages import HumanMessage
    from langgraph.graph.message import add_messages

    from langgraph_memory.clock import ManualClock
    from langgraph_memory.longterm import retrieval
    from langgraph_memory.nodes.recall import (
        create_recall_node,
        recalled_block,
        recalled_metadata,
    )

    start = datetime(2026, 9, 1, 9, 0, tzinfo=UTC)
    clocks = {"sqlite": ManualClock(start), "postgres": ManualClock(start)}
    embeddings = HashingEmbeddings(dimensions=64)
    client = chromadb.PersistentClient(
        path=str(tmp_path / "pg-vectors"), settings=Settings(anonymized_telemetry=False)
    )
    stores = {
        "sqlite": ChromaMemoryStore.embedded(
            tmp_path / "embedded", embeddings=embeddings, clock=clocks["sqlite"]
        ),
        "postgres": ChromaMemoryStore(
            client=client, catalog=pg_dsn, embeddings=embeddings, clock=clocks["postgres"]
        ),
    }
    assert stores["postgres"].catalog.dialect == "postgres"
    try:
        for name, store in stores.items():
            clock = clocks[name]

            def memory(
                memory_id: str, text: str, clock: ManualClock = clock, **kw: Any
            ) -> MemoryRecord:
                at = clock()
                return MemoryRecord(
                    text=text, user_id="pat", id=memory_id,
                    created_at=at, updated_at=at, valid_from=at, **kw,
                )  # fmt: skip

            for i in range(5):
                store.put_memory(memory(f"book-{i}", f"User read book {i}", importance=0.3 + i / 100))  # fmt: skip
            store.put_memory(memory("son", "User's son is allergic to peanuts", importance=0.9))
            old = store.put_memory(memory("hangzhou", "User lives in Hangzhou", key="address.city"))
            in_an_hour = clock() + timedelta(hours=1)
            store.put_memory(memory("tokyo", "User is in Tokyo", importance=1.0, expires_at=in_an_hour))  # fmt: skip
            store.put_memory(memory("honorifics", "Never use honorifics", type=MemoryType.PROCEDURAL))  # fmt: skip
            clock.advance(timedelta(days=1))
            store.supersede("pat", old.id, memory("chengdu", "User lives in Chengdu", key="address.city"))  # fmt: skip

        def view(store: ChromaMemoryStore) -> tuple[object, ...]:
            profile = store.recall_memories("pat", "zzz unrelated", profile_limit=4).profile
            recall = create_recall_node(store=store, clock=store.clock, update_access_stats=False)
            msgs: list[Any] = [HumanMessage("what should I cook tonight?", id="q")]
            update = recall.invoke({"messages": msgs}, {"configurable": {"user_id": "pat"}})
            msgs = add_messages(msgs, update.get("messages", []))
            meta = recalled_metadata(msgs) or {}
            return [r.id for r in profile], meta.get("profile_ids"), recalled_block(msgs)

        embedded, shared = view(stores["sqlite"]), view(stores["postgres"])
        # Importance first (the son's allergy 0.9), then 0.5 by recency, the expired
        # Tokyo stay and the superseded Hangzhou left out.
        assert shared[0][0] == "son" and "chengdu" in shared[0]
        assert "tokyo" not in shared[0] and "hangzhou" not in shared[0]
        assert shared[1] and "son" in shared[1]  # injected as the core profile
        assert "allergic to peanuts" in (shared[2] or "")
        assert shared == embedded
        # A large partition: only keyed slots are ranked, on both catalogs.
        monkeypatch.setattr(retrieval, "PROFILE_SCAN_MAX_ROWS", 2)
        keyed = {
            name: [r.id for r in s.recall_memories("pat", "x", profile_limit=5).profile]
            for name, s in stores.items()
        }
        assert keyed["postgres"] == keyed["sqlite"] == ["chengdu"]
    finally:
        for store in stores.values():
            store.close()


def test_a_catalog_from_before_the_postings_table_migrates_and_ranks_the_same(
    pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 2 backfills ``lt_postings`` from the stored tsvectors; rows written
    afterwards get theirs from the trigger; forgetting a user empties both."""
    from langgraph_memory.longterm import _sql_postgres

    embeddings = HashingEmbeddings(dimensions=64)
    timeless = ScoringWeights(recency=0.0)  # the two stores are written seconds apart
    texts = ["User likes green tea", "用户对花生过敏", "User flies to Tokyo on Friday"] * 3
    client = chromadb.PersistentClient(
        path=str(tmp_path / "v"), settings=Settings(anonymized_telemetry=False)
    )
    with monkeypatch.context() as patched:
        patched.setattr(_sql_postgres, "MIGRATIONS", _sql_postgres.MIGRATIONS[:1])
        old = ChromaMemoryStore(client=client, catalog=pg_dsn, embeddings=embeddings)
        for i, text in enumerate(texts):
            old.put_memory(MemoryRecord(text=f"{text} {i}", user_id="quinn", id=f"m{i}"))
        assert old.catalog.query("SELECT max(version) FROM lt_migrations")[0][0] == 1
        old.close()
    embedded = ChromaMemoryStore.embedded(tmp_path / "embedded", embeddings=embeddings)
    for i, text in enumerate(texts):
        embedded.put_memory(MemoryRecord(text=f"{text} {i}", user_id="quinn", id=f"m{i}"))
    before = [
        (m.record.id, m.score)
        for m in embedded.search_memories("quinn", "green tea 花生 Tokyo", weights=timeless)
    ]
    embedded.close()
    store = ChromaMemoryStore(client=client, catalog=pg_dsn, embeddings=embeddings)
    try:
        assert store.catalog.query("SELECT max(version) FROM lt_migrations")[0][0] == len(
            _sql_postgres.MIGRATIONS
        )
        # Migration 3 gave the existing partition its keyword version.
        assert store.catalog.query("SELECT partition FROM lt_keyword_versions") == [("quinn",)]
        postings = store.catalog.query("SELECT count(*) FROM lt_postings")[0][0]
        assert postings > len(texts)
        after = [
            (m.record.id, m.score)
            for m in store.search_memories("quinn", "green tea 花生 Tokyo", weights=timeless)
        ]
        assert [i for i, _ in after] == [i for i, _ in before]
        assert [s for _, s in after] == pytest.approx([s for _, s in before], abs=1e-9)
        store.put_memory(MemoryRecord(text="User likes matcha tea", user_id="quinn", id="new"))
        assert "new" in [m.record.id for m in store.search_memories("quinn", "matcha")]
        store.forget_user("quinn")
        assert store.catalog.query("SELECT count(*) FROM lt_postings")[0][0] == 0
        assert store.catalog.query("SELECT count(*) FROM lt_keyword_versions") == [(0,)]
    finally:
        store.close()


def test_reads_in_one_round_trip_and_term_statistics_read_again_when_dropped(
    pg_dsn: str,
) -> None:
    """``query_many`` (one pipeline) answers what ``query`` answers one by one, in
    a transaction too; the keyword statement's document frequencies are the
    index's, counted again when the copied postings are gone between planning and
    ranking; no JIT on catalog connections."""
    store = _pg_store(pg_dsn, HashingEmbeddings(dimensions=64))
    try:
        texts = ["User likes green tea", "用户对花生过敏", "User flies to Tokyo"] * 40
        records = [MemoryRecord(text=f"{t} {i}", user_id="rae") for i, t in enumerate(texts)]
        store.batch(PutOp(("memories", "rae"), r.id, r.to_dict()) for r in records)
        catalog = store.catalog
        reads = [
            ("SELECT count(*) FROM lt_items WHERE partition = ?", ["rae"]),
            (catalog.sql.SELECT_PARTITION, ["rae"]),
            ("SELECT item_id FROM lt_items WHERE partition = ? ORDER BY rowid LIMIT 3", ["rae"]),
        ]
        expected = [catalog.query(sql, params) for sql, params in reads]
        assert expected[0] == [(120,)]
        assert catalog.query_many(reads) == expected
        with catalog.transaction():
            assert catalog.query_many(reads) == expected
        plan = store._plan_query("rae", "green tea 花生", None)
        assert plan.match_params is not None
        terms, docs = plan.match_params
        counted = dict(
            catalog.query(
                "SELECT term, count(*) FROM lt_postings WHERE term = ANY (?::text[]) GROUP BY term",
                [terms],
            )
        )
        assert docs == [float(counted[t]) for t in terms] and min(docs) > 0
        ranked = _bm25_by_key(store, "rae", "green tea 花生")
        catalog._local.planned = None  # type: ignore[attr-defined]
        assert catalog.match_params(terms) == (terms, docs)  # counted in SQL instead
        assert _bm25_by_key(store, "rae", "green tea 花生") == ranked
        assert catalog.query("SHOW jit") == [("off",)]
    finally:
        store.close()


def _keyword_store(dsn: str, **catalog_args: Any) -> ChromaMemoryStore:
    """An app instance without embeddings: its answers are the keyword index's alone."""
    client = chromadb.PersistentClient(
        path=tempfile.mkdtemp(prefix="lgm-pg-vectors-"),
        settings=Settings(anonymized_telemetry=False),
    )
    catalog = PostgresCatalog(dsn, **catalog_args)
    return ChromaMemoryStore(client=client, catalog=catalog, embeddings=None)


def _ranked(store: ChromaMemoryStore, user: str, query: str) -> list[tuple[str, float]]:
    found = store.search_memories(user, query, limit=20, weights=ScoringWeights(recency=0.0))
    return [(m.record.text, m.score) for m in found]


def test_another_instances_writes_invalidate_the_copied_postings(pg_dsn: str) -> None:
    """Instance B's in-process postings (``postings.py``) answer its searches only
    while the partition's keyword version is the one they were read with: after
    instance A adds, rewrites, deletes and forgets, B ranks exactly what an
    instance keeping no copy ranks, and what the SQL statement ranks."""
    a, b = _keyword_store(pg_dsn), _keyword_store(pg_dsn)
    fresh = _keyword_store(pg_dsn, keyword_cache_bytes=0)
    try:
        texts = [
            f"User note {i} about oolong tea" if i % 3 == 0 else f"User note {i}"
            for i in range(120)
        ]
        records = [MemoryRecord(text=t, user_id="sam", id=f"n{i}") for i, t in enumerate(texts)]
        a.batch(PutOp(("memories", "sam"), r.id, r.to_dict()) for r in records)
        query = "matcha oolong"
        before = _ranked(b, "sam", query)
        assert len(before) == 20 and all("oolong" in text for text, _ in before)
        entry = b.catalog.keywords.get("sam")  # type: ignore[attr-defined]
        scope = term_scope("sam")
        assert entry is not None
        assert entry.doc_freq([scope + "matcha", scope + "oolong"]) == {
            scope + "matcha": 0,  # a stale copy would never find the memory A adds below
            scope + "oolong": 40,
        }
        # A adds a matching memory, rewrites one, deletes another: B's next search sees all three.
        a.put_memory(
            MemoryRecord(text="User now drinks matcha, not oolong", user_id="sam", id="new")
        )
        a.put_memory(MemoryRecord(text="User note 3 about matcha", user_id="sam", id="n3"))
        a.delete_memory("sam", "n6")
        after = _ranked(b, "sam", query)
        assert after == _ranked(fresh, "sam", query)
        plan = b._plan_query("sam", query, None)
        assert plan.match_params is not None
        in_process = b.catalog.rank_keywords("sam", plan.match_params, 60)  # type: ignore[attr-defined]
        in_sql = b.catalog.query(
            b.catalog.sql.KEYWORD_RANK_THEN_FILTER_TEMPLATE.format(where="1 = 1"),
            [*plan.match_params, 60, "sam"],
        )
        in_sql.sort(key=lambda row: (-row[-1], row[0]))  # its rows come in join order
        assert [hit for hit, _ in in_process.pairs] == [row[0] for row in in_sql]
        assert [s for _, s in in_process.pairs] == pytest.approx([r[-1] for r in in_sql], rel=1e-12)
        texts_after = [text for text, _ in after]
        assert set(texts_after[:2]) == {
            "User now drinks matcha, not oolong",
            "User note 3 about matcha",
        }
        assert "User note 6 about oolong tea" not in texts_after
        assert b.catalog.keywords.get("sam").version > entry.version  # type: ignore[attr-defined]
        # Forgotten through A, re-created through A: B neither keeps nor mistakes the old copy.
        a.forget_user("sam")
        assert _ranked(b, "sam", query) == []
        a.put_memory(MemoryRecord(text="User tried matcha again", user_id="sam", id="again"))
        assert [text for text, _ in _ranked(b, "sam", query)] == ["User tried matcha again"]
        assert _ranked(b, "sam", query) == _ranked(fresh, "sam", query)
    finally:
        for store in (a, b, fresh):
            store.close()
            store.catalog.close()
