"""Every SQL statement the SQLite savers run, as named constants.

The sync (``sqlite3``) and async (``aiosqlite``) shells only execute these; the
pure core in ``_core.py`` decides which one to run with which parameters. A
Postgres dialect mirrors this module name for name (``_sql_postgres.py``).

Tables (all prefixed ``lgm_`` so the file can sit next to the official saver's
``checkpoints``/``writes`` tables without clashing):

* ``lgm_threads``         one row per thread: activity time, puts since the last
  retention pass, and the tombstone (``deleted_at``) that keeps a deleted thread deleted.
* ``lgm_checkpoints``     the checkpoint without its channel values, metadata as JSON.
* ``lgm_channel_values``  one row per (thread, ns, channel, version): a whole value,
  a list stored as ``ranges`` over ``lgm_channel_chunks``, or "empty".
* ``lgm_channel_chunks``  list items (messages), each stored once: one row per
  run of items a ``put`` added, covering item numbers ``[seq_lo, seq_hi)``.
* ``lgm_writes``          pending writes, as in LangGraph's own savers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import partial
from typing import Any

from langgraph_memory.errors import InvalidFilterError
from langgraph_memory.session._channels import MAX_CHUNK_ITEMS
from langgraph_memory.session._list_where import build_list_where

DIALECT = "sqlite"
# One writer at a time for the whole file (SQLite's write lock): a put need not
# lock its thread row to serialise with other puts of that thread, so most puts
# only *read* the tombstone (see ACTIVITY_WRITE_SECONDS in _activity.py). A dialect
# without this flag (Postgres: row locks) writes the thread row on every put.
SINGLE_WRITER = True

# ------------------------------------------------------------------ connection

# Applied to every connection we use. `synchronous=NORMAL` in WAL mode never
# fsyncs on commit, yet a committed transaction survives a killed *process*
# (the WAL is in the OS page cache); only an OS crash/power loss can drop the
# last commits. `busy_timeout` makes SQLite itself wait for the write lock
# before we ever see SQLITE_BUSY. `wal_autocheckpoint`: the commit that
# crosses it copies the WAL into the database and fsyncs both, stalling every
# queued writer; at SQLite's default (1000 pages) a chat workload pays that
# every ~50 turns, and copies the same hot b-tree pages again each time.
# 8000 pages (32 MB of log) makes it rarer and dedups those pages; measured
# on 20 threads x 50 turns: total COMMIT wall time -30%, same CPU.
# `journal_size_limit`: SQLite never shrinks the WAL file by itself; it reuses
# it from the start after each checkpoint, so without a limit a file that
# once reached 32 MB stays 32 MB (even beside a 2.5 MB database) until the
# last connection closes. With 4 MB, every checkpoint that restarts the log
# truncates the file back to 4 MB. The log may still grow to ~32 MB between
# two checkpoints: that is the autocheckpoint interval above, kept because
# the 30% is measured; `vacuum()` or `PRAGMA wal_checkpoint(TRUNCATE)` empties
# it at once.
WAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024
CONNECTION_PRAGMAS = (
    "PRAGMA busy_timeout = {busy_timeout_ms}",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA foreign_keys = OFF",
    "PRAGMA temp_store = MEMORY",
    "PRAGMA wal_autocheckpoint = 8000",
    f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT_BYTES}",
    # Deleted rows and freed pages are overwritten with zeros, so a deleted
    # thread's text does not linger in free pages until vacuum() (issue 18).
    # A chat turn only inserts, so puts pay nothing measurable (quick benchmark,
    # 2026-12-01, load 8: 12.7 vs 12.6 CPU ms/turn); delete_thread, which also
    # truncates the WAL, takes ~35 ms instead of ~2.5 ms for a 10-turn thread.
    "PRAGMA secure_delete = ON",
)
SET_WAL = "PRAGMA journal_mode = WAL"
# Lets `vacuum()` give pages back without rewriting the whole file. Only takes
# effect on a fresh file (or after a full VACUUM), so setup() sets it first.
SET_AUTO_VACUUM_INCREMENTAL = "PRAGMA auto_vacuum = INCREMENTAL"
GET_AUTO_VACUUM = "PRAGMA auto_vacuum"

BEGIN_WRITE = "BEGIN IMMEDIATE"
BEGIN_READ = "BEGIN"
COMMIT = "COMMIT"
ROLLBACK = "ROLLBACK"

# ------------------------------------------------------------------ migrations

CREATE_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS lgm_schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
)"""
SELECT_APPLIED_MIGRATIONS = "SELECT version FROM lgm_schema_migrations ORDER BY version"
# Before the first migration: does the file hold the official saver's tables
# and none of ours? (setup then warns and names the migrate command.)
SELECT_TABLE_NAMES = "SELECT name FROM sqlite_master WHERE type = 'table'"
INSERT_APPLIED_MIGRATION = (
    "INSERT INTO lgm_schema_migrations (version, name, applied_at) VALUES (?, ?, ?)"
)

# (version, name, statements). Append only; never edit a released migration.
# The message of every refusal of a one-statement write (see "one-statement
# writes" below): the shell then runs the core's transaction instead.
FAST_PATH_REFUSED = "lgm: fast path refused"
_REFUSE_IF_TOMBSTONED = f"""SELECT RAISE(ABORT, '{FAST_PATH_REFUSED}') FROM lgm_threads
                WHERE thread_id = NEW.thread_id AND deleted_at IS NOT NULL;"""


def _write_trigger(kind: str, on_conflict: str) -> str:
    """The trigger storing a pending write of ``kind`` (``put_writes``): 'write'
    keeps the first write of a (task, idx), 'write_replace' (special channels
    such as errors and interrupts) the last; a tombstone refuses both."""
    return f"""
            CREATE TRIGGER lgm_write_rows_{kind} INSTEAD OF INSERT ON lgm_write_rows
            WHEN NEW.kind = '{kind}'
            BEGIN
                {_REFUSE_IF_TOMBSTONED}
                INSERT OR {on_conflict} INTO lgm_writes
                    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx,
                     channel, type, value)
                VALUES (NEW.thread_id, NEW.checkpoint_ns, NEW.version, NEW.ref, NEW.text,
                        NEW.lo, NEW.key, NEW.type, NEW.value);
            END"""


MIGRATIONS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (
        1,
        "initial tables",
        (
            """
            CREATE TABLE lgm_threads (
                thread_id TEXT PRIMARY KEY,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                puts_since_retention INTEGER NOT NULL DEFAULT 0,
                deleted_at REAL
            )""",
            """
            CREATE TABLE lgm_checkpoints (
                thread_id TEXT NOT NULL,
                checkpoint_ns TEXT NOT NULL DEFAULT '',
                checkpoint_id TEXT NOT NULL,
                parent_checkpoint_id TEXT,
                run_id TEXT,
                type TEXT NOT NULL,
                checkpoint BLOB NOT NULL,
                metadata TEXT NOT NULL,
                PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
            )""",
            "CREATE INDEX lgm_checkpoints_by_run ON lgm_checkpoints (run_id) "
            "WHERE run_id IS NOT NULL",
            """
            CREATE TABLE lgm_channel_values (
                thread_id TEXT NOT NULL,
                checkpoint_ns TEXT NOT NULL,
                channel TEXT NOT NULL,
                version TEXT NOT NULL,
                encoding TEXT NOT NULL,
                type TEXT,
                value BLOB,
                ranges TEXT,
                PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
            )""",
            """
            CREATE TABLE lgm_channel_chunks (
                thread_id TEXT NOT NULL,
                checkpoint_ns TEXT NOT NULL,
                channel TEXT NOT NULL,
                seq_lo INTEGER NOT NULL,
                seq_hi INTEGER NOT NULL,
                type TEXT NOT NULL,
                value BLOB NOT NULL,
                PRIMARY KEY (thread_id, checkpoint_ns, channel, seq_lo)
            )""",
            """
            CREATE TABLE lgm_writes (
                thread_id TEXT NOT NULL,
                checkpoint_ns TEXT NOT NULL DEFAULT '',
                checkpoint_id TEXT NOT NULL,
                task_id TEXT NOT NULL,
                task_path TEXT NOT NULL DEFAULT '',
                idx INTEGER NOT NULL,
                channel TEXT NOT NULL,
                type TEXT,
                value BLOB,
                PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
            )""",
        ),
    ),
    (
        2,
        "one-statement writes (lgm_write_rows)",
        (
            # See "one-statement writes" below: a view nothing is stored in,
            # whose INSTEAD OF triggers store each row by its `kind`.
            """
            CREATE VIEW lgm_write_rows AS SELECT
                NULL AS kind, NULL AS thread_id, NULL AS checkpoint_ns, NULL AS key,
                NULL AS version, NULL AS type, NULL AS value, NULL AS text, NULL AS ref,
                NULL AS lo, NULL AS hi
            WHERE 0""",
            # 'thread' (lo: now): touch the activity row; a tombstone refuses.
            f"""
            CREATE TRIGGER lgm_write_rows_thread INSTEAD OF INSERT ON lgm_write_rows
            WHEN NEW.kind = 'thread'
            BEGIN
                {_REFUSE_IF_TOMBSTONED}
                INSERT INTO lgm_threads (thread_id, created_at, updated_at, puts_since_retention)
                VALUES (NEW.thread_id, NEW.lo, NEW.lo, 1)
                ON CONFLICT (thread_id) DO UPDATE SET
                    updated_at = excluded.updated_at,
                    puts_since_retention = lgm_threads.puts_since_retention + 1;
            END""",
            # 'value' (key: channel): a whole value; first writer wins.
            """
            CREATE TRIGGER lgm_write_rows_value INSTEAD OF INSERT ON lgm_write_rows
            WHEN NEW.kind = 'value'
            BEGIN
                INSERT OR IGNORE INTO lgm_channel_values
                    (thread_id, checkpoint_ns, channel, version, encoding, type, value, ranges)
                VALUES (NEW.thread_id, NEW.checkpoint_ns, NEW.key, NEW.version, 'value',
                        NEW.type, NEW.value, NULL);
            END""",
            # 'list' (key: channel, text: ranges, ref: base version, lo: the first
            # new item number the caller assumed, NULL without new items): refused
            # unless the base is still stored, the next item number is `lo`, and
            # this version is not stored yet; the core handles those cases.
            f"""
            CREATE TRIGGER lgm_write_rows_list INSTEAD OF INSERT ON lgm_write_rows
            WHEN NEW.kind = 'list'
            BEGIN
                SELECT RAISE(ABORT, '{FAST_PATH_REFUSED}')
                WHERE (NEW.ref IS NOT NULL AND NOT EXISTS (
                        SELECT 1 FROM lgm_channel_values
                        WHERE thread_id = NEW.thread_id AND checkpoint_ns = NEW.checkpoint_ns
                          AND channel = NEW.key AND version = NEW.ref))
                   OR (NEW.lo IS NOT NULL AND NEW.lo IS NOT COALESCE((
                        SELECT seq_hi FROM lgm_channel_chunks
                        WHERE thread_id = NEW.thread_id AND checkpoint_ns = NEW.checkpoint_ns
                          AND channel = NEW.key
                        ORDER BY seq_lo DESC LIMIT 1), 0))
                   OR EXISTS (
                        SELECT 1 FROM lgm_channel_values
                        WHERE thread_id = NEW.thread_id AND checkpoint_ns = NEW.checkpoint_ns
                          AND channel = NEW.key AND version = NEW.version);
                INSERT INTO lgm_channel_values
                    (thread_id, checkpoint_ns, channel, version, encoding, type, value, ranges)
                VALUES (NEW.thread_id, NEW.checkpoint_ns, NEW.key, NEW.version, 'items',
                        NULL, NULL, NEW.text);
            END""",
            # 'chunk' (key: channel, lo/hi: item numbers).
            """
            CREATE TRIGGER lgm_write_rows_chunk INSTEAD OF INSERT ON lgm_write_rows
            WHEN NEW.kind = 'chunk'
            BEGIN
                INSERT INTO lgm_channel_chunks
                    (thread_id, checkpoint_ns, channel, seq_lo, seq_hi, type, value)
                VALUES (NEW.thread_id, NEW.checkpoint_ns, NEW.key, NEW.lo, NEW.hi,
                        NEW.type, NEW.value);
            END""",
            # 'checkpoint' (key: id, version: parent id, ref: run id, value: body,
            # text: metadata); a tombstone refuses.
            f"""
            CREATE TRIGGER lgm_write_rows_checkpoint INSTEAD OF INSERT ON lgm_write_rows
            WHEN NEW.kind = 'checkpoint'
            BEGIN
                {_REFUSE_IF_TOMBSTONED}
                INSERT OR REPLACE INTO lgm_checkpoints
                    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, run_id,
                     type, checkpoint, metadata)
                VALUES (NEW.thread_id, NEW.checkpoint_ns, NEW.key, NEW.version, NEW.ref,
                        NEW.type, NEW.value, NEW.text);
            END""",
            # 'write' / 'write_replace' (key: channel, version: checkpoint id,
            # ref: task id, text: task path, lo: idx); a tombstone refuses.
            _write_trigger("write", "IGNORE"),
            _write_trigger("write_replace", "REPLACE"),
        ),
    ),
    (
        3,
        "small scalar values inline in the checkpoint body",
        # A format change, no schema change: checkpoints now carry their small
        # scalar channel values in the body (``INLINE_VALUES_KEY``, _encoding.py)
        # instead of value rows. Recorded so that an older release, which
        # would read such a checkpoint without those values, refuses the file.
        ("SELECT 1",),
    ),
    (
        4,
        "thread owners",
        # The user a thread belongs to (session/_owner.py); NULL for threads
        # written without a user id, which stay usable by every caller.
        (
            "ALTER TABLE lgm_threads ADD COLUMN owner TEXT",
            "CREATE INDEX lgm_threads_by_owner ON lgm_threads (owner) WHERE owner IS NOT NULL",
        ),
    ),
)


# A deleted thread's id starts a fresh thread when a new run writes its first
# checkpoint (root namespace, no parent): RESTART_THREAD clears the tombstone
# and records that checkpoint's id as `reset_before`. Checkpoint ids are
# uuid6, ordered by creation time, so every checkpoint of a run that started
# before the delete sorts below it: a put whose *parent*, or a write whose
# checkpoint, is older than `reset_before` is a late write of the thread's
# previous life and is refused, as the tombstone refused it. The same probe
# of the thread row the tombstone check already makes; no extra statement.
def _refuse_if_deleted_or_older(checkpoint: str) -> str:
    return f"""SELECT RAISE(ABORT, '{FAST_PATH_REFUSED}') FROM lgm_threads
                WHERE thread_id = NEW.thread_id
                  AND (deleted_at IS NOT NULL OR {checkpoint} < reset_before);"""


def _restart_write_trigger(kind: str, on_conflict: str) -> str:
    return _write_trigger(kind, on_conflict).replace(
        _REFUSE_IF_TOMBSTONED, _refuse_if_deleted_or_older("NEW.version")
    )


_CHECKPOINT_TRIGGER_V2 = next(
    stmt for stmt in MIGRATIONS[1][2] if "CREATE TRIGGER lgm_write_rows_checkpoint" in stmt
)
assert _CHECKPOINT_TRIGGER_V2.count(_REFUSE_IF_TOMBSTONED) == 1

MIGRATIONS = (
    *MIGRATIONS,
    (
        5,
        "a deleted thread's id restarts fresh (lgm_threads.reset_before)",
        (
            "ALTER TABLE lgm_threads ADD COLUMN reset_before TEXT",
            "DROP TRIGGER lgm_write_rows_checkpoint",
            # 'checkpoint': NEW.version is the parent id.
            _CHECKPOINT_TRIGGER_V2.replace(
                _REFUSE_IF_TOMBSTONED, _refuse_if_deleted_or_older("NEW.version")
            ),
            "DROP TRIGGER lgm_write_rows_write",
            "DROP TRIGGER lgm_write_rows_write_replace",
            # 'write' / 'write_replace': NEW.version is the checkpoint id.
            _restart_write_trigger("write", "IGNORE"),
            _restart_write_trigger("write_replace", "REPLACE"),
        ),
    ),
)

# Deletes erase at once here (secure_delete zeroes the rows and freed pages,
# the shell truncates the WAL), so nothing is left for a later VACUUM to owe;
# the Postgres dialect records what its next VACUUM FULL owes instead.
MARK_ERASE_PENDING = None
THREAD_RELATIONS: tuple[str, ...] = ()
REWRITE_RELATIONS: tuple[str, ...] = ()

# ------------------------------------------------------------------ one-statement writes

# A put or put_writes as rows of `lgm_write_rows` (migration 2; columns per
# `kind` in the trigger comments there), all rows of a group commit in one
# INSERT: one statement is one transaction on an autocommit connection. The
# triggers RAISE(ABORT, FAST_PATH_REFUSED) wherever the core would branch on what
# it reads; the statement is then rolled back and the core's transaction runs.
_WRITE_ROW = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_INSERT_WRITE_ROWS = (
    "INSERT INTO lgm_write_rows "
    "(kind, thread_id, checkpoint_ns, key, version, type, value, text, ref, lo, hi) VALUES "
)


def insert_write_rows(count: int) -> str:
    """One INSERT of ``count`` rows into ``lgm_write_rows``."""
    return _INSERT_WRITE_ROWS + ", ".join([_WRITE_ROW] * count)


# ------------------------------------------------------------------ threads / tombstones

# One statement both touches the thread and refuses a tombstoned one: the
# DO UPDATE is skipped when `deleted_at` is set, so RETURNING yields no row.
# The last two parameters: the put's parent id (see migration 5's reset_before).
UPSERT_THREAD_ON_PUT = """
INSERT INTO lgm_threads (thread_id, created_at, updated_at, puts_since_retention)
VALUES (?, ?, ?, 1)
ON CONFLICT (thread_id) DO UPDATE SET
    updated_at = excluded.updated_at,
    puts_since_retention = lgm_threads.puts_since_retention + 1
WHERE lgm_threads.deleted_at IS NULL
  AND (? IS NULL OR lgm_threads.reset_before IS NULL OR ? >= lgm_threads.reset_before)
RETURNING puts_since_retention"""
UPSERT_THREAD_ON_WRITES = """
INSERT INTO lgm_threads (thread_id, created_at, updated_at, puts_since_retention)
VALUES (?, ?, ?, 0)
ON CONFLICT (thread_id) DO UPDATE SET updated_at = excluded.updated_at
WHERE lgm_threads.deleted_at IS NULL
RETURNING puts_since_retention"""
RESET_RETENTION_COUNTER = "UPDATE lgm_threads SET puts_since_retention = 0 WHERE thread_id = ?"
SELECT_TOMBSTONE = (
    "SELECT deleted_at FROM lgm_threads WHERE thread_id = ? AND deleted_at IS NOT NULL"
)
TOMBSTONE_THREAD = """
INSERT INTO lgm_threads (thread_id, created_at, updated_at, puts_since_retention, deleted_at)
VALUES (?, ?, ?, 0, ?)
ON CONFLICT (thread_id) DO UPDATE SET deleted_at = excluded.deleted_at, owner = NULL"""
CLEAR_TOMBSTONE = "UPDATE lgm_threads SET deleted_at = NULL WHERE thread_id = ?"
# A new run's first checkpoint on a deleted thread (migration 5): live again,
# with nothing of its previous life accepted (parameters: checkpoint id, now, thread id).
RESTART_THREAD = """
UPDATE lgm_threads SET deleted_at = NULL, reset_before = ?, updated_at = ?,
    puts_since_retention = 0
WHERE thread_id = ? AND deleted_at IS NOT NULL
RETURNING thread_id"""
# Whether writes to this checkpoint are refused: the thread is deleted, or
# restarted after the checkpoint (parameters: thread id, checkpoint id).
SELECT_WRITES_REFUSED = """
SELECT 1 FROM lgm_threads
WHERE thread_id = ? AND (deleted_at IS NOT NULL OR ? < reset_before)"""
# Thread ownership (migration 4): a write claims an unowned live thread; a
# tombstoned one stays unowned (its put is refused anyway).
CLAIM_THREAD_OWNER = """
INSERT INTO lgm_threads (thread_id, created_at, updated_at, puts_since_retention, owner)
VALUES (?, ?, ?, 0, ?)
ON CONFLICT (thread_id) DO UPDATE SET owner = excluded.owner
WHERE lgm_threads.owner IS NULL AND lgm_threads.deleted_at IS NULL"""
SELECT_THREAD_OWNER = "SELECT owner FROM lgm_threads WHERE thread_id = ?"
SELECT_OWNED_THREADS = (
    "SELECT thread_id FROM lgm_threads WHERE owner = ? AND deleted_at IS NULL ORDER BY thread_id"
)
SELECT_THREAD_ACTIVITY = """
SELECT thread_id, updated_at FROM lgm_threads
WHERE deleted_at IS NULL ORDER BY updated_at"""
SELECT_IDLE_THREADS = """
SELECT thread_id, updated_at FROM lgm_threads
WHERE deleted_at IS NULL AND updated_at < ? ORDER BY updated_at"""

# ------------------------------------------------------------------ put

INSERT_CHECKPOINT = """
INSERT OR REPLACE INTO lgm_checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, run_id, type, checkpoint, metadata)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)"""
# The same, unless the thread is tombstoned or restarted after the parent
# (last parameters: the thread id, the parent id): no row is stored then, and
# the put is refused and rolled back.
INSERT_CHECKPOINT_IF_LIVE = """
INSERT OR REPLACE INTO lgm_checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, run_id, type, checkpoint, metadata)
SELECT ?, ?, ?, ?, ?, ?, ?, ?
WHERE NOT EXISTS (SELECT 1 FROM lgm_threads
                  WHERE thread_id = ? AND (deleted_at IS NOT NULL OR ? < reset_before))"""
# First writer wins for a (channel, version): a version names one value.
INSERT_CHANNEL_VALUE = """
INSERT OR IGNORE INTO lgm_channel_values
    (thread_id, checkpoint_ns, channel, version, encoding, type, value, ranges)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)"""
# Chunks never overlap, so the last chunk by seq_lo ends highest: one index
# probe instead of MAX(seq_hi) over every chunk of the channel.
SELECT_NEXT_ITEM_SEQ = """
SELECT COALESCE((
    SELECT seq_hi FROM lgm_channel_chunks
    WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ?
    ORDER BY seq_lo DESC LIMIT 1
), 0)"""
# An append to a stored list needs both answers; one statement, not two
# (a put appends to `messages` twice per turn).
SELECT_BASE_EXISTS_AND_NEXT_ITEM_SEQ = """
SELECT EXISTS (
    SELECT 1 FROM lgm_channel_values
    WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? AND version = ?
), COALESCE((
    SELECT seq_hi FROM lgm_channel_chunks
    WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ?
    ORDER BY seq_lo DESC LIMIT 1
), 0)"""
INSERT_CHUNK = """
INSERT INTO lgm_channel_chunks (thread_id, checkpoint_ns, channel, seq_lo, seq_hi, type, value)
VALUES (?, ?, ?, ?, ?, ?, ?)"""

# ------------------------------------------------------------------ writes

UPSERT_WRITE = """
INSERT OR REPLACE INTO lgm_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"""
INSERT_WRITE_IF_ABSENT = """
INSERT OR IGNORE INTO lgm_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"""

# The same two, storing nothing for a tombstoned thread or one restarted after
# the checkpoint (last parameters: the thread id, the checkpoint id), so a
# write needs no separate tombstone read.
_UNLESS_DELETED = (
    "WHERE NOT EXISTS (SELECT 1 FROM lgm_threads WHERE thread_id = ? "
    "AND (deleted_at IS NOT NULL OR ? < reset_before))"
)
UPSERT_WRITE_IF_LIVE = f"""
INSERT OR REPLACE INTO lgm_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)
SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? {_UNLESS_DELETED}"""
INSERT_WRITE_IF_ABSENT_IF_LIVE = f"""
INSERT OR IGNORE INTO lgm_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)
SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? {_UNLESS_DELETED}"""

# ------------------------------------------------------------------ reads

_CHECKPOINT_COLUMNS = (
    "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"
)
SELECT_CHECKPOINT_BY_ID = f"""
SELECT {_CHECKPOINT_COLUMNS} FROM lgm_checkpoints
WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"""
SELECT_LATEST_CHECKPOINT = f"""
SELECT {_CHECKPOINT_COLUMNS} FROM lgm_checkpoints
WHERE thread_id = ? AND checkpoint_ns = ?
ORDER BY checkpoint_id DESC LIMIT 1"""
# `{where}` is built by `list_where()` below from validated pieces only.
SELECT_CHECKPOINT_PAGE = f"""
SELECT {_CHECKPOINT_COLUMNS} FROM lgm_checkpoints
{{where}}
ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC
LIMIT ?"""

# Channel values of one (thread, ns) for a JSON array of [channel, version] pairs.
# Every json_each join is a CROSS JOIN: it pins the (small) JSON list as the
# outer loop, so each element is one primary-key lookup; without it SQLite may
# scan the whole thread once per element.
SELECT_CHANNEL_VALUES = """
SELECT cv.channel, cv.version, cv.encoding, cv.type, cv.value, cv.ranges
FROM json_each(?) AS j
CROSS JOIN lgm_channel_values AS cv
  ON cv.thread_id = ? AND cv.checkpoint_ns = ?
 AND cv.channel = json_extract(j.value, '$[0]') AND cv.version = json_extract(j.value, '$[1]')"""
# Same pairs, encodings only (the DeltaChannel walk asks "is a value stored here?").
SELECT_CHANNEL_ENCODINGS = """
SELECT cv.channel, cv.version, cv.encoding
FROM json_each(?) AS j
CROSS JOIN lgm_channel_values AS cv
  ON cv.thread_id = ? AND cv.checkpoint_ns = ?
 AND cv.channel = json_extract(j.value, '$[0]') AND cv.version = json_extract(j.value, '$[1]')"""
# Chunks of one channel overlapping item numbers [lo, hi) (params: thread, ns,
# channel, hi, lo). A chunk holds at most MAX_CHUNK_ITEMS items, so one that
# reaches item `lo` starts after lo - MAX_CHUNK_ITEMS: that bound keeps the index
# scan to the wanted range even when old items before it were trimmed away.
SELECT_CHUNKS = f"""
SELECT seq_lo, seq_hi, type, value FROM lgm_channel_chunks
WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND channel = ?3
  AND seq_lo < ?4 AND seq_hi > ?5 AND seq_lo > ?5 - {MAX_CHUNK_ITEMS}
ORDER BY seq_lo"""

SELECT_WRITES = """
SELECT task_id, channel, type, value, task_path, idx FROM lgm_writes
WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"""
# Writes of several checkpoints of one (thread, ns): JSON array of checkpoint ids.
SELECT_WRITES_FOR_CHECKPOINTS = """
SELECT w.checkpoint_id, w.task_id, w.channel, w.type, w.value, w.task_path, w.idx
FROM json_each(?) AS j
CROSS JOIN lgm_writes AS w
  ON w.thread_id = ? AND w.checkpoint_ns = ? AND w.checkpoint_id = j.value"""

# Ancestors of a checkpoint, nearest first, following parent ids (not id order:
# ids are only monotonic within one process). CROSS JOIN pins `chain` as the
# outer loop so each step is one primary-key lookup. `depth` stops a cycle
# created by re-putting an existing id.
SELECT_ANCESTORS = """
WITH RECURSIVE chain(checkpoint_id, parent_checkpoint_id, type, checkpoint, depth) AS (
    SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, 0
    FROM lgm_checkpoints
    WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?
    UNION ALL
    SELECT c.checkpoint_id, c.parent_checkpoint_id, c.type, c.checkpoint, chain.depth + 1
    FROM chain CROSS JOIN lgm_checkpoints AS c
      ON c.thread_id = ? AND c.checkpoint_ns = ? AND c.checkpoint_id = chain.parent_checkpoint_id
    WHERE chain.depth < ?
)
SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint FROM chain"""

# ------------------------------------------------------------------ deletion, copy, retention

SELECT_THREAD_NAMESPACES = "SELECT DISTINCT checkpoint_ns FROM lgm_checkpoints WHERE thread_id = ?"
DELETE_THREAD_CHECKPOINTS = "DELETE FROM lgm_checkpoints WHERE thread_id = ?"
DELETE_THREAD_WRITES = "DELETE FROM lgm_writes WHERE thread_id = ?"
DELETE_THREAD_CHANNEL_VALUES = "DELETE FROM lgm_channel_values WHERE thread_id = ?"
DELETE_THREAD_CHUNKS = "DELETE FROM lgm_channel_chunks WHERE thread_id = ?"

SELECT_CHECKPOINTS_FOR_RUNS = """
SELECT DISTINCT c.thread_id, c.checkpoint_ns, c.checkpoint_id
FROM json_each(?) AS j CROSS JOIN lgm_checkpoints AS c ON c.run_id = j.value"""
DELETE_CHECKPOINT = """
DELETE FROM lgm_checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"""
DELETE_CHECKPOINT_WRITES = """
DELETE FROM lgm_writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"""

# Checkpoint skeletons of a (thread, ns), newest first: what retention plans over.
SELECT_NAMESPACE_CHECKPOINTS = """
SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM lgm_checkpoints
WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC"""
SELECT_NAMESPACE_CHANNEL_VALUES = """
SELECT channel, version, encoding, ranges FROM lgm_channel_values
WHERE thread_id = ? AND checkpoint_ns = ?"""
DELETE_CHANNEL_VALUE = """
DELETE FROM lgm_channel_values
WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? AND version = ?"""
# Chunks lying wholly inside [lo, hi), in order (compaction of a completed block).
SELECT_CHUNKS_IN_SPAN = """
SELECT seq_lo, seq_hi, type, value FROM lgm_channel_chunks
WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? AND seq_lo >= ? AND seq_hi <= ?
ORDER BY seq_lo"""
# Chunks lying wholly inside a gap no kept version references.
DELETE_CHUNKS_IN_GAP = """
DELETE FROM lgm_channel_chunks
WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? AND seq_lo >= ? AND seq_hi <= ?"""
SELECT_CHUNK_CHANNELS = """
SELECT DISTINCT channel FROM lgm_channel_chunks WHERE thread_id = ? AND checkpoint_ns = ?"""
DELETE_CHANNEL_CHUNKS = """
DELETE FROM lgm_channel_chunks WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ?"""

COPY_CHECKPOINTS = """
INSERT OR REPLACE INTO lgm_checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, run_id, type, checkpoint, metadata)
SELECT ?, checkpoint_ns, checkpoint_id, parent_checkpoint_id, run_id, type, checkpoint, metadata
FROM lgm_checkpoints WHERE thread_id = ?"""
COPY_WRITES = """
INSERT OR REPLACE INTO lgm_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)
SELECT ?, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value
FROM lgm_writes WHERE thread_id = ?"""
COPY_CHANNEL_VALUES = """
INSERT OR IGNORE INTO lgm_channel_values
    (thread_id, checkpoint_ns, channel, version, encoding, type, value, ranges)
SELECT ?, checkpoint_ns, channel, version, encoding, type, value, ranges
FROM lgm_channel_values WHERE thread_id = ?"""
COPY_CHUNKS = """
INSERT OR IGNORE INTO lgm_channel_chunks
    (thread_id, checkpoint_ns, channel, seq_lo, seq_hi, type, value)
SELECT ?, checkpoint_ns, channel, seq_lo, seq_hi, type, value
FROM lgm_channel_chunks WHERE thread_id = ?"""

# ------------------------------------------------------------------ encryption: reseal
# ``reencrypt()`` (key rotation) and ``copy_thread`` with ``encryption=`` read a
# thread's sealed rows and write them back under the current key and, for a
# copy, the target's identity (session/_sealing.py binds rows to their thread).

# Every thread holding a row in any table, in id order after a cursor (paging).
SELECT_THREADS_WITH_ROWS_AFTER = """
SELECT thread_id FROM (
    SELECT thread_id FROM lgm_checkpoints
    UNION SELECT thread_id FROM lgm_writes
    UNION SELECT thread_id FROM lgm_channel_values
    UNION SELECT thread_id FROM lgm_channel_chunks
) AS t WHERE thread_id > ? ORDER BY thread_id LIMIT ?"""
SELECT_THREAD_CHECKPOINT_BLOBS = """
SELECT checkpoint_ns, checkpoint_id, type, checkpoint, metadata FROM lgm_checkpoints
WHERE thread_id = ?"""
UPDATE_CHECKPOINT_BLOB = """
UPDATE lgm_checkpoints SET type = ?, checkpoint = ?, metadata = ?
WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"""
SELECT_THREAD_VALUE_BLOBS = """
SELECT checkpoint_ns, channel, version, type, value FROM lgm_channel_values
WHERE thread_id = ? AND value IS NOT NULL"""
UPDATE_VALUE_BLOB = """
UPDATE lgm_channel_values SET type = ?, value = ?
WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? AND version = ?"""
SELECT_THREAD_CHUNK_BLOBS = """
SELECT checkpoint_ns, channel, seq_lo, type, value FROM lgm_channel_chunks
WHERE thread_id = ?"""
UPDATE_CHUNK_BLOB = """
UPDATE lgm_channel_chunks SET type = ?, value = ?
WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? AND seq_lo = ?"""
SELECT_THREAD_WRITE_BLOBS = """
SELECT checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value FROM lgm_writes
WHERE thread_id = ? AND value IS NOT NULL"""
UPDATE_WRITE_BLOB = """
UPDATE lgm_writes SET type = ?, value = ?
WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? AND task_id = ? AND idx = ?"""

# ------------------------------------------------------------------ stats, vacuum

SELECT_DB_SIZE = "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()"
SELECT_FREE_BYTES = (
    "SELECT freelist_count * page_size FROM pragma_freelist_count(), pragma_page_size()"
)
# Bytes of stored payload per thread (what deleting the thread would free, roughly).
SELECT_THREAD_STATS = """
SELECT t.thread_id,
       (SELECT COUNT(*) FROM lgm_checkpoints c WHERE c.thread_id = t.thread_id),
       (SELECT COALESCE(SUM(LENGTH(c.checkpoint) + LENGTH(c.metadata)), 0)
          FROM lgm_checkpoints c WHERE c.thread_id = t.thread_id),
       (SELECT COALESCE(SUM(COALESCE(LENGTH(v.value), 0) + COALESCE(LENGTH(v.ranges), 0)), 0)
          FROM lgm_channel_values v WHERE v.thread_id = t.thread_id),
       (SELECT COALESCE(SUM(LENGTH(k.value)), 0)
          FROM lgm_channel_chunks k WHERE k.thread_id = t.thread_id),
       (SELECT COALESCE(SUM(COALESCE(LENGTH(w.value), 0)), 0)
          FROM lgm_writes w WHERE w.thread_id = t.thread_id),
       t.updated_at
FROM lgm_threads t
WHERE t.deleted_at IS NULL AND (? IS NULL OR t.thread_id = ?)
ORDER BY t.thread_id"""
INCREMENTAL_VACUUM = "PRAGMA incremental_vacuum;"
FULL_VACUUM = "VACUUM"
WAL_CHECKPOINT_TRUNCATE = "PRAGMA wal_checkpoint(TRUNCATE)"

# ------------------------------------------------------------------ list() WHERE builder

_FILTER_KEY = re.compile(r"^[A-Za-z0-9_.-]+$")


def metadata_predicates(metadata_filter: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
    """``json_extract`` predicates for a ``list(filter=...)`` mapping.

    Keys are checked against a strict pattern because they are spliced into a
    JSON path; values are always bound parameters.
    """
    predicates: list[str] = []
    params: list[Any] = []
    for key, value in metadata_filter.items():
        if not isinstance(key, str) or not _FILTER_KEY.match(key):
            raise InvalidFilterError(
                f"list(filter=...) key {key!r} is not allowed; use letters, digits, "
                "'_', '-' and '.' (a dot walks into nested metadata)."
            )
        path = f"$.{key}"
        if value is None:
            predicates.append(f"json_extract(metadata, '{path}') IS NULL")
            continue
        if isinstance(value, bool):
            param: Any = 1 if value else 0
        elif isinstance(value, (int, float, str)):
            param = value
        elif isinstance(value, (dict, list)):
            # json_extract returns compact JSON text for objects/arrays.
            param = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        else:
            param = str(value)
        predicates.append(f"json_extract(metadata, '{path}') = ?")
        params.append(param)
    return predicates, params


# One list() page's WHERE clause: the shared builder with this dialect's
# placeholder and metadata predicates (see ``_list_where.py``).
list_where = partial(build_list_where, "?", metadata_predicates)
