"""A writer process for the session stress tests (run by ``test_session_stress.py``).

``python -m tests.integration._session_stress_worker write|race ...``

``write``: drive the 3-node chat graph on one SQLite file for ``--seconds`` (or
until killed) from ``--lanes`` concurrent lanes (OS threads sharing one sync
saver, or coroutines sharing one async saver). Every checkpoint whose ``put``
returned is appended to ``--ack`` as ``thread_id checkpoint_ns checkpoint_id``
and flushed at once, so a SIGKILL loses at most acknowledgements, never claims
one that was not made. Any exception is appended to ``--errors``.

``race``: for each of ``--trials`` fresh files, wait at a file barrier until every
racer is ready, then open the saver, ``setup()`` and run a few turns at the same
moment as the others (the "many processes start on a fresh file" race).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from benchmarks._session_workload import build_chat_graph, thread_config, turn_input
from tests.integration._savers import REGISTRY, SaverFactory

# Threads get a bounded number of turns so the final check can list each one cheaply.
TURNS_PER_THREAD = 25


class AckLog:
    """Append-only log, one line per acknowledged checkpoint, flushed per line."""

    def __init__(self, path: Path) -> None:
        self._file = path.open("a", buffering=1)
        self._lock = threading.Lock()

    def write(self, line: str) -> None:
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()


def _factory(factory_id: str) -> SaverFactory:
    for factory in REGISTRY:
        if factory.id == factory_id:
            return factory
    # Official savers are always reachable here (they are the documented baseline).
    from tests.integration._savers import OFFICIAL

    for factory in OFFICIAL:
        if factory.id == factory_id:
            return factory
    raise SystemExit(f"unknown saver factory {factory_id!r}")


def _ack_puts(saver: Any, acks: AckLog, is_async: bool) -> None:
    """Log each checkpoint id once its put has returned."""

    def record(config: Any) -> None:
        c = config["configurable"]
        acks.write(f"{c['thread_id']} {c.get('checkpoint_ns', '')!s} {c['checkpoint_id']}")

    if is_async:
        original_aput = saver.aput

        async def aput(*args: Any, **kwargs: Any) -> Any:
            config = await original_aput(*args, **kwargs)
            record(config)
            return config

        saver.aput = aput
    else:
        original_put = saver.put

        def put(*args: Any, **kwargs: Any) -> Any:
            config = original_put(*args, **kwargs)
            record(config)
            return config

        saver.put = put


def _announce_ready(args: argparse.Namespace) -> None:
    if args.ready:
        Path(args.ready).touch()


def _errors_log(path: Path) -> AckLog:
    return AckLog(path)


def _report(errors: AckLog, where: str) -> None:
    text = traceback.format_exc().replace("\n", " | ")
    errors.write(f"{where}: {text}")


def _lane_threads(worker: str, lane: int) -> Any:
    """Thread ids for one lane: a new thread every TURNS_PER_THREAD turns."""
    n = 0
    while True:
        yield f"{worker}-l{lane}-{n}"
        n += 1


def _write_sync(args: argparse.Namespace, factory: SaverFactory) -> int:
    acks, errors = AckLog(Path(args.ack)), _errors_log(Path(args.errors))
    deadline = time.monotonic() + args.seconds
    failures = 0
    with factory.open_sync(args.db) as saver:
        _ack_puts(saver, acks, is_async=False)
        graph = build_chat_graph(saver)
        _announce_ready(args)

        def lane(index: int) -> None:
            nonlocal failures
            for thread_id in _lane_threads(args.worker, index):
                for turn in range(1, TURNS_PER_THREAD + 1):
                    if time.monotonic() > deadline:
                        return
                    try:
                        graph.invoke(
                            turn_input(thread_id, turn),
                            thread_config(thread_id),
                            durability=args.durability,
                        )
                    except Exception:
                        failures += 1
                        _report(errors, f"{args.worker} lane {index} {thread_id} turn {turn}")
                        return

        lanes = [threading.Thread(target=lane, args=(i,)) for i in range(args.lanes)]
        for t in lanes:
            t.start()
        for t in lanes:
            t.join()
    return 1 if failures else 0


async def _write_async(args: argparse.Namespace, factory: SaverFactory) -> int:
    acks, errors = AckLog(Path(args.ack)), _errors_log(Path(args.errors))
    deadline = time.monotonic() + args.seconds
    failures = 0
    async with factory.open_async(args.db) as saver:
        _ack_puts(saver, acks, is_async=True)
        graph = build_chat_graph(saver)
        _announce_ready(args)

        async def lane(index: int) -> None:
            nonlocal failures
            for thread_id in _lane_threads(args.worker, index):
                for turn in range(1, TURNS_PER_THREAD + 1):
                    if time.monotonic() > deadline:
                        return
                    try:
                        await graph.ainvoke(
                            turn_input(thread_id, turn),
                            thread_config(thread_id),
                            durability=args.durability,
                        )
                    except Exception:
                        failures += 1
                        _report(errors, f"{args.worker} lane {index} {thread_id} turn {turn}")
                        return

        await asyncio.gather(*(lane(i) for i in range(args.lanes)))
    return 1 if failures else 0


def _barrier(directory: Path, trial: int, me: str, parties: int) -> None:
    """Return at the same instant (within ~1 ms) in every racer.

    Each racer announces itself with a file; once all are there, every racer
    sleeps until 0.25 s after the newest announcement and busy-waits the last
    stretch, so none is favoured by when it happened to notice the others.
    """
    (directory / f"ready-{trial}-{me}").touch()
    while True:
        marks = list(directory.glob(f"ready-{trial}-*"))
        if len(marks) >= parties:
            break
        time.sleep(0.002)
    go = max(m.stat().st_mtime for m in marks) + 0.25
    while (left := go - time.time()) > 0.005:
        time.sleep(left - 0.004)
    while time.time() < go:
        pass


def _race(args: argparse.Namespace, factory: SaverFactory) -> int:
    errors = _errors_log(Path(args.errors))
    barrier_dir = Path(args.barrier)
    failures = 0
    for trial in range(args.trials):
        db = str(Path(args.db).with_name(f"race-{trial}.sqlite"))
        _barrier(barrier_dir, trial, args.worker, args.parties)
        try:
            if factory.mode == "sync":
                with factory.open_sync(db) as saver:
                    graph = build_chat_graph(saver)
                    for turn in range(1, args.turns + 1):
                        graph.invoke(turn_input(args.worker, turn), thread_config(args.worker))
            else:

                async def go(db: str = db, turns: int = args.turns) -> None:
                    async with factory.open_async(db) as saver:
                        graph = build_chat_graph(saver)
                        for turn in range(1, turns + 1):
                            await graph.ainvoke(
                                turn_input(args.worker, turn), thread_config(args.worker)
                            )

                asyncio.run(go())
        except Exception:
            failures += 1
            _report(errors, f"{args.worker} trial {trial}")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="_session_stress_worker")
    parser.add_argument("command", choices=("write", "race"))
    parser.add_argument("--factory", required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--worker", required=True)
    parser.add_argument("--errors", required=True)
    parser.add_argument("--ack", default=os.devnull)
    parser.add_argument("--ready", default="", help="file to create once the saver is open")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--lanes", type=int, default=2)
    parser.add_argument("--durability", default="async", choices=("sync", "async", "exit"))
    parser.add_argument("--barrier", default="")
    parser.add_argument("--parties", type=int, default=1)
    parser.add_argument("--trials", type=int, default=1)
    parser.add_argument("--turns", type=int, default=2, help="race: turns per racer per trial")
    args = parser.parse_args(argv)
    factory = _factory(args.factory)
    if args.command == "race":
        return _race(args, factory)
    if factory.mode == "sync":
        return _write_sync(args, factory)
    return asyncio.run(_write_async(args, factory))


if __name__ == "__main__":
    sys.exit(main())
