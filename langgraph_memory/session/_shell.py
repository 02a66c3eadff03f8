"""The public methods every saver shares, one base class per mode.

* :class:`SyncShell`: ``SqliteSaver`` and ``PostgresSaver``.
* :class:`AsyncShell`: ``AsyncSqliteSaver`` and ``AsyncPostgresSaver``.

A method lives here when its body is the same for SQLite and Postgres: it
prepares through the core (``_core.py``) and runs the transaction through the
dialect's hooks. Each dialect implements ``_read``, ``_write``, ``_migrate``
and ``setup`` (or ``asetup``), and overrides a default hook only where
Postgres and SQLite really differ: ``_thread_locked`` (Postgres takes the thread's row lock),
``_write_once`` (Postgres never retries a copy that may have committed) and
``_core_serde`` (Postgres compresses large dicts). Methods whose docstrings or
bodies differ per dialect stay in the dialect's class, and call shared helpers:
``_set_up_once`` (setup around the dialect's ``_before_migrations`` and
``_migrate`` hooks) and ``_run_steps``, which runs an operation of several
transactions (``sweep``) written once as a generator of :data:`Step`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import (
    Awaitable,
    Callable,
    Collection,
    Generator,
    Iterator,
    Mapping,
    Sequence,
)
from functools import partial
from types import ModuleType
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, DeltaChannelHistory
from langgraph.checkpoint.serde.base import SerializerProtocol

from langgraph_memory._migrations import Migration, MigrationTable, migration_transactions
from langgraph_memory._migrations import Steps as MigrationSteps
from langgraph_memory.config import PrivacyPolicy, RetentionPolicy
from langgraph_memory.encryption import EncryptionKeys, ReencryptReport
from langgraph_memory.errors import (
    CheckpointStorageError,
    ConfigurationError,
    MigrationError,
    ThreadDeletedError,
)
from langgraph_memory.session._bridges import LoopSyncTwins, ThreadedAsyncTwins, _SaverBase
from langgraph_memory.session._core import (
    Execute,
    Fetch,
    ListQuery,
    PreparedPut,
    PutOutcome,
    SaverCore,
    Txn,
    ValueRewrite,
)
from langgraph_memory.session._owner import check_owner_id
from langgraph_memory.session._redaction import message_redactor
from langgraph_memory.session._retention import StorageStats
from langgraph_memory.session._versions import next_version

T = TypeVar("T")

# Setup's warnings (an unmigrated official database); ``migrate`` silences it.
setup_logger = logging.getLogger("langgraph_memory.session.setup")

PRUNE_STRATEGIES = ("keep_latest", "delete")

# One transaction of an operation that needs several (``sweep``): whether it
# writes, and its factory. The generator receives each transaction's result,
# so one body serves the sync and the async shell.
READ, WRITE = False, True
Step = tuple[bool, Callable[[], Txn[Any]]]
Steps = Generator[Step, Any, T]


def sweep_steps(
    core: SaverCore,
    now: float,
    dry_run: bool,
    *,
    remove_threads: Callable[
        [SaverCore, float, list[str], list[str]], Steps[tuple[list[str], list[str]]]
    ],
    keep_last_txn: Callable[[str, int], Txn[int]],
) -> Steps[Any]:
    """``sweep``/``asweep`` for every dialect: plan in one read, remove expired and
    evicted threads (the dialect's ``remove_threads`` steps, returning those really
    removed), keep the last N per live thread, one transaction each, then report."""
    expired, evicted, before = yield READ, lambda: core.sweep_plan_txn(now)
    if dry_run:
        return core.report(
            dry_run=True, expired=expired, evicted=evicted, pruned=0, before=before, after=before
        )
    expired, evicted = yield from remove_threads(core, now, expired, evicted)
    pruned = 0
    policy = core.retention
    if policy is not None and policy.keep_last is not None:
        keep = policy.keep_last
        for thread_id in (yield READ, core.live_threads_txn):
            pruned += yield WRITE, partial(keep_last_txn, thread_id, keep)
    after = yield READ, core.size_txn
    return core.report(
        dry_run=False,
        expired=expired,
        evicted=evicted,
        pruned=pruned,
        before=before,
        after=after,
    )


def reencrypt_steps(
    core: SaverCore,
    *,
    after: str | None,
    batch_size: int,
    encrypt_plaintext: bool,
    locked: Callable[[str, Callable[[], Txn[int]]], Callable[[], Txn[int]]],
) -> Steps[ReencryptReport]:
    """``reencrypt``/``areencrypt``: page through thread ids, one short write
    transaction per thread (holding that thread against concurrent writers), so
    the app keeps running while every row moves to the current key."""
    if not core.sealer.enabled:
        raise ConfigurationError(
            "reencrypt() needs a saver opened with encryption=EncryptionKeys(...)."
        )
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigurationError(f"batch_size={batch_size!r}; use an integer >= 1.")
    cursor = "" if after is None else str(after)
    scanned = rewritten = 0
    while True:
        threads = yield READ, partial(core.threads_with_rows_txn, cursor, batch_size)
        for thread_id in threads:
            rewritten += yield (
                WRITE,
                locked(
                    thread_id,
                    partial(core.reseal_thread_txn, thread_id, encrypt_plaintext=encrypt_plaintext),
                ),
            )
            scanned += 1
            cursor = thread_id
        if len(threads) < batch_size:
            return ReencryptReport(scanned, rewritten, cursor or None)


def _iso_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def migration_steps(
    core: SaverCore, migrations: Sequence[tuple[int, str, Sequence[str]]]
) -> Iterator[Callable[[], Txn[Any]]]:
    """The schema's transactions in order: a look for the official saver's
    tables, then the shared runner's (``langgraph_memory._migrations``): the
    migrations table, then each migration with its "applied" row, a newer
    release's database refused (each step is one transaction)."""
    yield partial(official_tables_txn, core)
    table = MigrationTable(
        create=core.sql.CREATE_MIGRATIONS_TABLE,
        select_applied=core.sql.SELECT_APPLIED_MIGRATIONS,
        insert_applied=core.sql.INSERT_APPLIED_MIGRATION,
        stamp=_iso_now,  # the table has always held ISO-8601 text
    )
    known = [Migration(v, name, tuple(statements)) for v, name, statements in migrations]
    for txn in migration_transactions(table, known, where="this checkpoint database"):
        yield partial(_as_txn, txn)


def _as_txn(txn: Callable[[], MigrationSteps]) -> Txn[Any]:
    """A runner transaction as a saver transaction: each statement becomes a
    ``Fetch`` (rows sent back) or an ``Execute``, so every shell runs it."""
    steps = txn()
    try:
        statement = next(steps)
        while True:
            if statement.rows:
                rows = yield Fetch(statement.sql, statement.params)
                statement = steps.send(list(rows))
            else:
                yield Execute(statement.sql, statement.params)
                statement = steps.send([])
    except StopIteration as stop:
        return stop.value


def official_tables_txn(core: SaverCore) -> Txn[None]:
    """Warn once when the database holds LangGraph's official checkpoint tables
    and none of ours: an app switching savers would otherwise see its history
    as empty, silently. The warning names ``langgraph-memory migrate``."""
    from langgraph_memory.migrate._warning import unmigrated_warning

    rows = yield Fetch(core.sql.SELECT_TABLE_NAMES)
    message = unmigrated_warning({str(r[0]) for r in rows}, core.sql.DIALECT)
    if message is not None:
        setup_logger.warning(message)


def check_prune_strategy(strategy: str) -> None:
    if strategy not in PRUNE_STRATEGIES:
        raise ConfigurationError(f"prune strategy={strategy!r}; use 'keep_latest' or 'delete'.")


class _DialectHooks(_SaverBase):
    """Hooks with SQLite's behaviour as the default; Postgres overrides them."""

    _core: SaverCore
    is_setup: bool
    # The dialect's SQL module's MIGRATIONS.
    _MIGRATIONS: Sequence[tuple[int, str, Sequence[str]]]

    def _thread_locked(self, thread_id: str, factory: Callable[[], Txn[T]]) -> Callable[[], Txn[T]]:
        """``factory`` run holding the thread against concurrent writers (SQLite's
        write transaction already excludes every other writer)."""
        return factory

    def _core_serde(self, serde: SerializerProtocol) -> SerializerProtocol:
        """The serializer the core encodes and decodes with."""
        return serde

    @staticmethod
    def _new_core(
        sql: ModuleType,
        serde: SerializerProtocol,
        cache_size: int,
        retention: RetentionPolicy | None,
        redact_messages: bool | PrivacyPolicy,
        encryption: EncryptionKeys | None = None,
    ) -> SaverCore:
        """The core of a saver built from its constructor's arguments."""
        return SaverCore(
            sql,
            serde,
            cache_size=cache_size,
            retention=retention,
            redactor=message_redactor(redact_messages),
            encryption=encryption,
        )

    def _clone_with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> Any:
        clone = super().with_allowlist(extra_allowlist)
        if clone is not self:
            clone._core = self._core.with_serde(self._core_serde(clone.serde))  # type: ignore[attr-defined]
        return clone

    def get_next_version(self, current: str | None, channel: None) -> str:
        return next_version(current)


class SyncShell(_DialectHooks, ThreadedAsyncTwins, BaseCheckpointSaver[str]):
    """The sync savers' shared methods; the ``a*`` twins run them in a worker thread."""

    _setup_lock: threading.Lock

    # ---------------------------------------------------------------- dialect hooks

    def setup(self) -> None:
        raise NotImplementedError

    def _read(self, factory: Callable[[], Txn[T]]) -> T:
        raise NotImplementedError

    def _write(self, factory: Callable[[], Txn[T]]) -> T:
        raise NotImplementedError

    def _write_once(self, factory: Callable[[], Txn[T]]) -> T:
        """A write that must not run twice (``copy_thread``)."""
        return self._write(factory)

    def _before_migrations(self) -> None:
        """Statements that must run outside a transaction before the migrations."""

    def _migrate(self, step: Callable[[], Txn[Any]]) -> None:
        """Run one schema step in its own write transaction."""
        raise NotImplementedError

    # ---------------------------------------------------------------- shared

    def _ensure_setup(self) -> None:
        if not self.is_setup:
            self.setup()

    def _set_up_once(self) -> None:
        """``setup``: once per saver, under its setup lock."""
        with self._setup_lock:
            if self.is_setup:
                return
            self._before_migrations()
            try:
                for step in migration_steps(self._core, self._MIGRATIONS):
                    self._migrate(step)
            except CheckpointStorageError as exc:
                raise MigrationError(f"schema migration failed: {exc}") from exc
            self.is_setup = True

    def _run_steps(self, steps: Steps[T]) -> T:
        """Run each transaction ``steps`` yields, sending back its result."""
        result: Any = None
        while True:
            try:
                write, factory = steps.send(result)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            result = self._write(factory) if write else self._read(factory)

    def _list_page(self, query: ListQuery, after: tuple[str, str, str] | None, size: int) -> Any:
        if after is None:
            self._check_owner(query.owner, claim=False)
        return self._read(lambda: self._core.list_page_txn(query, after, size))

    def _put_restarting(self, prepared: PreparedPut, store: Callable[[], PutOutcome]) -> PutOutcome:
        """``store()`` the put; if the thread was deleted and this put starts a
        new run on it (``SaverCore.restarts_thread``), restart the thread and
        store it again. Any other put on a deleted thread stays refused."""
        try:
            return store()
        except ThreadDeletedError:
            if not self._core.restarts_thread(prepared):
                raise
        self._write(partial(self._core.restart_thread_txn, prepared))
        return self._write(partial(self._core.put_txn, prepared))

    def _check_owner(self, need: tuple[str, str] | None, *, claim: bool) -> None:
        """Fail closed before a call on another user's thread (session/_owner.py);
        a write (``claim``) makes an unowned thread the caller's. ``need`` is
        ``core.owner_check(config)``: None when there is nothing to check."""
        if need is None:
            return
        thread_id, user_id = need
        txn = partial(self._core.owner_txn, thread_id, user_id, claim=claim)
        if self._write(txn) if claim else self._read(txn):
            self._core.owners.confirm(thread_id, user_id)

    def threads_of_user(self, user_id: str) -> list[str]:
        """The live threads this user owns (recorded at their first write that named
        the user, from ``configurable`` or the Runtime context); ``forget_user`` deletes these.

        Example:
            >>> from langgraph_memory.session import SqliteSaver
            >>> with SqliteSaver.from_conn_string(":memory:") as saver:
            ...     saver.threads_of_user("u-1")
            []
        """
        return self._read(partial(self._core.owned_threads_txn, check_owner_id(user_id)))

    def _keep_last(self, thread_id: str) -> None:
        """Trim the thread to ``keep_last`` after a ``put`` that made retention due."""
        keep = self._core.retention.keep_last  # type: ignore[union-attr]
        assert keep is not None
        self._write(
            self._thread_locked(thread_id, lambda: self._core.keep_last_txn(thread_id, keep))
        )

    def rewrite_threads(self, thread_ids: Sequence[str], rewrite: ValueRewrite) -> int:
        """Rewrite these threads' stored values in place (every checkpoint's channel
        values, list items and pending writes, sealed ones included), one short
        transaction per thread; returns the rows changed.
        ``store.delete_memory(..., checkpointer=saver)`` uses it to take a deleted
        memory out of the recall blocks the user's threads saved
        (``langgraph_memory.nodes.recall_erasure``).

        Nothing of the old values stays in the files: SQLite's ``secure_delete``
        overwrites them and the WAL is truncated once at the end; on Postgres the
        old row versions are dead tuples until :meth:`erase_pending` (README,
        "Erasure on Postgres").
        """
        done = 0
        recent = self._core.recent_rewrites
        for thread_id in thread_ids:
            # Before the rows: what a run in progress stores from now on is rewritten too.
            recent.add(str(thread_id), rewrite)
            try:
                done += self._write(
                    self._thread_locked(
                        thread_id, partial(self._core.rewrite_values_txn, thread_id, rewrite)
                    )
                )
            except BaseException:
                recent.discard(str(thread_id), rewrite)
                raise
            self._core.cache.discard_thread(str(thread_id))
        if done:
            self._after_erase()
        return done

    def erase_pending(self) -> int:
        """Take what deletes and rewrites left behind off the files; returns the
        tables rewritten. SQLite erases at once (``secure_delete``, WAL truncated),
        so here there is nothing pending and this returns 0."""
        return 0

    def _after_erase(self) -> None:
        """After a rewrite that erased rows (SQLite: truncate the WAL)."""

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a thread's complete history (checkpoints, writes, values) to a new thread id."""
        self._write_once(
            self._thread_locked(
                source_thread_id,
                lambda: self._core.copy_thread_txn(source_thread_id, target_thread_id),
            )
        )

    def reencrypt(
        self,
        *,
        after: str | None = None,
        batch_size: int = 100,
        encrypt_plaintext: bool = False,
    ) -> ReencryptReport:
        """Rewrite every row not sealed under the current key (key rotation).

        Runs while the app runs: one short write transaction per thread. Rows of
        the old key keep opening until the pass ends, as long as the old key
        stays in the ring; drop it (``EncryptionKeys.without``) after a pass that
        every app instance ran with the new ring already current.

        Args:
            after: resume after this thread id (``report.cursor`` of a pass that
                was interrupted); a fresh pass is also safe, only slower.
            batch_size: thread ids read per page.
            encrypt_plaintext: also seal rows stored in clear (a database that
                was written before ``encryption=`` was turned on).

        Raises:
            ConfigurationError: the saver has no ``encryption=``.
            DecryptionError: a row does not open under any key of the ring.
        """
        return self._run_steps(
            reencrypt_steps(
                self._core,
                after=after,
                batch_size=batch_size,
                encrypt_plaintext=encrypt_plaintext,
                locked=self._thread_locked,
            )
        )

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Keep only the latest checkpoint per namespace (``"keep_latest"``) or none (``"delete"``).

        ``keep_latest`` keeps whatever the kept checkpoint needs to be read back,
        including the ancestors a ``DeltaChannel`` value is replayed from.
        ``delete`` removes the data but leaves no tombstone (unlike ``delete_thread``).
        """
        check_prune_strategy(strategy)
        for thread_id in thread_ids:
            self._write(
                self._thread_locked(thread_id, partial(self._core.prune_txn, thread_id, strategy))
            )
            self._core.cache.discard_thread(str(thread_id))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Writes and seed per channel along the parent chain (one walk for all channels)."""
        if not channels:
            return {}
        channels = list(channels)
        self._check_owner(self._core.owner_check(config), claim=False)
        loaded = self._read(lambda: self._core.delta_history_txn(config, channels))
        return self._core.build_delta_history(channels, loaded)


class AsyncShell(_DialectHooks, LoopSyncTwins, BaseCheckpointSaver[str]):
    """The async savers' shared methods; the sync twins submit them to the saver's loop."""

    _setup_lock: asyncio.Lock

    # ---------------------------------------------------------------- dialect hooks

    async def asetup(self) -> None:
        raise NotImplementedError

    async def _read(self, factory: Callable[[], Txn[T]]) -> T:
        raise NotImplementedError

    async def _write(self, factory: Callable[[], Txn[T]]) -> T:
        raise NotImplementedError

    async def _write_once(self, factory: Callable[[], Txn[T]]) -> T:
        """A write that must not run twice (``acopy_thread``)."""
        return await self._write(factory)

    async def _before_migrations(self) -> None:
        """Statements that must run outside a transaction before the migrations."""

    async def _migrate(self, step: Callable[[], Txn[Any]]) -> None:
        """Run one schema step in its own write transaction."""
        raise NotImplementedError

    # ---------------------------------------------------------------- shared

    async def _ensure_setup(self) -> None:
        if not self.is_setup:
            await self.asetup()

    async def _set_up_once(self) -> None:
        """``asetup``: once per saver, under its setup lock."""
        async with self._setup_lock:
            if self.is_setup:
                return
            await self._before_migrations()
            try:
                for step in migration_steps(self._core, self._MIGRATIONS):
                    await self._migrate(step)
            except CheckpointStorageError as exc:
                raise MigrationError(f"schema migration failed: {exc}") from exc
            self.is_setup = True

    async def _run_steps(self, steps: Steps[T]) -> T:
        """Run each transaction ``steps`` yields, sending back its result."""
        result: Any = None
        while True:
            try:
                write, factory = steps.send(result)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            result = await self._write(factory) if write else await self._read(factory)

    async def setup(self) -> None:
        """Alias of :meth:`asetup` (the official async saver's name)."""
        await self.asetup()

    async def _list_page(
        self, query: ListQuery, after: tuple[str, str, str] | None, size: int
    ) -> Any:
        if after is None:
            await self._check_owner(query.owner, claim=False)
        return await self._read(lambda: self._core.list_page_txn(query, after, size))

    async def _put_restarting(
        self, prepared: PreparedPut, store: Callable[[], Awaitable[PutOutcome]]
    ) -> PutOutcome:
        """As ``SyncShell._put_restarting``."""
        try:
            return await store()
        except ThreadDeletedError:
            if not self._core.restarts_thread(prepared):
                raise
        await self._write(partial(self._core.restart_thread_txn, prepared))
        return await self._write(partial(self._core.put_txn, prepared))

    async def _check_owner(self, need: tuple[str, str] | None, *, claim: bool) -> None:
        """As ``SyncShell._check_owner``."""
        if need is None:
            return
        thread_id, user_id = need
        txn = partial(self._core.owner_txn, thread_id, user_id, claim=claim)
        if await self._write(txn) if claim else await self._read(txn):
            self._core.owners.confirm(thread_id, user_id)

    async def athreads_of_user(self, user_id: str) -> list[str]:
        """As ``SyncShell.threads_of_user``."""
        return await self._read(partial(self._core.owned_threads_txn, check_owner_id(user_id)))

    async def _keep_last(self, thread_id: str) -> None:
        """Trim the thread to ``keep_last`` after a ``put`` that made retention due."""
        keep = self._core.retention.keep_last  # type: ignore[union-attr]
        assert keep is not None
        await self._write(
            self._thread_locked(thread_id, lambda: self._core.keep_last_txn(thread_id, keep))
        )

    async def arewrite_threads(self, thread_ids: Sequence[str], rewrite: ValueRewrite) -> int:
        """Async :meth:`SqliteSaver.rewrite_threads`."""
        done = 0
        recent = self._core.recent_rewrites
        for thread_id in thread_ids:
            recent.add(str(thread_id), rewrite)  # see SyncShell.rewrite_threads
            try:
                done += await self._write(
                    self._thread_locked(
                        thread_id, partial(self._core.rewrite_values_txn, thread_id, rewrite)
                    )
                )
            except BaseException:
                recent.discard(str(thread_id), rewrite)
                raise
            self._core.cache.discard_thread(str(thread_id))
        if done:
            await self._after_erase()
        return done

    async def aerase_pending(self) -> int:
        """Async :meth:`SqliteSaver.erase_pending` (0 on SQLite: nothing is deferred)."""
        return 0

    async def _after_erase(self) -> None:
        """After a rewrite that erased rows (SQLite: truncate the WAL)."""

    async def aundelete_thread(self, thread_id: str) -> None:
        await self._write(lambda: self._core.undelete_thread_txn(thread_id))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._write(lambda: self._core.delete_for_runs_txn(run_ids))
        self._core.cache.clear()

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._write_once(
            self._thread_locked(
                source_thread_id,
                lambda: self._core.copy_thread_txn(source_thread_id, target_thread_id),
            )
        )

    async def areencrypt(
        self,
        *,
        after: str | None = None,
        batch_size: int = 100,
        encrypt_plaintext: bool = False,
    ) -> ReencryptReport:
        """Async :meth:`SqliteSaver.reencrypt`: rewrite rows under the current key."""
        return await self._run_steps(
            reencrypt_steps(
                self._core,
                after=after,
                batch_size=batch_size,
                encrypt_plaintext=encrypt_plaintext,
                locked=self._thread_locked,
            )
        )

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        check_prune_strategy(strategy)
        for thread_id in thread_ids:
            await self._write(
                self._thread_locked(thread_id, partial(self._core.prune_txn, thread_id, strategy))
            )
            self._core.cache.discard_thread(str(thread_id))

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        if not channels:
            return {}
        channels = list(channels)
        await self._check_owner(self._core.owner_check(config), claim=False)
        loaded = await self._read(lambda: self._core.delta_history_txn(config, channels))
        return self._core.build_delta_history(channels, loaded)

    async def astorage_stats(self, thread_id: str | None = None) -> StorageStats:
        return await self._read(lambda: self._core.stats_txn(thread_id))
