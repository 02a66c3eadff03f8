"""Moved to ``langgraph_memory.pipeline.writer``; this name is kept for 0.1 imports."""

from langgraph_memory.pipeline.writer import (
    MemorySweepPolicy,
    MemorySweepReport,
    MemoryWriter,
    WriteReceipt,
)

__all__ = ["MemorySweepPolicy", "MemorySweepReport", "MemoryWriter", "WriteReceipt"]
