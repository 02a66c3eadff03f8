"""The reconciler: thin I/O shells around the pure plan (gather, plan, apply).

Each operation is written once, as a generator of store/model calls
(``langgraph_memory._drive``); the public sync and async methods only drive it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from langgraph_memory._drive import Call, Steps, arun, run
from langgraph_memory.clock import Clock, now
from langgraph_memory.config import PrivacyPolicy, ScoringWeights
from langgraph_memory.errors import ConfigurationError, MemoryNotFoundError
from langgraph_memory.nodes.reconcile._batch import _ID_NAMESPACE, CandidateContext, kept_id, logger
from langgraph_memory.nodes.reconcile._forgetting import key_matches
from langgraph_memory.nodes.reconcile._judgement import (
    Judgement,
    JudgementRequest,
    ReconcileJudge,
    _without_phantom_targets,
    build_judgement_request,
    guard_reviewed_ops,
    parse_judgement,
)
from langgraph_memory.nodes.reconcile._plan import (
    _kept_record,
    first_pass,
    needs_model,
    plan_ops,
    record_for,
)
from langgraph_memory.nodes.reconcile._stale import _slot_value
from langgraph_memory.nodes.rules._evidence import updates
from langgraph_memory.poisoning import flag_override
from langgraph_memory.privacy import redact_for_log
from langgraph_memory.prompts.reconcile import ReconcilePrompts
from langgraph_memory.types import (
    CandidateMemory,
    LongTermMemory,
    MemoryOp,
    MemoryRecord,
    MemoryStatus,
    MemoryType,
    ScoredMemory,
)

# How many of the newest episodic memories an update is compared with.
_UPDATE_LOOKBACK = 48
# ... looked up newest first, whatever the words.
_NEWEST_FIRST = ScoringWeights(relevance=0.0, recency=1.0, importance=0.0, min_relevance=0.0)


# --- the reconciler (thin I/O shells around the pure plan) -------------------------


@dataclass
class _ModelExchange:
    request: JudgementRequest
    messages: list[BaseMessage] = field(default_factory=list)


class Reconciler:
    """Plan and apply ``MemoryOp``s for one user's candidates against a long-term store.

    Args:
        store: A ``LongTermMemory`` (``ChromaMemoryStore``).
        model: Chat model for the one judgement per batch; ``None`` = offline rules.
        prompts: Override the default prompts.
        policy: Privacy policy for text the model writes (``merged_text``).
        neighbours: Similar memories looked up per candidate (default 5).
        duplicate_threshold: Offline near-duplicate cut-off (bigram Dice, default 0.9).
        forget_threshold: Offline: how close a memory must be to a key-less
            forget request to be deleted (default 0.5).
        clock: Stamps the memories it creates (``langgraph_memory.clock``; default
            the UTC wall clock).
        judge: Your own judgement over each batch's planned ops (``ReconcileJudge``),
            applied last, inside the same guardrails as the model's.

    Example:
        >>> import tempfile
        >>> from langgraph_memory.embeddings import HashingEmbeddings
        >>> from langgraph_memory.longterm import ChromaMemoryStore
        >>> store = ChromaMemoryStore.embedded(tempfile.mkdtemp(), embeddings=HashingEmbeddings())
        >>> reconciler = Reconciler(store)  # no model: the offline rules
        >>> ops = reconciler.reconcile("u1", [CandidateMemory("User is vegan", key="diet")])
        >>> ops = reconciler.reconcile("u1", [CandidateMemory("User eats fish", key="diet")])
        >>> [(op.action, op.reason) for op in ops]
        [('supersede', "same key 'diet': new value replaces the old")]
        >>> store.close()
    """

    def __init__(
        self,
        store: LongTermMemory,
        *,
        model: BaseChatModel | None = None,
        prompts: ReconcilePrompts | None = None,
        policy: PrivacyPolicy | None = None,
        neighbours: int = 5,
        duplicate_threshold: float = 0.9,
        forget_threshold: float = 0.5,
        clock: Clock | None = None,
        judge: ReconcileJudge | None = None,
    ) -> None:
        if model is not None and not isinstance(model, BaseChatModel):
            raise ConfigurationError(
                f"Reconciler(model={model!r}): pass a langchain BaseChatModel or None."
            )
        if neighbours < 1:
            raise ConfigurationError(f"Reconciler(neighbours={neighbours!r}); use an integer >= 1.")
        for name, value in (
            ("duplicate_threshold", duplicate_threshold),
            ("forget_threshold", forget_threshold),
        ):
            if not 0.0 < value <= 1.0:
                raise ConfigurationError(f"Reconciler({name}={value!r}); use a value in (0, 1].")
        self.store = store
        self.model = model
        # Passed to store.delete_memory (MemoryWriter(checkpointer=...): the recall
        # blocks and queue jobs that quote a deleted memory are erased with it).
        self.delete_options: dict[str, Any] = {}
        self.prompts = prompts or ReconcilePrompts()
        self.policy = policy
        self.neighbours = neighbours
        self.duplicate_threshold = duplicate_threshold
        self.forget_threshold = forget_threshold
        self.clock = clock
        if judge is not None and not isinstance(judge, ReconcileJudge):
            raise ConfigurationError(
                f"Reconciler(judge={judge!r}): pass an object with "
                "review(contexts, ops) -> ops (see ReconcileJudge), or None."
            )
        self.judge = judge

    # gather ------------------------------------------------------------------------
    # Each operation is written once, as a generator of store/model calls
    # (``langgraph_memory._drive``); the public sync and async methods only drive it.

    def _context(
        self, cand: CandidateMemory, similar: list[ScoredMemory], keyed: Sequence[MemoryRecord]
    ) -> CandidateContext:
        # A forget request also reaches the older versions of what it names: "当没听过" erases
        # the history too, not only the current value.
        own = [
            s
            for s in similar
            if s.record.status == MemoryStatus.ACTIVE
            or (cand.forget and s.record.status == MemoryStatus.SUPERSEDED)
        ]
        if cand.forget and cand.key:
            keyed = [r for r in keyed if key_matches(r.key, cand.key)]
        else:
            keyed = [r for r in keyed if r.key == cand.key and r.status == MemoryStatus.ACTIVE]
        return CandidateContext(cand, tuple(keyed), tuple(own))

    def gather_steps(
        self, user_id: str, candidates: Sequence[CandidateMemory]
    ) -> Steps[list[CandidateContext]]:
        """The store's view around each candidate (2 searches per candidate)."""
        store = self.store
        contexts: list[CandidateContext] = []
        history: list[MemoryRecord] | None = None
        for cand in map(flag_override, candidates):  # overrides become flagged events
            similar = yield Call(
                store, "search_memories", (user_id, cand.text), {"limit": self.neighbours}
            )
            if not cand.forget and (updates(cand.text) or _slot_value(cand)):
                # An update may replace a raw statement that shares no word with it ("we
                # moved to Bath" and "we're in Clifton"): also look at the newest evidence
                # and slot values ("User lives in Canton").
                recent = yield Call(
                    store,
                    "search_memories",
                    (user_id, cand.text),
                    {
                        "limit": _UPDATE_LOOKBACK,
                        "types": [MemoryType.EPISODIC, MemoryType.SEMANTIC],
                        "min_relevance": 0.0,
                        "weights": _NEWEST_FIRST,
                    },
                )
                seen = {s.record.id for s in similar}
                similar = [*similar, *(s for s in recent if s.record.id not in seen)]
            keyed: Sequence[MemoryRecord] = ()
            if cand.forget:
                # A forget request may reach any memory on its topic, not only the few
                # nearest ones (forget_reaches); requests are rare, so one listing is cheap.
                if history is None:
                    history = yield Call(
                        store, "list_memories", (user_id,), {"include_history": True}
                    )
                seen = {s.record.id for s in similar}
                similar = [
                    *similar,
                    *(ScoredMemory(r, 0.0) for r in history or () if r.id not in seen),
                ]
                keyed = (history or ()) if cand.key else ()
            elif cand.key:
                found = yield Call(
                    store,
                    "search_memories",
                    (user_id, cand.text),
                    {"limit": self.neighbours, "keys": [cand.key], "min_relevance": 0.0},
                )
                keyed = [s.record for s in found]
            contexts.append(self._context(cand, list(similar), keyed))
        return contexts

    def gather(self, user_id: str, candidates: Sequence[CandidateMemory]) -> list[CandidateContext]:
        """The store's view around each candidate (2 searches per candidate)."""
        return run(self.gather_steps(user_id, candidates))

    async def agather(
        self, user_id: str, candidates: Sequence[CandidateMemory]
    ) -> list[CandidateContext]:
        """Async twin of ``gather``."""
        return await arun(self.gather_steps(user_id, candidates))

    # plan ----------------------------------------------------------------------------

    def _exchange(self, contexts: Sequence[CandidateContext], seed: str) -> _ModelExchange | None:
        if self.model is None:
            return None
        _, undecided = first_pass(contexts, seed)
        ask = needs_model(contexts, undecided)
        if not ask:
            return None  # nothing ambiguous: no model call at all
        request = build_judgement_request(contexts, ask)
        messages: list[BaseMessage] = [
            SystemMessage(self.prompts.system),
            HumanMessage(self.prompts.user_template.format(items=request.text)),
        ]
        return _ModelExchange(request, messages)

    def _retry(self, exchange: _ModelExchange, answer: str, error: str) -> list[BaseMessage]:
        return [
            *exchange.messages,
            AIMessage(answer[:2000]),
            HumanMessage(self.prompts.retry_template.format(error=error)),
        ]

    def _plan(
        self,
        contexts: Sequence[CandidateContext],
        seed: str,
        exchange: _ModelExchange | None,
        judgement: Judgement | None,
    ) -> list[MemoryOp]:
        ops = plan_ops(
            contexts,
            seed=seed,
            judgement=judgement,
            request=exchange.request if exchange and judgement is not None else None,
            policy=self.policy,
            duplicate_threshold=self.duplicate_threshold,
            forget_threshold=self.forget_threshold,
        )
        if exchange is not None and judgement is None:
            ops = [
                replace(
                    op, reason=op.reason + " (offline rule: the model's judgement was unusable)"
                )
                if i in exchange.request.numbers.values()
                else op
                for i, op in enumerate(ops)
            ]
        if self.judge is not None:
            # The app's own judgement has the last word, inside the same guardrails:
            # ids it invents are dropped like the model's.
            reviewed = list(self.judge.review(contexts, ops))
            ops = _without_phantom_targets(guard_reviewed_ops(reviewed, contexts, seed), seed)
        return ops

    def plan_steps(
        self, user_id: str, candidates: Sequence[CandidateMemory], *, seed: str
    ) -> Steps[list[MemoryOp]]:
        """Decide the ops for a batch: at most one model call (two if the first answer is invalid).

        An answer that is invalid twice falls back to the offline rules for that
        batch (logged, and noted in each op's reason) rather than losing the facts.
        """
        contexts = yield from self.gather_steps(user_id, candidates)
        exchange = self._exchange(contexts, seed)
        judgement: Judgement | None = None
        if exchange is not None and self.model is not None:
            first = _text((yield Call(self.model, "invoke", (exchange.messages,))))
            judgement = _try_parse(first)
            if judgement is None:
                retry = self._retry(exchange, first, _parse_error(first))
                judgement = _try_parse(_text((yield Call(self.model, "invoke", (retry,)))))
        return self._plan(contexts, seed, exchange, judgement)

    def plan(
        self, user_id: str, candidates: Sequence[CandidateMemory], *, seed: str
    ) -> list[MemoryOp]:
        """Decide the ops for a batch (see ``plan_steps``)."""
        return run(self.plan_steps(user_id, candidates, seed=seed))

    async def aplan(
        self, user_id: str, candidates: Sequence[CandidateMemory], *, seed: str
    ) -> list[MemoryOp]:
        """Async twin of ``plan``."""
        return await arun(self.plan_steps(user_id, candidates, seed=seed))

    # apply ---------------------------------------------------------------------------

    def apply_steps(
        self, user_id: str, op: MemoryOp, *, thread_id: str | None = None
    ) -> Steps[bool]:
        """Apply one op; ``False`` when it was already applied (idempotent re-run)."""
        store = self.store
        if op.action == "ignore":
            return False
        if op.action == "delete":
            changed = False
            # What the request left of a turn is written before the turn is erased, so a
            # re-run after a crash between the two still has it, once.
            for target, text in op.kept:
                kept = kept_id(op.result_id or "", target)
                old = yield Call(store, "get_memory", (user_id, target))
                if old is None or (yield Call(store, "get_memory", (user_id, kept))) is not None:
                    continue
                # Its own key, so storing it does not supersede the turn it is cut from (that
                # turn is erased, and nothing links back to it).
                record = replace(
                    _kept_record(old, kept, text, now(self.clock)),
                    key=f"{old.key}.{kept[:6]}",
                    supersedes=(),
                )
                yield Call(store, "put_memory", (record,))
                changed = True
            for target in op.target_ids:
                try:
                    if (yield Call(store, "get_memory", (user_id, target))) is None:
                        continue
                    yield Call(store, "delete_memory", (user_id, target), self.delete_options)
                    changed = True
                except MemoryNotFoundError:
                    continue
            return changed
        stamp = now(self.clock)
        record = record_for(op, user_id, thread_id, stamp)
        changed = False
        if (yield Call(store, "get_memory", (user_id, record.id))) is None:
            active_targets = []
            for target in op.target_ids:
                old = yield Call(store, "get_memory", (user_id, target))
                if old is not None and old.status == MemoryStatus.ACTIVE:
                    active_targets.append(target)
            if not active_targets:
                yield Call(store, "put_memory", (record,))
            for target in active_targets:
                yield Call(store, "supersede", (user_id, target, record))
            changed = True
        # What stays true of a partly retired memory is stored again under its key (a re-run
        # after a crash between the two writes still adds it, once).
        for target, text in op.kept:
            kept = kept_id(record.id, target)
            if (yield Call(store, "get_memory", (user_id, kept))) is not None:
                continue
            old = yield Call(store, "get_memory", (user_id, target))
            if old is None or old.superseded_by != record.id:
                continue  # it was no longer current when this op ended it
            yield Call(store, "put_memory", (_kept_record(old, kept, text, stamp),))
            changed = True
        return changed

    def apply_op(self, user_id: str, op: MemoryOp, *, thread_id: str | None = None) -> bool:
        """Apply one op; ``False`` when it was already applied (idempotent re-run)."""
        return run(self.apply_steps(user_id, op, thread_id=thread_id))

    async def aapply_op(self, user_id: str, op: MemoryOp, *, thread_id: str | None = None) -> bool:
        """Async twin of ``apply_op``."""
        return await arun(self.apply_steps(user_id, op, thread_id=thread_id))

    def reconcile_steps(
        self,
        user_id: str,
        candidates: Sequence[CandidateMemory],
        *,
        thread_id: str | None = None,
        seed: str | None = None,
    ) -> Steps[list[MemoryOp]]:
        """Plan and apply in one go; returns the ops (the audit trail)."""
        seed = seed or default_seed(user_id, candidates)
        ops = yield from self.plan_steps(user_id, candidates, seed=seed)
        for op in ops:
            yield from self.apply_steps(user_id, op, thread_id=thread_id)
        return ops

    def reconcile(
        self,
        user_id: str,
        candidates: Sequence[CandidateMemory],
        *,
        thread_id: str | None = None,
        seed: str | None = None,
    ) -> list[MemoryOp]:
        """Plan and apply in one go; returns the ops (the audit trail)."""
        return run(self.reconcile_steps(user_id, candidates, thread_id=thread_id, seed=seed))

    async def areconcile(
        self,
        user_id: str,
        candidates: Sequence[CandidateMemory],
        *,
        thread_id: str | None = None,
        seed: str | None = None,
    ) -> list[MemoryOp]:
        """Async twin of ``reconcile``."""
        return await arun(self.reconcile_steps(user_id, candidates, thread_id=thread_id, seed=seed))


def default_seed(user_id: str, candidates: Sequence[CandidateMemory]) -> str:
    """A seed from the batch itself: the same batch plans the same ids."""
    parts = [user_id] + [f"{c.text}|{','.join(c.origin_message_ids)}" for c in candidates]
    return uuid.uuid5(_ID_NAMESPACE, "\x1f".join(parts)).hex


def _text(answer: Any) -> str:
    return answer.text if isinstance(answer, BaseMessage) else str(answer)


def _try_parse(text: str) -> Judgement | None:
    try:
        return parse_judgement(text)
    except ValueError as exc:
        logger.warning("reconcile: unusable model judgement: %s", redact_for_log(exc))
        return None


def _parse_error(text: str) -> str:
    try:
        parse_judgement(text)
    except ValueError as exc:
        return str(exc)
    return "unknown error"
