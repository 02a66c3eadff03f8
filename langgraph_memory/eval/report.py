"""The exam's report: a markdown file, PNG plots and a JSON dump of every probe.

``write_report(exam, results, out)`` writes ``out/report.md`` (tables per
configuration and per kind, the metric definitions, the matcher's rules, the
failures), ``out/kinds.png`` (hit / false / stale per kind),
``out/tokens.png`` and ``out/latency.png`` (distributions) and
``out/results.json``. Plots need matplotlib (the ``eval`` extra); without it
the markdown says so and the rest is written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph_memory.eval.metrics import RunMetrics, Summary, needs_coverage
from langgraph_memory.eval.schema import PROBE_KINDS, Exam

__all__ = ["ExamResults", "JudgeSummary", "render_markdown", "write_report"]


@dataclass(frozen=True, slots=True)
class JudgeSummary:
    """The LLM judge's agreement with itself on one configuration (``None`` rates: not graded)."""

    model: str
    prompt_version: str
    graded: int
    hits: int
    false_recalls: int
    answers_graded: int
    answers_correct: int
    failures: int
    matcher_agreement: float | None


@dataclass(frozen=True, slots=True)
class ExamResults:
    """Every configuration's graded run, the skipped ones with their reason, and the run's settings."""

    metrics: Sequence[RunMetrics]
    skipped: Mapping[str, str] = field(default_factory=dict)
    seed: int = 0
    judges: Mapping[str, JudgeSummary] = field(default_factory=dict)
    notes: Sequence[str] = ()


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _frac(numerator: int, denominator: int) -> str:
    return f"{numerator}/{denominator}" if denominator else "-"


def _overview_rows(result: RunMetrics) -> list[tuple[str, str]]:
    s = result.overall
    graded = s.hits + s.misses
    return [
        ("hit rate", f"{_pct(s.hit_rate)} ({_frac(s.hits, graded)})"),
        ("needed facts that reached the prompt", _pct(needs_coverage(result.outcomes))),
        ("unsure (hit)", str(s.hit_unsure)),
        (
            "false-recall rate",
            f"{_pct(s.false_recall_rate)} ({_frac(s.false_recalls, s.probes - s.false_unsure)})",
        ),
        ("unsure (false)", str(s.false_unsure)),
        (
            "stale-recall rate",
            f"{_pct(s.stale_rate)} (superseded {s.stale.get('superseded', 0)}, "
            f"expired {s.stale.get('expired', 0)}, forgotten {s.stale.get('forgotten', 0)})",
        ),
        (
            "isolation leaks (probes / foreign records)",
            f"{s.isolation_leaks} / {s.foreign_records}",
        ),
        (
            "privacy leaks, any byte of any file (users)",
            _frac(len(result.privacy_leaks), result.privacy_users),
        ),
        (
            "privacy leaks outside the session checkpoints (users)",
            _frac(len(result.privacy_leaks_outside_checkpoints), result.privacy_users),
        ),
        (
            "users with no memories at the end",
            _frac(len(result.users_without_memories), len(result.run.memories_per_user)),
        ),
        (
            "empty memory block (probes with needs)",
            f"{_pct(s.empty_block_rate)} ({_frac(s.empty_blocks, s.with_needs)})",
        ),
        ("median tokens injected", f"{s.median_tokens:.0f}"),
        ("recall latency p50 / p95", f"{s.latency_p50:.1f} / {s.latency_p95:.1f} ms"),
        (
            "LLM calls per turn",
            f"{result.llm_calls_per_turn:.2f} ({result.run.llm_calls} calls, {result.run.turns} turns)",
        ),
        (
            "writer jobs unfinished / failed at the end",
            f"{result.run.writer_jobs_unfinished} / {result.run.writer_jobs_failed}",
        ),
        ("run time", f"{result.run.seconds:.1f} s"),
    ]


def _kind_row(kind: str, s: Summary) -> str:
    return (
        f"| {kind} | {s.probes} | {_pct(s.hit_rate)} | {s.hit_unsure} | {_pct(s.false_recall_rate)} | "
        f"{s.false_unsure} | {_pct(s.stale_rate)} | {s.isolation_leaks} | {_pct(s.empty_block_rate)} |"
    )


DEFINITIONS = """\
- **hit**: every fact in the probe's `needs` is matched by some recalled memory line. Hit rate =
  hits / (hits + misses); probes whose needs match only partially are *unsure (hit)* and left out.
- **false recall**: the recalled set matches a forbidden fact: the probe's `forbid`, its
  `forbid_other_users`, any bait fact of the user (joke, hypothetical, assistant error) or any
  of the user's facts that had ended (superseded, expired, forgotten) by the probe's time. A match
  inside a line that also matches a fact true at that time is *unsure (false)*, not counted.
  Rate = probes with false recall / (probes - unsure (false)).
- **stale recall**: false recall by a fact that had ended by the probe's time, split by why it
  ended; *expired* is expired recall.
- **isolation leak**: a recalled memory stored for another user (by the stored record's
  `user_id` when the recall block reports memory ids, else by exact text held only by other
  users), or a match of a `forbid_other_users` fact.
- **privacy leak**: a raw `identifiers` string (UTF-8, UTF-16-LE or UTF-16-BE) in any byte of any
  file under the run's directory, per user; also shown without the session saver's checkpoint
  tables, which keep the conversation verbatim by design (retention and `forget_user` remove it).
- **empty memory block**: a probe with needs whose recall block holds no memory line.
- **tokens injected**: the recall message's `count_tokens_approximately` (what recall budgets
  with), median over probes. **Recall latency**: the recall node's own wall time per probe.
- **LLM calls per turn**: chat-model calls of the memory system (not the replayed agent) /
  (replayed user turns + probes).
"""

MATCHER = """\
The gist matcher normalises both sides with NFKC, casefold and whitespace removal. A fact matches
a memory line when all terms of one of its gist alternatives occur in that one line; terms spread
over two lines do not count. It cannot read meaning, so it says *unsure* instead of guessing when
a needed fact matches only partially (at least half of an alternative's terms, not all), or when a
forbidden fact's terms sit in a line that also matches a fact true at probe time (negation, "no
longer", a correction that quotes the old value). Paraphrases that share no gist term are missed
(the data's gists list terms in every language the user code-switches in, to limit this).
"""


def _failures(result: RunMetrics, limit: int = 60) -> list[str]:
    lines = []
    for o in result.outcomes:
        problems = []
        missing = [k for k, v in o.grade.needs.items() if v != "matched"]
        if missing:
            problems.append("missing " + ", ".join(f"{k} ({o.grade.needs[k]})" for k in missing))
        if o.grade.forbidden_hits:
            problems.append("forbidden " + ", ".join(o.grade.forbidden_hits))
        if o.grade.forbidden_unsure:
            problems.append("unsure forbidden " + ", ".join(o.grade.forbidden_unsure))
        if o.foreign_records:
            problems.append(f"{o.foreign_records} foreign records")
        if problems:
            obs = o.observation
            lines.append(f"- `{obs.user_id}/{obs.probe_id}` ({obs.kind}): {'; '.join(problems)}")
    if len(lines) > limit:
        lines = [*lines[:limit], f"- ... and {len(lines) - limit} more (results.json has all)"]
    return lines


def render_markdown(
    exam: Exam, results: ExamResults, plots: Sequence[str] = (), preamble: Sequence[str] = ()
) -> str:
    """The report's markdown text (``plots``: PNG file names to embed; ``preamble``:
    paragraphs put under the title)."""
    users = len(exam.users)
    sessions = sum(len(u.sessions) for u in exam.users)
    out = ["# The planted-fact exam", ""]
    for paragraph in preamble:
        out += [paragraph, ""]
    out += [
        f"{users} users, {sessions} past sessions, {exam.probe_count} probes; seed {results.seed}.",
        "",
    ]
    if results.metrics:
        names = [m.run.system for m in results.metrics]
        out += [
            "## Configurations side by side",
            "",
            "| measure | " + " | ".join(names) + " |",
            "|---|" + "---|" * len(names),
        ]
        table = [dict(_overview_rows(m)) for m in results.metrics]
        for label in table[0]:
            out.append(f"| {label} | " + " | ".join(t[label] for t in table) + " |")
        out.append("")
    for name, reason in results.skipped.items():
        out.append(f"- `{name}` skipped: {reason}")
    if results.skipped:
        out.append("")
    for note in results.notes:
        out.append(f"- {note}")
    if results.notes:
        out.append("")
    for result in results.metrics:
        out += [
            f"## `{result.run.system}` per kind",
            "",
            "| kind | probes | hit rate | unsure (hit) | false recall | unsure (false) | stale | isolation leaks | empty block |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        out += [
            _kind_row(kind, result.per_kind[kind])
            for kind in PROBE_KINDS
            if kind in result.per_kind
        ]
        out += [_kind_row("**all**", result.overall), ""]
        if result.users_without_memories:
            empty = ", ".join(result.users_without_memories)
            out += [f"Users with no memories at the end: {empty}.", ""]
        for user, found in result.privacy_leaks_outside_checkpoints.items():
            # Locations only: the report itself must not repeat the raw identifiers.
            places = sorted({loc for locations in found.values() for loc in locations})
            out += [
                f"Privacy leak outside the checkpoints: `{user}`, {len(found)} identifier(s) in "
                + ", ".join(f"`{p}`" for p in places),
                "",
            ]
    if results.judges:
        out += [
            "## LLM judge",
            "",
            "| configuration | judge | prompt | graded | hit | false recall | answers correct | malformed twice | agrees with matcher |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for name, j in results.judges.items():
            out.append(
                f"| {name} | {j.model} | {j.prompt_version} | {j.graded} | {_frac(j.hits, j.graded)} | "
                f"{_frac(j.false_recalls, j.graded)} | {_frac(j.answers_correct, j.answers_graded)} | "
                f"{j.failures} | {_pct(j.matcher_agreement)} |"
            )
        out.append("")
    if plots:
        out += ["## Plots", ""] + [f"![{p}]({p})" for p in plots] + [""]
    out += ["## Definitions", "", DEFINITIONS, "## The gist matcher", "", MATCHER]
    if exam.warnings:
        out += ["## Data warnings", ""] + [f"- {w}" for w in exam.warnings] + [""]
    for result in results.metrics:
        failures = _failures(result)
        out += [f"## `{result.run.system}` failures", ""] + (failures or ["(none)"]) + [""]
    return "\n".join(out).rstrip() + "\n"


def _plots(results: ExamResults, out: Path, prefix: str) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = list(results.metrics)
    if not metrics:
        return []
    kinds = [k for k in PROBE_KINDS if any(k in m.per_kind for m in metrics)]
    width = 0.8 / len(metrics)
    fig, axes = plt.subplots(3, 1, figsize=(10, 9), sharex=True)
    panels: list[tuple[str, Callable[[Summary], float | None]]] = [
        ("hit rate", lambda s: s.hit_rate),
        ("false-recall rate", lambda s: s.false_recall_rate),
        ("stale-recall rate", lambda s: s.stale_rate),
    ]
    for axis, (title, getter) in zip(axes, panels, strict=True):
        for index, m in enumerate(metrics):
            values = [getter(m.per_kind[k]) if k in m.per_kind else None for k in kinds]
            xs = [i + index * width for i in range(len(kinds))]
            axis.bar(xs, [100 * (v or 0.0) for v in values], width, label=m.run.system)
        axis.set_ylabel(f"{title} (%)")
        axis.set_ylim(0, 100)
    axes[0].legend(loc="upper right")
    axes[-1].set_xticks(
        [i + width * (len(metrics) - 1) / 2 for i in range(len(kinds))], kinds, rotation=20
    )
    fig.suptitle("Hit / false / stale recall per probe kind")
    fig.tight_layout()
    fig.savefig(out / f"{prefix}kinds.png", dpi=110)
    plt.close(fig)
    names = [f"{prefix}kinds.png"]
    for file, title, getter, unit in (
        ("tokens.png", "Tokens injected per probe", lambda m: m.overall.tokens, "tokens"),
        ("latency.png", "Recall node latency per probe", lambda m: m.overall.latencies_ms, "ms"),
    ):
        fig, axis = plt.subplots(figsize=(8, 4))
        axis.boxplot(
            [list(getter(m)) or [0] for m in metrics], tick_labels=[m.run.system for m in metrics]
        )
        axis.set_ylabel(unit)
        axis.set_title(title)
        fig.tight_layout()
        fig.savefig(out / f"{prefix}{file}", dpi=110)
        plt.close(fig)
        names.append(f"{prefix}{file}")
    return names


def _json(results: ExamResults) -> dict[str, Any]:
    return {
        "seed": results.seed,
        "skipped": dict(results.skipped),
        "configurations": {
            m.run.system: {
                "hit_rate": m.overall.hit_rate,
                "false_recall_rate": m.overall.false_recall_rate,
                "stale_rate": m.overall.stale_rate,
                "stale": dict(m.overall.stale),
                "isolation_leaks": m.overall.isolation_leaks,
                "privacy_leaks": {u: dict(v) for u, v in m.privacy_leaks.items()},
                "empty_block_rate": m.overall.empty_block_rate,
                "median_tokens": m.overall.median_tokens,
                "recall_ms_p50": m.overall.latency_p50,
                "recall_ms_p95": m.overall.latency_p95,
                "llm_calls_per_turn": m.llm_calls_per_turn,
                # A write that failed is a memory never stored: scripts must see it, not only
                # the report's table.
                "writer_jobs_failed": m.run.writer_jobs_failed,
                "writer_jobs_unfinished": m.run.writer_jobs_unfinished,
                "probes": [
                    {
                        "user": o.observation.user_id,
                        "probe": o.observation.probe_id,
                        "kind": o.kind,
                        "lines": list(o.observation.lines),
                        "needs": dict(o.grade.needs),
                        "hit": o.grade.hit,
                        "forbidden_hits": list(o.grade.forbidden_hits),
                        "forbidden_unsure": list(o.grade.forbidden_unsure),
                        "stale": dict(o.stale),
                        "foreign_records": o.foreign_records,
                        "tokens": o.observation.tokens,
                        "recall_ms": o.observation.latency_ms,
                    }
                    for o in m.outcomes
                ],
            }
            for m in results.metrics
        },
    }


def write_report(
    exam: Exam,
    results: ExamResults,
    out: str | Path,
    *,
    report_name: str = "report.md",
    prefix: str = "",
    json_name: str | None = "results.json",
    preamble: Sequence[str] = (),
) -> Path:
    """Write the markdown report, the PNG plots (``<prefix>kinds.png``, ``<prefix>tokens.png``,
    ``<prefix>latency.png``) and the JSON dump into ``out``; returns the report's path."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    notes = list(results.notes)
    try:
        plots = _plots(results, folder, prefix)
    except ImportError:
        plots = []
        notes.append(
            "plots skipped: matplotlib is not installed (pip install 'langgraph-memory[eval]')"
        )
    final = ExamResults(results.metrics, results.skipped, results.seed, results.judges, notes)
    path = folder / report_name
    path.write_text(render_markdown(exam, final, plots, preamble), encoding="utf-8")
    if json_name:
        dump = json.dumps(_json(final), ensure_ascii=False, indent=2)
        (folder / json_name).write_text(dump, encoding="utf-8")
    return path
