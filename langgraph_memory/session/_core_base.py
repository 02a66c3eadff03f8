"""What every part of ``SaverCore`` (``_core.py``) shares.

Its settings and per-process state (``CoreBase.__init__``: the dialect, the
serializer, the list cache, retention, redaction, sealing, thread activity,
owners, ended steps, recent rewrites), ``with_serde``, and the thread-ownership
transactions. The reads, the writes and the maintenance build on it.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping
from types import ModuleType
from typing import Self

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_memory.config import RetentionPolicy
from langgraph_memory.encryption import EncryptionKeys
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.session._activity import ThreadActivity
from langgraph_memory.session._channels import ListCache
from langgraph_memory.session._encoding import parse_thread_id
from langgraph_memory.session._owner import OwnerCache, config_user_id, ownership_refused
from langgraph_memory.session._prepared import EndedSteps
from langgraph_memory.session._redaction import MessageRedactor
from langgraph_memory.session._rewrites import RecentRewrites
from langgraph_memory.session._sealing import RowSealer
from langgraph_memory.session._statements import Execute, Fetch, Txn


class CoreBase:
    """The settings and per-process state of a ``SaverCore`` (its docstring lists
    the arguments), and thread ownership."""

    def __init__(
        self,
        sql: ModuleType,
        serde: SerializerProtocol,
        *,
        cache_size: int = 256,
        retention: RetentionPolicy | None = None,
        redactor: MessageRedactor | None = None,
        encryption: EncryptionKeys | None = None,
    ) -> None:
        if cache_size < 0:
            raise ConfigurationError(f"cache_size={cache_size!r}; use an integer >= 0.")
        if retention is not None and not isinstance(retention, RetentionPolicy):
            raise ConfigurationError(
                f"retention={retention!r}; pass a langgraph_memory.config.RetentionPolicy."
            )
        self.sql = sql
        self.serde = serde
        self.cache = ListCache(cache_size)
        self.retention = retention
        # The savers' redact_messages option (session/_redaction.py).
        self.redactor = redactor
        self.sealer = RowSealer(encryption)
        self.activity = ThreadActivity()
        self.owners = OwnerCache()
        self.ended_steps = EndedSteps()
        self.recent_rewrites = RecentRewrites()
        # Dialects whose write lock covers the whole database may skip the
        # thread-row write on most puts (it doubles as a per-thread lock elsewhere).
        self._single_writer = bool(getattr(sql, "SINGLE_WRITER", False))

    def with_serde(self, serde: SerializerProtocol) -> Self:
        """The same core (SQL, cache, retention) with another serializer."""
        clone = copy.copy(self)
        clone.serde = serde
        return clone

    # ---------------------------------------------------------------- migrations

    # The schema's transactions come from the shared runner (``_migrations.py``),
    # adapted in ``_shell.migration_steps``.

    # ---------------------------------------------------------------- ownership

    def owner_check(self, config: RunnableConfig | None) -> tuple[str, str] | None:
        """(thread id, user id) to check before this call, or ``None`` when the call
        names no user or no thread, or this process confirmed that user recently."""
        user_id = config_user_id(config)
        if user_id is None:
            return None
        configurable = config.get("configurable") if isinstance(config, Mapping) else None
        raw_thread = configurable.get("thread_id") if isinstance(configurable, Mapping) else None
        if raw_thread is None:
            return None
        thread_id = parse_thread_id(raw_thread)
        if self.owners.confirmed(thread_id, user_id):
            return None
        return thread_id, user_id

    def owner_txn(self, thread_id: str, user_id: str, *, claim: bool) -> Txn[bool]:
        """Check (and, for a write, claim) the thread's owner; True once ``user_id``
        is its owner. Raises ``ThreadOwnershipError`` for another user's thread."""
        sql = self.sql
        if claim:
            now = time.time()
            yield Execute(sql.CLAIM_THREAD_OWNER, (thread_id, now, now, user_id))
        rows = yield Fetch(sql.SELECT_THREAD_OWNER, (thread_id,))
        owner = rows[0][0] if rows else None
        if owner is None:
            return False  # unowned (a read, or a tombstoned thread): nothing to confirm
        if owner != user_id:
            raise ownership_refused(thread_id, owner, user_id)
        return True

    def owned_threads_txn(self, user_id: str) -> Txn[list[str]]:
        rows = yield Fetch(self.sql.SELECT_OWNED_THREADS, (user_id,))
        return [str(r[0]) for r in rows]
