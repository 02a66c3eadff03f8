"""The Postgres dialect of the catalog: one database shared by every app instance.

Items, typed columns, TTL, partitions (with their cache versions) and the
keyword index live in Postgres (statements in ``_sql_postgres.py``); vectors on
the Chroma server. Searched partitions' keyword postings are copied into the
process (``postings.py``) and used while the partition's keyword version in the
catalog is the one they were read with, so another instance's write is seen by
the next search. Connections come from a ``psycopg_pool.ConnectionPool``; a
transaction pins one connection to the calling thread, so the store's parts
(which read the partition layout inside their write transactions, as on SQLite)
see their own uncommitted writes.

Example (needs a Postgres server, so not run as a doctest)::

    catalog = PostgresCatalog("postgresql://postgres@127.0.0.1:5432/app")
    store = ChromaMemoryStore.from_http("http://127.0.0.1:8000", catalog=catalog,
                                        embeddings=HashingEmbeddings())
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from types import ModuleType
from typing import Any

from langgraph_memory._extras import require_extra
from langgraph_memory._migrations import migrate
from langgraph_memory._pg_erase import wait_for_older_snapshots
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.longterm import _sql_postgres as _sql
from langgraph_memory.longterm._state import RankedKeywords
from langgraph_memory.longterm.catalog import (
    MIN_ITEMS_FOR_TERM_PRUNING,
    CatalogHelpers,
    choose_terms,
)
from langgraph_memory.longterm.postings import (
    DEFAULT_KEYWORD_CACHE_BYTES,
    KeywordPostings,
    PartitionPostings,
    bm25_top,
)

DEFAULT_POOL_SIZE = 8


@lru_cache(maxsize=1024)
def to_psycopg(sql: str) -> str:
    """``?`` placeholders (shared by every dialect's statements) -> psycopg's ``%s``."""
    return sql.replace("%", "%%").replace("?", "%s")


def redact_dsn(dsn: str) -> str:
    """The DSN without its password, for messages."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", re.sub(r"password=\S+", "password=***", dsn))


def _configure(conn: Any) -> None:
    """Session settings of every pooled connection (see ``SESSION_SETTINGS``)."""
    for statement in _sql.SESSION_SETTINGS:
        conn.execute(statement)


class _Connection:
    """A psycopg connection that speaks the dialect-neutral ``execute(sql, params)``."""

    __slots__ = ("raw",)

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.raw.execute(to_psycopg(sql), list(params))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        # psycopg pipelines these: one round trip for the lot, not one per row.
        with self.raw.cursor() as cur:
            cur.executemany(to_psycopg(sql), [list(r) for r in rows])


class PostgresCatalog(CatalogHelpers):
    """The catalog of a :class:`ChromaMemoryStore` in a shared Postgres database.

    Args:
        dsn: ``postgresql://...`` connection string (psycopg 3).
        pool_size: Most connections this instance opens.
        connect_timeout: Seconds to wait for the first connection before giving up.
        keyword_cache_bytes: Bound of the in-process copy of searched partitions'
            keyword postings (``postings.py``); 0 keeps none between searches
            (each search's first statement then reads its terms' postings).
    """

    sql: ModuleType = _sql
    dialect = "postgres"

    def __init__(
        self,
        dsn: str,
        *,
        pool_size: int = DEFAULT_POOL_SIZE,
        connect_timeout: float = 10.0,
        keyword_cache_bytes: int = DEFAULT_KEYWORD_CACHE_BYTES,
    ) -> None:
        require_extra("postgres", feature="catalog='postgresql://...' (PostgresCatalog)")
        from psycopg_pool import ConnectionPool

        if not isinstance(dsn, str) or not dsn.startswith(("postgresql://", "postgres://")):
            raise ConfigurationError(
                f"catalog={dsn!r}; pass a 'postgresql://user@host:5432/db' connection string."
            )
        if pool_size < 1:
            raise ConfigurationError(f"pool_size={pool_size!r}; use an integer >= 1.")
        if keyword_cache_bytes < 0:
            raise ConfigurationError(
                f"keyword_cache_bytes={keyword_cache_bytes!r}; use 0 (off) or more bytes."
            )
        self.path = redact_dsn(dsn)
        self._local = threading.local()
        self.pool = ConnectionPool(
            dsn,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True},
            configure=_configure,
            open=False,
            name="lgm-longterm-catalog",
        )
        try:
            self.pool.open(wait=True, timeout=connect_timeout)
        except Exception as exc:
            self.pool.close()
            raise ConfigurationError(
                f"Could not connect to the catalog database {self.path}: {exc}. Start Postgres "
                "(or fix the DSN) and open the store again."
            ) from exc
        # Searched partitions' postings, each valid at its keyword version (postings.py),
        # and the index's (N, tokens) as the latest plan read them.
        self.keywords = KeywordPostings(keyword_cache_bytes)
        self._index_totals = (0, 0)
        self._migrate()

    def _migrate(self) -> None:
        @contextmanager
        def transaction() -> Iterator[Any]:
            with self.transaction() as conn:

                def execute(sql: str, params: Sequence[Any] = ()) -> list[Any]:
                    cur = conn.execute(sql, params)
                    return cur.fetchall() if cur.description else []

                yield execute

        migrate(transaction, _sql.MIGRATION_TABLE, _sql.MIGRATIONS, where=self.path)

    def close(self) -> None:
        self.pool.close()

    def match_params(self, scoped_terms: list[str]) -> tuple[Any, ...] | None:
        """``(terms, document frequencies)`` for the SQL keyword statements, from the
        postings :meth:`plan_query` just copied (counted again if another thread
        replaced or evicted that copy meanwhile)."""
        if not scoped_terms:
            return None
        # The copy this thread's plan_query just read (match_params follows it).
        entry: PartitionPostings | None = getattr(self._local, "planned", None)
        docs = [
            len(entry.terms[t][0]) if entry is not None and t in entry.terms else None
            for t in scoped_terms
        ]
        missing = [t for t, n in zip(scoped_terms, docs, strict=True) if n is None]
        found = dict(self.query(_sql.SELECT_DOC_FREQ, (missing,))) if missing else {}
        return list(scoped_terms), [
            float(found.get(t, 0) if n is None else n)
            for t, n in zip(scoped_terms, docs, strict=True)
        ]

    @contextmanager
    def transaction(self, *, changes_terms: bool = True) -> Iterator[_Connection]:
        """One transaction on a pooled connection, pinned to this thread; re-entrant."""
        current: _Connection | None = getattr(self._local, "conn", None)
        if current is not None:
            yield current
            return
        callbacks: list[Callable[[], None]] = []
        with self.pool.connection() as raw, raw.transaction():
            conn = _Connection(raw)
            self._local.conn = conn
            self._local.on_commit = callbacks
            try:
                yield conn
            finally:
                self._local.conn = None
                self._local.on_commit = None
        for callback in callbacks:  # only reached once the transaction committed
            callback()

    def after_commit(self, callback: Callable[[], None]) -> None:
        pending: list[Callable[[], None]] | None = getattr(self._local, "on_commit", None)
        if pending is None:
            callback()
        else:
            pending.append(callback)

    @contextmanager
    def reading(self) -> Iterator[_Connection]:
        current: _Connection | None = getattr(self._local, "conn", None)
        if current is not None:
            yield current
            return
        with self.pool.connection() as raw:
            yield _Connection(raw)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.reading() as conn:
            rows: list[tuple[Any, ...]] = conn.execute(sql, params).fetchall()
            return rows

    def id_list(self, ids: list[Any]) -> tuple[str, list[Any]]:
        """One array parameter (see ``SELECT_ROWS_BY_ROWID_TEMPLATE``)."""
        return "?", [ids]

    def query_many(self, reads: Sequence[tuple[str, Sequence[Any]]]) -> list[list[tuple[Any, ...]]]:
        """Independent reads in one round trip (psycopg pipeline mode): each costs
        0.3-2 ms of waiting on a busy machine, their execution a fraction of that."""
        if len(reads) < 2:
            return [self.query(sql, params) for sql, params in reads]
        with self.reading() as conn:
            with conn.raw.pipeline():
                cursors = [conn.execute(sql, params) for sql, params in reads]
            return [cur.fetchall() for cur in cursors]

    def plan_terms(
        self, partition: str, scoped_terms: Sequence[str], max_share: float
    ) -> list[str]:
        """Same rule as :meth:`SqliteCatalog.plan_terms`, statistics from the shared index."""
        return self.plan_query(partition, scoped_terms, max_share)[0]

    def plan_query(
        self, partition: str, scoped_terms: Sequence[str], max_share: float
    ) -> tuple[list[str], tuple[Any, ...] | None]:
        """The planned terms (:meth:`SqliteCatalog.plan_terms`'s rule) and the
        partition's layout in one statement (``SELECT_PLAN``), which also brings
        the postings of the terms this instance has no current copy of. A second
        one only if another thread replaced the copy this read was extending."""
        unique = list(dict.fromkeys(scoped_terms))
        cached = self.keywords.get(partition)
        version = None if cached is None else cached.version
        missing = [t for t in unique if cached is None or t not in cached.terms]
        entry = None
        for attempt in range(2):
            docs, tokens, *layout, kw_version, items, found = self.query(
                _sql.SELECT_PLAN,
                (version, partition, version, missing, unique, partition, partition),
            )[0]
            self._index_totals = (int(docs), int(tokens))
            # The copy's version still current: only the missing terms were read.
            asked = missing if version is not None and kw_version == version else unique
            entry = self.keywords.merge(
                partition,
                None if kw_version is None else int(kw_version),
                None if items is None else int(items),
                found,
                asked,
            )
            if entry is not None or attempt:
                break
            version, missing = None, unique
        assert entry is not None  # a read of every term always yields its postings
        self._local.planned = entry
        row = None if layout[0] is None else tuple(layout)
        if not unique:
            return [], row
        if entry.items < MIN_ITEMS_FOR_TERM_PRUNING:
            return unique, row
        return choose_terms(unique, entry.items, entry.doc_freq(unique), max_share), row

    def rank_keywords(
        self, partition: str, match_params: tuple[Any, ...], limit: int
    ) -> RankedKeywords | None:
        """The ``limit`` best keyword matches of the planned terms by BM25, ranked
        in process from the postings this thread's :meth:`plan_query` read (what
        ``KEYWORD_RANK_THEN_FILTER_TEMPLATE`` ranks in SQL, same scores and ties);
        ``None`` when that plan was of other terms: the caller ranks in SQL."""
        terms = match_params[0]
        entry: PartitionPostings | None = getattr(self._local, "planned", None)
        if entry is None or any(t not in entry.terms for t in terms):
            return None
        docs, tokens = self._index_totals
        pairs, matched = bm25_top(entry, terms, docs, tokens, limit)
        return RankedKeywords(pairs, exhaustive=matched <= limit)

    def scrub(self, *, vacuum: bool = True) -> None:
        """``VACUUM FULL`` the catalog's tables (outside any transaction).

        A deleted row's bytes stay in its page's free space, and its lexemes in
        the GIN index, after a plain ``VACUUM``; ``FULL`` rewrites the tables and
        indexes into new files (it locks each table meanwhile: forget_user, and
        :meth:`erase_pending` when a delete marked it). ``vacuum=False`` (after a
        single delete) does nothing: the delete marked the catalog
        (:meth:`mark_erased`) and the row stays in dead tuples until the next
        ``erase_pending()`` or ``scrub()`` (README, "Erasure on Postgres").
        """
        if not vacuum:
            return
        pending = self.query(_sql.SELECT_ERASE_PENDING)
        with self.pool.connection() as raw:
            wait_for_older_snapshots(raw)  # else the rewrite keeps rows they can see
            raw.execute(_sql.VACUUM_FULL)
        if pending:
            with self.transaction() as conn:
                conn.execute(_sql.CLEAR_ERASE_PENDING, (pending[0][0],))

    def mark_erased(self, conn: Any) -> None:
        """In a transaction that deleted rows: the next ``erase_pending()`` owes them."""
        conn.execute(_sql.MARK_ERASE_PENDING)

    def erase_pending(self) -> int:
        """``scrub()`` if a delete since the last one marked the catalog; 1 if it ran.
        With nothing marked it reads one row and locks nothing."""
        if not self.query(_sql.SELECT_ERASE_PENDING):
            return 0
        self.scrub()
        return 1
