"""Concurrency and crash safety of the SQLite checkpointers, with real processes.

* 4 writer processes (2 sync, 2 async; each 2 lanes) x 60 s on one fresh file:
  zero errors of any kind ("database is locked" included) and every checkpoint
  whose ``put`` returned is present afterwards.
* 4 processes (2 sync, 2 async) starting at the same instant on a fresh file, 20 times.
* 10 rounds of SIGKILL of a writer mid-run: ``PRAGMA integrity_check`` is "ok"
  and every acknowledged checkpoint reads back.

Each of these three runs twice: a short variant in CI (8 s, 5 starts, 4 kills: the
same assertions, ~25 s together) and the full soak above behind ``slow``
(``make test-slow``; CI runs ``-m "not slow"``). The Postgres soak below is
``slow`` only: ``test_postgres_stress.py`` runs the same 2 x 16 clients in CI.
* ``get_tuple`` (and a write) inside a ``list`` loop finishes (no deadlock).
* A deleted thread is not resurrected by a late ``put`` / ``put_writes``.

Writers are ``tests/integration/_session_stress_worker.py`` processes; each logs
the ids of the checkpoints it saw acknowledged to its own file.
``LGM_STRESS_SECONDS`` shortens the 60 s soak for local iteration.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import copy_checkpoint
from langgraph.checkpoint.base.id import uuid6

from benchmarks._session_workload import build_chat_graph, thread_config, turn_input
from langgraph_memory.errors import ThreadDeletedError
from tests.integration._savers import (
    OFFICIAL,
    OURS,
    REGISTRY,
    Harness,
    SaverFactory,
    factory_params,
    harness_for,
)

REPO = Path(__file__).resolve().parents[2]
STRESS_SECONDS = float(os.environ.get("LGM_STRESS_SECONDS", "60"))
CI_STRESS_SECONDS = 8.0  # ~1,000+ acknowledged puts here: enough to hit lock handoffs


def short_and_soak(name: str, short: float, soak: float) -> pytest.MarkDecorator:
    """``name`` = ``short`` in CI, ``soak`` behind the ``slow`` marker (same test body)."""
    return pytest.mark.parametrize(
        name,
        [
            pytest.param(short, id=f"{name}={short:g}"),
            pytest.param(soak, id=f"{name}={soak:g}", marks=pytest.mark.slow),
        ],
    )


# Known failures of LangGraph's official savers, shown when the registry includes
# them (LGM_SESSION_TESTS_OFFICIAL=1); issue 2 lists each one.
OFFICIAL_KNOWN_BAD = {
    "resurrect": "official savers keep no tombstone: a late put recreates a deleted thread",
    "list-loop": "official savers hold their (threading/asyncio) lock while list() yields",
    "pg-setup-race": "official setup(): concurrent CREATE TABLE IF NOT EXISTS -> UniqueViolation",
    "setup-race": "official setup() runs `PRAGMA journal_mode=WAL` + DDL unguarded: 'database is locked'",
}


def _sqlite_family(family: str) -> tuple[SaverFactory, SaverFactory]:
    pool = OURS if family == "ours" else OFFICIAL
    sync = next(f for f in pool if f.backend == "sqlite" and f.mode == "sync")
    async_ = next(f for f in pool if f.backend == "sqlite" and f.mode == "async")
    for factory in (sync, async_):
        reason = factory.missing_reason()
        if reason is not None:
            pytest.skip(reason)
    return sync, async_


FAMILIES = ["ours"] + (["official"] if any(not f.ours for f in REGISTRY) else [])


def _worker(*args: str) -> list[str]:
    return [sys.executable, "-m", "tests.integration._session_stress_worker", *args]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _read_acks(paths: list[Path]) -> dict[str, set[str]]:
    """thread_id -> acknowledged root-namespace checkpoint ids."""
    acks: dict[str, set[str]] = defaultdict(set)
    for path in paths:
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            parts = line.split(" ")
            if len(parts) == 3 and parts[1] == "":
                acks[parts[0]].add(parts[2])
            elif len(parts) == 3:
                acks[f"{parts[0]}|{parts[1]}"].add(parts[2])
    return acks


def _errors(paths: list[Path]) -> list[str]:
    return [line for p in paths if p.exists() for line in p.read_text().splitlines() if line]


def _integrity(db: str) -> str:
    with contextlib.closing(sqlite3.connect(db, timeout=30)) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def _missing_acks(factory: SaverFactory, db: str, acks: dict[str, set[str]]) -> list[str]:
    """Acknowledged checkpoints that a fresh saver cannot list (thread|id)."""
    missing = []
    with factory.open_sync(db) as saver:
        for thread_id, ids in acks.items():
            stored = {
                t.config["configurable"]["checkpoint_id"]
                for t in saver.list({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
            }
            missing += [f"{thread_id}|{i}" for i in sorted(ids - stored)]
    return missing


# ---------------------------------------------------------------- 4 processes x 60 s


@pytest.mark.timeout(int(STRESS_SECONDS) + 240)
@short_and_soak("seconds", CI_STRESS_SECONDS, STRESS_SECONDS)
@pytest.mark.parametrize("family", FAMILIES)
def test_four_processes_write_one_file_without_errors_or_lost_acks(
    tmp_path: Path, family: str, seconds: float
) -> None:
    sync, async_ = _sqlite_family(family)
    db = str(tmp_path / "shared.sqlite")
    procs, acks, errors, ready = [], [], [], []
    for i, factory in enumerate([sync, async_, sync, async_]):
        acks.append(tmp_path / f"ack-{i}.log")
        errors.append(tmp_path / f"err-{i}.log")
        ready.append(tmp_path / f"ready-{i}")
        cmd = _worker(
            "write",
            f"--factory={factory.id}",
            f"--db={db}",
            f"--worker=w{i}",
            f"--ack={acks[-1]}",
            f"--errors={errors[-1]}",
            f"--ready={ready[-1]}",
            f"--seconds={seconds}",
            "--lanes=2",
        )
        procs.append(subprocess.Popen(cmd, cwd=REPO, env=_env(), stderr=subprocess.PIPE))
    stderr = [p.communicate(timeout=seconds + 180)[1].decode() for p in procs]

    assert _errors(errors) == [], "writers hit errors"
    assert [p.returncode for p in procs] == [0, 0, 0, 0], stderr
    assert "database is locked" not in "".join(stderr)
    acknowledged = _read_acks(acks)
    total = sum(len(v) for v in acknowledged.values())
    assert total >= 100, f"only {total} checkpoints acknowledged; the run did not exercise much"
    assert _integrity(db) == "ok"
    assert _missing_acks(sync, db, acknowledged) == []


# ---------------------------------------------------------------- simultaneous fresh-file starts


@pytest.mark.timeout(300)
@short_and_soak("trials", 5, 20)
@pytest.mark.parametrize("family", FAMILIES)
def test_processes_starting_together_on_a_fresh_file(
    request: pytest.FixtureRequest, tmp_path: Path, family: str, trials: int
) -> None:
    sync, async_ = _sqlite_family(family)
    _expect_official_failure(request, family == "ours", "setup-race")
    # The official async saver fails ~5% of 2-process trials here (issue 2 saw
    # 17/20 on a quieter machine); 4 racers x 20 trials (the soak) make a miss unlikely.
    racers = 4
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    procs, errors = [], []
    for i in range(racers):
        factory = sync if i % 2 == 0 else async_
        errors.append(tmp_path / f"err-{i}.log")
        cmd = _worker(
            "race",
            f"--factory={factory.id}",
            f"--db={tmp_path / 'race.sqlite'}",
            f"--worker=r{i}",
            f"--errors={errors[-1]}",
            f"--barrier={barrier}",
            f"--parties={racers}",
            f"--trials={trials}",
            "--turns=1",
        )
        procs.append(subprocess.Popen(cmd, cwd=REPO, env=_env(), stderr=subprocess.PIPE))
    stderr = [p.communicate(timeout=240)[1].decode() for p in procs]

    assert _errors(errors) == [], "racers hit errors"
    assert [p.returncode for p in procs] == [0] * racers, stderr
    for trial in range(trials):
        db = str(tmp_path / f"race-{trial}.sqlite")
        assert _integrity(db) == "ok"
        with sync.open_sync(db) as saver:
            graph = build_chat_graph(saver)
            for i in range(racers):
                state = graph.get_state(thread_config(f"r{i}"))
                assert len(state.values["messages"]) == 2, (trial, i)


# ---------------------------------------------------------------- SIGKILL mid-write


@pytest.mark.timeout(400)
@short_and_soak("rounds", 4, 10)
@pytest.mark.parametrize("family", FAMILIES)
def test_sigkill_mid_write_keeps_file_sound_and_every_ack(
    tmp_path: Path, family: str, rounds: int
) -> None:
    sync, async_ = _sqlite_family(family)
    db = str(tmp_path / "killed.sqlite")
    rng = random.Random(20261130)
    acks, errors = [], []
    for rnd in range(rounds):
        factory = sync if rnd % 2 == 0 else async_
        acks.append(tmp_path / f"ack-{rnd}.log")
        errors.append(tmp_path / f"err-{rnd}.log")
        ready = tmp_path / f"ready-{rnd}"
        cmd = _worker(
            "write",
            f"--factory={factory.id}",
            f"--db={db}",
            f"--worker=k{rnd % 3}",  # later rounds continue earlier rounds' threads
            f"--ack={acks[-1]}",
            f"--errors={errors[-1]}",
            f"--ready={ready}",
            "--seconds=60",
            "--lanes=2",
            f"--durability={('sync', 'async')[rnd % 2]}",
        )
        proc = subprocess.Popen(cmd, cwd=REPO, env=_env(), stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while not (acks[-1].exists() and acks[-1].stat().st_size > 0):
                assert proc.poll() is None, f"round {rnd}: writer exited early"
                assert time.monotonic() < deadline, f"round {rnd}: no acknowledgement in 60 s"
                time.sleep(0.02)
            # Writes are in flight almost all the time; a random delay lands the
            # kill at a random point of a put (commit, WAL append, cache update).
            time.sleep(rng.uniform(0.05, 1.2))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        assert _errors(errors) == [], f"round {rnd}: writer errors before the kill"

    assert _integrity(db) == "ok"
    acknowledged = _read_acks(acks)
    assert sum(len(v) for v in acknowledged.values()) >= rounds
    assert _missing_acks(sync, db, acknowledged) == []
    with sync.open_sync(db) as saver:
        for thread_id, ids in acknowledged.items():
            for checkpoint_id in ids:
                config = {
                    "configurable": {
                        "thread_id": thread_id,
                        "checkpoint_ns": "",
                        "checkpoint_id": checkpoint_id,
                    }
                }
                found = saver.get_tuple(config)
                assert found is not None, (thread_id, checkpoint_id)
                assert found.checkpoint["id"] == checkpoint_id
        # The file takes new writes after the crashes, on a thread that was cut off.
        graph = build_chat_graph(saver)
        thread_id = sorted(acknowledged)[0]
        before = graph.get_state(thread_config(thread_id))
        graph.invoke(turn_input(thread_id, 1000), thread_config(thread_id))
        after = graph.get_state(thread_config(thread_id))
        assert len(after.values["messages"]) >= len(before.values.get("messages", [])) + 1
    assert _integrity(db) == "ok"


# ---------------------------------------------------------------- list-loop re-entrancy


@pytest.fixture(params=factory_params())
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Harness:
    return harness_for(request, request.param, tmp_path)


def _expect_official_failure(request: pytest.FixtureRequest, ours: bool, key: str) -> None:
    """Still run the test on an official saver, reported as XFAIL (or XPASS if lucky)."""
    if not ours:
        request.node.add_marker(pytest.mark.xfail(reason=OFFICIAL_KNOWN_BAD[key], strict=False))


async def _three_turns(harness: Harness, saver: Any, thread_id: str) -> None:
    graph = build_chat_graph(saver)
    for turn in (1, 2, 3):
        await harness.invoke(graph, turn_input(thread_id, turn), thread_config(thread_id))


def _run_with_timeout(fn: Any, seconds: float) -> Any:
    """Run ``fn`` in a daemon thread; fail (not hang) if it deadlocks."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"deadlock: still blocked after {seconds} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


@pytest.mark.timeout(120)
async def test_get_tuple_inside_list_loop_does_not_deadlock(
    request: pytest.FixtureRequest, harness: Harness
) -> None:
    _expect_official_failure(request, harness.factory.ours, "list-loop")
    config = thread_config("loop")
    async with harness.open() as saver:
        await _three_turns(harness, saver, "loop")
        if harness.mode == "sync":

            def walk() -> list[tuple[str, int]]:
                out = []
                for item in saver.list(config):
                    again = saver.get_tuple(item.config)
                    inner = list(saver.list(config, limit=2))
                    out.append((again.checkpoint["id"], len(inner)))
                return out

            seen = _run_with_timeout(walk, 20)
        else:

            async def awalk() -> list[tuple[str, int]]:
                out = []
                async for item in saver.alist(config):
                    again = await saver.aget_tuple(item.config)
                    inner = [t async for t in saver.alist(config, limit=2)]
                    out.append((again.checkpoint["id"], len(inner)))
                return out

            seen = await asyncio.wait_for(awalk(), 20)
    assert len(seen) == 15
    assert all(n == 2 for _, n in seen)


@pytest.mark.timeout(120)
async def test_graph_turn_inside_list_loop_does_not_deadlock(
    request: pytest.FixtureRequest, harness: Harness
) -> None:
    """Writing (a whole graph turn on another thread) while a list() is open."""
    _expect_official_failure(request, harness.factory.ours, "list-loop")
    async with harness.open() as saver:
        await _three_turns(harness, saver, "loop")
        graph = build_chat_graph(saver)
        config = thread_config("loop")
        if harness.mode == "sync":

            def walk() -> int:
                n = 0
                for n, _item in enumerate(saver.list(config, limit=3), start=1):
                    graph.invoke(turn_input("other", n), thread_config("other"))
                return n

            assert _run_with_timeout(walk, 30) == 3
        else:

            async def awalk() -> int:
                n = 0
                async for _item in saver.alist(config, limit=3):
                    n += 1
                    await graph.ainvoke(turn_input("other", n), thread_config("other"))
                return n

            assert await asyncio.wait_for(awalk(), 30) == 3
        other = await harness.get_state(graph, thread_config("other"))
        assert len(other.values["messages"]) == 6


# ---------------------------------------------------------------- deleted threads stay deleted


@contextlib.contextmanager
def _late_write_allowed_to_raise() -> Iterator[None]:
    """A late write may be refused with ThreadDeletedError or dropped silently."""
    with contextlib.suppress(ThreadDeletedError):
        yield


@pytest.mark.timeout(120)
async def test_deleted_thread_is_not_resurrected_by_late_writes(
    request: pytest.FixtureRequest, harness: Harness
) -> None:
    _expect_official_failure(request, harness.factory.ours, "resurrect")
    config = thread_config("gone")
    async with harness.open() as saver:
        await _three_turns(harness, saver, "gone")
        await _three_turns(harness, saver, "kept")
        latest = await harness.get_tuple(saver, config)
        assert latest is not None

        await harness.call(saver, "delete_thread", "gone")
        assert await harness.get_tuple(saver, config) is None

        # A run that started before the delete now saves its next step.
        late = copy_checkpoint(latest.checkpoint)
        late["id"] = str(uuid6(clock_seq=-2))
        with _late_write_allowed_to_raise():
            await harness.call(
                saver, "put", latest.config, late, {"source": "loop", "step": 99, "parents": {}}, {}
            )
        with _late_write_allowed_to_raise():
            await harness.call(
                saver, "put_writes", latest.config, [("messages", ["late"])], "late-task"
            )
        assert await harness.get_tuple(saver, config) is None
        assert await harness.list(saver, config) == []
        late_config = {
            "configurable": {"thread_id": "gone", "checkpoint_ns": "", "checkpoint_id": late["id"]}
        }
        assert await harness.get_tuple(saver, late_config) is None

    async with harness.open() as saver:
        assert await harness.get_tuple(saver, config) is None
        assert await harness.list(saver, config) == []
        assert len(await harness.list(saver, thread_config("kept"))) == 15


@pytest.mark.timeout(120)
async def test_thread_deleted_while_a_graph_run_is_in_flight_stays_deleted(
    request: pytest.FixtureRequest, harness: Harness
) -> None:
    """delete_thread lands while a node is running; the run's later puts are late."""
    _expect_official_failure(request, harness.factory.ours, "resurrect")
    entered, release = threading.Event(), threading.Event()
    config = thread_config("inflight")

    def slow_model(state: dict[str, Any]) -> dict[str, Any]:
        entered.set()
        assert release.wait(30)
        return {"reply_chars": 1}

    from langgraph.graph import END, START, StateGraph

    from benchmarks._session_workload import ChatState

    def graph_on(saver: Any) -> Any:
        builder = StateGraph(ChatState)
        builder.add_node("prepare", lambda s: {"turn": s.get("turn", 0) + 1})
        builder.add_node("slow", slow_model)
        builder.add_edge(START, "prepare")
        builder.add_edge("prepare", "slow")
        builder.add_edge("slow", END)
        return builder.compile(checkpointer=saver)

    async with harness.open() as saver:
        await _three_turns(harness, saver, "inflight")
        graph = graph_on(saver)
        if harness.mode == "sync":
            box: dict[str, Any] = {}

            def run() -> None:
                try:
                    box["result"] = graph.invoke(
                        turn_input("inflight", 4), config, durability="sync"
                    )
                except BaseException as exc:
                    box["error"] = exc

            runner = threading.Thread(target=run)
            runner.start()
            assert await asyncio.to_thread(entered.wait, 30)
            saver.delete_thread("inflight")
            release.set()
            runner.join(30)
            error = box.get("error")
        else:
            task = asyncio.create_task(
                graph.ainvoke(turn_input("inflight", 4), config, durability="sync")
            )
            assert await asyncio.to_thread(entered.wait, 30)
            await saver.adelete_thread("inflight")
            release.set()
            try:
                await asyncio.wait_for(task, 30)
                error = None
            except ThreadDeletedError as exc:
                error = exc
        assert error is None or isinstance(error, ThreadDeletedError), repr(error)
        assert await harness.get_tuple(saver, config) is None

    async with harness.open() as saver:
        assert await harness.get_tuple(saver, config) is None
        assert await harness.list(saver, config) == []


# ---------------------------------------------------------------- Postgres (issue 3)

PG_STRESS_SECONDS = float(os.environ.get("LGM_PG_STRESS_SECONDS", "30"))
PG_ADMIN_DSN = os.environ.get("LGM_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")


def _postgres_family(family: str) -> tuple[SaverFactory, SaverFactory]:
    pool = OURS if family == "ours" else OFFICIAL
    sync = next(f for f in pool if f.backend == "postgres" and f.mode == "sync")
    async_ = next(
        f for f in pool if f.backend == "postgres" and f.mode == "async" and "via" not in f.id
    )
    for factory in (sync, async_):
        reason = factory.missing_reason()
        if reason is not None:
            pytest.skip(reason)
    return sync, async_


@contextlib.contextmanager
def _fresh_databases(count: int) -> Iterator[list[str]]:
    """``count`` brand-new Postgres databases (DSNs), dropped afterwards."""
    import uuid

    import psycopg

    names = [f"lgm_test_{uuid.uuid4().hex[:12]}" for _ in range(count)]
    base, _, _ = PG_ADMIN_DSN.rpartition("/")
    with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as admin:
        for name in names:
            admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield [f"{base}/{name}" for name in names]
    finally:
        with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as admin:
            for name in names:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.timeout(int(PG_STRESS_SECONDS) + 240)
@pytest.mark.parametrize("family", FAMILIES)
def test_postgres_two_processes_sixteen_clients_each(
    pg_dsn: str, tmp_path: Path, family: str
) -> None:
    """2 processes (sync: 16 threads; async: 16 coroutines) on one fresh database, for
    30 s: the soak of ``test_postgres_stress.py``, which runs the same clients in CI."""
    sync, async_ = _postgres_family(family)
    procs, acks, errors = [], [], []
    for i, factory in enumerate([sync, async_]):
        acks.append(tmp_path / f"ack-{i}.log")
        errors.append(tmp_path / f"err-{i}.log")
        cmd = _worker(
            "write",
            f"--factory={factory.id}",
            f"--db={pg_dsn}",
            f"--worker=p{i}",
            f"--ack={acks[-1]}",
            f"--errors={errors[-1]}",
            f"--seconds={PG_STRESS_SECONDS}",
            "--lanes=16",
        )
        procs.append(subprocess.Popen(cmd, cwd=REPO, env=_env(), stderr=subprocess.PIPE))
    stderr = [p.communicate(timeout=PG_STRESS_SECONDS + 180)[1].decode() for p in procs]

    assert _errors(errors) == [], "clients hit errors"
    assert [p.returncode for p in procs] == [0, 0], stderr
    acknowledged = _read_acks(acks)
    total = sum(len(v) for v in acknowledged.values())
    assert total >= 100, f"only {total} checkpoints acknowledged; the run did not exercise much"
    assert len(acknowledged) >= 32, "every one of the 32 clients should have written"
    assert _missing_acks(sync, pg_dsn, acknowledged) == []


def _terminate_other_backends(dsn: str) -> int:
    import psycopg

    dbname = dsn.rpartition("/")[2]
    with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            (dbname,),
        ).fetchall()
    return len(rows)


@pytest.fixture(params=factory_params(backends=("postgres",)))
def pg_harness(request: pytest.FixtureRequest, tmp_path: Path) -> Harness:
    return harness_for(request, request.param, tmp_path)


@pytest.mark.postgres
@pytest.mark.timeout(180)
async def test_postgres_recovers_after_its_connections_are_terminated_mid_run(
    request: pytest.FixtureRequest, pg_harness: Harness
) -> None:
    """pg_terminate_backend while a node runs: the next call succeeds, no ack is lost."""
    harness = pg_harness
    if not harness.factory.ours:
        request.node.add_marker(
            pytest.mark.xfail(reason="official savers do not reconnect", strict=False)
        )
    acked: list[str] = []
    entered, release = threading.Event(), threading.Event()
    block = {"on": False}

    def model(state: dict[str, Any]) -> dict[str, Any]:
        if block["on"]:
            entered.set()
            assert release.wait(30)
        return {"reply_chars": len(state["messages"])}

    from langgraph.graph import END, START, StateGraph

    from benchmarks._session_workload import ChatState

    def graph_on(saver: Any) -> Any:
        builder = StateGraph(ChatState)
        builder.add_node("prepare", lambda s: {"turn": s.get("turn", 0) + 1})
        builder.add_node("model", model)
        builder.add_edge(START, "prepare")
        builder.add_edge("prepare", "model")
        builder.add_edge("model", END)
        return builder.compile(checkpointer=saver)

    config = thread_config("pgkill")
    async with harness.open() as saver:
        put_name = "aput" if harness.mode == "async" else "put"
        original = getattr(saver, put_name)

        if harness.mode == "async":

            async def logged(*args: Any, **kwargs: Any) -> Any:
                out = await original(*args, **kwargs)
                acked.append(out["configurable"]["checkpoint_id"])
                return out
        else:

            def logged(*args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
                out = original(*args, **kwargs)
                acked.append(out["configurable"]["checkpoint_id"])
                return out

        setattr(saver, put_name, logged)
        graph = graph_on(saver)
        for turn in (1, 2, 3):
            await harness.invoke(graph, turn_input("pgkill", turn), config, durability="sync")

        # Mid-run: the node is running, the server drops every connection of the saver.
        block["on"] = True
        in_flight_error: BaseException | None = None

        async def run_turn_4() -> None:
            await harness.invoke(graph, turn_input("pgkill", 4), config, durability="sync")

        if harness.mode == "sync":
            box: dict[str, BaseException] = {}

            def target() -> None:
                try:
                    asyncio.run(run_turn_4())
                except BaseException as exc:
                    box["error"] = exc

            runner = threading.Thread(target=target)
            runner.start()
            assert await asyncio.to_thread(entered.wait, 30)
            killed = _terminate_other_backends(harness.location)
            release.set()
            await asyncio.to_thread(runner.join, 60)
            in_flight_error = box.get("error")
        else:
            task = asyncio.create_task(run_turn_4())
            assert await asyncio.to_thread(entered.wait, 30)
            killed = _terminate_other_backends(harness.location)
            release.set()
            try:
                await asyncio.wait_for(task, 60)
            except Exception as exc:
                in_flight_error = exc
        assert killed >= 1, "the saver had no open connection to terminate"
        block["on"] = False
        # Issue 3 asks that the *next* call succeeds; ours should not even fail the
        # call in flight (a dropped connection before COMMIT is retried).
        assert in_flight_error is None, repr(in_flight_error)
        await harness.invoke(graph, turn_input("pgkill", 5), config, durability="sync")
        _terminate_other_backends(harness.location)
        state = await harness.get_state(graph, config)  # a read right after another kill
        assert state.values["turn"] == 5

    async with harness.open() as saver:
        stored = {
            t.config["configurable"]["checkpoint_id"] for t in await harness.list(saver, config)
        }
        assert set(acked) <= stored
        assert len(acked) >= 5 * 4 - 4


@pytest.mark.postgres
@pytest.mark.timeout(180)
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_postgres_concurrent_setup_on_fresh_databases(
    request: pytest.FixtureRequest, family: str, mode: str
) -> None:
    sync, async_ = _postgres_family(family)
    _expect_official_failure(request, family == "ours", "pg-setup-race")
    factory = sync if mode == "sync" else async_
    trials = 5
    with _fresh_databases(trials) as dsns:
        for dsn in dsns:
            if mode == "sync":
                barrier = threading.Barrier(2)

                def open_and_write(i: int, dsn: str = dsn, barrier: Any = barrier) -> int:
                    barrier.wait()
                    with factory.open_sync(dsn) as saver:
                        graph = build_chat_graph(saver)
                        graph.invoke(turn_input(f"s{i}", 1), thread_config(f"s{i}"))
                        return len(graph.get_state(thread_config(f"s{i}")).values["messages"])

                results: list[Any] = [None, None]

                def run(i: int, results: list[Any] = results, fn: Any = open_and_write) -> None:
                    try:
                        results[i] = fn(i)
                    except BaseException as exc:
                        results[i] = exc

                threads = [threading.Thread(target=run, args=(i,)) for i in (0, 1)]
                for t in threads:
                    t.start()
                for t in threads:
                    await asyncio.to_thread(t.join, 60)
                assert results == [2, 2], results
            else:

                async def aopen_and_write(i: int, dsn: str = dsn) -> int:
                    async with factory.open_async(dsn) as saver:
                        graph = build_chat_graph(saver)
                        await graph.ainvoke(turn_input(f"s{i}", 1), thread_config(f"s{i}"))
                        state = await graph.aget_state(thread_config(f"s{i}"))
                        return len(state.values["messages"])

                assert await asyncio.gather(aopen_and_write(0), aopen_and_write(1)) == [2, 2]
