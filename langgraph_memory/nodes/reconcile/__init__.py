"""Reconcile: decide how each candidate memory meets what the user's memory already holds.

Three steps, each kept apart so the decisions are testable without a store:

1. gather (I/O): for each candidate, the same user's active memories with the
   same key, and the most similar memories (``store.search_memories``);
2. plan (pure): same key -> a deterministic supersede; everything else is
   decided by ONE model judgement per batch (labels ``contradicts``,
   ``updates``, ``duplicates``, ``adds``, ``unrelated``) filtered through
   guardrails, or - without a model - by offline rules (near-duplicate by text
   similarity -> ignore/merge, else add). Result ids are derived from a seed
   (the queue's job key), so a re-run plans the same ids;
3. apply (I/O): each ``MemoryOp`` is applied idempotently (an op whose result
   already exists is skipped), so a batch interrupted half-way and run again
   applies nothing twice.

Guardrails on the model's judgement: referenced ids must be among the memories
shown for that candidate (invented ids and other users' ids are ignored and
logged); a contradiction supersedes and never hard-deletes; the new fact always
survives unless a valid duplicate already holds it; ``agent_inferred`` never
supersedes ``user_stated``; only an explicit "forget" request deletes.

The package, one module per responsibility (each imports only the ones above it):

- ``_batch.py``: a candidate in its context (``CandidateContext``), the ids a batch
  derives from its seed (``result_id_for``, ``kept_id``), the 0.1 dict helpers;
- ``_similarity.py``: ``text_similarity`` (bigram Dice; numbers must agree);
- ``_stale.py``: what an update retires without a model (``_stale_loose`` ...);
- ``_forgetting.py``: what a forget request reaches, and what it leaves;
- ``_offline.py``: the deterministic decisions (``_keyed_op``, ``_offline_op``);
- ``_judgement.py``: the model's judgement (``Decision``, ``parse_judgement``,
  ``build_judgement_request``, ``_judged_op``) and the guards
  (``guard_reviewed_ops``, ``_without_phantom_targets``, the ``ReconcileJudge`` seam);
- ``_plan.py``: ``first_pass``, ``needs_model``, ``plan_ops`` and the records ops create;
- ``_reconciler.py``: ``Reconciler``, the I/O shells (gather, plan, apply);
- ``_node.py``: ``create_reconcile_node``.
"""

# ``X as X``: re-exported for the callers and tests that import it from here, beyond
# ``__all__`` (the public names), as mypy's no-implicit-reexport asks.
from langgraph_memory.nodes.reconcile._batch import AGENT_GUARD as AGENT_GUARD
from langgraph_memory.nodes.reconcile._batch import (
    CandidateContext,
    candidate_from_dict,
    candidate_to_dict,
    op_from_dict,
    op_to_dict,
)
from langgraph_memory.nodes.reconcile._batch import kept_id as kept_id
from langgraph_memory.nodes.reconcile._batch import logger as logger
from langgraph_memory.nodes.reconcile._batch import result_id_for as result_id_for
from langgraph_memory.nodes.reconcile._forgetting import forget_covers as forget_covers
from langgraph_memory.nodes.reconcile._forgetting import key_matches as key_matches
from langgraph_memory.nodes.reconcile._judgement import Decision as Decision
from langgraph_memory.nodes.reconcile._judgement import Judgement as Judgement
from langgraph_memory.nodes.reconcile._judgement import JudgementRequest as JudgementRequest
from langgraph_memory.nodes.reconcile._judgement import Label as Label
from langgraph_memory.nodes.reconcile._judgement import ReconcileJudge
from langgraph_memory.nodes.reconcile._judgement import (
    build_judgement_request as build_judgement_request,
)
from langgraph_memory.nodes.reconcile._judgement import guard_reviewed_ops as guard_reviewed_ops
from langgraph_memory.nodes.reconcile._judgement import parse_judgement as parse_judgement
from langgraph_memory.nodes.reconcile._node import create_reconcile_node
from langgraph_memory.nodes.reconcile._plan import first_pass as first_pass
from langgraph_memory.nodes.reconcile._plan import needs_model as needs_model
from langgraph_memory.nodes.reconcile._plan import plan_ops
from langgraph_memory.nodes.reconcile._plan import record_for as record_for
from langgraph_memory.nodes.reconcile._reconciler import Reconciler
from langgraph_memory.nodes.reconcile._reconciler import default_seed as default_seed
from langgraph_memory.nodes.reconcile._similarity import text_similarity
from langgraph_memory.prompts.reconcile import ReconcilePrompts

__all__ = [
    "CandidateContext",
    "ReconcileJudge",
    "ReconcilePrompts",
    "Reconciler",
    "candidate_from_dict",
    "candidate_to_dict",
    "create_reconcile_node",
    "op_from_dict",
    "op_to_dict",
    "plan_ops",
    "text_similarity",
]
