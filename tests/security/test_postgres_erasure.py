"""Erasure on Postgres reads the database's own files: after ``forget_user`` with a
Postgres catalog, a ``PostgresSaver`` and a ``PostgresMemoryQueue`` in one
database, no heap, TOAST or index file of our tables holds the user's text or id
(a DELETE alone leaves them in dead tuples; a plain VACUUM in the pages' free
space and the GIN index). The write-ahead log and backups are outside this
(README, "Privacy": Postgres). Issue 18, part 2."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import chromadb
import psycopg
import pytest
from chromadb.config import Settings
from langchain_core.messages import HumanMessage
from langgraph.graph import START, MessagesState, StateGraph

from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.pipeline.queue import PostgresMemoryQueue
from langgraph_memory.session import PostgresSaver
from langgraph_memory.types import CandidateMemory, MemoryOp, MemoryRecord

pytestmark = pytest.mark.postgres


def relation_bytes(dsn: str) -> dict[str, bytes]:
    """Every file of every lgm_*/lt_* table, its TOAST table and their indexes, as
    the server stores it (``pg_read_binary_file``: the test user is a superuser)."""
    out: dict[str, bytes] = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CHECKPOINT")  # dirty buffers reach the files
        rels = conn.execute(
            """
            SELECT c.relname, pg_relation_filepath(c.oid) FROM pg_class c
            WHERE c.relkind IN ('r', 'i', 't') AND pg_relation_filepath(c.oid) IS NOT NULL
              AND (c.relname LIKE 'lgm\\_%' OR c.relname LIKE 'lt\\_%'
                   OR c.oid IN (SELECT reltoastrelid FROM pg_class
                                WHERE relname LIKE 'lgm\\_%' OR relname LIKE 'lt\\_%')
                   OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid IN (
                                SELECT reltoastrelid FROM pg_class
                                WHERE relname LIKE 'lgm\\_%' OR relname LIKE 'lt\\_%')))
            """
        ).fetchall()
        for name, path in rels:
            size = conn.execute("SELECT (pg_stat_file(%s, true)).size", (path,)).fetchone()
            if size and size[0]:
                out[name] = bytes(
                    conn.execute("SELECT pg_read_binary_file(%s)", (path,)).fetchone()[0]
                )
    return out


def holding(dsn: str, words: list[str]) -> dict[str, list[str]]:
    files = relation_bytes(dsn)
    return {
        w: sorted(n for n, raw in files.items() if w.encode() in raw or w.lower().encode() in raw)
        for w in words
        if any(w.encode() in raw or w.lower().encode() in raw for raw in files.values())
    }


def _graph(saver: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("reply", lambda state: {"messages": [("ai", "noted")]})
    builder.add_edge(START, "reply")
    return builder.compile(checkpointer=saver)


def test_forget_user_leaves_no_bytes_in_the_postgres_files(tmp_path: Path, pg_dsn: str) -> None:
    alice, bob = f"alice{uuid.uuid4().hex[:6]}", f"bob{uuid.uuid4().hex[:6]}"
    said, kept = "QUOKKA" + uuid.uuid4().hex[:6].upper(), "WOMBAT" + uuid.uuid4().hex[:6].upper()
    client = chromadb.PersistentClient(
        path=str(tmp_path / "chroma"), settings=Settings(anonymized_telemetry=False)
    )
    store = ChromaMemoryStore(client=client, catalog=pg_dsn, embeddings=HashingEmbeddings())
    with (
        PostgresSaver.from_conn_string(pg_dsn) as saver,
        PostgresMemoryQueue.from_conn_string(pg_dsn, debounce_seconds=0, max_attempts=1) as queue,
    ):
        saver.setup()
        graph = _graph(saver)
        # Opaque thread ids: a deleted thread's id stays as a tombstone (deleted
        # threads stay deleted), so an id must not embed the user's.
        threads = {alice: uuid.uuid4().hex, bob: uuid.uuid4().hex}
        for user, word in ((alice, said), (bob, kept)):
            store.put_memory(MemoryRecord(f"{user} keeps a pet {word}", user_id=user))
            for turn in range(3):
                graph.invoke(
                    {"messages": [("user", f"my pet is {word} {turn}")]},
                    {"configurable": {"thread_id": threads[user], "user_id": user}},
                )
            job_id = queue.enqueue(user, threads[user], [HumanMessage(f"pet {word}", id=user)])
            job = queue.claim("w", job_id=job_id, ignore_debounce=True)
            assert job is not None
            queue.save_candidates(job, [CandidateMemory(f"User has a pet {word}")])
            queue.save_plan(job, [MemoryOp("add", CandidateMemory(f"pet {word}"), (), word, "m")])
            queue.fail(job, f"model echoed {word}")
        # The positive control: both users' words are in the files now.
        assert set(holding(pg_dsn, [said, kept])) == {said, kept}
        receipt = store.forget_user(alice, checkpointer=saver, memory_queue=queue)
        assert receipt.threads_deleted == 1 and receipt.memories_deleted == 1
        assert receipt.queue_rows_deleted >= 2
        left = holding(pg_dsn, [said, alice])
        assert left == {}, f"left in the Postgres files after forget_user: {left}"
        assert saver.erase_pending() == 0  # its VACUUM FULL served the deletes' marks
        # Bob is intact and still works.
        assert set(holding(pg_dsn, [kept, bob])) == {kept, bob}
        assert [r.text for r in store.list_memories(bob)] == [f"{bob} keeps a pet {kept}"]
        state = graph.get_state({"configurable": {"thread_id": threads[bob], "user_id": bob}})
        assert len(state.values["messages"]) == 6
        assert [j.user_id for j in queue.failed()] == [bob]
        # A thread deleted on its own: its rows are dead tuples until vacuum(full=True).
        saver.delete_thread(threads[bob])
        queue.forget_thread(threads[bob])  # the queue vacuums itself (small tables)
        saver.vacuum(full=True)
        left = holding(pg_dsn, [kept])
        assert all(f.startswith("lt_") for fs in left.values() for f in fs), left  # his memory
    store.close()


def test_erasure_waits_for_a_snapshot_older_than_the_delete(pg_dsn: str) -> None:
    """An open snapshot from before the delete would make VACUUM FULL keep the
    deleted rows: the wait sees it (and gives up at its timeout), then passes."""
    from langgraph_memory._pg_erase import wait_for_older_snapshots

    with (
        psycopg.connect(pg_dsn) as reader,
        psycopg.connect(pg_dsn, autocommit=True) as eraser,
    ):
        eraser.execute("CREATE TABLE secrets (t TEXT)")
        eraser.execute("INSERT INTO secrets VALUES ('PANGOLIN')")
        reader.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        assert reader.execute("SELECT t FROM secrets").fetchone() == ("PANGOLIN",)
        eraser.execute("DELETE FROM secrets")  # the reader's snapshot still sees the row
        assert wait_for_older_snapshots(eraser, timeout=0.3) is False
        reader.rollback()
        assert wait_for_older_snapshots(eraser, timeout=5) is True


async def test_the_async_saver_full_vacuum_waits_and_runs(pg_dsn: str) -> None:
    from langgraph_memory.session import AsyncPostgresSaver

    async with AsyncPostgresSaver.from_conn_string(pg_dsn) as saver:
        await saver.asetup()
        assert saver.erase_with_full_vacuum
        assert await saver.avacuum(full=True) > 0


def _recall_graph(saver: Any, store: ChromaMemoryStore) -> Any:
    from langgraph_memory.nodes.recall import create_recall_node

    builder = StateGraph(MessagesState)
    builder.add_node("recall", create_recall_node(store=store, update_access_stats=False))
    builder.add_node("reply", lambda state: {"messages": [("ai", "noted")]})
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "reply")
    return builder.compile(checkpointer=saver)


def test_single_deletes_wait_for_erase_pending_then_leave_no_bytes(
    tmp_path: Path, pg_dsn: str
) -> None:
    """One deleted memory (catalog row, and the recall blocks saved in a thread)
    and one deleted thread: each marks the tables it left dead tuples in; the
    rows stay in the files until ``erase_pending()`` (here the writer's sweep),
    which rewrites only the marked tables, and leaves nothing."""
    from langgraph_memory.pipeline.sweep import MemorySweepPolicy, Sweeper

    user, other = f"dora{uuid.uuid4().hex[:6]}", f"eve{uuid.uuid4().hex[:6]}"
    pet, said = "AXOLOTL" + uuid.uuid4().hex[:6].upper(), "HERON" + uuid.uuid4().hex[:6].upper()
    kept = "GECKO" + uuid.uuid4().hex[:6].upper()
    client = chromadb.PersistentClient(
        path=str(tmp_path / "chroma"), settings=Settings(anonymized_telemetry=False)
    )
    store = ChromaMemoryStore(client=client, catalog=pg_dsn, embeddings=HashingEmbeddings())
    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        saver.setup()
        graph = _recall_graph(saver, store)
        gone = store.put_memory(MemoryRecord(f"my pet is {pet}", user_id=user))
        store.put_memory(MemoryRecord(f"my other pet is {kept}", user_id=user))
        thread, doomed = uuid.uuid4().hex, uuid.uuid4().hex
        for turn in range(2):
            graph.invoke(
                {"messages": [("user", f"tell me about my pet, turn {turn}")]},
                {"configurable": {"thread_id": thread, "user_id": user}},
            )
        graph.invoke(
            {"messages": [("user", f"I saw a {said} today")]},
            {"configurable": {"thread_id": doomed, "user_id": other}},
        )
        assert saver.erase_pending() == 0 and store.erase_pending() == 0  # nothing marked
        assert set(holding(pg_dsn, [pet, said, kept])) == {pet, said, kept}

        store.delete_memory(user, gone.id, checkpointer=saver)
        saver.delete_thread(doomed)
        left = holding(pg_dsn, [pet, said])
        # Deferred: dead tuples in the catalog and in the saver's tables, until the pass.
        assert any(f.startswith("lt_") for f in left.get(pet, [])), left
        assert any(f.startswith("lgm_") for f in left.get(pet, [])), left
        assert any(f.startswith("lgm_") for f in left.get(said, [])), left
        # ...while every read already goes without them.
        state = graph.get_state({"configurable": {"thread_id": thread, "user_id": user}})
        assert pet not in str(state.values["messages"]) and kept in str(state.values["messages"])

        report = Sweeper(store, MemorySweepPolicy(), checkpointer=saver).sweep()
        assert report.erased_relations == 1 + 5  # the catalog, and five of the saver's tables
        left = holding(pg_dsn, [pet, said, gone.id])
        assert left == {}, f"left in the Postgres files after erase_pending: {left}"
        assert set(holding(pg_dsn, [kept])) == {kept}  # the other memory, and its blocks
        assert saver.erase_pending() == 0 and store.erase_pending() == 0  # marks cleared
    store.close()


def test_a_delete_during_the_pass_keeps_its_mark(pg_dsn: str) -> None:
    """A mark renewed while the VACUUM FULL ran is not cleared by that pass."""
    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        saver.setup()
        saver.delete_thread("t-1")
        pending = saver._read(saver._core.erase_pending_txn)
        assert {r for r, _, _ in pending} == {
            "lgm_threads",
            "lgm_checkpoints",
            "lgm_channel_values",
            "lgm_channel_chunks",
            "lgm_writes",
        }
        saver.delete_thread("t-2")  # renews every mark: generation 2
        saver._write(lambda: saver._core.clear_erase_pending_txn(pending))  # a pass of gen 1
        assert len(saver._read(saver._core.erase_pending_txn)) == 5
        assert saver.erase_pending() == 5
        assert saver._read(saver._core.erase_pending_txn) == []


def test_the_cli_runs_the_pass(pg_dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from langgraph_memory.cli import main as cli_main

    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        saver.setup()
        saver.delete_thread("t-1")
    assert cli_main(["erase-pending", "--db", pg_dsn, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"tables_rewritten": 5}
    assert cli_main(["erase-pending", "--db", pg_dsn, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"tables_rewritten": 0}
