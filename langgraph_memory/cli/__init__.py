"""``langgraph-memory``: inspect and operate a langgraph-memory deployment.

Every command works on a SQLite path or a Postgres DSN (``--db``, or
``$LANGGRAPH_MEMORY_DB``) and/or a store directory (``--store``, or
``$LANGGRAPH_MEMORY_STORE``); ``--json`` prints machine-readable output.
Errors print one line saying what was wrong and how to fix it, and exit 1.

::

    langgraph-memory migrate checkpoints.sqlite          # copy the official saver's threads
    langgraph-memory threads --db checkpoints.sqlite     # size, checkpoints, last activity
    langgraph-memory show THREAD --db ...                # its history
    langgraph-memory recalled THREAD --db ...            # what recall injected, per turn
    langgraph-memory memories USER --store memory/ [--query "..."]
    langgraph-memory forget --user USER --store memory/ --db ... --yes
    langgraph-memory sweep --db ... --keep-last 20 --dry-run
    langgraph-memory erase-pending --db postgresql://...   # VACUUM FULL what deletes left
    langgraph-memory export --user USER --store memory/ -o user.jsonl
    langgraph-memory import user.jsonl --store memory/
    langgraph-memory stats --db ...
    langgraph-memory compact-chroma --path /srv/chroma     # after forget_user, on a Chroma server

Example:
    >>> main(["threads", "--db", "/no/such/file.sqlite"])
    1
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

from langgraph_memory.config import RetentionPolicy
from langgraph_memory.errors import LangGraphMemoryError

PROG = "langgraph-memory"

# Columns of each table view (``--json`` prints every field).
_COLUMNS: dict[str, tuple[str, ...]] = {
    "threads": ("thread_id", "checkpoints", "bytes", "last_activity"),
    "show": (
        "checkpoint_id",
        "namespace",
        "step",
        "source",
        "created_at",
        "messages",
        "last_message",
    ),
    "recalled": ("step", "created_at", "user_message", "memory_ids"),
    "memories": ("id", "type", "status", "source", "confidence", "valid_from", "valid_to", "text"),
    "memories_query": ("score", "why", "id", "type", "source", "valid_to", "text"),
}


def _print_rows(rows: list[dict[str, Any]], columns: Sequence[str], out: TextIO) -> None:
    if not rows:
        out.write("(none)\n")
        return
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [min(60, max(len(c), *(len(r[i]) for r in cells))) for i, c in enumerate(columns)]
    out.write("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip() + "\n")
    for row in cells:
        out.write(
            "  ".join(v[:w].ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() + "\n"
        )


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, dict):
        return " ".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or "-"
    return " ".join(str(value).split())


def _print_mapping(data: dict[str, Any], out: TextIO) -> None:
    width = max(len(k) for k in data)
    for key, value in data.items():
        out.write(f"{key.ljust(width)}  {_cell(value)}\n")


def _emit(args: argparse.Namespace, data: Any, columns: Sequence[str] | None = None) -> None:
    out = sys.stdout
    if args.json:
        json.dump(data, out, indent=2, default=str, ensure_ascii=False)
        out.write("\n")
    elif isinstance(data, list):
        _print_rows(data, columns or (), out)
    else:
        _print_mapping(data, out)


@contextlib.contextmanager
def _output(path: str | None) -> Iterator[TextIO]:
    if path in (None, "-"):
        yield sys.stdout
        return
    with open(path, "w", encoding="utf-8") as handle:
        yield handle


# ------------------------------------------------------------------ commands


def _cmd_migrate(args: argparse.Namespace) -> None:
    from langgraph_memory.migrate import migrate_official

    report = migrate_official(
        args.source, args.target, progress=not args.no_progress and not args.json
    )
    _emit(args, report.to_dict())


def _cmd_threads(args: argparse.Namespace) -> None:
    from langgraph_memory.cli import _open, _session

    with _open.open_saver(_open.require_db(args.db)) as saver:
        _emit(args, _session.threads(saver, args.limit), _COLUMNS["threads"])


def _cmd_show(args: argparse.Namespace) -> None:
    from langgraph_memory.cli import _open, _session

    with _open.open_saver(_open.require_db(args.db)) as saver:
        _emit(args, _session.show(saver, args.thread, args.limit), _COLUMNS["show"])


def _cmd_recalled(args: argparse.Namespace) -> None:
    from langgraph_memory.cli import _open, _session

    with _open.open_saver(_open.require_db(args.db)) as saver:
        turns = _session.recalled(saver, args.thread)
    if args.json or not turns:
        _emit(args, turns, _COLUMNS["recalled"])
        return
    for turn in turns:
        ids = ", ".join(turn["memory_ids"]) if turn["memory_ids"] is not None else "not recorded"
        sys.stdout.write(
            f"step {turn['step']}  {turn['created_at']}  user: {turn['user_message']}\n"
            f"  memory ids: {ids}\n"
        )
        for line in turn["block"].splitlines():
            sys.stdout.write(f"  | {line}\n")


def _cmd_memories(args: argparse.Namespace) -> None:
    from langgraph_memory.cli import _memory, _open

    with _open.open_store(_open.require_store(args.store), args.embeddings) as store:
        rows = _memory.memories(
            store, args.user, query=args.query, limit=args.limit, history=args.history
        )
    _emit(args, rows, _COLUMNS["memories_query" if args.query else "memories"])


def _cmd_forget(args: argparse.Namespace) -> None:
    from langgraph_memory.cli import _memory, _open

    if not args.yes:
        raise LangGraphMemoryError(
            f"forget deletes every memory of {args.user!r}"
            + (" and every thread that names the user" if args.db else "")
            + "; add --yes to confirm."
        )
    with _open.open_store(_open.require_store(args.store), "none") as store:
        if args.db:
            with _open.open_saver(args.db) as saver:
                receipt = _memory.forget(store, args.user, saver)
        else:
            receipt = _memory.forget(store, args.user, None)
    _emit(args, receipt)


def _cmd_sweep(args: argparse.Namespace) -> None:
    from langgraph_memory.cli import _open, _session

    policy = RetentionPolicy(
        keep_last=args.keep_last,
        thread_ttl_seconds=args.ttl_days * 86_400 if args.ttl_days is not None else None,
        max_bytes=args.max_bytes,
    )
    with _open.open_saver(_open.require_db(args.db), retention=policy) as saver:
        _emit(args, _session.sweep(saver, args.dry_run, args.keep_last))


def _cmd_erase_pending(args: argparse.Namespace) -> None:
    from langgraph_memory.cli import _open

    with _open.open_saver(_open.require_db(args.db)) as saver:
        _emit(args, {"tables_rewritten": saver.erase_pending()})


def _cmd_stats(args: argparse.Namespace) -> None:
    from langgraph_memory.cli import _open, _session

    with _open.open_saver(_open.require_db(args.db)) as saver:
        _emit(args, _session.stats(saver))


def _cmd_export(args: argparse.Namespace) -> None:
    from langgraph_memory.cli import _memory, _open, _session

    if (args.user is None) == (args.thread is None):
        raise LangGraphMemoryError("export needs exactly one of --user USER or --thread THREAD.")
    if args.user is not None:
        with (
            _open.open_store(_open.require_store(args.store), "none") as store,
            _output(args.output) as out,
        ):
            count = _memory.export_memories(store, args.user, out, history=args.history)
        summary = {"user_id": args.user, "memories": count}
    else:
        with _open.open_saver(_open.require_db(args.db)) as saver, _output(args.output) as out:
            count = _session.export_thread(saver, args.thread, out)
        summary = {"thread_id": args.thread, "checkpoints": count}
    if args.output not in (None, "-"):
        _emit(args, {**summary, "file": args.output})


def _cmd_import(args: argparse.Namespace) -> None:
    from langgraph_memory.cli import _memory, _open, _session

    try:
        with open(args.file, encoding="utf-8") as handle:
            lines = handle.readlines()
    except OSError as exc:
        raise LangGraphMemoryError(f"cannot read {args.file!r} ({exc.strerror}).") from exc
    head = lines[0] if lines else ""
    if _memory.MEMORY_EXPORT_KIND in head:
        with _open.open_store(
            _open.require_store(args.store), args.embeddings, create=True
        ) as store:
            _emit(args, _memory.import_memories(store, lines, args.user))
    elif _session.THREAD_EXPORT_KIND in head:
        with _open.open_saver(_open.require_db(args.db), create=True) as saver:
            _emit(args, _session.import_thread(saver, lines, args.thread_id))
    else:
        raise LangGraphMemoryError(
            f"{args.file!r} is not a langgraph-memory export (its first line names no "
            f"{_memory.MEMORY_EXPORT_KIND!r} or {_session.THREAD_EXPORT_KIND!r})."
        )


def _cmd_compact_chroma(args: argparse.Namespace) -> None:
    from pathlib import Path

    from langgraph_memory.longterm.vectors import compact_chroma_directory

    path = Path(args.path)
    if not (path / "chroma.sqlite3").is_file():
        raise LangGraphMemoryError(
            f"{args.path!r} holds no chroma.sqlite3; pass the directory a Chroma server runs "
            "on (`chroma run --path DIR`) or an embedded store's chroma/ directory."
        )
    _emit(args, {"path": str(path), **compact_chroma_directory(path)})


def _cmd_eval(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("langgraph_memory.eval.__main__") is None:
        raise LangGraphMemoryError(
            "this langgraph-memory has no exam runner (langgraph_memory.eval has no __main__); "
            "upgrade, or run the benchmarks in benchmarks/."
        )
    rest = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
    return subprocess.call([sys.executable, "-m", "langgraph_memory.eval", *rest])


# ------------------------------------------------------------------ parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Inspect and operate langgraph-memory checkpoints and memories."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print JSON for scripts")
    db = argparse.ArgumentParser(add_help=False)
    db.add_argument("--db", help="SQLite path or Postgres DSN (default: $LANGGRAPH_MEMORY_DB)")
    store = argparse.ArgumentParser(add_help=False)
    store.add_argument("--store", help="store directory (default: $LANGGRAPH_MEMORY_STORE)")
    store.add_argument(
        "--embeddings",
        default="hashing",
        help="'hashing' (default, offline), 'none' (keyword only) or module:attribute",
    )

    def add(
        name: str, handler: Callable[[argparse.Namespace], Any], helptext: str, *parents: Any
    ) -> Any:
        p = sub.add_parser(name, help=helptext, description=helptext, parents=[common, *parents])
        p.set_defaults(handler=handler)
        return p

    p = add("migrate", _cmd_migrate, "copy every thread of LangGraph's official saver into ours")
    p.add_argument("source", help="the official saver's SQLite path or Postgres DSN")
    p.add_argument("--target", help="where our tables are (default: the same database)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")

    p = add("threads", _cmd_threads, "list threads with size, checkpoints and last activity", db)
    p.add_argument("--limit", type=int, default=None)

    p = add("show", _cmd_show, "a thread's checkpoint history, newest first", db)
    p.add_argument("thread")
    p.add_argument("--limit", type=int, default=None)

    p = add("recalled", _cmd_recalled, "the memories recall injected on each turn of a thread", db)
    p.add_argument("thread")

    p = add("memories", _cmd_memories, "a user's memories; --query explains each score", store)
    p.add_argument("user")
    p.add_argument("--query", help="rank as recall would for this text, with the score breakdown")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--history", action="store_true", help="include superseded and expired ones")

    p = add(
        "forget", _cmd_forget, "erase a user (memories, and with --db their threads)", store, db
    )
    p.add_argument("--user", required=True)
    p.add_argument("--yes", action="store_true", help="confirm the deletion")

    p = add("sweep", _cmd_sweep, "apply a retention policy to the checkpoint database", db)
    p.add_argument("--dry-run", action="store_true", help="report only, delete nothing")
    p.add_argument("--keep-last", type=int, default=None, help="checkpoints kept per thread")
    p.add_argument("--ttl-days", type=float, default=None, help="delete threads idle this long")
    p.add_argument("--max-bytes", type=int, default=None, help="soft cap on the database size")

    p = add(
        "export",
        _cmd_export,
        "JSONL of a user's memories (--user) or a thread (--thread)",
        store,
        db,
    )
    p.add_argument("--user")
    p.add_argument("--thread")
    p.add_argument("-o", "--output", help="file to write (default: stdout)")
    p.add_argument("--history", action="store_true", help="memories: include superseded ones")

    p = add(
        "import",
        _cmd_import,
        "load an export file (memories into --store, a thread into --db)",
        store,
        db,
    )
    p.add_argument("file")
    p.add_argument("--user", help="memories: store them under this user instead")
    p.add_argument("--thread-id", help="thread: import it under this id instead")

    add(
        "erase-pending",
        _cmd_erase_pending,
        "Postgres: VACUUM FULL the tables single deletes left rows in (a no-op on SQLite)",
        db,
    )

    add("stats", _cmd_stats, "database size, threads, checkpoints, payload", db)

    p = add(
        "compact-chroma",
        _cmd_compact_chroma,
        "push erased vectors out of a Chroma directory (dropped segments, free pages)",
    )
    p.add_argument("--path", required=True, help="the Chroma server's --path (or store/chroma)")

    p = add("eval", _cmd_eval, "run the memory exam (python -m langgraph_memory.eval)")
    p.add_argument("rest", nargs=argparse.REMAINDER, help="arguments for the exam")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit status (0 ok, 1 error, 2 bad usage)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["eval"]:
        # Everything after `eval` is the exam's own (its --help included).
        argv = ["eval", "--", *argv[1:]]
    args = build_parser().parse_args(argv)
    try:
        status = args.handler(args)
    except (LangGraphMemoryError, ValueError, OSError) as exc:
        sys.stderr.write(f"{PROG} {args.command}: error: {exc}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG} {args.command}: interrupted\n")
        return 130
    return int(status or 0)
