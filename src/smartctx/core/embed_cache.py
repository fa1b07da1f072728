"""An embedder that remembers the vectors of the few texts a turn embeds.

A served turn embeds the same short texts several times (the user message for deduplication
and as the knowledge-base and recall query; the reply for deduplication), and the window does it
synchronously on the event loop. :class:`CachedEmbedder` lets the service compute those vectors
once, ahead of time, on a worker thread (:meth:`CachedEmbedder.embed` / ``embed_queries`` called
through ``asyncio``'s executor); the window's own call then finds them in the cache and costs a
dictionary lookup.

Contract: results are exactly the wrapped embedder's (same rows, same dtype); only calls of at most
``max_batch`` texts are cached (batch ingestion such as the knowledge base passes straight
through); the cache keeps the last ``size`` vectors per kind (passage / query); thread-safe.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from smartctx.core.embeddings import Embedder, Vector, embed_queries


class CachedEmbedder:
    """Wraps ``inner``; see the module docstring. ``name`` and ``dim`` are the inner ones."""

    def __init__(self, inner: Embedder, *, size: int = 8192, max_batch: int = 16) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.size = size
        self.max_batch = max_batch
        self._lock = threading.Lock()
        self._cache: dict[bool, OrderedDict[str, Vector]] = {
            False: OrderedDict(),
            True: OrderedDict(),
        }
        self.hits = 0
        self.misses = 0

    def embed(self, texts: Sequence[str]) -> Vector:
        return self._get(texts, False, self.inner.embed)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return self._get(texts, True, lambda t: embed_queries(self.inner, t))

    def _get(
        self, texts: Sequence[str], query: bool, compute: Callable[[Sequence[str]], Vector]
    ) -> Vector:
        if len(texts) > self.max_batch or not texts:
            return compute(texts)
        cache = self._cache[query]
        with self._lock:
            found = {t: cache[t] for t in texts if t in cache}
            for text in found:
                cache.move_to_end(text)
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            rows = compute(missing)
            with self._lock:
                for text, row in zip(missing, rows, strict=True):
                    found[text] = row
                    cache[text] = row
                while len(cache) > self.size:
                    cache.popitem(last=False)
        return np.vstack([found[t] for t in texts]).astype(np.float32, copy=False)
