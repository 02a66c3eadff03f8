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
"""

from __future__ import annotations

from collections.abc import Iterable

from langgraph_memory.longterm.vectors import shard_collection_name
from langgraph_memory.longterm.writes import Deleted, Writes

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
