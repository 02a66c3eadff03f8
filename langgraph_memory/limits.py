"""Documented size limits for ids and texts, checked before anything is stored.

Every limit is enforced where the value enters the library and refused with
:class:`~langgraph_memory.errors.InputTooLargeError` (or
:class:`~langgraph_memory.errors.ConfigurationError` for an empty id), whose
message names the value and the limit. Ids are measured in UTF-8 bytes because
that is what the database indexes: Postgres refuses a b-tree entry above 2,704
bytes, and a checkpoint's key (thread id, namespace, checkpoint id) is one
entry, so the three limits below add up to 1,792 bytes. An ASCII id may have as
many characters as its limit has bytes.

===========================  =============  =====================================
value                        limit          where
===========================  =============  =====================================
thread id                    512 bytes      every saver call
checkpoint namespace         1,024 bytes    every saver call
checkpoint id / task id      256 bytes      ``put``, ``put_writes``
user id                      256 chars      nodes, store, thread ownership
memory id                    1-256 chars    ``MemoryRecord``, ``get_memory`` & co.
store key                    1-1,024 chars  BaseStore ``get``/``put``/``delete``
memory text                  1-8,000 chars  ``MemoryRecord``, ``CandidateMemory``
===========================  =============  =====================================

Example:
    >>> from langgraph_memory.limits import MAX_THREAD_ID_BYTES, check_id_bytes
    >>> check_id_bytes("thread_id", "user-42-chat", MAX_THREAD_ID_BYTES)
    'user-42-chat'
"""

from __future__ import annotations

from langgraph_memory.errors import ConfigurationError, InputTooLargeError, InvalidMemoryError

__all__ = [
    "MAX_CHECKPOINT_ID_BYTES",
    "MAX_CHECKPOINT_NS_BYTES",
    "MAX_MEMORY_ID_CHARS",
    "MAX_MEMORY_TEXT_CHARS",
    "MAX_STORE_KEY_CHARS",
    "MAX_THREAD_ID_BYTES",
    "MAX_USER_ID_CHARS",
    "check_id_bytes",
    "check_memory_id",
    "check_memory_text",
    "check_store_key",
]

MAX_THREAD_ID_BYTES = 512
MAX_CHECKPOINT_NS_BYTES = 1024
MAX_CHECKPOINT_ID_BYTES = 256
MAX_USER_ID_CHARS = 256
# A memory is one fact, event or instruction; extract caps what a model proposes
# at 500 characters, and 8,000 leaves room for hand-written records while a
# multi-megabyte "memory" (a pasted document) is refused instead of embedded.
MAX_MEMORY_TEXT_CHARS = 8000
MAX_MEMORY_ID_CHARS = 256
# A BaseStore key is an item's name in its namespace (LangGraph sets no limit);
# 1,024 leaves room for paths and URLs as keys.
MAX_STORE_KEY_CHARS = 1024


def _shown(value: str) -> str:
    return repr(value) if len(value) <= 60 else f"{value[:40]!r}... ({len(value)} characters)"


def check_id_bytes(name: str, value: str, limit: int) -> str:
    """``value`` if it is valid UTF-8 text of at most ``limit`` bytes.

    Raises:
        ConfigurationError: the id holds a lone surrogate (it cannot be stored as UTF-8)
            or a NUL character.
        InputTooLargeError: the id is longer than ``limit`` bytes.
    """
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise ConfigurationError(
            f"{name}={value!r} contains a lone surrogate ({value[exc.start]!r} at position "
            f"{exc.start}) and cannot be stored as UTF-8; pass valid Unicode text."
        ) from None
    if size > limit:
        raise InputTooLargeError(
            f"{name}={_shown(value)} is {size} bytes of UTF-8; the limit is {limit} bytes "
            "(see langgraph_memory.limits). Use a shorter id, e.g. a uuid4 or a hash of it."
        )
    if "\x00" in value:
        raise ConfigurationError(
            f"{name}={_shown(value)} contains a NUL character; databases cannot store it "
            "in a text column. Remove it."
        )
    return value


def check_memory_text(text: object, *, what: str = "memory text") -> str:
    """``text`` if it is a non-blank string of at most ``MAX_MEMORY_TEXT_CHARS`` characters.

    Raises:
        InvalidMemoryError: not a string, blank, or holding a lone surrogate.
        InputTooLargeError: longer than ``MAX_MEMORY_TEXT_CHARS``.

    Example:
        >>> check_memory_text("User is vegetarian")
        'User is vegetarian'
    """
    if not isinstance(text, str):
        raise InvalidMemoryError(
            f"{what}={text!r} ({type(text).__name__}); pass the memory as a string."
        )
    if not text.strip():
        raise InvalidMemoryError(
            f"{what}={text!r} is empty; a memory needs a non-blank text such as "
            "'User is vegetarian'."
        )
    if len(text) > MAX_MEMORY_TEXT_CHARS:
        raise InputTooLargeError(
            f"{what}={_shown(text)} is longer than {MAX_MEMORY_TEXT_CHARS} characters "
            "(see langgraph_memory.limits); store one fact per memory, or a summary of "
            "the document instead of the document."
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidMemoryError(
            f"{what}={_shown(text)} contains a lone surrogate at position {exc.start}; "
            "pass valid Unicode text."
        ) from None
    return text


def _check_name(what: str, value: object, limit: int, example: str, error: type[ValueError]) -> str:
    if not isinstance(value, str) or not value:
        raise error(
            f"{what}={value!r} ({type(value).__name__}); pass one non-empty string, e.g. {example}."
        )
    if len(value) > limit:
        raise InputTooLargeError(
            f"{what}={_shown(value)} is longer than {limit} characters (see "
            "langgraph_memory.limits)."
        )
    if "\x00" in value:
        raise error(f"{what}={_shown(value)} contains a NUL character; remove it.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise error(
            f"{what}={_shown(value)} contains a lone surrogate at position {exc.start}; "
            "pass valid Unicode text."
        ) from None
    return value


def check_memory_id(memory_id: object) -> str:
    """``memory_id`` if it is one non-empty id string of at most ``MAX_MEMORY_ID_CHARS``.

    Raises:
        InvalidMemoryError: not a string (a list of ids, ``None``), empty, NUL or a
            lone surrogate.
        InputTooLargeError: longer than ``MAX_MEMORY_ID_CHARS``.

    Example:
        >>> check_memory_id(["m1"])
        Traceback (most recent call last):
        ...
        langgraph_memory.errors.InvalidMemoryError: memory_id=['m1'] (list); pass one non-empty string, e.g. record.id from list_memories().
    """
    return _check_name(
        "memory_id",
        memory_id,
        MAX_MEMORY_ID_CHARS,
        "record.id from list_memories()",
        InvalidMemoryError,
    )


def check_store_key(key: object) -> str:
    """``key`` if it is a non-empty string of at most ``MAX_STORE_KEY_CHARS`` characters.

    Raises:
        ConfigurationError: not a string, empty, NUL or a lone surrogate (as for
            every other bad store argument).
        InputTooLargeError: longer than ``MAX_STORE_KEY_CHARS``.
    """
    return _check_name("key", key, MAX_STORE_KEY_CHARS, "key='note-1'", ConfigurationError)
