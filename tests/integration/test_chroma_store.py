"""ChromaMemoryStore against real Chroma: embedded (PersistentClient) and a `chroma run` server.

Every test runs on both backends through the ``make_store`` factory; the SQLite
catalog + FTS5 index is a real file in a temp directory each time.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import BaseStore, GetOp, PutOp, SearchOp
from langgraph.store.base import InvalidNamespaceError as LangGraphNamespaceError

from langgraph_memory.config import ScoringWeights
from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.errors import (
    ConfigurationError,
    InvalidFilterError,
    InvalidNamespaceError,
    InvalidUserIdError,
    MemoryNotFoundError,
    MissingUserIdError,
)
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.longterm.vectors import shard_collection_name
from langgraph_memory.types import (
    LongTermMemory,
    MemoryRecord,
    MemorySource,
    MemoryStatus,
    MemoryType,
)

DIMS = 128
StoreFactory = Callable[..., ChromaMemoryStore]


@pytest.fixture(params=["embedded", pytest.param("http", marks=pytest.mark.chroma_server)])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """Builds stores on one backend; several calls in a test share the same data."""
    stores: list[ChromaMemoryStore] = []
    prefix = f"t{uuid.uuid4().hex[:10]}"  # the server is shared by the whole session

    def factory(**kwargs: Any) -> ChromaMemoryStore:
        kwargs.setdefault("embeddings", HashingEmbeddings(dimensions=DIMS))
        if request.param == "embedded":
            store = ChromaMemoryStore.embedded(tmp_path / "store", **kwargs)
        else:
            host, port = request.getfixturevalue("chroma_server")
            store = ChromaMemoryStore.from_http(
                host,
                port,
                keyword_index_path=tmp_path / "keyword_index.sqlite3",
                collection_prefix=prefix,
                **kwargs,
            )
        stores.append(store)
        return store

    yield factory
    for store in stores:
        store.close()


def mem(user: str, text: str, **kwargs: Any) -> MemoryRecord:
    return MemoryRecord(text=text, user_id=user, **kwargs)


# -- BaseStore contract ------------------------------------------------------------


def test_is_a_basestore_and_a_longterm_memory(make_store: StoreFactory) -> None:
    store = make_store()
    assert isinstance(store, BaseStore)
    assert isinstance(store, LongTermMemory)
    assert store.supports_ttl


def test_put_get_update_delete(make_store: StoreFactory) -> None:
    store = make_store()
    ns = ("memories", "alice")
    store.put(ns, "k1", {"content": "likes green tea", "n": 1})
    item = store.get(ns, "k1")
    assert item is not None and item.value == {"content": "likes green tea", "n": 1}
    assert item.namespace == ns and item.key == "k1"
    created = item.created_at
    store.put(ns, "k1", {"content": "likes black tea", "n": 2})
    updated = store.get(ns, "k1")
    assert updated is not None and updated.value["n"] == 2
    assert updated.created_at == created and updated.updated_at >= created
    assert [i.key for i in store.search(ns, query="black tea")] == ["k1"]
    # The old text left the keyword index: "green" now only has a near-zero vector score.
    assert all(i.score is not None and i.score < 0.2 for i in store.search(ns, query="green"))
    store.delete(ns, "k1")
    assert store.get(ns, "k1") is None
    assert store.search(ns, query="black tea") == []


def test_search_filters_limit_offset_and_listing(make_store: StoreFactory) -> None:
    store = make_store()
    ns = ("memories", "alice")
    for i in range(6):
        store.put(ns, f"k{i}", {"content": f"note {i} about hiking", "kind": "a" if i % 2 else "b"})
    store.put(("memories", "alice", "sub"), "deep", {"content": "hiking boots"})
    all_items = store.search(ns, limit=20)
    assert len(all_items) == 7  # children of the prefix included
    assert {i.key for i in store.search(ns, filter={"kind": "a"}, limit=20)} == {"k1", "k3", "k5"}
    page1 = store.search(ns, limit=3)
    page2 = store.search(ns, limit=3, offset=3)
    assert not {i.key for i in page1} & {i.key for i in page2}
    ranked = store.search(ns, query="hiking boots", limit=2)
    assert ranked[0].key == "deep" and ranked[0].score is not None
    assert ranked[0].score >= ranked[1].score  # type: ignore[operator]
    store.put(("docs", "faq"), "q1", {"content": "shared doc"})
    store.put(("memories", "bob"), "b", {"content": "bob's note"})
    # Listing never enumerates users: a user's namespaces need that user's prefix.
    assert store.list_namespaces() == [("docs", "faq")]
    assert store.list_namespaces(prefix=("memories", "alice")) == [
        ("memories", "alice"),
        ("memories", "alice", "sub"),
    ]
    assert store.list_namespaces(prefix=("memories", "alice"), max_depth=2) == [
        ("memories", "alice")
    ]
    assert store.list_namespaces(suffix=("sub",)) == []
    for prefix in (("memories",), ("memories", "*")):
        with pytest.raises(InvalidNamespaceError, match="every user"):
            store.list_namespaces(prefix=prefix)


def test_batch_mixes_ops_in_order(make_store: StoreFactory) -> None:
    store = make_store()
    ns = ("memories", "bob")
    results = store.batch(
        [
            PutOp(ns, "a", {"content": "alpha"}),
            GetOp(ns, "a"),
            PutOp(ns, "a", {"content": "alpha two"}),
            PutOp(ns, "b", {"content": "beta"}),
            SearchOp(ns, query="alpha"),
            PutOp(ns, "b", None),
            GetOp(ns, "b"),
        ]
    )
    assert results[1].value == {"content": "alpha"}  # type: ignore[union-attr]
    assert results[4][0].key == "a"  # type: ignore[index]
    assert results[6] is None


async def test_async_basestore_twins(make_store: StoreFactory) -> None:
    store = make_store()
    ns = ("memories", "carol")
    await store.aput(ns, "k", {"content": "async works"})
    item = await store.aget(ns, "k")
    assert item is not None and item.value["content"] == "async works"
    assert [i.key for i in await store.asearch(ns, query="async")] == ["k"]
    await store.adelete(ns, "k")
    assert await store.aget(ns, "k") is None


def test_index_false_and_custom_fields(make_store: StoreFactory) -> None:
    store = make_store()
    ns = ("memories", "dave")
    store.put(ns, "hidden", {"content": "secret recipe"}, index=False)
    store.put(ns, "titled", {"title": "recipe book", "content": "other"}, index=["title"])
    assert [i.key for i in store.search(ns, query="recipe")] == ["titled"]
    assert store.get(ns, "hidden") is not None


def test_ttl_expiry_refresh_and_sweep(make_store: StoreFactory) -> None:
    store = make_store(ttl={"default_ttl": 0.04, "refresh_on_read": True})  # 2.4 s
    ns = ("memories", "erin")
    store.put(ns, "short", {"content": "expiring soon"})
    store.put(ns, "long", {"content": "expiring later"}, ttl=10)
    store.put(ns, "forever", {"content": "never expiring"}, ttl=None)
    assert store.get(ns, "short") is not None
    time.sleep(1.5)
    assert store.get(ns, "short") is not None  # refreshes to another 2.4 s
    time.sleep(1.5)
    assert store.get(ns, "short", refresh_ttl=False) is not None  # alive only thanks to it
    time.sleep(1.6)
    assert store.get(ns, "short") is None
    assert {i.key for i in store.search(ns, query="expiring")} == {"long", "forever"}
    assert store.sweep_ttl() == 1
    assert store.sweep_ttl() == 0
    assert store.get(ns, "long") is not None


def test_background_ttl_sweeper(make_store: StoreFactory) -> None:
    store = make_store()
    store.put(("memories", "sweep"), "k", {"content": "short lived"}, ttl=0.005)  # 0.3 s
    store.start_ttl_sweeper(sweep_interval_minutes=0.005)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if not store.catalog.query("SELECT 1 FROM lt_items WHERE key = 'k'"):
            break
        time.sleep(0.1)
    assert store.stop_ttl_sweeper(timeout=5)
    assert not store.catalog.query("SELECT 1 FROM lt_items WHERE key = 'k'")  # row gone


# -- compiled graphs: compile(store=...), get_store(), Runtime.store ------------------


def test_graph_nodes_use_the_store_unchanged(make_store: StoreFactory) -> None:
    from langgraph.config import get_store
    from langgraph.graph import END, START, StateGraph
    from langgraph.runtime import Runtime
    from typing_extensions import TypedDict

    store = make_store()

    class State(TypedDict):
        fact: str
        recalled: list[str]

    class Context(TypedDict):
        user_id: str

    def remember(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        assert runtime.store is not None
        runtime.store.put(
            ("memories", runtime.context["user_id"]), "f1", {"content": state["fact"]}
        )
        return {}

    def recall(state: State) -> dict[str, Any]:
        found = get_store().search(("memories", "frank"), query="sushi")
        return {"recalled": [i.value["content"] for i in found]}

    builder = StateGraph(State, context_schema=Context)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    graph = builder.compile(store=store)
    out = graph.invoke({"fact": "loves sushi", "recalled": []}, context={"user_id": "frank"})
    assert out["recalled"] == ["loves sushi"]

    async def run_async() -> dict[str, Any]:
        return await graph.ainvoke(
            {"fact": "loves sushi rolls", "recalled": []}, context={"user_id": "frank"}
        )

    assert asyncio.run(run_async())["recalled"] == ["loves sushi rolls"]


# -- typed memories ---------------------------------------------------------------------


def test_put_get_list_and_redaction_of_typed_memories(make_store: StoreFactory) -> None:
    store = make_store()
    stored = store.put_memory(
        mem("alice", "My phone is 13800138000, I'm allergic to seafood", importance=0.9)
    )
    assert "13800138000" not in stored.text and "[PHONE" in stored.text
    got = store.get_memory("alice", stored.id)
    assert got == stored
    assert [m.id for m in store.list_memories("alice")] == [stored.id]
    assert store.get_memory("alice", "nope") is None


def test_same_key_supersedes_and_history_as_of(make_store: StoreFactory) -> None:
    store = make_store()
    old = store.put_memory(mem("alice", "Budget is 3000 yuan", key="budget"))
    time.sleep(0.05)
    between = datetime.now(UTC)
    time.sleep(0.05)
    new = store.put_memory(mem("alice", "Budget is 5000 yuan", key="budget"))
    assert new.supersedes == (old.id,)
    old_now = store.get_memory("alice", old.id)
    assert old_now is not None and old_now.status is MemoryStatus.SUPERSEDED
    assert old_now.superseded_by == new.id and old_now.valid_to is not None
    assert old_now.text == "Budget is 3000 yuan"  # history keeps the text
    current = store.search_memories("alice", "budget yuan")
    assert [m.record.id for m in current] == [new.id]
    history = store.search_memories("alice", "budget yuan", include_history=True)
    assert {m.record.id for m in history} == {old.id, new.id}
    then = store.search_memories("alice", "budget yuan", as_of=between)
    assert [m.record.id for m in then] == [old.id]
    assert [m.id for m in store.list_memories("alice")] == [new.id]
    assert {m.id for m in store.list_memories("alice", include_history=True)} == {old.id, new.id}


def test_explicit_supersede_links_both_ways(make_store: StoreFactory) -> None:
    store = make_store()
    old = store.put_memory(mem("bob", "Works at Acme"))
    new = store.supersede("bob", old.id, mem("bob", "Works at Globex"))
    assert old.id in new.supersedes
    got = store.get_memory("bob", old.id)
    assert got is not None and got.superseded_by == new.id
    assert got.status is MemoryStatus.SUPERSEDED
    with pytest.raises(MemoryNotFoundError):
        store.supersede("bob", "missing-id", mem("bob", "x"))
    with pytest.raises(InvalidUserIdError, match="does not match"):
        store.supersede("bob", new.id, mem("carol", "not bob's"))


def test_one_record_superseding_several_keeps_every_link(make_store: StoreFactory) -> None:
    store = make_store()
    first = store.put_memory(mem("bob", "Lives in Paris"))
    second = store.put_memory(mem("bob", "Lives in Lyon"))
    merged = mem("bob", "Moved to Berlin in 2026")
    store.supersede("bob", first.id, merged)
    final = store.supersede("bob", second.id, merged)
    assert set(final.supersedes) == {first.id, second.id}
    stored = store.get_memory("bob", merged.id)
    assert stored is not None and set(stored.supersedes) == {first.id, second.id}
    assert [m.id for m in store.list_memories("bob")] == [merged.id]


def test_types_keys_explain_min_relevance(make_store: StoreFactory) -> None:
    store = make_store()
    store.put_memory(mem("u1", "Prefers window seats on flights", key="seat"))
    store.put_memory(mem("u1", "Flight to Tokyo on 3 May was delayed", type=MemoryType.EPISODIC))
    store.put_memory(mem("u1", "Always confirm flight times in UTC", type=MemoryType.PROCEDURAL))
    episodic = store.search_memories("u1", "flight", types=[MemoryType.EPISODIC])
    assert [m.record.type for m in episodic] == [MemoryType.EPISODIC]
    keyed = store.search_memories("u1", "flight seats", keys=["seat"], explain=True)
    assert [m.record.key for m in keyed] == ["seat"]
    breakdown = keyed[0].breakdown
    assert breakdown is not None and breakdown.final == pytest.approx(keyed[0].score)
    assert 0 <= breakdown.relevance <= 1 and breakdown.keyword > 0
    assert store.search_memories("u1", "flight")[0].breakdown is None
    assert store.search_memories("u1", "completely unrelated zebra", min_relevance=0.5) == []
    weights = ScoringWeights(relevance=1.0, recency=0.0, importance=0.0)
    assert store.search_memories("u1", "flight", weights=weights)


def test_touch_updates_access_stats_not_updated_at(make_store: StoreFactory) -> None:
    store = make_store()
    record = store.put_memory(mem("u2", "Has a cat named Miso"))
    store.touch("u2", [record.id, record.id, "unknown-id"])
    store.touch("u2", [record.id])
    got = store.get_memory("u2", record.id)
    assert got is not None and got.access_count == 2
    assert got.last_accessed_at is not None and got.updated_at == record.updated_at


def test_delete_memory_removes_from_every_index(make_store: StoreFactory) -> None:
    store = make_store()
    record = store.put_memory(mem("u3", "Plays the cello on Sundays"))
    store.delete_memory("u3", record.id)
    assert store.get_memory("u3", record.id) is None
    assert store.search_memories("u3", "cello sundays", min_relevance=0.0) == []
    with pytest.raises(MemoryNotFoundError):
        store.delete_memory("u3", record.id)


def test_expiry_and_archival(make_store: StoreFactory) -> None:
    store = make_store()
    now = datetime.now(UTC)
    trip = store.put_memory(
        mem("u4", "Travelling in Berlin this week", expires_at=now + timedelta(minutes=5))
    )
    old_trivia = store.put_memory(
        mem(
            "u4",
            "Once mentioned the weather was nice",
            importance=0.1,
            updated_at=now - timedelta(days=200),
            created_at=now - timedelta(days=200),
            valid_from=now - timedelta(days=200),
        )
    )
    assert [m.record.id for m in store.search_memories("u4", "berlin travelling")] == [trip.id]
    later = now + timedelta(minutes=10)
    assert store.search_memories("u4", "berlin travelling", now=later) == []
    assert store.expire_due("u4", now=later) == 1
    expired = store.get_memory("u4", trip.id)
    assert expired is not None and expired.status is MemoryStatus.EXPIRED
    # put_memory stamps updated_at as given; archival looks at the row's idle time.
    assert store.archive_stale("u4", min_idle_days=0, threshold=0.05, now=later) >= 1
    archived = store.get_memory("u4", old_trivia.id)
    assert archived is not None and archived.status is MemoryStatus.EXPIRED


async def test_async_memory_twins(make_store: StoreFactory) -> None:
    store = make_store()
    record = await store.aput_memory(mem("u5", "Learning Japanese", key="language"))
    found = await store.asearch_memories("u5", "japanese")
    assert [m.record.id for m in found] == [record.id]
    newer = await store.asupersede("u5", record.id, mem("u5", "Learning Korean now"))
    assert (await store.aget_memory("u5", record.id)).status is MemoryStatus.SUPERSEDED  # type: ignore[union-attr]
    await store.atouch("u5", [newer.id])
    assert [m.id for m in await store.alist_memories("u5")] == [newer.id]
    await store.adelete_memory("u5", newer.id)
    receipt = await store.aforget_user("u5")
    assert receipt.memories_deleted == 1  # only the superseded one was left


def test_agent_inferred_does_not_outrank_user_stated(make_store: StoreFactory) -> None:
    store = make_store()
    stated = store.put_memory(mem("u6", "Drinks oat milk lattes", importance=0.7))
    store.put_memory(
        mem(
            "u6",
            "Drinks oat milk lattes",
            importance=0.7,
            source=MemorySource.AGENT_INFERRED,
            confidence=0.3,
        )
    )
    found = store.search_memories("u6", "oat milk latte")
    assert found[0].record.id == stated.id


# -- partition --------------------------------------------------------------------------


@pytest.mark.parametrize("crafted", ["a' OR 1=1", "alice%", "~docs", "alice.bob", "", None])
def test_crafted_user_ids_fail_closed_everywhere(make_store: StoreFactory, crafted: Any) -> None:
    store = make_store()
    store.put_memory(mem("alice", "alice's private note"))
    expected = MissingUserIdError if not crafted else InvalidUserIdError
    calls: list[Callable[[], Any]] = [
        lambda: store.search_memories(crafted, "note"),
        lambda: store.list_memories(crafted),
        lambda: store.get_memory(crafted, "x"),
        lambda: store.delete_memory(crafted, "x"),
        lambda: store.touch(crafted, ["x"]),
        lambda: store.forget_user(crafted),
        lambda: store.put_memory(mem(crafted, "x")),
    ]
    for call in calls:
        with pytest.raises(expected):
            call()
    if crafted:
        with pytest.raises((InvalidUserIdError, InvalidNamespaceError, LangGraphNamespaceError)):
            store.put(("memories", crafted), "k", {"content": "x"})
    assert [m.text for m in store.list_memories("alice")] == ["alice's private note"]


@pytest.mark.parametrize("shards", [1, 64])
def test_users_never_see_each_other(make_store: StoreFactory, shards: int) -> None:
    """With one shard every user shares a Chroma collection: the catalog still separates them."""
    store = make_store(shards=shards)
    alice = store.put_memory(mem("alice", "Allergic to peanuts"))
    bob = store.put_memory(mem("bob", "Allergic to peanuts"))
    store.put(("memories", "bob"), "raw", {"content": "peanuts everywhere", "user_id": "alice"})
    assert [m.record.id for m in store.search_memories("alice", "peanuts allergy")] == [alice.id]
    assert store.get_memory("alice", bob.id) is None
    with pytest.raises(MemoryNotFoundError):
        store.delete_memory("alice", bob.id)
    with pytest.raises(MemoryNotFoundError):
        store.supersede("alice", bob.id, mem("alice", "hijack"))
    store.touch("alice", [bob.id])
    assert store.get_memory("bob", bob.id).access_count == 0  # type: ignore[union-attr]
    assert store.get(("memories", "alice"), "raw") is None
    sneaky = store.search(("memories", "alice"), query="peanuts", filter={"user_id": {"$ne": "x"}})
    assert {i.key for i in sneaky} == {alice.id}  # only alice's own record matches "$ne"
    everything = store.search(("memories", "alice"), query="peanuts", limit=50)
    assert {i.key for i in everything} == {alice.id}
    with pytest.raises(InvalidNamespaceError, match="every user"):
        store.search(("memories",), query="peanuts")
    with pytest.raises(InvalidFilterError):
        store.search(("memories", "alice"), filter={"$or": [{"user_id": "bob"}]})
    assert store.get_memory("bob", bob.id) is not None  # untouched


def test_record_dicts_cannot_be_planted_in_another_users_namespace(
    make_store: StoreFactory,
) -> None:
    store = make_store()
    planted = mem("alice", "alice's fact").to_dict()
    with pytest.raises(InvalidUserIdError, match="alice"):
        store.put(("memories", "bob"), planted["id"], planted)
    unowned = {**planted, "user_id": ""}
    store.put(("memories", "bob"), planted["id"], unowned)
    assert store.get_memory("bob", planted["id"]).user_id == "bob"  # type: ignore[union-attr]
    assert store.get_memory("alice", planted["id"]) is None


def test_chromas_default_embedder_is_never_attached_or_called(
    make_store: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chroma's default embedder downloads a model: no collection may carry it."""
    import chromadb.api.types as chroma_types

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("Chroma's default (downloading) embedder was called")

    monkeypatch.setattr(chroma_types.DefaultEmbeddingFunction, "__call__", refuse)
    store = make_store(dedicated_threshold=3)
    for i in range(5):  # through a shard and a promotion into a dedicated collection
        store.put_memory(mem("emb", f"fact {i} about rowing"))
    assert len(store.search_memories("emb", "rowing", limit=10)) == 5
    # The dedicated collection, and the shard (rebuilt after the promotion, re-opened here).
    shard = shard_collection_name(store.collection_prefix, "emb", store.shards)
    opened = [*store.vectors._collections.values()]
    if shard not in store.vectors._collections:
        opened.append(store.vectors.collection(shard))
    assert len(opened) == 2
    for collection in opened:
        assert collection._embedding_function is None
        # A collection created with Chroma's default would record {"name": "default"}.
        recorded = (collection.configuration_json or {}).get("embedding_function") or {}
        assert recorded.get("name") != "default", recorded
    store.forget_user("emb")


def test_chroma_receives_no_text_and_no_user_ids(make_store: StoreFactory) -> None:
    store = make_store()
    store.put_memory(mem("alice", "Secret garden in Kyoto"))
    store.put(("memories", "alice"), "raw", {"content": "Secret garden again"})
    for collection in store.vectors.client.list_collections():
        name = getattr(collection, "name", collection)
        if not str(name).startswith(store.collection_prefix):
            continue
        assert "alice" not in str(name)
        got = store.vectors.collection(str(name)).get(include=["documents", "metadatas"])
        assert all(doc is None for doc in got["documents"])
        assert all(not meta for meta in got["metadatas"])


# -- layout: shards, promotion, cache, several processes ------------------------------------


def test_promotion_and_every_vector_path_agree(make_store: StoreFactory) -> None:
    texts = [f"fact {i}: user enjoys {word}" for i, word in enumerate(
        ["tennis", "opera", "sailing", "chess", "baking", "kayaking", "poetry", "karaoke"] * 5
    )]  # fmt: skip
    store = make_store(dedicated_threshold=15)
    records = [store.put_memory(mem("grow", t)) for t in texts[:10]]
    layout_before = store._partition_layout("grow")
    assert layout_before is not None and not layout_before[1]  # still in a shard
    records += [store.put_memory(mem("grow", t)) for t in texts[10:]]
    layout_after = store._partition_layout("grow")
    assert layout_after is not None and layout_after[1] and layout_after[2] == len(texts)
    assert store.vectors.collection(layout_after[0]).count() == len(texts)
    cached = [m.record.id for m in store.search_memories("grow", "sailing boats", limit=5)]
    no_cache = make_store(dedicated_threshold=15, vector_cache_bytes=0)
    ann = [m.record.id for m in no_cache.search_memories("grow", "sailing boats", limit=5)]
    assert cached[:3] == ann[:3]
    assert all(
        r.text.endswith("sailing") for r in map(lambda i: store.get_memory("grow", i), cached[:3])
    )  # type: ignore[union-attr]


def test_second_instance_sees_writes_through_version_check(make_store: StoreFactory) -> None:
    writer = make_store()
    reader = make_store()
    writer.put_memory(mem("shared", "Enjoys bouldering"))
    assert [m.record.text for m in reader.search_memories("shared", "bouldering")] == [
        "Enjoys bouldering"
    ]  # fills the reader's cache
    newer = writer.put_memory(mem("shared", "Enjoys bouldering and trail running"))
    found = reader.search_memories("shared", "trail running", min_relevance=0.0)
    assert found[0].record.id == newer.id
    assert found[0].breakdown is None


def test_reopen_with_other_dims_is_refused(make_store: StoreFactory) -> None:
    make_store().put_memory(mem("z", "x"))
    with pytest.raises(ConfigurationError, match="dims"):
        make_store(embeddings=HashingEmbeddings(dimensions=DIMS * 2))


def test_keyword_only_store_without_embeddings(make_store: StoreFactory) -> None:
    store = make_store(embeddings=None)
    record = store.put_memory(mem("kw", "Collects vintage stamps"))
    assert [m.record.id for m in store.search_memories("kw", "stamps")] == [record.id]
    assert store.index_config is None
