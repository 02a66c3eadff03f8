"""Setup mistakes a newcomer makes, each failing at once with a typed error that
names the bad value and the fix (issue 17, "errors and setup").

Real SQLite files in ``tmp_path``, the real Postgres server; no mocks.
"""

from __future__ import annotations

import logging
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from langgraph_memory import AsyncSqliteSaver, RetentionPolicy, ScoringWeights, SqliteSaver
from langgraph_memory.config import check_int
from langgraph_memory.errors import ConfigurationError, DatabaseConnectionError
from langgraph_memory.nodes import create_compress_node, create_recall_node
from langgraph_memory.session import _sql_sqlite as SQL

CONFIG = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}

# ------------------------------------------------------------------ SQLite paths


def test_sqlite_from_conn_string_accepts_pathlib_path(tmp_path: Path) -> None:
    path = tmp_path / "checkpoints.sqlite"
    with SqliteSaver.from_conn_string(path) as saver:
        assert saver.get_tuple(CONFIG) is None
    assert path.is_file()
    # The tables really are in that file.
    with sqlite3.connect(path) as conn:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert "lgm_checkpoints" in names


async def test_async_sqlite_from_conn_string_accepts_pathlib_path(tmp_path: Path) -> None:
    path = tmp_path / "checkpoints.sqlite"
    async with AsyncSqliteSaver.from_conn_string(path) as saver:
        assert await saver.aget_tuple(CONFIG) is None
    assert path.is_file()


def test_sqlite_missing_directory_names_path_and_fix(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "dir" / "db.sqlite"
    with pytest.raises(DatabaseConnectionError) as caught, SqliteSaver.from_conn_string(path):
        pass
    message = str(caught.value)
    assert str(path) in message
    assert str(path.parent) in message
    assert "does not exist" in message and "mkdir -p" in message
    assert isinstance(caught.value, ConnectionError)
    assert not path.parent.exists()  # nothing was created behind the user's back


def test_sqlite_missing_directory_in_file_uri(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "db.sqlite"
    with (
        pytest.raises(DatabaseConnectionError, match="missing"),
        SqliteSaver.from_conn_string(f"file:{path}?mode=rwc"),
    ):
        pass


async def test_async_sqlite_missing_directory(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "db.sqlite"
    with pytest.raises(DatabaseConnectionError, match="does not exist"):
        async with AsyncSqliteSaver.from_conn_string(str(path)):
            pass


def test_sqlite_directory_instead_of_file(tmp_path: Path) -> None:
    with (
        pytest.raises(DatabaseConnectionError) as caught,
        SqliteSaver.from_conn_string(tmp_path),
    ):
        pass
    assert str(tmp_path) in str(caught.value)
    assert "unable to open database file" in str(caught.value)


async def test_async_sqlite_directory_instead_of_file(tmp_path: Path) -> None:
    with pytest.raises(DatabaseConnectionError, match="not a directory"):
        async with AsyncSqliteSaver.from_conn_string(tmp_path):
            pass


@pytest.mark.parametrize("bad", [None, "", 42, b""])
def test_sqlite_conn_string_of_wrong_type(bad: object) -> None:
    with (
        pytest.raises(ConfigurationError, match=r"pathlib\.Path"),
        SqliteSaver.from_conn_string(bad),  # type: ignore[arg-type]
    ):
        pass


# ------------------------------------------------------------------ the WAL stays bounded


def test_sqlite_wal_truncated_after_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    wal = Path(f"{path}-wal")
    blob = "x" * 200_000
    with SqliteSaver.from_conn_string(path) as saver, saver._connections.connection() as conn:
        limit = conn.execute("PRAGMA journal_size_limit").fetchone()[0]
        assert limit == SQL.WAL_SIZE_LIMIT_BYTES
        conn.execute("CREATE TABLE filler (v TEXT)")
        for _ in range(60):  # ~12 MB of log, past the limit
            conn.execute("INSERT INTO filler VALUES (?)", (blob,))
        assert wal.stat().st_size > SQL.WAL_SIZE_LIMIT_BYTES
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        conn.execute("INSERT INTO filler VALUES ('restart the log')")
        # The commit that restarts the log truncates the file to the limit.
        assert wal.stat().st_size <= SQL.WAL_SIZE_LIMIT_BYTES


# ------------------------------------------------------------------ Postgres DSNs


@pytest.mark.postgres
def test_postgres_missing_database_fails_fast_with_cause(
    pg_dsn: str, caplog: pytest.LogCaptureFixture
) -> None:
    from langgraph_memory import PostgresSaver

    base, _, _ = pg_dsn.rpartition("/")
    dsn = f"{base.replace('postgres@', 'postgres:hunter2@')}/lgm_no_such_db"
    started = time.monotonic()
    with (
        caplog.at_level(logging.DEBUG),
        pytest.raises(DatabaseConnectionError) as caught,
        PostgresSaver.from_conn_string(dsn),
    ):
        pass
    assert time.monotonic() - started < 2.0
    message = str(caught.value)
    assert 'database "lgm_no_such_db" does not exist' in message
    assert "CREATE DATABASE" in message
    assert "hunter2" not in message  # never the password
    assert len([r for r in caplog.records if r.name.startswith("psycopg")]) == 0


@pytest.mark.postgres
async def test_async_postgres_missing_database_fails_fast(pg_dsn: str) -> None:
    from langgraph_memory import AsyncPostgresSaver

    dsn = pg_dsn.rpartition("/")[0] + "/lgm_no_such_db"
    started = time.monotonic()
    with pytest.raises(DatabaseConnectionError, match="does not exist"):
        async with AsyncPostgresSaver.from_conn_string(dsn):
            pass
    assert time.monotonic() - started < 2.0


@pytest.mark.postgres
def test_postgres_unknown_role_and_closed_port(pg_dsn: str) -> None:
    from langgraph_memory import PostgresSaver

    dbname = pg_dsn.rpartition("/")[2]
    with (
        pytest.raises(DatabaseConnectionError, match='role "lgm_nobody" does not exist'),
        PostgresSaver.from_conn_string(f"postgresql://lgm_nobody@127.0.0.1:5432/{dbname}"),
    ):
        pass
    started = time.monotonic()
    with (
        pytest.raises(DatabaseConnectionError, match=r"Connection refused.*start the server"),
        PostgresSaver.from_conn_string("postgresql://postgres@127.0.0.1:1/x"),
    ):
        pass
    assert time.monotonic() - started < 2.0


def test_postgres_dsn_syntax_error() -> None:
    from langgraph_memory import PostgresSaver

    with (
        pytest.raises(ConfigurationError, match="not a valid libpq DSN"),
        PostgresSaver.from_conn_string("not a dsn"),
    ):
        pass


# ------------------------------------------------------------------ config types


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"keep_last": "20"}, r"keep_last='20' is a str; use an integer >= 1 or None \(write 20"),
        ({"keep_last": 2.5}, r"keep_last=2\.5 is a float"),
        ({"keep_last": True}, r"keep_last=True is a bool"),
        ({"max_bytes": "1e6"}, r"max_bytes='1e6' is a str"),
        ({"thread_ttl_seconds": "3600"}, r"thread_ttl_seconds='3600' is a str; use a number"),
        ({"apply_every": None}, r"apply_every=None is a NoneType"),
        ({"keep_last": 0}, r"keep_last=0; use an integer >= 1"),
    ],
)
def test_retention_policy_rejects_wrong_types(kwargs: dict[str, object], pattern: str) -> None:
    with pytest.raises(ConfigurationError, match=pattern):
        RetentionPolicy(**kwargs)  # type: ignore[arg-type]


def test_scoring_weights_reject_strings() -> None:
    with pytest.raises(ConfigurationError, match=r"ScoringWeights.recency='0.2' is a str"):
        ScoringWeights(recency="0.2")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="half_life_days='30' is a str"):
        ScoringWeights(half_life_days="30")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"max_tokens": "8000"}, r"create_compress_node\(max_tokens\)='8000' is a str"),
        ({"max_tokens": 8000, "keep_last_turns": "2"}, r"keep_last_turns\)='2' is a str"),
        ({"max_tokens": 8000, "trigger_messages": 6.0}, r"trigger_messages\)=6\.0 is a float"),
        ({"max_tokens": 8000, "trigger_fraction": "0.5"}, r"trigger_fraction\)='0.5' is a str"),
    ],
)
def test_compress_factory_rejects_wrong_types(kwargs: dict[str, object], pattern: str) -> None:
    with pytest.raises(ConfigurationError, match=pattern):
        create_compress_node(model=None, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"k": "5"}, r"create_recall_node\(k\)='5' is a str"),
        ({"prompt_budget_tokens": "8000"}, r"prompt_budget_tokens\)='8000' is a str"),
        ({"token_budget": 100.0}, r"token_budget\)=100\.0 is a float"),
        ({"max_share": "0.3"}, r"max_share\)='0.3' is a str"),
    ],
)
def test_recall_factory_rejects_wrong_types(kwargs: dict[str, object], pattern: str) -> None:
    with pytest.raises(ConfigurationError, match=pattern):
        create_recall_node(**kwargs)  # type: ignore[arg-type]


def test_wiring_max_tokens_string_rejected() -> None:
    from langchain_core.messages import AIMessage
    from langgraph.graph import START, StateGraph

    from langgraph_memory import MemoryState, add_memory_nodes

    builder = StateGraph(MemoryState)
    builder.add_node("agent", lambda state: {"messages": [AIMessage("hi")]})
    builder.add_edge(START, "agent")
    with pytest.raises(ConfigurationError, match="max_tokens\\)='8000' is a str"):
        add_memory_nodes(builder, model_node="agent", max_tokens="8000")  # type: ignore[arg-type]


def test_check_int_accepts_valid_values() -> None:
    check_int("x", 3, minimum=1)
    check_int("x", None, minimum=1, optional=True)
    with pytest.raises(ConfigurationError, match="x=None is a NoneType"):
        check_int("x", None, minimum=1)


# ------------------------------------------------------------------ import weight


@pytest.mark.parametrize(
    ("statement", "forbidden"),
    [
        ("from langgraph_memory import SqliteSaver", ("psycopg", "psycopg_pool", "chromadb")),
        ("from langgraph_memory import AsyncSqliteSaver", ("psycopg", "chromadb")),
        ("from langgraph_memory.session import SqliteSaver", ("psycopg", "chromadb", "aiosqlite")),
        ("from langgraph_memory import PostgresSaver", ("aiosqlite", "chromadb")),
        ("import langgraph_memory", ("psycopg", "chromadb", "aiosqlite", "langchain_openai")),
    ],
)
def test_importing_a_saver_imports_no_other_backend(
    statement: str, forbidden: tuple[str, ...]
) -> None:
    code = f"import sys\n{statement}\nprint(sorted({{m.split('.')[0] for m in sys.modules}}))\n"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    ).stdout
    loaded = set(eval(out))  # a printed list of module names
    assert not loaded & set(forbidden), sorted(loaded & set(forbidden))
