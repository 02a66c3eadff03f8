"""The one warning a saver logs on a database the official savers wrote.

Kept apart from the migration itself, so a saver's ``setup()`` imports only
this (no official package, no driver).
"""

from __future__ import annotations

MIGRATE_COMMAND = "langgraph-memory migrate"

# Tables the official savers create (ours are all prefixed ``lgm_``).
OFFICIAL_SQLITE_TABLES = ("checkpoints", "writes")
OFFICIAL_POSTGRES_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")


def unmigrated_warning(tables: set[str], dialect: str, location: str = "DB") -> str | None:
    """The warning for a database holding the official saver's tables but none
    of ours (``None`` otherwise).

    Example:
        >>> unmigrated_warning({"checkpoints", "writes"}, "sqlite") is not None
        True
        >>> unmigrated_warning({"checkpoints", "writes", "lgm_threads"}, "sqlite") is None
        True
    """
    official = OFFICIAL_POSTGRES_TABLES if dialect == "postgres" else OFFICIAL_SQLITE_TABLES
    if any(t.startswith("lgm_") for t in tables) or not all(t in tables for t in official):
        return None
    return (
        f"this database holds LangGraph's official checkpoint tables ({', '.join(official)}) "
        "but no langgraph-memory tables: the threads stored there are not visible to this "
        f"saver. Copy them once with `{MIGRATE_COMMAND} {location}` (or "
        "langgraph_memory.migrate.migrate_official); the official tables are left as they are."
    )
