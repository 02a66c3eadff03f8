"""Catalog and vectors never disagree: killed writers and a Chroma server that stops.

A writer process is killed between its vector write and its catalog commit
(both ways: an upsert and a delete); the next store to open repairs what it
left (``longterm/repair.py``). A Chroma server stopped mid-run gives a typed
error naming its URL, and every acknowledged memory survives its restart.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chromadb
import psycopg
import pytest
from chromadb.config import Settings

from langgraph_memory.config import ScoringWeights
from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.errors import VectorStoreUnavailableError
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.types import MemoryRecord
from tests.integration._longterm_worker import open_store as _open
from tests.integration.test_chroma_store_instances import _args, _run, _spawn

pytestmark = pytest.mark.chroma_server

VECTOR_ONLY = ScoringWeights(keyword_share=0.0, recency=0.0, importance=0.0, min_relevance=0.0)


def _server_ids(url: str, prefix: str) -> set[str]:
    host, port = url.removeprefix("http://").split(":")
    client = chromadb.HttpClient(
        host=host, port=int(port), settings=Settings(anonymized_telemetry=False)
    )
    ids: set[str] = set()
    for collection in client.list_collections():
        if collection.name.startswith(prefix):
            ids |= set(client.get_collection(collection.name).get(include=[])["ids"])
    return ids


def _catalog_vector_ids(dsn: str) -> set[str]:
    with psycopg.connect(dsn) as conn:
        return {r[0] for r in conn.execute("SELECT item_id FROM lt_items WHERE has_vector = 1")}


def _intents(dsn: str) -> int:
    with psycopg.connect(dsn) as conn:
        return int(conn.execute("SELECT count(*) FROM lt_vector_intents").fetchone()[0])


def _write_then_crash(
    pg_dsn: str, chroma_server: tuple[str, int], tmp_path: Path, user: str, crash: str
) -> tuple[dict[str, Any], list[str]]:
    """Three acknowledged memories from one instance, then another dies mid-write."""
    args = _args(pg_dsn, chroma_server)
    acked = _run("write", {**args, "user": user, "n": 3, "tag": "kept"}, tmp_path / "w")["acked"]
    proc = _spawn(crash, {**args, "user": user, "memory_id": acked[0]}, tmp_path / "crash")
    proc.communicate(timeout=300)
    assert proc.returncode == 9
    return args, acked


def test_writer_killed_after_its_vector_upsert_leaves_no_orphan_after_reopen(
    pg_dsn: str, chroma_server: tuple[str, int], tmp_path: Path
) -> None:
    args, acked = _write_then_crash(pg_dsn, chroma_server, tmp_path, "kim", "crash_after_vectors")
    # The crash really left an orphan vector and an intent behind.
    orphans = _server_ids(args["chroma_url"], args["prefix"]) - _catalog_vector_ids(pg_dsn)
    assert len(orphans) == 1
    assert _intents(pg_dsn) == 1
    store = _open(args)  # repairs on open
    try:
        assert _server_ids(args["chroma_url"], args["prefix"]) == _catalog_vector_ids(pg_dsn)
        assert _intents(pg_dsn) == 0
        assert sorted(m.id for m in store.list_memories("kim")) == sorted(acked)
    finally:
        store.close()


def test_writer_killed_after_its_vector_delete_gets_the_vector_back(
    pg_dsn: str, chroma_server: tuple[str, int], tmp_path: Path
) -> None:
    args, acked = _write_then_crash(
        pg_dsn, chroma_server, tmp_path, "lee", "crash_after_vector_delete"
    )
    assert len(_server_ids(args["chroma_url"], args["prefix"])) == 2  # the catalog still has 3
    store = _open(args)
    try:
        assert _server_ids(args["chroma_url"], args["prefix"]) == _catalog_vector_ids(pg_dsn)
        assert len(_catalog_vector_ids(pg_dsn)) == 3
        found = store.search_memories("lee", "kept fact 0 about green tea", weights=VECTOR_ONLY)
        assert acked[0] in [m.record.id for m in found]
    finally:
        store.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _ChromaServer:
    """A `chroma run` this test can stop and start again on the same port and data."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        exe = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
        env = dict(os.environ, ANONYMIZED_TELEMETRY="False", MALLOC_PERTURB_="165")
        self.proc = subprocess.Popen(
            [exe, "run", "--host", "127.0.0.1", "--port", str(self.port), "--path", str(self.data)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.2)
        pytest.fail("`chroma run` did not listen within 60 s")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=20)
            self.proc = None


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[_ChromaServer]:
    server = _ChromaServer(tmp_path / "chroma-data")
    server.start()
    yield server
    server.stop()


def test_chroma_server_stopped_mid_run_typed_error_and_nothing_acknowledged_lost(
    pg_dsn: str, own_server: _ChromaServer
) -> None:
    args = {"dsn": pg_dsn, "chroma_url": own_server.url, "prefix": "outage"}
    store = _open(args)
    try:
        acked = [
            store.put_memory(MemoryRecord(text=f"fact {i} about oolong tea", user_id="max")).id
            for i in range(5)
        ]
        own_server.stop()
        with pytest.raises(VectorStoreUnavailableError, match=own_server.url) as caught:
            store.put_memory(MemoryRecord(text="written while the server is down", user_id="max"))
        assert "chroma run" in str(caught.value)
        # The refused write was not acknowledged, and left nothing in the catalog.
        assert sorted(m.id for m in store.list_memories("max")) == sorted(acked)
        own_server.start()
        assert store.repair_vectors() == 1
        found = store.search_memories("max", "fact about oolong tea", limit=10, weights=VECTOR_ONLY)
        assert sorted(m.record.id for m in found) == sorted(acked)
        assert _server_ids(own_server.url, "outage") == _catalog_vector_ids(pg_dsn)
        assert _intents(pg_dsn) == 0
    finally:
        store.close()


def test_unreachable_chroma_server_at_open_names_the_url(pg_dsn: str) -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    with pytest.raises(VectorStoreUnavailableError, match=url.replace(".", r"\.")):
        ChromaMemoryStore.from_http(url, catalog=pg_dsn, embeddings=HashingEmbeddings())
