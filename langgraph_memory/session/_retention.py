"""Pure retention planning: which checkpoints to keep, and what becomes garbage.

Everything here works on plain data the shells read from the database, so the
rules are unit-tested without one and shared by every dialect.

Keeping a checkpoint keeps everything needed to read it back:

* its channel-value rows (per-channel versions are shared between checkpoints,
  so a row is garbage only when no kept checkpoint names that version);
* the list items those rows reference (chunks lying wholly outside every kept
  range are garbage);
* for LangGraph's ``DeltaChannel`` channels (those named in the checkpoint's
  ``counters_since_delta_snapshot`` metadata, i.e. with writes since their
  last snapshot), the ancestors back to the nearest one holding a stored
  value (the ``_DeltaSnapshot`` seed), with their pending writes, since
  ``get_delta_channel_history`` replays those writes. Other channels with a
  version but no value (consumed triggers such as ``branch:to:node``) are
  never replayed, so they keep nothing alive.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from langgraph_memory.session._channels import ENCODING_EMPTY, ENCODING_ITEMS, Range

# Far above any item number we will hand out; closes the last gap.
SEQ_INFINITY = 1 << 62


@dataclass(frozen=True, slots=True)
class CheckpointSkeleton:
    """What retention needs to know about one stored checkpoint."""

    checkpoint_id: str
    parent_id: str | None
    channel_versions: Mapping[str, str]
    # DeltaChannel channels whose value here is rebuilt from ancestors' writes.
    delta_channels: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class StoredValue:
    """One ``(channel, version)`` row: its encoding and, for lists, its ranges."""

    channel: str
    version: str
    encoding: str
    ranges: tuple[Range, ...] = ()


@dataclass(frozen=True, slots=True)
class GarbagePlan:
    """What to delete in one (thread, namespace) after choosing the kept checkpoints."""

    checkpoints: tuple[str, ...]
    channel_values: tuple[tuple[str, str], ...]
    # channel -> gaps [lo, hi) in item numbers that no kept version references
    chunk_gaps: Mapping[str, tuple[Range, ...]]

    @property
    def is_empty(self) -> bool:
        return not (self.checkpoints or self.channel_values or self.chunk_gaps)


@dataclass(frozen=True, slots=True)
class SweepReport:
    """What ``sweep()`` did (or, with ``dry_run=True``, would do).

    Attributes:
        dry_run: True when nothing was deleted.
        expired_threads: threads idle longer than ``thread_ttl_seconds``.
        evicted_threads: threads dropped (oldest activity first) to get under ``max_bytes``.
        pruned_checkpoints: checkpoints beyond ``keep_last`` removed from live threads.
        bytes_before: database size when the sweep started.
        bytes_after: database size afterwards (equal to ``bytes_before`` on a dry run;
            freed pages are reused, call ``vacuum()`` to shrink the file).
    """

    dry_run: bool
    expired_threads: tuple[str, ...] = ()
    evicted_threads: tuple[str, ...] = ()
    pruned_checkpoints: int = 0
    bytes_before: int = 0
    bytes_after: int = 0

    @property
    def deleted_threads(self) -> tuple[str, ...]:
        return self.expired_threads + self.evicted_threads


@dataclass(frozen=True, slots=True)
class ThreadStats:
    """Storage used by one thread (payload bytes, before SQLite page overhead)."""

    thread_id: str
    checkpoints: int
    checkpoint_bytes: int
    channel_value_bytes: int
    item_bytes: int
    write_bytes: int
    updated_at: float

    @property
    def total_bytes(self) -> int:
        return self.checkpoint_bytes + self.channel_value_bytes + self.item_bytes + self.write_bytes


@dataclass(frozen=True, slots=True)
class StorageStats:
    """``storage_stats()``: the file, and per-thread payload."""

    database_bytes: int
    free_bytes: int
    threads: tuple[ThreadStats, ...] = field(default_factory=tuple)

    @property
    def thread_count(self) -> int:
        return len(self.threads)


def keep_newest(skeletons: Sequence[CheckpointSkeleton], keep: int) -> set[str]:
    """Ids of the ``keep`` newest checkpoints (ids sort by creation time)."""
    ordered = sorted((s.checkpoint_id for s in skeletons), reverse=True)
    return set(ordered[:keep])


def close_over_delta_history(
    kept: set[str],
    skeletons: Sequence[CheckpointSkeleton],
    stored: Mapping[tuple[str, str], StoredValue],
) -> set[str]:
    """Add the ancestors a kept checkpoint's ``DeltaChannel`` values are rebuilt from.

    A delta channel with no stored value at the kept checkpoint is rebuilt by
    replaying ancestor writes back to the nearest ancestor whose version of
    that channel has a stored value; keep that whole path, seed included.
    """
    by_id = {s.checkpoint_id: s for s in skeletons}
    result = set(kept)
    # (checkpoint, channel) pairs already walked, so overlapping paths cost once.
    walked: set[tuple[str, str]] = set()
    for cid in sorted(kept):
        start = by_id.get(cid)
        if start is None:
            continue
        for channel in sorted(start.delta_channels):
            version = start.channel_versions.get(channel)
            if version is None:
                continue
            row = stored.get((channel, version))
            if row is not None and row.encoding != ENCODING_EMPTY:
                continue
            cursor = start.parent_id
            steps = 0
            while cursor is not None and cursor in by_id and steps <= len(by_id):
                steps += 1
                if (cursor, channel) in walked:
                    break
                walked.add((cursor, channel))
                result.add(cursor)
                ancestor = by_id[cursor]
                anc_version = ancestor.channel_versions.get(channel)
                anc_row = stored.get((channel, anc_version)) if anc_version is not None else None
                if anc_row is not None and anc_row.encoding != ENCODING_EMPTY:
                    break  # the seed: its value and its own writes are enough
                cursor = ancestor.parent_id
    return result


def merge_ranges(ranges: Iterable[Range]) -> list[Range]:
    out: list[Range] = []
    for lo, hi in sorted(r for r in ranges if r[1] > r[0]):
        if out and lo <= out[-1][1]:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def gaps_between(kept: Sequence[Range]) -> tuple[Range, ...]:
    """The complement of sorted, merged ``kept`` ranges within ``[0, SEQ_INFINITY)``."""
    gaps: list[Range] = []
    cursor = 0
    for lo, hi in kept:
        if lo > cursor:
            gaps.append((cursor, lo))
        cursor = max(cursor, hi)
    gaps.append((cursor, SEQ_INFINITY))
    return tuple(gaps)


def plan_garbage(
    skeletons: Sequence[CheckpointSkeleton],
    kept: set[str],
    stored: Mapping[tuple[str, str], StoredValue],
    item_channels: Iterable[str],
) -> GarbagePlan:
    """Everything in one (thread, ns) that no kept checkpoint needs any more."""
    live_versions: set[tuple[str, str]] = set()
    for s in skeletons:
        if s.checkpoint_id in kept:
            live_versions.update(s.channel_versions.items())
    dead_values = tuple(sorted(key for key in stored if key not in live_versions))
    live_ranges: dict[str, list[Range]] = {}
    for key in live_versions:
        row = stored.get(key)
        if row is not None and row.encoding == ENCODING_ITEMS:
            live_ranges.setdefault(row.channel, []).extend(row.ranges)
    chunk_gaps = {
        channel: gaps_between(merge_ranges(live_ranges.get(channel, ())))
        for channel in sorted(set(item_channels))
    }
    return GarbagePlan(
        checkpoints=tuple(
            sorted(s.checkpoint_id for s in skeletons if s.checkpoint_id not in kept)
        ),
        channel_values=dead_values,
        chunk_gaps=chunk_gaps,
    )


def threads_to_evict(
    activity: Sequence[tuple[str, float]],
    payload_bytes: Mapping[str, int],
    *,
    used_bytes: int,
    max_bytes: int,
    already_deleted: Iterable[str] = (),
) -> list[str]:
    """Oldest-active threads to drop until the estimate falls under ``max_bytes``."""
    skip = set(already_deleted)
    remaining = used_bytes - sum(payload_bytes.get(t, 0) for t in skip)
    evict: list[str] = []
    for thread_id, _updated in sorted(activity, key=lambda a: a[1]):
        if remaining <= max_bytes:
            break
        if thread_id in skip:
            continue
        evict.append(thread_id)
        remaining -= payload_bytes.get(thread_id, 0)
    return evict
