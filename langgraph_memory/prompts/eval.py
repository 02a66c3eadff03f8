"""The exam's LLM judge prompt (pinned: change it and judge figures stop being comparable).

The judge grades one probe: which needed facts the recalled memory lines state,
which forbidden facts (stale values, jokes, assistant errors, other users'
facts) they state as current, and, when an answer is given, whether it is
right. It must answer one JSON object; ``langgraph_memory.eval.grading``
validates it and asks once more with ``JUDGE_RETRY`` when it is malformed.

``JUDGE_PROMPT_VERSION`` is printed in every report that used the judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

JUDGE_PROMPT_VERSION = "exam-judge-1"

JUDGE_SYSTEM = (
    "You grade a memory system. You see a question a user asked in a new conversation, "
    "the memory lines the system put in front of its assistant, the facts those lines "
    "should contain and the facts they must not contain.\n"
    "Rules:\n"
    "- A needed fact is present only if one memory line states it as true now, in any "
    "language or wording. A line that negates it, or says it is no longer true, does not count.\n"
    "- A forbidden fact is present if some line states it as true now (a stale value, a joke, "
    "an assistant's mistake or another person's fact presented as this user's). A line that "
    "says it is no longer true, or that it was a joke, does not count.\n"
    "- If an answer is given, it is correct when it agrees with the reference answer and "
    "relies on no forbidden fact. Judge meaning, not wording.\n"
    "- Use only what is shown. Do not guess.\n"
    "Answer with one JSON object and nothing else:\n"
    '{"needs_present": {"<fact id>": true|false, ...}, '
    '"forbidden_present": {"<fact id>": true|false, ...}, '
    '"answer_correct": true|false|null, "reason": "<one short sentence>"}'
)

JUDGE_REQUEST = (
    "Question: {question}\n\n"
    "Memory lines shown to the assistant:\n{lines}\n\n"
    "Needed facts (id: fact):\n{needs}\n\n"
    "Forbidden facts (id: fact):\n{forbidden}\n\n"
    "{answer_part}"
    "Give every id above in your JSON."
)

JUDGE_ANSWER_PART = "Reference answer: {reference}\nAssistant's answer: {answer}\n\n"
JUDGE_NO_ANSWER_PART = 'No answer to grade: set "answer_correct" to null.\n\n'

JUDGE_RETRY = (
    "Your reply could not be used: {error}. Reply again with only the JSON object, "
    "giving true or false for every id."
)


def _listing(items: Mapping[str, str]) -> str:
    return "\n".join(f"- {key}: {text}" for key, text in items.items()) or "(none)"


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """What the judge grades for one probe.

    ``needs`` / ``forbidden`` map fact ids to the facts' clean texts; ``answer`` is
    the assistant's answer to grade (``None``: the recalled lines only).
    """

    question: str
    lines: Sequence[str]
    needs: Mapping[str, str] = field(default_factory=dict)
    forbidden: Mapping[str, str] = field(default_factory=dict)
    answer: str | None = None
    reference_answer: str | None = None


def render_judge_request(request: JudgeRequest) -> str:
    """The judge's user message for one probe.

    Example:
        >>> print(render_judge_request(JudgeRequest("Dinner?", ["User is vegan"],
        ...                                         needs={"diet": "User is vegan"})))
        ... # doctest: +ELLIPSIS
        Question: Dinner?
        <BLANKLINE>
        Memory lines shown to the assistant:
        - User is vegan
        ...
    """
    answer_part = (
        JUDGE_NO_ANSWER_PART
        if request.answer is None
        else JUDGE_ANSWER_PART.format(
            reference=request.reference_answer or "(none given)", answer=request.answer
        )
    )
    return JUDGE_REQUEST.format(
        question=request.question,
        lines="\n".join(f"- {line}" for line in request.lines) or "(no memory lines)",
        needs=_listing(request.needs),
        forbidden=_listing(request.forbidden),
        answer_part=answer_part,
    )
