"""Every bad input to the long-term store fails with a typed error, and changes nothing.

The issue's examples one by one (``get_memory(u, ["x"])``, ``MemoryRecord(importance=
"high")``, empty and 5 MB texts, bad namespaces and filters), then a hypothesis corpus
of bad calls against a real embedded store (SQLite catalog + Chroma) asserting 0
untyped errors and that the stored data is byte-for-byte the same afterwards.
``LGM_SOAK=1`` runs it 6x longer, plus a 5,000-call soak.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import GetOp, PutOp

from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.errors import (
    ConfigurationError,
    InputTooLargeError,
    InvalidFilterError,
    InvalidMemoryError,
    InvalidNamespaceError,
    InvalidUserIdError,
    LangGraphMemoryError,
    MemoryNotFoundError,
    MissingUserIdError,
)
from langgraph_memory.limits import MAX_MEMORY_TEXT_CHARS
from langgraph_memory.longterm import ChromaMemoryStore
from langgraph_memory.types import MemoryRecord

SOAK = os.environ.get("LGM_SOAK", "") in ("1", "true", "yes")
USER = "alice"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaMemoryStore]:
    root = tmp_path_factory.mktemp("bad-store")
    s = ChromaMemoryStore.embedded(root, embeddings=HashingEmbeddings(dimensions=32))
    s.put_memory(MemoryRecord("User is vegetarian", user_id=USER, key="diet", id="m-diet"))
    s.put_memory(MemoryRecord("User lives in Lisbon", user_id=USER, id="m-city"))
    s.put(("memories", USER, "notes"), "n1", {"content": "likes tea", "n": 3})
    s.put(("docs", "faq"), "q1", {"content": "shared doc"})
    yield s
    s.close()


def snapshot(store: ChromaMemoryStore) -> list[tuple[Any, ...]]:
    """Every catalog row (items, partitions): what a refused call must leave alone."""
    items = store.catalog.query(
        "SELECT partition, namespace, key, value, has_vector FROM lt_items ORDER BY rowid"
    )
    parts = store.catalog.query(
        "SELECT partition, collection, dedicated, vector_count FROM lt_partitions"
    )
    return [*items, *parts]


TOO_BIG = "x" * 5_000_000

EXAMPLES: list[tuple[str, Callable[[ChromaMemoryStore], Any], type[Exception], str]] = [
    ("get_memory list id", lambda s: s.get_memory(USER, ["x"]), InvalidMemoryError, "['x']"),
    ("get_memory None id", lambda s: s.get_memory(USER, None), InvalidMemoryError, "None"),
    ("get_memory empty id", lambda s: s.get_memory(USER, ""), InvalidMemoryError, "''"),
    ("get_memory long id", lambda s: s.get_memory(USER, "i" * 300), InputTooLargeError, "256"),
    ("delete_memory list", lambda s: s.delete_memory(USER, ["m-diet"]), InvalidMemoryError, "list"),
    ("delete unknown", lambda s: s.delete_memory(USER, "nope"), MemoryNotFoundError, "'nope'"),
    ("touch a string", lambda s: s.touch(USER, "m-diet"), InvalidMemoryError, "'m-diet'"),
    ("touch ints", lambda s: s.touch(USER, [1]), InvalidMemoryError, "memory_id=1"),
    (
        "supersede list id",
        lambda s: s.supersede(USER, ["m-city"], MemoryRecord("User lives in Porto")),
        InvalidMemoryError,
        "['m-city']",
    ),
    (
        "record importance",
        lambda s: MemoryRecord("x", importance="high"),
        InvalidMemoryError,
        "'high'",
    ),
    ("record empty text", lambda s: MemoryRecord(""), InvalidMemoryError, "text=''"),
    (
        "record 5 MB text",
        lambda s: MemoryRecord(TOO_BIG),
        InputTooLargeError,
        f"{MAX_MEMORY_TEXT_CHARS} characters",
    ),
    ("no user", lambda s: s.get_memory("", "m-diet"), MissingUserIdError, "user"),
    ("crafted user", lambda s: s.list_memories("a/../b"), InvalidUserIdError, "a/../b"),
    ("namespace ()", lambda s: s.search(()), InvalidNamespaceError, "()"),
    (
        "namespace dot",
        lambda s: s.put(("memories", "a.b"), "k", {"x": 1}),
        InvalidNamespaceError,
        "a.b",
    ),
    ("namespace int", lambda s: s.get(("memories", 7), "k"), InvalidNamespaceError, "7"),
    (
        "namespace surrogate",
        lambda s: s.get(("memories", USER, "x\ud800"), "k"),
        InvalidNamespaceError,
        "surrogate",
    ),
    ("namespace a string", lambda s: s.search("memories"), InvalidNamespaceError, "'memories'"),
    ("every user", lambda s: s.search(("memories",)), InvalidNamespaceError, "every user"),
    (
        "list every user",
        lambda s: s.list_namespaces(prefix=("memories",)),
        InvalidNamespaceError,
        "every user",
    ),
    (
        "reserved root",
        lambda s: s.put(("langgraph", "x"), "k", {"a": 1}),
        InvalidNamespaceError,
        "reserved",
    ),
    # BaseStore.get/delete turn any key into str() (LangGraph's contract); a raw op does not.
    (
        "key list",
        lambda s: s.batch([GetOp(("memories", USER), ["k"])]),
        ConfigurationError,
        "['k']",
    ),
    ("key empty", lambda s: s.put(("memories", USER), "", {"a": 1}), ConfigurationError, "key=''"),
    (
        "key huge",
        lambda s: s.put(("memories", USER), "k" * 2000, {"a": 1}),
        InputTooLargeError,
        "1024",
    ),
    (
        "delete key None",
        lambda s: s.batch([PutOp(("memories", USER), None, None)]),
        ConfigurationError,
        "None",
    ),
    ("value a list", lambda s: s.put(("memories", USER), "k", ["a"]), ConfigurationError, "['a']"),
    (
        "filter operator",
        lambda s: s.search(("memories", USER), filter={"n": {"$regex": "."}}),
        InvalidFilterError,
        "$regex",
    ),
    (
        "filter $or",
        lambda s: s.search(("memories", USER), filter={"$or": [{"n": 1}]}),
        InvalidFilterError,
        "$or",
    ),
    (
        "filter key int",
        lambda s: s.search(("memories", USER), filter={1: 2}),
        InvalidFilterError,
        "1",
    ),
    (
        "record text huge via put",
        lambda s: s.put_memory(MemoryRecord("ok", user_id=USER).evolve(text=TOO_BIG)),
        InputTooLargeError,
        "characters",
    ),
]


@pytest.mark.parametrize(("name", "call", "error", "named"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_bad_calls_are_typed_name_the_value_and_change_nothing(
    store: ChromaMemoryStore,
    name: str,
    call: Callable[[ChromaMemoryStore], Any],
    error: type[Exception],
    named: str,
) -> None:
    before = snapshot(store)
    with pytest.raises(error) as info:
        call(store)
    assert isinstance(info.value, LangGraphMemoryError), (name, type(info.value))
    assert named in str(info.value), (name, str(info.value))
    assert snapshot(store) == before


# ------------------------------------------------------------------ the corpus

_odd_text = st.lists(
    st.one_of(
        st.sampled_from(["a", "Z", "\ud800", "\x00", ".", "*", "é", "😀", " ", "'", ";", "$", "/"]),
        st.integers(250, 300).map(lambda n: "u" * n),
    ),
    max_size=5,
).map("".join)
_junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    _odd_text,
    st.binary(max_size=6),
    st.just([]),
    st.just({}),
    st.lists(st.text(max_size=3), max_size=2),
    st.builds(object),
)
_namespaces = st.one_of(
    st.tuples(),
    st.tuples(st.just("memories")),
    st.tuples(st.just("memories"), _junk),
    st.tuples(st.just("memories"), st.just(USER), _junk),
    st.tuples(_junk, _junk),
    st.just(("langgraph", "x")),
    _junk,
)
_filters = st.one_of(
    _junk,
    st.dictionaries(st.one_of(_odd_text, st.integers()), _junk, max_size=2),
    st.dictionaries(
        st.sampled_from(["n", "content", "a.b", "$or"]),
        st.dictionaries(
            st.sampled_from(["$eq", "$in", "$gt", "$regex", "$where", "$nin"]), _junk, max_size=2
        ),
        max_size=2,
    ),
)
_calls = st.one_of(
    st.tuples(st.just("get_memory"), st.tuples(st.one_of(st.just(USER), _junk), _junk)),
    st.tuples(st.just("delete_memory"), st.tuples(st.one_of(st.just(USER), _junk), _junk)),
    st.tuples(st.just("touch"), st.tuples(st.just(USER), _junk)),
    st.tuples(st.just("list_memories"), st.tuples(_junk)),
    st.tuples(st.just("search_memories"), st.tuples(st.one_of(st.just(USER), _junk), _junk)),
    st.tuples(st.just("get"), st.tuples(_namespaces, _junk)),
    st.tuples(st.just("put"), st.tuples(_namespaces, _junk, _junk)),
    st.tuples(st.just("delete"), st.tuples(_namespaces, _junk)),
    st.tuples(st.just("search"), st.tuples(_namespaces)),
    st.tuples(st.just("search_filter"), st.tuples(_filters)),
    st.tuples(st.just("list_namespaces"), st.tuples(_namespaces)),
    st.tuples(st.just("record"), st.tuples(_junk, _junk)),
)


def _apply(store: ChromaMemoryStore, method: str, args: tuple[Any, ...]) -> None:
    if method == "search_filter":
        store.search(("memories", USER), filter=args[0])
    elif method == "list_namespaces":
        store.list_namespaces(prefix=args[0])
    elif method == "record":
        store.put_memory(MemoryRecord(args[0], importance=args[1], user_id=USER))
    elif method == "put" and isinstance(args[2], dict) and not args[2]:
        store.put(args[0], args[1], {"content": args[2]})
    else:
        getattr(store, method)(*args)


def _bad_call_is_typed(store: ChromaMemoryStore, call: tuple[str, tuple[Any, ...]]) -> None:
    method, args = call
    before = snapshot(store)
    try:
        _apply(store, method, args)
    except (LangGraphMemoryError, MemoryNotFoundError):
        assert snapshot(store) == before, (method, args)  # a refused call changes nothing
        return
    except Exception as exc:  # the defect this corpus hunts
        raise AssertionError(
            f"untyped {type(exc).__name__} from {method}{args!r:.200}: {exc}"
        ) from exc
    # Accepted: it was a valid call after all. Restore what a write changed.
    if snapshot(store) != before and method in ("put", "record", "delete", "delete_memory"):
        _restore(store)


def _restore(store: ChromaMemoryStore) -> None:
    keep = {("memories", USER), ("memories", USER, "notes"), ("docs", "faq")}
    for user_ns in list(store.list_namespaces()) + list(
        store.list_namespaces(prefix=("memories", USER))
    ):
        for item in store.search(user_ns, limit=100):
            if tuple(item.namespace) not in keep or item.key not in (
                "m-diet",
                "m-city",
                "n1",
                "q1",
            ):
                store.delete(tuple(item.namespace), item.key)
    for record in store.list_memories(USER, include_history=True):
        if record.id not in ("m-diet", "m-city"):
            store.delete_memory(USER, record.id)


@settings(
    max_examples=1200 if SOAK else 200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
@given(call=_calls)
def test_corpus_of_bad_store_calls_gives_only_typed_errors(
    store: ChromaMemoryStore, call: tuple[str, tuple[Any, ...]]
) -> None:
    _bad_call_is_typed(store, call)


@pytest.mark.slow
@pytest.mark.skipif(not SOAK, reason="the soak corpus runs with LGM_SOAK=1")
@settings(
    max_examples=5000,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
@given(call=_calls)
def test_corpus_of_bad_store_calls_soak(
    store: ChromaMemoryStore, call: tuple[str, tuple[Any, ...]]
) -> None:
    _bad_call_is_typed(store, call)


def test_the_seeded_data_survived_the_corpus(store: ChromaMemoryStore) -> None:
    assert {m.id for m in store.list_memories(USER)} == {"m-diet", "m-city"}
    assert store.get(("memories", USER, "notes"), "n1").value == {"content": "likes tea", "n": 3}
    assert store.search_memories(USER, "vegetarian")[0].record.id == "m-diet"
