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

from benchmarks import _session_behaviour as behaviour
from benchmarks import _session_drivers as drivers
from benchmarks._session_savers import (
    ALL_SPECS,
    SaverSpec,
    unavailable_reason,
)

RESULTS_PATH = Path(__file__).with_name("RESULTS-session.md")
# Official savers that a target is measured against: these run in every repetition.
TARGET_BASELINES = frozenset({"official-postgres-async"})
MB = 1024 * 1024


@dataclass(frozen=True)
class Workload:
    threads: int = 20
    turns_per_thread: int = 50
    long_turns: int = 300
    window: int = 50
    latency_samples: int = 40
    # Stop sampling a saver's reads after this many seconds (at least 5 samples):
    # the official savers and InMemorySaver take 0.5-2 s per list(limit=10) here.
    latency_budget_s: float = 4.0
    reps: int = 3
    # The official savers are baselines for information (issue 3's "20 in flight"
    # excepted); measuring them once keeps a full run near 10 minutes.
    official_reps: int = 1


@dataclass
class LongRun:
    """One 300-turn thread: speed, sizes at each window, read latencies."""

    turns_per_s: float
    cpu_ms_per_turn: float
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
    wide_cpu: list[float] = field(default_factory=list)  # 20x50 CPU ms per turn per rep
    long: list[LongRun] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.unavailable is None and self.error is None


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
    wide_cpu: float | None
    long_cpu: float | None
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
        # Postgres sizes vary from run to run (dead tuples, autovacuum timing); report
        # the repetition with the median final size, and its windows.
        sized = sorted(longs, key=lambda run: run.final_bytes or 0)
        first_long = sized[(len(sized) - 1) // 2] if sized else None
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
            # Pairs from the same repetition (the official savers run in the first
            # ``official_reps`` only, so the pairs are the first repetitions).
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
                wide_cpu=_median(res.wide_cpu),
                long_cpu=_median([run.cpu_ms_per_turn for run in longs]),
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
    summaries: list[Summary],
    verdicts: list[Verdict],
    w: Workload,
    elapsed: float,
    quick: bool,
    behaviour: list[list[str]] | None = None,
    title: str = "Session-memory benchmark",
) -> str:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    head = [
        f"## {title}" + (" (QUICK smoke run: not a real measurement)" if quick else ""),
        "",
        f"Run {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M UTC} by "
        f"`{' '.join(['python -m benchmarks.session', *sys.argv[1:]])}` in {elapsed:.0f} s on {os.cpu_count()} CPUs (load average at the end "
        f"{load[0]:.1f}; the machine is shared, so read ratios, not absolute numbers), "
        f"Python {platform.python_version()}; {_versions()}.",
        "",
        f"Workload: a compiled 3-node `StateGraph` (prepare -> model -> post) over plain "
        f"`add_messages` state; each turn is one `invoke`/`ainvoke` with a 20-60 character human "
        f"message and a deterministic {200}-{800} character AI reply. "
        f"`{w.threads}x{w.turns_per_thread}`: {w.threads} threads x {w.turns_per_thread} turns "
        f"(sync: round-robin from one OS thread; async: {w.threads} threads as concurrent "
        f"coroutines via `asyncio.gather`, i.e. {w.threads} runs in flight, in blocks of "
        f"{drivers.ASYNC_BLOCK_TURNS} turns). `1x{w.long_turns}`: one thread, {w.long_turns} turns. "
        f"**Interleaved**: all savers of one mode are open at once and take turns in small blocks "
        f"(one round of {w.threads} turns, one turn of the long thread), each saver's clock "
        f"running only in its own blocks, so load swings of the shared machine hit all savers "
        f"alike. Repetitions: {w.reps} ({min(w.official_reps, w.reps)} with the official savers, "
        f"all with the official async Postgres saver, a target's baseline); throughput is the "
        f"median; ratios are medians of per-repetition ratios (pairs measured side by side). CPU ms/turn is this process's "
        f"CPU time (a Postgres server's own CPU is not in it). Latencies: up to "
        f"{w.latency_samples} calls (at least 5, about {w.latency_budget_s:.0f} s at most) per "
        f"repetition on the finished {w.long_turns}-turn thread. Every saver starts on a fresh "
        f"SQLite file / fresh Postgres database with default settings (no retention policy).",
        "",
        "### Targets",
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
        "### Throughput (turns/s, median)",
        "",
        _table(
            [
                "saver",
                "mode",
                f"{w.threads}x{w.turns_per_thread}",
                "vs InMemory",
                "vs official",
                "CPU ms/turn",
                f"1x{w.long_turns}",
                "vs InMemory",
                "vs official",
                "CPU ms/turn",
            ],
            [
                [
                    s.label,
                    s.mode,
                    _fmt(s.wide),
                    _fmt_ratio(s.wide_vs_memory),
                    _fmt_ratio(s.wide_vs_official),
                    _fmt(s.wide_cpu),
                    _fmt(s.long),
                    _fmt_ratio(s.long_vs_memory),
                    _fmt_ratio(s.long_vs_official),
                    _fmt(s.long_cpu),
                ]
                for s in summaries
                if not s.note
            ],
        ),
        "",
        f"### Reads on the {w.long_turns}-turn thread (ms)",
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
        f"### Storage of the {w.long_turns}-turn thread",
        "",
        "SQLite: file + WAL after `wal_checkpoint(TRUNCATE)`; Postgres: `pg_total_relation_size` "
        f"of the saver's tables; the repetition with the median final size. Bytes per turn in each {w.window}-turn window, growth = last / first.",
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
    if behaviour:
        body += [
            "",
            "### Behaviour checks (measured live in this run)",
            "",
            "`get_tuple` inside a `list` loop (10 s allowed); a late `put` after `delete_thread`; "
            "2 processes (async saver) opening a fresh SQLite file at the same instant "
            "(`setup()` + 1 turn), repeated; for Postgres, 2 savers opening a fresh database at "
            "the same instant. The asserting versions are in "
            "`tests/integration/test_session_stress.py` (`LGM_SESSION_TESTS_OFFICIAL=1` runs "
            "them on the official savers too, reported as XFAIL).",
            "",
            _table(
                [
                    "saver",
                    "mode",
                    "get_tuple in list loop",
                    "late put after delete",
                    "fresh-file start race",
                ],
                behaviour,
            ),
        ]
    skipped = [s for s in summaries if s.note]
    if skipped:
        body += ["", "### Not measured", ""]
        body += [f"- {s.label} ({s.mode}): {s.note}" for s in skipped]
    return "\n".join(head + body) + "\n"


# ---------------------------------------------------------------- main


def _select(only: str | None) -> list[SaverSpec]:
    specs = list(ALL_SPECS)
    if only:
        specs = [s for s in specs if s.backend in ("memory", only)]
    return specs


def _behaviour_rows(specs: list[SaverSpec], quick: bool) -> list[list[str]]:
    rows = []
    for spec in specs:
        if spec.backend == "memory":
            continue
        print(f"  behaviour checks: {spec.key}", flush=True)
        race = "n/a"
        if spec.backend == "sqlite" and spec.mode == "async":
            race = behaviour.setup_race_check(spec.key, trials=5 if quick else 20)
        elif spec.backend == "postgres":
            race = behaviour.postgres_setup_race_check(spec, trials=3 if quick else 5)
        rows.append(
            [
                spec.label,
                spec.mode,
                behaviour.list_loop_check(spec),
                behaviour.late_put_check(spec),
                race,
            ]
        )
    return rows


def run(
    w: Workload,
    specs: list[SaverSpec],
    *,
    quick: bool,
    out: Path | None,
    check_behaviour: bool = True,
) -> list[Verdict]:
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

    def on_error(spec: SaverSpec, what: str, exc: BaseException) -> None:
        # A failing saver is a result, not a crash of the run.
        results[spec.key].error = f"{what} failed: {type(exc).__name__}: {exc}"
        traceback.print_exception(exc)

    for rep in range(w.reps):
        members = [
            s
            for s in runnable
            if not results[s.key].error
            and (s.family != "official" or rep < w.official_reps or s.key in TARGET_BASELINES)
        ]
        for mode in ("sync", "async"):
            group = [s for s in members if s.mode == mode]
            if not group:
                continue
            group = group[rep % len(group) :] + group[: rep % len(group)]
            t0 = time.perf_counter()
            gc.collect()
            tag = f"r{rep}"
            if mode == "sync":
                wide = drivers.sync_wide(group, w.threads, w.turns_per_thread, tag, on_error)
                gc.collect()
                long = drivers.sync_long(
                    group, w.long_turns, w.window, w.latency_samples, w.latency_budget_s, on_error
                )
            else:
                wide = asyncio.run(
                    drivers.async_wide(group, w.threads, w.turns_per_thread, tag, on_error)
                )
                gc.collect()
                long = asyncio.run(
                    drivers.async_long(
                        group,
                        w.long_turns,
                        w.window,
                        w.latency_samples,
                        w.latency_budget_s,
                        on_error,
                    )
                )
            for spec in group:
                res = results[spec.key]
                if spec.key in wide:
                    res.wide.append(wide[spec.key].turns_per_s)
                    res.wide_cpu.append(wide[spec.key].cpu_ms_per_turn)
                if spec.key in long:
                    lr = long[spec.key]
                    res.long.append(
                        LongRun(
                            lr.turns_per_s,
                            lr.cpu_ms_per_turn,
                            lr.sizes,
                            lr.get_tuple_ms,
                            lr.list10_ms,
                        )
                    )
                print(
                    f"  rep {rep + 1}/{w.reps} {spec.key:28s} "
                    f"{w.threads}x{w.turns_per_thread}="
                    f"{_fmt(wide[spec.key].turns_per_s if spec.key in wide else None)} t/s  "
                    f"1x{w.long_turns}="
                    f"{_fmt(long[spec.key].turns_per_s if spec.key in long else None)} t/s  "
                    f"size={_fmt_bytes(long[spec.key].sizes[-1] if spec.key in long else None)}",
                    flush=True,
                )
            print(f"  rep {rep + 1}/{w.reps} {mode} group took {time.perf_counter() - t0:.0f} s")
    behaviour = None if not check_behaviour else _behaviour_rows(runnable, quick)
    summaries = _summaries(results, w)
    verdicts = _verdicts(summaries)
    elapsed = time.perf_counter() - started
    measured = {s.backend for s in runnable}
    for backend, issue in (("sqlite", 2), ("postgres", 3)):
        if backend not in measured:
            continue
        labels = {s.label for s in specs if s.backend == backend}
        text = render(
            [s for s in summaries if s.backend in ("memory", backend)],
            [v for v in verdicts if v.issue == issue],
            w,
            elapsed,
            quick,
            None if behaviour is None else [r for r in behaviour if r[0] in labels],
            title=f"{'SQLite' if backend == 'sqlite' else 'Postgres'} savers (issue {issue})",
        )
        print()
        print(text)
        if out is not None:
            part = out.with_name(f"{out.stem}-{backend}.md")
            part.write_text(text)
            print(f"wrote {part}")
    if out is not None:
        out.write_text(_combined(out))
        print(f"wrote {out}")
    return verdicts


def _combined(out: Path) -> str:
    """RESULTS-session.md: each backend's part from the latest run that measured it."""
    parts = [
        out.with_name(f"{out.stem}-{backend}.md").read_text()
        for backend in ("sqlite", "postgres")
        if out.with_name(f"{out.stem}-{backend}.md").exists()
    ]
    intro = (
        "# Session-memory benchmark\n\n"
        "`python -m benchmarks.session` (`make bench-session`) measures every saver in one "
        "run; `--only sqlite|postgres` measures one backend and refreshes only its part below "
        "(each part is also kept as `RESULTS-session-<backend>.md` and says when it was run).\n"
    )
    return intro + "\n" + "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.session", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="5x10 and 1x60 turns, 1 repetition")
    parser.add_argument("--only", choices=("sqlite", "postgres"), help="measure one backend")
    parser.add_argument("--reps", type=int, help="repetitions (default 3, quick 1)")
    parser.add_argument(
        "--official-reps", type=int, help="repetitions of the official savers (default 1)"
    )
    parser.add_argument("--no-write", action="store_true", help=f"do not write {RESULTS_PATH.name}")
    parser.add_argument(
        "--no-behaviour", action="store_true", help="skip the live behaviour checks"
    )
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
    if args.official_reps:
        w = dataclasses.replace(w, official_reps=args.official_reps)
    specs = _select(args.only)
    if args.savers:
        keys = set(args.savers.split(","))
        specs = [s for s in specs if s.key in keys]
    # A quick smoke run never overwrites the real results.
    out = None if args.no_write or args.quick else RESULTS_PATH
    run(w, specs, quick=args.quick, out=out, check_behaviour=not args.no_behaviour)
    # A missed target is a result to read, not a crash: `make bench` goes on.
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
