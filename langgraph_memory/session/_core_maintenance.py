"""Maintaining stored threads: deletion and erasure, retention, copying, resealing.

The ``SaverCore`` (``_core.py``) transactions that are not a checkpoint's put
or read: ``delete_thread`` (tombstone, erase marks), rewriting stored values
in place, ``undelete_thread``, ``delete_for_runs`` and ``keep_last`` with
their garbage collection, ``prune``, ``copy_thread``, resealing under a new
key, and the retention sweep's plan and storage stats.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from langgraph_memory.errors import ConfigurationError, ThreadDeletedError
from langgraph_memory.session._channels import ENCODING_ITEMS, ranges_from_json
from langgraph_memory.session._core_base import CoreBase
from langgraph_memory.session._encoding import (
    INLINE_VALUES_KEY,
    _json_default,
    body_versions,
    parse_thread_id,
)
from langgraph_memory.session._retention import (
    CheckpointSkeleton,
    StorageStats,
    StoredValue,
    SweepReport,
    ThreadStats,
    close_over_delta_history,
    keep_newest,
    plan_garbage,
    threads_to_evict,
)
from langgraph_memory.session._rewrites import ValueRewrite
from langgraph_memory.session._statements import Execute, ExecuteMany, Fetch, Txn


class CoreMaintenance(CoreBase):
    """Deletion, erasure, garbage collection, copying, resealing and the sweep's reads."""

    # ---------------------------------------------------------------- deletion

    def delete_thread_txn(self, thread_id: str, *, tombstone: bool = True) -> Txn[None]:
        sql = self.sql
        tid = parse_thread_id(thread_id)
        self.activity.forget(tid)
        self.owners.forget(tid)
        self.recent_rewrites.forget(tid)
        for stmt in (
            sql.DELETE_THREAD_CHECKPOINTS,
            sql.DELETE_THREAD_WRITES,
            sql.DELETE_THREAD_CHANNEL_VALUES,
            sql.DELETE_THREAD_CHUNKS,
        ):
            yield Execute(stmt, (tid,))
        now = time.time()
        if tombstone:
            yield Execute(sql.TOMBSTONE_THREAD, (tid, now, now, now))
        yield from self._mark_erase_pending(sql.THREAD_RELATIONS, now)

    def _mark_erase_pending(self, relations: Sequence[str], now: float) -> Txn[None]:
        """Record, in the erasing transaction, the relations whose dead tuples a
        later ``erase_pending()`` must rewrite (Postgres; SQLite erases at once)."""
        mark = self.sql.MARK_ERASE_PENDING
        if mark is not None and relations:
            yield ExecuteMany(mark, [(relation, now) for relation in relations])

    def erase_pending_txn(self) -> Txn[list[tuple[str, int, float]]]:
        """The marked relations as ``(relation, generation, since)``."""
        if self.sql.MARK_ERASE_PENDING is None:
            return []
        rows = yield Fetch(self.sql.SELECT_ERASE_PENDING)
        return [(str(r), int(g), float(t)) for r, g, t in rows]

    def clear_erase_pending_txn(self, done: Sequence[tuple[str, int, float]]) -> Txn[None]:
        """Clear the marks a rewrite served (a mark renewed meanwhile stays)."""
        if done:
            yield ExecuteMany(self.sql.CLEAR_ERASE_PENDING, [(r, g) for r, g, _ in done])

    # ---------------------------------------------------------------- rewriting values

    def rewrite_values_txn(self, thread_id: str, rewrite: ValueRewrite) -> Txn[int]:
        """Rewrite the thread's stored values in place with ``rewrite``; returns the rows
        changed. Used to erase one deleted memory from the recall blocks a thread's
        checkpoints keep (``nodes/recall_erasure.py``).

        Every channel value, list chunk and pending write of the thread is opened
        (sealed rows too) and decoded, unless it is plain msgpack and
        ``rewrite.may_touch`` says its bytes cannot hold what is erased; a value
        ``rewrite`` returns unchanged (the same object) is not written. A chunk
        keeps its item count: chunks are addressed by item numbers. Checkpoint
        bodies are not read: they carry only versions and scalars of up to 256
        characters, never a message.
        """
        sql = self.sql
        tid = parse_thread_id(thread_id)
        sealer, serde = self.sealer, self.serde

        def redo(type_: Any, blob: Any, kind: str, *ident: Any) -> tuple[str, bytes] | None:
            c_type, c_blob = sealer.open(type_, blob, kind, *ident)
            raw = bytes(c_blob)
            if c_type == "msgpack" and not rewrite.may_touch(raw):
                return None
            value = serde.loads_typed((c_type, raw))
            new = rewrite(value)
            if new is value:
                return None
            if kind == "chunk" and (type(new) is not list or len(new) != len(value)):
                raise ConfigurationError(
                    f"rewrite {rewrite!r} changed the length of a stored list (thread "
                    f"{tid!r}); a rewrite must map each item to one item."
                )
            n_type, n_blob = serde.dumps_typed(new)
            return sealer.seal(n_type, n_blob, kind, *ident)

        count = 0
        updates: list[tuple[Any, ...]] = []
        for ns, ch, ver, v_type, blob in (yield Fetch(sql.SELECT_THREAD_VALUE_BLOBS, (tid,))):
            done = redo(v_type, blob, "value", tid, ns, ch, ver)
            if done is not None:
                updates.append((*done, tid, ns, ch, ver))
        if updates:
            yield ExecuteMany(sql.UPDATE_VALUE_BLOB, updates)
        count += len(updates)
        updates = []
        for ns, ch, seq_lo, c_type, blob in (yield Fetch(sql.SELECT_THREAD_CHUNK_BLOBS, (tid,))):
            done = redo(c_type, blob, "chunk", tid, ns, ch)
            if done is not None:
                updates.append((*done, tid, ns, ch, seq_lo))
        if updates:
            yield ExecuteMany(sql.UPDATE_CHUNK_BLOB, updates)
        count += len(updates)
        updates = []
        rows = yield Fetch(sql.SELECT_THREAD_WRITE_BLOBS, (tid,))
        for ns, cid, task_id, idx, ch, w_type, blob in rows:
            done = redo(w_type, blob, "write", tid, ns, cid, task_id, idx, ch)
            if done is not None:
                updates.append((*done, tid, ns, cid, task_id, idx))
        if updates:
            yield ExecuteMany(sql.UPDATE_WRITE_BLOB, updates)
        count += len(updates)
        if count:
            self.cache.discard_thread(tid)  # reads must not serve the old items
            yield from self._mark_erase_pending(sql.REWRITE_RELATIONS, time.time())
        return count

    def undelete_thread_txn(self, thread_id: str) -> Txn[None]:
        tid = parse_thread_id(thread_id)
        self.activity.forget(tid)
        self.owners.forget(tid)
        yield Execute(self.sql.CLEAR_TOMBSTONE, (tid,))

    def delete_for_runs_txn(self, run_ids: Sequence[str]) -> Txn[int]:
        ids = [str(r) for r in run_ids]
        if not ids:
            return 0
        rows = yield Fetch(self.sql.SELECT_CHECKPOINTS_FOR_RUNS, (json.dumps(ids),))
        touched: set[tuple[str, str]] = set()
        for thread_id, ns, cid in rows:
            yield Execute(self.sql.DELETE_CHECKPOINT, (thread_id, ns, cid))
            yield Execute(self.sql.DELETE_CHECKPOINT_WRITES, (thread_id, ns, cid))
            touched.add((thread_id, ns))
        for thread_id, ns in sorted(touched):
            yield from self._collect_garbage(thread_id, ns, keep=None)
        return len(rows)

    def _namespace_state(
        self, thread_id: str, ns: str
    ) -> Txn[tuple[list[CheckpointSkeleton], dict[tuple[str, str], StoredValue], list[str]]]:
        rows = yield Fetch(self.sql.SELECT_NAMESPACE_CHECKPOINTS, (thread_id, ns))
        skeletons = []
        for cid, parent, c_type, c_body, metadata in rows:
            c_type, c_body = self.sealer.open(c_type, c_body, "checkpoint", thread_id, ns, cid)
            body = self.serde.loads_typed((c_type, c_body))
            inline = body.get(INLINE_VALUES_KEY) or {}
            # A value the checkpoint carries inline needs no row (an older
            # checkpoint's row of the same version can go with that checkpoint).
            versions = {ch: v for ch, v in body_versions(body).items() if ch not in inline}
            meta = json.loads(metadata) if isinstance(metadata, (str, bytes)) else metadata or {}
            counters = meta.get("counters_since_delta_snapshot") or {}
            skeletons.append(CheckpointSkeleton(cid, parent, versions, frozenset(counters)))
        v_rows = yield Fetch(self.sql.SELECT_NAMESPACE_CHANNEL_VALUES, (thread_id, ns))
        stored = {
            (ch, ver): StoredValue(
                ch, ver, enc, ranges_from_json(ranges) if enc == ENCODING_ITEMS and ranges else ()
            )
            for ch, ver, enc, ranges in v_rows
        }
        c_rows = yield Fetch(self.sql.SELECT_CHUNK_CHANNELS, (thread_id, ns))
        return skeletons, stored, [r[0] for r in c_rows]

    def _collect_garbage(self, thread_id: str, ns: str, *, keep: int | None) -> Txn[int]:
        """Drop checkpoints beyond ``keep`` (None: none) and everything nobody needs."""
        skeletons, stored, item_channels = yield from self._namespace_state(thread_id, ns)
        if keep is None:
            kept = {s.checkpoint_id for s in skeletons}
        else:
            kept = close_over_delta_history(keep_newest(skeletons, keep), skeletons, stored)
        plan = plan_garbage(skeletons, kept, stored, item_channels)
        sql = self.sql
        for cid in plan.checkpoints:
            yield Execute(sql.DELETE_CHECKPOINT, (thread_id, ns, cid))
            yield Execute(sql.DELETE_CHECKPOINT_WRITES, (thread_id, ns, cid))
        if plan.channel_values:
            yield ExecuteMany(
                sql.DELETE_CHANNEL_VALUE,
                [(thread_id, ns, ch, ver) for ch, ver in plan.channel_values],
            )
        for ch, gaps in plan.chunk_gaps.items():
            yield ExecuteMany(
                sql.DELETE_CHUNKS_IN_GAP, [(thread_id, ns, ch, lo, hi) for lo, hi in gaps]
            )
        return len(plan.checkpoints)

    def prune_txn(self, thread_id: str, strategy: str) -> Txn[int]:
        tid = parse_thread_id(thread_id)
        if strategy == "delete":
            yield from self.delete_thread_txn(tid, tombstone=False)
            return 0
        if strategy != "keep_latest":
            raise ConfigurationError(f"prune strategy={strategy!r}; use 'keep_latest' or 'delete'.")
        return (yield from self.keep_last_txn(tid, 1))

    def keep_last_txn(self, thread_id: str, keep: int) -> Txn[int]:
        rows = yield Fetch(self.sql.SELECT_THREAD_NAMESPACES, (thread_id,))
        removed = 0
        for (ns,) in rows:
            removed += yield from self._collect_garbage(thread_id, ns, keep=keep)
        yield Execute(self.sql.RESET_RETENTION_COUNTER, (thread_id,))
        return removed

    # ---------------------------------------------------------------- copy

    def copy_thread_txn(self, source_thread_id: str, target_thread_id: str) -> Txn[None]:
        sql = self.sql
        src = parse_thread_id(source_thread_id)
        dst = parse_thread_id(target_thread_id)
        if src == dst:
            raise ConfigurationError(
                f"copy_thread source and target are both {src!r}; pass two different thread ids."
            )
        tomb = yield Fetch(sql.SELECT_TOMBSTONE, (dst,))
        if tomb:
            raise ThreadDeletedError(
                f"copy_thread target {dst!r} was deleted; deleted threads stay deleted. "
                "Use a new id, or undelete_thread() it first."
            )
        existing = yield Fetch(sql.SELECT_THREAD_NAMESPACES, (dst,))
        if existing:
            raise ConfigurationError(
                f"copy_thread target {dst!r} already has checkpoints; copy into a new thread id "
                "or delete_thread() the target first."
            )
        namespaces = yield Fetch(sql.SELECT_THREAD_NAMESPACES, (src,))
        if not namespaces:
            return
        for stmt in (
            sql.COPY_CHECKPOINTS,
            sql.COPY_WRITES,
            sql.COPY_CHANNEL_VALUES,
            sql.COPY_CHUNKS,
        ):
            yield Execute(stmt, (dst, src))
        if self.sealer.enabled:
            # Rows are bound to their thread: the copies open only once resealed as dst's.
            yield from self.reseal_thread_txn(dst, source_thread_id=src)
        now = time.time()
        yield Fetch(sql.UPSERT_THREAD_ON_WRITES, (dst, now, now))

    # ---------------------------------------------------------------- encryption: reseal

    def threads_with_rows_txn(self, after: str, limit: int) -> Txn[list[str]]:
        rows = yield Fetch(self.sql.SELECT_THREADS_WITH_ROWS_AFTER, (after, limit))
        return [str(r[0]) for r in rows]

    def reseal_thread_txn(
        self,
        thread_id: str,
        *,
        source_thread_id: str | None = None,
        encrypt_plaintext: bool = False,
    ) -> Txn[int]:
        """Rewrite the thread's rows that are not sealed under the current key
        (every row, when they were copied from ``source_thread_id``); returns how
        many rows were rewritten. Rows under the current key are only read, so
        a second run after an interruption costs reads, not writes."""
        sealer = self.sealer
        if not sealer.enabled:
            raise ConfigurationError(
                "reencrypt() needs a saver opened with encryption=EncryptionKeys(...)."
            )
        sql = self.sql
        tid = thread_id
        src = source_thread_id or thread_id
        moved = src != tid
        plain = encrypt_plaintext

        def due(type_: Any, blob: Any) -> bool:
            return moved or sealer.needs_reseal(type_, blob)

        count = 0
        rows = yield Fetch(sql.SELECT_THREAD_CHECKPOINT_BLOBS, (tid,))
        updates: list[tuple[Any, ...]] = []
        for ns, cid, c_type, body, meta in rows:
            if not (due(c_type, body) or sealer.metadata_needs_reseal(meta)):
                continue
            c_type, body = sealer.reseal(
                c_type, body, "checkpoint", (src, ns, cid), (tid, ns, cid), encrypt_plaintext=plain
            )
            meta = sealer.reseal_metadata(
                meta, _json_default, (src, ns, cid), (tid, ns, cid), encrypt_plaintext=plain
            )
            updates.append((c_type, body, meta, tid, ns, cid))
        if updates:
            yield ExecuteMany(sql.UPDATE_CHECKPOINT_BLOB, updates)
        count += len(updates)
        rows = yield Fetch(sql.SELECT_THREAD_VALUE_BLOBS, (tid,))
        updates = [
            (
                *sealer.reseal(
                    v_type,
                    blob,
                    "value",
                    (src, ns, ch, ver),
                    (tid, ns, ch, ver),
                    encrypt_plaintext=plain,
                ),
                tid,
                ns,
                ch,
                ver,
            )
            for ns, ch, ver, v_type, blob in rows
            if due(v_type, blob)
        ]
        if updates:
            yield ExecuteMany(sql.UPDATE_VALUE_BLOB, updates)
        count += len(updates)
        rows = yield Fetch(sql.SELECT_THREAD_CHUNK_BLOBS, (tid,))
        updates = [
            (
                *sealer.reseal(
                    c_type, blob, "chunk", (src, ns, ch), (tid, ns, ch), encrypt_plaintext=plain
                ),
                tid,
                ns,
                ch,
                seq_lo,
            )
            for ns, ch, seq_lo, c_type, blob in rows
            if due(c_type, blob)
        ]
        if updates:
            yield ExecuteMany(sql.UPDATE_CHUNK_BLOB, updates)
        count += len(updates)
        rows = yield Fetch(sql.SELECT_THREAD_WRITE_BLOBS, (tid,))
        updates = [
            (
                *sealer.reseal(
                    w_type,
                    blob,
                    "write",
                    (src, ns, cid, task_id, idx, ch),
                    (tid, ns, cid, task_id, idx, ch),
                    encrypt_plaintext=plain,
                ),
                tid,
                ns,
                cid,
                task_id,
                idx,
            )
            for ns, cid, task_id, idx, ch, w_type, blob in rows
            if due(w_type, blob)
        ]
        if updates:
            yield ExecuteMany(sql.UPDATE_WRITE_BLOB, updates)
        return count + len(updates)

    # ---------------------------------------------------------------- retention sweep, stats

    def stats_txn(self, thread_id: str | None) -> Txn[StorageStats]:
        tid = parse_thread_id(thread_id) if thread_id is not None else None
        size = yield Fetch(self.sql.SELECT_DB_SIZE)
        free = yield Fetch(self.sql.SELECT_FREE_BYTES)
        rows = yield Fetch(self.sql.SELECT_THREAD_STATS, (tid, tid))
        threads = tuple(
            ThreadStats(r[0], int(r[1]), int(r[2]), int(r[3]), int(r[4]), int(r[5]), float(r[6]))
            for r in rows
            if int(r[1]) > 0 or tid is not None
        )
        return StorageStats(int(size[0][0]), int(free[0][0]), threads)

    def sweep_plan_txn(self, now: float) -> Txn[tuple[list[str], list[str], int]]:
        """Threads to expire (TTL) and evict (size cap), and the used bytes."""
        policy = self.retention
        expired: list[str] = []
        evicted: list[str] = []
        size = yield Fetch(self.sql.SELECT_DB_SIZE)
        free = yield Fetch(self.sql.SELECT_FREE_BYTES)
        used = int(size[0][0]) - int(free[0][0])
        if policy is None:
            return expired, evicted, used
        if policy.thread_ttl_seconds is not None:
            rows = yield Fetch(self.sql.SELECT_IDLE_THREADS, (now - policy.thread_ttl_seconds,))
            expired = [r[0] for r in rows]
        if policy.max_bytes is not None and used > policy.max_bytes:
            activity = yield Fetch(self.sql.SELECT_THREAD_ACTIVITY)
            stats = yield Fetch(self.sql.SELECT_THREAD_STATS, (None, None))
            payload = {r[0]: int(r[2]) + int(r[3]) + int(r[4]) + int(r[5]) for r in stats}
            evicted = threads_to_evict(
                [(r[0], float(r[1])) for r in activity],
                payload,
                used_bytes=used,
                max_bytes=policy.max_bytes,
                already_deleted=expired,
            )
        return expired, evicted, used

    def live_threads_txn(self) -> Txn[list[str]]:
        rows = yield Fetch(self.sql.SELECT_THREAD_ACTIVITY)
        return [r[0] for r in rows]

    def size_txn(self) -> Txn[int]:
        size = yield Fetch(self.sql.SELECT_DB_SIZE)
        return int(size[0][0])

    @staticmethod
    def report(
        *,
        dry_run: bool,
        expired: Sequence[str],
        evicted: Sequence[str],
        pruned: int,
        before: int,
        after: int,
    ) -> SweepReport:
        return SweepReport(
            dry_run=dry_run,
            expired_threads=tuple(expired),
            evicted_threads=tuple(evicted),
            pruned_checkpoints=pruned,
            bytes_before=before,
            bytes_after=after,
        )
