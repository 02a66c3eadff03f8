"""Encryption at rest on real SQLite files and a real Postgres: round trips, no
plaintext in the stored bytes, and failing closed on moved, clear, tampered and
wrong-key rows; key rotation with ``reencrypt`` (issue 18, part 4)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph.graph import START, MessagesState, StateGraph

from langgraph_memory.encryption import (
    EncryptionKeys,
    is_envelope,
    row_aad,
)
from langgraph_memory.errors import (
    ConfigurationError,
    DecryptionError,
    InvalidFilterError,
    PlaintextRowError,
)
from tests.integration._savers import Harness, SaverFactory, factory_params, harness_for

SECRET = "PLATYPUS-7731"  # the assistant's words
TOLD = "ZEBRA-4402"  # the user's words
TABLES = ("lgm_checkpoints", "lgm_writes", "lgm_channel_values", "lgm_channel_chunks")


@pytest.fixture(params=factory_params())
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Harness:
    factory: SaverFactory = request.param
    return harness_for(request, factory, tmp_path)


def _graph(saver: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("echo", lambda s: {"messages": [("ai", f"the word is {SECRET}")]})
    builder.add_edge(START, "echo")
    return builder.compile(checkpointer=saver)


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


async def _chat(harness: Harness, saver: Any, thread: str, turns: int) -> Any:
    graph = _graph(saver)
    for i in range(turns):
        await harness.invoke(graph, {"messages": [("user", f"{TOLD} turn {i}")]}, _cfg(thread))
    return graph


# ------------------------------------------------------------------ raw access to the rows


class Db:
    """Plain SQL on the harness's database, outside any saver."""

    def __init__(self, harness: Harness) -> None:
        self.postgres = harness.factory.backend == "postgres"
        self.location = harness.location

    def run(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        if self.postgres:
            with psycopg.connect(self.location, autocommit=True) as conn:
                cur = conn.execute(sql.replace("?", "%s"), params)
                return cur.fetchall() if cur.description else []
        conn = sqlite3.connect(self.location, isolation_level=None)
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()

    def stored_bytes(self) -> bytes:
        """Every byte the database holds for our tables: the SQLite file and its
        WAL as files on disk; on Postgres each row's text form (bytea as hex)."""
        if not self.postgres:
            conn = sqlite3.connect(self.location)
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.close()
            data = b""
            for suffix in ("", "-wal", "-journal"):
                path = Path(self.location + suffix)
                if path.exists():
                    data += path.read_bytes()
            return data
        out = []
        for table in TABLES:
            out += [r[0] for r in self.run(f"SELECT t::text FROM {table} AS t")]
        return "\n".join(out).encode()


def _plaintext_in(data: bytes, word: str) -> bool:
    return word.encode() in data or word.encode().hex().encode() in data


@pytest.fixture
def keys() -> EncryptionKeys:
    return EncryptionKeys.generate("k1")


# ------------------------------------------------------------------ round trip, stored bytes


async def test_round_trip_and_no_plaintext_in_the_stored_bytes(
    harness: Harness, keys: EncryptionKeys
) -> None:
    # 20 turns = 60 messages: list chunks, block compaction, writes, many checkpoints.
    async with harness.open(encryption=keys) as saver:
        graph = await _chat(harness, saver, "t1", 20)
        state = await harness.get_state(graph, _cfg("t1"))
        assert len(state.values["messages"]) == 40
        assert state.values["messages"][-1].content == f"the word is {SECRET}"
        history = await harness.history(graph, _cfg("t1"))
        assert len(history) == 60  # three checkpoints a turn
        listed = await harness.list(saver, _cfg("t1"), filter={"source": "loop"}, limit=3)
        assert [t.metadata["source"] for t in listed] == ["loop"] * 3
    # A fresh instance reads the same back (nothing served from one object's cache).
    async with harness.open(encryption=keys) as saver:
        state = await harness.get_state(_graph(saver), _cfg("t1"))
        assert [m.content for m in state.values["messages"][:2]] == [
            f"{TOLD} turn 0",
            f"the word is {SECRET}",
        ]
    data = Db(harness).stored_bytes()
    assert _plaintext_in(data, "the word is") is False
    assert _plaintext_in(data, SECRET) is False
    assert _plaintext_in(data, TOLD) is False
    # The control: the same run without encryption leaves the words readable.
    async with harness.open() as saver:
        await _chat(harness, saver, "clear", 1)
    assert _plaintext_in(Db(harness).stored_bytes(), SECRET) is True


async def test_every_stored_blob_is_an_envelope(harness: Harness, keys: EncryptionKeys) -> None:
    async with harness.open(encryption=keys) as saver:
        await _chat(harness, saver, "t1", 3)
    db = Db(harness)
    for table, column in (
        ("lgm_checkpoints", "checkpoint"),
        ("lgm_writes", "value"),
        ("lgm_channel_values", "value"),
        ("lgm_channel_chunks", "value"),
    ):
        blobs = [r[0] for r in db.run(f"SELECT {column} FROM {table} WHERE {column} IS NOT NULL")]
        assert blobs, table
        assert all(is_envelope(bytes(b)) for b in blobs), table
        key_ids = {EncryptionKeys.key_id_of(bytes(b)) for b in blobs}
        assert key_ids == {"k1"}, table


# ------------------------------------------------------------------ fail closed


async def test_a_checkpoint_moved_to_another_thread_fails_to_load(
    harness: Harness, keys: EncryptionKeys
) -> None:
    async with harness.open(encryption=keys) as saver:
        await _chat(harness, saver, "victim", 2)
    Db(harness).run("UPDATE lgm_checkpoints SET thread_id = 'attacker' WHERE thread_id = 'victim'")
    async with harness.open(encryption=keys) as saver:
        with pytest.raises(DecryptionError) as info:
            await harness.get_tuple(saver, _cfg("attacker"))
    assert not isinstance(info.value, PlaintextRowError)
    assert "thread_id='attacker'" in str(info.value)
    assert SECRET not in str(info.value) and TOLD not in str(info.value)


async def test_values_and_writes_copied_to_another_thread_fail_to_load(
    harness: Harness, keys: EncryptionKeys
) -> None:
    async with harness.open(encryption=keys) as saver:
        await _chat(harness, saver, "a", 2)
        await _chat(harness, saver, "b", 2)
    db = Db(harness)
    # Swap in a's message chunks for b's own: same channel, same item numbers.
    db.run("DELETE FROM lgm_channel_chunks WHERE thread_id = 'b'")
    db.run(
        "INSERT INTO lgm_channel_chunks (thread_id, checkpoint_ns, channel, seq_lo, seq_hi, "
        "type, value) SELECT 'b', checkpoint_ns, channel, seq_lo, seq_hi, type, value "
        "FROM lgm_channel_chunks WHERE thread_id = 'a'"
    )
    async with harness.open(encryption=keys, cache_size=0) as saver:
        with pytest.raises(DecryptionError, match="chunk row"):
            await harness.get_tuple(saver, _cfg("b"))
    # A pending write moved to another checkpoint of the same thread.
    cids = [
        r[0]
        for r in db.run(
            "SELECT checkpoint_id FROM lgm_checkpoints WHERE thread_id = 'a' "
            "ORDER BY checkpoint_id DESC"
        )
    ]
    moved = db.run(
        "UPDATE lgm_writes SET checkpoint_id = ? WHERE thread_id = 'a' AND checkpoint_id = ?",
        (cids[0], cids[1]),
    )
    assert moved == []
    assert db.run("SELECT COUNT(*) FROM lgm_writes WHERE checkpoint_id = ?", (cids[0],))[0][0] > 0
    async with harness.open(encryption=keys) as saver:
        with pytest.raises(DecryptionError, match="write row"):
            await harness.get_tuple(saver, _cfg("a"))


async def test_a_plaintext_row_is_refused_and_reencrypt_can_seal_it(
    harness: Harness, keys: EncryptionKeys
) -> None:
    async with harness.open() as saver:
        await _chat(harness, saver, "old", 2)
    async with harness.open(encryption=keys) as saver:
        with pytest.raises(PlaintextRowError) as info:
            await harness.get_tuple(saver, _cfg("old"))
        assert "reencrypt(encrypt_plaintext=True)" in str(info.value)
        # Plain reencrypt() never seals clear rows by surprise: it refuses them too.
        with pytest.raises(PlaintextRowError):
            await harness.call(saver, "reencrypt")
        report = await harness.call(saver, "reencrypt", encrypt_plaintext=True)
        assert report.scanned == 1 and report.rewritten > 5
        graph = _graph(saver)
        state = await harness.get_state(graph, _cfg("old"))
        assert len(state.values["messages"]) == 4
        await harness.invoke(graph, {"messages": [("user", "more")]}, _cfg("old"))
        again = await harness.call(saver, "reencrypt")
        assert again.rewritten == 0
    # The other way round: a saver without keys refuses sealed rows by name.
    async with harness.open() as saver:
        with pytest.raises(DecryptionError, match="opened without encryption="):
            await harness.get_tuple(saver, _cfg("old"))


async def test_a_wrong_key_fails_closed(harness: Harness, keys: EncryptionKeys) -> None:
    async with harness.open(encryption=keys) as saver:
        await _chat(harness, saver, "t1", 1)
    same_id_other_key = EncryptionKeys.generate("k1")
    async with harness.open(encryption=same_id_other_key) as saver:
        with pytest.raises(DecryptionError, match="does not open under key id 'k1'"):
            await harness.get_tuple(saver, _cfg("t1"))
    async with harness.open(encryption=EncryptionKeys.generate("k9")) as saver:
        with pytest.raises(DecryptionError, match="lacks") as info:
            await harness.get_tuple(saver, _cfg("t1"))
        assert info.value.key_id == "k1"


async def test_tampered_clear_metadata_fails_to_load(
    harness: Harness, keys: EncryptionKeys
) -> None:
    async with harness.open(encryption=keys) as saver:
        await _chat(harness, saver, "t1", 1)
    db = Db(harness)
    if db.postgres:
        db.run("UPDATE lgm_checkpoints SET metadata = jsonb_set(metadata, '{step}', '99')")
    else:
        db.run("UPDATE lgm_checkpoints SET metadata = json_set(metadata, '$.step', 99)")
    async with harness.open(encryption=keys) as saver:
        with pytest.raises(DecryptionError, match="metadata row"):
            await harness.get_tuple(saver, _cfg("t1"))


async def test_filters_name_only_clear_metadata_keys(
    harness: Harness, keys: EncryptionKeys
) -> None:
    async with harness.open(encryption=keys) as saver:
        await _chat(harness, saver, "t1", 1)
        assert len(await harness.list(saver, _cfg("t1"), filter={"step": 1})) == 1
        with pytest.raises(InvalidFilterError, match="clear_metadata_keys"):
            await harness.list(saver, _cfg("t1"), filter={"topic": "x"})


# ------------------------------------------------------------------ rotation, copy


async def test_a_rotated_key_reads_old_rows_and_reencrypt_lets_the_old_key_go(
    harness: Harness, keys: EncryptionKeys
) -> None:
    async with harness.open(encryption=keys) as saver:
        await _chat(harness, saver, "t1", 3)
        await _chat(harness, saver, "t2", 2)
    rotated = keys.rotated("k2")
    async with harness.open(encryption=rotated) as saver:
        graph = _graph(saver)
        # Old rows still open; new rows are sealed under k2.
        assert len((await harness.get_state(graph, _cfg("t1"))).values["messages"]) == 6
        await harness.invoke(graph, {"messages": [("user", "new")]}, _cfg("t1"))
        ids = {
            EncryptionKeys.key_id_of(bytes(r[0]))
            for r in Db(harness).run("SELECT checkpoint FROM lgm_checkpoints")
        }
        assert ids == {"k1", "k2"}
        # Interrupted after one thread (batch of 1, resumed from its cursor).
        first = await harness.call(saver, "reencrypt", batch_size=1)
        assert first.scanned == 2 and first.rewritten > 0
        second = await harness.call(saver, "reencrypt", after=first.cursor)
        assert second.scanned == 0 and second.rewritten == 0
        assert (await harness.call(saver, "reencrypt")).rewritten == 0
    ids = {
        EncryptionKeys.key_id_of(bytes(r[0]))
        for r in Db(harness).run("SELECT checkpoint FROM lgm_checkpoints")
    }
    assert ids == {"k2"}
    async with harness.open(encryption=rotated.without("k1")) as saver:
        graph = _graph(saver)
        assert len((await harness.get_state(graph, _cfg("t1"))).values["messages"]) == 8
        assert len(await harness.history(graph, _cfg("t2"))) == 6
    async with harness.open(encryption=keys) as saver:  # the old ring alone: k2 unknown
        with pytest.raises(DecryptionError, match="'k2'"):
            await harness.get_tuple(saver, _cfg("t1"))


async def test_copy_thread_reseals_the_copy_for_its_new_thread(
    harness: Harness, keys: EncryptionKeys
) -> None:
    async with harness.open(encryption=keys) as saver:
        await _chat(harness, saver, "src", 2)
        await harness.call(saver, "copy_thread", "src", "dst")
        graph = _graph(saver)
        copied = await harness.get_state(graph, _cfg("dst"))
        assert [m.content for m in copied.values["messages"]] == [
            m.content for m in (await harness.get_state(graph, _cfg("src"))).values["messages"]
        ]
        assert len(await harness.history(graph, _cfg("dst"))) == 6


# ------------------------------------------------------------------ the keyring itself


def test_keyring_validates_and_never_shows_keys() -> None:
    key = EncryptionKeys.new_key()
    ring = EncryptionKeys({"k1": key}, current="k1")
    assert key.hex() not in repr(ring) and str(key) not in repr(ring)
    with pytest.raises(ConfigurationError, match="16, 24 or 32"):
        EncryptionKeys({"k1": b"short"}, current="k1")
    with pytest.raises(ConfigurationError, match="not one of the key ids"):
        EncryptionKeys({"k1": key}, current="k2")
    with pytest.raises(ConfigurationError, match="not allowed"):
        EncryptionKeys({"k 1": key}, current="k 1")
    with pytest.raises(ConfigurationError, match="current key"):
        ring.without("k1")
    import base64

    assert (
        EncryptionKeys({"k1": base64.b64encode(key).decode()}, current="k1").open(
            ring.seal(b"x", b"aad"), b"aad", row="r"
        )
        == b"x"
    )


def test_envelopes_bind_their_identity_and_detect_tampering() -> None:
    ring = EncryptionKeys.generate("k1")
    sealed = ring.seal(b"hello", row_aad("memory", "u1", "m1"))
    assert ring.open(sealed, row_aad("memory", "u1", "m1"), row="r") == b"hello"
    # Length-prefixed parts: ("u1", "m1") and ("u1m", "1") are different identities.
    for aad in (row_aad("memory", "u2", "m1"), row_aad("memory", "u1m", "1")):
        with pytest.raises(DecryptionError):
            ring.open(sealed, aad, row="r")
    flipped = bytearray(sealed)
    flipped[-1] ^= 1
    with pytest.raises(DecryptionError):
        ring.open(bytes(flipped), row_aad("memory", "u1", "m1"), row="r")
    with pytest.raises(DecryptionError, match="truncated"):
        ring.open(sealed[:12], row_aad("memory", "u1", "m1"), row="r")
    with pytest.raises(PlaintextRowError):
        ring.open(b"hello", row_aad("memory", "u1", "m1"), row="r")
    # Fresh nonce each time: the same plaintext never seals to the same bytes.
    assert ring.seal(b"hello", b"a") != ring.seal(b"hello", b"a")


def test_a_saver_refuses_an_encryption_value_that_is_not_a_keyring(tmp_path: Path) -> None:
    from langgraph_memory.session import SqliteSaver

    with (
        pytest.raises(ConfigurationError, match="EncryptionKeys"),
        SqliteSaver.from_conn_string(
            str(tmp_path / "x.db"),
            encryption=b"0" * 32,  # type: ignore[arg-type]
        ),
    ):
        pass


# ------------------------------------------------------------------ long-term memory values

MEMORY = "alice keeps her spare key under the BLUEHERON mat"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_opener(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """Opens a store on one location (embedded Chroma + a SQLite or Postgres
    catalog), and runs SQL on its catalog."""
    import chromadb
    from chromadb.config import Settings

    from langgraph_memory.embeddings import HashingEmbeddings
    from langgraph_memory.longterm import ChromaMemoryStore

    dsn = request.getfixturevalue("pg_dsn") if request.param == "postgres" else None
    catalog_file = tmp_path / "catalog.sqlite3"

    class Opener:
        postgres = dsn is not None

        def open(self, **kwargs: Any) -> Any:
            client = chromadb.PersistentClient(
                path=str(tmp_path / "chroma"), settings=Settings(anonymized_telemetry=False)
            )
            where: dict[str, Any] = (
                {"catalog": dsn} if dsn else {"keyword_index_path": catalog_file}
            )
            return ChromaMemoryStore(
                client=client, embeddings=HashingEmbeddings(dimensions=32), **where, **kwargs
            )

        def run(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
            if dsn:
                with psycopg.connect(dsn, autocommit=True) as conn:
                    cur = conn.execute(sql.replace("?", "%s"), params)
                    return cur.fetchall() if cur.description else []
            conn = sqlite3.connect(catalog_file, isolation_level=None)
            try:
                return conn.execute(sql, params).fetchall()
            finally:
                conn.close()

    return Opener()


def test_memory_values_are_sealed_and_bound_to_their_user(store_opener: Any) -> None:
    from langgraph_memory.types import MemoryRecord

    keys = EncryptionKeys.generate("k1")
    store = store_opener.open(encryption=keys)
    try:
        store.put(("memories", "alice"), "spare-key", {"text": MEMORY})
        store.put(("memories", "bob"), "note", {"text": "bob likes chess"})
        saved = store.put_memory(MemoryRecord(user_id="alice", text="alice drinks OOLONG tea"))
        assert store.get(("memories", "alice"), "spare-key").value == {"text": MEMORY}
        assert store.get_memory("alice", saved.id).text == "alice drinks OOLONG tea"
        found = store.search(("memories", "alice"), query="spare key mat")
        assert found[0].key == "spare-key"
        with pytest.raises(InvalidFilterError, match="seals"):
            store.search(("memories", "alice"), filter={"text": MEMORY})
    finally:
        store.close()
    values = [r[0] for r in store_opener.run("SELECT value FROM lt_items")]
    assert values and all(v.startswith("lgme1:") for v in values)
    assert not any("BLUEHERON" in v or "OOLONG" in v for v in values)
    # Alice's sealed value copied over Bob's row: it does not open as Bob's.
    (alice,) = store_opener.run(
        "SELECT value FROM lt_items WHERE partition = 'alice' AND key = 'spare-key'"
    )[0]
    store_opener.run("UPDATE lt_items SET value = ? WHERE partition = 'bob'", (alice,))
    store = store_opener.open(encryption=keys)
    try:
        with pytest.raises(DecryptionError, match="user='bob'") as info:
            store.get(("memories", "bob"), "note")
        assert "BLUEHERON" not in str(info.value)
        assert store.get(("memories", "alice"), "spare-key").value == {"text": MEMORY}
    finally:
        store.close()


def test_memory_values_fail_closed_in_clear_and_rotate(store_opener: Any) -> None:
    store = store_opener.open()
    try:
        store.put(("memories", "alice"), "old", {"text": MEMORY})
    finally:
        store.close()
    keys = EncryptionKeys.generate("k1")
    store = store_opener.open(encryption=keys)
    try:
        with pytest.raises(PlaintextRowError):
            store.get(("memories", "alice"), "old")
        with pytest.raises(PlaintextRowError):
            store.reencrypt()
        assert store.reencrypt(encrypt_plaintext=True).rewritten == 1
        store.put(("memories", "alice"), "new", {"text": "second"})
    finally:
        store.close()
    rotated = keys.rotated("k2")
    store = store_opener.open(encryption=rotated)
    try:
        assert store.get(("memories", "alice"), "old").value == {"text": MEMORY}
        report = store.reencrypt(batch_size=1)
        assert (report.scanned, report.rewritten) == (2, 2)
        assert store.reencrypt().rewritten == 0
    finally:
        store.close()
    store = store_opener.open(encryption=rotated.without("k1"))
    try:
        assert store.get(("memories", "alice"), "new").value == {"text": "second"}
    finally:
        store.close()
    store = store_opener.open()
    try:
        with pytest.raises(DecryptionError, match="without encryption="):
            store.get(("memories", "alice"), "old")
    finally:
        store.close()


def test_the_encryption_module_docstring_examples_run() -> None:
    import doctest

    import langgraph_memory.encryption

    result = doctest.testmod(langgraph_memory.encryption)
    assert result.attempted > 0 and result.failed == 0
