"""Which session row is sealed how: the identity each row is bound to (pure).

The savers' ``encryption=`` option (``langgraph_memory.encryption``) seals every
blob the core stores and opens every blob it reads, right at the row boundary,
so the rest of the core (and the dialects' one-statement fast paths, which
store the prepared rows as they are) never sees an envelope. Each row's
associated data is its identity plus the serializer's type tag:

==================  ==========================================================
row                 bound to
==================  ==========================================================
checkpoint body     thread_id, checkpoint_ns, checkpoint_id
metadata (sealed)   thread_id, checkpoint_ns, checkpoint_id, and the clear keys
channel value       thread_id, checkpoint_ns, channel, version
list chunk          thread_id, checkpoint_ns, channel
pending write       thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel
==================  ==========================================================

Values are keyed by version, not checkpoint: one row serves every checkpoint
that has that version (that is what keeps storage linear). Chunks are bound to
their list, not their item numbers: Postgres's one-call put numbers items on the
server, after sealing. A chunk moved within its own list still opens, one moved
to another list, channel, namespace or thread does not.

A sealed blob's type column reads ``lgme1:<serializer type>``: a saver without
encryption refuses it by name instead of handing ciphertext to the serializer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from langgraph_memory.encryption import EncryptionKeys, is_sealed_text, row_aad, text_envelope
from langgraph_memory.errors import ConfigurationError, DecryptionError, InvalidFilterError

SEALED_TYPE_PREFIX = "lgme1:"
# The metadata key that holds the sealed (content-bearing) part of the metadata.
SEALED_METADATA_KEY = "lgm_sealed"


def _label(kind: str, names: tuple[str, ...], parts: tuple[Any, ...]) -> str:
    fields = ", ".join(f"{n}={p!r}" for n, p in zip(names, parts, strict=True))
    return f"the {kind} row ({fields})"


_NAMES = {
    "checkpoint": ("thread_id", "checkpoint_ns", "checkpoint_id"),
    "metadata": ("thread_id", "checkpoint_ns", "checkpoint_id"),
    "value": ("thread_id", "checkpoint_ns", "channel", "version"),
    "chunk": ("thread_id", "checkpoint_ns", "channel"),
    "write": ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel"),
}


class RowSealer:
    """Seals and opens one saver's rows; without keys it only refuses sealed rows.

    Args:
        keys: the saver's ``encryption=`` keyring, or ``None`` (rows in clear).
    """

    __slots__ = ("clear_keys", "keys")

    def __init__(self, keys: EncryptionKeys | None) -> None:
        if keys is not None and not isinstance(keys, EncryptionKeys):
            raise ConfigurationError(
                f"encryption={keys!r}; pass a langgraph_memory.encryption.EncryptionKeys "
                "(e.g. EncryptionKeys({'k1': key}, current='k1')) or None."
            )
        self.keys = keys
        # Retention reads the delta counters inside its transaction: always clear.
        self.clear_keys = (
            keys.clear_metadata_keys | {"counters_since_delta_snapshot"}
            if keys is not None
            else frozenset()
        )

    @property
    def enabled(self) -> bool:
        return self.keys is not None

    # ---------------------------------------------------------------- typed blobs

    def seal(self, type_: str, blob: bytes, kind: str, *identity: Any) -> tuple[str, bytes]:
        keys = self.keys
        if keys is None:
            return type_, blob
        return SEALED_TYPE_PREFIX + type_, keys.seal(blob, row_aad(kind, *identity, type_))

    def open(self, type_: str, blob: Any, kind: str, *identity: Any) -> tuple[str, bytes]:
        keys = self.keys
        sealed = type(type_) is str and type_.startswith(SEALED_TYPE_PREFIX)
        if keys is None:
            if sealed:
                raise self._needs_keys(blob, kind, identity)
            return type_, blob
        label = _label(kind, _NAMES[kind], identity)
        if not sealed:
            blob = b""  # a clear row: open() raises PlaintextRowError naming it
            inner = type_
        else:
            inner = type_[len(SEALED_TYPE_PREFIX) :]
        return inner, keys.open(blob, row_aad(kind, *identity, inner), row=label)

    def _needs_keys(self, blob: Any, kind: str, identity: tuple[Any, ...]) -> DecryptionError:
        key_id = EncryptionKeys.key_id_of(blob)
        label = _label(kind, _NAMES[kind], identity)
        return DecryptionError(
            f"{label} is encrypted (key id {key_id!r}), but this saver was opened without "
            "encryption=; open it with encryption=EncryptionKeys(...) holding that key.",
            row=label,
            key_id=key_id,
        )

    def needs_reseal(self, type_: Any, blob: Any) -> bool:
        """Whether ``reencrypt`` rewrites this stored blob."""
        keys = self.keys
        assert keys is not None
        if not (type(type_) is str and type_.startswith(SEALED_TYPE_PREFIX)):
            # A clear row is always due: ``reseal`` seals it when ``encrypt_plaintext``
            # and otherwise raises PlaintextRowError (a pass never skips one silently).
            return True
        return keys.needs_reseal(blob)

    def reseal(
        self,
        type_: str,
        blob: bytes,
        kind: str,
        source: tuple[Any, ...],
        target: tuple[Any, ...],
        *,
        encrypt_plaintext: bool,
    ) -> tuple[str, bytes]:
        """``blob`` opened as ``source``'s row (a clear row taken as it is when
        ``encrypt_plaintext``) and sealed again under the current key as ``target``'s."""
        if encrypt_plaintext and not (type(type_) is str and type_.startswith(SEALED_TYPE_PREFIX)):
            inner = (type_, bytes(blob))
        else:
            inner = self.open(type_, blob, kind, *source)
        return self.seal(inner[0], inner[1], kind, *target)

    # ---------------------------------------------------------------- metadata

    def seal_metadata(self, meta: Mapping[str, Any], json_default: Any, *identity: Any) -> str:
        """The metadata column's JSON: clear keys as they are, the rest sealed
        under ``lgm_sealed`` (always present, so stripping it is detected)."""
        text = json.dumps(meta, ensure_ascii=False, default=json_default)
        keys = self.keys
        if keys is None:
            return text
        plain: dict[str, Any] = json.loads(text)
        clear = {k: v for k, v in plain.items() if k in self.clear_keys}
        rest = {k: v for k, v in plain.items() if k not in self.clear_keys}
        sealed = keys.seal_text(
            json.dumps(rest, ensure_ascii=False), self._metadata_aad(clear, identity)
        )
        return json.dumps({**clear, SEALED_METADATA_KEY: sealed}, ensure_ascii=False)

    def open_metadata(
        self, text: str | bytes | Mapping[str, Any], *identity: Any
    ) -> dict[str, Any]:
        meta: dict[str, Any] = (
            dict(text) if isinstance(text, Mapping) else json.loads(text) if text else {}
        )
        keys = self.keys
        sealed = meta.pop(SEALED_METADATA_KEY, None)
        label = _label("metadata", _NAMES["metadata"], identity)
        if keys is None:
            if sealed is not None:
                raise DecryptionError(
                    f"{label} is encrypted, but this saver was opened without encryption=; "
                    "open it with encryption=EncryptionKeys(...).",
                    row=label,
                )
            return meta
        if not is_sealed_text(sealed):
            sealed = ""  # clear metadata: open_text raises PlaintextRowError naming the row
        rest = json.loads(keys.open_text(sealed, self._metadata_aad(meta, identity), row=label))
        return {**meta, **rest}

    def metadata_needs_reseal(self, text: str | bytes) -> bool:
        keys = self.keys
        assert keys is not None
        sealed = json.loads(text).get(SEALED_METADATA_KEY) if text else None
        if not is_sealed_text(sealed):
            return True  # clear: sealed, or refused (see needs_reseal)
        return keys.needs_reseal(text_envelope(str(sealed), "metadata"))

    def reseal_metadata(
        self,
        text: str | bytes,
        json_default: Any,
        source: tuple[Any, ...],
        target: tuple[Any, ...],
        *,
        encrypt_plaintext: bool,
    ) -> str:
        meta = json.loads(text) if text else {}
        if not (encrypt_plaintext and SEALED_METADATA_KEY not in meta):
            meta = self.open_metadata(text, *source)
        return self.seal_metadata(meta, json_default, *target)

    @staticmethod
    def _metadata_aad(clear: Mapping[str, Any], identity: tuple[Any, ...]) -> bytes:
        # The clear keys are authenticated too: changing `step` or `source` in SQL
        # makes the row fail to open. Canonical JSON survives Postgres's jsonb.
        canonical = json.dumps(clear, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return row_aad("metadata", *identity, canonical)

    def check_filter(self, metadata_filter: Mapping[str, Any] | None) -> None:
        """Refuse ``list(filter=...)`` on a sealed key: it would never match."""
        if not self.enabled or not metadata_filter:
            return
        for key in metadata_filter:
            top = str(key).split(".", 1)[0]
            if top not in self.clear_keys:
                raise InvalidFilterError(
                    f"list(filter=...) key {key!r} is encrypted in the metadata, so the "
                    f"database cannot filter on it; filter on a clear key "
                    f"{sorted(self.clear_keys)}, or add it to "
                    "EncryptionKeys(clear_metadata_keys=...) before its rows are written."
                )
