"""Reading checkpoints: ``get_tuple``, ``list`` and the DeltaChannel history of ``SaverCore``.

Each read is a transaction that fetches rows and opens their seals
(``get_tuple_txn``, ``list_page_txn``, ``delta_history_txn``) and a decode
step after it, outside the transaction (``build_tuple``, ``build_list_tuple``,
``build_delta_history``), which also warms the list cache.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    PendingWrite,
    writes_sort_key,
)

from langgraph_memory.errors import ConfigurationError
from langgraph_memory.limits import MAX_CHECKPOINT_ID_BYTES, MAX_CHECKPOINT_NS_BYTES
from langgraph_memory.session._channels import (
    ENCODING_EMPTY,
    ENCODING_ITEMS,
    ENCODING_VALUE,
    CachedList,
    fingerprint,
    ranges_from_json,
    ranges_length,
)
from langgraph_memory.session._core_base import CoreBase
from langgraph_memory.session._encoding import (
    INLINE_VALUES_KEY,
    body_versions,
    checkpoint_config,
    parse_config,
    parse_thread_id,
)
from langgraph_memory.session._inputs import check_before, check_filter, check_limit, checked_id
from langgraph_memory.session._owner import config_user_id
from langgraph_memory.session._paging import ListQuery
from langgraph_memory.session._reads import ChunkStore, LazyChannelValues, RawCheckpoint, RawValue
from langgraph_memory.session._statements import Fetch, Txn

# Ancestors fetched per step of the DeltaChannel history walk.
ANCESTOR_BATCH = 256


class CoreReads(CoreBase):
    """``get_tuple``, ``list`` and the DeltaChannel history walk."""

    # ---------------------------------------------------------------- reads

    def _raw_from_row(self, row: Sequence[Any]) -> RawCheckpoint:
        thread_id, ns, cid, parent, type_, body, metadata = row
        type_, body = self.sealer.open(type_, body, "checkpoint", thread_id, ns, cid)
        return RawCheckpoint(thread_id, ns, cid, parent, type_, body, metadata)

    def _open_writes(
        self, thread_id: str, ns: str, cid: str, rows: Sequence[Sequence[Any]]
    ) -> list[tuple[str, str, str, bytes, str, int]]:
        """Write rows ``(task_id, channel, type, blob, task_path, idx)``, opened."""
        sealer = self.sealer
        opened = []
        for task_id, channel, w_type, w_blob, task_path, idx in rows:
            w_type, w_blob = sealer.open(
                w_type, w_blob, "write", thread_id, ns, cid, task_id, idx, channel
            )
            opened.append((task_id, channel, w_type, w_blob, task_path, idx))
        return opened

    def _decode_body(self, raw: RawCheckpoint) -> dict[str, Any]:
        if raw.body_decoded is None:
            raw.body_decoded = dict(self.serde.loads_typed((raw.type, raw.body)))
            raw.inline = raw.body_decoded.pop(INLINE_VALUES_KEY, None) or {}
            raw.channel_versions = body_versions(raw.body_decoded)
        return raw.body_decoded

    def get_tuple_txn(self, config: RunnableConfig) -> Txn[tuple[RawCheckpoint, ChunkStore] | None]:
        key = parse_config(config)
        if key.checkpoint_id is not None:
            rows = yield Fetch(
                self.sql.SELECT_CHECKPOINT_BY_ID,
                (key.thread_id, key.checkpoint_ns, key.checkpoint_id),
            )
        else:
            rows = yield Fetch(
                self.sql.SELECT_LATEST_CHECKPOINT, (key.thread_id, key.checkpoint_ns)
            )
        if not rows:
            return None
        raw = self._raw_from_row(rows[0])
        # Decoding the small body here (not the values) tells us which versions to read.
        self._decode_body(raw)
        store = ChunkStore()
        yield from self._load_values([raw], store, use_cache=True)
        w_rows = yield Fetch(
            self.sql.SELECT_WRITES, (raw.thread_id, raw.checkpoint_ns, raw.checkpoint_id)
        )
        raw.writes = self._open_writes(raw.thread_id, raw.checkpoint_ns, raw.checkpoint_id, w_rows)
        return raw, store

    def _load_values(
        self, raws: Sequence[RawCheckpoint], store: ChunkStore, *, use_cache: bool
    ) -> Txn[None]:
        """Read the value rows (and list chunks) of checkpoints of one or more (thread, ns)."""
        by_ns: dict[tuple[str, str], list[RawCheckpoint]] = {}
        for raw in raws:
            by_ns.setdefault((raw.thread_id, raw.checkpoint_ns), []).append(raw)
        for (thread_id, ns), group in by_ns.items():
            wanted: dict[tuple[str, str], list[RawCheckpoint]] = {}
            for raw in group:
                for ch, ver in raw.row_versions().items():
                    if use_cache:
                        hit = self.cache.fresh_items((thread_id, ns, ch), ver)
                        if hit is not None:
                            raw.cached_lists[ch] = hit
                            continue
                    wanted.setdefault((ch, ver), []).append(raw)
            if not wanted:
                continue
            found: dict[tuple[str, str], RawValue] = {}
            rows = yield Fetch(
                self.sql.SELECT_CHANNEL_VALUES, (json.dumps(list(wanted)), thread_id, ns)
            )
            sealer = self.sealer
            for ch, ver, encoding, v_type, v_blob, ranges in rows:
                if v_blob is not None:
                    v_type, v_blob = sealer.open(v_type, v_blob, "value", thread_id, ns, ch, ver)
                found[(ch, ver)] = RawValue(
                    encoding,
                    v_type,
                    v_blob,
                    ranges_from_json(ranges) if encoding == ENCODING_ITEMS and ranges else (),
                )
            bounds: dict[str, tuple[int, int]] = {}
            for pair, rv in found.items():
                for raw in wanted[pair]:
                    raw.values[pair[0]] = rv
                if rv.encoding == ENCODING_ITEMS and rv.ranges:
                    lo = min(r[0] for r in rv.ranges)
                    hi = max(r[1] for r in rv.ranges)
                    old = bounds.get(pair[0])
                    bounds[pair[0]] = (
                        (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
                    )
            for ch, (lo, hi) in sorted(bounds.items()):
                chunk_rows = yield Fetch(self.sql.SELECT_CHUNKS, (thread_id, ns, ch, hi, lo))
                store.raw[(thread_id, ns, ch)] = [
                    (r[0], r[1], *sealer.open(r[2], r[3], "chunk", thread_id, ns, ch))
                    for r in chunk_rows
                ]

    def _decode_values(self, raw: RawCheckpoint, store: ChunkStore) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for ch, rv in raw.values.items():
            if rv.encoding == ENCODING_VALUE:
                values[ch] = self.serde.loads_typed((cast(str, rv.type), cast(bytes, rv.blob)))
            elif rv.encoding == ENCODING_ITEMS:
                items = store.items(self.serde, (raw.thread_id, raw.checkpoint_ns, ch), rv.ranges)
                if len(items) != ranges_length(rv.ranges):
                    raise RuntimeError(f"channel {ch!r}: stored list is incomplete")
                values[ch] = items
        values.update(raw.cached_lists)
        values.update(raw.inline)
        return values

    def _decode_writes(
        self, rows: Sequence[tuple[str, str, str, bytes, str, int]]
    ) -> list[PendingWrite]:
        ordered = sorted(rows, key=lambda r: writes_sort_key(r[4], r[0], r[5]))
        return [
            (task_id, channel, self.serde.loads_typed((w_type, w_blob)))
            for task_id, channel, w_type, w_blob, _path, _idx in ordered
        ]

    def _tuple(self, raw: RawCheckpoint, channel_values: dict[str, Any]) -> CheckpointTuple:
        body = self._decode_body(raw)
        checkpoint = cast(Checkpoint, {**body, "channel_values": channel_values})
        return CheckpointTuple(
            config=checkpoint_config(raw.thread_id, raw.checkpoint_ns, raw.checkpoint_id),
            checkpoint=checkpoint,
            metadata=cast(
                CheckpointMetadata,
                self.sealer.open_metadata(
                    raw.metadata, raw.thread_id, raw.checkpoint_ns, raw.checkpoint_id
                ),
            ),
            parent_config=(
                checkpoint_config(raw.thread_id, raw.checkpoint_ns, raw.parent_id)
                if raw.parent_id
                else None
            ),
            pending_writes=self._decode_writes(raw.writes),
        )

    def build_tuple(
        self, loaded: tuple[RawCheckpoint, ChunkStore] | None
    ) -> CheckpointTuple | None:
        """Decode a ``get_tuple_txn`` result (outside the transaction) and warm the cache."""
        if loaded is None:
            return None
        raw, store = loaded
        values = self._decode_values(raw, store)
        for ch, rv in raw.values.items():
            if rv.encoding == ENCODING_ITEMS and ch not in raw.cached_lists:
                items = values[ch]
                self.cache.put(
                    (raw.thread_id, raw.checkpoint_ns, ch),
                    CachedList(
                        raw.channel_versions[ch],
                        tuple(items),
                        tuple(fingerprint(x) for x in items),
                        rv.ranges,
                    ),
                )
        return self._tuple(raw, values)

    # ---------------------------------------------------------------- list

    def list_query(
        self,
        config: RunnableConfig | None,
        *,
        filter: Mapping[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> ListQuery:
        thread_id = ns = checkpoint_id = None
        if config is not None:
            configurable = (
                (config.get("configurable") or {}) if isinstance(config, Mapping) else None
            )
            if not isinstance(configurable, Mapping):
                raise ConfigurationError(
                    f"list() config={config!r} is not a RunnableConfig; pass None or "
                    "{'configurable': {'thread_id': ...}}."
                )
            if configurable.get("thread_id") is not None:
                thread_id = parse_thread_id(configurable["thread_id"])
            raw_ns = configurable.get("checkpoint_ns")
            if raw_ns is not None:
                if not isinstance(raw_ns, str):
                    raise ConfigurationError(f"checkpoint_ns={raw_ns!r} must be a string.")
                ns = checked_id("checkpoint_ns", raw_ns, MAX_CHECKPOINT_NS_BYTES)
            checkpoint_id = configurable.get("checkpoint_id") or None
            if checkpoint_id is not None:
                if not isinstance(checkpoint_id, str):
                    raise ConfigurationError(
                        f"checkpoint_id={checkpoint_id!r} must be a string id returned by put()."
                    )
                checked_id("checkpoint_id", checkpoint_id, MAX_CHECKPOINT_ID_BYTES)
        before_id = check_before(before)
        limit = check_limit(limit)
        if filter is not None and not isinstance(filter, Mapping):
            raise ConfigurationError(f"filter={filter!r}; use a mapping of metadata key -> value.")
        # Validate filter keys and values now, before any page is read.
        self.sql.metadata_predicates(filter or {})
        check_filter(filter or {})
        self.sealer.check_filter(filter)
        owner = None
        if thread_id is not None:
            owner = self.owner_check(config)
        elif config_user_id(config) is not None:
            raise ConfigurationError(
                "list() with a user_id but no thread_id would list every user's threads; "
                "pass the thread_id, or call threads_of_user(user_id) and list each."
            )
        return ListQuery(thread_id, ns, checkpoint_id, before_id, filter or None, limit, owner)

    def list_page_txn(
        self, q: ListQuery, after_key: tuple[str, str, str] | None, page_size: int
    ) -> Txn[tuple[list[RawCheckpoint], ChunkStore]]:
        if q.thread_id is not None and q.checkpoint_ns is None:
            # One thread, every namespace: the primary key (thread, ns, id) can
            # only serve "newest first" per namespace, so read a page from each
            # namespace and merge, instead of sorting the whole thread.
            namespaces = yield Fetch(self.sql.SELECT_THREAD_NAMESPACES, (q.thread_id,))
            rows = []
            for (ns,) in namespaces:
                rows.extend((yield from self._page_rows(q, ns, after_key, page_size)))
            rows.sort(key=lambda r: (r[2], r[0], r[1]), reverse=True)
            del rows[page_size:]
        else:
            rows = yield from self._page_rows(q, q.checkpoint_ns, after_key, page_size)
        raws = [self._raw_from_row(r) for r in rows]
        store = ChunkStore()
        if not raws:
            return raws, store
        for raw in raws:
            self._decode_body(raw)
        yield from self._load_values(raws, store, use_cache=False)
        by_ns: dict[tuple[str, str], dict[str, RawCheckpoint]] = {}
        for raw in raws:
            by_ns.setdefault((raw.thread_id, raw.checkpoint_ns), {})[raw.checkpoint_id] = raw
        for (thread_id, ns), group in by_ns.items():
            w_rows = yield Fetch(
                self.sql.SELECT_WRITES_FOR_CHECKPOINTS, (json.dumps(list(group)), thread_id, ns)
            )
            for cid, *rest in w_rows:
                group[cid].writes.extend(self._open_writes(thread_id, ns, cid, [rest]))
        return raws, store

    def _page_rows(
        self,
        q: ListQuery,
        checkpoint_ns: str | None,
        after_key: tuple[str, str, str] | None,
        page_size: int,
    ) -> Txn[list[Any]]:
        # Within one thread, LangGraph's uuid6 checkpoint ids are unique across
        # namespaces, so "id < last id" is the keyset condition for every namespace.
        where, params = self.sql.list_where(
            thread_id=q.thread_id,
            checkpoint_ns=checkpoint_ns,
            checkpoint_id=q.checkpoint_id,
            before_id=q.before_id,
            metadata_filter=q.metadata_filter,
            after_key=after_key,
        )
        rows = yield Fetch(
            self.sql.SELECT_CHECKPOINT_PAGE.format(where=where), (*params, page_size)
        )
        return list(rows)

    def build_list_tuple(self, raw: RawCheckpoint, store: ChunkStore) -> CheckpointTuple:
        """A listed checkpoint whose channel values decode on first access."""
        keys = [ch for ch, rv in raw.values.items() if rv.encoding != ENCODING_EMPTY]
        keys.extend(raw.inline)
        values = LazyChannelValues(keys, lambda: self._decode_values(raw, store))
        return self._tuple(raw, values)

    # ---------------------------------------------------------------- DeltaChannel history

    def delta_history_txn(
        self, config: RunnableConfig, channels: Sequence[str]
    ) -> Txn[
        tuple[
            dict[str, list[str]],
            dict[str, RawCheckpoint],
            list[Any],
            ChunkStore,
            dict[str, tuple[str, str]],
        ]
    ]:
        """Walk the parent chain once for all channels; see ``build_delta_history``."""
        key = parse_config(config)
        cid = key.checkpoint_id
        if cid is None:
            rows = yield Fetch(
                self.sql.SELECT_LATEST_CHECKPOINT, (key.thread_id, key.checkpoint_ns)
            )
            if not rows:
                return {}, {}, [], ChunkStore(), {}
            cid = rows[0][2]
        chain_by_ch: dict[str, list[str]] = {ch: [] for ch in channels}
        seed_at: dict[str, tuple[str, str]] = {}  # channel -> (checkpoint id, version)
        remaining = set(channels)
        visited: set[str] = set()
        cursor: str | None = cid
        is_target = True
        while cursor is not None and remaining:
            # Up to ANCESTOR_BATCH + 1 consecutive ancestors, starting at `cursor`.
            rows = yield Fetch(
                self.sql.SELECT_ANCESTORS,
                (
                    key.thread_id,
                    key.checkpoint_ns,
                    cursor,
                    key.thread_id,
                    key.checkpoint_ns,
                    ANCESTOR_BATCH,
                ),
            )
            if not rows:
                break
            batch: list[tuple[str, str | None, dict[str, str]]] = []
            for a_id, a_parent, a_type, a_body in rows:
                a_type, a_body = self.sealer.open(
                    a_type, a_body, "checkpoint", key.thread_id, key.checkpoint_ns, a_id
                )
                body = self.serde.loads_typed((a_type, a_body))
                batch.append((a_id, a_parent, body_versions(body)))
            pairs = sorted({(ch, v[ch]) for _, _, v in batch for ch in remaining if ch in v})
            stored: set[tuple[str, str]] = set()
            if pairs:
                enc_rows = yield Fetch(
                    self.sql.SELECT_CHANNEL_ENCODINGS,
                    (json.dumps(pairs), key.thread_id, key.checkpoint_ns),
                )
                stored = {(ch, ver) for ch, ver, enc in enc_rows if enc != ENCODING_EMPTY}
            cursor = None
            for a_id, a_parent, versions in batch:
                if a_id in visited:  # a cycle from re-putting an existing id
                    cursor = None
                    break
                visited.add(a_id)
                cursor = a_parent
                if is_target:
                    is_target = False  # the target's own writes are pending, not history
                    continue
                for ch in list(remaining):
                    chain_by_ch[ch].append(a_id)
                    ver = versions.get(ch)
                    if ver is not None and (ch, ver) in stored:
                        seed_at[ch] = (a_id, ver)
                        remaining.discard(ch)
                if not remaining:
                    break
        # Seeds: read their values (lists via chunks).
        seeds: dict[str, RawCheckpoint] = {}
        store = ChunkStore()
        seed_raws: list[RawCheckpoint] = []
        for ch, (a_id, ver) in seed_at.items():
            raw = RawCheckpoint(key.thread_id, key.checkpoint_ns, a_id, None, "", b"", "{}")
            raw.body_decoded = {}
            raw.channel_versions = {ch: ver}
            seeds[ch] = raw
            seed_raws.append(raw)
        if seed_raws:
            yield from self._load_values(seed_raws, store, use_cache=False)
        all_ids = sorted({c for chain in chain_by_ch.values() for c in chain})
        writes: list[Any] = []
        if all_ids:
            w_rows = yield Fetch(
                self.sql.SELECT_WRITES_FOR_CHECKPOINTS,
                (json.dumps(all_ids), key.thread_id, key.checkpoint_ns),
            )
            for w_cid, *rest in w_rows:
                (opened,) = self._open_writes(key.thread_id, key.checkpoint_ns, w_cid, [rest])
                writes.append((w_cid, *opened))
        return chain_by_ch, seeds, writes, store, seed_at

    def build_delta_history(
        self,
        channels: Sequence[str],
        loaded: tuple[
            dict[str, list[str]],
            dict[str, RawCheckpoint],
            list[Any],
            ChunkStore,
            dict[str, tuple[str, str]],
        ],
    ) -> dict[str, DeltaChannelHistory]:
        chain_by_ch, seeds, writes, store, _seed_at = loaded
        by_cid: dict[str, list[tuple[str, str, str, bytes, str, int]]] = {}
        for cid, task_id, channel, w_type, w_blob, task_path, idx in writes:
            by_cid.setdefault(cid, []).append((task_id, channel, w_type, w_blob, task_path, idx))
        result: dict[str, DeltaChannelHistory] = {}
        for ch in channels:
            collected: list[PendingWrite] = []
            for cid in reversed(chain_by_ch.get(ch, [])):
                rows = [r for r in by_cid.get(cid, []) if r[1] == ch]
                collected.extend(self._decode_writes(rows))
            entry: DeltaChannelHistory = {"writes": collected}
            if ch in seeds:
                values = self._decode_values(seeds[ch], store)
                if ch in values:
                    entry["seed"] = values[ch]
            result[ch] = entry
        return result
