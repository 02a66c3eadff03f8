"""LangGraph's own checkpointer conformance suite, on every saver we ship.

Each target is an async generator yielding a fresh saver; the suite detects
capabilities from the saver's overridden methods, so all 8 must be detected
*and* pass. The Postgres savers join by appending to ``TARGETS``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES

from langgraph_memory.session import AsyncSqliteSaver, SqliteSaver

SaverFactory = Callable[[Path], AsyncIterator[Any]]


@dataclass(frozen=True)
class ConformanceTarget:
    name: str
    factory: SaverFactory
    marks: tuple[Any, ...] = ()


async def _sqlite_sync(tmp: Path) -> AsyncIterator[Any]:
    # The sync saver is exercised through its a* methods (they run the sync path).
    with SqliteSaver.from_conn_string(str(tmp / f"{uuid.uuid4().hex}.sqlite")) as saver:
        yield saver


async def _sqlite_async(tmp: Path) -> AsyncIterator[Any]:
    async with AsyncSqliteSaver.from_conn_string(str(tmp / f"{uuid.uuid4().hex}.sqlite")) as saver:
        yield saver


TARGETS = [
    ConformanceTarget("SqliteSaver", _sqlite_sync),
    ConformanceTarget("AsyncSqliteSaver", _sqlite_async),
]


@pytest.mark.parametrize(
    "target",
    [pytest.param(t, id=t.name, marks=t.marks) for t in TARGETS],
)
async def test_conformance_all_capabilities(target: ConformanceTarget, tmp_path: Path) -> None:
    registered = checkpointer_test(name=target.name)(lambda: target.factory(tmp_path))
    report = await validate(registered)
    failures = {
        cap: result.failures for cap, result in report.results.items() if result.passed is not True
    }
    detected = {cap for cap, result in report.results.items() if result.detected}
    assert detected == {c.value for c in ALL_CAPABILITIES}, f"undetected: {failures}"
    assert not failures, failures
    assert report.passed_all
