"""Writing checkpoints: ``put`` and ``put_writes`` of ``SaverCore`` (``_core.py``).

A put is prepared outside the transaction (``prepare_put``: validated,
serialised, sealed; lists as deltas against the cache), stored by
``put_txn`` or as rows of the dialect's one-statement write (``put_rows``),
and remembered after commit (``finish_put``). Task writes go the same way
(``prepare_writes``, ``writes_txn``, ``writes_rows``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.serde.types import RESUME

from langgraph_memory.errors import ConfigurationError, ThreadDeletedError
from langgraph_memory.limits import MAX_CHECKPOINT_ID_BYTES
from langgraph_memory.session._channels import (
    ENCODING_ITEMS,
    ENCODING_VALUE,
    MAX_CHUNK_ITEMS,
    CachedList,
    ListPlan,
    full_list_plan,
    plan_list_encoding,
    ranges_to_json,
)
from langgraph_memory.session._core_base import CoreBase
from langgraph_memory.session._encoding import (
    COMPACT_BLOCK,
    INLINE_VALUES_KEY,
    CheckpointKey,
    _json_default,
    checkpoint_config,
    is_inline_value,
    merge_msgpack_chunks,
    parse_config,
    version_key,
)
from langgraph_memory.session._inputs import (
    check_put_arguments,
    check_text,
    check_writes,
    checked_id,
    serialization_refused,
)
from langgraph_memory.session._prepared import (
    STEP_ENDING_CHANNELS,
    FastWrite,
    PreparedPut,
    PreparedValue,
    PreparedWrites,
    PutOutcome,
    writes_may_wait_for_checkpoint,
)
from langgraph_memory.session._statements import Execute, ExecuteMany, Fetch, Txn


class CoreWrites(CoreBase):
    """``put`` and ``put_writes``: prepared before the transaction, stored inside it."""

    # ---------------------------------------------------------------- put

    def prepare_put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> PreparedPut:
        key = parse_config(config)
        check_put_arguments(checkpoint, metadata, new_versions)
        checkpoint_id = checkpoint.get("id")
        if not isinstance(checkpoint_id, str) or not checkpoint_id:
            raise ConfigurationError(
                f"checkpoint id {checkpoint_id!r} must be a non-empty string (LangGraph's uuid6 id)."
            )
        checked_id("checkpoint id", checkpoint_id, MAX_CHECKPOINT_ID_BYTES)
        values = checkpoint.get("channel_values") or {}
        if self.redactor is not None:
            values = {ch: self.redactor.value(v) for ch, v in values.items()}
        if self.recent_rewrites:
            values = {ch: self.recent_rewrites.apply(key.thread_id, v) for ch, v in values.items()}
        body = {k: v for k, v in checkpoint.items() if k != "channel_values"}
        versions = checkpoint.get("channel_versions") or {}
        inline = {ch: v for ch, v in values.items() if ch in versions and is_inline_value(v)}
        if inline:
            body[INLINE_VALUES_KEY] = inline
        try:
            type_, blob = self.serde.dumps_typed(body)
        except (TypeError, ValueError) as exc:
            raise serialization_refused("the checkpoint", body, exc) from exc
        sealer = self.sealer
        ident = (key.thread_id, key.checkpoint_ns)
        type_, blob = sealer.seal(type_, blob, "checkpoint", *ident, checkpoint_id)
        meta = get_serializable_checkpoint_metadata(config, metadata)
        try:
            meta_text = sealer.seal_metadata(meta, _json_default, *ident, checkpoint_id)
        except (TypeError, ValueError) as exc:
            raise serialization_refused("metadata", metadata, exc) from exc
        check_text("metadata", meta_text)
        run_id = meta.get("run_id")
        now = time.time()
        prepared: list[PreparedValue] = []
        for channel, version in new_versions.items():
            ver = version_key(version)
            if channel not in values or channel in inline:
                # A version without a value (a consumed trigger or branch
                # channel, a third of a chat turn's rows) stores no row: a
                # read finds no row and leaves the channel out, as it would
                # for an "empty" row. One index leaf fewer per commit:
                # 20x50 sync, WAL frames per turn 50 -> 46, +2% turns/s.
                continue
            value = values[channel]
            if type(value) is list:
                cached = self.cache.get((key.thread_id, key.checkpoint_ns, channel))
                plan = plan_list_encoding(value, cached)
                pv = self._prepared_list(key, channel, ver, plan, value)
                if cached is not None:
                    pv.next_seq = cached.guess_next_seq()
                prepared.append(pv)
            else:
                try:
                    v_type, v_blob = self.serde.dumps_typed(value)
                except (TypeError, ValueError) as exc:
                    raise serialization_refused(f"channel {channel!r}", value, exc) from exc
                v_type, v_blob = sealer.seal(v_type, v_blob, "value", *ident, channel, ver)
                prepared.append(PreparedValue(channel, ver, ENCODING_VALUE, v_type, v_blob))
        return PreparedPut(
            key=key,
            checkpoint_id=checkpoint_id,
            parent_id=key.checkpoint_id,
            run_id=str(run_id) if run_id is not None else None,
            type=type_,
            body=blob,
            metadata=meta_text,
            values=prepared,
            now=now,
            row_versions={ch: version_key(v) for ch, v in versions.items() if ch not in inline},
            touch_thread=not self._single_writer or self.activity.needs_write(key.thread_id, now),
        )

    def _prepared_list(
        self, key: CheckpointKey, channel: str, version: str, plan: ListPlan, value: list[Any]
    ) -> PreparedValue:
        chunks: list[tuple[int, int, str, bytes]] = []
        new_items = plan.new_items
        for start in range(0, len(new_items), MAX_CHUNK_ITEMS):
            part = list(new_items[start : start + MAX_CHUNK_ITEMS])
            try:
                c_type, c_blob = self.serde.dumps_typed(part)
            except (TypeError, ValueError) as exc:
                raise serialization_refused(f"an item of channel {channel!r}", part, exc) from exc
            c_type, c_blob = self.sealer.seal(
                c_type, c_blob, "chunk", key.thread_id, key.checkpoint_ns, channel
            )
            chunks.append((start, len(part), c_type, c_blob))
        return PreparedValue(
            channel, version, ENCODING_ITEMS, plan=plan, chunks=chunks, value=value
        )

    def put_txn(self, p: PreparedPut) -> Txn[PutOutcome]:
        sql = self.sql
        key = p.key
        # Without a thread-row write, the checkpoint insert itself checks the
        # tombstone (one statement fewer) if the dialect has that statement;
        # raising there rolls back the values stored before it.
        insert_if_live = None if p.touch_thread else getattr(sql, "INSERT_CHECKPOINT_IF_LIVE", None)
        if p.touch_thread:
            # Creates/touches the thread row; a tombstone makes it return no row.
            rows = yield Fetch(
                sql.UPSERT_THREAD_ON_PUT, (key.thread_id, p.now, p.now, p.parent_id, p.parent_id)
            )
            if not rows:
                raise _put_refused(key.thread_id)
        elif insert_if_live is None and (yield Fetch(sql.SELECT_TOMBSTONE, (key.thread_id,))):
            raise _put_refused(key.thread_id)
        outcome = PutOutcome(retention_due=False)
        plain_rows: list[tuple[Any, ...]] = []
        for pv in p.values:
            if pv.encoding != ENCODING_ITEMS:
                plain_rows.append(
                    (
                        key.thread_id,
                        key.checkpoint_ns,
                        pv.channel,
                        pv.version,
                        pv.encoding,
                        pv.type,
                        pv.blob,
                        None,
                    )
                )
                continue
            yield from self._store_list(p, pv, outcome)
        if plain_rows:
            yield ExecuteMany(sql.INSERT_CHANNEL_VALUE, plain_rows)
        row = (
            key.thread_id,
            key.checkpoint_ns,
            p.checkpoint_id,
            p.parent_id,
            p.run_id,
            p.type,
            p.body,
            p.metadata,
        )
        if insert_if_live is None:
            yield Execute(sql.INSERT_CHECKPOINT, row)
        elif not (yield Execute(insert_if_live, (*row, key.thread_id, p.parent_id))):
            raise _put_refused(key.thread_id)
        return outcome

    @staticmethod
    def restarts_thread(p: PreparedPut) -> bool:
        """Whether this put, refused on a deleted thread, starts it afresh: a new
        run's first checkpoint (root namespace, no parent). A run that began
        before the delete always has a parent, and stays refused."""
        return p.parent_id is None and p.key.checkpoint_ns == ""

    def restart_thread_txn(self, p: PreparedPut) -> Txn[bool]:
        """Make a deleted thread live again for ``p``'s run; from now on its
        puts with an older parent, and writes to older checkpoints, are refused
        (``reset_before``, SQLite migration 5 / Postgres migration 7)."""
        self.activity.forget(p.key.thread_id)
        self.cache.discard_thread(p.key.thread_id)
        done = yield Fetch(self.sql.RESTART_THREAD, (p.checkpoint_id, p.now, p.key.thread_id))
        return bool(done)

    def _store_list(self, p: PreparedPut, pv: PreparedValue, outcome: PutOutcome) -> Txn[None]:
        sql = self.sql
        key = p.key
        plan = pv.plan
        assert plan is not None
        base = (key.thread_id, key.checkpoint_ns, pv.channel)
        next_seq: int | None = None
        if plan.base_version is not None:
            # The next item number does not depend on the plan, so it is read
            # together with the base check even if the plan falls back below.
            rows = yield Fetch(
                sql.SELECT_BASE_EXISTS_AND_NEXT_ITEM_SEQ, (*base, plan.base_version, *base)
            )
            still_there, next_seq = bool(rows[0][0]), int(rows[0][1])
            if not still_there:
                # Retention elsewhere removed our base: store the whole list.
                full = self._prepared_list(
                    key, pv.channel, pv.version, full_list_plan(pv.value, plan.marks), pv.value
                )
                plan, pv.plan, pv.chunks = full.plan, full.plan, full.chunks
                assert plan is not None
        first_seq = 0
        if plan.new_items:
            if next_seq is None:
                rows = yield Fetch(sql.SELECT_NEXT_ITEM_SEQ, base)
                next_seq = int(rows[0][0])
            first_seq = next_seq
            outcome.next_seqs[pv.channel] = first_seq + len(plan.new_items)
        elif next_seq is not None:
            outcome.next_seqs[pv.channel] = next_seq
        ranges = plan.resolve_ranges(first_seq)
        inserted = yield Execute(
            sql.INSERT_CHANNEL_VALUE,
            (*base, pv.version, ENCODING_ITEMS, None, None, ranges_to_json(ranges)),
        )
        if not inserted:
            # This version is already stored (first writer wins); keep it.
            outcome.conflicted.add(pv.channel)
            return
        if plan.new_items:
            yield ExecuteMany(
                sql.INSERT_CHUNK,
                [
                    (*base, first_seq + offset, first_seq + offset + count, c_type, c_blob)
                    for offset, count, c_type, c_blob in pv.chunks
                ],
            )
            end = first_seq + len(plan.new_items)
            if first_seq // COMPACT_BLOCK != end // COMPACT_BLOCK:
                yield from self._compact_block(base, (end // COMPACT_BLOCK) * COMPACT_BLOCK)
        outcome.stored_lists[pv.channel] = (pv.version, ranges)

    def put_rows(self, p: PreparedPut) -> FastWrite | None:
        """The put as rows for the dialect's one-statement write (SQLite:
        ``lgm_write_rows``, see ``_sql_sqlite.insert_write_rows``), and
        its outcome once they are stored; None when only ``put_txn`` can store it.

        The rows assume the common case: each list's base version is still
        stored, its new items start at the number the cache expects, and the
        version is not stored yet. The dialect refuses the whole statement when
        an assumption fails (or the thread is tombstoned), and the shell runs
        ``put_txn`` instead, which reads what it needs and decides.
        """
        key = p.key
        thread_id, ns = key.thread_id, key.checkpoint_ns
        rows: list[tuple[Any, ...]] = []
        if p.touch_thread:
            rows.append(("thread", thread_id, ns, None, None, None, None, None, None, p.now, None))
        outcome = PutOutcome(retention_due=False)
        for pv in p.values:
            if pv.encoding != ENCODING_ITEMS:
                rows.append(
                    (
                        *("value", thread_id, ns, pv.channel, pv.version, pv.type, pv.blob),
                        *(None, None, None, None),
                    )
                )
                continue
            plan = pv.plan
            assert plan is not None
            added = len(plan.new_items)
            if added and plan.base_version is None and self.cache.capacity <= 0:
                return None  # no cache, no guess: every put of an old thread would be refused
            first = pv.next_seq if added else 0
            if added and first // COMPACT_BLOCK != (first + added) // COMPACT_BLOCK:
                return None  # a block is complete: put_txn compacts it
            ranges = plan.resolve_ranges(first)
            rows.append(
                (
                    *("list", thread_id, ns, pv.channel, pv.version, None, None),
                    *(ranges_to_json(ranges), plan.base_version, first if added else None, None),
                )
            )
            for offset, count, c_type, c_blob in pv.chunks:
                rows.append(
                    (
                        *("chunk", thread_id, ns, pv.channel, None, c_type, c_blob, None, None),
                        *(first + offset, first + offset + count),
                    )
                )
            outcome.stored_lists[pv.channel] = (pv.version, ranges)
            if added:
                outcome.next_seqs[pv.channel] = first + added
            elif plan.base_version is not None:
                # Still the cache's number (a removal must not lower the guess).
                outcome.next_seqs[pv.channel] = pv.next_seq
        rows.append(
            (
                *("checkpoint", thread_id, ns, p.checkpoint_id, p.parent_id, p.type, p.body),
                *(p.metadata, p.run_id, None, None),
            )
        )
        return rows, outcome

    def _compact_block(self, base: tuple[str, str, str], boundary: int) -> Txn[None]:
        """Merge the small chunks lying wholly inside the block just completed.

        A put appending one message makes a one-message chunk, and reading a
        long thread would mean fetching hundreds of rows. Chunks only hold item
        numbers (versions store ranges of numbers, not chunk ids), so merging
        them changes no version: each item is rewritten at most once more, and
        a read fetches ~1 row per COMPACT_BLOCK items. msgpack chunks merge as
        bytes (arrays concatenate), without decoding.
        """
        select = getattr(self.sql, "SELECT_CHUNKS_IN_SPAN", None)
        if select is None:
            return  # the dialect does not support compaction
        lo = boundary - COMPACT_BLOCK
        rows = yield Fetch(select, (*base, lo, boundary))
        if len(rows) < 2:
            return
        sealer = self.sealer
        if sealer.enabled:
            rows = [(r[0], r[1], *sealer.open(r[2], r[3], "chunk", *base)) for r in rows]
        merged = merge_msgpack_chunks(rows)
        if merged is None:
            return
        if sealer.enabled:
            merged = (*merged[:2], *sealer.seal(merged[2], merged[3], "chunk", *base))
        yield Execute(self.sql.DELETE_CHUNKS_IN_GAP, (*base, lo, boundary))
        yield Execute(self.sql.INSERT_CHUNK, (*base, *merged))

    def finish_put(self, p: PreparedPut, outcome: PutOutcome) -> RunnableConfig:
        """After commit: remember the stored lists so the next put is a delta."""
        key = p.key
        for pv in p.values:
            if pv.encoding != ENCODING_ITEMS:
                continue
            cache_key = (key.thread_id, key.checkpoint_ns, pv.channel)
            stored = outcome.stored_lists.get(pv.channel)
            if stored is None or pv.plan is None:
                self.cache.discard(cache_key)
                continue
            version, ranges = stored
            self.cache.put(
                cache_key,
                CachedList(
                    version,
                    tuple(pv.value),
                    pv.plan.marks,
                    ranges,
                    outcome.next_seqs.get(pv.channel),
                ),
            )
        puts = self.activity.record_put(key.thread_id, p.now, wrote=p.touch_thread)
        policy = self.retention
        if policy is not None and policy.keep_last is not None and puts >= policy.apply_every:
            # keep_last is applied incrementally, every `apply_every` puts of this process.
            outcome.retention_due = True
            self.activity.reset_puts(key.thread_id)
        return checkpoint_config(key.thread_id, key.checkpoint_ns, p.checkpoint_id)

    # ---------------------------------------------------------------- put_writes

    def prepare_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> PreparedWrites:
        key = parse_config(config)
        if key.checkpoint_id is None:
            raise ConfigurationError(
                "put_writes() needs config.configurable.checkpoint_id (the config put() returned)."
            )
        writes = check_writes(writes, task_id, task_path)
        ident = (key.thread_id, key.checkpoint_ns, key.checkpoint_id)
        rows: list[tuple[Any, ...]] = []
        for idx, (channel, value) in enumerate(writes):
            if self.redactor is not None:
                value = self.redactor.value(value)
            if self.recent_rewrites:
                value = self.recent_rewrites.apply(key.thread_id, value)
            try:
                w_type, w_blob = self.serde.dumps_typed(value)
            except (TypeError, ValueError) as exc:
                raise serialization_refused(f"the write to {channel!r}", value, exc) from exc
            w_idx = WRITES_IDX_MAP.get(channel, idx)
            w_type, w_blob = self.sealer.seal(
                w_type, w_blob, "write", *ident, task_id, w_idx, channel
            )
            rows.append((*ident, task_id, task_path, w_idx, channel, w_type, w_blob))
        # Special writes (errors, interrupts) replace; regular ones are idempotent.
        replace = all(w[0] in WRITES_IDX_MAP for w in writes)
        may_wait = writes_may_wait_for_checkpoint(config, writes)
        prepared = PreparedWrites(key, key.checkpoint_id, replace, rows, time.time(), may_wait)
        if any(channel in STEP_ENDING_CHANNELS for channel, _ in writes):
            self.ended_steps.add(prepared.step)
        elif any(channel == RESUME for channel, _ in writes):
            self.ended_steps.discard(prepared.step)  # the step runs again, and a put follows it
        elif may_wait and prepared.step in self.ended_steps:
            prepared.may_wait = False
        return prepared

    def writes_rows(self, p: PreparedWrites) -> FastWrite | None:
        """The writes as rows for the dialect's one-statement write (``put_rows``);
        a tombstone refuses them there, and ``writes_txn`` then raises."""
        if not p.rows:
            return None  # nothing to insert; writes_txn still checks the tombstone
        kind = "write_replace" if p.replace else "write"
        rows = [
            (kind, thread_id, ns, channel, cid, w_type, w_blob, task_path, task_id, idx, None)
            for thread_id, ns, cid, task_id, task_path, idx, channel, w_type, w_blob in p.rows
        ]
        return rows, None

    def writes_txn(self, p: PreparedWrites) -> Txn[None]:
        # Pending writes do not count as thread activity: the tombstone is only
        # read (a read costs no page write in the log). Dialects with
        # `*_IF_LIVE` statements check it inside the insert (one statement
        # fewer) and read it only when fewer rows than given were stored.
        sql = self.sql
        thread_id = p.key.thread_id
        live = getattr(sql, "UPSERT_WRITE_IF_LIVE", None)
        if live is not None and p.rows:
            stmt = live if p.replace else sql.INSERT_WRITE_IF_ABSENT_IF_LIVE
            stored = yield ExecuteMany(stmt, [(*row, thread_id, p.checkpoint_id) for row in p.rows])
            if isinstance(stored, int) and 0 <= stored == len(p.rows):
                return
        if (yield Fetch(sql.SELECT_WRITES_REFUSED, (thread_id, p.checkpoint_id))):
            raise ThreadDeletedError(
                f"thread_id={thread_id!r} was deleted after checkpoint {p.checkpoint_id!r}; "
                "late writes of a run that began before the delete are refused, so the "
                "deleted thread never comes back (a new run on the id starts it afresh)."
            )
        if p.rows and live is None:
            stmt = sql.UPSERT_WRITE if p.replace else sql.INSERT_WRITE_IF_ABSENT
            yield ExecuteMany(stmt, p.rows)


def _put_refused(thread_id: str) -> ThreadDeletedError:
    return ThreadDeletedError(
        f"thread_id={thread_id!r} was deleted; a run that began before the delete "
        "cannot write to it again. A new run on this id starts a fresh thread (or use "
        "a new thread id, or call undelete_thread() first)."
    )
