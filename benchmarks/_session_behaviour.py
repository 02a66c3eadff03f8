"""Behaviour checks run next to the benchmark, on ours and the official savers alike.

Measured live in each run (not copied from elsewhere), so the results file can
show where the official savers fail what issue 2 asks for:

* ``get_tuple`` inside a ``list`` loop: finishes, or deadlocks (given 10 s);
* a late ``put`` after ``delete_thread``: the thread stays deleted, or comes back;
* processes starting together on a fresh SQLite file: trials with an error
  (``database is locked`` from ``setup()`` in the official async saver).

The full, asserting versions of these checks are the tests in
``tests/integration/test_session_stress.py``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import copy_checkpoint
from langgraph.checkpoint.base.id import uuid6

from benchmarks._session_savers import SaverSpec, fresh_location
from benchmarks._session_workload import build_chat_graph, thread_config, turn_input

REPO = Path(__file__).resolve().parents[1]
DEADLOCK_AFTER_S = 10.0


def _in_daemon_thread(fn: Any, timeout: float) -> tuple[str, Any]:
    """("ok", value) | ("timeout", None) | ("error", exc); never hangs the caller."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        return "timeout", None
    if "error" in box:
        return "error", box["error"]
    return "ok", box.get("value")


def _with_saver(spec: SaverSpec, body_sync: Any, body_async: Any) -> Any:
    """Run a check body against a freshly opened saver in its own mode."""
    with fresh_location(spec.backend) as location:
        if spec.mode == "sync":
            with spec.open_sync(location) as saver:
                return body_sync(saver)

        async def go() -> Any:
            async with spec.open_async(location) as saver:
                return await body_async(saver)

        return asyncio.run(go())


def list_loop_check(spec: SaverSpec) -> str:
    config = thread_config("loop")

    def body_sync(saver: Any) -> Any:
        graph = build_chat_graph(saver)
        for turn in (1, 2, 3):
            graph.invoke(turn_input("loop", turn), config)

        def walk() -> int:
            return sum(1 for item in saver.list(config) if saver.get_tuple(item.config))

        status, value = _in_daemon_thread(walk, DEADLOCK_AFTER_S)
        return status, value

    async def body_async(saver: Any) -> Any:
        graph = build_chat_graph(saver)
        for turn in (1, 2, 3):
            await graph.ainvoke(turn_input("loop", turn), config)

        async def walk() -> int:
            n = 0
            async for item in saver.alist(config):
                if await saver.aget_tuple(item.config):
                    n += 1
            return n

        try:
            return "ok", await asyncio.wait_for(walk(), DEADLOCK_AFTER_S)
        except TimeoutError:
            return "timeout", None

    # The whole check runs in a daemon thread too: a sync deadlock leaves the
    # saver's lock held, and closing that saver would block forever.
    status, value = _in_daemon_thread(
        lambda: _with_saver(spec, body_sync, body_async), DEADLOCK_AFTER_S + 60
    )
    if status == "ok":
        status, value = value
    if status == "ok":
        return f"ok ({value} tuples)"
    if status == "timeout":
        return f"**deadlock** (blocked > {DEADLOCK_AFTER_S:.0f} s)"
    return f"error: {type(value).__name__}: {value}"


def late_put_check(spec: SaverSpec) -> str:
    config = thread_config("gone")

    def late_checkpoint(latest: Any) -> Any:
        late = copy_checkpoint(latest.checkpoint)
        late["id"] = str(uuid6(clock_seq=-2))
        return late

    def body_sync(saver: Any) -> str:
        graph = build_chat_graph(saver)
        for turn in (1, 2):
            graph.invoke(turn_input("gone", turn), config)
        latest = saver.get_tuple(config)
        saver.delete_thread("gone")
        refused = ""
        try:
            saver.put(latest.config, late_checkpoint(latest), {"source": "loop", "step": 9}, {})
        except Exception as exc:
            refused = type(exc).__name__
        return _verdict(saver.get_tuple(config) is not None, refused)

    async def body_async(saver: Any) -> str:
        graph = build_chat_graph(saver)
        for turn in (1, 2):
            await graph.ainvoke(turn_input("gone", turn), config)
        latest = await saver.aget_tuple(config)
        await saver.adelete_thread("gone")
        refused = ""
        try:
            await saver.aput(
                latest.config, late_checkpoint(latest), {"source": "loop", "step": 9}, {}
            )
        except Exception as exc:
            refused = type(exc).__name__
        return _verdict(await saver.aget_tuple(config) is not None, refused)

    try:
        return str(_with_saver(spec, body_sync, body_async))
    except Exception as exc:
        return f"error: {type(exc).__name__}: {exc}"


def _verdict(resurrected: bool, refused: str) -> str:
    if resurrected:
        return "**resurrected**"
    return f"stays deleted ({refused} raised)" if refused else "stays deleted (late put dropped)"


def setup_race_check(factory_id: str, racers: int = 2, trials: int = 20) -> str:
    """``racers`` processes open + setup + 1 turn on a fresh file at the same instant."""
    with tempfile.TemporaryDirectory(prefix="lgm-race-") as tmp:
        barrier = Path(tmp) / "barrier"
        barrier.mkdir()
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        procs = []
        for i in range(racers):
            cmd = [
                sys.executable,
                "-m",
                "tests.integration._session_stress_worker",
                "race",
                f"--factory={factory_id}",
                f"--db={Path(tmp) / 'race.sqlite'}",
                f"--worker=r{i}",
                f"--errors={Path(tmp) / f'err-{i}.log'}",
                f"--barrier={barrier}",
                f"--parties={racers}",
                f"--trials={trials}",
                "--turns=1",
            ]
            procs.append(subprocess.Popen(cmd, cwd=REPO, env=env, stderr=subprocess.DEVNULL))
        for proc in procs:
            proc.wait(timeout=600)
        failed_trials: set[str] = set()
        locked = 0
        for i in range(racers):
            path = Path(tmp) / f"err-{i}.log"
            if not path.exists():
                continue
            for line in path.read_text().splitlines():
                failed_trials.add(line.split(":", 1)[0].split(" ")[-1])
                locked += "database is locked" in line
    text = f"{len(failed_trials)}/{trials} trials failed"
    if locked:
        text += f" ({locked} x 'database is locked')"
    return ("**" + text + "**") if failed_trials else text


def postgres_setup_race_check(spec: SaverSpec, trials: int = 5) -> str:
    """Two savers open + ``setup()`` + 1 turn on a fresh database at the same instant."""
    failed = 0
    errors: list[str] = []
    for _ in range(trials):
        with fresh_location("postgres") as dsn:
            barrier = threading.Barrier(2)

            def racer(i: int, dsn: str = dsn, barrier: threading.Barrier = barrier) -> None:
                thread_id = f"race-{i}"
                barrier.wait()
                if spec.mode == "sync":
                    with spec.open_sync(dsn) as saver:
                        build_chat_graph(saver).invoke(
                            turn_input(thread_id, 1), thread_config(thread_id)
                        )
                    return

                async def go() -> None:
                    async with spec.open_async(dsn) as saver:
                        await build_chat_graph(saver).ainvoke(
                            turn_input(thread_id, 1), thread_config(thread_id)
                        )

                asyncio.run(go())

            outcomes = [_in_daemon_thread_start(racer, i) for i in (0, 1)]
            results = [join(60) for join in outcomes]
            bad = [r for r in results if r[0] != "ok"]
            if bad:
                failed += 1
                errors += [f"{type(r[1]).__name__}" for r in bad if r[0] == "error"]
    text = f"{failed}/{trials} trials failed"
    if errors:
        text += f" ({', '.join(sorted(set(errors)))})"
    return ("**" + text + "**") if failed else text


def _in_daemon_thread_start(fn: Any, *args: Any) -> Any:
    """Start ``fn(*args)`` now; return a ``join(timeout)`` giving ("ok"|"timeout"|"error", x)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()

    def join(timeout: float) -> tuple[str, Any]:
        thread.join(timeout)
        if thread.is_alive():
            return "timeout", None
        if "error" in box:
            return "error", box["error"]
        return "ok", box.get("value")

    return join
