"""Postgres helpers the integration tests share."""

from __future__ import annotations

import psycopg


def terminate_other_backends(dsn: str) -> int:
    """Kill every other backend connected to the test database (as a server
    restart or a pgbouncer reconnect would); how many were signalled."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return sum(1 for r in rows if r[0])
