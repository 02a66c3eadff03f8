"""One deleted memory leaves the recall blocks saved in checkpoints, on every saver.

The recall node saves each turn's block (the memories it injected, their ids in
the message's metadata) into that turn's checkpoints and pending writes.
``delete_memory(..., checkpointer=saver)`` rewrites those copies in the user's
threads (``nodes/recall_erasure.py``). Checked through the saver's own API on
SQLite (sync, async, encrypted) and Postgres (sync, async): no checkpoint of the
history quotes the memory or names its id, the other memories' lines stay, and
the SQLite file holds no byte of it. The byte scan of every data directory is in
``test_longterm_erasure.py``; Postgres relation files in ``test_postgres_erasure.py``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, MessagesState, StateGraph

from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.encryption import EncryptionKeys
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.longterm.erasure import erase_recalled
from langgraph_memory.nodes.recall import create_recall_node
from langgraph_memory.nodes.recall_erasure import DELETED_BLOCK, DELETED_LINE, RecallScrub
from langgraph_memory.prompts.recall import RECALL_MESSAGE_ID
from langgraph_memory.session import (
    AsyncPostgresSaver,
    AsyncSqliteSaver,
    PostgresSaver,
    SqliteSaver,
)
from langgraph_memory.types import MemoryRecord

KEY = EncryptionKeys({"k1": b"\x01" * 32}, current="k1")


def _graph(saver: Any, store: ChromaMemoryStore) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("recall", create_recall_node(store=store, update_access_stats=False))
    builder.add_node("reply", lambda state: {"messages": [("ai", "noted")]})
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "reply")
    builder.add_edge("reply", END)
    return builder.compile(checkpointer=saver)


@pytest.fixture(
    params=[
        "sqlite",
        "sqlite-encrypted",
        "aiosqlite",
        pytest.param("postgres", marks=pytest.mark.postgres),
        pytest.param("apostgres", marks=pytest.mark.postgres),
    ]
)
async def saver(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    kind = request.param
    async with AsyncExitStack() as stack:
        if kind.startswith("sqlite"):
            options = {"encryption": KEY} if kind == "sqlite-encrypted" else {}
            cp = stack.enter_context(
                SqliteSaver.from_conn_string(str(tmp_path / "cp.sqlite"), **options)
            )
            cp.setup()
        elif kind == "aiosqlite":
            cp = await stack.enter_async_context(
                AsyncSqliteSaver.from_conn_string(str(tmp_path / "cp.sqlite"))
            )
            await cp.asetup()
        else:
            dsn = request.getfixturevalue("pg_dsn")
            if kind == "postgres":
                cp = stack.enter_context(PostgresSaver.from_conn_string(dsn))
                cp.setup()
            else:
                cp = await stack.enter_async_context(AsyncPostgresSaver.from_conn_string(dsn))
                await cp.asetup()
        cp.test_kind = kind  # type: ignore[attr-defined]
        cp.test_path = tmp_path / "cp.sqlite"  # type: ignore[attr-defined]
        yield cp


def _is_async(saver: Any) -> bool:
    return isinstance(saver, (AsyncSqliteSaver, AsyncPostgresSaver))


async def test_delete_memory_rewrites_every_saved_recall_block(saver: Any, tmp_path: Path) -> None:
    store = ChromaMemoryStore.embedded(tmp_path / "store", embeddings=HashingEmbeddings())
    try:
        user = f"u{uuid.uuid4().hex[:8]}"
        marker = f"axolotl{uuid.uuid4().hex[:6]}"
        kept = store.put_memory(MemoryRecord("User waters the gardens pond daily", user_id=user))
        gone = store.put_memory(MemoryRecord(f"{marker} lives in the gardens pond", user_id=user))
        graph = _graph(saver, store)
        threads = [uuid.uuid4().hex, uuid.uuid4().hex]
        for thread in threads:
            for turn in range(2):
                state = {"messages": [("user", f"the gardens pond, turn {turn}?")]}
                cfg = {"configurable": {"thread_id": thread, "user_id": user}}
                if _is_async(saver):
                    await graph.ainvoke(state, cfg)
                else:
                    graph.invoke(state, cfg)

        async def history(thread: str) -> list[Any]:
            cfg = {"configurable": {"thread_id": thread, "user_id": user}}
            if _is_async(saver):
                return [s async for s in graph.aget_state_history(cfg)]
            return list(graph.get_state_history(cfg))

        def blocks(states: list[Any]) -> list[Any]:
            return [
                m for s in states for m in s.values.get("messages", []) if m.id == RECALL_MESSAGE_ID
            ]

        before = [b for t in threads for b in blocks(await history(t))]
        assert sum(marker in b.content for b in before) >= 4  # the control: it was recalled
        if saver.test_kind.startswith("sqlite"):
            assert marker.encode() in saver.test_path.read_bytes() + _wal(saver.test_path) or (
                saver.test_kind == "sqlite-encrypted"
            )

        if _is_async(saver):
            await store.adelete_memory(user, gone.id, checkpointer=saver)
        else:
            store.delete_memory(user, gone.id, checkpointer=saver)

        after = [b for t in threads for b in blocks(await history(t))]
        assert len(after) == len(before)
        assert not any(marker in b.content for b in after)
        assert all(gone.id not in str(b.additional_kwargs) for b in after)
        assert all(DELETED_LINE in b.content for b in after)
        assert all(kept.text in b.content for b in after)
        assert all(kept.id in b.additional_kwargs["langgraph_memory"]["memory_ids"] for b in after)
        if saver.test_kind in ("sqlite", "aiosqlite"):
            raw = saver.test_path.read_bytes() + _wal(saver.test_path)
            assert marker.encode() not in raw and gone.id.encode() not in raw
            assert kept.text.encode() in raw  # the scan reads what is there
        # A second pass finds nothing left to rewrite.
        if _is_async(saver):
            assert await saver.arewrite_threads(threads, RecallScrub([gone.id])) == 0
        else:
            assert saver.rewrite_threads(threads, RecallScrub([gone.id])) == 0
    finally:
        store.close()


def _wal(path: Path) -> bytes:
    wal = path.with_name(path.name + "-wal")
    return wal.read_bytes() if wal.exists() else b""


def test_a_checkpointer_that_cannot_rewrite_is_refused_before_the_delete(tmp_path: Path) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    store = ChromaMemoryStore.embedded(tmp_path / "store", embeddings=HashingEmbeddings())
    try:
        record = store.put_memory(MemoryRecord("User likes herons", user_id="u1"))
        with pytest.raises(ConfigurationError, match="rewrite its rows"):
            store.delete_memory("u1", record.id, checkpointer=InMemorySaver())
        assert store.get_memory("u1", record.id) is not None  # nothing was deleted
        with pytest.raises(ConfigurationError, match="rewrite its rows"):
            erase_recalled(object(), "u1", [record.id])
    finally:
        store.close()


def test_a_memory_the_writer_forgets_leaves_the_saved_recall_blocks(tmp_path: Path) -> None:
    """ "Please forget my address": the writer's delete op takes the address out of
    the blocks the earlier turns saved, given ``MemoryWriter(checkpointer=saver)``."""
    from langgraph_memory.nodes.rules import RuleBasedExtractor
    from langgraph_memory.pipeline.queue import SqliteMemoryQueue
    from langgraph_memory.pipeline.writer import MemoryWriter

    store = ChromaMemoryStore.embedded(tmp_path / "store", embeddings=HashingEmbeddings())
    path = tmp_path / "cp.sqlite"
    with (
        SqliteSaver.from_conn_string(str(path)) as cp,
        SqliteMemoryQueue.from_conn_string(path, debounce_seconds=0) as queue,
    ):
        cp.setup()
        writer = MemoryWriter(
            store, extractor=RuleBasedExtractor(), mode="sync", queue=queue, checkpointer=cp
        )
        writer.submit(
            "u1", "t0", [HumanMessage("My address is 12 Elm Street. I'm vegan.", id="h1")]
        )
        graph = _graph(cp, store)
        cfg = {"configurable": {"thread_id": "t1", "user_id": "u1"}}
        graph.invoke({"messages": [("user", "what is my address?")]}, cfg)
        assert "Elm Street" in str(graph.get_state(cfg).values["messages"])
        receipt = writer.submit("u1", "t0", [HumanMessage("Please forget my address", id="h3")])
        assert [op.action for op in receipt.ops] == ["delete"]
        seen = 0
        for state in graph.get_state_history(cfg):
            for m in state.values.get("messages", []):
                if m.id == RECALL_MESSAGE_ID:
                    assert "Elm Street" not in m.content and "vegan" in m.content
                    seen += 1
        assert seen >= 2
        # The address was said on another thread (t0, handed to the writer only): no
        # byte of it is left in the file that holds the checkpoints and the queue.
        raw = path.read_bytes() + _wal(path)
        assert b"Elm Street" not in raw and b"vegan" in raw
    store.close()


def test_a_memory_forgotten_inside_a_turn_is_not_stored_again_by_that_run(
    tmp_path: Path,
) -> None:
    """A sync writer deletes the memory from inside the turn (its extract node); the
    run still holds the turn's recall block in memory, and its next checkpoint would
    store it again. The saver passes the thread's next puts through the rewrite."""
    from langgraph_memory.nodes.rules import RuleBasedExtractor
    from langgraph_memory.pipeline.queue import SqliteMemoryQueue
    from langgraph_memory.pipeline.writer import MemoryWriter

    store = ChromaMemoryStore.embedded(tmp_path / "store", embeddings=HashingEmbeddings())
    path = tmp_path / "cp.sqlite"
    with (
        SqliteSaver.from_conn_string(str(path)) as cp,
        SqliteMemoryQueue.from_conn_string(path, debounce_seconds=0) as queue,
    ):
        cp.setup()
        writer = MemoryWriter(
            store, extractor=RuleBasedExtractor(), mode="sync", queue=queue, checkpointer=cp
        )

        def extract(state: Any, config: RunnableConfig) -> dict[str, Any]:
            ids = config["configurable"]
            said = [m for m in state["messages"] if isinstance(m, HumanMessage)][-1]
            writer.submit(ids["user_id"], ids["thread_id"], [said])
            return {}

        builder = StateGraph(MessagesState)
        builder.add_node("recall", create_recall_node(store=store, update_access_stats=False))
        builder.add_node("reply", lambda state: {"messages": [("ai", "noted")]})
        builder.add_node("extract", extract)
        builder.add_node("after", lambda state: {"messages": [("ai", "done")]})
        for a, b in (
            (START, "recall"),
            ("recall", "reply"),
            ("reply", "extract"),
            ("extract", "after"),
            ("after", END),
        ):
            builder.add_edge(a, b)
        graph = builder.compile(checkpointer=cp)
        cfg = {"configurable": {"thread_id": "t1", "user_id": "u1"}}
        for n, text in enumerate(("My address is 12 Elm Street. I'm vegan.", "what's my address?")):
            graph.invoke({"messages": [HumanMessage(text, id=f"h{n}")]}, cfg)
        assert "Elm Street" in str(graph.get_state(cfg).values["messages"])
        graph.invoke({"messages": [HumanMessage("Please forget my address", id="h9")]}, cfg)
        assert [m.text for m in store.list_memories("u1")] == ["User is vegan"]
        quoting = [
            s.config["configurable"]["checkpoint_id"]
            for s in graph.get_state_history(cfg)
            for m in s.values.get("messages", [])
            if m.id == RECALL_MESSAGE_ID and "Elm Street" in m.content
        ]
        assert quoting == []
    store.close()


# ------------------------------------------------------------------ the pure rewrite


def _block(lines: list[str], ids: list[str]) -> SystemMessage:
    return SystemMessage(
        "\n".join(["<long_term_memory>", "header", *lines, "</long_term_memory>"]),
        id=RECALL_MESSAGE_ID,
        additional_kwargs={
            "langgraph_memory": {
                "memory_ids": ids,
                "profile_ids": ids[:1],
                "query": "q",
                "explain": [{"memory_id": i, "part": "relevant"} for i in ids],
            }
        },
    )


def test_recall_scrub_rewrites_only_recall_messages_and_keeps_list_shapes() -> None:
    block = _block(
        ["- User has a pet gecko [user_stated, 2026-01-01]", "- User likes tea"], ["a", "b"]
    )
    human = HumanMessage("my pet gecko is called Rex", id="h1")
    scrub = RecallScrub(["a"], ["User has a pet gecko"])
    value = [human, block, AIMessage("ok", id="a1")]
    out = scrub(value)
    assert out is not value and len(out) == 3
    assert out[0] is human and out[2] is value[2]  # the conversation is the conversation
    assert "gecko" not in out[1].content and "User likes tea" in out[1].content
    meta = out[1].additional_kwargs["langgraph_memory"]
    assert meta["memory_ids"] == ["b"] and meta["profile_ids"] == []
    assert [r["memory_id"] for r in meta["explain"]] == ["b"]
    # Nested: a __start__ write {"messages": [...]}, a tuple of writes.
    nested = {"messages": [block]}
    assert "gecko" not in scrub(nested)["messages"][0].content
    assert "gecko" not in scrub((block,))[0].content
    assert scrub([human]) == [human] and scrub("a gecko") == "a gecko"


def test_recall_scrub_replaces_a_block_that_names_the_id_without_its_line() -> None:
    block = _block(["- an older wording of the memory", "- User likes tea"], ["a", "b"])
    out = RecallScrub(["a"])(block)  # ids only (a BaseStore delete): the line is unknown
    assert out.content == DELETED_BLOCK
    assert out.additional_kwargs["langgraph_memory"]["memory_ids"] == ["b"]
    untouched = _block(["- User likes tea"], ["b"])
    assert RecallScrub(["a"], ["User has a pet gecko"])(untouched) is untouched
    # The same words under another id (said again after the delete) are another memory.
    again = _block(["- User has a pet gecko [user_stated, 2026-02-01]"], ["c"])
    assert RecallScrub(["a"], ["User has a pet gecko"])(again) is again
    # A block from before the metadata existed is matched on its text.
    legacy = SystemMessage("- User has a pet gecko\n- User likes tea", id=RECALL_MESSAGE_ID)
    out = RecallScrub(["a"], ["User has a pet gecko"])(legacy)
    assert out.content == f"{DELETED_LINE}\n- User likes tea"


def test_recall_scrub_byte_prefilter() -> None:
    scrub = RecallScrub(["m-1"], ["User has a pet gecko"])
    assert scrub.may_touch(RECALL_MESSAGE_ID.encode() + b"...m-1...")
    assert scrub.may_touch(RECALL_MESSAGE_ID.encode() + b"User has a pet gecko")
    assert not scrub.may_touch(b"User has a pet gecko")  # no recall message in it
    assert not scrub.may_touch(RECALL_MESSAGE_ID.encode() + b"other memories")
    assert "gecko" not in repr(scrub)


def test_a_rewrite_that_changes_a_list_length_is_refused(tmp_path: Path) -> None:
    """Chunks are addressed by item numbers: a rewrite may change items, never their count."""

    class DropAll:
        def may_touch(self, blob: bytes) -> bool:
            return True

        def __call__(self, value: Any) -> Any:
            return [] if isinstance(value, list) and value else value

    with SqliteSaver.from_conn_string(str(tmp_path / "cp.sqlite")) as cp:
        cp.setup()
        builder = StateGraph(MessagesState)
        builder.add_node("reply", lambda state: {"messages": [("ai", "noted")]})
        builder.add_edge(START, "reply")
        graph = builder.compile(checkpointer=cp)
        cfg = {"configurable": {"thread_id": "t1"}}
        graph.invoke({"messages": [("user", "hello")]}, cfg)
        with pytest.raises(ConfigurationError, match="changed the length"):
            cp.rewrite_threads(["t1"], DropAll())
        assert len(graph.get_state(cfg).values["messages"]) == 2  # rolled back
        graph.invoke({"messages": [("user", "again")]}, cfg)  # and not applied to later puts
        assert len(graph.get_state(cfg).values["messages"]) == 4


@pytest.mark.parametrize(
    "name", ["langgraph_memory.nodes.recall_erasure", "langgraph_memory.longterm.erasure"]
)
def test_the_docstring_examples_run(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
