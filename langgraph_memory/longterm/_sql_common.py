"""Statements both catalog dialects run as written (standard SQL with ``?`` marks).

``_sql_sqlite.py`` and ``_sql_postgres.py`` re-export these beside their own
(keyword index, migrations, locks, upsert conflicts), so the store's parts
only ever say ``catalog.sql.NAME``; the Postgres catalog turns ``?`` into
psycopg's ``%s``.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "COUNT_PARTITION_ITEMS",
    "COUNT_VECTOR_ROWS_AFTER",
    "DELETE_META",
    "RESEAL_VALUE",
    "SELECT_PARTITIONS_OF_COLLECTION",
    "SELECT_PARTITION_COLLECTIONS",
    "SELECT_VALUES_AFTER",
    "SELECT_VECTOR_IDS_OF_COLLECTION",
    "SELECT_VECTOR_ROWS_AFTER",
]

ITEM_COLUMNS: Final = (
    "rowid, item_id, partition, namespace, key, value, created_ts, updated_ts, "
    "ttl_minutes, expires_ts, has_vector, mem_importance, mem_active_ts"
)

# Same columns prefixed for joins with lt_fts.
ITEM_COLUMNS_I: Final = ", ".join(f"i.{c.strip()}" for c in ITEM_COLUMNS.split(","))

SELECT_ITEM: Final = (
    f"SELECT {ITEM_COLUMNS} FROM lt_items WHERE partition = ? AND namespace = ? AND key = ?"
)

UPSERT_ITEM: Final = """
INSERT INTO lt_items (
    item_id, partition, namespace, key, value, created_ts, updated_ts, ttl_minutes, expires_ts,
    has_vector, mem_status, mem_type, mem_key, valid_from_ts, valid_to_ts, mem_expires_ts,
    mem_importance, mem_active_ts
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (partition, namespace, key) DO UPDATE SET
    value = excluded.value,
    updated_ts = excluded.updated_ts,
    ttl_minutes = excluded.ttl_minutes,
    expires_ts = excluded.expires_ts,
    has_vector = excluded.has_vector,
    mem_status = excluded.mem_status,
    mem_type = excluded.mem_type,
    mem_key = excluded.mem_key,
    valid_from_ts = excluded.valid_from_ts,
    valid_to_ts = excluded.valid_to_ts,
    mem_expires_ts = excluded.mem_expires_ts,
    mem_importance = excluded.mem_importance,
    mem_active_ts = excluded.mem_active_ts
RETURNING rowid
"""

DELETE_ITEM: Final = "DELETE FROM lt_items WHERE rowid = ? AND partition = ?"

DELETE_FTS_ROW: Final = "DELETE FROM lt_keywords WHERE rowid = ?"

REFRESH_TTL: Final = (
    "UPDATE lt_items SET expires_ts = ? + ttl_minutes * 60.0 "
    "WHERE partition = ? AND rowid = ? AND ttl_minutes IS NOT NULL"
)

UPDATE_VALUE: Final = """
UPDATE lt_items SET value = ?, updated_ts = ?, mem_status = ?, valid_to_ts = ?, mem_expires_ts = ?,
    mem_importance = ?, mem_active_ts = ?
WHERE partition = ? AND rowid = ?
"""

# Access statistics change the value (``last_accessed_at``, ``access_count``) but not
# ``updated_ts``: being recalled is not an edit.
TOUCH_ITEM: Final = (
    "UPDATE lt_items SET value = ?, mem_active_ts = ? WHERE partition = ? AND rowid = ?"
)

SELECT_VECTOR_IDS: Final = "SELECT item_id FROM lt_items WHERE partition = ? AND has_vector = 1"

SELECT_PARTITION_ITEM_IDS: Final = (
    "SELECT rowid, item_id FROM lt_items WHERE partition = ? AND has_vector = 1"
)

SELECT_EXPIRED: Final = (
    "SELECT rowid, item_id, partition, has_vector FROM lt_items "
    "WHERE expires_ts IS NOT NULL AND expires_ts <= ?"
)

SELECT_PARTITION: Final = (
    "SELECT collection, dedicated, vector_count, version FROM lt_partitions WHERE partition = ?"
)

SET_DEDICATED: Final = "UPDATE lt_partitions SET collection = ?, dedicated = 1 WHERE partition = ?"

DELETE_PARTITION: Final = "DELETE FROM lt_partitions WHERE partition = ?"

DELETE_PARTITION_ITEMS: Final = "DELETE FROM lt_items WHERE partition = ?"

COUNT_PARTITION_ITEMS: Final = "SELECT count(*) FROM lt_items WHERE partition = ?"

SELECT_META: Final = "SELECT value FROM lt_meta WHERE name = ?"

UPSERT_META: Final = (
    "INSERT INTO lt_meta (name, value) VALUES (?, ?) "
    "ON CONFLICT (name) DO UPDATE SET value = excluded.value"
)

# A shard-tier partition's eligible rows with a vector (exact ranking of all of them).
SELECT_VECTOR_ROWS_TEMPLATE: Final = (
    f"SELECT {ITEM_COLUMNS} FROM lt_items WHERE partition = ? AND has_vector = 1 AND {{where}}"
)

# A user's active memories with one profile key (two active ones never share it).
SELECT_ACTIVE_BY_MEM_KEY: Final = (
    f"SELECT {ITEM_COLUMNS} FROM lt_items WHERE partition = ? AND namespace = ? "
    "AND mem_key = ? AND mem_status = 'active'"
)

# A user's typed memories by id (any status).
SELECT_MEMORIES_BY_ID_TEMPLATE: Final = (
    f"SELECT {ITEM_COLUMNS} FROM lt_items WHERE partition = ? AND namespace = ? "
    "AND key IN ({marks}) AND mem_status IS NOT NULL"
)

# Active memories matching a lifecycle condition (expiry, staleness), all users...
SELECT_ACTIVE_WHERE_TEMPLATE: Final = (
    f"SELECT {ITEM_COLUMNS} FROM lt_items WHERE mem_status = 'active' AND {{condition}}"
)

# ... or one user's.
SELECT_PARTITION_ACTIVE_WHERE_TEMPLATE: Final = (
    f"SELECT {ITEM_COLUMNS} FROM lt_items WHERE mem_status = 'active' AND {{condition}} "
    "AND partition = ?"
)

# Everything forget_user removes from one partition.
SELECT_PARTITION_ROWS_TO_FORGET: Final = (
    "SELECT rowid, item_id, has_vector, mem_status FROM lt_items WHERE partition = ?"
)

DELETE_VECTOR_INTENTS: Final = "DELETE FROM lt_vector_intents WHERE token = ?"

SELECT_INTENT_PARTITIONS: Final = "SELECT DISTINCT partition FROM lt_vector_intents"

SELECT_PARTITION_INTENTS: Final = "SELECT item_id FROM lt_vector_intents WHERE partition = ?"

DELETE_PARTITION_INTENTS: Final = "DELETE FROM lt_vector_intents WHERE partition = ?"

SELECT_VECTOR_ROWS_OF_PARTITION: Final = (
    f"SELECT {ITEM_COLUMNS} FROM lt_items WHERE partition = ? AND has_vector = 1"
)

DELETE_META: Final = "DELETE FROM lt_meta WHERE name = ?"

# Re-embedding (reembedding.py): every vector-bearing row, in rowid order, in batches.
COUNT_VECTOR_ROWS_AFTER: Final = "SELECT count(*) FROM lt_items WHERE has_vector = 1 AND rowid > ?"
SELECT_VECTOR_ROWS_AFTER: Final = (
    "SELECT rowid, partition, item_id, value FROM lt_items "
    "WHERE has_vector = 1 AND rowid > ? ORDER BY rowid LIMIT ?"
)
SELECT_PARTITION_COLLECTIONS: Final = "SELECT partition, collection FROM lt_partitions"

# Erasure rebuilds (erasure.py): the partitions living in one collection, and
# the vectors the catalog still lists there (what the rebuilt collection keeps).
SELECT_PARTITIONS_OF_COLLECTION: Final = "SELECT partition FROM lt_partitions WHERE collection = ?"
SELECT_VECTOR_IDS_OF_COLLECTION: Final = (
    "SELECT i.item_id FROM lt_items i JOIN lt_partitions p ON p.partition = i.partition "
    "WHERE p.collection = ? AND i.has_vector = 1 ORDER BY i.item_id"
)

# ``reencrypt()``: values in rowid order after a cursor, and a compare-and-set
# rewrite (a value changed by a concurrent write since it was read is left to
# that write, which sealed it under the current key already).
SELECT_VALUES_AFTER: Final = (
    "SELECT rowid, item_id, partition, value FROM lt_items WHERE rowid > ? ORDER BY rowid LIMIT ?"
)
RESEAL_VALUE: Final = "UPDATE lt_items SET value = ? WHERE rowid = ? AND value = ?"
