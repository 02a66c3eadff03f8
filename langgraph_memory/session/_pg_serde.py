"""Checkpoint bodies compressed before they reach Postgres.

A checkpoint body (``channel_versions``, ``versions_seen``...) is ~1 KB, most
of it repeated 51-character version ids, and it is the largest thing a put
stores. Postgres compresses a value only once its row passes ~2 KB, so it
stores these raw. This wrapper around the LangGraph serializer compresses
dict-valued blobs (checkpoint bodies; dict channel values) with zlib and tags
their type ``<type>+zlib``; reading accepts both, so rows written before keep
decoding. List values are left alone: list chunks must stay plain msgpack, the
core merges them as bytes (see ``merge_msgpack_chunks``).
"""

from __future__ import annotations

import zlib
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

SUFFIX = "+zlib"
# Below this, zlib's header and a short window gain nothing worth a CPU cycle.
MIN_BYTES = 256
# zlib level 1: ~3x on bodies for ~10 us per KB; higher levels gain little here.
LEVEL = 1


class CompressedDicts:
    """A ``SerializerProtocol`` that zlib-compresses dict blobs of ``inner``."""

    def __init__(self, inner: SerializerProtocol) -> None:
        self.inner = inner

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        type_, blob = self.inner.dumps_typed(obj)
        if type(obj) is dict and len(blob) >= MIN_BYTES:
            packed = zlib.compress(blob, LEVEL)
            if len(packed) < len(blob):
                return type_ + SUFFIX, packed
        return type_, blob

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        type_, blob = data
        if type_.endswith(SUFFIX):
            return self.inner.loads_typed((type_[: -len(SUFFIX)], zlib.decompress(blob)))
        return self.inner.loads_typed(data)
