"""How fast can any durable saver be inside LangGraph's loop? A floor benchmark.

Run ``python -m benchmarks.session_floor`` (or ``make bench-floor``). Writes
``benchmarks/RESULTS-session-floor.md``.

Issues 2 and 3 set throughput targets relative to ``InMemorySaver``. This
benchmark measures what those ratios can reach at best on this machine, with
the workload and drivers of ``benchmarks.session``, by running "floor" savers
next to ours and InMemorySaver in the same repetitions:

* ``floor SQLite``: InMemorySaver, plus the least a saver that makes each
  ``put`` durable in SQLite must do: one committed ``INSERT`` of the
  checkpoint id (WAL, ``synchronous=NORMAL``, as ours) into a real file. It
  stores none of the checkpoint and reads nothing from the file.
* ``floor Postgres``: InMemorySaver, plus one round trip per ``put`` (an
  autocommit ``INSERT`` of the checkpoint id, ``synchronous_commit=off``, as
  ours) and one per ``get_tuple`` (a saver shared by several app instances
  cannot answer from its own memory: another instance may have written).
* ``per-call round trips, Postgres`` (async, 20 runs in flight): the same
  round trips from ``ainvoke``. Not a floor: with many runs in flight a saver
  can batch puts of different runs into one round trip, as ours does, and beat
  it. It shows what batching is worth.

Everything else the floors do is InMemorySaver's own work, so a real saver,
which must also encode, store and read the state, is slower than its floor.
When a floor's ratio is below a target, no saver of that backend can meet the
target here: the cost is where LangGraph puts the saver (each ``put`` of a
``durability="async"`` run waits for the previous one, on a thread of a pool
built per ``invoke``, so its I/O and GIL hand-offs sit on the turn's path).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import platform
import sqlite3
import statistics
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from benchmarks import _session_drivers as drivers
from benchmarks._session_savers import ALL_SPECS, SaverSpec, unavailable_reason

RESULTS_PATH = Path(__file__).with_name("RESULTS-session-floor.md")

_FLOOR_TABLE = (
    "CREATE TABLE IF NOT EXISTS floor_puts (thread_id TEXT NOT NULL, "
    "checkpoint_id TEXT NOT NULL, PRIMARY KEY (thread_id, checkpoint_id))"
)
_FLOOR_INSERT_SQLITE = "INSERT INTO floor_puts VALUES (?, ?)"
_FLOOR_INSERT_PG = "INSERT INTO floor_puts VALUES (%s, %s)"
_FLOOR_READ_PG = "SELECT checkpoint_id FROM floor_puts WHERE thread_id = %s LIMIT 1"


def _memory_saver_class() -> type[Any]:
    from langgraph.checkpoint.memory import InMemorySaver

    return InMemorySaver


def _thread_and_id(config: Any, checkpoint: Any) -> tuple[str, str]:
    return str(config["configurable"]["thread_id"]), str(checkpoint["id"])


def _sync_floor(execute: Callable[..., Any], insert_sql: str, read_sql: str | None) -> Any:
    """InMemorySaver that also runs ``insert_sql`` at each put and ``read_sql``
    (if any) at each get_tuple on one connection (``execute``), under a lock:
    LangGraph calls a sync saver from its worker threads."""
    lock = threading.Lock()

    class FloorSaver(_memory_saver_class()):  # type: ignore[misc]
        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            out = super().put(config, checkpoint, metadata, new_versions)
            with lock:
                execute(insert_sql, _thread_and_id(config, checkpoint))
            return out

        def get_tuple(self, config: Any) -> Any:
            if read_sql is not None:
                with lock:
                    execute(read_sql, (config["configurable"]["thread_id"],))
            return super().get_tuple(config)

    return FloorSaver()


async def _make_postgres_floor_async(dsn: str) -> Any:
    from psycopg_pool import AsyncConnectionPool

    from benchmarks._session_savers import PG_POOL_SIZE

    async def configure(conn: Any) -> None:
        await conn.set_autocommit(True)
        await conn.execute("SET synchronous_commit = off")

    pool = AsyncConnectionPool(
        dsn, min_size=PG_POOL_SIZE, max_size=PG_POOL_SIZE, configure=configure, open=False
    )
    await pool.open(wait=True)
    async with pool.connection() as conn:
        await conn.execute(_FLOOR_TABLE)
    base = _memory_saver_class()

    class AsyncPostgresFloorSaver(base):  # type: ignore[misc, valid-type]
        async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            out = self.put(config, checkpoint, metadata, new_versions)
            async with pool.connection() as conn:
                await conn.execute(_FLOOR_INSERT_PG, _thread_and_id(config, checkpoint))
            return out

        async def aget_tuple(self, config: Any) -> Any:
            async with pool.connection() as conn:
                await conn.execute(_FLOOR_READ_PG, (config["configurable"]["thread_id"],))
            return self.get_tuple(config)

    saver = AsyncPostgresFloorSaver()
    saver.floor_pool = pool
    return saver


@contextlib.contextmanager
def _open_sqlite_floor(location: str) -> Iterator[Any]:
    conn = sqlite3.connect(location, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(_FLOOR_TABLE)
        yield _sync_floor(conn.execute, _FLOOR_INSERT_SQLITE, None)
    finally:
        conn.close()


@contextlib.contextmanager
def _open_postgres_floor(location: str) -> Iterator[Any]:
    import psycopg

    with psycopg.connect(location, autocommit=True) as conn:
        conn.execute("SET synchronous_commit = off")
        conn.execute(_FLOOR_TABLE)
        yield _sync_floor(conn.execute, _FLOOR_INSERT_PG, _FLOOR_READ_PG)


@contextlib.asynccontextmanager
async def _aopen_postgres_floor(location: str) -> AsyncIterator[Any]:
    saver = await _make_postgres_floor_async(location)
    try:
        yield saver
    finally:
        await saver.floor_pool.close()


FLOOR_SPECS: tuple[SaverSpec, ...] = (
    SaverSpec("floor-sqlite-sync", "floor SQLite", "memory", "sqlite", "sync", _open_sqlite_floor),
    SaverSpec(
        "floor-postgres-sync", "floor Postgres", "memory", "postgres", "sync", _open_postgres_floor
    ),
    SaverSpec(
        "floor-postgres-async",
        "per-call round trips, Postgres (pool 10)",
        "memory",
        "postgres",
        "async",
        _aopen_postgres_floor,
    ),
)

_BY_KEY = {spec.key: spec for spec in (*ALL_SPECS, *FLOOR_SPECS)}
# Each backend is measured in its own group, with its own InMemorySaver: in one
# rotation, a Postgres server's background work after our Postgres savers' turns
# (WAL writer, autovacuum) slowed whichever saver ran next, the baseline too.
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("SQLite, sync", ("memory-sync", "floor-sqlite-sync", "ours-sqlite-sync")),
    ("Postgres, sync", ("memory-sync", "floor-postgres-sync", "ours-postgres-sync")),
    (
        "Postgres, async",
        ("memory-async", "floor-postgres-async", "ours-postgres-async", "official-postgres-async"),
    ),
)
# The targets of issues 2 and 3 a floor bounds: (group, ours, its floor, target, label).
TARGETS = (
    ("SQLite, sync", "ours-sqlite-sync", "floor-sqlite-sync", 0.85, "issue 2: 20x50 sync"),
    ("Postgres, sync", "ours-postgres-sync", "floor-postgres-sync", 0.70, "issue 3: 20x50 sync"),
)
Rates = dict[str, dict[str, list[float]]]  # group -> saver key -> turns/s per repetition


def _available(keys: Sequence[str]) -> list[SaverSpec]:
    specs = []
    for key in keys:
        spec = _BY_KEY[key]
        reason = unavailable_reason(spec)  # a floor: its backend's server, if any
        if reason:
            print(f"skipped {spec.label}: {reason}", file=sys.stderr)
            continue
        specs.append(spec)
    return specs


def _on_error(spec: SaverSpec, what: str, exc: BaseException) -> None:
    print(f"{spec.label} failed in {what}: {exc!r}", file=sys.stderr)


def run(threads: int, turns: int, reps: int) -> Rates:
    """turns/s per group and saver key, one value per repetition."""
    groups = [(name, _available(keys)) for name, keys in GROUPS]
    rates: Rates = {}
    for rep in range(reps):
        tag = f"floor{rep}-{time.time_ns()}"
        for name, specs in groups:
            if len(specs) < 2:  # nothing to compare with the baseline
                continue
            if specs[0].mode == "async":
                results = asyncio.run(drivers.async_wide(specs, threads, turns, tag, _on_error))
            else:
                results = drivers.sync_wide(specs, threads, turns, tag, _on_error)
            group = rates.setdefault(name, {})
            for key, result in results.items():
                group.setdefault(key, []).append(result.turns_per_s)
            print(
                f"repetition {rep + 1}/{reps}, {name}: "
                + ", ".join(f"{k} {v[-1]:.0f}" for k, v in group.items()),
                file=sys.stderr,
            )
    return rates


def _ratio(group: dict[str, list[float]], key: str) -> float | None:
    """Median of per-repetition ratios of ``key`` to the group's InMemorySaver."""
    baseline = next((k for k in group if k.startswith("memory-")), None)
    if key not in group or baseline is None:
        return None
    pairs = zip(group[key], group[baseline], strict=False)
    return statistics.median(a / b for a, b in pairs)


def report(rates: Rates, threads: int, turns: int, reps: int) -> str:
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Session floor benchmark",
        "",
        f"{now}; Python {platform.python_version()}; {threads} threads x {turns} turns,"
        f" {reps} repetitions; medians of per-repetition ratios. Generated by"
        " `python -m benchmarks.session_floor` (see its docstring for what a floor is)."
        " Each group runs on its own, with its own InMemorySaver.",
        "",
        "| group | saver | turns/s (median) | vs InMemorySaver of the group |",
        "|---|---|---|---|",
    ]
    for name, group in rates.items():
        for key, values in group.items():
            ratio = _ratio(group, key)
            shown = f"{ratio:.0%}" if ratio is not None else "-"
            lines.append(
                f"| {name} | {_BY_KEY[key].label} | {statistics.median(values):.0f} | {shown} |"
            )
    lines += [
        "",
        "| target | ours | floor (best any saver of the backend can do) | target met by ours |",
        "|---|---|---|---|",
    ]
    for name, ours, floor, target, label in TARGETS:
        group = rates.get(name, {})
        ours_ratio, floor_ratio = _ratio(group, ours), _ratio(group, floor)
        if ours_ratio is None or floor_ratio is None:
            continue
        lines.append(
            f"| {label} >= {target:.0%} | {ours_ratio:.0%} | {floor_ratio:.0%} "
            f"| {'yes' if ours_ratio >= target else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50, help="turns per thread (default 50)")
    parser.add_argument("--reps", type=int, default=3, help="repetitions (default 3)")
    parser.add_argument("--no-write", action="store_true", help="do not write the results file")
    args = parser.parse_args(argv)
    threads = 20
    rates = run(threads, args.turns, args.reps)
    text = report(rates, threads, args.turns, args.reps)
    print(text)
    if not args.no_write:
        RESULTS_PATH.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
