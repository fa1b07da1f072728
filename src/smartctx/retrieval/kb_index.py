"""The knowledge base's search index: BM25 over chunks, best-view cosine, rank fusion.

Contract:
- ``DocEntry`` is one document as the knowledge base holds it; its ``vectors`` (one
  ``(views, dim)`` array per chunk, see ``chunking.passage_views``) are filled by
  :func:`embed_documents`, in one batch, only for entries lacking this embedder's vectors;
- ``ChunkIndex.sync(visible)`` brings the index to exactly the chunks of ``visible``: a document
  is re-indexed when its entry object changes (identity, not name), so replacing an entry is
  how a caller says "this document changed";
- ``ChunkIndex.scores(query)`` gives, per indexed chunk (in ``ids`` order), the BM25 score and the
  best cosine of the query with one of the chunk's views;
- an embedder with a ``remember(texts, vectors)`` method (the service's
  :class:`~smartctx.core.embed_cache.CachedEmbedder`) is told each indexed chunk's whole-chunk
  vector under the chunk's text, so a window that recalls the chunk never embeds it again;
- not thread-safe: the knowledge base calls it under its lock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from smartctx.core.embeddings import Embedder, Vector, embed_queries
from smartctx.core.tokens import TokenCounter
from smartctx.retrieval.chunking import Chunk, passage_views
from smartctx.retrieval.hybrid import HybridIndex, rank_of


@dataclass
class DocEntry:
    """A document held by a knowledge base: ``origin`` is builtin, stored or added."""

    name: str
    digest: str
    chunks: list[Chunk]
    origin: str
    vectors: list[Vector] | None = None  # one (views, dim) array per chunk
    embedder: str = ""


def embed_documents(
    docs: Iterable[DocEntry], embedder: Embedder, counter: TokenCounter | None = None
) -> None:
    """Fill ``vectors`` of the entries lacking ``embedder``'s, embedding all views in one batch."""
    missing = [d for d in docs if d.vectors is None or d.embedder != embedder.name]
    if not missing:
        return
    views = [passage_views(c, counter=counter) for d in missing for c in d.chunks]
    flat = np.asarray(embedder.embed([v for vs in views for v in vs]), dtype=np.float32)
    per_chunk: list[Vector] = []
    start = 0
    for chunk_views in views:
        per_chunk.append(flat[start : start + len(chunk_views)].copy())
        start += len(chunk_views)
    for doc in missing:
        doc.vectors, per_chunk = per_chunk[: len(doc.chunks)], per_chunk[len(doc.chunks) :]
        doc.embedder = embedder.name


def _share(docs: Iterable[DocEntry], embedder: Embedder) -> None:
    """Tell ``embedder`` (when it can remember) each chunk's whole-chunk vector by its text."""
    remember = getattr(embedder, "remember", None)
    if remember is None:
        return
    pairs = [
        (c.text.strip(), v[0]) for d in docs for c, v in zip(d.chunks, d.vectors or [], strict=True)
    ]
    if pairs:
        remember([t for t, _ in pairs], [v for _, v in pairs])


class ChunkIndex:
    """Chunks in a lexical :class:`HybridIndex` (BM25 + fusion) plus a matrix of view vectors.

    Row ``r`` of the matrix belongs to the chunk at index position ``owners[r]``. The
    constructor does no I/O.
    """

    def __init__(self, embedder: Embedder, *, rrf_k: int, weights: tuple[float, float]) -> None:
        self.embedder = embedder
        self.lexical = HybridIndex(embedder=None, rrf_k=rrf_k, weights=weights)
        self._docs: dict[str, DocEntry] = {}
        self._by_id: dict[str, Chunk] = {}
        self._matrix: Vector = np.zeros((0, 0), dtype=np.float32)
        self._owners: npt.NDArray[np.intp] = np.zeros(0, dtype=np.intp)

    def __len__(self) -> int:
        return len(self.lexical)

    @property
    def ids(self) -> list[str]:
        """Chunk source ids in index order (the order of every score array)."""
        return self.lexical.ids

    def chunk(self, source_id: str) -> Chunk:
        return self._by_id[source_id]

    def knows(self, term: str) -> bool:
        """Whether an indexed chunk holds ``term`` (an analysed word)."""
        return self.lexical.has_term(term)

    def sync(self, visible: Mapping[str, DocEntry], counter: TokenCounter | None = None) -> None:
        """Index exactly the documents of ``visible`` (embedding new ones first)."""
        stale = [n for n, d in self._docs.items() if visible.get(n) is not d]
        for name in stale:
            self.lexical.remove([c.source_id for c in self._docs.pop(name).chunks])
        fresh = [d for n, d in visible.items() if n not in self._docs]
        if fresh:
            embed_documents(fresh, self.embedder, counter)
            chunks = [c for d in fresh for c in d.chunks]
            self.lexical.add(
                [c.source_id for c in chunks],
                [c.indexed_text() for c in chunks],
                [{"doc": c.doc, "heading": c.title} for c in chunks],
            )
            self._docs.update((d.name, d) for d in fresh)
            _share(fresh, self.embedder)
        if stale or fresh:
            self._by_id = {c.source_id: c for d in self._docs.values() for c in d.chunks}
            views = {
                c.source_id: v
                for d in self._docs.values()
                for c, v in zip(d.chunks, d.vectors or [], strict=True)
            }
            blocks = [views[i] for i in self.ids]
            self._matrix = np.vstack(blocks) if blocks else np.zeros((0, 0), dtype=np.float32)
            self._owners = np.repeat(np.arange(len(blocks)), [len(b) for b in blocks])

    def scores(self, query: str) -> tuple[npt.NDArray[np.float32], Vector]:
        """``(bm25, best-view cosine)`` of every indexed chunk for ``query``."""
        lexical = self.lexical.lexical_scores(query)
        dense = np.full(len(self), -1.0, dtype=np.float32)
        if len(self._owners):
            query_vec = np.asarray(embed_queries(self.embedder, [query]), dtype=np.float32)[0]
            np.maximum.at(dense, self._owners, self._matrix @ query_vec)
        return lexical, dense

    def rank(
        self, lexical: npt.NDArray[Any], dense: npt.NDArray[Any], mask: npt.NDArray[np.bool_]
    ) -> list[tuple[int, Chunk, float]]:
        """``(position, chunk, fused score)`` of the chunks passing ``mask``, best first (ties by
        id); ``position`` indexes the score arrays."""
        fused = self.lexical.fuse(lexical, dense, mask)
        ids = self.ids
        return [
            (p, self._by_id[ids[p]], float(fused[p]))
            for p in rank_of(fused, mask & (fused > 0), ids)
        ]
