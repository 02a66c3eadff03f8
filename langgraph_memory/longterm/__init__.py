"""Long-term memory: a LangGraph ``BaseStore`` on Chroma with an SQLite FTS5 keyword index.

Layout: ``store.py`` (the store and its sync/async shells), ``catalog.py``
(SQLite I/O), ``_sql.py`` (every statement), ``vectors.py`` (Chroma layout and
vector search), ``where.py`` (user ids, partitions, ``WHERE`` builders),
``rows.py`` (row/item/record mapping), ``tokenize.py`` (Chinese + English
tokens for FTS5). Ranking lives in ``langgraph_memory.scoring``.
"""

from langgraph_memory.longterm.store import ChromaMemoryStore, RecalledMemories

__all__ = ["ChromaMemoryStore", "RecalledMemories"]
