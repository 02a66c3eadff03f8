"""A real store and a sync rules writer on a manual clock: what the rules tests replay into."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from langchain_core.messages import HumanMessage

from langgraph_memory.clock import ManualClock
from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.nodes.rules import RuleBasedExtractor
from langgraph_memory.nodes.writer import MemoryWriter


def rules_store(tmp_path: Path, clock: ManualClock) -> ChromaMemoryStore:
    return ChromaMemoryStore.embedded(tmp_path / "lt", embeddings=HashingEmbeddings(), clock=clock)


def rules_writer(store: ChromaMemoryStore, clock: ManualClock) -> MemoryWriter:
    return MemoryWriter(store, extractor=RuleBasedExtractor(clock=clock), mode="sync", clock=clock)


def say_as(writer: MemoryWriter, clock: ManualClock, user: str, text: str, mid: str) -> None:
    """One user message through the writer, then a day passes."""
    writer.submit(user, "t", [HumanMessage(text, id=mid)])
    clock.advance(timedelta(days=1))
