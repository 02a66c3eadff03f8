"""Every statement of the memory queue, as named constants (one module for both dialects).

Statements use ``:name`` parameters; the Postgres dialect rewrites them to
``%(name)s`` (``to_pyformat``). Only the DDL, the queued-id lookup and the
claim differ, and those have a constant per dialect.
"""

from __future__ import annotations

import re

from langgraph_memory._migrations import Migration, MigrationTable


def tables_ddl(*, seq: str, real: str) -> tuple[str, ...]:
    return (
        f"""CREATE TABLE lgm_memory_jobs (
            seq {seq},
            job_id TEXT NOT NULL UNIQUE,
            job_key TEXT NOT NULL UNIQUE,
            user_id TEXT NOT NULL,
            thread_id TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('pending', 'leased', 'done', 'failed')),
            stage TEXT NOT NULL CHECK (stage IN ('new', 'extracted', 'planned')),
            messages TEXT NOT NULL,
            candidates TEXT,
            ops TEXT,
            applied_ops INTEGER NOT NULL DEFAULT 0,
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            not_before {real} NOT NULL,
            lease_owner TEXT,
            lease_expires_at {real},
            created_at {real} NOT NULL,
            updated_at {real} NOT NULL,
            finished_at {real}
        )""",
        "CREATE INDEX lgm_memory_jobs_ready ON lgm_memory_jobs (status, not_before)",
        "CREATE INDEX lgm_memory_jobs_user ON lgm_memory_jobs (user_id, seq)",
        "CREATE INDEX lgm_memory_jobs_thread ON lgm_memory_jobs (user_id, thread_id, seq)",
        """CREATE TABLE lgm_memory_job_messages (
            user_id TEXT NOT NULL,
            thread_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            job_id TEXT NOT NULL,
            PRIMARY KEY (user_id, thread_id, message_id)
        )""",
        f"""CREATE TABLE lgm_memory_audit (
            seq {seq},
            job_id TEXT,
            op_index INTEGER,
            user_id TEXT NOT NULL,
            thread_id TEXT,
            action TEXT NOT NULL,
            target_ids TEXT NOT NULL,
            result_id TEXT,
            reason TEXT NOT NULL,
            op TEXT NOT NULL,
            created_at {real} NOT NULL,
            UNIQUE (job_id, op_index)
        )""",
        "CREATE INDEX lgm_memory_audit_user ON lgm_memory_audit (user_id, seq)",
    )


# Applied by ``langgraph_memory._migrations.migrate`` (the runner the catalog and
# the session savers share): each migration commits with its "applied" row, and a
# database migrated by a newer release is refused. The bookkeeping table is the
# one the queue always had, so existing files open unchanged.
SQLITE_MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "memory jobs, queued message ids, audit log",
        tables_ddl(seq="INTEGER PRIMARY KEY AUTOINCREMENT", real="REAL"),
    ),
)
POSTGRES_MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "memory jobs, queued message ids, audit log",
        tables_ddl(seq="BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", real="DOUBLE PRECISION"),
    ),
)

SELECT_APPLIED_VERSIONS = "SELECT version FROM lgm_memory_queue_migrations"
# Run on the raw connection with positional parameters (the runner binds
# ``(version, name, applied_at)``), so each dialect spells its own placeholders.
SQLITE_MIGRATION_TABLE = MigrationTable(
    create="""
CREATE TABLE IF NOT EXISTS lgm_memory_queue_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)""",
    select_applied=SELECT_APPLIED_VERSIONS,
    insert_applied=(
        "INSERT INTO lgm_memory_queue_migrations (version, name, applied_at) VALUES (?, ?, ?)"
    ),
)
# Postgres: serialise concurrent setup() and concurrent enqueues of one thread.
LOCK_MIGRATIONS_POSTGRES = "SELECT pg_advisory_xact_lock(hashtext('lgm_memory_queue_migrations'))"
POSTGRES_MIGRATION_TABLE = MigrationTable(
    create="""
CREATE TABLE IF NOT EXISTS lgm_memory_queue_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)""",
    select_applied=SELECT_APPLIED_VERSIONS,
    insert_applied=(
        "INSERT INTO lgm_memory_queue_migrations (version, name, applied_at) VALUES (%s, %s, %s)"
    ),
    lock=LOCK_MIGRATIONS_POSTGRES,
)
LOCK_THREAD_POSTGRES = "SELECT pg_advisory_xact_lock(hashtext(:user_id), hashtext(:thread_id))"

SELECT_QUEUED_MESSAGE_IDS_SQLITE = """
SELECT message_id FROM lgm_memory_job_messages
WHERE user_id = :user_id AND thread_id = :thread_id
  AND message_id IN (SELECT value FROM json_each(:message_ids))"""
SELECT_QUEUED_MESSAGE_IDS_POSTGRES = """
SELECT message_id FROM lgm_memory_job_messages
WHERE user_id = :user_id AND thread_id = :thread_id AND message_id = ANY(:message_ids)"""

SELECT_LATEST_THREAD_JOB = """
SELECT job_id, status, stage, attempts, messages, created_at, not_before, job_key FROM lgm_memory_jobs
WHERE user_id = :user_id AND thread_id = :thread_id ORDER BY seq DESC LIMIT 1"""

# A held reply (``enqueue_unanswered``): its key starts with this, so the thread's next
# batch, which carries the reply with the user's answer, finds and cancels it.
UNANSWERED_KEY_PREFIX = "unanswered:"
SELECT_JOB_BY_KEY = "SELECT job_id FROM lgm_memory_jobs WHERE job_key = :job_key"
CANCEL_UNANSWERED_JOB = (
    "DELETE FROM lgm_memory_jobs WHERE job_key = :job_key AND status = 'pending'"
)

INSERT_JOB = """
INSERT INTO lgm_memory_jobs
    (job_id, job_key, user_id, thread_id, status, stage, messages, not_before, created_at, updated_at)
VALUES (:job_id, :job_key, :user_id, :thread_id, 'pending', 'new', :messages, :not_before, :now, :now)"""

COALESCE_JOB = """
UPDATE lgm_memory_jobs SET job_key = :job_key, messages = :messages, not_before = :not_before,
    updated_at = :now
WHERE job_id = :job_id AND status = 'pending' AND stage = 'new'"""

INSERT_QUEUED_MESSAGE = """
INSERT INTO lgm_memory_job_messages (user_id, thread_id, message_id, job_id)
VALUES (:user_id, :thread_id, :message_id, :job_id)
ON CONFLICT DO NOTHING"""

# The oldest ready job whose user has no older unfinished job: one job per user
# at a time, in submission order. A lease that expired counts as ready (its
# worker died or hung). A reply still held for the user's answer blocks no one: the
# user's other threads are written meanwhile.
SELECT_CLAIMABLE = f"""
SELECT job_id, attempts, status FROM lgm_memory_jobs AS j
WHERE ((j.status = 'pending' AND j.not_before <= :horizon)
       OR (j.status = 'leased' AND j.lease_expires_at <= :now))
  AND NOT EXISTS (
      SELECT 1 FROM lgm_memory_jobs AS o
      WHERE o.user_id = j.user_id AND o.seq < j.seq AND o.status IN ('pending', 'leased')
        AND NOT (o.status = 'pending' AND o.not_before > :horizon
                 AND o.job_key LIKE '{UNANSWERED_KEY_PREFIX}%'))
ORDER BY j.not_before, j.seq
LIMIT 1"""
# SQLite serialises writers (BEGIN IMMEDIATE); Postgres workers skip rows
# another worker is claiming instead of waiting for it.
SELECT_CLAIMABLE_POSTGRES = SELECT_CLAIMABLE.replace("LIMIT 1", "LIMIT 1 FOR UPDATE SKIP LOCKED")

SELECT_JOB_FOR_CLAIM = """
SELECT j.job_id, j.attempts, j.status FROM lgm_memory_jobs AS j
WHERE j.job_id = :job_id
  AND (j.status = 'pending' OR (j.status = 'leased' AND j.lease_expires_at <= :now))"""

LEASE_JOB = """
UPDATE lgm_memory_jobs
SET status = 'leased', lease_owner = :worker, lease_expires_at = :lease_until,
    attempts = attempts + 1, updated_at = :now
WHERE job_id = :job_id"""

SELECT_JOB = """
SELECT job_id, job_key, user_id, thread_id, stage, messages, candidates, ops, applied_ops, attempts
FROM lgm_memory_jobs WHERE job_id = :job_id"""

GIVE_UP_JOB = """
UPDATE lgm_memory_jobs
SET status = 'failed', last_error = :error, lease_owner = NULL, lease_expires_at = NULL,
    updated_at = :now, finished_at = :now
WHERE job_id = :job_id"""

# Every write of a running job checks that the writer still holds the lease.
_HELD = "job_id = :job_id AND lease_owner = :worker AND status = 'leased'"

RENEW_LEASE = (
    f"UPDATE lgm_memory_jobs SET lease_expires_at = :lease_until, updated_at = :now WHERE {_HELD}"
)
SAVE_CANDIDATES = f"""
UPDATE lgm_memory_jobs
SET stage = 'extracted', candidates = :payload, lease_expires_at = :lease_until, updated_at = :now
WHERE {_HELD}"""
SAVE_PLAN = f"""
UPDATE lgm_memory_jobs
SET stage = 'planned', ops = :payload, applied_ops = 0, lease_expires_at = :lease_until,
    updated_at = :now
WHERE {_HELD}"""
MARK_APPLIED = f"""
UPDATE lgm_memory_jobs SET applied_ops = :applied, lease_expires_at = :lease_until, updated_at = :now
WHERE {_HELD} AND applied_ops = :index"""
INSERT_AUDIT = """
INSERT INTO lgm_memory_audit
    (job_id, op_index, user_id, thread_id, action, target_ids, result_id, reason, op, created_at)
VALUES (:job_id, :op_index, :user_id, :thread_id, :action, :target_ids, :result_id, :reason, :op,
        :now)
ON CONFLICT DO NOTHING"""
# A finished job keeps its row (its key keeps re-submits idempotent) but no text:
# not the conversation, the candidates nor the planned ops (which quote the
# candidates). The audit log holds what was decided, by id.
COMPLETE_JOB = f"""
UPDATE lgm_memory_jobs
SET status = 'done', messages = '[]', candidates = NULL, ops = NULL, lease_owner = NULL,
    lease_expires_at = NULL, last_error = NULL, updated_at = :now, finished_at = :now
WHERE {_HELD}"""
RETRY_JOB = f"""
UPDATE lgm_memory_jobs
SET status = 'pending', not_before = :not_before, last_error = :error, lease_owner = NULL,
    lease_expires_at = NULL, updated_at = :now
WHERE {_HELD}"""
FAIL_JOB = f"""
UPDATE lgm_memory_jobs
SET status = 'failed', last_error = :error, lease_owner = NULL, lease_expires_at = NULL,
    updated_at = :now, finished_at = :now
WHERE {_HELD}"""
# A graceful stop hands the job back without spending an attempt.
RELEASE_JOB = f"""
UPDATE lgm_memory_jobs
SET status = 'pending', attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END,
    lease_owner = NULL, lease_expires_at = NULL, updated_at = :now
WHERE {_HELD}"""
REQUEUE_FAILED = """
UPDATE lgm_memory_jobs
SET status = 'pending', attempts = 0, not_before = :now, finished_at = NULL, updated_at = :now
WHERE status = 'failed'"""

SELECT_JOB_INFOS = """
SELECT job_id, user_id, thread_id, status, stage, attempts, messages, last_error,
       not_before, created_at, updated_at, lease_owner
FROM lgm_memory_jobs WHERE status IN ('pending', 'leased', 'failed') ORDER BY seq"""

SELECT_STATUS_COUNTS = "SELECT status, COUNT(*) FROM lgm_memory_jobs GROUP BY status"
SELECT_OLDEST_WAITING = (
    "SELECT MIN(created_at) FROM lgm_memory_jobs WHERE status IN ('pending', 'leased')"
)
SELECT_AUDIT_COUNT = "SELECT COUNT(*) FROM lgm_memory_audit"
SELECT_HELD_COUNT = f"""
SELECT COUNT(*) FROM lgm_memory_jobs
WHERE status = 'pending' AND not_before > :now AND job_key LIKE '{UNANSWERED_KEY_PREFIX}%'"""
SELECT_AUDIT = """
SELECT seq, job_id, op_index, user_id, thread_id, op, created_at FROM lgm_memory_audit
WHERE (CAST(:user_id AS TEXT) IS NULL OR user_id = :user_id) ORDER BY seq DESC LIMIT :limit"""

DELETE_USER_JOBS = "DELETE FROM lgm_memory_jobs WHERE user_id = :user_id"
DELETE_USER_MESSAGES = "DELETE FROM lgm_memory_job_messages WHERE user_id = :user_id"
DELETE_USER_AUDIT = "DELETE FROM lgm_memory_audit WHERE user_id = :user_id"
DELETE_DONE_BEFORE = "DELETE FROM lgm_memory_jobs WHERE status = 'done' AND finished_at < :before"

# Erasure of one thread (its turns wait in pending jobs) and of one memory (a
# failed job keeps its turns, candidates and plan for retry_failed; audit rows
# written before the audit kept ids only still quote the candidate).
DELETE_THREAD_JOBS = "DELETE FROM lgm_memory_jobs WHERE thread_id = :thread_id"
DELETE_THREAD_MESSAGES = "DELETE FROM lgm_memory_job_messages WHERE thread_id = :thread_id"
SELECT_USER_FAILED_PAYLOADS = """
SELECT job_id, messages, candidates, ops FROM lgm_memory_jobs
WHERE user_id = :user_id AND status = 'failed'"""
DELETE_JOB = "DELETE FROM lgm_memory_jobs WHERE job_id = :job_id"
SCRUB_USER_DONE_JOBS = """
UPDATE lgm_memory_jobs SET messages = '[]', candidates = NULL, ops = NULL
WHERE user_id = :user_id AND status = 'done' AND (ops IS NOT NULL OR candidates IS NOT NULL)"""
SELECT_USER_AUDIT_OPS = """
SELECT seq, action, target_ids, result_id, op, reason FROM lgm_memory_audit
WHERE user_id = :user_id"""
SCRUB_AUDIT_ROW = "UPDATE lgm_memory_audit SET op = :op, reason = '' WHERE seq = :seq"

# Encryption (``encryption=``, ``_queue_sealing.py``): payloads are sealed per job,
# so the statements that read them also return the job's user and thread (its AAD).
SELECT_JOB_IDENTITY = "SELECT user_id, thread_id FROM lgm_memory_jobs WHERE job_id = :job_id"
SELECT_USER_FAILED_JOB_PAYLOADS = """
SELECT job_id, thread_id, messages, candidates, ops FROM lgm_memory_jobs
WHERE user_id = :user_id AND status = 'failed'"""
# pending() / failed(): the message count from the queued ids (clear), so that
# inspecting the queue never opens a payload (and still works on a job refused
# because its payload does not open).
SELECT_JOB_INFOS_COUNTED = """
SELECT j.job_id, j.user_id, j.thread_id, j.status, j.stage, j.attempts,
       (SELECT COUNT(*) FROM lgm_memory_job_messages AS m WHERE m.job_id = j.job_id),
       j.last_error, j.not_before, j.created_at, j.updated_at, j.lease_owner
FROM lgm_memory_jobs AS j WHERE j.status IN ('pending', 'leased', 'failed') ORDER BY j.seq"""
# ``reencrypt()``: jobs in seq order after a cursor, and a compare-and-set rewrite
# (a payload a running worker changed meanwhile is left to that worker's write,
# which seals under the current key anyway). ``IS NOT DISTINCT FROM``: NULL-safe
# on both dialects (SQLite >= 3.39).
SELECT_JOB_PAYLOADS_AFTER = """
SELECT seq, job_id, user_id, thread_id, status, messages, candidates, ops, last_error
FROM lgm_memory_jobs WHERE seq > :after ORDER BY seq LIMIT :limit"""
RESEAL_JOB_PAYLOADS = """
UPDATE lgm_memory_jobs
SET messages = :messages, candidates = :candidates, ops = :ops, last_error = :last_error
WHERE job_id = :job_id AND messages = :old_messages
  AND candidates IS NOT DISTINCT FROM :old_candidates AND ops IS NOT DISTINCT FROM :old_ops
  AND last_error IS NOT DISTINCT FROM :old_last_error"""

# Postgres erasure: a DELETE leaves the row's bytes in the heap as a dead tuple,
# and a plain VACUUM only marks that space reusable (measured: a pruned tuple's
# text stays in the page's free space, and an index keeps its keys); FULL
# rewrites the tables and their indexes into new files. Queue tables are small
# (a finished job keeps no text), so this costs milliseconds
# (benchmarks/RESULTS-privacy.md). Autocommit only: VACUUM cannot run in a transaction.
VACUUM_FULL_POSTGRES = "VACUUM (FULL) lgm_memory_jobs, lgm_memory_job_messages, lgm_memory_audit"

_NAMED_PARAM = re.compile(r"(?<![:\w]):([a-z_][a-z0-9_]*)")


def to_pyformat(sql: str) -> str:
    """``:name`` parameters as psycopg's ``%(name)s`` (and literal ``%`` escaped).

    Example:
        >>> to_pyformat("SELECT 1 WHERE a = :a AND b LIKE '%x'")
        "SELECT 1 WHERE a = %(a)s AND b LIKE '%%x'"
    """
    return _NAMED_PARAM.sub(r"%(\1)s", sql.replace("%", "%%"))
