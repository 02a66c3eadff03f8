"""Retrieval and ranking: one query plan, the keyword and vector candidates, the final order.

A search is planned once (:meth:`Retrieval._plan_query`: keyword terms worth
asking for, the partition's layout, the query vector), then
:meth:`Retrieval._hybrid_hits` gathers candidates from the keyword index and
the vectors (cache, shard get-by-id or a dedicated collection's HNSW), always
through a catalog query bound to ``partition = ?``, and
:func:`langgraph_memory.scoring.rank_candidates` orders them.
:meth:`Retrieval._recall_core` answers a recall turn's two searches over one
plan. ``longterm/DESIGN.md`` has the numbers behind each choice.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from langgraph_memory._pools import shared_pool
from langgraph_memory.clock import now as clock_now
from langgraph_memory.config import ScoringWeights
from langgraph_memory.longterm._state import (
    COMMON_TERM_SHARE,
    RANK_FIRST_OVERFETCH,
    Hit,
    QueryPlan,
    RankedKeywords,
    RecalledMemories,
    StoreState,
    candidate_pool,
    layout_from_row,
)
from langgraph_memory.longterm.rows import ItemRow, term_scope, to_ts
from langgraph_memory.longterm.tokenize import query_tokens
from langgraph_memory.longterm.vectors import cosine_scores, normalised_matrix
from langgraph_memory.longterm.where import (
    build_memory_state_filter,
    build_namespace_prefix,
    build_value_filter,
    is_user_partition,
)
from langgraph_memory.scoring import Candidate, rank_candidates
from langgraph_memory.types import MemoryRecord, MemoryType, ScoredMemory

# Partitions up to this many vectors have every memory ranked for recall's core
# profile (one catalog query ordered by importance: ~0.3 ms at 500 rows); larger
# ones only their keyed slots (see ``PROFILE_KEYED_ROWS_TEMPLATE``).
PROFILE_SCAN_MAX_ROWS = 500

# Recall's pinned search shares the query's keyword pass while the user has at
# most this many memories of the pinned types (their rowids are bound in SQL).
MAX_SHARED_PINNED_ROWS = 500

# From this many cached vectors on, a recall turn computes its cosines on a worker
# thread while the catalog answers the keyword pass: numpy's product and SQLite's
# FTS5/BM25 both release the GIL, so on two cores the ~0.6 ms product at 10k x 384
# hides behind the ~2 ms BM25 pass. Below, the product costs less than the handoff.
PARALLEL_COSINE_MIN_VECTORS = 2_000


def _top_positions(sims: np.ndarray, pool: int) -> Sequence[int]:
    """Rows of the ``pool + 10`` best cosines, unordered (over-fetch: the state filter
    drops some)."""
    take = min(len(sims), pool + 10)
    if take < len(sims):
        top: list[int] = np.argpartition(-sims, take - 1)[:take].tolist()
        return top
    return range(len(sims))


class Retrieval(StoreState):
    """Query planning, hybrid candidates and ranking (read-only: writes live in ``writes.py``)."""

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
        filter_sql, filter_params = build_value_filter(
            value_filter,
            dialect=self.catalog.dialect,
            encrypted=self.catalog.encryption is not None,
        )
        clauses.append(filter_sql)
        params.extend(filter_params)
        # Unqualified columns are unambiguous in the FTS join too (lt_keywords has only body).
        return " AND ".join(clauses), params

    def _plan_query(
        self, partition: str, query: str, query_vector: Sequence[float] | None
    ) -> QueryPlan:
        """Term planning, partition layout and (lazily) cosines: done once per query,
        however many filtered searches (:meth:`recall_memories`) answer it."""
        scope = term_scope(partition)
        terms = [scope + t for t in query_tokens(query)]
        # One catalog call for both (on Postgres one round trip: ~10 per turn there).
        terms, row = self.catalog.plan_query(partition, terms, COMMON_TERM_SHARE)
        layout = None if row is None else layout_from_row(row)
        if query_vector is None or self.embeddings is None:
            query_vector = None
        return QueryPlan(partition, self.catalog.match_params(terms), query_vector, layout)

    def _cached_scores(self, plan: QueryPlan) -> tuple[list[str], dict[str, int], np.ndarray]:
        """``(ids, id -> row, cosine per row)`` from the in-process cache, computed once per plan."""
        if plan.pending is not None:
            plan.pending.result()  # the worker's (or its error, raised here)
        if plan.cached_scores is None:
            assert plan.layout is not None and plan.vector is not None
            collection, _, _, version = plan.layout
            partition = plan.partition
            entry = self.vector_cache.get(partition, version)
            if entry is None:
                sql = self.catalog.sql
                ids = [r[0] for r in self.catalog.query(sql.SELECT_VECTOR_IDS, (partition,))]
                found = self.vectors.vectors_by_id(collection, ids)
                dims = int(self.index_config["dims"]) if self.index_config else 0
                entry = (list(found), normalised_matrix(list(found.values()), dims))
                self.vector_cache.put(partition, version, *entry)
            self._score_cached(plan, *entry)
        assert plan.cached_scores is not None
        return plan.cached_scores

    def _score_cached(self, plan: QueryPlan, ids: list[str], matrix: np.ndarray) -> None:
        """Fill ``plan.cached_scores`` from a cached partition's ids and matrix (no I/O)."""
        assert plan.vector is not None
        sims = cosine_scores(matrix, plan.vector) if ids else np.empty(0, np.float32)
        plan.cached_scores = (ids, self.vector_cache.positions(plan.partition, ids), sims)

    def _cosines_beside(self, plan: QueryPlan, pools: Sequence[int]) -> None:
        """Start the plan's cosines, and the top rows for each of ``pools``, on a worker
        (``plan.pending``) when they come from a large partition already in the vector
        cache and keyword SQL is about to run; else they are computed on first use, as
        before. The worker does no I/O (the matrix is handed to it), and the first use
        waits for it."""
        layout = plan.layout
        if (
            plan.vector is None
            or plan.match_params is None
            or layout is None
            or not layout[1]
            or self.vector_cache.max_bytes <= 0
            or not PARALLEL_COSINE_MIN_VECTORS <= layout[2] <= self.cache_max_vectors
        ):
            return
        entry = self.vector_cache.get(plan.partition, layout[3])
        if entry is None:  # loading it is I/O (catalog and Chroma): done on first use
            return

        def work(ids: list[str], matrix: np.ndarray) -> None:
            self._score_cached(plan, ids, matrix)
            assert plan.cached_scores is not None
            for pool in pools:  # argpartition releases the GIL too
                plan.tops[pool] = _top_positions(plan.cached_scores[2], pool)

        plan.pending = shared_pool("cosine").submit(work, *entry)

    def _vector_scores(self, plan: QueryPlan, pool: int) -> tuple[dict[str, float], bool]:
        """``(top pool by cosine, whether from the cache)``.

        For dedicated partitions: the in-process cache (exact, no Chroma call) up
        to ``cache_max_vectors``, else the collection's HNSW query. Shard-tier
        partitions are ranked in :meth:`_hybrid_hits` from one get-by-id.
        """
        assert plan.layout is not None and plan.vector is not None
        collection, _, count, _ = plan.layout
        if self.vector_cache.max_bytes > 0 and count <= self.cache_max_vectors:
            ids, _, sims = self._cached_scores(plan)
            if not ids:
                return {}, True
            top = plan.tops.get(pool)
            if top is None:
                top = _top_positions(sims, pool)
            return {ids[i]: float(sims[i]) for i in top}, True
        return self.vectors.ann_search(collection, plan.vector, min(pool + 10, count)), False

    def _shard_cosines(self, plan: QueryPlan, rows: Sequence[ItemRow]) -> dict[str, float]:
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

    def _filter_ranked_read(
        self, partition: str, where: str, params: list[Any], ranked: RankedKeywords
    ) -> tuple[str, list[Any]]:
        """The catalog read of :meth:`_filter_ranked`: ``ranked``'s rows that pass the filter."""
        marks, hits = self.catalog.id_list([hit for hit, _ in ranked.pairs])
        return (
            self.catalog.sql.SELECT_ROWS_BY_ROWID_TEMPLATE.format(marks=marks, where=where),
            [*hits, partition, *params],
        )

    @staticmethod
    def _filter_ranked(rows: list[Any], pool: int, ranked: RankedKeywords) -> list[Any] | None:
        """The top ``pool`` of ``ranked`` among ``rows`` (those that passed the
        filter), as keyword rows (item columns + score); ``None`` when too few
        passed and more matches exist beyond the cut-off (the caller then ranks
        after filtering)."""
        if len(rows) < pool and not ranked.exhaustive:
            return None
        score = dict(ranked.pairs)
        rows.sort(key=lambda raw: (-score[raw[0]], raw[0]))  # ties: the older row
        return [(*raw, score[raw[0]]) for raw in rows[:pool]]

    def _hybrid_hits(
        self,
        plan: QueryPlan,
        where: str,
        params: list[Any],
        pool: int,
        *,
        rank_first: bool = False,
        ranked: RankedKeywords | None = None,
    ) -> list[Hit]:
        """Candidates from the keyword index and the vector index, merged by row.

        ``rank_first``: the filter keeps most rows (no type/key/value filter), so
        keyword matches are ranked before the catalog join (see
        ``KEYWORD_RANK_THEN_FILTER_TEMPLATE``), with an exact fallback.
        ``ranked``: keyword matches this search's caller already ranked (recall's
        shared pass); only filtered here, with the same fallback.

        The keyword read and the vector side's row read are independent: the
        catalog answers both in one round trip where it can (``query_many``).
        Vector candidates only become hits through a catalog query bound to
        ``partition = ?`` and the caller's ``where``: an id from anywhere else
        (another user's, a superseded version) is silently dropped.
        """
        sql = self.catalog.sql
        partition = plan.partition
        reads: list[tuple[str, Sequence[Any]]] = []
        keyword_rows: list[Any] | None = None
        keyword_kind = None
        rank = getattr(self.catalog, "rank_keywords", None)
        if rank is not None and ranked is None and rank_first and plan.match_params is not None:
            # A catalog holding the partition's postings in process (Postgres) ranks
            # here: no keyword statement, only the winners' rows are read.
            ranked = rank(partition, plan.match_params, pool * RANK_FIRST_OVERFETCH)
        if plan.match_params is not None:
            if ranked is not None and ranked.pairs:
                keyword_kind = "ranked"
                reads.append(self._filter_ranked_read(partition, where, params, ranked))
            elif ranked is not None and ranked.exhaustive:
                keyword_rows = []
            elif ranked is None and rank_first:
                keyword_kind = "rank_first"
                reads.append(
                    (
                        sql.KEYWORD_RANK_THEN_FILTER_TEMPLATE.format(where=where),
                        [*plan.match_params, pool * RANK_FIRST_OVERFETCH, partition, *params],
                    )
                )
            elif ranked is None:
                keyword_kind = "filtered"
                reads.append(
                    (
                        sql.KEYWORD_SEARCH_TEMPLATE.format(where=where),
                        [*plan.match_params, partition, *params, pool],
                    )
                )
        layout = plan.layout
        use_vectors = plan.vector is not None and layout is not None
        best: dict[str, float] = {}
        from_cache = False
        if use_vectors and layout is not None and not layout[1]:
            # Shard tier (<= dedicated_threshold vectors): the eligible rows in one
            # query, their vectors in one get-by-id, exact cosine for all of them.
            # A random user's first query costs the same as the next one, which
            # matters with 10k users and a handful of memories each.
            reads.append(
                (sql.SELECT_VECTOR_ROWS_TEMPLATE.format(where=where), [partition, *params])
            )
        elif use_vectors:
            best, from_cache = self._vector_scores(plan, pool)
            if best:
                marks, ids = self.catalog.id_list(list(best))
                reads.append(
                    (
                        sql.SELECT_ROWS_BY_ITEM_ID_TEMPLATE.format(marks=marks, where=where),
                        [partition, *ids, *params],
                    )
                )
        results = self.catalog.query_many(reads)
        if keyword_kind is not None:
            found = results.pop(0)
            if keyword_kind == "filtered":
                keyword_rows = found
            elif keyword_kind == "ranked":
                assert ranked is not None
                keyword_rows = self._filter_ranked(found, pool, ranked)
            # Exact unless fewer than ``pool`` winners passed the filter while
            # more matches exist beyond the cut-off: then rank after filtering.
            elif found and (len(found) >= pool or found[0][-2] < pool * RANK_FIRST_OVERFETCH):
                found.sort(key=lambda raw: -raw[-1])
                keyword_rows = found[:pool]
        if keyword_rows is None and plan.match_params is not None:  # the exact fallback
            keyword_rows = self.catalog.query(
                sql.KEYWORD_SEARCH_TEMPLATE.format(where=where),
                [*plan.match_params, partition, *params, pool],
            )
        hits: dict[str, Hit] = {}
        for raw in keyword_rows or ():
            row = ItemRow.from_tuple(raw, self.catalog.encryption)
            hits[row.item_id] = Hit(row, bm25=float(raw[-1]))
        if not use_vectors or layout is None:
            return list(hits.values())
        if not layout[1]:
            shard_rows = [ItemRow.from_tuple(r, self.catalog.encryption) for r in results[0]]
            exact = self._shard_cosines(plan, shard_rows)
            for item_id, hit in hits.items():
                hit.cosine = exact.get(item_id)
            scored_rows = sorted(
                (r for r in shard_rows if r.item_id in exact), key=lambda r: -exact[r.item_id]
            )
            for row in scored_rows[:pool]:
                hits.setdefault(row.item_id, Hit(row, cosine=exact[row.item_id]))
            return list(hits.values())
        if from_cache and plan.cached_scores is not None:
            # Exact cosine of the keyword hits, wherever they rank by vector.
            _, position, sims = plan.cached_scores
            for item_id, hit in hits.items():
                if item_id in position:
                    hit.cosine = float(sims[position[item_id]])
        if best:
            vector_rows = [
                row
                for row in (ItemRow.from_tuple(r, self.catalog.encryption) for r in results[0])
                if row.item_id not in hits
            ]
            ranked_rows = sorted(vector_rows, key=lambda r: -best[r.item_id])[:pool]
            for row in ranked_rows:
                hits[row.item_id] = Hit(row, cosine=best[row.item_id])
        for item_id, hit in hits.items():
            if hit.cosine is None and item_id in best:
                hit.cosine = best[item_id]
        return list(hits.values())

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
        plan: QueryPlan,
        pool: int,
        pinned_where: tuple[str, list[Any]],
        pinned_pool: int,
    ) -> tuple[RankedKeywords, RankedKeywords] | None:
        """BM25 once for a recall turn's two searches (see ``KEYWORD_RANK_SHARED_TEMPLATE``).

        ``None`` when there is nothing to share (no keyword terms) or the pinned
        search is not selective (more than ``MAX_SHARED_PINNED_ROWS`` eligible
        rows): each search then ranks on its own.
        """
        sql = self.catalog.sql
        if plan.match_params is None:
            return None
        where, params = pinned_where
        ranked_limit = pool * RANK_FIRST_OVERFETCH
        one_statement = getattr(sql, "KEYWORD_RANK_SHARED_ELIGIBLE_TEMPLATE", None)
        if one_statement is not None:  # Postgres: the eligible rows found in the same round trip
            rows = self.catalog.query(
                one_statement.format(where=where),
                [
                    *plan.match_params,
                    plan.partition,
                    *params,
                    MAX_SHARED_PINNED_ROWS + 1,
                    ranked_limit,
                    pinned_pool,
                ],
            )
            if int(rows[-1][0]) > MAX_SHARED_PINNED_ROWS:
                return None
            rows = rows[:-1]
            return self._shared_ranked(rows, ranked_limit)
        eligible = [
            r[0]
            for r in self.catalog.query(
                sql.SELECT_ROWIDS_BY_TYPE_TEMPLATE.format(where=where),
                [plan.partition, *params],
            )
        ]
        if len(eligible) > MAX_SHARED_PINNED_ROWS:
            return None
        marks = ", ".join("?" for _ in eligible)
        rows = self.catalog.query(
            sql.KEYWORD_RANK_SHARED_TEMPLATE.format(marks=marks),
            [*plan.match_params, ranked_limit, *eligible, pinned_pool],
        )
        return self._shared_ranked(rows, ranked_limit)

    @staticmethod
    def _shared_ranked(
        rows: Sequence[Sequence[Any]], ranked_limit: int
    ) -> tuple[RankedKeywords, RankedKeywords]:
        """``(hit, score, pinned?)`` rows of the shared pass as the two searches' rankings."""
        main = [(int(r[0]), float(r[1])) for r in rows if not r[2]]
        pinned = [(int(r[0]), float(r[1])) for r in rows if r[2]]
        # The pinned pairs are the top among *eligible* rows: every one passes the
        # filter, so fewer than the pool means there are no more.
        return (
            RankedKeywords(main, exhaustive=len(main) < ranked_limit),
            RankedKeywords(pinned, exhaustive=True),
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
        plan: QueryPlan | None = None,
        ranked: RankedKeywords | None = None,
    ) -> list[ScoredMemory]:
        now_dt = now or clock_now(self.clock)
        where, params = self._memory_where(
            user_id, now_dt.timestamp(), types, keys, include_history, as_of
        )
        pool = candidate_pool(limit)
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
                record=self.record_cache.record(candidate.ref),
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
        profile_limit: int = 0,
    ) -> RecalledMemories:
        """Both searches of a recall turn over one query plan (terms, layout, cosines),
        and with ``profile_limit`` the core-profile candidates (:meth:`_profile_rows`)."""
        now = now or clock_now(self.clock)
        plan = self._plan_query(user_id, query, query_vector)
        pinning = bool(pinned_limit and pinned_types)
        shared = None
        if pinning:
            # While the shared keyword pass runs: the two searches' vector sides.
            self._cosines_beside(plan, (candidate_pool(limit), candidate_pool(pinned_limit)))
            pinned_where = self._memory_where(user_id, now.timestamp(), pinned_types)
            shared = self._shared_keyword_pass(
                plan, candidate_pool(limit), pinned_where, candidate_pool(pinned_limit)
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
        profile = self._profile_rows(user_id, plan, now, profile_limit) if profile_limit else ()
        return RecalledMemories(found=found, pinned=pinned, profile=profile)

    def _profile_rows(
        self, user_id: str, plan: QueryPlan, now: datetime, limit: int
    ) -> tuple[MemoryRecord, ...]:
        """Current memories by importance, whatever the query: every memory of a
        partition of at most ``PROFILE_SCAN_MAX_ROWS`` vectors, only keyed slots beyond."""
        sql = self.catalog.sql
        template = getattr(sql, "PROFILE_ROWS_TEMPLATE", None)
        if template is None:  # a catalog dialect without the statements: no profile pass
            return ()
        count = plan.layout[2] if plan.layout is not None else 0
        if count > PROFILE_SCAN_MAX_ROWS:
            template = sql.PROFILE_KEYED_ROWS_TEMPLATE
        where, params = self._memory_where(user_id, now.timestamp(), None)
        rows = self.catalog.items(
            template.format(columns=sql.ITEM_COLUMNS, where=where),
            [plan.partition, *params, limit],
        )
        return tuple(self.record_cache.record(row) for row in rows)
