"""The model's judgement (pure): what it is asked, how its answer is read, and the guardrails.

One request per batch (``build_judgement_request``: aliases E1, E2 ... for the
memories shown), a validated answer (``parse_judgement``), one op per decision
(``_judged_op``), and the guards every op passes: in-batch references point at
memories actually kept (``_without_phantom_targets``), and an app's own
``ReconcileJudge`` is held to the model's guardrails (``guard_reviewed_ops``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from langgraph_memory.config import PrivacyPolicy
from langgraph_memory.errors import ConfigurationError, RedactionRejectedError
from langgraph_memory.nodes._messages import parse_json_answer, redact_text
from langgraph_memory.nodes.extract import MAX_MEMORY_CHARS
from langgraph_memory.nodes.reconcile._batch import (
    AGENT_GUARD,
    CandidateContext,
    logger,
    result_id_for,
)
from langgraph_memory.privacy import redact_for_log
from langgraph_memory.types import MemoryOp, MemoryRecord, MemorySource, MemoryStatus

# --- the model's judgement --------------------------------------------------------

Label = Literal["contradicts", "updates", "duplicates", "adds", "unrelated"]
_LABEL_SYNONYMS = {
    "contradict": "contradicts", "contradiction": "contradicts", "update": "updates",
    "duplicate": "duplicates", "add": "adds", "new": "adds", "unrelated": "unrelated",
}  # fmt: skip


class Decision(BaseModel):
    """One label of the model's judgement."""

    model_config = ConfigDict(extra="ignore")

    new: int
    label: Label
    targets: list[str] = Field(default_factory=list, max_length=50)
    merged_text: str | None = Field(default=None, max_length=2000)
    reason: str = Field(default="", max_length=2000)

    @field_validator("label", mode="before")
    @classmethod
    def _label(cls, value: Any) -> Any:
        if isinstance(value, str):
            folded = value.strip().lower()
            return _LABEL_SYNONYMS.get(folded, folded)
        return value

    @field_validator("targets", mode="before")
    @classmethod
    def _targets(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        if isinstance(value, list):
            return [str(v) for v in value]
        return value


class Judgement(BaseModel):
    model_config = ConfigDict(extra="ignore")

    decisions: list[Decision] = Field(default_factory=list, max_length=200)


def parse_judgement(text: str) -> Judgement:
    """Parse and validate a reconcile answer. Raises ``ValueError``."""
    value = parse_json_answer(text)
    if isinstance(value, list):
        value = {"decisions": value}
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object with 'decisions', got {type(value).__name__}")
    try:
        return Judgement.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']} (got {e.get('input')!r:.80})"
            for e in exc.errors()[:5]
        )
        raise ValueError(problems) from exc


@dataclass(frozen=True, slots=True)
class JudgementRequest:
    """What the model is asked, with the aliases it may answer with."""

    text: str
    # Candidate number (1-based, as shown) -> batch index.
    numbers: Mapping[int, int]
    # Per batch index: alias or real id -> record, only the memories shown for it.
    allowed: Mapping[int, Mapping[str, MemoryRecord]]


def _when(record: MemoryRecord) -> str:
    return record.valid_from.date().isoformat() if isinstance(record.valid_from, datetime) else "?"


def build_judgement_request(
    contexts: Sequence[CandidateContext], undecided: Sequence[int]
) -> JudgementRequest:
    """Render the undecided candidates and their neighbours; aliases E1, E2 ... per record."""
    alias_of: dict[str, str] = {}
    blocks: list[str] = []
    numbers: dict[int, int] = {}
    allowed: dict[int, dict[str, MemoryRecord]] = {}
    for number, index in enumerate(undecided, start=1):
        ctx = contexts[index]
        cand = ctx.candidate
        numbers[number] = index
        kind = "FORGET REQUEST" if cand.forget else "NEW"
        hint = " - choose the memories it refers to" if cand.forget else ""
        lines = [
            f'{kind} {number} (source: {cand.source.value}, key: {cand.key or "none"}){hint}: "{cand.text}"'
        ]
        shown: dict[str, MemoryRecord] = {}
        for scored in ctx.similar:
            record = scored.record
            if record.status != MemoryStatus.ACTIVE:
                continue
            alias = alias_of.setdefault(record.id, f"E{len(alias_of) + 1}")
            shown[alias] = record
            shown[record.id] = record
            lines.append(
                f'  {alias}: "{record.text}" (key: {record.key or "none"}, source: '
                f"{record.source.value}, since {_when(record)})"
            )
        allowed[index] = shown
        blocks.append("\n".join(lines))
    return JudgementRequest("\n\n".join(blocks), numbers, allowed)


def _safe_text(text: str, policy: PrivacyPolicy | None) -> str | None:
    try:
        cleaned = redact_text(" ".join(text.split()), policy)
    except RedactionRejectedError:
        return None
    return cleaned[:MAX_MEMORY_CHARS] or None


def _judged_op(
    index: int,
    ctx: CandidateContext,
    decision: Decision | None,
    request: JudgementRequest,
    seed: str,
    policy: PrivacyPolicy | None,
) -> MemoryOp:
    """Turn one model decision into a ``MemoryOp``, enforcing every guardrail."""
    cand = ctx.candidate
    new_id = result_id_for(seed, index)
    if decision is None:
        if cand.forget:
            return MemoryOp("ignore", cand, (), "model chose no memory to forget; nothing deleted")
        return MemoryOp("add", cand, (), "model gave no decision; the new fact is kept", new_id)
    shown = request.allowed.get(index, {})
    targets: list[MemoryRecord] = []
    for ref in decision.targets:
        record = shown.get(ref.strip())
        if record is None:
            logger.warning(
                "reconcile: ignoring id %r the model referenced but was not shown",
                redact_for_log(ref, 80),
            )
        elif record not in targets:
            targets.append(record)
    note = f"model: {decision.label}" + (f" ({decision.reason[:200]})" if decision.reason else "")
    if cand.forget:
        if not targets:
            return MemoryOp(
                "ignore", cand, (), note + "; no valid memory to forget, nothing deleted"
            )
        return MemoryOp(
            "delete", cand, tuple(r.id for r in targets), note + "; user asked to forget"
        )
    if decision.label in ("adds", "unrelated") or not targets:
        suffix = (
            ""
            if decision.label in ("adds", "unrelated")
            else "; no valid target, the new fact is kept"
        )
        return MemoryOp("add", cand, (), note + suffix, new_id)
    protected = [r for r in targets if r.source is MemorySource.USER_STATED]
    if cand.source is MemorySource.AGENT_INFERRED and protected:
        # The user's own statement wins over the assistant's inference.
        return MemoryOp(
            "ignore",
            cand,
            tuple(r.id for r in protected),
            f"{note}; {AGENT_GUARD}",
        )
    ids = tuple(r.id for r in targets)
    if decision.label == "duplicates":
        merged_text = _safe_text(decision.merged_text, policy) if decision.merged_text else None
        if merged_text is None:
            return MemoryOp("ignore", cand, ids, note + "; already stored")
        key = cand.key or next((r.key for r in targets if r.key), None)
        importance = max([cand.importance, *(r.importance for r in targets)])
        merged = replace(cand, text=merged_text, key=key, importance=importance)
        return MemoryOp("merge", merged, ids, note + "; merged into one memory", new_id)
    # updates / contradicts: supersede, never a hard delete (history stays, valid_to set).
    return MemoryOp("supersede", cand, ids, note + "; old memory superseded", new_id)


def _without_phantom_targets(ops: list[MemoryOp], seed: str) -> list[MemoryOp]:
    """Point in-batch references at memories that are actually kept.

    A keyed candidate left to the model is provisionally "the current value" of
    its key for later candidates of the batch, and a repeated candidate points
    at its first occurrence. If that earlier candidate is in the end not stored,
    a later op must not point at a memory that never existed: it follows the
    earlier one's duplicate targets, or else the new fact is added.
    """
    provisional = {result_id_for(seed, i): i for i in range(len(ops))}
    kept: set[str] = set()
    # provisional id of an ignored duplicate -> the stored memories it duplicates
    alias: dict[str, tuple[str, ...]] = {}
    out: list[MemoryOp] = []
    for index, op in enumerate(ops):
        targets: list[str] = []
        for target in op.target_ids:
            if target not in provisional or target in kept:
                targets.append(target)
            else:
                targets.extend(alias.get(target, ()))
        targets = list(dict.fromkeys(targets))
        if tuple(targets) != op.target_ids:
            if targets:
                op = replace(op, target_ids=tuple(targets))
            elif op.action == "delete":
                note = "; nothing stored to forget"
                op = replace(op, action="ignore", target_ids=(), reason=op.reason + note)
            elif op.action == "ignore" and op.candidate is not None and op.candidate.forget:
                op = replace(op, target_ids=())
            else:  # supersede/merge/ignore of a value that was not kept: the new fact is added
                note = "; the earlier value in this batch was not kept"
                op = replace(
                    op,
                    action="add",
                    target_ids=(),
                    reason=op.reason + note,
                    result_id=op.result_id or result_id_for(seed, index),
                )
        if op.result_id and op.action in ("add", "supersede", "merge"):
            kept.add(op.result_id)
        elif op.action == "ignore" and op.target_ids and AGENT_GUARD not in op.reason:
            alias[result_id_for(seed, index)] = op.target_ids
        out.append(op)
    return out


@runtime_checkable
class ReconcileJudge(Protocol):
    """The policy seam: an app's own judgement over a batch's planned ops.

    ``review`` gets each candidate's context (the same-key memories and the similar
    ones that were looked up) and the ops the built-in rules (and the model, if any)
    planned, in candidate order, and returns the ops to apply: change an action,
    drop a target, turn an add into an ignore. It runs inside the same guardrails
    as the model (``guard_reviewed_ops``): ids it was not shown are dropped, it
    cannot hard-delete unless the user asked to forget, and an ``agent_inferred``
    candidate never supersedes a ``user_stated`` memory. Keep it pure and fast; it
    runs once per batch.

    Example:
        >>> class NeverForget:
        ...     def review(self, contexts, ops):
        ...         return [replace(op, action="ignore", target_ids=())
        ...                 if op.action == "delete" else op for op in ops]
        >>> isinstance(NeverForget(), ReconcileJudge)
        True
    """

    def review(
        self, contexts: Sequence[CandidateContext], ops: Sequence[MemoryOp]
    ) -> Sequence[MemoryOp]: ...


def guard_reviewed_ops(
    ops: Sequence[MemoryOp], contexts: Sequence[CandidateContext], seed: str
) -> list[MemoryOp]:
    """Hold a judge's ops to the model's guardrails; pure.

    One op per candidate, in order (missing ones are added back as planned
    adds); targets must be memories shown for that candidate or results of this
    batch; only a forget request deletes; ``agent_inferred`` never replaces a
    ``user_stated`` memory (the new fact is added beside it instead).
    """
    if len(ops) != len(contexts):
        raise ConfigurationError(
            f"ReconcileJudge.review returned {len(ops)} ops for {len(contexts)} candidates; "
            "return exactly one op per candidate, in order."
        )
    batch_ids = {result_id_for(seed, i) for i in range(len(contexts))}
    out: list[MemoryOp] = []
    for index, (op, ctx) in enumerate(zip(ops, contexts, strict=True)):
        shown = {r.id: r for r in ctx.same_key} | {s.record.id: s.record for s in ctx.similar}
        targets = tuple(t for t in op.target_ids if t in shown or t in batch_ids)
        cand = ctx.candidate
        if op.action == "delete" and not cand.forget:
            op = replace(op, action="supersede" if targets else "add")
        if cand.source is MemorySource.AGENT_INFERRED and op.action in (
            "add",
            "supersede",
            "merge",
        ):
            # A guess never replaces the user's words: not as a target, and not by taking
            # a slot (same key) the user filled, earlier or in this batch.
            stated = {
                t for t in targets if t in shown and shown[t].source is MemorySource.USER_STATED
            }
            if cand.key:
                stated |= {r.id for r in ctx.same_key if r.source is MemorySource.USER_STATED}
                stated |= {
                    result_id_for(seed, i)
                    for i, earlier in enumerate(contexts[:index])
                    if earlier.candidate.key == cand.key
                    and earlier.candidate.source is MemorySource.USER_STATED
                }
            if stated:
                reason = f"{op.reason}; {AGENT_GUARD}" if op.reason else AGENT_GUARD
                out.append(MemoryOp("ignore", cand, tuple(sorted(stated)), reason))
                continue
        if op.action in ("supersede", "merge") and not targets:
            op = replace(op, action="add")
        if op.action in ("add", "supersede", "merge") and op.result_id is None:
            op = replace(op, result_id=result_id_for(seed, index))
        out.append(replace(op, target_ids=targets, candidate=op.candidate or cand))
    return out
