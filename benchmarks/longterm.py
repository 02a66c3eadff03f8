"""Long-term store recall latency: ``ChromaMemoryStore.search_memories`` vs plain Chroma.

Run: ``python -m benchmarks.longterm`` (defaults: the issue's two scales).

Two scenarios, each measured in the same run as its baseline:

* **A**: 100 users x 1000 memories (100k) -- every user gets a dedicated collection.
* **B**: 10k users x 20 memories (200k) -- users share 64 hashed shard collections.

"Recall" is search + rank: redaction of the query, FTS5 keyword search, the
Chroma vector side, fusion, recency/importance scoring and row mapping. The
query *embedding* is excluded: query vectors are precomputed and passed as
``query_embedding=``. Ingestion uses precomputed vectors too (a lookup
``Embeddings``), because the point is the store, not the embedder.

Baseline: one shared Chroma collection holding the same vectors with a
``user_id`` metadata field, queried with ``where={"user_id": ...}`` -- what a
plain Chroma integration does. To keep the run short its HNSW graph is built
with ``ef_construction=32`` (default 100); its filtered queries are dominated by
the metadata filter, not the graph, so this does not flatter our side.

Writes ``benchmarks/RESULTS-longterm.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import PutOp

from benchmarks._longterm_shared import SharedBackends, write_throughput
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.types import MemoryRecord, MemoryType

if TYPE_CHECKING:
    from chromadb.api.types import Metadata

RESULTS = Path(__file__).with_name("RESULTS-longterm.md")
TARGET_P95_MS = 5.0
# Issue 16: the shared layout (Postgres catalog + Chroma server) at p95 <= 10 ms.
SHARED_TARGET_P95_MS = 10.0

_EN_SUBJECTS = [
    "coffee", "green tea", "seafood", "peanuts", "hiking", "jazz", "python", "rust", "budget",
    "flight", "hotel", "laptop", "running shoes", "vegetarian food", "spicy food", "cats", "dogs",
    "chess", "piano", "yoga", "marathon", "sushi", "wine", "cycling", "photography", "gardening",
    "invoice", "refund", "shipping", "warranty", "subscription", "meeting", "dentist", "gym",
]  # fmt: skip
_EN_TEMPLATES = [
    "User likes {s} and mentioned it {n} times",
    "User is allergic to {s} since {y}",
    "User asked about {s} on day {n}",
    "Prefers {s} over {t} for the weekend",
    "The user's {s} plan changed to level {n}",
    "User dislikes {s} but tolerates {t}",
]  # fmt: skip
_ZH_SUBJECTS = [
    "咖啡", "绿茶", "海鲜", "花生", "徒步", "爵士乐", "预算", "机票", "酒店", "笔记本电脑", "跑鞋",
    "素食", "辣的菜", "猫", "狗", "象棋", "钢琴", "瑜伽", "马拉松", "寿司", "红酒", "骑行", "摄影",
]  # fmt: skip
_ZH_TEMPLATES = [
    "用户喜欢{s}，提到过{n}次",
    "用户从{y}年起对{s}过敏",
    "用户第{n}天问了关于{s}的问题",
    "周末比起{t}更喜欢{s}",
]  # fmt: skip


def synthetic_text(rng: random.Random, serial: int) -> str:
    """A memory-like sentence (2/3 English, 1/3 Chinese); ``serial`` makes it unique."""
    if rng.random() < 2 / 3:
        s, t = rng.sample(_EN_SUBJECTS, 2)
        text = rng.choice(_EN_TEMPLATES).format(
            s=s, t=t, n=rng.randint(1, 99), y=rng.randint(1990, 2026)
        )
    else:
        s, t = rng.sample(_ZH_SUBJECTS, 2)
        text = rng.choice(_ZH_TEMPLATES).format(
            s=s, t=t, n=rng.randint(1, 99), y=rng.randint(1990, 2026)
        )
    return f"{text} #{serial}"


class LookupEmbeddings(Embeddings):
    """Precomputed vectors by text: ingestion measures the store, not an embedder."""

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self.dimensions = dims
        self.table: dict[str, list[float]] = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        if text not in self.table:  # the store's identity probe on open
            from langgraph_memory.embeddings import HashingEmbeddings

            return HashingEmbeddings(dimensions=self.dims).embed_query(text)
        return self.table[text]


def unit_vectors(rng: np.random.Generator, n: int, dims: int) -> np.ndarray:
    v = rng.standard_normal((n, dims)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def timed(fn: Callable[[], Any], repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000.0)
    return out


def run_scenario(
    name: str,
    users: int,
    per_user: int,
    *,
    dims: int,
    queries: int,
    workdir: Path,
    baseline: bool,
    seed: int = 7,
    shared: SharedBackends | None = None,
) -> dict[str, Any]:
    """One scenario on the embedded layout, or (``shared``) on the Postgres catalog +
    Chroma server layout; the same seed gives both the same memories and queries."""
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    embeddings = LookupEmbeddings(dims)

    # One database per scenario: the cache-off instance reads what the warm one wrote.
    catalog, fresh = shared.kept_database(f"scenario{name}") if shared else (None, False)

    def open_store(**kwargs: Any) -> ChromaMemoryStore:
        if shared is None:
            return ChromaMemoryStore.embedded(
                workdir / f"store-{name}", embeddings=embeddings, **kwargs
            )
        return ChromaMemoryStore.from_http(
            shared.chroma_url,
            catalog=catalog,
            embeddings=embeddings,
            collection_prefix=f"bench{name.lower()}",
            **kwargs,
        )

    store = open_store()
    # With --data-dir a built scenario is reused: only the queries run again.
    marker = workdir / f"built-{name}{'-shared' if shared else ''}.json"
    shape = {"users": users, "per_user": per_user, "dims": dims, "baseline": baseline}
    # A shared scenario's database is named after --data-dir: a new one is rebuilt.
    built = json.loads(marker.read_text()) if marker.exists() and not fresh else None
    if built is not None and built["shape"] != shape:
        raise SystemExit(f"{marker} was built for {built['shape']}; use another --data-dir")
    baseline_col = None
    if baseline:
        import chromadb
        from chromadb.config import Settings

        client = chromadb.PersistentClient(
            path=str(workdir / f"baseline-{name}"), settings=Settings(anonymized_telemetry=False)
        )
        baseline_col = client.get_or_create_collection(
            "shared",
            embedding_function=None,
            configuration={"hnsw": {"space": "cosine", "ef_construction": 32}},
        )
    user_ids = [f"user{u:05d}" for u in range(users)]
    texts_by_user: dict[str, list[str]] = built["texts_by_user"] if built else {}
    base_time = datetime.now(UTC) - timedelta(days=60)
    serial = 0
    store_ingest = built["store_ingest_s"] if built else 0.0
    baseline_ingest = built["baseline_ingest_s"] if built else 0.0
    chunk_users = max(1, 5000 // per_user)
    for start in range(0, 0 if built else users, chunk_users):
        chunk = user_ids[start : start + chunk_users]
        ops: list[PutOp] = []
        ids: list[str] = []
        docs: list[str] = []
        metas: list[Metadata] = []
        vectors = unit_vectors(nrng, len(chunk) * per_user, dims)
        k = 0
        for uid in chunk:
            texts_by_user[uid] = []
            for _ in range(per_user):
                serial += 1
                text = synthetic_text(rng, serial)
                embeddings.table[text] = vectors[k].tolist()
                k += 1
                texts_by_user[uid].append(text)
                created = base_time + timedelta(minutes=rng.randint(0, 60 * 24 * 59))
                record = MemoryRecord(
                    text=text,
                    type=rng.choice(list(MemoryType)),
                    importance=rng.random(),
                    user_id=uid,
                    created_at=created,
                    updated_at=created,
                    valid_from=created,
                )
                ops.append(PutOp(("memories", uid), record.id, record.to_dict()))
                ids.append(f"{uid}-{serial}")
                docs.append(text)
                metas.append({"user_id": uid})
        t0 = time.perf_counter()
        store.batch(ops)
        store_ingest += time.perf_counter() - t0
        if baseline_col is not None:
            t0 = time.perf_counter()
            baseline_col.add(ids=ids, embeddings=vectors, documents=docs, metadatas=metas)
            baseline_ingest += time.perf_counter() - t0
    if built is None and catalog is not None:
        # What autovacuum does within a minute of a bulk load on a default server
        # (this box runs Postgres with autovacuum off): planner statistics and the
        # visibility map. Never-analysed tables get guessed row counts and plans.
        import psycopg

        t0 = time.perf_counter()
        with psycopg.connect(catalog, autocommit=True) as conn:
            conn.execute("VACUUM (ANALYZE)")
        print(f"  VACUUM (ANALYZE) after the shared ingest: {time.perf_counter() - t0:.0f} s")
    if built is None:
        marker.write_text(
            json.dumps(
                {
                    "shape": shape,
                    "texts_by_user": texts_by_user,
                    "store_ingest_s": store_ingest,
                    "baseline_ingest_s": baseline_ingest,
                }
            )
        )
    # Queries: words from one of the user's own memories, and a precomputed vector.
    probes = []
    for _ in range(queries):
        uid = rng.choice(user_ids)
        words = rng.choice(texts_by_user[uid]).split("#")[0]
        probes.append((uid, words, unit_vectors(nrng, 1, dims)[0].tolist()))
    # Warm-up: one query per probed user (opens collections, fills SQLite's page
    # cache and, for dedicated partitions, the vector cache: the steady state of
    # users in a conversation). The cache-off column below is the cold path.
    warmed = {uid: (words, vec) for uid, words, vec in probes}
    for uid, (words, vec) in warmed.items():
        store.search_memories(uid, words, query_embedding=vec)
    for uid, _, vec in probes[:20]:
        if baseline_col is not None:
            baseline_col.query(query_embeddings=[vec], n_results=5, where={"user_id": uid})
    # The same data through a second store instance with the vector cache off:
    # every query then pays a Chroma call (HNSW query or get-by-id).
    uncached = open_store(vector_cache_bytes=0)
    for uid, words, vec in probes[:20]:
        uncached.search_memories(uid, words, query_embedding=vec)
    ours: list[float] = []
    ours_uncached: list[float] = []
    theirs: list[float] = []
    returned = 0

    # Interleaved in a rotating order, so machine noise (and whatever a heavy
    # baseline query leaves behind) hits all three alike.
    def run_ours(uid: str, words: str, vec: Sequence[float]) -> None:
        nonlocal returned
        start = time.perf_counter()
        found = store.search_memories(uid, words, query_embedding=vec, limit=5)
        ours.append((time.perf_counter() - start) * 1000.0)
        returned += len(found)
        assert all(m.record.user_id == uid for m in found)

    def run_uncached(uid: str, words: str, vec: Sequence[float]) -> None:
        start = time.perf_counter()
        uncached.search_memories(uid, words, query_embedding=vec, limit=5)
        ours_uncached.append((time.perf_counter() - start) * 1000.0)

    def run_baseline(uid: str, words: str, vec: Sequence[float]) -> None:
        if baseline_col is not None:
            start = time.perf_counter()
            baseline_col.query(query_embeddings=[vec], n_results=5, where={"user_id": uid})
            theirs.append((time.perf_counter() - start) * 1000.0)

    runners = [run_ours, run_uncached, run_baseline]
    for i, (uid, words, vec) in enumerate(probes):
        for runner in runners[i % 3 :] + runners[: i % 3]:
            runner(uid, words, vec)
    uncached.close()
    layout = store.catalog.query("SELECT dedicated, count(*) FROM lt_partitions GROUP BY dedicated")
    store.close()
    return {
        "name": name,
        "catalog": "embedded (SQLite FTS5 + Chroma dir)"
        if shared is None
        else "shared (Postgres catalog + Chroma server)",
        "users": users,
        "per_user": per_user,
        "memories": users * per_user,
        "store_ingest_s": store_ingest,
        "baseline_ingest_s": baseline_ingest,
        "ours": ours,
        "ours_uncached": ours_uncached,
        "theirs": theirs,
        "avg_returned": returned / max(1, len(probes)),
        "layout": {("dedicated" if d else "shard"): n for d, n in layout},
    }


DATA = Path(__file__).resolve().parent.parent / "tests" / "data"


def _tsv(name: str) -> list[tuple[str, str]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [
        (a, b) for a, b in (line.split("\t") for line in lines if line and not line.startswith("#"))
    ]


def retrieval_quality(workdir: Path) -> dict[str, dict[int, float]]:
    """Recall@5/10 of keyword-only, vector-only and fusion on tests/data/retrieval_*.tsv."""
    from langgraph_memory.config import ScoringWeights
    from langgraph_memory.embeddings import HashingEmbeddings

    memories, queries = _tsv("retrieval_memories.tsv"), _tsv("retrieval_queries.tsv")
    stores = {}
    for label, emb in (("hybrid", HashingEmbeddings(dimensions=384)), ("keyword", None)):
        target = workdir / f"quality-{label}"
        shutil.rmtree(target, ignore_errors=True)
        store = ChromaMemoryStore.embedded(target, embeddings=emb)
        for memory_id, text in memories:
            store.put_memory(MemoryRecord(text=text, user_id="quality", id=memory_id))
        stores[label] = store
    plain = {"recency": 0.0, "importance": 0.0, "min_relevance": 0.0}
    rankers = {
        "keyword-only (FTS5 BM25)": (stores["keyword"], ScoringWeights(keyword_share=1.0, **plain)),
        "vector-only (HashingEmbeddings)": (
            stores["hybrid"],
            ScoringWeights(keyword_share=0.0, **plain),
        ),
        "fusion (keyword_share=0.5)": (stores["hybrid"], ScoringWeights(**plain)),
    }
    out: dict[str, dict[int, float]] = {}
    for label, (store, weights) in rankers.items():
        out[label] = {}
        for k in (5, 10):
            hits = sum(
                target
                in [
                    m.record.id
                    for m in store.search_memories(
                        "quality", query, limit=k, weights=weights, min_relevance=0.0
                    )
                ]
                for target, query in queries
            )
            out[label][k] = hits / len(queries)
    for store in stores.values():
        store.close()
    return out


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    ours, theirs = result["ours"], result["theirs"]
    row = {
        "ours_p50": statistics.median(ours),
        "ours_p95": percentile(ours, 95),
        "uncached_p50": statistics.median(result["ours_uncached"]),
        "uncached_p95": percentile(result["ours_uncached"], 95),
        "theirs_p50": statistics.median(theirs) if theirs else float("nan"),
        "theirs_p95": percentile(theirs, 95) if theirs else float("nan"),
    }
    row["ratio_p95"] = row["theirs_p95"] / row["ours_p95"] if theirs else float("nan")
    row["target_ms"] = (
        TARGET_P95_MS if result["catalog"].startswith("embedded") else (SHARED_TARGET_P95_MS)
    )
    row["meets_target"] = row["ours_p95"] <= row["target_ms"]
    return row


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, default=384)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--a-users", type=int, default=100)
    parser.add_argument("--a-per-user", type=int, default=1000)
    parser.add_argument("--b-users", type=int, default=10_000)
    parser.add_argument("--b-per-user", type=int, default=20)
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--only", choices=["A", "B"], help="run one scenario")
    parser.add_argument("--no-quality", action="store_true", help="skip the recall@k table")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--catalog",
        choices=["embedded", "shared", "both"],
        default="both",
        help="embedded layout, Postgres catalog + Chroma server, or both in one run",
    )
    parser.add_argument(
        "--pg-admin-dsn",
        default=os.environ.get("LGM_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres"),
        help="the shared layout creates (and drops) its databases through this DSN",
    )
    parser.add_argument(
        "--chroma-url",
        help="an existing Chroma server (default: start `chroma run` on a free port)",
    )
    parser.add_argument("--writers", type=int, default=4, help="app instances writing at once")
    parser.add_argument("--writes-per-instance", type=int, default=150)
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="keep the built stores here (the shared layout's Chroma server data too, and "
        "its Postgres databases, named after this directory, are not dropped) and reuse "
        "them on the next run (queries only)",
    )
    args = parser.parse_args(argv)
    workdir = args.data_dir or Path(tempfile.mkdtemp(prefix="lgm-bench-longterm-"))
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    layouts = ["embedded", "shared"] if args.catalog == "both" else [args.catalog]
    shared = (
        SharedBackends(args.pg_admin_dsn, args.chroma_url, keep=args.data_dir)
        if "shared" in layouts
        else None
    )
    writes = None
    try:
        results = []
        for name, users, per_user in (
            ("A", args.a_users, args.a_per_user),
            ("B", args.b_users, args.b_per_user),
        ):
            if args.only and name != args.only:
                continue
            for layout in layouts:
                print(f"scenario {name} ({layout}): {users} users x {per_user} ...", flush=True)
                result = run_scenario(
                    name,
                    users,
                    per_user,
                    dims=args.dims,
                    queries=args.queries,
                    workdir=workdir,
                    baseline=not args.no_baseline and layout == "embedded",
                    shared=shared if layout == "shared" else None,
                )
                result.update(summarise(result))
                results.append(result)
                print(
                    f"  ours p50 {result['ours_p50']:.2f} ms p95 {result['ours_p95']:.2f} ms | "
                    f"ours, cache off p50 {result['uncached_p50']:.2f} ms p95 "
                    f"{result['uncached_p95']:.2f} ms | "
                    f"plain Chroma+where p50 {result['theirs_p50']:.2f} ms p95 "
                    f"{result['theirs_p95']:.2f} ms | ratio p95 {result['ratio_p95']:.1f}x | "
                    f"ingest ours {result['store_ingest_s']:.0f} s, baseline "
                    f"{result['baseline_ingest_s']:.0f} s | layout {result['layout']}",
                    flush=True,
                )
        if shared is not None and args.writers > 0:
            writes = write_throughput(
                shared,
                instances=args.writers,
                per_instance=args.writes_per_instance,
                dims=args.dims,
            )
            print(f"  writes with {args.writers} instances: {writes}", flush=True)
        quality = None if args.no_quality else retrieval_quality(workdir)
        if quality:
            for label, by_k in quality.items():
                print(f"  {label}: recall@5 {by_k[5]:.2f}, recall@10 {by_k[10]:.2f}")
    finally:
        if shared is not None:
            shared.close()
        if args.data_dir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    elapsed = time.perf_counter() - started
    write_results(args, results, elapsed, quality, writes)
    print(f"wrote {args.out} ({elapsed:.0f} s)")
    return 0 if all(r["meets_target"] for r in results) else 1


def write_results(
    args: argparse.Namespace,
    results: list[dict[str, Any]],
    elapsed: float,
    quality: dict[str, dict[int, float]] | None,
    writes: dict[str, Any] | None = None,
) -> None:
    lines = [
        "# Long-term store: recall latency",
        "",
        f"`python -m benchmarks.longterm` on {os.cpu_count()} CPU cores (shared with other jobs: "
        f"read ratios, not absolutes), {args.dims}-dim vectors, {args.queries} queries per "
        f"scenario, total run {elapsed:.0f} s. Recall = search + rank (query redaction, FTS5, "
        "Chroma, fusion, recency/importance, row mapping); query embedding excluded "
        "(precomputed vectors). Targets: p95 <= 5 ms embedded, <= 10 ms shared (Postgres "
        "catalog + `chroma run` server on this machine).",
        "",
        "| scenario | catalog | memories | ours p50 | ours p95 | ours, cache off p50 / p95 | plain Chroma `where user_id` p50 | p95 | p95 ratio (plain / ours) | target |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['name']}: {r['users']} users x {r['per_user']} | {r['catalog']} | "
            f"{r['memories']:,} | "
            f"{r['ours_p50']:.2f} ms | {r['ours_p95']:.2f} ms | "
            f"{r['uncached_p50']:.2f} / {r['uncached_p95']:.2f} ms | {r['theirs_p50']:.2f} ms | "
            f"{r['theirs_p95']:.2f} ms | {r['ratio_p95']:.1f}x | "
            f"{'met' if r['meets_target'] else 'MISSED'} (<= {r['target_ms']:.0f} ms) |"
        )
    lines += [
        "",
        "Layout chosen by the store: "
        + "; ".join(f"{r['name']}: {r['layout']}" for r in results)
        + ". Ingestion (precomputed vectors): "
        + "; ".join(
            f"{r['name']} ours {r['store_ingest_s']:.0f} s, baseline {r['baseline_ingest_s']:.0f} s"
            for r in results
        )
        + ".",
        "",
        "Baseline: one shared collection with a `user_id` metadata field, queried with "
        "`where={'user_id': ...}`, `n_results=5` (HNSW `ef_construction=32` to keep the run short).",
        "",
    ]
    if writes:
        lines += [
            f"Writes with {writes['instances']} app instances (processes) on the shared layout: "
            f"{writes['writes']} `put_memory` calls (embedding included, every 4th superseding "
            f"a shared key) in {writes['wall_s']:.1f} s = **{writes['writes_per_s']:.0f} "
            f"writes/s**, {writes['errors']} errors, {writes['duplicate_active_keys']} "
            "duplicate active keys.",
            "",
        ]
    if quality:
        lines += [
            "## Retrieval quality (tests/data/retrieval_*.tsv: 300 memories, 100 paraphrased "
            "queries, half Chinese)",
            "",
            "| ranker | recall@5 | recall@10 |",
            "|---|---|---|",
            *(f"| {label} | {by_k[5]:.2f} | {by_k[10]:.2f} |" for label, by_k in quality.items()),
            "",
        ]
    args.out.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
