"""Session memory: LangGraph checkpointers with linear storage and built-in retention.

``SqliteSaver`` (sync, also serves ``ainvoke``) and ``AsyncSqliteSaver``
(aiosqlite) share one dialect-independent core (``_core.py``) with the
Postgres savers; the SQL lives in ``_sql_sqlite.py`` / ``_sql_postgres.py``.
See ``docs/session-storage.md`` for the storage design.

Each saver is imported on first use, so ``SqliteSaver`` never imports
psycopg (which needs libpq) and ``PostgresSaver`` never imports aiosqlite.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from langgraph_memory.session._retention import (
    StorageStats,
    SweepReport,
    ThreadStats,
)

if TYPE_CHECKING:
    from langgraph_memory.session.aio import AsyncSqliteSaver
    from langgraph_memory.session.postgres import PostgresSaver
    from langgraph_memory.session.postgres_aio import AsyncPostgresSaver
    from langgraph_memory.session.sqlite import SqliteSaver

# public name -> module that defines it (imported lazily by __getattr__)
_LAZY: dict[str, str] = {
    "AsyncPostgresSaver": "langgraph_memory.session.postgres_aio",
    "AsyncSqliteSaver": "langgraph_memory.session.aio",
    "PostgresSaver": "langgraph_memory.session.postgres",
    "SqliteSaver": "langgraph_memory.session.sqlite",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'langgraph_memory.session' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # next access skips __getattr__
    return value


__all__ = [
    "AsyncPostgresSaver",
    "AsyncSqliteSaver",
    "PostgresSaver",
    "SqliteSaver",
    "StorageStats",
    "SweepReport",
    "ThreadStats",
]
