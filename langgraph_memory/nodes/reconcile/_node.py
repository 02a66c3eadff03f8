"""The reconcile graph node: ``create_reconcile_node`` around a ``Reconciler``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig, RunnableLambda

from langgraph_memory.config import PrivacyPolicy
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.nodes._context import resolve_store, resolve_thread_id, resolve_user_id
from langgraph_memory.nodes.reconcile._batch import candidate_from_dict
from langgraph_memory.nodes.reconcile._reconciler import Reconciler
from langgraph_memory.types import CandidateMemory, LongTermMemory

# --- the graph node --------------------------------------------------------------


def _as_candidate(value: Any) -> CandidateMemory:
    if isinstance(value, CandidateMemory):
        return value
    if isinstance(value, Mapping) and "text" in value:
        return candidate_from_dict(value)
    raise ConfigurationError(
        f"reconcile node: {value!r:.80} is not a CandidateMemory or a dict with 'text'; "
        "put CandidateMemory objects in the candidates state key."
    )


def create_reconcile_node(
    *,
    store: LongTermMemory | None = None,
    model: BaseChatModel | None = None,
    queue: Any = None,
    candidates_key: str = "memory_candidates",
    ops_key: str = "memory_ops",
    policy: PrivacyPolicy | None = None,
    name: str = "reconcile",
) -> RunnableLambda[Any, dict[str, Any]]:
    """A standalone reconcile node for graphs that want extract and reconcile as explicit nodes.

    Reads ``state[candidates_key]`` (``CandidateMemory`` objects or their dicts),
    reconciles them for the current user against ``store`` (or the graph's
    store), records the ops in ``queue``'s audit log when given, and returns
    ``{candidates_key: [], ops_key: [MemoryOp, ...]}``.

    Raises:
        MissingUserIdError: No user id in the Runtime context or ``configurable``.
        ConfigurationError: No store given and none compiled into the graph.

    Example:
        >>> node = create_reconcile_node(store=store)  # doctest: +SKIP
    """

    def _setup(
        state: Any, config: RunnableConfig | None
    ) -> tuple[Reconciler, str, str | None, list[CandidateMemory]]:
        user_id = resolve_user_id(config)
        the_store = resolve_store(store, config)
        if the_store is None:
            raise ConfigurationError(
                "reconcile node: no long-term store; pass create_reconcile_node(store=...) "
                "or compile the graph with store=..."
            )
        raw = (
            state.get(candidates_key)
            if isinstance(state, Mapping)
            else getattr(state, candidates_key, None)
        )
        candidates = [_as_candidate(v) for v in (raw or [])]
        return (
            Reconciler(the_store, model=model, policy=policy),
            user_id,
            resolve_thread_id(config),
            candidates,
        )

    def reconcile_sync(state: Any, config: RunnableConfig) -> dict[str, Any]:
        reconciler, user_id, thread_id, candidates = _setup(state, config)
        if not candidates:
            return {}
        ops = reconciler.reconcile(user_id, candidates, thread_id=thread_id)
        if queue is not None:
            queue.record_audit(user_id, thread_id, ops)
        return {candidates_key: [], ops_key: ops}

    async def reconcile_async(state: Any, config: RunnableConfig) -> dict[str, Any]:
        reconciler, user_id, thread_id, candidates = _setup(state, config)
        if not candidates:
            return {}
        ops = await reconciler.areconcile(user_id, candidates, thread_id=thread_id)
        if queue is not None:
            await queue.arecord_audit(user_id, thread_id, ops)
        return {candidates_key: [], ops_key: ops}

    return RunnableLambda(reconcile_sync, afunc=reconcile_async, name=name)
