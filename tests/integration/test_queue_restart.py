"""Restart during background work: a worker process is killed with SIGKILL mid-batch.

A child process runs the memory writer on a real SQLite queue and a real
embedded Chroma store and kills itself (SIGKILL, no cleanup) at a chosen
point: right after extraction, during reconcile's store lookups, or right
after a store write that the queue has not yet recorded. A fresh worker in
this process then takes the job over once the lease expires. Nothing may be
lost and nothing applied twice.

Run as ``python -m tests.integration.test_queue_restart child <db> <store> <point>``
for the child side.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage

from langgraph_memory.types import CandidateMemory

ROOT = Path(__file__).resolve().parents[2]
USER = "restart-user"
LEASE_SECONDS = 1.0


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class KillingStore:
    """Delegates to the real store; SIGKILLs the process at the chosen call."""

    def __init__(self, inner: Any, point: str) -> None:
        self._inner = inner
        kind, _, count = point.partition(":")
        self._kind, self._at = kind, int(count or 0)
        self._seen = Counter[str]()

    def _after(self, kind: str) -> None:
        self._seen[kind] += 1
        if kind == self._kind and self._seen[kind] == self._at:
            _die()

    def search_memories(self, *args: Any, **kwargs: Any) -> Any:
        found = self._inner.search_memories(*args, **kwargs)
        self._after("search")
        return found

    def put_memory(self, record: Any) -> Any:
        out = self._inner.put_memory(record)
        self._after("write")  # written to the store, not yet recorded by the queue
        return out

    def supersede(self, *args: Any) -> Any:
        out = self._inner.supersede(*args)
        self._after("write")
        return out

    def delete_memory(self, *args: Any) -> Any:
        out = self._inner.delete_memory(*args)
        self._after("write")
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class KillingExtractor:
    def __init__(self, inner: Any, point: str) -> None:
        self._inner, self._point = inner, point

    def extract(self, messages: Sequence[BaseMessage]) -> list[CandidateMemory]:
        found: list[CandidateMemory] = self._inner.extract(messages)
        if self._point == "extract":
            _die()  # extracted, not yet saved
        return found

    async def aextract(self, messages: Sequence[BaseMessage]) -> list[CandidateMemory]:
        return self.extract(messages)


def child(db: str, store_dir: str, point: str) -> None:
    from langgraph_memory.embeddings import HashingEmbeddings
    from langgraph_memory.longterm import ChromaMemoryStore
    from langgraph_memory.nodes.rules import RuleBasedExtractor
    from langgraph_memory.pipeline.queue import SqliteMemoryQueue
    from langgraph_memory.pipeline.writer import MemoryWriter

    store = ChromaMemoryStore.embedded(store_dir, embeddings=HashingEmbeddings())
    queue = SqliteMemoryQueue(db, debounce_seconds=0, lease_seconds=LEASE_SECONDS)
    writer = MemoryWriter(
        KillingStore(store, point),  # type: ignore[arg-type]
        extractor=KillingExtractor(RuleBasedExtractor(), point),
        queue=queue,
        worker_id="doomed-worker",
    )
    writer.run_pending(ignore_debounce=True)
    sys.exit(3)  # the kill point was never reached: the test fails on this code


TURNS = [
    [HumanMessage("My budget is 3000. I'm vegan. I live in Berlin. Call me Max", id="h1")],
    [HumanMessage("Actually my budget is 5000", id="h2")],
]
EXPECTED_ACTIVE = [
    "User is vegan",
    "User lives in Berlin",
    "User wants to be called Max",
    "User's budget is 5000",
]


@pytest.mark.parametrize("point", ["extract", "search:2", "write:2", "write:5"])
def test_sigkill_mid_batch_loses_nothing_and_applies_nothing_twice(
    tmp_path: Path, point: str
) -> None:
    from langgraph_memory.embeddings import HashingEmbeddings
    from langgraph_memory.longterm import ChromaMemoryStore
    from langgraph_memory.nodes.rules import RuleBasedExtractor
    from langgraph_memory.pipeline.queue import SqliteMemoryQueue
    from langgraph_memory.pipeline.writer import MemoryWriter

    db, store_dir = tmp_path / "checkpoints.sqlite", tmp_path / "longterm"
    queue = SqliteMemoryQueue(db, debounce_seconds=0, lease_seconds=LEASE_SECONDS)
    jobs = [queue.enqueue(USER, "t1", turn) for turn in TURNS]
    assert all(jobs) and jobs[0] != jobs[1]
    queue.close()

    env = dict(os.environ, PYTHONPATH=str(ROOT), ANONYMIZED_TELEMETRY="False")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.integration.test_queue_restart",
            "child",
            str(db),
            str(store_dir),
            point,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]

    queue = SqliteMemoryQueue(db, debounce_seconds=0, lease_seconds=LEASE_SECONDS)
    stranded = [info for info in queue.pending() if info.status == "leased"]
    assert [info.lease_owner for info in stranded] == ["doomed-worker"]
    time.sleep(LEASE_SECONDS + 0.2)  # the dead worker's lease expires
    store = ChromaMemoryStore.embedded(store_dir, embeddings=HashingEmbeddings())
    try:
        writer = MemoryWriter(
            store, extractor=RuleBasedExtractor(), queue=queue, worker_id="new-worker"
        )
        assert writer.drain(timeout=60)
        stats = queue.stats()
        assert stats["done"] == 2 and stats["failed"] == 0

        active = sorted(r.text for r in store.list_memories(USER))
        assert active == EXPECTED_ACTIVE  # nothing lost, no duplicate
        every = store.list_memories(USER, include_history=True)
        assert Counter(r.text for r in every) == Counter(
            [*EXPECTED_ACTIVE, "User's budget is 3000"]
        )
        old = next(r for r in every if r.text == "User's budget is 3000")
        assert old.valid_to is not None and old.superseded_by is not None

        entries = [e for e in queue.audit(USER, limit=1000) if e.job_id is not None]
        per_job = Counter((e.job_id, e.op_index) for e in entries)
        assert all(n == 1 for n in per_job.values())  # every decision recorded once
        assert len(entries) == 5
    finally:
        store.close()
        queue.close()


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "child":
        child(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        raise SystemExit(
            "usage: python -m tests.integration.test_queue_restart child <db> <store> <point>"
        )
