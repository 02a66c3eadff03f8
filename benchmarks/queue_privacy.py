"""What the memory queue's ``encryption=`` costs, and what Postgres erasure costs.

Run ``python -m benchmarks.queue_privacy`` (``--quick`` for a smoke run, ``--only
sqlite|postgres``). It rewrites its own section of
``benchmarks/RESULTS-encryption.md`` (queue overhead) and of
``benchmarks/RESULTS-privacy.md`` (Postgres erasure), between ``<!-- queue_privacy -->``
markers.

* **Queue overhead.** Per backend, a queue in clear and one with
  ``encryption=EncryptionKeys`` run ``--jobs`` jobs through their whole life:
  ``enqueue`` (6 turns of 200-800 characters), ``claim``, ``save_candidates`` (3),
  ``save_plan`` (3 ops), 3 x ``mark_applied``, ``complete``. Medians of
  ``--repeat`` repetitions (order rotated); ratios are medians of per-repetition ratios.
* **Postgres erasure.** With ``--threads`` threads of 10 turns in a
  ``PostgresSaver`` and ``--jobs`` finished jobs in a ``PostgresMemoryQueue``:
  one ``delete_thread`` then ``vacuum()`` (plain) and ``vacuum(full=True)``, and
  the queue's ``forget_thread`` (which runs ``VACUUM FULL`` of its tables).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import platform
import re
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.encryption import PG_ADMIN_DSN

ENC_RESULTS = Path(__file__).with_name("RESULTS-encryption.md")
PRIV_RESULTS = Path(__file__).with_name("RESULTS-privacy.md")
START, END = "<!-- queue_privacy -->", "<!-- /queue_privacy -->"
_WORDS = ("the", "user", "said", "their", "budget", "is", "about", "five", "thousand", "tea")


def _text(seed: int, size: int) -> str:
    words = [_WORDS[(seed * 7 + i) % len(_WORDS)] for i in range(size // 5)]
    return " ".join(words)[:size]


@contextlib.contextmanager
def _location(backend: str) -> Iterator[str]:
    if backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix="lgm-bench-queue-") as tmp:
            yield str(Path(tmp) / "queue.sqlite")
        return
    import psycopg

    name = f"lgm_bench_q_{uuid.uuid4().hex[:10]}"
    base = PG_ADMIN_DSN.rpartition("/")[0]
    with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _queue(backend: str, location: str, **settings: Any) -> Any:
    from langgraph_memory.pipeline.queue import PostgresMemoryQueue, SqliteMemoryQueue

    cls = SqliteMemoryQueue if backend == "sqlite" else PostgresMemoryQueue
    q = cls(location, debounce_seconds=0, **settings)
    q.setup()
    return q


def _one_job(queue: Any, n: int) -> None:
    from langchain_core.messages import AIMessage, HumanMessage

    from langgraph_memory.types import CandidateMemory, MemoryOp

    turns = [
        (HumanMessage if i % 2 == 0 else AIMessage)(_text(n + i, 200 + 100 * i), id=f"{n}-{i}")
        for i in range(6)
    ]
    job_id = queue.enqueue(f"user-{n % 10}", f"thread-{n}", turns)
    job = queue.claim("bench", job_id=job_id, ignore_debounce=True)
    cands = [CandidateMemory(_text(n + k, 60)) for k in range(3)]
    queue.save_candidates(job, cands)
    ops = [MemoryOp("add", c, (), "stated by the user", f"m-{n}-{k}") for k, c in enumerate(cands)]
    queue.save_plan(job, ops)
    for i, op in enumerate(ops):
        queue.mark_applied(job, i, op)
    queue.complete(job)


def measure_queue(backend: str, jobs: int, repeat: int) -> list[tuple[str, float, float]]:
    """[(variant, ms per job, ratio vs clear)]."""
    from langgraph_memory.encryption import EncryptionKeys

    keys = EncryptionKeys.generate("bench")
    variants = {"clear": {}, "encryption": {"encryption": keys}}
    times: dict[str, list[float]] = {v: [] for v in variants}
    ratios: list[float] = []
    for rep in range(repeat):
        order = list(variants)[rep % 2 :] + list(variants)[: rep % 2]
        this: dict[str, float] = {}
        for name in order:
            with _location(backend) as loc:
                q = _queue(backend, loc, **variants[name])
                try:
                    _one_job(q, -1)  # warm-up: connections, statement cache
                    started = time.perf_counter()
                    for n in range(jobs):
                        _one_job(q, n)
                    this[name] = (time.perf_counter() - started) * 1000 / jobs
                finally:
                    q.close()
        for name, ms in this.items():
            times[name].append(ms)
        ratios.append(this["encryption"] / this["clear"])
    return [
        ("clear", statistics.median(times["clear"]), 1.0),
        ("encryption", statistics.median(times["encryption"]), statistics.median(ratios)),
    ]


def measure_pg_erasure(threads: int, jobs: int) -> dict[str, float]:
    from langgraph.graph import START as G_START
    from langgraph.graph import MessagesState, StateGraph

    from langgraph_memory.session import PostgresSaver

    out: dict[str, float] = {}
    with _location("postgres") as loc, PostgresSaver.from_conn_string(loc) as saver:
        saver.setup()
        builder = StateGraph(MessagesState)
        builder.add_node("reply", lambda s: {"messages": [("ai", _text(len(s["messages"]), 400))]})
        builder.add_edge(G_START, "reply")
        graph = builder.compile(checkpointer=saver)
        for t in range(threads):
            for turn in range(10):
                cfg: Any = {"configurable": {"thread_id": f"t{t}"}}
                state: Any = {"messages": [("user", _text(t + turn, 60))]}
                graph.invoke(state, cfg)
        out["saver_mb"] = saver.storage_stats().database_bytes / 1e6
        saver.delete_thread("t0")
        started = time.perf_counter()
        saver.vacuum()
        out["saver_vacuum_ms"] = (time.perf_counter() - started) * 1000
        saver.delete_thread("t1")
        started = time.perf_counter()
        saver.vacuum(full=True)
        out["saver_vacuum_full_ms"] = (time.perf_counter() - started) * 1000
        q = _queue("postgres", loc)
        try:
            for n in range(jobs):
                _one_job(q, n)
            started = time.perf_counter()
            q.forget_thread("thread-0")
            out["queue_forget_thread_ms"] = (time.perf_counter() - started) * 1000
        finally:
            q.close()
    return out


def _write_section(path: Path, body: str) -> None:
    text = path.read_text() if path.exists() else ""
    section = f"{START}\n{body.rstrip()}\n{END}\n"
    if START in text:
        text = re.sub(
            re.escape(START) + r".*?" + re.escape(END) + r"\n?", section, text, flags=re.S
        )
    else:
        text = text.rstrip() + "\n\n" + section
    path.write_text(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=200)
    parser.add_argument("--only", choices=("sqlite", "postgres"))
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.jobs, args.repeat, args.threads = 20, 1, 10
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = (
        f"`python -m benchmarks.queue_privacy` on {when}, {platform.machine()}, "
        f"Python {platform.python_version()}"
    )
    backends = [args.only] if args.only else ["sqlite", "postgres"]
    rows = []
    for backend in backends:
        for variant, ms, ratio in measure_queue(backend, args.jobs, args.repeat):
            rows.append(f"| {backend} | {variant} | {ms:.2f} | {ratio:.2f}x |")
            print(rows[-1], flush=True)
    _write_section(
        ENC_RESULTS,
        "## The memory queue\n\n"
        f"{head}; {args.jobs} jobs x {args.repeat} repetitions, each job's whole life "
        "(enqueue 6 turns of 200-700 characters, claim, 3 candidates, a 3-op plan, 3 "
        "mark_applied, complete). Medians.\n\n"
        "| backend | queue | ms / job | vs clear |\n| --- | --- | ---: | ---: |\n"
        + "\n".join(rows),
    )
    if "postgres" in backends:
        pg = measure_pg_erasure(args.threads, args.jobs)
        print(pg, flush=True)
        _write_section(
            PRIV_RESULTS,
            "## Erasure cost on Postgres (VACUUM FULL)\n\n"
            f"{head}; a PostgresSaver with {args.threads} threads x 10 turns "
            f"({pg['saver_mb']:.1f} MB) and a queue of {args.jobs} finished jobs.\n\n"
            "| step | ms |\n| --- | ---: |\n"
            f"| delete_thread, then saver.vacuum() (plain) | {pg['saver_vacuum_ms']:.0f} |\n"
            f"| delete_thread, then saver.vacuum(full=True) | {pg['saver_vacuum_full_ms']:.0f} |\n"
            f"| queue.forget_thread (VACUUM FULL of its tables) | "
            f"{pg['queue_forget_thread_ms']:.0f} |\n",
        )


if __name__ == "__main__":
    main()
