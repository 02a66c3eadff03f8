"""forget_user finds a user's threads by owner: a thread whose user id came only from the
Runtime ``context=`` (nothing in its checkpoint metadata) is deleted with the user."""

from __future__ import annotations

import asyncio
import operator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langgraph.graph import START, StateGraph

from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.session import AsyncSqliteSaver, SqliteSaver


@dataclass
class Ctx:
    user_id: str


class State(TypedDict):
    notes: Annotated[list[str], operator.add]


def _graph(saver: Any) -> Any:
    builder = StateGraph(State, context_schema=Ctx)
    builder.add_node("echo", lambda s: {"notes": ["seafood allergy noted"]})
    builder.add_edge(START, "echo")
    return builder.compile(checkpointer=saver)


def test_forget_user_deletes_threads_named_only_by_the_runtime_context(tmp_path: Path) -> None:
    store = ChromaMemoryStore.embedded(tmp_path / "ltm", embeddings=HashingEmbeddings())
    with SqliteSaver.from_conn_string(str(tmp_path / "state.db")) as saver:
        graph = _graph(saver)
        for thread, user in (("t-alice", "alice"), ("t-bob", "bob")):
            graph.invoke({"notes": []}, {"configurable": {"thread_id": thread}}, context=Ctx(user))
        assert saver.threads_of_user("alice") == ["t-alice"]
        receipt = store.forget_user("alice", checkpointer=saver)
        assert receipt.threads_deleted == 1
        assert saver.get_tuple({"configurable": {"thread_id": "t-alice"}}) is None
        assert saver.get_tuple({"configurable": {"thread_id": "t-bob"}}) is not None
    store.close()


def test_aforget_user_finds_owned_threads_too(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = ChromaMemoryStore.embedded(tmp_path / "ltm", embeddings=HashingEmbeddings())
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "state.db")) as saver:
            graph = _graph(saver)
            await graph.ainvoke(
                {"notes": []}, {"configurable": {"thread_id": "t-alice"}}, context=Ctx("alice")
            )
            receipt = await store.aforget_user("alice", checkpointer=saver)
            assert receipt.threads_deleted == 1
            assert await saver.aget_tuple({"configurable": {"thread_id": "t-alice"}}) is None
        store.close()

    asyncio.run(scenario())
