"""What erasing single deletes costs: Postgres ``erase_pending`` batching, and recall blocks.

Run ``python -m benchmarks.erase_pending`` (``--quick`` for a smoke run). It rewrites
its section of ``benchmarks/RESULTS-privacy.md`` between ``<!-- erase_pending -->``
markers.

* **Postgres, one VACUUM FULL per delete or per pass.** A ``PostgresSaver`` with
  ``--threads`` threads of 10 turns. ``--deletes`` single ``delete_thread`` calls,
  either each followed by ``erase_pending()`` ("erase now") or all followed by one
  ``erase_pending()`` (what the writer's sweep does once per interval). Rounds
  alternate the two orders; medians. ``erase_pending()`` with nothing marked is
  timed too (the sweep pays it every interval). The time of a pass is the time the
  marked tables are locked.
* **Recall blocks.** A user with ``--user-threads`` threads of 5 turns, each
  turn's recall block quoting the memory: ``delete_memory`` with and without
  ``checkpointer=saver`` (SQLite, and Postgres without the pass), interleaved.
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import re
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks.queue_privacy import _location, _text

RESULTS = Path(__file__).with_name("RESULTS-privacy.md")
START, END = "<!-- erase_pending -->", "<!-- /erase_pending -->"


def _reply_graph(saver: Any) -> Any:
    from langgraph.graph import START as G_START
    from langgraph.graph import MessagesState, StateGraph

    builder: Any = StateGraph(MessagesState)
    builder.add_node("reply", lambda s: {"messages": [("ai", _text(len(s["messages"]), 400))]})
    builder.add_edge(G_START, "reply")
    return builder.compile(checkpointer=saver)


def measure_batching(threads: int, deletes: int, rounds: int) -> dict[str, Any]:
    from langgraph_memory.session import PostgresSaver

    now_ms: list[float] = []  # per delete: delete_thread + erase_pending
    batch_ms: list[float] = []  # per delete: delete_thread, plus one pass / deletes
    pass_ms: list[float] = []
    idle_ms: list[float] = []
    with _location("postgres") as loc, PostgresSaver.from_conn_string(loc) as saver:
        saver.setup()
        graph = _reply_graph(saver)
        for t in range(threads):
            for turn in range(10):
                graph.invoke(
                    {"messages": [("user", _text(t + turn, 60))]},
                    {"configurable": {"thread_id": f"t{t}"}},
                )
        saver.vacuum(full=True)
        mb = saver.storage_stats().database_bytes / 1e6
        victims = iter(f"t{t}" for t in range(threads))
        for r in range(rounds):
            for mode in ("now", "batch") if r % 2 == 0 else ("batch", "now"):
                started = time.perf_counter()
                for _ in range(deletes):
                    saver.delete_thread(next(victims))
                    if mode == "now":
                        saver.erase_pending()
                deleted = time.perf_counter()
                if mode == "batch":
                    saver.erase_pending()
                    pass_ms.append((time.perf_counter() - deleted) * 1000)
                total = (time.perf_counter() - started) * 1000 / deletes
                (now_ms if mode == "now" else batch_ms).append(total)
            started = time.perf_counter()
            assert saver.erase_pending() == 0
            idle_ms.append((time.perf_counter() - started) * 1000)
    return {
        "saver_mb": mb,
        "now_ms": statistics.median(now_ms),
        "batch_ms": statistics.median(batch_ms),
        "pass_ms": statistics.median(pass_ms),
        "idle_ms": statistics.median(idle_ms),
    }


def measure_recall_blocks(user_threads: int, rounds: int) -> dict[str, dict[str, float]]:
    from langgraph.graph import END as G_END
    from langgraph.graph import START as G_START
    from langgraph.graph import MessagesState, StateGraph

    from langgraph_memory.embeddings import HashingEmbeddings
    from langgraph_memory.longterm import ChromaMemoryStore
    from langgraph_memory.nodes.recall import create_recall_node
    from langgraph_memory.session import PostgresSaver, SqliteSaver
    from langgraph_memory.types import MemoryRecord

    out: dict[str, dict[str, float]] = {}
    for backend in ("sqlite", "postgres"):
        with (
            tempfile.TemporaryDirectory(prefix="lgm-bench-erase-") as tmp,
            _location(backend) as loc,
        ):
            cls = SqliteSaver if backend == "sqlite" else PostgresSaver
            with cls.from_conn_string(loc) as saver:
                saver.setup()
                store = ChromaMemoryStore.embedded(
                    Path(tmp) / "store", embeddings=HashingEmbeddings()
                )
                builder = StateGraph(MessagesState)
                builder.add_node(
                    "recall", create_recall_node(store=store, update_access_stats=False)
                )
                builder.add_node("reply", lambda s: {"messages": [("ai", "noted")]})
                builder.add_edge(G_START, "recall")
                builder.add_edge("recall", "reply")
                builder.add_edge("reply", G_END)
                graph: Any = builder.compile(checkpointer=saver)
                samples: dict[str, list[float]] = {"with": [], "without": []}
                for r in range(rounds):
                    for mode in ("with", "without") if r % 2 == 0 else ("without", "with"):
                        user = f"u{uuid.uuid4().hex[:8]}"
                        store.put_memory(MemoryRecord("User drinks green tea", user_id=user))
                        gone = store.put_memory(
                            MemoryRecord(f"User's pond fish is {user}", user_id=user)
                        )
                        for t in range(user_threads):
                            for turn in range(5):
                                graph.invoke(
                                    {"messages": [("user", f"my pond fish and tea {turn}")]},
                                    {"configurable": {"thread_id": f"{user}-{t}", "user_id": user}},
                                )
                        options = {"checkpointer": saver} if mode == "with" else {}
                        started = time.perf_counter()
                        store.delete_memory(user, gone.id, **options)
                        samples[mode].append((time.perf_counter() - started) * 1000)
                store.close()
                out[backend] = {k: statistics.median(v) for k, v in samples.items()}
    return out


def _write_section(path: Path, body: str) -> None:
    text = path.read_text() if path.exists() else ""
    section = f"{START}\n{body.rstrip()}\n{END}\n"
    if START in text:
        pattern = re.escape(START) + r".*?" + re.escape(END) + r"\n?"
        text = re.sub(pattern, lambda _: section, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + section
    path.write_text(text)


def render(batching: dict[str, Any], blocks: dict[str, dict[str, float]], args: Any) -> str:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    b = batching
    lines = [
        "## Erasing single deletes: Postgres passes, recall blocks",
        "",
        f"`python -m benchmarks.erase_pending` on {stamp}, {platform.machine()}, Python "
        f"{platform.python_version()}; shared 2-core machine, medians of {args.rounds} rounds "
        "(orders alternated).",
        "",
        f"Postgres, a saver of {args.threads} threads x 10 turns ({b['saver_mb']:.1f} MB), "
        f"{args.deletes} single `delete_thread` calls per round:",
        "",
        "| per delete | ms |",
        "| --- | ---: |",
        f"| `delete_thread` then `erase_pending()` each time (erase now) | {b['now_ms']:.0f} |",
        f"| `delete_thread`, one `erase_pending()` for all {args.deletes} (the sweep) "
        f"| {b['batch_ms']:.0f} |",
        "",
        f"One pass over the marked tables took {b['pass_ms']:.0f} ms (the tables are locked "
        f"that long); with nothing marked, `erase_pending()` took {b['idle_ms']:.1f} ms and "
        f"locks nothing. Ratio erase-now / batched: {b['now_ms'] / b['batch_ms']:.1f}x.",
        "",
        f"Recall blocks: `delete_memory` of a memory that {args.user_threads} threads x 5 "
        "turns recalled (each turn's block quotes it):",
        "",
        "| backend | with `checkpointer=saver` | without | ratio |",
        "| --- | ---: | ---: | ---: |",
    ]
    for backend, row in blocks.items():
        lines.append(
            f"| {backend} | {row['with']:.0f} ms | {row['without']:.0f} ms | "
            f"{row['with'] / row['without']:.1f}x |"
        )
    lines += [
        "",
        "On Postgres the rewritten rows' old versions then wait for the next pass "
        "(not included above).",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=300)
    parser.add_argument("--deletes", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--user-threads", type=int, default=10)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.threads, args.deletes, args.rounds, args.user_threads = 30, 3, 2, 2
    batching = measure_batching(args.threads, args.deletes, args.rounds)
    blocks = measure_recall_blocks(args.user_threads, args.rounds)
    body = render(batching, blocks, args)
    print(body)
    if not args.quick:
        _write_section(RESULTS, body)


if __name__ == "__main__":
    main()
