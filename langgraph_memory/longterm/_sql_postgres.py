"""Every SQL statement of the long-term store's Postgres catalog, as named constants.

The same names as ``_sql_sqlite.py`` (the store's parts only ever say
``catalog.sql.NAME``), written with ``?`` placeholders: ``PostgresCatalog``
turns them into psycopg's ``%s`` once per statement. What differs:

* **Keyword index.** ``lt_keywords.terms`` is a ``tsvector`` built from the
  same pre-tokenised, partition-scoped body FTS5 indexes (``tokenize.py``), with
  each token's positions, so a term's frequency in a row is the length of its
  position list; a trigger copies each row's terms into ``lt_postings`` (term,
  row, tf, length) under a covering B-tree, which queries read. BM25 is computed in SQL
  with FTS5's formula and constants (k1 = 1.2, b = 0.75, IDF clamped to 1e-6,
  N and average length over the whole index, kept by triggers in
  ``lt_keyword_stats``), so scores equal the embedded ones (tested). The match
  parameters are the planned terms and their document frequencies
  (``PostgresCatalog.match_params``). A plain search ranks in process instead,
  from postings ``SELECT_PLAN`` copied (``postings.py``), valid while the
  partition's ``lt_keyword_versions`` row (moved by triggers) is unchanged.
* **Cache versions never repeat.** A partition's ``version`` comes from a
  sequence: another instance's in-process vector cache keyed by (partition,
  version) can never mistake a re-created partition (after ``forget_user``)
  for the one it cached.
* **Concurrency.** Every write of a partition takes a transaction advisory lock
  on it (``LOCK_PARTITION``, first thing in the transaction, partitions in
  sorted order) and locks its partition row (``SELECT_PARTITION_FOR_WRITE``), so
  two instances reconciling the same user's key serialise; a unique partial
  index on active ``(partition, namespace, mem_key)`` backs the rule "one
  active memory per key".
"""

from __future__ import annotations

from typing import Final

from langgraph_memory._migrations import Migration, MigrationTable

# Statements both dialects share, re-exported so ``catalog.sql.NAME`` finds them here.
from langgraph_memory.longterm._sql_common import *  # noqa: F403
from langgraph_memory.longterm._sql_common import (
    DELETE_FTS_ROW as DELETE_FTS_ROW,
)
from langgraph_memory.longterm._sql_common import (
    DELETE_ITEM as DELETE_ITEM,
)
from langgraph_memory.longterm._sql_common import (
    DELETE_PARTITION as DELETE_PARTITION,
)
from langgraph_memory.longterm._sql_common import (
    DELETE_PARTITION_INTENTS as DELETE_PARTITION_INTENTS,
)
from langgraph_memory.longterm._sql_common import (
    DELETE_PARTITION_ITEMS as DELETE_PARTITION_ITEMS,
)
from langgraph_memory.longterm._sql_common import (
    DELETE_VECTOR_INTENTS as DELETE_VECTOR_INTENTS,
)
from langgraph_memory.longterm._sql_common import (
    ITEM_COLUMNS as ITEM_COLUMNS,
)
from langgraph_memory.longterm._sql_common import (
    ITEM_COLUMNS_I as ITEM_COLUMNS_I,
)
from langgraph_memory.longterm._sql_common import (
    REFRESH_TTL as REFRESH_TTL,
)
from langgraph_memory.longterm._sql_common import (
    SELECT_ACTIVE_BY_MEM_KEY as SELECT_ACTIVE_BY_MEM_KEY,
)
from langgraph_memory.longterm._sql_common import (
    SELECT_ACTIVE_WHERE_TEMPLATE as SELECT_ACTIVE_WHERE_TEMPLATE,
)
from langgraph_memory.longterm._sql_common import (
    SELECT_EXPIRED as SELECT_EXPIRED,
)
from langgraph_memory.longterm._sql_common import (
    SELECT_INTENT_PARTITIONS as SELECT_INTENT_PARTITIONS,
)
from langgraph_memory.longterm._sql_common import (
    SELECT_ITEM as SELECT_ITEM,
)
from langgraph_memory.longterm._sql_common import (
    SELECT_MEMORIES_BY_ID_TEMPLATE as SELECT_MEMORIES_BY_ID_TEMPLATE,
)
from langgraph_memory.longterm._sql_common import (
    SELECT_META as SELECT_META,
)
from langgraph_memory.longterm._sql_common import (
    SELECT_PARTITION as SELECT_PARTITION,
)
from langgraph_memory.longterm._sql_common import (
    SELECT_PARTITION_ACTIVE_WHERE_TEMPLATE as SELECT_PARTITION_ACTIVE_WHERE_TEMPLATE,
)
from langgraph_memory.longterm._sql_common import (
    SELECT_PARTITION_INTENTS as SELECT_PARTITION_INTENTS,
)
from langgraph_memory.longterm._sql_common import (
    SELECT_PARTITION_ITEM_IDS as SELECT_PARTITION_ITEM_IDS,
)
from langgraph_memory.longterm._sql_common import (
    SELECT_PARTITION_ROWS_TO_FORGET as SELECT_PARTITION_ROWS_TO_FORGET,
)
from langgraph_memory.longterm._sql_common import (
    SELECT_VECTOR_IDS as SELECT_VECTOR_IDS,
)
from langgraph_memory.longterm._sql_common import (
    SELECT_VECTOR_ROWS_OF_PARTITION as SELECT_VECTOR_ROWS_OF_PARTITION,
)
from langgraph_memory.longterm._sql_common import (
    SELECT_VECTOR_ROWS_TEMPLATE as SELECT_VECTOR_ROWS_TEMPLATE,
)
from langgraph_memory.longterm._sql_common import (
    SET_DEDICATED as SET_DEDICATED,
)
from langgraph_memory.longterm._sql_common import (
    TOUCH_ITEM as TOUCH_ITEM,
)
from langgraph_memory.longterm._sql_common import (
    UPDATE_VALUE as UPDATE_VALUE,
)
from langgraph_memory.longterm._sql_common import (
    UPSERT_ITEM as UPSERT_ITEM,
)
from langgraph_memory.longterm._sql_common import (
    UPSERT_META as UPSERT_META,
)

# Run on each pooled connection when it opens. No JIT: every statement here is a
# short index lookup, and a bad estimate (tables not analysed yet, as after a bulk
# load before autovacuum) pushed the keyword statement past jit_above_cost: 80 ms
# of compiling for a 2 ms query.
SESSION_SETTINGS: Final = ("SET jit = off",)

# FTS5's BM25 constants (also used by ``postings.py``'s in-process ranking).
BM25_K1: Final = 1.2
BM25_B: Final = 0.75

MIGRATIONS: Final[tuple[Migration, ...]] = (
    Migration(
        1,
        "items_keywords_partitions",
        (
            """
            CREATE TABLE lt_items (
                rowid BIGSERIAL PRIMARY KEY,
                item_id TEXT NOT NULL UNIQUE,
                partition TEXT NOT NULL,
                namespace TEXT NOT NULL,
                key TEXT NOT NULL,
                value TEXT NOT NULL,
                created_ts DOUBLE PRECISION NOT NULL,
                updated_ts DOUBLE PRECISION NOT NULL,
                ttl_minutes DOUBLE PRECISION,
                expires_ts DOUBLE PRECISION,
                has_vector INTEGER NOT NULL DEFAULT 0,
                mem_status TEXT,
                mem_type TEXT,
                mem_key TEXT,
                valid_from_ts DOUBLE PRECISION,
                valid_to_ts DOUBLE PRECISION,
                mem_expires_ts DOUBLE PRECISION,
                mem_importance DOUBLE PRECISION,
                mem_active_ts DOUBLE PRECISION,
                UNIQUE (partition, namespace, key)
            )
            """,
            "CREATE INDEX lt_items_by_partition ON lt_items (partition, namespace)",
            "CREATE INDEX lt_items_by_expiry ON lt_items (expires_ts) WHERE expires_ts IS NOT NULL",
            "CREATE INDEX lt_items_by_mem_type ON lt_items (partition, mem_type)",
            # Two active memories of one user never share a key, whichever instance wrote them.
            "CREATE UNIQUE INDEX lt_items_one_active_key ON lt_items (partition, namespace, mem_key) "
            "WHERE mem_key IS NOT NULL AND mem_status = 'active'",
            """
            CREATE TABLE lt_keywords (
                rowid BIGINT PRIMARY KEY REFERENCES lt_items (rowid) ON DELETE CASCADE,
                terms TSVECTOR NOT NULL,
                doc_len INTEGER NOT NULL
            )
            """,
            "CREATE INDEX lt_keywords_terms ON lt_keywords USING GIN (terms)",
            # FTS5's N (rows in the index) and total tokens, for IDF and average length.
            """
            CREATE TABLE lt_keyword_stats (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                docs BIGINT NOT NULL,
                tokens BIGINT NOT NULL,
                changes BIGINT NOT NULL
            )
            """,
            "INSERT INTO lt_keyword_stats (id, docs, tokens, changes) VALUES (1, 0, 0, 0)",
            """
            CREATE FUNCTION lt_keyword_stats_track() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'INSERT' THEN
                    UPDATE lt_keyword_stats SET docs = docs + 1, tokens = tokens + NEW.doc_len,
                        changes = changes + 1 WHERE id = 1;
                    RETURN NEW;
                END IF;
                UPDATE lt_keyword_stats SET docs = docs - 1, tokens = tokens - OLD.doc_len,
                    changes = changes + 1 WHERE id = 1;
                RETURN OLD;
            END $$
            """,
            """
            CREATE TRIGGER lt_keywords_stats AFTER INSERT OR DELETE ON lt_keywords
            FOR EACH ROW EXECUTE FUNCTION lt_keyword_stats_track()
            """,
            "CREATE SEQUENCE lt_partition_versions",
            """
            CREATE TABLE lt_partitions (
                partition TEXT PRIMARY KEY,
                collection TEXT NOT NULL,
                dedicated INTEGER NOT NULL DEFAULT 0,
                vector_count INTEGER NOT NULL DEFAULT 0,
                version BIGINT NOT NULL DEFAULT nextval('lt_partition_versions')
            )
            """,
            "CREATE TABLE lt_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
            # SQLite's json_extract for value filters (where.py, dialect="postgres"):
            # JSON null is SQL NULL there too.
            """
            CREATE FUNCTION json_extract(doc TEXT, path TEXT) RETURNS JSONB
            LANGUAGE sql IMMUTABLE STRICT AS $$
                SELECT NULLIF(doc::jsonb #> string_to_array(substr(path, 3), '.'), 'null'::jsonb)
            $$
            """,
            # The lexemes of a keyword query ('a' | 'b'): our tokens hold no quotes,
            # spaces or operators, so its text form splits cleanly.
            """
            CREATE FUNCTION lt_query_terms(q TSQUERY) RETURNS TEXT[]
            LANGUAGE sql IMMUTABLE STRICT AS $$
                SELECT string_to_array(replace(replace(q::text, '''', ''), ' | ', ' '), ' ')
            $$
            """,
            # Vector writes in flight (see repair.py and _sql_sqlite.py's 0004).
            """
            CREATE TABLE lt_vector_intents (
                token TEXT NOT NULL,
                partition TEXT NOT NULL,
                item_id TEXT NOT NULL,
                created_ts DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (token, partition, item_id)
            )
            """,
            "CREATE INDEX lt_vector_intents_by_partition ON lt_vector_intents (partition)",
        ),
    ),
    Migration(
        2,
        # Postings (term, row, tf, doc_len) under a B-tree that covers them: a query's
        # BM25 reads its terms' postings by index only, instead of testing every
        # row's tsvector against the tsquery through GIN and unnesting it (the
        # shared pass at 10k memories: ~25-50 ms -> ~5 ms, scores unchanged). A
        # trigger fills them from lt_keywords, so every writer (an instance not yet
        # upgraded too) keeps them current; rows leave with their keyword row.
        "keyword_postings",
        (
            """
            CREATE TABLE lt_postings (
                term TEXT NOT NULL,
                rowid BIGINT NOT NULL REFERENCES lt_keywords (rowid) ON DELETE CASCADE,
                tf INTEGER NOT NULL,
                doc_len INTEGER NOT NULL,
                PRIMARY KEY (term, rowid) INCLUDE (tf, doc_len)
            )
            """,
            "CREATE INDEX lt_postings_by_row ON lt_postings (rowid)",
            """
            INSERT INTO lt_postings (term, rowid, tf, doc_len)
            SELECT (u).lexeme, k.rowid, cardinality((u).positions), k.doc_len
            FROM lt_keywords k CROSS JOIN LATERAL unnest(k.terms) u
            """,
            """
            CREATE FUNCTION lt_postings_track() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO lt_postings (term, rowid, tf, doc_len)
                SELECT (u).lexeme, NEW.rowid, cardinality((u).positions), NEW.doc_len
                FROM unnest(NEW.terms) u;
                RETURN NEW;
            END $$
            """,
            """
            CREATE TRIGGER lt_keywords_postings AFTER INSERT ON lt_keywords
            FOR EACH ROW EXECUTE FUNCTION lt_postings_track()
            """,
            # Nothing reads the tsvectors through GIN any more; writes skip its upkeep.
            "DROP INDEX IF EXISTS lt_keywords_terms",
        ),
    ),
    Migration(
        3,
        # A keyword version per partition, moved by every change of its keyword rows
        # or items (triggers, so every writer keeps it, whatever its code version):
        # an instance's in-process copy of a partition's postings (postings.py) is
        # used only while the version it was read with is current. From the shared
        # sequence, so a partition re-created after forget_user never repeats one.
        # The row leaves with the partition's last item (forget_user leaves no user
        # id behind; a re-created partition starts at a new version).
        "keyword_versions",
        (
            "CREATE TABLE lt_keyword_versions (partition TEXT PRIMARY KEY, version BIGINT NOT NULL)",
            """
            INSERT INTO lt_keyword_versions (partition, version)
            SELECT partition, nextval('lt_partition_versions')
            FROM (SELECT DISTINCT partition FROM lt_items) d
            """,
            # Statement triggers over transition tables: a forget_user deleting
            # 1,000 rows bumps its partition once, not 1,000 times. PL/pgSQL keeps
            # its plans per session (a SQL-language helper was planned on every
            # call: +1.7-2.8 ms per put_memory; these add 0.3-0.6 ms).
            """
            CREATE FUNCTION lt_items_keyword_version() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO lt_keyword_versions (partition, version)
                SELECT d.p, nextval('lt_partition_versions')
                FROM (SELECT DISTINCT partition AS p FROM changed) d
                WHERE EXISTS (SELECT 1 FROM lt_items i WHERE i.partition = d.p)
                ON CONFLICT (partition) DO UPDATE SET version = EXCLUDED.version;
                IF TG_OP = 'DELETE' THEN
                    DELETE FROM lt_keyword_versions v
                    USING (SELECT DISTINCT partition AS p FROM changed) d
                    WHERE v.partition = d.p
                    AND NOT EXISTS (SELECT 1 FROM lt_items i WHERE i.partition = d.p);
                END IF;
                RETURN NULL;
            END $$
            """,
            # A keyword row deleted with its item (cascade) finds no item here: the
            # item's own trigger moved the version (or dropped its row).
            """
            CREATE FUNCTION lt_keywords_keyword_version() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO lt_keyword_versions (partition, version)
                SELECT d.p, nextval('lt_partition_versions')
                FROM (SELECT DISTINCT i.partition AS p FROM changed c
                      JOIN lt_items i ON i.rowid = c.rowid) d
                ON CONFLICT (partition) DO UPDATE SET version = EXCLUDED.version;
                RETURN NULL;
            END $$
            """,
            """
            CREATE TRIGGER lt_items_version_insert AFTER INSERT ON lt_items
            REFERENCING NEW TABLE AS changed FOR EACH STATEMENT
            EXECUTE FUNCTION lt_items_keyword_version()
            """,
            """
            CREATE TRIGGER lt_items_version_delete AFTER DELETE ON lt_items
            REFERENCING OLD TABLE AS changed FOR EACH STATEMENT
            EXECUTE FUNCTION lt_items_keyword_version()
            """,
            """
            CREATE TRIGGER lt_keywords_version_insert AFTER INSERT ON lt_keywords
            REFERENCING NEW TABLE AS changed FOR EACH STATEMENT
            EXECUTE FUNCTION lt_keywords_keyword_version()
            """,
            """
            CREATE TRIGGER lt_keywords_version_delete AFTER DELETE ON lt_keywords
            REFERENCING OLD TABLE AS changed FOR EACH STATEMENT
            EXECUTE FUNCTION lt_keywords_keyword_version()
            """,
        ),
    ),
)

MIGRATION_TABLE: Final = MigrationTable(
    create=(
        "CREATE TABLE IF NOT EXISTS lt_migrations ("
        "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_ts DOUBLE PRECISION NOT NULL)"
    ),
    select_applied="SELECT version FROM lt_migrations",
    insert_applied="INSERT INTO lt_migrations (version, name, applied_ts) VALUES (?, ?, ?)",
    # Two instances starting at once: one migrates, the other waits and finds it done.
    lock="SELECT pg_advisory_xact_lock(hashtextextended('lgm_longterm_migrations', 0))",
)


# The body is the scoped, space-separated token string FTS5 gets; each distinct
# token becomes a lexeme with its 1-based positions (tokens hold only letters,
# digits and CJK characters, so they need no escaping beyond the quotes).
INSERT_FTS_ROW: Final = """
INSERT INTO lt_keywords (rowid, terms, doc_len)
SELECT r.id, coalesce(string_agg('''' || t.tok || ''':' || t.positions, ' '), '')::tsvector, r.len
FROM (SELECT ?::bigint AS id, ?::text AS body) b
CROSS JOIN LATERAL (
    SELECT b.id, cardinality(string_to_array(b.body, ' ')) AS len
) r
CROSS JOIN LATERAL (
    SELECT tok, string_agg(least(n, 16383)::text, ',' ORDER BY n) AS positions
    FROM unnest(string_to_array(b.body, ' ')) WITH ORDINALITY AS u(tok, n)
    WHERE tok <> ''
    GROUP BY tok
) t
GROUP BY r.id, r.len
"""

# BM25 of every row matching any query term, FTS5's way: per term
# idf = max(ln((N - n + 0.5) / (n + 0.5)), 1e-6), then
# idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len)), summed. ``n`` is
# the term's document frequency over the whole index; since terms are
# partition-scoped that is this partition's count, as in FTS5. The two leading
# parameters are ``PostgresCatalog.match_params``: the planned terms and their
# document frequencies, as the plan read them (each term's postings are then one
# index-only range of the primary key, no counting pass). float8 all the way
# (``0.75 * doc_len`` was numeric arithmetic). 2,000 postings: 2.4 -> ~1.3 ms.
_SCORED = f"""
stats AS (
    SELECT greatest(docs, 1)::float8 AS n, greatest(tokens, 1)::float8 / greatest(docs, 1) AS avg_len
    FROM lt_keyword_stats WHERE id = 1
),
terms AS (
    SELECT q.term, greatest(ln((s.n - q.docs + 0.5) / (q.docs + 0.5)), 1e-6) AS idf, s.avg_len
    FROM unnest(?::text[], ?::float8[]) AS q(term, docs) CROSS JOIN stats s
),
scored AS (
    SELECT p.rowid AS hit,
           sum(t.idf * p.tf::float8 * {BM25_K1 + 1} / (p.tf::float8 + {BM25_K1} * (1 - {BM25_B}
               + {BM25_B} * p.doc_len::float8 / t.avg_len))) AS score
    FROM terms t CROSS JOIN LATERAL (
        SELECT rowid, tf, doc_len FROM lt_postings WHERE term = t.term OFFSET 0
    ) p
    GROUP BY p.rowid
)"""

# Ties on score go to the older row (``hit``), as FTS5's ascending-rowid scan
# leaves them, so a cut-off keeps the same rows on both catalogs.
KEYWORD_SEARCH_TEMPLATE: Final = (
    f"WITH {_SCORED}, top AS ("
    "SELECT scored.hit, scored.score FROM scored JOIN lt_items ON lt_items.rowid = scored.hit "
    "WHERE lt_items.rowid = ANY (ARRAY(SELECT hit FROM scored)) AND partition = ? AND {where} "
    "ORDER BY scored.score DESC, scored.hit LIMIT ?) "
    f"SELECT {ITEM_COLUMNS_I}, top.score FROM top JOIN lt_items i ON i.rowid = top.hit "
    "WHERE i.rowid = ANY (ARRAY(SELECT hit FROM top))"
)
KEYWORD_RANK_THEN_FILTER_TEMPLATE: Final = (
    f"WITH {_SCORED}, top AS (SELECT hit, score FROM scored ORDER BY score DESC, hit LIMIT ?) "
    f"SELECT {ITEM_COLUMNS_I}, (SELECT count(*) FROM top) AS ranked, top.score "
    "FROM top JOIN lt_items i ON i.rowid = top.hit "
    "WHERE i.rowid = ANY (ARRAY(SELECT hit FROM top)) AND i.partition = ? AND {where}"
)
# ``ARRAY[...]::bigint[]``: an empty list of pinned rowids is valid here too.
KEYWORD_RANK_SHARED_TEMPLATE: Final = (
    f"WITH {_SCORED} "
    "SELECT * FROM (SELECT hit, score, 0 FROM scored ORDER BY score DESC, hit LIMIT ?) a "
    "UNION ALL "
    "SELECT * FROM (SELECT hit, score, 1 FROM scored WHERE hit = ANY (ARRAY[{marks}]::bigint[]) "
    "ORDER BY score DESC, hit LIMIT ?) b"
)
# ``(partition || '')``: Postgres's ``+partition`` (see _sql_sqlite.py). A few dozen
# key lookups are always the plan; with stale statistics (a freshly loaded user)
# the planner ANDed them with a bitmap of the whole partition (0.3 -> 0.1 ms at 10k).
# The same pass with the pinned search's eligible rows found in the statement (what
# SELECT_ROWIDS_BY_TYPE_TEMPLATE returns on SQLite, a round trip of its own there),
# at most ``?`` of them; the last row counts them, so the caller can tell when there
# were too many to share the pass.
KEYWORD_RANK_SHARED_ELIGIBLE_TEMPLATE: Final = (
    f"WITH {_SCORED}, "
    "eligible AS (SELECT rowid FROM lt_items WHERE partition = ? AND {where} LIMIT ?) "
    "SELECT * FROM (SELECT hit, score, 0 FROM scored ORDER BY score DESC, hit LIMIT ?) a "
    "UNION ALL "
    "SELECT * FROM (SELECT hit, score, 1 FROM scored "
    "WHERE hit = ANY (ARRAY(SELECT rowid FROM eligible)) ORDER BY score DESC, hit LIMIT ?) b "
    "UNION ALL SELECT (SELECT count(*) FROM eligible), 0, 2"
)
# ``{marks}`` is one array parameter here (``PostgresCatalog.id_list``): the text
# then repeats from search to search, so psycopg prepares it (no planning of a
# 60-item IN list per search: 0.5 -> 0.37 ms a read on a quiet box).
SELECT_ROWS_BY_ROWID_TEMPLATE: Final = (
    f"SELECT {ITEM_COLUMNS} FROM lt_items WHERE rowid = ANY ({{marks}}::bigint[]) "
    "AND (partition || '') = ? AND {where}"
)
SELECT_ROWIDS_BY_TYPE_TEMPLATE: Final = "SELECT rowid FROM lt_items WHERE partition = ? AND {where}"
# LIMIT NULL is "no limit" (SQLite's -1).
SELECT_ITEMS_TEMPLATE: Final = (
    f"SELECT {ITEM_COLUMNS} FROM lt_items WHERE partition = ? AND {{where}} "
    "ORDER BY updated_ts DESC, rowid DESC LIMIT nullif(?::bigint, -1) OFFSET ?"
)
SELECT_NAMESPACES: Final = (
    'SELECT DISTINCT namespace COLLATE "C" FROM lt_items ORDER BY namespace COLLATE "C"'
)

SELECT_PARTITION_FOR_WRITE: Final = SELECT_PARTITION + " FOR UPDATE"
# Two instances creating one partition at once: the second keeps the first's row.
INSERT_PARTITION: Final = (
    "INSERT INTO lt_partitions (partition, collection, dedicated, vector_count) "
    "VALUES (?, ?, 0, 0) ON CONFLICT (partition) DO NOTHING"
)
ADD_VECTOR_COUNT: Final = (
    "UPDATE lt_partitions SET vector_count = greatest(0, vector_count + ?), "
    "version = nextval('lt_partition_versions') WHERE partition = ? RETURNING version"
)
# A search's first round trip (``PostgresCatalog.plan_query``): the index's N and
# token total (BM25's IDF and average length), SELECT_PARTITION's columns (NULLs
# before the partition's first vector write), the partition's keyword version,
# and -- when that version is not the one passed in (first ``?``: the version of
# this instance's copy, NULL for none) -- the partition's item count and every
# query term's postings; when it is, only the postings of the terms not copied
# yet. Postings come as a JSON object ``{term: [[rowid...], [tf...], [doc_len...]]}``
# (NULL when none), read by index only. Parameters: cached version, partition
# x3, cached version, terms not copied, all terms.
SELECT_PLAN: Final = (
    "SELECT s.docs, s.tokens, p.collection, p.dedicated, p.vector_count, p.version, v.version, "
    "CASE WHEN v.version = ?::bigint THEN NULL "
    "ELSE (SELECT count(*) FROM lt_items i WHERE i.partition = ?) END, "
    "(SELECT json_object_agg(g.term, json_build_array(g.r, g.t, g.l)) FROM ("
    "SELECT term, array_agg(rowid) AS r, array_agg(tf) AS t, array_agg(doc_len) AS l "
    "FROM lt_postings WHERE term = ANY (CASE WHEN v.version = ?::bigint THEN ?::text[] "
    "ELSE ?::text[] END) GROUP BY term) g) "
    "FROM lt_keyword_stats s LEFT JOIN lt_partitions p ON p.partition = ? "
    "LEFT JOIN lt_keyword_versions v ON v.partition = ? WHERE s.id = 1"
)
# Document frequencies of planned terms missing from the in-process copy (another
# thread replaced or evicted it between planning and the keyword statement).
SELECT_DOC_FREQ: Final = (
    "SELECT term, count(*) FROM lt_postings WHERE term = ANY (?::text[]) GROUP BY term"
)

# Dims are fixed by the first instance: a racing second one keeps the first's value.
INSERT_META_IF_ABSENT: Final = (
    "INSERT INTO lt_meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING"
)
VACUUM: Final = "VACUUM lt_items, lt_keywords, lt_postings, lt_partitions, lt_keyword_versions"
# A delete marks, in its own transaction, that the next VACUUM FULL owes an
# erasure (a DELETE leaves the row as a dead tuple); ``erase_pending()`` runs it
# only when marked, and clears the mark only if no delete renewed it meanwhile.
MARK_ERASE_PENDING: Final = (
    "INSERT INTO lt_meta (name, value) VALUES ('erase_pending', '1') ON CONFLICT (name) "
    "DO UPDATE SET value = (lt_meta.value::bigint + 1)::text"
)
SELECT_ERASE_PENDING: Final = "SELECT value FROM lt_meta WHERE name = 'erase_pending'"
CLEAR_ERASE_PENDING: Final = "DELETE FROM lt_meta WHERE name = 'erase_pending' AND value = ?"
# forget_user's scrub: a plain VACUUM leaves a deleted row's bytes in the page's
# free space and its lexemes in the GIN index (measured on PG 15); FULL rewrites
# the tables and their indexes, under an exclusive lock on each meanwhile.
VACUUM_FULL: Final = (
    "VACUUM (FULL) lt_items, lt_keywords, lt_postings, lt_partitions, lt_vector_intents, "
    "lt_keyword_versions"
)

SELECT_ROWS_BY_ITEM_ID_TEMPLATE: Final = (
    f"SELECT {ITEM_COLUMNS} FROM lt_items WHERE (partition || '') = ? "
    "AND item_id = ANY ({marks}::text[]) AND {where}"
)

# -- vector intents (repair.py) -----------------------------------------------------
INSERT_VECTOR_INTENT: Final = (
    "INSERT INTO lt_vector_intents (token, partition, item_id, created_ts) "
    "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING"
)
# Held by every vector write of a partition and by its repair, until commit: a
# repair never runs beside a live write, and a dead writer's lock is released
# with its connection.
LOCK_PARTITION: Final = "SELECT pg_advisory_xact_lock(hashtextextended('lgm-part' || ?, 0))"
SET_VECTOR_COUNT: Final = (
    "UPDATE lt_partitions SET vector_count = ?, version = nextval('lt_partition_versions') "
    "WHERE partition = ?"
)

# Recall's core-profile candidates (see _sql_sqlite.py): the current memories of a
# partition by importance, whatever the query; large partitions only their keyed
# slots. ``NULLS LAST``: SQLite sorts NULL lowest, so DESC puts it last there too.
PROFILE_ROWS_TEMPLATE: Final = (
    "SELECT {columns} FROM lt_items WHERE rowid IN ("
    "SELECT rowid FROM lt_items WHERE partition = ? AND {where} "
    "ORDER BY mem_importance DESC NULLS LAST, mem_active_ts DESC NULLS LAST LIMIT ?) "
    "ORDER BY mem_importance DESC NULLS LAST, mem_active_ts DESC NULLS LAST"
)
PROFILE_KEYED_ROWS_TEMPLATE: Final = (
    "SELECT {columns} FROM lt_items WHERE rowid IN ("
    "SELECT rowid FROM lt_items WHERE partition = ? AND mem_key IS NOT NULL AND {where} "
    "ORDER BY mem_importance DESC NULLS LAST, mem_active_ts DESC NULLS LAST LIMIT ?) "
    "ORDER BY mem_importance DESC NULLS LAST, mem_active_ts DESC NULLS LAST"
)
