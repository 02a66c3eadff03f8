"""Thread ownership: which user a thread belongs to, checked on every call.

A thread records the user of its first write that names one, whether the id
came from LangGraph's Runtime context (``graph.invoke(..., context=Ctx(user_id=...))``,
seen by the saver as ``configurable["__pregel_runtime"].context``) or from
``configurable["user_id"]``. The Runtime context wins when both are set, as in
the memory nodes (``nodes/_context.py``). From then on a read or write of that
thread that names another user raises :class:`ThreadOwnershipError` before any
row is read or stored. Calls that name no user (admin code, ``get_state``
without a user, threads written before migration 4 / 6) are not checked and
work as before: the owner check protects users from each other, not the
database from the application that holds it.

A confirmed (thread, owner) pair is remembered per process for
``OWNER_RECHECK_SECONDS``, so a chat turn pays one dictionary lookup, not a
query; the first call on a thread (per process and per recheck interval) reads
the owner, and a write claims an unowned thread in its own small transaction.
``delete_thread`` clears the owner with the rows, so a deleted and
undeleted id can be claimed again; another process that confirmed the old
owner less than ``OWNER_RECHECK_SECONDS`` ago could still write to it in that
window (the tombstone refuses it until the id is undeleted).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from langgraph_memory.errors import InvalidUserIdError, ThreadOwnershipError
from langgraph_memory.limits import MAX_USER_ID_CHARS

# LangGraph's CONFIG_KEY_RUNTIME (its constants module is private).
RUNTIME_CONFIG_KEY = "__pregel_runtime"
OWNER_RECHECK_SECONDS = 30.0


def config_user_id(config: Mapping[str, Any] | None) -> str | None:
    """The user a saver call is made for, or ``None`` when it names none.

    Example:
        >>> config_user_id({"configurable": {"thread_id": "t", "user_id": "u-1"}})
        'u-1'
        >>> config_user_id({"configurable": {"thread_id": "t"}}) is None
        True
    """
    if not config or not isinstance(config, Mapping):
        return None
    configurable = config.get("configurable")
    if not isinstance(configurable, Mapping):
        return None
    runtime = configurable.get(RUNTIME_CONFIG_KEY)
    context = getattr(runtime, "context", None) if runtime is not None else None
    if context is not None:
        if isinstance(context, Mapping):
            value = context.get("user_id")
        else:
            value = getattr(context, "user_id", None)
        if value is not None:
            return _checked(value, "the Runtime context")
    value = configurable.get("user_id")
    return None if value is None else _checked(value, 'config["configurable"]')


def _checked(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidUserIdError(
            f"user_id={value!r} from {where} cannot own a thread; pass a non-empty string."
        )
    if len(value) > MAX_USER_ID_CHARS:
        raise InvalidUserIdError(
            f"user_id from {where} is {len(value)} characters ({value[:40]!r}...); "
            f"use at most {MAX_USER_ID_CHARS}."
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidUserIdError(
            f"user_id={value!r} from {where} contains a lone surrogate; pass valid Unicode."
        ) from None
    if "\x00" in value:
        raise InvalidUserIdError(f"user_id={value!r} from {where} contains a NUL character.")
    return value


def check_owner_id(user_id: Any) -> str:
    """A user id as ``threads_of_user`` takes it (the rules of ``config_user_id``)."""
    return _checked(user_id, "the argument")


def ownership_refused(thread_id: str, owner: str, user_id: str) -> ThreadOwnershipError:
    # The owner's id is not quoted: the message may reach the other user.
    return ThreadOwnershipError(
        f"thread_id={thread_id!r} belongs to another user, not user_id={user_id!r}; "
        "nothing was read or stored. Use a thread id of this user's own (e.g. one "
        "derived from the user id), or delete_thread() it first if it should be reused."
    )


class OwnerCache:
    """Confirmed (thread, owner) pairs of this process, newest last, bounded."""

    def __init__(self, capacity: int = 10_000) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[str, tuple[str, float]] = OrderedDict()

    def confirmed(self, thread_id: str, user_id: str) -> bool:
        entry = self._entries.get(thread_id)
        if entry is None or entry[0] != user_id:
            return False
        if time.monotonic() - entry[1] > OWNER_RECHECK_SECONDS:
            self._entries.pop(thread_id, None)
            return False
        return True

    def confirm(self, thread_id: str, user_id: str) -> None:
        self._entries[thread_id] = (user_id, time.monotonic())
        self._entries.move_to_end(thread_id)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)

    def forget(self, thread_id: str) -> None:
        self._entries.pop(thread_id, None)

    def clear(self) -> None:
        self._entries.clear()
