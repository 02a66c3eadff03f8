"""Identifiers in tool calls and provider payloads never reach the memory queue's file.

The writer queues whole messages (``messages_to_dict``: content blocks, tool
calls, ``additional_kwargs``, artifacts), so every field must be redacted
before the job row is written. Each scan has a positive control: a harmless
marker in the same message that must be found on disk.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.nodes.rules import RuleBasedExtractor
from langgraph_memory.pipeline.queue import SqliteMemoryQueue
from langgraph_memory.pipeline.writer import MemoryWriter

PHONE = "13912345678"
LANDLINE = "010-62751234"
PASSPORT = "E12345678"
MARKER = "zebra-marker-7"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ChromaMemoryStore]:
    s = ChromaMemoryStore.embedded(tmp_path / "longterm", embeddings=HashingEmbeddings())
    yield s
    s.close()


def raw_files(root: Path) -> bytes:
    chunks = [p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()]
    assert chunks, f"nothing on disk under {root}"
    return b"\n".join(chunks)


def transcript() -> list[AIMessage | HumanMessage | ToolMessage]:
    args = {"to": PHONE, "note": MARKER, "cc": f"office {LANDLINE}"}
    return [
        HumanMessage(f"text my wife please, {MARKER}", id="h1"),
        AIMessage(
            content=[
                {"type": "text", "text": "Sending now."},
                {"type": "tool_use", "id": "toolu_1", "name": "sms", "input": args},
            ],
            tool_calls=[{"name": "sms", "args": args, "id": "call_1"}],
            additional_kwargs={
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "sms", "arguments": f'{{"to": "{PHONE}"}}'},
                    }
                ]
            },
            invalid_tool_calls=[
                {"name": "sms", "args": f'{{"passport": "{PASSPORT}"', "id": "c2", "error": "x"}
            ],
            id="a1",
        ),
        ToolMessage(f"sent to {PHONE}", tool_call_id="call_1", artifact={"to": PHONE}, id="t1"),
    ]


def test_tool_call_identifiers_never_reach_the_queue_file(
    tmp_path: Path, store: ChromaMemoryStore
) -> None:
    queue_dir = tmp_path / "queue"
    queue_dir.mkdir()
    queue = SqliteMemoryQueue(queue_dir / "checkpoints.sqlite", debounce_seconds=60.0)
    queue.setup()
    try:
        # Background mode with a long debounce: the job stays queued on disk.
        writer = MemoryWriter(store, extractor=RuleBasedExtractor(), queue=queue)
        receipt = writer.submit("alice", "t1", transcript())
        assert receipt.job_id is not None
        on_disk = raw_files(queue_dir)
        assert MARKER.encode() in on_disk  # positive control: the job was written
        for identifier in (PHONE, LANDLINE, PASSPORT):
            assert identifier.encode() not in on_disk, identifier
        assert b"[PHONE" in on_disk and b"[PASSPORT]" in on_disk
    finally:
        queue.close()
