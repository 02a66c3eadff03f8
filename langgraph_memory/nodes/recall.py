"""``recall``: put the current user's relevant long-term memories in front of the model.

Per turn: build a query from the latest human message (plus a little recent
context), search the user's memories, pack the best ones into a token budget
grouped by kind (profile/facts, events, procedures) with their provenance, and
inject them as one ``SystemMessage`` with a fixed id that replaces the previous
turn's block. Access statistics (``store.touch``) are updated in the
background so they never delay the reply.

The planning (query, packing, rendering, state update) is pure; the sync and
async node functions only run the search and hand ``touch`` to a worker.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import RunnableConfig, RunnableLambda

from langgraph_memory.clock import Clock
from langgraph_memory.clock import now as clock_now
from langgraph_memory.config import ScoringWeights, check_int, check_number
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.nodes._context import resolve_store, resolve_user_id
from langgraph_memory.nodes._messages import (
    latest_human_index,
    message_text,
    state_messages,
    upsert_memory_message,
)
from langgraph_memory.privacy import neutralize_markup
from langgraph_memory.prompts.recall import (
    DEFAULT_RECALL_PROMPT,
    RECALL_MESSAGE_ID,
    RecallPrompt,
)
from langgraph_memory.types import (
    LongTermMemory,
    MemoryRecord,
    MemorySource,
    MemoryStatus,
    MemoryType,
    ScoredMemory,
)

__all__ = [
    "RECALL_MESSAGE_ID",
    "PackedRecall",
    "aflush_access_stats",
    "build_recall_query",
    "create_recall_node",
    "flush_access_stats",
    "pack_memories",
    "render_recall_block",
]

logger = logging.getLogger(__name__)

TokenCounter = Callable[[Iterable[Any]], int]

# Rendered in section order; MemoryType values.
_SECTION_ORDER: tuple[MemoryType, ...] = (
    MemoryType.SEMANTIC,
    MemoryType.EPISODIC,
    MemoryType.PROCEDURAL,
)
# A memory may not open/close our block or start a new section of its own.
_WHITESPACE = re.compile(r"\s+")
# Context from earlier turns helps short follow-ups ("and tonight?"), but too
# much of it dilutes the keyword part of the hybrid search.
_CONTEXT_CHARS_PER_MESSAGE = 160
_QUERY_MAX_CHARS = 1000


# --------------------------------------------------------------------------- pure core


def build_recall_query(messages: Sequence[AnyMessage], *, context_messages: int = 1) -> str | None:
    """The search query for this turn: the latest human message plus a little context.

    The context is the user's own earlier messages (each cut to 160 characters),
    newest first: they make short follow-ups ("and tonight?") searchable, while the
    assistant's words are left out so its guesses do not steer what is recalled.

    Args:
        messages: The conversation so far.
        context_messages: How many earlier human messages to append.

    Returns:
        The query, or ``None`` when there is no human message to answer.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> build_recall_query([HumanMessage("I am planning a trip to Japan"), AIMessage("Nice!"),
        ...                     HumanMessage("what should I eat there?")])
        'what should I eat there? I am planning a trip to Japan'
    """
    index = latest_human_index(messages)
    if index is None:
        return None
    parts = [message_text(messages[index]).strip()]
    earlier = [m for m in messages[:index] if isinstance(m, HumanMessage)]
    for message in reversed(earlier[-context_messages:] if context_messages else []):
        text = message_text(message).strip()
        if text:
            parts.append(text[:_CONTEXT_CHARS_PER_MESSAGE])
    query = " ".join(p for p in parts if p)[:_QUERY_MAX_CHARS]
    return query or None


def _clean_memory_text(text: str) -> str:
    # Look-alike tags (fullwidth, spaced, zero-width joined, entity-encoded) and
    # fake provenance tags are neutralised too (privacy.neutralize_markup).
    return _WHITESPACE.sub(" ", neutralize_markup(text)).strip()


def _memory_date(record: MemoryRecord) -> str:
    moment = record.event_time or record.valid_from or record.created_at
    return moment.date().isoformat()


def render_memory_line(record: MemoryRecord, prompt: RecallPrompt = DEFAULT_RECALL_PROMPT) -> str:
    source = record.source.value if isinstance(record.source, MemorySource) else str(record.source)
    return prompt.line.format(
        text=_clean_memory_text(record.text),
        source=source,
        date=_memory_date(record),
        key=record.key or "",
    )


def render_recall_block(
    records: Sequence[MemoryRecord], prompt: RecallPrompt = DEFAULT_RECALL_PROMPT
) -> str:
    """The text of the recall message: header, then one section per kind that has memories."""
    lines = [prompt.open_tag, prompt.header]
    if not records:
        lines.append("(no stored memories are relevant to this turn)")
    for memory_type in _SECTION_ORDER:
        section = [r for r in records if r.type == memory_type]
        if section:
            lines.append(f"## {prompt.title_for(memory_type.value)}")
            lines.extend(render_memory_line(r, prompt) for r in section)
    lines.append(prompt.close_tag)
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class PackedRecall:
    """What recall will inject: the block text, the memory ids in it, its token count."""

    text: str
    memory_ids: tuple[str, ...]
    tokens: int


def pack_memories(
    scored: Sequence[ScoredMemory],
    *,
    budget_tokens: int,
    pinned: Sequence[ScoredMemory] = (),
    prompt: RecallPrompt = DEFAULT_RECALL_PROMPT,
    token_counter: TokenCounter = count_tokens_approximately,
) -> PackedRecall:
    """Choose the best-scored memories whose rendered block fits ``budget_tokens``.

    ``pinned`` memories (standing instructions) go first, in their order; then the
    rest greedily by score (a lower-scored short memory may still fit after a long one
    was skipped); the block is measured as the ``SystemMessage`` it becomes, so the
    budget holds for what the model actually receives. When not even the header
    fits, the block says there are no memories.

    Example:
        >>> from langgraph_memory.types import MemoryRecord, ScoredMemory
        >>> packed = pack_memories([ScoredMemory(MemoryRecord("User is vegan"), 0.9)],
        ...                        budget_tokens=200)
        >>> "User is vegan" in packed.text, packed.tokens <= 200
        (True, True)
    """

    def measure(records: list[MemoryRecord]) -> tuple[str, int]:
        text = render_recall_block(records, prompt)
        return text, token_counter([SystemMessage(content=text)])

    ranked = [*pinned, *sorted(scored, key=lambda s: s.score, reverse=True)]
    chosen: list[MemoryRecord] = []
    seen_ids: set[str] = set()
    for item in ranked:
        record = item.record
        if record.id in seen_ids or not _clean_memory_text(record.text):
            continue
        _, tokens = measure([*chosen, record])
        if tokens <= budget_tokens:
            chosen.append(record)
            seen_ids.add(record.id)
    text, tokens = measure(chosen)
    return PackedRecall(text=text, memory_ids=tuple(r.id for r in chosen), tokens=tokens)


def recall_update(messages: Sequence[AnyMessage], packed: PackedRecall) -> dict[str, Any]:
    """The state update that installs this turn's block (replacing the previous one)."""
    message = SystemMessage(content=packed.text, id=RECALL_MESSAGE_ID)
    for existing in messages:
        if existing.id == RECALL_MESSAGE_ID and existing.content == message.content:
            return {}  # unchanged: no write, no checkpoint churn
    return {"messages": upsert_memory_message(messages, message)}


# --------------------------------------------------------------------------- store access


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


# Standing instructions are recalled whatever the query: ranked by importance and
# recency, with no relevance gate (an instruction about honorifics matters for a
# question about the weather).
_PINNED_WEIGHTS = ScoringWeights(relevance=0.2, recency=0.2, importance=0.6, min_relevance=0.0)


def _pinned_kwargs(limit: int, types: Sequence[MemoryType]) -> dict[str, Any]:
    return {"limit": limit, "types": list(types), "min_relevance": 0.0, "weights": _PINNED_WEIGHTS}


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


def _one_pass_kwargs(search: dict[str, Any], pinned: dict[str, Any] | None) -> dict[str, Any]:
    """``recall_memories`` arguments equivalent to the two searches' keyword arguments."""
    kwargs = dict(search)
    if pinned:
        kwargs.update(
            pinned_types=pinned["types"],
            pinned_limit=pinned["limit"],
            pinned_weights=pinned["weights"],
        )
    return kwargs


_SEARCH_POOL: ThreadPoolExecutor | None = None
_SEARCH_POOL_LOCK = threading.Lock()


def _search_pool() -> ThreadPoolExecutor:
    global _SEARCH_POOL
    with _SEARCH_POOL_LOCK:
        if _SEARCH_POOL is None:
            _SEARCH_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="lgm-recall")
        return _SEARCH_POOL


class _AccessStatsWorker:
    """Runs ``store.touch`` off the reply path; failures are logged, never raised.

    One worker thread serialises touches (they are cheap, small writes), and
    async touches are tasks kept referenced until done so they are not
    garbage-collected mid-flight.
    """

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._futures: set[Future[None]] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def submit(self, store: Any, user_id: str, ids: Sequence[str]) -> None:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lgm-touch")
            future = self._executor.submit(self._touch, store, user_id, tuple(ids))
            self._futures.add(future)
        future.add_done_callback(self._futures.discard)

    @staticmethod
    def _touch(store: Any, user_id: str, ids: tuple[str, ...]) -> None:
        try:
            store.touch(user_id, ids)
        except Exception:  # access stats are best effort; the reply must not fail
            logger.warning("recall: store.touch failed for %d memories", len(ids), exc_info=True)

    def asubmit(self, store: Any, user_id: str, ids: Sequence[str]) -> None:
        async def touch() -> None:
            try:
                await store.atouch(user_id, tuple(ids))
            except Exception:
                logger.warning(
                    "recall: store.atouch failed for %d memories", len(ids), exc_info=True
                )

        task = asyncio.get_running_loop().create_task(touch())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def flush(self, timeout: float | None = 10.0) -> None:
        with self._lock:
            pending = list(self._futures)
        for future in pending:
            future.result(timeout=timeout)

    async def aflush(self) -> None:
        pending = [t for t in self._tasks if not t.done()]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        await asyncio.to_thread(self.flush)


_ACCESS_STATS = _AccessStatsWorker()


def flush_access_stats(timeout: float | None = 10.0) -> None:
    """Wait until every background ``touch`` started by recall has finished.

    Useful before closing a store or at the end of a test; the reply never waits on it.
    """
    _ACCESS_STATS.flush(timeout)


async def aflush_access_stats() -> None:
    """Async twin of ``flush_access_stats`` (also waits for ``atouch`` tasks)."""
    await _ACCESS_STATS.aflush()


# --------------------------------------------------------------------------- the node


def create_recall_node(
    *,
    store: Any = None,
    k: int = 5,
    token_budget: int | None = None,
    prompt_budget_tokens: int = 8000,
    max_share: float = 0.3,
    weights: ScoringWeights | None = None,
    min_relevance: float | None = None,
    context_messages: int = 1,
    pinned_types: Sequence[MemoryType] = (MemoryType.PROCEDURAL,),
    pinned_k: int = 3,
    update_access_stats: bool = True,
    prompt: RecallPrompt | None = None,
    token_counter: TokenCounter = count_tokens_approximately,
    clock: Clock | None = None,
) -> RunnableLambda[Any, dict[str, Any]]:
    """Create the ``recall`` node (sync and async) for a graph or middleware.

    Args:
        store: A ``LongTermMemory`` store such as ``ChromaMemoryStore`` (or any LangGraph
            ``BaseStore`` holding ``MemoryRecord`` dicts under ``("memories", user_id)``).
            ``None`` uses the graph's store (``compile(store=...)``). A store with
            ``recall_memories`` (``ChromaMemoryStore``) answers the query and the pinned
            search in one call; others get two searches.
        k: At most this many memories are retrieved per turn.
        token_budget: Tokens the memory block may use; defaults to
            ``max_share * prompt_budget_tokens``.
        prompt_budget_tokens: The model's prompt budget (context window you allow).
        max_share: Share of the prompt budget recall may use when ``token_budget`` is
            not given (default 0.3).
        weights: Ranking weights passed to the store's search.
        min_relevance: Drop memories below this relevance (store default when ``None``).
        context_messages: Earlier human messages added to the query for short follow-ups.
        pinned_types: Memory types recalled on every turn whatever the query (standing
            instructions such as "never use honorifics"); ranked by importance and recency.
        pinned_k: At most this many pinned memories per turn (0 disables pinning).
        update_access_stats: Call ``store.touch`` for recalled memories, in the background.
        prompt: Override the block's wording (``prompts.recall.RecallPrompt``).
        token_counter: Counts tokens of a message list (offline approximate by default).
        clock: "Now" for recency and validity, passed to the store's search as ``now``
            (``langgraph_memory.clock``); ``None`` leaves it to the store's own clock.

    Returns:
        A ``RunnableLambda`` named ``recall`` returning a state update
        (``{"messages": [...]}``, or ``{}`` when nothing changes).

    Raises:
        ConfigurationError: A budget, share or ``k`` out of range.
        MissingUserIdError: At run time, when the run has no user id.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langgraph_memory.types import MemoryRecord
        >>> store = InMemoryStore()
        >>> store.put(("memories", "u1"), "m1", MemoryRecord("User is vegan").to_dict())
        >>> recall = create_recall_node(store=store)
        >>> update = recall.invoke({"messages": [HumanMessage("dinner ideas?", id="h1")]},
        ...                        {"configurable": {"user_id": "u1"}})
        >>> "User is vegan" in recalled_block(update["messages"])
        True
    """
    for arg, value, optional in (
        ("k", k, False),
        ("token_budget", token_budget, True),
        ("prompt_budget_tokens", prompt_budget_tokens, False),
        ("context_messages", context_messages, False),
        ("pinned_k", pinned_k, False),
    ):
        check_int(f"create_recall_node({arg})", value, optional=optional)
    check_number("create_recall_node(max_share)", max_share)
    check_number("create_recall_node(min_relevance)", min_relevance, optional=True)
    if k < 1:
        raise ConfigurationError(f"create_recall_node(k={k!r}): use an integer >= 1.")
    if not 0 < max_share <= 1:
        raise ConfigurationError(
            f"create_recall_node(max_share={max_share!r}): use a share in (0, 1]; 0.3 is the default."
        )
    if prompt_budget_tokens < 1:
        raise ConfigurationError(
            f"create_recall_node(prompt_budget_tokens={prompt_budget_tokens!r}): use tokens >= 1."
        )
    budget = int(prompt_budget_tokens * max_share) if token_budget is None else token_budget
    if budget < 1:
        raise ConfigurationError(
            f"create_recall_node(token_budget={budget!r}): the memory block needs at least 1 "
            "token; raise token_budget or prompt_budget_tokens."
        )
    if context_messages < 0:
        raise ConfigurationError(
            f"create_recall_node(context_messages={context_messages!r}): use an integer >= 0."
        )
    if pinned_k < 0:
        raise ConfigurationError(
            f"create_recall_node(pinned_k={pinned_k!r}): use an integer >= 0 (0 disables pinning)."
        )
    pinned_kwargs = _pinned_kwargs(pinned_k, pinned_types) if pinned_k and pinned_types else None
    recall_prompt = prompt or DEFAULT_RECALL_PROMPT
    search_kwargs = _search_kwargs(k, weights, min_relevance)
    one_pass_kwargs = _one_pass_kwargs(search_kwargs, pinned_kwargs)

    def plan(
        state: Any, config: RunnableConfig | None
    ) -> tuple[Any, str, str, list[AnyMessage]] | None:
        messages = state_messages(state)
        query = build_recall_query(messages, context_messages=context_messages)
        user_id = resolve_user_id(config)  # fail closed even when there is nothing to recall
        if query is None:
            return None
        target = resolve_store(store, config)
        if target is None:
            raise ConfigurationError(
                "recall has no store: pass create_recall_node(store=...) or compile the "
                "graph with compile(store=...)."
            )
        return target, user_id, query, messages

    def finish(
        messages: list[AnyMessage], found: list[ScoredMemory], pinned: list[ScoredMemory]
    ) -> tuple[dict[str, Any], tuple[str, ...]]:
        packed = pack_memories(
            found,
            pinned=pinned,
            budget_tokens=budget,
            prompt=recall_prompt,
            token_counter=token_counter,
        )
        return recall_update(messages, packed), packed.memory_ids

    def at_now(kwargs: dict[str, Any]) -> dict[str, Any]:
        # Only a given clock is passed: a store without a ``now`` argument keeps working.
        return kwargs if clock is None else {**kwargs, "now": clock_now(clock)}

    def recall(state: Any, config: RunnableConfig) -> dict[str, Any]:
        planned = plan(state, config)
        if planned is None:
            return {}
        target, user_id, query, messages = planned
        if isinstance(target, _OnePassRecall):
            got = target.recall_memories(user_id, query, **at_now(one_pass_kwargs))
            found, pinned = list(got.found), list(got.pinned)
        elif pinned_kwargs:
            # The two searches overlap: the store spends most of it in SQLite/Chroma
            # calls that release the GIL.
            pinned_future = _search_pool().submit(_search, target, user_id, query, **pinned_kwargs)
            found = _search(target, user_id, query, **search_kwargs)
            pinned = pinned_future.result()
        else:
            found, pinned = _search(target, user_id, query, **search_kwargs), []
        update, ids = finish(messages, found, pinned)
        if ids and update_access_stats and hasattr(target, "touch"):
            _ACCESS_STATS.submit(target, user_id, ids)
        return update

    async def arecall(state: Any, config: RunnableConfig) -> dict[str, Any]:
        planned = plan(state, config)
        if planned is None:
            return {}
        target, user_id, query, messages = planned
        if isinstance(target, _OnePassRecall):
            got = await target.arecall_memories(user_id, query, **at_now(one_pass_kwargs))
            found, pinned = list(got.found), list(got.pinned)
        elif pinned_kwargs:
            found, pinned = await asyncio.gather(
                _asearch(target, user_id, query, **search_kwargs),
                _asearch(target, user_id, query, **pinned_kwargs),
            )
        else:
            found, pinned = await _asearch(target, user_id, query, **search_kwargs), []
        update, ids = finish(messages, found, pinned)
        if ids and update_access_stats and hasattr(target, "atouch"):
            _ACCESS_STATS.asubmit(target, user_id, ids)
        return update

    return RunnableLambda(recall, afunc=arecall, name="recall")


def recalled_block(messages: Sequence[BaseMessage]) -> str | None:
    """The current recall block in a message list, if any (handy in tests and demos)."""
    for message in messages:
        if message.id == RECALL_MESSAGE_ID:
            return message_text(message)
    return None
