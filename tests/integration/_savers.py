"""Registry of checkpointer factories the session integration tests run against.

Each :class:`SaverFactory` opens one saver class on a *location* (a SQLite file
path or a Postgres DSN) as a fresh, set-up instance, and says whether graphs
drive it through ``invoke`` (``mode="sync"``) or ``ainvoke`` (``mode="async"``).
Tests reopen a *new* instance on the same location to check what was really
stored, not what one object kept in memory.

By default the registry holds our savers (SQLite sync/async; Postgres sync/async
once they exist). ``LGM_SESSION_TESTS_OFFICIAL=1`` adds LangGraph's official
savers, which is how this harness was debugged before ours existed and how a
reader can see which behaviours the official savers get wrong.

:class:`Harness` hides the sync/async split so one test body covers both modes::

    async with harness.open() as saver:
        graph = builder.compile(checkpointer=saver)
        await harness.invoke(graph, {"messages": [...]}, config)
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

Mode = Literal["sync", "async"]
Backend = Literal["sqlite", "postgres"]

INCLUDE_OFFICIAL = os.environ.get("LGM_SESSION_TESTS_OFFICIAL", "") in ("1", "true", "yes")


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


@dataclass(frozen=True)
class SaverFactory:
    """How to open one saver class on a location."""

    id: str
    backend: Backend
    mode: Mode
    ours: bool
    module: str
    class_name: str

    def saver_class(self) -> Any:
        return getattr(importlib.import_module(self.module), self.class_name)

    def missing_reason(self) -> str | None:
        """Why an *official* saver cannot be tested here; ours must always import."""
        try:
            self.saver_class()
        except (ImportError, AttributeError) as exc:
            if self.ours:
                # Our own class missing is a broken build, never a reason to skip.
                raise
            return f"{self.module}.{self.class_name} is not installed ({exc})"
        return None

    @contextlib.contextmanager
    def open_sync(self, location: str, **kwargs: Any) -> Iterator[Any]:
        """A set-up sync saver on ``location`` (closed on exit)."""
        cls = self.saver_class()
        with cls.from_conn_string(location, **kwargs) as saver:
            saver.setup()
            yield saver

    @contextlib.asynccontextmanager
    async def open_async(self, location: str, **kwargs: Any) -> AsyncIterator[Any]:
        """A set-up async saver on ``location`` (closed on exit)."""
        cls = self.saver_class()
        opened = cls.from_conn_string(location, **kwargs)
        if not hasattr(opened, "__aenter__"):
            # Our sync SqliteSaver also serves ``ainvoke``: same object, async path.
            with opened as saver:
                await saver.asetup()
                yield saver
            return
        async with opened as saver:
            # ours: ``asetup()``; the official async savers: ``async def setup()``.
            await _maybe_await(saver.asetup() if hasattr(saver, "asetup") else saver.setup())
            yield saver


OURS: tuple[SaverFactory, ...] = (
    SaverFactory(
        "ours-sqlite-sync", "sqlite", "sync", True, "langgraph_memory.session", "SqliteSaver"
    ),
    SaverFactory(
        "ours-sqlite-async", "sqlite", "async", True, "langgraph_memory.session", "AsyncSqliteSaver"
    ),
    # One SqliteSaver object driven through ``ainvoke`` (its async twins).
    SaverFactory(
        "ours-sqlite-sync-class-via-ainvoke",
        "sqlite",
        "async",
        True,
        "langgraph_memory.session",
        "SqliteSaver",
    ),
    SaverFactory(
        "ours-postgres-sync", "postgres", "sync", True, "langgraph_memory.session", "PostgresSaver"
    ),
    SaverFactory(
        "ours-postgres-sync-class-via-ainvoke",
        "postgres",
        "async",
        True,
        "langgraph_memory.session",
        "PostgresSaver",
    ),
    SaverFactory(
        "ours-postgres-async",
        "postgres",
        "async",
        True,
        "langgraph_memory.session",
        "AsyncPostgresSaver",
    ),
)

OFFICIAL: tuple[SaverFactory, ...] = (
    SaverFactory(
        "official-sqlite-sync",
        "sqlite",
        "sync",
        False,
        "langgraph.checkpoint.sqlite",
        "SqliteSaver",
    ),
    SaverFactory(
        "official-sqlite-async",
        "sqlite",
        "async",
        False,
        "langgraph.checkpoint.sqlite.aio",
        "AsyncSqliteSaver",
    ),
    SaverFactory(
        "official-postgres-sync",
        "postgres",
        "sync",
        False,
        "langgraph.checkpoint.postgres",
        "PostgresSaver",
    ),
    SaverFactory(
        "official-postgres-async",
        "postgres",
        "async",
        False,
        "langgraph.checkpoint.postgres.aio",
        "AsyncPostgresSaver",
    ),
)

REGISTRY: tuple[SaverFactory, ...] = OURS + (OFFICIAL if INCLUDE_OFFICIAL else ())


def factory_params(
    backends: Sequence[Backend] = ("sqlite", "postgres"), modes: Sequence[Mode] = ("sync", "async")
) -> list[Any]:
    """``pytest.param`` per registered factory; Postgres ones carry the ``postgres`` marker."""
    params = []
    for factory in REGISTRY:
        if factory.backend not in backends or factory.mode not in modes:
            continue
        marks = [pytest.mark.postgres] if factory.backend == "postgres" else []
        params.append(pytest.param(factory, id=factory.id, marks=marks))
    return params


def sqlite_location(tmp_path: Path, name: str = "checkpoints.sqlite") -> str:
    return str(tmp_path / name)


class Harness:
    """One factory on one fresh location; every call works in the factory's mode."""

    def __init__(self, factory: SaverFactory, location: str) -> None:
        self.factory = factory
        self.location = location

    @property
    def mode(self) -> Mode:
        return self.factory.mode

    @contextlib.asynccontextmanager
    async def open(self, **kwargs: Any) -> AsyncIterator[Any]:
        """A new saver instance on this harness's location."""
        if self.mode == "sync":
            with self.factory.open_sync(self.location, **kwargs) as saver:
                yield saver
        else:
            async with self.factory.open_async(self.location, **kwargs) as saver:
                yield saver

    # -- graph calls

    async def invoke(self, graph: Any, graph_input: Any, config: Any, **kwargs: Any) -> Any:
        if self.mode == "sync":
            return graph.invoke(graph_input, config, **kwargs)
        return await graph.ainvoke(graph_input, config, **kwargs)

    async def stream(self, graph: Any, graph_input: Any, config: Any, **kwargs: Any) -> list[Any]:
        if self.mode == "sync":
            return list(graph.stream(graph_input, config, **kwargs))
        return [chunk async for chunk in graph.astream(graph_input, config, **kwargs)]

    async def get_state(self, graph: Any, config: Any, **kwargs: Any) -> Any:
        if self.mode == "sync":
            return graph.get_state(config, **kwargs)
        return await graph.aget_state(config, **kwargs)

    async def history(self, graph: Any, config: Any, **kwargs: Any) -> list[Any]:
        if self.mode == "sync":
            return list(graph.get_state_history(config, **kwargs))
        return [s async for s in graph.aget_state_history(config, **kwargs)]

    async def update_state(self, graph: Any, config: Any, values: Any, **kwargs: Any) -> Any:
        if self.mode == "sync":
            return graph.update_state(config, values, **kwargs)
        return await graph.aupdate_state(config, values, **kwargs)

    # -- saver calls

    async def get_tuple(self, saver: Any, config: Any) -> Any:
        if self.mode == "sync":
            return saver.get_tuple(config)
        return await saver.aget_tuple(config)

    async def list(self, saver: Any, config: Any, **kwargs: Any) -> list[Any]:
        if self.mode == "sync":
            return list(saver.list(config, **kwargs))
        return [t async for t in saver.alist(config, **kwargs)]

    async def call(self, saver: Any, method: str, *args: Any, **kwargs: Any) -> Any:
        """``saver.method(...)`` in sync mode, ``saver.a<method>(...)`` in async mode."""
        if self.mode == "sync":
            return getattr(saver, method)(*args, **kwargs)
        return await getattr(saver, "a" + method)(*args, **kwargs)


def harness_for(request: pytest.FixtureRequest, factory: SaverFactory, tmp_path: Path) -> Harness:
    """Skip when the class is missing; otherwise a harness on a fresh file / database."""
    reason = factory.missing_reason()
    if reason is not None:
        pytest.skip(reason)
    if factory.backend == "postgres":
        location: str = request.getfixturevalue("pg_dsn")
    else:
        location = sqlite_location(tmp_path)
    return Harness(factory, location)


SaverOpener = Callable[[str], Any]
