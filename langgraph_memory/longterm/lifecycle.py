"""The lifecycle of stored memories: expiry, archival, the TTL sweeper, ``forget_user``.

``expire_due`` and ``archive_stale`` move typed memories to ``expired`` (kept
in history); ``sweep_ttl`` (and the sweeper thread) deletes BaseStore items
whose TTL ran out; ``forget_user`` removes every trace of one user from the
catalog, the vectors and, when given, the memory queue and a checkpointer.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from langgraph_memory._drive import Blocking, Call, Steps, arun, run
from langgraph_memory.clock import now as clock_now
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.longterm.erasure import Erasure, _has_async_api, _Threads
from langgraph_memory.longterm.rows import ItemRow, row_to_record, to_ts
from langgraph_memory.longterm.where import validate_user_id
from langgraph_memory.privacy import fingerprint_user_id
from langgraph_memory.scoring import decayed_importance
from langgraph_memory.types import ForgetReceipt, MemoryRecord, MemoryStatus


class Lifecycle(Erasure):
    """Expiry, archival, TTL sweeps and forgetting a user."""

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
        statements = self.catalog.sql
        select = statements.SELECT_ACTIVE_WHERE_TEMPLATE
        args: list[Any] = list(params)
        if user_id is not None:
            select = statements.SELECT_PARTITION_ACTIVE_WHERE_TEMPLATE
            args.append(validate_user_id(user_id))
        changed = 0
        with self.catalog.transaction() as conn:
            for raw in conn.execute(select.format(condition=condition), args).fetchall():
                row = ItemRow.from_tuple(raw, self.catalog.encryption)
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
        sql = self.catalog.sql
        now = self._now_ts() if now is None else now
        expired = self.catalog.query(sql.SELECT_EXPIRED, (now,))
        if not expired:
            return 0
        by_partition: dict[str, list[tuple[int, str, int]]] = {}
        for rowid, item_id, partition, has_vector in expired:
            by_partition.setdefault(partition, []).append((rowid, item_id, has_vector))
        intent = self._record_intent(
            [
                (partition, item_id)
                for rowid, item_id, partition, has_vector in expired
                if has_vector
            ]
        )
        deleted = 0
        with self.catalog.transaction() as conn:
            self._settle_intent(conn, intent, by_partition)
            for partition, rows in by_partition.items():
                layout = self._partition_layout(partition)
                vector_ids = []
                for rowid, item_id, has_vector in rows:
                    conn.execute(sql.DELETE_FTS_ROW, (rowid,))
                    # Another instance's sweep may have deleted it first.
                    if conn.execute(sql.DELETE_ITEM, (rowid, partition)).rowcount:
                        if not deleted:
                            self.catalog.mark_erased(conn)  # Postgres: VACUUM FULL owed
                        deleted += 1
                        self.record_cache.drop(partition)
                        if has_vector:
                            vector_ids.append(item_id)
                if layout is not None and vector_ids:
                    self.vectors.delete(layout[0], vector_ids)
                    conn.execute(sql.ADD_VECTOR_COUNT, (-len(vector_ids), partition)).fetchall()
        if deleted:
            # Expired text leaves the keyword index's segments too. Collections are
            # not rebuilt for TTL expiry (it runs every few minutes): a rebuild is for
            # explicit erasure (delete, forget_user).
            self.catalog.scrub(vacuum=False)
        return deleted

    async def asweep_ttl(self, *, now: float | None = None) -> int:
        return await asyncio.to_thread(lambda: self.sweep_ttl(now=now))

    def _forget_store(self, user_id: str) -> tuple[int, int, int, int]:
        """Remove the partition from Chroma and SQLite, scrub the file, rebuild its shard.

        Returns ``(memories, keyword rows, collections rebuilt, vectors rewritten)``.
        """
        sql = self.catalog.sql
        # "*": the whole partition is checked if this is interrupted (repair.py).
        intent = self._record_intent([(user_id, "*")])
        dropped: str | None = None
        with self.catalog.transaction() as conn:
            self._settle_intent(conn, intent, [user_id])
            rows = conn.execute(sql.SELECT_PARTITION_ROWS_TO_FORGET, (user_id,)).fetchall()
            layout = self._partition_layout(user_id)
            if layout is not None:
                collection, dedicated, _, _ = layout
                if dedicated:
                    self.vectors.drop_collection(collection)
                    dropped = collection
                else:
                    self.vectors.delete(collection, [r[1] for r in rows if r[2]])
            keyword_rows = 0
            for rowid, *_ in rows:
                keyword_rows += conn.execute(sql.DELETE_FTS_ROW, (rowid,)).rowcount
            conn.execute(sql.DELETE_PARTITION_ITEMS, (user_id,))
            conn.execute(sql.DELETE_PARTITION, (user_id,))
        self.vector_cache.drop(user_id)
        self.record_cache.drop(user_id)
        self.catalog.scrub()
        rebuilt, rewritten = (0, 0)
        if self.embeddings is not None:
            # The deleted ids' vectors are still in Chroma's files: rebuild the
            # shard the user lives in, or lived in before a promotion. Also when
            # the user has no layout any more: a forget_user a crash cut short is
            # finished by calling it again.
            rebuilt, rewritten = self._erase_partition_vectors(user_id, dropped)
        memories = sum(1 for r in rows if r[3] is not None)
        return memories, keyword_rows, rebuilt, rewritten

    def forget_user(
        self, user_id: str, *, checkpointer: Any = None, memory_queue: Any = None
    ) -> ForgetReceipt:
        """Remove every trace of a user: memories and items, keyword index, vectors,
        (given a ``MemoryWriter`` queue) its jobs and audit rows, and (given a
        checkpointer) every thread the user owns (``threads_of_user``: the user of its
        first write, from ``configurable`` or the Runtime context) or whose checkpoint
        metadata has this ``user_id``.

        Returns a content-free receipt: counts, and what was scanned. Text leaves the
        disk: FTS5 is optimised, the SQLite file vacuumed and its WAL truncated; the
        checkpointer is vacuumed too when it has ``vacuum()`` (the queue normally lives
        in its file). Vectors: a dedicated collection is dropped with its directory,
        and the user's shard (where they live, or lived before a promotion) is
        rebuilt without them (``erasure.py``). On a Chroma server, run
        ``compact_chroma_directory`` on its directory afterwards
        (``receipt.server_compaction_needed``).
        """
        return run(self._forget_steps(user_id, checkpointer, memory_queue))

    async def aforget_user(
        self, user_id: str, *, checkpointer: Any = None, memory_queue: Any = None
    ) -> ForgetReceipt:
        user_id = validate_user_id(user_id)
        if checkpointer is not None and not _has_async_api(checkpointer):
            # A sync-only saver: run the whole sync path off the event loop.
            return await asyncio.to_thread(
                self.forget_user, user_id, checkpointer=checkpointer, memory_queue=memory_queue
            )
        return await arun(self._forget_steps(user_id, checkpointer, memory_queue))

    def _forget_steps(
        self, user_id: str, checkpointer: Any, memory_queue: Any
    ) -> Steps[ForgetReceipt]:
        user_id = validate_user_id(user_id)
        memories, keyword_rows, rebuilt, rewritten = yield Blocking(
            lambda: self._forget_store(user_id)
        )
        scanned = [
            "catalog",
            "keyword_index",
            "vectors:embedded" if self.vectors.is_local else "vectors:server",
        ]
        queue_rows = 0
        if memory_queue is not None:
            queue_rows = int((yield Blocking(lambda: memory_queue.forget_user(user_id))))
            scanned += ["queue_jobs", "queue_audit"]
        threads = 0
        if checkpointer is not None:
            saver = _Threads(checkpointer)
            thread_ids: set[str] = yield Call(saver, "thread_ids", (user_id,))
            for thread_id in thread_ids:
                yield Call(checkpointer, "delete_thread", (thread_id,))
            threads = len(thread_ids)
            scanned.append("checkpoints")
            if thread_ids or queue_rows:
                yield Call(saver, "vacuum")
        return ForgetReceipt(
            user_id_hash=fingerprint_user_id(user_id),
            memories_deleted=memories,
            keyword_rows_deleted=keyword_rows,
            threads_deleted=threads,
            completed_at=clock_now(self.clock),
            queue_rows_deleted=queue_rows,
            scanned=tuple(scanned),
            vector_collections_rebuilt=rebuilt,
            vectors_rewritten=rewritten,
            server_compaction_needed=rebuilt > 0 and not self.vectors.is_local,
        )
