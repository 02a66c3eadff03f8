"""``python -m langgraph_memory.eval``: run the planted-fact exam and write its report.

Examples::

    python -m langgraph_memory.eval --out exam-report             # offline, minilm, seeded
    python -m langgraph_memory.eval --users 4 --seed 7            # a small run
    python -m langgraph_memory.eval --model openai:gpt-4o-mini    # adds the "model" column
    python -m langgraph_memory.eval --data my/users --configs offline,seeded
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langgraph_memory.errors import LangGraphMemoryError
from langgraph_memory.eval.exam import run_exam, select_users
from langgraph_memory.eval.report import write_report
from langgraph_memory.eval.runner import progress_total
from langgraph_memory.eval.schema import DEFAULT_DATA_DIR, load_exam
from langgraph_memory.eval.systems import load_chat_model, standard_systems


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m langgraph_memory.eval",
        description="Plant facts through past conversations, probe them in new sessions, report.",
    )
    parser.add_argument(
        "--data", default=str(DEFAULT_DATA_DIR), help="folder of <user_id>.json files"
    )
    parser.add_argument(
        "--out", default="exam-report", help="where report.md, PNGs and results.json go"
    )
    parser.add_argument(
        "--configs",
        default=None,
        help="comma-separated: offline, offline-e5, offline-minilm, seeded, model "
        "(default: offline,offline-e5,offline-minilm,seeded, plus model with --model)",
    )
    parser.add_argument(
        "--model", default=None, help="chat model: 'provider:model' or 'module:factory'"
    )
    parser.add_argument("--judge-model", default=None, help="LLM judge model (default: --model)")
    parser.add_argument(
        "--seed", type=int, default=0, help="seeds the probe order and --users sampling"
    )
    parser.add_argument(
        "--users", type=int, default=None, help="run only N users (plus look-alikes)"
    )
    parser.add_argument("--work-dir", default=None, help="keep each configuration's files here")
    parser.add_argument("--locomo", default=None, help="also score a locomo10.json-shaped file")
    parser.add_argument("--longmemeval", default=None, help="also score a LongMemEval JSON file")
    parser.add_argument(
        "--skip-exam", action="store_true", help="only the --locomo/--longmemeval files"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        exam = select_users(load_exam(args.data), args.users, args.seed)
        model = load_chat_model(args.model) if args.model else None
        judge_spec = args.judge_model or args.model
        judge = load_chat_model(judge_spec) if judge_spec else None
        names = (
            args.configs.split(",")
            if args.configs
            else ["offline", "offline-e5", "offline-minilm", "seeded"]
        )
        if model is not None and "model" not in names:
            names.append("model")
        # Probes are answered by the system's model (else the judge's), for answer grading.
        systems = standard_systems(
            [n.strip() for n in names if n.strip()], model=model, answer_model=model or judge
        )
    except LangGraphMemoryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    work = Path(args.work_dir) if args.work_dir else Path(tempfile.mkdtemp(prefix="lgm-exam-"))
    try:
        if args.locomo or args.longmemeval:
            _public_benchmarks(args, work, model, judge)
        if args.skip_exam:
            return 0
        from tqdm import tqdm

        with tqdm(
            total=progress_total(exam, systems), unit="turn", disable=args.no_progress, desc="exam"
        ) as bar:
            results = run_exam(
                exam,
                systems,
                work,
                seed=args.seed,
                judge=judge,
                judge_name=judge_spec or "",
                progress=bar.update,
            )
    finally:
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)
    path = write_report(exam, results, args.out)
    for m in results.metrics:
        s = m.overall
        print(
            f"{m.run.system:>15}: hit {_pct(s.hit_rate)}  false {_pct(s.false_recall_rate)}  "
            f"stale {_pct(s.stale_rate)}  isolation leaks {s.isolation_leaks}  "
            f"empty {_pct(s.empty_block_rate)}  recall p95 {s.latency_p95:.1f} ms"
        )
    for name, reason in results.skipped.items():
        print(f"{name:>15}: skipped ({reason})")
    print(f"report: {path}")
    return 0


def _public_benchmarks(args: argparse.Namespace, work: Path, model: Any, judge: Any) -> None:
    from tqdm import tqdm

    from langgraph_memory.eval.loaders import (
        evaluate_retrieval,
        load_locomo,
        load_longmemeval,
        render_benchmark_markdown,
    )

    parts = ["# Public benchmarks on our store (retrieval of verbatim turns)", ""]
    for name, path, loader in (
        ("LoCoMo", args.locomo, load_locomo),
        ("LongMemEval", args.longmemeval, load_longmemeval),
    ):
        if not path:
            continue
        conversations = loader(path)
        total = sum(len(c.questions) for c in conversations)
        with tqdm(total=total, unit="question", disable=args.no_progress, desc=name) as bar:
            result = evaluate_retrieval(
                conversations,
                work / name,
                name=f"{name} ({path})",
                answer_model=model,
                judge=judge,
                progress=bar.update,
            )
        parts.append(render_benchmark_markdown(result))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "benchmarks.md").write_text("\n".join(parts), encoding="utf-8")
    print(f"public benchmarks: {out / 'benchmarks.md'}")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


if __name__ == "__main__":
    raise SystemExit(main())
