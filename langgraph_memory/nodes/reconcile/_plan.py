"""Planning a batch (pure): every decision for a batch, in candidate order.

``first_pass`` takes the deterministic same-key decisions and exact in-batch
repeats; ``needs_model`` picks what is worth asking the model; ``plan_ops`` turns
the model's judgement (or, without one, the offline rules) into the rest;
``record_for`` and ``_kept_record`` are the memories the ops create.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from langgraph_memory.config import PrivacyPolicy
from langgraph_memory.nodes.extract import MAX_MEMORY_CHARS
from langgraph_memory.nodes.reconcile._batch import CandidateContext, logger, result_id_for
from langgraph_memory.nodes.reconcile._forgetting import _points_back
from langgraph_memory.nodes.reconcile._judgement import (
    Decision,
    Judgement,
    JudgementRequest,
    _judged_op,
    _without_phantom_targets,
)
from langgraph_memory.nodes.reconcile._offline import _keyed_op, _offline_op
from langgraph_memory.nodes.reconcile._similarity import _NON_WORD
from langgraph_memory.nodes.reconcile._stale import (
    _MAX_RETIRED,
    _generic_key,
    _kept,
    _slot_value,
    _stale_loose,
)
from langgraph_memory.nodes.rules import is_evidence_key
from langgraph_memory.nodes.rules._evidence import updates
from langgraph_memory.privacy import redact_for_log
from langgraph_memory.types import (
    CandidateMemory,
    MemoryOp,
    MemoryRecord,
    MemorySource,
    MemoryStatus,
    ScoredMemory,
)

# --- planning (pure) -------------------------------------------------------------


def plan_ops(
    contexts: Sequence[CandidateContext],
    *,
    seed: str,
    judgement: Judgement | None = None,
    request: JudgementRequest | None = None,
    policy: PrivacyPolicy | None = None,
    duplicate_threshold: float = 0.9,
    forget_threshold: float = 0.5,
) -> list[MemoryOp]:
    """All decisions for a batch, in candidate order; pure.

    ``judgement`` (with the ``request`` it answers) decides the candidates that
    were sent to the model; without it the offline rules decide them.
    """
    decided, undecided = first_pass(contexts, seed)
    by_index: dict[int, Decision] = {}
    if judgement is not None and request is not None:
        for decision in judgement.decisions:
            index = request.numbers.get(decision.new)
            if index is None:
                logger.warning(
                    "reconcile: ignoring a decision for unknown new memory %r",
                    redact_for_log(decision.new, 80),
                )
            elif index not in by_index:
                by_index[index] = decision
    for index in undecided:
        ctx = contexts[index]
        if (
            request is not None
            and index in request.numbers.values()
            and not _points_back(ctx.candidate)
        ):
            decided[index] = _judged_op(index, ctx, by_index.get(index), request, seed, policy)
        else:
            ctx = _with_batch_evidence(ctx, contexts, decided, index, seed)
            decided[index] = _offline_op(index, ctx, seed, duplicate_threshold, forget_threshold)
    return _without_phantom_targets([decided[i] for i in range(len(contexts))], seed)


def _with_batch_evidence(
    ctx: CandidateContext,
    contexts: Sequence[CandidateContext],
    decided: Mapping[int, MemoryOp],
    index: int,
    seed: str,
) -> CandidateContext:
    """An update (and a forget request) also sees what was written earlier in its own batch.

    "I need a room Dec 11 to 14" and "can we do Dec 12 to 15 instead?" often come
    in one conversation: the second must replace the first before either is stored.
    """
    cand = ctx.candidate
    # A forget request ("膝盖的事你别记了", "Actually, forget that.") may be about a message
    # of its own batch: the writer's debounce coalesces a chat's turns into one job.
    if not cand.forget and not updates(cand.text):
        return ctx
    earlier: list[ScoredMemory] = []
    priors: list[CandidateMemory] = []
    mine = set(cand.origin_message_ids)
    for i in range(index):
        op = decided.get(i)
        prior = contexts[i].candidate
        loose = cand.forget or is_evidence_key(prior.key) or _generic_key(prior.key)
        if op is None or op.action not in ("add", "supersede") or not loose:
            continue
        if mine and mine >= set(prior.origin_message_ids):
            # Said in the same message: "moved to the growth team; my new manager is
            # Priyanka" is one statement in two memories, neither replaces the other.
            continue
        record = MemoryRecord(
            text=prior.text,
            type=prior.type,
            key=prior.key,
            importance=prior.importance,
            source=prior.source,
            id=op.result_id or result_id_for(seed, i),
            valid_from=prior.observed_at or cand.observed_at or _EPOCH,
            expires_at=prior.expires_at,
            origin_message_ids=prior.origin_message_ids,
        )
        earlier.append(ScoredMemory(record, 0.0))
        priors.append(prior)
    if not earlier:
        return ctx
    # The latest loose memory from an earlier message than this one's.
    previous = next(
        (
            s.record
            for s, prior in zip(reversed(earlier), reversed(priors), strict=True)
            if not mine & set(prior.origin_message_ids)
        ),
        None,
    )
    return replace(ctx, similar=(*ctx.similar, *earlier), previous=previous)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def first_pass(
    contexts: Sequence[CandidateContext], seed: str
) -> tuple[dict[int, MemoryOp], list[int]]:
    """Deterministic same-key decisions and exact in-batch duplicates; the rest is undecided."""
    decided: dict[int, MemoryOp] = {}
    undecided: list[int] = []
    batch_by_key: dict[str, tuple[str, CandidateMemory]] = {}
    seen_texts: dict[str, int] = {}
    for index, ctx in enumerate(contexts):
        cand = ctx.candidate
        folded = _NON_WORD.sub("", cand.text.lower())
        first = seen_texts.get(folded)
        stronger = (
            first is not None
            and cand.source is MemorySource.USER_STATED
            and contexts[first].candidate.source is MemorySource.AGENT_INFERRED
        )
        if not cand.forget and first is not None and not stronger:
            decided[index] = MemoryOp(
                "ignore",
                cand,
                (result_id_for(seed, first),),  # resolved once the first one's fate is known
                f"repeats memory {first + 1} of this batch",
            )
            continue
        op = _keyed_op(index, ctx, seed, batch_by_key)
        if op is not None and op.action == "supersede" and _slot_value(cand):
            # The slot's new value also retires the raw statements on its topic.
            nearby = [s.record for s in ctx.similar]
            extra = [p for p in _stale_loose(cand, nearby) if p[0].id not in op.target_ids]
            extra = extra[:_MAX_RETIRED]
            if extra:
                op = replace(
                    op,
                    target_ids=(*op.target_ids, *(r.id for r, _ in extra)),
                    kept=_kept(extra),
                )
        if op is not None:
            decided[index] = op
        else:
            undecided.append(index)
            if cand.key and not cand.forget:
                batch_by_key[cand.key] = (result_id_for(seed, index), cand)
        if not cand.forget:
            seen_texts[folded] = index
    return decided, undecided


def needs_model(contexts: Sequence[CandidateContext], undecided: Sequence[int]) -> list[int]:
    """Undecided candidates with at least one active neighbour: the only ones worth asking about."""
    return [
        i
        for i in undecided
        if any(s.record.status == MemoryStatus.ACTIVE for s in contexts[i].similar)
    ]


def record_for(op: MemoryOp, user_id: str, thread_id: str | None, now: datetime) -> MemoryRecord:
    """The memory an add/supersede/merge op creates, stamped at ``now``.

    It is valid from when the user said it (``observed_at``), never from the future.
    """
    cand = op.candidate
    if cand is None or op.result_id is None:
        raise ValueError(f"op {op.action!r} has no candidate/result id to create a memory from")
    said = cand.observed_at
    return MemoryRecord(
        text=cand.text,
        type=cand.type,
        key=cand.key,
        importance=cand.importance,
        source=cand.source,
        confidence=cand.confidence,
        id=op.result_id,
        user_id=user_id,
        created_at=now,
        updated_at=now,
        valid_from=said if said is not None and said <= now else now,
        event_time=cand.event_time,
        expires_at=cand.expires_at,
        supersedes=op.target_ids if op.action in ("supersede", "merge") else (),
        origin_thread_id=thread_id,
        origin_message_ids=cand.origin_message_ids,
    )


def _kept_record(old: MemoryRecord, kept: str, text: str, now: datetime) -> MemoryRecord:
    """``old`` cut down to the pieces that stay true, as its own current version."""
    return replace(
        old,
        id=kept,
        text=text[:MAX_MEMORY_CHARS],
        created_at=now,
        updated_at=now,
        last_accessed_at=None,
        access_count=0,
        valid_to=None,
        status=MemoryStatus.ACTIVE,
        supersedes=(old.id,),
        superseded_by=None,
    )
