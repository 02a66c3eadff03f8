"""Erasure that leaves nothing: what a delete or ``forget_user`` does after the rows are gone.

Deleting a catalog row is not enough to take its text and vector off the disk:

* **keyword index**: FTS5 keeps a deleted row's tokens in its segment b-tree
  until the segments are merged. ``'optimize'`` rewrites them without it;
  ``secure_delete`` (on for the catalog file) zeroes the freed pages and a
  ``wal_checkpoint(TRUNCATE)`` empties the write-ahead log that still holds the
  old page images. Run after every delete that removed a row
  (:meth:`Erasure._erase_deleted`), not only after ``forget_user``.
* **vectors**: Chroma does not erase in place. A deleted id's vector stays in
  its write-ahead log, in the HNSW file (marked deleted) and in SQLite free
  pages; ``chroma vacuum`` does not remove it. The collection that held it is
  therefore rebuilt: the vectors the catalog still lists there are read, the
  collection is dropped and re-created under the same name with only those
  (:meth:`ChromaVectors.rebuild`), and an embedded directory is compacted. A
  shard shared by many users is rebuilt with the other users' vectors. A
  partition promoted to a dedicated collection leaves its vectors in the
  shard's files, so the shard is rebuilt right after the promotion (once per
  user), and ``forget_user`` rebuilds it again in case the store ran with
  ``erase_deleted_vectors=False`` or is older than this.

A rebuild is crash-safe through the repair intents (``repair.py``): every
partition of the collection is marked ``"*"`` first, so a rebuild a crash cut
short is finished on the next open by re-embedding from the catalog's text (the
other users' vectors come back; calling ``forget_user`` again then also compacts the
files, as tested in ``tests/security/test_longterm_erasure.py``).
Searches that run meanwhile may miss vectors for the rebuild's duration (~0.3 s
for a shard of 1,000 vectors; see ``benchmarks/RESULTS-privacy.md``).

A ``chroma run`` server's files are the server's: the rebuild removes the
vectors from its collections, and ``compact_chroma_directory`` (or ``langgraph-memory
compact-chroma --path DIR``) run on the server's
directory removes the rest (dropped segment directories, free pages).

* **recall blocks in checkpoints**: the recall node saved each turn's block,
  quoting the memories it injected, in that turn's checkpoints. Given the
  checkpointer (``delete_memory(..., checkpointer=saver)``, or
  :func:`erase_recalled` for ids deleted another way), every thread of the user
  (``threads_of_user``, as ``forget_user`` finds them) is rewritten in place by
  :class:`~langgraph_memory.nodes.recall_erasure.RecallScrub`: the memory's line
  becomes ``[memory deleted]`` and its id leaves the block's metadata
  (``saver.rewrite_threads``, one transaction per thread; for an hour the saver
  also rewrites what a run in progress on those threads stores). SQLite savers
  overwrite the old rows at once; Postgres savers mark the tables for
  ``saver.erase_pending()`` (README, "Erasure on Postgres").
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from langgraph_memory._drive import Call, Steps, arun, run
from langgraph_memory.longterm.vectors import shard_collection_name
from langgraph_memory.longterm.writes import Deleted, Writes
from langgraph_memory.nodes.recall_erasure import RecallScrub, check_rewritable

# A rebuild re-reads the collection's partitions under the catalog lock; a new
# partition landing in it between the intent and the lock restarts it, at most
# this many times (then the rebuild proceeds with the intents it has).
_MEMBER_RETRIES = 3


class Erasure(Writes):
    """Scrubs the keyword index and rebuilds vector collections after deletes."""

    erase_deleted_vectors: bool

    def _erase_deleted(self, deleted: Iterable[Deleted]) -> tuple[int, int]:
        """After deletes: scrub the keyword index, rebuild the collections that held
        deleted vectors (or that a promoted partition left). Returns
        ``(collections rebuilt, vectors rewritten)``."""
        rows = 0
        collections: set[str] = set()
        for item in deleted:
            rows += item.rows
            collections |= item.collections
        if rows:
            self.catalog.scrub(vacuum=False)
        if not self.erase_deleted_vectors or not collections:
            return 0, 0
        return len(collections), sum(self._rebuild_collection(c) for c in sorted(collections))

    def erase_pending(self) -> int:
        """Take what single deletes left behind off the catalog's files; 1 if it ran.

        On a SQLite catalog every delete scrubs at once, so this returns 0. On
        Postgres a delete marks the catalog and leaves the row as a dead tuple;
        this runs one ``VACUUM FULL`` of the catalog's tables for all the deletes
        since the last pass (it locks them meanwhile), and nothing when no delete
        marked it. The memory writer's sweep calls it (``MemorySweepPolicy``);
        or call it from a job, or right after a delete that must be gone now.
        """
        return self.catalog.erase_pending()

    async def aerase_pending(self) -> int:
        return await asyncio.to_thread(self.erase_pending)

    def _after_deletes(self, deleted: Deleted) -> None:
        self._erase_deleted([deleted])

    def _erase_partition_vectors(self, partition: str, dedicated: str | None) -> tuple[int, int]:
        """After a partition's rows are gone: rebuild its shard (where it lives, or lived
        before its promotion); its dedicated collection was dropped already."""
        shard = shard_collection_name(self.collection_prefix, partition, self.shards)
        if shard == dedicated or not self.vectors.exists(shard):
            return 0, 0
        return 1, self._rebuild_collection(shard)

    def _rebuild_collection(self, collection: str) -> int:
        """Re-create ``collection`` with only the vectors the catalog lists there."""
        sql = self.catalog.sql
        tokens: list[str] = []
        recorded: set[str] = set()
        for attempt in range(_MEMBER_RETRIES + 1):
            members = {
                str(r[0])
                for r in self.catalog.query(sql.SELECT_PARTITIONS_OF_COLLECTION, (collection,))
            }
            token = self._record_intent([(p, "*") for p in sorted(members - recorded)])
            if token is not None:
                tokens.append(token)
            recorded |= members
            with self.catalog.transaction() as conn:
                self._settle_intent(conn, None, recorded)  # Postgres: the partitions' locks
                now = {
                    str(r[0])
                    for r in conn.execute(
                        sql.SELECT_PARTITIONS_OF_COLLECTION, (collection,)
                    ).fetchall()
                }
                if not now <= recorded and attempt < _MEMBER_RETRIES:
                    continue  # a partition joined meanwhile: mark it too, then rebuild
                keep = [
                    str(r[0])
                    for r in conn.execute(
                        sql.SELECT_VECTOR_IDS_OF_COLLECTION, (collection,)
                    ).fetchall()
                ]
                kept = self.vectors.rebuild(collection, keep)
                for done in tokens:
                    conn.execute(sql.DELETE_VECTOR_INTENTS, (done,))
                return kept
        return 0  # pragma: no cover - the last attempt always rebuilds


# ------------------------------------------------------------------ recall blocks


@dataclass(frozen=True, slots=True)
class RecallErasure:
    """What :func:`erase_recalled` did: the user's threads it read, the rows it rewrote."""

    threads_scanned: int
    rows_rewritten: int


def erase_recalled_steps(
    checkpointer: Any, user_id: str, memory_ids: Iterable[str], texts: Iterable[str] = ()
) -> Steps[RecallErasure]:
    """:func:`erase_recalled` for both drivers (``langgraph_memory._drive``)."""
    check_rewritable(checkpointer)
    scrub = RecallScrub(memory_ids, texts)
    if not scrub.memory_ids and not scrub.lines:
        return RecallErasure(0, 0)
    # Owned threads only (an indexed lookup): every thread a recall ran on is the
    # user's, since the run's first write claims it. forget_user also scans the
    # checkpoints' metadata for threads written before owners were recorded; that
    # scan reads every checkpoint of every user (125 of 177 ms for 10 threads of 5
    # turns, under cProfile), too much for each delete.
    threads: list[str] = yield Call(checkpointer, "threads_of_user", (user_id,))
    rows = yield Call(checkpointer, "rewrite_threads", (sorted(threads), scrub))
    return RecallErasure(len(threads), int(rows))


def erase_recalled(
    checkpointer: Any, user_id: str, memory_ids: Iterable[str], texts: Iterable[str] = ()
) -> RecallErasure:
    """Take deleted memories out of the recall blocks saved in the user's threads.

    ``store.delete_memory(user, id, checkpointer=saver)`` calls this; call it
    yourself for memories deleted another way (a BaseStore ``delete``: pass the
    item's key as its id). With ``texts`` (as stored), each line quoting one
    becomes ``[memory deleted]``; a block that names an id but quotes no text is
    replaced whole (``nodes/recall_erasure.py``).

    Raises:
        ConfigurationError: ``checkpointer`` is not one of this package's savers.

    Example:
        >>> from langgraph_memory.session import SqliteSaver
        >>> with SqliteSaver.from_conn_string(":memory:") as saver:
        ...     erase_recalled(saver, "u1", ["m1"], ["User's pet is a zebra finch"])
        RecallErasure(threads_scanned=0, rows_rewritten=0)
    """
    return run(erase_recalled_steps(checkpointer, user_id, memory_ids, texts))


async def aerase_recalled(
    checkpointer: Any, user_id: str, memory_ids: Iterable[str], texts: Iterable[str] = ()
) -> RecallErasure:
    """Async :func:`erase_recalled` (the saver's ``a*`` methods)."""
    return await arun(erase_recalled_steps(checkpointer, user_id, memory_ids, texts))


class _Threads:
    """A checkpointer's thread listing and vacuum, in the sync/async pairs ``Call`` expects.

    A user's threads: those the user owns (our savers record the owner at the first
    write, whether the id came from ``configurable`` or the Runtime ``context=``), plus
    any other saver's threads whose checkpoint metadata names the user.
    """

    def __init__(self, checkpointer: Any) -> None:
        self.checkpointer = checkpointer

    def thread_ids(self, user_id: str) -> set[str]:
        owned = getattr(self.checkpointer, "threads_of_user", None)
        found = set(owned(user_id)) if callable(owned) else set()
        return found | {
            t.config["configurable"]["thread_id"]
            for t in self.checkpointer.list(None, filter={"user_id": user_id})
        }

    async def athread_ids(self, user_id: str) -> set[str]:
        owned = getattr(self.checkpointer, "athreads_of_user", None)
        found = set(await owned(user_id)) if callable(owned) else set()
        return found | {
            t.config["configurable"]["thread_id"]
            async for t in self.checkpointer.alist(None, filter={"user_id": user_id})
        }

    # SQLite savers zero freed pages (secure_delete), so their incremental vacuum
    # is enough; on Postgres only VACUUM FULL takes deleted rows off the pages.
    def _full(self) -> dict[str, bool]:
        return {"full": True} if getattr(self.checkpointer, "erase_with_full_vacuum", False) else {}

    def vacuum(self) -> None:
        if callable(getattr(self.checkpointer, "vacuum", None)):
            self.checkpointer.vacuum(**self._full())

    async def avacuum(self) -> None:
        vacuum = getattr(self.checkpointer, "avacuum", None)
        if callable(vacuum):
            await vacuum(**self._full())


def _has_async_api(checkpointer: Any) -> bool:
    """Whether ``alist``/``adelete_thread`` are implemented (not BaseCheckpointSaver's stubs)."""
    from langgraph.checkpoint.base import BaseCheckpointSaver

    cls = type(checkpointer)
    return all(
        getattr(cls, name, None) is not getattr(BaseCheckpointSaver, name)
        for name in ("alist", "adelete_thread")
    )
