"""The memory queue's ``encryption=`` on a real SQLite file and a real Postgres:
no plaintext in the stored bytes, payloads bound to their job (moved and
re-assigned rows fail), clear rows refused, key rotation with ``reencrypt``, and
``forget_memory`` matching inside sealed payloads (issue 18, part 4)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import HumanMessage

from langgraph_memory.encryption import EncryptionKeys
from langgraph_memory.errors import ConfigurationError, DecryptionError, PlaintextRowError
from langgraph_memory.pipeline.queue import MemoryQueue, PostgresMemoryQueue, SqliteMemoryQueue
from langgraph_memory.types import CandidateMemory, MemoryOp

TOLD = "OCELOT-5519"  # the user's words
CANDIDATE = "User keeps a pet OCELOT"  # the extraction's text
REASON = "the user said so: OCELOT"  # the model's reason (quotes the turn)
ERROR = "model said OCELOT-5519 back"  # an error that quotes the turn
WORDS = ("OCELOT",)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class Where:
    """One database (a SQLite file or a fresh Postgres database), queues on it, and
    plain SQL outside any queue."""

    def __init__(self, path: Path, dsn: str | None) -> None:
        self.path, self.dsn = path, dsn
        self.made: list[MemoryQueue] = []

    def queue(self, **settings: Any) -> MemoryQueue:
        settings = {"debounce_seconds": 0, "max_attempts": 1, **settings}
        q: MemoryQueue = (
            PostgresMemoryQueue(self.dsn, **settings)
            if self.dsn
            else SqliteMemoryQueue(self.path, **settings)
        )
        q.setup()
        self.made.append(q)
        return q

    def run(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        if self.dsn:
            with psycopg.connect(self.dsn, autocommit=True) as conn:
                cur = conn.execute(sql.replace("?", "%s"), params)
                return cur.fetchall() if cur.description else []
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()

    def stored_bytes(self) -> bytes:
        """SQLite: every byte of the file and its WAL. Postgres: the raw heap and
        TOAST files of the queue's tables (dead tuples included), read with
        ``pg_read_binary_file`` (the test user is a superuser)."""
        if not self.dsn:
            for q in self.made:
                q.close()
            conn = sqlite3.connect(self.path)
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.close()
            return b"".join(
                Path(str(self.path) + s).read_bytes()
                for s in ("", "-wal", "-journal")
                if Path(str(self.path) + s).exists()
            )
        self.run("CHECKPOINT")
        data = b""
        for table in ("lgm_memory_jobs", "lgm_memory_audit", "lgm_memory_job_messages"):
            for (rel,) in self.run(
                "SELECT pg_relation_filepath(c.oid) FROM pg_class c WHERE c.oid = ?::regclass "
                "OR c.oid = (SELECT reltoastrelid FROM pg_class WHERE oid = ?::regclass)",
                (table, table),
            ):
                data += bytes(self.run("SELECT pg_read_binary_file(?)", (rel,))[0][0])
        return data


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Where]:
    dsn = request.getfixturevalue("pg_dsn") if request.param == "postgres" else None
    w = Where(tmp_path / "checkpoints.sqlite", dsn)
    yield w
    for q in w.made:
        q.close()


@pytest.fixture
def keys() -> EncryptionKeys:
    return EncryptionKeys.generate("k1")


def _plan(memory_id: str = "mem-ocelot") -> list[MemoryOp]:
    return [MemoryOp("add", CandidateMemory(CANDIDATE), (), REASON, memory_id)]


def _run_to(queue: MemoryQueue, user: str, thread: str, stage: str, msg_id: str) -> str:
    """A job of ``user`` taken to ``stage``: 'new' (waiting), 'planned' (leased,
    candidates and plan saved), 'failed' (its last error quotes the turn) or 'done'."""
    job_id = queue.enqueue(user, thread, [HumanMessage(f"my pet is {TOLD}", id=msg_id)])
    assert job_id is not None
    if stage == "new":
        return job_id
    job = queue.claim("w", job_id=job_id, ignore_debounce=True)
    assert job is not None and job.messages[0].content == f"my pet is {TOLD}"
    queue.save_candidates(job, [CandidateMemory(CANDIDATE)])
    queue.save_plan(job, _plan(f"mem-{msg_id}"))
    if stage == "failed":
        assert queue.fail(job, ERROR) == "failed"
    elif stage == "done":
        queue.mark_applied(job, 0, _plan()[0])
        queue.complete(job)
    return job_id


# ------------------------------------------------------------------ round trip, stored bytes


def test_payloads_round_trip_and_no_plaintext_reaches_the_files(
    where: Where, keys: EncryptionKeys
) -> None:
    clock = Clock()
    queue = where.queue(encryption=keys, clock=clock, debounce_seconds=5)
    # Two submissions coalesce into one job: the sealed turns are opened and resealed.
    first = queue.enqueue("alice", "t1", [HumanMessage(f"one {TOLD}", id="a1")])
    second = queue.enqueue("alice", "t1", [HumanMessage(f"two {TOLD}", id="a2")])
    assert first == second
    assert [i.message_count for i in queue.pending()] == [2]
    clock.now += 10
    job = queue.claim("w")
    assert job is not None and [m.content for m in job.messages] == [f"one {TOLD}", f"two {TOLD}"]
    queue.save_candidates(job, [CandidateMemory(CANDIDATE)])
    queue.save_plan(job, _plan())
    # A restarted worker reads the saved stages back.
    queue.release(job)
    job = queue.claim("w2", ignore_debounce=True)
    assert job is not None and job.candidates == [CandidateMemory(CANDIDATE)]
    assert job.ops is not None and job.ops[0].reason == REASON
    queue.mark_applied(job, 0, job.ops[0])
    queue.complete(job)
    _run_to(queue, "alice", "t2", "failed", "a3")
    _run_to(queue, "alice", "t3", "new", "a4")
    (failed,) = queue.failed()
    assert failed.last_error == ERROR and failed.message_count == 1
    assert queue.audit("alice")[0].op.result_id == "mem-ocelot"
    # Every payload column holds a sealed text (a finished job holds none).
    rows = where.run("SELECT status, messages, candidates, ops, last_error FROM lgm_memory_jobs")
    for status, *payloads in rows:
        for value in payloads:
            assert value is None or value.startswith("lgme1:") or (status, value) == ("done", "[]")
    data = where.stored_bytes()
    assert b"lgm_memory_jobs" in data or where.dsn  # the scan read the real file
    assert b"lgme1:" in data
    for word in WORDS:
        assert word.encode() not in data, f"{word} is stored in clear"


def test_a_writer_on_an_encrypted_queue_writes_memories_and_no_clear_turns(
    where: Where, keys: EncryptionKeys, tmp_path: Path
) -> None:
    from langgraph_memory.embeddings import HashingEmbeddings
    from langgraph_memory.longterm import ChromaMemoryStore
    from langgraph_memory.nodes.rules import RuleBasedExtractor
    from langgraph_memory.pipeline.writer import MemoryWriter

    queue = where.queue(encryption=keys)
    with ChromaMemoryStore.embedded(tmp_path / "lt", embeddings=HashingEmbeddings()) as store:
        writer = MemoryWriter(store, extractor=RuleBasedExtractor(), mode="sync", queue=queue)
        writer.submit("alice", "t", [HumanMessage("I'm vegan. My cat is called OCELOT.", id="h1")])
        assert any("vegan" in r.text for r in store.list_memories("alice"))
    assert queue.stats()["done"] == 1 and queue.audit("alice")
    assert b"OCELOT" not in where.stored_bytes()


def test_a_job_given_up_after_expired_leases_keeps_a_sealed_error(
    where: Where, keys: EncryptionKeys
) -> None:
    clock = Clock()
    queue = where.queue(encryption=keys, clock=clock, lease_seconds=1)
    job_id = _run_to(queue, "alice", "t", "new", "a1")
    assert queue.claim("w", job_id=job_id, ignore_debounce=True) is not None
    clock.now += 5  # the worker died; max_attempts=1 is used up
    assert queue.claim("w2", ignore_debounce=True) is None
    (failed,) = queue.failed()
    assert failed.last_error == "worker lease expired 1 times (worker crashed or hung)"
    (stored,) = where.run("SELECT last_error FROM lgm_memory_jobs")[0]
    assert stored.startswith("lgme1:")


def test_the_scan_sees_clear_payloads(where: Where) -> None:
    """The control for the scan above: without encryption the words are found."""
    queue = where.queue()
    _run_to(queue, "alice", "t", "failed", "a1")
    assert b"OCELOT" in where.stored_bytes()


# ------------------------------------------------------------------ fail closed


def test_a_payload_moved_to_another_job_or_user_fails_closed(
    where: Where, keys: EncryptionKeys
) -> None:
    queue = where.queue(encryption=keys)
    alice = _run_to(queue, "alice", "t-a", "new", "a1")
    bob = queue.enqueue("bob", "t-b", [HumanMessage("bob likes chess", id="b1")])
    # Alice's sealed turns copied into Bob's job: they do not open as Bob's.
    where.run(
        "UPDATE lgm_memory_jobs SET messages = (SELECT messages FROM lgm_memory_jobs "
        "WHERE job_id = ?) WHERE job_id = ?",
        (alice, bob),
    )
    with pytest.raises(DecryptionError, match=f"job '{bob}'") as info:
        queue.claim("w", job_id=bob, ignore_debounce=True)
    assert TOLD not in str(info.value)
    # Alice's job re-assigned to Bob (a worker would write her turns into his memories).
    where.run("UPDATE lgm_memory_jobs SET user_id = 'bob' WHERE job_id = ?", (alice,))
    with pytest.raises(DecryptionError, match="user_id='bob'"):
        queue.claim("w", job_id=alice, ignore_debounce=True)
    # Both are refused (failed at once); inspecting them shows ids, never fails.
    refused = {j.job_id: j for j in queue.failed()}
    assert set(refused) == {alice, bob} and refused[bob].message_count == 1
    assert all("does not open" in str(j.last_error) for j in refused.values())
    # Re-assigned back, Alice's job opens again.
    where.run("UPDATE lgm_memory_jobs SET user_id = 'alice' WHERE job_id = ?", (alice,))
    assert queue.retry_failed() == 2
    job = queue.claim("w", job_id=alice, ignore_debounce=True)
    assert job is not None and job.messages[0].content == f"my pet is {TOLD}"


def test_a_payload_moved_to_another_column_fails_closed(where: Where, keys: EncryptionKeys) -> None:
    queue = where.queue(encryption=keys)
    job_id = _run_to(queue, "alice", "t", "planned", "a1")
    where.run("UPDATE lgm_memory_jobs SET ops = candidates WHERE job_id = ?", (job_id,))
    where.run(
        "UPDATE lgm_memory_jobs SET status = 'pending', lease_owner = NULL WHERE job_id = ?",
        (job_id,),
    )
    with pytest.raises(DecryptionError, match="ops of job"):
        queue.claim("w", job_id=job_id, ignore_debounce=True)


def test_a_clear_row_is_refused_and_reencrypt_can_seal_it(
    where: Where, keys: EncryptionKeys
) -> None:
    clear = where.queue()
    job_id = _run_to(clear, "alice", "t", "new", "a1")
    _run_to(clear, "alice", "t-done", "done", "a2")  # '[]' and no payload: nothing to seal
    clear.close()
    queue = where.queue(encryption=keys)
    with pytest.raises(PlaintextRowError, match="stored in clear"):
        queue.claim("w", job_id=job_id, ignore_debounce=True)
    # The refused job is failed at once (it does not hold up the user's later jobs).
    (refused,) = queue.failed()
    assert refused.job_id == job_id and "stored in clear" in str(refused.last_error)
    with pytest.raises(PlaintextRowError):
        queue.reencrypt()
    report = queue.reencrypt(encrypt_plaintext=True)
    assert (report.scanned, report.rewritten) == (2, 1)
    assert queue.retry_failed() == 1
    job = queue.claim("w", job_id=job_id, ignore_debounce=True)
    assert job is not None and job.messages[0].content == f"my pet is {TOLD}"
    # A queue without encryption= refuses the sealed row by name, never hands on ciphertext.
    queue.release(job)
    with pytest.raises(DecryptionError, match="without encryption="):
        where.queue().claim("w", job_id=job_id, ignore_debounce=True)


def test_a_wrong_key_of_the_same_id_fails_closed(where: Where, keys: EncryptionKeys) -> None:
    job_id = _run_to(where.queue(encryption=keys), "alice", "t", "new", "a1")
    other = where.queue(encryption=EncryptionKeys.generate("k1"))
    with pytest.raises(DecryptionError, match="does not open"):
        other.claim("w", job_id=job_id, ignore_debounce=True)


# ------------------------------------------------------------------ rotation


def test_a_rotated_key_reads_old_rows_and_reencrypt_lets_the_old_key_go(
    where: Where, keys: EncryptionKeys
) -> None:
    queue = where.queue(encryption=keys)
    waiting = _run_to(queue, "alice", "t1", "new", "a1")
    _run_to(queue, "alice", "t2", "failed", "a2")
    _run_to(queue, "bob", "t3", "planned", "b1")
    _run_to(queue, "bob", "t4", "done", "b2")
    queue.close()
    rotated = keys.rotated("k2")
    queue = where.queue(encryption=rotated)
    assert queue.failed()[0].last_error == ERROR  # old rows open under the old key
    report = queue.reencrypt(batch_size=1)
    assert (report.scanned, report.rewritten) == (4, 3)
    assert report.cursor is not None
    assert queue.reencrypt().rewritten == 0  # a second pass only reads
    assert queue.reencrypt(after=int(report.cursor)).scanned == 0
    stored = where.run("SELECT messages, candidates, ops, last_error FROM lgm_memory_jobs")
    sealed = [v for row in stored for v in row if v and v != "[]"]
    assert sealed and all(EncryptionKeys.key_id_of(_envelope(v)) == "k2" for v in sealed)
    queue.close()
    queue = where.queue(encryption=rotated.without("k1"))
    job = queue.claim("w", job_id=waiting, ignore_debounce=True)
    assert job is not None and job.messages[0].content == f"my pet is {TOLD}"
    assert queue.failed()[0].last_error == ERROR


async def test_async_reencrypt_and_a_bad_call_say_what_is_wrong(
    where: Where, keys: EncryptionKeys
) -> None:
    _run_to(where.queue(), "alice", "t", "new", "a1")
    with pytest.raises(ConfigurationError, match="needs a queue opened with encryption="):
        where.queue().reencrypt()
    queue = where.queue(encryption=keys)
    with pytest.raises(ConfigurationError, match="batch_size=0"):
        queue.reencrypt(batch_size=0)
    assert (await queue.areencrypt(encrypt_plaintext=True)).rewritten == 1
    with pytest.raises(ConfigurationError, match="EncryptionKeys"):
        SqliteMemoryQueue(where.path, encryption="secret")  # type: ignore[arg-type]


# ------------------------------------------------------------------ erasure inside sealed payloads


def test_forget_memory_matches_inside_sealed_payloads(where: Where, keys: EncryptionKeys) -> None:
    queue = where.queue(encryption=keys)
    by_id = _run_to(queue, "alice", "t1", "failed", "a1")  # its plan names mem-a1
    queue.enqueue("alice", "t2", [HumanMessage("my budget is 3000", id="a2")])
    by_text = queue.claim("w", ignore_debounce=True)
    assert by_text is not None
    queue.fail(by_text, "timeout")
    unrelated = queue.enqueue("alice", "t3", [HumanMessage("I like tea", id="a3")])
    assert unrelated is not None
    job = queue.claim("w", job_id=unrelated, ignore_debounce=True)
    assert job is not None
    queue.fail(job, "timeout")
    assert len(queue.failed()) == 3
    assert queue.forget_memory("alice", "mem-a1") == 1
    assert queue.forget_memory("alice", "mem-budget", texts=["budget is 3000"]) == 1
    assert [j.job_id for j in queue.failed()] == [unrelated]
    assert by_id not in {j.job_id for j in queue.failed()}


def test_forget_memory_also_erases_a_clear_row_of_an_encrypted_queue(
    where: Where, keys: EncryptionKeys
) -> None:
    _run_to(where.queue(), "alice", "t1", "failed", "a1")  # queued before encryption was on
    queue = where.queue(encryption=keys)
    assert queue.forget_memory("alice", "mem-a1") == 1
    assert queue.failed() == []


def _envelope(text: str) -> bytes:
    from langgraph_memory.encryption import text_envelope

    return text_envelope(text, "test")


def test_the_sealing_module_docstring_examples_run() -> None:
    import doctest

    from langgraph_memory.pipeline import _queue_sealing

    result = doctest.testmod(_queue_sealing)
    assert result.attempted > 0 and result.failed == 0
