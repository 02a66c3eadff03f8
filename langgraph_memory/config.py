"""Frozen, validated policies. Build one and pass it; never mutate a shared instance.

Every constructor checks its values in ``__post_init__`` and raises
``ConfigurationError`` naming the bad value and the allowed range.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from langgraph_memory.errors import ConfigurationError


def _check_range(owner: str, name: str, value: float, lo: float, hi: float) -> None:
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
        if self.keep_last is not None and self.keep_last < 1:
            raise ConfigurationError(
                f"RetentionPolicy.keep_last={self.keep_last!r}; use an integer >= 1 or None to keep all."
            )
        if self.thread_ttl_seconds is not None and self.thread_ttl_seconds <= 0:
            raise ConfigurationError(
                f"RetentionPolicy.thread_ttl_seconds={self.thread_ttl_seconds!r}; use seconds > 0 or None."
            )
        if self.max_bytes is not None and self.max_bytes <= 0:
            raise ConfigurationError(
                f"RetentionPolicy.max_bytes={self.max_bytes!r}; use bytes > 0 or None for no cap."
            )
        if self.apply_every < 1:
            raise ConfigurationError(
                f"RetentionPolicy.apply_every={self.apply_every!r}; use an integer >= 1."
            )


RedactionAction = Literal["mask", "hash", "reject", "keep"]

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
)


def _default_actions() -> MappingProxyType[str, RedactionAction]:
    return MappingProxyType({kind: "mask" for kind in IDENTIFIER_KINDS})


@dataclass(frozen=True, slots=True)
class PrivacyPolicy:
    """Per identifier kind: ``mask`` (``[EMAIL]``), ``hash`` (stable salted digest),
    ``reject`` (raise ``RedactionRejectedError``) or ``keep``."""

    actions: MappingProxyType[str, RedactionAction] = field(default_factory=_default_actions)
    # Salt for "hash": set your own per deployment so digests can't be joined across apps.
    hash_salt: str = "langgraph-memory"

    def __post_init__(self) -> None:
        for kind, action in self.actions.items():
            if kind not in IDENTIFIER_KINDS:
                raise ConfigurationError(
                    f"PrivacyPolicy: unknown identifier kind {kind!r}; use one of {IDENTIFIER_KINDS}."
                )
            if action not in ("mask", "hash", "reject", "keep"):
                raise ConfigurationError(
                    f"PrivacyPolicy: action {action!r} for {kind!r}; use 'mask', 'hash', 'reject' or 'keep'."
                )
        if not isinstance(self.actions, MappingProxyType):
            object.__setattr__(self, "actions", MappingProxyType(dict(self.actions)))

    def action_for(self, kind: str) -> RedactionAction:
        return self.actions.get(kind, "mask")
