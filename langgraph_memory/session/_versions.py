"""Channel version ids: ``"<counter:032>.<random:016>"``, as LangGraph's own savers make.

The counter keeps versions increasing; the random suffix keeps two forks of
one parent from producing the same version id for different values.
"""

from __future__ import annotations

import random


def next_version(current: str | int | float | None) -> str:
    """The version after ``current`` (``None`` for a channel's first version)."""
    if current is None:
        counter = 0
    elif isinstance(current, (int, float)):
        counter = int(current)
    else:
        counter = int(current.split(".")[0])
    return f"{counter + 1:032}.{random.random():016}"
