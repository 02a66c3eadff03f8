"""Property test: whatever the model answers, the reconcile guardrails hold.

Random batches of candidates, random stored neighbours (some user-stated, some
agent-inferred, some with keys) and random - often hostile - judgements:
labels, targets that are valid aliases, real ids, invented ids or ids shown
for another candidate, merged texts and unknown candidate numbers.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langgraph_memory.nodes.reconcile import (
    CandidateContext,
    Decision,
    Judgement,
    build_judgement_request,
    first_pass,
    needs_model,
    plan_ops,
)
from langgraph_memory.types import (
    CandidateMemory,
    MemoryRecord,
    MemorySource,
    MemoryStatus,
    ScoredMemory,
)

WORDS = ["tea", "coffee", "budget 3000", "budget 5000", "vegan", "Berlin", "cello", "海鲜过敏"]
KEYS = [None, None, "budget", "diet", "address", "address.city"]
SOURCES = [MemorySource.USER_STATED, MemorySource.AGENT_INFERRED]

records = st.builds(
    lambda text, key, source, n: MemoryRecord(
        text=f"User {text}", key=key, source=source, user_id="u", id=f"rec-{n}"
    ),
    st.sampled_from(WORDS),
    st.sampled_from(KEYS),
    st.sampled_from(SOURCES),
    st.integers(0, 5),
)

candidates = st.builds(
    lambda text, key, source, forget: CandidateMemory(
        text=f"User {text}", key=key, source=source, forget=forget, origin_message_ids=("h",)
    ),
    st.sampled_from(WORDS),
    st.sampled_from(KEYS),
    st.sampled_from(SOURCES),
    st.booleans(),
)


@st.composite
def batches(draw: st.DrawFn) -> tuple[list[CandidateContext], Judgement]:
    stored = {r.id: r for r in draw(st.lists(records, max_size=6))}
    pool = list(stored.values())
    contexts = []
    for cand in draw(st.lists(candidates, min_size=1, max_size=5)):
        similar = (
            draw(st.lists(st.sampled_from(pool), max_size=3, unique_by=lambda r: r.id))
            if pool
            else []
        )
        same_key = tuple(r for r in pool if cand.key and r.key == cand.key)
        contexts.append(
            CandidateContext(cand, same_key, tuple(ScoredMemory(r, 0.5) for r in similar))
        )
    refs = st.one_of(
        st.sampled_from([f"E{i}" for i in range(1, 8)]),
        st.sampled_from([*stored, "rec-999", "other-user-id", ""]),
        st.text(max_size=8),
    )
    decisions = draw(
        st.lists(
            st.builds(
                Decision,
                new=st.integers(-1, 7),
                label=st.sampled_from(
                    ["contradicts", "updates", "duplicates", "adds", "unrelated"]
                ),
                targets=st.lists(refs, max_size=4),
                merged_text=st.one_of(st.none(), st.just("User merged fact")),
                reason=st.just("r"),
            ),
            max_size=8,
        )
    )
    return contexts, Judgement(decisions=decisions)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches())
def test_guardrails_hold_for_any_judgement(batch: tuple[list[CandidateContext], Judgement]) -> None:
    contexts, judgement = batch
    _, undecided = first_pass(contexts, "seed")
    asked = needs_model(contexts, undecided)
    request = build_judgement_request(contexts, asked) if asked else None
    ops = plan_ops(contexts, seed="seed", judgement=judgement if request else None, request=request)

    assert len(ops) == len(contexts)
    kept_ids = {op.result_id for op in ops if op.action in ("add", "supersede", "merge")}
    shown_in_batch = {r.id for c in contexts for r in c.same_key} | {
        s.record.id for c in contexts for s in c.similar
    }
    for ctx, op in zip(contexts, ops, strict=True):
        cand = ctx.candidate
        shown = {r.id: r for r in ctx.same_key} | {s.record.id: s.record for s in ctx.similar}
        # every referenced id is one this candidate was shown, or one this batch
        # stores; a repeat of an earlier candidate ("... of this batch") and a newer
        # value of its key ("... in this batch") follow that candidate's targets,
        # which it may not have been shown itself
        allowed = set(shown) | kept_ids
        if "this batch" in op.reason:
            allowed |= shown_in_batch
        assert set(op.target_ids) <= allowed, (op, shown)
        # only an explicit forget request deletes
        assert (op.action == "delete") <= cand.forget
        # a forget request never stores anything
        if cand.forget:
            assert op.action in ("delete", "ignore")
        # agent_inferred never supersedes user_stated
        if cand.source is MemorySource.AGENT_INFERRED and op.action in ("supersede", "merge"):
            assert all(
                shown[t].source is not MemorySource.USER_STATED for t in op.target_ids if t in shown
            )
        # the new fact survives: stored, or ignored only as a duplicate of something kept
        if not cand.forget and op.action == "ignore":
            assert op.target_ids, op
        if op.action in ("add", "supersede", "merge"):
            assert op.result_id and op.candidate is not None
        # history is superseded, never hard-deleted, on contradiction
        if op.action == "supersede":
            assert all(
                t in kept_ids or shown[t].status is MemoryStatus.ACTIVE for t in op.target_ids
            )
