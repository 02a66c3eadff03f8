"""The vector side of the store: which Chroma collection holds a partition, and how to search it.

Layout (measured on this machine with embedded Chroma 1.5, see
``benchmarks/RESULTS-longterm.md``): Chroma's ``where`` filter costs time in
proportion to the rows it matches (a ``user_id`` filter matching 1000 rows:
p50 ~6 ms, p95 ~12 ms; 100k rows over 100 users: tens of ms), while an
unfiltered query on a collection answers in ~1.5 ms whatever its size. But a
collection costs ~30 ms and ~300 kB to create, so 10k users with a handful of
memories each cannot each get one. Hence two tiers:

* **shard** (default for a new partition): ``hash(partition) % shards`` picks
  one of ``shards`` shared collections. Search fetches the partition's own
  vectors *by id* (ids come from the catalog's ``partition = ?`` query, never
  from Chroma) and ranks them exactly in numpy: no ``where`` filter, no other
  user's vector ever read.
* **dedicated**: once a partition holds more than ``dedicated_threshold``
  vectors it is moved to its own collection and searched with an unfiltered
  HNSW query; the collection *is* the partition.

Collection names are derived from a hash of the partition, so user ids never
appear in Chroma; Chroma receives vectors and opaque ids only.
"""

from __future__ import annotations

import hashlib
import logging
import re
import shutil
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from langgraph_memory.errors import VectorStoreUnavailableError

logger = logging.getLogger(__name__)

_HNSW_CONFIGURATION = {"hnsw": {"space": "cosine"}}
# Shards are only ever read by id (exact ranking in numpy), never through HNSW,
# so their graph can be as cheap to build as Chroma allows: bulk loads into
# shards run several times faster than with the default ef_construction=100, M=16.
_SHARD_HNSW_CONFIGURATION = {"hnsw": {"space": "cosine", "ef_construction": 8, "max_neighbors": 4}}
_COPY_CHUNK = 1000


def is_connection_failure(exc: BaseException) -> bool:
    """Whether ``exc`` means "the Chroma server did not answer" (not a bad request)."""
    try:
        import httpx

        if isinstance(exc, httpx.TransportError):
            return True
    except ImportError:  # pragma: no cover - chromadb depends on httpx
        pass
    text = str(exc).lower()
    return isinstance(exc, ConnectionError) or "could not connect" in text


def chroma_unavailable(url: str, exc: BaseException) -> VectorStoreUnavailableError:
    return VectorStoreUnavailableError(
        f"The Chroma server at {url} did not answer ({type(exc).__name__}: {exc}). Start it "
        f"(`chroma run --host <host> --port <port> --path <dir>`) or fix the URL; nothing was "
        "written, so retry once it answers."
    )


def shard_collection_name(prefix: str, partition: str, shards: int) -> str:
    bucket = int.from_bytes(hashlib.blake2b(partition.encode(), digest_size=8).digest(), "big")
    return f"{prefix}-shard-{bucket % shards:04d}"


def dedicated_collection_name(prefix: str, partition: str) -> str:
    return f"{prefix}-part-{hashlib.blake2b(partition.encode(), digest_size=16).hexdigest()}"


def cosine_similarities(query: Sequence[float], matrix: Any) -> list[float]:
    """Cosine of ``query`` with every row of ``matrix`` (zero vectors score 0)."""
    vectors = np.asarray(matrix, dtype=np.float32)
    if vectors.size == 0:
        return []
    q = np.asarray(query, dtype=np.float32)
    q_norm = float(np.linalg.norm(q))
    norms = np.linalg.norm(vectors, axis=1)
    denom = np.where(norms * q_norm == 0, 1.0, norms * q_norm)
    sims = (vectors @ q) / denom
    return [float(s) for s in sims]


class ChromaVectors:
    """Thin I/O wrapper over a Chroma client (``PersistentClient`` or ``HttpClient``).

    It never passes documents or query texts to Chroma, and every collection
    is opened with ``embedding_function=None``, so Chroma's default embedder
    (which downloads a model) is never constructed.
    """

    def __init__(self, client: Any, *, prefix: str = "lgm", url: str | None = None) -> None:
        self.client = client
        self.prefix = prefix
        self.url = url
        self._collections: dict[str, Any] = {}

    @contextmanager
    def _reachable(self) -> Iterator[None]:
        """A Chroma server that stops answering becomes a typed error naming its URL."""
        try:
            yield
        except Exception as exc:
            if self.url is not None and is_connection_failure(exc):
                raise chroma_unavailable(self.url, exc) from exc
            raise

    def collection(self, name: str) -> Any:
        found = self._collections.get(name)
        if found is None:
            is_shard = name.startswith(f"{self.prefix}-shard-")
            with self._reachable():
                found = self.client.get_or_create_collection(
                    name,
                    embedding_function=None,
                    configuration=_SHARD_HNSW_CONFIGURATION if is_shard else _HNSW_CONFIGURATION,
                )
            self._collections[name] = found
        return found

    def _call(self, name: str, method: str, **kwargs: Any) -> Any:
        """``collection.<method>(**kwargs)``, re-opening the collection once if it was
        dropped and re-created meanwhile (an erasure rebuild, maybe by another instance)."""
        for attempt in (0, 1):
            collection = self.collection(name)
            try:
                with self._reachable():
                    return getattr(collection, method)(**kwargs)
            except Exception as exc:
                if attempt or not _is_stale_collection(exc):
                    raise
                self._collections.pop(name, None)
        raise AssertionError("unreachable")  # pragma: no cover

    def upsert(self, name: str, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        if ids:
            self._call(
                name, "upsert", ids=list(ids), embeddings=np.asarray(vectors, dtype=np.float32)
            )

    def delete(self, name: str, ids: Sequence[str]) -> None:
        if ids:
            self._call(name, "delete", ids=list(ids))

    def exists(self, name: str) -> bool:
        """Whether Chroma has a collection of that name (without creating it)."""
        # Not list_collections(): it attaches Chroma's default (downloading) embedder.
        try:
            with self._reachable():
                self.client.get_collection(name, embedding_function=None)
        except VectorStoreUnavailableError:
            raise
        except Exception as exc:
            if _is_stale_collection(exc):
                return False
            raise
        return True

    def rebuild(self, name: str, keep_ids: Sequence[str]) -> int:
        """Re-create collection ``name`` holding only ``keep_ids``' vectors; returns how many.

        Chroma does not erase in place: a deleted id's vector stays in its
        write-ahead log (``chroma.sqlite3``), in the HNSW file (marked deleted)
        and, once the log is purged, in SQLite's free pages. Dropping the
        collection and writing the kept vectors into a fresh one is the only way
        through its API; an embedded directory is then compacted as well
        (:func:`compact_chroma_directory`). A server's directory is the
        server's: run that function there (``langgraph-memory compact-chroma
        --path DIR``).
        """
        kept: dict[str, Any] = {}
        for start in range(0, len(keep_ids), _COPY_CHUNK):
            kept.update(self.vectors_by_id(name, list(keep_ids[start : start + _COPY_CHUNK])))
        self.drop_collection(name)
        directory = _persist_directory(self.client)
        if directory is not None:
            compact_chroma_directory(directory)
        ids = list(kept)
        for start in range(0, len(ids), _COPY_CHUNK):
            chunk = ids[start : start + _COPY_CHUNK]
            self.upsert(name, chunk, [kept[i] for i in chunk])
        return len(ids)

    @property
    def is_local(self) -> bool:
        """Whether the Chroma files are in a local directory this process compacts."""
        return _persist_directory(self.client) is not None

    def drop_collection(self, name: str) -> None:
        self._collections.pop(name, None)
        try:
            with self._reachable():
                self.client.delete_collection(name)
        except Exception as exc:  # already gone is fine; anything else is not
            if "does not exist" not in str(exc).lower() and "not found" not in str(exc).lower():
                raise
        directory = _persist_directory(self.client)
        if directory is not None:
            remove_orphaned_segment_dirs(directory)

    def vectors_by_id(self, name: str, ids: Sequence[str]) -> dict[str, Any]:
        """The stored vectors of these ids (missing ids are simply absent)."""
        if not ids:
            return {}
        got = self._call(name, "get", ids=list(ids), include=["embeddings"])
        embeddings = got.get("embeddings")
        if embeddings is None:
            return {}
        return {
            i: np.asarray(v, dtype=np.float32) for i, v in zip(got["ids"], embeddings, strict=True)
        }

    def exact_search(
        self, name: str, ids: Sequence[str], query: Sequence[float]
    ) -> dict[str, float]:
        """Cosine of ``query`` with exactly these ids' vectors (shard tier)."""
        if not ids:
            return {}
        got = self._call(name, "get", ids=list(ids), include=["embeddings"])
        embeddings = got.get("embeddings")
        if embeddings is None or len(got["ids"]) == 0:
            return {}
        sims = cosine_similarities(query, embeddings)
        return dict(zip(got["ids"], sims, strict=True))

    def ann_search(self, name: str, query: Sequence[float], n_results: int) -> dict[str, float]:
        """Top ``n_results`` by cosine in a dedicated collection (no filter: it is the partition)."""
        if n_results <= 0:
            return {}
        result = self._call(
            name,
            "query",
            query_embeddings=[np.asarray(query, dtype=np.float32)],
            n_results=n_results,
            include=["distances"],
        )
        ids = result["ids"][0]
        distances = (result.get("distances") or [[]])[0]
        # Chroma's cosine space returns 1 - cosine.
        return {i: 1.0 - float(d) for i, d in zip(ids, distances, strict=True)}

    def copy_vectors(self, source: str, target: str, ids: Sequence[str]) -> list[str]:
        """Copy vectors between collections in chunks; returns the ids copied."""
        copied: list[str] = []
        for start in range(0, len(ids), _COPY_CHUNK):
            chunk = list(ids[start : start + _COPY_CHUNK])
            found = self.vectors_by_id(source, chunk)
            if found:
                self.upsert(target, list(found), list(found.values()))
                copied += list(found)
        return copied


class PartitionVectorCache:
    """In-process copy of small partitions' vectors, for exact ranking without a Chroma round trip.

    An embedded Chroma query costs ~1.5 ms at best and 5-15 ms at p95 on a busy
    2-core machine, while ranking 1000 cached 384-dim vectors in numpy costs
    ~0.1 ms. Entries are keyed by the partition's ``version`` from the catalog
    (bumped in the same transaction as every vector write, by any process), so
    a stale entry is never used: a version mismatch reloads from Chroma.
    Least recently used partitions are evicted past ``max_bytes``.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, tuple[int, list[str], np.ndarray]] = OrderedDict()
        # id -> row of each cached matrix, built on first use and dropped with it:
        # rebuilding it per query cost ~3 ms at 10k vectors.
        self._positions: dict[str, dict[str, int]] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, partition: str, version: int) -> tuple[list[str], np.ndarray] | None:
        with self._lock:
            entry = self._entries.get(partition)
            if entry is None or entry[0] != version:
                return None
            self._entries.move_to_end(partition)
            return entry[1], entry[2]

    def put(self, partition: str, version: int, ids: list[str], matrix: np.ndarray) -> None:
        size = int(matrix.nbytes)
        if size > self.max_bytes:
            return
        with self._lock:
            self._drop_locked(partition)
            self._entries[partition] = (version, ids, matrix)
            self._bytes += size
            while self._bytes > self.max_bytes and self._entries:
                oldest = next(iter(self._entries))
                self._drop_locked(oldest)

    def apply_write(
        self,
        partition: str,
        versions: tuple[int, int],
        written: Mapping[str, Sequence[float]],
        removed: Sequence[str],
        dims: int,
    ) -> None:
        """Carry a cached partition across this process's own committed write.

        ``versions`` is the partition's version before and after the write: an
        entry at the old version gets the written vectors and loses the removed
        ones, under the new version. Without this, every memory written reloaded
        the partition from Chroma on the next recall (~0.4 s at 10k vectors).
        An entry at any other version (another process wrote meanwhile) is left
        as it is: its version no longer matches, so it reloads.
        """
        before, after = versions
        with self._lock:
            entry = self._entries.get(partition)
            if entry is None or entry[0] != before:
                return
            _, ids, matrix = entry
        gone = {*written, *removed}
        keep = [i for i, item_id in enumerate(ids) if item_id not in gone]
        new_ids = [ids[i] for i in keep] + list(written)
        parts = [matrix[keep]] if len(keep) < len(ids) else [matrix]
        if written:
            parts.append(normalised_matrix(list(written.values()), dims))
        new_matrix = np.concatenate(parts) if len(parts) > 1 else parts[0]
        positions = {item_id: i for i, item_id in enumerate(new_ids)}
        with self._lock:
            current = self._entries.get(partition)
            if current is None or current[1] is not ids:
                return  # replaced meanwhile (a reload): that one stands
            self._drop_locked(partition)
        self.put(partition, after, new_ids, new_matrix)
        with self._lock:
            entry = self._entries.get(partition)
            if entry is not None and entry[1] is new_ids:
                self._positions[partition] = positions

    def positions(self, partition: str, ids: list[str]) -> dict[str, int]:
        """``{item_id: row}`` for the cached ``ids`` of a partition (as returned by :meth:`get`)."""
        with self._lock:
            known = self._positions.get(partition)
            entry = self._entries.get(partition)
            if known is not None and entry is not None and entry[1] is ids:
                return known
        built = {item_id: i for i, item_id in enumerate(ids)}
        with self._lock:
            entry = self._entries.get(partition)
            if entry is not None and entry[1] is ids:
                self._positions[partition] = built
        return built

    def drop(self, partition: str) -> None:
        with self._lock:
            self._drop_locked(partition)

    def _drop_locked(self, partition: str) -> None:
        self._positions.pop(partition, None)
        entry = self._entries.pop(partition, None)
        if entry is not None:
            self._bytes -= int(entry[2].nbytes)


def cosine_scores(matrix: np.ndarray, query: Sequence[float]) -> np.ndarray:
    """Cosine of ``query`` with every row of a row-normalised ``matrix`` (see
    :func:`normalised_matrix`), on the calling thread.

    ``einsum`` (no BLAS): OpenBLAS spreads one 10k x 384 product over its thread
    pool, p50 0.3 ms but p95 4-20 ms on a busy 2-core box (its threads wait for a
    core); its single-threaded kernel for this layout needs ~1.3 ms, einsum's
    own loop ~0.6 ms, and it never leaves the calling thread.
    """
    q = np.asarray(query, dtype=np.float32)
    norm = float(np.linalg.norm(q))
    if norm:
        q = q / norm
    out: np.ndarray = np.einsum("ij,j->i", matrix, q)
    return out


def normalised_matrix(vectors: Sequence[Sequence[float]], dims: int) -> np.ndarray:
    """Row-normalised float32 matrix (zero rows stay zero), so a dot product is the cosine."""
    matrix = np.asarray(vectors, dtype=np.float32).reshape(-1, dims)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def _persist_directory(client: Any) -> Path | None:
    """The embedded client's directory; None for a server (its files are not ours)."""
    try:
        settings = client.get_settings()
    except Exception:
        return None
    if not getattr(settings, "is_persistent", False) or not settings.persist_directory:
        return None
    return Path(settings.persist_directory)


# Embedded Chroma keeps each vector segment (the HNSW files) in a directory
# named by the segment's UUID next to chroma.sqlite3.
_SEGMENT_DIR_NAME = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def remove_orphaned_segment_dirs(directory: Path) -> list[str]:
    """Delete segment directories no Chroma segment refers to any more; their names.

    Embedded Chroma (1.5) leaves a dropped collection's HNSW directory on disk:
    ``forget_user`` would leave a forgotten user's vectors behind. Directories
    are listed *before* the live segments are read, so a collection created
    meanwhile (its segment row exists before its directory) is never touched.
    When Chroma's catalog cannot be read as expected nothing is deleted.
    """
    if not directory.is_dir():
        return []
    candidates = [p for p in directory.iterdir() if p.is_dir() and _SEGMENT_DIR_NAME.match(p.name)]
    if not candidates:
        return []
    catalog = directory / "chroma.sqlite3"
    try:
        conn = sqlite3.connect(f"{catalog.as_uri()}?mode=ro", uri=True, timeout=5.0)
        try:
            live = {str(row[0]) for row in conn.execute("SELECT id FROM segments")}
        finally:
            conn.close()
    except sqlite3.Error as exc:
        logger.warning(
            "left Chroma segment directories in %s alone: its catalog could not be read (%s)",
            directory,
            exc,
        )
        return []
    removed = []
    for path in candidates:
        if path.name not in live:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path.name)
    return removed


def _is_stale_collection(exc: BaseException) -> bool:
    """A cached collection handle whose collection was dropped (and maybe re-created)."""
    return type(exc).__name__ == "NotFoundError" or "does not exist" in str(exc).lower()


def compact_chroma_directory(directory: str | Path) -> dict[str, Any]:
    """Push erased vectors out of a Chroma persistent directory; what was done.

    Removes the segment directories of dropped collections (Chroma leaves them)
    and ``VACUUM``s ``chroma.sqlite3``: Chroma's SQLite does not zero freed
    pages, so a dropped collection's log rows (the raw vectors) and ids stay
    in its free pages until then. Safe while Chroma runs (SQLite locks the
    file; a busy database is retried for up to 30 s). For an embedded store
    :meth:`ChromaVectors.rebuild` calls it; for a ``chroma run`` server run it
    on the server's ``--path`` after ``forget_user``.

    Example:
        >>> import tempfile
        >>> compact_chroma_directory(tempfile.mkdtemp())["vacuumed"]
        False
    """
    root = Path(directory)
    removed = remove_orphaned_segment_dirs(root)
    catalog = root / "chroma.sqlite3"
    vacuumed = False
    if catalog.is_file():
        conn = sqlite3.connect(catalog, timeout=30.0, isolation_level=None)
        try:
            conn.execute("VACUUM")
            vacuumed = True
        finally:
            conn.close()
    return {"segment_dirs_removed": len(removed), "vacuumed": vacuumed}
