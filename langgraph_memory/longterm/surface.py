"""The LangGraph ``BaseStore`` surface: ``batch``/``abatch`` over LangGraph's ops.

Every op of a batch is validated (and every put and query redacted) before
anything is written; texts are embedded in one call per batch; then the ops
run in order against the catalog and the vectors, consecutive puts grouped
into one write (:meth:`Writes._apply_puts`). The rest of LangGraph's store API
(``get``, ``put``, ``search``, ``list_namespaces`` and their ``a*`` twins)
comes from ``BaseStore`` on top of these two methods.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from langgraph.store.base import (
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from langgraph_memory._drive import Blocking, Call, Steps, arun, run
from langgraph_memory.errors import ConfigurationError, InvalidUserIdError
from langgraph_memory.longterm._state import MIN_CANDIDATE_POOL, PreparedPut
from langgraph_memory.longterm.retrieval import Retrieval
from langgraph_memory.longterm.rows import (
    ItemRow,
    looks_like_record,
    redact_value,
    row_to_item,
    texts_to_index,
)
from langgraph_memory.longterm.where import (
    build_value_filter,
    decode_namespace,
    encode_namespace,
    is_user_partition,
    partition_of,
    validate_labels,
)
from langgraph_memory.longterm.writes import Writes
from langgraph_memory.scoring import cosine_to_score, normalise_bm25, relevance_score


class StoreSurface(Retrieval, Writes):
    """``batch``/``abatch``: LangGraph's get, put, search and list_namespaces ops."""

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return run(self._batch_steps(ops))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await arun(self._batch_steps(ops))

    def _batch_steps(self, ops: Iterable[Op]) -> Steps[list[Result]]:
        op_list = list(ops)
        puts, queries = self._prepare_ops(op_list)
        yield from self._embed_puts_steps(list(puts.values()))
        query_vectors: dict[int, list[float]] = {}
        if self.embeddings is not None and queries:
            order = list(queries)
            texts = [queries[i][1] for i in order]
            vectors = yield Call(self.embeddings, "embed_documents", (texts,))
            query_vectors = dict(zip(order, (list(v) for v in vectors), strict=True))
        results: list[Result] = yield Blocking(
            lambda: self._execute(op_list, puts, queries, query_vectors)
        )
        return results

    def _prepare_put(self, op: PutOp) -> PreparedPut:
        namespace = validate_labels(op.namespace)
        partition = partition_of(namespace, user_roots=self.user_roots)
        if op.value is None:
            return PreparedPut(partition, encode_namespace(namespace), op.key, None)
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
        return PreparedPut(
            partition, encode_namespace(namespace), op.key, value, texts, ttl_minutes=op.ttl
        )

    def _prepare_ops(
        self, ops: Sequence[Op]
    ) -> tuple[dict[int, PreparedPut], dict[int, tuple[str, str]]]:
        """Validate every op up front (nothing is written if one is bad); redact puts and queries."""
        puts: dict[int, PreparedPut] = {}
        queries: dict[int, tuple[str, str]] = {}
        for i, op in enumerate(ops):
            if isinstance(op, PutOp):
                puts[i] = self._prepare_put(op)
            elif isinstance(op, GetOp):
                partition_of(op.namespace, user_roots=self.user_roots)
            elif isinstance(op, SearchOp):
                partition = partition_of(op.namespace_prefix, user_roots=self.user_roots)
                build_value_filter(
                    op.filter,
                    dialect=self.catalog.dialect,
                    encrypted=self.catalog.encryption is not None,
                )
                if op.query:
                    queries[i] = (partition, self._redact(op.query))
            elif isinstance(op, ListNamespacesOp):
                for condition in op.match_conditions or ():
                    validate_labels(tuple(lab for lab in condition.path if lab != "*"))
            else:
                raise ConfigurationError(f"Unknown store op {op!r}.")
        return puts, queries

    def _execute(
        self,
        ops: Sequence[Op],
        puts: dict[int, PreparedPut],
        queries: dict[int, tuple[str, str]],
        query_vectors: dict[int, list[float]],
    ) -> list[Result]:
        results: list[Result] = [None] * len(ops)
        pending: list[PreparedPut] = []
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
        sql = self.catalog.sql
        namespace = tuple(op.namespace)
        partition = partition_of(namespace, user_roots=self.user_roots)
        rows = self.catalog.items(sql.SELECT_ITEM, (partition, encode_namespace(namespace), op.key))
        if not rows:
            return None
        row = rows[0]
        now = self._now_ts()
        if row.expires_ts is not None and row.expires_ts <= now:
            return None
        if row.ttl_minutes is not None and self._refresh(op.refresh_ttl):
            with self.catalog.transaction() as conn:
                conn.execute(sql.REFRESH_TTL, (now, partition, row.rowid))
        return row_to_item(row)

    def _search(
        self, op: SearchOp, query: str | None, query_vector: list[float] | None
    ) -> list[SearchItem]:
        sql = self.catalog.sql
        prefix = tuple(op.namespace_prefix)
        partition = partition_of(prefix, user_roots=self.user_roots)
        now = self._now_ts()
        where, params = self._scope_where(partition, prefix, now=now, value_filter=op.filter)
        if not query:
            rows = self.catalog.items(
                sql.SELECT_ITEMS_TEMPLATE.format(where=where),
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
        sql = self.catalog.sql
        due = [r for r in rows if r.ttl_minutes is not None]
        if due:
            with self.catalog.transaction() as conn:
                for row in due:
                    conn.execute(sql.REFRESH_TTL, (now, partition, row.rowid))

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        sql = self.catalog.sql
        namespaces = [decode_namespace(r[0]) for r in self.catalog.query(sql.SELECT_NAMESPACES)]

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
