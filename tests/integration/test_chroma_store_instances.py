"""Several app instances share one Postgres catalog and one ``chroma run`` server.

Every instance is a separate process with its own working directory
(``tests/integration/_longterm_worker.py``), as behind a load balancer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import chromadb
import psycopg
import pytest
from chromadb.config import Settings

REPO = Path(__file__).resolve().parents[2]

# Each test starts 3-6 Python processes (~10-15 s each on the shared 2-core box).
pytestmark = [pytest.mark.chroma_server]


def _args(pg_dsn: str, chroma_server: tuple[str, int], **extra: Any) -> dict[str, Any]:
    host, port = chroma_server
    return {
        "dsn": pg_dsn,
        "chroma_url": f"http://{host}:{port}",
        # The server is shared by the whole session: each test its own collections.
        "prefix": f"t{uuid.uuid4().hex[:8]}",
        **extra,
    }


def _spawn(command: str, args: dict[str, Any], workdir: Path) -> subprocess.Popen[str]:
    workdir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(REPO), ANONYMIZED_TELEMETRY="False")
    return subprocess.Popen(
        [sys.executable, "-m", "tests.integration._longterm_worker", command, json.dumps(args)],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _result(proc: subprocess.Popen[str], timeout: float = 300) -> dict[str, Any]:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err[-3000:]
    parsed: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return parsed


def _run(command: str, args: dict[str, Any], workdir: Path) -> dict[str, Any]:
    return _result(_spawn(command, args, workdir))


def test_written_by_one_instance_recalled_and_forgotten_through_another(
    pg_dsn: str, chroma_server: tuple[str, int], tmp_path: Path
) -> None:
    args = _args(pg_dsn, chroma_server)
    a, b = tmp_path / "instance-a", tmp_path / "instance-b"
    written = _run("write", {**args, "user": "alice", "n": 12, "tag": "alpha"}, a)["acked"]
    _run("write", {**args, "user": "bob", "n": 3, "tag": "beta"}, a)
    seen = _run("recall", {**args, "user": "alice", "query": "alpha green tea"}, b)
    assert seen["listed"] == sorted(written)
    assert set(seen["found"]) == set(written)  # vectors and keywords both reached instance b
    assert _run("forget", {**args, "user": "alice"}, b) == {"deleted": 12}
    after = _run("recall", {**args, "user": "alice", "query": "alpha green tea"}, a)
    assert after == {"found": [], "listed": []}
    bob = _run("recall", {**args, "user": "bob", "query": "beta green tea"}, a)
    assert len(bob["listed"]) == 3


def test_four_instances_writing_and_reconciling_concurrently(
    pg_dsn: str, chroma_server: tuple[str, int], tmp_path: Path
) -> None:
    args = _args(pg_dsn, chroma_server)
    users = ["u1", "u2", "u3"]
    procs = [
        _spawn("stress", {**args, "users": users, "n": 15, "tag": f"w{w}"}, tmp_path / f"w{w}")
        for w in range(4)
    ]
    results = [_result(p) for p in procs]
    assert [r["errors"] for r in results] == [[], [], [], []]
    check = _run("recall", {**args, "user": "u1", "query": "jasmine"}, tmp_path / "check")
    assert check["listed"]  # the catalog answers from another process too
    with psycopg.connect(pg_dsn) as conn:
        stored = {
            (p, k): (status, key)
            for p, k, status, key in conn.execute(
                "SELECT partition, key, mem_status, mem_key FROM lt_items"
            )
        }
        duplicates = conn.execute(
            "SELECT partition, count(*) FROM lt_items WHERE mem_key = 'drink' "
            "AND mem_status = 'active' GROUP BY partition"
        ).fetchall()
    acked = [tuple(x) for r in results for x in r["acked"] + r["keyed"]]
    lost = [x for x in acked if x not in stored]
    assert lost == []  # 0 lost acknowledged memories (superseded ones stay in history)
    assert sorted(duplicates) == [(u, 1) for u in users]  # exactly one active "drink" each
    plain = [x for r in results for x in r["acked"]]
    assert all(stored[tuple(x)][0] == "active" for x in plain)
    # Every catalog row with a vector has it on the server, and nothing else is there.
    host, port = chroma_server
    client = chromadb.HttpClient(
        host=host, port=port, settings=Settings(anonymized_telemetry=False)
    )
    with psycopg.connect(pg_dsn) as conn:
        expected = {r[0] for r in conn.execute("SELECT item_id FROM lt_items WHERE has_vector = 1")}
    on_server: set[str] = set()
    for collection in client.list_collections():
        if collection.name.startswith(args["prefix"]):
            on_server |= set(client.get_collection(collection.name).get(include=[])["ids"])
    assert on_server == expected
