"""LangGraph's own checkpointer conformance suite on both Postgres savers.

Same check as ``test_conformance.py`` does for SQLite: all 8 capabilities
detected and passing, sync class (through its ``a*`` methods) and async class.
Every saver the suite asks for gets a fresh schema inside the test's fresh
database, so no test sees another's rows.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import quote

import psycopg
import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES

from langgraph_memory.session import AsyncPostgresSaver, PostgresSaver

pytestmark = pytest.mark.postgres


def fresh_schema_dsn(dsn: str) -> str:
    """A DSN whose connections see only a brand-new, empty schema."""
    schema = f"s_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in dsn else "?"
    return f"{dsn}{sep}options={quote(f'-csearch_path={schema}')}"


def _sync_factory(dsn: str) -> Callable[[], AsyncIterator[Any]]:
    async def factory() -> AsyncIterator[Any]:
        with PostgresSaver.from_conn_string(fresh_schema_dsn(dsn), pool_size=2) as saver:
            yield saver

    return factory


def _async_factory(dsn: str) -> Callable[[], AsyncIterator[Any]]:
    async def factory() -> AsyncIterator[Any]:
        async with AsyncPostgresSaver.from_conn_string(fresh_schema_dsn(dsn), pool_size=2) as saver:
            yield saver

    return factory


@pytest.mark.parametrize(
    ("name", "make_factory"),
    [("PostgresSaver", _sync_factory), ("AsyncPostgresSaver", _async_factory)],
    ids=["PostgresSaver", "AsyncPostgresSaver"],
)
async def test_conformance_all_capabilities(
    name: str, make_factory: Callable[[str], Callable[[], AsyncIterator[Any]]], pg_dsn: str
) -> None:
    registered = checkpointer_test(name=name)(make_factory(pg_dsn))
    report = await validate(registered)
    failures = {
        cap: result.failures for cap, result in report.results.items() if result.passed is not True
    }
    detected = {cap for cap, result in report.results.items() if result.detected}
    assert detected == {c.value for c in ALL_CAPABILITIES}, f"undetected: {failures}"
    assert not failures, failures
    assert report.passed_all
