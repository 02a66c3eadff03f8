"""Every SQL statement of the long-term store's SQLite catalog, as named constants.

The file holds the item catalog (values, already redacted), the FTS5 keyword
index and the partition -> Chroma collection map. Chroma itself only ever
receives vectors and opaque ids: no text reaches Chroma's own files, which we
could not vacuum (over HTTP not at all), so forgetting a user only has to
scrub this one file.
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

# Applied by ``langgraph_memory._migrations.migrate``: each migration and its
# "applied" row commit together; a file from a newer release is refused.
MIGRATIONS: Final[tuple[Migration, ...]] = (
    Migration(
        1,
        "0001_items_fts_partitions",
        (
            """
            CREATE TABLE IF NOT EXISTS lt_items (
                rowid INTEGER PRIMARY KEY,
                item_id TEXT NOT NULL UNIQUE,
                partition TEXT NOT NULL,
                namespace TEXT NOT NULL,
                key TEXT NOT NULL,
                value TEXT NOT NULL,
                created_ts REAL NOT NULL,
                updated_ts REAL NOT NULL,
                ttl_minutes REAL,
                expires_ts REAL,
                has_vector INTEGER NOT NULL DEFAULT 0,
                mem_status TEXT,
                mem_type TEXT,
                mem_key TEXT,
                valid_from_ts REAL,
                valid_to_ts REAL,
                mem_expires_ts REAL,
                -- Scoring inputs as columns, so ranking never parses JSON:
                -- importance already discounted by confidence for agent guesses,
                -- and the later of last update and last recall.
                mem_importance REAL,
                mem_active_ts REAL,
                UNIQUE (partition, namespace, key)
            )
            """,
            "CREATE INDEX IF NOT EXISTS lt_items_by_partition ON lt_items (partition, namespace)",
            "CREATE INDEX IF NOT EXISTS lt_items_by_expiry ON lt_items (expires_ts) WHERE expires_ts IS NOT NULL",
            "CREATE INDEX IF NOT EXISTS lt_items_by_mem_key ON lt_items (partition, mem_key) WHERE mem_key IS NOT NULL",
            # Pre-tokenised text (see tokenize.py): unicode61 only splits on our spaces.
            # ``part`` holds one opaque token per partition so a query can AND it in.
            """
            CREATE VIRTUAL TABLE IF NOT EXISTS lt_fts USING fts5(
                part, body, tokenize = 'unicode61 remove_diacritics 0'
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS lt_partitions (
                partition TEXT PRIMARY KEY,
                collection TEXT NOT NULL,
                dedicated INTEGER NOT NULL DEFAULT 0,
                vector_count INTEGER NOT NULL DEFAULT 0,
                -- Bumped with every vector write, in the same transaction: an
                -- in-process vector cache is valid while its version matches.
                version INTEGER NOT NULL DEFAULT 0
            )
            """,
            "CREATE TABLE IF NOT EXISTS lt_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
        ),
    ),
    Migration(
        2,
        # Per-partition term lists: every indexed token carries its partition's
        # scope prefix (rows.term_scope), so a query term's posting list holds one
        # user's rows instead of every user's (keyword search p50 5.5 ms -> well
        # under 1 ms at 100 users x 1000). The old table's stored bodies are
        # rewritten by ``lgm_scope_tokens`` (a Python function the catalog
        # registers before migrating), so existing files keep working.
        "0002_partition_scoped_terms",
        (
            """
            CREATE VIRTUAL TABLE lt_keywords USING fts5(
                body, tokenize = 'unicode61 remove_diacritics 0'
            )
            """,
            """
            INSERT INTO lt_keywords (rowid, body)
            SELECT f.rowid, lgm_scope_tokens(i.partition, f.body)
            FROM lt_fts f JOIN lt_items i ON i.rowid = f.rowid
            """,
            "DROP TABLE lt_fts",
        ),
    ),
    Migration(
        3,
        # Recall's pinned search (standing instructions) reads a user's memories of
        # one type: ~100 of 10k rows through this index instead of the partition.
        "0003_items_by_mem_type",
        ("CREATE INDEX IF NOT EXISTS lt_items_by_mem_type ON lt_items (partition, mem_type)",),
    ),
    Migration(
        4,
        # Vector writes in flight (see repair.py): committed before Chroma is
        # touched, deleted in the transaction that commits the catalog side, so a
        # row left behind names exactly the vectors a crash may have left wrong.
        "0004_vector_intents",
        (
            """
            CREATE TABLE IF NOT EXISTS lt_vector_intents (
                token TEXT NOT NULL,
                partition TEXT NOT NULL,
                item_id TEXT NOT NULL,
                created_ts REAL NOT NULL,
                PRIMARY KEY (token, partition, item_id)
            )
            """,
            "CREATE INDEX IF NOT EXISTS lt_vector_intents_by_partition "
            "ON lt_vector_intents (partition)",
        ),
    ),
)
# Name of the SQL function migration 0002 calls: (partition, body) -> scoped body.
SCOPE_TOKENS_FUNCTION: Final = "lgm_scope_tokens"

# The table predates the shared runner and keys migrations by name ("0003_...");
# the version is the name's number.
MIGRATION_TABLE: Final = MigrationTable(
    create=(
        "CREATE TABLE IF NOT EXISTS lt_migrations (name TEXT PRIMARY KEY, applied_ts REAL NOT NULL)"
    ),
    select_applied="SELECT CAST(substr(name, 1, 4) AS INTEGER) FROM lt_migrations",
    insert_applied="INSERT INTO lt_migrations (name, applied_ts) VALUES (?2, ?3)",
)

PRAGMAS: Final = (
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = NORMAL",
    # Freed pages are zeroed, so deleted text does not linger in the file.
    "PRAGMA secure_delete = ON",
    "PRAGMA busy_timeout = 10000",
    # Reads through a memory map and a 32 MB page cache instead of a read() per
    # 4 kB page into SQLite's 2 MB default cache: keyword search p50 ~4.5 -> ~2.7 ms
    # at 100 users x 1000 on the loaded 2-core box. Writes still go through the
    # journal, so secure_delete and the WAL behave as before.
    "PRAGMA mmap_size = 268435456",
    "PRAGMA cache_size = -32768",
)


INSERT_FTS_ROW: Final = "INSERT INTO lt_keywords (rowid, body) VALUES (?, ?)"

# Keyword search. Query terms carry the partition's scope prefix, so FTS5 only
# reads (and BM25 only scores) this partition's rows; ``partition = ?`` is still
# bound, so a scope-prefix collision could never return another user's row.
# The inner query ranks (rowid, score) pairs only: sorting whole rows with their
# JSON values cost more than the ranking; the winners' rows are joined after.
KEYWORD_SEARCH_TEMPLATE: Final = (
    "WITH top AS ("
    "SELECT lt_keywords.rowid AS hit, -bm25(lt_keywords) AS score "
    "FROM lt_keywords JOIN lt_items ON lt_items.rowid = lt_keywords.rowid "
    "WHERE lt_keywords MATCH ? AND partition = ? AND {where} "
    "ORDER BY score DESC LIMIT ?) "
    f"SELECT {ITEM_COLUMNS_I}, top.score FROM top JOIN lt_items i ON i.rowid = top.hit"
)
# The same ranking without the join, for searches whose filter keeps most rows
# (the current state of a user's memories): FTS5 ranks its matches alone, the
# catalog then checks partition and filter on the top ``?`` only. Joining every
# match before ranking cost ~0.5 ms of 1.9 at 1,600 matches. ``ranked`` tells
# whether the cut-off was reached: when too few winners pass the filter and
# more matches exist, the caller falls back to KEYWORD_SEARCH_TEMPLATE.
KEYWORD_RANK_THEN_FILTER_TEMPLATE: Final = (
    "WITH top AS ("
    "SELECT rowid AS hit, -bm25(lt_keywords) AS score FROM lt_keywords "
    "WHERE lt_keywords MATCH ? ORDER BY score DESC LIMIT ?) "
    f"SELECT {ITEM_COLUMNS_I}, (SELECT count(*) FROM top) AS ranked, top.score "
    "FROM top JOIN lt_items i ON i.rowid = top.hit WHERE i.partition = ? AND {where}"
)
# Recall's shared keyword pass (query + pinned searches of one turn): BM25 once
# for every match, then the top ``?`` overall and the top ``?`` among the pinned
# searches' eligible rows (their rowids bound in the IN list). Before, the pinned
# search ran its own FTS5 pass over the same matches (1.8 ms of a 4.2 ms pair at
# 10k memories).
KEYWORD_RANK_SHARED_TEMPLATE: Final = (
    "WITH scored AS MATERIALIZED ("
    "SELECT rowid AS hit, -bm25(lt_keywords) AS score FROM lt_keywords "
    "WHERE lt_keywords MATCH ?) "
    "SELECT * FROM (SELECT hit, score, 0 FROM scored ORDER BY score DESC LIMIT ?) "
    "UNION ALL "
    "SELECT * FROM (SELECT hit, score, 1 FROM scored WHERE hit IN ({marks}) "
    "ORDER BY score DESC LIMIT ?)"
)
# ``+partition``: keeps the planner on rowid lookups (with ``partition = ? AND
# namespace = ?`` it preferred walking the partition's index).
SELECT_ROWS_BY_ROWID_TEMPLATE: Final = (
    f"SELECT {ITEM_COLUMNS} FROM lt_items WHERE rowid IN ({{marks}}) AND +partition = ? "
    "AND {where}"
)
# ``{where}`` must filter on ``mem_type``: the planner would otherwise walk the
# partition by (partition, namespace).
SELECT_ROWIDS_BY_TYPE_TEMPLATE: Final = (
    "SELECT rowid FROM lt_items INDEXED BY lt_items_by_mem_type WHERE partition = ? AND {where}"
)
SELECT_ITEMS_TEMPLATE: Final = (
    f"SELECT {ITEM_COLUMNS} FROM lt_items WHERE partition = ? AND {{where}} "
    "ORDER BY updated_ts DESC, rowid DESC LIMIT ? OFFSET ?"
)
SELECT_NAMESPACES: Final = "SELECT DISTINCT namespace FROM lt_items ORDER BY namespace"

# Recall's core-profile candidates: the current memories of a partition by importance,
# whatever the query. Small partitions are ranked whole (up to 500 rows: ~0.3 ms);
# large ones only their keyed slots, walked through the partial index on mem_key
# (10k memories: no full scan and sort on the reply path).
# The inner query sorts (rowid, importance) pairs only; the rows, JSON values and all,
# are read for the winners (sorting whole rows cost 3x at 1,000 memories).
PROFILE_ROWS_TEMPLATE: Final = (
    "SELECT {columns} FROM lt_items WHERE rowid IN ("
    "SELECT rowid FROM lt_items WHERE partition = ? AND {where} "
    "ORDER BY mem_importance DESC, mem_active_ts DESC LIMIT ?) "
    "ORDER BY mem_importance DESC, mem_active_ts DESC"
)
PROFILE_KEYED_ROWS_TEMPLATE: Final = (
    "SELECT {columns} FROM lt_items WHERE rowid IN ("
    "SELECT rowid FROM lt_items WHERE partition = ? AND mem_key IS NOT NULL AND {where} "
    "ORDER BY mem_importance DESC, mem_active_ts DESC LIMIT ?) "
    "ORDER BY mem_importance DESC, mem_active_ts DESC"
)
# BEGIN IMMEDIATE already holds the file's write lock: no row locks needed.
SELECT_PARTITION_FOR_WRITE: Final = SELECT_PARTITION
INSERT_PARTITION: Final = (
    "INSERT INTO lt_partitions (partition, collection, dedicated, vector_count) VALUES (?, ?, 0, 0)"
)
ADD_VECTOR_COUNT: Final = (
    "UPDATE lt_partitions SET vector_count = max(0, vector_count + ?), version = version + 1 "
    "WHERE partition = ? RETURNING version"
)

# Per-connection view of FTS5's term statistics (document frequency per scoped
# term, i.e. per partition).
CREATE_VOCAB_VIEW: Final = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.lt_keywords_vocab "
    "USING fts5vocab(main, lt_keywords, 'row')"
)
SELECT_TERM_DOC_FREQ: Final = "SELECT term, doc FROM temp.lt_keywords_vocab WHERE term IN ({marks})"
# Changes whenever another connection commits to the file.
DATA_VERSION: Final = "PRAGMA data_version"


# Rewrites the FTS5 b-tree without the deleted rows' tokens; VACUUM and a WAL
# truncation then drop the freed pages from the file itself.
FTS_OPTIMIZE: Final = "INSERT INTO lt_keywords (lt_keywords) VALUES ('optimize')"
VACUUM: Final = "VACUUM"
WAL_TRUNCATE: Final = "PRAGMA wal_checkpoint(TRUNCATE)"

# -- statements that used to be built inline in store.py ---------------------------

# Vector winners of a dedicated partition joined to the catalog. ``+partition``
# keeps the planner on the item_id index: given ``partition = ? AND namespace =
# ?`` it preferred walking the whole partition (6.6 ms at 10k memories, vs ~0.2
# ms for 30 id lookups).
SELECT_ROWS_BY_ITEM_ID_TEMPLATE: Final = (
    f"SELECT {ITEM_COLUMNS} FROM lt_items "
    "WHERE +partition = ? AND item_id IN ({marks}) AND {where}"
)

# -- vector intents (repair.py) -----------------------------------------------------
INSERT_VECTOR_INTENT: Final = (
    "INSERT OR IGNORE INTO lt_vector_intents (token, partition, item_id, created_ts) "
    "VALUES (?, ?, ?, ?)"
)
# BEGIN IMMEDIATE already serialises writers of the file.
LOCK_PARTITION: Final[str | None] = None
SET_VECTOR_COUNT: Final = (
    "UPDATE lt_partitions SET vector_count = ?, version = version + 1 WHERE partition = ?"
)
