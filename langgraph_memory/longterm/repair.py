"""Catalog and vectors never disagree for long: repair of interrupted vector writes.

Every write that changes vectors first commits *intent* rows naming the
``(partition, item_id)`` pairs it may touch (``"*"``: the whole partition), then
writes the catalog and Chroma inside one catalog transaction that also deletes
its intent rows. So after a crash, a killed process or a Chroma outage, a
leftover intent row marks exactly the partitions whose vectors may be wrong:

* vectors a failed write upserted before its catalog transaction rolled back
  (orphans, or a new text's vector under an old row);
* vectors it deleted (a delete, a TTL sweep, ``forget_user``, a promotion's copy)
  while the catalog still lists them.

:meth:`Repair.repair_vectors` (run when the store opens, and callable any time)
makes each such partition's vectors equal to what the catalog says: missing or
suspect vectors are re-embedded from the catalog's stored text, vectors of rows
the catalog does not have are deleted from every collection the partition could
use, and a dedicated collection the catalog does not name is dropped. It holds
the partition's lock (Postgres), so it never runs beside a live write of
another instance. The acknowledged state is the catalog's: a write whose
catalog transaction committed is never undone.
"""

from __future__ import annotations

from langgraph_memory.longterm.rows import row_to_item, texts_to_index
from langgraph_memory.longterm.vectors import dedicated_collection_name, shard_collection_name
from langgraph_memory.longterm.writes import Writes


class Repair(Writes):
    """Replays what interrupted vector writes left (see the module docstring)."""

    def repair_vectors(self) -> int:
        """Repair every partition an interrupted write left intent rows for; returns how many.

        Raises:
            VectorStoreUnavailableError: the Chroma server still does not answer
                (nothing is lost: the intents stay for the next attempt).
        """
        sql = self.catalog.sql
        partitions = [str(r[0]) for r in self.catalog.query(sql.SELECT_INTENT_PARTITIONS)]
        for partition in partitions:
            self._repair_partition(partition)
        return len(partitions)

    def _repair_partition(self, partition: str) -> None:
        sql = self.catalog.sql
        with self.catalog.transaction() as conn:
            self._settle_intent(conn, None, [partition])  # waits for a live writer
            touched = {
                str(r[0])
                for r in conn.execute(sql.SELECT_PARTITION_INTENTS, (partition,)).fetchall()
            }
            if not touched:
                return  # its writer committed (or another instance repaired it) meanwhile
            layout = self._partition_layout(partition)
            rows = self.catalog.items(sql.SELECT_VECTOR_ROWS_OF_PARTITION, (partition,))
            expected = {row.item_id: row for row in rows}
            shard = shard_collection_name(self.collection_prefix, partition, self.shards)
            dedicated = dedicated_collection_name(self.collection_prefix, partition)
            home = layout[0] if layout is not None else None
            # Vectors outside the partition's home collection are never read: the
            # touched ids (and, after an interrupted promotion, the whole partition)
            # must not linger there.
            for other in {shard, dedicated} - {home}:
                if other == dedicated:
                    self.vectors.drop_collection(dedicated)
                else:
                    self.vectors.delete(other, sorted((touched | set(expected)) - {"*"}))
            if home is not None:
                self.vectors.delete(home, sorted(touched - set(expected) - {"*"}))
                present = set(self.vectors.vectors_by_id(home, sorted(expected)))
                # A touched row's vector may be of text its write never committed.
                redo = [
                    expected[i]
                    for i in sorted(expected)
                    if i not in present or i in touched or "*" in touched
                ]
                if redo and self.embeddings is not None:
                    texts = [
                        "\n".join(texts_to_index(row_to_item(r).value, self.index_fields, None))
                        for r in redo
                    ]
                    vectors = self.embeddings.embed_documents(texts)
                    self.vectors.upsert(home, [r.item_id for r in redo], vectors)
                conn.execute(sql.SET_VECTOR_COUNT, (len(expected), partition))
            conn.execute(sql.DELETE_PARTITION_INTENTS, (partition,))
        self.vector_cache.drop(partition)
