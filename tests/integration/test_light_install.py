"""The checkpointer-only install: the savers work without any extra, the other layers say which.

A subprocess hides the extras' modules (chromadb, numpy, psycopg, langchain_openai...)
behind a ``sys.meta_path`` finder that raises ``ModuleNotFoundError`` for them, as
on a machine where only ``pip install langgraph-memory`` ran, and logs every attempt.
The savers then run real graphs on real SQLite files; every other layer must raise
``MissingExtraError`` naming its extra and the pip command. ``benchmarks/install_size.py``
measures the same split in real fresh venvs (not in CI: it downloads).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from langgraph_memory._extras import EXTRA_MODULES, is_installed, require_extra
from langgraph_memory.errors import LangGraphMemoryError, MissingExtraError

ROOT = Path(__file__).resolve().parents[2]

# Everything the core install lacks that our code imports (the extras' top-level modules).
HIDDEN = sorted({m for modules in EXTRA_MODULES.values() for m in modules} | {"psycopg_binary"})

_BLOCKER = """
import importlib.abc, json, sys
HIDDEN = set(json.loads(sys.argv[1]))
ATTEMPTS = []

class HideExtras(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            ATTEMPTS.append(name)
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, HideExtras())
"""


def run_without_extras(body: str, tmp_path: Path) -> dict[str, object]:
    """Run ``body`` with the extras hidden; it fills ``OUT`` (a dict), printed as JSON."""
    code = _BLOCKER + "OUT = {}\n" + textwrap.dedent(body) + "\nprint(json.dumps(OUT))\n"
    proc = subprocess.run(
        [sys.executable, "-c", code, json.dumps(HIDDEN), str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_savers_run_real_graphs_without_any_extra(tmp_path: Path) -> None:
    out = run_without_extras(
        """
        import asyncio, os
        from langchain_core.messages import AIMessage, HumanMessage
        from langgraph.graph import END, START, MessagesState, StateGraph
        from langgraph_memory import AsyncSqliteSaver, RetentionPolicy, SqliteSaver
        from langgraph_memory import create_compress_node  # the nodes need no extra either

        builder = StateGraph(MessagesState)
        builder.add_node("agent", lambda s: {"messages": [AIMessage(f"reply {len(s['messages'])}")]})
        builder.add_edge(START, "agent")
        builder.add_edge("agent", END)
        cfg = {"configurable": {"thread_id": "t1"}}
        path = os.path.join(sys.argv[2], "sync.sqlite")
        with SqliteSaver.from_conn_string(path, retention=RetentionPolicy(keep_last=3)) as saver:
            graph = builder.compile(checkpointer=saver)
            for text in ("hi", "again"):
                graph.invoke({"messages": [HumanMessage(text)]}, cfg)
        with SqliteSaver.from_conn_string(path) as saver:  # reopened: the history is on disk
            graph = builder.compile(checkpointer=saver)
            OUT["sync"] = [m.content for m in graph.get_state(cfg).values["messages"]]

        async def main():
            apath = os.path.join(sys.argv[2], "async.sqlite")
            async with AsyncSqliteSaver.from_conn_string(apath) as saver:
                graph = builder.compile(checkpointer=saver)
                await graph.ainvoke({"messages": [HumanMessage("hi")]}, cfg)
                state = await graph.aget_state(cfg)
                return [m.content for m in state.values["messages"]]

        OUT["async"] = asyncio.run(main())
        OUT["compress"] = type(create_compress_node(model=None, max_tokens=500)).__name__
        OUT["attempts"] = ATTEMPTS
        OUT["loaded"] = sorted(m for m in sys.modules if m.partition(".")[0] in HIDDEN)
        """,
        tmp_path,
    )
    assert out["sync"] == ["hi", "reply 1", "again", "reply 3"]
    assert out["async"] == ["hi", "reply 1"]
    assert out["compress"] == "RunnableLambda"
    # Not merely "failed to import": never even looked up.
    assert out["attempts"] == [], out["attempts"]
    assert out["loaded"] == []


LAYERS = [
    ("from langgraph_memory import ChromaMemoryStore", "longterm", "numpy"),
    ("from langgraph_memory.longterm import ChromaMemoryStore", "longterm", "numpy"),
    ("from langgraph_memory import HashingEmbeddings", "longterm", "numpy"),
    ("import langgraph_memory.eval", "longterm", "numpy"),
    ("from langgraph_memory import PostgresSaver", "postgres", "psycopg"),
    ("from langgraph_memory import AsyncPostgresSaver", "postgres", "psycopg"),
    ("from langgraph_memory.session.postgres import PostgresSaver", "postgres", "psycopg"),
    (
        "from langgraph_memory import PostgresMemoryQueue; "
        "PostgresMemoryQueue('postgresql://u@127.0.0.1:5432/db')",
        "postgres",
        "psycopg",
    ),
    ("from langgraph_memory import MemoryMiddleware", "agents", "langchain"),
    (
        "from langgraph_memory.encryption import EncryptionKeys; EncryptionKeys.generate('k1')",
        "encryption",
        "cryptography",
    ),
]


@pytest.fixture(scope="module")
def layer_errors(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """What each statement of ``LAYERS`` raised, all in one subprocess (one interpreter start)."""
    return run_without_extras(
        f"""
        from langgraph_memory.errors import MissingExtraError
        for statement in {[statement for statement, _, _ in LAYERS]!r}:
            try:
                exec(statement)
                OUT[statement] = "no error"
            except MissingExtraError as exc:
                OUT[statement] = dict(extra=exc.extra, name=exc.name, message=str(exc),
                                      is_import_error=isinstance(exc, ImportError))
            except BaseException as exc:
                OUT[statement] = f"{{type(exc).__name__}}: {{exc}}"
        """,
        tmp_path_factory.mktemp("layers"),
    )


@pytest.mark.parametrize(("statement", "extra", "module"), LAYERS)
def test_each_layer_without_its_extra_names_the_pip_command(
    layer_errors: dict[str, object], statement: str, extra: str, module: str
) -> None:
    out = layer_errors[statement]
    assert isinstance(out, dict), out
    assert out["extra"] == extra
    assert out["name"] == module
    assert out["is_import_error"] is True
    assert f"pip install 'langgraph-memory[{extra}]'" in str(out["message"])


def test_only_chromadb_missing_still_names_the_longterm_extra() -> None:
    # numpy is common on its own; the store must not then fail later, inside embedded().
    code = _BLOCKER + textwrap.dedent(
        """
        from langgraph_memory.errors import MissingExtraError
        try:
            from langgraph_memory import ChromaMemoryStore
        except MissingExtraError as exc:
            print(exc)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, json.dumps(["chromadb"])],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    assert "'longterm' extra (chromadb is not installed)" in proc.stdout
    assert "pip install 'langgraph-memory[longterm]'" in proc.stdout


def test_openai_model_without_the_openai_extra() -> None:
    # The example agents with OPENAI_API_KEY set, but langchain-openai missing.
    code = _BLOCKER.replace(
        "HIDDEN = set(json.loads(sys.argv[1]))", "HIDDEN = {'langchain_openai'}"
    )
    code += textwrap.dedent(
        """
        import io, os
        os.environ["OPENAI_API_KEY"] = "sk-test"
        from graphs._agent import clean_model_errors, online_model
        err = io.StringIO()
        try:
            with clean_model_errors(err):
                online_model()
        except SystemExit as exc:
            print(exc.code, err.getvalue().strip())
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("2 error: "), proc.stdout
    assert "pip install 'langgraph-memory[openai]'" in proc.stdout


def test_cli_reads_sqlite_and_refuses_postgres_without_the_extra(tmp_path: Path) -> None:
    out = run_without_extras(
        """
        import contextlib, io, os
        from langchain_core.messages import AIMessage
        from langgraph.graph import END, START, MessagesState, StateGraph
        from langgraph_memory import SqliteSaver
        from langgraph_memory.cli import main

        path = os.path.join(sys.argv[2], "app.sqlite")
        builder = StateGraph(MessagesState)
        builder.add_node("agent", lambda s: {"messages": [AIMessage("ok")]})
        builder.add_edge(START, "agent")
        builder.add_edge("agent", END)
        with SqliteSaver.from_conn_string(path) as saver:
            builder.compile(checkpointer=saver).invoke(
                {"messages": []}, {"configurable": {"thread_id": "chat-7"}})
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            OUT["sqlite_status"] = main(["threads", "--db", path, "--json"])
            OUT["pg_status"] = main(["threads", "--db", "postgresql://u@127.0.0.1:5432/db"])
        OUT["stdout"], OUT["stderr"] = stdout.getvalue(), stderr.getvalue()
        """,
        tmp_path,
    )
    assert out["sqlite_status"] == 0
    assert "chat-7" in str(out["stdout"])
    assert out["pg_status"] == 1
    assert "pip install 'langgraph-memory[postgres]'" in str(out["stderr"])


# ------------------------------------------------------------ the extras themselves


def _pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]  # type: ignore[no-any-return]


def test_core_dependencies_are_the_checkpointer_only() -> None:
    deps = " ".join(_pyproject()["dependencies"]).lower()  # type: ignore[arg-type]
    for heavy in ("chromadb", "langchain-openai", "psycopg", "numpy"):
        assert heavy not in deps, heavy


def test_every_extra_named_in_errors_exists_and_all_and_dev_include_them() -> None:
    extras: dict[str, list[str]] = _pyproject()["optional-dependencies"]  # type: ignore[assignment]
    assert set(EXTRA_MODULES) <= set(extras)
    assert extras["all"] == ["langgraph-memory[postgres,longterm,openai]"]
    assert "langgraph-memory[all]" in extras["dev"]
    # Each extra installs the distribution behind the modules the error names.
    distributions = {
        "psycopg": "psycopg",
        "psycopg_pool": "psycopg-pool",
        "numpy": "numpy",
        "chromadb": "chromadb",
        "langchain_openai": "langchain-openai",
        "langchain": "langchain",
        "cryptography": "cryptography",
    }
    for extra, modules in EXTRA_MODULES.items():
        listed = " ".join(extras[extra])
        for module in modules:
            assert distributions[module] in listed, (extra, module)


def test_with_the_extras_installed_nothing_is_missing() -> None:
    # The dev install (which includes `all`) must satisfy every check, or the suite tests less.
    for extra, modules in EXTRA_MODULES.items():
        assert all(is_installed(m) for m in modules), extra
        require_extra(extra, feature="test")


def test_missing_extra_error_shape() -> None:
    with pytest.raises(MissingExtraError) as info:
        require_extra("longterm", feature="ChromaMemoryStore", modules=["no_such_module_xyz"])
    exc = info.value
    assert isinstance(exc, LangGraphMemoryError) and isinstance(exc, ImportError)
    assert (exc.extra, exc.name, exc.feature) == (
        "longterm",
        "no_such_module_xyz",
        "ChromaMemoryStore",
    )
    assert str(exc) == (
        "ChromaMemoryStore needs the 'longterm' extra (no_such_module_xyz is not installed); "
        "install it with: pip install 'langgraph-memory[longterm]'"
    )


def test_raise_missing_extra_converts_only_the_extras_own_modules() -> None:
    from langgraph_memory._extras import raise_missing_extra

    with pytest.raises(MissingExtraError, match=r"pip install 'langgraph-memory\[postgres\]'"):
        try:
            raise ModuleNotFoundError("No module named 'psycopg.rows'", name="psycopg.rows")
        except ModuleNotFoundError as exc:
            raise_missing_extra("postgres", "PostgresSaver", exc)
    unrelated = ModuleNotFoundError("No module named 'typing_extensions'", name="typing_extensions")
    with pytest.raises(ModuleNotFoundError) as info:
        try:
            raise unrelated
        except ModuleNotFoundError as exc:
            raise_missing_extra("postgres", "PostgresSaver", exc)
    assert info.value is unrelated  # a broken dependency of something else stays visible


def test_extras_doctests() -> None:
    import doctest

    import langgraph_memory._extras as extras

    result = doctest.testmod(extras, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 2 and result.failed == 0


def test_star_import_on_the_core_install_binds_what_is_there(tmp_path: Path) -> None:
    """``from langgraph_memory import *`` works without the extras: it binds the savers
    and the typed API, and leaves out the names that need an extra (importing one
    by name still raises MissingExtraError)."""
    out = run_without_extras(
        """
        ns = {}
        exec("from langgraph_memory import *", ns)
        OUT["names"] = sorted(k for k in ns if not k.startswith("__"))
        try:
            from langgraph_memory import ChromaMemoryStore  # noqa: F401
        except Exception as exc:
            OUT["direct"] = type(exc).__name__
        """,
        tmp_path,
    )
    names = out["names"]
    assert isinstance(names, list)
    assert {"SqliteSaver", "AsyncSqliteSaver", "MemoryRecord", "redact"} <= set(names)
    assert not {"ChromaMemoryStore", "PostgresSaver", "HashingEmbeddings"} & set(names)
    assert out["direct"] == "MissingExtraError"
