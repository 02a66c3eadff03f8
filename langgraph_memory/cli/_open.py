"""Opening what a command works on: a checkpointer on a SQLite path or a
Postgres DSN, and a long-term store directory, with errors that say what to fix.

A command that only reads never creates a database: a mistyped SQLite path
fails instead of leaving an empty file behind.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langgraph_memory.config import RetentionPolicy
from langgraph_memory.errors import ConfigurationError, DatabaseConnectionError
from langgraph_memory.migrate import is_postgres_dsn

DB_ENV = "LANGGRAPH_MEMORY_DB"
STORE_ENV = "LANGGRAPH_MEMORY_STORE"


def require_db(location: str | None) -> str:
    """``--db`` or ``$LANGGRAPH_MEMORY_DB``, or a clear error."""
    location = location or os.environ.get(DB_ENV)
    if not location:
        raise ConfigurationError(
            f"no checkpoint database given; pass --db PATH_OR_DSN or set ${DB_ENV} "
            "(a SQLite file such as checkpoints.sqlite, or postgresql://user@host/db)."
        )
    return location


@contextmanager
def open_saver(
    location: str,
    *,
    retention: RetentionPolicy | None = None,
    create: bool = False,
) -> Iterator[Any]:
    """Our saver on ``location``; a missing SQLite file fails unless ``create``."""
    if is_postgres_dsn(location):
        from langgraph_memory.session.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(
            location, pool_size=2, min_pool_size=1, retention=retention
        ) as saver:
            yield saver
        return
    if not create and location != ":memory:" and not Path(location).is_file():
        raise DatabaseConnectionError(
            f"no SQLite database at {location!r}; check the path (the app's "
            "SqliteSaver.from_conn_string argument), or pass a postgresql:// DSN."
        )
    from langgraph_memory.session.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(location, retention=retention) as saver:
        yield saver


def require_store(location: str | None) -> str:
    location = location or os.environ.get(STORE_ENV)
    if not location:
        raise ConfigurationError(
            f"no long-term store given; pass --store DIR (the directory your app gave "
            f"ChromaMemoryStore.embedded) or set ${STORE_ENV}."
        )
    return location


def load_embeddings(spec: str) -> Any:
    """``--embeddings``: ``hashing`` (the offline default), ``none`` (keyword
    search only) or ``module:attribute`` naming your app's embeddings object
    (or a function returning one)."""
    if spec == "none":
        return None
    if spec == "hashing":
        from langgraph_memory.embeddings import HashingEmbeddings

        return HashingEmbeddings()
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ConfigurationError(
            f"--embeddings {spec!r}; use 'hashing', 'none' or 'package.module:attribute'."
        )
    try:
        value = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(f"--embeddings {spec!r}: cannot load it ({exc}).") from exc
    return value() if callable(value) and not hasattr(value, "embed_query") else value


@contextmanager
def open_store(
    location: str, embeddings: str = "hashing", *, create: bool = False
) -> Iterator[Any]:
    """The embedded ``ChromaMemoryStore`` in directory ``location``."""
    root = Path(location)
    if not create and not (root / "keyword_index.sqlite3").is_file():
        raise DatabaseConnectionError(
            f"no langgraph-memory store in {location!r} (no keyword_index.sqlite3 there); "
            "pass the directory your app gave ChromaMemoryStore.embedded."
        )
    from langgraph_memory.longterm import ChromaMemoryStore

    store = ChromaMemoryStore.embedded(root, embeddings=load_embeddings(embeddings))
    try:
        yield store
    finally:
        store.close()
