"""MemoryWriter end to end on the real ChromaMemoryStore and a real SQLite queue file.

The issue's stories at the writer level, LLM call counts per batch, background
work (debounce, retry, failure), restart after a graceful stop mid-batch, and the
extract node inside a compiled graph with our checkpointer.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.graph import START, StateGraph

from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.errors import ConfigurationError, MissingUserIdError
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.nodes.extract import LLMMemoryExtractor, create_extract_node
from langgraph_memory.nodes.reconcile import create_reconcile_node
from langgraph_memory.nodes.rules import RuleBasedExtractor
from langgraph_memory.pipeline.queue import MemoryQueue, PostgresMemoryQueue, SqliteMemoryQueue
from langgraph_memory.pipeline.writer import MemoryWriter
from langgraph_memory.types import CandidateMemory, MemorySource, MemoryStatus
from tests.unit.test_extract_fakes import ScriptedChatModel, decisions_json, memories_json

U = "alice"


def last_human_id(messages: list[BaseMessage]) -> str:
    """What extract has submitted through: the user's latest message (the assistant's
    reply goes with the next turn, beside the user's answer to it)."""
    return next(m.id for m in reversed(messages) if isinstance(m, HumanMessage))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[ChromaMemoryStore]:
    s = ChromaMemoryStore.embedded(tmp_path / "longterm", embeddings=HashingEmbeddings())
    yield s
    s.close()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "checkpoints.sqlite"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def queue(request: pytest.FixtureRequest, db: Path) -> Iterator[MemoryQueue]:
    settings = {"debounce_seconds": 0.05, "backoff_base_seconds": 0.05, "max_attempts": 3}
    q: MemoryQueue
    if request.param == "postgres":
        q = PostgresMemoryQueue(request.getfixturevalue("pg_dsn"), **settings)
    else:
        q = SqliteMemoryQueue(db, **settings)
    q.setup()
    yield q
    q.close()


def texts(store: ChromaMemoryStore, user: str = U) -> list[str]:
    return sorted(r.text for r in store.list_memories(user))


def mem(text: str, key: str | None, ids: list[str], **kw: object) -> dict[str, object]:
    return {"text": text, "key": key, "importance": 0.8, "message_ids": ids, **kw}


# --- the stories -------------------------------------------------------------------


def test_budget_3000_then_5000(store: ChromaMemoryStore, queue: MemoryQueue) -> None:
    extract_model = ScriptedChatModel(
        replies=[
            memories_json(mem("User's budget is 3000", "budget", ["m1"])),
            memories_json(mem("User's budget is 5000", "budget", ["m1"])),
        ]
    )
    reconcile_model = ScriptedChatModel(replies=[])  # same key: decided without the model
    writer = MemoryWriter(
        store,
        extractor=extract_model,
        model_for_reconcile=reconcile_model,
        mode="sync",
        queue=queue,
    )
    writer.submit(U, "t1", [HumanMessage("预算3000左右", id="h1"), AIMessage("好的", id="a1")])
    writer.submit(U, "t2", [HumanMessage("预算提高到5000", id="h2"), AIMessage("明白", id="a2")])
    assert len(extract_model.calls) == 2 and reconcile_model.calls == []
    (active,) = store.list_memories(U)
    assert active.text == "User's budget is 5000" and active.key == "budget"
    history = [r for r in store.list_memories(U, include_history=True) if r.id != active.id]
    assert [(r.text, r.status) for r in history] == [
        ("User's budget is 3000", MemoryStatus.SUPERSEDED)
    ]
    assert history[0].valid_to is not None and history[0].superseded_by == active.id
    found = store.search_memories(U, "what is the budget?")
    assert found[0].record.text == "User's budget is 5000"
    assert [e.op.action for e in queue.audit(U)] == ["supersede", "add"]


def test_assistant_guess_never_becomes_a_user_fact(store: ChromaMemoryStore) -> None:
    model = ScriptedChatModel(
        replies=[
            memories_json(
                # the model claims the user said it, citing the assistant's message
                mem("User is diabetic", "health.diabetes", ["m2"], source="user_stated"),
                mem("User wants low-sugar recipes", None, ["m1"]),
            )
        ]
    )
    writer = MemoryWriter(store, extractor=model, mode="sync")
    writer.submit(
        U,
        "t",
        [
            HumanMessage("Give me a dessert recipe, low sugar please", id="h1"),
            AIMessage("Since you are diabetic, here is a sugar-free cake.", id="a1"),
        ],
    )
    assert texts(store) == ["User wants low-sugar recipes"]
    assert all(r.source is MemorySource.USER_STATED for r in store.list_memories(U))

    # Kept as a hypothesis only when asked for, and never as user_stated.
    model = ScriptedChatModel(
        replies=[memories_json(mem("User is diabetic", "health.diabetes", ["m2"]))]
    )
    writer = MemoryWriter(
        store, extractor=LLMMemoryExtractor(model, keep_agent_inferred=True), mode="sync"
    )
    writer.submit(
        U, "t", [HumanMessage("ok", id="h3"), AIMessage("Since you are diabetic...", id="a3")]
    )
    (guess,) = [r for r in store.list_memories(U) if r.key == "health.diabetes"]
    assert guess.source is MemorySource.AGENT_INFERRED and guess.confidence == 0.5
    # ... and the user's own word later replaces it.
    writer = MemoryWriter(store, extractor=RuleBasedExtractor(), mode="sync")
    store_before = {r.id for r in store.list_memories(U)}
    model = ScriptedChatModel(
        replies=[memories_json(mem("User is not diabetic", "health.diabetes", ["m1"]))]
    )
    MemoryWriter(store, extractor=model, mode="sync").submit(
        U, "t", [HumanMessage("I'm not diabetic!", id="h4")]
    )
    (fact,) = [r for r in store.list_memories(U) if r.key == "health.diabetes"]
    assert fact.source is MemorySource.USER_STATED and fact.id not in store_before


def test_forget_my_address_deletes_it(store: ChromaMemoryStore, queue: MemoryQueue) -> None:
    writer = MemoryWriter(store, extractor=RuleBasedExtractor(), mode="sync", queue=queue)
    writer.submit(U, "t", [HumanMessage("My address is 12 Elm Street. I'm vegan.", id="h1")])
    writer.submit(U, "t", [HumanMessage("Actually my address is 9 Oak Road", id="h2")])
    assert len(store.list_memories(U, include_history=True)) == 3
    receipt = writer.submit(U, "t", [HumanMessage("Please forget my address", id="h3")])
    assert [op.action for op in receipt.ops] == ["delete"]
    assert texts(store) == ["User is vegan"]
    remaining = store.list_memories(U, include_history=True)
    assert [r.text for r in remaining] == ["User is vegan"]  # history of the address is gone too
    assert queue.audit(U)[0].op.action == "delete"


def test_chinese_story_offline(store: ChromaMemoryStore) -> None:
    writer = MemoryWriter(store, extractor=RuleBasedExtractor(), mode="sync")
    writer.submit(U, "t", [HumanMessage("以后叫我老王。我对海鲜过敏。以后不要用敬语", id="h1")])
    assert texts(store) == ["用户对海鲜过敏", "用户希望被称为老王", "用户的长期要求：不要用敬语"]
    writer.submit(U, "t", [HumanMessage("忘记我的名字。还是叫我小王吧", id="h2")])
    assert "用户希望被称为小王" in texts(store)


# --- call counts -------------------------------------------------------------------


def test_at_most_one_extract_and_one_reconcile_call_per_batch(
    store: ChromaMemoryStore, queue: MemoryQueue
) -> None:
    seed = MemoryWriter(store, extractor=RuleBasedExtractor(), mode="sync")
    seed.submit(U, "t0", [HumanMessage("I like green tea. I hate meetings before 9am", id="s1")])
    extract_model = ScriptedChatModel(
        replies=[
            memories_json(
                mem("User likes black tea now", None, ["m1"]),
                mem("User hates meetings before 10am", None, ["m1"]),
                mem("User's budget is 5000", "budget", ["m3"]),
            )
        ]
    )
    reconcile_model = ScriptedChatModel(
        replies=[
            lambda msgs: decisions_json(
                {"new": 1, "label": "updates", "targets": ["E1"]},
                {"new": 2, "label": "updates", "targets": ["E2"]},
            )
        ]
    )
    writer = MemoryWriter(
        store,
        extractor=extract_model,
        model_for_reconcile=reconcile_model,
        mode="background",
        queue=queue,
    )
    for n in range(3):  # three turns arrive quickly: one job, one batch
        writer.submit(U, "t1", [HumanMessage(f"turn {n}", id=f"h{n}"), AIMessage("ok", id=f"a{n}")])
    assert len(queue.pending()) == 1
    assert writer.drain(timeout=20)
    assert len(extract_model.calls) == 1 and len(reconcile_model.calls) == 1
    assert re.search(r"\[m5\] user \([^)]+\): turn 2", extract_model.calls[0][1].text)
    prompt = reconcile_model.calls[0][1].text
    assert "User likes green tea" in prompt
    assert len(store.list_memories(U)) == 3


# --- background mode ---------------------------------------------------------------


def test_background_submit_is_off_the_reply_path(
    store: ChromaMemoryStore, queue: MemoryQueue
) -> None:
    gate = threading.Event()

    def slow_reply(_: list[BaseMessage]) -> str:
        gate.wait(10)
        return memories_json(mem("User is vegan", "diet", ["m1"]))

    model = ScriptedChatModel(replies=[slow_reply])
    with MemoryWriter(store, extractor=model, queue=queue, poll_interval=0.02) as writer:
        started = time.perf_counter()
        receipt = writer.submit(U, "t", [HumanMessage("I'm vegan", id="h1")])
        elapsed = time.perf_counter() - started
        assert receipt.job_id is not None and receipt.ops == ()
        assert elapsed < 1.0  # the model (blocked) is not on this path
        gate.set()
        assert writer.drain(timeout=20)
    assert not writer.running
    assert texts(store) == ["User is vegan"]
    assert queue.stats()["done"] == 1


def test_resubmitting_the_same_turns_is_a_no_op(
    store: ChromaMemoryStore, queue: MemoryQueue
) -> None:
    model = ScriptedChatModel(replies=[memories_json(mem("User is vegan", "diet", ["m1"]))])
    writer = MemoryWriter(store, extractor=model, queue=queue)
    turn = [HumanMessage("I'm vegan", id="h1"), AIMessage("noted", id="a1")]
    assert writer.submit(U, "t", turn).queued
    assert writer.drain(timeout=20)
    again = writer.submit(U, "t", turn)
    assert not again.queued and again.job_id is None
    assert writer.drain(timeout=5)
    assert len(model.calls) == 1 and texts(store) == ["User is vegan"]


def test_a_failing_model_is_retried_with_backoff(
    store: ChromaMemoryStore, queue: MemoryQueue
) -> None:
    model = ScriptedChatModel(
        replies=[
            TimeoutError("provider timeout"),
            memories_json(mem("User is vegan", "diet", ["m1"])),
        ]
    )
    with MemoryWriter(store, extractor=model, queue=queue, poll_interval=0.02) as writer:
        writer.submit(U, "t", [HumanMessage("I'm vegan", id="h1")])
        assert writer.drain(timeout=20)
    assert texts(store) == ["User is vegan"]
    assert len(model.calls) == 2 and queue.stats()["done"] == 1 and queue.failed() == []


def test_a_job_that_keeps_failing_is_kept_and_inspectable(
    store: ChromaMemoryStore, queue: MemoryQueue
) -> None:
    # The error is stored on the job; identifiers the model echoed are masked.
    broken = ScriptedChatModel(replies=["not json, ann@example.org"], repeat_last=True)
    writer = MemoryWriter(store, extractor=broken, queue=queue)
    writer.submit(U, "t", [HumanMessage("I'm vegan", id="h1")])
    assert writer.drain(timeout=20)
    (failed,) = queue.failed()
    assert failed.attempts == 3 and "ModelOutputError" in (failed.last_error or "")
    assert "ann@example.org" not in (failed.last_error or "")
    assert failed.message_count == 1  # the turns are kept for a retry
    assert len(broken.calls) == 6  # 3 attempts x (call + one retry)
    assert store.list_memories(U) == []
    fixed = ScriptedChatModel(replies=[memories_json(mem("User is vegan", "diet", ["m1"]))])
    assert queue.retry_failed() == 1
    assert MemoryWriter(store, extractor=fixed, queue=queue).drain(timeout=20)
    assert texts(store) == ["User is vegan"]


def test_graceful_stop_mid_batch_then_restart(store: ChromaMemoryStore, db: Path) -> None:
    """Stop the worker while reconcile waits on the model; a new writer finishes the job."""
    seed = MemoryWriter(store, extractor=RuleBasedExtractor(), mode="sync")
    seed.submit(U, "t0", [HumanMessage("I like green tea", id="s1")])
    entered, release = threading.Event(), threading.Event()

    def gated(_: list[BaseMessage]) -> str:
        entered.set()
        release.wait(10)
        return decisions_json({"new": 1, "label": "updates", "targets": ["E1"]})

    extract_model = ScriptedChatModel(
        replies=[
            memories_json(
                mem("User likes black tea", None, ["m1"]),
                mem("User's budget is 5000", "budget", ["m1"]),
                mem("User is vegan", "diet", ["m1"]),
            )
        ]
    )
    reconcile_model = ScriptedChatModel(replies=[gated])
    q1 = SqliteMemoryQueue(db, debounce_seconds=0)
    first = MemoryWriter(
        store,
        extractor=extract_model,
        model_for_reconcile=reconcile_model,
        queue=q1,
        poll_interval=0.02,
    )
    first.submit(U, "t", [HumanMessage("black tea now; budget 5000; vegan", id="h1")])
    first.start()
    assert entered.wait(10)
    stopper = threading.Thread(target=first.stop)
    stopper.start()
    release.set()
    stopper.join(10)
    assert not first.running
    (info,) = q1.pending()
    assert info.status == "pending" and info.stage == "planned"  # handed back, plan saved
    assert store.list_memories(U) == [
        r for r in store.list_memories(U) if r.text == "User likes green tea"
    ]
    q1.close()

    q2 = SqliteMemoryQueue(db, debounce_seconds=0)
    second = MemoryWriter(
        store,
        extractor=ScriptedChatModel(replies=[]),
        model_for_reconcile=ScriptedChatModel(replies=[]),
        queue=q2,
    )
    with second:
        assert second.drain(timeout=20)
    assert texts(store) == ["User is vegan", "User likes black tea", "User's budget is 5000"]
    assert len(extract_model.calls) == 1 and len(reconcile_model.calls) == 1  # never asked twice
    entries = q2.audit(U)
    job_entries = [e for e in entries if e.job_id is not None]
    assert sorted(e.op_index for e in job_entries) == [0, 1, 2]
    q2.close()


async def test_async_submit_sync_and_background(
    store: ChromaMemoryStore, queue: MemoryQueue
) -> None:
    writer = MemoryWriter(store, extractor=RuleBasedExtractor(), mode="sync")
    receipt = await writer.asubmit(U, "t", [HumanMessage("my budget is 3000", id="h1")])
    assert [op.action for op in receipt.ops] == ["add"]
    async with MemoryWriter(
        store, extractor=RuleBasedExtractor(), queue=queue, poll_interval=0.02
    ) as bg:
        await bg.asubmit(U, "t", [HumanMessage("my budget is 4000", id="h2")])
        assert await bg.adrain(timeout=20)
    assert texts(store) == ["User's budget is 4000"]
    sync_q = MemoryWriter(store, extractor=RuleBasedExtractor(), mode="sync", queue=queue)
    receipt = await sync_q.asubmit(U, "t", [HumanMessage("my budget is 4500", id="h3")])
    assert [op.action for op in receipt.ops] == ["supersede"]


async def test_async_unanswered_reply_is_held_redacted_and_read_alone(
    store: ChromaMemoryStore, queue: MemoryQueue
) -> None:
    writer = MemoryWriter(store, extractor=RuleBasedExtractor(), queue=queue)
    reply = AIMessage("Done: refund of $30 issued; we'll text 13812345678 when it lands.", id="a9")
    held = await writer.asubmit_unanswered(U, "t", reply)
    assert held is not None
    assert [i.job_id for i in queue.pending()] == [held]
    job = queue.claim("w", ignore_debounce=True)
    assert job is not None and job.job_id == held
    assert "13812345678" not in job.messages[0].text  # redacted before it was queued
    queue.release(job)
    assert await writer.adrain(timeout=20)  # no worker: drain runs the hold too
    assert any("refund of $30" in t for t in texts(store))


def test_writer_redacts_before_queueing(store: ChromaMemoryStore, queue: MemoryQueue) -> None:
    writer = MemoryWriter(store, extractor=RuleBasedExtractor(), queue=queue)
    writer.submit(U, "t", [HumanMessage("remember my phone is 13800138000", id="h1")])
    with queue._write() as tx:
        (stored_turns,) = tx.execute("SELECT messages FROM lgm_memory_jobs").fetchone()
    assert "13800138000" not in stored_turns and "[PHONE" in stored_turns
    assert writer.drain(timeout=20)
    assert all("13800138000" not in t for t in texts(store))


def test_bad_arguments(store: ChromaMemoryStore) -> None:
    with pytest.raises(ConfigurationError, match="needs queue"):
        MemoryWriter(store, extractor=RuleBasedExtractor())
    with pytest.raises(ConfigurationError, match="mode"):
        MemoryWriter(store, extractor=RuleBasedExtractor(), mode="later")  # type: ignore[arg-type]
    writer = MemoryWriter(store, extractor=RuleBasedExtractor(), mode="sync")
    with pytest.raises(MissingUserIdError):
        writer.submit("", "t", [])
    with pytest.raises(ConfigurationError, match="thread"):
        writer.submit(U, None, [])  # type: ignore[arg-type]


# --- nodes in a compiled graph -------------------------------------------------------


def agent_then_extract(model_node: Any, writer: MemoryWriter) -> StateGraph[Any]:
    """START -> agent (``model_node``) -> extract (submits to ``writer``)."""
    from langgraph_memory.wiring import MemoryState

    builder: StateGraph[Any] = StateGraph(MemoryState)
    builder.add_node("agent", model_node)
    builder.add_node("extract", create_extract_node(writer=writer))
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "extract")
    return builder


def test_extract_node_in_a_graph_with_our_checkpointer(store: ChromaMemoryStore, db: Path) -> None:
    from langgraph_memory.session import SqliteSaver
    from langgraph_memory.wiring import MemoryState

    def model_node(state: MemoryState) -> dict[str, object]:
        last = state["messages"][-1]
        return {"messages": [AIMessage(f"ok: {last.text}")]}

    queue = SqliteMemoryQueue(db, debounce_seconds=0)
    writer = MemoryWriter(store, extractor=RuleBasedExtractor(), queue=queue)
    builder = agent_then_extract(model_node, writer)
    with SqliteSaver.from_conn_string(str(db)) as saver:
        graph = builder.compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "t1", "user_id": U}}
        graph.invoke({"messages": [HumanMessage("my budget is 3000")]}, config)
        graph.invoke({"messages": [HumanMessage("I'm vegan")]}, config)
        state = graph.get_state(config).values
        assert state["extracted_through"] == last_human_id(state["messages"])
        conn = sqlite3.connect(db)
        (queued,) = conn.execute("SELECT COUNT(*) FROM lgm_memory_job_messages").fetchone()
        conn.close()
        # Every message queued exactly once; the last reply waits for the user's answer.
        assert queued == 3
        assert writer.drain(timeout=20)
        assert texts(store) == ["User is vegan", "User's budget is 3000"]
        with pytest.raises(MissingUserIdError):
            graph.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "t2"}})
    queue.close()


def test_the_reply_a_thread_ends_on_is_kept_once_the_thread_is_quiet(
    store: ChromaMemoryStore, db: Path
) -> None:
    """A confirmation nobody answered stays on record; the same reply answered with a
    correction does not (the next turn cancels the hold and carries the reply)."""
    from langgraph_memory.session import SqliteSaver
    from langgraph_memory.wiring import MemoryState

    replies = iter(
        [
            "Done: refund of $30 issued to your card, 3-5 days.",  # thread t1 ends here
            "Done: I've cancelled order 4471.",  # thread t2 ...
            "Sorry! The order stays as it is.",  # ... where the user corrects it
        ]
    )

    def model_node(state: MemoryState) -> dict[str, object]:
        return {"messages": [AIMessage(next(replies))]}

    queue = SqliteMemoryQueue(db, debounce_seconds=0)
    writer = MemoryWriter(store, extractor=RuleBasedExtractor(), queue=queue)
    builder = agent_then_extract(model_node, writer)
    with SqliteSaver.from_conn_string(str(db)) as saver:
        graph = builder.compile(checkpointer=saver)
        t1 = {"configurable": {"thread_id": "t1", "user_id": U}}
        t2 = {"configurable": {"thread_id": "t2", "user_id": U}}
        graph.invoke({"messages": [HumanMessage("where is my refund?")]}, t1)
        graph.invoke({"messages": [HumanMessage("can you look at order 4471?")]}, t2)
        # The user's turns are written; both replies are held, blocking neither thread.
        assert writer.run_pending() == 2
        assert not any("refund" in t for t in texts(store))
        graph.invoke({"messages": [HumanMessage("no I said keep it")]}, t2)
        assert writer.drain(timeout=20)  # drain runs held jobs without waiting
        kept = [r for r in store.list_memories(U) if r.source is MemorySource.AGENT_INFERRED]
        assert [r.text for r in kept if "refund of $30" in r.text], kept
        assert not [r for r in kept if "cancelled" in r.text.lower()], kept
    queue.close()


def test_unanswered_after_seconds_is_checked(store: ChromaMemoryStore, db: Path) -> None:
    queue = SqliteMemoryQueue(db)
    with pytest.raises(ConfigurationError, match="unanswered_after_seconds=-1"):
        MemoryWriter(
            store, extractor=RuleBasedExtractor(), queue=queue, unanswered_after_seconds=-1
        )
    off = MemoryWriter(
        store, extractor=RuleBasedExtractor(), queue=queue, unanswered_after_seconds=None
    )
    assert off.submit_unanswered(U, "t", AIMessage("Done: refund issued.", id="a1")) is None
    queue.close()


async def test_reconcile_node_records_its_audit(
    store: ChromaMemoryStore, queue: MemoryQueue
) -> None:
    node = create_reconcile_node(store=store, queue=queue)
    config = {"configurable": {"user_id": U, "thread_id": "t"}}
    out = node.invoke(
        {"memory_candidates": [CandidateMemory("User's budget is 3000", key="budget")]}, config
    )
    assert out["memory_candidates"] == [] and [op.action for op in out["memory_ops"]] == ["add"]
    out = await node.ainvoke(
        {"memory_candidates": [{"text": "User's budget is 5000", "key": "budget"}]}, config
    )
    assert [op.action for op in out["memory_ops"]] == ["supersede"]
    assert node.invoke({"memory_candidates": []}, config) == {}
    assert [e.op.action for e in queue.audit(U)] == ["supersede", "add"]
    with pytest.raises(ConfigurationError, match="not a CandidateMemory"):
        node.invoke({"memory_candidates": [42]}, config)


def test_sync_mode_raises_model_errors_and_keeps_the_job(
    store: ChromaMemoryStore, queue: MemoryQueue
) -> None:
    from langgraph_memory.errors import ModelOutputError

    broken = ScriptedChatModel(replies=["nope", "still nope"])
    writer = MemoryWriter(store, extractor=broken, mode="sync", queue=queue)
    with pytest.raises(ModelOutputError):
        writer.submit(U, "t", [HumanMessage("I'm vegan", id="h1")])
    (info,) = queue.pending()
    assert info.attempts == 1 and "ModelOutputError" in (info.last_error or "")
    with pytest.raises(ModelOutputError):  # without a queue the error surfaces the same way
        MemoryWriter(store, extractor=ScriptedChatModel(replies=["x", "y"]), mode="sync").submit(
            U, "t", [HumanMessage("I'm vegan", id="h1")]
        )


def test_queue_less_writer_skips_turns_it_already_wrote(store: ChromaMemoryStore) -> None:
    model = ScriptedChatModel(replies=[memories_json(mem("User is vegan", "diet", ["m1"]))])
    writer = MemoryWriter(store, extractor=model, mode="sync")
    turn = [HumanMessage("I'm vegan", id="h1"), AIMessage("noted", id="a1")]
    assert writer.submit(U, "t", turn).ops
    # compress later hands the same (evicted) turns over: no second model call
    again = writer.submit(U, "t", turn)
    assert again.ops == () and not again.queued
    assert len(model.calls) == 1 and texts(store) == ["User is vegan"]


def test_queue_less_writer_retries_a_turn_whose_write_failed(store: ChromaMemoryStore) -> None:
    from langgraph_memory.errors import ModelOutputError

    model = ScriptedChatModel(
        replies=["x", "y", memories_json(mem("User is vegan", "diet", ["m1"]))]
    )
    writer = MemoryWriter(store, extractor=model, mode="sync")
    turn = [HumanMessage("I'm vegan", id="h1")]
    with pytest.raises(ModelOutputError):
        writer.submit(U, "t", turn)
    assert [op.action for op in writer.submit(U, "t", turn).ops] == ["add"]
    assert len(model.calls) == 3


def test_a_slow_model_call_keeps_its_lease(store: ChromaMemoryStore, db: Path) -> None:
    """A model call longer than the lease: the heartbeat renews it, no second worker steps in."""
    q = SqliteMemoryQueue(db, debounce_seconds=0, lease_seconds=0.6)

    entered = threading.Event()

    def slow(_: list[BaseMessage]) -> str:
        entered.set()
        time.sleep(1.5)  # 2.5 leases
        return memories_json(mem("User is vegan", "diet", ["m1"]))

    model = ScriptedChatModel(replies=[slow])
    rival = MemoryWriter(store, extractor=ScriptedChatModel(replies=[]), queue=q, worker_id="rival")
    with MemoryWriter(store, extractor=model, queue=q, poll_interval=0.02) as writer:
        writer.submit(U, "t", [HumanMessage("I'm vegan", id="h1")])
        assert entered.wait(10)  # the writer's worker holds the job
        deadline = time.monotonic() + 1.2
        while time.monotonic() < deadline:
            assert rival.run_pending() == 0  # the job is never claimable by the rival
            time.sleep(0.1)
        assert writer.drain(timeout=20)
    assert len(model.calls) == 1 and texts(store) == ["User is vegan"]
    q.close()
