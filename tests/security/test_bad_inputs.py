"""Every bad input to a saver fails with a typed error that names the value.

The issue's examples one by one on the four savers, the Postgres retry policy
(a permanent error is never retried; no call on one takes 1 s), and a
hypothesis corpus of bad calls asserting 0 untyped errors. ``LGM_SOAK=1`` runs
the corpus 20x longer.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import string
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.base import empty_checkpoint

from langgraph_memory.errors import (
    CheckpointStorageError,
    ConfigurationError,
    InputTooLargeError,
    InvalidCheckpointError,
    InvalidFilterError,
    LangGraphMemoryError,
)
from langgraph_memory.session import _encoding, _inputs
from langgraph_memory.session._pg_connections import is_retryable
from tests.integration._savers import Harness, SaverFactory, factory_params, harness_for

SOAK = os.environ.get("LGM_SOAK", "") in ("1", "true", "yes")
CFG: Any = {"configurable": {"thread_id": "t-bad", "checkpoint_ns": ""}}


@pytest.fixture(params=factory_params())
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Harness:
    factory: SaverFactory = request.param
    return harness_for(request, factory, tmp_path)


async def test_the_issues_examples_are_typed_and_name_the_value(harness: Harness) -> None:
    async with harness.open() as saver:
        saved = await harness.call(saver, "put", CFG, empty_checkpoint(), {"step": 1}, {})
        cases: list[tuple[str, tuple[Any, ...], dict[str, Any], type[Exception], str]] = [
            (
                "put",
                (CFG, empty_checkpoint(), None, {}),
                {},
                InvalidCheckpointError,
                "metadata=null",
            ),
            ("put", (CFG, None, {}, {}), {}, InvalidCheckpointError, "checkpoint=null"),
            (
                "put",
                (CFG, empty_checkpoint(), {}, ["a"]),
                {},
                InvalidCheckpointError,
                "new_versions",
            ),
            (
                "put",
                ({"configurable": {"thread_id": "a\ud800b"}}, empty_checkpoint(), {}, {}),
                {},
                ConfigurationError,
                "lone surrogate",
            ),
            (
                "put",
                (CFG, empty_checkpoint(), {"note": "x\ud800"}, {}),
                {},
                InvalidCheckpointError,
                "lone surrogate",
            ),
            (
                "put",
                ({"configurable": {"thread_id": "n\x00ul"}}, empty_checkpoint(), {}, {}),
                {},
                ConfigurationError,
                "NUL",
            ),
            ("put_writes", (saved, None, "task"), {}, InvalidCheckpointError, "writes=null"),
            ("put_writes", (saved, [("a",)], "task"), {}, InvalidCheckpointError, "writes[0]"),
            ("put_writes", (saved, [("a", 1)], None), {}, InvalidCheckpointError, "task_id=None"),
            ("put_writes", (saved, [("a", object())], "t"), {}, InvalidCheckpointError, "'a'"),
            (
                "get_tuple",
                ({"configurable": {"thread_id": "\udfff"}},),
                {},
                ConfigurationError,
                "thread_id",
            ),
            ("delete_thread", ("\ud800",), {}, ConfigurationError, "thread_id"),
        ]
        for method, args, kwargs, error, named in cases:
            with pytest.raises(error) as info:
                await harness.call(saver, method, *args, **kwargs)
            assert named in str(info.value), (method, str(info.value))
        list_cases: list[tuple[dict[str, Any], type[Exception], str]] = [
            ({"before": "x"}, ConfigurationError, 'before="x"'),
            ({"limit": -1}, ConfigurationError, "limit=-1"),
            ({"filter": {"step": 10**40}}, InvalidFilterError, str(10**40)),
            ({"filter": {"step": float("nan")}}, InvalidFilterError, "finite"),
            ({"filter": {"note": "\ud800"}}, InvalidFilterError, "surrogate"),
        ]
        for kwargs, error, named in list_cases:
            with pytest.raises(error) as info:
                await harness.list(saver, CFG, **kwargs)
            assert named in str(info.value)
        # Nothing was stored by the refused calls.
        assert len(await harness.list(saver, None)) == 1


@pytest.mark.postgres
def test_postgres_fails_a_3000_character_thread_id_fast_and_by_name(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langgraph_memory.session import PostgresSaver

    rng = random.Random(18)
    long_id = "".join(rng.choice(string.ascii_letters) for _ in range(3000))
    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        saver.setup()
        started = time.monotonic()
        with pytest.raises(InputTooLargeError) as info:
            saver.put({"configurable": {"thread_id": long_id}}, empty_checkpoint(), {}, {})
        assert time.monotonic() - started < 1.0
        assert long_id[:40] in str(info.value) and "512 bytes" in str(info.value)
        # Without our limit, Postgres itself refuses the index row (54000): a
        # permanent error, not retried, and the next call is not stalled.
        monkeypatch.setattr(_inputs, "MAX_THREAD_ID_BYTES", 10**6)
        monkeypatch.setattr(_encoding, "MAX_THREAD_ID_BYTES", 10**6)
        started = time.monotonic()
        with pytest.raises(CheckpointStorageError) as storage:
            saver.put({"configurable": {"thread_id": long_id}}, empty_checkpoint(), {}, {})
        assert time.monotonic() - started < 1.0
        assert "1 attempt" in str(storage.value)
        started = time.monotonic()
        saver.put(CFG, empty_checkpoint(), {}, {})
        assert saver.get_tuple(CFG) is not None
        assert time.monotonic() - started < 1.0


def test_permanent_postgres_errors_are_not_retried() -> None:
    assert not is_retryable(
        psycopg.errors.ProgramLimitExceeded("index row too big"), idempotent=True
    )
    assert not is_retryable(psycopg.errors.UndefinedTable("no table"), idempotent=True)
    assert not is_retryable(psycopg.errors.DataError("bad"), idempotent=True)
    assert is_retryable(psycopg.errors.SerializationFailure("retry"), idempotent=False)
    assert is_retryable(psycopg.errors.AdminShutdown("restart"), idempotent=True)
    assert is_retryable(psycopg.OperationalError("server closed the connection"), idempotent=True)
    assert not is_retryable(psycopg.OperationalError("lost after commit"), idempotent=False)


# ------------------------------------------------------------------ the corpus

_odd_text = st.lists(
    st.one_of(
        st.sampled_from(["a", "Z", "\ud800", "\udfff", "\x00", "é", "😀", " ", "'", ";"]),
        st.integers(500, 700).map(lambda n: "x" * n),
    ),
    max_size=6,
).map("".join)
_ids = st.one_of(
    st.text(max_size=20),
    _odd_text,
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.binary(max_size=8),
    st.just([]),
    st.just({}),
    st.integers(2900, 3100).map(lambda n: "y" * n),
)
_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(),
        _odd_text,
        st.binary(max_size=8),
        st.builds(object),
        st.just({1, 2}),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(_odd_text, st.integers()), inner, max_size=3),
    ),
    max_leaves=6,
)
_configs = st.one_of(
    st.none(),
    _odd_text,
    st.integers(),
    st.just({}),
    st.just({"configurable": None}),
    st.builds(
        lambda t, ns, cid, user: {
            "configurable": {
                k: v
                for k, v in (
                    ("thread_id", t),
                    ("checkpoint_ns", ns),
                    ("checkpoint_id", cid),
                    ("user_id", user),
                )
                if v is not _MISSING
            }
        },
        _ids,
        st.one_of(_ids, st.just(_MISSING := object())),
        st.one_of(_ids, st.just(_MISSING)),
        st.one_of(_ids, st.just(_MISSING)),
    ),
)
_checkpoints = st.one_of(
    st.none(),
    _odd_text,
    st.integers(),
    st.lists(_values, max_size=2),
    st.builds(
        lambda cid, values, versions: {
            **empty_checkpoint(),
            "id": cid,
            "channel_values": values,
            "channel_versions": versions,
        },
        st.one_of(st.just("1ef"), _ids),
        st.one_of(st.dictionaries(_odd_text, _values, max_size=3), _values),
        st.one_of(st.dictionaries(_odd_text, _values, max_size=3), _values),
    ),
)
_calls = st.one_of(
    st.tuples(st.just("put"), st.tuples(_configs, _checkpoints, _values, _values)),
    st.tuples(st.just("put_writes"), st.tuples(_configs, _values, _ids, _ids)),
    st.tuples(st.just("get_tuple"), st.tuples(_configs)),
    st.tuples(st.just("list"), st.tuples(_configs, _values, _values, _values)),
    st.tuples(st.just("delete_thread"), st.tuples(_ids)),
    st.tuples(st.just("threads_of_user"), st.tuples(_ids)),
)


@contextlib.contextmanager
def _opened(factory: SaverFactory, location: str) -> Iterator[tuple[Any, Any]]:
    """The saver and a runner that makes one call in the factory's mode."""
    if factory.mode == "sync":
        with factory.open_sync(location) as saver:
            yield saver, lambda method, args: _sync_call(saver, method, args)
        return
    loop = asyncio.new_event_loop()
    manager = factory.open_async(location)
    saver = loop.run_until_complete(manager.__aenter__())
    try:
        yield saver, lambda method, args: loop.run_until_complete(_async_call(saver, method, args))
    finally:
        loop.run_until_complete(manager.__aexit__(None, None, None))
        loop.close()


def _sync_call(saver: Any, method: str, args: tuple[Any, ...]) -> Any:
    if method == "list":
        config, filter_, before, limit = args
        return list(saver.list(config, filter=filter_, before=before, limit=limit))
    return getattr(saver, method)(*args)


async def _async_call(saver: Any, method: str, args: tuple[Any, ...]) -> Any:
    if method == "list":
        config, filter_, before, limit = args
        return [t async for t in saver.alist(config, filter=filter_, before=before, limit=limit)]
    return await getattr(saver, "a" + method)(*args)


@pytest.mark.parametrize("factory", factory_params())
def test_bad_input_corpus_raises_only_typed_errors(
    request: pytest.FixtureRequest, factory: SaverFactory, tmp_path: Path
) -> None:
    location = harness_for(request, factory, tmp_path).location
    untyped: list[str] = []
    typed = 0
    with _opened(factory, location) as (_saver, call):
        saved = call("put", (CFG, empty_checkpoint(), {"step": 1}, {}))

        @settings(
            max_examples=4000 if SOAK else 200,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(_calls, st.booleans())
        def one_call(spec: tuple[str, tuple[Any, ...]], on_saved: bool) -> None:
            nonlocal typed
            method, args = spec
            if method == "put_writes" and on_saved:
                args = (saved, *args[1:])
            started = time.monotonic()
            try:
                call(method, args)
            except LangGraphMemoryError as exc:
                typed += 1
                assert len(str(exc)) > 20
            except Exception as exc:  # the property under test: none of these
                untyped.append(f"{method}{args!r:.300}: {type(exc).__name__}: {exc}")
            assert time.monotonic() - started < 5.0

        one_call()
        # The saver still works after the corpus.
        assert call("get_tuple", (CFG,)) is not None
    assert untyped == [], "\n".join(untyped[:20])
    assert typed > 50  # the corpus really is mostly bad input
