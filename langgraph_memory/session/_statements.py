"""The statements a session transaction yields, and ``drive``, which runs them.

A transaction of the core (``_core.py``) is a generator (:data:`Txn`) that
yields :class:`Execute`, :class:`ExecuteMany` and :class:`Fetch` values and
receives each one's result; it never touches a connection. The shells run the
statements on theirs: :func:`drive` with a synchronous ``execute``, the async
shells with their own loop.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

T = TypeVar("T")


# ------------------------------------------------------------------ statements


@dataclass(frozen=True, slots=True)
class Execute:
    """Run one statement; the shell sends back its rowcount."""

    sql: str
    params: Sequence[Any] = ()


@dataclass(frozen=True, slots=True)
class ExecuteMany:
    """Run one statement per parameter row; the shell sends back the total rowcount
    (``None`` or -1 if its driver cannot tell)."""

    sql: str
    rows: Sequence[Sequence[Any]]


@dataclass(frozen=True, slots=True)
class Fetch:
    """Run a query; the shell sends back all rows as a list of tuples."""

    sql: str
    params: Sequence[Any] = ()


Statement = Execute | ExecuteMany | Fetch
Txn = Generator[Statement, Any, T]


def drive(gen: Txn[T], execute: Any) -> T:
    """Run a transaction generator with a synchronous ``execute(statement)``."""
    try:
        statement = next(gen)
        while True:
            statement = gen.send(execute(statement))
    except StopIteration as stop:
        return cast(T, stop.value)
