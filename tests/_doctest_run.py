"""One way to run a module's docstring examples as a test (they are its shortest spec)."""

from __future__ import annotations

import doctest
import importlib


def assert_examples_run(module_name: str) -> None:
    """Every example in ``module_name``'s docstrings passes, and there is at least one."""
    result = doctest.testmod(importlib.import_module(module_name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{module_name} has no docstring examples"
    assert result.failed == 0
