"""The five stories of issue 5, end to end on compiled graphs.

Real components only: our ``SqliteSaver`` (a file), an embedded ``ChromaMemoryStore``
with ``HashingEmbeddings``, the ``MemoryWriter`` with its SQLite queue in the
checkpoint file, and the recall / extract / compress nodes wired by
``add_memory_nodes``. The chat model is an offline scripted one that records every
prompt, so each story asserts on what the model actually received.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.graph import END, START, StateGraph

from graphs._models import MemoryAwareChatModel, ScriptedChatModel, memory_lines
from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.nodes.recall import flush_access_stats
from langgraph_memory.nodes.rules import RuleBasedExtractor
from langgraph_memory.pipeline import MemoryWriter
from langgraph_memory.pipeline.queue import SqliteMemoryQueue
from langgraph_memory.prompts.compress import SUMMARY_MESSAGE_ID
from langgraph_memory.prompts.recall import RECALL_MESSAGE_ID
from langgraph_memory.session import SqliteSaver
from langgraph_memory.types import MemorySource, MemoryStatus
from langgraph_memory.wiring import MemoryState, add_memory_nodes


@dataclass
class Stack:
    graph: Any
    model: Any
    store: ChromaMemoryStore
    writer: MemoryWriter
    queue: SqliteMemoryQueue

    def say(self, text: str, *, thread: str, user: str = "u1") -> str:
        config = {"configurable": {"thread_id": thread, "user_id": user}}
        out = self.graph.invoke({"messages": [HumanMessage(text)]}, config)
        if self.writer.mode == "background":
            assert self.writer.drain(timeout=30)
        last = out["messages"][-1]
        assert isinstance(last, AIMessage)
        return last.text

    @property
    def prompt(self) -> list[BaseMessage]:
        """What the chat model received on its latest call."""
        return self.model.calls[-1]

    def recall_block(self) -> str:
        return next((m.text for m in self.prompt if m.id == RECALL_MESSAGE_ID), "")


@pytest.fixture
def build(tmp_path: Path) -> Iterator[Any]:
    opened: list[Any] = []

    def make(
        *,
        model: BaseChatModel | None = None,
        extractor: Any = None,
        mode: str = "sync",
        max_tokens: int = 8000,
        compress_options: dict[str, Any] | None = None,
    ) -> Stack:
        db = str(tmp_path / "checkpoints.sqlite")
        saver_cm = SqliteSaver.from_conn_string(db)
        saver = saver_cm.__enter__()
        opened.append(saver_cm)
        store = ChromaMemoryStore.embedded(tmp_path / "ltm", embeddings=HashingEmbeddings())
        queue = SqliteMemoryQueue(db, debounce_seconds=0)  # same file as the checkpoints
        writer = MemoryWriter(
            store, extractor=extractor or RuleBasedExtractor(), mode=mode, queue=queue
        )
        opened.extend([store, queue])
        chat = model or MemoryAwareChatModel()

        def agent(state: MemoryState) -> dict[str, Any]:
            return {"messages": [chat.invoke(state["messages"])]}

        builder = StateGraph(MemoryState)
        builder.add_node("agent", agent)
        builder.add_edge(START, "agent")
        builder.add_edge("agent", END)
        add_memory_nodes(
            builder,
            model_node="agent",
            store=store,
            writer=writer,
            max_tokens=max_tokens,
            compress_options=compress_options,
        )
        graph = builder.compile(checkpointer=saver, store=store)
        return Stack(graph, chat, store, writer, queue)

    yield make
    flush_access_stats()  # background touches finish before the store closes
    for resource in reversed(opened):
        if hasattr(resource, "__exit__"):
            resource.__exit__(None, None, None)
        else:
            resource.close()


def scripted_extractor(rules: list[tuple[str, dict[str, Any]]]) -> ScriptedChatModel:
    """An LLM extractor stand-in: for each transcript line matching a pattern, the memory.

    ``{"role": "assistant"}`` in a memory makes it cite the assistant's line (the
    way a careless model would), everything else cites the user's line.
    """

    def answer(prompt: list[BaseMessage]) -> str:
        transcript = prompt[-1].text
        memories = []
        for alias, role, text in re.findall(
            r"\[(m\d+)\] (user|assistant|tool)(?: \([^)]*\))?: (.*)", transcript
        ):
            for pattern, memory in rules:
                if re.search(pattern, text, re.IGNORECASE) and memory.get("role", "user") == role:
                    item = {k: v for k, v in memory.items() if k != "role"}
                    memories.append({**item, "message_ids": [alias]})
        return json.dumps({"memories": memories})

    return ScriptedChatModel(default=answer)


# --------------------------------------------------------------------------- story 1


def test_no_honorifics_said_at_turn_3_is_honoured_at_turn_20(build: Any) -> None:
    stack = build(compress_options={"trigger_messages": 12, "keep_last_turns": 3})
    for turn in range(1, 21):
        if turn == 3:
            text = "From now on, don't use honorifics with me. Just call me Lao Wang."
        else:
            text = f"Tell me one thing about topic number {turn}, please."
        answer = stack.say(text, thread="long-chat")
    prompt = stack.prompt
    # The turn-3 message itself left the window long ago ...
    assert not any("don't use honorifics" in m.text for m in prompt if isinstance(m, HumanMessage))
    assert sum(isinstance(m, HumanMessage) for m in prompt) <= 6
    assert any(m.id == SUMMARY_MESSAGE_ID for m in prompt)
    # ... but the model is still told, and acts on it.
    assert "don't use honorifics" in stack.recall_block()
    assert answer.startswith("Lao Wang,")
    assert "Dear" not in answer and "Mr." not in answer


# --------------------------------------------------------------------------- story 2


def test_product_name_corrected_last_week_is_right_this_week(build: Any) -> None:
    extractor = scripted_extractor(
        [
            (
                r"product is called (\w[\w ]*?)[.,]",
                {"text": "", "key": "product_name", "type": "semantic", "category": "business_fact",
                 "importance": 0.8, "source": "user_stated"},
            ),
        ]
    )  # fmt: skip

    # The text is taken from the user's words, as a model would paraphrase them.
    def answer(prompt: list[BaseMessage]) -> str:
        raw = json.loads(extractor._next_step(prompt).text)
        transcript = prompt[-1].text
        for memory in raw["memories"]:
            line = re.search(
                rf"\[{memory['message_ids'][0]}\] user(?: \([^)]*\))?: (.*)", transcript
            )
            name = re.search(r"product is called (\w[\w ]*?)[.,]", line.group(1) if line else "")
            memory["text"] = f"The user's product is called {name.group(1) if name else '?'}"
        return json.dumps(raw)

    stack = build(extractor=ScriptedChatModel(default=answer))
    stack.say("Our product is called CloudDesk. Please use that name in the copy.", thread="week-1")
    stack.say("Correction: our product is called CloudDesk Pro, not CloudDesk.", thread="week-1")
    stack.say("Write a one-line tagline for our product.", thread="week-2")
    block = stack.recall_block()
    lines = memory_lines(stack.prompt)
    assert "The user's product is called CloudDesk Pro" in lines
    assert "The user's product is called CloudDesk" not in lines
    assert "CloudDesk Pro" in block
    history = stack.store.list_memories("u1", include_history=True)
    old = next(r for r in history if r.text.endswith("called CloudDesk"))
    assert old.status == MemoryStatus.SUPERSEDED and old.valid_to is not None


# --------------------------------------------------------------------------- story 3


def test_seafood_allergy_told_this_morning_is_avoided_tonight(build: Any) -> None:
    stack = build(mode="background")  # the durable queue, drained after each turn
    stack.say("Good morning! By the way, I'm allergic to seafood.", thread="morning")
    answer = stack.say(
        "Book us a dinner place tonight; the team suggested seafood.", thread="evening"
    )
    assert "User is allergic to seafood" in memory_lines(stack.prompt)
    assert "allergic to seafood" in answer and "vegetable hot pot" in answer
    # Nothing of the morning thread is in the evening prompt except through memory.
    assert not any("Good morning" in m.text for m in stack.prompt)
    assert stack.queue.unfinished() == 0


# --------------------------------------------------------------------------- story 4


def test_budget_3000_then_5000_recalls_5000(build: Any) -> None:
    stack = build()
    stack.say("For the Japan trip, my budget is 3000.", thread="plan-1")
    stack.say("Update: actually my budget is 5000 now.", thread="plan-2")
    answer = stack.say("Which hotels fit my budget?", thread="plan-3")
    lines = memory_lines(stack.prompt)
    assert any("5000" in line for line in lines)
    assert not any("3000" in line for line in lines)
    assert "Your budget is 5000." in answer
    active = [r for r in stack.store.list_memories("u1") if r.key == "budget"]
    assert len(active) == 1 and "5000" in active[0].text


# --------------------------------------------------------------------------- story 5


def test_an_assistant_guess_never_becomes_a_fact_about_the_user(build: Any) -> None:
    agent = ScriptedChatModel(
        script=[
            "Since you are diabetic, you should avoid sugary lunches.",
            "Here are some lunch ideas.",
        ]
    )
    careless = scripted_extractor(
        [
            # A careless model turns the assistant's guess into a "user_stated" fact ...
            (
                r"you are diabetic",
                {"text": "User is diabetic", "key": "health.diabetes", "type": "semantic",
                 "category": "identity", "importance": 0.9, "source": "user_stated",
                 "role": "assistant"},
            ),
            # ... next to a real fact the user stated.
            (
                r"tired after lunch",
                {"text": "User often feels tired after lunch", "type": "semantic",
                 "category": "identity", "importance": 0.6, "source": "user_stated"},
            ),
        ]
    )  # fmt: skip
    stack = build(model=agent, extractor=careless)
    stack.say("I often feel tired after lunch lately.", thread="health-1")
    stack.say("Any lunch ideas? Should a diabetic person avoid rice?", thread="health-2")
    stored = stack.store.list_memories("u1", include_history=True)
    assert [r.text for r in stored] == ["User often feels tired after lunch"]
    assert all(r.source == MemorySource.USER_STATED for r in stored)
    # The later prompt (whose query mentions "diabetic") shows no such "fact".
    block = stack.recall_block()
    assert "tired after lunch" in block
    assert "diabetic" not in block
    assert len(careless.calls) == 2  # one extraction call per batch


# --------------------------------------------------------------------------- variants


def test_seafood_allergy_story_in_chinese(build: Any) -> None:
    stack = build()
    stack.say("早上好！提醒一下，我对海鲜过敏。", thread="zh-morning")
    answer = stack.say("今晚团队聚餐，大家想吃海鲜，你推荐哪里？", thread="zh-evening")
    assert "用户对海鲜过敏" in memory_lines(stack.prompt)
    assert "用户对海鲜过敏" in answer and "vegetable hot pot" in answer


async def test_budget_story_async_end_to_end(tmp_path: Path) -> None:
    """The same story on the async path: AsyncSqliteSaver, ainvoke, background writer."""
    from langgraph_memory.session import AsyncSqliteSaver

    db = str(tmp_path / "checkpoints.sqlite")
    store = ChromaMemoryStore.embedded(tmp_path / "ltm", embeddings=HashingEmbeddings())
    queue = SqliteMemoryQueue(db, debounce_seconds=0)
    writer = MemoryWriter(store, extractor=RuleBasedExtractor(), mode="background", queue=queue)
    chat = MemoryAwareChatModel()

    async def agent(state: MemoryState) -> dict[str, Any]:
        return {"messages": [await chat.ainvoke(state["messages"])]}

    builder = StateGraph(MemoryState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    add_memory_nodes(builder, model_node="agent", store=store, writer=writer)
    try:
        async with AsyncSqliteSaver.from_conn_string(db) as saver:
            graph = builder.compile(checkpointer=saver, store=store)
            for thread, text in [
                ("a1", "For the Japan trip, my budget is 3000."),
                ("a2", "Update: actually my budget is 5000 now."),
            ]:
                await graph.ainvoke(
                    {"messages": [HumanMessage(text)]},
                    {"configurable": {"thread_id": thread, "user_id": "u1"}},
                )
                assert await writer.adrain(timeout=30)
            out = await graph.ainvoke(
                {"messages": [HumanMessage("Which hotels fit my budget?")]},
                {"configurable": {"thread_id": "a3", "user_id": "u1"}},
            )
        assert "Your budget is 5000." in out["messages"][-1].text
        lines = memory_lines(chat.calls[-1])
        assert any("5000" in line for line in lines) and not any("3000" in line for line in lines)
    finally:
        flush_access_stats()
        queue.close()
        store.close()
