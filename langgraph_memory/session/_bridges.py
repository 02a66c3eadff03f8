"""The sync/async bridges every saver pair shares, one mixin per direction.

* :class:`ThreadedAsyncTwins`: the ``a*`` methods of a *sync* saver
  (``SqliteSaver``, ``PostgresSaver``) run its sync path in a worker thread, so
  one object serves ``graph.invoke`` and ``graph.ainvoke``.
* :class:`LoopSyncTwins`: the sync methods of an *async* saver
  (``AsyncSqliteSaver``, ``AsyncPostgresSaver``) submit the ``a*`` coroutine to
  the saver's event loop from another thread (LangGraph's sync API, called
  from worker threads, expects this of an async saver).

Each saver lists the mixin before ``BaseCheckpointSaver`` so these methods win
over the base class's ``NotImplementedError`` ones. :func:`iter_pages` and
:func:`aiter_pages` are the one keyset-paging loop of every ``list``/``alist``.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterator,
    Mapping,
    Sequence,
)
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)

from langgraph_memory.encryption import ReencryptReport
from langgraph_memory.session._core import ListPager, ListQuery, SaverCore, ValueRewrite
from langgraph_memory.session._retention import StorageStats, SweepReport

T = TypeVar("T")

# (query, after, size) -> (raw checkpoints, value store) of one page.
PageFetcher = Callable[[ListQuery, "tuple[str, str, str] | None", int], Any]


def iter_pages(core: SaverCore, query: ListQuery, fetch: PageFetcher) -> Iterator[CheckpointTuple]:
    """``list()``: one page per ``fetch`` call, so nothing is held while yielding."""
    pager = ListPager(query)
    while (size := pager.next_size()) is not None:
        raws, store = fetch(query, pager.after, size)
        pager.advance(raws, size)
        for raw in raws:
            yield core.build_list_tuple(raw, store)


async def aiter_pages(
    core: SaverCore, query: ListQuery, fetch: Callable[..., Awaitable[Any]]
) -> AsyncIterator[CheckpointTuple]:
    """``alist()``: :func:`iter_pages` with an awaited ``fetch``."""
    pager = ListPager(query)
    while (size := pager.next_size()) is not None:
        raws, store = await fetch(query, pager.after, size)
        pager.advance(raws, size)
        for raw in raws:
            yield core.build_list_tuple(raw, store)


if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    _SaverBase = BaseCheckpointSaver[str]
else:
    _SaverBase = object


class ThreadedAsyncTwins(_SaverBase):
    """``a*`` methods for a sync saver: each runs the sync method in a worker thread."""

    if TYPE_CHECKING:
        _core: SaverCore

        def setup(self) -> None: ...
        def undelete_thread(self, thread_id: str) -> None: ...
        def sweep(self, dry_run: bool = False) -> SweepReport: ...
        def storage_stats(self, thread_id: str | None = None) -> StorageStats: ...
        def vacuum(self, *, full: bool = False) -> int: ...
        def threads_of_user(self, user_id: str) -> list[str]: ...
        def rewrite_threads(self, thread_ids: Sequence[str], rewrite: ValueRewrite) -> int: ...
        def erase_pending(self) -> int: ...
        def reencrypt(
            self,
            *,
            after: str | None = None,
            batch_size: int = 100,
            encrypt_plaintext: bool = False,
        ) -> ReencryptReport: ...
        def _list_page(
            self, query: ListQuery, after: tuple[str, str, str] | None, size: int
        ) -> Any: ...

    async def asetup(self) -> None:
        await asyncio.to_thread(self.setup)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        query = self._core.list_query(config, filter=filter, before=before, limit=limit)
        fetch = lambda *page: asyncio.to_thread(self._list_page, *page)  # noqa: E731
        async for item in aiter_pages(self._core, query, fetch):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def aundelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.undelete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return await asyncio.to_thread(
            lambda: self.get_delta_channel_history(config=config, channels=channels)
        )

    async def asweep(self, dry_run: bool = False) -> SweepReport:
        return await asyncio.to_thread(self.sweep, dry_run)

    async def astorage_stats(self, thread_id: str | None = None) -> StorageStats:
        return await asyncio.to_thread(self.storage_stats, thread_id)

    async def avacuum(self, *, full: bool = False) -> int:
        return await asyncio.to_thread(lambda: self.vacuum(full=full))

    async def athreads_of_user(self, user_id: str) -> list[str]:
        return await asyncio.to_thread(self.threads_of_user, user_id)

    async def arewrite_threads(self, thread_ids: Sequence[str], rewrite: ValueRewrite) -> int:
        return await asyncio.to_thread(self.rewrite_threads, thread_ids, rewrite)

    async def aerase_pending(self) -> int:
        return await asyncio.to_thread(self.erase_pending)

    async def areencrypt(
        self, *, after: str | None = None, batch_size: int = 100, encrypt_plaintext: bool = False
    ) -> ReencryptReport:
        return await asyncio.to_thread(
            lambda: self.reencrypt(
                after=after, batch_size=batch_size, encrypt_plaintext=encrypt_plaintext
            )
        )


class LoopSyncTwins(_SaverBase):
    """Sync methods for an async saver, allowed only from threads other than its loop.

    Subclasses set ``_SYNC_ALTERNATIVE``, the sync saver to suggest when a sync
    method is called on the loop itself (where waiting would deadlock).
    """

    _SYNC_ALTERNATIVE = "the sync saver"

    if TYPE_CHECKING:
        _core: SaverCore
        loop: asyncio.AbstractEventLoop

        async def aundelete_thread(self, thread_id: str) -> None: ...
        async def asweep(self, dry_run: bool = False) -> SweepReport: ...
        async def astorage_stats(self, thread_id: str | None = None) -> StorageStats: ...
        async def avacuum(self, *, full: bool = False) -> int: ...
        async def athreads_of_user(self, user_id: str) -> list[str]: ...
        async def arewrite_threads(
            self, thread_ids: Sequence[str], rewrite: ValueRewrite
        ) -> int: ...
        async def aerase_pending(self) -> int: ...
        async def areencrypt(
            self,
            *,
            after: str | None = None,
            batch_size: int = 100,
            encrypt_plaintext: bool = False,
        ) -> ReencryptReport: ...
        async def _list_page(
            self, query: ListQuery, after: tuple[str, str, str] | None, size: int
        ) -> Any: ...

    def _sync(self, coro: Coroutine[Any, Any, T]) -> T:
        try:
            if asyncio.get_running_loop() is self.loop:
                coro.close()
                raise asyncio.InvalidStateError(
                    f"Synchronous calls to {type(self).__name__} are only allowed from a "
                    "different thread than its event loop. From the loop, use the a* methods "
                    f"(graph.ainvoke / aget_state), or use {self._SYNC_ALTERNATIVE}, which "
                    "serves both."
                )
        except RuntimeError:
            pass
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._sync(self.aget_tuple(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        query = self._core.list_query(config, filter=filter, before=before, limit=limit)
        return iter_pages(self._core, query, lambda *page: self._sync(self._list_page(*page)))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self._sync(self.aput(config, checkpoint, metadata, new_versions))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self._sync(self.aput_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        self._sync(self.adelete_thread(thread_id))

    def undelete_thread(self, thread_id: str) -> None:
        self._sync(self.aundelete_thread(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._sync(self.adelete_for_runs(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._sync(self.acopy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._sync(self.aprune(thread_ids, strategy=strategy))

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return self._sync(self.aget_delta_channel_history(config=config, channels=channels))

    def sweep(self, dry_run: bool = False) -> SweepReport:
        return self._sync(self.asweep(dry_run))

    def storage_stats(self, thread_id: str | None = None) -> StorageStats:
        return self._sync(self.astorage_stats(thread_id))

    def vacuum(self, *, full: bool = False) -> int:
        return self._sync(self.avacuum(full=full))

    def threads_of_user(self, user_id: str) -> builtins.list[str]:
        return self._sync(self.athreads_of_user(user_id))

    def rewrite_threads(self, thread_ids: Sequence[str], rewrite: ValueRewrite) -> int:
        return self._sync(self.arewrite_threads(thread_ids, rewrite))

    def erase_pending(self) -> int:
        return self._sync(self.aerase_pending())

    def reencrypt(
        self, *, after: str | None = None, batch_size: int = 100, encrypt_plaintext: bool = False
    ) -> ReencryptReport:
        """Sync :meth:`areencrypt` (from a thread other than the saver's loop)."""
        return self._sync(
            self.areencrypt(after=after, batch_size=batch_size, encrypt_plaintext=encrypt_plaintext)
        )
