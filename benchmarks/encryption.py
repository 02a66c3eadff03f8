"""What encryption at rest costs on the session benchmark's turns and reads.

Run ``python -m benchmarks.encryption`` (``--quick`` for a smoke run, ``--only
sqlite|postgres``). Writes ``benchmarks/RESULTS-encryption.md``.

Per backend, four savers run the session benchmark's chat graph
(``_session_workload.py``: 3 nodes, 200-800 character replies), ``--threads``
threads x ``--turns`` turns each, round-robin from one OS thread, then
``get_tuple`` of a finished thread ``--reads`` times:

* ours, clear; ours with ``encryption=EncryptionKeys`` (AES-256-GCM, rows bound
  to their identity);
* LangGraph's official saver, clear; the official saver with its
  ``EncryptedSerializer`` (checkpoint payloads only, no binding to the row),
  given an AES-GCM cipher from ``cryptography`` (its own recipe needs pycryptodome).

Repetitions rotate the order; medians are reported, ratios are medians of
per-repetition ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from benchmarks._session_workload import run_turns, thread_config

RESULTS_PATH = Path(__file__).with_name("RESULTS-encryption.md")
PG_ADMIN_DSN = os.environ.get("LGM_BENCH_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")


class _AesGcmCipher:
    """LangGraph's ``CipherProtocol`` over ``cryptography``'s AES-GCM (nonce || ct)."""

    def __init__(self, key: bytes) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        self._aead = AESGCM(key)

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        nonce = os.urandom(12)
        return "aesgcm", nonce + self._aead.encrypt(nonce, plaintext, None)

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        return bytes(self._aead.decrypt(ciphertext[:12], ciphertext[12:], None))


def _official_encrypted_serde() -> Any:
    from langgraph.checkpoint.serde.encrypted import EncryptedSerializer

    return EncryptedSerializer(_AesGcmCipher(os.urandom(32)))


Opener = Callable[[str], contextlib.AbstractContextManager[Any]]


def _sqlite_openers() -> dict[str, Opener]:
    from langgraph.checkpoint.sqlite import SqliteSaver as OfficialSqlite

    from langgraph_memory.encryption import EncryptionKeys
    from langgraph_memory.session import SqliteSaver

    keys = EncryptionKeys.generate("bench")

    @contextlib.contextmanager
    def official(location: str, serde: Any = None) -> Iterator[Any]:
        with OfficialSqlite.from_conn_string(location) as saver:
            if serde is not None:
                saver = OfficialSqlite(saver.conn, serde=serde)
            saver.setup()
            yield saver

    return {
        "ours": lambda loc: SqliteSaver.from_conn_string(loc),
        "ours+encryption": lambda loc: SqliteSaver.from_conn_string(loc, encryption=keys),
        "official": lambda loc: official(loc),
        "official+EncryptedSerializer": lambda loc: official(loc, _official_encrypted_serde()),
    }


def _postgres_openers() -> dict[str, Opener]:
    from langgraph.checkpoint.postgres import PostgresSaver as OfficialPostgres

    from langgraph_memory.encryption import EncryptionKeys
    from langgraph_memory.session import PostgresSaver

    keys = EncryptionKeys.generate("bench")

    @contextlib.contextmanager
    def official(location: str, serde: Any = None) -> Iterator[Any]:
        with OfficialPostgres.from_conn_string(location) as saver:
            if serde is not None:
                saver = OfficialPostgres(saver.conn, serde=serde)
            saver.setup()
            yield saver

    return {
        "ours": lambda loc: PostgresSaver.from_conn_string(loc),
        "ours+encryption": lambda loc: PostgresSaver.from_conn_string(loc, encryption=keys),
        "official": lambda loc: official(loc),
        "official+EncryptedSerializer": lambda loc: official(loc, _official_encrypted_serde()),
    }


@contextlib.contextmanager
def _location(backend: str) -> Iterator[str]:
    if backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix="lgm-bench-enc-") as tmp:
            yield str(Path(tmp) / "bench.sqlite")
        return
    import uuid

    import psycopg

    name = f"lgm_bench_enc_{uuid.uuid4().hex[:10]}"
    base = PG_ADMIN_DSN.rpartition("/")[0]
    with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _measure(
    open_saver: Opener, backend: str, threads: int, turns: int, reads: int
) -> tuple[float, float]:
    """(ms per turn, median ms per get_tuple) on a fresh database."""
    with _location(backend) as location, open_saver(location) as saver:
        ids = [f"bench-{i}" for i in range(threads)]
        start = time.perf_counter()
        for turn in range(1, turns + 1):
            for thread_id in ids:
                run_turns(saver, thread_id, 1, start=turn)
        per_turn = (time.perf_counter() - start) * 1000 / (threads * turns)
        config = thread_config(ids[0])
        samples = []
        for _ in range(reads):
            t0 = time.perf_counter()
            saver.get_tuple(config)
            samples.append((time.perf_counter() - t0) * 1000)
        return per_turn, statistics.median(samples)


def _backend_reachable(backend: str) -> str | None:
    if backend == "sqlite":
        return None
    try:
        import psycopg

        psycopg.connect(PG_ADMIN_DSN, connect_timeout=3).close()
    except Exception as exc:
        return f"Postgres unreachable ({exc.__class__.__name__})"
    return None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", choices=("sqlite", "postgres"))
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=10)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--reads", type=int, default=200)
    args = parser.parse_args(argv)
    if args.quick:
        args.reps, args.threads, args.turns, args.reads = 1, 2, 5, 20
    backends = [args.only] if args.only else ["sqlite", "postgres"]
    lines = [
        "# Encryption at rest: overhead on the session workload",
        "",
        f"`python -m benchmarks.encryption` on {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"{args.threads} threads x {args.turns} turns per repetition, {args.reps} repetitions, "
        f"get_tuple of a finished thread x {args.reads}. Medians.",
        "",
        "| backend | saver | ms / turn | get_tuple ms | turn vs clear | get vs clear |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for backend in backends:
        reason = _backend_reachable(backend)
        if reason is not None:
            print(f"{backend}: skipped, {reason}")
            lines.append(f"| {backend} | skipped: {reason} | | | | |")
            continue
        openers = _sqlite_openers() if backend == "sqlite" else _postgres_openers()
        names = list(openers)
        runs: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
        for rep in range(args.reps):
            order = names[rep % len(names) :] + names[: rep % len(names)]
            for name in order:
                runs[name].append(
                    _measure(openers[name], backend, args.threads, args.turns, args.reads)
                )
        pairs = {"ours+encryption": "ours", "official+EncryptedSerializer": "official"}
        for name in names:
            turn = statistics.median(r[0] for r in runs[name])
            get = statistics.median(r[1] for r in runs[name])
            base = pairs.get(name)
            if base is None:
                ratio_turn = ratio_get = "1.00x"
            else:
                ratio_turn = "{:.2f}x".format(
                    statistics.median(
                        a[0] / b[0] for a, b in zip(runs[name], runs[base], strict=True)
                    )
                )
                ratio_get = "{:.2f}x".format(
                    statistics.median(
                        a[1] / b[1] for a, b in zip(runs[name], runs[base], strict=True)
                    )
                )
            line = f"| {backend} | {name} | {turn:.2f} | {get:.3f} | {ratio_turn} | {ratio_get} |"
            print(line)
            lines.append(line)
        enc = [
            a[0] / b[0]
            for a, b in zip(
                runs["ours+encryption"], runs["official+EncryptedSerializer"], strict=True
            )
        ]
        line = f"{backend}: ours+encryption per turn vs official+EncryptedSerializer: {statistics.median(enc):.2f}x"
        print(line)
        lines += ["", line, ""]
    lines += [
        "",
        '"vs clear" compares each encrypted saver with the same saver in clear. The',
        "official serializer seals checkpoint payloads only (no metadata, no binding of",
        "a row to its thread, and it reads clear rows silently); ours seals checkpoints,",
        "values, list chunks, writes and the content-bearing metadata keys, each bound",
        "to its identity.",
    ]
    if not args.quick:
        RESULTS_PATH.write_text("\n".join(lines) + "\n")
        print(f"wrote {RESULTS_PATH}")


if __name__ == "__main__":
    main()
