"""Writes: items into the catalog and vectors into Chroma, partition promotion, supersede.

Every write of the store ends in :meth:`Writes._apply_puts`: one catalog
transaction, one Chroma call per collection. A partition that outgrows its
shard moves to a dedicated collection *before* the write that crosses the
threshold (:meth:`Writes._collection_for_write`). Typed memories add the
"two active memories never share a key" rule (:meth:`Writes._put_record_core`).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterable, Sequence
from functools import partial
from typing import Any, NamedTuple

from langgraph_memory._drive import Call, Steps
from langgraph_memory.clock import now as clock_now
from langgraph_memory.errors import MemoryNotFoundError
from langgraph_memory.limits import check_memory_id
from langgraph_memory.longterm._state import PreparedPut, StoreState
from langgraph_memory.longterm.rows import (
    ItemRow,
    item_id_for,
    record_columns,
    row_to_record,
    seal_value,
    term_scope,
    to_ts,
)
from langgraph_memory.longterm.tokenize import scoped_index_text
from langgraph_memory.longterm.vectors import dedicated_collection_name, shard_collection_name
from langgraph_memory.longterm.where import encode_namespace
from langgraph_memory.scoring import importance_score, last_active_at
from langgraph_memory.types import MemoryRecord, MemoryStatus


class Deleted(NamedTuple):
    """What a group of puts deleted: catalog rows, and the collections that held
    their vectors or that a promoted partition left (Chroma keeps a deleted
    vector's bytes until the collection is rebuilt)."""

    rows: int
    collections: frozenset[str]


class Writes(StoreState):
    """Catalog + vector writes, partition promotion and typed-memory supersede."""

    def _embed_puts_steps(self, puts: Sequence[PreparedPut]) -> Steps[None]:
        """Fill each put's ``vector`` (one embedding call for the group)."""
        if self.embeddings is None:
            return
        todo = [p for p in puts if p.value is not None and p.texts]
        if todo:
            texts = ["\n".join(p.texts) for p in todo]
            vectors = yield Call(self.embeddings, "embed_documents", (texts,))
            for put, vector in zip(todo, vectors, strict=True):
                put.vector = list(vector)

    def _record_intent(self, entries: Sequence[tuple[str, str]]) -> str | None:
        """Commit ``(partition, item_id)`` pairs whose vectors are about to change.

        Must run outside any catalog transaction (it commits on its own, before
        Chroma is touched); the write's own transaction deletes the rows
        (:meth:`_settle_intent`). Rows a crash leaves behind are repaired on the
        next open (``repair.py``). Returns the intent's token.
        """
        if not entries:
            return None
        sql = self.catalog.sql
        token = uuid.uuid4().hex
        now = time.time()  # bookkeeping, not a memory time
        rows = [(token, partition, item_id, now) for partition, item_id in dict.fromkeys(entries)]
        with self.catalog.transaction(changes_terms=False) as conn:
            conn.executemany(sql.INSERT_VECTOR_INTENT, rows)
        return token

    def _settle_intent(self, conn: Any, token: str | None, partitions: Iterable[str]) -> None:
        """Inside the write's transaction: lock its partitions (sorted: no deadlock
        between instances) and drop its intent rows, committed with the catalog."""
        sql = self.catalog.sql
        if sql.LOCK_PARTITION:
            for partition in sorted(set(partitions)):
                conn.execute(sql.LOCK_PARTITION, (partition,))
        if token is not None:
            conn.execute(sql.DELETE_VECTOR_INTENTS, (token,))

    def _apply_puts(
        self,
        puts: Sequence[PreparedPut],
        *,
        now: float | None = None,
        intent: str | None = None,
        intent_recorded: bool = False,
    ) -> Deleted:
        """Write a group of puts: one catalog transaction, one Chroma call per collection.

        Chroma is written inside the catalog transaction, so a Chroma failure rolls
        the catalog back. The vectors a crash or an outage could leave disagreeing
        with the catalog are named in an intent committed first (``intent``: a
        caller that opened its own transaction recorded it already), and
        repaired on the next open. A partition that outgrows its shard is
        promoted *before* its new vectors are written, so a bulk load writes
        each vector once.

        Returns what its deletes removed, for the erasure that follows (``erasure.py``).
        """
        if not puts:
            return Deleted(0, frozenset())
        sql = self.catalog.sql
        now = self._now_ts() if now is None else now
        last: dict[tuple[str, str, str], PreparedPut] = {}
        for put in puts:  # last write wins inside a batch, as in LangGraph's stores
            last[(put.partition, put.namespace, put.key)] = put
        if not intent_recorded:
            intent = self._record_intent(self._intent_entries(last.values()))
        upserts: dict[str, tuple[list[str], list[list[float]]]] = {}
        deletes: dict[str, list[str]] = {}
        deltas: dict[str, int] = {}
        deleted_rows = 0
        vacated: set[str] = set()
        with self.catalog.transaction() as conn:
            self._settle_intent(conn, intent, (p.partition for p in last.values()))
            for put in last.values():
                old_raw = conn.execute(
                    sql.SELECT_ITEM, (put.partition, put.namespace, put.key)
                ).fetchone()
                old = (
                    None
                    if old_raw is None
                    else ItemRow.from_tuple(old_raw, self.catalog.encryption)
                )
                item_id = item_id_for(put.partition, put.namespace, put.key)
                had_vector = old is not None and bool(old.has_vector)
                if put.value is None:
                    if old is None:
                        continue
                    conn.execute(sql.DELETE_FTS_ROW, (old.rowid,))
                    conn.execute(sql.DELETE_ITEM, (old.rowid, put.partition))
                    self.record_cache.drop(put.partition)
                    if not deleted_rows:
                        self.catalog.mark_erased(conn)  # Postgres: VACUUM FULL owed
                    deleted_rows += 1
                    has_vector = False
                else:
                    has_vector = put.vector is not None
                    expires = None if put.ttl_minutes is None else now + put.ttl_minutes * 60.0
                    rowid = conn.execute(
                        sql.UPSERT_ITEM,
                        (
                            item_id,
                            put.partition,
                            put.namespace,
                            put.key,
                            seal_value(
                                self.catalog.encryption,
                                put.partition,
                                item_id,
                                json.dumps(put.value, ensure_ascii=False),
                            ),
                            now,
                            now,
                            put.ttl_minutes,
                            expires,
                            int(has_vector),
                            *record_columns(put.value),
                        ),
                    ).fetchone()[0]
                    conn.execute(sql.DELETE_FTS_ROW, (rowid,))
                    body = scoped_index_text("\n".join(put.texts), term_scope(put.partition))
                    if body:
                        conn.execute(sql.INSERT_FTS_ROW, (rowid, body))
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
            versions: dict[str, tuple[int, int]] = {}
            for partition in sorted({*upserts, *deletes}):
                collection = self._collection_for_write(
                    conn, partition, deltas.get(partition, 0), vacated, versions
                )
                gone, ids, vecs = by_collection.setdefault(collection, ([], [], []))
                gone.extend(deletes.get(partition, []))
                new_ids, new_vecs = upserts.get(partition, ([], []))
                ids.extend(new_ids)
                vecs.extend(new_vecs)
            for collection, (gone, ids, vecs) in by_collection.items():
                self.vectors.delete(collection, gone)
                self.vectors.upsert(collection, ids, vecs)
            self._carry_cached_vectors(versions, upserts, deletes)
        erased = {c for c, (gone, _, _) in by_collection.items() if gone}
        return Deleted(deleted_rows, frozenset(erased | vacated))

    def _carry_cached_vectors(
        self,
        versions: dict[str, tuple[int, int]],
        upserts: dict[str, tuple[list[str], list[list[float]]]],
        deletes: dict[str, list[str]],
    ) -> None:
        """Once the write commits, move cached partitions to their new version
        with the vectors just written (not on rollback: the old entry then
        stays valid)."""
        if self.vector_cache.max_bytes <= 0 or not self.index_config:
            return
        dims = int(self.index_config["dims"])
        for partition, change in versions.items():
            ids, vecs = upserts.get(partition, ([], []))
            written = dict(zip(ids, vecs, strict=True))
            removed = list(deletes.get(partition, []))
            self.catalog.after_commit(
                partial(self.vector_cache.apply_write, partition, change, written, removed, dims)
            )

    def _intent_entries(self, puts: Iterable[PreparedPut]) -> list[tuple[str, str]]:
        if self.embeddings is None:
            return []  # no vectors: nothing can disagree
        return [(p.partition, item_id_for(p.partition, p.namespace, p.key)) for p in puts]

    def _collection_for_write(
        self,
        conn: Any,
        partition: str,
        delta: int,
        vacated: set[str] | None = None,
        versions: dict[str, tuple[int, int]] | None = None,
    ) -> str:
        """The collection a partition's vectors go to, after applying ``delta`` to its count.

        Creates the partition's layout row on first write, and promotes it from
        its shard to a dedicated collection when the count passes the threshold
        (the shard is added to ``vacated``: its files still hold the vectors).
        ``versions`` gets the partition's version before and after this write
        (for the vector cache: :meth:`PartitionVectorCache.apply_write`).
        """
        sql = self.catalog.sql
        # Locked until commit (Postgres): another instance's write to this
        # partition waits, so counts and promotion see every committed vector.
        found = conn.execute(sql.SELECT_PARTITION_FOR_WRITE, (partition,)).fetchone()
        layout = None if found is None else (str(found[0]), bool(found[1]), int(found[2]), 0)
        if layout is None:
            name = shard_collection_name(self.collection_prefix, partition, self.shards)
            conn.execute(sql.INSERT_PARTITION, (partition, name))
            layout = (name, False, 0, 0)
        name, dedicated, count, _ = layout
        # Always, even with delta 0: a changed vector under an existing id must bump
        # the version too, or an in-process vector cache would keep the old one.
        bumped = conn.execute(sql.ADD_VECTOR_COUNT, (delta, partition)).fetchone()
        if versions is not None and found is not None:
            versions[partition] = (int(found[3]), int(bumped[0]))
        if dedicated or count + delta <= self.dedicated_threshold:
            return name
        target = dedicated_collection_name(self.collection_prefix, partition)
        ids = [r[1] for r in conn.execute(sql.SELECT_PARTITION_ITEM_IDS, (partition,)).fetchall()]
        copied = self.vectors.copy_vectors(name, target, ids)  # ids not yet in Chroma skipped
        conn.execute(sql.SET_DEDICATED, (target, partition))
        self.vectors.delete(name, copied)
        if vacated is not None and copied:
            vacated.add(name)
        return target

    # -- typed memories ------------------------------------------------------------------

    def _rows_by_key(self, conn: Any, user_id: str, key: str) -> list[ItemRow]:
        namespace = encode_namespace(self._memory_namespace(user_id))
        return [
            ItemRow.from_tuple(r, self.catalog.encryption)
            for r in conn.execute(
                self.catalog.sql.SELECT_ACTIVE_BY_MEM_KEY, (user_id, namespace, key)
            ).fetchall()
        ]

    def _memory_rows(self, conn: Any, user_id: str, memory_ids: Sequence[str]) -> list[ItemRow]:
        memory_ids = [check_memory_id(m) for m in memory_ids]  # typed, before any SQL
        if not memory_ids:
            return []
        namespace = encode_namespace(self._memory_namespace(user_id))
        marks = ", ".join("?" for _ in memory_ids)
        return [
            ItemRow.from_tuple(r, self.catalog.encryption)
            for r in conn.execute(
                self.catalog.sql.SELECT_MEMORIES_BY_ID_TEMPLATE.format(marks=marks),
                (user_id, namespace, *memory_ids),
            ).fetchall()
        ]

    def _update_record(self, conn: Any, row: ItemRow, record: MemoryRecord, now: float) -> None:
        conn.execute(
            self.catalog.sql.UPDATE_VALUE,
            (
                seal_value(
                    self.catalog.encryption,
                    row.partition,
                    row.item_id,
                    json.dumps(record.to_dict(), ensure_ascii=False),
                ),
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
        self, record: MemoryRecord, put: PreparedPut, supersede_id: str | None
    ) -> MemoryRecord:
        """Write ``record``, superseding ``supersede_id`` and any active memory with its key."""
        now_dt = clock_now(self.clock)
        now = now_dt.timestamp()
        # Superseded rows keep their vectors: only the new record's can change.
        intent = self._record_intent(self._intent_entries([put]))
        with self.catalog.transaction() as conn:
            # The partition lock first (Postgres): two instances reconciling this
            # user's key wait for each other, and nothing this transaction updates
            # below can be locked by a writer that then waits for us.
            self._settle_intent(conn, None, [record.user_id])
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
            deleted = self._apply_puts([put], now=now, intent=intent, intent_recorded=True)
        self._after_deletes(deleted)
        return record

    def _after_deletes(self, deleted: Deleted) -> None:
        """Erasure after a write (``erasure.py`` overrides it): here, nothing."""
