"""One injectable clock for everything that stamps or compares memory times.

The store, extract, reconcile, recall, compress, expiry and the writer all
take ``clock=`` (a ``Clock``: a zero-argument callable returning an *aware*
``datetime``) and call ``now(clock)`` instead of reading the wall clock, so a
replayed history (the exam, a migration, a test) runs on its own time.
``ManualClock`` is the test/replay clock: set or advance it by hand.

A message may carry its own time; ``message_time`` reads it from
``additional_kwargs["created_at"]``, ``response_metadata["created_at"]`` or
LangGraph message metadata (ISO 8601 or epoch seconds) and falls back to the
clock. Extraction resolves "明天" / "next Friday" against that time.

Example:
    >>> from datetime import UTC, datetime, timedelta
    >>> clock = ManualClock(datetime(2026, 3, 1, 9, tzinfo=UTC))
    >>> clock.advance(timedelta(days=2))
    >>> now(clock).isoformat()
    '2026-03-03T09:00:00+00:00'
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from langgraph_memory.errors import ConfigurationError

__all__ = ["Clock", "ManualClock", "message_time", "now", "now_seconds", "parse_time", "wall_clock"]

Clock = Callable[[], datetime]


def wall_clock() -> datetime:
    """The default clock: the UTC wall clock."""
    return datetime.now(UTC)


def now(clock: Clock | None = None) -> datetime:
    """``clock()`` (the wall clock when ``None``), checked to be timezone-aware."""
    value = (clock or wall_clock)()
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise ConfigurationError(
            f"clock() returned {value!r}, not an aware datetime (a naive datetime or "
            "another type); a clock must return an aware one, "
            "e.g. datetime.now(timezone.utc)."
        )
    return value


def now_seconds(clock: Clock | None = None) -> float:
    """``now(clock)`` as epoch seconds (what TTL columns store)."""
    return now(clock).timestamp()


class ManualClock:
    """A clock that only moves when told: for replaying history and for tests.

    Thread-safe: the background writer may read it while the test advances it.
    """

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ConfigurationError(
                f"ManualClock({start!r}): pass an aware datetime, e.g. "
                "datetime(2026, 1, 1, tzinfo=timezone.utc)."
            )
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return self._now

    def set(self, value: datetime) -> None:
        if value.tzinfo is None:
            raise ConfigurationError(f"ManualClock.set({value!r}): pass an aware datetime.")
        with self._lock:
            self._now = value

    def advance(self, delta: timedelta) -> None:
        with self._lock:
            self._now = self._now + delta


def parse_time(value: Any, tz: Any = UTC) -> datetime | None:
    """An ISO-8601 string, epoch seconds or datetime as an aware datetime; ``None`` if unreadable.

    Naive values are taken to be in ``tz``.
    """
    try:
        if isinstance(value, datetime):
            return value if value.tzinfo else value.replace(tzinfo=tz)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return datetime.fromtimestamp(value, tz=tz)
        if isinstance(value, str) and value.strip():
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=tz)
    except (ValueError, OverflowError, OSError):
        return None
    return None


# Where a LangChain / LangGraph message may carry the time it was said, in lookup order.
_TIME_FIELDS: tuple[tuple[str, str], ...] = (
    ("additional_kwargs", "created_at"),
    ("response_metadata", "created_at"),
    ("additional_kwargs", "timestamp"),
    ("response_metadata", "timestamp"),
)


def message_time(message: Any, clock: Clock | None = None) -> datetime:
    """When ``message`` was said: its own stamp if it carries one, else ``now(clock)``.

    The result is in the clock's time zone, so "明天" means the user's tomorrow
    when the clock is set to the user's zone.
    """
    current = now(clock)
    for attribute, key in _TIME_FIELDS:
        fields = getattr(message, attribute, None)
        if isinstance(fields, Mapping) and key in fields:
            parsed = parse_time(fields[key], current.tzinfo)
            if parsed is not None:
                return parsed.astimezone(current.tzinfo)
    metadata = getattr(message, "metadata", None)  # LangGraph-style message metadata
    if isinstance(metadata, Mapping) and "created_at" in metadata:
        parsed = parse_time(metadata["created_at"], current.tzinfo)
        if parsed is not None:
            return parsed.astimezone(current.tzinfo)
    return current
