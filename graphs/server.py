"""Our ``AsyncSqliteSaver`` as the ``langgraph dev`` server's checkpointer.

``langgraph.json`` names ``checkpointer`` under ``"checkpointer": {"path": ...}``,
so threads created through the dev server (and LangGraph Studio) are stored by
our saver in ``$LANGGRAPH_MEMORY_DATA_DIR/server/checkpoints.sqlite`` instead of
the server's in-memory default: all three memory layers are ours there too.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from graphs._agent import data_dir_for
from langgraph_memory import AsyncSqliteSaver


@asynccontextmanager
async def checkpointer() -> AsyncIterator[AsyncSqliteSaver]:
    """Open (and set up) the server's checkpoint file for the server's lifetime."""
    path = data_dir_for("server") / "checkpoints.sqlite"
    await asyncio.to_thread(path.parent.mkdir, parents=True, exist_ok=True)
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        yield saver
