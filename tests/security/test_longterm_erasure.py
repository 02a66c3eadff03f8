"""Erasure that leaves nothing: every byte of every file is scanned after each erasure.

The data directories: the store's (SQLite catalog + embedded Chroma, or for a
``chroma run`` server its ``--path``), and the session file that holds the
checkpoints and the memory writer's queue. After ``forget_user`` there is no
trace of the user in any of them: no text (UTF-8 or UTF-16), no user id, no item
id, and none of their vectors (float32, raw or normalised). The same for one
deleted memory (text, item id, vector), one BaseStore ``delete`` and one deleted
thread. Covered: a shard user (shared collection), a user promoted to a dedicated
collection (their shard-era vectors), recall blocks saved in checkpoints, queue
jobs (pending, done, failed) and the audit log.

Every scan has positive controls: another user's markers, ids and vectors *must*
be found, so a scan that reads nothing cannot pass.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.messages import HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from langgraph_memory.cli import main as cli_main
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.longterm.rows import item_id_for
from langgraph_memory.nodes.recall import create_recall_node
from langgraph_memory.nodes.recall_erasure import DELETED_LINE
from langgraph_memory.pipeline.queue import SqliteMemoryQueue
from langgraph_memory.prompts.recall import RECALL_MESSAGE_ID as RECALL_ID
from langgraph_memory.session import SqliteSaver
from langgraph_memory.types import CandidateMemory, MemoryOp, MemoryRecord

DIMS = 64


class MarkerEmbeddings(Embeddings):
    """Each text's vector is its own marker: 0.5 at 4 positions picked by a hash of
    the text, 0 elsewhere. Its norm is exactly 1, so Chroma's cosine normalisation
    (and a rebuild that reads vectors back from HNSW) keeps every bit, and its
    256 bytes are found on disk exactly when that vector is stored."""

    dimensions = DIMS

    def _vector(self, text: str) -> list[float]:
        digest = hashlib.blake2b(text.encode(), digest_size=32).digest()
        positions = list(dict.fromkeys(b % DIMS for b in digest))[:4]
        return [0.5 if i in positions else 0.0 for i in range(DIMS)]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


EMBEDDINGS = MarkerEmbeddings()


# ------------------------------------------------------------------ the scanner


def _files(roots: Sequence[Path]) -> dict[Path, bytes]:
    found = {p: p.read_bytes() for root in roots for p in sorted(root.rglob("*")) if p.is_file()}
    assert found, f"nothing on disk under {roots}"
    return found


def _text_forms(needle: str) -> list[bytes]:
    return [needle.encode("utf-8"), needle.encode("utf-16-le")]


def _vector_forms(text: str) -> list[bytes]:
    return [np.asarray(EMBEDDINGS.embed_documents([text])[0], dtype=np.float32).tobytes()]


class Trace:
    """What one user (or one memory) leaves on disk: texts, ids, vectors."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.ids: list[str] = []
        self.vectors: list[str] = []  # the texts whose vectors are stored

    def needles(self) -> dict[str, list[bytes]]:
        out = {f"text {t!r}": _text_forms(t) for t in self.texts}
        out |= {f"id {i!r}": _text_forms(i) for i in self.ids}
        out |= {f"vector of {t!r}": _vector_forms(t) for t in self.vectors}
        return out


def found(roots: Sequence[Path], trace: Trace) -> dict[str, list[str]]:
    """``{needle: [files holding it]}`` for every needle of ``trace`` found anywhere."""
    data = _files(roots)
    hits: dict[str, list[str]] = {}
    for name, forms in trace.needles().items():
        where = [str(p) for p, raw in data.items() if any(f in raw for f in forms)]
        if where:
            hits[name] = where
    return hits


def assert_gone(roots: Sequence[Path], trace: Trace) -> None:
    left = found(roots, trace)
    assert left == {}, f"left on disk: {left}"


def assert_all_present(roots: Sequence[Path], trace: Trace) -> None:
    hits = found(roots, trace)
    missing = [n for n in trace.needles() if n not in hits]
    assert missing == [], f"positive control not found: {missing}"


# ------------------------------------------------------------------ the world


def _uid(name: str) -> str:
    return f"{name}{uuid.uuid4().hex[:8]}"


def _memory_trace(store: ChromaMemoryStore, user: str, texts: Sequence[str], trace: Trace) -> None:
    for text in texts:
        record = store.put_memory(MemoryRecord(text, user_id=user))
        trace.texts.append(text)
        trace.vectors.append(text)
        trace.ids.append(item_id_for(user, f"memories.{user}", record.id))


def _graph(saver: Any, store: ChromaMemoryStore) -> Any:
    """A recall node (it saves a block quoting the user's memories into the
    checkpoint) and a reply."""
    builder = StateGraph(MessagesState)
    builder.add_node("recall", create_recall_node(store=store, update_access_stats=False))
    builder.add_node("reply", lambda state: {"messages": [("ai", "noted")]})
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "reply")
    builder.add_edge("reply", END)
    return builder.compile(checkpointer=saver)


def _queue_history(queue: SqliteMemoryQueue, user: str, thread: str, marker: str) -> None:
    """A done job (with its audit rows), a failed job and a pending job, all quoting ``marker``."""
    for n, outcome in enumerate(("done", "failed", "pending")):
        job_id = queue.enqueue(
            user, thread, [HumanMessage(f"{marker} turn {n}", id=f"{thread}-m{n}")]
        )
        if outcome == "pending":
            continue
        job = queue.claim("w", job_id=job_id, ignore_debounce=True)
        assert job is not None and job.user_id == user
        candidate = CandidateMemory(f"{marker} candidate {n}")
        queue.save_candidates(job, [candidate])
        op = MemoryOp("add", candidate, (), f"new fact: {marker}", f"r-{thread}-{n}")
        queue.save_plan(job, [op])
        if outcome == "done":
            queue.mark_applied(job, 0, op)
            queue.complete(job)
        else:  # one attempt (max_attempts=1): failed, it keeps its turns for retry_failed
            assert queue.fail(job, "model unavailable") == "failed"


@pytest.fixture(params=["embedded", pytest.param("server", marks=pytest.mark.chroma_server)])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A store (one shard for everyone, promotion past 4 vectors), its data dirs,
    and the session file with checkpoints and the queue."""
    kwargs: dict[str, Any] = {"embeddings": EMBEDDINGS, "shards": 1, "dedicated_threshold": 4}
    if request.param == "embedded":
        store = ChromaMemoryStore.embedded(tmp_path / "store", **kwargs)
        roots = [tmp_path / "store"]
        server_dir = None
    else:
        host, port, server_dir = request.getfixturevalue("chroma_server_dir")
        store = ChromaMemoryStore.from_http(
            host,
            port,
            keyword_index_path=tmp_path / "store" / "keyword_index.sqlite3",
            collection_prefix=f"e{uuid.uuid4().hex[:10]}",
            **kwargs,
        )
        roots = [tmp_path / "store", server_dir]
    session = tmp_path / "session" / "checkpoints.sqlite"
    session.parent.mkdir()
    with (
        SqliteSaver.from_conn_string(str(session)) as saver,
        SqliteMemoryQueue.from_conn_string(session, debounce_seconds=0, max_attempts=1) as queue,
    ):
        saver.setup()
        yield {
            "store": store,
            "saver": saver,
            "queue": queue,
            "roots": [*roots, session.parent],
            "server_dir": server_dir,
            "kind": request.param,
        }
    store.close()


def _compact_if_server(world: dict[str, Any], receipt: Any = None) -> None:
    """A Chroma server's own directory is compacted by its operator (the CLI)."""
    if world["server_dir"] is None:
        if receipt is not None:
            assert receipt.server_compaction_needed is False
        return
    if receipt is not None:
        assert receipt.server_compaction_needed is True
    assert cli_main(["compact-chroma", "--path", str(world["server_dir"]), "--json"]) == 0


def _fill_user(world: dict[str, Any], name: str, facts: int) -> tuple[str, Trace, str]:
    """A user with ``facts`` memories, a note item, a thread with recall blocks and queue jobs."""
    store, saver, queue = world["store"], world["saver"], world["queue"]
    user, trace = _uid(name), Trace()
    marker = f"{name}marker{uuid.uuid4().hex[:6]}"
    _memory_trace(store, user, [f"{marker} fact {i} about gardens" for i in range(facts)], trace)
    store.put(("memories", user, "notes"), "note-1", {"content": f"{marker} note"})
    trace.texts.append(f"{marker} note")
    trace.ids.append(item_id_for(user, f"memories.{user}.notes", "note-1"))
    thread = f"t-{uuid.uuid4().hex[:8]}"  # thread ids carry no user id (tombstones keep them)
    graph = _graph(saver, store)
    for turn in range(2):
        graph.invoke(
            {"messages": [("user", f"what about gardens, {marker} turn {turn}?")]},
            {"configurable": {"thread_id": thread, "user_id": user}},
        )
    _queue_history(queue, user, thread, f"{marker}queued")
    trace.texts += [f"{marker} turn", f"{marker}queued", user]
    return user, trace, thread


def test_forget_user_leaves_no_byte_of_shard_or_promoted_users(world: dict[str, Any]) -> None:
    store, saver, queue, roots = world["store"], world["saver"], world["queue"], world["roots"]
    alice, alice_trace, _ = _fill_user(world, "alice", facts=3)  # stays in the shard
    carol, carol_trace, _ = _fill_user(world, "carol", facts=6)  # promoted: shard-era vectors
    bob, bob_trace, bob_thread = _fill_user(world, "bob", facts=3)
    assert store._partition_layout(alice)[1] is False  # type: ignore[index]
    assert store._partition_layout(carol)[1] is True  # type: ignore[index]
    for trace in (alice_trace, carol_trace, bob_trace):
        assert_all_present(roots, trace)  # positive controls before any erasure

    receipt = store.forget_user(alice, checkpointer=saver, memory_queue=queue)
    _compact_if_server(world, receipt)
    assert receipt.memories_deleted == 3 and receipt.threads_deleted == 1
    assert receipt.queue_rows_deleted >= 4
    assert receipt.vector_collections_rebuilt == 1
    assert receipt.vectors_rewritten == 4  # bob: 3 memories + his note; carol has her own
    assert set(receipt.scanned) >= {"catalog", "keyword_index", "queue_jobs", "checkpoints"}
    assert_gone(roots, alice_trace)
    assert_all_present(roots, bob_trace)

    receipt = store.forget_user(carol, checkpointer=saver, memory_queue=queue)
    _compact_if_server(world, receipt)
    assert receipt.memories_deleted == 6 and receipt.vector_collections_rebuilt == 1
    assert_gone(roots, carol_trace)
    assert_all_present(roots, bob_trace)
    # bob still works: search, his thread and queue
    assert len(store.search_memories(bob, "gardens", limit=10)) == 3
    assert saver.get_tuple({"configurable": {"thread_id": bob_thread, "user_id": bob}})
    assert [j.user_id for j in queue.pending()] == [bob]


def test_one_deleted_memory_leaves_no_byte(world: dict[str, Any]) -> None:
    """delete_memory: its text, id and vector leave the store's files and the queue
    (done job, failed job quoting it, older audit rows). The user's threads keep
    their own conversation (and recall blocks: README, "Trust and privacy")."""
    store, queue, roots = world["store"], world["queue"], world["roots"]
    user, keep_trace, _ = _fill_user(world, "dora", facts=3)
    marker = f"zebrafinch{uuid.uuid4().hex[:6]}"
    text = f"{marker} is my childhood pet"
    gone_trace = Trace()
    _memory_trace(store, user, [text], gone_trace)
    record = next(m for m in store.list_memories(user) if m.text == text)
    # The queue saw it: a failed job whose plan quotes it, and a legacy audit row.
    thread = f"t-{uuid.uuid4().hex[:8]}"
    job_id = queue.enqueue(user, thread, [HumanMessage("remember my pet", id="pet-1")])
    job = queue.claim("w", job_id=job_id, ignore_debounce=True)
    assert job is not None
    candidate = CandidateMemory(text)
    queue.save_plan(job, [MemoryOp("add", candidate, (), "new", record.id)])
    assert queue.fail(job, "lost") == "failed"
    with queue._write() as tx:  # a done job and an audit row as older versions wrote them
        tx.execute(
            "UPDATE lgm_memory_jobs SET ops = :ops WHERE user_id = :u AND status = 'done'",
            {"ops": f'[{{"candidate": {{"text": "{text}"}}}}]', "u": user},
        )
        tx.execute(
            "INSERT INTO lgm_memory_audit (user_id, action, target_ids, result_id, reason, op,"
            " created_at) VALUES (:u, 'add', '[]', :r, :reason, :op, 0)",
            {
                "u": user,
                "r": record.id,
                "reason": f"user said {marker}",
                "op": f'{{"action": "add", "candidate": {{"text": "{text}"}}, "reason": "x"}}',
            },
        )
    gone_trace.texts.append(marker)
    assert_all_present(roots, gone_trace)

    store.delete_memory(user, record.id, memory_queue=queue)
    _compact_if_server(world)
    assert_gone(roots, gone_trace)
    keep_trace.texts.remove(user)  # the user is still there, of course
    keep_trace.texts.append(user)
    assert_all_present(roots, keep_trace)
    assert store.get_memory(user, record.id) is None
    assert len(store.search_memories(user, "gardens", limit=10)) == 3


def test_one_deleted_memory_leaves_no_byte_in_saved_recall_blocks(world: dict[str, Any]) -> None:
    """The memory was recalled on earlier turns of two threads, so their checkpoints
    (and the recall node's pending writes) quote it. ``delete_memory(...,
    checkpointer=saver)`` rewrites those blocks: no byte of its text or id stays in
    any file, the other memories' lines and the conversation stay, and the threads
    keep working."""
    store, saver, roots = world["store"], world["saver"], world["roots"]
    user, keep_trace, _ = _fill_user(world, "fern", facts=2)
    marker = f"axolotl{uuid.uuid4().hex[:6]}"
    text = f"{marker} is the name of my gardens pond"
    gone = Trace()
    _memory_trace(store, user, [text], gone)
    record = next(m for m in store.list_memories(user) if m.text == text)
    gone.ids.append(record.id)  # the raw id: the blocks' metadata lists it
    said = f"heron{uuid.uuid4().hex[:6]}"
    graph = _graph(saver, store)
    threads = [f"t-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    for thread in threads:
        for turn in range(2):
            graph.invoke(
                {"messages": [("user", f"gardens pond {said} {turn}?")]},
                {"configurable": {"thread_id": thread, "user_id": user}},
            )
    cfg = {"configurable": {"thread_id": threads[0], "user_id": user}}
    history = list(graph.get_state_history(cfg))
    assert sum(marker in str(s.values.get("messages")) for s in history) >= 2
    assert_all_present(roots, gone)  # the positive control: blocks quote it

    store.delete_memory(user, record.id, checkpointer=saver)
    _compact_if_server(world)
    assert_gone(roots, gone)
    chat = Trace()
    chat.texts = [said, "fact 0 about gardens"]  # the conversation, the other memories
    assert_all_present(roots, chat)
    assert_all_present(roots, keep_trace)
    for state in graph.get_state_history(cfg):
        block = next((m for m in state.values.get("messages", []) if m.id == RECALL_ID), None)
        if block is not None and DELETED_LINE in block.content:
            assert record.id not in block.additional_kwargs["langgraph_memory"]["memory_ids"]
    # The thread goes on: the next turn's block no longer has it, and says nothing deleted.
    out = graph.invoke({"messages": [("user", "gardens pond again?")]}, cfg)
    latest = next(m for m in out["messages"] if m.id == RECALL_ID)
    assert marker not in latest.content and "fact 0 about gardens" in latest.content
    assert DELETED_LINE not in latest.content


def test_one_basestore_delete_and_one_deleted_thread_leave_no_byte(world: dict[str, Any]) -> None:
    store, saver, queue, roots = world["store"], world["saver"], world["queue"], world["roots"]
    user, keep_trace, thread = _fill_user(world, "erin", facts=2)
    marker = f"otterpaw{uuid.uuid4().hex[:6]}"
    store.put(("memories", user, "notes"), "otter", {"content": f"{marker} diary"})
    item = Trace()
    item.texts.append(marker)
    item.vectors.append(f"{marker} diary")
    item.ids.append(item_id_for(user, f"memories.{user}.notes", "otter"))
    assert_all_present(roots, item)
    store.delete(("memories", user, "notes"), "otter")
    _compact_if_server(world)
    assert_gone(roots, item)
    assert_all_present(roots, keep_trace)

    # A thread: its checkpoints (recall blocks included) and its queued turns.
    chat = Trace()
    chat.texts = [f"{user[:4]}marker", "queued turn"]  # placeholders replaced below
    other = f"t-{uuid.uuid4().hex[:8]}"
    words = f"quokka{uuid.uuid4().hex[:6]}"
    _graph(saver, store).invoke(
        {"messages": [("user", f"{words} in the garden")]},
        {"configurable": {"thread_id": other, "user_id": user}},
    )
    queue.enqueue(user, other, [HumanMessage(f"{words} queued", id="q-1")])
    chat.texts = [words]
    assert_all_present(roots, chat)
    saver.delete_thread(other)
    assert queue.forget_thread(other) >= 1
    assert_gone(roots, chat)
    assert_all_present(roots, keep_trace)
    assert saver.get_tuple({"configurable": {"thread_id": thread, "user_id": user}})


def test_a_rebuild_cut_short_is_finished_on_the_next_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shard is dropped, then the process "dies" before the kept vectors are written
    back: the repair intents make the next open re-embed them from the catalog."""
    from langgraph_memory.longterm.vectors import ChromaVectors, shard_collection_name

    root = tmp_path / "store"
    store = ChromaMemoryStore.embedded(root, embeddings=EMBEDDINGS, shards=1)
    for user in ("alice", "bob"):
        for i in range(3):
            store.put_memory(MemoryRecord(f"{user} fact {i} about gardens", user_id=user))
    shard = shard_collection_name(store.collection_prefix, "bob", 1)
    bob_ids = [item_id_for("bob", "memories.bob", m.id) for m in store.list_memories("bob")]
    assert len(store.vectors.vectors_by_id(shard, bob_ids)) == 3

    def crash_after_drop(self: ChromaVectors, name: str, keep_ids: Sequence[str]) -> int:
        self.drop_collection(name)
        raise RuntimeError("killed mid-rebuild")

    monkeypatch.setattr(ChromaVectors, "rebuild", crash_after_drop)
    with pytest.raises(RuntimeError, match="mid-rebuild"):
        store.forget_user("alice")
    assert store.vectors.vectors_by_id(shard, bob_ids) == {}  # bob's vectors are gone now
    store.close()
    monkeypatch.undo()

    reopened = ChromaMemoryStore.embedded(root, embeddings=EMBEDDINGS, shards=1)
    try:  # the open repaired the shard from the catalog's text
        assert len(reopened.vectors.vectors_by_id(shard, bob_ids)) == 3
        assert len(reopened.search_memories("bob", "gardens", limit=10)) == 3
        assert reopened.list_memories("alice") == []
        alice = Trace()
        alice.vectors = [f"alice fact {i} about gardens" for i in range(3)]
        bob = Trace()
        bob.vectors = [f"bob fact {i} about gardens" for i in range(3)]
        again = reopened.forget_user("alice")  # calling it again finishes the erasure
        assert again.memories_deleted == 0 and again.vector_collections_rebuilt == 1
        assert_gone([root], alice)
        assert_all_present([root], bob)
    finally:
        reopened.close()


@pytest.mark.postgres
def test_erasure_with_the_postgres_catalog(tmp_path: Path, pg_dsn: str) -> None:
    """The rebuild through the Postgres dialect (partition locks, its statements): the
    vectors and ids of a forgotten user and of a deleted memory leave Chroma's files."""
    import chromadb
    from chromadb.config import Settings

    chroma_dir = tmp_path / "chroma"
    client = chromadb.PersistentClient(
        path=str(chroma_dir), settings=Settings(anonymized_telemetry=False)
    )
    store = ChromaMemoryStore(
        client=client, catalog=pg_dsn, embeddings=EMBEDDINGS, shards=1, dedicated_threshold=4
    )
    try:
        traces = {}
        for user, facts in (("alice", 3), ("carol", 6), ("bob", 3)):
            trace = Trace()
            for i in range(facts):
                text = f"{user} pg fact {i}"
                record = store.put_memory(MemoryRecord(text, user_id=user))
                trace.vectors.append(text)
                trace.ids.append(item_id_for(user, f"memories.{user}", record.id))
            traces[user] = trace
        for trace in traces.values():
            assert_all_present([chroma_dir], trace)
        receipt = store.forget_user("alice")
        assert receipt.vector_collections_rebuilt == 1 and receipt.vectors_rewritten == 3
        store.forget_user("carol")  # promoted: her shard-era vectors went at the promotion
        assert_gone([chroma_dir], traces["alice"])
        assert_gone([chroma_dir], traces["carol"])
        assert_all_present([chroma_dir], traces["bob"])
        victim = store.list_memories("bob")[0]
        gone = Trace()
        gone.vectors.append(victim.text)
        gone.ids.append(item_id_for("bob", "memories.bob", victim.id))
        store.delete_memory("bob", victim.id)
        assert_gone([chroma_dir], gone)
        assert len(store.search_memories("bob", "pg fact", limit=10)) == 2
        assert store.catalog.query(store.catalog.sql.SELECT_INTENT_PARTITIONS) == []
    finally:
        store.close()
