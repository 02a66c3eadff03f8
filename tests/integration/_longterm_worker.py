"""One app instance of the multi-instance tests: a separate process and working directory.

``python -m tests.integration._longterm_worker <command> <json-args>`` opens a
``ChromaMemoryStore`` on the shared Postgres catalog and Chroma server, runs
the command and prints one JSON line with what it acknowledged.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.types import MemoryRecord


def open_store(args: dict[str, Any]) -> ChromaMemoryStore:
    return ChromaMemoryStore.from_http(
        args["chroma_url"],
        catalog=args["dsn"],
        embeddings=HashingEmbeddings(dimensions=64),
        collection_prefix=args["prefix"],
        dedicated_threshold=args.get("dedicated_threshold", 256),
    )


def write(store: ChromaMemoryStore, args: dict[str, Any]) -> dict[str, Any]:
    acked = []
    for i in range(args["n"]):
        record = store.put_memory(
            MemoryRecord(text=f"{args['tag']} fact {i} about green tea", user_id=args["user"])
        )
        acked.append(record.id)
    return {"acked": acked}


def recall(store: ChromaMemoryStore, args: dict[str, Any]) -> dict[str, Any]:
    found = store.search_memories(args["user"], args["query"], limit=args.get("limit", 50))
    return {
        "found": [m.record.id for m in found],
        "listed": sorted(m.id for m in store.list_memories(args["user"])),
    }


def forget(store: ChromaMemoryStore, args: dict[str, Any]) -> dict[str, Any]:
    return {"deleted": store.forget_user(args["user"]).memories_deleted}


def stress(store: ChromaMemoryStore, args: dict[str, Any]) -> dict[str, Any]:
    """Plain writes plus reconciling writes: every worker keeps re-stating the same
    profile key of the same users, so instances supersede each other's memories."""
    acked: list[list[str]] = []
    keyed: list[list[str]] = []
    errors: list[str] = []
    started = time.perf_counter()
    for i in range(args["n"]):
        user = args["users"][i % len(args["users"])]
        try:
            plain = store.put_memory(
                MemoryRecord(text=f"{args['tag']} note {i} on jasmine tea", user_id=user)
            )
            acked.append([user, plain.id])
            fact = store.put_memory(
                MemoryRecord(text=f"{args['tag']} now drinks oolong {i}", user_id=user, key="drink")
            )
            keyed.append([user, fact.id])
        except Exception as exc:  # every error counts against the test
            errors.append(f"{type(exc).__name__}: {exc}")
    return {
        "acked": acked,
        "keyed": keyed,
        "errors": errors,
        "seconds": time.perf_counter() - started,
    }


def crash_after_vectors(store: ChromaMemoryStore, args: dict[str, Any]) -> dict[str, Any]:
    """Die (SIGKILL-like ``os._exit``) after Chroma took the vectors, before the
    catalog commits: the state a crash between the two writes leaves."""
    upsert = store.vectors.upsert

    def upsert_then_die(*a: Any, **kw: Any) -> None:
        upsert(*a, **kw)
        os._exit(9)

    store.vectors.upsert = upsert_then_die  # type: ignore[method-assign]
    store.put_memory(MemoryRecord(text="this write never commits", user_id=args["user"]))
    return {}


def crash_after_vector_delete(store: ChromaMemoryStore, args: dict[str, Any]) -> dict[str, Any]:
    """Die after Chroma deleted a memory's vector, before the catalog deletes its row."""
    delete = store.vectors.delete

    def delete_then_die(*a: Any, **kw: Any) -> None:
        delete(*a, **kw)
        if a[1] if len(a) > 1 else kw.get("ids"):
            os._exit(9)

    store.vectors.delete = delete_then_die  # type: ignore[method-assign]
    store.delete_memory(args["user"], args["memory_id"])
    return {}


COMMANDS = {
    "write": write,
    "recall": recall,
    "forget": forget,
    "stress": stress,
    "crash_after_vectors": crash_after_vectors,
    "crash_after_vector_delete": crash_after_vector_delete,
}


def main() -> int:
    command, raw = sys.argv[1], sys.argv[2]
    args = json.loads(raw)
    store = open_store(args)
    try:
        result = COMMANDS[command](store, args)
    finally:
        store.close()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
