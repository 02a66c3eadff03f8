"""delete_thread leaves none of the thread's text in any byte of the session files.

Every file under the data directory (the database, its -wal and -shm) is read
whole after the delete; a neighbouring thread's text must still be there, so
the scan can fail.
"""

from __future__ import annotations

import operator
import uuid
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import START, StateGraph

from tests.integration._savers import Harness, SaverFactory, factory_params, harness_for


class State(TypedDict):
    notes: Annotated[list[str], operator.add]
    last: str


def _graph(saver: Any) -> Any:
    builder = StateGraph(State)
    builder.add_node("echo", lambda s: {"notes": ["ok"], "last": s["notes"][-1]})
    builder.add_edge(START, "echo")
    return builder.compile(checkpointer=saver)


@pytest.fixture(params=factory_params(backends=("sqlite",)))
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Harness:
    factory: SaverFactory = request.param
    return harness_for(request, factory, tmp_path)


def _files_containing(directory: Path, needle: bytes) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.is_file() and needle in p.read_bytes())


async def test_delete_thread_leaves_no_text_in_any_file(harness: Harness) -> None:
    directory = Path(harness.location).parent
    secret = f"SECRET-{uuid.uuid4().hex}"
    kept = f"KEPT-{uuid.uuid4().hex}"
    async with harness.open() as saver:
        graph = _graph(saver)
        for turn in range(12):
            # Long and short texts: list items in chunks, scalars inline, an overflow page.
            note = f"{secret} turn {turn} " + ("padding " * (600 if turn == 3 else 4))
            await harness.invoke(
                graph, {"notes": [note]}, {"configurable": {"thread_id": "doomed"}}
            )
            await harness.invoke(
                graph, {"notes": [f"{kept} {turn}"]}, {"configurable": {"thread_id": "kept"}}
            )
        assert _files_containing(directory, secret.encode())  # it was written
        await harness.call(saver, "delete_thread", "doomed")
        assert _files_containing(directory, secret.encode()) == []
        assert _files_containing(directory, kept.encode())  # the scan would have found it
        # The kept thread still reads back whole.
        state = await harness.get_state(graph, {"configurable": {"thread_id": "kept"}})
        assert len(state.values["notes"]) == 24
    assert _files_containing(directory, secret.encode()) == []
