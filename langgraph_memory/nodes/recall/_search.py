"""Store access: the searches a turn makes, on a ``LongTermMemory`` or any LangGraph ``BaseStore``.

The query search (``_search_kwargs``), the profile search (``_pinned_kwargs``,
no relevance gate), their sync and async runners (``_search``, ``_asearch``), and
the one-pass call of a store with ``recall_memories`` (``_OnePassRecall``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from langgraph_memory.config import ScoringWeights
from langgraph_memory.nodes._profile import ProfilePolicy
from langgraph_memory.types import (
    LongTermMemory,
    MemoryRecord,
    MemoryStatus,
    MemoryType,
    ScoredMemory,
)


def _item_to_scored(item: Any, user_id: str) -> ScoredMemory | None:
    value = getattr(item, "value", None)
    if not isinstance(value, dict):
        return None
    if "text" in value:
        record = MemoryRecord.from_dict({"user_id": user_id, "id": item.key, **value})
    elif isinstance(value.get("content"), str):
        record = MemoryRecord(text=value["content"], id=str(item.key), user_id=user_id)
    else:
        return None
    if record.status != MemoryStatus.ACTIVE:
        return None
    return ScoredMemory(record=record, score=float(getattr(item, "score", None) or 0.0))


def _search_kwargs(
    limit: int, weights: ScoringWeights | None, min_relevance: float | None
) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"limit": limit}
    if weights is not None:
        kwargs["weights"] = weights
    if min_relevance is not None:
        kwargs["min_relevance"] = min_relevance
    return kwargs


# Recall's own relevance gate (see create_recall_node's ``min_relevance``). On the
# planted-fact exam's true-facts-seeded run the store default 0.15 with k=5 found 84%
# of the needed facts; 0.05 with k=8 and the profile, 96%, with no more false recall.
DEFAULT_MIN_RELEVANCE = 0.05

# The profile and standing instructions are recalled whatever the query: ranked by
# importance (and a little recency) with no relevance gate (an allergy matters for a
# question about dinner, an instruction about honorifics for one about the weather).
# With relevance at 0 the boosts are used as given (scoring.boost_scale).
_PROFILE_WEIGHTS = ScoringWeights(relevance=0.0, recency=0.1, importance=0.9, min_relevance=0.0)


def _pinned_kwargs(
    pinned_k: int, pinned_types: Sequence[MemoryType], profile: ProfilePolicy | None
) -> dict[str, Any] | None:
    """The profile search: every type when the profile is on, else the pinned types."""
    types = list(MemoryType) if profile is not None else list(pinned_types)
    limit = max(pinned_k if pinned_types else 0, profile.pool if profile is not None else 0)
    if not types or not limit:
        return None
    return {"limit": limit, "types": types, "min_relevance": 0.0, "weights": _PROFILE_WEIGHTS}


def _base_store_searches(query: str, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    """Keyword arguments of ``BaseStore.search`` calls equivalent to one memory search."""
    types = kwargs.get("types")
    if not types:
        return [{"query": query, "limit": kwargs["limit"]}]
    return [{"filter": {"type": t.value}, "limit": kwargs["limit"]} for t in types]


def _search(store: Any, user_id: str, query: str, **kwargs: Any) -> list[ScoredMemory]:
    if isinstance(store, LongTermMemory):
        return list(store.search_memories(user_id, query, **kwargs))
    # Any other LangGraph BaseStore: memories as MemoryRecord dicts in ("memories", user).
    found = []
    for call in _base_store_searches(query, kwargs):
        items = store.search(("memories", user_id), **call)
        found += [s for item in items if (s := _item_to_scored(item, user_id))]
    return found


async def _asearch(store: Any, user_id: str, query: str, **kwargs: Any) -> list[ScoredMemory]:
    if isinstance(store, LongTermMemory):
        return list(await store.asearch_memories(user_id, query, **kwargs))
    found = []
    for call in _base_store_searches(query, kwargs):
        items = await store.asearch(("memories", user_id), **call)
        found += [s for item in items if (s := _item_to_scored(item, user_id))]
    return found


@runtime_checkable
class _OnePassRecall(Protocol):
    """A store that answers a turn's query and pinned searches in one pass
    (``ChromaMemoryStore.recall_memories``): one query embedding, one term plan,
    one cosine pass, no second thread."""

    def recall_memories(self, user_id: str, query: str, **kwargs: Any) -> Any: ...
    async def arecall_memories(self, user_id: str, query: str, **kwargs: Any) -> Any: ...


def _one_pass_kwargs(
    search: dict[str, Any],
    pinned_k: int,
    pinned_types: Sequence[MemoryType],
    profile: ProfilePolicy | None,
) -> dict[str, Any]:
    """``recall_memories`` arguments: the query search, the standing instructions
    (pinned search) and, with a profile, the store's profile pass (``profile_limit``:
    candidates by importance straight from the catalog, whatever the query)."""
    kwargs = dict(search)
    if pinned_k and pinned_types:
        kwargs.update(
            pinned_types=list(pinned_types),
            pinned_limit=pinned_k,
            pinned_weights=_PROFILE_WEIGHTS,
        )
    if profile is not None:
        kwargs["profile_limit"] = profile.pool
    return kwargs


def _one_pass_pool(got: Any) -> list[ScoredMemory]:
    """Profile candidates of a one-pass answer: the profile pass, then the pinned ones."""
    profile = [ScoredMemory(record, 0.0) for record in getattr(got, "profile", ())]
    return [*profile, *got.pinned]
