"""``recall``: put the current user's relevant long-term memories in front of the model.

Per turn: build a query from the latest human message (plus a little recent
context), search the user's memories, and pack into a token budget, with their
provenance: first the user's **core profile** (allergies and other safety facts,
identity and address form, standing instructions, current key slots: shown
whatever the query, within its own share of the budget; ``nodes/_profile.py``
says how a memory qualifies), then the memories most relevant to this turn,
grouped by kind. The block is one ``SystemMessage`` with a fixed id that replaces
the previous turn's; its ``additional_kwargs["langgraph_memory"]`` lists the
injected ``memory_ids``, the ``profile_ids`` and the ``query``
(:func:`recalled_metadata`). Access statistics (``store.touch``) are updated in
the background so they never delay the reply.

The planning (query, profile selection, packing, rendering, state update,
:func:`explain_recall`) is pure; the sync and async node functions only run the
searches and hand ``touch`` to a worker.

The package, one module per responsibility (each imports only the ones above it):

- ``_block.py``: the block's text (``clean_memory_text``, ``render_memory_line``,
  ``render_recall_block``), ``RecallDecision``, ``PackedRecall``, the token budget
  (``_BlockBudget``), ``pack_memories`` and ``explain_recall``;
- ``_message.py``: the recall message (``RECALL_METADATA_KEY``, ``recall_metadata``,
  ``recall_update``) and reading it back (``recalled_block``, ``recalled_metadata``);
- ``_plan.py``: ``build_recall_query``, ``plan_recall`` and the recent fill
  (``RECENT_FILL_WINDOW``);
- ``_search.py``: the store searches (``LongTermMemory``, any ``BaseStore``, the
  one-pass ``recall_memories``; ``DEFAULT_MIN_RELEVANCE``);
- ``_access_stats.py``: the background ``touch`` worker, ``flush_access_stats``,
  ``aflush_access_stats``;
- ``_node.py``: ``create_recall_node`` and its sync and async shells.
"""

# ``X as X``: re-exported for the callers and tests that import it from here, beyond
# ``__all__`` (the public names), as mypy's no-implicit-reexport asks.
from langgraph_memory.nodes._profile import ProfilePolicy
from langgraph_memory.nodes.recall._access_stats import aflush_access_stats, flush_access_stats
from langgraph_memory.nodes.recall._access_stats import logger as logger
from langgraph_memory.nodes.recall._block import (
    PackedRecall,
    RecallDecision,
    explain_recall,
    pack_memories,
    render_recall_block,
)
from langgraph_memory.nodes.recall._block import clean_memory_text as clean_memory_text
from langgraph_memory.nodes.recall._block import render_memory_line as render_memory_line
from langgraph_memory.nodes.recall._message import (
    RECALL_METADATA_KEY,
    recalled_block,
    recalled_metadata,
)
from langgraph_memory.nodes.recall._message import recall_metadata as recall_metadata
from langgraph_memory.nodes.recall._message import recall_update as recall_update
from langgraph_memory.nodes.recall._node import create_recall_node
from langgraph_memory.nodes.recall._plan import RECENT_FILL_WINDOW as RECENT_FILL_WINDOW
from langgraph_memory.nodes.recall._plan import build_recall_query, plan_recall
from langgraph_memory.nodes.recall._search import DEFAULT_MIN_RELEVANCE as DEFAULT_MIN_RELEVANCE
from langgraph_memory.prompts.recall import RECALL_MESSAGE_ID

__all__ = [
    "RECALL_MESSAGE_ID",
    "RECALL_METADATA_KEY",
    "PackedRecall",
    "ProfilePolicy",
    "RecallDecision",
    "aflush_access_stats",
    "build_recall_query",
    "create_recall_node",
    "explain_recall",
    "flush_access_stats",
    "pack_memories",
    "plan_recall",
    "recalled_block",
    "recalled_metadata",
    "render_recall_block",
]
