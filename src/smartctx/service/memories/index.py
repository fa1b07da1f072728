"""Per-owner hybrid search indexes over the memory items, kept in step with the store.

An :class:`OwnerIndex` holds one owner's memories in a :class:`~smartctx.retrieval.HybridIndex`
(BM25, plus vectors when there is an embedder) with the filter facets as metadata. It follows
the store incrementally by ``seq``: an update re-inserts its row under a new ``seq`` with the same
id, so following ``seq`` also brings updated texts (the index replaces an id it holds). Deletes
made here are applied directly; when the store holds fewer items than the index (deleted
elsewhere: another replica, a forget), the index starts over. Callers hold ``lock`` around
``put``/``discard``/``search``, and run them in a worker thread (they embed).

:class:`OwnerIndexes` caches at most ``max_owners`` indexes, least recently used out first; a
dropped index loses nothing (it is rebuilt from the store on next use).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from smartctx.core.embeddings import Embedder
from smartctx.retrieval.hybrid import HybridIndex
from smartctx.service.memories.records import Memory, MemoryFilter

MAX_OWNERS = 256
MIN_SIMILARITY = 0.85
"""Cosine at or above which a memory sharing no word with the query is still relevant."""


@dataclass(frozen=True, slots=True)
class Ranked:
    """One search hit: the fused score orders hits; ``similarity`` is the cosine of query and
    memory (``None`` without an embedder), ``lexical`` the BM25 score (0: no shared word)."""

    id: str
    score: float
    similarity: float | None
    lexical: float

    def scores(self) -> dict[str, float | None]:
        """The similarity and lexical scores as JSON (rounded)."""
        similarity = None if self.similarity is None else round(self.similarity, 6)
        return {"similarity": similarity, "lexical": round(self.lexical, 6)}


class OwnerIndex:
    """One owner's memories, searchable (see the module docstring)."""

    def __init__(self, embedder: Embedder | None) -> None:
        self.embedder = embedder
        self.index = HybridIndex(embedder=embedder)
        self.items: dict[str, Memory] = {}
        self.seen = 0
        self.lock = asyncio.Lock()

    def reset(self) -> None:
        self.index = HybridIndex(embedder=self.embedder)
        self.items.clear()
        self.seen = 0

    def put(self, memories: Sequence[Memory]) -> None:
        """Add or replace ``memories`` (embeds them: call from a worker thread)."""
        latest = {m.id: m for m in sorted(memories, key=lambda m: m.seq)}
        if not latest:
            return
        self.index.add(
            list(latest), [m.text for m in latest.values()], [m.facets() for m in latest.values()]
        )
        self.items.update(latest)
        self.seen = max(self.seen, *(m.seq for m in latest.values()))

    def discard(self, ids: Sequence[str]) -> None:
        self.index.remove(list(ids))
        for memory_id in ids:
            self.items.pop(memory_id, None)

    def search(self, query: str, flt: MemoryFilter, limit: int) -> list[Ranked]:
        """The best ``limit`` relevant memories passing ``flt``, best first.

        Ranked by the fused (BM25 + vector) score; *relevant* means sharing an analysed word
        with the query or, with an embedder, a cosine similarity of at least
        :data:`MIN_SIMILARITY` (so a query about nothing stored finds nothing).
        """
        if not len(self.index):
            return []
        lexical = self.index.lexical_scores(query)
        dense = self.index.vector_scores(query)
        position = {doc_id: p for p, doc_id in enumerate(self.index.ids)}

        def ranked(hit_id: str, score: float) -> Ranked | None:
            p = position[hit_id]
            similarity = float(dense[p]) if dense is not None else None
            if lexical[p] <= 0 and (similarity is None or similarity < MIN_SIMILARITY):
                return None
            return Ranked(hit_id, score, similarity, float(lexical[p]))

        out: list[Ranked] = []
        for hit in self.index.search(query, k=len(self.index), where=flt.matches):
            found = ranked(hit.id, hit.score)
            if found is not None:
                out.append(found)
                if len(out) == limit:
                    break
        return out


class OwnerIndexes:
    """At most ``max_owners`` :class:`OwnerIndex` objects, created on use."""

    def __init__(
        self, embedder: Callable[[], Embedder | None], *, max_owners: int = MAX_OWNERS
    ) -> None:
        self._embedder = embedder
        self._max = max(1, max_owners)
        self._cache: OrderedDict[str, OwnerIndex] = OrderedDict()

    def get(self, owner: str) -> OwnerIndex:
        found = self._cache.get(owner)
        if found is None:
            found = self._cache[owner] = OwnerIndex(self._embedder())
            while len(self._cache) > self._max:
                self._cache.popitem(last=False)
        self._cache.move_to_end(owner)
        return found

    def drop(self, owner: str) -> None:
        self._cache.pop(owner, None)


__all__ = ["MAX_OWNERS", "MIN_SIMILARITY", "OwnerIndex", "OwnerIndexes", "Ranked"]
