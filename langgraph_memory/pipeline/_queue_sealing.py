"""Which queue column is sealed how: each job payload bound to its job (pure).

With ``encryption=``, every column of ``lgm_memory_jobs`` that can hold what a
user said is stored as a sealed text (``lgme1:`` + an AES-GCM envelope in
base64, ``langgraph_memory.encryption``):

==============  ===============================================================
column          holds
==============  ===============================================================
``messages``    the turns still to be read (LangChain message dicts)
``candidates``  the extraction result (candidate texts)
``ops``         the reconcile plan (quotes the candidates)
``last_error``  the last failure (a model or parse error can quote the model)
==============  ===============================================================

Each envelope's associated data is the job's identity and the column's role:
``row_aad("queue-job", user_id, thread_id, job_id, role)``. A payload copied to
another job, moved to another column, or a job row re-assigned to another user
or thread (which would make a worker write Alice's turns into Bob's memories)
fails with ``DecryptionError``; a payload in clear read with encryption on fails
with ``PlaintextRowError``.

Left in clear, because they hold no text: ids (job, user, thread, message),
the job key (a hash), statuses, counters, timestamps, and the audit log, which
keeps ids and decisions only (``_audit_params``). A finished job's ``messages``
is the constant ``'[]'``: nothing to seal, and it is never read back.
"""

from __future__ import annotations

from langgraph_memory.encryption import EncryptionKeys, is_sealed_text, row_aad, text_envelope
from langgraph_memory.errors import ConfigurationError, DecryptionError

# The payload columns of lgm_memory_jobs, in the order SELECT_JOB_PAYLOADS_AFTER returns them.
ROLES = ("messages", "candidates", "ops", "last_error")
# What COMPLETE_JOB leaves in a finished job's messages column.
DONE_MESSAGES = "[]"


def _label(role: str, user_id: str, thread_id: str, job_id: str) -> str:
    return (
        f"the memory queue's {role} of job {job_id!r} "
        f"(user_id={user_id!r}, thread_id={thread_id!r})"
    )


class JobSealer:
    """Seals and opens one queue's payload columns; without keys it passes text
    through and refuses sealed payloads by name.

    Args:
        keys: the queue's ``encryption=`` keyring, or ``None`` (payloads in clear).

    Example:
        >>> from langgraph_memory.encryption import EncryptionKeys
        >>> sealer = JobSealer(EncryptionKeys.generate("k1"))
        >>> stored = sealer.seal("messages", "[]", "u1", "t1", "j1")
        >>> stored.startswith("lgme1:")
        True
        >>> sealer.open("messages", stored, "u1", "t1", "j1")
        '[]'
    """

    __slots__ = ("keys",)

    def __init__(self, keys: EncryptionKeys | None) -> None:
        if keys is not None and not isinstance(keys, EncryptionKeys):
            raise ConfigurationError(
                f"encryption={keys!r}; pass a langgraph_memory.encryption.EncryptionKeys "
                "(e.g. EncryptionKeys({'k1': key}, current='k1')) or None."
            )
        self.keys = keys

    @property
    def enabled(self) -> bool:
        return self.keys is not None

    def seal(self, role: str, text: str, user_id: str, thread_id: str, job_id: str) -> str:
        keys = self.keys
        if keys is None:
            return text
        return keys.seal_text(text, row_aad("queue-job", user_id, thread_id, job_id, role))

    def seal_optional(
        self, role: str, text: str | None, user_id: str, thread_id: str, job_id: str
    ) -> str | None:
        return None if text is None else self.seal(role, text, user_id, thread_id, job_id)

    def open(self, role: str, stored: str, user_id: str, thread_id: str, job_id: str) -> str:
        """The clear text of a stored payload.

        Raises:
            PlaintextRowError: a clear payload read by a queue with ``encryption=``.
            DecryptionError: a sealed payload moved to another job, column, user or
                thread, altered, under a key the ring lacks, or read by a queue
                without ``encryption=``.
        """
        label = _label(role, user_id, thread_id, job_id)
        keys = self.keys
        if keys is None:
            if is_sealed_text(stored):
                key_id = EncryptionKeys.key_id_of(text_envelope(stored, label))
                raise DecryptionError(
                    f"{label} is encrypted (key id {key_id!r}), but this queue was opened "
                    "without encryption=; open it with encryption=EncryptionKeys(...) "
                    "holding that key.",
                    row=label,
                    key_id=key_id,
                )
            return stored
        aad = row_aad("queue-job", user_id, thread_id, job_id, role)
        return keys.open_text(stored, aad, row=label)

    def open_optional(
        self, role: str, stored: str | None, user_id: str, thread_id: str, job_id: str
    ) -> str | None:
        return None if stored is None else self.open(role, stored, user_id, thread_id, job_id)

    def reseal(
        self,
        role: str,
        stored: str,
        user_id: str,
        thread_id: str,
        job_id: str,
        *,
        encrypt_plaintext: bool,
    ) -> str | None:
        """``stored`` sealed again under the current key, or ``None`` when it
        already is. A clear payload is sealed only with ``encrypt_plaintext``
        (else ``PlaintextRowError``: a pass never skips one silently)."""
        keys = self.keys
        assert keys is not None
        if is_sealed_text(stored):
            label = _label(role, user_id, thread_id, job_id)
            if keys.key_id_of(text_envelope(stored, label)) == keys.current:
                return None
            text = self.open(role, stored, user_id, thread_id, job_id)
        elif encrypt_plaintext:
            text = stored
        else:
            text = self.open(role, stored, user_id, thread_id, job_id)  # PlaintextRowError
        return self.seal(role, text, user_id, thread_id, job_id)
