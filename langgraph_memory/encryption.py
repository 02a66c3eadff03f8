"""Encryption at rest: keys with ids, AES-GCM envelopes bound to a row's identity.

One small core serves the session savers, the long-term catalog and the memory
queue. Every encrypted value is an *envelope*::

    b"LGME" | version (1 byte) | key id length (1 byte) | key id | nonce (12) | ciphertext + tag (16)

sealed with AES-256-GCM (``cryptography``'s ``AESGCM``; nothing here is
hand-written crypto). The associated data is the envelope's header followed by
the row's *identity* (``row_aad``: for a checkpoint its thread, namespace and
checkpoint id; for a memory its user and memory id), so an envelope opens only
where it was written: a row copied or moved to another thread, user or memory
fails with :class:`~langgraph_memory.errors.DecryptionError`, and a row stored in
clear, read where encryption is on, fails with
:class:`~langgraph_memory.errors.PlaintextRowError`. Nothing falls back to clear.

Keys have ids. The *current* key seals; every key of the ring opens. Rotation:
add a key and make it current (:meth:`EncryptionKeys.rotated`), run the store's
or saver's ``reencrypt()`` (it rewrites rows sealed under other keys, batch by
batch, while the app runs), then drop the old key (:meth:`EncryptionKeys.without`).

Nonces are 96 random bits per envelope: keep one key below ~2**32 envelopes
(NIST SP 800-38D); rotating yearly, or every few billion rows, keeps far below it.

Example:
    >>> from langgraph_memory.encryption import EncryptionKeys, row_aad
    >>> keys = EncryptionKeys.generate("2025-01")
    >>> aad = row_aad("memory", "user-1", "m-1")
    >>> sealed = keys.seal(b"likes tea", aad)
    >>> keys.open(sealed, aad, row="memory user='user-1' id='m-1'")
    b'likes tea'
    >>> keys.key_id_of(sealed)
    '2025-01'
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from langgraph_memory._extras import require_extra
from langgraph_memory.errors import ConfigurationError, DecryptionError, PlaintextRowError

__all__ = [
    "DEFAULT_CLEAR_METADATA_KEYS",
    "ENVELOPE_MAGIC",
    "EncryptionKeys",
    "ReencryptReport",
    "is_envelope",
    "row_aad",
]

ENVELOPE_MAGIC = b"LGME"
ENVELOPE_VERSION = 1
_HEAD = ENVELOPE_MAGIC + bytes((ENVELOPE_VERSION,))
NONCE_BYTES = 12
TAG_BYTES = 16
_KEY_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
_KEY_BYTES = (16, 24, 32)

# Checkpoint metadata keys a saver with encryption keeps in clear, so that
# ``list(filter=...)`` and retention can still read them: ids, counters and the
# step's source, never message text. Every other key (LangGraph's older
# ``writes``, anything an app adds) is sealed. ``counters_since_delta_snapshot``
# is read by retention inside its transaction.
DEFAULT_CLEAR_METADATA_KEYS = frozenset(
    {
        "source",
        "step",
        "parents",
        "run_id",
        "thread_id",
        "checkpoint_ns",
        "user_id",
        "assistant_id",
        "graph_id",
        "counters_since_delta_snapshot",
    }
)


def row_aad(kind: str, *parts: str | int | None) -> bytes:
    """The associated data naming one row: its kind and identity, length-prefixed
    so that no two identities encode alike (``("ab", "c")`` vs ``("a", "bc")``)."""
    out = bytearray(b"lgm-aad/1")
    for part in (kind, *parts):
        data = b"\xff" if part is None else str(part).encode("utf-8", "surrogatepass")
        out += len(data).to_bytes(4, "big") + data
    return bytes(out)


def is_envelope(blob: bytes | bytearray | memoryview | None) -> bool:
    """Whether ``blob`` starts like an envelope of this format."""
    return blob is not None and bytes(blob[: len(_HEAD)]) == _HEAD


def _key_bytes(key_id: str, key: Any) -> bytes:
    if isinstance(key, str):
        try:
            key = base64.b64decode(key.encode("ascii"), validate=True)
        except (binascii.Error, ValueError, UnicodeEncodeError):
            raise ConfigurationError(
                f"key {key_id!r} is a string that is not base64; pass 32 raw bytes or their "
                "base64 text (EncryptionKeys.new_key() makes one)."
            ) from None
    if not isinstance(key, (bytes, bytearray)) or len(key) not in _KEY_BYTES:
        size = len(key) if isinstance(key, (bytes, bytearray)) else type(key).__name__
        raise ConfigurationError(
            f"key {key_id!r} is {size} bytes; AES-GCM takes 16, 24 or 32 "
            "(32 recommended; EncryptionKeys.new_key() makes one)."
        )
    return bytes(key)


@dataclass(frozen=True, eq=False)
class EncryptionKeys:
    """A keyring: the current key seals, every listed key opens.

    Args:
        keys: key id -> key (16, 24 or 32 raw bytes, or their base64 text). Ids
            are 1-64 characters of letters, digits and ``_.:-``; they are stored
            in each envelope, so keep them stable (a date works: ``"2025-01"``).
        current: the id of the key that seals new rows.
        clear_metadata_keys: checkpoint metadata keys the savers keep in clear
            for ``list(filter=...)``; the rest of the metadata is sealed.

    Raises:
        MissingExtraError: ``cryptography`` (the ``encryption`` extra) is not installed.
        ConfigurationError: a key has the wrong size, an id is malformed, or
            ``current`` is not in ``keys``.

    Example:
        >>> keys = EncryptionKeys({"k1": EncryptionKeys.new_key()}, current="k1")
        >>> keys2 = keys.rotated("k2")
        >>> keys2.current, sorted(keys2.keys)
        ('k2', ['k1', 'k2'])
        >>> keys2.without("k1").current
        'k2'
    """

    keys: Mapping[str, bytes | str] = field(repr=False)
    current: str
    clear_metadata_keys: frozenset[str] = DEFAULT_CLEAR_METADATA_KEYS
    _aead: Mapping[str, Any] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        aesgcm = _aesgcm_class()
        if not isinstance(self.keys, Mapping) or not self.keys:
            raise ConfigurationError(
                f"keys={type(self.keys).__name__}; pass a non-empty mapping of key id -> "
                "32-byte key, e.g. {'k1': EncryptionKeys.new_key()}."
            )
        checked: dict[str, bytes] = {}
        for key_id, key in self.keys.items():
            if not isinstance(key_id, str) or not _KEY_ID.match(key_id):
                raise ConfigurationError(
                    f"key id {key_id!r} is not allowed; use 1-64 letters, digits or '_.:-' "
                    "(e.g. '2025-01')."
                )
            checked[key_id] = _key_bytes(key_id, key)
        if self.current not in checked:
            raise ConfigurationError(
                f"current={self.current!r} is not one of the key ids {sorted(checked)}; "
                "name the key that seals new rows."
            )
        clear = self.clear_metadata_keys
        if isinstance(clear, str) or not isinstance(clear, Iterable):
            raise ConfigurationError(
                f"clear_metadata_keys={clear!r}; pass a set of metadata key names."
            )
        object.__setattr__(self, "clear_metadata_keys", frozenset(str(k) for k in clear))
        object.__setattr__(self, "keys", MappingProxyType(checked))
        object.__setattr__(self, "_aead", {kid: aesgcm(k) for kid, k in checked.items()})

    # ---------------------------------------------------------------- making keys

    @staticmethod
    def new_key() -> bytes:
        """32 random bytes from the OS: one AES-256 key."""
        return os.urandom(32)

    @classmethod
    def generate(cls, key_id: str = "k1") -> EncryptionKeys:
        """A keyring of one fresh key (tests, or a first key to store in a secret manager)."""
        return cls({key_id: cls.new_key()}, current=key_id)

    def rotated(self, key_id: str, key: bytes | str | None = None) -> EncryptionKeys:
        """This ring plus ``key`` (fresh if ``None``) under ``key_id``, which becomes current."""
        if key_id in self.keys:
            raise ConfigurationError(
                f"key id {key_id!r} is already in the ring; rotate to a new id."
            )
        keys = {**self.keys, key_id: self.new_key() if key is None else key}
        return EncryptionKeys(keys, current=key_id, clear_metadata_keys=self.clear_metadata_keys)

    def without(self, key_id: str) -> EncryptionKeys:
        """This ring without ``key_id`` (after ``reencrypt()`` finished). Rows still
        sealed under it then fail to open with ``DecryptionError``."""
        if key_id == self.current:
            raise ConfigurationError(
                f"{key_id!r} is the current key; rotate to another key before dropping it."
            )
        if key_id not in self.keys:
            raise ConfigurationError(f"key id {key_id!r} is not in the ring {sorted(self.keys)}.")
        keys = {k: v for k, v in self.keys.items() if k != key_id}
        return EncryptionKeys(
            keys, current=self.current, clear_metadata_keys=self.clear_metadata_keys
        )

    # ---------------------------------------------------------------- sealing

    def _header(self, key_id: str) -> bytes:
        kid = key_id.encode("ascii")
        return _HEAD + bytes((len(kid),)) + kid

    def seal(self, plaintext: bytes, aad: bytes) -> bytes:
        """An envelope of ``plaintext`` under the current key, bound to ``aad``."""
        header = self._header(self.current)
        nonce = os.urandom(NONCE_BYTES)
        sealed = bytes(self._aead[self.current].encrypt(nonce, plaintext, header + aad))
        return header + nonce + sealed

    def open(self, envelope: bytes | bytearray | memoryview, aad: bytes, *, row: str) -> bytes:
        """The plaintext of ``envelope``, if it was sealed for ``aad`` under a key of the ring.

        Args:
            envelope: what :meth:`seal` returned.
            aad: the identity the reader expects (``row_aad``).
            row: the row's identity as text for error messages (ids, no content).

        Raises:
            PlaintextRowError: ``envelope`` is not an envelope (a clear row).
            DecryptionError: an unknown key id, or the tag does not verify (moved,
                copied, altered, or a wrong key).
        """
        blob = bytes(envelope)
        if not is_envelope(blob):
            raise PlaintextRowError(
                f"{row} is stored in clear, but encryption is on; clear rows are never "
                "read (they could have been planted). Encrypt the rows written before "
                "encryption was turned on with reencrypt(encrypt_plaintext=True), or delete them.",
                row=row,
            )
        key_id, body = _split(blob, row)
        aead = self._aead.get(key_id)
        if aead is None:
            raise DecryptionError(
                f"{row} was sealed under key id {key_id!r}, which this keyring lacks "
                f"(it has {sorted(self.keys)}); add that key to EncryptionKeys(keys=...), "
                "or restore the row from a backup sealed under a key you hold.",
                row=row,
                key_id=key_id,
            )
        nonce, ciphertext = body[:NONCE_BYTES], body[NONCE_BYTES:]
        try:
            return bytes(aead.decrypt(nonce, ciphertext, self._header(key_id) + aad))
        except Exception:  # cryptography's InvalidTag (and malformed input)
            raise DecryptionError(
                f"{row} does not open under key id {key_id!r}: it was moved or copied from "
                "another row, altered, or sealed with a different key of the same id. "
                "Nothing was returned; restore the row where it came from, or delete it.",
                row=row,
                key_id=key_id,
            ) from None

    @staticmethod
    def key_id_of(envelope: bytes | bytearray | memoryview | None) -> str | None:
        """The key id an envelope was sealed under, or ``None`` for a non-envelope."""
        if envelope is None or not is_envelope(envelope):
            return None
        try:
            return _split(bytes(envelope), "")[0]
        except DecryptionError:
            return None

    def needs_reseal(self, envelope: bytes | bytearray | memoryview | None) -> bool:
        """Whether ``reencrypt`` should rewrite this stored value (another key, or clear)."""
        return self.key_id_of(envelope) != self.current

    # Text columns (metadata, JSON values) hold envelopes as base64 text.
    def seal_text(self, plaintext: str, aad: bytes) -> str:
        return TEXT_PREFIX + base64.b64encode(self.seal(plaintext.encode("utf-8"), aad)).decode(
            "ascii"
        )

    def open_text(self, text: str, aad: bytes, *, row: str) -> str:
        return self.open(text_envelope(text, row), aad, row=row).decode("utf-8")


@dataclass(frozen=True, slots=True)
class ReencryptReport:
    """What one ``reencrypt()`` pass did.

    Attributes:
        scanned: units read (threads for a saver, rows for a store or queue).
        rewritten: rows written again under the current key.
        cursor: where the pass stopped; pass it back as ``after=`` to resume an
            interrupted pass (a fresh pass is also safe: rows already under the
            current key are only read).
    """

    scanned: int
    rewritten: int
    cursor: str | None


# A sealed text value: this prefix, then the envelope in base64.
TEXT_PREFIX = "lgme1:"


def is_sealed_text(text: Any) -> bool:
    return isinstance(text, str) and text.startswith(TEXT_PREFIX)


def text_envelope(text: str, row: str) -> bytes:
    """The envelope inside a sealed text (``b""`` for clear text, which ``open`` refuses)."""
    if not is_sealed_text(text):
        return b""
    try:
        return base64.b64decode(text[len(TEXT_PREFIX) :].encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise DecryptionError(f"{row} holds a malformed sealed text.", row=row) from None


def _split(blob: bytes, row: str) -> tuple[str, bytes]:
    start = len(_HEAD)
    if len(blob) < start + 1:
        raise DecryptionError(f"{row} holds a truncated envelope.", row=row)
    size = blob[start]
    kid = blob[start + 1 : start + 1 + size]
    body = blob[start + 1 + size :]
    if len(kid) != size or len(body) < NONCE_BYTES + TAG_BYTES:
        raise DecryptionError(f"{row} holds a truncated envelope.", row=row)
    try:
        return kid.decode("ascii"), body
    except UnicodeDecodeError:
        raise DecryptionError(f"{row} holds a malformed envelope.", row=row) from None


def _aesgcm_class() -> Any:
    require_extra("encryption", feature="Encryption at rest (EncryptionKeys)")
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    return AESGCM
