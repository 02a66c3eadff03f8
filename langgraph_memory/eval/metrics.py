"""The exam's metrics: every probe graded, then rates per kind and overall.

Definitions (a probe's *recalled set* is the memory lines of the recall block
the model received; "matches" is the gist matcher of ``grading``):

* **hit**: every fact in the probe's ``needs`` is matched by some recalled line.
  Hit rate = hits / graded probes with needs; probes whose needs are
  ``unsure`` (a partial match only) are left out of the denominator and
  counted under *unsure (hit)*.
* **false recall**: the recalled set matches a *forbidden* fact: one in the
  probe's ``forbid``, one of ``forbid_other_users``, any bait fact of the user
  (joke, hypothetical, assistant error), or any of the user's facts that had
  ended (superseded, expired, forgotten) by the probe's time. A match inside a
  line that also matches a fact true at that time is *unsure (false)*, not
  counted. Rate = probes with false recall / probes graded for it.
* **stale recall**: the subset of false recall where the matched forbidden fact
  is one of the user's facts that had ended by the probe's time; split by why it
  ended (``superseded``, ``expired``, ``forgotten``). *Expired recall* is the
  ``expired`` part.
* **isolation leak**: a recalled memory stored for another user (by the stored
  record's ``user_id``, from the ids the recall node reports, or else by exact
  text when only other users hold that text), or a counted match of a
  ``forbid_other_users`` fact. Reported as probes with a leak and as the number
  of foreign records served.
* **privacy leak**: a raw ``identifiers`` string found in any byte of any file
  of the run (``privacy_scan``), per user; also reported without the session
  saver's checkpoint tables, which keep the conversation verbatim by design.
* **empty block**: a probe with needs whose block holds no memory line.
* **tokens injected**: the recall message's token count
  (``count_tokens_approximately``, what the recall node budgets with); median.
* **recall latency**: the recall node's own wall time per probe; p50 / p95.
* **LLM calls per turn**: chat-model calls by the memory system (not the
  replayed agent) over the whole run / turns run (replayed user turns + probes).

Example:
    >>> summarise([]).probes
    0
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from langgraph_memory.eval.grading import LineGrade, grade_lines
from langgraph_memory.eval.privacy_scan import leaks_outside_checkpoints
from langgraph_memory.eval.runner import ProbeObservation, SystemRun
from langgraph_memory.eval.schema import Exam, ExamUser, Fact, Probe

__all__ = [
    "ProbeOutcome",
    "RunMetrics",
    "Summary",
    "forbidden_facts",
    "grade_observation",
    "grade_run",
    "needs_coverage",
    "percentile",
    "summarise",
]


@dataclass(frozen=True, slots=True)
class ProbeOutcome:
    """One probe's verdicts."""

    observation: ProbeObservation
    grade: LineGrade
    has_needs: bool
    stale: Mapping[str, str]  # forbidden fact id -> why it ended
    foreign_records: int
    other_user_hits: tuple[str, ...]

    @property
    def kind(self) -> str:
        return self.observation.kind

    @property
    def isolation_leak(self) -> bool:
        return self.foreign_records > 0 or bool(self.other_user_hits)

    @property
    def empty_block(self) -> bool:
        return self.has_needs and not self.observation.lines


def forbidden_facts(
    exam: Exam, user: ExamUser, probe: Probe
) -> tuple[dict[str, Fact], dict[str, Fact]]:
    """The facts ``probe`` must not recall: (own fact id -> fact, "<user>:<fact>" -> other user's fact).

    Own: the probe's ``forbid``, every bait fact and every fact ended by the probe's
    time (never one the probe needs). Others: ``forbid_other_users`` of loaded users.
    """
    own: dict[str, Fact] = {fact_id: user.fact(fact_id) for fact_id in probe.forbid}
    for fact in user.facts:
        if fact.bait or fact.end_reason(probe.at) is not None:
            own[fact.id] = fact
    for fact_id in probe.needs:
        own.pop(fact_id, None)
    others: dict[str, Fact] = {}
    for other, fact_id in probe.forbid_other_users:
        try:
            others[f"{other}:{fact_id}"] = exam.user(other).fact(fact_id)
        except KeyError:  # the other user is not in this (partial) run
            continue
    return own, others


def _foreign(observation: ProbeObservation, run: SystemRun) -> int:
    me = observation.user_id
    if observation.memory_ids is not None:
        return sum(1 for i in observation.memory_ids if run.owners.get(i, me) != me)
    count = 0
    for line in observation.lines:
        holders = run.texts.get(" ".join(line.split()))
        if holders and me not in holders:
            count += 1
    return count


def grade_observation(exam: Exam, run: SystemRun, observation: ProbeObservation) -> ProbeOutcome:
    """Grade one probe's recalled set (see the module docstring for the definitions)."""
    user = exam.user(observation.user_id)
    probe = next(p for p in user.probes if p.id == observation.probe_id)
    own, others = forbidden_facts(exam, user, probe)
    grade = grade_lines(
        observation.lines,
        needs={fact_id: user.fact(fact_id).gist for fact_id in probe.needs},
        forbidden={ref: fact.gist for ref, fact in {**own, **others}.items()},
        current={f.id: f.gist for f in user.facts if f.is_current(probe.at)},
    )
    stale = {
        ref: reason
        for ref in grade.forbidden_hits
        if ref in own and (reason := own[ref].end_reason(probe.at)) is not None
    }
    return ProbeOutcome(
        observation=observation,
        grade=grade,
        has_needs=bool(probe.needs),
        stale=stale,
        foreign_records=_foreign(observation, run),
        other_user_hits=tuple(r for r in grade.forbidden_hits if r in others),
    )


def percentile(values: Sequence[float], share: float) -> float:
    """The ``share`` quantile by the nearest-rank method (0.0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-share * len(ordered) // 1))))
    return ordered[rank - 1]


def _rate(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


@dataclass(frozen=True, slots=True)
class Summary:
    """Rates over a set of probes (one kind, or all). ``None``: nothing to divide by."""

    probes: int = 0
    with_needs: int = 0
    hits: int = 0
    misses: int = 0
    hit_unsure: int = 0
    false_recalls: int = 0
    false_unsure: int = 0
    stale: Mapping[str, int] = field(default_factory=dict)
    isolation_leaks: int = 0
    foreign_records: int = 0
    empty_blocks: int = 0
    tokens: tuple[int, ...] = ()
    latencies_ms: tuple[float, ...] = ()

    @property
    def hit_rate(self) -> float | None:
        return _rate(self.hits, self.hits + self.misses)

    @property
    def false_recall_rate(self) -> float | None:
        return _rate(self.false_recalls, self.probes - self.false_unsure)

    @property
    def stale_probes(self) -> int:
        return int(self.stale.get("probes", 0))

    @property
    def stale_rate(self) -> float | None:
        return _rate(self.stale_probes, self.probes - self.false_unsure)

    @property
    def empty_block_rate(self) -> float | None:
        return _rate(self.empty_blocks, self.with_needs)

    @property
    def median_tokens(self) -> float:
        return float(statistics.median(self.tokens)) if self.tokens else 0.0

    @property
    def latency_p50(self) -> float:
        return percentile(self.latencies_ms, 0.50)

    @property
    def latency_p95(self) -> float:
        return percentile(self.latencies_ms, 0.95)


def summarise(outcomes: Iterable[ProbeOutcome]) -> Summary:
    """Aggregate graded probes into one ``Summary``."""
    items = list(outcomes)
    stale: dict[str, int] = {"probes": 0, "superseded": 0, "expired": 0, "forgotten": 0}
    for o in items:
        if o.stale:
            stale["probes"] += 1
            for reason in set(o.stale.values()):
                stale[reason] = stale.get(reason, 0) + 1
    return Summary(
        probes=len(items),
        with_needs=sum(o.has_needs for o in items),
        hits=sum(o.grade.hit is True for o in items),
        misses=sum(o.grade.hit is False for o in items),
        hit_unsure=sum(o.grade.hit_unsure for o in items),
        false_recalls=sum(o.grade.false_recall for o in items),
        false_unsure=sum(o.grade.false_unsure for o in items),
        stale=stale,
        isolation_leaks=sum(o.isolation_leak for o in items),
        foreign_records=sum(o.foreign_records for o in items),
        empty_blocks=sum(o.empty_block for o in items),
        tokens=tuple(o.observation.tokens for o in items),
        latencies_ms=tuple(o.observation.latency_ms for o in items),
    )


@dataclass(frozen=True, slots=True)
class RunMetrics:
    """One configuration's graded run: overall, per kind, per user, privacy and cost."""

    run: SystemRun
    outcomes: tuple[ProbeOutcome, ...]
    overall: Summary
    per_kind: Mapping[str, Summary]
    users_without_memories: tuple[str, ...]
    privacy_users: int
    privacy_leaks: Mapping[str, Mapping[str, tuple[str, ...]]]
    privacy_leaks_outside_checkpoints: Mapping[str, Mapping[str, tuple[str, ...]]]

    @property
    def llm_calls_per_turn(self) -> float:
        return self.run.llm_calls / self.run.turns if self.run.turns else 0.0


def grade_run(exam: Exam, run: SystemRun) -> RunMetrics:
    """Grade every probe of ``run`` and aggregate."""
    outcomes = tuple(grade_observation(exam, run, o) for o in run.observations)
    kinds = sorted({o.kind for o in outcomes})
    leaks = {user: found for user, found in run.privacy.items() if found}
    outside = {
        user: rest for user, found in leaks.items() if (rest := leaks_outside_checkpoints(found))
    }
    return RunMetrics(
        run=run,
        outcomes=outcomes,
        overall=summarise(outcomes),
        per_kind={kind: summarise(o for o in outcomes if o.kind == kind) for kind in kinds},
        users_without_memories=tuple(u for u, n in sorted(run.memories_per_user.items()) if n == 0),
        privacy_users=len(run.privacy),
        privacy_leaks=leaks,
        privacy_leaks_outside_checkpoints=outside,
    )


def needs_coverage(outcomes: Sequence[ProbeOutcome]) -> float | None:
    """Share of all needed facts (over all probes) that reached the prompt (matched)."""
    total = matched = 0
    for o in outcomes:
        for verdict in o.grade.needs.values():
            total += 1
            matched += verdict == "matched"
    return _rate(matched, total)
