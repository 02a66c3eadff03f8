"""The WHERE clause of one ``list()`` page, shared by both SQL dialects.

Pure: each dialect binds its placeholder (``?`` or ``%s``) and its metadata
predicates (``json_extract`` on SQLite, ``jsonb`` paths on Postgres).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

MetadataPredicates = Callable[[Mapping[str, Any]], tuple[list[str], list[Any]]]


def build_list_where(
    placeholder: str,
    metadata_predicates: MetadataPredicates,
    *,
    thread_id: str | None,
    checkpoint_ns: str | None,
    checkpoint_id: str | None,
    before_id: str | None,
    metadata_filter: Mapping[str, Any] | None,
    after_key: Sequence[str] | None,
) -> tuple[str, list[Any]]:
    """The WHERE clause of one ``list()`` page and its parameters.

    ``after_key`` is the (checkpoint_id, thread_id, checkpoint_ns) of the last row
    of the previous page: pages are fetched by keyset, so memory stays bounded by
    the page size and no cursor or transaction stays open between pages.
    """
    p = placeholder
    wheres: list[str] = []
    params: list[Any] = []
    if thread_id is not None:
        wheres.append(f"thread_id = {p}")
        params.append(thread_id)
    if checkpoint_ns is not None:
        wheres.append(f"checkpoint_ns = {p}")
        params.append(checkpoint_ns)
    if checkpoint_id is not None:
        wheres.append(f"checkpoint_id = {p}")
        params.append(checkpoint_id)
    if metadata_filter:
        preds, values = metadata_predicates(metadata_filter)
        wheres.extend(preds)
        params.extend(values)
    if before_id is not None:
        wheres.append(f"checkpoint_id < {p}")
        params.append(before_id)
    if after_key is not None:
        if thread_id is not None and checkpoint_ns is not None:
            # One (thread, ns): the id alone orders rows, and the PK index serves it.
            wheres.append(f"checkpoint_id < {p}")
            params.append(after_key[0])
        else:
            wheres.append(f"(checkpoint_id, thread_id, checkpoint_ns) < ({p}, {p}, {p})")
            params.extend(after_key)
    return ("WHERE " + " AND ".join(wheres) if wheres else ""), params
