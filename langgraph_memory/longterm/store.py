"""``ChromaMemoryStore``: a LangGraph ``BaseStore`` with typed, temporal, private, hybrid memory.

What lives where (one design decision drives the rest: *text never reaches Chroma*):

* **SQLite file** (``keyword_index.sqlite3``): the item catalog (values,
  redacted), the FTS5 keyword index and the partition -> collection map.
  Forgetting a user deletes rows here, then FTS5 ``optimize``, ``VACUUM`` and
  a WAL truncation push the text out of the file.
* **Chroma** (``PersistentClient`` dir or an ``HttpClient`` server): the
  vectors, under opaque ids, in hashed collection names (see ``vectors.py``
  for the shard/dedicated layout). Chroma keeps documents in its own FTS
  table and write-ahead queue, which we cannot vacuum over HTTP; giving it
  no documents means there is nothing there to forget but vectors.

The sync methods do the work; the async twins embed with ``aembed_*`` and run
the same sync core in a worker thread. Scoring, ``WHERE`` building and row
mapping are pure functions in ``scoring.py``, ``where.py`` and ``rows.py``.

Example:
    >>> import tempfile
    >>> from langgraph_memory.embeddings import HashingEmbeddings
    >>> from langgraph_memory.types import MemoryRecord
    >>> store = ChromaMemoryStore.embedded(tempfile.mkdtemp(), embeddings=HashingEmbeddings())
    >>> _ = store.put_memory(MemoryRecord(text="Allergic to seafood", user_id="alice"))
    >>> [m.record.text for m in store.search_memories("alice", "seafood allergy")]
    ['Allergic to seafood']
    >>> store.search_memories("bob", "seafood allergy")
    []
    >>> store.close()
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)
from langgraph.store.base.embed import ensure_embeddings

from langgraph_memory.clock import Clock, now_seconds
from langgraph_memory.clock import now as clock_now
from langgraph_memory.config import PrivacyPolicy, ScoringWeights
from langgraph_memory.errors import (
    ConfigurationError,
    InvalidUserIdError,
    MemoryNotFoundError,
)
from langgraph_memory.longterm import _sql
from langgraph_memory.longterm._heap import scrub_freed_memory
from langgraph_memory.longterm.catalog import SqliteCatalog
from langgraph_memory.longterm.rows import (
    DEFAULT_TEXT_FIELDS,
    ItemRow,
    item_id_for,
    looks_like_record,
    record_columns,
    redact_value,
    row_to_item,
    row_to_record,
    term_scope,
    texts_to_index,
    to_ts,
)
from langgraph_memory.longterm.tokenize import match_expression, query_tokens, scoped_index_text
from langgraph_memory.longterm.vectors import (
    ChromaVectors,
    PartitionVectorCache,
    cosine_scores,
    dedicated_collection_name,
    normalised_matrix,
    shard_collection_name,
)
from langgraph_memory.longterm.where import (
    USER_ROOT,
    build_memory_state_filter,
    build_namespace_prefix,
    build_value_filter,
    decode_namespace,
    encode_namespace,
    is_user_partition,
    partition_of,
    validate_labels,
    validate_user_id,
)
from langgraph_memory.privacy import Redactor, fingerprint_user_id
from langgraph_memory.scoring import (
    Candidate,
    cosine_to_score,
    decayed_importance,
    importance_score,
    last_active_at,
    normalise_bm25,
    rank_candidates,
    relevance_score,
)
from langgraph_memory.types import (
    ForgetReceipt,
    MemoryRecord,
    MemoryStatus,
    MemoryType,
    ScoredMemory,
)

KEYWORD_INDEX_FILENAME = "keyword_index.sqlite3"
CHROMA_DIRNAME = "chroma"
# Candidates fetched from each index before fusion (at least 5x the limit): the
# fused top-k rarely comes from below either index's top 30, and every extra
# candidate costs a row fetch.
MIN_CANDIDATE_POOL = 30
# A partition moves from a shared shard to its own collection past this many
# vectors: exact numpy ranking of 256 vectors fetched by id costs about what one
# HNSW query does (~2 ms), beyond that the dedicated collection wins.
DEFAULT_DEDICATED_THRESHOLD = 256
DEFAULT_SHARDS = 64
# Keyword matches ranked before the catalog filter: 2x the pool, so a few
# superseded or expired winners still leave a full pool (else an exact fallback).
RANK_FIRST_OVERFETCH = 2
# Recall's pinned search shares the query's keyword pass while the user has at
# most this many memories of the pinned types (their rowids are bound in SQL).
MAX_SHARED_PINNED_ROWS = 500
# Query terms found in more than half of all memories are left out of the FTS5
# query (unless every term is that common): their IDF is ~0, their cost is not.
COMMON_TERM_SHARE = 0.5
# Partitions up to this many vectors are ranked exactly from the in-process cache:
# 20k x 384 float32 is 30 MB and one matrix-vector product of ~2 ms; beyond, the
# dedicated collection's HNSW index is cheaper per query.
DEFAULT_CACHE_MAX_VECTORS = 20_000
DEFAULT_VECTOR_CACHE_BYTES = 256 * 1024 * 1024


@dataclass(slots=True)
class _PreparedPut:
    partition: str
    namespace: str
    key: str
    value: dict[str, Any] | None  # None deletes
    texts: list[str] = field(default_factory=list)
    ttl_minutes: float | None = None
    vector: list[float] | None = None


@dataclass(slots=True)
class _Hit:
    row: ItemRow
    bm25: float = 0.0
    cosine: float | None = None


class RecalledMemories(NamedTuple):
    """What :meth:`ChromaMemoryStore.recall_memories` returns."""

    found: list[ScoredMemory]
    pinned: list[ScoredMemory]


@dataclass(frozen=True, slots=True)
class _RankedKeywords:
    """Keyword matches already ranked by BM25 for one search, best first, before
    the catalog filter: ``(rowid, score)`` pairs, and whether they are every
    match of that search (else the pairs are a top cut-off)."""

    pairs: list[tuple[int, float]]
    exhaustive: bool


@dataclass(slots=True)
class _QueryPlan:
    """One query's shared inputs: planned FTS5 expression, layout, query vector."""

    partition: str
    match: str | None
    vector: Sequence[float] | None
    layout: tuple[str, bool, int, int] | None
    # (ids, id -> row, cosine per row) of a cached partition, filled on first use.
    cached_scores: tuple[list[str], dict[str, int], np.ndarray] | None = None


def _candidate_pool(limit: int) -> int:
    return max(MIN_CANDIDATE_POOL, limit * 5)


def _redact_checked(redactor: Redactor, text: str) -> str:
    return redactor.redact(text).text


class ChromaMemoryStore(BaseStore):
    """Long-term memory on Chroma + SQLite FTS5, partitioned per user.

    Build it with :meth:`embedded` (a local directory) or :meth:`from_http`
    (a Chroma server). It is a LangGraph ``BaseStore`` (``graph.compile(store=...)``,
    ``get_store()``, ``Runtime.store``) and implements the
    :class:`~langgraph_memory.types.LongTermMemory` protocol the memory nodes use.

    Args:
        client: A ``chromadb`` client (``PersistentClient`` or ``HttpClient``).
        keyword_index_path: The SQLite file for catalog + FTS5 index.
        embeddings: Any LangChain ``Embeddings`` (or embed function). ``None``
            with no ``index`` disables vectors: search is keyword-only.
        index: LangGraph-style ``IndexConfig`` (``embed``, ``dims``, ``fields``);
            overrides ``embeddings``. ``fields`` default: ``["text", "content"]``.
        ttl: LangGraph ``TTLConfig`` (``default_ttl`` minutes, ``refresh_on_read``).
        privacy_policy: What to do with identifiers found in any stored text.
        weights: Default :class:`ScoringWeights` for ``search_memories``.
        shards: Number of shared shard collections for small partitions.
        dedicated_threshold: Vectors after which a partition gets its own collection.
        user_roots: Namespace roots whose second label is a user id.
        collection_prefix: Prefix of every Chroma collection this store creates.
        vector_cache_bytes: Budget of the in-process vector cache (0 disables it).
        cache_max_vectors: Largest partition ranked from the cache; larger ones
            use their dedicated collection's HNSW index.
        clock: What "now" is for validity, expiry, TTL, recency and access stamps
            (``langgraph_memory.clock``; default the UTC wall clock). A replayed history
            passes a ``ManualClock``.
    """

    supports_ttl: bool = True

    def __init__(
        self,
        *,
        client: Any,
        keyword_index_path: str | Path,
        embeddings: Embeddings | Any | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        privacy_policy: PrivacyPolicy | None = None,
        weights: ScoringWeights | None = None,
        shards: int = DEFAULT_SHARDS,
        dedicated_threshold: int = DEFAULT_DEDICATED_THRESHOLD,
        user_roots: Sequence[str] = (USER_ROOT,),
        collection_prefix: str = "lgm",
        vector_cache_bytes: int = DEFAULT_VECTOR_CACHE_BYTES,
        cache_max_vectors: int = DEFAULT_CACHE_MAX_VECTORS,
        clock: Clock | None = None,
    ) -> None:
        self.clock = clock
        if shards < 1:
            raise ConfigurationError(f"shards={shards!r}; use an integer >= 1.")
        if dedicated_threshold < 1:
            raise ConfigurationError(
                f"dedicated_threshold={dedicated_threshold!r}; use an integer >= 1."
            )
        if weights is not None and not isinstance(weights, ScoringWeights):
            raise ConfigurationError(
                f"weights={weights!r}; pass a langgraph_memory.config.ScoringWeights."
            )
        self.weights = weights or ScoringWeights()
        self.ttl_config = ttl
        self.shards = shards
        self.dedicated_threshold = dedicated_threshold
        self.user_roots = tuple(validate_labels(user_roots))
        self.redactor = Redactor(privacy_policy)
        self.catalog = SqliteCatalog(keyword_index_path)
        self.vectors = ChromaVectors(client, prefix=collection_prefix)
        self.collection_prefix = collection_prefix
        if vector_cache_bytes < 0 or cache_max_vectors < 0:
            raise ConfigurationError(
                f"vector_cache_bytes={vector_cache_bytes!r}, cache_max_vectors="
                f"{cache_max_vectors!r}; use integers >= 0 (0 disables the cache)."
            )
        self.vector_cache = PartitionVectorCache(vector_cache_bytes)
        self._sweeper: threading.Thread | None = None
        self._sweeper_stop = threading.Event()
        self.cache_max_vectors = cache_max_vectors
        self.embeddings: Embeddings | None = None
        self.index_fields: list[str] = list(DEFAULT_TEXT_FIELDS)
        self.index_config: dict[str, Any] | None = None
        if index is not None:
            if "embed" not in index or "dims" not in index:
                raise ConfigurationError(
                    f"index={index!r} needs 'embed' (Embeddings or function) and 'dims' (int)."
                )
            self.embeddings = ensure_embeddings(index["embed"])
            dims = int(index["dims"])
            self.index_fields = list(index.get("fields") or DEFAULT_TEXT_FIELDS)
        elif embeddings is not None:
            self.embeddings = ensure_embeddings(embeddings)
            probe = getattr(embeddings, "dimensions", None)
            dims = int(probe) if probe else len(self.embeddings.embed_query("dimension probe"))
        if self.embeddings is not None:
            self._check_dims(dims)
            self.index_config = {
                "dims": dims,
                "embed": self.embeddings,
                "fields": list(self.index_fields),
            }

    def _now_ts(self) -> float:
        return now_seconds(self.clock)

    # -- construction -----------------------------------------------------------

    @classmethod
    def embedded(
        cls,
        path: str | Path,
        *,
        embeddings: Embeddings | Any | None,
        scrub_heap: bool = True,
        **kwargs: Any,
    ) -> ChromaMemoryStore:
        """A store in a local directory: ``<path>/chroma`` + ``<path>/keyword_index.sqlite3``.

        ``scrub_heap`` (default on) makes glibc overwrite freed memory for the whole
        process, because embedded Chroma persists uninitialised HNSW buffer bytes
        (see ``_heap.py``: without it a forgotten user's text was found in another
        user's index file). Turn it off only if nothing private passes through the process.

        Example:
            >>> import tempfile
            >>> from langgraph_memory.embeddings import HashingEmbeddings
            >>> store = ChromaMemoryStore.embedded(tempfile.mkdtemp(), embeddings=HashingEmbeddings())
            >>> store.put(("memories", "alice"), "k1", {"content": "likes tea"})
            >>> store.get(("memories", "alice"), "k1").value
            {'content': 'likes tea'}
            >>> store.close()
        """
        import chromadb
        from chromadb.config import Settings

        if scrub_heap:
            scrub_freed_memory()
        root = Path(path)
        root.mkdir(parents=True, exist_ok=True)
        client = chromadb.PersistentClient(
            path=str(root / CHROMA_DIRNAME), settings=Settings(anonymized_telemetry=False)
        )
        return cls(
            client=client,
            keyword_index_path=root / KEYWORD_INDEX_FILENAME,
            embeddings=embeddings,
            **kwargs,
        )

    @classmethod
    def from_http(
        cls,
        host: str,
        port: int,
        *,
        keyword_index_path: str | Path,
        embeddings: Embeddings | Any | None,
        ssl: bool = False,
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> ChromaMemoryStore:
        """A store on a Chroma server; the SQLite catalog + keyword index stay local.

        One process (or one host sharing the file) should own ``keyword_index_path``:
        the catalog is the source of truth for which vectors belong to whom.
        """
        import chromadb
        from chromadb.config import Settings

        client = chromadb.HttpClient(
            host=host,
            port=port,
            ssl=ssl,
            headers=headers,
            settings=Settings(anonymized_telemetry=False),
        )
        return cls(
            client=client,
            keyword_index_path=keyword_index_path,
            embeddings=embeddings,
            **kwargs,
        )

    def close(self) -> None:
        """Stop the TTL sweeper and close the SQLite file (Chroma clients need no closing)."""
        self.stop_ttl_sweeper(timeout=5)
        self.catalog.close()

    def __enter__(self) -> ChromaMemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_dims(self, dims: int) -> None:
        stored = self.catalog.meta("dims")
        if stored is None:
            self.catalog.set_meta("dims", str(dims))
        elif int(stored) != dims:
            raise ConfigurationError(
                f"Embedding dims={dims} but {self.catalog.path!r} was built with dims={stored}; "
                "use the same embedding model, or a new store directory."
            )

    # -- text in: redaction and embedding ------------------------------------------

    def _redact(self, text: str) -> str:
        return _redact_checked(self.redactor, text)

    def _prepare_put(self, op: PutOp) -> _PreparedPut:
        namespace = validate_labels(op.namespace)
        partition = partition_of(namespace, user_roots=self.user_roots)
        if op.value is None:
            return _PreparedPut(partition, encode_namespace(namespace), op.key, None)
        if not isinstance(op.key, str) or not op.key:
            raise ConfigurationError(f"key={op.key!r}; use a non-empty string key.")
        value = dict(op.value)
        if looks_like_record(value) and isinstance(value.get("text"), str):
            # A MemoryRecord's only free text is ``text``; its ids and ISO
            # timestamps must stay intact (a hex id can contain an 11-digit run
            # that looks like a phone number).
            value["text"] = self._redact(value["text"])
            if is_user_partition(partition):
                owner = value.get("user_id") or partition
                if owner != partition:
                    raise InvalidUserIdError(
                        f"A memory record with user_id={owner!r} cannot be written into "
                        f"{tuple(namespace)!r}; write it under ('memories', {owner!r})."
                    )
                value["user_id"] = partition
        else:
            value = redact_value(value, self._redact)
        texts = texts_to_index(value, self.index_fields, op.index)
        # BaseStore.put already resolved "not given" to TTLConfig's default_ttl;
        # None here means "never expires".
        return _PreparedPut(
            partition, encode_namespace(namespace), op.key, value, texts, ttl_minutes=op.ttl
        )

    def _documents_to_embed(self, puts: Iterable[_PreparedPut]) -> list[_PreparedPut]:
        if self.embeddings is None:
            return []
        return [p for p in puts if p.value is not None and p.texts]

    def _embed_puts(self, puts: Sequence[_PreparedPut]) -> None:
        todo = self._documents_to_embed(puts)
        if todo and self.embeddings is not None:
            vectors = self.embeddings.embed_documents(["\n".join(p.texts) for p in todo])
            for put, vector in zip(todo, vectors, strict=True):
                put.vector = list(vector)

    async def _aembed_puts(self, puts: Sequence[_PreparedPut]) -> None:
        todo = self._documents_to_embed(puts)
        if todo and self.embeddings is not None:
            vectors = await self.embeddings.aembed_documents(["\n".join(p.texts) for p in todo])
            for put, vector in zip(todo, vectors, strict=True):
                put.vector = list(vector)

    # -- BaseStore ------------------------------------------------------------------

    def _prepare_ops(
        self, ops: Sequence[Op]
    ) -> tuple[dict[int, _PreparedPut], dict[int, tuple[str, str]]]:
        """Validate every op up front (nothing is written if one is bad); redact puts and queries."""
        puts: dict[int, _PreparedPut] = {}
        queries: dict[int, tuple[str, str]] = {}
        for i, op in enumerate(ops):
            if isinstance(op, PutOp):
                puts[i] = self._prepare_put(op)
            elif isinstance(op, GetOp):
                partition_of(op.namespace, user_roots=self.user_roots)
            elif isinstance(op, SearchOp):
                partition = partition_of(op.namespace_prefix, user_roots=self.user_roots)
                build_value_filter(op.filter)
                if op.query:
                    queries[i] = (partition, self._redact(op.query))
            elif isinstance(op, ListNamespacesOp):
                for condition in op.match_conditions or ():
                    validate_labels(tuple(lab for lab in condition.path if lab != "*"))
            else:
                raise ConfigurationError(f"Unknown store op {op!r}.")
        return puts, queries

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        op_list = list(ops)
        puts, queries = self._prepare_ops(op_list)
        self._embed_puts(list(puts.values()))
        query_vectors = self._embed_queries(queries)
        return self._execute(op_list, puts, queries, query_vectors)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        op_list = list(ops)
        puts, queries = self._prepare_ops(op_list)
        await self._aembed_puts(list(puts.values()))
        query_vectors = await self._aembed_queries(queries)
        return await asyncio.to_thread(self._execute, op_list, puts, queries, query_vectors)

    def _embed_queries(self, queries: dict[int, tuple[str, str]]) -> dict[int, list[float]]:
        if self.embeddings is None or not queries:
            return {}
        order = list(queries)
        vectors = self.embeddings.embed_documents([queries[i][1] for i in order])
        return dict(zip(order, (list(v) for v in vectors), strict=True))

    async def _aembed_queries(self, queries: dict[int, tuple[str, str]]) -> dict[int, list[float]]:
        if self.embeddings is None or not queries:
            return {}
        order = list(queries)
        vectors = await self.embeddings.aembed_documents([queries[i][1] for i in order])
        return dict(zip(order, (list(v) for v in vectors), strict=True))

    def _execute(
        self,
        ops: Sequence[Op],
        puts: dict[int, _PreparedPut],
        queries: dict[int, tuple[str, str]],
        query_vectors: dict[int, list[float]],
    ) -> list[Result]:
        results: list[Result] = [None] * len(ops)
        pending: list[_PreparedPut] = []
        for i, op in enumerate(ops):
            if i in puts:
                pending.append(puts[i])
                continue
            if pending:  # consecutive puts go to SQLite and Chroma in one round each
                self._apply_puts(pending)
                pending = []
            if isinstance(op, GetOp):
                results[i] = self._get(op)
            elif isinstance(op, SearchOp):
                query = queries.get(i)
                results[i] = self._search(
                    op, None if query is None else query[1], query_vectors.get(i)
                )
            elif isinstance(op, ListNamespacesOp):
                results[i] = self._list_namespaces(op)
        if pending:
            self._apply_puts(pending)
        return results

    def _refresh(self, refresh_ttl: bool) -> bool:
        if not refresh_ttl:
            return False
        return bool((self.ttl_config or {}).get("refresh_on_read", True))

    def _get(self, op: GetOp) -> Item | None:
        namespace = tuple(op.namespace)
        partition = partition_of(namespace, user_roots=self.user_roots)
        rows = self.catalog.items(
            _sql.SELECT_ITEM, (partition, encode_namespace(namespace), op.key)
        )
        if not rows:
            return None
        row = rows[0]
        now = self._now_ts()
        if row.expires_ts is not None and row.expires_ts <= now:
            return None
        if row.ttl_minutes is not None and self._refresh(op.refresh_ttl):
            with self.catalog.transaction() as conn:
                conn.execute(_sql.REFRESH_TTL, (now, partition, row.rowid))
        return row_to_item(row)

    def _scope_where(
        self,
        partition: str,
        prefix: Sequence[str],
        *,
        now: float,
        value_filter: dict[str, Any] | None = None,
        memory_filter: tuple[str, list[Any]] | None = None,
    ) -> tuple[str, list[Any]]:
        """The ``WHERE`` fragment (after ``partition = ?``) of every search of the store."""
        clauses: list[str] = []
        params: list[Any] = []
        ns_sql, ns_params = build_namespace_prefix(prefix)
        clauses.append(ns_sql)
        params.extend(ns_params)
        clauses.append("(expires_ts IS NULL OR expires_ts > ?)")
        params.append(now)
        if memory_filter is not None:
            clauses.append(memory_filter[0])
            params.extend(memory_filter[1])
        elif is_user_partition(partition) and not (value_filter and "status" in value_filter):
            # Plain BaseStore readers (third-party tools) see typed memories'
            # current state only, unless they filter on status themselves.
            state_sql, state_params = build_memory_state_filter(now_ts=now)
            clauses.append(f"(mem_status IS NULL OR ({state_sql}))")
            params.extend(state_params)
        filter_sql, filter_params = build_value_filter(value_filter)
        clauses.append(filter_sql)
        params.extend(filter_params)
        # Unqualified columns are unambiguous in the FTS join too (lt_keywords has only body).
        return " AND ".join(clauses), params

    def _search(
        self, op: SearchOp, query: str | None, query_vector: list[float] | None
    ) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        partition = partition_of(prefix, user_roots=self.user_roots)
        now = self._now_ts()
        where, params = self._scope_where(partition, prefix, now=now, value_filter=op.filter)
        if not query:
            rows = self.catalog.items(
                _sql.SELECT_ITEMS_TEMPLATE.format(where=where),
                [partition, *params, op.limit, op.offset],
            )
            scored: list[tuple[ItemRow, float | None]] = [(r, None) for r in rows]
        else:
            pool = max(MIN_CANDIDATE_POOL, (op.limit + op.offset) * 5)
            plan = self._plan_query(partition, query, query_vector)
            hits = self._hybrid_hits(plan, where, params, pool, rank_first=not op.filter)
            keyword = normalise_bm25([h.bm25 for h in hits])
            share = self.weights.keyword_share if self.embeddings is not None else 1.0
            ranked = sorted(
                (
                    (
                        h.row,
                        relevance_score(
                            k, 0.0 if h.cosine is None else cosine_to_score(h.cosine), share
                        ),
                    )
                    for h, k in zip(hits, keyword, strict=True)
                ),
                key=lambda pair: (-pair[1], pair[0].rowid),
            )
            scored = [(r, s) for r, s in ranked[op.offset : op.offset + op.limit]]
        if self._refresh(op.refresh_ttl):
            self._refresh_rows(partition, [r for r, _ in scored], now)
        return [row_to_item(r, s, search=True) for r, s in scored]  # type: ignore[misc]

    def _refresh_rows(self, partition: str, rows: Sequence[ItemRow], now: float) -> None:
        due = [r for r in rows if r.ttl_minutes is not None]
        if due:
            with self.catalog.transaction() as conn:
                for row in due:
                    conn.execute(_sql.REFRESH_TTL, (now, partition, row.rowid))

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = [decode_namespace(r[0]) for r in self.catalog.query(_sql.SELECT_NAMESPACES)]

        def matches(ns: tuple[str, ...]) -> bool:
            for condition in op.match_conditions or ():
                path = tuple(condition.path)
                if len(path) > len(ns):
                    return False
                part = ns[: len(path)] if condition.match_type == "prefix" else ns[-len(path) :]
                if any(p != "*" and p != n for p, n in zip(path, part, strict=True)):
                    return False
            return True

        selected = [ns for ns in namespaces if matches(ns)]
        if op.max_depth is not None:
            selected = sorted({ns[: op.max_depth] for ns in selected})
        return selected[op.offset : op.offset + op.limit]

    # -- hybrid retrieval core ---------------------------------------------------------

    def _partition_layout(self, partition: str) -> tuple[str, bool, int, int] | None:
        """``(collection, dedicated, vector_count, version)`` or ``None`` before the first write."""
        rows = self.catalog.query(_sql.SELECT_PARTITION, (partition,))
        if not rows:
            return None
        collection, dedicated, count, version = rows[0]
        return str(collection), bool(dedicated), int(count), int(version)

    def _plan_query(
        self, partition: str, query: str, query_vector: Sequence[float] | None
    ) -> _QueryPlan:
        """Term planning, partition layout and (lazily) cosines: done once per query,
        however many filtered searches (:meth:`recall_memories`) answer it."""
        scope = term_scope(partition)
        terms = [scope + t for t in query_tokens(query)]
        terms = self.catalog.plan_terms(partition, terms, COMMON_TERM_SHARE) if terms else []
        layout = self._partition_layout(partition)
        if query_vector is None or self.embeddings is None:
            query_vector = None
        return _QueryPlan(partition, match_expression(terms), query_vector, layout)

    def _cached_scores(self, plan: _QueryPlan) -> tuple[list[str], dict[str, int], np.ndarray]:
        """``(ids, id -> row, cosine per row)`` from the in-process cache, computed once per plan."""
        if plan.cached_scores is None:
            assert plan.layout is not None and plan.vector is not None
            collection, _, _, version = plan.layout
            partition = plan.partition
            entry = self.vector_cache.get(partition, version)
            if entry is None:
                ids = [r[0] for r in self.catalog.query(_sql.SELECT_VECTOR_IDS, (partition,))]
                found = self.vectors.vectors_by_id(collection, ids)
                dims = int(self.index_config["dims"]) if self.index_config else 0
                entry = (list(found), normalised_matrix(list(found.values()), dims))
                self.vector_cache.put(partition, version, *entry)
            ids, matrix = entry
            sims = cosine_scores(matrix, plan.vector) if ids else np.empty(0, np.float32)
            plan.cached_scores = (ids, self.vector_cache.positions(partition, ids), sims)
        return plan.cached_scores

    def _vector_scores(
        self, plan: _QueryPlan, pool: int, keyword_ids: Sequence[str]
    ) -> tuple[dict[str, float], dict[str, float]]:
        """``(top pool by cosine, exact cosine of the keyword hits where known)``.

        For dedicated partitions: the in-process cache (exact, no Chroma call) up
        to ``cache_max_vectors``, else the collection's HNSW query. Shard-tier
        partitions are ranked in :meth:`_hybrid_hits` from one get-by-id.
        """
        assert plan.layout is not None and plan.vector is not None
        collection, _, count, _ = plan.layout
        if self.vector_cache.max_bytes > 0 and count <= self.cache_max_vectors:
            ids, position, sims = self._cached_scores(plan)
            if not ids:
                return {}, {}
            take = min(len(ids), pool + 10)  # over-fetch: the state filter drops some
            top = np.argpartition(-sims, take - 1)[:take] if take < len(ids) else range(len(ids))
            best = {ids[i]: float(sims[i]) for i in top}
            known = {k: float(sims[position[k]]) for k in keyword_ids if k in position}
            return best, known
        return self.vectors.ann_search(collection, plan.vector, min(pool + 10, count)), {}

    def _shard_cosines(self, plan: _QueryPlan, rows: Sequence[ItemRow]) -> dict[str, float]:
        """Exact cosine of each eligible row of a shard-tier partition.

        From the in-process cache when enabled (the partition's few vectors, keyed
        by its version like dedicated ones): an embedded Chroma get-by-id costs
        ~2.5 ms even for 20 ids, a cached 20 x 384 product a few microseconds.
        """
        assert plan.layout is not None and plan.vector is not None
        if self.vector_cache.max_bytes <= 0:
            return self.vectors.exact_search(plan.layout[0], [r.item_id for r in rows], plan.vector)
        ids, position, sims = self._cached_scores(plan)
        if not ids:
            return {}
        return {r.item_id: float(sims[position[r.item_id]]) for r in rows if r.item_id in position}

    def _filter_ranked(
        self,
        partition: str,
        where: str,
        params: list[Any],
        pool: int,
        ranked: _RankedKeywords,
    ) -> list[Any] | None:
        """The top ``pool`` of ``ranked`` that pass the filter, as keyword rows
        (item columns + score); ``None`` when too few passed and more matches exist
        beyond the cut-off (the caller then ranks after filtering)."""
        if not ranked.pairs:
            return [] if ranked.exhaustive else None
        score = dict(ranked.pairs)
        marks = ", ".join("?" for _ in score)
        rows = self.catalog.query(
            _sql.SELECT_ROWS_BY_ROWID_TEMPLATE.format(marks=marks, where=where),
            [*score, partition, *params],
        )
        if len(rows) < pool and not ranked.exhaustive:
            return None
        rows.sort(key=lambda raw: -score[raw[0]])
        return [(*raw, score[raw[0]]) for raw in rows[:pool]]

    def _hybrid_hits(
        self,
        plan: _QueryPlan,
        where: str,
        params: list[Any],
        pool: int,
        *,
        rank_first: bool = False,
        ranked: _RankedKeywords | None = None,
    ) -> list[_Hit]:
        """Candidates from the keyword index and the vector index, merged by row.

        ``rank_first``: the filter keeps most rows (no type/key/value filter), so
        keyword matches are ranked before the catalog join (see
        ``KEYWORD_RANK_THEN_FILTER_TEMPLATE``), with an exact fallback.
        ``ranked``: keyword matches this search's caller already ranked (recall's
        shared pass); only filtered here, with the same fallback.

        Vector candidates only become hits through a catalog query bound to
        ``partition = ?`` and the caller's ``where``: an id from anywhere else
        (another user's, a superseded version) is silently dropped.
        """
        partition = plan.partition
        hits: dict[str, _Hit] = {}
        if plan.match is not None:
            keyword_rows: list[Any] | None = None
            if ranked is not None:
                keyword_rows = self._filter_ranked(partition, where, params, pool, ranked)
            elif rank_first:
                ranked_limit = pool * RANK_FIRST_OVERFETCH
                winners = self.catalog.query(
                    _sql.KEYWORD_RANK_THEN_FILTER_TEMPLATE.format(where=where),
                    [plan.match, ranked_limit, partition, *params],
                )
                # Exact unless fewer than ``pool`` winners passed the filter while
                # more matches exist beyond the cut-off: then rank after filtering.
                if winners and (len(winners) >= pool or winners[0][-2] < ranked_limit):
                    winners.sort(key=lambda raw: -raw[-1])
                    keyword_rows = winners[:pool]
            if keyword_rows is None:
                keyword_rows = self.catalog.query(
                    _sql.KEYWORD_SEARCH_TEMPLATE.format(where=where),
                    [plan.match, partition, *params, pool],
                )
            for raw in keyword_rows:
                row = ItemRow.from_tuple(raw)
                hits[row.item_id] = _Hit(row, bm25=float(raw[-1]))
        layout = plan.layout
        if plan.vector is None or layout is None:
            return list(hits.values())
        if not layout[1]:
            # Shard tier (<= dedicated_threshold vectors): the eligible rows in one
            # query, their vectors in one get-by-id, exact cosine for all of them.
            # A random user's first query costs the same as the next one, which
            # matters with 10k users and a handful of memories each.
            shard_rows = self.catalog.items(
                f"SELECT {_sql.ITEM_COLUMNS} FROM lt_items "
                f"WHERE partition = ? AND has_vector = 1 AND {where}",
                [partition, *params],
            )
            exact = self._shard_cosines(plan, shard_rows)
            for item_id, hit in hits.items():
                hit.cosine = exact.get(item_id)
            scored_rows = sorted(
                (r for r in shard_rows if r.item_id in exact), key=lambda r: -exact[r.item_id]
            )
            for row in scored_rows[:pool]:
                hits.setdefault(row.item_id, _Hit(row, cosine=exact[row.item_id]))
            return list(hits.values())
        best, known = self._vector_scores(plan, pool, list(hits))
        for item_id, cosine in known.items():
            hits[item_id].cosine = cosine
        missing = [i for i in best if i not in hits]
        if missing:
            marks = ", ".join("?" for _ in missing)
            # ``+partition`` keeps the planner on the item_id index: given
            # ``partition = ? AND namespace = ?`` it preferred walking the whole
            # partition (6.6 ms at 10k memories, vs ~0.2 ms for 30 id lookups).
            vector_rows = self.catalog.items(
                f"SELECT {_sql.ITEM_COLUMNS} FROM lt_items "
                f"WHERE +partition = ? AND item_id IN ({marks}) AND {where}",
                [partition, *missing, *params],
            )
            ranked_rows = sorted(vector_rows, key=lambda r: -best[r.item_id])[:pool]
            for row in ranked_rows:
                hits[row.item_id] = _Hit(row, cosine=best[row.item_id])
        for item_id, hit in hits.items():
            if hit.cosine is None and item_id in best:
                hit.cosine = best[item_id]
        return list(hits.values())

    # -- writes ---------------------------------------------------------------------------

    def _apply_puts(self, puts: Sequence[_PreparedPut], *, now: float | None = None) -> None:
        """Write a group of puts: one SQLite transaction, one Chroma call per collection.

        Chroma is written inside the SQLite transaction, so a Chroma failure rolls
        the catalog back; an orphan vector left by a failed commit is harmless
        (ids only resolve through the catalog). A partition that outgrows its
        shard is promoted *before* its new vectors are written, so a bulk load
        writes each vector once.
        """
        if not puts:
            return
        now = self._now_ts() if now is None else now
        last: dict[tuple[str, str, str], _PreparedPut] = {}
        for put in puts:  # last write wins inside a batch, as in LangGraph's stores
            last[(put.partition, put.namespace, put.key)] = put
        upserts: dict[str, tuple[list[str], list[list[float]]]] = {}
        deletes: dict[str, list[str]] = {}
        deltas: dict[str, int] = {}
        with self.catalog.transaction() as conn:
            for put in last.values():
                old_raw = conn.execute(
                    _sql.SELECT_ITEM, (put.partition, put.namespace, put.key)
                ).fetchone()
                old = None if old_raw is None else ItemRow.from_tuple(old_raw)
                item_id = item_id_for(put.partition, put.namespace, put.key)
                had_vector = old is not None and bool(old.has_vector)
                if put.value is None:
                    if old is None:
                        continue
                    conn.execute(_sql.DELETE_FTS_ROW, (old.rowid,))
                    conn.execute(_sql.DELETE_ITEM, (old.rowid, put.partition))
                    has_vector = False
                else:
                    has_vector = put.vector is not None
                    expires = None if put.ttl_minutes is None else now + put.ttl_minutes * 60.0
                    rowid = conn.execute(
                        _sql.UPSERT_ITEM,
                        (
                            item_id,
                            put.partition,
                            put.namespace,
                            put.key,
                            json.dumps(put.value, ensure_ascii=False),
                            now,
                            now,
                            put.ttl_minutes,
                            expires,
                            int(has_vector),
                            *record_columns(put.value),
                        ),
                    ).fetchone()[0]
                    conn.execute(_sql.DELETE_FTS_ROW, (rowid,))
                    body = scoped_index_text("\n".join(put.texts), term_scope(put.partition))
                    if body:
                        conn.execute(_sql.INSERT_FTS_ROW, (rowid, body))
                if has_vector:
                    ids, vecs = upserts.setdefault(put.partition, ([], []))
                    ids.append(item_id)
                    vecs.append(put.vector)  # type: ignore[arg-type]
                elif had_vector:
                    deletes.setdefault(put.partition, []).append(item_id)
                delta = int(has_vector) - int(had_vector)
                if delta:
                    deltas[put.partition] = deltas.get(put.partition, 0) + delta
            # One Chroma call per collection, not per partition: a bulk load of
            # 250 small users into 64 shards makes 64 calls, not 250.
            by_collection: dict[str, tuple[list[str], list[str], list[list[float]]]] = {}
            for partition in sorted({*upserts, *deletes}):
                collection = self._collection_for_write(conn, partition, deltas.get(partition, 0))
                gone, ids, vecs = by_collection.setdefault(collection, ([], [], []))
                gone.extend(deletes.get(partition, []))
                new_ids, new_vecs = upserts.get(partition, ([], []))
                ids.extend(new_ids)
                vecs.extend(new_vecs)
            for collection, (gone, ids, vecs) in by_collection.items():
                self.vectors.delete(collection, gone)
                self.vectors.upsert(collection, ids, vecs)

    def _collection_for_write(self, conn: Any, partition: str, delta: int) -> str:
        """The collection a partition's vectors go to, after applying ``delta`` to its count.

        Creates the partition's layout row on first write, and promotes it from
        its shard to a dedicated collection when the count passes the threshold.
        """
        layout = self._partition_layout(partition)
        if layout is None:
            name = shard_collection_name(self.collection_prefix, partition, self.shards)
            conn.execute(_sql.INSERT_PARTITION, (partition, name))
            layout = (name, False, 0, 0)
        name, dedicated, count, _ = layout
        # Always, even with delta 0: a changed vector under an existing id must bump
        # the version too, or an in-process vector cache would keep the old one.
        conn.execute(_sql.ADD_VECTOR_COUNT, (delta, partition))
        if dedicated or count + delta <= self.dedicated_threshold:
            return name
        target = dedicated_collection_name(self.collection_prefix, partition)
        ids = [r[1] for r in conn.execute(_sql.SELECT_PARTITION_ITEM_IDS, (partition,)).fetchall()]
        self.vectors.copy_vectors(name, target, ids)  # ids not yet in Chroma are skipped
        conn.execute(_sql.SET_DEDICATED, (target, partition))
        self.vectors.delete(name, ids)
        return target

    # -- typed memories (LongTermMemory protocol) -------------------------------------------

    def _memory_namespace(self, user_id: str) -> tuple[str, str]:
        return (self.user_roots[0], user_id)

    def _prepare_record(self, record: MemoryRecord, user_id: str | None = None) -> MemoryRecord:
        if not isinstance(record, MemoryRecord):
            raise ConfigurationError(
                f"record={record!r} is a {type(record).__name__}; pass a MemoryRecord."
            )
        owner = validate_user_id(record.user_id or user_id)
        if user_id is not None and record.user_id and record.user_id != user_id:
            raise InvalidUserIdError(
                f"record.user_id={record.user_id!r} does not match user_id={user_id!r}; a memory "
                "can only be written into its own user's partition."
            )
        return record.evolve(user_id=owner, text=self._redact(record.text))

    def _record_put(self, record: MemoryRecord) -> _PreparedPut:
        namespace = self._memory_namespace(record.user_id)
        return _PreparedPut(
            partition=record.user_id,
            namespace=encode_namespace(namespace),
            key=record.id,
            value=record.to_dict(),
            texts=[record.text],
        )

    def _embed_record(self, put: _PreparedPut) -> None:
        self._embed_puts([put])

    def _rows_by_key(self, conn: Any, user_id: str, key: str) -> list[ItemRow]:
        namespace = encode_namespace(self._memory_namespace(user_id))
        return [
            ItemRow.from_tuple(r)
            for r in conn.execute(
                f"SELECT {_sql.ITEM_COLUMNS} FROM lt_items WHERE partition = ? AND namespace = ? "
                "AND mem_key = ? AND mem_status = 'active'",
                (user_id, namespace, key),
            ).fetchall()
        ]

    def _update_record(self, conn: Any, row: ItemRow, record: MemoryRecord, now: float) -> None:
        conn.execute(
            _sql.UPDATE_VALUE,
            (
                json.dumps(record.to_dict(), ensure_ascii=False),
                now,
                record.status.value,
                to_ts(record.valid_to),
                to_ts(record.expires_at),
                importance_score(record),
                to_ts(last_active_at(record)),
                row.partition,
                row.rowid,
            ),
        )

    def _put_record_core(
        self, record: MemoryRecord, put: _PreparedPut, supersede_id: str | None
    ) -> MemoryRecord:
        now_dt = clock_now(self.clock)
        now = now_dt.timestamp()
        with self.catalog.transaction() as conn:
            superseded: list[str] = []
            if supersede_id is not None:
                old_rows = self._memory_rows(conn, record.user_id, [supersede_id])
                if not old_rows:
                    raise MemoryNotFoundError(
                        f"No memory {supersede_id!r} for this user; list_memories() shows the "
                        "ids you can supersede."
                    )
                targets = old_rows
            else:
                targets = []
            if record.key is not None:  # two active memories never share a key
                targets += [
                    r for r in self._rows_by_key(conn, record.user_id, record.key)
                    if r.key != record.id and all(r.rowid != t.rowid for t in targets)
                ]  # fmt: skip
            for row in targets:
                old = row_to_record(row)
                valid_to = record.valid_from if record.valid_from <= now_dt else now_dt
                self._update_record(
                    conn,
                    row,
                    old.evolve(
                        status=MemoryStatus.SUPERSEDED,
                        valid_to=valid_to,
                        superseded_by=record.id,
                        updated_at=now_dt,
                    ),
                    now,
                )
                superseded.append(old.id)
            # Re-writing the same record (one new fact superseding several old
            # ones, one supersede() call each) keeps the links made earlier.
            earlier = self._memory_rows(conn, record.user_id, [record.id])
            kept = row_to_record(earlier[0]).supersedes if earlier else ()
            links = tuple(dict.fromkeys((*kept, *record.supersedes, *superseded)))
            if links != record.supersedes:
                record = record.evolve(supersedes=links)
                put.value = record.to_dict()
            self._apply_puts([put], now=now)
        return record

    def _memory_rows(self, conn: Any, user_id: str, memory_ids: Sequence[str]) -> list[ItemRow]:
        if not memory_ids:
            return []
        namespace = encode_namespace(self._memory_namespace(user_id))
        marks = ", ".join("?" for _ in memory_ids)
        return [
            ItemRow.from_tuple(r)
            for r in conn.execute(
                f"SELECT {_sql.ITEM_COLUMNS} FROM lt_items WHERE partition = ? AND namespace = ? "
                f"AND key IN ({marks}) AND mem_status IS NOT NULL",
                (user_id, namespace, *memory_ids),
            ).fetchall()
        ]

    def put_memory(self, record: MemoryRecord) -> MemoryRecord:
        """Store a memory (redacted) for ``record.user_id``; an active memory with the same
        ``key`` is superseded by it. Returns the record as stored."""
        record = self._prepare_record(record)
        put = self._record_put(record)
        self._embed_puts([put])
        return self._put_record_core(record, put, None)

    async def aput_memory(self, record: MemoryRecord) -> MemoryRecord:
        record = self._prepare_record(record)
        put = self._record_put(record)
        await self._aembed_puts([put])
        return await asyncio.to_thread(self._put_record_core, record, put, None)

    def supersede(self, user_id: str, old_id: str, new: MemoryRecord) -> MemoryRecord:
        """Replace memory ``old_id`` by ``new``: the old one keeps its text with
        ``status=superseded``, ``valid_to`` and ``superseded_by``; ``new.supersedes`` links back.

        Raises:
            MemoryNotFoundError: ``old_id`` is not one of this user's memories.
        """
        user_id = validate_user_id(user_id)
        record = self._prepare_record(new, user_id)
        put = self._record_put(record)
        self._embed_puts([put])
        return self._put_record_core(record, put, old_id)

    async def asupersede(self, user_id: str, old_id: str, new: MemoryRecord) -> MemoryRecord:
        user_id = validate_user_id(user_id)
        record = self._prepare_record(new, user_id)
        put = self._record_put(record)
        await self._aembed_puts([put])
        return await asyncio.to_thread(self._put_record_core, record, put, old_id)

    def get_memory(self, user_id: str, memory_id: str) -> MemoryRecord | None:
        """This user's memory with that id (any status), or ``None``."""
        user_id = validate_user_id(user_id)
        with self.catalog.lock:
            rows = self._memory_rows(self.catalog.conn, user_id, [memory_id])
        return row_to_record(rows[0]) if rows else None

    async def aget_memory(self, user_id: str, memory_id: str) -> MemoryRecord | None:
        return await asyncio.to_thread(self.get_memory, user_id, memory_id)

    def list_memories(self, user_id: str, *, include_history: bool = False) -> list[MemoryRecord]:
        """This user's current memories (or every version), newest first."""
        user_id = validate_user_id(user_id)
        now = self._now_ts()
        where, params = self._scope_where(
            user_id,
            self._memory_namespace(user_id),
            now=now,
            memory_filter=build_memory_state_filter(now_ts=now, include_history=include_history),
        )
        rows = self.catalog.items(
            _sql.SELECT_ITEMS_TEMPLATE.format(where=where),
            [user_id, *params, -1, 0],
        )
        return [row_to_record(r) for r in rows]

    async def alist_memories(
        self, user_id: str, *, include_history: bool = False
    ) -> list[MemoryRecord]:
        return await asyncio.to_thread(
            lambda: self.list_memories(user_id, include_history=include_history)
        )

    def delete_memory(self, user_id: str, memory_id: str) -> None:
        """Delete one memory: its row, keyword entry and vector are removed (no tombstone
        keeps the text).

        Raises:
            MemoryNotFoundError: no memory with that id for this user.
        """
        user_id = validate_user_id(user_id)
        if self.get_memory(user_id, memory_id) is None:
            raise MemoryNotFoundError(
                f"No memory {memory_id!r} for this user; list_memories() shows the ids "
                "you can delete."
            )
        namespace = encode_namespace(self._memory_namespace(user_id))
        self._apply_puts([_PreparedPut(user_id, namespace, memory_id, None)])

    async def adelete_memory(self, user_id: str, memory_id: str) -> None:
        await asyncio.to_thread(self.delete_memory, user_id, memory_id)

    def touch(self, user_id: str, memory_ids: Sequence[str]) -> None:
        """Record that these memories were recalled (``last_accessed_at``, ``access_count``).

        Unknown ids are ignored: touching is bookkeeping, not a lookup.
        """
        user_id = validate_user_id(user_id)
        now_dt = clock_now(self.clock)
        with self.catalog.transaction(changes_terms=False) as conn:
            for row in self._memory_rows(conn, user_id, list(dict.fromkeys(memory_ids))):
                # Two fields of the stored dict change: editing it directly costs
                # ~0.1 ms per touch of 8 memories, a MemoryRecord round trip ~1 ms
                # (dataclasses.asdict deep-copies), on a thread beside the next turn.
                value = row.value_dict()
                value["last_accessed_at"] = now_dt.isoformat()
                value["access_count"] = int(value.get("access_count") or 0) + 1
                updated = value.get("updated_at")
                updated_ts = (
                    to_ts(datetime.fromisoformat(updated)) if isinstance(updated, str) else None
                )
                conn.execute(
                    _sql.TOUCH_ITEM,
                    (
                        json.dumps(value, ensure_ascii=False),
                        max(now_dt.timestamp(), updated_ts or row.updated_ts),
                        row.partition,
                        row.rowid,
                    ),
                )

    async def atouch(self, user_id: str, memory_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.touch, user_id, list(memory_ids))

    def _memory_where(
        self,
        user_id: str,
        now_ts: float,
        types: Sequence[MemoryType] | None,
        keys: Sequence[str] | None = None,
        include_history: bool = False,
        as_of: datetime | None = None,
    ) -> tuple[str, list[Any]]:
        memory_filter = build_memory_state_filter(
            now_ts=now_ts,
            include_history=include_history,
            as_of_ts=to_ts(as_of),
            types=types,
            keys=keys,
        )
        return self._scope_where(
            user_id, self._memory_namespace(user_id), now=now_ts, memory_filter=memory_filter
        )

    def _shared_keyword_pass(
        self,
        plan: _QueryPlan,
        pool: int,
        pinned_where: tuple[str, list[Any]],
        pinned_pool: int,
    ) -> tuple[_RankedKeywords, _RankedKeywords] | None:
        """BM25 once for a recall turn's two searches (see ``KEYWORD_RANK_SHARED_TEMPLATE``).

        ``None`` when there is nothing to share (no keyword terms) or the pinned
        search is not selective (more than ``MAX_SHARED_PINNED_ROWS`` eligible
        rows): each search then ranks on its own.
        """
        if plan.match is None:
            return None
        where, params = pinned_where
        eligible = [
            r[0]
            for r in self.catalog.query(
                _sql.SELECT_ROWIDS_BY_TYPE_TEMPLATE.format(where=where),
                [plan.partition, *params],
            )
        ]
        if len(eligible) > MAX_SHARED_PINNED_ROWS:
            return None
        ranked_limit = pool * RANK_FIRST_OVERFETCH
        marks = ", ".join("?" for _ in eligible)
        rows = self.catalog.query(
            _sql.KEYWORD_RANK_SHARED_TEMPLATE.format(marks=marks),
            [plan.match, ranked_limit, *eligible, pinned_pool],
        )
        main = [(int(r[0]), float(r[1])) for r in rows if not r[2]]
        pinned = [(int(r[0]), float(r[1])) for r in rows if r[2]]
        # The pinned pairs are the top among *eligible* rows: every one passes the
        # filter, so fewer than the pool means there are no more.
        return (
            _RankedKeywords(main, exhaustive=len(main) < ranked_limit),
            _RankedKeywords(pinned, exhaustive=True),
        )

    def _search_memories_core(
        self,
        user_id: str,
        query: str,
        query_vector: Sequence[float] | None,
        *,
        limit: int,
        types: Sequence[MemoryType] | None,
        keys: Sequence[str] | None,
        include_history: bool,
        as_of: datetime | None,
        explain: bool,
        min_relevance: float | None,
        weights: ScoringWeights,
        now: datetime | None,
        plan: _QueryPlan | None = None,
        ranked: _RankedKeywords | None = None,
    ) -> list[ScoredMemory]:
        now_dt = now or clock_now(self.clock)
        where, params = self._memory_where(
            user_id, now_dt.timestamp(), types, keys, include_history, as_of
        )
        pool = _candidate_pool(limit)
        if plan is None:
            plan = self._plan_query(user_id, query, query_vector)
        hits = self._hybrid_hits(
            plan,
            where,
            params,
            pool,
            rank_first=types is None and keys is None,
            ranked=ranked,
        )
        if self.embeddings is None:
            weights = ScoringWeights(
                relevance=weights.relevance,
                recency=weights.recency,
                importance=weights.importance,
                half_life_days=weights.half_life_days,
                keyword_share=1.0,
                min_relevance=weights.min_relevance,
            )
        winners = rank_candidates(
            (
                Candidate(
                    ref=h.row,
                    bm25=h.bm25,
                    cosine=h.cosine,
                    last_active_ts=h.row.mem_active_ts or h.row.updated_ts,
                    importance=0.5 if h.row.mem_importance is None else h.row.mem_importance,
                    tie=h.row.key,
                )
                for h in hits
            ),
            weights=weights,
            now=now_dt,
            min_relevance=min_relevance,
        )
        # Only the winners are parsed from JSON into records.
        return [
            ScoredMemory(
                record=row_to_record(candidate.ref),
                score=parts.final,
                breakdown=parts if explain else None,
            )
            for candidate, parts in winners[:limit]
        ]

    def _recall_core(
        self,
        user_id: str,
        query: str,
        query_vector: Sequence[float] | None,
        *,
        limit: int,
        weights: ScoringWeights,
        min_relevance: float | None,
        pinned_types: Sequence[MemoryType],
        pinned_limit: int,
        pinned_weights: ScoringWeights,
        now: datetime | None,
    ) -> RecalledMemories:
        """Both searches of a recall turn over one query plan (terms, layout, cosines)."""
        now = now or clock_now(self.clock)
        plan = self._plan_query(user_id, query, query_vector)
        pinning = bool(pinned_limit and pinned_types)
        shared = None
        if pinning:
            pinned_where = self._memory_where(user_id, now.timestamp(), pinned_types)
            shared = self._shared_keyword_pass(
                plan, _candidate_pool(limit), pinned_where, _candidate_pool(pinned_limit)
            )

        def search(**kwargs: Any) -> list[ScoredMemory]:
            return self._search_memories_core(
                user_id,
                query,
                query_vector,
                keys=None,
                include_history=False,
                as_of=None,
                explain=False,
                now=now,
                plan=plan,
                **kwargs,
            )

        found = search(
            limit=limit,
            types=None,
            min_relevance=min_relevance,
            weights=weights,
            ranked=shared[0] if shared else None,
        )
        pinned: list[ScoredMemory] = []
        if pinning:
            pinned = search(
                limit=pinned_limit,
                types=pinned_types,
                min_relevance=pinned_weights.min_relevance,
                weights=pinned_weights,
                ranked=shared[1] if shared else None,
            )
        return RecalledMemories(found=found, pinned=pinned)

    def _search_args(
        self, user_id: str, query: str, limit: int, weights: Any
    ) -> tuple[str, str, ScoringWeights]:
        user_id = validate_user_id(user_id)
        if not isinstance(query, str):
            raise ConfigurationError(f"query={query!r}; pass the search text as a string.")
        if limit < 1:
            raise ConfigurationError(f"limit={limit!r}; use an integer >= 1.")
        if weights is not None and not isinstance(weights, ScoringWeights):
            raise ConfigurationError(
                f"weights={weights!r}; pass a langgraph_memory.config.ScoringWeights."
            )
        return user_id, self._redact(query), weights or self.weights

    def search_memories(
        self,
        user_id: str,
        query: str,
        *,
        limit: int = 5,
        types: Sequence[MemoryType] | None = None,
        keys: Sequence[str] | None = None,
        include_history: bool = False,
        as_of: datetime | None = None,
        explain: bool = False,
        min_relevance: float | None = None,
        weights: Any = None,
        query_embedding: Sequence[float] | None = None,
        now: datetime | None = None,
    ) -> list[ScoredMemory]:
        """Hybrid search of one user's memories, ranked by :mod:`langgraph_memory.scoring`.

        Args:
            user_id: Whose memories; nobody else's are ever read.
            query: Search text (redacted before use).
            limit: How many to return.
            types / keys: Only these memory types / profile keys.
            include_history: Also superseded and expired versions.
            as_of: What was current at that moment (overrides ``include_history``).
            explain: Attach a :class:`ScoreBreakdown` to each result.
            min_relevance: Relevance gate (default ``weights.min_relevance``).
            weights: :class:`ScoringWeights` for this call.
            query_embedding: A precomputed query vector (skips embedding the query).
            now: The clock for recency and validity (default: now, UTC).
        """
        user_id, query, scoring = self._search_args(user_id, query, limit, weights)
        vector = query_embedding
        if vector is None and self.embeddings is not None and query.strip():
            vector = self.embeddings.embed_query(query)
        return self._search_memories_core(
            user_id,
            query,
            vector,
            limit=limit,
            types=types,
            keys=keys,
            include_history=include_history,
            as_of=as_of,
            explain=explain,
            min_relevance=min_relevance,
            weights=scoring,
            now=now,
        )

    async def asearch_memories(
        self,
        user_id: str,
        query: str,
        *,
        limit: int = 5,
        types: Sequence[MemoryType] | None = None,
        keys: Sequence[str] | None = None,
        include_history: bool = False,
        as_of: datetime | None = None,
        explain: bool = False,
        min_relevance: float | None = None,
        weights: Any = None,
        query_embedding: Sequence[float] | None = None,
        now: datetime | None = None,
    ) -> list[ScoredMemory]:
        user_id, query, scoring = self._search_args(user_id, query, limit, weights)
        vector = query_embedding
        if vector is None and self.embeddings is not None and query.strip():
            vector = await self.embeddings.aembed_query(query)
        return await asyncio.to_thread(
            lambda: self._search_memories_core(
                user_id,
                query,
                vector,
                limit=limit,
                types=types,
                keys=keys,
                include_history=include_history,
                as_of=as_of,
                explain=explain,
                min_relevance=min_relevance,
                weights=scoring,
                now=now,
            )
        )

    def _recall_args(
        self,
        user_id: str,
        query: str,
        limit: int,
        weights: Any,
        pinned_types: Sequence[MemoryType],
        pinned_limit: int,
        pinned_weights: Any,
    ) -> tuple[str, str, ScoringWeights, ScoringWeights]:
        user_id, query, scoring = self._search_args(user_id, query, limit, weights)
        if pinned_limit < 0:
            raise ConfigurationError(
                f"pinned_limit={pinned_limit!r}; use an integer >= 0 (0 disables pinning)."
            )
        if pinned_weights is not None and not isinstance(pinned_weights, ScoringWeights):
            raise ConfigurationError(
                f"pinned_weights={pinned_weights!r}; pass a langgraph_memory.config.ScoringWeights."
            )
        return user_id, query, scoring, pinned_weights or scoring

    def recall_memories(
        self,
        user_id: str,
        query: str,
        *,
        limit: int = 5,
        weights: Any = None,
        min_relevance: float | None = None,
        pinned_types: Sequence[MemoryType] = (),
        pinned_limit: int = 0,
        pinned_weights: Any = None,
        query_embedding: Sequence[float] | None = None,
        now: datetime | None = None,
    ) -> RecalledMemories:
        """One recall turn's two searches in one pass: what the recall node asks.

        ``found`` equals ``search_memories(user_id, query, limit=limit, weights=weights,
        min_relevance=min_relevance)``; ``pinned`` equals the same query restricted to
        ``types=pinned_types`` with ``limit=pinned_limit`` and ``pinned_weights``
        (gate: ``pinned_weights.min_relevance``). The query is redacted and embedded
        once, its keyword terms planned once and its cosines over a cached partition
        computed once; at 10k memories that halves the work of two separate calls.

        Example:
            >>> import tempfile
            >>> from langgraph_memory.embeddings import HashingEmbeddings
            >>> from langgraph_memory.types import MemoryRecord, MemoryType
            >>> store = ChromaMemoryStore.embedded(tempfile.mkdtemp(), embeddings=HashingEmbeddings())
            >>> _ = store.put_memory(MemoryRecord(text="Allergic to seafood", user_id="alice"))
            >>> _ = store.put_memory(MemoryRecord(text="Never use honorifics", user_id="alice",
            ...                                   type=MemoryType.PROCEDURAL))
            >>> from langgraph_memory.config import ScoringWeights
            >>> got = store.recall_memories(
            ...     "alice", "seafood dinner", pinned_types=[MemoryType.PROCEDURAL],
            ...     pinned_limit=3, pinned_weights=ScoringWeights(min_relevance=0.0))
            >>> [m.record.text for m in got.found], [m.record.text for m in got.pinned]
            (['Allergic to seafood'], ['Never use honorifics'])
            >>> store.close()
        """
        user_id, query, scoring, pinned_scoring = self._recall_args(
            user_id, query, limit, weights, pinned_types, pinned_limit, pinned_weights
        )
        vector = query_embedding
        if vector is None and self.embeddings is not None and query.strip():
            vector = self.embeddings.embed_query(query)
        return self._recall_core(
            user_id,
            query,
            vector,
            limit=limit,
            weights=scoring,
            min_relevance=min_relevance,
            pinned_types=list(pinned_types),
            pinned_limit=pinned_limit,
            pinned_weights=pinned_scoring,
            now=now,
        )

    async def arecall_memories(
        self,
        user_id: str,
        query: str,
        *,
        limit: int = 5,
        weights: Any = None,
        min_relevance: float | None = None,
        pinned_types: Sequence[MemoryType] = (),
        pinned_limit: int = 0,
        pinned_weights: Any = None,
        query_embedding: Sequence[float] | None = None,
        now: datetime | None = None,
    ) -> RecalledMemories:
        user_id, query, scoring, pinned_scoring = self._recall_args(
            user_id, query, limit, weights, pinned_types, pinned_limit, pinned_weights
        )
        vector = query_embedding
        if vector is None and self.embeddings is not None and query.strip():
            vector = await self.embeddings.aembed_query(query)
        return await asyncio.to_thread(
            lambda: self._recall_core(
                user_id,
                query,
                vector,
                limit=limit,
                weights=scoring,
                min_relevance=min_relevance,
                pinned_types=list(pinned_types),
                pinned_limit=pinned_limit,
                pinned_weights=pinned_scoring,
                now=now,
            )
        )

    # -- lifecycle: expiry, archival, TTL, forgetting ---------------------------------------------

    def _set_status_where(
        self,
        user_id: str | None,
        condition: str,
        params: Sequence[Any],
        status: MemoryStatus,
        now_dt: datetime,
        keep: Any = None,
    ) -> int:
        """Move active memories matching ``condition`` to ``status`` (valid_to = now)."""
        sql = (
            f"SELECT {_sql.ITEM_COLUMNS} FROM lt_items WHERE mem_status = 'active' AND {condition}"
        )
        args: list[Any] = list(params)
        if user_id is not None:
            sql += " AND partition = ?"
            args.append(validate_user_id(user_id))
        changed = 0
        with self.catalog.transaction() as conn:
            for raw in conn.execute(sql, args).fetchall():
                row = ItemRow.from_tuple(raw)
                record = row_to_record(row)
                if keep is not None and keep(record):
                    continue
                self._update_record(
                    conn,
                    row,
                    record.evolve(status=status, valid_to=now_dt, updated_at=now_dt),
                    now_dt.timestamp(),
                )
                changed += 1
        return changed

    def expire_due(self, user_id: str | None = None, *, now: datetime | None = None) -> int:
        """Mark time-bounded memories whose ``expires_at`` passed as ``expired``; returns the count.

        Searches already hide them; this makes the state explicit (and visible in history).
        """
        now_dt = now or clock_now(self.clock)
        return self._set_status_where(
            user_id,
            "mem_expires_ts IS NOT NULL AND mem_expires_ts <= ?",
            [now_dt.timestamp()],
            MemoryStatus.EXPIRED,
            now_dt,
        )

    async def aexpire_due(self, user_id: str | None = None, *, now: datetime | None = None) -> int:
        return await asyncio.to_thread(lambda: self.expire_due(user_id, now=now))

    def archive_stale(
        self,
        user_id: str | None = None,
        *,
        threshold: float = 0.05,
        min_idle_days: float = 30.0,
        half_life_days: float | None = None,
        now: datetime | None = None,
    ) -> int:
        """Archive (status ``expired``) low-value memories nobody used for a long time.

        A memory is archived when it has been idle (not updated nor recalled) for at
        least ``min_idle_days`` and ``importance * 0.5 ** (idle_days / half_life)`` fell
        below ``threshold``. Archived memories stay in history. Returns the count.
        """
        if not 0 <= threshold <= 1:
            raise ConfigurationError(f"threshold={threshold!r}; use a value between 0 and 1.")
        if min_idle_days < 0:
            raise ConfigurationError(f"min_idle_days={min_idle_days!r}; use days >= 0.")
        half_life = half_life_days or self.weights.half_life_days
        if half_life <= 0:
            raise ConfigurationError(f"half_life_days={half_life_days!r}; use days > 0.")
        now_dt = now or clock_now(self.clock)
        idle_cutoff = now_dt.timestamp() - min_idle_days * 86_400.0

        def keep(record: MemoryRecord) -> bool:
            last = record.last_accessed_at or record.updated_at
            if max(to_ts(last) or 0.0, to_ts(record.updated_at) or 0.0) > idle_cutoff:
                return True
            return decayed_importance(record, now_dt, half_life) >= threshold

        return self._set_status_where(
            user_id, "updated_ts <= ?", [idle_cutoff], MemoryStatus.EXPIRED, now_dt, keep
        )

    async def aarchive_stale(self, user_id: str | None = None, **kwargs: Any) -> int:
        return await asyncio.to_thread(lambda: self.archive_stale(user_id, **kwargs))

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> None:
        """Run :meth:`sweep_ttl` in a daemon thread every interval (default: the
        ``TTLConfig``'s ``sweep_interval_minutes``, else 5 minutes) until
        :meth:`stop_ttl_sweeper` or :meth:`close`."""
        interval = sweep_interval_minutes
        if interval is None:
            interval = (self.ttl_config or {}).get("sweep_interval_minutes") or 5
        if interval <= 0:
            raise ConfigurationError(f"sweep_interval_minutes={interval!r}; use minutes > 0.")
        if self._sweeper is not None and self._sweeper.is_alive():
            return
        self._sweeper_stop.clear()

        def loop() -> None:
            while not self._sweeper_stop.wait(float(interval) * 60.0):
                self.sweep_ttl()

        self._sweeper = threading.Thread(target=loop, name="lgm-ttl-sweeper", daemon=True)
        self._sweeper.start()

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; returns whether it has stopped."""
        self._sweeper_stop.set()
        if self._sweeper is None:
            return True
        self._sweeper.join(timeout)
        return not self._sweeper.is_alive()

    def sweep_ttl(self, *, now: float | None = None) -> int:
        """Delete items whose BaseStore TTL ran out; returns how many."""
        now = self._now_ts() if now is None else now
        expired = self.catalog.query(_sql.SELECT_EXPIRED, (now,))
        if not expired:
            return 0
        by_partition: dict[str, list[tuple[int, str, int]]] = {}
        for rowid, item_id, partition, has_vector in expired:
            by_partition.setdefault(partition, []).append((rowid, item_id, has_vector))
        with self.catalog.transaction() as conn:
            for partition, rows in by_partition.items():
                layout = self._partition_layout(partition)
                vector_ids = [item_id for _, item_id, has_vector in rows if has_vector]
                for rowid, _, _ in rows:
                    conn.execute(_sql.DELETE_FTS_ROW, (rowid,))
                    conn.execute(_sql.DELETE_ITEM, (rowid, partition))
                if layout is not None and vector_ids:
                    self.vectors.delete(layout[0], vector_ids)
                    conn.execute(_sql.ADD_VECTOR_COUNT, (-len(vector_ids), partition))
        return len(expired)

    async def asweep_ttl(self, *, now: float | None = None) -> int:
        return await asyncio.to_thread(lambda: self.sweep_ttl(now=now))

    def _forget_store(self, user_id: str) -> tuple[int, int]:
        """Remove the partition from Chroma and SQLite, then scrub the file."""
        with self.catalog.transaction() as conn:
            rows = conn.execute(
                "SELECT rowid, item_id, has_vector, mem_status FROM lt_items WHERE partition = ?",
                (user_id,),
            ).fetchall()
            layout = self._partition_layout(user_id)
            if layout is not None:
                collection, dedicated, _, _ = layout
                if dedicated:
                    self.vectors.drop_collection(collection)
                else:
                    self.vectors.delete(collection, [r[1] for r in rows if r[2]])
            keyword_rows = 0
            for rowid, *_ in rows:
                keyword_rows += conn.execute(_sql.DELETE_FTS_ROW, (rowid,)).rowcount
            conn.execute(_sql.DELETE_PARTITION_ITEMS, (user_id,))
            conn.execute(_sql.DELETE_PARTITION, (user_id,))
        self.vector_cache.drop(user_id)
        self.catalog.scrub()
        memories = sum(1 for r in rows if r[3] is not None)
        return memories, keyword_rows

    def forget_user(
        self, user_id: str, *, checkpointer: Any = None, memory_queue: Any = None
    ) -> ForgetReceipt:
        """Remove every trace of a user: memories and items, keyword index, vectors,
        (given a ``MemoryWriter`` queue) its jobs and audit rows, and (given a
        checkpointer) every thread whose checkpoint metadata has this ``user_id``.

        Returns a receipt with counts only. Text leaves the disk: FTS5 is optimised,
        the SQLite file vacuumed and its WAL truncated; the checkpointer is vacuumed
        too when it has ``vacuum()`` (the queue normally lives in its file).
        A dedicated collection is dropped with its directory. Known gap: embedded
        Chroma keeps a shard user's raw vectors (no text) in its write-ahead log
        until it compacts that shard (see longterm/DESIGN.md).
        """
        user_id = validate_user_id(user_id)
        memories, keyword_rows = self._forget_store(user_id)
        queue_rows = int(memory_queue.forget_user(user_id)) if memory_queue is not None else 0
        threads = 0
        if checkpointer is not None:
            thread_ids = {
                t.config["configurable"]["thread_id"]
                for t in checkpointer.list(None, filter={"user_id": user_id})
            }
            for thread_id in thread_ids:
                checkpointer.delete_thread(thread_id)
            threads = len(thread_ids)
            if (thread_ids or queue_rows) and callable(getattr(checkpointer, "vacuum", None)):
                checkpointer.vacuum()
        return _forget_receipt(
            user_id, memories, keyword_rows, threads, queue_rows, clock_now(self.clock)
        )

    async def aforget_user(
        self, user_id: str, *, checkpointer: Any = None, memory_queue: Any = None
    ) -> ForgetReceipt:
        user_id = validate_user_id(user_id)
        if checkpointer is not None and not _has_async_api(checkpointer):
            # A sync-only saver: run the whole sync path off the event loop.
            return await asyncio.to_thread(
                self.forget_user, user_id, checkpointer=checkpointer, memory_queue=memory_queue
            )
        memories, keyword_rows = await asyncio.to_thread(self._forget_store, user_id)
        queue_rows = (
            int(await asyncio.to_thread(memory_queue.forget_user, user_id))
            if memory_queue is not None
            else 0
        )
        threads = 0
        if checkpointer is not None:
            thread_ids = {
                t.config["configurable"]["thread_id"]
                async for t in checkpointer.alist(None, filter={"user_id": user_id})
            }
            for thread_id in thread_ids:
                await checkpointer.adelete_thread(thread_id)
            threads = len(thread_ids)
            vacuum = getattr(checkpointer, "avacuum", None)
            if (thread_ids or queue_rows) and callable(vacuum):
                await vacuum()
        return _forget_receipt(
            user_id, memories, keyword_rows, threads, queue_rows, clock_now(self.clock)
        )


def _has_async_api(checkpointer: Any) -> bool:
    """Whether ``alist``/``adelete_thread`` are implemented (not BaseCheckpointSaver's stubs)."""
    from langgraph.checkpoint.base import BaseCheckpointSaver

    cls = type(checkpointer)
    return all(
        getattr(cls, name, None) is not getattr(BaseCheckpointSaver, name)
        for name in ("alist", "adelete_thread")
    )


def _forget_receipt(
    user_id: str,
    memories: int,
    keyword_rows: int,
    threads: int,
    queue_rows: int,
    completed_at: datetime,
) -> ForgetReceipt:
    return ForgetReceipt(
        user_id_hash=fingerprint_user_id(user_id),
        memories_deleted=memories,
        keyword_rows_deleted=keyword_rows,
        threads_deleted=threads,
        completed_at=completed_at,
        queue_rows_deleted=queue_rows,
    )
