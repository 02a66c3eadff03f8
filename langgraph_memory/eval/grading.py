"""Grading a probe's recalled set: the offline gist matcher and the optional LLM judge.

**The gist matcher.** A text is normalised with NFKC (full-width to half-width,
compatibility forms), ``casefold`` and the removal of all whitespace, so
"Seafood  ALLERGY", "seafoodallergy" and "ｓｅａｆｏｏｄ allergy" compare equal. A
fact's ``gist`` is a list of alternatives, each a list of terms; the fact
*matches* a memory line when every term of one alternative occurs in that one
line (substring match after normalisation). Terms spread over two lines do not
count: two half-memories are not the memory.

What it cannot judge, and marks ``unsure`` instead of guessing:

* a needed fact of which some line holds at least half of one alternative's
  terms but not all (a partial, perhaps paraphrased, perhaps wrong memory);
* a forbidden fact (stale value, bait, another user's fact) whose terms occur in
  a line that also matches a fact that is true now: "no longer allergic to
  peanuts, now allergic to shellfish", "the user is NOT vegan" - substring
  matching cannot read negation or "no longer".

Unsure probes are reported on their own and are counted neither as hit nor
miss, neither as false recall nor clean.

**The LLM judge** (only with a configured chat model) reads the probe, the
needed and forbidden facts, the recalled lines and optionally an answer, with
the pinned prompt of ``prompts/eval.py``, and must answer JSON; the answer is
validated and asked for once more when malformed.

Example:
    >>> gist_matches((("海鲜", "过敏"), ("seafood", "allerg")), "User is ALLERGIC to sea food")
    True
    >>> grade_lines(["User is allergic to seafood"], needs={"allergy": (("seafood", "allerg"),)},
    ...             forbidden={}, current={}).hit
    True
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from langgraph_memory.errors import ModelOutputError
from langgraph_memory.prompts.eval import (
    JUDGE_RETRY,
    JUDGE_SYSTEM,
    JudgeRequest,
    render_judge_request,
)

__all__ = [
    "FactMatch",
    "Gist",
    "JudgeRequest",
    "JudgeVerdict",
    "LineGrade",
    "gist_matches",
    "grade_lines",
    "judge_probe",
    "match_fact",
    "normalize",
    "parse_judge_output",
]

Gist = tuple[tuple[str, ...], ...]
FactMatch = Literal["matched", "partial", "missing"]
_SPACE = re.compile(r"\s+")


def normalize(text: str) -> str:
    """NFKC, casefold, no whitespace: the form both a gist term and a memory line are compared in."""
    return _SPACE.sub("", unicodedata.normalize("NFKC", text).casefold())


def _alternative_hits(alternative: Sequence[str], line: str) -> int:
    return sum(1 for term in alternative if normalize(term) in line)


def gist_matches(gist: Gist, text: str) -> bool:
    """Every term of one alternative of ``gist`` occurs in ``text`` (normalised)."""
    line = normalize(text)
    return any(_alternative_hits(alt, line) == len(alt) for alt in gist)


def match_fact(gist: Gist, lines: Sequence[str]) -> tuple[FactMatch, tuple[int, ...]]:
    """How ``gist`` matches ``lines``: the verdict and the indices of the matching lines.

    ``matched``: some line holds every term of one alternative. ``partial``: no
    full match, but some line holds at least half (rounded up) of the terms of an
    alternative that has two or more. ``missing``: neither.
    """
    normalised = [normalize(line) for line in lines]
    full = tuple(
        i
        for i, line in enumerate(normalised)
        if any(_alternative_hits(a, line) == len(a) for a in gist)
    )
    if full:
        return "matched", full
    partial = tuple(
        i
        for i, line in enumerate(normalised)
        if any(len(a) >= 2 and _alternative_hits(a, line) >= (len(a) + 1) // 2 for a in gist)
    )
    return ("partial", partial) if partial else ("missing", ())


@dataclass(frozen=True, slots=True)
class LineGrade:
    """The matcher's verdict on one probe's recalled lines.

    ``needs``: per needed fact id, matched / partial / missing. ``forbidden_hits``:
    forbidden fact refs found in a line that matches no current fact (counted);
    ``forbidden_unsure``: found only in lines that also match a current fact.
    """

    needs: Mapping[str, FactMatch] = field(default_factory=dict)
    forbidden_hits: tuple[str, ...] = ()
    forbidden_unsure: tuple[str, ...] = ()

    @property
    def hit(self) -> bool | None:
        """``True`` every need matched, ``False`` one is missing, ``None`` unsure (or no needs)."""
        if not self.needs:
            return None
        values = set(self.needs.values())
        if "missing" in values:
            return False
        return None if "partial" in values else True

    @property
    def hit_unsure(self) -> bool:
        return bool(self.needs) and self.hit is None

    @property
    def false_recall(self) -> bool:
        return bool(self.forbidden_hits)

    @property
    def false_unsure(self) -> bool:
        return not self.forbidden_hits and bool(self.forbidden_unsure)


def grade_lines(
    lines: Sequence[str],
    *,
    needs: Mapping[str, Gist],
    forbidden: Mapping[str, Gist],
    current: Mapping[str, Gist],
) -> LineGrade:
    """Grade recalled ``lines`` against the probe's needs and forbidden facts.

    Args:
        lines: The recalled memory texts, one per memory.
        needs: Needed fact id -> gist.
        forbidden: Forbidden fact ref (stale, bait, other users') -> gist.
        current: Facts true at probe time (the probe user's) -> gist; a forbidden
            match inside a line that also matches one of these is ``unsure``.
    """
    verdicts = {fact_id: match_fact(gist, lines)[0] for fact_id, gist in needs.items()}
    hits: list[str] = []
    unsure: list[str] = []
    for ref, gist in forbidden.items():
        verdict, where = match_fact(gist, lines)
        if verdict != "matched":
            continue
        explained = [
            i
            for i in where
            if any(gist_matches(g, lines[i]) for g in current.values() if g != gist)
        ]
        (unsure if len(explained) == len(where) else hits).append(ref)
    return LineGrade(verdicts, tuple(hits), tuple(unsure))


# --------------------------------------------------------------------------- the LLM judge


@dataclass(frozen=True, slots=True)
class JudgeVerdict:
    """The judge's parsed answer; ``answer_correct`` is ``None`` when no answer was graded."""

    needs_present: Mapping[str, bool]
    forbidden_present: Mapping[str, bool]
    answer_correct: bool | None
    reason: str = ""
    attempts: int = 1

    @property
    def hit(self) -> bool | None:
        return all(self.needs_present.values()) if self.needs_present else None

    @property
    def false_recall(self) -> bool:
        return any(self.forbidden_present.values())


_JSON_BLOCK = re.compile(r"\{.*\}", re.DOTALL)


def _bool_map(value: Any, expected: Sequence[str], name: str) -> dict[str, bool]:
    if not isinstance(value, Mapping):
        raise ModelOutputError(
            f"judge output: {name!r} is {value!r:.80}, not an object of id -> true/false"
        )
    missing = [k for k in expected if k not in value]
    if missing:
        raise ModelOutputError(f"judge output: {name!r} lacks {missing}; it must give every id")
    out: dict[str, bool] = {}
    for key in expected:
        item = value[key]
        if not isinstance(item, bool):
            raise ModelOutputError(f"judge output: {name}[{key!r}] is {item!r}, not true/false")
        out[key] = item
    return out


def parse_judge_output(
    text: str, *, needs: Sequence[str], forbidden: Sequence[str], with_answer: bool
) -> JudgeVerdict:
    """Validate the judge's JSON answer (the first ``{...}`` in ``text``).

    Raises:
        ModelOutputError: No JSON object, a missing id, or a non-boolean verdict.
    """
    found = _JSON_BLOCK.search(text)
    if found is None:
        raise ModelOutputError(f"judge output has no JSON object: {text[:120]!r}")
    try:
        data = json.loads(found.group(0))
    except json.JSONDecodeError as exc:
        raise ModelOutputError(
            f"judge output is not valid JSON ({exc.msg}): {text[:120]!r}"
        ) from exc
    if not isinstance(data, Mapping):
        raise ModelOutputError(f"judge output is {data!r:.80}, not an object")
    answer = data.get("answer_correct")
    if with_answer and not isinstance(answer, bool):
        raise ModelOutputError(f"judge output: answer_correct is {answer!r}, not true/false")
    reason = data.get("reason", "")
    return JudgeVerdict(
        needs_present=_bool_map(data.get("needs_present", {}), needs, "needs_present"),
        forbidden_present=_bool_map(
            data.get("forbidden_present", {}), forbidden, "forbidden_present"
        ),
        answer_correct=answer if with_answer else None,
        reason=reason if isinstance(reason, str) else "",
    )


def judge_probe(model: BaseChatModel, request: JudgeRequest) -> JudgeVerdict:
    """Ask ``model`` to grade one probe with the pinned judge prompt; one retry on bad output.

    Args:
        model: The judge chat model.
        request: The probe's question, recalled lines, needed / forbidden facts and
            optionally the answer to grade (``prompts.eval.JudgeRequest``).

    Raises:
        ModelOutputError: The second answer is malformed too.
    """
    with_answer = request.answer is not None
    messages: list[BaseMessage] = [
        SystemMessage(JUDGE_SYSTEM),
        HumanMessage(render_judge_request(request)),
    ]
    error: ModelOutputError | None = None
    for attempt in (1, 2):
        reply = model.invoke(messages)
        try:
            verdict = parse_judge_output(
                reply.text,
                needs=list(request.needs),
                forbidden=list(request.forbidden),
                with_answer=with_answer,
            )
        except ModelOutputError as exc:
            error = exc
            messages = [*messages, reply, HumanMessage(JUDGE_RETRY.format(error=exc))]
            continue
        return JudgeVerdict(
            verdict.needs_present,
            verdict.forbidden_present,
            verdict.answer_correct,
            verdict.reason,
            attempt,
        )
    raise ModelOutputError(f"the judge answered malformed JSON twice; last problem: {error}")
