"""The docstring examples of the exam's modules run (offline)."""

from __future__ import annotations

import pytest

from tests._doctest_run import assert_examples_run

MODULES = [
    "langgraph_memory.eval",
    "langgraph_memory.eval.schema",
    "langgraph_memory.eval.grading",
    "langgraph_memory.eval.runner",
    "langgraph_memory.eval.metrics",
    "langgraph_memory.eval.privacy_scan",
    "langgraph_memory.eval.loaders",
    "langgraph_memory.eval.systems",
    "langgraph_memory.prompts.eval",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    assert_examples_run(name)
