"""``create_recall_node``: the node factory, its settings checks and its sync and async shells.

Both shells run the same pure steps (``plan``, ``finish``: the query, then
``plan_recall`` and ``recall_update``); they differ only in how the searches run
(a worker thread or ``asyncio.gather``) and in handing ``touch`` to the worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from langchain_core.messages import AnyMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda

from langgraph_memory._pools import shared_pool
from langgraph_memory.clock import Clock
from langgraph_memory.clock import now as clock_now
from langgraph_memory.config import ScoringWeights, check_int, check_number
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.nodes._context import resolve_store, resolve_user_id
from langgraph_memory.nodes._messages import state_messages
from langgraph_memory.nodes._profile import DEFAULT_PROFILE_POLICY, ProfilePolicy
from langgraph_memory.nodes.recall._access_stats import _ACCESS_STATS
from langgraph_memory.nodes.recall._message import recall_update
from langgraph_memory.nodes.recall._plan import RECENT_FILL_WINDOW, build_recall_query, plan_recall
from langgraph_memory.nodes.recall._search import (
    DEFAULT_MIN_RELEVANCE,
    _asearch,
    _one_pass_kwargs,
    _one_pass_pool,
    _OnePassRecall,
    _pinned_kwargs,
    _search,
    _search_kwargs,
)
from langgraph_memory.prompts.recall import DEFAULT_RECALL_PROMPT, RecallPrompt
from langgraph_memory.tokens import TokenCounter, default_token_counter
from langgraph_memory.types import MemoryType, ScoredMemory


def create_recall_node(
    *,
    store: Any = None,
    k: int = 8,
    token_budget: int | None = None,
    prompt_budget_tokens: int = 8000,
    max_share: float = 0.3,
    weights: ScoringWeights | None = None,
    min_relevance: float | None = DEFAULT_MIN_RELEVANCE,
    context_messages: int = 1,
    pinned_types: Sequence[MemoryType] = (MemoryType.PROCEDURAL,),
    pinned_k: int = 3,
    profile: ProfilePolicy | None = DEFAULT_PROFILE_POLICY,
    recent_fill: bool = True,
    recent_fill_window: timedelta = RECENT_FILL_WINDOW,
    explain: bool = False,
    update_access_stats: bool = True,
    prompt: RecallPrompt | None = None,
    token_counter: TokenCounter | None = None,
    clock: Clock | None = None,
) -> RunnableLambda[Any, dict[str, Any]]:
    """Create the ``recall`` node (sync and async) for a graph or middleware.

    Each turn injects one block: the user's **core profile** (safety facts such as
    allergies, identity and address form, standing instructions, current values of
    key slots; see ``nodes/_profile.py`` for how a memory qualifies), shown whatever
    the query within its own share of the budget, then the memories most relevant to
    this turn. The message carries ``additional_kwargs["langgraph_memory"] =
    {"memory_ids": [...], "profile_ids": [...], "query": ...}`` (every injected id,
    profile first; the profile subset; the search query), plus ``"explain"`` rows
    with ``explain=True`` (:func:`explain_recall` renders the same as text).

    Args:
        store: A ``LongTermMemory`` store such as ``ChromaMemoryStore`` (or any LangGraph
            ``BaseStore`` holding ``MemoryRecord`` dicts under ``("memories", user_id)``).
            ``None`` uses the graph's store (``compile(store=...)``). A store with
            ``recall_memories`` (``ChromaMemoryStore``) answers the query and the
            profile search in one call; others get two searches.
        k: At most this many query-relevant memories per turn (8; the budget still
            caps the block).
        token_budget: Tokens the memory block may use; defaults to
            ``max_share * prompt_budget_tokens``.
        prompt_budget_tokens: The model's prompt budget (context window you allow).
        max_share: Share of the prompt budget recall may use when ``token_budget`` is
            not given (default 0.3).
        weights: Ranking weights passed to the store's search.
        min_relevance: Drop query results below this relevance (0.05: any real keyword
            or vector overlap; the block is budgeted and the profile bounded, so a weak
            match costs little and a missed fact costs the answer). ``None`` uses the
            store's default (``ScoringWeights.min_relevance``, 0.15).
        context_messages: Earlier human messages added to the query of a short
            follow-up (a latest message under 12 tokens).
        pinned_types: Memory types shown on every turn as standing instructions
            (default procedural: "never use honorifics"), ranked by importance and recency.
        pinned_k: At most this many standing instructions per turn (0 disables them).
        profile: The core profile's policy (share of the budget, item caps,
            thresholds); ``None`` disables the profile (then only standing
            instructions are pinned).
        recent_fill: When the query finds fewer than ``k`` memories, give the free
            places to the user's newest other memories among the profile pass's
            candidates (default on; the offline embeddings miss paraphrases, and the
            budget still caps the block). Needs ``profile``.
        recent_fill_window: How far back from the user's newest memory the fill
            reaches (180 days): older statements are the ones later ones may have
            replaced, so they come back only when the query asks for them.
        explain: Put each candidate's decision (in or out, and why) in the message's
            metadata under ``"explain"``.
        update_access_stats: Call ``store.touch`` for recalled memories, in the background.
        prompt: Override the block's wording (``prompts.recall.RecallPrompt``).
        token_counter: Counts tokens of a message list; ``None`` uses the offline
            estimate calibrated for Chinese and English (``langgraph_memory.tokens``).
        clock: "Now" for recency and validity, passed to the store's search as ``now``
            and to its ``touch`` as ``at`` (``langgraph_memory.clock``); ``None``
            leaves both to the store's own clock.

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
        >>> from langgraph_memory.nodes.recall import recalled_block, recalled_metadata
        >>> store = InMemoryStore()
        >>> store.put(("memories", "u1"), "m1", MemoryRecord("User is vegan", id="m1").to_dict())
        >>> store.put(("memories", "u1"), "m2",
        ...           MemoryRecord("User is allergic to seafood", id="m2", key="allergy").to_dict())
        >>> recall = create_recall_node(store=store)
        >>> update = recall.invoke({"messages": [HumanMessage("vegan dinner ideas?", id="h1")]},
        ...                        {"configurable": {"user_id": "u1"}})
        >>> block = recalled_block(update["messages"])
        >>> "User is vegan" in block, "allergic to seafood" in block
        (True, True)
        >>> recalled_metadata(update["messages"])["profile_ids"]
        ['m2']
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
    if profile is not None and not isinstance(profile, ProfilePolicy):
        raise ConfigurationError(
            f"create_recall_node(profile={profile!r}): pass a ProfilePolicy, or None to "
            "disable the core profile."
        )
    pinned_types = tuple(pinned_types) if pinned_k else ()
    pinned_kwargs = _pinned_kwargs(pinned_k, pinned_types, profile)
    recall_prompt = prompt or DEFAULT_RECALL_PROMPT
    counter = token_counter or default_token_counter()
    search_kwargs = _search_kwargs(k, weights, min_relevance)
    one_pass_kwargs = _one_pass_kwargs(search_kwargs, pinned_k, pinned_types, profile)

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
        messages: list[AnyMessage],
        query: str,
        found: list[ScoredMemory],
        pool: list[ScoredMemory],
    ) -> tuple[dict[str, Any], tuple[str, ...]]:
        packed = plan_recall(
            query,
            found,
            pool,
            budget_tokens=budget,
            profile=profile,
            pinned_types=pinned_types,
            pinned_k=pinned_k,
            fill_k=k if recent_fill else 0,
            fill_window=recent_fill_window,
            now=None if clock is None else clock_now(clock),
            prompt=recall_prompt,
            token_counter=counter,
        )
        return recall_update(messages, packed, query, explain=explain), packed.memory_ids

    def at_now(kwargs: dict[str, Any], name: str = "now") -> dict[str, Any]:
        # Only a given clock is passed: a store without a ``now`` argument keeps working.
        # The touch gets it as ``at``: it runs later on a worker, and is stamped with this
        # turn's time so recency never depends on the worker's delay.
        return kwargs if clock is None else {**kwargs, name: clock_now(clock)}

    def recall(state: Any, config: RunnableConfig) -> dict[str, Any]:
        planned = plan(state, config)
        if planned is None:
            return {}
        target, user_id, query, messages = planned
        if isinstance(target, _OnePassRecall):
            got = target.recall_memories(user_id, query, **at_now(one_pass_kwargs))
            found, pool = list(got.found), _one_pass_pool(got)
        elif pinned_kwargs:
            # The two searches overlap: the store spends most of it in SQLite/Chroma
            # calls that release the GIL.
            pool_future = shared_pool("recall").submit(
                _search, target, user_id, query, **pinned_kwargs
            )
            found = _search(target, user_id, query, **search_kwargs)
            pool = pool_future.result()
        else:
            found, pool = _search(target, user_id, query, **search_kwargs), []
        update, ids = finish(messages, query, found, pool)
        if ids and update_access_stats and hasattr(target, "touch"):
            _ACCESS_STATS.submit(target, user_id, ids, at_now({}, "at"))
        return update

    async def arecall(state: Any, config: RunnableConfig) -> dict[str, Any]:
        planned = plan(state, config)
        if planned is None:
            return {}
        target, user_id, query, messages = planned
        if isinstance(target, _OnePassRecall):
            got = await target.arecall_memories(user_id, query, **at_now(one_pass_kwargs))
            found, pool = list(got.found), _one_pass_pool(got)
        elif pinned_kwargs:
            found, pool = await asyncio.gather(
                _asearch(target, user_id, query, **search_kwargs),
                _asearch(target, user_id, query, **pinned_kwargs),
            )
        else:
            found, pool = await _asearch(target, user_id, query, **search_kwargs), []
        update, ids = finish(messages, query, found, pool)
        if ids and update_access_stats and hasattr(target, "atouch"):
            _ACCESS_STATS.asubmit(target, user_id, ids, at_now({}, "at"))
        return update

    return RunnableLambda(recall, afunc=arecall, name="recall")
