"""Unit tests of user-id validation, partitioning and the SQL WHERE builders.

The builders' output is also executed against a real in-memory SQLite table, so
"crafted input cannot widen the scope" is checked on actual rows, not strings.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from langgraph_memory.errors import (
    InvalidFilterError,
    InvalidNamespaceError,
    InvalidUserIdError,
    MissingUserIdError,
)
from langgraph_memory.longterm.where import (
    build_memory_state_filter,
    build_namespace_prefix,
    build_value_filter,
    partition_of,
    validate_user_id,
)

ROOTS = ("memories",)


@pytest.mark.parametrize("good", ["alice", "u_1", "tenant:42", "a-b", "x@y", "7" * 128])
def test_valid_user_ids_pass(good: str) -> None:
    assert validate_user_id(good) == good


@pytest.mark.parametrize("missing", [None, ""])
def test_missing_user_id_fails_closed(missing: object) -> None:
    with pytest.raises(MissingUserIdError, match="user_id"):
        validate_user_id(missing)


@pytest.mark.parametrize(
    "crafted",
    [
        "a' OR 1=1",
        "a' OR '1'='1",
        "alice; DROP TABLE lt_items",
        "alice%",
        "alice.bob",
        "~shared",
        " alice",
        "al ice",
        "a\x00b",
        "8" * 129,
        "_leading",
        "用户",
    ],
)
def test_crafted_user_ids_are_refused_naming_the_value(crafted: str) -> None:
    with pytest.raises(InvalidUserIdError) as info:
        validate_user_id(crafted)
    assert repr(crafted) in str(info.value)
    assert "letters, digits" in str(info.value)  # says the fix


@pytest.mark.parametrize("not_a_string", [42, {"$ne": "alice"}, ["alice"], b"alice"])
def test_non_string_user_ids_are_refused(not_a_string: object) -> None:
    with pytest.raises(InvalidUserIdError):
        validate_user_id(not_a_string)


def test_partition_of_user_and_shared_namespaces() -> None:
    assert partition_of(("memories", "alice"), user_roots=ROOTS) == "alice"
    assert partition_of(("memories", "alice", "prefs"), user_roots=ROOTS) == "alice"
    assert partition_of(("docs", "faq"), user_roots=ROOTS) == "~docs"


@pytest.mark.parametrize(
    ("namespace", "error"),
    [
        ((), InvalidNamespaceError),
        (("memories",), InvalidNamespaceError),  # would span every user
        (("memories", "a' OR 1=1"), InvalidUserIdError),
        (("memories", "a.b"), InvalidNamespaceError),
        (("langgraph", "x"), InvalidNamespaceError),
        (("memories", ""), InvalidNamespaceError),
    ],
)
def test_bad_namespaces_fail_closed(namespace: tuple[str, ...], error: type[Exception]) -> None:
    with pytest.raises(error):
        partition_of(namespace, user_roots=ROOTS)


@pytest.fixture
def table() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (partition TEXT, namespace TEXT, value TEXT)")
    rows = [
        ("alice", "memories.alice", {"type": "semantic", "importance": 0.9, "user_id": "alice"}),
        ("alice", "memories.alice.prefs", {"type": "episodic", "importance": 0.2, "ok": True}),
        ("alice", "memories.alicex", {"type": "semantic", "importance": 0.5}),
        ("bob", "memories.bob", {"type": "semantic", "importance": 0.9, "user_id": "bob"}),
    ]
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)", [(p, n, json.dumps(v)) for p, n, v in rows])
    return conn


def _select(conn: sqlite3.Connection, partition: str, where: tuple[str, list[object]]) -> list[str]:
    sql, params = where
    return [
        r[0]
        for r in conn.execute(
            f"SELECT namespace FROM t WHERE partition = ? AND {sql} ORDER BY namespace",
            [partition, *params],
        )
    ]


def test_namespace_prefix_matches_children_not_siblings(table: sqlite3.Connection) -> None:
    found = _select(table, "alice", build_namespace_prefix(("memories", "alice")))
    assert found == ["memories.alice", "memories.alice.prefs"]  # not memories.alicex


def test_value_filter_operators_on_real_rows(table: sqlite3.Connection) -> None:
    assert _select(table, "alice", build_value_filter({"type": "semantic"})) == [
        "memories.alice",
        "memories.alicex",
    ]
    assert _select(table, "alice", build_value_filter({"importance": {"$gte": 0.5}})) == [
        "memories.alice",
        "memories.alicex",
    ]
    assert _select(table, "alice", build_value_filter({"type": {"$in": ["episodic"]}})) == [
        "memories.alice.prefs"
    ]
    assert _select(table, "alice", build_value_filter({"ok": True})) == ["memories.alice.prefs"]
    assert _select(table, "alice", build_value_filter({"ok": None})) == [
        "memories.alice",
        "memories.alicex",
    ]


def test_nested_filters_become_dotted_paths() -> None:
    sql, params = build_value_filter({"profile": {"diet": "vegan", "age": {"$gt": 3}}})
    assert sql == (
        "json_extract(value, '$.profile.diet') = ? AND json_extract(value, '$.profile.age') > ?"
    )
    assert params == ["vegan", 3]


def test_ne_filter_on_user_id_cannot_reach_another_partition(table: sqlite3.Connection) -> None:
    """{"user_id": {"$ne": "alice"}} only filters alice's own rows; bob stays unreachable."""
    found = _select(table, "alice", build_value_filter({"user_id": {"$ne": "alice"}}))
    assert "memories.bob" not in found
    assert found == []  # alice's rows either are alice's or have no user_id


@pytest.mark.parametrize(
    "bad",
    [
        {"type') OR 1=1 --": "x"},
        {"$or": [{"type": "a"}]},
        {"type": {"$regex": ".*"}},
        {"type": {"$in": []}},
        {"type": {"$in": "semantic"}},
        {"type": {}},
        {"type": ["a", "b"]},
        {"type": {"$eq": {"nested": 1}}},
        {"a b": 1},
        "type = 'x'",
    ],
)
def test_unsupported_filters_are_refused(bad: object) -> None:
    with pytest.raises(InvalidFilterError):
        build_value_filter(bad)  # type: ignore[arg-type]


def test_injection_values_are_bound_not_inlined(table: sqlite3.Connection) -> None:
    sql, params = build_value_filter({"type": "x' OR '1'='1"})
    assert "OR" not in sql
    assert _select(table, "alice", (sql, params)) == []


def test_memory_state_filter_shapes() -> None:
    current, params = build_memory_state_filter(now_ts=100.0)
    assert "mem_status = 'active'" in current and params == [100.0, 100.0]
    history, params = build_memory_state_filter(now_ts=100.0, include_history=True)
    assert "active" not in history and params == []
    as_of, params = build_memory_state_filter(now_ts=100.0, as_of_ts=50.0)
    assert "valid_from_ts <= ?" in as_of and params == [50.0, 50.0, 50.0, 50.0]
    typed, params = build_memory_state_filter(
        now_ts=1.0, include_history=True, types=["semantic"], keys=["diet", "budget"]
    )
    assert "mem_type IN (?)" in typed and "mem_key IN (?, ?)" in typed
    assert params == ["semantic", "diet", "budget"]
    empty, _ = build_memory_state_filter(now_ts=1.0, include_history=True, keys=[])
    assert empty.endswith("AND 1 = 0")


def test_value_filter_for_postgres_binds_jsonb_operands() -> None:
    sql, params = build_value_filter(
        {"type": "semantic", "n": {"$gte": 2, "$in": [1, 3]}, "flag": True, "gone": None},
        dialect="postgres",
    )
    assert sql == (
        "json_extract(value, '$.type') = ?::jsonb AND json_extract(value, '$.n') >= ?::jsonb"
        " AND json_extract(value, '$.n') IN (?::jsonb, ?::jsonb)"
        " AND json_extract(value, '$.flag') = ?::jsonb AND json_extract(value, '$.gone') IS NULL"
    )
    assert params == ['"semantic"', "2", "1", "3", "true"]
    assert build_value_filter(None, dialect="postgres") == ("1 = 1", [])
