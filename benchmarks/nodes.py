"""Benchmark of the memory nodes: added latency, compression ratio, LLM calls per batch.

Run ``python -m benchmarks.nodes`` (``--quick`` for a smoke run). Offline and
deterministic: ``HashingEmbeddings``, an embedded ``ChromaMemoryStore``, our
``SqliteSaver``, and scripted chat models that answer instantly, so every number
is our own overhead, not LLM time. Writes ``benchmarks/RESULTS-nodes.md``.

1. Added latency per turn at 10k memories: a 30-turn dialogue replayed on a
   compiled graph with and without the memory nodes (same saver, same model),
   plus the recall and compress nodes timed on their own. Target: recall +
   compress <= 10 ms p95.
2. Compression: prompt tokens of a 30-turn dialogue before and after
   ``compress`` with a 300-token summary cap. Target: >= 85 % fewer tokens.
3. LLM calls per batch for extract + reconcile through ``MemoryWriter``.
   Target: <= 1 each.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from langchain_core.embeddings import Embeddings
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    MessageLikeRepresentation,
)
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.base import PutOp

from benchmarks._longterm_shared import SharedBackends
from graphs._models import ScriptedChatModel
from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.longterm.embedding_identity import embedding_name
from langgraph_memory.nodes import create_compress_node, create_recall_node
from langgraph_memory.nodes.recall import flush_access_stats
from langgraph_memory.pipeline import MemoryWriter
from langgraph_memory.session import SqliteSaver
from langgraph_memory.tokens import count_message_tokens
from langgraph_memory.types import MemoryRecord, MemoryType
from langgraph_memory.wiring import MemoryState, add_memory_nodes

RESULTS = Path(__file__).with_name("RESULTS-nodes.md")
USER = "bench-user"
TOPICS = (
    "hotel", "flight", "budget", "restaurant", "museum", "train", "weather", "visa",
    "insurance", "luggage", "allergy", "meeting", "invoice", "order", "refund", "gift",
)  # fmt: skip


# --------------------------------------------------------------------------- data


def memories(n: int) -> list[MemoryRecord]:
    """``n`` varied memories of one user (facts, events, a few standing instructions, keyed slots)."""
    out = []
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        kind = MemoryType.PROCEDURAL if i % 97 == 0 else (
            MemoryType.EPISODIC if i % 5 == 0 else MemoryType.SEMANTIC
        )  # fmt: skip
        out.append(
            MemoryRecord(
                text=f"User note {i}: prefers the {topic} option number {i % 13} in city {i % 29}",
                type=kind,
                # Every 50th memory is a profile slot (200 keyed slots at 10k memories):
                # the recall node's profile pass ranks them on every turn.
                key=f"slot.{topic}.{i}" if i % 50 == 0 else None,
                importance=0.5 + (i % 5) / 10,
                user_id=USER,
            )
        )
    return out


def dialogue(turns: int = 30) -> list[tuple[str, str]]:
    """A realistic-length dialogue: ~25-token questions, ~150-token answers."""
    out = []
    for t in range(turns):
        topic = TOPICS[t % len(TOPICS)]
        question = (
            f"Turn {t}: about the {topic} for our Hangzhou trip, what would you suggest "
            f"given what I told you before? Please keep it practical."
        )
        answer = " ".join(
            f"For the {topic}, option {k} is a good fit because it is close to West Lake, "
            f"costs about {300 + 25 * k} yuan and can be booked online."
            for k in range(4)
        )
        out.append((question, answer))
    return out


def as_messages(pairs: Sequence[tuple[str, str]], prefix: str = "") -> list[AnyMessage]:
    msgs: list[AnyMessage] = []
    for i, (q, a) in enumerate(pairs):
        msgs += [HumanMessage(q, id=f"{prefix}h{i}"), AIMessage(a, id=f"{prefix}a{i}")]
    return msgs


def summary_of(tokens: int) -> str:
    """A summary of about ``tokens`` tokens (the fake summariser's answer)."""
    line = "- The user plans a Hangzhou trip, budget 5000 yuan, prefers lake-view hotels.\n"
    text = ""
    while count_message_tokens([HumanMessage(text + line)]) - 3 <= tokens:
        text += line
    return text.strip()


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}"


# --------------------------------------------------------------------------- 1. latency


class MemoEmbeddings(Embeddings):
    """``HashingEmbeddings`` whose query vectors are remembered: after a warm-up dialogue
    every query is a dict lookup, so the timed turns exclude embedding time (issue 15's
    target). Documents are embedded as usual. Same model identity as the wrapped one."""

    def __init__(self) -> None:
        self.inner = HashingEmbeddings()
        self.model_identity = embedding_name(self.inner)
        self.queries: dict[str, list[float]] = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        found = self.queries.get(text)
        if found is None:
            found = self.queries[text] = self.inner.embed_query(text)
        return found


def open_store(path: Path, shared: SharedBackends | None) -> ChromaMemoryStore:
    """The embedded layout, or the shared one (Postgres catalog + `chroma run` server)."""
    if shared is None:
        return ChromaMemoryStore.embedded(path, embeddings=MemoEmbeddings())
    return ChromaMemoryStore.from_http(
        shared.chroma_url, catalog=shared.database("nodes"), embeddings=MemoEmbeddings()
    )


def seed_store(path: Path, n: int, shared: SharedBackends | None = None) -> ChromaMemoryStore:
    store = open_store(path, shared)
    records = memories(n)
    for start in range(0, n, 1000):
        store.batch(
            [PutOp(("memories", USER), r.id, r.to_dict()) for r in records[start : start + 1000]]
        )
    return store


def graph_for(
    saver: Any, store: ChromaMemoryStore | None, replies: list[str], max_tokens: int
) -> Any:
    model = ScriptedChatModel(default=lambda _msgs: replies[0])
    summariser = ScriptedChatModel(default=summary_of(250))

    def agent(state: MemoryState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MemoryState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    if store is not None:
        add_memory_nodes(
            builder,
            model_node="agent",
            store=store,
            model_for_summary=summariser,
            max_tokens=max_tokens,
        )
    return builder.compile(checkpointer=saver, store=store)


class ReplayStore:
    """Answers recall's searches from answers recorded on the real store: what is left of
    the recall node's time is its own work (query, packing, rendering, state update)."""

    def __init__(self, real: ChromaMemoryStore) -> None:
        self.real = real
        self.answers: dict[tuple[str, ...], Any] = {}
        self.search_seconds: list[float] = []

    def search_memories(self, user_id: str, query: str, **kw: Any) -> list[Any]:
        key = (query, repr(sorted(kw.items())))
        if key not in self.answers:
            started = time.perf_counter()
            self.answers[key] = self.real.search_memories(user_id, query, **kw)
            self.search_seconds.append(time.perf_counter() - started)
        found: list[Any] = self.answers[key]
        return found

    def recall_memories(self, user_id: str, query: str, **kw: Any) -> Any:
        """The one-pass recall API the node prefers (query, pinned and profile passes)."""
        key = ("recall", query, repr(sorted(kw.items())))
        if key not in self.answers:
            started = time.perf_counter()
            self.answers[key] = self.real.recall_memories(user_id, query, **kw)
            self.search_seconds.append(time.perf_counter() - started)
        return self.answers[key]

    async def arecall_memories(self, user_id: str, query: str, **kw: Any) -> Any:
        return self.recall_memories(user_id, query, **kw)

    def touch(self, user_id: str, ids: Sequence[str]) -> None:
        return None

    def __getattr__(self, name: str) -> Any:  # the rest of the LongTermMemory protocol
        return getattr(self.real, name)


def recall_own_overhead(
    store: ChromaMemoryStore, queries: Sequence[str]
) -> tuple[list[float], list[float]]:
    """(recall node seconds with searches replayed, seconds of the real store searches)."""
    replay = ReplayStore(store)
    recall = create_recall_node(store=replay, update_access_stats=False)
    config: RunnableConfig = {"configurable": {"user_id": USER}}
    warm = create_recall_node(store=store, update_access_stats=False)
    for q in queries:  # the query vectors into the memo: the recorded searches exclude them
        warm.invoke({"messages": [HumanMessage(q, id="h")]}, config)
    for q in queries:  # record
        recall.invoke({"messages": [HumanMessage(q, id="h")]}, config)
    times = []
    for q in queries:
        started = time.perf_counter()
        recall.invoke({"messages": [HumanMessage(q, id="h")]}, config)
        times.append(time.perf_counter() - started)
    return times, replay.search_seconds


def bench_latency(
    workdir: Path, n_memories: int, dialogues: int, shared: SharedBackends | None = None
) -> dict[str, Any]:
    workdir.mkdir(parents=True, exist_ok=True)
    store = seed_store(workdir / "ltm", n_memories, shared)
    pairs = dialogue(30)
    max_tokens = 4000  # compress triggers every few turns in a 30-turn dialogue
    recall = create_recall_node(store=store, prompt_budget_tokens=max_tokens)
    compress = create_compress_node(
        model=ScriptedChatModel(default=summary_of(250)), max_tokens=max_tokens
    )
    config: RunnableConfig = {"configurable": {"user_id": USER, "thread_id": "bench"}}
    recall_times: list[float] = []
    compress_times: list[float] = []
    compress_fired = 0
    # The store's share of the same turns: its one recall_memories call, timed inside
    # each recall (comparing with calls timed elsewhere in the run mixed in the box's
    # drift between phases).
    store_times: list[float] = []
    real_recall_memories = store.recall_memories

    def timed_recall_memories(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return real_recall_memories(*args, **kwargs)
        finally:
            store_times.append(time.perf_counter() - started)

    setattr(store, "recall_memories", timed_recall_memories)  # noqa: B010 (an instance attribute)
    # Dialogue -1 is a warm-up, not timed: it fills the query-vector memo (embedding
    # excluded) and the caches a user in conversation keeps warm.
    for d in range(-1, dialogues):
        if d == 0:
            recall_times.clear()
            compress_times.clear()
            store_times.clear()
            compress_fired = 0
        state: dict[str, Any] = {"messages": [], "summary": ""}
        for i, (question, answer) in enumerate(pairs):
            asked: list[MessageLikeRepresentation] = [HumanMessage(question, id=f"{d}h{i}")]
            state["messages"] = add_messages(state["messages"], asked)
            started = time.perf_counter()
            update = recall.invoke(state, config)
            recall_times.append(time.perf_counter() - started)
            state["messages"] = add_messages(state["messages"], update.get("messages", []))
            answered: list[MessageLikeRepresentation] = [AIMessage(answer, id=f"{d}a{i}")]
            state["messages"] = add_messages(state["messages"], answered)
            started = time.perf_counter()
            update = compress.invoke(state, config)
            compress_times.append(time.perf_counter() - started)
            if update:
                compress_fired += 1
                state["messages"] = add_messages(state["messages"], update["messages"])
                state["summary"] = update["summary"]
            # The model's reply comes here in a real turn (hundreds of ms at least), and
            # the access statistics written beside it are long done by the next turn.
            # The scripted model answers at once, so wait for them outside the timing:
            # left to overlap, that ~1 ms write on a second thread competed with the
            # next recall (p50 +5 ms on the loaded box).
            flush_access_stats()
    delattr(store, "recall_memories")
    assert len(store_times) == len(recall_times)  # one store call per recall turn
    per_turn = [r + c for r, c in zip(recall_times, compress_times, strict=True)]
    after_write = recall_after_own_writes(store, recall, config, pairs)

    # End to end on compiled graphs with our SqliteSaver: with vs without the nodes.
    end_to_end: dict[str, list[float]] = {}
    for label, use_store in (("baseline (no memory nodes)", None), ("with memory nodes", store)):
        with SqliteSaver.from_conn_string(str(workdir / f"{label[:4]}.sqlite")) as saver:
            graph = graph_for(saver, use_store, [pairs[0][1]], max_tokens)
            times = []
            for d in range(dialogues):
                cfg: RunnableConfig = {"configurable": {"user_id": USER, "thread_id": f"e2e-{d}"}}
                for question, _ in pairs:
                    started = time.perf_counter()
                    graph.invoke({"messages": [HumanMessage(question)]}, cfg)
                    times.append(time.perf_counter() - started)
            end_to_end[label] = times
    flush_access_stats()
    own, _ = recall_own_overhead(store, [q for q, _ in pairs])
    store.close()
    base, mem = end_to_end["baseline (no memory nodes)"], end_to_end["with memory nodes"]
    return {
        "memories": n_memories,
        "turns": len(per_turn),
        "compress_fired": compress_fired,
        "recall_p50": statistics.median(recall_times),
        "recall_p95": percentile(recall_times, 0.95),
        "recall_own_p50": statistics.median(own),
        "recall_own_p95": percentile(own, 0.95),
        "store_search_p50": statistics.median(store_times),
        "store_search_p95": percentile(store_times, 0.95),
        "recall_minus_store_p50": statistics.median(
            r - s for r, s in zip(recall_times, store_times, strict=True)
        ),
        "compress_p50": statistics.median(compress_times),
        "compress_p95": percentile(compress_times, 0.95),
        "added_p50": statistics.median(per_turn),
        "added_p95": percentile(per_turn, 0.95),
        "e2e_base_p50": statistics.median(base),
        "e2e_base_p95": percentile(base, 0.95),
        "e2e_mem_p50": statistics.median(mem),
        "e2e_mem_p95": percentile(mem, 0.95),
        "after_write_p50": statistics.median(after_write),
        "after_write_p95": percentile(after_write, 0.95),
    }


def recall_after_own_writes(
    store: ChromaMemoryStore,
    recall: Any,
    config: RunnableConfig,
    pairs: Sequence[tuple[str, str]],
) -> list[float]:
    """Recall timed on turns that follow a memory write by the same store (what the
    memory writer does between a user's turns): the vector cache must carry the
    write forward, not reload the user's 10k vectors from Chroma."""
    times = []
    for i, (question, _) in enumerate(pairs):
        store.put_memory(
            MemoryRecord(text=f"User mentioned new detail {i} about the {question[:40]}", user_id=USER)
        )
        flush_access_stats()
        state = {"messages": [HumanMessage(question, id=f"w{i}")], "summary": ""}
        started = time.perf_counter()
        recall.invoke(state, config)
        times.append(time.perf_counter() - started)
    return times


# --------------------------------------------------------------------------- 2. compression


def bench_compression() -> dict[str, Any]:
    msgs = as_messages(dialogue(30))
    before = count_message_tokens(msgs)
    out: dict[str, Any] = {"tokens_before": before, "rows": []}
    for keep in (2, 3):
        for label, model in (
            ("model summary at the 300-token cap", ScriptedChatModel(default=summary_of(300))),
            ("offline extractive summary", None),
        ):
            node = create_compress_node(
                model=model,
                max_tokens=before * 2,
                trigger_tokens=before,
                summary_max_tokens=300,
                keep_last_turns=keep,
            )
            update = node.invoke({"messages": msgs}, {"configurable": {"user_id": USER}})
            # add_messages takes an invariant list[MessageLikeRepresentation] and is typed
            # to return any message-like value; it always returns a list of messages.
            after_msgs = cast(
                list[BaseMessage],
                add_messages(cast(list[MessageLikeRepresentation], msgs), update["messages"]),
            )
            after = count_message_tokens(after_msgs)
            out["rows"].append(
                {
                    "keep": keep,
                    "summariser": label,
                    "tokens_after": after,
                    "summary_tokens": count_message_tokens([HumanMessage(update["summary"])]) - 3,
                    "kept_messages": sum(1 for m in after_msgs if m.type != "system"),
                    "reduction": 1 - after / before,
                }
            )
    return out


# --------------------------------------------------------------------------- 3. LLM calls


def _extraction_answer(prompt: list[BaseMessage]) -> str:
    """A scripted extraction model: memories from each user line, citing that line."""
    found: list[tuple[str, str, str | None, float]] = []
    for alias, text in re.findall(r"\[(m\d+)\] user(?: \([^)]*\))?: (.*)", prompt[-1].text):
        if m := re.search(r"budget is (\d+)", text):
            found.append((alias, f"User's budget is {m.group(1)}", "budget", 0.8))
        if m := re.search(r"I (?:like|love) ([\w ]+)", text):
            found.append((alias, f"User likes {m.group(1)}", None, 0.6))
        if m := re.search(r"my (\w+) is ([\w ]+)", text):
            found.append((alias, f"User's {m.group(1)} is {m.group(2)}", m.group(1), 0.7))
    memories_out = [
        {"text": text, "key": key, "importance": importance, "type": "semantic",
         "category": "preference", "source": "user_stated", "message_ids": [alias]}
        for alias, text, key, importance in found
    ]  # fmt: skip
    return json.dumps({"memories": memories_out})


def _reconcile_answer(prompt: list[BaseMessage]) -> str:
    numbers = [int(n) for n in re.findall(r"^NEW (\d+)", prompt[-1].text, re.MULTILINE)]
    return json.dumps(
        {
            "decisions": [
                {"new": n, "label": "adds", "targets": [], "reason": "new"} for n in numbers
            ]
        }
    )


def bench_llm_calls(workdir: Path, batches: int) -> dict[str, Any]:
    store = ChromaMemoryStore.embedded(workdir / "ltm-calls", embeddings=HashingEmbeddings())
    extractor = ScriptedChatModel(default=_extraction_answer)
    reconciler = ScriptedChatModel(default=_reconcile_answer)
    writer = MemoryWriter(store, extractor=extractor, model_for_reconcile=reconciler, mode="sync")
    per_batch: list[tuple[int, int, int]] = []
    for b in range(batches):
        msgs: list[BaseMessage] = [
            HumanMessage(
                f"My budget is {3000 + 500 * b}. I like jazz bar number {b}.", id=f"b{b}-1"
            ),
            AIMessage("Noted.", id=f"b{b}-2"),
            HumanMessage(f"Also my city is Hangzhou {b % 2}. I love tea house {b}.", id=f"b{b}-3"),
            AIMessage("Great.", id=f"b{b}-4"),
        ]
        e0, r0 = len(extractor.calls), len(reconciler.calls)
        receipt = writer.submit(USER, f"t{b}", msgs)
        per_batch.append((len(extractor.calls) - e0, len(reconciler.calls) - r0, len(receipt.ops)))
    store.close()
    return {
        "batches": batches,
        "max_extract_calls": max(e for e, _, _ in per_batch),
        "max_reconcile_calls": max(r for _, r, _ in per_batch),
        "batches_with_judgement": sum(1 for _, r, _ in per_batch if r),
        "ops_per_batch": statistics.median(o for _, _, o in per_batch),
    }


# --------------------------------------------------------------------------- report


def shared_rows(lat: dict[str, Any] | None) -> list[str]:
    """The recall rows again for the shared layout (``--catalog both``), if it ran."""
    if lat is None:
        return []
    return [
        "### The same turns on the shared layout (Postgres catalog + `chroma run` server)",
        "",
        "| | p50 ms | p95 ms |",
        "|---|---|---|",
        f"| recall node | {ms(lat['recall_p50'])} | {ms(lat['recall_p95'])} |",
        f"| of which: the store, one `recall_memories` call | {ms(lat['store_search_p50'])} "
        f"| {ms(lat['store_search_p95'])} |",
        f"| compress node | {ms(lat['compress_p50'])} | {ms(lat['compress_p95'])} |",
        f"| **recall + compress per turn** | **{ms(lat['added_p50'])}** "
        f"| **{ms(lat['added_p95'])}** |",
        "",
    ]


def report(
    lat: dict[str, Any],
    comp: dict[str, Any],
    calls: dict[str, Any],
    seconds: float,
    lat_shared: dict[str, Any] | None = None,
) -> str:
    def ok(good: bool) -> str:
        return "PASS" if good else "FAIL"

    model_row = next(
        r for r in comp["rows"] if r["keep"] == 2 and r["summariser"].startswith("model")
    )
    lines = [
        "# Nodes benchmark (`python -m benchmarks.nodes`)",
        "",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, shared 2-core box "
        f"(load average {os.getloadavg()[0]:.1f} at the end of the run); "
        f"offline (HashingEmbeddings, embedded Chroma, scripted models with zero latency). "
        f"Run took {seconds:.0f} s.",
        "",
        "## Targets",
        "",
        "| target | measured | |",
        "|---|---|---|",
        f"| recall + compress added latency p95 per turn at {lat['memories']:,} memories <= 10 ms "
        f"| {ms(lat['added_p95'])} ms | {ok(lat['added_p95'] <= 0.010)} |",
        f"| compress cuts a 30-turn dialogue's prompt tokens >= 85 % (300-token summary cap, "
        "default keep_last_turns=2) "
        f"| {model_row['reduction']:.1%} | {ok(model_row['reduction'] >= 0.85)} |",
        f"| extract LLM calls per batch <= 1 | {calls['max_extract_calls']} | {ok(calls['max_extract_calls'] <= 1)} |",
        f"| reconcile LLM calls per batch <= 1 | {calls['max_reconcile_calls']} "
        f"| {ok(calls['max_reconcile_calls'] <= 1)} |",
        "",
        f"## 1. Added latency ({lat['turns']} turns = 30-turn dialogues replayed; "
        f"compress fired on {lat['compress_fired']} turns)",
        "",
        "| | p50 ms | p95 ms |",
        "|---|---|---|",
        f"| recall node (query search, standing instructions, core profile; pack, inject) | {ms(lat['recall_p50'])} | {ms(lat['recall_p95'])} |",
        "| of which: the store, one `ChromaMemoryStore.recall_memories` call (query search, "
        "pinned instructions and the profile pass by importance in one pass; timed inside "
        "the same turns) "
        f"| {ms(lat['store_search_p50'])} | {ms(lat['store_search_p95'])} |",
        "| recall node minus its store call, turn by turn (the node's work on the dialogue's "
        f"state, LangChain's `invoke`) | {ms(lat['recall_minus_store_p50'])} | |",
        f"| recall node's own work (searches replayed from memory; one-message state) | {ms(lat['recall_own_p50'])} "
        f"| {ms(lat['recall_own_p95'])} |",
        f"| compress node (check every turn; summarise when over 65 % of 4000 tokens) "
        f"| {ms(lat['compress_p50'])} | {ms(lat['compress_p95'])} |",
        f"| **recall + compress per turn** | **{ms(lat['added_p50'])}** | **{ms(lat['added_p95'])}** |",
        f"| recall node on a turn right after this store wrote a memory (the writer between "
        f"turns; 30 turns) | {ms(lat['after_write_p50'])} | {ms(lat['after_write_p95'])} |",
        f"| graph turn with SqliteSaver, no memory nodes (baseline) | {ms(lat['e2e_base_p50'])} "
        f"| {ms(lat['e2e_base_p95'])} |",
        f"| graph turn with SqliteSaver + recall/compress nodes | {ms(lat['e2e_mem_p50'])} "
        f"| {ms(lat['e2e_mem_p95'])} |",
        f"| ratio with / without (median) | {lat['e2e_mem_p50'] / lat['e2e_base_p50']:.2f}x | |",
        "",
        "Query embedding is excluded (issue 15's target): query vectors come from a memo filled "
        "by an untimed warm-up dialogue (HashingEmbeddings costs ~0.7 ms per query here). Access "
        "statistics (`store.touch`) run on a background thread; each turn waits for them outside "
        "the timing, as the model's reply time would in a real turn.",
        "",
        *shared_rows(lat_shared),
        f"Where the time goes: recall's own work (query, packing within the token budget, "
        f"rendering, the state update) is {ms(lat['recall_own_p50'])} ms p50 with a one-message "
        f"state, and the whole node minus its store call {ms(lat['recall_minus_store_p50'])} ms "
        f"on the dialogue's turns; compress is {ms(lat['compress_p50'])} ms p50 when it only "
        "checks the trigger (most of it redacting the turn's new messages ahead of the "
        "summary) and 1-3 ms more on the turns it summarises, which are the p95 of the sum. "
        f"The rest is the store: one `recall_memories` call at {lat['memories']:,} memories "
        f"takes {ms(lat['store_search_p50'])} ms p50. It answers the query and the pinned "
        "standing instructions from one keyword plan (one FTS5/BM25 pass over every matching "
        "row, ~2 ms for the ~1,600 rows a question matches here: the largest single cost), "
        "one query embedding and one cosine pass over the cached vectors (on a worker thread "
        "beside the BM25 pass: numpy and SQLite both release the GIL), plus the core "
        "profile's candidates by importance (the keyed slots, through the partial index on "
        "`mem_key`, at this size); five row reads in all. Token counts use "
        "`langgraph_memory.tokens` (the calibrated Chinese/English estimate, the nodes' "
        "default).",
        "",
        "## 2. Compression of a 30-turn dialogue",
        "",
        f"Before: {comp['tokens_before']:,} prompt tokens (~25-token questions, ~150-token answers; "
        "`count_message_tokens`). The summary message and the recall block are counted "
        'in "after"; `keep_last_turns=2` is the default.',
        "",
        "| keep_last_turns | summariser | summary tokens | messages kept | tokens after | reduction |",
        "|---|---|---|---|---|---|",
    ]
    for row in comp["rows"]:
        lines.append(
            f"| {row['keep']} | {row['summariser']} | {row['summary_tokens']} | {row['kept_messages']} "
            f"| {row['tokens_after']:,} | {row['reduction']:.1%} |"
        )
    lines += [
        "",
        f"## 3. LLM calls per batch ({calls['batches']} batches of 2 user turns, "
        f"median {calls['ops_per_batch']} memory ops each)",
        "",
        f"extract: at most {calls['max_extract_calls']} call per batch; reconcile: at most "
        f"{calls['max_reconcile_calls']} call per batch; {calls['batches_with_judgement']} of "
        f"{calls['batches']} batches needed the model's judgement (same-key updates are decided "
        "without the model).",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="memory nodes benchmark")
    parser.add_argument("--quick", action="store_true", help="1k memories, 1 dialogue (smoke run)")
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--dialogues", type=int, default=4)
    parser.add_argument("--no-write", action="store_true", help="do not write RESULTS-nodes.md")
    parser.add_argument(
        "--shared",
        action="store_true",
        help="also replay the turns on a Postgres catalog + `chroma run` server",
    )
    parser.add_argument(
        "--pg-admin-dsn",
        default=os.environ.get("LGM_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres"),
        help="--shared creates (and drops) its database through this DSN",
    )
    args = parser.parse_args(argv)
    n, dialogues = (1000, 1) if args.quick else (args.memories, args.dialogues)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="lgm-bench-nodes-") as tmp:
        work = Path(tmp)
        print(f"seeding {n:,} memories and replaying {dialogues} x 30 turns ...", flush=True)
        lat = bench_latency(work, n, dialogues)
        lat_shared = None
        if args.shared:
            print("the same on the shared layout ...", flush=True)
            shared = SharedBackends(args.pg_admin_dsn)
            try:
                lat_shared = bench_latency(work / "shared", n, dialogues, shared)
            finally:
                shared.close()
        comp = bench_compression()
        calls = bench_llm_calls(work, batches=10)
    text = report(lat, comp, calls, time.perf_counter() - started, lat_shared)
    print(text)
    if not args.no_write and not args.quick:
        RESULTS.write_text(text)
        print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
