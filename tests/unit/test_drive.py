"""The step drivers: one generator, the same answers and errors under run and arun."""

from __future__ import annotations

import asyncio
import threading

import pytest

from langgraph_memory._drive import Blocking, Call, Steps, arun, run


class Target:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def double(self, x: int) -> int:
        self.calls.append("sync")
        return 2 * x

    async def adouble(self, x: int) -> int:
        self.calls.append("async")
        return 2 * x

    def only_sync(self) -> str:
        return threading.current_thread().name

    def fails(self) -> None:
        raise KeyError("nope")

    async def afails(self) -> None:
        raise KeyError("nope")


def _ops(target: Target) -> Steps[tuple[int, str, str]]:
    doubled = yield Call(target, "double", (21,))
    thread = yield Call(target, "only_sync")
    try:
        yield Call(target, "fails")
        caught = "not raised"
    except KeyError as exc:  # an error of a call is thrown into the generator
        caught = str(exc)
    blocked = yield Blocking(lambda: "blocked")
    return doubled, thread, f"{caught}/{blocked}"


def test_sync_driver_calls_the_sync_methods() -> None:
    target = Target()
    doubled, thread, rest = run(_ops(target))
    assert (doubled, rest, target.calls) == (42, "'nope'/blocked", ["sync"])
    assert thread == threading.current_thread().name


def test_async_driver_awaits_the_twins_and_keeps_sync_only_calls_off_the_loop() -> None:
    target = Target()
    doubled, thread, rest = asyncio.run(arun(_ops(target)))
    assert (doubled, rest, target.calls) == (42, "'nope'/blocked", ["async"])
    assert thread != threading.main_thread().name  # ran in a worker thread


def test_an_unhandled_error_reaches_the_caller_of_either_driver() -> None:
    def steps(target: Target) -> Steps[None]:
        yield Call(target, "fails")

    with pytest.raises(KeyError):
        run(steps(Target()))
    with pytest.raises(KeyError):
        asyncio.run(arun(steps(Target())))
