"""An embedder wrapper that reports its progress, for progress bars over long embedding work.

``ReportingEmbedder(inner, report)`` embeds in slices of ``batch`` texts and calls
``report(done, total)`` after each slice of one ``embed`` call, so a bar can move (with a rate
and an ETA) while a large batch is embedded. The vectors are the inner embedder's, row for row;
the overhead is one call per slice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from smartctx.core.embeddings import Embedder, Vector, embed_queries

Report = Callable[[int, int], None]
"""``report(done, total)``: texts embedded so far of this call's total."""


class ReportingEmbedder:
    """``inner`` with progress reports (see the module docstring). Same ``name`` and ``dim``."""

    def __init__(self, inner: Embedder, report: Report, *, batch: int = 16) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.report = report
        self.batch = max(1, batch)

    def _sliced(self, texts: Sequence[str], embed: Callable[[Sequence[str]], Vector]) -> Vector:
        if not texts:
            return embed(texts)
        parts: list[Vector] = []
        for start in range(0, len(texts), self.batch):
            parts.append(embed(texts[start : start + self.batch]))
            self.report(min(start + self.batch, len(texts)), len(texts))
        return np.concatenate(parts).astype(np.float32, copy=False)

    def embed(self, texts: Sequence[str]) -> Vector:
        return self._sliced(texts, self.inner.embed)

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return self._sliced(texts, lambda part: embed_queries(self.inner, part))
