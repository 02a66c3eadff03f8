"""Sync and async twins written once: operations as generators of calls, two drivers.

The session layer's ``drive`` idiom (``session/_statements.py``, re-exported by
``session/_core.py``) for the write pipeline. An operation that talks to a store, a
chat model, an extractor or a queue is a generator that *yields* each call as data
instead of making it:

* :class:`Call` names a method by its sync name (``"search_memories"``,
  ``"invoke"``, ``"extract"``): :func:`run` calls ``target.search_memories(...)``,
  :func:`arun` awaits ``target.asearch_memories(...)`` (LangChain and LangGraph's
  ``a``-prefix convention), or runs the sync method in a worker thread when the
  target has no async twin;
* :class:`Blocking` is plain blocking work (a queue transaction): inline in
  :func:`run`, in a worker thread in :func:`arun`.

Everything between the calls - planning, validation, guardrails - is the
generator's own code, so ``reconcile`` and ``areconcile`` cannot drift apart:
they are one generator under two drivers. ``yield from`` composes operations.

Example:
    >>> import asyncio
    >>> class Store:
    ...     def size(self, user: str) -> int: return len(user)
    ...     async def asize(self, user: str) -> int: return len(user) * 10
    >>> def steps(store):
    ...     n = yield Call(store, "size", ("alice",))
    ...     return n + 1
    >>> run(steps(Store())), asyncio.run(arun(steps(Store())))
    (6, 51)
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

__all__ = ["Blocking", "Call", "Steps", "arun", "run"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Call:
    """Call ``target.<method>(*args, **kwargs)``, or await its ``a<method>`` twin."""

    target: Any
    method: str
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def sync(self) -> Any:
        return getattr(self.target, self.method)(*self.args, **self.kwargs)

    async def asynchronous(self) -> Any:
        twin = getattr(self.target, f"a{self.method}", None)
        if twin is None:  # no async API: keep the event loop free all the same
            return await asyncio.to_thread(self.sync)
        return await twin(*self.args, **self.kwargs)


@dataclass(frozen=True, slots=True)
class Blocking:
    """Run ``fn()``: inline when sync, in a worker thread when async."""

    fn: Callable[[], Any]


Step = Call | Blocking
Steps = Generator[Step, Any, T]


def run(gen: Steps[T]) -> T:
    """Drive ``gen`` synchronously; an exception raised by a call is thrown into it."""
    answer: Any = None
    error: BaseException | None = None
    try:
        while True:
            step = gen.throw(error) if error is not None else gen.send(answer)
            answer, error = None, None
            try:
                answer = step.sync() if isinstance(step, Call) else step.fn()
            except Exception as exc:  # the generator decides: handle or let it rise
                error = exc
    except StopIteration as stop:
        return cast(T, stop.value)


async def arun(gen: Steps[T]) -> T:
    """Drive ``gen`` on the event loop; an exception raised by a call is thrown into it."""
    answer: Any = None
    error: BaseException | None = None
    try:
        while True:
            step = gen.throw(error) if error is not None else gen.send(answer)
            answer, error = None, None
            try:
                if isinstance(step, Call):
                    answer = await step.asynchronous()
                else:
                    answer = await asyncio.to_thread(functools.partial(step.fn))
            except Exception as exc:
                error = exc
    except StopIteration as stop:
        return cast(T, stop.value)
