"""An embedder wrapper that remembers vectors on disk between benchmark runs.

Embedding LoCoMo's 2,760 turns with e5 takes about a minute on two cores; the cache makes the
second run take seconds. Vectors are stored per model under ``<dir>/<model name>.npz``, keyed by
the SHA-1 of ``"q:" or "p:"`` plus the text, so a changed key text is simply a miss. The cache
lives under ``.smartctx/`` (gitignored) or any directory outside the repository, never in it.
Not safe for concurrent writers to the same directory (the last ``save`` wins, nothing corrupts:
the file is replaced atomically).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from smartctx.core.embeddings import Embedder, Vector, embed_queries


class CachedEmbedder:
    """Wraps ``inner``; ``embed``/``embed_queries`` only compute the texts not seen before."""

    def __init__(self, inner: Embedder, directory: Path | None) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.directory = directory
        self._vectors: dict[str, Vector] | None = None
        self._dirty = False

    @property
    def path(self) -> Path | None:
        return None if self.directory is None else self.directory / f"{self.name}.npz"

    def _store(self) -> dict[str, Vector]:
        if self._vectors is None:
            self._vectors = {}
            if self.path is not None and self.path.is_file():
                with np.load(self.path) as data:
                    self._vectors = {key: data[key] for key in data.files}
        return self._vectors

    def _lookup(self, texts: Sequence[str], is_query: bool) -> Vector:
        store = self._store()
        keys = [
            hashlib.sha1((("q:" if is_query else "p:") + t).encode()).hexdigest() for t in texts
        ]
        missing = list(dict.fromkeys(i for i, k in enumerate(keys) if k not in store))
        if missing:
            todo = [texts[i] for i in missing]
            fresh = embed_queries(self.inner, todo) if is_query else self.inner.embed(todo)
            for i, row in zip(missing, fresh, strict=True):
                store[keys[i]] = np.asarray(row, dtype=np.float32)
            self._dirty = True
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack([store[k] for k in keys]).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> Vector:
        return self._lookup(texts, False)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return self._lookup(texts, True)

    def save(self) -> None:
        """Write new vectors to disk (no-op without a directory or without new vectors)."""
        if self.path is None or not self._dirty or self._vectors is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f"{self.path.stem}.{os.getpid()}.tmp.npz")
        with tmp.open("wb") as handle:
            np.savez(handle, allow_pickle=False, **self._vectors)
        tmp.replace(self.path)
        self._dirty = False
