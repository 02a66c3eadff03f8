"""The savers' redact_messages flag: no identifier of a message reaches the
database (checkpoints and pending writes), on all four savers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph

from langgraph_memory.config import PrivacyPolicy
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.session import SqliteSaver
from tests.integration._savers import Harness, SaverFactory, factory_params, harness_for

PHONE = "13800138000"
PASSWORD = "Zx9!kLm2"


@pytest.fixture(params=factory_params())
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Harness:
    factory: SaverFactory = request.param
    return harness_for(request, factory, tmp_path)


def _graph(saver: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("reply", lambda s: {"messages": [AIMessage(f"noted {PHONE}")]})
    builder.add_edge(START, "reply")
    return builder.compile(checkpointer=saver)


async def _stored_bytes(harness: Harness) -> bytes:
    if harness.factory.backend == "sqlite":
        directory = Path(harness.location).parent
        return b"".join(p.read_bytes() for p in directory.iterdir() if p.is_file())
    import psycopg

    with psycopg.connect(harness.location) as conn:
        rows = conn.execute(
            "SELECT convert_to(c::text, 'UTF8') FROM ("
            " SELECT checkpoint::text || metadata::text AS c FROM lgm_checkpoints"
            " UNION ALL SELECT coalesce(encode(value, 'escape'), '') FROM lgm_channel_values"
            " UNION ALL SELECT encode(value, 'escape') FROM lgm_channel_chunks"
            " UNION ALL SELECT encode(value, 'escape') FROM lgm_writes) t"
        ).fetchall()
    return b"".join(bytes(r[0]) for r in rows)


async def test_redact_messages_keeps_identifiers_out_of_storage(harness: Harness) -> None:
    config = {"configurable": {"thread_id": "t1"}}
    async with harness.open(redact_messages=True) as saver:
        graph = _graph(saver)
        for turn in range(3):
            text = f"turn {turn}: call me on {PHONE}, my password is {PASSWORD}"
            await harness.invoke(graph, {"messages": [HumanMessage(text)]}, config)
        state = await harness.get_state(graph, config)
    messages = state.values["messages"]
    assert len(messages) == 6
    assert all(PHONE not in str(m.content) for m in messages)
    assert "[PHONE" in messages[0].content and "[PASSWORD]" in messages[0].content
    assert messages[0].content.startswith("turn 0: call me on")
    stored = await _stored_bytes(harness)
    assert PHONE.encode() not in stored and PASSWORD.encode() not in stored
    assert b"turn 2" in stored or harness.factory.backend == "postgres"  # text is there


async def test_without_the_flag_messages_are_stored_verbatim(harness: Harness) -> None:
    config = {"configurable": {"thread_id": "t1"}}
    async with harness.open() as saver:
        graph = _graph(saver)
        await harness.invoke(graph, {"messages": [HumanMessage(f"call {PHONE}")]}, config)
        state = await harness.get_state(graph, config)
    assert PHONE in state.values["messages"][0].content


def test_redact_messages_takes_a_policy_and_refuses_nonsense(tmp_path: Path) -> None:
    actions: Any = {"cn_mobile": "hash"}
    policy = PrivacyPolicy(actions=actions)
    with SqliteSaver.from_conn_string(str(tmp_path / "a.sqlite"), redact_messages=policy) as saver:
        graph = _graph(saver)
        config: Any = {"configurable": {"thread_id": "t"}}
        graph.invoke({"messages": [HumanMessage(f"call {PHONE}")]}, config)
        content = graph.get_state(config).values["messages"][0].content
        assert PHONE not in content and "[PHONE:" in content
    bad: Any = "yes"
    with (
        pytest.raises(ConfigurationError, match="redact_messages"),
        SqliteSaver.from_conn_string(str(tmp_path / "b.sqlite"), redact_messages=bad),
    ):
        pass
