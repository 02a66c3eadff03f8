"""The docstring examples of the offline rules run: they are the rules' shortest spec."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "langgraph_memory.nodes.rules",
    "langgraph_memory.nodes.rules._commitments",
    "langgraph_memory.nodes.rules._evidence",
    "langgraph_memory.nodes.rules._forget",
    "langgraph_memory.nodes.rules._profile",
    "langgraph_memory.nodes.rules._replies",
    "langgraph_memory.nodes.rules._retire",
    "langgraph_memory.nodes.rules._text",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
