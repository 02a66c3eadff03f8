"""langgraph-memory: working, session and long-term memory for LangGraph agents.

Public API only; see the subpackages for the three layers:
``session`` (checkpointers), ``longterm`` (Chroma store), ``nodes`` (recall,
compress, extract, reconcile) and ``wiring`` (graph helpers, middleware).
"""

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

__all__ = [
    "CandidateMemory",
    "ForgetReceipt",
    "LangGraphMemoryError",
    "MemoryOp",
    "MemoryRecord",
    "MemorySource",
    "MemoryStatus",
    "MemoryType",
    "PrivacyPolicy",
    "RetentionPolicy",
    "ScoredMemory",
    "ScoringWeights",
]
