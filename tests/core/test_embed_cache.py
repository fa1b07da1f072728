"""CachedEmbedder: same vectors as the wrapped embedder, each short text embedded once."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from smartctx.core import HashingEmbedder
from smartctx.core.embed_cache import CachedEmbedder
from smartctx.core.embeddings import Vector


class _Counting(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> Vector:
        self.calls.append(list(texts))
        return super().embed(texts)


def test_vectors_equal_the_inner_ones_and_are_computed_once() -> None:
    inner = _Counting()
    cached = CachedEmbedder(inner, size=3)
    first = cached.embed(["a b", "c d"])
    again = cached.embed(["c d", "a b", "a b"])
    assert np.array_equal(first, HashingEmbedder().embed(["a b", "c d"]))
    assert np.array_equal(again, HashingEmbedder().embed(["c d", "a b", "a b"]))
    assert inner.calls == [["a b", "c d"]]
    assert (cached.hits, cached.misses) == (3, 2)
    assert cached.name == inner.name and cached.dim == inner.dim


def test_queries_are_cached_apart_and_big_batches_pass_through() -> None:
    inner = _Counting()
    cached = CachedEmbedder(inner, size=2, max_batch=2)
    cached.embed_queries(["q"])
    cached.embed(["q"])
    assert len(inner.calls) == 2  # the query vector is not the passage vector's cache entry
    cached.embed(["1", "2", "3"])
    cached.embed(["1", "2", "3"])
    assert inner.calls[-2:] == [["1", "2", "3"]] * 2
    for text in ("x", "y", "z"):
        cached.embed([text])
    cached.embed(["x"])  # evicted: the cache keeps the last 2
    assert inner.calls[-1] == ["x"]
    assert cached.embed([]).shape[0] == 0
