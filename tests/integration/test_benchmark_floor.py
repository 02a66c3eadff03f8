"""The floor savers of ``benchmarks.session_floor`` do the work they claim.

A floor is only a bound if it really pays the durable write it stands for (one
committed row per put, one round trip per read) and otherwise behaves exactly
like InMemorySaver.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import psycopg
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from benchmarks import session_floor as floor
from benchmarks._session_workload import build_chat_graph, run_turns, thread_config, turn_input

TURNS = 3
PUTS_PER_TURN = 5  # checkpoints LangGraph saves per turn of the chat graph


def _messages(out: dict) -> list[str]:
    return [str(m.content) for m in out["messages"]]


def test_sqlite_floor_commits_one_row_per_put_and_keeps_in_memory_state(tmp_path: Path) -> None:
    path = str(tmp_path / "floor.sqlite")
    with floor._open_sqlite_floor(path) as saver:
        out = run_turns(saver, "t", TURNS)
    expected = run_turns(InMemorySaver(), "t", TURNS)
    assert _messages(out) == _messages(expected)
    with sqlite3.connect(path) as conn:
        ((rows,),) = conn.execute("SELECT count(*) FROM floor_puts").fetchall()
        ((mode,),) = conn.execute("PRAGMA journal_mode").fetchall()
    assert rows == TURNS * PUTS_PER_TURN
    assert mode == "wal"


@pytest.mark.postgres
def test_postgres_floors_commit_one_row_per_put(pg_dsn: str) -> None:
    with floor._open_postgres_floor(pg_dsn) as saver:
        out = run_turns(saver, "sync", TURNS)
    assert _messages(out) == _messages(run_turns(InMemorySaver(), "sync", TURNS))

    async def run_async() -> None:
        async with floor._aopen_postgres_floor(pg_dsn) as saver:
            graph = build_chat_graph(saver)
            for turn in range(1, TURNS + 1):
                await graph.ainvoke(turn_input("async", turn), thread_config("async"))

    asyncio.run(run_async())
    with psycopg.connect(pg_dsn) as conn:
        counts = dict(
            conn.execute("SELECT thread_id, count(*) FROM floor_puts GROUP BY thread_id").fetchall()
        )
    assert counts == {"sync": TURNS * PUTS_PER_TURN, "async": TURNS * PUTS_PER_TURN}


def test_report_compares_ours_with_the_floor_against_each_target() -> None:
    rates = {
        "SQLite, sync": {
            "memory-sync": [200.0, 220.0],
            "floor-sqlite-sync": [180.0, 198.0],
            "ours-sqlite-sync": [160.0, 187.0],
        }
    }
    text = floor.report(rates, threads=20, turns=50, reps=2)
    # medians of per-repetition ratios: (0.8, 0.85) -> 82%; floor (0.9, 0.9) -> 90%
    assert "| issue 2: 20x50 sync >= 85% | 82% | 90% | no |" in text
    assert "issue 3" not in text  # no Postgres savers measured, no Postgres row
