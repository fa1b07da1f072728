"""An embedder that remembers the vectors of the few texts a turn embeds.

A served turn embeds the same short texts several times (the user message for deduplication
and as the knowledge-base and recall query; the reply for deduplication), and the window does it
synchronously on the event loop. :class:`CachedEmbedder` lets the service compute those vectors
once, ahead of time, on a worker thread (:meth:`CachedEmbedder.embed` / ``embed_queries`` called
through ``asyncio``'s executor); the window's own call then finds them in the cache and costs a
dictionary lookup.

Contract: results are the wrapped embedder's (same rows, same dtype), except for texts whose
passage vector a caller vouched for with :meth:`CachedEmbedder.remember` (the knowledge base
shares its chunks' vectors that way, so recall never re-embeds a chunk it already embedded);
only calls of at most ``max_batch`` texts are cached (64: a relevance gate scores the request
against up to 20 remembered pairs and the profile, the same items turn after turn; batch ingestion
such as the knowledge base passes straight through, apart from vouched texts); the cache keeps the
last ``size`` vectors per kind (passage / query; one kind for a ``symmetric`` inner embedder such
as USE, whose queries and passages are embedded alike) and the last ``known_size`` vouched ones;
thread-safe: a text that one thread is embedding is not embedded again by another thread
asking for it meanwhile (that one waits for the vector; the window's deduplication and the recall
query ask for the user message at the same moment).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future

import numpy as np

from smartctx.core.embeddings import Embedder, Vector, embed_queries


class CachedEmbedder:
    """Wraps ``inner``; see the module docstring. ``name`` and ``dim`` are the inner ones."""

    def __init__(
        self, inner: Embedder, *, size: int = 8192, max_batch: int = 64, known_size: int = 4096
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.symmetric = bool(getattr(inner, "symmetric", False))
        self.size = size
        self.max_batch = max_batch
        self.known_size = known_size
        self._lock = threading.Lock()
        self._cache: dict[bool, OrderedDict[str, Vector]] = {
            False: OrderedDict(),
            True: OrderedDict(),
        }
        self._known: OrderedDict[str, Vector] = OrderedDict()
        self._pending: dict[bool, dict[str, Future[Vector]]] = {False: {}, True: {}}
        self.hits = 0
        self.misses = 0

    def embed(self, texts: Sequence[str]) -> Vector:
        return self._get(texts, False, self.inner.embed)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        if self.symmetric:  # one vector per text, whether it is searched for or searched
            return self._get(texts, False, self.inner.embed, vouched=False)
        return self._get(texts, True, lambda t: embed_queries(self.inner, t))

    def remember(self, texts: Sequence[str], vectors: Sequence[Vector] | Vector) -> None:
        """Vouch for ``vectors[i]`` as the passage vector of ``texts[i]`` (for example the
        knowledge base's vector of a chunk, embedded with its heading): later ``embed`` calls
        return it for exactly that text, whatever the batch size. Keeps the last
        ``known_size`` texts."""
        rows = [np.asarray(v, dtype=np.float32).reshape(-1) for v in vectors]
        if len(rows) != len(texts):
            raise ValueError(f"remember needs one vector per text: {len(texts)}, {len(rows)}")
        with self._lock:
            for text, row in zip(texts, rows, strict=True):
                if row.shape[0] != self.dim:
                    raise ValueError(f"a vector of dim {row.shape[0]}, the embedder has {self.dim}")
                self._known[text] = row
                self._known.move_to_end(text)
            while len(self._known) > self.known_size:
                self._known.popitem(last=False)

    def peek(self, text: str) -> Vector | None:
        """The passage vector of ``text`` if this cache holds it (vouched or embedded), without
        embedding anything."""
        with self._lock:
            found = self._known.get(text)
            return self._cache[False].get(text) if found is None else found

    def seed(self, texts: Sequence[str], vectors: Sequence[Vector]) -> None:
        """Keep ``vectors[i]`` as the passage vector of ``texts[i]``, as if this cache had
        embedded it (another process of the same embedder did: a replica's stored slot)."""
        if len(vectors) != len(texts):
            raise ValueError(f"seed needs one vector per text: {len(texts)}, {len(vectors)}")
        cache = self._cache[False]
        with self._lock:
            for text, vector in zip(texts, vectors, strict=True):
                row = np.asarray(vector, dtype=np.float32).reshape(-1)
                if row.shape[0] != self.dim:
                    raise ValueError(f"a vector of dim {row.shape[0]}, the embedder has {self.dim}")
                cache[text] = row
                cache.move_to_end(text)
            while len(cache) > self.size:
                cache.popitem(last=False)

    def known(self, text: str) -> Vector | None:
        """The vouched passage vector of ``text``, if any (see :meth:`remember`)."""
        with self._lock:
            return self._known.get(text)

    def _get(
        self,
        texts: Sequence[str],
        query: bool,
        compute: Callable[[Sequence[str]], Vector],
        *,
        vouched: bool = True,
    ) -> Vector:
        if not texts:
            return compute(texts)
        small = len(texts) <= self.max_batch
        cache = self._cache[query]
        pending = self._pending[query]
        waits: dict[str, Future[Vector]] = {}
        mine: dict[str, Future[Vector]] = {}
        with self._lock:
            use_known = vouched and not query
            found = {t: self._known[t] for t in texts if t in self._known} if use_known else {}
            if small:
                for text in texts:
                    if text in found or text in mine:  # a text twice in one batch: once
                        continue
                    if text in cache:
                        found[text] = cache[text]
                        cache.move_to_end(text)
                    elif text in pending:
                        waits[text] = pending[text]  # another thread is embedding it now
                    else:
                        mine[text] = pending[text] = Future()
        if not small and not found:
            return compute(texts)  # batch ingestion: exactly the inner call
        missing = [t for t in dict.fromkeys(texts) if t not in found and t not in waits]
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            try:
                rows = compute(missing)
                with self._lock:
                    for text, row in zip(missing, rows, strict=True):
                        found[text] = row
                        if small:
                            cache[text] = row
                    while len(cache) > self.size:
                        cache.popitem(last=False)
                    for text, future in mine.items():
                        pending.pop(text, None)
                        future.set_result(found[text])
            except BaseException as err:
                # Whatever failed, no text stays pending: a waiting thread gets the error.
                with self._lock:
                    for text, future in mine.items():
                        if not future.done():
                            pending.pop(text, None)
                            future.set_exception(err)
                raise
        for text, future in waits.items():
            found[text] = future.result()
        return np.vstack([found[t] for t in texts]).astype(np.float32, copy=False)
