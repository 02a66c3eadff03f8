"""The top-level package exports exactly what it documents, lazily."""

from __future__ import annotations

import subprocess
import sys

import pytest

import langgraph_memory


@pytest.mark.parametrize("name", langgraph_memory.__all__)
def test_every_exported_name_resolves(name: str) -> None:
    assert getattr(langgraph_memory, name) is not None


def test_unknown_name_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        langgraph_memory.no_such_name  # noqa: B018


def test_checkpointer_import_does_not_load_the_vector_store() -> None:
    # A checkpointer-only user must not pay for importing the long-term layer.
    code = (
        "import sys; from langgraph_memory import SqliteSaver; "
        "print('langgraph_memory.longterm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
