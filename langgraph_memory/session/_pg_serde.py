"""Checkpoint bodies compressed before they reach Postgres.

A checkpoint body (``channel_versions``, ``versions_seen``...) is ~1 KB, most
of it repeated 51-character version ids, and it is the largest thing a put
stores. Postgres compresses a value only once its row passes ~2 KB, so it
stores these raw. This wrapper around the LangGraph serializer compresses
dict-valued blobs (checkpoint bodies; dict channel values) with zlib and tags
their type ``<type>+zlib``; reading accepts both, so rows written before keep
decoding. List values are left alone: list chunks must stay plain msgpack, the
core merges them as bytes (see ``merge_msgpack_chunks``).

The sync saver compresses only blobs of ``SYNC_MIN_BYTES`` and more. Its puts
run on LangGraph's worker threads while the graph's own thread holds the GIL,
and ``zlib.compress`` releases the GIL even for 1 KB: getting it back can wait
up to a switch interval (5 ms) behind the graph, on the critical path of the
turn (LangGraph chains a turn's puts). Measured on the 20x50 sync benchmark
(alternating runs, 2 each): 46%, 46% of InMemorySaver with 1 KB bodies
compressed, 50%, 50% without. The async saver runs on one event-loop thread,
where the same call costs only its ~20 us, so it keeps compressing from 256 B.
"""

from __future__ import annotations

import zlib
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

SUFFIX = "+zlib"
# Below this, zlib's header and a short window gain nothing worth a CPU cycle.
MIN_BYTES = 256
# Sync saver: Postgres compresses a row itself (TOAST, on the server) only
# past ~2 KB; below that the client's zlib saves ~600 bytes per 1 KB body but
# costs a GIL hand-off on the put's critical path (see the module docstring).
SYNC_MIN_BYTES = 2048
# zlib level 1: ~3x on bodies for ~10 us per KB; higher levels gain little here.
LEVEL = 1


class CompressedDicts:
    """A ``SerializerProtocol`` that zlib-compresses dict blobs of ``inner`` of
    at least ``min_bytes``."""

    def __init__(self, inner: SerializerProtocol, min_bytes: int = MIN_BYTES) -> None:
        self.inner = inner
        self.min_bytes = min_bytes

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        type_, blob = self.inner.dumps_typed(obj)
        if type(obj) is dict and len(blob) >= self.min_bytes:
            packed = zlib.compress(blob, LEVEL)
            if len(packed) < len(blob):
                return type_ + SUFFIX, packed
        return type_, blob

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        type_, blob = data
        if type_.endswith(SUFFIX):
            return self.inner.loads_typed((type_[: -len(SUFFIX)], zlib.decompress(blob)))
        return self.inner.loads_typed(data)
