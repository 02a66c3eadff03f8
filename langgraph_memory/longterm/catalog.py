"""The catalog: item rows, keyword index and partition map, behind one interface.

:class:`Catalog` is what the store's parts ask of a catalog; :class:`SqliteCatalog`
is the embedded dialect (one file, one connection, guarded by a lock so the
sync API and the async shells, which run it in worker threads, can share it).
Every statement comes from the dialect's module (``catalog.sql``, here
``_sql_sqlite.py``); every ``WHERE`` fragment from ``where.py``.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from langgraph_memory._migrations import migrate
from langgraph_memory.encryption import EncryptionKeys
from langgraph_memory.longterm import _sql_sqlite as _sql
from langgraph_memory.longterm.rows import ItemRow, term_scope
from langgraph_memory.longterm.tokenize import match_expression, scope_tokens

# Cached document frequencies are dropped past this many terms (memory bound).
MAX_CACHED_TERMS = 200_000
# Below this many items a partition's query is cheap whatever its terms, and
# dropping "common" terms of a handful of memories would only change rankings.
MIN_ITEMS_FOR_TERM_PRUNING = 100


def choose_terms(
    unique: list[str], items: int, doc_freq: dict[str, int], max_share: float
) -> list[str]:
    """The terms worth querying, given the partition's item count and each term's
    document frequency (see :meth:`SqliteCatalog.plan_terms`; every dialect uses this)."""
    if items < MIN_ITEMS_FOR_TERM_PRUNING:
        return unique
    common = {t for t in unique if doc_freq.get(t, 0) > max_share * items}
    if len(common) == len(unique):
        return unique  # nothing but common terms: better than no keyword side at all
    # A query whose only matching terms are common gets no keyword hits: its
    # vector side ranks alone (the retrieval-quality test measures this).
    return [t for t in unique if t not in common and doc_freq.get(t, 0) > 0]


def _scope_body(partition: str, body: str | None) -> str:
    return scope_tokens(body or "", term_scope(partition))


class Catalog(Protocol):
    """What the store's parts need from a catalog dialect.

    ``sql`` is the dialect's statement module (named constants; templates take
    ``{where}``/``{marks}`` from ``where.py``). ``transaction`` yields a
    connection whose ``execute(sql, params)`` returns a cursor; ``reading``
    yields one for reads that must see a consistent state without a write lock.
    """

    # The store's ``encryption=`` keyring (set by the store): values are sealed with it.
    encryption: EncryptionKeys | None

    path: str
    sql: ModuleType
    dialect: str  # "sqlite" | "postgres": what where.py's value filters compile to

    def close(self) -> None: ...

    def match_params(self, scoped_terms: list[str]) -> tuple[Any, ...] | None:
        """The keyword templates' leading parameters for these planned terms
        (``None``: no terms, no keyword side)."""
        ...

    def transaction(self, *, changes_terms: bool = True) -> Any: ...

    def reading(self) -> Any: ...

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

    def query_many(self, reads: Sequence[tuple[str, Sequence[Any]]]) -> list[list[tuple[Any, ...]]]:
        """Independent reads, each one's rows (one round trip where the dialect can)."""
        ...

    def items(self, sql: str, params: Sequence[Any] = ()) -> list[ItemRow]: ...

    def id_list(self, ids: list[Any]) -> tuple[str, list[Any]]:
        """The ``{marks}`` of the ``*_BY_ROWID`` / ``*_BY_ITEM_ID`` templates for
        ``ids`` and the parameters they take."""
        ...

    def plan_terms(
        self, partition: str, scoped_terms: Sequence[str], max_share: float
    ) -> list[str]: ...

    def plan_query(
        self, partition: str, scoped_terms: Sequence[str], max_share: float
    ) -> tuple[list[str], tuple[Any, ...] | None]:
        """``plan_terms`` and the partition's ``SELECT_PARTITION`` row (or ``None``)."""
        ...

    def meta(self, name: str) -> str | None: ...

    def set_meta(self, name: str, value: str) -> None: ...

    def scrub(self, *, vacuum: bool = True) -> None: ...

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once the outermost transaction open on this thread
        commits (never after a rollback); at once when none is open."""
        ...

    def mark_erased(self, conn: Any) -> None:
        """In a transaction that deleted rows, record what ``erase_pending`` owes."""
        ...

    def erase_pending(self) -> int:
        """Erase what deletes left for later (Postgres: ``VACUUM FULL``); 1 if it ran."""
        ...


class CatalogHelpers:
    """What every dialect derives from its ``query``/``transaction`` the same way."""

    sql: ModuleType
    # The store's ``encryption=`` keyring: values are sealed and opened with it.
    encryption: EncryptionKeys | None = None

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def transaction(self, *, changes_terms: bool = True) -> Any:
        raise NotImplementedError

    def query_many(self, reads: Sequence[tuple[str, Sequence[Any]]]) -> list[list[tuple[Any, ...]]]:
        return [self.query(sql, params) for sql, params in reads]

    def items(self, sql: str, params: Sequence[Any] = ()) -> list[ItemRow]:
        return [ItemRow.from_tuple(r, self.encryption) for r in self.query(sql, params)]

    def id_list(self, ids: list[Any]) -> tuple[str, list[Any]]:
        return ", ".join("?" for _ in ids), ids

    def plan_terms(
        self, partition: str, scoped_terms: Sequence[str], max_share: float
    ) -> list[str]:
        raise NotImplementedError

    def plan_query(
        self, partition: str, scoped_terms: Sequence[str], max_share: float
    ) -> tuple[list[str], tuple[Any, ...] | None]:
        terms = self.plan_terms(partition, scoped_terms, max_share) if scoped_terms else []
        rows = self.query(self.sql.SELECT_PARTITION, (partition,))
        return terms, (tuple(rows[0]) if rows else None)

    def meta(self, name: str) -> str | None:
        rows = self.query(self.sql.SELECT_META, (name,))
        return str(rows[0][0]) if rows else None

    def set_meta(self, name: str, value: str) -> None:
        with self.transaction() as conn:
            conn.execute(self.sql.UPSERT_META, (name, value))


class SqliteCatalog(CatalogHelpers):
    """Owns the SQLite file of a :class:`ChromaMemoryStore` (the embedded dialect)."""

    sql: ModuleType = _sql
    dialect = "sqlite"

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self.lock = threading.RLock()
        # Term statistics (per-partition item counts and scoped terms' document
        # frequencies) are cached until the file changes: ``_writes`` counts this
        # connection's write transactions, ``PRAGMA data_version`` other
        # connections' commits. Reading them costs ~0.3 ms per query otherwise.
        self._writes = 0
        # Callbacks of the open outermost transaction (``after_commit``); None outside one.
        self._on_commit: list[Callable[[], None]] | None = None
        self._stats_version: tuple[int, int] | None = None
        self._partition_items: dict[str, int] = {}
        self._doc_freq: dict[str, int] = {}
        for pragma in _sql.PRAGMAS:
            self.conn.execute(pragma)
        # Used by migration 0002 to rewrite pre-0002 keyword bodies.
        self.conn.create_function(_sql.SCOPE_TOKENS_FUNCTION, 2, _scope_body, deterministic=True)
        self._migrate()
        self.conn.execute(_sql.CREATE_VOCAB_VIEW)

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    def _migrate(self) -> None:
        @contextmanager
        def transaction() -> Iterator[Callable[..., list[Any]]]:
            with self.transaction() as conn:
                yield lambda sql, params=(): conn.execute(sql, params).fetchall()

        migrate(transaction, _sql.MIGRATION_TABLE, _sql.MIGRATIONS, where=repr(self.path))

    @contextmanager
    def transaction(self, *, changes_terms: bool = True) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on error); re-entrant under the lock.

        ``changes_terms=False`` promises the transaction neither adds nor removes
        items or keyword rows (access statistics), so cached term statistics stay
        valid; anything else invalidates them.
        """
        with self.lock:
            if changes_terms:
                self._writes += 1
            if self.conn.in_transaction:
                yield self.conn
                return
            self.conn.execute("BEGIN IMMEDIATE")
            callbacks: list[Callable[[], None]] = []
            self._on_commit = callbacks
            try:
                yield self.conn
            except BaseException:
                self._on_commit = None
                self.conn.execute("ROLLBACK")
                raise
            self._on_commit = None
            self.conn.execute("COMMIT")
        for callback in callbacks:
            callback()

    def after_commit(self, callback: Callable[[], None]) -> None:
        with self.lock:
            if self._on_commit is not None:
                self._on_commit.append(callback)
                return
        callback()

    def match_params(self, scoped_terms: list[str]) -> tuple[Any, ...] | None:
        """``(MATCH expression,)`` (see ``tokenize.match_expression``)."""
        expression = match_expression(scoped_terms)
        return None if expression is None else (expression,)

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """The connection, under the lock, for reads (no transaction is opened)."""
        with self.lock:
            yield self.conn

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.lock:
            return self.conn.execute(sql, params).fetchall()

    def plan_terms(
        self, partition: str, scoped_terms: Sequence[str], max_share: float
    ) -> list[str]:
        """The query terms worth asking FTS5 for, from each term's document frequency.

        FTS5 computes BM25 for every matching row and, per row, for every query
        term, so a query's cost is matching rows x terms. Two kinds of term are
        left out:

        * terms no item of the partition contains: they add nothing to any
          row's score (of a dialogue question's 12 terms, 10 matched nothing at
          10k memories). The counts are cached only until the file changes (any
          write here or by another connection), so a memory written a moment
          ago is never missed;
        * terms found in more than ``max_share`` of the partition's items
          (unless every query term is): FTS5 clamps their IDF to almost
          nothing, yet they matched most rows ("user" in 56% of 10k memories:
          7 ms with it, 2 ms without).

        Partitions under ``MIN_ITEMS_FOR_TERM_PRUNING`` items keep every term:
        their queries are cheap whatever the terms.
        """
        unique = list(dict.fromkeys(scoped_terms))
        if not unique:
            return []
        with self.lock:
            version = (self._writes, int(self.conn.execute(_sql.DATA_VERSION).fetchone()[0]))
            if version != self._stats_version or len(self._doc_freq) > MAX_CACHED_TERMS:
                self._partition_items.clear()
                self._doc_freq.clear()
                self._stats_version = version
            items = self._partition_items.get(partition)
            if items is None:
                row = self.conn.execute(_sql.COUNT_PARTITION_ITEMS, (partition,)).fetchone()
                items = self._partition_items[partition] = int(row[0])
            if items < MIN_ITEMS_FOR_TERM_PRUNING:
                return unique
            unknown = [t for t in unique if t not in self._doc_freq]
            for start in range(0, len(unknown), 200):
                chunk = unknown[start : start + 200]
                marks = ", ".join("?" for _ in chunk)
                found = dict(
                    self.conn.execute(_sql.SELECT_TERM_DOC_FREQ.format(marks=marks), chunk)
                )
                for term in chunk:
                    self._doc_freq[term] = int(found.get(term, 0))
            doc_freq = {t: self._doc_freq[t] for t in unique}
        return choose_terms(unique, items, doc_freq, max_share)

    def scrub(self, *, vacuum: bool = True) -> None:
        """Push deleted text out of the file: FTS5 optimize, VACUUM, WAL truncate.

        ``vacuum=False`` (after a single delete) skips the VACUUM: ``secure_delete``
        already zeroed the freed pages, and the optimize rewrote the FTS5
        segments that still held the deleted row's tokens. The WAL truncate
        drops the old page images the log still held.
        """
        with self.lock:
            self._writes += 1
            self.conn.execute(_sql.FTS_OPTIMIZE)
            if vacuum:
                self.conn.execute(_sql.VACUUM)
            self.conn.execute(_sql.WAL_TRUNCATE)

    def mark_erased(self, conn: Any) -> None:
        """Nothing to record: a delete's text leaves the file at once (``scrub``)."""

    def erase_pending(self) -> int:
        """0: deletes scrub the file at once here (Postgres defers to a ``VACUUM FULL``)."""
        return 0
