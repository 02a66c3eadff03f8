"""Which task writes may wait for their step's checkpoint (pure core rules)."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import ERROR, INTERRUPT, RESUME, SCHEDULED

from langgraph_memory.session import _sql_sqlite as SQL
from langgraph_memory.session._core import (
    DURABILITY_CONFIG_KEY,
    RUNTIME_CONFIG_KEY,
    EndedSteps,
    SaverCore,
    writes_may_wait_for_checkpoint,
)


def _config(**configurable: Any) -> dict[str, Any]:
    base = {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c1"}
    return {"configurable": {**base, **configurable}}


LOOP = {RUNTIME_CONFIG_KEY: object()}


@pytest.mark.parametrize(
    ("configurable", "expected"),
    [
        (LOOP, True),  # LangGraph's loop, mode not named: its default, async
        ({**LOOP, DURABILITY_CONFIG_KEY: "async"}, True),
        ({**LOOP, DURABILITY_CONFIG_KEY: "sync"}, False),
        ({**LOOP, DURABILITY_CONFIG_KEY: "exit"}, False),
        ({}, False),  # a direct call
        ({DURABILITY_CONFIG_KEY: "async"}, False),  # no runtime: not LangGraph's loop
    ],
)
def test_only_langgraph_async_runs_may_defer(configurable: dict[str, Any], expected: bool) -> None:
    assert writes_may_wait_for_checkpoint(_config(**configurable), [("a", 1)]) is expected


@pytest.mark.parametrize("special", [ERROR, INTERRUPT, RESUME, SCHEDULED])
def test_special_writes_never_wait(special: str) -> None:
    assert not writes_may_wait_for_checkpoint(_config(**LOOP), [("a", 1), (special, "x")])


def test_no_writes_never_wait() -> None:
    assert not writes_may_wait_for_checkpoint(_config(**LOOP), [])


def test_writes_after_an_error_of_the_same_step_are_stored_at_once() -> None:
    core = SaverCore(SQL, JsonPlusSerializer())
    assert core.prepare_writes(_config(**LOOP), [("a", 1)], "task-1").may_wait
    error = core.prepare_writes(_config(**LOOP), [(ERROR, ValueError("x"))], "task-2")
    assert not error.may_wait
    assert not core.prepare_writes(_config(**LOOP), [("b", 2)], "task-3").may_wait
    # the next step (another checkpoint id) defers again
    assert core.prepare_writes(_config(**{**LOOP, "checkpoint_id": "c2"}), [("a", 1)], "t").may_wait


def test_ended_steps_forget_the_oldest_beyond_capacity() -> None:
    steps = EndedSteps(capacity=2)
    for n in range(3):
        steps.add(("t", "", f"c{n}"))
    assert ("t", "", "c0") not in steps
    assert ("t", "", "c1") in steps and ("t", "", "c2") in steps


def test_a_resume_lets_the_step_defer_again() -> None:
    core = SaverCore(SQL, JsonPlusSerializer())
    core.prepare_writes(_config(**LOOP), [(INTERRUPT, "ask")], "task-1")
    assert not core.prepare_writes(_config(**LOOP), [("a", 1)], "task-2").may_wait
    core.prepare_writes(_config(**LOOP), [(RESUME, "yes")], "00000000-0000-0000-0000-000000000000")
    assert core.prepare_writes(_config(**LOOP), [("a", 1)], "task-1").may_wait
