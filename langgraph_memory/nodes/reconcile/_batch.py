"""What every step of reconcile shares: a candidate in its context, and a batch's ids.

Result ids are derived from a seed (the queue's job key), so a re-run plans the
same ids; the queue persists plans as dicts (the 0.1 names below).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langgraph_memory.types import CandidateMemory, MemoryOp, MemoryRecord, ScoredMemory

# The package's one logger, under the name it had as one module (apps and tests
# filter on it): the judgement, the plan and the reconciler log through it.
logger = logging.getLogger("langgraph_memory.nodes.reconcile")


# The reason of an op rejected by the provenance guardrail (not a duplicate:
# later ops of the batch must not treat the rejected memory as stored).
AGENT_GUARD = "agent_inferred never supersedes user_stated"

_ID_NAMESPACE = uuid.UUID("6f1d3c52-8f0e-4c7e-9a57-2f4a4b3c9e10")


# --- serialisation (the queue persists plans) ------------------------------------


def candidate_to_dict(candidate: CandidateMemory) -> dict[str, Any]:
    """``candidate.to_dict()`` (kept for callers of the 0.1 name)."""
    return candidate.to_dict()


def candidate_from_dict(data: Mapping[str, Any]) -> CandidateMemory:
    """``CandidateMemory.from_dict(data)`` (kept for callers of the 0.1 name)."""
    return CandidateMemory.from_dict(data)


def op_to_dict(op: MemoryOp) -> dict[str, Any]:
    """``op.to_dict()`` (kept for callers of the 0.1 name)."""
    return op.to_dict()


def op_from_dict(data: Mapping[str, Any]) -> MemoryOp:
    """``MemoryOp.from_dict(data)`` (kept for callers of the 0.1 name)."""
    return MemoryOp.from_dict(data)


@dataclass(frozen=True, slots=True)
class CandidateContext:
    """One candidate with what the store holds near it."""

    candidate: CandidateMemory
    # Active memories with the same key; for a forget request every version with
    # a matching key, history included.
    same_key: tuple[MemoryRecord, ...] = ()
    similar: tuple[ScoredMemory, ...] = ()
    # The plan or statement of the user's previous message in this batch, which a bare
    # change ("can we do the 6th instead?") refers to.
    previous: MemoryRecord | None = None


def result_id_for(seed: str, index: int) -> str:
    """Deterministic id of the memory candidate ``index`` of a batch creates."""
    return uuid.uuid5(_ID_NAMESPACE, f"{seed}:{index}").hex


def kept_id(result_id: str, target_id: str) -> str:
    """Deterministic id of what stays true of ``target_id`` after the op ``result_id``."""
    return uuid.uuid5(_ID_NAMESPACE, f"{result_id}:kept:{target_id}").hex
