"""CachedEmbedder: same vectors as the wrapped embedder, each short text embedded once."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

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


class _Asymmetric(_Counting):
    symmetric = False

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        self.calls.append(list(texts))
        return -HashingEmbedder.embed(self, texts)


def test_queries_share_the_passage_vector_only_for_a_symmetric_embedder() -> None:
    symmetric = _Counting()
    cached = CachedEmbedder(symmetric)
    assert cached.symmetric
    assert np.array_equal(cached.embed_queries(["q"]), cached.embed(["q"]))
    assert symmetric.calls == [["q"]]  # one vector, searched for and searched
    cached.remember(["q"], [np.zeros(symmetric.dim, dtype=np.float32)])
    assert np.array_equal(cached.embed_queries(["q"]), HashingEmbedder().embed(["q"]))

    asymmetric = _Asymmetric()
    cached = CachedEmbedder(asymmetric)
    assert not cached.symmetric
    assert np.array_equal(cached.embed_queries(["q"]), -cached.embed(["q"]))
    assert asymmetric.calls == [["q"], ["q"]]  # a query vector is not the passage vector


def test_big_batches_pass_through() -> None:
    inner = _Counting()
    cached = CachedEmbedder(inner, size=2, max_batch=2)
    cached.embed(["1", "2", "3"])
    cached.embed(["1", "2", "3"])
    assert inner.calls[-2:] == [["1", "2", "3"]] * 2
    for text in ("x", "y", "z"):
        cached.embed([text])
    cached.embed(["x"])  # evicted: the cache keeps the last 2
    assert inner.calls[-1] == ["x"]
    assert cached.embed([]).shape[0] == 0


def test_vouched_vectors_are_returned_for_exactly_their_text_at_any_batch_size() -> None:
    import pytest

    inner = _Counting()
    cached = CachedEmbedder(inner, max_batch=2, known_size=2)
    vec = np.full(inner.dim, 0.5, dtype=np.float32)
    cached.remember(["chunk"], [vec])
    assert np.array_equal(cached.embed(["chunk"])[0], vec)
    many = cached.embed(["chunk", "x", "y"])  # a big batch: only the others are embedded
    assert np.array_equal(many[0], vec) and inner.calls == [["x", "y"]]
    assert np.array_equal(many[1:], HashingEmbedder().embed(["x", "y"]))
    assert cached.known("chunk") is not None and cached.known("other") is None
    cached.embed_queries(["chunk"])  # queries are never vouched for
    assert inner.calls[-1] == ["chunk"]
    cached.remember(["b", "c"], [vec, vec])  # keeps the last ``known_size``
    assert cached.known("chunk") is None
    with pytest.raises(ValueError):
        cached.remember(["a", "b"], [vec])
    with pytest.raises(ValueError):
        cached.remember(["a"], [np.ones(3, dtype=np.float32)])


def test_a_text_being_embedded_is_waited_for_not_embedded_again() -> None:
    import threading

    started, release = threading.Event(), threading.Event()

    class _Slow(_Counting):
        def embed(self, texts: Sequence[str]) -> Vector:
            started.set()
            release.wait(10)
            return super().embed(texts)

    inner = _Slow()
    cached = CachedEmbedder(inner)
    results: list[Vector] = []
    first = threading.Thread(target=lambda: results.append(cached.embed(["the message"])))
    first.start()
    assert started.wait(10)  # the first thread is inside the model call
    second = threading.Thread(target=lambda: results.append(cached.embed_queries(["the message"])))
    second.start()
    second.join(0.2)
    assert second.is_alive()  # waiting for the first thread's vector
    release.set()
    first.join(10)
    second.join(10)
    assert inner.calls == [["the message"]]
    assert np.array_equal(results[0], results[1])


def _finishes(work: Callable[[], object], seconds: float = 10.0) -> list[object]:
    """``work()`` on a thread: its result or error, failing (not hanging) if it never ends."""
    import threading

    out: list[object] = []

    def run() -> None:
        try:
            out.append(work())
        except Exception as err:
            out.append(err)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the call never returned"
    return out


def test_a_text_twice_in_one_new_batch_is_embedded_once() -> None:
    """The same reply twice in a context's history (a restart indexes the history at once) used
    to wait for itself forever: the second copy waited on the first copy's pending vector."""
    inner = _Counting()
    cached = CachedEmbedder(inner)
    texts = ["I don't have that information.", "other", "I don't have that information."]
    (vectors,) = _finishes(lambda: cached.embed(texts))
    assert np.array_equal(vectors, HashingEmbedder().embed(texts))  # type: ignore[arg-type]
    assert inner.calls == [["I don't have that information.", "other"]]


def test_a_failed_model_call_leaves_no_text_pending() -> None:
    class _Short(_Counting):
        def embed(self, texts: Sequence[str]) -> Vector:
            return super().embed(texts)[:-1]  # one row short

    cached = CachedEmbedder(_Short())
    (error,) = _finishes(lambda: cached.embed(["a", "b"]))
    assert isinstance(error, ValueError)
    cached.inner = HashingEmbedder()
    (vectors,) = _finishes(lambda: cached.embed(["a", "b"]))  # not waiting on the failed call
    assert np.array_equal(vectors, HashingEmbedder().embed(["a", "b"]))  # type: ignore[arg-type]


def test_a_seeded_vector_is_served_and_peeked_without_embedding() -> None:
    inner = HashingEmbedder()
    cache = CachedEmbedder(inner)
    vector = inner.embed(["from another replica"])[0]
    assert cache.peek("from another replica") is None
    cache.seed(["from another replica"], [vector])
    got = cache.peek("from another replica")
    assert got is not None and (got == vector).all()
    assert (cache.embed(["from another replica"])[0] == vector).all()
    assert cache.misses == 0 and cache.hits == 1
    with pytest.raises(ValueError, match="dim"):
        cache.seed(["short"], [np.zeros(3, dtype=np.float32)])
