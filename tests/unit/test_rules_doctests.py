"""The docstring examples of the offline rules run: they are the rules' shortest spec."""

from __future__ import annotations

import pytest

from tests._doctest_run import assert_examples_run

MODULES = [
    "langgraph_memory.nodes.rules",
    "langgraph_memory.nodes.rules._commitments",
    "langgraph_memory.nodes.rules._evidence",
    "langgraph_memory.nodes.rules._forget",
    "langgraph_memory.nodes.rules._profile",
    "langgraph_memory.nodes.rules._quantity",
    "langgraph_memory.nodes.rules._replies",
    "langgraph_memory.nodes.rules._retire",
    "langgraph_memory.nodes.rules._text",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    assert_examples_run(name)
