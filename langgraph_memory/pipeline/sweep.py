"""The scheduled sweep: expiry and decay applied to the store on an interval of memory time.

``store.expire_due`` marks time-boxed facts whose ``expires_at`` passed as
``expired`` (searches hide them already; the sweep makes the state explicit
and visible in history); ``store.archive_stale`` applies decay (low-importance
memories idle for long are archived); and the keyword index is scrubbed: a
value overwritten in place (``put`` over an existing key) leaves its old tokens
in FTS5's segments until an ``optimize``. Deletes scrub at once; an overwrite
does not, because the optimize rewrites the whole index (measured: 2.9 ms at
1,000 items, 7.1 ms at 5,000, against a 12-16 ms ``put``; it grows with the
index), so the sweep runs it once per interval instead. Nothing ran them before: the
``MemoryWriter``'s background worker now calls ``Sweeper.maybe_sweep`` on
every loop, and ``writer.sweep()`` / ``writer.maybe_sweep()`` serve a
cron-style job or a sync-mode app.

The interval is measured on the injectable clock (memory time), so a replayed
history under a ``ManualClock`` sweeps as its clock moves.

Example:
    >>> import tempfile
    >>> from datetime import UTC, datetime, timedelta
    >>> from langgraph_memory.clock import ManualClock
    >>> from langgraph_memory.embeddings import HashingEmbeddings
    >>> from langgraph_memory.longterm import ChromaMemoryStore
    >>> clock = ManualClock(datetime(2026, 12, 1, tzinfo=UTC))
    >>> store = ChromaMemoryStore.embedded(tempfile.mkdtemp(), embeddings=HashingEmbeddings())
    >>> sweeper = Sweeper(store, MemorySweepPolicy(interval=timedelta(hours=1)), clock=clock)
    >>> sweeper.maybe_sweep().expired, sweeper.maybe_sweep()
    (0, None)
    >>> clock.advance(timedelta(hours=1))
    >>> sweeper.maybe_sweep().at.isoformat()
    '2026-12-01T01:00:00+00:00'
    >>> store.close()
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from langgraph_memory.clock import Clock
from langgraph_memory.clock import now as clock_now
from langgraph_memory.errors import ConfigurationError

logger = logging.getLogger(__name__)

__all__ = ["MemorySweepPolicy", "MemorySweepReport", "Sweeper"]


@dataclass(frozen=True, slots=True)
class MemorySweepPolicy:
    """When and how expiry and decay are applied to the store.

    Args:
        interval: memory time between sweeps (the writer's clock; default 1 hour).
        expire: run ``store.expire_due`` (default ``True``).
        archive: run ``store.archive_stale`` (default ``True``).
        archive_threshold: decayed importance below which an idle memory is
            archived (``importance * 0.5 ** (idle_days / half_life)``; default 0.05).
        archive_min_idle_days: never archive what was used or updated more
            recently than this (default 90 days).
        archive_half_life_days: half-life of the decay (default 180 days). Conservative
            on purpose: a safety fact (importance 0.95) said once and never recalled is
            archived only after ~2 years (0.95 * 0.5 ** (765 / 180) < 0.05), a raw
            evidence turn (0.3) after ~15 months; the store's own default half-life (30
            days) would archive an unrecalled allergy after four months.
        scrub_keyword_index: push overwritten values' old tokens out of the
            keyword index (FTS5 ``optimize`` + WAL truncate on a SQLite catalog;
            nothing to do on Postgres, see ``erase_pending``).
        erase_pending: on Postgres, ``VACUUM FULL`` the tables that deletes since
            the last sweep left dead tuples in: the store's catalog
            (``store.erase_pending()``) and, given ``MemoryWriter(checkpointer=...)``,
            the saver's (``saver.erase_pending()``). One rewrite per interval for any
            number of deletes, none when nothing was deleted; a no-op on SQLite,
            which erases at once (default ``True``).

    Example:
        >>> from datetime import timedelta
        >>> MemorySweepPolicy(interval=timedelta(minutes=10)).archive_min_idle_days
        90.0
        >>> MemorySweepPolicy(interval=timedelta(0))
        Traceback (most recent call last):
        ...
        langgraph_memory.errors.ConfigurationError: MemorySweepPolicy(interval=datetime.timedelta(0)); use a positive timedelta, e.g. timedelta(hours=1), or sweep=False to turn sweeping off.
    """

    interval: timedelta = timedelta(hours=1)
    expire: bool = True
    archive: bool = True
    archive_threshold: float = 0.05
    archive_min_idle_days: float = 90.0
    archive_half_life_days: float = 180.0
    scrub_keyword_index: bool = True
    erase_pending: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.interval, timedelta) or self.interval <= timedelta(0):
            raise ConfigurationError(
                f"MemorySweepPolicy(interval={self.interval!r}); use a positive timedelta, e.g. "
                "timedelta(hours=1), or sweep=False to turn sweeping off."
            )
        if not 0.0 <= self.archive_threshold <= 1.0:
            raise ConfigurationError(
                f"MemorySweepPolicy(archive_threshold={self.archive_threshold!r}); "
                "use a value between 0 and 1."
            )
        if self.archive_half_life_days <= 0:
            raise ConfigurationError(
                f"MemorySweepPolicy(archive_half_life_days={self.archive_half_life_days!r}); "
                "use days > 0."
            )
        if self.archive_min_idle_days < 0:
            raise ConfigurationError(
                f"MemorySweepPolicy(archive_min_idle_days={self.archive_min_idle_days!r}); use days >= 0."
            )


@dataclass(frozen=True, slots=True)
class MemorySweepReport:
    """What one sweep did: when (memory time), how many memories it expired /
    archived, whether it scrubbed the keyword index, and how many Postgres
    relations (the catalog counts as one) it rewrote to erase deleted rows."""

    at: datetime
    expired: int = 0
    archived: int = 0
    keyword_index_scrubbed: bool = False
    erased_relations: int = 0


class Sweeper:
    """Runs a ``MemorySweepPolicy`` against a store; thread-safe.

    Args:
        store: any store; ``expire_due`` / ``archive_stale`` are used when it has them.
        policy: the schedule and decay settings; ``None`` disables ``maybe_sweep``
            (``sweep`` still runs, with the default settings).
        clock: memory time (``langgraph_memory.clock``; default the UTC wall clock).
        checkpointer: a saver whose pending erasure (``erase_pending``) the sweep applies too.
    """

    def __init__(
        self,
        store: Any,
        policy: MemorySweepPolicy | None,
        *,
        clock: Clock | None = None,
        checkpointer: Any = None,
    ):
        self.store = store
        self.checkpointer = checkpointer
        self.policy = policy
        self.clock = clock
        self.last: MemorySweepReport | None = None
        self._next: datetime | None = None  # memory time; None: at the first chance
        self._lock = threading.Lock()

    def sweep(self) -> MemorySweepReport:
        """Apply expiry and decay to the whole store now."""
        policy = self.policy or MemorySweepPolicy()
        at = clock_now(self.clock)
        expire = getattr(self.store, "expire_due", None)
        archive = getattr(self.store, "archive_stale", None)
        expired = expire(now=at) if policy.expire and callable(expire) else 0
        archived = (
            archive(
                threshold=policy.archive_threshold,
                min_idle_days=policy.archive_min_idle_days,
                half_life_days=policy.archive_half_life_days,
                now=at,
            )
            if policy.archive and callable(archive)
            else 0
        )
        scrub = getattr(getattr(self.store, "catalog", None), "scrub", None)
        scrubbed = policy.scrub_keyword_index and callable(scrub)
        if scrubbed:
            scrub(vacuum=False)  # type: ignore[misc]
        erased = 0
        if policy.erase_pending:
            for owner in (self.store, self.checkpointer):
                erase = getattr(owner, "erase_pending", None)
                erased += int(erase()) if callable(erase) else 0
        report = MemorySweepReport(at, int(expired), int(archived), scrubbed, erased)
        self.last = report
        if expired or archived:
            logger.info("memory sweep: expired %d and archived %d memories", expired, archived)
        return report

    def maybe_sweep(self) -> MemorySweepReport | None:
        """Sweep when the policy's interval of memory time has passed; never raises."""
        if self.policy is None:
            return None
        with self._lock:
            at = clock_now(self.clock)
            if self._next is not None and at < self._next:
                return None
            self._next = at + self.policy.interval
            try:
                return self.sweep()
            except Exception:  # a failing sweep must not kill the worker or fail a turn
                logger.exception("memory sweep failed; retrying at the next interval")
                return None
