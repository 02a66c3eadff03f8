"""Sync and async twins of the store written once (the ``drive`` idiom of ``session/_core.py``).

A store operation is a generator that *yields* what it needs done as data:

* :class:`EmbedDocuments` / :class:`EmbedQuery`: the embedding model's work
  (``embed_*`` in the sync shell, ``aembed_*`` in the async one);
* :class:`Blocking`: catalog and Chroma I/O (called inline in the sync shell,
  in a worker thread in the async one, so the event loop never blocks on it);
* :class:`Dual`: a call with a sync and an async form (a checkpointer's
  ``delete_thread``/``adelete_thread``).

Validation, redaction and planning run in the generator itself, so the sync
and the async method of a pair cannot drift apart: ``put_memory`` and
``aput_memory`` are the same generator under :func:`run` and :func:`arun`.

Example:
    >>> import asyncio
    >>> from langgraph_memory.embeddings import HashingEmbeddings
    >>> def steps():
    ...     vector = yield EmbedQuery("tea")
    ...     return (yield Blocking(lambda: len(vector)))
    >>> run(steps(), HashingEmbeddings(dimensions=8))
    8
    >>> asyncio.run(arun(steps(), HashingEmbeddings(dimensions=8)))
    8
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar, cast

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class EmbedDocuments:
    """Embed these texts as documents; the step receives one vector per text."""

    texts: list[str]


@dataclass(frozen=True, slots=True)
class EmbedQuery:
    """Embed this text as a query; the step receives its vector."""

    text: str


@dataclass(frozen=True, slots=True)
class Blocking:
    """Run this catalog/Chroma I/O; the step receives its return value."""

    fn: Callable[[], Any]


@dataclass(frozen=True, slots=True)
class Dual:
    """Call ``sync()`` in the sync shell, await ``asynchronous()`` in the async one
    (a user's object with both APIs, e.g. a checkpointer's ``list``/``alist``)."""

    sync: Callable[[], Any]
    asynchronous: Callable[[], Awaitable[Any]]


Step = EmbedDocuments | EmbedQuery | Blocking | Dual
Steps = Generator[Step, Any, T]


def _embedder(embeddings: Any, step: Step) -> Any:
    if embeddings is None:
        raise RuntimeError(f"{step!r} needs an embedding model, and this store has none.")
    return embeddings


def run(gen: Steps[T], embeddings: Any) -> T:
    """Drive ``gen`` synchronously."""
    try:
        step = next(gen)
        while True:
            if isinstance(step, Blocking):
                answer = step.fn()
            elif isinstance(step, Dual):
                answer = step.sync()
            elif isinstance(step, EmbedQuery):
                answer = list(_embedder(embeddings, step).embed_query(step.text))
            else:
                vectors = _embedder(embeddings, step).embed_documents(step.texts)
                answer = [list(v) for v in vectors]
            step = gen.send(answer)
    except StopIteration as stop:
        return cast(T, stop.value)


async def arun(gen: Steps[T], embeddings: Any) -> T:
    """Drive ``gen`` on the event loop: ``aembed_*``, and I/O in a worker thread."""
    try:
        step = next(gen)
        while True:
            if isinstance(step, Blocking):
                answer = await asyncio.to_thread(step.fn)
            elif isinstance(step, Dual):
                answer = await step.asynchronous()
            elif isinstance(step, EmbedQuery):
                answer = list(await _embedder(embeddings, step).aembed_query(step.text))
            else:
                vectors = await _embedder(embeddings, step).aembed_documents(step.texts)
                answer = [list(v) for v in vectors]
            step = gen.send(answer)
    except StopIteration as stop:
        return cast(T, stop.value)
