"""The Postgres dialect of the catalog: one database shared by every app instance.

Items, typed columns, TTL, partitions (with their cache versions) and the
keyword index live in Postgres (statements in ``_sql_postgres.py``); vectors on
the Chroma server. Connections come from a ``psycopg_pool.ConnectionPool``; a
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
from langgraph_memory.longterm.catalog import (
    MAX_CACHED_TERMS,
    MIN_ITEMS_FOR_TERM_PRUNING,
    CatalogHelpers,
    choose_terms,
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
    """

    sql: ModuleType = _sql
    dialect = "postgres"

    def __init__(
        self, dsn: str, *, pool_size: int = DEFAULT_POOL_SIZE, connect_timeout: float = 10.0
    ) -> None:
        require_extra("postgres", feature="catalog='postgresql://...' (PostgresCatalog)")
        from psycopg_pool import ConnectionPool

        if not isinstance(dsn, str) or not dsn.startswith(("postgresql://", "postgres://")):
            raise ConfigurationError(
                f"catalog={dsn!r}; pass a 'postgresql://user@host:5432/db' connection string."
            )
        if pool_size < 1:
            raise ConfigurationError(f"pool_size={pool_size!r}; use an integer >= 1.")
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
        # Term statistics cache (see SqliteCatalog.plan_terms), valid while the
        # shared change counter of the keyword index is unchanged.
        self._stats_version: int | None = None
        self._partition_items: dict[str, int] = {}
        self._doc_freq: dict[str, int] = {}
        self._stats_lock = threading.Lock()
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
        """``(terms, document frequencies)``: the planned terms and how many items
        hold each, from the statistics :meth:`plan_query` just read (read again if
        another thread's newer change counter dropped them meanwhile)."""
        if not scoped_terms:
            return None
        with self._stats_lock:
            docs = [self._doc_freq.get(t) for t in scoped_terms]
        missing = [t for t, n in zip(scoped_terms, docs, strict=True) if n is None]
        found = self.query(_sql.SELECT_PLAN, (False, "", missing, ""))[0][-1] if missing else None
        return list(scoped_terms), [
            float((found or {}).get(t, 0) if n is None else n)
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
        partition's layout in one statement (``SELECT_PLAN``: the change counter,
        the layout and whatever statistics are not cached). A second one only when
        the counter moved since they were cached: the cached ones are then stale."""
        unique = list(dict.fromkeys(scoped_terms))
        with self._stats_lock:
            items = self._partition_items.get(partition)
            unknown = [t for t in unique if t not in self._doc_freq]
        # Small partitions' terms too: the keyword statement takes them (match_params).
        changes, *layout, counted, found = self.query(
            _sql.SELECT_PLAN, (bool(unique) and items is None, partition, unknown, partition)
        )[0]
        row = None if layout[0] is None else tuple(layout)
        if not unique:
            return [], row
        with self._stats_lock:
            if int(changes) != self._stats_version or len(self._doc_freq) > MAX_CACHED_TERMS:
                self._partition_items.clear()
                self._doc_freq.clear()
                self._stats_version = int(changes)
            if counted is not None:
                self._partition_items[partition] = int(counted)
            for term in unknown:
                self._doc_freq[term] = int((found or {}).get(term, 0))
            items = self._partition_items.get(partition)
            doc_freq = {t: self._doc_freq[t] for t in unique if t in self._doc_freq}
        if items is None or len(doc_freq) < len(unique):
            missing = [t for t in unique if t not in doc_freq]
            _, *_, counted, found = self.query(
                _sql.SELECT_PLAN, (items is None, partition, missing, partition)
            )[0]
            items = int(counted) if items is None else items
            doc_freq.update({t: int((found or {}).get(t, 0)) for t in missing})
            with self._stats_lock:
                self._partition_items[partition] = items
                self._doc_freq.update(doc_freq)
        if items < MIN_ITEMS_FOR_TERM_PRUNING:
            return unique, row
        return choose_terms(unique, items, doc_freq, max_share), row

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
