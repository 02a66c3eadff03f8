"""The planted-fact exam on the shipped data: ``python -m benchmarks.exam`` (``make bench-exam``).

Runs every user of ``langgraph_memory/eval/data/users`` through the configurations
``offline`` (the README wiring: ``RuleBasedExtractor`` + ``HashingEmbeddings``),
``offline-e5``, ``offline-minilm`` (skipped with the reason when the ``minilm`` extra is missing) and
``seeded`` (the true facts written straight into the store), and writes
``benchmarks/RESULTS-exam.md`` with ``benchmarks/exam-*.png``. ``--users N`` runs a
sample; ``--out DIR`` writes somewhere else.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from langgraph_memory.eval.exam import run_exam, select_users
from langgraph_memory.eval.report import write_report
from langgraph_memory.eval.runner import progress_total
from langgraph_memory.eval.schema import DEFAULT_DATA_DIR, load_exam
from langgraph_memory.eval.systems import standard_systems

HERE = Path(__file__).parent


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.exam")
    parser.add_argument("--data", default=str(DEFAULT_DATA_DIR))
    parser.add_argument("--users", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(HERE))
    args = parser.parse_args(argv)
    if not any(Path(args.data).glob("*.json")):
        print(f"no exam data in {args.data}; the exam's users land there", file=sys.stderr)
        return 2
    exam = select_users(load_exam(args.data), args.users, args.seed)
    systems = standard_systems(["offline", "offline-e5", "offline-minilm", "seeded"])
    from tqdm import tqdm

    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    total = progress_total(exam, systems)
    with (
        tempfile.TemporaryDirectory(prefix="lgm-exam-") as work,
        tqdm(total=total, unit="turn", desc="exam") as bar,
    ):
        results = run_exam(exam, systems, work, seed=args.seed, progress=bar.update)
    command = "python -m benchmarks.exam" + (f" --users {args.users}" if args.users else "")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    preamble = [
        f"Command: `{command}` (seed {args.seed}); run {started} on commit {_commit()}, "
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores, "
        f"load average {load:.1f} at the end.",
        "Offline: the agent replays the data's assistant turns, and no LLM is called. Job "
        "and memory ids derive from the history (`new_job_id`), so a rerun on the same code "
        "gives the same lines and rates. Latencies are wall times on a shared machine.",
    ]
    path = write_report(
        exam,
        results,
        args.out,
        report_name="RESULTS-exam.md",
        prefix="exam-",
        json_name=None,
        preamble=preamble,
    )
    for m in results.metrics:
        s = m.overall
        print(
            f"{m.run.system}: hit {s.hit_rate}, false {s.false_recall_rate}, stale {s.stale_rate}, "
            f"isolation {s.isolation_leaks}, empty {s.empty_block_rate}, p95 {s.latency_p95:.1f} ms"
        )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
