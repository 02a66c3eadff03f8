"""Frozen, validated policies. Build one and pass it; never mutate a shared instance.

Every constructor checks its values in ``__post_init__`` and raises
``ConfigurationError`` naming the bad value and the allowed range.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, get_args

from langgraph_memory.errors import ConfigurationError


def check_int(
    label: str, value: object, *, minimum: int | None = None, optional: bool = False
) -> None:
    """Refuse anything but an ``int`` (>= ``minimum`` if given; ``None`` too when
    ``optional``).

    ``bool`` is refused although it is an ``int``; so are numeric strings such as
    ``"20"``, which would otherwise fail later with a bare ``TypeError``.

    Example:
        >>> check_int("RetentionPolicy.keep_last", 20, minimum=1)
        >>> check_int("RetentionPolicy.keep_last", "20", minimum=1)
        Traceback (most recent call last):
        ...
        langgraph_memory.errors.ConfigurationError: RetentionPolicy.keep_last='20' is a str; use an integer >= 1 (write 20, not '20').
    """
    if value is None and optional:
        return
    none = " or None" if optional else ""
    floor = "" if minimum is None else f" >= {minimum}"
    if not isinstance(value, int) or isinstance(value, bool):
        hint = f" (write {value}, not {value!r})" if _numeric_text(value) else ""
        raise ConfigurationError(
            f"{label}={value!r} is a {type(value).__name__}; use an integer{floor}{none}{hint}."
        )
    if minimum is not None and value < minimum:
        raise ConfigurationError(f"{label}={value!r}; use an integer >= {minimum}{none}.")


def check_number(label: str, value: object, *, optional: bool = False) -> None:
    """Refuse anything but an ``int`` or ``float`` (``None`` too when ``optional``);
    the caller checks the range.

    Example:
        >>> check_number("ScoringWeights.recency", 0.2)
        >>> check_number("ScoringWeights.recency", "0.2")
        Traceback (most recent call last):
        ...
        langgraph_memory.errors.ConfigurationError: ScoringWeights.recency='0.2' is a str; use a number (write 0.2, not '0.2').
    """
    if value is None and optional:
        return
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        hint = f" (write {value}, not {value!r})" if _numeric_text(value) else ""
        none = " or None" if optional else ""
        raise ConfigurationError(
            f"{label}={value!r} is a {type(value).__name__}; use a number{none}{hint}."
        )


def _numeric_text(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        float(value)
    except ValueError:
        return False
    return True


def _check_range(owner: str, name: str, value: float, lo: float, hi: float) -> None:
    check_number(f"{owner}.{name}", value)
    if not (lo <= value <= hi):
        raise ConfigurationError(
            f"{owner}.{name}={value!r} is out of range; use a value between {lo} and {hi}."
        )


@dataclass(frozen=True, slots=True)
class ScoringWeights:
    """How recall ranks: ``relevance*a + recency*b + importance*c``.

    Recency and importance act as bounded boosts among comparably relevant
    memories (see ``scoring.py``), so they never lift an irrelevant memory
    over a clearly relevant one.
    """

    relevance: float = 0.6
    recency: float = 0.2
    importance: float = 0.2
    half_life_days: float = 30.0
    # Share of the keyword score in relevance; the rest is the vector score.
    keyword_share: float = 0.5
    min_relevance: float = 0.15

    def __post_init__(self) -> None:
        for name in ("relevance", "recency", "importance", "keyword_share", "min_relevance"):
            _check_range("ScoringWeights", name, getattr(self, name), 0.0, 1.0)
        check_number("ScoringWeights.half_life_days", self.half_life_days)
        if self.half_life_days <= 0:
            raise ConfigurationError(
                f"ScoringWeights.half_life_days={self.half_life_days!r} must be > 0 (days)."
            )
        if self.relevance + self.recency + self.importance <= 0:
            raise ConfigurationError(
                "ScoringWeights: relevance + recency + importance is 0; give at least one a weight > 0."
            )


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """What a checkpointer keeps.

    ``keep_last``: checkpoints kept per (thread, namespace); ``None`` keeps all.
    ``thread_ttl_seconds``: threads idle longer than this are deleted by ``sweep()``.
    ``max_bytes``: soft cap on the database; ``sweep()`` drops the oldest idle threads first.
    """

    keep_last: int | None = None
    thread_ttl_seconds: float | None = None
    max_bytes: int | None = None
    # Apply keep_last every N puts per thread (incremental), not on every put.
    apply_every: int = 50

    def __post_init__(self) -> None:
        check_int("RetentionPolicy.keep_last", self.keep_last, minimum=1, optional=True)
        check_number("RetentionPolicy.thread_ttl_seconds", self.thread_ttl_seconds, optional=True)
        check_int("RetentionPolicy.max_bytes", self.max_bytes, minimum=1, optional=True)
        check_int("RetentionPolicy.apply_every", self.apply_every, minimum=1)
        if self.thread_ttl_seconds is not None and self.thread_ttl_seconds <= 0:
            raise ConfigurationError(
                f"RetentionPolicy.thread_ttl_seconds={self.thread_ttl_seconds!r}; use seconds > 0 or None."
            )


# "partial" (the default) masks like "mask" but keeps what identifies nobody and lets the
# user be answered: a phone's or card's last four digits ("[PHONE:*1937]", "the number
# ending 1937") and an email's domain ("[EMAIL:@outlook.com]"); other kinds are masked whole.
RedactionAction = Literal["partial", "mask", "hash", "reject", "keep"]
REDACTION_ACTIONS: tuple[RedactionAction, ...] = get_args(RedactionAction)

# Identifier kinds the redactor recognises (see privacy.py).
IDENTIFIER_KINDS: tuple[str, ...] = (
    "cn_mobile",
    "cn_resident_id",
    "bank_card",
    "email",
    "phone",
    "ip_address",
    "password",
    "api_key",
    # Added later, so appended: mainland-China landlines without a country code,
    # and passport numbers after a keyword.
    "cn_landline",
    "passport",
    # Identity numbers outside the mainland: Hong Kong, Taiwan, Singapore, US SSN, UK NINO.
    "national_id",
)


def _every_kind(action: RedactionAction) -> MappingProxyType[str, RedactionAction]:
    return MappingProxyType(dict.fromkeys(IDENTIFIER_KINDS, action))


def _default_actions() -> MappingProxyType[str, RedactionAction]:
    return _every_kind("partial")


@dataclass(frozen=True, slots=True)
class PrivacyPolicy:
    """Per identifier kind: ``partial`` (the default: ``[PHONE:*1937]``, ``[EMAIL:@outlook.com]``,
    every other kind ``[ID_NUMBER]``), ``mask`` (``[EMAIL]``), ``hash`` (stable salted digest),
    ``reject`` (raise ``RedactionRejectedError``) or ``keep``."""

    actions: MappingProxyType[str, RedactionAction] = field(default_factory=_default_actions)
    # Salt for "hash": set your own per deployment so digests can't be joined across apps.
    hash_salt: str = "langgraph-memory"

    def __post_init__(self) -> None:
        if not isinstance(self.hash_salt, str) or not self.hash_salt:
            raise ConfigurationError(
                f"PrivacyPolicy.hash_salt={self.hash_salt!r}; use a non-empty string."
            )
        for kind, action in self.actions.items():
            if kind not in IDENTIFIER_KINDS:
                raise ConfigurationError(
                    f"PrivacyPolicy: unknown identifier kind {kind!r}; use one of {IDENTIFIER_KINDS}."
                )
            if action not in REDACTION_ACTIONS:
                choices = ", ".join(repr(a) for a in REDACTION_ACTIONS[:-1])
                raise ConfigurationError(
                    f"PrivacyPolicy: action {action!r} for {kind!r}; use {choices} or "
                    f"{REDACTION_ACTIONS[-1]!r}."
                )
        if not isinstance(self.actions, MappingProxyType):
            object.__setattr__(self, "actions", MappingProxyType(dict(self.actions)))

    @classmethod
    def every_kind(cls, action: RedactionAction, **kwargs: Any) -> PrivacyPolicy:
        """One action for every identifier kind: ``PrivacyPolicy.every_kind("mask")`` masks
        each whole, as logs do."""
        return cls(actions=_every_kind(action), **kwargs)

    def action_for(self, kind: str) -> RedactionAction:
        return self.actions.get(kind, "partial")
