"""Privacy on disk: identifiers never reach the files; forget_user leaves no text behind.

These tests read the raw bytes of every file the embedded store writes (the
Chroma directory, the SQLite catalog, its WAL and shm files). Each one has a
positive control: a harmless marker that *must* be found, so a scan that
reads nothing cannot pass.
"""

from __future__ import annotations

import asyncio
import platform
import sys
from pathlib import Path
from types import MappingProxyType

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph

from langgraph_memory.config import PrivacyPolicy
from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.errors import RedactionRejectedError
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.privacy import resident_id_check_char
from langgraph_memory.types import MemoryRecord

_ID17 = "11010519491231002"
IDENTIFIERS = {
    "cn_mobile": "13912345678",
    "email": "li.lei.private@example.com",
    "resident_id": _ID17 + resident_id_check_char(_ID17),
    "bank_card": "4111111111111111",
    "ip": "203.0.113.77",
    "api_key": "sk-proj-Zx9QwErTyUiOp1234567890abcdEFGH",
}


def disk_bytes(root: Path) -> bytes:
    """Every byte of every file under ``root`` (WAL and shm files included)."""
    chunks = [p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()]
    assert chunks, f"nothing on disk under {root}"
    return b"\n".join(chunks)


def files_with(root: Path, needle: str) -> list[str]:
    """The files under ``root`` whose raw bytes contain ``needle`` (UTF-8 or UTF-16)."""
    forms = (needle.encode("utf-8"), needle.encode("utf-16-le"))
    return [
        str(p.relative_to(root))
        for p in sorted(root.rglob("*"))
        if p.is_file() and any(form in p.read_bytes() for form in forms)
    ]


def found_on_disk(root: Path, needle: str) -> bool:
    disk_bytes(root)  # fails loudly if there is nothing to scan
    return bool(files_with(root, needle))


@pytest.fixture
def store(tmp_path: Path) -> ChromaMemoryStore:
    s = ChromaMemoryStore.embedded(tmp_path / "store", embeddings=HashingEmbeddings(dimensions=64))
    yield s
    s.close()


def test_identifiers_never_reach_the_disk(store: ChromaMemoryStore, tmp_path: Path) -> None:
    root = tmp_path / "store"
    store.put_memory(
        MemoryRecord(
            text=(
                f"okapimarker: call {IDENTIFIERS['cn_mobile']} or mail {IDENTIFIERS['email']}; "
                f"身份证号 {IDENTIFIERS['resident_id']}，银行卡 {IDENTIFIERS['bank_card']}"
            ),
            user_id="alice",
        )
    )
    store.put(
        ("memories", "alice"),
        "raw",
        {
            "content": f"my ip is {IDENTIFIERS['ip']}, key {IDENTIFIERS['api_key']}",
            "nested": [{"note": f"backup phone {IDENTIFIERS['cn_mobile']}"}],
        },
    )
    store.search_memories("alice", f"what is {IDENTIFIERS['email']}?")  # queries are redacted too
    assert found_on_disk(root, "okapimarker")  # positive control: the scan sees stored text
    for kind, value in IDENTIFIERS.items():
        assert not found_on_disk(root, value), f"{kind} identifier reached the disk"
    hit = store.search_memories("alice", "okapimarker call mail")
    assert hit and "[PHONE" in hit[0].record.text and "[EMAIL" in hit[0].record.text


def test_reject_policy_stores_nothing(tmp_path: Path) -> None:
    policy = PrivacyPolicy(actions=MappingProxyType({"email": "reject"}))
    store = ChromaMemoryStore.embedded(
        tmp_path / "store", embeddings=HashingEmbeddings(dimensions=64), privacy_policy=policy
    )
    try:
        with pytest.raises(RedactionRejectedError):
            store.put_memory(MemoryRecord(text=f"mail {IDENTIFIERS['email']}", user_id="bob"))
        with pytest.raises(RedactionRejectedError):
            store.put(("memories", "bob"), "k", {"content": f"mail {IDENTIFIERS['email']}"})
        assert store.list_memories("bob") == []
        assert store.get(("memories", "bob"), "k") is None
        assert not found_on_disk(tmp_path / "store", IDENTIFIERS["email"])
    finally:
        store.close()


ALICE_MARKERS = ("platypusalice", "鸭嘴兽秘密花园")
BOB_MARKERS = ("wombatbob", "袋熊")


def _graph_with(checkpointer: object) -> object:
    builder = StateGraph(MessagesState)
    builder.add_node("reply", lambda state: {"messages": [("ai", "noted")]})
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    return builder.compile(checkpointer=checkpointer)  # type: ignore[arg-type]


def _fill(store: ChromaMemoryStore) -> None:
    for user, markers in (("alice", ALICE_MARKERS), ("bob", BOB_MARKERS)):
        for i in range(3):
            store.put_memory(MemoryRecord(text=f"{markers[0]} fact {i} {markers[1]}", user_id=user))
        store.put((("memories", user, "notes")), "n1", {"content": f"note {markers[0]}"})
    # A superseded version and a key slot: history must go too.
    old = store.put_memory(
        MemoryRecord(text=f"{ALICE_MARKERS[0]} diet", key="diet", user_id="alice")
    )
    store.supersede("alice", old.id, MemoryRecord(text="vegan now", key="diet", user_id="alice"))


def test_forget_user_removes_every_trace(tmp_path: Path, store: ChromaMemoryStore) -> None:
    root = tmp_path / "store"
    _fill(store)
    with SqliteSaver.from_conn_string(str(tmp_path / "checkpoints.sqlite")) as saver:
        graph = _graph_with(saver)
        for user in ("alice", "bob"):
            for thread in range(2):
                graph.invoke(  # type: ignore[attr-defined]
                    {"messages": [("user", f"hi from {user}")]},
                    {"configurable": {"thread_id": f"{user}-{thread}", "user_id": user}},
                )
        for marker in (*ALICE_MARKERS, *BOB_MARKERS):
            assert found_on_disk(root, marker), marker  # positive control before forgetting
        receipt = store.forget_user("alice", checkpointer=saver)
        assert receipt.memories_deleted == 5  # 3 facts + superseded diet + new diet
        assert receipt.keyword_rows_deleted == 6  # + the notes item
        assert receipt.threads_deleted == 2
        assert "alice" not in repr(receipt) and ALICE_MARKERS[0] not in repr(receipt)
        assert list(saver.list(None, filter={"user_id": "alice"})) == []
        assert len({t.config["configurable"]["thread_id"] for t in saver.list(None)}) == 2
    for marker in ALICE_MARKERS:
        assert not files_with(root, marker), f"{marker!r} still on disk after forget_user"
    for token in ("鸭嘴", "秘密", "花园"):  # FTS5 stores CJK bigrams as separate tokens
        assert not files_with(root, token), token
    for marker in BOB_MARKERS:
        assert found_on_disk(root, marker)  # bob is untouched
    assert store.list_memories("alice", include_history=True) == []
    assert store.search(("memories", "alice"), query=ALICE_MARKERS[0]) == []
    assert len(store.list_memories("bob")) == 3
    assert store._partition_layout("alice") is None
    again = store.forget_user("alice")  # idempotent
    assert again.memories_deleted == 0 and again.keyword_rows_deleted == 0


def test_forget_user_drops_a_dedicated_collection(tmp_path: Path) -> None:
    store = ChromaMemoryStore.embedded(
        tmp_path / "store", embeddings=HashingEmbeddings(dimensions=64), dedicated_threshold=3
    )
    try:
        _fill(store)
        layout = store._partition_layout("alice")
        assert layout is not None and layout[1]  # alice outgrew the shard
        names = {getattr(c, "name", c) for c in store.vectors.client.list_collections()}
        assert layout[0] in names
        chroma_dir = tmp_path / "store" / "chroma"
        alice_dirs = _segment_dirs_of(chroma_dir, layout[0])
        assert alice_dirs and all((chroma_dir / d).is_dir() for d in alice_dirs)
        store.forget_user("alice")
        names = {getattr(c, "name", c) for c in store.vectors.client.list_collections()}
        assert layout[0] not in names
        assert not found_on_disk(tmp_path / "store", ALICE_MARKERS[0])
        # Chroma itself leaves a dropped collection's HNSW directory behind.
        assert not [d for d in alice_dirs if (chroma_dir / d).exists()]
        assert len(store.search_memories("bob", BOB_MARKERS[0])) == 3
    finally:
        store.close()
    reopened = ChromaMemoryStore.embedded(
        tmp_path / "store", embeddings=HashingEmbeddings(dimensions=64), dedicated_threshold=3
    )
    try:  # the other collections' files are intact
        assert len(reopened.search_memories("bob", BOB_MARKERS[0])) == 3
        reopened.put_memory(MemoryRecord(text="carol likes tea", user_id="carol"))
        assert reopened.search_memories("carol", "tea")
    finally:
        reopened.close()


def _segment_dirs_of(chroma_dir: Path, collection: str) -> list[str]:
    """The vector segment directories Chroma's catalog gives ``collection``."""
    import sqlite3

    conn = sqlite3.connect(chroma_dir / "chroma.sqlite3")
    try:
        rows = conn.execute(
            "SELECT s.id FROM segments s JOIN collections c ON s.collection = c.id "
            "WHERE c.name = ? AND s.scope = 'VECTOR'",
            (collection,),
        ).fetchall()
    finally:
        conn.close()
    return [str(r[0]) for r in rows]


def test_async_forget_user_with_async_checkpointer(
    tmp_path: Path, store: ChromaMemoryStore
) -> None:
    _fill(store)

    async def run() -> tuple[int, int]:
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "cp.sqlite")) as saver:
            graph = _graph_with(saver)
            for user in ("alice", "bob"):
                await graph.ainvoke(  # type: ignore[attr-defined]
                    {"messages": [("user", "hi")]},
                    {"configurable": {"thread_id": f"{user}-a", "user_id": user}},
                )
            receipt = await store.aforget_user("alice", checkpointer=saver)
            left = [t async for t in saver.alist(None, filter={"user_id": "alice"})]
            return receipt.threads_deleted, len(left)

    assert asyncio.run(run()) == (1, 0)
    assert not found_on_disk(tmp_path / "store", ALICE_MARKERS[0])


def test_forget_user_with_project_saver_scrubs_the_checkpoint_file(
    tmp_path: Path, store: ChromaMemoryStore
) -> None:
    """With langgraph_memory's own SqliteSaver (which has vacuum()), the user's
    conversation text leaves the checkpoint file too."""
    from langgraph_memory.session import SqliteSaver as ProjectSqliteSaver

    path = tmp_path / "project-checkpoints.sqlite"
    with ProjectSqliteSaver.from_conn_string(str(path)) as saver:
        saver.setup()
        graph = _graph_with(saver)
        for user, marker in (("alice", ALICE_MARKERS[0]), ("bob", BOB_MARKERS[0])):
            graph.invoke(  # type: ignore[attr-defined]
                {"messages": [("user", f"remember {marker}")]},
                {"configurable": {"thread_id": f"{user}-t", "user_id": user}},
            )
        assert found_on_disk(tmp_path, ALICE_MARKERS[0])
        receipt = store.forget_user("alice", checkpointer=saver)
        assert receipt.threads_deleted == 1
    assert not files_with(tmp_path, ALICE_MARKERS[0])
    assert found_on_disk(tmp_path, BOB_MARKERS[0])


def test_forget_user_empties_the_memory_writer_queue(
    tmp_path: Path, store: ChromaMemoryStore
) -> None:
    """Queued turns and audit rows hold conversation text: forget_user removes them
    from the checkpoint file the queue shares, and the other user's stay."""
    from langchain_core.messages import HumanMessage

    from langgraph_memory.pipeline.queue import SqliteMemoryQueue
    from langgraph_memory.session import SqliteSaver as ProjectSqliteSaver

    path = tmp_path / "checkpoints.sqlite"
    with (
        ProjectSqliteSaver.from_conn_string(str(path)) as saver,
        SqliteMemoryQueue.from_conn_string(path) as queue,
    ):
        saver.setup()
        for user, marker in (("alice", ALICE_MARKERS[0]), ("bob", BOB_MARKERS[0])):
            queue.enqueue(user, f"{user}-t", [HumanMessage(f"remember {marker}", id=f"{user}-m1")])
        assert found_on_disk(tmp_path, ALICE_MARKERS[0])
        receipt = store.forget_user("alice", checkpointer=saver, memory_queue=queue)
        assert receipt.queue_rows_deleted >= 1
        assert [job.user_id for job in queue.pending()] == ["bob"]
    assert not files_with(tmp_path, ALICE_MARKERS[0])
    assert found_on_disk(tmp_path, BOB_MARKERS[0])


def test_embedded_store_turns_on_heap_scrubbing(tmp_path: Path) -> None:
    from langgraph_memory.longterm import _heap

    store = ChromaMemoryStore.embedded(tmp_path / "s", embeddings=HashingEmbeddings(dimensions=8))
    store.close()
    if sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc":
        assert _heap._state is True
    assert _heap.scrub_freed_memory() is _heap._state  # idempotent


def test_forgotten_text_never_resurfaces_in_another_users_index_files(tmp_path: Path) -> None:
    """Embedded Chroma persists uninitialised HNSW buffer bytes; without heap
    scrubbing, freed memory holding alice's record reappeared in bob's
    ``data_level0.bin`` in ~8% of runs under load. Repeat to make it visible."""
    leaks = []
    for i in range(25):
        root = tmp_path / f"store{i}"
        store = ChromaMemoryStore.embedded(
            root, embeddings=HashingEmbeddings(dimensions=64), dedicated_threshold=3
        )
        try:
            _fill(store)
            store.forget_user("alice")
            leaks += files_with(root, ALICE_MARKERS[0])
        finally:
            store.close()
    assert leaks == []


def test_forgotten_users_vectors_leave_chromas_files(tmp_path: Path) -> None:
    """Was a strict xfail: embedded Chroma kept a shard user's vectors in its
    write-ahead log and free pages. forget_user now rebuilds the shard (erasure.py)."""
    import numpy as np

    root = tmp_path / "store"
    embeddings = HashingEmbeddings(dimensions=64)
    store = ChromaMemoryStore.embedded(root, embeddings=embeddings)  # alice stays in a shard
    try:
        texts = {
            u: [f"{u} private fact {i} about gardens" for i in range(4)] for u in ("alice", "bob")
        }
        for user, lines in texts.items():
            for line in lines:
                store.put_memory(MemoryRecord(text=line, user_id=user))

        def vector_files(user: str) -> list[str]:
            found = set()
            data = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
            for vector in embeddings.embed_documents(texts[user]):
                raw = np.asarray(vector, dtype=np.float32)
                for form in (raw, raw / np.linalg.norm(raw)):
                    head = form.astype(np.float32).tobytes()[:64]
                    found |= {str(p.relative_to(root)) for p, b in data.items() if head in b}
            return sorted(found)

        assert vector_files("alice") and vector_files("bob")  # positive controls
        store.forget_user("alice")
        assert vector_files("bob")
        assert vector_files("alice") == []
    finally:
        store.close()
