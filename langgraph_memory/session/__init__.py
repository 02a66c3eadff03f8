"""Session memory: LangGraph checkpointers with linear storage and built-in retention.

``SqliteSaver`` (sync, also serves ``ainvoke``) and ``AsyncSqliteSaver``
(aiosqlite) share one dialect-independent core (``_core.py``); the SQL lives in
``_sql_sqlite.py``. See ``docs/session-storage.md`` for the storage design.
"""

from langgraph_memory.session._retention import (
    StorageStats,
    SweepReport,
    ThreadStats,
)
from langgraph_memory.session.aio import AsyncSqliteSaver
from langgraph_memory.session.postgres import PostgresSaver
from langgraph_memory.session.postgres_aio import AsyncPostgresSaver
from langgraph_memory.session.sqlite import SqliteSaver

__all__ = [
    "AsyncPostgresSaver",
    "AsyncSqliteSaver",
    "PostgresSaver",
    "SqliteSaver",
    "StorageStats",
    "SweepReport",
    "ThreadStats",
]
