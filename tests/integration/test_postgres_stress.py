"""Several app instances on one Postgres: 2 processes x 16 concurrent clients.

One process drives ``PostgresSaver`` from 16 OS threads, the other
``AsyncPostgresSaver`` from 16 coroutines; both start on a fresh database at
the same moment (so their ``setup()`` calls race too). Each client runs chat
turns on its own thread id through the compiled 3-node graph. Every checkpoint
``put`` acknowledged (returned) is recorded by the worker and checked afterwards
with a new saver; a second test does the same while every backend of the
database is terminated every ~0.4 s, as a server restart or a proxy dropping
connections would.

Run as ``python -m tests.integration.test_postgres_stress <dsn> <sync|async> <clients>
<turns> <out.json>`` this module is the worker process.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.integration._postgres import terminate_other_backends

# In CI (~3 s each): the 30 s soak of the same shape is test_session_stress.py's, behind `slow`.
pytestmark = [pytest.mark.postgres, pytest.mark.timeout(300)]

CLIENTS = 16
TURNS = 6
REPO_ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- worker process


def _recording(cls: Any, acked: list[tuple[str, str, str]], lock: threading.Lock) -> Any:
    """``cls`` whose put/aput remembers every checkpoint it acknowledged."""

    class Recording(cls):  # type: ignore[misc, valid-type]
        def put(self, *args: Any, **kwargs: Any) -> Any:
            saved = super().put(*args, **kwargs)
            self._remember(saved)
            return saved

        async def aput(self, *args: Any, **kwargs: Any) -> Any:
            saved = await super().aput(*args, **kwargs)
            self._remember(saved)
            return saved

        def _remember(self, saved: Any) -> None:
            c = saved["configurable"]
            with lock:
                acked.append((c["thread_id"], c["checkpoint_ns"], c["checkpoint_id"]))

    return Recording


def _worker(dsn: str, mode: str, clients: int, turns: int, out_path: str) -> None:
    from benchmarks._session_workload import build_chat_graph, thread_config, turn_input
    from langgraph_memory.session import AsyncPostgresSaver, PostgresSaver

    acked: list[tuple[str, str, str]] = []
    errors: list[str] = []
    lock = threading.Lock()
    prefix = f"{mode}-{os.getpid()}"

    def record_error(exc: BaseException) -> None:
        with lock:
            errors.append("".join(traceback.format_exception(exc))[-2000:])

    if mode == "sync":
        cls = _recording(PostgresSaver, acked, lock)
        with cls.from_conn_string(dsn, pool_size=8) as saver:
            graph = build_chat_graph(saver)

            def client(i: int) -> None:
                tid = f"{prefix}-{i}"
                for turn in range(1, turns + 1):
                    try:
                        graph.invoke(turn_input(tid, turn), thread_config(tid))
                    except Exception as exc:
                        record_error(exc)

            threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    else:

        async def main() -> None:
            cls = _recording(AsyncPostgresSaver, acked, lock)
            async with cls.from_conn_string(dsn, pool_size=8) as saver:
                graph = build_chat_graph(saver)

                async def client(i: int) -> None:
                    tid = f"{prefix}-{i}"
                    for turn in range(1, turns + 1):
                        try:
                            await graph.ainvoke(turn_input(tid, turn), thread_config(tid))
                        except Exception as exc:
                            record_error(exc)

                await asyncio.gather(*(client(i) for i in range(clients)))

        asyncio.run(main())
    Path(out_path).write_text(
        json.dumps({"prefix": prefix, "acked": acked, "errors": errors}), encoding="utf-8"
    )


# ---------------------------------------------------------------- parent


def _run_instances(dsn: str, tmp_path: Path, *, kill_every: float | None) -> list[dict[str, Any]]:
    outs = [tmp_path / f"{mode}.json" for mode in ("sync", "async")]
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.integration.test_postgres_stress",
                dsn,
                mode,
                str(CLIENTS),
                str(TURNS),
                str(out),
            ],
            cwd=REPO_ROOT,
            env=env,
        )
        for mode, out in zip(("sync", "async"), outs, strict=True)
    ]
    kills = 0
    deadline = time.monotonic() + 240
    while any(p.poll() is None for p in procs):
        if time.monotonic() > deadline:
            for p in procs:
                p.kill()
            pytest.fail("stress workers did not finish within 240 s")
        if kill_every is not None:
            time.sleep(kill_every)
            if any(p.poll() is None for p in procs):
                kills += terminate_other_backends(dsn)
        else:
            time.sleep(0.1)
    assert [p.returncode for p in procs] == [0, 0]
    if kill_every is not None:
        assert kills > 0, "no backend was terminated; the run was too short to test recovery"
    return [json.loads(out.read_text(encoding="utf-8")) for out in outs]


def _check_everything_acknowledged_is_stored(dsn: str, results: list[dict[str, Any]]) -> None:
    from benchmarks._session_workload import build_chat_graph, reply_text, thread_config
    from langgraph_memory.session import PostgresSaver

    for result in results:
        assert result["errors"] == [], result["errors"][:3]
        assert len(result["acked"]) >= CLIENTS * TURNS * 4
    with psycopg.connect(dsn) as conn:
        stored = {
            tuple(r)
            for r in conn.execute(
                "SELECT thread_id, checkpoint_ns, checkpoint_id FROM lgm_checkpoints"
            ).fetchall()
        }
    acked = {tuple(a) for result in results for a in result["acked"]}
    assert acked - stored == set(), f"{len(acked - stored)} acknowledged checkpoints are missing"
    with PostgresSaver.from_conn_string(dsn, pool_size=2) as saver:
        graph = build_chat_graph(saver)
        for result in results:
            for i in range(CLIENTS):
                tid = f"{result['prefix']}-{i}"
                messages = graph.get_state(thread_config(tid)).values["messages"]
                assert len(messages) == 2 * TURNS
                assert messages[-1].content == reply_text(tid, TURNS)


def test_two_instances_sixteen_clients_each(pg_dsn: str, tmp_path: Path) -> None:
    results = _run_instances(pg_dsn, tmp_path, kill_every=None)
    _check_everything_acknowledged_is_stored(pg_dsn, results)


def test_two_instances_survive_terminated_backends(pg_dsn: str, tmp_path: Path) -> None:
    results = _run_instances(pg_dsn, tmp_path, kill_every=0.4)
    _check_everything_acknowledged_is_stored(pg_dsn, results)


if __name__ == "__main__":
    _worker(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
