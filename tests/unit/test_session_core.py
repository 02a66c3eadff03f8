"""The pure core of the session savers: config parsing, retention planning,
chunk decoding, lazy values, filter building, and the statements a put yields."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from langgraph_memory.config import RetentionPolicy
from langgraph_memory.errors import (
    ConfigurationError,
    InvalidFilterError,
    ThreadDeletedError,
)
from langgraph_memory.session import _sql_sqlite as SQL
from langgraph_memory.session._channels import ENCODING_EMPTY, ENCODING_ITEMS, ENCODING_VALUE
from langgraph_memory.session._core import (
    Execute,
    ExecuteMany,
    Fetch,
    SaverCore,
    drive,
    parse_config,
)
from langgraph_memory.session._reads import LazyChannelValues, decode_chunks
from langgraph_memory.session._retention import (
    SEQ_INFINITY,
    CheckpointSkeleton,
    StoredValue,
    close_over_delta_history,
    keep_newest,
    plan_garbage,
    threads_to_evict,
)
from langgraph_memory.session._versions import next_version

SERDE = JsonPlusSerializer()


# ------------------------------------------------------------------ config parsing


@pytest.mark.parametrize(
    "config",
    [
        None,
        {},
        {"configurable": {}},
        {"configurable": {"thread_id": None}},
        {"configurable": {"thread_id": ""}},
        {"configurable": {"thread_id": 1.5}},
        {"configurable": {"thread_id": "t", "checkpoint_ns": 3}},
        {"configurable": {"thread_id": "t", "checkpoint_id": 7}},
    ],
)
def test_bad_configs_raise_configuration_error_quoting_the_value(config: Any) -> None:
    with pytest.raises(ConfigurationError) as err:
        parse_config(config)
    assert (
        "thread_id" in str(err.value)
        or "checkpoint" in str(err.value)
        or "config" in str(err.value)
    )


def test_parse_config_normalises() -> None:
    key = parse_config({"configurable": {"thread_id": 42}})
    assert (key.thread_id, key.checkpoint_ns, key.checkpoint_id) == ("42", "", None)
    key = parse_config(
        {"configurable": {"thread_id": "t", "checkpoint_ns": "a:b", "checkpoint_id": "c"}}
    )
    assert key.config()["configurable"] == {
        "thread_id": "t",
        "checkpoint_ns": "a:b",
        "checkpoint_id": "c",
    }


def test_next_version_increases_and_accepts_ints() -> None:
    v1 = next_version(None)
    v2 = next_version(v1)
    assert v1 < v2 and v2.startswith("0" * 31 + "2")
    assert next_version(5).startswith("0" * 31 + "6")


# ------------------------------------------------------------------ filters


def test_metadata_predicates_bind_values_and_refuse_odd_keys() -> None:
    preds, params = SQL.metadata_predicates({"source": "loop", "step": 2, "ok": True, "x": None})
    assert preds[0] == "json_extract(metadata, '$.source') = ?"
    assert params == ["loop", 2, 1]
    assert preds[3].endswith("IS NULL")
    for bad in ("a'b", "a b", "", "$.x"):
        with pytest.raises(InvalidFilterError, match="not allowed"):
            SQL.metadata_predicates({bad: 1})


def test_list_where_uses_keyset_paging() -> None:
    where, params = SQL.list_where(
        thread_id="t",
        checkpoint_ns="",
        checkpoint_id=None,
        before_id="b",
        metadata_filter=None,
        after_key=("c9", "t", ""),
    )
    assert (
        where
        == "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id < ? AND checkpoint_id < ?"
    )
    assert params == ["t", "", "b", "c9"]
    where, params = SQL.list_where(
        thread_id=None,
        checkpoint_ns=None,
        checkpoint_id=None,
        before_id=None,
        metadata_filter=None,
        after_key=("c9", "t", "ns"),
    )
    assert "(checkpoint_id, thread_id, checkpoint_ns) < (?, ?, ?)" in where


# ------------------------------------------------------------------ decoding


def test_decode_chunks_in_one_call_matches_per_chunk_decoding() -> None:
    items = [HumanMessage(f"m{i}", id=str(i)) for i in range(40)]
    chunks = []
    for lo in range(0, 40, 3):
        part = items[lo : lo + 3]
        t, b = SERDE.dumps_typed(part)
        chunks.append((lo, lo + len(part), t, b))
    fast = decode_chunks(SERDE, chunks)
    assert [x for _, _, xs in fast for x in xs] == items
    # A non-msgpack chunk falls back to one call per chunk.
    t, b = SERDE.dumps_typed(None)
    assert t != "msgpack"


def test_lazy_channel_values_decode_once_on_any_access() -> None:
    calls = []

    def loader() -> dict[str, Any]:
        calls.append(1)
        return {"a": [1, 2], "b": "x"}

    values = LazyChannelValues(["a", "b"], loader)
    assert len(values) == 2 and "a" in values and not calls
    assert values["a"] == [1, 2]
    assert values == {"a": [1, 2], "b": "x"}
    assert dict(values) == {"a": [1, 2], "b": "x"}
    assert {**values} == {"a": [1, 2], "b": "x"}
    assert values.copy() == {"a": [1, 2], "b": "x"}
    assert pickle.loads(pickle.dumps(values)) == {"a": [1, 2], "b": "x"}
    assert len(calls) == 1
    fresh = LazyChannelValues(["a"], lambda: {"a": 1})
    assert list(fresh.items()) == [("a", 1)]
    assert json.dumps(LazyChannelValues(["a"], lambda: {"a": 1})) == '{"a": 1}'


# ------------------------------------------------------------------ put statements


class ScriptedDb:
    """Answers the put transaction's queries the way a fresh database would."""

    def __init__(self, *, tombstoned: bool = False, puts_so_far: int = 0) -> None:
        self.tombstoned = tombstoned
        self.puts = puts_so_far
        self.statements: list[Any] = []

    def __call__(self, statement: Any) -> Any:
        self.statements.append(statement)
        if isinstance(statement, Fetch):
            if statement.sql == SQL.UPSERT_THREAD_ON_PUT:
                return [] if self.tombstoned else [(self.puts + 1,)]
            if statement.sql in (SQL.SELECT_TOMBSTONE, SQL.SELECT_WRITES_REFUSED):
                return [(1.0,)] if self.tombstoned else []
            if statement.sql == SQL.SELECT_NEXT_ITEM_SEQ:
                return [(0,)]
            if statement.sql == SQL.SELECT_BASE_EXISTS_AND_NEXT_ITEM_SEQ:
                return [(1, 0)]
            return [(1,)]
        if isinstance(statement, Execute):
            # The *_IF_LIVE inserts store nothing for a tombstoned thread.
            if statement.sql == SQL.INSERT_CHECKPOINT_IF_LIVE and self.tombstoned:
                return 0
            return 1
        if statement.sql in (SQL.UPSERT_WRITE_IF_LIVE, SQL.INSERT_WRITE_IF_ABSENT_IF_LIVE):
            return 0 if self.tombstoned else len(statement.rows)
        return None


def _checkpoint(values: dict[str, Any], versions: dict[str, Any]) -> Any:
    cp = empty_checkpoint()
    cp["channel_values"] = values
    cp["channel_versions"] = versions
    return cp


def test_put_stores_lists_as_items_values_whole_and_no_row_for_missing_values() -> None:
    core = SaverCore(SQL, SERDE)
    msgs = [HumanMessage("hi", id="1"), AIMessage("hello", id="2")]
    # "turn" is a dict: a value row (small scalars travel inline in the body)
    cp = _checkpoint(
        {"messages": msgs, "turn": {"n": 3}}, {"messages": "1", "turn": "1", "delta": "1"}
    )
    prepared = core.prepare_put(
        {"configurable": {"thread_id": "t", "checkpoint_ns": ""}},
        cp,
        {"source": "loop", "step": 1},
        {"messages": "1", "turn": "1", "delta": "1"},
    )
    encodings = {v.channel: v.encoding for v in prepared.values}
    # "delta" has a new version but no value: no row (a read leaves it out either way)
    assert encodings == {"messages": ENCODING_ITEMS, "turn": ENCODING_VALUE}
    db = ScriptedDb()
    outcome = drive(core.put_txn(prepared), db)
    assert outcome.stored_lists["messages"] == ("1", ((0, 2),))
    kinds = [type(s).__name__ for s in db.statements]
    assert kinds[0] == "Fetch"  # the tombstone-refusing upsert comes first
    assert db.statements[-1].sql == SQL.INSERT_CHECKPOINT
    # the second put of a grown list stores only the new message
    core.finish_put(prepared, outcome)
    more = [*msgs, HumanMessage("again", id="3")]
    p2 = core.prepare_put(
        {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": cp["id"]}},
        _checkpoint({"messages": more}, {"messages": "2"}),
        {},
        {"messages": "2"},
    )
    (list_value,) = p2.values
    assert list_value.plan is not None and len(list_value.plan.new_items) == 1


def test_put_into_tombstoned_thread_raises_before_writing() -> None:
    core = SaverCore(SQL, SERDE)
    prepared = core.prepare_put(
        {"configurable": {"thread_id": "gone", "checkpoint_ns": ""}}, _checkpoint({}, {}), {}, {}
    )
    db = ScriptedDb(tombstoned=True)
    with pytest.raises(ThreadDeletedError, match="'gone'"):
        drive(core.put_txn(prepared), db)
    assert not any(isinstance(s, (Execute, ExecuteMany)) for s in db.statements)


def test_retention_due_every_apply_every_puts_and_thread_row_written_once_a_second() -> None:
    core = SaverCore(SQL, SERDE, retention=RetentionPolicy(keep_last=3, apply_every=4))
    due = []
    touched = []
    for _ in range(9):
        prepared = core.prepare_put(
            {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, _checkpoint({}, {}), {}, {}
        )
        touched.append(prepared.touch_thread)
        db = ScriptedDb()
        outcome = drive(core.put_txn(prepared), db)
        core.finish_put(prepared, outcome)
        due.append(outcome.retention_due)
    assert due == [False, False, False, True, False, False, False, True, False]
    # the first put writes the thread row; the next ones within a second only read it
    assert touched[0] and not any(touched[1:])


def test_put_after_another_process_deleted_the_thread_is_refused() -> None:
    core = SaverCore(SQL, SERDE)
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    first = core.prepare_put(config, _checkpoint({}, {}), {}, {})
    core.finish_put(first, drive(core.put_txn(first), ScriptedDb()))
    late = core.prepare_put(config, _checkpoint({}, {}), {}, {})
    assert not late.touch_thread  # the read-only tombstone check path
    with pytest.raises(ThreadDeletedError):
        drive(core.put_txn(late), ScriptedDb(tombstoned=True))


def test_put_without_thread_row_write_checks_the_tombstone_in_the_checkpoint_insert() -> None:
    core = SaverCore(SQL, SERDE)
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    first = core.prepare_put(config, _checkpoint({}, {}), {}, {})
    core.finish_put(first, drive(core.put_txn(first), ScriptedDb()))
    second = core.prepare_put(config, _checkpoint({}, {}), {}, {})
    db = ScriptedDb()
    drive(core.put_txn(second), db)
    assert [s.sql for s in db.statements] == [SQL.INSERT_CHECKPOINT_IF_LIVE]
    # The thread id, then the parent id (a restarted thread refuses older parents).
    assert db.statements[0].params[-2:] == ("t", None)


def test_writes_check_the_tombstone_inside_the_insert_and_read_it_only_on_a_shortfall() -> None:
    core = SaverCore(SQL, SERDE)
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c1"}}
    prepared = core.prepare_writes(config, [("a", 1), ("b", 2)], "task")
    db = ScriptedDb()
    drive(core.writes_txn(prepared), db)
    assert [s.sql for s in db.statements] == [SQL.INSERT_WRITE_IF_ABSENT_IF_LIVE]
    # The thread id, then the checkpoint id (a restarted thread refuses older ones).
    assert all(row[-2:] == ("t", "c1") for row in db.statements[0].rows)
    gone = ScriptedDb(tombstoned=True)
    with pytest.raises(ThreadDeletedError, match="'t'"):
        drive(core.writes_txn(prepared), gone)
    assert [s.sql for s in gone.statements][-1] == SQL.SELECT_WRITES_REFUSED


def test_bad_constructor_arguments() -> None:
    with pytest.raises(ConfigurationError, match="cache_size"):
        SaverCore(SQL, SERDE, cache_size=-1)
    with pytest.raises(ConfigurationError, match="RetentionPolicy"):
        SaverCore(SQL, SERDE, retention={"keep_last": 3})  # type: ignore[arg-type]


# ------------------------------------------------------------------ retention planning


def _chain(
    n: int, versions: list[dict[str, str]], delta: frozenset[str] = frozenset()
) -> list[CheckpointSkeleton]:
    return [
        CheckpointSkeleton(f"c{i:02d}", f"c{i - 1:02d}" if i else None, versions[i], delta)
        for i in range(n)
    ]


def test_keep_newest_and_garbage_of_values_and_chunks() -> None:
    skeletons = _chain(4, [{"m": f"v{i}"} for i in range(4)])
    stored = {
        ("m", f"v{i}"): StoredValue("m", f"v{i}", ENCODING_ITEMS, ((0, 2 * (i + 1)),))
        for i in range(4)
    }
    kept = keep_newest(skeletons, 1)
    assert kept == {"c03"}
    plan = plan_garbage(skeletons, kept, stored, ["m"])
    assert plan.checkpoints == ("c00", "c01", "c02")
    assert set(plan.channel_values) == {("m", "v0"), ("m", "v1"), ("m", "v2")}
    # every item is still referenced by v3 = [0, 8): only the tail gap goes
    assert plan.chunk_gaps["m"] == ((8, SEQ_INFINITY),)


def test_delta_channel_ancestors_are_kept_back_to_the_seed() -> None:
    # "d" is a DeltaChannel: empty rows except a snapshot at c01.
    versions = [{"d": f"d{i}", "branch:to:x": f"b{i}"} for i in range(5)]
    skeletons = _chain(5, versions, frozenset({"d"}))
    stored = {("d", f"d{i}"): StoredValue("d", f"d{i}", ENCODING_EMPTY) for i in range(5)}
    stored.update(
        {
            ("branch:to:x", f"b{i}"): StoredValue("branch:to:x", f"b{i}", ENCODING_EMPTY)
            for i in range(5)
        }
    )
    stored[("d", "d1")] = StoredValue("d", "d1", ENCODING_VALUE)
    kept = close_over_delta_history({"c04"}, skeletons, stored)
    assert kept == {"c01", "c02", "c03", "c04"}
    # a consumed trigger channel (empty, but not a DeltaChannel) keeps nothing alive
    plain = _chain(5, versions)
    assert close_over_delta_history({"c04"}, plain, stored) == {"c04"}
    # no seed anywhere: the whole chain to the root stays
    stored[("d", "d1")] = StoredValue("d", "d1", ENCODING_EMPTY)
    assert close_over_delta_history({"c04"}, skeletons, stored) == {f"c{i:02d}" for i in range(5)}


def test_threads_to_evict_oldest_first_until_under_cap() -> None:
    activity = [("new", 30.0), ("old", 10.0), ("mid", 20.0)]
    payload = {"new": 100, "old": 100, "mid": 100}
    assert threads_to_evict(activity, payload, used_bytes=350, max_bytes=200) == ["old", "mid"]
    assert threads_to_evict(activity, payload, used_bytes=150, max_bytes=200) == []
    assert threads_to_evict(
        activity, payload, used_bytes=350, max_bytes=200, already_deleted=["old"]
    ) == ["mid"]


def test_merge_msgpack_chunks_concatenates_without_decoding() -> None:
    from langgraph_memory.session._core import merge_msgpack_chunks

    items = [HumanMessage(f"m{i}", id=str(i)) for i in range(20)]
    rows = []
    for lo in range(0, 20, 3):
        part = items[lo : lo + 3]
        t, b = SERDE.dumps_typed(part)
        rows.append((lo, lo + len(part), t, b))
    merged = merge_msgpack_chunks(rows)
    assert merged is not None
    lo, hi, c_type, blob = merged
    assert (lo, hi, c_type) == (0, 20, "msgpack")
    assert SERDE.loads_typed((c_type, blob)) == items
    # gaps, foreign types or a wrong count are never merged
    assert merge_msgpack_chunks([rows[0], rows[2]]) is None
    assert (
        merge_msgpack_chunks([(0, 1, "pickle", b"\x91\x01"), (1, 2, "msgpack", b"\x91\x02")])
        is None
    )
    assert (
        merge_msgpack_chunks([(0, 2, "msgpack", b"\x91\x01"), (2, 3, "msgpack", b"\x91\x02")])
        is None
    )
