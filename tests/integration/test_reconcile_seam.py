"""Reconcile's policy seam (ReconcileJudge) and its guardrails, on a real embedded store;
reconcile and areconcile are one generator and must agree."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.nodes.reconcile import CandidateContext, Reconciler
from langgraph_memory.types import CandidateMemory, MemoryOp, MemorySource, MemoryStatus

U = "seam-user"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ChromaMemoryStore]:
    s = ChromaMemoryStore.embedded(tmp_path / "ltm", embeddings=HashingEmbeddings())
    yield s
    s.close()


class KeepFirstValue:
    """An app rule: a stated home city is never replaced by a later mention."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    def review(
        self, contexts: Sequence[CandidateContext], ops: Sequence[MemoryOp]
    ) -> list[MemoryOp]:
        self.seen.append([op.action for op in ops])
        return [
            replace(op, action="ignore", result_id=None)
            if op.action == "supersede" and op.candidate and op.candidate.key == "home_city"
            else op
            for op in ops
        ]


class Reckless:
    """A judge that invents ids, deletes without a forget request and lets a guess win."""

    def review(
        self, contexts: Sequence[CandidateContext], ops: Sequence[MemoryOp]
    ) -> list[MemoryOp]:
        out = []
        for ctx, op in zip(contexts, ops, strict=True):
            shown = [r.id for r in ctx.same_key] + [s.record.id for s in ctx.similar]
            if ctx.candidate.source is MemorySource.AGENT_INFERRED:
                out.append(replace(op, action="supersede", target_ids=tuple(shown)))
            else:
                out.append(replace(op, action="delete", target_ids=("invented-id", *shown)))
        return out


def city(text: str, source: MemorySource = MemorySource.USER_STATED) -> CandidateMemory:
    return CandidateMemory(text, key="home_city", source=source)


def test_the_judge_has_the_last_word(store: ChromaMemoryStore) -> None:
    judge = KeepFirstValue()
    reconciler = Reconciler(store, judge=judge)
    reconciler.reconcile(U, [city("User lives in Hangzhou")])
    ops = reconciler.reconcile(U, [city("User lives in Ningbo")])
    assert judge.seen == [["add"], ["supersede"]]
    assert [op.action for op in ops] == ["ignore"]
    assert [m.text for m in store.list_memories(U)] == ["User lives in Hangzhou"]


def test_the_judge_stays_inside_the_guardrails(store: ChromaMemoryStore) -> None:
    Reconciler(store).reconcile(U, [city("User lives in Hangzhou")])
    reconciler = Reconciler(store, judge=Reckless())
    ops = reconciler.reconcile(
        U,
        [
            city("User lives in Suzhou"),
            CandidateMemory(
                "User lives in Xiamen",
                key="home_city",
                source=MemorySource.AGENT_INFERRED,
                confidence=0.5,
            ),
        ],
    )
    assert all("invented-id" not in op.target_ids for op in ops)
    assert "delete" not in [op.action for op in ops]  # nobody asked to forget
    history = store.list_memories(U, include_history=True)
    by_text = {m.text: m for m in history}
    assert by_text["User lives in Hangzhou"].status is MemoryStatus.SUPERSEDED
    # The guess was added beside the user's words, never over them.
    assert by_text["User lives in Suzhou"].status is MemoryStatus.ACTIVE


def test_a_judge_must_answer_one_op_per_candidate(store: ChromaMemoryStore) -> None:
    class Silent:
        def review(self, contexts: object, ops: object) -> list[MemoryOp]:
            return []

    with pytest.raises(ConfigurationError, match="one op per candidate"):
        Reconciler(store, judge=Silent()).reconcile(U, [city("User lives in Hangzhou")])
    with pytest.raises(ConfigurationError, match="review"):
        Reconciler(store, judge=object())  # type: ignore[arg-type]


def test_reconcile_and_areconcile_decide_alike(tmp_path: Path) -> None:
    batches = [
        [city("User lives in Hangzhou"), CandidateMemory("User is vegan", key="diet")],
        [city("User lives in Ningbo"), CandidateMemory("User is vegan", key="diet")],
        [CandidateMemory("forget where I live", key="home_city", forget=True)],
    ]
    results = []
    for mode in ("sync", "async"):
        s = ChromaMemoryStore.embedded(tmp_path / mode, embeddings=HashingEmbeddings())
        reconciler = Reconciler(s)
        seen = []
        for i, batch in enumerate(batches):
            if mode == "sync":
                ops = reconciler.reconcile(U, batch, seed=f"b{i}")
            else:
                ops = asyncio.run(reconciler.areconcile(U, batch, seed=f"b{i}"))
            seen.append([(op.action, op.result_id, op.target_ids) for op in ops])
        results.append(
            (seen, sorted((m.text, m.status) for m in s.list_memories(U, include_history=True)))
        )
        s.close()
    assert results[0] == results[1]
    assert [a for a, _, _ in results[0][0][1]] == ["supersede", "ignore"]
