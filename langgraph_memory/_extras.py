"""Which optional extra brings which layer, checked before the layer's first import.

The core install is the checkpointer. Code that needs an extra either calls
``require_extra`` before importing it, or wraps its module-level imports in
``try``/``except ModuleNotFoundError`` and calls ``raise_missing_extra``, so a
missing extra is one ``MissingExtraError`` naming the pip command rather than a
``ModuleNotFoundError`` several imports deep. ``require_extra`` only looks the
modules up (``find_spec``): ``langgraph_memory.longterm`` still defers importing
chromadb (~1 s) until a store is opened.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import NoReturn

from langgraph_memory.errors import MissingExtraError

# extra (pyproject.toml) -> the top-level modules our code imports from it
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "postgres": ("psycopg", "psycopg_pool"),
    "longterm": ("numpy", "chromadb"),
    "openai": ("langchain_openai",),
    "agents": ("langchain",),
    "encryption": ("cryptography",),
}


def is_installed(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # a finder refused it: as good as missing
        return False
    except ValueError:  # already in sys.modules without a __spec__ (a stub): present
        return True


def require_extra(extra: str, *, feature: str, modules: Sequence[str] | None = None) -> None:
    """Raise ``MissingExtraError`` if a module of ``extra`` (or just ``modules``) is missing.

    Example:
        >>> require_extra("postgres", feature="PostgresSaver", modules=["sqlite3"])  # present
        >>> require_extra("longterm", feature="ChromaMemoryStore", modules=["no_such_mod"])
        Traceback (most recent call last):
        ...
        langgraph_memory.errors.MissingExtraError: ChromaMemoryStore needs the 'longterm' extra (no_such_mod is not installed); install it with: pip install 'langgraph-memory[longterm]'
    """
    for module in EXTRA_MODULES[extra] if modules is None else modules:
        if not is_installed(module):
            raise MissingExtraError(feature, extra, module)


def raise_missing_extra(extra: str, feature: str, exc: ModuleNotFoundError) -> NoReturn:
    """In ``except ModuleNotFoundError``: the typed error if ``exc`` is one of ``extra``'s
    modules, else ``exc`` unchanged (a broken install of something else stays visible)."""
    module = (exc.name or "").partition(".")[0]
    if module in EXTRA_MODULES[extra]:
        raise MissingExtraError(feature, extra, module) from exc
    raise exc
