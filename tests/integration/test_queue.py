"""SqliteMemoryQueue on real SQLite files: idempotency, debounce, ordering, leases, retries."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_memory.errors import ConfigurationError, JobLeaseLostError
from langgraph_memory.pipeline._queue_sql import to_pyformat
from langgraph_memory.pipeline.queue import (
    MemoryQueue,
    PostgresMemoryQueue,
    SqliteMemoryQueue,
    backoff_seconds,
)
from langgraph_memory.types import CandidateMemory, MemoryOp


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "checkpoints.sqlite"


BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def make_queue(request: pytest.FixtureRequest, db: Path) -> Iterator[Callable[..., MemoryQueue]]:
    """Queues on a fresh database of the parametrized backend (all share that database)."""
    made: list[MemoryQueue] = []
    dsn = request.getfixturevalue("pg_dsn") if request.param == "postgres" else None

    def make(**settings: Any) -> MemoryQueue:
        q: MemoryQueue = (
            PostgresMemoryQueue(dsn, **settings) if dsn else SqliteMemoryQueue(db, **settings)
        )
        made.append(q)
        return q

    yield make
    for q in made:
        q.close()


@pytest.fixture
def queue(make_queue: Callable[..., MemoryQueue], clock: Clock) -> MemoryQueue:
    q = make_queue(
        debounce_seconds=2,
        max_debounce_seconds=10,
        lease_seconds=30,
        max_attempts=3,
        backoff_base_seconds=1,
        backoff_max_seconds=60,
        clock=clock,
    )
    q.setup()
    return q


def turn(n: int, text: str = "hello") -> list:
    return [HumanMessage(f"{text} {n}", id=f"h{n}"), AIMessage(f"reply {n}", id=f"a{n}")]


def test_setup_is_idempotent_and_coexists_with_the_official_saver(db: Path) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver as OfficialSaver

    with OfficialSaver.from_conn_string(str(db)) as saver:
        saver.setup()
        config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        from langgraph.checkpoint.base import empty_checkpoint

        saver.put(config, empty_checkpoint(), {}, {})
        for _ in range(2):
            with SqliteMemoryQueue.from_conn_string(db) as q:
                q.setup()
                assert q.enqueue("u", "t", turn(1)) is not None or True
        assert saver.get_tuple(config) is not None
    conn = sqlite3.connect(db)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"checkpoints", "writes", "lgm_memory_jobs", "lgm_memory_audit"} <= tables
    assert conn.execute("SELECT COUNT(*) FROM lgm_memory_queue_migrations").fetchone()[0] == 1
    assert conn.execute("SELECT COUNT(*) FROM lgm_memory_jobs").fetchone()[0] == 1
    conn.close()


def test_a_message_is_queued_at_most_once(queue: MemoryQueue, clock: Clock) -> None:
    first = queue.enqueue("u", "t", turn(1))
    assert first is not None
    assert queue.enqueue("u", "t", turn(1)) is None
    clock.now += 100  # long after the debounce window: still not queued again
    assert queue.enqueue("u", "t", turn(1)) is None
    # the same message ids in another thread or for another user are different messages
    assert queue.enqueue("u", "t2", turn(1)) is not None
    assert queue.enqueue("v", "t", turn(1)) is not None
    # a mix: only the new message is queued
    job = queue.enqueue("u", "t", [*turn(1), HumanMessage("new", id="h9")])
    assert job is not None
    assert (
        sum(
            info.message_count
            for info in queue.pending()
            if info.thread_id == "t" and info.user_id == "u"
        )
        == 3
    )


def test_the_same_history_queues_the_same_job_ids(tmp_path: Path, clock: Clock) -> None:
    # Job ids seed memory ids: a replayed history must plan the same memories (the exam relies on it).
    def history(path: Path) -> list[str | None]:
        q = SqliteMemoryQueue(path, debounce_seconds=2, clock=clock)
        try:
            ids = [q.enqueue("u", "t", turn(1))]
            clock.now += 5  # outside the debounce window: a second job
            ids += [q.enqueue("u", "t", turn(2)), q.enqueue("u", "t2", turn(1))]
            ids.append(q.enqueue_unanswered("u", "t", AIMessage("bye", id="a9"), hold_seconds=60))
            return ids
        finally:
            q.close()

    start = clock.now
    first = history(tmp_path / "a.sqlite")
    clock.now = start
    assert history(tmp_path / "b.sqlite") == first
    assert None not in first and len(set(first)) == len(first)


def test_a_message_queued_again_after_its_thread_was_forgotten_gets_a_fresh_job(
    queue: MemoryQueue, clock: Clock
) -> None:
    queue.enqueue("u", "t", turn(1))
    clock.now += 5
    queue.enqueue("u", "t", turn(2))
    assert queue.forget_thread("t") >= 2
    # The same key on the same (now empty) thread history: a job, not a duplicate-id error.
    again = queue.enqueue("u", "t", turn(1))
    clock.now += 5
    after = queue.enqueue("u", "t", turn(2))
    assert again is not None and after is not None and again != after
    assert {i.thread_id for i in queue.pending()} == {"t"}


def test_messages_of_a_thread_are_coalesced_within_the_debounce_window(
    queue: MemoryQueue, clock: Clock
) -> None:
    a = queue.enqueue("u", "t", turn(1))
    clock.now += 1
    b = queue.enqueue("u", "t", turn(2))
    assert a == b
    (info,) = queue.pending()
    assert info.message_count == 4 and info.not_before == clock.now + 2
    # not ready while the window is open
    assert queue.claim("w") is None
    clock.now += 2.5
    job = queue.claim("w")
    assert job is not None and [m.id for m in job.messages] == ["h1", "a1", "h2", "a2"]


def test_debounce_is_capped(queue: MemoryQueue, clock: Clock) -> None:
    first = queue.enqueue("u", "t", turn(0))
    for n in range(1, 7):
        clock.now += 1.5  # always inside the 2 s window ...
        assert queue.enqueue("u", "t", turn(n)) == first
    clock.now += 1.5  # ... but the job is 10.5 s old now: a new one starts
    assert queue.enqueue("u", "t", turn(99)) != first
    (info, _) = queue.pending()
    assert info.not_before <= info.created_at + 10


def test_a_leased_job_is_not_coalesced(queue: MemoryQueue, clock: Clock) -> None:
    a = queue.enqueue("u", "t", turn(1))
    clock.now += 3
    assert queue.claim("w") is not None
    b = queue.enqueue("u", "t", turn(2))
    assert b != a


def test_jobs_of_one_user_run_one_at_a_time_in_order(queue: MemoryQueue, clock: Clock) -> None:
    a = queue.enqueue("u", "t1", turn(1))
    b = queue.enqueue("u", "t2", turn(2))
    c = queue.enqueue("v", "t3", turn(3))
    clock.now += 3
    first = queue.claim("w1")
    second = queue.claim("w2")
    assert first is not None and second is not None
    assert {first.job_id, second.job_id} == {a, c}
    assert queue.claim("w3") is None  # b waits for a
    queue.complete(first if first.job_id == a else second)
    third = queue.claim("w3")
    assert third is not None and third.job_id == b


def test_expired_lease_is_taken_over_and_the_old_worker_is_fenced(
    queue: MemoryQueue, clock: Clock
) -> None:
    queue.enqueue("u", "t", turn(1))
    clock.now += 3
    old = queue.claim("dead-worker")
    assert old is not None
    queue.save_candidates(old, [CandidateMemory("User is vegan", key="diet")])
    assert queue.claim("w2") is None  # lease still valid
    clock.now += 31
    new = queue.claim("w2")
    assert new is not None and new.job_id == old.job_id
    assert new.stage == "extracted" and new.candidates == [
        CandidateMemory("User is vegan", key="diet")
    ]
    assert new.attempts == 2
    with pytest.raises(JobLeaseLostError, match="dead-worker"):
        queue.save_plan(old, [])
    with pytest.raises(JobLeaseLostError):
        queue.complete(old)
    queue.save_plan(new, [MemoryOp("ignore", None, (), "nothing")])
    queue.mark_applied(new, 0, MemoryOp("ignore", None, (), "nothing"))
    with pytest.raises(JobLeaseLostError):  # an op is recorded once
        queue.mark_applied(new, 0, MemoryOp("ignore", None, (), "nothing"))
    queue.complete(new)
    assert queue.stats()["done"] == 1 and len(queue.audit()) == 1


def test_a_job_whose_workers_keep_dying_is_failed(queue: MemoryQueue, clock: Clock) -> None:
    queue.enqueue("u", "t", turn(1))
    clock.now += 3
    for _ in range(3):
        assert queue.claim("w") is not None
        clock.now += 31
    assert queue.claim("w") is None
    (failed,) = queue.failed()
    assert "lease expired 3 times" in (failed.last_error or "")


def test_retry_with_backoff_then_failed(queue: MemoryQueue, clock: Clock) -> None:
    queue.enqueue("u", "t", turn(1))
    clock.now += 3
    job = queue.claim("w")
    assert job is not None and queue.fail(job, "boom 1") == "pending"
    assert queue.claim("w") is None
    clock.now += 1.01  # 1 s backoff after attempt 1
    job = queue.claim("w")
    assert job is not None and queue.fail(job, "boom 2") == "pending"
    clock.now += 1.5
    assert queue.claim("w") is None  # 2 s after attempt 2
    clock.now += 0.6
    job = queue.claim("w")
    assert job is not None and job.attempts == 3
    assert queue.fail(job, "boom 3") == "failed"
    (info,) = queue.failed()
    assert info.last_error == "boom 3" and info.attempts == 3
    assert queue.stats()["failed"] == 1
    assert queue.retry_failed() == 1
    assert queue.claim("w") is not None


def test_release_hands_the_job_back_without_spending_an_attempt(
    queue: MemoryQueue, clock: Clock
) -> None:
    queue.enqueue("u", "t", turn(1))
    clock.now += 3
    job = queue.claim("w")
    assert job is not None
    queue.save_candidates(job, [])
    queue.release(job)
    again = queue.claim("w2")
    assert again is not None and again.attempts == 1 and again.stage == "extracted"


def test_claim_specific_job_and_ignore_debounce(queue: MemoryQueue) -> None:
    a = queue.enqueue("u", "t", turn(1))
    assert queue.claim("w") is None
    assert queue.claim("w", ignore_debounce=True) is not None
    b = queue.enqueue("v", "t", turn(2))
    assert b is not None
    job = queue.claim("w", job_id=b)
    assert job is not None and job.job_id == b and a != b
    assert queue.claim("w", job_id=b) is None  # already leased


def test_inspection_and_housekeeping(queue: MemoryQueue, clock: Clock) -> None:
    queue.enqueue("u", "t", turn(1))
    queue.enqueue("v", "t", turn(2))
    stats = queue.stats()
    assert stats["pending"] == 2 and stats["oldest_waiting_seconds"] == 0
    clock.now += 3
    job = queue.claim("w")
    assert job is not None
    assert {i.status for i in queue.pending()} == {"pending", "leased"}
    op = MemoryOp("add", CandidateMemory("User is vegan"), (), "new", "r1")
    queue.save_plan(job, [op])
    queue.mark_applied(job, 0, op)
    queue.complete(job)
    queue.record_audit(job.user_id, "t", [MemoryOp("ignore", None, (), "standalone")])
    entries = queue.audit(job.user_id)
    assert [e.op.action for e in entries] == ["ignore", "add"]
    # ids and decisions, no text: neither the candidate nor the model's reason
    assert entries[1].op == MemoryOp("add", None, (), "", "r1")
    assert entries[1].job_id == job.job_id
    assert all(e.op.reason == "" and e.op.candidate is None for e in entries)
    # a finished job keeps no conversation text
    with queue._write() as tx:
        row = tx.execute(
            "SELECT messages, candidates, ops FROM lgm_memory_jobs WHERE job_id = :j",
            {"j": job.job_id},
        )
        assert row.fetchone() == ("[]", None, None)
    clock.now += 100
    assert queue.purge_done(older_than_seconds=50) == 1
    assert (
        queue.enqueue(job.user_id, "t", turn(1 if job.user_id == "u" else 2)) is None
    )  # still idempotent
    assert queue.forget_user("u") >= 1
    assert all(i.user_id != "u" for i in queue.pending())
    assert queue.audit("u") == []


def test_forget_thread_and_forget_memory_remove_the_text_they_hold(
    make_queue: Callable[..., MemoryQueue], clock: Clock
) -> None:
    queue = make_queue(debounce_seconds=0, max_attempts=1, clock=clock)
    queue.setup()
    keep = queue.enqueue("u", "t-keep", turn(1, "keep me"))
    gone = queue.enqueue("u", "t-gone", turn(2, "drop me"))
    assert keep and gone
    assert queue.forget_thread("t-gone") == 1 + len(turn(2))  # its job, its queued message ids
    assert [i.thread_id for i in queue.pending()] == ["t-keep"]
    # A failed job quoting a memory, and a done job and an audit row as older versions
    # wrote them (plan and reason with text), all of user u.
    job = queue.claim("w", job_id=keep, ignore_debounce=True)
    assert job is not None
    queue.save_plan(job, [MemoryOp("add", CandidateMemory("User owns a kayak"), (), "new", "m1")])
    assert queue.fail(job, "down") == "failed"
    done = queue.enqueue("u", "t-old", turn(3, "older"))
    job = queue.claim("w", job_id=done, ignore_debounce=True)
    assert job is not None
    queue.complete(job)
    with queue._write() as tx:
        tx.execute(
            "UPDATE lgm_memory_jobs SET ops = :ops WHERE job_id = :j",
            {"ops": '[{"candidate": {"text": "User owns a kayak"}}]', "j": done},
        )
        tx.execute(
            "INSERT INTO lgm_memory_audit (user_id, action, target_ids, result_id, reason, op, "
            "created_at) VALUES ('u', 'add', '[]', 'm1', 'kayak', :op, 0)",
            {"op": '{"action": "add", "candidate": {"text": "User owns a kayak"}, "reason": "k"}'},
        )
    assert queue.forget_memory("u", "m1", ["User owns a kayak"]) == 3
    assert queue.failed() == []
    with queue._write() as tx:
        rows = tx.execute("SELECT messages, candidates, ops FROM lgm_memory_jobs").fetchall()
        audit = tx.execute("SELECT op, reason FROM lgm_memory_audit").fetchall()
    assert "kayak" not in repr(rows) and "kayak" not in repr(audit)
    assert [e.op.result_id for e in queue.audit("u")] == ["m1"]
    assert queue.forget_memory("u", "m1", ["User owns a kayak"]) == 0  # idempotent


def test_concurrent_claims_never_hand_out_a_job_twice(
    make_queue: Callable[..., MemoryQueue],
) -> None:
    q = make_queue(debounce_seconds=0)
    for n in range(40):
        q.enqueue(f"user-{n}", "t", turn(n))
    claimed: list[str] = []
    lock = threading.Lock()

    def worker(name: str) -> None:
        while (job := q.claim(name)) is not None:
            with lock:
                claimed.append(job.job_id)
            q.complete(job)

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(claimed) == 40 and len(set(claimed)) == 40
    assert q.stats()["done"] == 40


def test_backoff_schedule() -> None:
    assert [backoff_seconds(n, 2.0, 10.0) for n in (1, 2, 3, 4)] == [2.0, 4.0, 8.0, 10.0]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"debounce_seconds": -1}, "debounce_seconds"),
        ({"lease_seconds": 0}, "lease_seconds"),
        ({"max_attempts": 0}, "max_attempts"),
    ],
)
def test_bad_settings(db: Path, kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        SqliteMemoryQueue(db, **kwargs)


def test_memory_database_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="survive a restart"):
        SqliteMemoryQueue(":memory:")


def test_closed_queue_says_so(make_queue: Callable[..., MemoryQueue]) -> None:
    q = make_queue()
    q.setup()
    q.close()
    with pytest.raises(ConfigurationError, match="closed"):
        q.stats()


def test_setup_twice_from_two_queues_is_idempotent(make_queue: Callable[..., MemoryQueue]) -> None:
    first, second = make_queue(), make_queue()
    first.setup()
    second.setup()
    assert first.enqueue("u", "t", turn(1)) is not None
    assert second.enqueue("u", "t", turn(1)) is None  # the same tables
    with first._write() as tx:
        assert tx.execute("SELECT COUNT(*) FROM lgm_memory_queue_migrations").fetchone()[0] == 1


def test_pyformat_translation() -> None:
    assert to_pyformat("WHERE a = :a AND b = :b_2") == "WHERE a = %(a)s AND b = %(b_2)s"
    assert to_pyformat("x::text LIKE '5%'") == "x::text LIKE '5%%'"


@pytest.mark.postgres
def test_postgres_connection_string_is_checked_and_never_echoed(pg_dsn: str) -> None:
    from langgraph_memory.errors import InvalidConnectionError

    with pytest.raises(InvalidConnectionError, match="connection string"):
        PostgresMemoryQueue(None)  # type: ignore[arg-type]
    q = PostgresMemoryQueue("postgresql://bob:hunter2@127.0.0.1:1/x")
    assert "hunter2" not in q._describe()
    with PostgresMemoryQueue.from_conn_string(pg_dsn, debounce_seconds=0) as live:
        assert live.enqueue("u", "t", turn(1)) is not None
        assert live.claim("w") is not None


def _raw_connection(queue: MemoryQueue) -> Any:
    if isinstance(queue, PostgresMemoryQueue):
        import psycopg

        return psycopg.connect(queue.conn_string, autocommit=True)
    assert isinstance(queue, SqliteMemoryQueue)
    return sqlite3.connect(queue.path, isolation_level=None)


def test_a_database_set_up_by_the_old_runner_opens_unchanged(
    make_queue: Callable[..., MemoryQueue], clock: Clock
) -> None:
    """Before the shared runner the queue kept its own: the same bookkeeping table,
    version 1 recorded with the schema. Such a database opens without re-running
    anything, and its queued job is still there to claim."""
    from langgraph_memory.pipeline import _queue_sql as queue_sql

    queue = make_queue(clock=clock, debounce_seconds=0)
    postgres = isinstance(queue, PostgresMemoryQueue)
    raw = _raw_connection(queue)
    real = "DOUBLE PRECISION" if postgres else "REAL"
    mark = "%s" if postgres else "?"
    # What the old setup() executed, statement for statement.
    raw.execute(
        "CREATE TABLE IF NOT EXISTS lgm_memory_queue_migrations ("
        f"version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at {real} NOT NULL)"
    )
    (old,) = queue_sql.POSTGRES_MIGRATIONS if postgres else queue_sql.SQLITE_MIGRATIONS
    for statement in old.statements:
        raw.execute(statement)
    raw.execute(
        "INSERT INTO lgm_memory_queue_migrations (version, name, applied_at) "
        f"VALUES ({mark}, {mark}, {mark})",
        (1, old.name, clock()),
    )
    raw.execute(
        "INSERT INTO lgm_memory_jobs (job_id, job_key, user_id, thread_id, status, stage, "
        f"messages, not_before, created_at, updated_at) VALUES ({', '.join([mark] * 10)})",
        ("j-old", "k-old", "u", "t", "pending", "new", "[]", clock(), clock(), clock()),
    )
    queue.setup()  # re-running migration 1 would fail: its tables exist
    assert [j.job_id for j in queue.pending()] == ["j-old"]
    rows = raw.execute("SELECT version, name FROM lgm_memory_queue_migrations").fetchall()
    assert [tuple(r) for r in rows] == [(1, old.name)]
    raw.close()


def test_a_database_from_a_newer_release_is_refused(
    make_queue: Callable[..., MemoryQueue], clock: Clock
) -> None:
    from langgraph_memory.errors import MigrationError

    first = make_queue(clock=clock)
    first.setup()
    raw = _raw_connection(first)
    mark = "%s" if isinstance(first, PostgresMemoryQueue) else "?"
    raw.execute(
        "INSERT INTO lgm_memory_queue_migrations (version, name, applied_at) "
        f"VALUES (99, {mark}, 0)",
        ("from the future",),
    )
    raw.close()
    with pytest.raises(MigrationError, match=r"newer release.*\[99\].*up to 1"):
        make_queue(clock=clock).setup()


# -- a reply held as unanswered (the extract node's tail) -----------------------------------


def test_an_unanswered_reply_is_held_then_runs_alone(queue: MemoryQueue, clock: Clock) -> None:
    queue.enqueue("u", "t", [HumanMessage("refund please", id="h1")])
    clock.now += 3
    first = queue.claim("w")
    assert first is not None
    queue.complete(first)
    reply = AIMessage("Done: refund of $30 issued.", id="a1")
    held = queue.enqueue_unanswered("u", "t", reply, hold_seconds=300)
    assert held is not None
    assert queue.enqueue_unanswered("u", "t", reply, hold_seconds=300) is None  # once
    clock.now += 299
    assert queue.claim("w") is None  # the user may still answer
    clock.now += 2
    job = queue.claim("w")
    assert job is not None and job.job_id == held and [m.id for m in job.messages] == ["a1"]


def test_the_threads_next_turn_cancels_the_hold_and_carries_the_reply(
    queue: MemoryQueue, clock: Clock
) -> None:
    reply = AIMessage("I can switch you to unlimited from Oct 20.", id="a1")
    held = queue.enqueue_unanswered("u", "t", reply, hold_seconds=300)
    assert held is not None
    clock.now += 30
    job_id = queue.enqueue("u", "t", [reply, HumanMessage("Do it.", id="h2")])
    assert job_id != held
    clock.now += 3
    job = queue.claim("w")
    assert job is not None and job.job_id == job_id
    assert [m.id for m in job.messages] == ["a1", "h2"]  # the offer with its answer
    assert [info.job_id for info in queue.pending()] == [job_id]  # the hold is gone


def test_a_reply_already_queued_is_not_held(queue: MemoryQueue) -> None:
    queue.enqueue("u", "t", turn(1))
    assert queue.enqueue_unanswered("u", "t", AIMessage("reply 1", id="a1"), hold_seconds=5) is None


def test_a_held_reply_blocks_none_of_the_users_other_threads(
    queue: MemoryQueue, clock: Clock
) -> None:
    held = queue.enqueue_unanswered("u", "t1", AIMessage("Done.", id="a1"), hold_seconds=300)
    other = queue.enqueue("u", "t2", turn(2))
    clock.now += 3
    job = queue.claim("w")
    assert job is not None and job.job_id == other
    queue.complete(job)
    clock.now += 300
    job = queue.claim("w")
    assert job is not None and job.job_id == held
