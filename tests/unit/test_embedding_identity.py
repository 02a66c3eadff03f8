"""Embedding identity: the pure record/compare/message parts, with real embedders."""

from __future__ import annotations

import numpy as np
import pytest
from langgraph.store.base.embed import ensure_embeddings

from langgraph_memory.embeddings import HashingEmbeddings
from langgraph_memory.errors import ConfigurationError, EmbeddingModelMismatchError
from langgraph_memory.longterm.embedding_identity import (
    PROBE_TEXTS,
    SAME_MODEL_AGREEMENT,
    EmbeddingIdentity,
    ReembedProgress,
    aprobe_identity,
    compare_identities,
    embedding_name,
    identity_from_vectors,
    mismatch_error,
    probe_agreement,
    probe_identity,
)


def unit_rows(seed: int, rows: int = len(PROBE_TEXTS), dims: int = 384) -> list[list[float]]:
    matrix = np.random.default_rng(seed).normal(size=(rows, dims))
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix.tolist()


def test_same_model_gives_the_same_identity_in_every_instance() -> None:
    a = probe_identity(HashingEmbeddings())
    b = probe_identity(HashingEmbeddings())
    assert a == b
    assert a.dimensions == 384 and len(a.probe) == len(PROBE_TEXTS)
    assert len(a.fingerprint) == 12 and int(a.fingerprint, 16) >= 0
    assert compare_identities(a, b).same_model


def test_same_dimension_different_seed_is_a_different_model() -> None:
    a = probe_identity(HashingEmbeddings(seed="one"))
    b = probe_identity(HashingEmbeddings(seed="two"))
    assert a.dimensions == b.dimensions
    verdict = compare_identities(a, b)
    assert not verdict.same_model
    assert verdict.agreement < 0.5
    assert a.fingerprint != b.fingerprint


def test_different_dimensions_never_match() -> None:
    a = probe_identity(HashingEmbeddings(dimensions=256))
    b = probe_identity(HashingEmbeddings(dimensions=384))
    assert probe_agreement(a, b) == 0.0
    assert not compare_identities(a, b).same_model
    assert "dimensions differ (256 vs 384)" in str(mismatch_error(a, b, "/s"))


def test_float_noise_is_the_same_model_and_a_small_drift_is_not() -> None:
    base = np.array(unit_rows(1))
    recorded = identity_from_vectors("m", base.tolist())
    # Threaded float sums: last-bit noise, far below int8 quantisation.
    noisy = base + np.random.default_rng(2).normal(scale=1e-6, size=base.shape)
    assert compare_identities(recorded, identity_from_vectors("m", noisy.tolist())).same_model
    # A 4-bit build of the same model agrees at ~0.98-0.99: another model here.
    drift = base + np.random.default_rng(3).normal(scale=0.006, size=base.shape)
    verdict = compare_identities(recorded, identity_from_vectors("m", drift.tolist()))
    assert 0.95 < verdict.agreement < SAME_MODEL_AGREEMENT
    assert not verdict.same_model


def test_scale_does_not_matter_but_direction_does() -> None:
    base = unit_rows(4)
    scaled = [[x * 7.5 for x in row] for row in base]
    assert compare_identities(
        identity_from_vectors("a", base), identity_from_vectors("a", scaled)
    ).same_model
    flipped = [[-x for x in row] for row in base]
    assert probe_agreement(
        identity_from_vectors("a", base), identity_from_vectors("a", flipped)
    ) == pytest.approx(-1.0, abs=1e-3)


def test_renamed_wrapper_of_the_same_model_is_accepted_and_flagged() -> None:
    class Wrapped(HashingEmbeddings):
        model_identity = "my-app/hashing"

    a = probe_identity(HashingEmbeddings())
    b = probe_identity(Wrapped())
    verdict = compare_identities(a, b)
    assert verdict.same_model and verdict.renamed
    assert not compare_identities(a, a).renamed


def test_mismatch_message_names_both_models_and_the_fixes() -> None:
    hashing = probe_identity(HashingEmbeddings())
    other = identity_from_vectors("intfloat/multilingual-e5-small", unit_rows(5))
    error = mismatch_error(hashing, other, "/data/memories")
    assert isinstance(error, EmbeddingModelMismatchError)
    assert isinstance(error, ConfigurationError) and isinstance(error, ValueError)
    text = str(error)
    assert "'/data/memories'" in text
    assert "HashingEmbeddings(dimensions=384" in text
    assert "intfloat/multilingual-e5-small (384 dims" in text
    assert hashing.fingerprint in text and other.fingerprint in text
    assert "store.reembed(new_embeddings)" in text and "new store directory" in text
    assert error.recorded == hashing and error.current == other


def test_same_name_different_vectors_says_the_model_changed() -> None:
    a = identity_from_vectors("acme-embed", unit_rows(6))
    b = identity_from_vectors("acme-embed", unit_rows(7))
    text = str(mismatch_error(a, b, "/s"))
    assert "both are named 'acme-embed'" in text and "weights, version or settings" in text


def test_identity_round_trips_through_json_and_rejects_damage() -> None:
    ident = probe_identity(HashingEmbeddings(dimensions=64, seed="x"))
    assert EmbeddingIdentity.from_json(ident.to_json()) == ident
    for bad in ("", "{}", '{"version": 2}', ident.to_json().replace('"probe": ["', '"probe": ["!')):
        with pytest.raises(ConfigurationError, match="re-embed with"):
            EmbeddingIdentity.from_json(bad)


def test_progress_round_trips_and_knows_when_it_is_finished() -> None:
    target = probe_identity(HashingEmbeddings(dimensions=32))
    progress = ReembedProgress(target=target, after_rowid=41, done=3, total=10)
    assert ReembedProgress.from_json(progress.to_json()) == progress
    assert not progress.finished
    assert ReembedProgress(target=target, after_rowid=99, done=10, total=10).finished
    with pytest.raises(ConfigurationError, match="starts over"):
        ReembedProgress.from_json('{"target": {}}')


def test_unusable_probe_vectors_are_refused_with_the_reason() -> None:
    with pytest.raises(ConfigurationError, match="one vector per text"):
        identity_from_vectors("m", unit_rows(1, rows=1))
    with pytest.raises(ConfigurationError, match="one model must return one size"):
        identity_from_vectors("m", [unit_rows(1, rows=1, dims=8)[0], unit_rows(1, rows=1)[0]])
    with pytest.raises(ConfigurationError, match="finite"):
        identity_from_vectors("m", [[float("nan")] * 4, [1.0] * 4])


def test_names_come_from_what_the_embedder_says_it_is() -> None:
    assert embedding_name(HashingEmbeddings(dimensions=64, seed="s")) == (
        "HashingEmbeddings(dimensions=64, seed='s')"
    )

    class OpenAILike:
        model = "text-embedding-3-small"

    assert embedding_name(OpenAILike()) == "OpenAILike:text-embedding-3-small"

    def my_embed(texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]

    wrapped = ensure_embeddings(my_embed)
    assert embedding_name(wrapped) == (
        f"EmbeddingsLambda:{__name__}.test_names_come_from_what_the_embedder_says_it_is"
        ".<locals>.my_embed"
    )

    class Anonymous:
        pass

    assert embedding_name(Anonymous()).endswith("Anonymous")


async def test_async_probe_matches_sync() -> None:
    emb = HashingEmbeddings(dimensions=128)
    assert await aprobe_identity(emb) == probe_identity(emb)
