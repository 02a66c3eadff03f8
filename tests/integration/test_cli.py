"""The ``langgraph-memory`` CLI, every command on a real SQLite file and a real
Postgres database (issue 17, part 2), plus its error paths.

The data is made the way an app makes it: a graph with the recall node over
a ``ChromaMemoryStore`` runs a few turns on our saver.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, StateGraph

from langgraph_memory import (
    ChromaMemoryStore,
    HashingEmbeddings,
    MemoryRecord,
    MemoryState,
    MemoryType,
    add_memory_nodes,
)
from langgraph_memory.cli import main
from langgraph_memory.cli._open import open_saver

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "checkpoints.sqlite")
    return str(request.getfixturevalue("pg_dsn"))


@pytest.fixture
def store_dir(tmp_path: Path) -> Iterator[str]:
    path = tmp_path / "memory"
    with ChromaMemoryStore.embedded(path, embeddings=HashingEmbeddings()) as store:
        store.put_memory(
            MemoryRecord("User is allergic to seafood", user_id="alice", key="allergy.seafood")
        )
        store.put_memory(
            MemoryRecord(
                "Never use honorifics with this user", type=MemoryType.PROCEDURAL, user_id="alice"
            )
        )
        store.put_memory(MemoryRecord("User is Bob, likes jazz", user_id="bob"))
    yield str(path)


@pytest.fixture
def app(db: str, store_dir: str) -> str:
    """Two users' threads written by a graph with recall, as an app would."""

    def agent(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [AIMessage(f"answer {len(state['messages'])}")]}

    builder = StateGraph(MemoryState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    with (
        ChromaMemoryStore.embedded(store_dir, embeddings=HashingEmbeddings()) as store,
        open_saver(db, create=True) as saver,
    ):
        add_memory_nodes(builder, model_node="agent", store=store, compress=False)
        graph = builder.compile(checkpointer=saver, store=store)
        for user, thread in (("alice", "t-alice"), ("bob", "t-bob")):
            config = {"configurable": {"thread_id": thread, "user_id": user}}
            for text in ("seafood dinner ideas?", "and for lunch?", "any dessert?"):
                graph.invoke({"messages": [HumanMessage(text)]}, config)
    return db


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    """``main(argv + --json)``: exit code, parsed stdout, stderr."""
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    data = json.loads(captured.out) if code == 0 and captured.out.strip() else None
    return code, data, captured.err


# ------------------------------------------------------------------ session commands


def test_threads_and_stats(app: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, rows, _ = run(capsys, "threads", "--db", app)
    assert code == 0
    assert {r["thread_id"] for r in rows} == {"t-alice", "t-bob"}
    assert all(r["checkpoints"] >= 9 and r["bytes"] > 0 and r["last_activity"] for r in rows)
    code, stats, _ = run(capsys, "stats", "--db", app)
    assert code == 0
    assert stats["threads"] == 2
    assert stats["checkpoints"] == sum(r["checkpoints"] for r in rows)
    assert stats["database_bytes"] > 0


def test_show_history_and_bad_thread(app: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, rows, _ = run(capsys, "show", "t-alice", "--db", app)
    assert code == 0
    assert rows[0]["last_message"] == "ai: answer 6"  # the recall block + 5 turn messages
    assert [r["step"] for r in rows] == sorted((r["step"] for r in rows), reverse=True)
    assert rows[-1]["source"] == "input" and rows[-1]["parent_id"] is None
    code, _, err = run(capsys, "show", "no-such-thread", "--db", app)
    assert code == 1
    assert "no thread 'no-such-thread'" in err and "langgraph-memory threads" in err
    # The table view prints too.
    assert main(["show", "t-alice", "--db", app, "--limit", "2"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("checkpoint_id") and len(table) == 3


def test_recalled_lists_each_turns_block(app: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, turns, _ = run(capsys, "recalled", "t-alice", "--db", app)
    assert code == 0
    assert turns, "the recall block is in the thread's history"
    assert "User is allergic to seafood" in turns[0]["block"]
    assert "Never use honorifics with this user" in turns[0]["block"]
    assert turns[0]["user_message"] == "seafood dinner ideas?"
    assert all("Bob" not in t["block"] for t in turns)
    assert main(["recalled", "t-alice", "--db", app]) == 0
    assert "| " in capsys.readouterr().out


def test_sweep_dry_run_then_for_real(app: str, capsys: pytest.CaptureFixture[str]) -> None:
    _, before, _ = run(capsys, "stats", "--db", app)
    code, report, _ = run(capsys, "sweep", "--db", app, "--keep-last", "2", "--dry-run")
    assert code == 0 and report["dry_run"] is True and report["pruned_checkpoints"] == 0
    assert report["prunable_checkpoints_at_most"] == before["checkpoints"] - 4
    _, unchanged, _ = run(capsys, "stats", "--db", app)
    assert unchanged["checkpoints"] == before["checkpoints"]
    code, report, _ = run(capsys, "sweep", "--db", app, "--keep-last", "2")
    assert code == 0 and report["pruned_checkpoints"] == before["checkpoints"] - 4
    _, after, _ = run(capsys, "stats", "--db", app)
    assert after["checkpoints"] == 4
    code, _, err = run(capsys, "sweep", "--db", app, "--keep-last", "0")
    assert code == 1 and "keep_last=0" in err


def test_thread_export_import_round_trip(
    app: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "thread.jsonl"
    code, summary, _ = run(capsys, "export", "--thread", "t-alice", "--db", app, "-o", str(out))
    assert code == 0 and summary["checkpoints"] >= 9
    code, imported, _ = run(capsys, "import", str(out), "--db", app, "--thread-id", "t-copy")
    assert code == 0 and imported["checkpoints"] == summary["checkpoints"]
    with open_saver(app) as saver:
        original = saver.get_tuple({"configurable": {"thread_id": "t-alice"}})
        copy = saver.get_tuple({"configurable": {"thread_id": "t-copy"}})
    assert copy.checkpoint["channel_values"] == original.checkpoint["channel_values"]
    assert copy.checkpoint["id"] == original.checkpoint["id"]
    code, _, err = run(capsys, "import", str(out), "--db", app, "--thread-id", "t-copy")
    assert code == 1 and "already exists" in err


def test_forget_with_receipt_removes_memories_and_threads(
    app: str, store_dir: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "forget", "--user", "bob", "--store", store_dir, "--db", app)
    assert code == 1 and "--yes" in err  # nothing deleted without confirmation
    code, receipt, _ = run(
        capsys, "forget", "--user", "bob", "--store", store_dir, "--db", app, "--yes"
    )
    assert code == 0
    assert receipt["memories_deleted"] == 1 and receipt["threads_deleted"] == 1
    assert "bob" not in json.dumps(receipt)  # counts and a hash only
    _, rows, _ = run(capsys, "threads", "--db", app)
    assert [r["thread_id"] for r in rows] == ["t-alice"]
    _, memories, _ = run(capsys, "memories", "bob", "--store", store_dir)
    assert memories == []


# ------------------------------------------------------------------ store commands


def test_memories_with_provenance_and_explained_query(
    store_dir: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, rows, _ = run(capsys, "memories", "alice", "--store", store_dir)
    assert code == 0
    assert {r["text"] for r in rows} == {
        "User is allergic to seafood",
        "Never use honorifics with this user",
    }
    first = next(r for r in rows if r["key"] == "allergy.seafood")
    assert first["type"] == "semantic" and first["source"] == "user_stated"
    assert first["valid_from"] and first["valid_to"] is None and first["status"] == "active"
    code, ranked, _ = run(capsys, "memories", "alice", "--store", store_dir, "--query", "seafood")
    assert code == 0
    assert ranked[0]["text"] == "User is allergic to seafood"
    assert set(ranked[0]["why"]) == {
        "keyword",
        "vector",
        "relevance",
        "recency",
        "importance",
        "final",
    }
    assert ranked[0]["why"]["keyword"] > 0


def test_memory_export_import_to_another_user(
    store_dir: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "alice.jsonl"
    code, summary, _ = run(
        capsys, "export", "--user", "alice", "--store", store_dir, "-o", str(out)
    )
    assert code == 0 and summary["memories"] == 2
    new_store = str(tmp_path / "other")
    code, imported, _ = run(capsys, "import", str(out), "--store", new_store, "--user", "carol")
    assert code == 0 and imported == {"user_id": "carol", "memories": 2}
    _, rows, _ = run(capsys, "memories", "carol", "--store", new_store)
    assert {r["text"] for r in rows} == {
        "User is allergic to seafood",
        "Never use honorifics with this user",
    }
    # Ids are kept: a second import stores nothing twice.
    run(capsys, "import", str(out), "--store", new_store, "--user", "carol")
    _, rows, _ = run(capsys, "memories", "carol", "--store", new_store)
    assert len(rows) == 2


# ------------------------------------------------------------------ migrate, eval, errors


def test_migrate_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver as OfficialSaver

    path = tmp_path / "official.sqlite"
    builder = StateGraph(MemoryState)
    builder.add_node("agent", lambda s: {"messages": [AIMessage("hi")]})
    builder.add_edge(START, "agent")
    with OfficialSaver.from_conn_string(str(path)) as official:
        builder.compile(checkpointer=official).invoke(
            {"messages": [HumanMessage("hello")]}, {"configurable": {"thread_id": "old"}}
        )
    code, report, _ = run(capsys, "migrate", str(path))
    assert code == 0 and report["threads_copied"] == 1 and report["checkpoints"] == 3
    _, rows, _ = run(capsys, "threads", "--db", str(path))
    assert [r["thread_id"] for r in rows] == ["old"]


@pytest.mark.postgres
def test_migrate_command_postgres(pg_dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver as OfficialPgSaver

    builder = StateGraph(MemoryState)
    builder.add_node("agent", lambda s: {"messages": [AIMessage("hi")]})
    builder.add_edge(START, "agent")
    with OfficialPgSaver.from_conn_string(pg_dsn) as official:
        official.setup()
        builder.compile(checkpointer=official).invoke(
            {"messages": [HumanMessage("hello")]}, {"configurable": {"thread_id": "old"}}
        )
    code, report, _ = run(capsys, "migrate", pg_dsn)
    assert code == 0 and report["threads_copied"] == 1
    assert "password" not in json.dumps(report)
    _, rows, _ = run(capsys, "threads", "--db", pg_dsn)
    assert [r["thread_id"] for r in rows] == ["old"]


def test_eval_delegates_to_the_exam(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    if importlib.util.find_spec("langgraph_memory.eval.__main__") is None:
        assert main(["eval"]) == 1
        assert "no exam runner" in capfd.readouterr().err
        return
    # Its own --help, not ours: everything after `eval` goes to the exam.
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    assert main(["eval", "--help"]) == 0
    assert "python -m langgraph_memory.eval" in capfd.readouterr().out
    assert main(["eval", "--no-such-option"]) == 2


def test_bad_locations_give_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "typo.sqlite"
    code, _, err = run(capsys, "threads", "--db", str(missing))
    assert code == 1 and f"no SQLite database at {str(missing)!r}" in err
    assert not missing.exists()  # a read command never creates a file
    code, _, err = run(capsys, "stats", "--db", "postgresql://postgres@127.0.0.1:1/x")
    assert code == 1 and "Connection refused" in err
    code, _, err = run(capsys, "memories", "alice", "--store", str(tmp_path / "nothing"))
    assert code == 1 and "no langgraph-memory store" in err
    monkeypatch.delenv("LANGGRAPH_MEMORY_DB", raising=False)
    code, _, err = run(capsys, "threads")
    assert code == 1 and "--db" in err and "LANGGRAPH_MEMORY_DB" in err
    code, _, err = run(capsys, "import", str(tmp_path / "none.jsonl"), "--db", str(missing))
    assert code == 1 and "cannot read" in err
    code, _, err = run(capsys, "memories", "x", "--store", str(tmp_path), "--embeddings", "bad")
    assert code == 1
    assert err.count("\n") == 1  # one line, no traceback


@pytest.mark.postgres
def test_bad_postgres_database(pg_dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    dsn = pg_dsn.rpartition("/")[0] + "/lgm_cli_no_such_db"
    code, _, err = run(capsys, "threads", "--db", dsn)
    assert code == 1 and 'database "lgm_cli_no_such_db" does not exist' in err


def test_module_entry_point(app: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "langgraph_memory.cli", "threads", "--db", app, "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    ).stdout
    assert {r["thread_id"] for r in json.loads(out)} == {"t-alice", "t-bob"}
