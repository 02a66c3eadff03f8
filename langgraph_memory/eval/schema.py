"""Load and validate the planted-fact exam's data files (format: ``eval/data/SCHEMA.md``).

One JSON file per user. ``load_user`` reads and checks one file, ``load_exam``
a directory (or a list of files) and the references between users
(``forbid_other_users``). A malformed file raises ``ExamDataError`` naming the
file, the field and the fix; softer problems that do not stop a run (a fact
whose own text does not match its gist, a superseded value whose gist also
matches the new value) are collected in ``Exam.warnings`` and printed in the
report, because they make the grader's verdicts on that fact unreliable.

Example:
    >>> import json, pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> user = {"user_id": "en-demo", "lang": "en", "domain": "assistant", "timezone": "+00:00",
    ...   "identifiers": [], "sessions": [{"id": "s1", "at": "2026-01-01T09:00:00+00:00",
    ...   "turns": [{"role": "user", "text": "I am vegan."}, {"role": "assistant", "text": "Ok."}]}],
    ...   "facts": [{"id": "diet", "text": "User is vegan", "type": "semantic",
    ...              "said_in": "s1", "gist": [["vegan"]]}],
    ...   "probes": [{"id": "p1", "kind": "direct", "at": "2026-02-01T09:00:00+00:00",
    ...               "question": "Dinner ideas?", "needs": ["diet"]}]}
    >>> _ = (folder / "en-demo.json").write_text(json.dumps(user))
    >>> exam = load_exam(folder)
    >>> [u.user_id for u in exam.users], exam.users[0].facts[0].gist
    (['en-demo'], (('vegan',),))
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Literal, cast

from langgraph_memory.clock import parse_time
from langgraph_memory.errors import ExamDataError

__all__ = [
    "DEFAULT_DATA_DIR",
    "ENDED_BY",
    "PROBE_KINDS",
    "Exam",
    "ExamUser",
    "Fact",
    "Probe",
    "Session",
    "Turn",
    "load_exam",
    "load_user",
    "parse_user",
]

# Where the shipped exam lives (``users/*.json`` under it).
DEFAULT_DATA_DIR = Path(__file__).parent / "data" / "users"

ProbeKind = Literal[
    "direct", "multi_hop", "temporal", "abstain", "isolation", "privacy", "procedural", "expired"
]
PROBE_KINDS: tuple[str, ...] = (
    "direct",
    "multi_hop",
    "temporal",
    "abstain",
    "isolation",
    "privacy",
    "procedural",
    "expired",
)
ENDED_BY: tuple[str, ...] = ("superseded", "expired", "forgotten")
_LANGS = ("zh", "en", "mixed")
_DOMAINS = ("assistant", "support")
_FACT_TYPES = ("semantic", "episodic", "procedural")
_USER_ID = re.compile(r"^[a-z0-9][a-z0-9-]{2,63}$")
_OFFSET = re.compile(r"^([+-])(\d{2}):(\d{2})$")
_OTHER_REF = re.compile(r"^([a-z0-9][a-z0-9-]{2,63}):(.+)$")


@dataclass(frozen=True, slots=True)
class Turn:
    """One line of a past conversation; ``error`` marks a deliberate assistant mistake."""

    role: Literal["user", "assistant"]
    text: str
    error: bool = False


@dataclass(frozen=True, slots=True)
class Session:
    """A past conversation, replayed as one thread; turn ``i`` happens at ``at + i`` minutes."""

    id: str
    at: datetime
    turns: tuple[Turn, ...]

    def turn_time(self, index: int) -> datetime:
        return self.at + timedelta(minutes=index)


@dataclass(frozen=True, slots=True)
class Fact:
    """Ground truth: what a perfect memory of this user would hold (or must never hold)."""

    id: str
    text: str
    type: str
    said_in: str
    gist: tuple[tuple[str, ...], ...]
    key: str | None = None
    importance: float = 0.5
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    ended_by: str | None = None
    superseded_by: str | None = None
    expires_at: datetime | None = None
    event_time: datetime | None = None
    bait: bool = False

    def ended_at(self) -> datetime | None:
        """When this fact stopped being true: ``valid_to``, else ``expires_at`` (``None``: never)."""
        return self.valid_to or self.expires_at

    def is_current(self, at: datetime) -> bool:
        """True of the user at ``at``: not bait, and not ended by then."""
        end = self.ended_at()
        return not self.bait and (end is None or end > at)

    def end_reason(self, at: datetime) -> str | None:
        """Why it is no longer current at ``at`` ("superseded", "expired", "forgotten")."""
        end = self.ended_at()
        if self.bait or end is None or end > at:
            return None
        if self.ended_by:
            return self.ended_by
        return "expired" if self.expires_at is not None and self.valid_to is None else "superseded"


@dataclass(frozen=True, slots=True)
class Probe:
    """A question asked in a new session after the history."""

    id: str
    kind: str
    at: datetime
    question: str
    needs: tuple[str, ...] = ()
    forbid: tuple[str, ...] = ()
    forbid_other_users: tuple[tuple[str, str], ...] = ()
    answer: str | None = None


@dataclass(frozen=True, slots=True)
class ExamUser:
    """One exam file: a user, their past sessions, the ground truth and the probes."""

    user_id: str
    lang: str
    domain: str
    timezone: timezone
    identifiers: tuple[str, ...]
    sessions: tuple[Session, ...]
    facts: tuple[Fact, ...]
    probes: tuple[Probe, ...]
    source: str = ""

    def fact(self, fact_id: str) -> Fact:
        for fact in self.facts:
            if fact.id == fact_id:
                return fact
        raise KeyError(fact_id)

    def session(self, session_id: str) -> Session:
        for session in self.sessions:
            if session.id == session_id:
                return session
        raise KeyError(session_id)


@dataclass(frozen=True, slots=True)
class Exam:
    """Every user of one exam, checked together; ``warnings`` lists non-fatal data problems."""

    users: tuple[ExamUser, ...]
    warnings: tuple[str, ...] = field(default=())

    def user(self, user_id: str) -> ExamUser:
        for user in self.users:
            if user.user_id == user_id:
                return user
        raise KeyError(user_id)

    @property
    def probe_count(self) -> int:
        return sum(len(u.probes) for u in self.users)


# --------------------------------------------------------------------------- parsing


class _Reader:
    """Typed field access that raises ``ExamDataError`` naming the file and field path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, problem: str, fix: str) -> ExamDataError:
        return ExamDataError(f"{self.source}: {where}: {problem}; {fix}")

    def obj(self, value: Any, where: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(where, f"expected an object, got {value!r:.80}", "see SCHEMA.md")
        return value

    def items(
        self, data: Mapping[str, Any], name: str, where: str, *, required: bool = True
    ) -> list[Any]:
        if name not in data:
            if required:
                raise self.fail(f"{where}.{name}", "missing", "add it (a list; see SCHEMA.md)")
            return []
        value = data[name]
        if not isinstance(value, list):
            raise self.fail(f"{where}.{name}", f"expected a list, got {value!r:.80}", "use [...]")
        return value

    def text(
        self, data: Mapping[str, Any], name: str, where: str, *, required: bool = True
    ) -> str | None:
        value = data.get(name)
        if value is None:
            if required:
                raise self.fail(f"{where}.{name}", "missing", "add a non-empty string")
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.fail(
                f"{where}.{name}", f"{value!r:.80} is not a non-empty string", "use text"
            )
        return value

    def choice(self, data: Mapping[str, Any], name: str, where: str, allowed: Sequence[str]) -> str:
        value = self.text(data, name, where)
        if value not in allowed:
            raise self.fail(
                f"{where}.{name}", f"{value!r} is not allowed", f"use one of {list(allowed)}"
            )
        return cast(str, value)

    def time(
        self, data: Mapping[str, Any], name: str, where: str, *, required: bool = False
    ) -> datetime | None:
        raw = data.get(name)
        if raw is None:
            if required:
                raise self.fail(f"{where}.{name}", "missing", "add an ISO time with offset")
            return None
        if not isinstance(raw, str) or not re.search(r"(Z|[+-]\d{2}:\d{2})$", raw.strip()):
            raise self.fail(
                f"{where}.{name}",
                f"{raw!r} has no UTC offset",
                "write an ISO 8601 time with its offset, e.g. 2026-09-01T09:00:00+08:00",
            )
        parsed = parse_time(raw)
        if parsed is None:
            raise self.fail(f"{where}.{name}", f"{raw!r} is not an ISO 8601 time", "fix the date")
        return parsed

    def ids(self, data: Mapping[str, Any], name: str, where: str) -> tuple[str, ...]:
        values = self.items(data, name, where, required=False)
        for index, value in enumerate(values):
            if not isinstance(value, str) or not value:
                raise self.fail(
                    f"{where}.{name}[{index}]", f"{value!r} is not an id", "use a string"
                )
        return tuple(values)


def _timezone(reader: _Reader, raw: str) -> timezone:
    match = _OFFSET.match(raw)
    if not match:
        raise reader.fail("timezone", f"{raw!r} is not a UTC offset", 'write it like "+08:00"')
    sign = 1 if match.group(1) == "+" else -1
    return timezone(sign * timedelta(hours=int(match.group(2)), minutes=int(match.group(3))))


def _turns(reader: _Reader, raw: list[Any], where: str) -> tuple[Turn, ...]:
    turns: list[Turn] = []
    for index, item in enumerate(raw):
        here = f"{where}.turns[{index}]"
        data = reader.obj(item, here)
        role = reader.choice(data, "role", here, ("user", "assistant"))
        expected = "user" if index % 2 == 0 else "assistant"
        if role != expected:
            raise reader.fail(
                f"{here}.role",
                f"{role!r} out of turn",
                "turns alternate user / assistant, user first",
            )
        error = data.get("error", False)
        if not isinstance(error, bool) or (error and role != "assistant"):
            raise reader.fail(f"{here}.error", f"{error!r}", "use true only on assistant turns")
        turns.append(
            Turn(
                cast(Literal["user", "assistant"], role),
                cast(str, reader.text(data, "text", here)),
                error,
            )
        )
    if not turns:
        raise reader.fail(f"{where}.turns", "empty", "a session needs at least one user turn")
    return tuple(turns)


def _gist(reader: _Reader, data: Mapping[str, Any], where: str) -> tuple[tuple[str, ...], ...]:
    raw = data.get("gist")
    fix = 'write a list of alternatives, each a list of terms: [["海鲜", "过敏"], ["seafood"]]'
    if not isinstance(raw, list) or not raw:
        raise reader.fail(f"{where}.gist", f"{raw!r:.80} is not a non-empty list", fix)
    alternatives: list[tuple[str, ...]] = []
    for index, alternative in enumerate(raw):
        if (
            not isinstance(alternative, list)
            or not alternative
            or not all(isinstance(t, str) and t.strip() for t in alternative)
        ):
            raise reader.fail(
                f"{where}.gist[{index}]", f"{alternative!r:.80} is not a list of terms", fix
            )
        alternatives.append(tuple(alternative))
    return tuple(alternatives)


def _fact(reader: _Reader, item: Any, where: str) -> Fact:
    data = reader.obj(item, where)
    importance = data.get("importance", 0.5)
    if (
        isinstance(importance, bool)
        or not isinstance(importance, int | float)
        or not 0 <= importance <= 1
    ):
        raise reader.fail(f"{where}.importance", f"{importance!r}", "use a number between 0 and 1")
    ended_by = data.get("ended_by")
    if ended_by is not None and ended_by not in ENDED_BY:
        raise reader.fail(
            f"{where}.ended_by", f"{ended_by!r}", f"use null or one of {list(ENDED_BY)}"
        )
    bait = data.get("bait", False)
    if not isinstance(bait, bool):
        raise reader.fail(f"{where}.bait", f"{bait!r}", "use true or false")
    return Fact(
        id=cast(str, reader.text(data, "id", where)),
        text=cast(str, reader.text(data, "text", where)),
        type=reader.choice(data, "type", where, _FACT_TYPES),
        said_in=cast(str, reader.text(data, "said_in", where)),
        gist=_gist(reader, data, where),
        key=reader.text(data, "key", where, required=False),
        importance=float(importance),
        valid_from=reader.time(data, "valid_from", where),
        valid_to=reader.time(data, "valid_to", where),
        ended_by=ended_by,
        superseded_by=reader.text(data, "superseded_by", where, required=False),
        expires_at=reader.time(data, "expires_at", where),
        event_time=reader.time(data, "event_time", where),
        bait=bait,
    )


def _probe(reader: _Reader, item: Any, where: str) -> Probe:
    data = reader.obj(item, where)
    others: list[tuple[str, str]] = []
    for index, ref in enumerate(reader.ids(data, "forbid_other_users", where)):
        match = _OTHER_REF.match(ref)
        if not match:
            raise reader.fail(
                f"{where}.forbid_other_users[{index}]", f"{ref!r}", 'write "<user_id>:<fact_id>"'
            )
        others.append((match.group(1), match.group(2)))
    return Probe(
        id=cast(str, reader.text(data, "id", where)),
        kind=reader.choice(data, "kind", where, PROBE_KINDS),
        at=cast(datetime, reader.time(data, "at", where, required=True)),
        question=cast(str, reader.text(data, "question", where)),
        needs=reader.ids(data, "needs", where),
        forbid=reader.ids(data, "forbid", where),
        forbid_other_users=tuple(others),
        answer=reader.text(data, "answer", where, required=False),
    )


def _unique(reader: _Reader, ids: Iterable[str], where: str) -> set[str]:
    seen: set[str] = set()
    for value in ids:
        if value in seen:
            raise reader.fail(where, f"id {value!r} is used twice", "give each one its own id")
        seen.add(value)
    return seen


def parse_user(data: Any, source: str = "<data>") -> ExamUser:
    """Validate one user's decoded JSON; ``source`` names it in errors.

    Raises:
        ExamDataError: A field is missing, mistyped, out of range, or refers to an
            unknown session / fact.
    """
    reader = _Reader(source)
    top = reader.obj(data, "top level")
    user_id = cast(str, reader.text(top, "user_id", "top level"))
    if not _USER_ID.match(user_id):
        raise reader.fail(
            "user_id", f"{user_id!r}", "use ^[a-z0-9][a-z0-9-]{2,63}$, e.g. zh-pa-linwei"
        )
    identifiers = reader.ids(top, "identifiers", "top level")
    sessions: list[Session] = []
    for index, item in enumerate(reader.items(top, "sessions", "top level")):
        where = f"sessions[{index}]"
        raw = reader.obj(item, where)
        session = Session(
            id=cast(str, reader.text(raw, "id", where)),
            at=cast(datetime, reader.time(raw, "at", where, required=True)),
            turns=_turns(reader, reader.items(raw, "turns", where), where),
        )
        if sessions and session.at < sessions[-1].at:
            raise reader.fail(
                f"{where}.at",
                f"{session.at.isoformat()} is before the previous session",
                "order sessions by time",
            )
        sessions.append(session)
    if not sessions:
        raise reader.fail("sessions", "empty", "add at least one past session")
    session_ids = _unique(reader, (s.id for s in sessions), "sessions")
    facts = [
        _fact(reader, item, f"facts[{i}]")
        for i, item in enumerate(reader.items(top, "facts", "top level"))
    ]
    fact_ids = _unique(reader, (f.id for f in facts), "facts")
    for index, fact in enumerate(facts):
        if fact.said_in not in session_ids:
            raise reader.fail(
                f"facts[{index}].said_in",
                f"{fact.said_in!r} is no session",
                f"use one of {sorted(session_ids)}",
            )
        if fact.superseded_by is not None and fact.superseded_by not in fact_ids:
            raise reader.fail(
                f"facts[{index}].superseded_by",
                f"{fact.superseded_by!r} is no fact",
                "name the newer fact's id",
            )
        if fact.ended_by == "superseded" and fact.superseded_by is None:
            raise reader.fail(
                f"facts[{index}].superseded_by",
                "missing",
                'ended_by "superseded" needs the newer fact id',
            )
        if fact.ended_by is not None and fact.valid_to is None and fact.expires_at is None:
            raise reader.fail(
                f"facts[{index}].valid_to",
                "missing",
                f"ended_by {fact.ended_by!r} needs the time it ended",
            )
    last_session = sessions[-1].turn_time(len(sessions[-1].turns))
    probes = [
        _probe(reader, item, f"probes[{i}]")
        for i, item in enumerate(reader.items(top, "probes", "top level"))
    ]
    _unique(reader, (p.id for p in probes), "probes")
    for index, probe in enumerate(probes):
        where = f"probes[{index}]"
        for name in ("needs", "forbid"):
            for ref in getattr(probe, name):
                if ref not in fact_ids:
                    raise reader.fail(
                        f"{where}.{name}",
                        f"{ref!r} is no fact of {user_id}",
                        f"use one of {sorted(fact_ids)}",
                    )
        if probe.kind == "abstain" and probe.needs:
            raise reader.fail(
                f"{where}.needs",
                "an abstain probe needs nothing",
                "use [] and list the bait in forbid",
            )
        if probe.at < last_session:
            raise reader.fail(
                f"{where}.at",
                f"{probe.at.isoformat()} is inside the history",
                "probe after the last session",
            )
        if any(other == user_id for other, _ in probe.forbid_other_users):
            raise reader.fail(
                f"{where}.forbid_other_users", "names this user", "list this user's facts in forbid"
            )
    return ExamUser(
        user_id=user_id,
        lang=reader.choice(top, "lang", "top level", _LANGS),
        domain=reader.choice(top, "domain", "top level", _DOMAINS),
        timezone=_timezone(reader, cast(str, reader.text(top, "timezone", "top level"))),
        identifiers=identifiers,
        sessions=tuple(sessions),
        facts=tuple(facts),
        probes=tuple(probes),
        source=source,
    )


def load_user(path: str | Path) -> ExamUser:
    """Read and validate one user file.

    Raises:
        ExamDataError: The file is unreadable, not JSON, or breaks the format.
    """
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ExamDataError(f"{file}: cannot be read ({exc}); pass a UTF-8 JSON file") from exc
    except json.JSONDecodeError as exc:
        raise ExamDataError(
            f"{file}: line {exc.lineno}: invalid JSON ({exc.msg}); fix the syntax"
        ) from exc
    return parse_user(data, str(file))


def _data_warnings(users: Sequence[ExamUser]) -> list[str]:
    # Imported here: grading imports this module's types.
    from langgraph_memory.eval.grading import gist_matches

    warnings: list[str] = []
    for user in users:
        needed = {fact_id for probe in user.probes for fact_id in probe.needs}
        for fact in user.facts:
            if fact.id in needed and not gist_matches(fact.gist, fact.text):
                warnings.append(
                    f"{user.user_id}:{fact.id}: the fact's own text {fact.text!r} does not match "
                    "its gist (seeded mode can never hit it)"
                )
            if fact.superseded_by is not None:
                newer = user.fact(fact.superseded_by)
                if gist_matches(fact.gist, newer.text):
                    warnings.append(
                        f"{user.user_id}:{fact.id}: its gist also matches the newer value "
                        f"{newer.id!r} ({newer.text!r}); stale verdicts on it are unreliable"
                    )
    return warnings


def load_exam(source: str | Path | Sequence[str | Path] = DEFAULT_DATA_DIR) -> Exam:
    """Load every user file of an exam (a directory of ``*.json`` or a list of files).

    Raises:
        ExamDataError: A file is malformed, two files share a user id, or a
            ``forbid_other_users`` entry names an unknown user or fact.
    """
    if isinstance(source, str | Path):
        folder = Path(source)
        if not folder.is_dir():
            raise ExamDataError(
                f"{folder}: not a directory; pass the folder holding <user_id>.json files"
            )
        paths = sorted(folder.glob("*.json"))
        if not paths:
            raise ExamDataError(f"{folder}: no *.json user files; see eval/data/SCHEMA.md")
    else:
        paths = [Path(p) for p in source]
    users = [load_user(p) for p in paths]
    by_id: dict[str, ExamUser] = {}
    for user in users:
        if user.user_id in by_id:
            raise ExamDataError(
                f"{user.source}: user_id {user.user_id!r} is also used by {by_id[user.user_id].source}; "
                "give each file its own user"
            )
        by_id[user.user_id] = user
    for user in users:
        for probe in user.probes:
            for other, fact_id in probe.forbid_other_users:
                target = by_id.get(other)
                if target is None or fact_id not in {f.id for f in target.facts}:
                    raise ExamDataError(
                        f"{user.source}: probe {probe.id!r}.forbid_other_users: {other}:{fact_id} "
                        "names no loaded user's fact; load that user's file too or fix the reference"
                    )
    return Exam(users=tuple(users), warnings=tuple(_data_warnings(users)))
