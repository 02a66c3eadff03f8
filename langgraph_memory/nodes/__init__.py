"""The four memory nodes, each a factory returning a sync+async runnable.

* ``create_recall_node``: long-term memories into the prompt, once per turn.
* ``create_compress_node``: rolling summary when the context passes its trigger.
* ``create_extract_node``: hands new turns to the ``MemoryWriter``.
* ``create_reconcile_node``: candidate memories against stored ones (add /
  supersede / merge / ignore / delete), with guardrails and an audit log.

``MemoryWriter`` (``langgraph_memory.pipeline``) runs extract + reconcile off
the reply path on a durable queue (or inline in ``mode="sync"``). See ``langgraph_memory.wiring`` for the
helpers that add these nodes to a graph or to ``create_agent``.
"""

from langgraph_memory.nodes.compress import create_compress_node
from langgraph_memory.nodes.extract import create_extract_node
from langgraph_memory.nodes.recall import create_recall_node
from langgraph_memory.nodes.reconcile import create_reconcile_node

__all__ = [
    "create_compress_node",
    "create_extract_node",
    "create_recall_node",
    "create_reconcile_node",
]


def __getattr__(name: str) -> object:
    # ``MemoryWriter`` lived here in 0.1; imported lazily, since the pipeline imports nodes.
    if name == "MemoryWriter":
        from langgraph_memory.pipeline import MemoryWriter

        return MemoryWriter
    raise AttributeError(f"module 'langgraph_memory.nodes' has no attribute {name!r}")
