"""What a read returns before decoding, and how it is decoded.

Reads fetch bytes inside their transaction and decode after it (decoding a
long message list is the expensive part). ``LazyChannelValues`` goes one step
further for ``list()``: it decodes only when something looks at the values.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_memory.session._channels import Range

# ------------------------------------------------------------------ decoding helpers


def msgpack_array_header(n: int) -> bytes:
    if n < 16:
        return bytes((0x90 | n,))
    if n < 1 << 16:
        return b"\xdc" + n.to_bytes(2, "big")
    return b"\xdd" + n.to_bytes(4, "big")


def decode_chunks(
    serde: SerializerProtocol, chunks: Sequence[tuple[int, int, str, bytes]]
) -> list[tuple[int, int, list[Any]]]:
    """Decode chunk rows ``(seq_lo, seq_hi, type, blob)`` into item lists.

    Each msgpack chunk is itself a msgpack array, so all of them are decoded by
    ONE call on ``header + concatenated blobs``: per-call overhead in the
    serializer is ~3x the per-message cost, and a 600-message thread is
    hundreds of chunks.
    """
    if not chunks:
        return []
    if all(c[2] == "msgpack" for c in chunks):
        blob = msgpack_array_header(len(chunks)) + b"".join(c[3] for c in chunks)
        decoded = serde.loads_typed(("msgpack", blob))
        return [(c[0], c[1], list(items)) for c, items in zip(chunks, decoded, strict=True)]
    return [(c[0], c[1], list(serde.loads_typed((c[2], c[3])))) for c in chunks]


def assemble_items(
    ranges: Sequence[Range], decoded: Sequence[tuple[int, int, list[Any]]]
) -> list[Any]:
    """The list a version stores, from its ranges and the decoded chunks under them."""
    los = [c[0] for c in decoded]
    out: list[Any] = []
    for lo, hi in ranges:
        i = max(bisect.bisect_right(los, lo) - 1, 0)
        pos = lo
        while pos < hi:
            if i >= len(decoded):
                raise RuntimeError(f"stored list is missing items {pos}..{hi - 1}")
            c_lo, c_hi, items = decoded[i]
            if c_hi <= pos:
                i += 1
                continue
            if c_lo > pos:
                raise RuntimeError(f"stored list is missing items {pos}..{c_lo - 1}")
            take = min(hi, c_hi)
            out.extend(items[pos - c_lo : take - c_lo])
            pos = take
            i += 1
    return out


# ------------------------------------------------------------------ raw read results


@dataclass(slots=True)
class RawValue:
    encoding: str
    type: str | None
    blob: bytes | None
    ranges: tuple[Range, ...] = ()


@dataclass(slots=True)
class RawCheckpoint:
    """One checkpoint as read, before decoding (decoding happens outside the lock)."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_id: str | None
    type: str
    body: bytes
    metadata: str
    channel_versions: dict[str, str] = field(default_factory=dict)
    body_decoded: dict[str, Any] | None = None
    writes: list[tuple[str, str, str, bytes, str, int]] = field(default_factory=list)
    values: dict[str, RawValue] = field(default_factory=dict)
    # channel -> small scalar value stored inline in the body (no value row)
    inline: dict[str, Any] = field(default_factory=dict)
    # channel -> list already served from the in-process cache
    cached_lists: dict[str, list[Any]] = field(default_factory=dict)

    def row_versions(self) -> dict[str, str]:
        """The channel versions whose values live in rows (not inline in the body)."""
        return {ch: v for ch, v in self.channel_versions.items() if ch not in self.inline}


@dataclass(slots=True)
class ChunkStore:
    """Decoded-on-demand chunks of one read, shared by every checkpoint it returns."""

    raw: dict[tuple[str, str, str], list[tuple[int, int, str, bytes]]] = field(default_factory=dict)
    decoded: dict[tuple[str, str, str], list[tuple[int, int, list[Any]]]] = field(
        default_factory=dict
    )

    def items(
        self, serde: SerializerProtocol, key: tuple[str, str, str], ranges: Sequence[Range]
    ) -> list[Any]:
        chunks = self.decoded.get(key)
        if chunks is None:
            chunks = decode_chunks(serde, self.raw.get(key, []))
            self.decoded[key] = chunks
        return assemble_items(ranges, chunks)


class NotYetDecoded:
    """Placeholder inside an untouched :class:`LazyChannelValues`.

    Only serializers that read a dict's C-level storage directly (ormsgpack)
    ever see it, and they fail loudly on it instead of storing ``None``:
    touch the values first (``dict(values)``) before serialising them.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return "<channel value not decoded yet: access it (or dict(values)) first>"


_NOT_DECODED = NotYetDecoded()


class LazyChannelValues(dict[str, Any]):
    """``channel_values`` of a listed checkpoint, decoded on first access.

    ``list()`` reads the bytes of every returned checkpoint inside its page
    query but decodes a value only when something looks at it, so listing a
    long thread for its configs or metadata never deserialises full states.
    Every read path (indexing, ``get``, iteration, ``items``, ``copy``,
    ``==``, pickling) decodes first; the decoded values then live in the dict.
    """

    __slots__ = ("_loader",)

    def __init__(self, keys: Sequence[str], loader: Any) -> None:
        super().__init__()
        self._loader = loader
        for key in keys:
            super().__setitem__(key, _NOT_DECODED)

    def _materialize(self) -> None:
        loader = self._loader
        if loader is not None:
            self._loader = None
            super().update(loader())

    def __getitem__(self, key: str) -> Any:
        self._materialize()
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self._materialize()
        return super().get(key, default)

    def __iter__(self) -> Iterator[str]:
        self._materialize()
        return super().__iter__()

    def keys(self) -> Any:
        self._materialize()
        return super().keys()

    def values(self) -> Any:
        self._materialize()
        return super().values()

    def items(self) -> Any:
        self._materialize()
        return super().items()

    def copy(self) -> dict[str, Any]:
        self._materialize()
        return dict(super().items())

    def pop(self, key: str, *default: Any) -> Any:
        self._materialize()
        return super().pop(key, *default)

    def setdefault(self, key: str, default: Any = None) -> Any:
        self._materialize()
        return super().setdefault(key, default)

    def __eq__(self, other: object) -> bool:
        self._materialize()
        if isinstance(other, LazyChannelValues):
            other._materialize()
        return dict(super().items()) == other

    __hash__ = None

    def __repr__(self) -> str:
        self._materialize()
        return repr(dict(super().items()))

    def __reduce__(self) -> Any:
        self._materialize()
        return (dict, (dict(super().items()),))

    def __or__(self, other: Any) -> Any:
        self._materialize()
        return dict(super().items()) | other
