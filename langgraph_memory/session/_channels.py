"""How a channel value is stored: whole, or as ranges over items stored once.

A list-valued channel (``messages`` under ``add_messages``) grows by one or two
items per step. Storing the whole list again at every version is what makes
the official saver quadratic. Here every list item is written once, numbered
``seq`` within its (thread, ns, channel); the items a ``put`` adds are stored
together as one *chunk* row covering ``[seq_lo, seq_hi)``. A channel version
stores only *ranges* of item numbers, e.g. ``[[0, 612]]``: "items 0..611, in
this order".

* Append (the common case): the new version's ranges are the previous ones
  extended by the new items, so a version costs the new items plus ~20 bytes,
  and bytes per turn stay flat however long the thread grows.
* Remove / edit / fork: the new list is matched against the previous one item
  by item (identity plus a shallow field check); unchanged runs keep pointing
  at their stored items, changed or new items get new rows. A version whose
  ranges would exceed ``MAX_RANGES`` is stored as one fresh run instead, so a
  read is always one range scan over a bounded list of ranges.
* Reading a version is one indexed query, and never walks a chain of deltas.

Nothing here touches a database: :func:`plan_list_encoding` decides, the shells
execute, and :class:`ListCache` remembers the last list per channel so a
``put`` computes its change without reading anything back.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# A version whose list needs more ranges than this (many scattered edits) is
# rewritten as one run; 64 ranges is ~1 KB of JSON and one range scan.
MAX_RANGES = 64

# A run of new list items is stored as one chunk; cap its size so one append of
# a huge list does not become one multi-megabyte row (and so a read can bound
# its index scan: a chunk starts at most this many items before any item it holds).
MAX_CHUNK_ITEMS = 512

ENCODING_VALUE = "value"
ENCODING_ITEMS = "items"
ENCODING_EMPTY = "empty"

Range = tuple[int, int]  # half-open [lo, hi) of item sequence numbers


def fingerprint(item: Any) -> Any:
    """What must stay the same for an item to count as "already stored".

    Identity alone would miss ``message.content = "edited"`` on an object we
    already stored, so objects with a ``__dict__`` (pydantic messages) also
    compare their field values (a tuple compare: identity first, then ``==``).
    Deep mutation inside a field (appending to ``content`` blocks in place) is
    not detected; LangGraph's reducers create new message objects instead.
    """
    fields = getattr(item, "__dict__", None)
    if fields is None:
        return None
    return tuple(fields.values())


def ranges_to_json(ranges: Sequence[Range]) -> str:
    return json.dumps([[lo, hi] for lo, hi in ranges], separators=(",", ":"))


def ranges_from_json(text: str) -> tuple[Range, ...]:
    return tuple((int(lo), int(hi)) for lo, hi in json.loads(text))


def ranges_length(ranges: Sequence[Range]) -> int:
    return sum(hi - lo for lo, hi in ranges)


def _append_range(out: list[Range], lo: int, hi: int) -> None:
    if hi <= lo:
        return
    if out and out[-1][1] == lo:
        out[-1] = (out[-1][0], hi)
    else:
        out.append((lo, hi))


def slice_ranges(ranges: Sequence[Range], start: int, stop: int) -> list[Range]:
    """The ranges covering list positions ``start:stop`` of a value stored as ``ranges``."""
    out: list[Range] = []
    pos = 0
    for lo, hi in ranges:
        n = hi - lo
        a, b = max(start, pos), min(stop, pos + n)
        if a < b:
            _append_range(out, lo + (a - pos), lo + (b - pos))
        pos += n
        if pos >= stop:
            break
    return out


@dataclass(frozen=True, slots=True)
class CachedList:
    """The last stored list of one (thread, ns, channel), as this process knows it."""

    version: str
    items: tuple[Any, ...]
    marks: tuple[Any, ...]
    ranges: tuple[Range, ...]
    # The channel's next free item number, when this process knows it (it
    # stored the version's new items); else the one-statement put guesses the
    # end of `ranges`, and the database checks the guess.
    next_seq: int | None = None

    def guess_next_seq(self) -> int:
        if self.next_seq is not None:
            return self.next_seq
        return max((hi for _, hi in self.ranges), default=0)


@dataclass(frozen=True, slots=True)
class ListPlan:
    """How to store one list version.

    ``segments`` lists, in order, either ``("old", lo, hi)`` seq ranges of items
    already stored, or ``("new", start, stop)`` slices of ``new_items``. The new
    items get their sequence numbers inside the write transaction
    (``resolve_ranges``), after the current maximum is known.
    ``base_version`` is the version the old ranges come from; the transaction
    checks it still exists (retention in another process may have removed it)
    and falls back to storing every item when it does not.
    """

    base_version: str | None
    segments: tuple[tuple[str, int, int], ...]
    new_items: tuple[Any, ...]
    # Marks of the whole new list, reused from the cache for kept items.
    marks: tuple[Any, ...]

    def resolve_ranges(self, first_new_seq: int) -> tuple[Range, ...]:
        out: list[Range] = []
        for kind, a, b in self.segments:
            if kind == "old":
                _append_range(out, a, b)
            else:
                _append_range(out, first_new_seq + a, first_new_seq + b)
        return tuple(out)


def full_list_plan(value: Sequence[Any], marks: tuple[Any, ...] | None = None) -> ListPlan:
    """Store every item of ``value`` as new rows (no base)."""
    items = tuple(value)
    return ListPlan(
        base_version=None,
        segments=(("new", 0, len(items)),) if items else (),
        new_items=items,
        marks=marks if marks is not None else tuple(fingerprint(x) for x in items),
    )


def plan_list_encoding(value: list[Any], cached: CachedList | None) -> ListPlan:
    """Express ``value`` as runs of already-stored items plus new items.

    Pure append (the common case) costs one pass of identity checks over the
    old prefix. Anything else (removals, edits, a fork from an older version)
    matches the rest item by item and keeps every unchanged run.
    """
    if cached is None:
        return full_list_plan(value)
    old_items, old_marks = cached.items, cached.marks
    n_old, n_new = len(old_items), len(value)
    new_marks: list[Any] = []
    prefix = 0
    limit = min(n_old, n_new)
    # The hot loop of every put (one pass over the whole list): fingerprint()
    # inlined, since a function call per item costs more than the check itself.
    append_mark = new_marks.append
    while prefix < limit:
        item = value[prefix]
        if item is not old_items[prefix]:
            break
        fields = getattr(item, "__dict__", None)
        mark = None if fields is None else tuple(fields.values())
        if mark != old_marks[prefix]:
            break
        append_mark(mark)
        prefix += 1

    segments: list[tuple[str, int, int]] = []
    for lo, hi in slice_ranges(cached.ranges, 0, prefix):
        segments.append(("old", lo, hi))
    new_items: list[Any] = []

    if prefix < n_new:
        # Positions of the not-yet-matched old items, by identity.
        where: dict[int, list[int]] = {}
        for j in range(prefix, n_old):
            where.setdefault(id(old_items[j]), []).append(j)
        used: set[int] = set()
        run_start = run_end = -1  # old positions [run_start, run_end)

        def flush_run() -> None:
            if run_start >= 0:
                for lo, hi in slice_ranges(cached.ranges, run_start, run_end):
                    segments.append(("old", lo, hi))

        for i in range(prefix, n_new):
            item = value[i]
            mark = fingerprint(item)
            new_marks.append(mark)
            match = -1
            if (
                run_start >= 0
                and run_end < n_old
                and old_items[run_end] is item
                and run_end not in used
                and old_marks[run_end] == mark
            ):
                match = run_end
            if match < 0:
                for j in where.get(id(item), ()):
                    if j not in used and old_items[j] is item and old_marks[j] == mark:
                        match = j
                        break
            if match >= 0:
                used.add(match)
                if run_start >= 0 and match == run_end:
                    run_end += 1
                else:
                    flush_run()
                    run_start, run_end = match, match + 1
            else:
                flush_run()
                run_start = run_end = -1
                if segments and segments[-1][0] == "new" and segments[-1][2] == len(new_items):
                    kind, a, _ = segments[-1]
                    segments[-1] = (kind, a, len(new_items) + 1)
                else:
                    segments.append(("new", len(new_items), len(new_items) + 1))
                new_items.append(item)
        flush_run()

    marks = tuple(new_marks)
    plan = ListPlan(
        base_version=cached.version,
        segments=tuple(segments),
        new_items=tuple(new_items),
        marks=marks,
    )
    # Too fragmented to read back in one cheap scan: store the list afresh.
    if len(segments) > MAX_RANGES:
        return full_list_plan(value, marks)
    return plan


class ListCache:
    """LRU of the last stored list per (thread_id, checkpoint_ns, channel).

    Holds our own tuple of the items (never the caller's list, which reducers
    may mutate) and their fingerprints. Thread-safe; ``capacity=0`` disables it.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[tuple[str, str, str], CachedList] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str, str]) -> CachedList | None:
        if self.capacity <= 0:
            return None
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
            return entry

    def put(self, key: tuple[str, str, str], entry: CachedList) -> None:
        if self.capacity <= 0:
            return
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def discard(self, key: tuple[str, str, str]) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def discard_thread(self, thread_id: str) -> None:
        with self._lock:
            for key in [k for k in self._entries if k[0] == thread_id]:
                del self._entries[key]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def fresh_items(self, key: tuple[str, str, str], version: str) -> list[Any] | None:
        """The cached list for ``version`` if no cached item was modified since.

        Serving a read from here skips decoding the whole list; the shallow
        field check keeps an in-place edit of a returned message from leaking
        into what later reads see.
        """
        entry = self.get(key)
        if entry is None or entry.version != version:
            return None
        for item, mark in zip(entry.items, entry.marks, strict=True):
            fields = getattr(item, "__dict__", None)  # fingerprint(item), inlined
            if (None if fields is None else tuple(fields.values())) != mark:
                self.discard(key)
                return None
        return list(entry.items)
