"""Long-term memory: a LangGraph ``BaseStore`` on Chroma with a catalog and keyword index.

Where things live:

* ``store.py``: ``ChromaMemoryStore``, its constructors (``embedded``,
  ``from_http``), assembled from the parts below.
* ``surface.py``: the BaseStore surface (``batch``/``abatch`` over LangGraph's ops).
* ``retrieval.py``: query planning, hybrid keyword + vector candidates, ranking.
* ``writes.py``: catalog + vector writes, shard -> dedicated promotion, supersede.
* ``memories.py``: the typed memory API (``put_memory``, ``search_memories``,
  ``recall_memories``...).
* ``lifecycle.py``: expiry, archival, the TTL sweeper, ``forget_user``.
* ``erasure.py``: what a delete leaves behind, removed: the keyword index
  scrubbed, the Chroma collection that held a vector rebuilt without it.
* ``repair.py``: vector writes a crash or a Chroma outage interrupted, settled
  from the catalog on open (intent rows, see its docstring).
* ``reembedding.py``: the embedding model's recorded identity (pure parts in
  ``embedding_identity.py``), refusing another model, ``reembed``.
* ``catalog.py``: the catalog interface and its SQLite dialect; statements in
  ``_sql_sqlite.py``. ``catalog_postgres.py``: the shared Postgres dialect
  (``_sql_postgres.py``).
* ``vectors.py`` (Chroma layout, vector cache), ``where.py`` (user ids,
  partitions, ``WHERE`` builders), ``rows.py`` (row/item/record mapping),
  ``tokenize.py`` (Chinese + English tokens), ``_state.py`` (shared constants
  and types). Sync and async twins are one generator each, run by
  ``langgraph_memory._drive``.

Ranking lives in ``langgraph_memory.scoring``.
"""

# ruff: noqa: E402  (the extra is checked before the imports that need it)
from langgraph_memory._extras import require_extra

# Before the first numpy import below; chromadb itself is imported when a store opens.
require_extra("longterm", feature="ChromaMemoryStore (langgraph_memory.longterm)")

from langgraph_memory.longterm.store import ChromaMemoryStore, RecalledMemories

__all__ = ["ChromaMemoryStore", "RecalledMemories"]
