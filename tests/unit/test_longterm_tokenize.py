"""Unit tests of keyword-index tokenisation (Chinese + English) against real FTS5."""

from __future__ import annotations

import sqlite3

import pytest

from langgraph_memory.longterm.tokenize import (
    index_text,
    index_tokens,
    match_expression,
    query_tokens,
    stem,
)


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("allergies", "allerg"),
        ("allergic", "allerg"),
        ("allergy", "allerg"),
        ("flights", "flight"),
        ("booking", "book"),
        ("booked", "book"),
        ("cat", "cat"),
        ("tea", "tea"),
        ("2026", "2026"),
    ],
)
def test_light_stemmer(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_english_tokens_lowercased_stemmed_stopwords_dropped() -> None:
    assert index_tokens("The User IS allergic to Seafood!") == ["user", "allerg", "seafood"]


def test_chinese_unigrams_and_bigrams() -> None:
    assert index_tokens("海鲜过敏") == ["海", "鲜", "过", "敏", "海鲜", "鲜过", "过敏"]


def test_chinese_stop_characters_dropped_as_unigrams_kept_in_bigrams() -> None:
    tokens = index_tokens("我的预算")
    assert "我" not in tokens and "的" not in tokens
    assert "我的" in tokens and "预算" in tokens


def test_mixed_script_text() -> None:
    tokens = index_tokens("用户喜欢Python编程 v3")
    assert "python" in tokens and "喜欢" in tokens and "编程" in tokens and "v3" in tokens


def test_query_tokens_are_distinct_and_match_expression_quotes_everything() -> None:
    assert query_tokens("tea tea TEA") == ["tea"]
    assert match_expression(['a"b']) is not None
    assert match_expression([]) is None
    assert match_expression(["tea", "海鲜"]) == '"tea" OR "海鲜"'


@pytest.mark.parametrize(
    "hostile",
    ["NEAR(a b)", "body: x", '"unbalanced', "a* OR b", "x AND NOT y", "^start", "col : {a b}"],
)
def test_hostile_query_text_never_breaks_fts5(hostile: str) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE f USING fts5(body, tokenize='unicode61 remove_diacritics 0')"
    )
    conn.execute("INSERT INTO f (body) VALUES (?)", (index_text("near start body a b x y"),))
    expression = match_expression(query_tokens(hostile))
    if expression is not None:
        conn.execute("SELECT rowid FROM f WHERE f MATCH ?", (expression,)).fetchall()


def test_paraphrases_meet_in_real_fts5() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE f USING fts5(body, tokenize='unicode61 remove_diacritics 0')"
    )
    docs = ["用户对海鲜过敏", "User is allergic to peanuts", "预算是五千元", "Likes hiking"]
    for doc in docs:
        conn.execute("INSERT INTO f (body) VALUES (?)", (index_text(doc),))

    def top(query: str) -> str:
        expression = match_expression(query_tokens(query))
        assert expression is not None
        rowid = conn.execute(
            "SELECT rowid FROM f WHERE f MATCH ? ORDER BY bm25(f) LIMIT 1", (expression,)
        ).fetchone()[0]
        return docs[rowid - 1]

    assert top("我海鲜过敏吗") == "用户对海鲜过敏"
    assert top("peanut allergy") == "User is allergic to peanuts"
    assert top("我的预算多少") == "预算是五千元"
    assert top("hikes") == "Likes hiking"
