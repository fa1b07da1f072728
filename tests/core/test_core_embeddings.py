"""Embedders: shapes, dtype, L2 normalisation, determinism."""

from __future__ import annotations

import numpy as np
import pytest

from smartctx.core import ConfigError, Embedder, HashingEmbedder, RetrievalEmbedder, get_embedder


def check_rows(matrix: np.ndarray, n: int, dim: int) -> None:
    assert matrix.shape == (n, dim) and matrix.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)


def test_hashing_embedder_contract() -> None:
    embedder = HashingEmbedder(128)
    assert isinstance(embedder, Embedder) and isinstance(embedder, RetrievalEmbedder)
    texts = ["turn the lights on", "Turn the lights ON", "expense report due"]
    vectors = embedder.embed(texts)
    check_rows(vectors, 3, 128)
    np.testing.assert_array_equal(vectors, HashingEmbedder(128).embed(texts))
    assert float(vectors[0] @ vectors[1]) == pytest.approx(1.0, abs=1e-6)
    assert float(vectors[0] @ vectors[2]) < 0.5
    assert embedder.embed([]).shape == (0, 128)
    assert not embedder.embed([""]).any()  # no features: a zero row, not NaN


def test_use_embedder_multilingual() -> None:
    embedder = get_embedder("use")
    vectors = embedder.embed(["Hello", "안녕하세요", "The invoice is overdue"])
    check_rows(vectors, 3, 512)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])
    np.testing.assert_allclose(embedder.embed(["Hello"])[0], vectors[0], atol=1e-5)


def test_e5_embedder_queries_and_passages() -> None:
    embedder = get_embedder("e5")
    assert isinstance(embedder, RetrievalEmbedder)
    passages = embedder.embed(["The VPN requires client 5.2.", "Lunch is at noon."])
    query = embedder.embed_queries(["which VPN client version do I need"])
    check_rows(passages, 2, 384)
    check_rows(query, 1, 384)
    scores = passages @ query[0]
    assert scores[0] > scores[1]


def test_get_embedder_unknown_name() -> None:
    with pytest.raises(ConfigError, match="unknown embedder"):
        get_embedder("word2vec")
    assert get_embedder("hashing") is get_embedder("hashing")


def test_use_runs_with_the_configured_blas_threads_without_relimiting_per_call() -> None:
    from threadpoolctl import threadpool_info

    embedder = get_embedder("use")
    embedder.embed(["warm"])
    blas = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    assert blas and set(blas) == {embedder.threads}  # type: ignore[attr-defined]
    backend = embedder.model()._model  # type: ignore[attr-defined]
    assert backend._threadpool is None
