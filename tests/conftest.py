"""Shared fixtures for real services: a fresh Postgres database per test, a `chroma run` server.

Postgres-marked tests skip with a reason when no server answers at 127.0.0.1:5432,
except under CI=true, where an unreachable server is a failure (CI has one).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

PG_ADMIN_DSN = os.environ.get("LGM_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _dsn_for(dbname: str) -> str:
    base, _, _ = PG_ADMIN_DSN.rpartition("/")
    return f"{base}/{dbname}"


def postgres_reachable() -> str | None:
    """None when the server answers; otherwise the reason it does not."""
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN_DSN, connect_timeout=3):
            return None
    except Exception as exc:  # any failure means "not reachable" for the skip decision
        return f"{type(exc).__name__}: {exc}"


@pytest.fixture
def pg_dsn() -> Iterator[str]:
    """DSN of a brand-new database, dropped after the test."""
    yield from fresh_database()


def fresh_database() -> Iterator[str]:
    """Yields the DSN of a brand-new database and drops it after (skips or fails as
    ``pg_dsn`` does); for fixtures of a wider scope."""
    reason = postgres_reachable()
    if reason is not None:
        msg = f"PostgreSQL at {PG_ADMIN_DSN} is unreachable ({reason})"
        if IN_CI:
            pytest.fail(msg + "; CI=true requires it")
        pytest.skip(msg + "; start it or set LGM_TEST_PG_DSN")
    import psycopg

    dbname = f"lgm_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{dbname}"')
    try:
        yield _dsn_for(dbname)
    finally:
        with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def chroma_server(chroma_server_dir: tuple[str, int, Path]) -> tuple[str, int]:
    """A real `chroma run` server on a free loopback port; stopped after the session."""
    host, port, _ = chroma_server_dir
    return host, port


@pytest.fixture(scope="session")
def chroma_server_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int, Path]]:
    """The session's `chroma run` server with its ``--path`` (erasure tests scan its files)."""
    exe = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
    if not Path(exe).exists():
        pytest.fail("the `chroma` CLI is missing; `pip install chromadb` provides it")
    port = _free_port()
    data = tmp_path_factory.mktemp("chroma-server")
    # MALLOC_PERTURB_: the server persists HNSW buffers too (see longterm/_heap.py).
    env = dict(os.environ, ANONYMIZED_TELEMETRY="False", MALLOC_PERTURB_="165")
    proc = subprocess.Popen(
        [exe, "run", "--host", "127.0.0.1", "--port", str(port), "--path", str(data)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"`chroma run` exited with code {proc.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                time.sleep(0.2)
        else:
            pytest.fail("`chroma run` did not listen within 60 s")
        yield ("127.0.0.1", port, Path(data))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
