"""Postgres erasure: wait until no snapshot can still see the deleted rows, then VACUUM FULL.

A DELETE leaves the row in the heap as a dead tuple. A plain ``VACUUM`` marks
its space reusable but leaves the bytes in the page's free space, and a GIN
index keeps a deleted row's lexemes (measured on PG 15:
``benchmarks/RESULTS-privacy.md``); ``VACUUM FULL`` rewrites the table and its
indexes into new files. But it copies every row some transaction may still
see: a snapshot older than the delete, *in any database of the server* (we saw
another database's ``CREATE DATABASE`` keep 9 of 9 deleted rows), makes the
rewrite keep them. So the erasure first waits (bounded) until every backend's
``backend_xmin`` / ``backend_xid`` is newer than the delete.

``pg_stat_activity`` shows other roles' transaction ids only to superusers and
members of ``pg_read_all_stats``; without that the wait sees nothing and the
rewrite may keep rows a concurrent old snapshot can see (README, "Privacy").
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

# An xid assigned after the delete committed: every older snapshot is older than it.
NEW_XID = "SELECT pg_current_xact_id()::text"
# Backends (any database) whose snapshot or transaction predates that xid.
OLDER_SNAPSHOTS = """
SELECT count(*) FROM pg_stat_activity
WHERE pid <> pg_backend_pid()
  AND (age(backend_xmin) > age(%(xid)s::xid) OR age(backend_xid) > age(%(xid)s::xid))"""

ERASE_WAIT_SECONDS = 10.0
_POLL_SECONDS = 0.05


def _xid(text: str) -> str:
    return str(int(text) % 2**32)  # xid8 -> the 32-bit xid the activity view shows


def wait_for_older_snapshots(conn: Any, timeout: float = ERASE_WAIT_SECONDS) -> bool:
    """Block until no backend's snapshot predates now (autocommit ``conn``);
    ``False`` when ``timeout`` passed first (the VACUUM then runs anyway)."""
    xid = _xid(conn.execute(NEW_XID).fetchone()[0])
    deadline = time.monotonic() + timeout
    while conn.execute(OLDER_SNAPSHOTS, {"xid": xid}).fetchone()[0]:
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_SECONDS)
    return True


async def await_older_snapshots(conn: Any, timeout: float = ERASE_WAIT_SECONDS) -> bool:
    """Async twin of :func:`wait_for_older_snapshots` (a psycopg ``AsyncConnection``)."""
    xid = _xid((await (await conn.execute(NEW_XID)).fetchone())[0])
    deadline = time.monotonic() + timeout
    while (await (await conn.execute(OLDER_SNAPSHOTS, {"xid": xid})).fetchone())[0]:
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(_POLL_SECONDS)
    return True
