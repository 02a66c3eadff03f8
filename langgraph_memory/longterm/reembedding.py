"""The store's embedding model: recorded on first open, checked on every open, re-embedded on request.

The pure parts (probe, fingerprint, compare, messages) are in
``embedding_identity.py``; this part of
:class:`~langgraph_memory.longterm.ChromaMemoryStore` keeps them in the
catalog's metadata table:

* ``embedding_identity``: the :class:`EmbeddingIdentity` of the model that
  made the vectors, written the first time the store is opened with a model
  (a store made before identities were recorded adopts the first model it is
  opened with).
* ``reembed_progress``: a :class:`ReembedProgress` while :meth:`reembed` runs.

Opening a store with another model, even one of the same dimension, raises
:class:`~langgraph_memory.errors.EmbeddingModelMismatchError`. While a re-embed
is unfinished the store opens with either model (to resume it), and the
vectors are a mix of both until it completes.

:meth:`Reembedding.reembed` rewrites every vector in catalog rowid order, in
batches of ``batch_size``: each batch's vectors and the new progress commit in
one catalog transaction, so a crash loses at most one batch and the next call
with the same model resumes after the last committed one. A model of another
dimension cannot share the old Chroma collections (a collection's dimension is
fixed), so those are dropped first and rebuilt as the batches land (searches
meanwhile fall back to keyword matches for rows not yet rewritten). Run it while
no other process writes to the store: their writes would use the old model.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Any

from langgraph_memory._drive import Blocking, Call, Steps, arun, run
from langgraph_memory.errors import ConfigurationError, EmbeddingModelMismatchError
from langgraph_memory.longterm.embedding_identity import (
    PROBE_TEXTS,
    EmbeddingIdentity,
    ReembedProgress,
    compare_identities,
    embedding_name,
    identity_from_vectors,
    mismatch_error,
)
from langgraph_memory.longterm.rows import texts_to_index
from langgraph_memory.longterm.writes import Writes

__all__ = ["IDENTITY_META", "PROGRESS_META", "Reembedding"]

IDENTITY_META = "embedding_identity"
PROGRESS_META = "reembed_progress"
DEFAULT_REEMBED_BATCH = 64


class Reembedding(Writes):
    """Embedding identity checks and :meth:`reembed`."""

    def _probe_steps(self, embeddings: Any) -> Steps[EmbeddingIdentity]:
        vectors = yield Call(embeddings, "embed_documents", (list(PROBE_TEXTS),))
        return identity_from_vectors(embedding_name(embeddings), vectors)

    def _check_embedding_identity(self, dims: int) -> None:
        """Record the opened model's identity, or refuse it if the store's vectors are another's."""
        if self.embeddings is None:
            return  # keyword-only: no vectors are read or written
        current = run(self._probe_steps(self.embeddings))
        sql = self.catalog.sql
        # Read and record in one write transaction: two processes opening a new
        # store with different models cannot both record theirs.
        with self.catalog.transaction(changes_terms=False) as conn:
            row = conn.execute(sql.SELECT_META, (IDENTITY_META,)).fetchone()
            if row is None:
                # New store, or one made before identities were recorded: only its
                # dimension is known, and the first model to match it is adopted.
                stored = conn.execute(sql.SELECT_META, ("dims",)).fetchone()
                if stored is not None and int(stored[0]) != dims:
                    raise EmbeddingModelMismatchError(
                        f"Embedding dims={dims} ({current.name}) but {self.catalog.path!r} was "
                        f"built with dims={stored[0]}; open it with the model it was built "
                        "with, or use a new store directory.",
                        current=current,
                    )
                conn.execute(sql.UPSERT_META, ("dims", str(dims)))
                conn.execute(sql.UPSERT_META, (IDENTITY_META, current.to_json()))
                return
        raw = str(row[0])
        recorded = EmbeddingIdentity.from_json(raw)
        verdict = compare_identities(recorded, current)
        if verdict.same_model:
            return
        progress = self._reembed_progress()
        if progress is not None and compare_identities(progress.target, current).same_model:
            return  # the target of an unfinished re-embed: opened to resume it
        raise mismatch_error(recorded, current, self.catalog.path, agreement=verdict.agreement)

    def _reembed_progress(self) -> ReembedProgress | None:
        raw = self.catalog.meta(PROGRESS_META)
        return None if raw is None else ReembedProgress.from_json(raw)

    @property
    def embedding_identity(self) -> EmbeddingIdentity | None:
        """The identity of the model the store's vectors were made with (``None``: none yet).

        Example:
            >>> import tempfile
            >>> from langgraph_memory.embeddings import HashingEmbeddings
            >>> from langgraph_memory.longterm import ChromaMemoryStore
            >>> store = ChromaMemoryStore.embedded(tempfile.mkdtemp(), embeddings=HashingEmbeddings())
            >>> store.embedding_identity.name
            "HashingEmbeddings(dimensions=384, seed='langgraph-memory/hashing-v1')"
            >>> store.close()
        """
        raw = self.catalog.meta(IDENTITY_META)
        return None if raw is None else EmbeddingIdentity.from_json(raw)

    def _reembed_steps(
        self,
        new_embeddings: Any,
        batch_size: int,
        on_progress: Callable[[ReembedProgress], None] | None,
    ) -> Steps[ReembedProgress]:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigurationError(f"reembed(batch_size={batch_size!r}); use an integer >= 1.")
        sql = self.catalog.sql
        target = yield from self._probe_steps(new_embeddings)
        progress = yield Blocking(self._reembed_progress)
        if progress is None or not compare_identities(progress.target, target).same_model:
            remaining = yield Blocking(
                lambda: self.catalog.query(sql.COUNT_VECTOR_ROWS_AFTER, (0,))
            )
            started = ReembedProgress(target, after_rowid=0, done=0, total=int(remaining[0][0]))
            yield Blocking(lambda: self._start_reembed(started))
            progress = started
        else:
            after = progress.after_rowid
            remaining = yield Blocking(
                lambda: self.catalog.query(sql.COUNT_VECTOR_ROWS_AFTER, (after,))
            )
            progress = ReembedProgress(
                target, after, progress.done, progress.done + int(remaining[0][0])
            )
        if on_progress is not None:
            on_progress(progress)
        while True:
            cursor = progress.after_rowid
            rows = yield Blocking(
                partial(self.catalog.query, sql.SELECT_VECTOR_ROWS_AFTER, (cursor, batch_size))
            )
            if not rows:
                break
            texts = [self._text_to_reembed(json.loads(value)) for _, _, _, value in rows]
            vectors = yield Call(new_embeddings, "embed_documents", (texts,))
            progress = ReembedProgress(
                target,
                after_rowid=int(rows[-1][0]),
                done=progress.done + len(rows),
                total=max(progress.total, progress.done + len(rows)),
            )
            batch = [(str(r[1]), str(r[2]), list(v)) for r, v in zip(rows, vectors, strict=True)]
            yield Blocking(partial(self._write_reembedded, batch, progress))
            if on_progress is not None:
                on_progress(progress)
        done = progress
        yield Blocking(lambda: self._finish_reembed(done, new_embeddings))
        return progress

    def _text_to_reembed(self, value: dict[str, Any]) -> str:
        # The fields a put indexes by default; a put that named its own fields
        # (``index=[...]``) left no record of them, so its whole value is embedded.
        texts = texts_to_index(value, self.index_fields, None) or texts_to_index(value, None, ["$"])
        return "\n".join(texts)

    def _start_reembed(self, progress: ReembedProgress) -> None:
        sql = self.catalog.sql
        recorded = self.embedding_identity
        with self.catalog.transaction(changes_terms=False) as conn:
            if recorded is not None and recorded.dimensions != progress.target.dimensions:
                # A Chroma collection's dimension is fixed: start the new model's afresh.
                partitions = conn.execute(sql.SELECT_PARTITION_COLLECTIONS).fetchall()
                for name in sorted({str(c) for _, c in partitions}):
                    self.vectors.drop_collection(name)
                for partition, _ in partitions:  # bump versions: drop cached old vectors
                    conn.execute(sql.ADD_VECTOR_COUNT, (0, partition)).fetchall()
            conn.execute(sql.UPSERT_META, (PROGRESS_META, progress.to_json()))

    def _write_reembedded(
        self, batch: list[tuple[str, str, list[float]]], progress: ReembedProgress
    ) -> None:
        by_partition: dict[str, tuple[list[str], list[list[float]]]] = {}
        for partition, item_id, vector in batch:
            ids, vecs = by_partition.setdefault(partition, ([], []))
            ids.append(item_id)
            vecs.append(vector)
        with self.catalog.transaction(changes_terms=False) as conn:
            for partition, (ids, vecs) in by_partition.items():
                # Delta 0 still bumps the partition's version (cached vectors reload).
                collection = self._collection_for_write(conn, partition, 0)
                self.vectors.upsert(collection, ids, vecs)
            conn.execute(self.catalog.sql.UPSERT_META, (PROGRESS_META, progress.to_json()))

    def _finish_reembed(self, progress: ReembedProgress, new_embeddings: Any) -> None:
        sql = self.catalog.sql
        with self.catalog.transaction(changes_terms=False) as conn:
            conn.execute(sql.UPSERT_META, (IDENTITY_META, progress.target.to_json()))
            conn.execute(sql.UPSERT_META, ("dims", str(progress.target.dimensions)))
            conn.execute(sql.DELETE_META, (PROGRESS_META,))
        self.embeddings = new_embeddings
        self.index_config = {
            "dims": progress.target.dimensions,
            "embed": new_embeddings,
            "fields": list(self.index_fields),
        }

    def reembed(
        self,
        new_embeddings: Any,
        *,
        batch_size: int = DEFAULT_REEMBED_BATCH,
        on_progress: Callable[[ReembedProgress], None] | None = None,
    ) -> ReembedProgress:
        """Rewrite every vector with ``new_embeddings`` and record it as the store's model.

        Resumable: an interrupted call leaves its progress in the catalog, and
        the next call with the same model continues after the last committed
        batch (a call with yet another model starts over). ``on_progress``
        gets a :class:`ReembedProgress` before the first batch and after each.
        Afterwards this store instance embeds with ``new_embeddings``, and the
        store opens only with that model. Run it while no other process writes.

        Args:
            new_embeddings: The LangChain ``Embeddings`` to move to.
            batch_size: Texts per embedding call and per catalog transaction.
            on_progress: Called with the progress so far.

        Returns:
            The final progress (``done == total``).

        Raises:
            ConfigurationError: ``batch_size`` < 1, or the model's probe vectors are unusable.

        Example:
            >>> import tempfile
            >>> from langgraph_memory.embeddings import HashingEmbeddings
            >>> from langgraph_memory.longterm import ChromaMemoryStore
            >>> from langgraph_memory.types import MemoryRecord
            >>> path = tempfile.mkdtemp()
            >>> store = ChromaMemoryStore.embedded(path, embeddings=HashingEmbeddings(seed="old"))
            >>> _ = store.put_memory(MemoryRecord(text="Allergic to seafood", user_id="alice"))
            >>> store.reembed(HashingEmbeddings(seed="new")).done
            1
            >>> store.close()
            >>> reopened = ChromaMemoryStore.embedded(path, embeddings=HashingEmbeddings(seed="new"))
            >>> [m.record.text for m in reopened.search_memories("alice", "seafood")]
            ['Allergic to seafood']
            >>> reopened.close()
        """
        progress: ReembedProgress = run(
            self._reembed_steps(new_embeddings, batch_size, on_progress)
        )
        return progress

    async def areembed(
        self,
        new_embeddings: Any,
        *,
        batch_size: int = DEFAULT_REEMBED_BATCH,
        on_progress: Callable[[ReembedProgress], None] | None = None,
    ) -> ReembedProgress:
        """Async twin of :meth:`reembed` (``aembed_documents``; catalog and Chroma in a thread)."""
        progress: ReembedProgress = await arun(
            self._reembed_steps(new_embeddings, batch_size, on_progress)
        )
        return progress
