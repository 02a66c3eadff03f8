"""Interleaved drivers: every saver of one mode runs the same work in small alternating blocks.

The machine is shared and its load swings 3x within a minute, so measuring
saver A for a minute and then saver B compares A's minute with B's. Here all
savers of a mode are open at once, and the work is cut into blocks (one round
of 20 turns; one turn of the long thread) that rotate over the savers; each
saver's clock runs only during its own blocks. A load spike then hits every
saver about equally, and the ratios hold still even when absolute numbers move.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks._session_savers import SaverSpec, disk_bytes, fresh_location
from benchmarks._session_workload import build_chat_graph, thread_config, turn_input

ErrorSink = Callable[[SaverSpec, str, BaseException], None]

# Turns per thread in one async block of the 20-thread run: 20 coroutines in
# flight for 5 turns each, then the next saver.
ASYNC_BLOCK_TURNS = 5


@dataclass
class Subject:
    spec: SaverSpec
    saver: Any
    graph: Any
    location: str
    busy: float = 0.0
    cpu: float = 0.0
    failed: bool = False
    sizes: list[int | None] = field(default_factory=list)
    get_ms: list[float] = field(default_factory=list)
    list_ms: list[float] = field(default_factory=list)
    read_spent: float = 0.0


@dataclass
class WideResult:
    turns_per_s: float
    cpu_ms_per_turn: float


@dataclass
class LongResult:
    turns_per_s: float
    cpu_ms_per_turn: float
    sizes: list[int | None]
    get_tuple_ms: list[float]
    list10_ms: list[float]


def _rotate(items: Sequence[Subject], by: int) -> list[Subject]:
    alive = [s for s in items if not s.failed]
    if not alive:
        return []
    k = by % len(alive)
    return alive[k:] + alive[:k]


class _Clock:
    """Wall and process-CPU time of one block, added to a subject."""

    def __init__(self, subject: Subject) -> None:
        self.subject = subject

    def __enter__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.process_time()

    def __exit__(self, *exc: object) -> None:
        self.subject.busy += time.perf_counter() - self.wall
        self.subject.cpu += time.process_time() - self.cpu


def _fail(subject: Subject, what: str, exc: BaseException, on_error: ErrorSink) -> None:
    subject.failed = True
    on_error(subject.spec, what, exc)


# ---------------------------------------------------------------- sync


def _open_sync(
    stack: contextlib.ExitStack, specs: Sequence[SaverSpec], on_error: ErrorSink
) -> list[Subject]:
    subjects = []
    for spec in specs:
        try:
            location = stack.enter_context(fresh_location(spec.backend))
            saver = stack.enter_context(spec.open_sync(location))
            subjects.append(Subject(spec, saver, build_chat_graph(saver), location))
        except Exception as exc:  # reported in the results, the others go on
            on_error(spec, "open", exc)
    return subjects


def sync_wide(
    specs: Sequence[SaverSpec], threads: int, turns: int, tag: str, on_error: ErrorSink
) -> dict[str, WideResult]:
    """``threads`` x ``turns``, round-robin over threads from one OS thread."""
    with contextlib.ExitStack() as stack:
        subjects = _open_sync(stack, specs, on_error)
        ids = [f"{tag}-t{i}" for i in range(threads)]
        for turn in range(1, turns + 1):
            for subject in _rotate(subjects, turn):
                try:
                    with _Clock(subject):
                        for thread_id in ids:
                            subject.graph.invoke(
                                turn_input(thread_id, turn), thread_config(thread_id)
                            )
                except Exception as exc:
                    _fail(subject, f"{threads}x{turns}", exc, on_error)
        n = threads * turns
        return {
            s.spec.key: WideResult(n / s.busy, s.cpu / n * 1000) for s in subjects if not s.failed
        }


def _reads_sync(
    subjects: Sequence[Subject], samples: int, budget_s: float, on_error: ErrorSink
) -> None:
    config = thread_config("long")
    for i in range(samples):
        for subject in _rotate(subjects, i):
            if i >= 5 and subject.read_spent > budget_s:
                continue
            try:
                t0 = time.perf_counter()
                found = subject.saver.get_tuple(config)
                t1 = time.perf_counter()
                listed = list(subject.saver.list(config, limit=10))
                t2 = time.perf_counter()
                if found is None or len(listed) != 10:
                    raise AssertionError(f"reads returned {found!r:.60} and {len(listed)} items")
            except Exception as exc:
                _fail(subject, "reads", exc, on_error)
                continue
            subject.get_ms.append((t1 - t0) * 1000)
            subject.list_ms.append((t2 - t1) * 1000)
            subject.read_spent += t2 - t0


def sync_long(
    specs: Sequence[SaverSpec],
    turns: int,
    window: int,
    samples: int,
    budget_s: float,
    on_error: ErrorSink,
) -> dict[str, LongResult]:
    """One thread, ``turns`` turns; sizes every ``window`` turns; then reads."""
    config = thread_config("long")
    with contextlib.ExitStack() as stack:
        subjects = _open_sync(stack, specs, on_error)
        for subject in subjects:
            subject.sizes.append(disk_bytes(subject.spec.backend, subject.location))
        for turn in range(1, turns + 1):
            for subject in _rotate(subjects, turn):
                try:
                    with _Clock(subject):
                        subject.graph.invoke(turn_input("long", turn), config)
                except Exception as exc:
                    _fail(subject, f"1x{turns}", exc, on_error)
            if turn % window == 0:
                for subject in _rotate(subjects, 0):
                    subject.sizes.append(disk_bytes(subject.spec.backend, subject.location))
        _reads_sync(subjects, samples, budget_s, on_error)
        return {
            s.spec.key: LongResult(
                turns / s.busy, s.cpu / turns * 1000, s.sizes, s.get_ms, s.list_ms
            )
            for s in subjects
            if not s.failed
        }


# ---------------------------------------------------------------- async


async def _open_async(
    stack: contextlib.AsyncExitStack, specs: Sequence[SaverSpec], on_error: ErrorSink
) -> list[Subject]:
    subjects = []
    for spec in specs:
        try:
            location = stack.enter_context(fresh_location(spec.backend))
            saver = await stack.enter_async_context(spec.open_async(location))
            subjects.append(Subject(spec, saver, build_chat_graph(saver), location))
        except Exception as exc:  # reported in the results, the others go on
            on_error(spec, "open", exc)
    return subjects


async def async_wide(
    specs: Sequence[SaverSpec], threads: int, turns: int, tag: str, on_error: ErrorSink
) -> dict[str, WideResult]:
    """``threads`` coroutines in flight (``asyncio.gather``), each its own thread's turns."""
    async with contextlib.AsyncExitStack() as stack:
        subjects = await _open_async(stack, specs, on_error)
        ids = [f"{tag}-t{i}" for i in range(threads)]

        async def one_thread(graph: Any, thread_id: str, first: int, last: int) -> None:
            for turn in range(first, last + 1):
                await graph.ainvoke(turn_input(thread_id, turn), thread_config(thread_id))

        for block, first in enumerate(range(1, turns + 1, ASYNC_BLOCK_TURNS)):
            last = min(turns, first + ASYNC_BLOCK_TURNS - 1)
            for subject in _rotate(subjects, block):
                try:
                    with _Clock(subject):
                        await asyncio.gather(
                            *(one_thread(subject.graph, t, first, last) for t in ids)
                        )
                except Exception as exc:
                    _fail(subject, f"{threads}x{turns}", exc, on_error)
        n = threads * turns
        return {
            s.spec.key: WideResult(n / s.busy, s.cpu / n * 1000) for s in subjects if not s.failed
        }


async def _reads_async(
    subjects: Sequence[Subject], samples: int, budget_s: float, on_error: ErrorSink
) -> None:
    config = thread_config("long")
    for i in range(samples):
        for subject in _rotate(subjects, i):
            if i >= 5 and subject.read_spent > budget_s:
                continue
            try:
                t0 = time.perf_counter()
                found = await subject.saver.aget_tuple(config)
                t1 = time.perf_counter()
                listed = [item async for item in subject.saver.alist(config, limit=10)]
                t2 = time.perf_counter()
                if found is None or len(listed) != 10:
                    raise AssertionError(f"reads returned {found!r:.60} and {len(listed)} items")
            except Exception as exc:
                _fail(subject, "reads", exc, on_error)
                continue
            subject.get_ms.append((t1 - t0) * 1000)
            subject.list_ms.append((t2 - t1) * 1000)
            subject.read_spent += t2 - t0


async def async_long(
    specs: Sequence[SaverSpec],
    turns: int,
    window: int,
    samples: int,
    budget_s: float,
    on_error: ErrorSink,
) -> dict[str, LongResult]:
    config = thread_config("long")
    async with contextlib.AsyncExitStack() as stack:
        subjects = await _open_async(stack, specs, on_error)
        for subject in subjects:
            subject.sizes.append(disk_bytes(subject.spec.backend, subject.location))
        for turn in range(1, turns + 1):
            for subject in _rotate(subjects, turn):
                try:
                    with _Clock(subject):
                        await subject.graph.ainvoke(turn_input("long", turn), config)
                except Exception as exc:
                    _fail(subject, f"1x{turns}", exc, on_error)
            if turn % window == 0:
                for subject in _rotate(subjects, 0):
                    subject.sizes.append(disk_bytes(subject.spec.backend, subject.location))
        await _reads_async(subjects, samples, budget_s, on_error)
        return {
            s.spec.key: LongResult(
                turns / s.busy, s.cpu / turns * 1000, s.sizes, s.get_ms, s.list_ms
            )
            for s in subjects
            if not s.failed
        }
