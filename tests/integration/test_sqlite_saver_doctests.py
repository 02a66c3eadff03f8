"""The docstring examples of the session savers run (offline, on :memory:)."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

from langgraph_memory.session import aio, sqlite


@pytest.mark.parametrize("module", [sqlite, aio], ids=lambda m: m.__name__)
def test_docstring_examples_run(module: ModuleType) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
