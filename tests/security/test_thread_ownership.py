"""Thread ownership on all four savers: a thread belongs to the user of its first
write (from ``configurable`` or the Runtime ``context=``), and another user's run,
read or write of it fails closed; threads written without a user keep working."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import START, StateGraph

from langgraph_memory.errors import (
    ConfigurationError,
    InvalidUserIdError,
    LangGraphMemoryError,
    ThreadOwnershipError,
)
from langgraph_memory.session._owner import config_user_id
from tests.integration._savers import Harness, SaverFactory, factory_params, harness_for


@dataclass
class Ctx:
    user_id: str


class State(TypedDict):
    notes: Annotated[list[str], operator.add]


def _graph(saver: Any, *, with_context: bool) -> Any:
    builder = StateGraph(State, context_schema=Ctx if with_context else None)
    builder.add_node("echo", lambda s: {"notes": ["seen"]})
    builder.add_edge(START, "echo")
    return builder.compile(checkpointer=saver)


@pytest.fixture(params=factory_params())
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Harness:
    factory: SaverFactory = request.param
    return harness_for(request, factory, tmp_path)


def _cfg(thread: str, user: str | None = None) -> dict[str, Any]:
    configurable: dict[str, Any] = {"thread_id": thread}
    if user is not None:
        configurable["user_id"] = user
    return {"configurable": configurable}


@pytest.mark.parametrize("via", ["configurable", "context"])
async def test_another_users_run_on_a_thread_fails_closed(harness: Harness, via: str) -> None:
    async with harness.open() as saver:
        graph = _graph(saver, with_context=via == "context")

        def run_kwargs(user: str) -> tuple[dict[str, Any], dict[str, Any]]:
            if via == "context":
                return _cfg("t-alice"), {"context": Ctx(user)}
            return _cfg("t-alice", user), {}

        config, kwargs = run_kwargs("alice")
        await harness.invoke(graph, {"notes": ["alice secret"]}, config, **kwargs)
        assert await harness.call(saver, "threads_of_user", "alice") == ["t-alice"]

        config, kwargs = run_kwargs("bob")
        with pytest.raises(ThreadOwnershipError) as info:
            await harness.invoke(graph, {"notes": ["bob"]}, config, **kwargs)
        assert "t-alice" in str(info.value) and "bob" in str(info.value)
        assert "'alice'" not in str(info.value)  # the owner's id is not disclosed
        assert isinstance(info.value, PermissionError)
        with pytest.raises(ThreadOwnershipError):
            await harness.get_state(graph, config, **kwargs) if via == "configurable" else (
                await harness.get_tuple(saver, _cfg("t-alice", "bob"))
            )
        with pytest.raises(ThreadOwnershipError):
            await harness.list(saver, _cfg("t-alice", "bob"))
        assert await harness.call(saver, "threads_of_user", "bob") == []

    # A fresh instance (nothing cached) still refuses, and the owner still reads.
    async with harness.open() as saver:
        with pytest.raises(ThreadOwnershipError):
            await harness.get_tuple(saver, _cfg("t-alice", "bob"))
        tup = await harness.get_tuple(saver, _cfg("t-alice", "alice"))
        assert tup is not None
        assert tup.checkpoint["channel_values"]["notes"] == ["alice secret", "seen"]
        # A direct put_writes by bob is refused before anything is stored.
        bob_cfg = {"configurable": {**tup.config["configurable"], "user_id": "bob"}}
        with pytest.raises(ThreadOwnershipError):
            await harness.call(saver, "put_writes", bob_cfg, [("notes", ["x"])], "task-1")
        tup = await harness.get_tuple(saver, _cfg("t-alice"))
        assert tup is not None and tup.pending_writes == []


async def test_threads_without_a_user_work_as_before(harness: Harness) -> None:
    async with harness.open() as saver:
        graph = _graph(saver, with_context=False)
        await harness.invoke(graph, {"notes": ["a"]}, _cfg("t-anon"))
        await harness.invoke(graph, {"notes": ["b"]}, _cfg("t-anon"))
        state = await harness.get_state(graph, _cfg("t-anon"))
        assert state.values["notes"] == ["a", "seen", "b", "seen"]
        # Admin calls that name no user read an owned thread too.
        await harness.invoke(graph, {"notes": ["c"]}, _cfg("t-carol", "carol"))
        assert (await harness.get_tuple(saver, _cfg("t-carol"))) is not None
        assert len(await harness.list(saver, _cfg("t-carol"))) == 3


async def test_delete_thread_releases_the_owner(harness: Harness) -> None:
    async with harness.open() as saver:
        graph = _graph(saver, with_context=True)
        await harness.invoke(graph, {"notes": ["a"]}, _cfg("t-x"), context=Ctx("alice"))
        await harness.call(saver, "delete_thread", "t-x")
        assert await harness.call(saver, "threads_of_user", "alice") == []
        await harness.call(saver, "undelete_thread", "t-x")
        await harness.invoke(graph, {"notes": ["b"]}, _cfg("t-x"), context=Ctx("bob"))
        assert await harness.call(saver, "threads_of_user", "bob") == ["t-x"]
        with pytest.raises(ThreadOwnershipError):
            await harness.invoke(graph, {"notes": ["c"]}, _cfg("t-x"), context=Ctx("alice"))


async def test_list_with_a_user_but_no_thread_is_refused(harness: Harness) -> None:
    async with harness.open() as saver:
        with pytest.raises(ConfigurationError, match="threads_of_user"):
            await harness.list(saver, {"configurable": {"user_id": "bob"}})


def test_context_wins_over_configurable_and_bad_ids_are_typed() -> None:
    class Runtime:
        context = Ctx("from-context")

    cfg = {"configurable": {"thread_id": "t", "user_id": "spoofed", "__pregel_runtime": Runtime()}}
    assert config_user_id(cfg) == "from-context"
    assert config_user_id({"configurable": {"thread_id": "t", "user_id": "u"}}) == "u"
    assert config_user_id(None) is None
    for bad in ("", 7, "x" * 300, "a\ud800b"):
        with pytest.raises(InvalidUserIdError) as info:
            config_user_id({"configurable": {"thread_id": "t", "user_id": bad}})
        assert isinstance(info.value, LangGraphMemoryError)
