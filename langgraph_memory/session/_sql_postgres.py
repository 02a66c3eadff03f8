"""Every SQL statement the Postgres savers run, as named constants.

This module mirrors ``_sql_sqlite.py`` name for name, so the pure core in
``_core.py`` drives both dialects with the same generators and parameters;
the sync (``postgres.py``) and async (``postgres_aio.py``) shells only execute
what the core yields. Statements that exist only here (row locks, advisory
locks, ``VACUUM``) are used by the Postgres shells around the core's
transactions, never by the core itself.

Tables are the same five ``lgm_*`` tables as on SQLite (see that module's
docstring), so they sit next to the official saver's ``checkpoints`` tables
without clashing. Differences from SQLite:

* ``bytea`` for blobs, ``double precision`` for times, ``jsonb`` for metadata
  (so ``list(filter=...)`` is a path lookup, not a string parse);
* ``INSERT ... ON CONFLICT`` instead of ``INSERT OR REPLACE/IGNORE``;
* JSON array parameters are expanded with ``jsonb_array_elements``;
* no ``%`` literal appears anywhere: psycopg would read it as a placeholder.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import partial
from typing import Any

from langgraph_memory.errors import InvalidFilterError
from langgraph_memory.session._list_where import build_list_where

DIALECT = "postgres"

# Writes run in READ COMMITTED and serialise per thread on its row lock (see
# LOCK_THREAD). A read is several statements (checkpoint, values, list items,
# writes); one snapshot keeps retention committing in between from showing it
# a checkpoint whose list items are already gone.
BEGIN_WRITE = "BEGIN"
BEGIN_READ = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"
# The same, for a non-autocommit connection (psycopg has already sent BEGIN).
SET_READ_SNAPSHOT = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"
# Unless the saver is asked for synchronous commits: COMMIT returns before its
# WAL record is flushed to disk (the WAL writer flushes it within ~3 x
# wal_writer_delay, 600 ms by default). A crash of the app, a killed backend or
# a dropped connection loses nothing that was acknowledged; only a crash of the
# Postgres server or its OS can lose the last fraction of a second of commits,
# never corrupting anything. It is the trade the SQLite saver makes with
# `synchronous=NORMAL`, and it saves one fsync per checkpoint (LangGraph writes
# ~7 per turn).
SET_ASYNC_COMMIT = "SET LOCAL synchronous_commit = off"
# The same once per connection of the saver's own pool (not behind pgbouncer).
SET_SESSION_ASYNC_COMMIT = "SET synchronous_commit = off"
COMMIT = "COMMIT"
ROLLBACK = "ROLLBACK"

# ------------------------------------------------------------------ locks (Postgres shells only)

# Every instance serialises schema changes on this key, so two `setup()` calls
# on a fresh database (or a rolling deploy) apply each migration exactly once.
# Transaction-scoped: released by COMMIT/ROLLBACK, also behind pgbouncer.
MIGRATION_LOCK_KEY = 0x6C676D5F736368  # "lgm_sch"
LOCK_MIGRATIONS = "SELECT pg_advisory_xact_lock(%s)"

# Write transactions on one thread queue on its `lgm_threads` row (puts take it
# implicitly through their upsert). Holding it keeps retention in one instance
# from removing the list items another instance's put is about to reference,
# and keeps item numbers (`seq`) unique per channel without a table lock.
LOCK_THREAD = "SELECT 1 FROM lgm_threads WHERE thread_id = %s FOR UPDATE"
# The sweep skips threads another instance is writing right now; it will see
# them on its next pass.
LOCK_THREAD_SKIP_LOCKED = (
    "SELECT 1 FROM lgm_threads WHERE thread_id = %s AND deleted_at IS NULL FOR UPDATE SKIP LOCKED"
)
# Re-checks idleness under the lock: a thread that became active since the
# sweep planned (another instance just wrote to it) is not expired.
LOCK_IDLE_THREAD = (
    "SELECT 1 FROM lgm_threads WHERE thread_id = %s AND deleted_at IS NULL "
    "AND updated_at < %s FOR UPDATE SKIP LOCKED"
)

# ------------------------------------------------------------------ migrations

CREATE_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS lgm_schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
)"""
SELECT_APPLIED_MIGRATIONS = "SELECT version FROM lgm_schema_migrations ORDER BY version"
# Before the first migration: does the schema hold the official saver's tables
# and none of ours? (setup then warns and names the migrate command.)
SELECT_TABLE_NAMES = (
    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
)
INSERT_APPLIED_MIGRATION = (
    "INSERT INTO lgm_schema_migrations (version, name, applied_at) VALUES (%s, %s, %s)"
)


# lgm_put_writes and lgm_put_batch are replaced by migration 3 with small
# changes; both versions are built here from one text, so the change is the
# argument and migration 2's SQL stays exactly as released.
def _put_writes_function(declare: str, tombstone_check: str) -> str:
    """lgm_put_writes: refuse a tombstoned thread (``tombstone_check``: the
    statement and the test up to ``THEN``), then insert the task's writes;
    the first write of a (task, idx) wins."""
    return (
        """
            CREATE OR REPLACE FUNCTION lgm_put_writes(
                p_thread_id TEXT, p_ns TEXT, p_checkpoint_id TEXT, p_task_id TEXT,
                p_task_path TEXT, p_async_commit BOOLEAN, p_rows JSONB, p_blobs BYTEA[]
            ) RETURNS VOID LANGUAGE plpgsql AS $fn$
            """
        + declare
        + """BEGIN
                IF p_async_commit THEN
                    PERFORM set_config('synchronous_commit', 'off', true);
                END IF;
                """
        + tombstone_check
        + """ THEN
                    RAISE EXCEPTION USING ERRCODE = 'LGM01', MESSAGE = 'thread deleted';
                END IF;
                INSERT INTO lgm_writes
                    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel,
                     type, value)
                SELECT p_thread_id, p_ns, p_checkpoint_id, p_task_id, p_task_path,
                       (w.value->>0)::INTEGER, w.value->>1, w.value->>2,
                       p_blobs[(w.value->>3)::INTEGER]
                FROM jsonb_array_elements(p_rows) AS w
                ON CONFLICT DO NOTHING;
            END
            $fn$"""
    )


def _put_batch_function(writes_item_lock: str) -> str:
    """lgm_put_batch: the async saver's group commit (see migration 2);
    ``writes_item_lock`` runs before each writes item."""
    return (
        """
            CREATE OR REPLACE FUNCTION lgm_put_batch(
                p_items JSONB, p_blobs BYTEA[], p_async_commit BOOLEAN, p_compact_block INTEGER
            ) RETURNS JSONB LANGUAGE plpgsql AS $fn$
            DECLARE
                -- put:    ["p", thread, ns, now, id, parent, run, type, body, metadata, rows]
                -- writes: ["w", thread, ns, checkpoint, task, path, rows]
                item JSONB;
                answers JSONB := '[]'::jsonb;
                firsts BIGINT[];
            BEGIN
                IF p_async_commit THEN
                    PERFORM set_config('synchronous_commit', 'off', true);
                END IF;
                FOR item IN SELECT value FROM jsonb_array_elements(p_items) LOOP
                    BEGIN
                        IF item->>0 = 'p' THEN
                            PERFORM 1 FROM lgm_threads WHERE thread_id = item->>1
                            FOR NO KEY UPDATE NOWAIT;
                            firsts := lgm_put_checkpoint(
                                item->>1, item->>2, (item->>3)::DOUBLE PRECISION, false,
                                item->>4, item->>5, item->>6, item->>7,
                                p_blobs[(item->>8)::INTEGER], (item->>9)::JSONB, item->10,
                                p_blobs, p_compact_block);
                            answers := answers || jsonb_build_array(to_jsonb(firsts));
                        ELSE
"""
        + writes_item_lock
        + """                            PERFORM lgm_put_writes(
                                item->>1, item->>2, item->>3, item->>4, item->>5, false,
                                item->6, p_blobs);
                            answers := answers || jsonb_build_array(true);
                        END IF;
                    EXCEPTION WHEN SQLSTATE 'LGM01' OR lock_not_available THEN
                        answers := answers || jsonb_build_array(NULL::JSONB);
                    END;
                END LOOP;
                RETURN answers;
            END
            $fn$"""
    )


_PUT_WRITES_DECLARE_3 = """DECLARE
                tomb DOUBLE PRECISION;
            """


# (version, name, statements). Append only; never edit a released migration.
# No CREATE INDEX CONCURRENTLY: every migration runs inside one transaction
# with its "applied" row, which CONCURRENTLY forbids (the official saver's
# `setup()` fails inside a transaction for exactly that reason).
MIGRATIONS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (
        1,
        "initial tables",
        (
            # fillfactor leaves room on each page so the per-put update of a
            # thread's row stays a HOT update (no index write, little bloat).
            """
            CREATE TABLE lgm_threads (
                thread_id TEXT PRIMARY KEY,
                created_at DOUBLE PRECISION NOT NULL,
                updated_at DOUBLE PRECISION NOT NULL,
                puts_since_retention INTEGER NOT NULL DEFAULT 0,
                deleted_at DOUBLE PRECISION
            ) WITH (fillfactor = 70)""",
            """
            CREATE TABLE lgm_checkpoints (
                thread_id TEXT NOT NULL,
                checkpoint_ns TEXT NOT NULL DEFAULT '',
                checkpoint_id TEXT NOT NULL,
                parent_checkpoint_id TEXT,
                run_id TEXT,
                type TEXT NOT NULL,
                checkpoint BYTEA NOT NULL,
                metadata JSONB NOT NULL,
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
                value BYTEA,
                ranges TEXT,
                PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
            )""",
            """
            CREATE TABLE lgm_channel_chunks (
                thread_id TEXT NOT NULL,
                checkpoint_ns TEXT NOT NULL,
                channel TEXT NOT NULL,
                seq_lo BIGINT NOT NULL,
                seq_hi BIGINT NOT NULL,
                type TEXT NOT NULL,
                value BYTEA NOT NULL,
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
                value BYTEA,
                PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
            )""",
        ),
    ),
    (
        2,
        "one-call put and put_writes functions",
        # What a put or put_writes sends in the common case: one statement, run
        # in its own implicit transaction (no BEGIN/COMMIT, one round trip, a
        # plan cached server-side). They cover the happy path only: whenever
        # the core would branch (tombstone, a list base retention removed, a
        # version already stored, a block of list items to compact) they raise
        # FAST_PATH_REFUSED, rolling back, and the shell runs the core's own
        # transaction instead. So the core stays the one full implementation.
        (
            """
            CREATE OR REPLACE FUNCTION lgm_put_checkpoint(
                p_thread_id TEXT, p_ns TEXT, p_now DOUBLE PRECISION, p_async_commit BOOLEAN,
                p_checkpoint_id TEXT, p_parent_id TEXT, p_run_id TEXT, p_type TEXT,
                p_body BYTEA, p_metadata JSONB, p_rows JSONB, p_blobs BYTEA[],
                p_compact_block INTEGER
            ) RETURNS BIGINT[] LANGUAGE plpgsql AS $fn$
            DECLARE
                -- p_rows: {"v": [[channel, version, encoding, type, blob]],
                --          "l": [[channel, version, base, segments, new items]],
                --          "c": [[list, offset, count, type, blob]]};
                -- list and blob are 1-based positions in "l" and p_blobs.
                lst JSONB;
                first_seq BIGINT;
                firsts BIGINT[] := '{}';
                seg JSONB;
                lo BIGINT;
                hi BIGINT;
                ranges JSONB;
                last_index INTEGER;
            BEGIN
                IF p_async_commit THEN
                    PERFORM set_config('synchronous_commit', 'off', true);
                END IF;
                -- Touches the thread and takes its row lock; no row: tombstoned.
                INSERT INTO lgm_threads (thread_id, created_at, updated_at, puts_since_retention)
                VALUES (p_thread_id, p_now, p_now, 1)
                ON CONFLICT (thread_id) DO UPDATE SET
                    updated_at = excluded.updated_at,
                    puts_since_retention = lgm_threads.puts_since_retention + 1
                WHERE lgm_threads.deleted_at IS NULL;
                IF NOT FOUND THEN
                    RAISE EXCEPTION USING ERRCODE = 'LGM01', MESSAGE = 'thread deleted';
                END IF;
                FOR lst IN SELECT value FROM jsonb_array_elements(p_rows->'l') LOOP
                    IF lst->>2 IS NOT NULL AND NOT EXISTS (
                        SELECT 1 FROM lgm_channel_values
                        WHERE thread_id = p_thread_id AND checkpoint_ns = p_ns
                          AND channel = lst->>0 AND version = lst->>2
                    ) THEN
                        RAISE EXCEPTION USING ERRCODE = 'LGM01', MESSAGE = 'list base gone';
                    END IF;
                    first_seq := 0;
                    IF (lst->>4)::BIGINT > 0 THEN
                        SELECT COALESCE((
                            SELECT seq_hi FROM lgm_channel_chunks
                            WHERE thread_id = p_thread_id AND checkpoint_ns = p_ns
                              AND channel = lst->>0
                            ORDER BY seq_lo DESC LIMIT 1
                        ), 0) INTO first_seq;
                        IF first_seq / p_compact_block
                           <> (first_seq + (lst->>4)::BIGINT) / p_compact_block THEN
                            RAISE EXCEPTION USING ERRCODE = 'LGM01', MESSAGE = 'compaction due';
                        END IF;
                    END IF;
                    -- ListPlan.resolve_ranges: "old" segments are item numbers,
                    -- "new" ones offsets from first_seq; adjacent ranges merge.
                    ranges := '[]'::jsonb;
                    FOR seg IN SELECT value FROM jsonb_array_elements(lst->3) LOOP
                        lo := (seg->>1)::BIGINT;
                        hi := (seg->>2)::BIGINT;
                        IF seg->>0 = 'new' THEN
                            lo := lo + first_seq;
                            hi := hi + first_seq;
                        END IF;
                        CONTINUE WHEN hi <= lo;
                        last_index := jsonb_array_length(ranges) - 1;
                        IF last_index >= 0 AND (ranges->last_index->>1)::BIGINT = lo THEN
                            ranges := jsonb_set(ranges, ARRAY[last_index::TEXT, '1'], to_jsonb(hi));
                        ELSE
                            ranges := ranges || jsonb_build_array(jsonb_build_array(lo, hi));
                        END IF;
                    END LOOP;
                    INSERT INTO lgm_channel_values
                        (thread_id, checkpoint_ns, channel, version, encoding, type, value, ranges)
                    VALUES (p_thread_id, p_ns, lst->>0, lst->>1, 'items', NULL, NULL, ranges::TEXT)
                    ON CONFLICT DO NOTHING;
                    IF NOT FOUND THEN
                        RAISE EXCEPTION USING ERRCODE = 'LGM01', MESSAGE = 'version stored';
                    END IF;
                    firsts := firsts || first_seq;
                END LOOP;
                INSERT INTO lgm_channel_chunks
                    (thread_id, checkpoint_ns, channel, seq_lo, seq_hi, type, value)
                SELECT p_thread_id, p_ns, p_rows->'l'->((c.value->>0)::INTEGER - 1)->>0,
                       firsts[(c.value->>0)::INTEGER] + (c.value->>1)::BIGINT,
                       firsts[(c.value->>0)::INTEGER] + (c.value->>1)::BIGINT
                           + (c.value->>2)::BIGINT,
                       c.value->>3, p_blobs[(c.value->>4)::INTEGER]
                FROM jsonb_array_elements(p_rows->'c') AS c;
                INSERT INTO lgm_channel_values
                    (thread_id, checkpoint_ns, channel, version, encoding, type, value, ranges)
                SELECT p_thread_id, p_ns, v.value->>0, v.value->>1, v.value->>2, v.value->>3,
                       p_blobs[(v.value->>4)::INTEGER], NULL
                FROM jsonb_array_elements(p_rows->'v') AS v
                ON CONFLICT DO NOTHING;
                INSERT INTO lgm_checkpoints
                    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, run_id, type,
                     checkpoint, metadata)
                VALUES (p_thread_id, p_ns, p_checkpoint_id, p_parent_id, p_run_id, p_type,
                        p_body, p_metadata)
                ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
                    parent_checkpoint_id = excluded.parent_checkpoint_id,
                    run_id = excluded.run_id,
                    type = excluded.type,
                    checkpoint = excluded.checkpoint,
                    metadata = excluded.metadata;
                RETURN firsts;
            END
            $fn$""",
            # Regular (idempotent) writes only. p_rows: [[idx, channel, type, blob]],
            # blob a 1-based position in p_blobs.
            _put_writes_function(
                "",
                """-- What SELECT_TOMBSTONE does as planned (its filter runs below
                -- the row lock): only a committed tombstone is seen, and writes
                -- never wait for a put holding the thread's row.
                PERFORM 1 FROM lgm_threads
                WHERE thread_id = p_thread_id AND deleted_at IS NOT NULL FOR SHARE;
                IF FOUND""",
            ),
            # Group commit for the async saver: the puts and writes that
            # concurrent coroutines issued in the same moment, in one call and
            # one transaction. Each item runs in its own subtransaction, so one
            # refused item (its answer is null, and its caller takes the core's
            # path) does not undo the others. A put whose thread row another
            # transaction holds is refused at once (NOWAIT) rather than making
            # every other item of the batch wait behind that lock. Items come
            # sorted by thread, so two batches lock threads in the same order.
            _put_batch_function(""),
        ),
    ),
    (
        3,
        "put_writes waits for a concurrent delete_thread",
        # Migration 2's tombstone check filtered on deleted_at below its row
        # lock, so a put_writes racing an uncommitted delete_thread neither
        # waited nor saw the tombstone, and its rows outlived the delete. Now
        # the row is locked first (see SELECT_TOMBSTONE), then checked.
        (
            _put_writes_function(
                _PUT_WRITES_DECLARE_3,
                """SELECT deleted_at INTO tomb FROM lgm_threads
                WHERE thread_id = p_thread_id FOR KEY SHARE;
                IF tomb IS NOT NULL""",
            ),
            # lgm_put_batch as in migration 2, plus the NOWAIT lock on writes items.
            _put_batch_function(
                """                            -- Like a put: a row held (e.g. by delete_thread) refuses
                            -- the item instead of holding up the whole batch.
                            PERFORM 1 FROM lgm_threads WHERE thread_id = item->>1
                            FOR KEY SHARE NOWAIT;
"""
            ),
        ),
    ),
    (
        4,
        "one-call batch without per-item subtransactions",
        # lgm_put_batch pays a subtransaction, a NOWAIT lock statement and a
        # function call per item, so one refused item cannot undo the others.
        # Nearly every batch has no refused item: lgm_put_all stores the whole
        # batch with set-wise checks and inserts, or refuses all of it
        # (FAST_PATH_REFUSED, nothing stored) and the shell sends the same
        # batch to lgm_put_batch, which sorts out the refused items. Used by
        # the sync saver's put with queued writes; the async group commit
        # measured no gain with it (docs/session-storage.md).
        (
            """
            CREATE OR REPLACE FUNCTION lgm_put_all(
                p_items JSONB, p_blobs BYTEA[], p_async_commit BOOLEAN, p_compact_block INTEGER,
                p_threads JSONB
            ) RETURNS JSONB LANGUAGE plpgsql AS $fn$
            DECLARE
                -- p_items as for lgm_put_batch; so is the answer (never a null item).
                -- p_threads: [[threads with a put], [threads with writes only]].
                put_threads TEXT[];
                write_threads TEXT[];
                n_rows BIGINT;
                n_locked BIGINT;
                n_tombs BIGINT;
                item JSONB;
                answers JSONB := '[]'::jsonb;
            BEGIN
                IF p_async_commit THEN
                    PERFORM set_config('synchronous_commit', 'off', true);
                END IF;
                -- lgm_put_batch's NOWAIT without an error to catch: a row another
                -- transaction holds is skipped, so fewer rows get locked than
                -- exist (one statement, one snapshot). Only when the batch has
                -- more than one thread: a single thread's items wait for its row
                -- as its put alone does (lgm_put_checkpoint's upsert).
                IF jsonb_array_length(p_threads->0) + jsonb_array_length(p_threads->1) > 1 THEN
                    put_threads := ARRAY(SELECT jsonb_array_elements_text(p_threads->0));
                    SELECT (SELECT count(*) FROM lgm_threads WHERE thread_id = ANY(put_threads)),
                           (SELECT count(*) FROM (
                                SELECT 1 FROM lgm_threads WHERE thread_id = ANY(put_threads)
                                FOR NO KEY UPDATE SKIP LOCKED) AS l)
                    INTO n_rows, n_locked;
                    IF n_locked < n_rows THEN
                        RAISE EXCEPTION USING ERRCODE = 'LGM01', MESSAGE = 'thread locked';
                    END IF;
                END IF;
                -- Threads with writes only: the row locked, then its tombstone read
                -- (lgm_put_writes); a put refuses a tombstoned thread itself.
                IF jsonb_array_length(p_threads->1) > 0 THEN
                    write_threads := ARRAY(SELECT jsonb_array_elements_text(p_threads->1));
                    SELECT (SELECT count(*) FROM lgm_threads WHERE thread_id = ANY(write_threads)),
                           count(*), count(*) FILTER (WHERE l.deleted_at IS NOT NULL)
                    INTO n_rows, n_locked, n_tombs
                    FROM (
                        SELECT deleted_at FROM lgm_threads WHERE thread_id = ANY(write_threads)
                        FOR KEY SHARE SKIP LOCKED
                    ) AS l;
                    IF n_locked < n_rows OR n_tombs > 0 THEN
                        RAISE EXCEPTION USING ERRCODE = 'LGM01', MESSAGE = 'thread locked or deleted';
                    END IF;
                END IF;
                -- All writes in one insert, in item order: the first write of a
                -- (task, idx) wins.
                INSERT INTO lgm_writes
                    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx,
                     channel, type, value)
                SELECT i.value->>1, i.value->>2, i.value->>3, i.value->>4, i.value->>5,
                       (w.value->>0)::INTEGER, w.value->>1, w.value->>2,
                       p_blobs[(w.value->>3)::INTEGER]
                FROM jsonb_array_elements(p_items) WITH ORDINALITY AS i(value, n)
                CROSS JOIN LATERAL jsonb_array_elements(i.value->6) WITH ORDINALITY AS w(value, m)
                WHERE i.value->>0 = 'w'
                ORDER BY i.n, w.m
                ON CONFLICT DO NOTHING;
                FOR item IN SELECT value FROM jsonb_array_elements(p_items) LOOP
                    IF item->>0 = 'p' THEN
                        answers := answers || jsonb_build_array(to_jsonb(lgm_put_checkpoint(
                            item->>1, item->>2, (item->>3)::DOUBLE PRECISION, false,
                            item->>4, item->>5, item->>6, item->>7,
                            p_blobs[(item->>8)::INTEGER], (item->>9)::JSONB, item->10,
                            p_blobs, p_compact_block)));
                    ELSE
                        answers := answers || jsonb_build_array(true);
                    END IF;
                END LOOP;
                RETURN answers;
            END
            $fn$""",
        ),
    ),
    (
        5,
        "small scalar values inline in the checkpoint body",
        # A format marker, as SQLite's migration 3: older releases refuse the database.
        ("SELECT 1",),
    ),
    (
        6,
        "thread owners",
        # As SQLite's migration 4 (session/_owner.py). Adding a NULL column
        # rewrites no rows; the partial index holds owned threads only.
        (
            "ALTER TABLE lgm_threads ADD COLUMN IF NOT EXISTS owner TEXT",
            "CREATE INDEX IF NOT EXISTS lgm_threads_by_owner ON lgm_threads (owner) "
            "WHERE owner IS NOT NULL",
        ),
    ),
)


# Migration 7: a deleted thread's id restarts fresh; see _sql_sqlite.py's
# migration 5 for the rule (reset_before: the restarting run's first checkpoint
# id; an older parent or write checkpoint is a late write and refused). The
# released functions are patched, not retyped: each patch must match once.
def _released(version: int, function: str) -> str:
    statements = next(m[2] for m in MIGRATIONS if m[0] == version)
    return next(s for s in statements if f"CREATE OR REPLACE FUNCTION {function}(" in s)


def _patched(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


MIGRATIONS = (
    *MIGRATIONS,
    (
        7,
        "a deleted thread's id restarts fresh (lgm_threads.reset_before)",
        (
            "ALTER TABLE lgm_threads ADD COLUMN IF NOT EXISTS reset_before TEXT",
            _patched(
                _released(2, "lgm_put_checkpoint"),
                "WHERE lgm_threads.deleted_at IS NULL;",
                "WHERE lgm_threads.deleted_at IS NULL AND (p_parent_id IS NULL\n"
                "                    OR lgm_threads.reset_before IS NULL\n"
                "                    OR p_parent_id >= lgm_threads.reset_before);",
            ),
            _patched(
                _released(3, "lgm_put_writes"),
                "SELECT deleted_at INTO tomb FROM lgm_threads",
                "SELECT CASE WHEN p_checkpoint_id < reset_before THEN 0 ELSE deleted_at END\n"
                "                INTO tomb FROM lgm_threads",
            ),
            _patched(
                _released(4, "lgm_put_all"),
                "-- All writes in one insert, in item order",
                """-- Writes to a checkpoint older than its thread's restart: refused.
                IF EXISTS (
                    SELECT 1 FROM jsonb_array_elements(p_items) AS i
                    JOIN lgm_threads AS t ON t.thread_id = i.value->>1
                    WHERE i.value->>0 = 'w' AND i.value->>3 < t.reset_before
                ) THEN
                    RAISE EXCEPTION USING ERRCODE = 'LGM01', MESSAGE = 'thread restarted';
                END IF;
                -- All writes in one insert, in item order""",
            ),
        ),
    ),
)

# Migration 8: erasure the next VACUUM FULL owes. A DELETE (or an UPDATE that
# rewrites a value to erase a deleted memory) leaves the old row in the table's
# files as a dead tuple; VACUUM FULL takes it off the pages but locks the table
# (456 ms for a 19 MB saver), so a single delete_thread does not run it. It
# marks each relation it touched here, in its own transaction (a crash cannot
# lose the mark), and ``erase_pending()`` (the memory writer's sweep, or your
# job) rewrites only the marked tables, once for any number of deletes.
# `generation` grows with every mark: the pass clears a mark only if no delete
# marked it again while the rewrite ran.
MIGRATIONS = (
    *MIGRATIONS,
    (
        8,
        "relations holding erased rows until VACUUM FULL (lgm_erase_pending)",
        (
            """
            CREATE TABLE IF NOT EXISTS lgm_erase_pending (
                relation TEXT PRIMARY KEY,
                generation BIGINT NOT NULL,
                since DOUBLE PRECISION NOT NULL
            )""",
        ),
    ),
)
# Parameters: relation, now. `since` keeps the oldest unerased delete's time.
MARK_ERASE_PENDING = """
INSERT INTO lgm_erase_pending (relation, generation, since) VALUES (%s, 1, %s)
ON CONFLICT (relation) DO UPDATE SET generation = lgm_erase_pending.generation + 1"""
SELECT_ERASE_PENDING = "SELECT relation, generation, since FROM lgm_erase_pending ORDER BY relation"
CLEAR_ERASE_PENDING = "DELETE FROM lgm_erase_pending WHERE relation = %s AND generation = %s"
# What a thread's deletion, and a rewrite of its values, leave dead tuples in.
THREAD_RELATIONS = (
    "lgm_threads",
    "lgm_checkpoints",
    "lgm_channel_values",
    "lgm_channel_chunks",
    "lgm_writes",
)
REWRITE_RELATIONS = ("lgm_channel_values", "lgm_channel_chunks", "lgm_writes")

# The SQLSTATE the functions above raise to hand a call back to the core.
FAST_PATH_REFUSED = "LGM01"
# Blobs go as one binary bytea[] (%b: no hex escaping); everything else about
# the rows as one JSON document (psycopg's per-element array dumping costs more
# client CPU than the whole call otherwise).
CALL_PUT_CHECKPOINT = (
    "SELECT lgm_put_checkpoint(%s, %s, %s, %s, %s, %s, %s, %s, %b, %s::jsonb, %s::jsonb, "
    "%b::bytea[], %s)"
)
CALL_PUT_WRITES = "SELECT lgm_put_writes(%s, %s, %s, %s, %s, %s, %s::jsonb, %b::bytea[])"
CALL_PUT_BATCH = "SELECT lgm_put_batch(%s::jsonb, %b::bytea[], %s, %s)"
CALL_PUT_ALL = "SELECT lgm_put_all(%s::jsonb, %b::bytea[], %s, %s, %s::jsonb)"

# ------------------------------------------------------------------ threads / tombstones

# One statement both touches the thread and refuses a tombstoned one: the
# DO UPDATE is skipped when `deleted_at` is set, so RETURNING yields no row.
# It also takes the thread's row lock for the rest of the transaction.
# The last two parameters: the put's parent id (see migration 7's reset_before).
UPSERT_THREAD_ON_PUT = """
INSERT INTO lgm_threads (thread_id, created_at, updated_at, puts_since_retention)
VALUES (%s, %s, %s, 1)
ON CONFLICT (thread_id) DO UPDATE SET
    updated_at = excluded.updated_at,
    puts_since_retention = lgm_threads.puts_since_retention + 1
WHERE lgm_threads.deleted_at IS NULL
  AND (%s::text IS NULL OR lgm_threads.reset_before IS NULL
       OR %s::text >= lgm_threads.reset_before)
RETURNING puts_since_retention"""
UPSERT_THREAD_ON_WRITES = """
INSERT INTO lgm_threads (thread_id, created_at, updated_at, puts_since_retention)
VALUES (%s, %s, %s, 0)
ON CONFLICT (thread_id) DO UPDATE SET updated_at = excluded.updated_at
WHERE lgm_threads.deleted_at IS NULL
RETURNING puts_since_retention"""
RESET_RETENTION_COUNTER = "UPDATE lgm_threads SET puts_since_retention = 0 WHERE thread_id = %s"
# The row is locked before deleted_at is tested (a MATERIALIZED CTE: a
# subquery gets the outer filter pushed below its lock, and then a row whose
# tombstone is not committed yet is filtered out without waiting). FOR KEY
# SHARE waits only for delete_thread's FOR UPDATE (LOCK_THREAD), then reads the
# committed tombstone; puts (NO KEY UPDATE) and parallel writes never block it.
SELECT_TOMBSTONE = """
WITH t AS MATERIALIZED (
    SELECT deleted_at FROM lgm_threads WHERE thread_id = %s FOR KEY SHARE
)
SELECT deleted_at FROM t WHERE deleted_at IS NOT NULL"""
TOMBSTONE_THREAD = """
INSERT INTO lgm_threads (thread_id, created_at, updated_at, puts_since_retention, deleted_at)
VALUES (%s, %s, %s, 0, %s)
ON CONFLICT (thread_id) DO UPDATE SET deleted_at = excluded.deleted_at, owner = NULL"""
CLEAR_TOMBSTONE = "UPDATE lgm_threads SET deleted_at = NULL WHERE thread_id = %s"
# As in _sql_sqlite.py (migration 7).
RESTART_THREAD = """
UPDATE lgm_threads SET deleted_at = NULL, reset_before = %s, updated_at = %s,
    puts_since_retention = 0
WHERE thread_id = %s AND deleted_at IS NOT NULL
RETURNING thread_id"""
# As SELECT_TOMBSTONE (row locked first), also refusing a checkpoint older than
# the thread's restart (parameters: thread id, checkpoint id).
SELECT_WRITES_REFUSED = """
WITH t AS MATERIALIZED (
    SELECT deleted_at, reset_before FROM lgm_threads WHERE thread_id = %s FOR KEY SHARE
)
SELECT 1 FROM t WHERE deleted_at IS NOT NULL OR %s::text < reset_before"""
# Thread ownership (migration 6), as in _sql_sqlite.py.
CLAIM_THREAD_OWNER = """
INSERT INTO lgm_threads (thread_id, created_at, updated_at, puts_since_retention, owner)
VALUES (%s, %s, %s, 0, %s)
ON CONFLICT (thread_id) DO UPDATE SET owner = excluded.owner
WHERE lgm_threads.owner IS NULL AND lgm_threads.deleted_at IS NULL"""
SELECT_THREAD_OWNER = "SELECT owner FROM lgm_threads WHERE thread_id = %s"
SELECT_OWNED_THREADS = (
    "SELECT thread_id FROM lgm_threads WHERE owner = %s AND deleted_at IS NULL ORDER BY thread_id"
)
SELECT_THREAD_ACTIVITY = """
SELECT thread_id, updated_at FROM lgm_threads
WHERE deleted_at IS NULL ORDER BY updated_at"""
SELECT_IDLE_THREADS = """
SELECT thread_id, updated_at FROM lgm_threads
WHERE deleted_at IS NULL AND updated_at < %s ORDER BY updated_at"""

# ------------------------------------------------------------------ put

INSERT_CHECKPOINT = """
INSERT INTO lgm_checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, run_id, type, checkpoint, metadata)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s::jsonb)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
    parent_checkpoint_id = excluded.parent_checkpoint_id,
    run_id = excluded.run_id,
    type = excluded.type,
    checkpoint = excluded.checkpoint,
    metadata = excluded.metadata"""
# First writer wins for a (channel, version): a version names one value. The
# core reads this statement's rowcount ("was it inserted?"); RETURNING makes
# the shells wait for that answer even in pipeline mode (see postgres.py).
INSERT_CHANNEL_VALUE = """
INSERT INTO lgm_channel_values
    (thread_id, checkpoint_ns, channel, version, encoding, type, value, ranges)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT DO NOTHING
RETURNING 1"""
# Chunks of a channel never overlap and are numbered upwards, so the chunk with
# the highest seq_lo also has the highest seq_hi: one step down the primary-key
# index instead of MAX(seq_hi) over every chunk of a long thread.
SELECT_NEXT_ITEM_SEQ = """
SELECT COALESCE((
    SELECT seq_hi FROM lgm_channel_chunks
    WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s
    ORDER BY seq_lo DESC LIMIT 1
), 0)"""
# An append to a stored list needs both answers; one statement, not two
# (a put appends to `messages` twice per turn).
SELECT_BASE_EXISTS_AND_NEXT_ITEM_SEQ = """
SELECT EXISTS (
    SELECT 1 FROM lgm_channel_values
    WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s AND version = %s
), COALESCE((
    SELECT seq_hi FROM lgm_channel_chunks
    WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s
    ORDER BY seq_lo DESC LIMIT 1
), 0)"""
INSERT_CHUNK = """
INSERT INTO lgm_channel_chunks (thread_id, checkpoint_ns, channel, seq_lo, seq_hi, type, value)
VALUES (%s, %s, %s, %s, %s, %s, %s)"""

# ------------------------------------------------------------------ writes

UPSERT_WRITE = """
INSERT INTO lgm_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
    task_path = excluded.task_path,
    channel = excluded.channel,
    type = excluded.type,
    value = excluded.value"""
INSERT_WRITE_IF_ABSENT = """
INSERT INTO lgm_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT DO NOTHING"""

# ------------------------------------------------------------------ reads

# metadata comes back as JSON text, exactly what the core's json.loads expects.
_CHECKPOINT_COLUMNS = (
    "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, "
    "metadata::text"
)
SELECT_CHECKPOINT_BY_ID = f"""
SELECT {_CHECKPOINT_COLUMNS} FROM lgm_checkpoints
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s"""
SELECT_LATEST_CHECKPOINT = f"""
SELECT {_CHECKPOINT_COLUMNS} FROM lgm_checkpoints
WHERE thread_id = %s AND checkpoint_ns = %s
ORDER BY checkpoint_id DESC LIMIT 1"""
# Joins against a JSON list of keys: each element is looked up on its own in a
# LATERAL subquery that the planner cannot flatten (LIMIT 1 on a primary key,
# OFFSET 0 where several rows match). As a plain join, on tables not analyzed
# yet, Postgres hash-joined the list against every row of the thread: get_tuple
# read all of a thread's channel values, 240 rows at 30 turns (0.27 ms; 0.17 ms
# as lookups, flat as the thread grows).
#
# get_tuple's common case in one statement (see ``_pg_fast.latest_txn``): the
# latest checkpoint, the values of the [channel, version] pairs (JSON) this
# process expects it to reference, and its writes, each as parallel arrays in
# the columns of SELECT_CHANNEL_VALUES / SELECT_WRITES. One statement is one
# snapshot, so the parts agree with each other whoever wrote them.
SELECT_LATEST_PREFETCH = """
SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.type,
       c.checkpoint, c.metadata::text,
       v.channels, v.versions, v.encodings, v.types, v.blobs, v.ranges,
       w.tasks, w.channels, w.types, w.blobs, w.paths, w.idxs
FROM (
    SELECT * FROM lgm_checkpoints WHERE thread_id = %s AND checkpoint_ns = %s
    ORDER BY checkpoint_id DESC LIMIT 1
) AS c
LEFT JOIN LATERAL (
    SELECT array_agg(cv.channel) AS channels, array_agg(cv.version) AS versions,
           array_agg(cv.encoding) AS encodings, array_agg(cv.type) AS types,
           array_agg(cv.value) AS blobs, array_agg(cv.ranges) AS ranges
    FROM jsonb_array_elements(%s::jsonb) AS j(pair)
    CROSS JOIN LATERAL (
        SELECT * FROM lgm_channel_values
        WHERE thread_id = c.thread_id AND checkpoint_ns = c.checkpoint_ns
          AND channel = j.pair->>0 AND version = j.pair->>1
        LIMIT 1
    ) AS cv
) AS v ON true
LEFT JOIN LATERAL (
    SELECT array_agg(wr.task_id) AS tasks, array_agg(wr.channel) AS channels,
           array_agg(wr.type) AS types, array_agg(wr.value) AS blobs,
           array_agg(wr.task_path) AS paths, array_agg(wr.idx) AS idxs
    FROM lgm_writes AS wr
    WHERE wr.thread_id = c.thread_id AND wr.checkpoint_ns = c.checkpoint_ns
      AND wr.checkpoint_id = c.checkpoint_id
) AS w ON true"""
# `{where}` is built by `list_where()` below from validated pieces only.
SELECT_CHECKPOINT_PAGE = f"""
SELECT {_CHECKPOINT_COLUMNS} FROM lgm_checkpoints
{{where}}
ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC
LIMIT %s"""

# Channel values of one (thread, ns) for a JSON array of [channel, version] pairs.
_VALUES_OF_PAIRS = """
FROM jsonb_array_elements(%s::jsonb) AS j(pair)
CROSS JOIN LATERAL (
    SELECT * FROM lgm_channel_values
    WHERE thread_id = %s AND checkpoint_ns = %s
      AND channel = j.pair->>0 AND version = j.pair->>1
    LIMIT 1
) AS cv"""
SELECT_CHANNEL_VALUES = (
    "SELECT cv.channel, cv.version, cv.encoding, cv.type, cv.value, cv.ranges" + _VALUES_OF_PAIRS
)
# Same pairs, encodings only (the DeltaChannel walk asks "is a value stored here?").
SELECT_CHANNEL_ENCODINGS = "SELECT cv.channel, cv.version, cv.encoding" + _VALUES_OF_PAIRS
# Chunks of one channel overlapping item numbers [lo, hi).
SELECT_CHUNKS = """
SELECT seq_lo, seq_hi, type, value FROM lgm_channel_chunks
WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s AND seq_lo < %s AND seq_hi > %s
ORDER BY seq_lo"""

SELECT_WRITES = """
SELECT task_id, channel, type, value, task_path, idx FROM lgm_writes
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s"""
# Writes of several checkpoints of one (thread, ns): JSON array of checkpoint ids.
SELECT_WRITES_FOR_CHECKPOINTS = """
SELECT w.checkpoint_id, w.task_id, w.channel, w.type, w.value, w.task_path, w.idx
FROM jsonb_array_elements_text(%s::jsonb) AS j(id)
CROSS JOIN LATERAL (
    SELECT * FROM lgm_writes
    WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = j.id
    OFFSET 0
) AS w"""

# Ancestors of a checkpoint, nearest first, following parent ids (not id order:
# ids are only monotonic within one process). `depth` stops a cycle created by
# re-putting an existing id.
SELECT_ANCESTORS = """
WITH RECURSIVE chain(checkpoint_id, parent_checkpoint_id, type, checkpoint, depth) AS (
    SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, 0
    FROM lgm_checkpoints
    WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s
    UNION ALL
    SELECT c.checkpoint_id, c.parent_checkpoint_id, c.type, c.checkpoint, chain.depth + 1
    FROM chain JOIN lgm_checkpoints AS c
      ON c.thread_id = %s AND c.checkpoint_ns = %s AND c.checkpoint_id = chain.parent_checkpoint_id
    WHERE chain.depth < %s
)
SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint FROM chain ORDER BY depth"""

# ------------------------------------------------------------------ deletion, copy, retention

SELECT_THREAD_NAMESPACES = "SELECT DISTINCT checkpoint_ns FROM lgm_checkpoints WHERE thread_id = %s"
DELETE_THREAD_CHECKPOINTS = "DELETE FROM lgm_checkpoints WHERE thread_id = %s"
DELETE_THREAD_WRITES = "DELETE FROM lgm_writes WHERE thread_id = %s"
DELETE_THREAD_CHANNEL_VALUES = "DELETE FROM lgm_channel_values WHERE thread_id = %s"
DELETE_THREAD_CHUNKS = "DELETE FROM lgm_channel_chunks WHERE thread_id = %s"

SELECT_CHECKPOINTS_FOR_RUNS = """
SELECT DISTINCT c.thread_id, c.checkpoint_ns, c.checkpoint_id
FROM jsonb_array_elements_text(%s::jsonb) AS j(run_id)
CROSS JOIN LATERAL (
    SELECT * FROM lgm_checkpoints WHERE run_id = j.run_id OFFSET 0
) AS c"""
DELETE_CHECKPOINT = """
DELETE FROM lgm_checkpoints WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s"""
DELETE_CHECKPOINT_WRITES = """
DELETE FROM lgm_writes WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s"""

# Checkpoint skeletons of a (thread, ns), newest first: what retention plans over.
SELECT_NAMESPACE_CHECKPOINTS = """
SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata::text FROM lgm_checkpoints
WHERE thread_id = %s AND checkpoint_ns = %s ORDER BY checkpoint_id DESC"""
SELECT_NAMESPACE_CHANNEL_VALUES = """
SELECT channel, version, encoding, ranges FROM lgm_channel_values
WHERE thread_id = %s AND checkpoint_ns = %s"""
DELETE_CHANNEL_VALUE = """
DELETE FROM lgm_channel_values
WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s AND version = %s"""
# Chunks lying wholly inside a gap no kept version references.
DELETE_CHUNKS_IN_GAP = """
DELETE FROM lgm_channel_chunks
WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s AND seq_lo >= %s AND seq_hi <= %s"""
SELECT_CHUNK_CHANNELS = """
SELECT DISTINCT channel FROM lgm_channel_chunks WHERE thread_id = %s AND checkpoint_ns = %s"""
DELETE_CHANNEL_CHUNKS = """
DELETE FROM lgm_channel_chunks WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s"""

COPY_CHECKPOINTS = """
INSERT INTO lgm_checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, run_id, type, checkpoint, metadata)
SELECT %s, checkpoint_ns, checkpoint_id, parent_checkpoint_id, run_id, type, checkpoint, metadata
FROM lgm_checkpoints WHERE thread_id = %s
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
    parent_checkpoint_id = excluded.parent_checkpoint_id,
    run_id = excluded.run_id,
    type = excluded.type,
    checkpoint = excluded.checkpoint,
    metadata = excluded.metadata"""
COPY_WRITES = """
INSERT INTO lgm_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value)
SELECT %s, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value
FROM lgm_writes WHERE thread_id = %s
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
    task_path = excluded.task_path,
    channel = excluded.channel,
    type = excluded.type,
    value = excluded.value"""
COPY_CHANNEL_VALUES = """
INSERT INTO lgm_channel_values
    (thread_id, checkpoint_ns, channel, version, encoding, type, value, ranges)
SELECT %s, checkpoint_ns, channel, version, encoding, type, value, ranges
FROM lgm_channel_values WHERE thread_id = %s
ON CONFLICT DO NOTHING"""
COPY_CHUNKS = """
INSERT INTO lgm_channel_chunks
    (thread_id, checkpoint_ns, channel, seq_lo, seq_hi, type, value)
SELECT %s, checkpoint_ns, channel, seq_lo, seq_hi, type, value
FROM lgm_channel_chunks WHERE thread_id = %s
ON CONFLICT DO NOTHING"""

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
) AS t WHERE thread_id > %s ORDER BY thread_id LIMIT %s"""
SELECT_THREAD_CHECKPOINT_BLOBS = """
SELECT checkpoint_ns, checkpoint_id, type, checkpoint, metadata::text FROM lgm_checkpoints
WHERE thread_id = %s"""
UPDATE_CHECKPOINT_BLOB = """
UPDATE lgm_checkpoints SET type = %s, checkpoint = %s, metadata = %s::jsonb
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s"""
SELECT_THREAD_VALUE_BLOBS = """
SELECT checkpoint_ns, channel, version, type, value FROM lgm_channel_values
WHERE thread_id = %s AND value IS NOT NULL"""
UPDATE_VALUE_BLOB = """
UPDATE lgm_channel_values SET type = %s, value = %s
WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s AND version = %s"""
SELECT_THREAD_CHUNK_BLOBS = """
SELECT checkpoint_ns, channel, seq_lo, type, value FROM lgm_channel_chunks
WHERE thread_id = %s"""
UPDATE_CHUNK_BLOB = """
UPDATE lgm_channel_chunks SET type = %s, value = %s
WHERE thread_id = %s AND checkpoint_ns = %s AND channel = %s AND seq_lo = %s"""
SELECT_THREAD_WRITE_BLOBS = """
SELECT checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value FROM lgm_writes
WHERE thread_id = %s AND value IS NOT NULL"""
UPDATE_WRITE_BLOB = """
UPDATE lgm_writes SET type = %s, value = %s
WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s AND task_id = %s AND idx = %s"""


# ------------------------------------------------------------------ stats, vacuum

_OUR_TABLES = (
    "lgm_threads",
    "lgm_checkpoints",
    "lgm_channel_values",
    "lgm_channel_chunks",
    "lgm_writes",
    "lgm_schema_migrations",
    "lgm_erase_pending",
)
_TABLE_ARRAY = "ARRAY[" + ", ".join(f"'{t}'" for t in _OUR_TABLES) + "]"
# Heap + TOAST + indexes of our tables (in the connection's search_path), not
# the whole database: the saver may share it with the application.
SELECT_DB_SIZE = f"""
SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint
FROM pg_class AS c
WHERE c.relkind = 'r' AND c.relname = ANY({_TABLE_ARRAY}) AND pg_table_is_visible(c.oid)"""
# Space in our tables not holding live rows: dead rows, and pages (auto)vacuum
# freed for reuse but, unlike SQLite's freelist, never gives back to the OS
# without VACUUM FULL. The sweep's size cap compares `size - free` (live data
# plus indexes) with `max_bytes`; counting freed space as used would make every
# later sweep evict again. Live bytes are summed per stored value
# (pg_column_size: as stored, i.e. compressed) plus ~64 bytes of tuple header
# and keys per row, so this scans our tables: meant for sweep() and stats.
SELECT_FREE_BYTES = f"""
SELECT GREATEST(0,
    (SELECT COALESCE(SUM(pg_table_size(c.oid)), 0) FROM pg_class AS c
     WHERE c.relkind = 'r' AND c.relname = ANY({_TABLE_ARRAY}) AND pg_table_is_visible(c.oid))
  - (SELECT COALESCE(SUM(64 + octet_length(thread_id)), 0) FROM lgm_threads)
  - (SELECT COALESCE(SUM(64 + octet_length(thread_id) + octet_length(checkpoint_id)
                         + COALESCE(octet_length(parent_checkpoint_id), 0)
                         + pg_column_size(checkpoint) + pg_column_size(metadata)), 0)
     FROM lgm_checkpoints)
  - (SELECT COALESCE(SUM(64 + octet_length(thread_id) + octet_length(channel)
                         + octet_length(version) + COALESCE(pg_column_size(value), 0)
                         + COALESCE(octet_length(ranges), 0)), 0)
     FROM lgm_channel_values)
  - (SELECT COALESCE(SUM(64 + octet_length(thread_id) + octet_length(channel)
                         + pg_column_size(value)), 0)
     FROM lgm_channel_chunks)
  - (SELECT COALESCE(SUM(64 + octet_length(thread_id) + octet_length(checkpoint_id)
                         + octet_length(task_id) + octet_length(channel)
                         + COALESCE(pg_column_size(value), 0)), 0)
     FROM lgm_writes)
)::bigint"""
# Bytes of stored payload per thread (what deleting the thread would free, roughly).
SELECT_THREAD_STATS = """
SELECT t.thread_id,
       (SELECT COUNT(*) FROM lgm_checkpoints c WHERE c.thread_id = t.thread_id),
       (SELECT COALESCE(SUM(octet_length(c.checkpoint) + octet_length(c.metadata::text)), 0)
          FROM lgm_checkpoints c WHERE c.thread_id = t.thread_id),
       (SELECT COALESCE(SUM(COALESCE(octet_length(v.value), 0)
                            + COALESCE(octet_length(v.ranges), 0)), 0)
          FROM lgm_channel_values v WHERE v.thread_id = t.thread_id),
       (SELECT COALESCE(SUM(octet_length(k.value)), 0)
          FROM lgm_channel_chunks k WHERE k.thread_id = t.thread_id),
       (SELECT COALESCE(SUM(COALESCE(octet_length(w.value), 0)), 0)
          FROM lgm_writes w WHERE w.thread_id = t.thread_id),
       t.updated_at
FROM lgm_threads t
WHERE t.deleted_at IS NULL AND (%s::text IS NULL OR t.thread_id = %s)
ORDER BY t.thread_id"""
# Run outside a transaction (autocommit). Plain VACUUM makes freed space
# reusable without blocking writers; FULL rewrites the tables and gives space
# back to the OS, holding an exclusive lock on each table meanwhile.
VACUUM_TABLES = tuple(f"VACUUM (ANALYZE) {t}" for t in _OUR_TABLES)
FULL_VACUUM_TABLES = tuple(f"VACUUM (FULL, ANALYZE) {t}" for t in _OUR_TABLES)
# erase_pending(): one statement per marked relation (names from THREAD_RELATIONS only).
FULL_VACUUM_RELATION = {t: f"VACUUM (FULL, ANALYZE) {t}" for t in THREAD_RELATIONS}

# ------------------------------------------------------------------ list() WHERE builder


def _filter_path(key: Any) -> list[str]:
    if not isinstance(key, str) or not key or any(not part for part in key.split(".")):
        raise InvalidFilterError(
            f"list(filter=...) key {key!r} is not allowed; use a non-empty string "
            "(a dot walks into nested metadata, e.g. 'source' or 'writes.node')."
        )
    return key.split(".")


def metadata_predicates(metadata_filter: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
    """``jsonb`` path predicates for a ``list(filter=...)`` mapping.

    Keys and values are both bound parameters (the key as a ``text[]`` path),
    so nothing from the filter is spliced into SQL. A dotted key walks into
    nested metadata as on SQLite; ``None`` matches a missing key or JSON null.
    """
    predicates: list[str] = []
    params: list[Any] = []
    for key, value in metadata_filter.items():
        path = _filter_path(key)
        if value is None:
            predicates.append("COALESCE(metadata #> %s::text[], 'null'::jsonb) = 'null'::jsonb")
            params.append(path)
            continue
        if isinstance(value, (bool, int, float, str, dict, list)):
            encoded = json.dumps(value, ensure_ascii=False)
        else:
            encoded = json.dumps(str(value), ensure_ascii=False)
        predicates.append("metadata #> %s::text[] = %s::jsonb")
        params.extend((path, encoded))
    return predicates, params


# One list() page's WHERE clause: the shared builder with this dialect's
# placeholder and metadata predicates (see ``_list_where.py``).
list_where = partial(build_list_where, "%s", metadata_predicates)
