"""Who may see what: user-id validation, namespace -> partition, and SQL ``WHERE`` builders.

Every read and write of the store goes through these pure functions, so the
per-user partition is enforced in one place:

* a **partition** is the unit of isolation. ``("memories", user_id, ...)``
  belongs to partition ``user_id``; any other namespace root ``r`` belongs to
  the shared partition ``"~r"`` (``~`` can never start a valid user id).
* every SQL statement the store runs starts with ``partition = ?`` bound to
  a validated partition; caller filters are AND-ed after it and can only
  address fields of the stored value through an allow-listed syntax, so
  neither a crafted id (``"a' OR 1=1"``) nor a crafted filter
  (``{"user_id": {"$ne": "alice"}}``) can widen the scope.

Example:
    >>> validate_user_id("alice_01")
    'alice_01'
    >>> partition_of(("memories", "alice_01"), user_roots=("memories",))
    'alice_01'
    >>> build_value_filter({"type": "semantic", "importance": {"$gte": 0.5}})
    ("json_extract(value, '$.type') = ? AND json_extract(value, '$.importance') >= ?", ['semantic', 0.5])
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph_memory.errors import (
    InvalidFilterError,
    InvalidNamespaceError,
    InvalidUserIdError,
    MissingUserIdError,
)

# Letters, digits and "_-:@", 1-128 characters. "." is out because LangGraph
# namespace labels cannot contain it; quotes, spaces and operators are out so
# an id can never be mistaken for syntax anywhere downstream.
_USER_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-:@]{0,127}")
# Value field paths in filters: dotted identifiers, nothing else.
_FIELD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}(\.[A-Za-z_][A-Za-z0-9_]{0,63}){0,7}")

USER_ROOT = "memories"
SHARED_PARTITION_PREFIX = "~"

_COMPARISONS = {"$eq": "=", "$ne": "!=", "$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
_SET_OPERATORS = {"$in": "IN", "$nin": "NOT IN"}
_MAX_IN_VALUES = 500


def validate_user_id(user_id: Any) -> str:
    """Return ``user_id`` if it is a well-formed id; fail closed otherwise.

    Raises:
        MissingUserIdError: ``None`` or empty.
        InvalidUserIdError: not a string, or characters outside ``[A-Za-z0-9_-:@]``.
    """
    if user_id is None or user_id == "":
        raise MissingUserIdError(
            "No user id given; long-term memory is partitioned per user and fails closed. "
            "Pass user_id='...' (letters, digits, '_-:@'), e.g. from Runtime context or "
            "config['configurable']['user_id']."
        )
    if not isinstance(user_id, str):
        raise InvalidUserIdError(
            f"user_id={user_id!r} is a {type(user_id).__name__}; pass a string id such as 'alice_01'."
        )
    if not _USER_ID_RE.fullmatch(user_id):
        raise InvalidUserIdError(
            f"user_id={user_id!r} is not allowed; use 1-128 characters from letters, digits and "
            "'_-:@', starting with a letter or digit (hash e-mail addresses or other free text "
            "into such an id first)."
        )
    return user_id


def user_namespace(user_id: str) -> tuple[str, str]:
    """The namespace that holds a user's typed memories: ``("memories", user_id)``."""
    return (USER_ROOT, validate_user_id(user_id))


def encode_namespace(namespace: Sequence[str]) -> str:
    """Namespace as stored: labels joined by ``.`` (labels never contain ``.``)."""
    return ".".join(namespace)


def decode_namespace(stored: str) -> tuple[str, ...]:
    return tuple(stored.split("."))


def validate_labels(namespace: Sequence[Any]) -> tuple[str, ...]:
    """LangGraph's label rules: non-empty strings without ``.`` or NUL.

    Raises:
        InvalidNamespaceError: not a tuple (or list) of such labels; the message
            quotes the namespace and the bad label.
    """
    if not isinstance(namespace, tuple | list):
        raise InvalidNamespaceError(
            f"Namespace {namespace!r:.80} ({type(namespace).__name__}) is not a tuple of "
            "labels; pass e.g. ('memories', user_id)."
        )
    labels = tuple(namespace)
    for label in labels:
        if not isinstance(label, str) or not label or "." in label or "\x00" in label:
            raise InvalidNamespaceError(
                f"Namespace {labels!r} has an invalid label {label!r}; labels must be "
                "non-empty strings without '.' or NUL."
            )
        if not label.isascii():
            try:
                label.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise InvalidNamespaceError(
                    f"Namespace {labels!r} has a label with a lone surrogate at position "
                    f"{exc.start} ({label!r}); pass valid Unicode text."
                ) from None
    return labels


def check_namespace_argument(namespace: Any, *, for_write: bool) -> None:
    """Our typed errors for a namespace argument, before LangGraph's own checks
    (which raise ``langgraph.store.base.InvalidNamespaceError``, outside our tree)."""
    labels = validate_labels(namespace)
    if for_write and not labels:
        raise InvalidNamespaceError(
            "Namespace () is empty; write under e.g. ('memories', user_id)."
        )
    if for_write and labels[0] == "langgraph":
        raise InvalidNamespaceError(
            f"Namespace {labels!r}: the root label 'langgraph' is reserved by LangGraph."
        )


def partition_of(namespace: Sequence[Any], *, user_roots: Sequence[str]) -> str:
    """The partition a full namespace (or a search prefix) belongs to.

    Raises:
        InvalidNamespaceError: empty namespace, bad labels, or a user root
            without the user id (``("memories",)`` would span every user).
    """
    labels = validate_labels(namespace)
    if not labels:
        raise InvalidNamespaceError(
            "Namespace () spans every partition; give at least the root label, e.g. "
            "('memories', user_id)."
        )
    if labels[0] == "langgraph":
        raise InvalidNamespaceError(
            f"Namespace {labels!r}: the root label 'langgraph' is reserved by LangGraph."
        )
    if labels[0] in user_roots:
        if len(labels) < 2:
            raise InvalidNamespaceError(
                f"Namespace {labels!r} would span every user; use ({labels[0]!r}, user_id, ...)."
            )
        try:
            return validate_user_id(labels[1])
        except (InvalidUserIdError, MissingUserIdError) as exc:
            raise InvalidUserIdError(f"In namespace {labels!r}: {exc}") from None
    return SHARED_PARTITION_PREFIX + labels[0]


def is_user_partition(partition: str) -> bool:
    return not partition.startswith(SHARED_PARTITION_PREFIX)


def build_namespace_prefix(prefix: Sequence[str]) -> tuple[str, list[Any]]:
    """``WHERE`` fragment matching a namespace or anything below it."""
    encoded = encode_namespace(prefix)
    return "(namespace = ? OR substr(namespace, 1, ?) = ?)", [
        encoded,
        len(encoded) + 1,
        encoded + ".",
    ]


def _field_expr(field: str) -> str:
    if not isinstance(field, str) or not _FIELD_RE.fullmatch(field):
        raise InvalidFilterError(
            f"Filter field {field!r} is not allowed; use a dotted name of letters, digits "
            "and '_' such as 'type' or 'profile.diet'."
        )
    # The field is validated above, so inlining it in the JSON path is safe.
    return f"json_extract(value, '$.{field}')"


def _scalar(field: str, value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)  # json_extract returns 1/0 for JSON booleans
    if value is None or isinstance(value, (str, int, float)):
        return value
    raise InvalidFilterError(
        f"Filter value {value!r} for {field!r} is a {type(value).__name__}; use a string, "
        "number, boolean or None (or an operator dict like {'$gte': 0.5})."
    )


def _flatten(filter: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """``{"profile": {"diet": "vegan"}}`` -> ``[("profile.diet", "vegan")]``; operator
    dicts (keys starting with ``$``) stay as they are."""
    out: list[tuple[str, Any]] = []
    for field, condition in filter.items():
        if not isinstance(field, str):
            raise InvalidFilterError(f"Filter key {field!r} is not a string.")
        path = f"{prefix}.{field}" if prefix else field
        if (
            isinstance(condition, Mapping)
            and condition
            and not any(str(k).startswith("$") for k in condition)
        ):
            out.extend(_flatten(condition, path))
        else:
            out.append((path, condition))
    return out


def build_value_filter(
    filter: Mapping[str, Any] | None, *, dialect: str = "sqlite", encrypted: bool = False
) -> tuple[str, list[Any]]:
    """Translate a BaseStore ``filter`` over value fields into ``(sql, params)``.

    Supported: ``{"field": value}`` (equality), nested dicts as dotted paths, and
    ``{"field": {"$op": value}}`` with ``$eq $ne $gt $gte $lt $lte $in $nin``.
    Anything else (``$or``, ``$regex``, lists) raises
    :class:`InvalidFilterError`. Returns ``("1 = 1", [])`` for no filter.

    ``dialect="postgres"`` compares ``jsonb`` (the Postgres catalog defines
    ``json_extract(value, path)`` returning ``jsonb``, JSON null as SQL NULL):
    each operand is bound as JSON text cast to ``jsonb``.
    """
    if not filter:
        return "1 = 1", []
    if encrypted:
        raise InvalidFilterError(
            f"filter={filter!r} reads stored values, which this store seals (encryption=); "
            "the database cannot compare them. Search without a value filter and filter "
            "the returned items, or use search_memories(), whose state filters use clear columns."
        )
    if not isinstance(filter, Mapping):
        raise InvalidFilterError(
            f"filter={filter!r} is a {type(filter).__name__}; pass a dict such as "
            "{'type': 'semantic'}."
        )
    clauses: list[str] = []
    params: list[Any] = []
    mark = "?::jsonb" if dialect == "postgres" else "?"

    def bind(field: str, value: Any) -> Any:
        if dialect == "postgres":
            return (
                json.dumps(value) if isinstance(value, bool) else json.dumps(_scalar(field, value))
            )
        return _scalar(field, value)

    for field, condition in _flatten(filter):
        expr = _field_expr(field)
        if isinstance(condition, Mapping):
            if not condition:
                raise InvalidFilterError(
                    f"Filter for {field!r} is an empty dict; give an operator."
                )
            for operator, operand in condition.items():
                if operator in _COMPARISONS:
                    if operand is None and operator in ("$eq", "$ne"):
                        clauses.append(f"{expr} IS {'NOT ' if operator == '$ne' else ''}NULL")
                        continue
                    clauses.append(f"{expr} {_COMPARISONS[operator]} {mark}")
                    params.append(bind(field, operand))
                elif operator in _SET_OPERATORS:
                    if (
                        not isinstance(operand, (list, tuple))
                        or not 0 < len(operand) <= _MAX_IN_VALUES
                    ):
                        raise InvalidFilterError(
                            f"Filter {field!r}: {operator} needs a non-empty list of at most "
                            f"{_MAX_IN_VALUES} values, got {operand!r}."
                        )
                    marks = ", ".join(mark for _ in operand)
                    clauses.append(f"{expr} {_SET_OPERATORS[operator]} ({marks})")
                    params.extend(bind(field, v) for v in operand)
                else:
                    raise InvalidFilterError(
                        f"Filter operator {operator!r} on {field!r} is not supported; use one of "
                        f"{sorted([*_COMPARISONS, *_SET_OPERATORS])}."
                    )
        elif condition is None:
            clauses.append(f"{expr} IS NULL")
        else:
            clauses.append(f"{expr} = {mark}")
            params.append(bind(field, condition))
    return " AND ".join(clauses), params


def build_memory_state_filter(
    *,
    now_ts: float,
    include_history: bool = False,
    as_of_ts: float | None = None,
    types: Sequence[str] | None = None,
    keys: Sequence[str] | None = None,
) -> tuple[str, list[Any]]:
    """``WHERE`` fragment selecting typed memories by state, type and key.

    * default: the current state -- active, still valid, not expired;
    * ``include_history``: every version that was ever current (superseded and
      expired too);
    * ``as_of_ts``: what was current at that moment (created by then, valid then).
    """
    clauses = ["mem_status IS NOT NULL"]
    params: list[Any] = []
    if as_of_ts is not None:
        clauses.append(
            "created_ts <= ? AND valid_from_ts <= ? AND (valid_to_ts IS NULL OR valid_to_ts > ?)"
            " AND (mem_expires_ts IS NULL OR mem_expires_ts > ?)"
        )
        params.extend([as_of_ts, as_of_ts, as_of_ts, as_of_ts])
    elif not include_history:
        clauses.append(
            "mem_status = 'active' AND (valid_to_ts IS NULL OR valid_to_ts > ?)"
            " AND (mem_expires_ts IS NULL OR mem_expires_ts > ?)"
        )
        params.extend([now_ts, now_ts])
    for column, wanted in (("mem_type", types), ("mem_key", keys)):
        if wanted is None:
            continue
        values = [str(getattr(v, "value", v)) for v in wanted]
        if not values:
            clauses.append("1 = 0")  # an empty allow-list matches nothing
            continue
        clauses.append(f"{column} IN ({', '.join('?' for _ in values)})")
        params.extend(values)
    return " AND ".join(clauses), params
