"""Session-memory benchmark: our checkpointers against LangGraph's, in one run.

Run ``python -m benchmarks.session`` (or ``make bench-session``); ``--quick`` for a
smoke run, ``--only sqlite|postgres`` to skip a backend. Writes
``benchmarks/RESULTS-session.md``.

Workload (``benchmarks/_session_workload.py``): a compiled 3-node ``StateGraph``
over plain ``add_messages`` state; each turn is one ``invoke``/``ainvoke`` with a
short human message and a deterministic 200-800 character AI reply.

Measurements, per saver and mode, repeated ``--reps`` times in rotating order so
the machine's noise spreads over every saver; medians are reported, and ratios
are medians of per-repetition ratios (each pair measured minutes apart at most):

* ``20x50``: 20 threads x 50 turns. Sync mode drives the threads round-robin
  from one OS thread (per-turn cost); async mode runs the 20 threads as 20
  coroutines via ``asyncio.gather`` ("20 runs in flight", each thread's turns in
  order).
* ``1x300``: one thread, 300 turns in order; bytes on disk at every 50-turn
  window (clock paused while measuring), ``get_tuple`` and ``list(limit=10)``
  latency on the finished thread.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import datetime as dt
import gc
import importlib.metadata
import itertools
import os
import platform
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks._session_savers import (
    ALL_SPECS,
    SaverSpec,
    disk_bytes,
    fresh_location,
    unavailable_reason,
)
from benchmarks._session_workload import build_chat_graph, thread_config, turn_input

RESULTS_PATH = Path(__file__).with_name("RESULTS-session.md")
MB = 1024 * 1024


@dataclass(frozen=True)
class Workload:
    threads: int = 20
    turns_per_thread: int = 50
    long_turns: int = 300
    window: int = 50
    latency_samples: int = 40
    reps: int = 3


@dataclass
class LongRun:
    """One 300-turn thread: speed, sizes at each window, read latencies."""

    turns_per_s: float
    sizes: list[int | None]  # bytes after setup, then after each window
    get_tuple_ms: list[float]
    list10_ms: list[float]

    @property
    def final_bytes(self) -> int | None:
        return self.sizes[-1]

    def window_bytes_per_turn(self, window: int) -> list[float] | None:
        if any(s is None for s in self.sizes):
            return None
        sizes = [int(s) for s in self.sizes if s is not None]
        return [(b - a) / window for a, b in itertools.pairwise(sizes)]


@dataclass
class SaverResult:
    spec: SaverSpec
    unavailable: str | None = None
    error: str | None = None
    wide: list[float] = field(default_factory=list)  # 20x50 turns/s per rep
    long: list[LongRun] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.unavailable is None and self.error is None


# ---------------------------------------------------------------- drivers


def _sync_wide(saver: Any, w: Workload, tag: str) -> float:
    graph = build_chat_graph(saver)
    ids = [f"{tag}-t{i}" for i in range(w.threads)]
    start = time.perf_counter()
    for turn in range(1, w.turns_per_thread + 1):
        for thread_id in ids:
            graph.invoke(turn_input(thread_id, turn), thread_config(thread_id))
    return w.threads * w.turns_per_thread / (time.perf_counter() - start)


async def _async_wide(saver: Any, w: Workload, tag: str) -> float:
    graph = build_chat_graph(saver)
    ids = [f"{tag}-t{i}" for i in range(w.threads)]

    async def one_thread(thread_id: str) -> None:
        for turn in range(1, w.turns_per_thread + 1):
            await graph.ainvoke(turn_input(thread_id, turn), thread_config(thread_id))

    start = time.perf_counter()
    await asyncio.gather(*(one_thread(t) for t in ids))
    return w.threads * w.turns_per_thread / (time.perf_counter() - start)


def _sync_long(saver: Any, w: Workload, measure: Callable[[], int | None]) -> LongRun:
    graph = build_chat_graph(saver)
    thread_id = "long"
    config = thread_config(thread_id)
    sizes = [measure()]
    busy = 0.0
    for turn in range(1, w.long_turns + 1):
        start = time.perf_counter()
        graph.invoke(turn_input(thread_id, turn), config)
        busy += time.perf_counter() - start
        if turn % w.window == 0:
            sizes.append(measure())
    get_ms, list_ms = [], []
    for _ in range(w.latency_samples):
        start = time.perf_counter()
        found = saver.get_tuple(config)
        get_ms.append((time.perf_counter() - start) * 1000)
        assert found is not None
        start = time.perf_counter()
        listed = list(saver.list(config, limit=10))
        list_ms.append((time.perf_counter() - start) * 1000)
        assert len(listed) == 10
    return LongRun(w.long_turns / busy, sizes, get_ms, list_ms)


async def _async_long(saver: Any, w: Workload, measure: Callable[[], int | None]) -> LongRun:
    graph = build_chat_graph(saver)
    thread_id = "long"
    config = thread_config(thread_id)
    sizes = [measure()]
    busy = 0.0
    for turn in range(1, w.long_turns + 1):
        start = time.perf_counter()
        await graph.ainvoke(turn_input(thread_id, turn), config)
        busy += time.perf_counter() - start
        if turn % w.window == 0:
            sizes.append(measure())
    get_ms, list_ms = [], []
    for _ in range(w.latency_samples):
        start = time.perf_counter()
        found = await saver.aget_tuple(config)
        get_ms.append((time.perf_counter() - start) * 1000)
        assert found is not None
        start = time.perf_counter()
        listed = [item async for item in saver.alist(config, limit=10)]
        list_ms.append((time.perf_counter() - start) * 1000)
        assert len(listed) == 10
    return LongRun(w.long_turns / busy, sizes, get_ms, list_ms)


def _run_wide(spec: SaverSpec, w: Workload, rep: int) -> float:
    with fresh_location(spec.backend) as location:
        if spec.mode == "sync":
            with spec.open_sync(location) as saver:
                return _sync_wide(saver, w, f"r{rep}")

        async def go() -> float:
            async with spec.open_async(location) as saver:
                return await _async_wide(saver, w, f"r{rep}")

        return asyncio.run(go())


def _run_long(spec: SaverSpec, w: Workload) -> LongRun:
    with fresh_location(spec.backend) as location:

        def measure() -> int | None:
            return disk_bytes(spec.backend, location)

        if spec.mode == "sync":
            with spec.open_sync(location) as saver:
                return _sync_long(saver, w, measure)

        async def go() -> LongRun:
            async with spec.open_async(location) as saver:
                return await _async_long(saver, w, measure)

        return asyncio.run(go())


# ---------------------------------------------------------------- statistics


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def _paired_ratio(a: list[float], b: list[float]) -> float | None:
    """Median of per-repetition ratios a[i]/b[i] (pairs measured close in time)."""
    pairs = [x / y for x, y in zip(a, b, strict=False) if y]
    return statistics.median(pairs) if pairs else None


def _fmt(value: float | None, digits: int = 1, suffix: str = "") -> str:
    return "n/a" if value is None else f"{value:.{digits}f}{suffix}"


def _fmt_ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.0f}%"


def _fmt_bytes(value: float | None) -> str:
    if value is None:
        return "n/a"
    if value >= MB:
        return f"{value / MB:.2f} MB"
    return f"{value / 1024:.1f} KB"


# ---------------------------------------------------------------- results


@dataclass
class Summary:
    key: str
    label: str
    mode: str
    backend: str
    wide: float | None
    long: float | None
    get_p50: float | None
    get_p95: float | None
    list_p50: float | None
    list_p95: float | None
    final_bytes: int | None
    windows: list[float] | None
    growth: float | None
    wide_vs_memory: float | None
    long_vs_memory: float | None
    wide_vs_official: float | None
    long_vs_official: float | None
    note: str


def _summaries(results: dict[str, SaverResult], w: Workload) -> list[Summary]:
    out: list[Summary] = []
    for key, res in results.items():
        spec = res.spec
        memory = results.get(f"memory-{spec.mode}")
        official = results.get(f"official-{spec.backend}-{spec.mode}")
        longs = res.long
        first_long = longs[0] if longs else None
        windows = first_long.window_bytes_per_turn(w.window) if first_long else None
        growth = (
            windows[-1] / windows[0] if windows and windows[0] > 0 and len(windows) > 1 else None
        )
        all_get = [x for run in longs for x in run.get_tuple_ms]
        all_list = [x for run in longs for x in run.list10_ms]
        long_tps = [run.turns_per_s for run in longs]

        def vs(
            other: SaverResult | None, mine: list[float], attr: str, res: SaverResult = res
        ) -> float | None:
            if other is None or other is res or not other.ok:
                return None
            theirs = other.wide if attr == "wide" else [run.turns_per_s for run in other.long]
            return _paired_ratio(mine, theirs)

        note = res.unavailable or res.error or ""
        out.append(
            Summary(
                key=key,
                label=spec.label,
                mode=spec.mode,
                backend=spec.backend,
                wide=_median(res.wide),
                long=_median(long_tps),
                get_p50=_pct(all_get, 0.5),
                get_p95=_pct(all_get, 0.95),
                list_p50=_pct(all_list, 0.5),
                list_p95=_pct(all_list, 0.95),
                final_bytes=first_long.final_bytes if first_long else None,
                windows=windows,
                growth=growth,
                wide_vs_memory=vs(memory, res.wide, "wide"),
                long_vs_memory=vs(memory, long_tps, "long"),
                wide_vs_official=vs(official, res.wide, "wide"),
                long_vs_official=vs(official, long_tps, "long"),
                note=note,
            )
        )
    return out


@dataclass
class Verdict:
    issue: int
    saver: str
    target: str
    measured: str
    passed: bool | None  # None: could not be measured


def _verdicts(summaries: list[Summary]) -> list[Verdict]:
    by_key = {s.key: s for s in summaries}
    out: list[Verdict] = []

    def check(
        issue: int,
        s: Summary,
        target: str,
        value: float | None,
        ok: Callable[[float], bool],
        shown: str,
    ) -> None:
        out.append(Verdict(issue, s.label, target, shown, None if value is None else ok(value)))

    for key in ("ours-sqlite-sync", "ours-sqlite-async"):
        s = by_key.get(key)
        if s is None:
            continue
        check(
            2,
            s,
            "20x50 >= 85% of InMemorySaver (same mode)",
            s.wide_vs_memory,
            lambda v: v >= 0.85,
            _fmt_ratio(s.wide_vs_memory),
        )
        check(
            2,
            s,
            "1x300 >= 100% of InMemorySaver turns/s",
            s.long_vs_memory,
            lambda v: v >= 1.0,
            _fmt_ratio(s.long_vs_memory),
        )
        check(
            2,
            s,
            "1x300 on disk <= 5 MB",
            s.final_bytes,
            lambda v: v <= 5 * MB,
            _fmt_bytes(s.final_bytes),
        )
        check(
            2,
            s,
            "bytes/turn growth last/first window <= 1.5",
            s.growth,
            lambda v: v <= 1.5,
            _fmt(s.growth, 2),
        )
        check(
            2,
            s,
            "list(limit=10) p50 <= 10 ms",
            s.list_p50,
            lambda v: v <= 10.0,
            _fmt(s.list_p50, 2, " ms"),
        )
    for key in ("ours-postgres-sync", "ours-postgres-async"):
        s = by_key.get(key)
        if s is None:
            continue
        check(
            3,
            s,
            "20x50 >= 70% of InMemorySaver (same mode)",
            s.wide_vs_memory,
            lambda v: v >= 0.70,
            _fmt_ratio(s.wide_vs_memory),
        )
        if s.mode == "async":
            check(
                3,
                s,
                "20 runs in flight >= 3x official async (pool 10)",
                s.wide_vs_official,
                lambda v: v >= 3.0,
                _fmt(s.wide_vs_official, 2, "x"),
            )
        check(
            3,
            s,
            "1x300 on disk <= 5 MB",
            s.final_bytes,
            lambda v: v <= 5 * MB,
            _fmt_bytes(s.final_bytes),
        )
        check(
            3,
            s,
            "bytes/turn growth last/first window <= 1.5",
            s.growth,
            lambda v: v <= 1.5,
            _fmt(s.growth, 2),
        )
    return out


def _table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _versions() -> str:
    names = (
        "langgraph",
        "langgraph-checkpoint",
        "langgraph-checkpoint-sqlite",
        "langgraph-checkpoint-postgres",
        "aiosqlite",
        "psycopg",
    )
    parts = []
    for name in names:
        try:
            parts.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            parts.append(f"{name} (not installed)")
    return ", ".join(parts)


def render(
    summaries: list[Summary], verdicts: list[Verdict], w: Workload, elapsed: float, quick: bool
) -> str:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    head = [
        "# Session-memory benchmark"
        + (" (QUICK smoke run: not a real measurement)" if quick else ""),
        "",
        f"Run {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M UTC} by `python -m benchmarks.session"
        + (" --quick" if quick else "")
        + f"` in {elapsed:.0f} s on {os.cpu_count()} CPUs (load average at the end "
        f"{load[0]:.1f}; the machine is shared, so read ratios, not absolute numbers), "
        f"Python {platform.python_version()}; {_versions()}.",
        "",
        f"Workload: a compiled 3-node `StateGraph` (prepare -> model -> post) over plain "
        f"`add_messages` state; each turn is one `invoke`/`ainvoke` with a 20-60 character human "
        f"message and a deterministic {200}-{800} character AI reply. "
        f"`{w.threads}x{w.turns_per_thread}`: {w.threads} threads x {w.turns_per_thread} turns "
        f"(sync: round-robin from one OS thread; async: {w.threads} threads as concurrent coroutines "
        f"via `asyncio.gather`, i.e. {w.threads} runs in flight). `1x{w.long_turns}`: one thread, "
        f"{w.long_turns} turns. {w.reps} repetitions in rotating order; throughput is the median, "
        f"ratios are medians of per-repetition ratios. Latencies: {w.latency_samples} calls per "
        f"repetition on the finished {w.long_turns}-turn thread. Every saver starts on a fresh "
        f"SQLite file / fresh Postgres database with default settings (no retention policy).",
        "",
        "## Targets",
        "",
    ]
    verdict_rows = [
        [
            f"#{v.issue}",
            v.saver,
            v.target,
            v.measured,
            "n/a" if v.passed is None else ("PASS" if v.passed else "**FAIL**"),
        ]
        for v in verdicts
    ]
    body = [
        _table(["issue", "saver", "target", "measured", "result"], verdict_rows)
        if verdict_rows
        else "No saver of ours was available in this run, so no target could be checked.",
        "",
        "## Throughput (turns/s, median)",
        "",
        _table(
            [
                "saver",
                "mode",
                f"{w.threads}x{w.turns_per_thread}",
                "vs InMemory",
                "vs official",
                f"1x{w.long_turns}",
                "vs InMemory",
                "vs official",
            ],
            [
                [
                    s.label,
                    s.mode,
                    _fmt(s.wide),
                    _fmt_ratio(s.wide_vs_memory),
                    _fmt_ratio(s.wide_vs_official),
                    _fmt(s.long),
                    _fmt_ratio(s.long_vs_memory),
                    _fmt_ratio(s.long_vs_official),
                ]
                for s in summaries
                if not s.note
            ],
        ),
        "",
        f"## Reads on the {w.long_turns}-turn thread (ms)",
        "",
        _table(
            [
                "saver",
                "mode",
                "get_tuple p50",
                "get_tuple p95",
                "list(limit=10) p50",
                "list(limit=10) p95",
            ],
            [
                [
                    s.label,
                    s.mode,
                    _fmt(s.get_p50, 2),
                    _fmt(s.get_p95, 2),
                    _fmt(s.list_p50, 2),
                    _fmt(s.list_p95, 2),
                ]
                for s in summaries
                if not s.note
            ],
        ),
        "",
        f"## Storage of the {w.long_turns}-turn thread",
        "",
        "SQLite: file + WAL after `wal_checkpoint(TRUNCATE)`; Postgres: `pg_total_relation_size` "
        f"of the saver's tables. Bytes per turn in each {w.window}-turn window, growth = last / first.",
        "",
        _table(
            ["saver", "mode", "on disk", "bytes/turn per window", "growth"],
            [
                [
                    s.label,
                    s.mode,
                    _fmt_bytes(s.final_bytes),
                    "n/a"
                    if s.windows is None
                    else " / ".join(f"{b / 1024:.1f}K" for b in s.windows),
                    _fmt(s.growth, 2),
                ]
                for s in summaries
                if not s.note and s.backend != "memory"
            ],
        ),
    ]
    skipped = [s for s in summaries if s.note]
    if skipped:
        body += ["", "## Not measured", ""]
        body += [f"- {s.label} ({s.mode}): {s.note}" for s in skipped]
    return "\n".join(head + body) + "\n"


# ---------------------------------------------------------------- main


def _select(only: str | None) -> list[SaverSpec]:
    specs = list(ALL_SPECS)
    if only:
        specs = [s for s in specs if s.backend in ("memory", only)]
    return specs


def run(w: Workload, specs: list[SaverSpec], *, quick: bool, out: Path | None) -> list[Verdict]:
    started = time.perf_counter()
    results: dict[str, SaverResult] = {s.key: SaverResult(s) for s in specs}
    runnable = []
    for spec in specs:
        reason = unavailable_reason(spec)
        results[spec.key].unavailable = reason
        if reason is None:
            runnable.append(spec)
        else:
            print(f"  skip {spec.key}: {reason}", flush=True)

    def attempt(spec: SaverSpec, what: str, fn: Callable[[], Any]) -> Any:
        res = results[spec.key]
        if res.error:
            return None
        gc.collect()
        try:
            return fn()
        except Exception as exc:  # a failing saver is a result, not a crash of the run
            res.error = f"{what} failed: {type(exc).__name__}: {exc}"
            traceback.print_exc()
            return None

    for rep in range(w.reps):
        order = (
            runnable[rep % len(runnable) :] + runnable[: rep % len(runnable)] if runnable else []
        )
        for spec in order:
            t0 = time.perf_counter()
            tps = attempt(
                spec, f"{w.threads}x{w.turns_per_thread}", lambda s=spec, r=rep: _run_wide(s, w, r)
            )
            if tps is not None:
                results[spec.key].wide.append(tps)
            # The official savers' 300-turn thread is measured once: its size is
            # deterministic and at 250 MB it is the slowest part of the run.
            long = (
                attempt(spec, f"1x{w.long_turns}", lambda s=spec: _run_long(s, w))
                if spec.family != "official" or rep == 0
                else None
            )
            if long is not None:
                results[spec.key].long.append(long)
            print(
                f"  rep {rep + 1}/{w.reps} {spec.key:26s} "
                f"{w.threads}x{w.turns_per_thread}={_fmt(tps)} t/s  "
                f"1x{w.long_turns}={_fmt(long.turns_per_s if long else None)} t/s  "
                f"size={_fmt_bytes(long.final_bytes if long else None)}  "
                f"({time.perf_counter() - t0:.0f} s)",
                flush=True,
            )
    summaries = _summaries(results, w)
    verdicts = _verdicts(summaries)
    text = render(summaries, verdicts, w, time.perf_counter() - started, quick)
    print()
    print(text)
    if out is not None:
        out.write_text(text)
        print(f"wrote {out}")
    return verdicts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.session", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="5x10 and 1x60 turns, 1 repetition")
    parser.add_argument("--only", choices=("sqlite", "postgres"), help="measure one backend")
    parser.add_argument("--reps", type=int, help="repetitions (default 3, quick 1)")
    parser.add_argument("--no-write", action="store_true", help=f"do not write {RESULTS_PATH.name}")
    parser.add_argument("--savers", help="comma-separated saver keys to run (debugging)")
    args = parser.parse_args(argv)
    w = (
        Workload(
            threads=5, turns_per_thread=10, long_turns=60, window=10, latency_samples=10, reps=1
        )
        if args.quick
        else Workload()
    )
    if args.reps:
        w = dataclasses.replace(w, reps=args.reps)
    specs = _select(args.only)
    if args.savers:
        keys = set(args.savers.split(","))
        specs = [s for s in specs if s.key in keys]
    out = None if args.no_write else RESULTS_PATH
    run(w, specs, quick=args.quick, out=out)
    # A missed target is a result to read, not a crash: `make bench` goes on.
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
