"""The shared layout for ``benchmarks/longterm.py``: a Postgres catalog and a Chroma server.

:class:`SharedBackends` starts a ``chroma run`` server on a free loopback port
(or uses ``--chroma-url``) and creates fresh Postgres databases from an admin
DSN, dropping them afterwards. :func:`write_throughput` measures writes/s of N
app instances (separate processes) writing and reconciling at once.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SharedBackends:
    """A Chroma server and fresh Postgres databases for one benchmark run.

    ``keep``: a directory (``--data-dir``) whose Chroma server data, and
    databases named after it, outlive the run, so a built scenario is reused.
    """

    def __init__(
        self, admin_dsn: str, chroma_url: str | None = None, keep: Path | None = None
    ) -> None:
        self.admin_dsn = admin_dsn
        self.keep = keep
        self._databases: list[str] = []
        self._proc: subprocess.Popen[bytes] | None = None
        self._data: str | None = None
        if chroma_url is None:
            port = _free_port()
            if keep is not None:
                (keep / "chroma-server").mkdir(parents=True, exist_ok=True)
            self._data = (
                str(keep / "chroma-server")
                if keep is not None
                else tempfile.mkdtemp(prefix="lgm-bench-chroma-")
            )
            exe = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
            env = dict(os.environ, ANONYMIZED_TELEMETRY="False", MALLOC_PERTURB_="165")
            self._proc = subprocess.Popen(
                [exe, "run", "--host", "127.0.0.1", "--port", str(port), "--path", self._data],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
            )
            deadline = time.monotonic() + 60
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        raise SystemExit("`chroma run` did not listen within 60 s") from None
                    time.sleep(0.2)
            chroma_url = f"http://127.0.0.1:{port}"
        self.chroma_url = chroma_url

    def database(self, label: str) -> str:
        """DSN of a new, empty database (dropped by :meth:`close`)."""
        return self.kept_database(label, keep=False)[0]

    def kept_database(self, label: str, *, keep: bool = True) -> tuple[str, bool]:
        """``(DSN, created)``: with a ``keep`` directory the database named after it
        (created if missing, never dropped), else a new one as :meth:`database`."""
        import psycopg

        kept = keep and self.keep is not None
        if kept:
            digest = hashlib.sha1(str(self.keep).encode()).hexdigest()[:8]
            name = f"lgm_bench_keep_{label.lower()}_{digest}"
        else:
            name = f"lgm_bench_{label.lower()}_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(self.admin_dsn, autocommit=True) as admin:
            exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
            created = exists.fetchone() is None
            if created:
                admin.execute(f'CREATE DATABASE "{name}"')
        if not kept:
            self._databases.append(name)
        base, _, _ = self.admin_dsn.rpartition("/")
        return f"{base}/{name}", created

    def close(self) -> None:
        import psycopg

        with psycopg.connect(self.admin_dsn, autocommit=True) as admin:
            for name in self._databases:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=20)
        if self._data is not None and self.keep is None:
            shutil.rmtree(self._data, ignore_errors=True)


def _writer(args: dict[str, Any], ready: Any, go: Any, out: Any) -> None:
    from langgraph_memory.embeddings import HashingEmbeddings
    from langgraph_memory.longterm import ChromaMemoryStore
    from langgraph_memory.types import MemoryRecord

    store = ChromaMemoryStore.from_http(
        args["chroma_url"],
        catalog=args["dsn"],
        embeddings=HashingEmbeddings(dimensions=args["dims"]),
        collection_prefix="benchwrites",
    )
    ready.set()
    go.wait()
    errors = 0
    started = time.perf_counter()
    for i in range(args["n"]):
        user = f"w{(i * 7 + args['worker']) % args['users']:03d}"
        try:
            if i % 4 == 3:  # every 4th write re-states a profile key: a supersede
                store.put_memory(
                    MemoryRecord(text=f"now drinks oolong {i}", user_id=user, key="drink")
                )
            else:
                store.put_memory(
                    MemoryRecord(text=f"instance {args['worker']} note {i} on tea", user_id=user)
                )
        except Exception:
            errors += 1
    out.put(json.dumps({"seconds": time.perf_counter() - started, "errors": errors}))
    store.close()


def write_throughput(
    backends: SharedBackends, *, instances: int, per_instance: int, dims: int, users: int = 50
) -> dict[str, Any]:
    """Writes/s of ``instances`` processes calling ``put_memory`` at once (embedding
    included: ``HashingEmbeddings``), a quarter of them superseding a shared key."""
    ctx = multiprocessing.get_context("spawn")
    dsn = backends.database("writes")
    ready = [ctx.Event() for _ in range(instances)]
    go = ctx.Event()
    out = ctx.Queue()
    procs = [
        ctx.Process(
            target=_writer,
            args=(
                {
                    "chroma_url": backends.chroma_url,
                    "dsn": dsn,
                    "dims": dims,
                    "n": per_instance,
                    "worker": w,
                    "users": users,
                },
                ready[w],
                go,
                out,
            ),
        )
        for w in range(instances)
    ]
    for p in procs:
        p.start()
    for event in ready:
        event.wait(timeout=300)
    started = time.perf_counter()
    go.set()
    results = [json.loads(out.get(timeout=1800)) for _ in procs]
    wall = time.perf_counter() - started
    for p in procs:
        p.join(timeout=60)
    import psycopg

    with psycopg.connect(dsn) as conn:
        duplicates = conn.execute(
            "SELECT count(*) FROM (SELECT partition FROM lt_items WHERE mem_key = 'drink' "
            "AND mem_status = 'active' GROUP BY partition HAVING count(*) > 1) d"
        ).fetchall()[0][0]
    total = instances * per_instance
    return {
        "instances": instances,
        "writes": total,
        "wall_s": wall,
        "writes_per_s": total / wall,
        "errors": sum(r["errors"] for r in results),
        "duplicate_active_keys": int(duplicates),
    }
