"""Who is this turn for? User and thread ids for the memory nodes, failing closed.

Every node that reads or writes long-term memory needs the current user id.
It comes from LangGraph's typed ``Runtime`` context (a ``context_schema`` with
a ``user_id`` field, passed as ``graph.invoke(..., context=Ctx(user_id=...))``)
or, for graphs without a context schema, from
``config["configurable"]["user_id"]``. The runtime context wins when both are
set because it is typed and cannot be spoofed by a client that only controls
``configurable``. A missing id raises ``MissingUserIdError``: memory is never
read from or written to a default/shared user.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph_memory.errors import InvalidUserIdError, MissingUserIdError

# LangGraph stores the Runtime of the running node under this configurable key
# (``langgraph._internal._constants.CONFIG_KEY_RUNTIME``); we read it by value
# rather than importing a private module.
_RUNTIME_CONFIG_KEY = "__pregel_runtime"
_MAX_USER_ID_CHARS = 256

__all__ = ["resolve_runtime", "resolve_store", "resolve_thread_id", "resolve_user_id"]


def _configurable(config: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if not config:
        return {}
    configurable = config.get("configurable") or {}
    return configurable if isinstance(configurable, Mapping) else {}


def resolve_runtime(config: Mapping[str, Any] | None, runtime: Any = None) -> Any:
    """The LangGraph ``Runtime`` of the current node, or ``None`` outside a graph."""
    if runtime is not None:
        return runtime
    return _configurable(config).get(_RUNTIME_CONFIG_KEY)


def _user_id_from_context(context: Any) -> Any:
    if context is None:
        return None
    if isinstance(context, Mapping):
        return context.get("user_id")
    return getattr(context, "user_id", None)


def _validate_user_id(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise InvalidUserIdError(
            f"user_id from {where} is {value!r} ({type(value).__name__}); pass a non-empty string."
        )
    if not value.strip():
        raise MissingUserIdError(
            f"user_id from {where} is empty ({value!r}); pass the id of the user this "
            "conversation belongs to."
        )
    if len(value) > _MAX_USER_ID_CHARS:
        raise InvalidUserIdError(
            f"user_id from {where} is {len(value)} characters ({value[:40]!r}...); "
            f"use at most {_MAX_USER_ID_CHARS}."
        )
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise InvalidUserIdError(
            f"user_id from {where} contains control characters ({value!r}); "
            "use printable characters only."
        )
    return value


def resolve_user_id(config: Mapping[str, Any] | None, runtime: Any = None) -> str:
    """The current user's id; raises ``MissingUserIdError`` when there is none.

    Args:
        config: The node's ``RunnableConfig`` (may be ``None`` outside a graph).
        runtime: LangGraph's ``Runtime``; found in ``config`` when omitted.

    Returns:
        The validated user id.

    Raises:
        MissingUserIdError: Neither the runtime context nor ``configurable``
            carries a ``user_id``.
        InvalidUserIdError: The id is not a string, too long or has control characters.

    Example:
        >>> resolve_user_id({"configurable": {"user_id": "u-42", "thread_id": "t1"}})
        'u-42'
    """
    rt = resolve_runtime(config, runtime)
    from_context = _user_id_from_context(getattr(rt, "context", None))
    if from_context is not None:
        return _validate_user_id(from_context, "the Runtime context")
    from_config = _configurable(config).get("user_id")
    if from_config is not None:
        return _validate_user_id(from_config, 'config["configurable"]')
    raise MissingUserIdError(
        "No user id for this run: memory nodes fail closed rather than share memories. "
        "Pass it as graph.invoke(..., context=YourContext(user_id=...)) with a "
        "context_schema that has a user_id field, or as "
        'config={"configurable": {"user_id": "..."}}.'
    )


def resolve_thread_id(config: Mapping[str, Any] | None) -> str | None:
    """The conversation thread id from ``configurable``, or ``None`` if unset.

    Example:
        >>> resolve_thread_id({"configurable": {"thread_id": 7}})
        '7'
        >>> resolve_thread_id(None) is None
        True
    """
    value = _configurable(config).get("thread_id")
    return None if value is None else str(value)


def resolve_store(explicit: Any, config: Mapping[str, Any] | None, runtime: Any = None) -> Any:
    """The store a node should use: the explicit one, else the graph's (``compile(store=...)``)."""
    if explicit is not None:
        return explicit
    rt = resolve_runtime(config, runtime)
    return getattr(rt, "store", None)
