"""Moved to ``langgraph_memory.pipeline.queue``; this name is kept for 0.1 imports."""

from langgraph_memory.pipeline.queue import (
    AuditEntry,
    Job,
    JobInfo,
    MemoryQueue,
    PostgresMemoryQueue,
    SqliteMemoryQueue,
)

__all__ = [
    "AuditEntry",
    "Job",
    "JobInfo",
    "MemoryQueue",
    "PostgresMemoryQueue",
    "SqliteMemoryQueue",
]
