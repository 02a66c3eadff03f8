"""Puts and writes prepared outside the transaction, and what a put reports.

``SaverCore.prepare_put`` and ``prepare_writes`` (``_core_writes.py``)
validate, serialise and seal before the transaction and return
:class:`PreparedPut` / :class:`PreparedWrites`; ``put_txn`` reports a
:class:`PutOutcome`. Also here: when a task's writes may wait for the next put
(``writes_may_wait_for_checkpoint``, ``EndedSteps``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import WRITES_IDX_MAP
from langgraph.checkpoint.serde.types import ERROR, INTERRUPT

from langgraph_memory.session._channels import ListPlan, Range
from langgraph_memory.session._encoding import CheckpointKey

# ------------------------------------------------------------------ put preparation


@dataclass(slots=True)
class PreparedValue:
    channel: str
    version: str
    encoding: str
    type: str | None = None
    blob: bytes | None = None
    plan: ListPlan | None = None
    # chunks of new items, each (offset into plan.new_items, count, type, blob)
    chunks: list[tuple[int, int, str, bytes]] = field(default_factory=list)
    value: Any = None
    # Lists: the item number the new items will most likely start at (from the
    # cache); the one-statement put assumes it and the database checks it.
    next_seq: int = 0


@dataclass(slots=True)
class PreparedPut:
    key: CheckpointKey
    checkpoint_id: str
    parent_id: str | None
    run_id: str | None
    type: str
    body: bytes
    metadata: str
    values: list[PreparedValue]
    now: float
    # The checkpoint's channel versions whose values live in rows (not inline).
    row_versions: dict[str, str]
    # Write the thread's activity row in this put (else only read its tombstone).
    touch_thread: bool = True


@dataclass(slots=True)
class PutOutcome:
    retention_due: bool
    # channel -> resolved (ranges, version) for list values actually stored / reused
    stored_lists: dict[str, tuple[str, tuple[Range, ...]]] = field(default_factory=dict)
    conflicted: set[str] = field(default_factory=set)
    # channel -> the next free item number after this put, where known
    next_seqs: dict[str, int] = field(default_factory=dict)


# A write as rows of the dialect's one-statement path (``put_rows``,
# ``writes_rows``) and what the write returns once they are stored.
FastWrite = tuple[list[tuple[Any, ...]], Any]


# Keys LangGraph puts in the config of the saver calls its loop makes (langgraph's
# CONFIG_KEY_DURABILITY and CONFIG_KEY_RUNTIME; their module is private, so they are
# spelled here). The durability key is there only when a run names its mode; a run
# that does not runs in LangGraph's default, "async".
DURABILITY_CONFIG_KEY = "__pregel_durability"
RUNTIME_CONFIG_KEY = "__pregel_runtime"


def writes_may_wait_for_checkpoint(
    config: RunnableConfig, writes: Sequence[tuple[str, Any]]
) -> bool:
    """Whether a task's writes may be stored with the next write instead of at once.

    Only when LangGraph says so: a run in ``durability="async"`` (LangGraph's
    default) does not wait for ``put_writes`` at all, and saves the step's
    checkpoint right after the step's writes, so a shell can store them in
    that ``put``'s statement (one commit, or one round trip, instead of two).
    Never for special writes (errors, interrupts, resumes, scheduled tasks: a
    run may end right after them), in ``sync`` mode, or for callers outside
    LangGraph's loop (no runtime in the config): those are stored at once.
    """
    configurable = config.get("configurable") or {}
    if RUNTIME_CONFIG_KEY not in configurable or not writes:
        return False
    if configurable.get(DURABILITY_CONFIG_KEY, "async") != "async":
        return False
    return not any(channel in WRITES_IDX_MAP for channel, _ in writes)


# Writes after which LangGraph saves no checkpoint for the step (it raised, or was
# interrupted): a sibling task's writes that come later must not wait for a put.
STEP_ENDING_CHANNELS = frozenset((ERROR, INTERRUPT))


class EndedSteps:
    """The checkpoints whose step lately got an error or interrupt write here.

    A step's writes reach the saver from several worker threads (or tasks) in
    any order; when the failing task's write comes first, its siblings' writes
    come after it with no ``put`` to follow, so they are stored at once
    (``PreparedWrites.may_wait`` is False). LRU-bounded, thread-safe.
    """

    def __init__(self, capacity: int = 1024) -> None:
        self.capacity = capacity
        self._steps: OrderedDict[tuple[str, str, str], None] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, step: tuple[str, str, str]) -> None:
        with self._lock:
            self._steps[step] = None
            self._steps.move_to_end(step)
            while len(self._steps) > self.capacity:
                self._steps.popitem(last=False)

    def discard(self, step: tuple[str, str, str]) -> None:
        with self._lock:
            self._steps.pop(step, None)

    def __contains__(self, step: tuple[str, str, str]) -> bool:
        return step in self._steps


@dataclass(slots=True)
class PreparedWrites:
    key: CheckpointKey
    checkpoint_id: str
    replace: bool
    rows: list[tuple[Any, ...]]
    now: float
    # see writes_may_wait_for_checkpoint
    may_wait: bool = False

    @property
    def step(self) -> tuple[str, str, str]:
        """The step these writes belong to, as ``EndedSteps`` keys it."""
        return (self.key.thread_id, self.key.checkpoint_ns, self.checkpoint_id)
