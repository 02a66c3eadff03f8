"""``list()`` paging: the validated :class:`ListQuery` and its keyset :class:`ListPager`.

``SaverCore.list_query`` (``_core_reads.py``) builds the query; the shells
read one page per transaction (``list_page_txn``) and loop over the pager
(``_bridges.iter_pages``), holding no lock while they yield.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph_memory.session._reads import RawCheckpoint

# How many rows one list() page reads before the lock is released and rows are yielded.
LIST_PAGE_SIZE = 100


@dataclass(frozen=True, slots=True)
class ListQuery:
    thread_id: str | None
    checkpoint_ns: str | None
    checkpoint_id: str | None
    before_id: str | None
    metadata_filter: Mapping[str, Any] | None
    limit: int | None
    # (thread id, user id) to check before the first page (session/_owner.py).
    owner: tuple[str, str] | None = None


class ListPager:
    """Keyset paging of one ``list()`` call: the size of the next page and where
    it starts. Shells loop ``while (size := pager.next_size()) is not None``."""

    def __init__(self, query: ListQuery) -> None:
        self.query = query
        self.remaining = query.limit
        self.after: tuple[str, str, str] | None = None
        self.finished = False

    def next_size(self) -> int | None:
        if self.finished or (self.remaining is not None and self.remaining <= 0):
            return None
        return LIST_PAGE_SIZE if self.remaining is None else min(LIST_PAGE_SIZE, self.remaining)

    def advance(self, raws: Sequence[RawCheckpoint], size: int) -> None:
        if len(raws) < size:
            self.finished = True
        if raws:
            last = raws[-1]
            self.after = (last.checkpoint_id, last.thread_id, last.checkpoint_ns)
        if self.remaining is not None:
            self.remaining -= len(raws)
