"""Run the planted-fact exam against one memory system: plant, then probe.

The system is wired as README section "2. Add the memory nodes to your graph"
shows: ``SqliteSaver`` + ``SqliteMemoryQueue`` in one ``state.db``, a
``MemoryWriter`` with its extractor, an embedded ``ChromaMemoryStore`` in
``ltm/``, and ``add_memory_nodes`` around an agent node, all in a fresh
directory per run and all on one ``ManualClock``.

**Planting by replay** (``plant="replay"``): every past session of every user is
one thread of the same user. Before each turn the clock is set to the turn's
time (session ``at`` + one minute per turn) and every message carries that time
in ``additional_kwargs["created_at"]``. The agent node is ``ReplayChatModel``,
which answers with the data's next assistant turn, deliberate errors included,
so the memory system sees exactly the history the data describes. After each
session the writer is drained: the writer's worker thread is not started and
``run_pending(ignore_debounce=True)`` (what ``drain()`` does without a worker)
runs the session's queued jobs in the calling thread: what the worker does
after its debounce, but deterministic. A job that fails is retried by the
queue's backoff on the replay clock, so at a later session's drain; jobs still
unfinished or failed at the end are reported, not hidden.

**Planting by seeding** (``plant="seed"``): the data's true facts are written
straight into the store at their own times, superseded ones superseded by
their newer value, time-boxed ones with their ``expires_at``, forgotten ones
written and deleted. Bait is never written. This bypasses extraction, so the
seeded score is what retrieval alone achieves on perfect memories.

**Probing**: each probe opens a new thread at the probe's ``at`` and records
the recall block the model actually received (the system message with id
``RECALL_MESSAGE_ID``): its memory lines, the memory ids when the recall node
puts them in ``additional_kwargs["langgraph_memory"]["memory_ids"]``, its token
count and the recall node's own time. Probe turns are queued for the writer but
never processed, so one probe cannot plant memories for the next; the probe
order is shuffled with the run's seed (recall updates access statistics, which
recency ranking reads).

A configuration is a ``MemorySystem``: which embeddings, extractor, reconcile
model and store wrappers to build. The exam's tests plug deliberately broken
variants in through the same hooks.
"""

from __future__ import annotations

import random
import re
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, CallbackManagerForLLMRun
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.graph import END, START, StateGraph
from pydantic import ConfigDict, Field, PrivateAttr

from langgraph_memory.clock import Clock, ManualClock, now, now_seconds
from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.eval.schema import Exam, ExamUser, Fact, Probe
from langgraph_memory.prompts.recall import RECALL_MESSAGE_ID
from langgraph_memory.types import MemoryRecord, MemorySource, MemoryType

__all__ = [
    "BuildContext",
    "LLMCallCounter",
    "MemorySystem",
    "ProbeObservation",
    "ReplayChatModel",
    "SystemRun",
    "parse_recall_lines",
    "run_system",
]

REPLAY_TAG = "langgraph-memory-exam-replay"
# The "[user_stated, 2026-01-01]" tail of a rendered memory line.
_PROVENANCE = re.compile(r" \[[^\[\]]*\]$")
# What the agent says in a probe session when no answer model is configured.
PROBE_REPLY = "(exam probe: no answer model configured)"
# The graph's context budget, as in the README example.
MAX_TOKENS = 8000


class ReplayChatModel(BaseChatModel):
    """The exam's agent: answers with the replies queued by the runner, in order.

    Each reply is stamped with its turn time (``additional_kwargs["created_at"]``)
    and moves the run's clock there, as a real assistant's reply would happen at
    that time. Calls are tagged so ``LLMCallCounter`` does not count them.

    Example:
        >>> model = ReplayChatModel()
        >>> model.queue("Noted.")
        >>> model.invoke("hi").content
        'Noted.'
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    clock: Any = None
    tags: list[str] | None = Field(default_factory=lambda: [REPLAY_TAG])
    _replies: deque[tuple[str | None, datetime | None, str | None]] = PrivateAttr(
        default_factory=deque
    )
    _answer_model: BaseChatModel | None = PrivateAttr(default=None)

    @property
    def _llm_type(self) -> str:
        return "exam-replay"

    def queue(
        self, text: str | None, at: datetime | None = None, message_id: str | None = None
    ) -> None:
        """Queue the next reply; ``None`` lets the answer model (if any) answer instead.

        ``message_id`` makes replayed histories byte-for-byte repeatable (default: random).
        """
        self._replies.append((text, at, message_id))

    def use_answer_model(self, model: BaseChatModel | None) -> None:
        self._answer_model = model

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply, at, message_id = (
            self._replies.popleft() if self._replies else (PROBE_REPLY, None, None)
        )
        if at is not None and isinstance(self.clock, ManualClock):
            self.clock.set(at)
        text = PROBE_REPLY if reply is None else reply
        if reply is None and self._answer_model is not None:  # a probe: the answer model answers
            text = self._answer_model.invoke(messages).text
        stamp = {"created_at": at.isoformat()} if at is not None else {}
        message = AIMessage(
            content=text,
            id=message_id or f"exam-ai-{uuid.uuid4().hex}",
            additional_kwargs=stamp,
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


class LLMCallCounter(BaseCallbackHandler):
    """Counts chat-model and LLM calls of the memory system (not the replay agent)."""

    def __init__(self) -> None:
        self.calls = 0

    def _count(self, tags: Sequence[str] | None) -> None:
        if not tags or REPLAY_TAG not in tags:
            self.calls += 1

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        self._count(tags)

    def on_llm_start(
        self,
        serialized: dict[str, Any],
        prompts: list[str],
        *,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        self._count(tags)


class _NodeTimer(BaseCallbackHandler):
    """The wall time of one graph node's runs (the longest: the node's outermost runnable)."""

    def __init__(self, node: str) -> None:
        self.node = node
        self._started: dict[UUID, float] = {}
        self.seconds = 0.0

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if (metadata or {}).get("langgraph_node") == self.node:
            self._started[run_id] = time.perf_counter()

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        started = self._started.pop(run_id, None)
        if started is not None:
            self.seconds = max(self.seconds, time.perf_counter() - started)


@dataclass(frozen=True, slots=True)
class BuildContext:
    """What a ``MemorySystem``'s hooks may use to build their parts for one run."""

    root: Path
    clock: ManualClock
    user_ids: tuple[str, ...]
    counter: LLMCallCounter
    seed: int = 0


def _rule_extractor(ctx: BuildContext) -> Any:
    from langgraph_memory.nodes.rules import RuleBasedExtractor

    return RuleBasedExtractor(clock=ctx.clock)


@dataclass(frozen=True, slots=True)
class MemorySystem:
    """One configuration under test: how to build its parts for a run.

    Args:
        name: Shown in the report.
        plant: ``"replay"`` (through the graph) or ``"seed"`` (true facts written directly).
        embeddings: Builds the store's embeddings.
        extractor: Builds the writer's extractor (``RuleBasedExtractor`` by default; a
            chat model is wrapped in ``LLMMemoryExtractor`` on the run's clock).
        reconcile_model: Builds the chat model for reconcile (``None``: offline rules).
        writer_store: Wraps the store the writer writes through (broken variants).
        recall_store: Wraps the store the recall node reads (broken variants).
        store: Builds the long-term store from the run's context and embeddings
            (default: ``ChromaMemoryStore.embedded(root / "ltm")`` on the run's clock);
            e.g. a store on a Postgres catalog, to compare catalogs on the same exam.
        recall_options: Extra ``create_recall_node`` arguments.
        answer_model: Answers probe questions (for the judge's answer grading).
        unavailable: Why this configuration cannot run here (reported as skipped).
    """

    name: str
    plant: Literal["replay", "seed"] = "replay"
    embeddings: Callable[[], Embeddings] = HashingEmbeddings
    extractor: Callable[[BuildContext], Any] = _rule_extractor
    reconcile_model: Callable[[BuildContext], BaseChatModel | None] | None = None
    writer_store: Callable[[Any, BuildContext], Any] | None = None
    recall_store: Callable[[Any, BuildContext], Any] | None = None
    store: Callable[[BuildContext, Embeddings], Any] | None = None
    recall_options: Mapping[str, Any] = field(default_factory=dict)
    answer_model: Callable[[BuildContext], BaseChatModel | None] | None = None
    unavailable: str | None = None


@dataclass(frozen=True, slots=True)
class ProbeObservation:
    """What the recall node injected for one probe, as the model received it."""

    user_id: str
    probe_id: str
    kind: str
    lines: tuple[str, ...]
    memory_ids: tuple[str, ...] | None
    tokens: int
    latency_ms: float
    answer: str | None = None


@dataclass(frozen=True, slots=True)
class SystemRun:
    """Everything one configuration's run observed; graded by ``metrics``."""

    system: str
    root: Path
    observations: tuple[ProbeObservation, ...]
    owners: Mapping[str, str]
    texts: Mapping[str, frozenset[str]]
    memories_per_user: Mapping[str, int]
    privacy: Mapping[str, Mapping[str, tuple[str, ...]]]
    turns: int
    llm_calls: int
    seconds: float
    # History jobs the writer had not finished / had given up on at the end of the run.
    writer_jobs_unfinished: int = 0
    writer_jobs_failed: int = 0


def parse_recall_lines(text: str) -> tuple[str, ...]:
    """The memory texts of a recall block: lines starting with ``"- "``, provenance cut off.

    Example:
        >>> parse_recall_lines("<long_term_memory>\\n## Profile\\n- User is vegan [user_stated, 2026-01-01]")
        ('User is vegan',)
    """
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("- "):
            out.append(_PROVENANCE.sub("", line[2:]))
    return tuple(out)


def _stamped(
    message_type: type[BaseMessage], text: str, at: datetime, message_id: str
) -> BaseMessage:
    return message_type(
        content=text, id=message_id, additional_kwargs={"created_at": at.isoformat()}
    )


def _fact_start(user: ExamUser, fact: Fact) -> datetime:
    return fact.valid_from or user.session(fact.said_in).at


def _seed_user(store: Any, user: ExamUser, clock: ManualClock) -> None:
    """Write ``user``'s true facts straight into the store, in time order (see module doc)."""
    events: list[tuple[datetime, int, Fact]] = []
    for fact in user.facts:
        if fact.bait:
            continue
        events.append((_fact_start(user, fact), 0, fact))
        if fact.ended_by == "forgotten" and fact.valid_to is not None:
            events.append((fact.valid_to, 1, fact))
    events.sort(key=lambda e: (e[0], e[1]))
    written: dict[str, str] = {}
    for at, action, fact in events:
        clock.set(at)
        if action == 1:
            if fact.id in written:
                store.delete_memory(user.user_id, written.pop(fact.id))
            continue
        stamp = now(clock)
        expires = fact.expires_at or (fact.valid_to if fact.ended_by == "expired" else None)
        record = MemoryRecord(
            text=fact.text,
            type=MemoryType(fact.type),
            key=fact.key,
            importance=fact.importance,
            source=MemorySource.USER_STATED,
            user_id=user.user_id,
            created_at=stamp,
            updated_at=stamp,
            valid_from=stamp,
            event_time=fact.event_time,
            expires_at=expires,
        )
        older = [f for f in user.facts if f.superseded_by == fact.id and f.id in written]
        if older and (fact.key is None or older[0].key != fact.key):
            stored = store.supersede(user.user_id, written[older[0].id], record)
        else:
            stored = store.put_memory(record)
        written[fact.id] = stored.id


def _replay_user(
    graph: Any, agent: ReplayChatModel, writer: Any, user: ExamUser, clock: ManualClock
) -> int:
    from langgraph_memory.nodes.recall import flush_access_stats

    turns = 0
    for session in user.sessions:
        config = {
            "configurable": {"thread_id": f"{user.user_id}--{session.id}", "user_id": user.user_id}
        }
        for index, turn in enumerate(session.turns):
            if turn.role != "user":
                continue
            at = session.turn_time(index)
            nxt = session.turns[index + 1] if index + 1 < len(session.turns) else None
            reply_id = f"{user.user_id}-{session.id}-{index + 1}"
            agent.queue(
                nxt.text if nxt is not None else "OK.", session.turn_time(index + 1), reply_id
            )
            clock.set(at)
            message = _stamped(HumanMessage, turn.text, at, f"{user.user_id}-{session.id}-{index}")
            graph.invoke({"messages": [message]}, config)
            # The turn's access statistics land before the next turn ranks (and before
            # the writer's reconcile reads these records): the replay is deterministic.
            flush_access_stats()
            turns += 1
        if writer is not None:
            writer.run_pending(ignore_debounce=True)
    return turns


def _probe(
    graph: Any, agent: ReplayChatModel, user: ExamUser, probe: Probe, clock: ManualClock
) -> ProbeObservation:
    from langgraph_memory.nodes.recall import flush_access_stats
    from langgraph_memory.wiring import RECALL_NODE

    clock.set(probe.at)
    agent.queue(None, probe.at, f"{user.user_id}-probe-{probe.id}-reply")
    timer = _NodeTimer(RECALL_NODE)
    config = {
        "configurable": {
            "thread_id": f"{user.user_id}--probe--{probe.id}",
            "user_id": user.user_id,
        },
        "callbacks": [timer],
    }
    message = _stamped(HumanMessage, probe.question, probe.at, f"{user.user_id}-probe-{probe.id}")
    out = graph.invoke({"messages": [message]}, config)
    flush_access_stats()  # the next probe ranks with this probe's access statistics applied
    block = next((m for m in out["messages"] if m.id == RECALL_MESSAGE_ID), None)
    lines: tuple[str, ...] = ()
    ids: tuple[str, ...] | None = None
    tokens = 0
    if block is not None:
        lines = parse_recall_lines(block.text)
        meta = block.additional_kwargs.get("langgraph_memory")
        if isinstance(meta, Mapping) and isinstance(meta.get("memory_ids"), list | tuple):
            ids = tuple(str(i) for i in meta["memory_ids"])
        tokens = count_tokens_approximately([block])
    last = out["messages"][-1]
    answer = last.text if isinstance(last, AIMessage) and last.text != PROBE_REPLY else None
    return ProbeObservation(
        user_id=user.user_id,
        probe_id=probe.id,
        kind=probe.kind,
        lines=lines,
        memory_ids=ids,
        tokens=tokens,
        latency_ms=timer.seconds * 1000.0,
        answer=answer,
    )


def probe_order(exam: Exam, seed: int) -> list[tuple[ExamUser, Probe]]:
    """Every (user, probe) pair in the run's shuffled order (reproducible with ``seed``)."""
    pairs = [(u, p) for u in exam.users for p in u.probes]
    random.Random(seed).shuffle(pairs)
    return pairs


def _inventory(
    store: Any, user_ids: Sequence[str]
) -> tuple[dict[str, str], dict[str, frozenset[str]], dict[str, int]]:
    owners: dict[str, str] = {}
    texts: dict[str, set[str]] = {}
    active: dict[str, int] = {}
    for user_id in user_ids:
        for record in store.list_memories(user_id, include_history=True):
            owners[record.id] = record.user_id
            texts.setdefault(" ".join(record.text.split()), set()).add(record.user_id)
        active[user_id] = len(store.list_memories(user_id))
    return owners, {k: frozenset(v) for k, v in texts.items()}, active


def run_system(
    exam: Exam,
    system: MemorySystem,
    root: str | Path,
    *,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
) -> SystemRun:
    """Plant the exam's history into a fresh ``system`` under ``root`` and probe it.

    Args:
        exam: The loaded exam.
        system: The configuration under test.
        root: An empty directory for this run's files (``state.db``, ``ltm/``).
        seed: Seeds the probe order.
        progress: Called with 1 after every replayed turn, seeded user and probe.

    Returns:
        The observations (grade them with ``metrics.grade_run``).
    """
    from langgraph_memory.eval.privacy_scan import scan_identifiers
    from langgraph_memory.longterm import ChromaMemoryStore
    from langgraph_memory.nodes.recall import flush_access_stats
    from langgraph_memory.pipeline import MemoryWriter, SqliteMemoryQueue
    from langgraph_memory.session import SqliteSaver
    from langgraph_memory.wiring import MemoryState, add_memory_nodes

    started = time.perf_counter()
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    first = min((s.at for u in exam.users for s in u.sessions), default=None)
    clock = ManualClock(first or min(p.at for u in exam.users for p in u.probes))
    counter = LLMCallCounter()
    ctx = BuildContext(root, clock, tuple(u.user_id for u in exam.users), counter, seed)
    tick = progress or (lambda _n: None)
    db = root / "state.db"
    queue_clock: Callable[[], float] = lambda: now_seconds(clock)  # noqa: E731
    with ExitStack() as stack:
        if system.store is not None:
            store = system.store(ctx, system.embeddings())
        else:
            store = ChromaMemoryStore.embedded(
                root / "ltm", embeddings=system.embeddings(), clock=clock
            )
        stack.callback(store.close)
        stack.callback(flush_access_stats)
        queue = SqliteMemoryQueue(db, clock=queue_clock)
        stack.callback(queue.close)
        writer = None
        if system.plant == "replay":
            reconcile = system.reconcile_model(ctx) if system.reconcile_model else None
            writer = MemoryWriter(
                system.writer_store(store, ctx) if system.writer_store else store,
                extractor=_with_clock(system.extractor(ctx), clock),
                model_for_reconcile=reconcile,
                queue=queue,
                clock=clock,
            )
        agent = ReplayChatModel(clock=clock)
        agent.use_answer_model(system.answer_model(ctx) if system.answer_model else None)

        def agent_node(state: MemoryState) -> dict[str, Any]:
            return {"messages": [agent.invoke(state["messages"])]}

        builder = StateGraph(MemoryState)
        builder.add_node("agent", agent_node)
        builder.add_edge(START, "agent")
        builder.add_edge("agent", END)
        add_memory_nodes(
            builder,
            model_node="agent",
            store=system.recall_store(store, ctx) if system.recall_store else store,
            writer=writer,
            max_tokens=MAX_TOKENS,
            recall_options=dict(system.recall_options),
            clock=clock,
        )
        saver = stack.enter_context(SqliteSaver.from_conn_string(str(db)))
        graph = builder.compile(checkpointer=saver, store=store)
        turns = 0
        for user in exam.users:
            if system.plant == "seed":
                _seed_user(store, user, clock)
                tick(1)
            else:
                turns += _replay_user(graph, agent, writer, user, clock)
                tick(sum(1 for s in user.sessions for t in s.turns if t.role == "user"))
        # What is left of the history's jobs (probe turns then stay queued on purpose).
        left, failed = queue.unfinished(), len(queue.failed())
        observations = []
        for user, probe in probe_order(exam, seed):
            observations.append(_probe(graph, agent, user, probe, clock))
            turns += 1
            tick(1)
        owners, texts, active = _inventory(store, ctx.user_ids)
    privacy = {
        u.user_id: scan_identifiers(root, u.identifiers) for u in exam.users if u.identifiers
    }
    return SystemRun(
        system=system.name,
        root=root,
        observations=tuple(observations),
        owners=owners,
        texts=texts,
        memories_per_user=active,
        privacy=privacy,
        turns=turns,
        llm_calls=counter.calls,
        seconds=time.perf_counter() - started,
        writer_jobs_unfinished=left,
        writer_jobs_failed=failed,
    )


def _with_clock(extractor: Any, clock: Clock) -> Any:
    """A bare chat model becomes an ``LLMMemoryExtractor`` on the run's clock."""
    if isinstance(extractor, BaseChatModel):
        from langgraph_memory.nodes.extract import LLMMemoryExtractor

        return LLMMemoryExtractor(extractor, clock=clock)
    return extractor


def progress_total(exam: Exam, systems: Sequence[MemorySystem]) -> int:
    """How many ``progress`` ticks running ``systems`` on ``exam`` will make."""
    total = 0
    for system in systems:
        if system.unavailable:
            continue
        if system.plant == "seed":
            total += len(exam.users)
        else:
            total += sum(
                1 for u in exam.users for s in u.sessions for t in s.turns if t.role == "user"
            )
        total += exam.probe_count
    return total
