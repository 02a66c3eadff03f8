"""The LangGraph ``BaseStore`` surface: ``batch``/``abatch`` over LangGraph's ops.

Every op of a batch is validated (and every put and query redacted) before
anything is written; texts are embedded in one call per batch; then the ops
run in order against the catalog and the vectors, consecutive puts grouped
into one write (:meth:`Writes._apply_puts`). The rest of LangGraph's store API
(``get``, ``put``, ``search``, ``list_namespaces`` and their ``a*`` twins)
comes from ``BaseStore`` on top of these two methods.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langgraph.store.base import (
    BaseStore,
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
from langgraph_memory.errors import (
    ConfigurationError,
    InvalidNamespaceError,
    InvalidUserIdError,
)
from langgraph_memory.limits import check_store_key
from langgraph_memory.longterm._state import MIN_CANDIDATE_POOL, PreparedPut
from langgraph_memory.longterm.erasure import Erasure
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
    check_namespace_argument,
    decode_namespace,
    encode_namespace,
    is_user_partition,
    partition_of,
    validate_labels,
)
from langgraph_memory.longterm.writes import Deleted
from langgraph_memory.scoring import cosine_to_score, normalise_bm25, relevance_score


def _namespace_checked(name: str, *, for_write: bool = False) -> Any:
    """BaseStore's ``name`` (sync or async) with our typed namespace errors first.

    LangGraph validates namespace labels in its public methods, before ``batch``,
    with an error outside our tree (and a ``TypeError`` for a non-tuple); these
    wrappers check the argument the same way and raise ``InvalidNamespaceError``.
    """
    base = getattr(BaseStore, name)

    def check(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if name == "list_namespaces" or name == "alist_namespaces":
            for arg in ("prefix", "suffix"):
                if kwargs.get(arg) is not None:
                    check_namespace_argument(kwargs[arg], for_write=False)
        elif args:
            check_namespace_argument(args[0], for_write=for_write)

    if inspect.iscoroutinefunction(base):

        async def amethod(self: Any, *args: Any, **kwargs: Any) -> Any:
            check(args, kwargs)
            return await base(self, *args, **kwargs)

        method: Any = amethod
    else:

        def smethod(self: Any, *args: Any, **kwargs: Any) -> Any:
            check(args, kwargs)
            return base(self, *args, **kwargs)

        method = smethod
    method.__name__ = method.__qualname__ = name
    method.__doc__ = base.__doc__
    return method


class StoreSurface(Retrieval, Erasure):
    """``batch``/``abatch``: LangGraph's get, put, search and list_namespaces ops."""

    get = _namespace_checked("get")
    aget = _namespace_checked("aget")
    search = _namespace_checked("search")
    asearch = _namespace_checked("asearch")
    put = _namespace_checked("put", for_write=True)
    aput = _namespace_checked("aput", for_write=True)
    delete = _namespace_checked("delete")
    adelete = _namespace_checked("adelete")
    list_namespaces = _namespace_checked("list_namespaces")
    alist_namespaces = _namespace_checked("alist_namespaces")

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
        check_store_key(op.key)
        if op.value is None:
            return PreparedPut(partition, encode_namespace(namespace), op.key, None)
        if not isinstance(op.value, Mapping):
            raise ConfigurationError(
                f"value={op.value!r:.80} ({type(op.value).__name__}); a store value is a "
                "dict, e.g. {'content': 'likes tea'} (None deletes the item)."
            )
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
                check_store_key(op.key)
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
                self._listed_user(op)
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
        deleted: list[Deleted] = []
        for i, op in enumerate(ops):
            if i in puts:
                pending.append(puts[i])
                continue
            if pending:  # consecutive puts go to SQLite and Chroma in one round each
                deleted.append(self._apply_puts(pending))
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
            deleted.append(self._apply_puts(pending))
        self._erase_deleted(deleted)  # a delete leaves no text or vector behind
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

    def _listed_user(self, op: ListNamespacesOp) -> str | None:
        """The one user whose namespaces ``op`` may list, from a ``(root, user_id)`` prefix.

        Listing never enumerates users: without such a prefix only the shared
        namespaces (roots that are not user roots) are listed, and a prefix that
        names a user root but no user (``("memories",)``, ``("memories", "*")``)
        is refused, as a search over it is.

        Raises:
            InvalidNamespaceError: a user-root prefix without a user id.
            InvalidUserIdError: a malformed user id in the prefix.
        """
        users = set()
        for condition in op.match_conditions or ():
            path = tuple(condition.path)
            if condition.match_type != "prefix" or not path or path[0] not in self.user_roots:
                continue
            if len(path) < 2 or path[1] == "*":
                raise InvalidNamespaceError(
                    f"list_namespaces(prefix={path!r}) would list every user's namespaces; "
                    f"pass the user: prefix=({path[0]!r}, user_id)."
                )
            users.add(partition_of(path[:2], user_roots=self.user_roots))
        if len(users) > 1:
            raise InvalidNamespaceError(
                f"list_namespaces with prefixes of several users {sorted(users)!r}; list one "
                "user's namespaces per call."
            )
        return next(iter(users), None)

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        sql = self.catalog.sql
        user = self._listed_user(op)
        namespaces = [
            ns
            for ns in (decode_namespace(r[0]) for r in self.catalog.query(sql.SELECT_NAMESPACES))
            if ns[0] not in self.user_roots or (len(ns) > 1 and ns[1] == user)
        ]

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
