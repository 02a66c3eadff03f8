"""Find raw identifiers anywhere in a run's files: the exam's privacy-leak check.

Every file under the run's directory is read as bytes (SQLite databases with
their ``-wal`` files, Chroma's segments and HNSW files, anything else) and
searched for each identifier in UTF-8, UTF-16-LE and UTF-16-BE. A byte scan
also finds what SQL cannot see: free pages and write-ahead-log frames holding
deleted rows. For SQLite files the tables holding the identifier are named
too (``state.db:lgm_checkpoints``), so the report can tell the session layer's
verbatim conversation (checkpoint tables) from long-term memory and the
writer's queue; a byte match that no table explains is reported as
``<file>:(free pages or WAL)``.

Example:
    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "notes.txt").write_text("call 13812345678", encoding="utf-16")
    >>> scan_identifiers(root, ["13812345678", "nobody@example.com"])
    {'13812345678': ('notes.txt',)}
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["CHECKPOINT_TABLE_PREFIXES", "is_checkpoint_location", "scan_identifiers"]

# Tables of the session savers (the conversation as the app keeps it); the memory
# writer's queue tables start with "lgm_memory_" and are not checkpoints.
CHECKPOINT_TABLE_PREFIXES = ("lgm_threads", "lgm_checkpoints", "lgm_channel_", "lgm_writes")
_UNEXPLAINED = "(free pages or WAL)"


def _forms(identifier: str) -> tuple[bytes, ...]:
    return (
        identifier.encode("utf-8"),
        identifier.encode("utf-16-le"),
        identifier.encode("utf-16-be"),
    )


def _sqlite_tables(path: Path, needles: tuple[bytes, ...]) -> list[str]:
    """Tables of the SQLite file ``path`` with a value holding one of ``needles``."""
    found: list[str] = []
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error:
        return found
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for name in names:
            quoted = '"' + name.replace('"', '""') + '"'
            try:
                rows = conn.execute(f"SELECT * FROM {quoted}")
                for row in rows:
                    if any(_holds(value, needles) for value in row):
                        found.append(name)
                        break
            except sqlite3.Error:  # virtual tables whose module is not loaded here
                continue
    finally:
        conn.close()
    return found


def _holds(value: object, needles: tuple[bytes, ...]) -> bool:
    if isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
    elif isinstance(value, bytes):
        data = value
    else:
        return False
    return any(n in data for n in needles)


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def scan_identifiers(root: str | Path, identifiers: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Where under ``root`` each identifier occurs: identifier -> locations (empty: not found).

    A location is a path relative to ``root``, or ``<path>:<table>`` for a table of
    a SQLite file. Identifiers found nowhere are left out of the result.
    """
    base = Path(root)
    files = sorted(p for p in base.rglob("*") if p.is_file())
    contents = {p: p.read_bytes() for p in files}
    out: dict[str, tuple[str, ...]] = {}
    for identifier in dict.fromkeys(identifiers):
        needles = _forms(identifier)
        locations: list[str] = []
        for path, data in contents.items():
            if not any(n in data for n in needles):
                continue
            rel = path.relative_to(base).as_posix()
            if _is_sqlite(path):
                tables = _sqlite_tables(path, needles)
                locations += [f"{rel}:{t}" for t in tables] or [f"{rel}:{_UNEXPLAINED}"]
            else:
                locations.append(rel)
        if locations:
            out[identifier] = tuple(locations)
    return out


def is_checkpoint_location(location: str) -> bool:
    """True for a checkpoint table of a session saver (the app's verbatim conversation)."""
    _, _, table = location.rpartition(":")
    return table.startswith(CHECKPOINT_TABLE_PREFIXES)


def leaks_outside_checkpoints(found: Mapping[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """``found`` without checkpoint-table locations (identifiers left with none are dropped)."""
    out = {}
    for identifier, locations in found.items():
        rest = tuple(loc for loc in locations if not is_checkpoint_location(loc))
        if rest:
            out[identifier] = rest
    return out
