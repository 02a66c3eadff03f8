"""Give an existing agent memory: the state, a graph helper, and a ``create_agent`` middleware.

``add_memory_nodes`` rewires a ``StateGraph`` you already built, before you
compile it::

    before:  START ─▶ agent ⇄ tools          agent ─▶ END
    after:   START ─▶ memory_recall ─▶ agent ⇄ tools
             agent ─▶ memory_extract ─▶ memory_compress ─▶ END

* ``memory_recall`` replaces the edge ``START ─▶ <model_node>`` (recall once per
  turn; the tool loop goes straight back to the model).
* every edge or conditional branch that went to ``END`` (from the model node,
  or from any other node that finishes a turn) now goes through
  ``memory_extract`` (hands the new turns to the ``MemoryWriter``: a durable
  background queue or inline) and then ``memory_compress`` (rolling summary
  once the context passes its trigger) before ``END``. Tool loops are untouched:
  the memory tail runs once, when the turn is over. ``memory_extract`` is only
  added when a ``writer`` is given.

What the model then sees in ``state["messages"]``::

    [your leading SystemMessage(s)] [summary block] [long-term memory block] [turns ...]

Both blocks are system messages with fixed ids, replaced in place every turn.

``MemoryMiddleware`` does the same inside ``langchain.agents.create_agent``:
``before_model`` compresses when over budget and recalls at the start of a turn;
``after_model`` extracts and compresses when the model answers without tool calls.

User and thread ids come from the ``Runtime`` context (``context_schema`` with a
``user_id``) or ``config["configurable"]``; a missing user id raises
``MissingUserIdError``.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from itertools import pairwise
from typing import Any, NotRequired

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableLambda
from langgraph.config import get_config
from langgraph.constants import END, START
from langgraph.graph import MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime

from langgraph_memory._extras import require_extra
from langgraph_memory.clock import Clock
from langgraph_memory.config import check_int
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.nodes._messages import is_memory_message, state_messages
from langgraph_memory.nodes.compress import create_compress_node
from langgraph_memory.nodes.recall import create_recall_node
from langgraph_memory.tokens import TokenCounter

__all__ = [
    "COMPRESS_NODE",
    "EXTRACT_NODE",
    "RECALL_NODE",
    "MemoryAgentState",
    "MemoryMiddleware",
    "MemoryState",
    "add_memory_nodes",
]

RECALL_NODE = "memory_recall"
EXTRACT_NODE = "memory_extract"
COMPRESS_NODE = "memory_compress"


class MemoryState(MessagesState):
    """``MessagesState`` plus what the memory nodes keep between turns.

    ``summary``: rolling summary of evicted turns (``""`` when none).
    ``extracted_through``: id of the last message handed to the memory writer.
    """

    summary: NotRequired[str]
    extracted_through: NotRequired[str | None]


def _node_names(builder: StateGraph[Any, Any, Any, Any]) -> list[str]:
    return sorted(str(n) for n in builder.nodes)


def _map_end(target: str) -> Runnable[Any, Any]:
    def reroute(result: Any) -> Any:
        def one(dest: Any) -> Any:
            return target if isinstance(dest, str) and dest == END else dest

        if isinstance(result, list | tuple):
            return [one(d) for d in result]
        return one(result)

    return RunnableLambda(reroute, name="memory_reroute_end")


def _reroute_end(builder: StateGraph[Any, Any, Any, Any], target: str, ours: set[str]) -> int:
    """Send every path that ended the run to ``target`` instead; returns how many were moved."""
    moved = 0
    for source, end in list(builder.edges):
        if end == END and source not in ours:
            builder.edges.discard((source, end))
            builder.edges.add((source, target))
            moved += 1
    for sources, end in list(builder.waiting_edges):  # add_edge(["a", "b"], END)
        if end == END:
            builder.waiting_edges.discard((sources, end))
            builder.waiting_edges.add((sources, target))
            moved += 1
    for source, branches in builder.branches.items():
        if source in ours:
            continue
        for name, branch in list(branches.items()):
            if branch.ends is not None:
                if END in branch.ends.values():
                    ends: dict[Hashable, str] = {
                        k: (target if v == END else v) for k, v in branch.ends.items()
                    }
                    branches[name] = branch._replace(ends=ends)
                    moved += 1
            else:
                # No path map: the branch may return END itself (tools_condition does).
                branches[name] = branch._replace(path=branch.path | _map_end(target))
                moved += 1
    return moved


def add_memory_nodes(
    builder: StateGraph[Any, Any, Any, Any],
    *,
    model_node: str,
    store: Any = None,
    model_for_summary: BaseChatModel | None = None,
    writer: Any = None,
    max_tokens: int = 8000,
    recall: bool = True,
    compress: bool = True,
    entry_sources: Sequence[str] = (START,),
    recall_options: Mapping[str, Any] | None = None,
    compress_options: Mapping[str, Any] | None = None,
    clock: Clock | None = None,
    token_counter: TokenCounter | None = None,
) -> StateGraph[Any, Any, Any, Any]:
    """Add recall before ``model_node`` and extract + compress at the end of each turn.

    Call it after adding your own nodes and edges and before ``compile()``. Your
    state may be any dict state with ``messages``; the memory keys of
    ``MemoryState`` are added to the graph when missing.

    Args:
        builder: Your uncompiled ``StateGraph``.
        model_node: Name of the node that calls the chat model.
        store: Long-term store for recall (default: the graph's ``compile(store=...)``).
        model_for_summary: Chat model for the rolling summary; ``None`` uses the offline
            extractive summariser.
        writer: A ``MemoryWriter``; adds ``memory_extract``. ``None`` adds no extraction.
        max_tokens: The context budget of your model (drives recall's 30% share and the
            compress trigger).
        recall: Add ``memory_recall``.
        compress: Add ``memory_compress``.
        entry_sources: Recall is inserted on edges from these nodes into ``model_node``.
        recall_options: Extra keyword arguments for ``create_recall_node``.
        compress_options: Extra keyword arguments for ``create_compress_node``.
        clock: "Now" for recall's recency and validity and compress's stamps
            (``langgraph_memory.clock``; default: the store's own clock / the wall clock).
        token_counter: Counts tokens for both nodes' budgets. ``None``: the offline
            estimate calibrated for Chinese and English (``langgraph_memory.tokens``),
            and for compress the summary model's own counter when its class has one.

    Returns:
        The same builder, rewired (for chaining).

    Raises:
        ConfigurationError: ``model_node`` is unknown, a memory node name is taken, or
            no edge from ``entry_sources`` leads into ``model_node``.

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> from langgraph.graph import START, StateGraph
        >>> from langgraph.store.memory import InMemoryStore
        >>> builder = StateGraph(MemoryState)
        >>> _ = builder.add_node("agent", lambda state: {"messages": [AIMessage("hi")]})
        >>> _ = builder.add_edge(START, "agent").add_edge("agent", END)
        >>> graph = add_memory_nodes(builder, model_node="agent").compile(store=InMemoryStore())
        >>> sorted(graph.get_graph().nodes)
        ['__end__', '__start__', 'agent', 'memory_compress', 'memory_recall']
    """
    check_int("add_memory_nodes(max_tokens)", max_tokens, minimum=1)
    if model_node not in builder.nodes:
        raise ConfigurationError(
            f"add_memory_nodes(model_node={model_node!r}): no such node; the graph has "
            f"{_node_names(builder)}. Add your model node first."
        )
    ours = {RECALL_NODE, EXTRACT_NODE, COMPRESS_NODE}
    taken = ours & set(builder.nodes)
    if taken:
        raise ConfigurationError(
            f"add_memory_nodes: node name(s) {sorted(taken)} already exist; call it once per graph."
        )
    if recall:
        entries = [(s, e) for s, e in builder.edges if e == model_node and s in entry_sources]
        if not entries:
            raise ConfigurationError(
                f"add_memory_nodes: no edge from {list(entry_sources)} into {model_node!r} "
                f"(edges: {sorted(builder.edges)}). Add builder.add_edge(START, {model_node!r}) "
                "or pass entry_sources=[<the node before your model>]."
            )
        recall_kwargs = {
            "store": store,
            "prompt_budget_tokens": max_tokens,
            "clock": clock,
            "token_counter": token_counter,
            **(recall_options or {}),
        }
        builder.add_node(RECALL_NODE, create_recall_node(**recall_kwargs), input_schema=MemoryState)
        for source, end in entries:
            builder.edges.discard((source, end))
            builder.add_edge(source, RECALL_NODE)
        builder.add_edge(RECALL_NODE, model_node)

    tail: list[str] = []
    if writer is not None:
        # Imported here: extraction is optional and pulls in the privacy layer.
        from langgraph_memory.nodes.extract import create_extract_node

        builder.add_node(
            EXTRACT_NODE,
            create_extract_node(writer=writer, name=EXTRACT_NODE),
            input_schema=MemoryState,
        )
        tail.append(EXTRACT_NODE)
    if compress:
        compress_kwargs = {
            "model": model_for_summary,
            "max_tokens": max_tokens,
            "writer": writer,
            "store": store,
            "clock": clock,
            "token_counter": token_counter,
            **(compress_options or {}),
        }
        builder.add_node(
            COMPRESS_NODE, create_compress_node(**compress_kwargs), input_schema=MemoryState
        )
        tail.append(COMPRESS_NODE)
    if tail:
        if not _reroute_end(builder, tail[0], ours):
            raise ConfigurationError(
                "add_memory_nodes: nothing in the graph leads to END, so there is no turn end "
                "to extract and compress after. Add an edge (or branch) to END first."
            )
        for before, after in pairwise(tail):
            builder.add_edge(before, after)
        builder.add_edge(tail[-1], END)
    return builder


# --------------------------------------------------------------------------- create_agent

try:  # langchain is an optional extra ("agents")
    from langchain.agents.middleware import AgentMiddleware, AgentState
except ImportError:  # pragma: no cover - exercised only without langchain installed
    AgentMiddleware = None  # type: ignore[assignment,misc]
    AgentState = None  # type: ignore[assignment,misc]


def _apply(state: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """``state`` after ``update`` the way the graph would apply it (messages merged by id)."""
    merged = dict(state)
    for key, value in update.items():
        if key == "messages":
            merged["messages"] = add_messages(list(state.get("messages") or []), value)
        else:
            merged[key] = value
    return merged


def _combine(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    """One update equal to applying ``first`` then ``second``."""
    combined = {**first, **second}
    if "messages" in first and "messages" in second:
        combined["messages"] = [*first["messages"], *second["messages"]]
    return combined


def _conversation(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    return [m for m in messages if not is_memory_message(m)]


if AgentMiddleware is not None:

    class MemoryAgentState(AgentState[Any]):
        """``create_agent`` state plus the memory keys (see ``MemoryState``)."""

        summary: NotRequired[str]
        extracted_through: NotRequired[str | None]

    class MemoryMiddleware(AgentMiddleware[MemoryAgentState, Any, Any]):
        """Recall, compress and extraction for ``langchain.agents.create_agent``.

        Args:
            store: Long-term store (default: the agent's ``store=``).
            writer: A ``MemoryWriter``; ``None`` disables extraction.
            model_for_summary: Chat model for the rolling summary (``None``: extractive).
            max_tokens: The agent model's context budget.
            recall_options: Extra keyword arguments for ``create_recall_node``.
            compress_options: Extra keyword arguments for ``create_compress_node``.

        Example:
            >>> from langchain.agents import create_agent  # doctest: +SKIP
            >>> agent = create_agent(model, tools, middleware=[MemoryMiddleware(writer=w)],
            ...                      store=store, checkpointer=saver)  # doctest: +SKIP
        """

        state_schema = MemoryAgentState

        def __init__(
            self,
            *,
            store: Any = None,
            writer: Any = None,
            model_for_summary: BaseChatModel | None = None,
            max_tokens: int = 8000,
            recall_options: Mapping[str, Any] | None = None,
            compress_options: Mapping[str, Any] | None = None,
        ) -> None:
            super().__init__()
            check_int("MemoryMiddleware(max_tokens)", max_tokens, minimum=1)
            self._recall = create_recall_node(
                store=store, prompt_budget_tokens=max_tokens, **(recall_options or {})
            )
            self._compress = create_compress_node(
                model=model_for_summary,
                max_tokens=max_tokens,
                writer=writer,
                store=store,
                **(compress_options or {}),
            )
            self._extract: Runnable[Any, dict[str, Any]] | None = None
            if writer is not None:
                from langgraph_memory.nodes.extract import create_extract_node

                self._extract = create_extract_node(writer=writer, name="memory_extract")

        @staticmethod
        def _turn_starts(state: Mapping[str, Any]) -> bool:
            conversation = _conversation(state_messages(state))
            return bool(conversation) and isinstance(conversation[-1], HumanMessage)

        @staticmethod
        def _turn_ends(state: Mapping[str, Any]) -> bool:
            conversation = _conversation(state_messages(state))
            last = conversation[-1] if conversation else None
            return isinstance(last, AIMessage) and not last.tool_calls

        def before_model(
            self, state: MemoryAgentState, runtime: Runtime[Any]
        ) -> dict[str, Any] | None:
            config = get_config()
            update = self._compress.invoke(state, config)  # no-op below the trigger
            if self._turn_starts(state):
                after = _apply(state, update)
                update = _combine(update, self._recall.invoke(after, config))
            return update or None

        async def abefore_model(
            self, state: MemoryAgentState, runtime: Runtime[Any]
        ) -> dict[str, Any] | None:
            config = get_config()
            update = await self._compress.ainvoke(state, config)
            if self._turn_starts(state):
                after = _apply(state, update)
                update = _combine(update, await self._recall.ainvoke(after, config))
            return update or None

        def after_model(
            self, state: MemoryAgentState, runtime: Runtime[Any]
        ) -> dict[str, Any] | None:
            if not self._turn_ends(state):
                return None  # mid tool loop: the turn is not over
            config = get_config()
            update: dict[str, Any] = {}
            if self._extract is not None:
                update = self._extract.invoke(state, config)
            update = _combine(update, self._compress.invoke(_apply(state, update), config))
            return update or None

        async def aafter_model(
            self, state: MemoryAgentState, runtime: Runtime[Any]
        ) -> dict[str, Any] | None:
            if not self._turn_ends(state):
                return None
            config = get_config()
            update: dict[str, Any] = {}
            if self._extract is not None:
                update = await self._extract.ainvoke(state, config)
            update = _combine(update, await self._compress.ainvoke(_apply(state, update), config))
            return update or None


def __getattr__(name: str) -> Any:
    # Only reached when langchain is missing (the classes above are then not defined).
    if name in ("MemoryMiddleware", "MemoryAgentState"):
        require_extra("agents", feature=name)
    raise AttributeError(f"module 'langgraph_memory.wiring' has no attribute {name!r}")
