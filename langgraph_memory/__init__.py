"""langgraph-memory: working, session and long-term memory for LangGraph agents.

Public API only. The three layers live in subpackages: ``session``
(checkpointers), ``longterm`` (the Chroma store), ``nodes`` (recall, compress,
extract, reconcile) and ``wiring`` (graph helpers, ``create_agent`` middleware).

Heavy names (the store pulls in chromadb, the savers their drivers) are
imported on first use, so ``from langgraph_memory import SqliteSaver`` does not
pay for Chroma.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from langgraph_memory._extras import EXTRA_MODULES, is_installed
from langgraph_memory.config import PrivacyPolicy, RetentionPolicy, ScoringWeights
from langgraph_memory.errors import LangGraphMemoryError
from langgraph_memory.types import (
    CandidateMemory,
    ForgetReceipt,
    MemoryOp,
    MemoryRecord,
    MemorySource,
    MemoryStatus,
    MemoryType,
    ScoredMemory,
)

if TYPE_CHECKING:
    from langgraph_memory.embeddings import HashingEmbeddings
    from langgraph_memory.longterm import ChromaMemoryStore
    from langgraph_memory.nodes import (
        create_compress_node,
        create_extract_node,
        create_recall_node,
        create_reconcile_node,
    )
    from langgraph_memory.nodes.extract import LLMMemoryExtractor
    from langgraph_memory.nodes.rules import RuleBasedExtractor
    from langgraph_memory.pipeline import MemoryWriter, PostgresMemoryQueue, SqliteMemoryQueue
    from langgraph_memory.privacy import Redactor, redact
    from langgraph_memory.session import (
        AsyncPostgresSaver,
        AsyncSqliteSaver,
        PostgresSaver,
        SqliteSaver,
    )
    from langgraph_memory.wiring import MemoryMiddleware, MemoryState, add_memory_nodes

# public name -> module that defines it (imported lazily by __getattr__)
_LAZY: dict[str, str] = {
    "SqliteSaver": "langgraph_memory.session",
    "AsyncSqliteSaver": "langgraph_memory.session",
    "PostgresSaver": "langgraph_memory.session",
    "AsyncPostgresSaver": "langgraph_memory.session",
    "ChromaMemoryStore": "langgraph_memory.longterm",
    "HashingEmbeddings": "langgraph_memory.embeddings",
    "redact": "langgraph_memory.privacy",
    "Redactor": "langgraph_memory.privacy",
    "MemoryWriter": "langgraph_memory.pipeline",
    "create_recall_node": "langgraph_memory.nodes",
    "create_compress_node": "langgraph_memory.nodes",
    "create_extract_node": "langgraph_memory.nodes",
    "create_reconcile_node": "langgraph_memory.nodes",
    "LLMMemoryExtractor": "langgraph_memory.nodes.extract",
    "RuleBasedExtractor": "langgraph_memory.nodes.rules",
    "SqliteMemoryQueue": "langgraph_memory.pipeline",
    "PostgresMemoryQueue": "langgraph_memory.pipeline",
    "MemoryState": "langgraph_memory.wiring",
    "add_memory_nodes": "langgraph_memory.wiring",
    "MemoryMiddleware": "langgraph_memory.wiring",
}


def __getattr__(name: str) -> Any:
    if name == "__all__":
        return [
            public
            for public in _PUBLIC
            if public not in _EXTRA_OF
            or all(is_installed(m) for m in EXTRA_MODULES[_EXTRA_OF[public]])
        ]
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'langgraph_memory' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # next access skips __getattr__
    return value


# Names that need an optional extra: a star import skips them when it is missing
# (naming one would raise MissingExtraError); a direct import still explains the fix.
_EXTRA_OF: dict[str, str] = {
    "AsyncPostgresSaver": "postgres",
    "PostgresSaver": "postgres",
    "ChromaMemoryStore": "longterm",
    "HashingEmbeddings": "longterm",
    "MemoryMiddleware": "agents",
}

__all__ = [
    "AsyncPostgresSaver",
    "AsyncSqliteSaver",
    "CandidateMemory",
    "ChromaMemoryStore",
    "ForgetReceipt",
    "HashingEmbeddings",
    "LLMMemoryExtractor",
    "LangGraphMemoryError",
    "MemoryMiddleware",
    "MemoryOp",
    "MemoryRecord",
    "MemorySource",
    "MemoryState",
    "MemoryStatus",
    "MemoryType",
    "MemoryWriter",
    "PostgresMemoryQueue",
    "PostgresSaver",
    "PrivacyPolicy",
    "Redactor",
    "RetentionPolicy",
    "RuleBasedExtractor",
    "ScoredMemory",
    "ScoringWeights",
    "SqliteMemoryQueue",
    "SqliteSaver",
    "add_memory_nodes",
    "create_compress_node",
    "create_extract_node",
    "create_recall_node",
    "create_reconcile_node",
    "redact",
]
# The list above is for readers and linters; ``from langgraph_memory import *`` asks
# ``__getattr__`` below, which leaves out the names whose extra is missing. Looking the
# extras up only then keeps a plain import from touching them.
_PUBLIC = tuple(__all__)
del __all__
