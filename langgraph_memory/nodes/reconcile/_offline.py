"""The deterministic decisions (pure): same key, and the offline rules.

``_keyed_op`` decides a candidate with a key, with or without a model (the slot's
new value supersedes the old, a later value of the batch the earlier one, a forget
request for the slot deletes it); ``_offline_op`` decides what no model does:
near-duplicates are ignored or merged, updates supersede what they retire
(``_stale.py``), forget requests delete what they reach (``_forgetting.py``), the
rest is added.
"""

from __future__ import annotations

from dataclasses import replace

from langgraph_memory.nodes.reconcile._batch import AGENT_GUARD, CandidateContext, result_id_for
from langgraph_memory.nodes.reconcile._forgetting import (
    _forget_topic,
    _left_by_forget,
    _points_back,
    _previous_statement,
    _retraction,
    _said_with,
    _same_turn,
    forget_covers,
    key_matches,
)
from langgraph_memory.nodes.reconcile._similarity import _same_text, text_similarity
from langgraph_memory.nodes.reconcile._stale import (
    _MAX_RETIRED,
    _NEW_HOME,
    _continuations,
    _kept,
    _past,
    _stale_loose,
)
from langgraph_memory.nodes.rules import is_evidence_key
from langgraph_memory.nodes.rules._evidence import topics
from langgraph_memory.nodes.rules._forget import forget_reaches, reach_score
from langgraph_memory.nodes.rules._retire import done, happened, moves_a_value, without_old_value
from langgraph_memory.types import CandidateMemory, MemoryOp, MemorySource, MemoryStatus

# A forget request that reaches nothing outright erases what holds the most of its topic,
# when that is at least one name, noun, kin word, Chinese pair or coarse topic.
_FORGET_FALLBACK_MIN = 1


def _upgrades(cand: CandidateMemory, existing: MemorySource) -> bool:
    """The user now states what was only inferred: the same text, a better source."""
    return cand.source is MemorySource.USER_STATED and existing is MemorySource.AGENT_INFERRED


def _keyed_op(
    index: int,
    ctx: CandidateContext,
    seed: str,
    batch_by_key: dict[str, tuple[str, CandidateMemory]],
) -> MemoryOp | None:
    """Deterministic decision for a candidate with a key, or ``None`` when it needs more."""
    cand = ctx.candidate
    key = cand.key
    if key is None or _points_back(cand):
        return None  # "forget that" is found by time (_offline_op), not by key or words
    if cand.forget and _retraction(key):
        # "aspirin 其实没问题": that one allergy goes, nothing else that names aspirin (the
        # father's aspirin), and with nothing under the key nothing is erased.
        taken_back = tuple(
            r.id for r in ctx.same_key if r.key == key and r.status == MemoryStatus.ACTIVE
        )
        if not taken_back:
            return MemoryOp("ignore", cand, (), f"nothing stored under {key!r} to take back")
        return MemoryOp(
            "delete", cand, taken_back, f"the user took back {key!r}: it was never true"
        )
    if cand.forget:
        # The slot's versions, plus evidence turns on the topic among the neighbours.
        topic = _forget_topic(cand)
        nearby = [s.record for s in ctx.similar if s.record.status != MemoryStatus.DELETED]
        targets = tuple(
            dict.fromkeys(
                [
                    *(
                        r.id
                        for r in (*ctx.same_key, *nearby)
                        if forget_covers(r, key, topic) and r.status != MemoryStatus.DELETED
                    ),
                    *(r.id for r in nearby if forget_reaches(topic, r.text)),
                ]
            )
        )
        targets += tuple(_same_turn(targets, nearby))
        planned = tuple(rid for k, (rid, _) in batch_by_key.items() if key_matches(k, key))
        if not targets and not planned:
            return None  # nothing with that key; similar memories may still match
        for k in [k for k in batch_by_key if key_matches(k, key)]:
            del batch_by_key[k]
        reason = f"user asked to forget key {key!r}"
        if planned:  # an earlier candidate's memory under that key, maybe one it matched
            reason += " (with the versions of this batch)"
        return MemoryOp("delete", cand, targets + planned, reason)
    active = [r for r in ctx.same_key if r.status == MemoryStatus.ACTIVE and r.key == key]
    earlier = batch_by_key.get(key)
    if earlier is not None:  # a later value in the same batch wins over the earlier one
        earlier_id, earlier_cand = earlier
        if _same_text(earlier_cand.text, cand.text) and not _upgrades(cand, earlier_cand.source):
            return MemoryOp(
                "ignore", cand, (earlier_id,), "duplicate of an earlier memory in this batch"
            )
        if (
            cand.source is MemorySource.AGENT_INFERRED
            and earlier_cand.source is MemorySource.USER_STATED
        ):
            return MemoryOp("ignore", cand, (earlier_id,), AGENT_GUARD)
        result_id = result_id_for(seed, index)
        batch_by_key[key] = (result_id, cand)
        return MemoryOp(
            "supersede",
            cand,
            (earlier_id,),
            f"newer value for key {key!r} in this batch",
            result_id,
        )
    if not active:
        return None
    for record in active:
        if _same_text(record.text, cand.text) and not _upgrades(cand, record.source):
            return MemoryOp(
                "ignore", cand, (record.id,), f"same value already stored for key {key!r}"
            )
    if cand.source is MemorySource.AGENT_INFERRED and any(
        r.source is MemorySource.USER_STATED for r in active
    ):
        return MemoryOp(
            "ignore",
            cand,
            tuple(r.id for r in active),
            AGENT_GUARD,
        )
    result_id = result_id_for(seed, index)
    batch_by_key[key] = (result_id, cand)
    details = _continuations(cand, active, [s.record for s in ctx.similar])
    return MemoryOp(
        "supersede",
        cand,
        (*(r.id for r in active), *(r.id for r, _ in details)),
        f"same key {key!r}: new value replaces the old",
        result_id,
        kept=_kept(details),
    )


def _offline_op(
    index: int,
    ctx: CandidateContext,
    seed: str,
    duplicate_threshold: float,
    forget_threshold: float,
) -> MemoryOp:
    """Decision without a model: near-duplicates are ignored or merged, the rest added."""
    cand = ctx.candidate
    active = [s.record for s in ctx.similar if s.record.status == MemoryStatus.ACTIVE]
    if _points_back(cand):
        records = [s.record for s in ctx.similar]
        targets = _previous_statement(cand, records)
        if not targets:
            return MemoryOp("ignore", cand, (), "forget request with nothing said just before it")
        return MemoryOp(
            "delete",
            cand,
            targets + tuple(_same_turn(targets, records)),
            "user asked to forget what they had just said; deleted its memories",
            result_id_for(seed, index),
        )
    if cand.forget:
        topic = _forget_topic(cand)
        active = [s.record for s in ctx.similar if s.record.status != MemoryStatus.DELETED]
        targets = tuple(
            dict.fromkeys(
                [
                    *(r.id for r in active if text_similarity(topic, r.text) >= forget_threshold),
                    *(r.id for r in active if forget_reaches(topic, r.text)),
                ]
            )
        )
        if not targets:
            # Nothing holds enough of the topic ("我姐住哪儿那条" against "我姐叫刘静；住望京那
            # 边"): the user asked to forget something, so what holds the most of it goes.
            scores = {
                r.id: reach_score(topic, r.text) for r in active if r.status == MemoryStatus.ACTIVE
            }
            best = max(scores.values(), default=0)
            if best >= _FORGET_FALLBACK_MIN:
                targets = tuple(i for i, n in scores.items() if n == best)
        targets += _said_with(topic, targets, active)
        reached = [r for r in active if r.id in targets]
        targets += tuple(_same_turn(targets, active))
        if not targets:
            return MemoryOp(
                "ignore", cand, (), "forget request matched no stored memory; nothing deleted"
            )
        return MemoryOp(
            "delete",
            cand,
            targets,
            "user asked to forget; deleted the closely matching memories",
            result_id_for(seed, index),
            kept=_left_by_forget(topic, reached, forget_threshold),
        )
    scored = sorted(((text_similarity(cand.text, r.text), r) for r in active), key=lambda p: -p[0])
    # "I switched to the unlimited plan" retires the raw turn that said "50GB plan":
    # evidence has no key, so the same-key supersede cannot (nodes/rules/_evidence.py).
    stale = _stale_loose(cand, [r for _, r in scored])[:_MAX_RETIRED]
    stale += _continuations(cand, [r for r, kept in stale if not kept], active)
    previous = ctx.previous
    if previous is not None and (_past(previous, cand.observed_at) or happened(previous.text)):
        previous = None  # "the sofa came today, it's torn" is no plan "the 27th instead?" moves
    if not stale and previous is not None and moves_a_value(cand.text) and not topics(cand.text):
        # "Can we do the 6th instead?" right after "a table at Rocco's for the 5th": a
        # change with no subject of its own changes what the user just said.
        stale = _stale_loose(replace(cand, text=f"{cand.text} {previous.text}"), [previous])
    if stale and not (scored and scored[0][0] >= duplicate_threshold):
        ends = [r.expires_at for r, _ in stale]
        # Not once the plan's day has come: "搬好了，新家在莘庄" after "下个月要搬家" reports
        # how it went, and lasts.
        at = cand.observed_at
        came = done(cand.text) or (
            at is not None
            and any(r.event_time is not None and r.event_time <= at for r, _ in stale)
        )
        lasting = came or _NEW_HOME.search(cand.text) is not None
        if cand.expires_at is None and not lasting and all(end is not None for end in ends):
            # "change of plan: we'll stay at my brother's instead" changes a dated
            # plan, and ends when it would have.
            cand = replace(cand, expires_at=max(e for e in ends if e is not None))
        if is_evidence_key(cand.key):
            cand = replace(cand, text=without_old_value(cand.text))
        return MemoryOp(
            "supersede",
            cand,
            tuple(r.id for r, _ in stale),
            "an update: the older raw statements on the same topic are superseded",
            result_id_for(seed, index),
            kept=_kept(stale),
        )
    if scored and scored[0][0] >= duplicate_threshold:
        similarity, record = scored[0]
        upgrade = (
            cand.source is MemorySource.USER_STATED and record.source is MemorySource.AGENT_INFERRED
        )
        if upgrade or cand.importance > record.importance:
            merged = replace(
                cand, key=cand.key or record.key, importance=max(cand.importance, record.importance)
            )
            return MemoryOp(
                "merge",
                merged,
                (record.id,),
                f"near-duplicate (similarity {similarity:.2f}); the newer statement replaces it",
                result_id_for(seed, index),
            )
        return MemoryOp(
            "ignore",
            cand,
            (record.id,),
            f"near-duplicate (similarity {similarity:.2f}) already stored",
        )
    return MemoryOp("add", cand, (), "new information", result_id_for(seed, index))
