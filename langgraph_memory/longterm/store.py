"""``ChromaMemoryStore``: a LangGraph ``BaseStore`` with typed, temporal, private, hybrid memory.

What lives where (one design decision drives the rest: *text never reaches Chroma*):

* **SQLite file** (``keyword_index.sqlite3``): the item catalog (values,
  redacted), the FTS5 keyword index and the partition -> collection map.
  Forgetting a user deletes rows here, then FTS5 ``optimize``, ``VACUUM`` and
  a WAL truncation push the text out of the file.
* **Chroma** (``PersistentClient`` dir or an ``HttpClient`` server): the
  vectors, under opaque ids, in hashed collection names (see ``vectors.py``
  for the shard/dedicated layout). Chroma keeps documents in its own FTS
  table and write-ahead queue, which we cannot vacuum over HTTP; giving it
  no documents means there is nothing there to forget but vectors.

The class is assembled from parts, one module each: ``surface.py`` (BaseStore
``batch``/``abatch``), ``retrieval.py`` (planning, hybrid candidates, ranking),
``writes.py`` (catalog + vector writes, partition promotion, supersede),
``memories.py`` (the typed memory API), ``lifecycle.py`` (expiry, archive, TTL,
``forget_user``), ``erasure.py`` (keyword-index scrub and collection rebuilds
after deletes), ``repair.py`` (interrupted vector writes settled on open),
``reembedding.py`` (the recorded embedding model, ``reembed``), over
``catalog.py`` (the catalog interface; SQLite here, Postgres in
``catalog_postgres.py``). This module builds it. Sync and async twins are one
generator of steps (``langgraph_memory._drive``). Scoring, ``WHERE`` building and row mapping are pure
functions in ``scoring.py``, ``where.py`` and ``rows.py``.

Example:
    >>> import tempfile
    >>> from langgraph_memory.embeddings import HashingEmbeddings
    >>> from langgraph_memory.types import MemoryRecord
    >>> store = ChromaMemoryStore.embedded(tempfile.mkdtemp(), embeddings=HashingEmbeddings())
    >>> _ = store.put_memory(MemoryRecord(text="Allergic to seafood", user_id="alice"))
    >>> [m.record.text for m in store.search_memories("alice", "seafood allergy")]
    ['Allergic to seafood']
    >>> store.search_memories("bob", "seafood allergy")
    []
    >>> store.close()
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, IndexConfig, TTLConfig
from langgraph.store.base.embed import ensure_embeddings

from langgraph_memory.clock import Clock
from langgraph_memory.config import PrivacyPolicy, ScoringWeights
from langgraph_memory.encryption import EncryptionKeys, ReencryptReport
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.longterm._heap import scrub_freed_memory
from langgraph_memory.longterm._state import (
    DEFAULT_CACHE_MAX_VECTORS,
    DEFAULT_DEDICATED_THRESHOLD,
    DEFAULT_SHARDS,
    DEFAULT_VECTOR_CACHE_BYTES,
    RecalledMemories,
)
from langgraph_memory.longterm.catalog import Catalog, SqliteCatalog
from langgraph_memory.longterm.lifecycle import Lifecycle
from langgraph_memory.longterm.memories import TypedMemories
from langgraph_memory.longterm.reembedding import Reembedding
from langgraph_memory.longterm.repair import Repair
from langgraph_memory.longterm.rows import DEFAULT_TEXT_FIELDS, RecordCache, reseal_value
from langgraph_memory.longterm.surface import StoreSurface
from langgraph_memory.longterm.vectors import (
    ChromaVectors,
    PartitionVectorCache,
    chroma_unavailable,
)
from langgraph_memory.longterm.where import USER_ROOT, validate_labels
from langgraph_memory.privacy import Redactor

__all__ = ["CHROMA_DIRNAME", "KEYWORD_INDEX_FILENAME", "ChromaMemoryStore", "RecalledMemories"]

KEYWORD_INDEX_FILENAME = "keyword_index.sqlite3"
CHROMA_DIRNAME = "chroma"


class ChromaMemoryStore(StoreSurface, TypedMemories, Lifecycle, Repair, Reembedding, BaseStore):
    """Long-term memory on Chroma + SQLite FTS5, partitioned per user.

    Build it with :meth:`embedded` (a local directory) or :meth:`from_http`
    (a Chroma server). It is a LangGraph ``BaseStore`` (``graph.compile(store=...)``,
    ``get_store()``, ``Runtime.store``) and implements the
    :class:`~langgraph_memory.types.LongTermMemory` protocol the memory nodes use.

    Args:
        client: A ``chromadb`` client (``PersistentClient`` or ``HttpClient``).
        keyword_index_path: The SQLite file for catalog + FTS5 index (the embedded
            catalog; give this or ``catalog``).
        catalog: A shared catalog instead: a ``"postgresql://..."`` DSN (a
            :class:`~langgraph_memory.longterm.catalog_postgres.PostgresCatalog` is
            opened and closed with the store) or a catalog object (then the caller
            closes it).
        embeddings: Any LangChain ``Embeddings`` (or embed function). ``None``
            with no ``index`` disables vectors: search is keyword-only.
        index: LangGraph-style ``IndexConfig`` (``embed``, ``dims``, ``fields``);
            overrides ``embeddings``. ``fields`` default: ``["text", "content"]``.
        ttl: LangGraph ``TTLConfig`` (``default_ttl`` minutes, ``refresh_on_read``).
        privacy_policy: What to do with identifiers found in any stored text.
        weights: Default :class:`ScoringWeights` for ``search_memories``.
        shards: Number of shared shard collections for small partitions.
        dedicated_threshold: Vectors after which a partition gets its own collection.
        user_roots: Namespace roots whose second label is a user id.
        collection_prefix: Prefix of every Chroma collection this store creates.
        vector_cache_bytes: Budget of the in-process vector cache (0 disables it).
        cache_max_vectors: Largest partition ranked from the cache; larger ones
            use their dedicated collection's HNSW index.
        chroma_url: The Chroma server's URL, named in errors (``from_http`` sets it).
        erase_deleted_vectors: After a delete (``delete_memory``, BaseStore ``delete``),
            rebuild the Chroma collection that held the vector, since Chroma keeps a
            deleted vector's bytes in its files (``erasure.py``). Costs ~0.3 ms per
            vector kept in that collection (benchmarks/RESULTS-privacy.md);
            ``False`` leaves that to ``forget_user``. The keyword index is scrubbed
            either way.
        clock: What "now" is for validity, expiry, TTL, recency and access stamps
            (``langgraph_memory.clock``; default the UTC wall clock). A replayed history
            passes a ``ManualClock``.
        encryption: An :class:`~langgraph_memory.encryption.EncryptionKeys`: every
            stored value (a memory's text and fields) is sealed with AES-GCM, bound
            to its user and item id; clear or moved values fail with
            ``DecryptionError``. Outside it: the keyword index's terms, the Chroma
            vectors, and the columns searches use (status, type, timestamps); see
            ``longterm/DESIGN.md``. Value filters (``search(filter=...)``) are then
            refused, since the database cannot read sealed values.
    """

    supports_ttl: bool = True

    def __init__(
        self,
        *,
        client: Any,
        keyword_index_path: str | Path | None = None,
        catalog: Catalog | str | None = None,
        embeddings: Embeddings | Any | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        privacy_policy: PrivacyPolicy | None = None,
        weights: ScoringWeights | None = None,
        shards: int = DEFAULT_SHARDS,
        dedicated_threshold: int = DEFAULT_DEDICATED_THRESHOLD,
        user_roots: Sequence[str] = (USER_ROOT,),
        collection_prefix: str = "lgm",
        vector_cache_bytes: int = DEFAULT_VECTOR_CACHE_BYTES,
        cache_max_vectors: int = DEFAULT_CACHE_MAX_VECTORS,
        clock: Clock | None = None,
        chroma_url: str | None = None,
        encryption: EncryptionKeys | None = None,
        erase_deleted_vectors: bool = True,
    ) -> None:
        self.clock = clock
        self.erase_deleted_vectors = bool(erase_deleted_vectors)
        if encryption is not None and not isinstance(encryption, EncryptionKeys):
            raise ConfigurationError(
                f"encryption={encryption!r}; pass a langgraph_memory.encryption.EncryptionKeys."
            )
        if shards < 1:
            raise ConfigurationError(f"shards={shards!r}; use an integer >= 1.")
        if dedicated_threshold < 1:
            raise ConfigurationError(
                f"dedicated_threshold={dedicated_threshold!r}; use an integer >= 1."
            )
        if weights is not None and not isinstance(weights, ScoringWeights):
            raise ConfigurationError(
                f"weights={weights!r}; pass a langgraph_memory.config.ScoringWeights."
            )
        self.weights = weights or ScoringWeights()
        self.ttl_config = ttl
        self.shards = shards
        self.dedicated_threshold = dedicated_threshold
        self.user_roots = tuple(validate_labels(user_roots))
        self.redactor = Redactor(privacy_policy)
        self.catalog, self._owns_catalog = _open_catalog(keyword_index_path, catalog)
        self.catalog.encryption = encryption
        self.vectors = ChromaVectors(client, prefix=collection_prefix, url=chroma_url)
        self.collection_prefix = collection_prefix
        if vector_cache_bytes < 0 or cache_max_vectors < 0:
            raise ConfigurationError(
                f"vector_cache_bytes={vector_cache_bytes!r}, cache_max_vectors="
                f"{cache_max_vectors!r}; use integers >= 0 (0 disables the cache)."
            )
        self.vector_cache = PartitionVectorCache(vector_cache_bytes)
        self.record_cache = RecordCache()
        self._sweeper: threading.Thread | None = None
        self._sweeper_stop = threading.Event()
        self.cache_max_vectors = cache_max_vectors
        self.embeddings: Embeddings | None = None
        self.index_fields: list[str] = list(DEFAULT_TEXT_FIELDS)
        self.index_config: dict[str, Any] | None = None
        if index is not None:
            if "embed" not in index or "dims" not in index:
                raise ConfigurationError(
                    f"index={index!r} needs 'embed' (Embeddings or function) and 'dims' (int)."
                )
            self.embeddings = ensure_embeddings(index["embed"])
            dims = int(index["dims"])
            self.index_fields = list(index.get("fields") or DEFAULT_TEXT_FIELDS)
        elif embeddings is not None:
            self.embeddings = ensure_embeddings(embeddings)
            probe = getattr(embeddings, "dimensions", None)
            dims = int(probe) if probe else len(self.embeddings.embed_query("dimension probe"))
        if self.embeddings is not None:
            self._check_embedding_identity(dims)
            self.index_config = {
                "dims": dims,
                "embed": self.embeddings,
                "fields": list(self.index_fields),
            }
        # Vector writes a crash or an outage interrupted are settled before use.
        self.repair_vectors()

    # -- construction -----------------------------------------------------------

    @classmethod
    def embedded(
        cls,
        path: str | Path,
        *,
        embeddings: Embeddings | Any | None,
        scrub_heap: bool = True,
        **kwargs: Any,
    ) -> ChromaMemoryStore:
        """A store in a local directory: ``<path>/chroma`` + ``<path>/keyword_index.sqlite3``.

        ``scrub_heap`` (default on) makes glibc overwrite freed memory for the whole
        process, because embedded Chroma persists uninitialised HNSW buffer bytes
        (see ``_heap.py``: without it a forgotten user's text was found in another
        user's index file). Turn it off only if nothing private passes through the process.

        Example:
            >>> import tempfile
            >>> from langgraph_memory.embeddings import HashingEmbeddings
            >>> store = ChromaMemoryStore.embedded(tempfile.mkdtemp(), embeddings=HashingEmbeddings())
            >>> store.put(("memories", "alice"), "k1", {"content": "likes tea"})
            >>> store.get(("memories", "alice"), "k1").value
            {'content': 'likes tea'}
            >>> store.close()
        """
        import chromadb
        from chromadb.config import Settings

        if scrub_heap:
            scrub_freed_memory()
        root = Path(path)
        root.mkdir(parents=True, exist_ok=True)
        client = chromadb.PersistentClient(
            path=str(root / CHROMA_DIRNAME), settings=Settings(anonymized_telemetry=False)
        )
        return cls(
            client=client,
            keyword_index_path=root / KEYWORD_INDEX_FILENAME,
            embeddings=embeddings,
            **kwargs,
        )

    @classmethod
    def from_http(
        cls,
        host: str,
        port: int | None = None,
        *,
        keyword_index_path: str | Path | None = None,
        catalog: Catalog | str | None = None,
        embeddings: Embeddings | Any | None,
        ssl: bool = False,
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> ChromaMemoryStore:
        """A store whose vectors live on a Chroma server.

        ``host`` is a host name (with ``port``) or a URL such as
        ``"http://127.0.0.1:8000"``. The catalog (items, keyword index,
        partitions) is either a local SQLite file (``keyword_index_path``: one
        process or host should own it) or, for several app instances, a shared
        Postgres database: ``catalog="postgresql://..."``.

        Raises:
            VectorStoreUnavailableError: the Chroma server does not answer (the
                message names the URL and how to start one).
        """
        import chromadb
        from chromadb.config import Settings

        host, port, ssl = _parse_chroma_address(host, port, ssl)
        url = f"{'https' if ssl else 'http'}://{host}:{port}"
        try:
            client = chromadb.HttpClient(
                host=host,
                port=port,
                ssl=ssl,
                headers=headers,
                settings=Settings(anonymized_telemetry=False),
            )
        except Exception as exc:
            raise chroma_unavailable(url, exc) from exc
        return cls(
            client=client,
            keyword_index_path=keyword_index_path,
            catalog=catalog,
            embeddings=embeddings,
            chroma_url=url,
            **kwargs,
        )

    def reencrypt(
        self, *, after: int | None = None, batch_size: int = 500, encrypt_plaintext: bool = False
    ) -> ReencryptReport:
        """Rewrite every stored value not sealed under the current key (key rotation).

        One short transaction per batch of rows, so it can run in a thread while
        the app runs; the old key keeps opening values until the pass ends. Each
        rewrite is a compare-and-set: a value a concurrent write changed is left
        to that write.

        Args:
            after: resume after this rowid (``int(report.cursor)`` of an
                interrupted pass); a fresh pass only re-reads finished rows.
            batch_size: rows per transaction.
            encrypt_plaintext: also seal values stored before ``encryption=`` was on.

        Raises:
            ConfigurationError: the store has no ``encryption=``.
            DecryptionError: a value does not open under any key of the ring.
        """
        keys = self.catalog.encryption
        if keys is None:
            raise ConfigurationError(
                "reencrypt() needs a store opened with encryption=EncryptionKeys(...)."
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigurationError(f"batch_size={batch_size!r}; use an integer >= 1.")
        cursor = 0 if after is None else int(after)
        scanned = rewritten = 0
        while True:
            with self.catalog.transaction(changes_terms=False) as conn:
                rows = conn.execute(self.catalog.sql.SELECT_VALUES_AFTER, (cursor, batch_size))
                rows = rows.fetchall()
                for rowid, item_id, partition, stored in rows:
                    sealed = reseal_value(
                        keys, partition, item_id, stored, encrypt_plaintext=encrypt_plaintext
                    )
                    if sealed is not None:
                        conn.execute(self.catalog.sql.RESEAL_VALUE, (sealed, rowid, stored))
                        rewritten += 1
                    cursor = int(rowid)
            scanned += len(rows)
            if len(rows) < batch_size:
                return ReencryptReport(scanned, rewritten, str(cursor) if cursor else None)

    def close(self) -> None:
        """Stop the TTL sweeper and close the SQLite file (Chroma clients need no closing)."""
        self.stop_ttl_sweeper(timeout=5)
        if self._owns_catalog:
            self.catalog.close()

    def __enter__(self) -> ChromaMemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open_catalog(
    keyword_index_path: str | Path | None, catalog: Catalog | str | None
) -> tuple[Catalog, bool]:
    """``(catalog, owned)``: the store closes the catalogs it opened itself."""
    if (keyword_index_path is None) == (catalog is None):
        raise ConfigurationError(
            f"keyword_index_path={keyword_index_path!r}, catalog={catalog!r}; give exactly one "
            "(a local SQLite file, or a shared catalog such as 'postgresql://...')."
        )
    if keyword_index_path is not None:
        return SqliteCatalog(keyword_index_path), True
    if isinstance(catalog, str):
        from langgraph_memory.longterm.catalog_postgres import PostgresCatalog

        return PostgresCatalog(catalog), True
    return catalog, False  # type: ignore[return-value]


def _parse_chroma_address(host: str, port: int | None, ssl: bool) -> tuple[str, int, bool]:
    if "://" in host:
        parsed = urlsplit(host)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ConfigurationError(
                f"host={host!r}; pass a Chroma URL like 'http://127.0.0.1:8000' or a host name."
            )
        ssl = parsed.scheme == "https"
        return parsed.hostname, parsed.port or port or (443 if ssl else 8000), ssl
    if port is None:
        raise ConfigurationError(f"host={host!r} without port; pass port= or a URL.")
    return host, port, ssl
