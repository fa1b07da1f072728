"""Recall into the window: ``HybridRecaller`` ranks archived slots for a query.

It implements the core :class:`~smartctx.core.recall.Recaller` protocol, so the window engine
(``ContextWindow(recaller=...)``) uses it without importing this layer. Contract:

- ranking is hybrid: BM25 and vector similarity over each slot's search key
  (:mod:`smartctx.retrieval.keys`: the text with speaker and photo caption folded in), merged by
  reciprocal rank fusion; a slot's neighbourhood (``metadata["context"]``) joins at
  ``context_weight``, and a ranked list by recency at ``recency_weight`` (off by default);
- candidate keys and vectors are cached by slot id, so repeated calls over a growing archive embed
  only the new slots; a slot whose text changes under the same id is re-indexed (a change of its
  metadata alone is not noticed: ``forget`` it first); the cache holds every slot seen until
  ``forget`` or ``clear`` drops it;
- filters (``speaker``, ``since``, ``until`` over ``slot.metadata``) exclude candidates before
  ranking; times are ISO-8601 strings (``metadata["time"]``, else ``slot.created_at``) compared as
  strings, so use one format throughout;
- candidates are never mutated; ties break by slot id; the result is deterministic.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from smartctx.core.embeddings import Embedder, RetrievalEmbedder
from smartctx.core.errors import InvalidInput
from smartctx.core.slots import Slot
from smartctx.retrieval.hybrid import HybridIndex, Mask, rank_of
from smartctx.retrieval.keys import KeyFunction, slot_context, slot_key


@dataclass(frozen=True)
class RecallFilter:
    """Which candidates may be recalled. ``None`` fields do not filter."""

    speaker: frozenset[str] | None = None
    since: str | None = None
    until: str | None = None

    def allows(self, slot: Slot) -> bool:
        """True when ``slot`` passes every set field (a slot without a time fails time bounds)."""
        if self.speaker is not None and str(slot.metadata.get("speaker", "")) not in self.speaker:
            return False
        if self.since is None and self.until is None:
            return True
        when = str(slot.metadata.get("time") or slot.created_at or "")
        if not when:
            return False
        if self.since is not None and when < self.since:
            return False
        return not (self.until is not None and when > self.until)


def best(
    scored: dict[str, float],
    candidates: Sequence[Slot],
    k: int,
    *,
    by_id: Mapping[str, Slot] | None = None,
) -> list[tuple[Slot, float]]:
    """The at most ``k`` scored candidates, best first, ties by slot id. ``by_id`` maps the
    candidates' ids to them (the last of a repeated id) when the caller has it. Cost: a numpy
    pass over the scores and a sort of the ``k`` best (and those tied with the k-th)."""
    if k <= 0 or not scored:
        return []
    ids = list(scored)
    if len(ids) > k:
        values = np.fromiter(scored.values(), dtype=np.float64, count=len(ids))
        kth = np.partition(values, len(ids) - k)[len(ids) - k]
        ids = [ids[p] for p in np.flatnonzero(values >= kth).tolist()]
    order = sorted(ids, key=lambda i: (-scored[i], i))[:k]
    if by_id is None:
        by_id = {s.id: s for s in candidates}
    return [(by_id[i], scored[i]) for i in order]


class HybridRecaller:
    """A :class:`~smartctx.core.recall.Recaller` by hybrid search over candidate slots.

    ``embedder`` should be retrieval-trained (``E5Embedder``); ``None`` ranks by BM25 alone.
    ``weights`` are (BM25, vector) fusion weights, ``rrf_k`` the fusion constant (20 by default:
    chosen once on LoCoMo's development split, where it beat 60; see ``docs/benchmarks.md``).
    ``recency_weight`` > 0 adds a ranked list by ``seq`` (newest first) to the fusion.
    ``context_weight`` > 0 also matches each slot's neighbourhood (``metadata["context"]``, e.g.
    the turns around it, see :func:`~smartctx.retrieval.keys.slot_context`): its vector
    similarity is added to the slot's own at that weight, and its BM25 ranking joins the fusion at
    that weight (0.5 by default, chosen once on LoCoMo's development split).
    The constructor does no I/O; the embedder loads on the first ``rank``.
    """

    def __init__(
        self,
        *,
        embedder: RetrievalEmbedder | Embedder | None = None,
        key: KeyFunction = slot_key,
        rrf_k: int = 20,
        weights: tuple[float, float] = (1.0, 1.0),
        recency_weight: float = 0.0,
        context_weight: float = 0.5,
        filter: RecallFilter | None = None,
    ) -> None:
        if recency_weight < 0 or context_weight < 0:
            raise InvalidInput(
                f"weights must be >= 0, got recency {recency_weight}, context {context_weight}"
            )
        self.key = key
        self.recency_weight = recency_weight
        self.context_weight = context_weight
        self.filter = filter or RecallFilter()
        self._index = HybridIndex(embedder=embedder, rrf_k=rrf_k, weights=weights)
        # Same ids, same storage order as _index (every add/remove is mirrored).
        self._context = HybridIndex(embedder=None, rrf_k=rrf_k, weights=weights)
        self._texts: dict[str, str] = {}

    @property
    def index(self) -> HybridIndex:
        """The index of every slot seen so far (keys, not slot texts)."""
        return self._index

    def filtered(
        self,
        *,
        speaker: str | Iterable[str] | None = None,
        since: str | None = None,
        until: str | None = None,
    ) -> HybridRecaller:
        """A recaller sharing this one's cache, recalling only what passes the filter."""
        speakers = None
        if speaker is not None:
            speakers = frozenset([speaker] if isinstance(speaker, str) else speaker)
        out = copy.copy(self)
        out.filter = replace(self.filter, speaker=speakers, since=since, until=until)
        return out

    def prepare(self, slots: Sequence[Slot]) -> None:
        """Index (embed) slots ahead of time, in one batch; later ranks reuse the vectors."""
        fresh_ids: list[str] = []
        fresh_keys: list[str] = []
        fresh_texts: list[str] = []
        contexts: list[str] = []
        for slot in slots:
            if self._texts.get(slot.id) == slot.text or slot.id in fresh_ids:
                continue
            fresh_ids.append(slot.id)
            fresh_keys.append(self.key(slot))
            fresh_texts.append(slot.text)
            contexts.append(slot_context(slot) if self.context_weight > 0 else "")
        if not fresh_ids:
            return
        self._index.add(fresh_ids, fresh_keys)
        self._context.add(fresh_ids, contexts, vectors=self._context_vectors(contexts))
        self._texts.update(zip(fresh_ids, fresh_texts, strict=True))

    def _context_vectors(self, contexts: list[str]) -> npt.NDArray[np.float32] | None:
        embedder = self._index.embedder
        if embedder is None:
            return None
        out = np.zeros((len(contexts), embedder.dim), dtype=np.float32)
        filled = [i for i, text in enumerate(contexts) if text.strip()]
        if filled:
            out[filled] = embedder.embed([contexts[i] for i in filled])
        return out

    def forget(self, slot_ids: Iterable[str]) -> None:
        """Drop cached entries of these slots."""
        ids = [i for i in slot_ids if i in self._texts]
        self._index.remove(ids)
        self._context.remove(ids)
        for slot_id in ids:
            del self._texts[slot_id]

    def clear(self) -> None:
        """Drop every cached entry."""
        self.forget(list(self._texts))

    def scores(self, query: str, candidates: Sequence[Slot]) -> dict[str, float]:
        """Fused score of every allowed candidate (by slot id); those with no evidence omitted."""
        allowed = [s for s in candidates if self.filter.allows(s)]
        if not allowed or not query.strip():
            return {}
        self.prepare(allowed)
        index = self._index
        mask = index.mask(among={s.id for s in allowed})
        fused = self.fused(query, allowed, mask)
        ids = index.ids
        return {ids[p]: float(fused[p]) for p in np.flatnonzero(mask & (fused > 0))}

    def fused(
        self,
        query: str,
        allowed: Sequence[Slot],
        mask: Mask,
        *,
        like: str | None = None,
        dense: npt.NDArray[np.float64] | None = None,
    ) -> npt.NDArray[np.float64]:
        """The fused score of every indexed slot (the index's storage order) among ``mask``, 0
        elsewhere: the slots of ``allowed``, which must be indexed (:meth:`prepare`). Costs a
        BM25 pass and a matrix-vector product over the index; ``allowed`` is read only for
        recency. ``like``: the text embedded for the vector scores (default ``query``); BM25
        reads ``query``. ``dense``: the :meth:`dense_share` of that text over ``mask``, when the
        caller kept it from an earlier call (a second query searched with the first's vector)."""
        index, context, weight = self._index, self._context, self.context_weight
        extra: list[tuple[npt.NDArray[np.float32], float]] = []
        if weight > 0:
            extra.append((context.lexical_scores(query), weight))
        if dense is None:
            dense = self.dense_share(like or query, mask)
        fused = index.fuse(index.lexical_scores(query), None, mask, extra=extra, dense_share=dense)
        if self.recency_weight > 0:
            fused += self._recency(allowed, mask)
        return fused

    def dense_share(self, text: str, mask: Mask) -> npt.NDArray[np.float64] | None:
        """The vector ranking's part of :meth:`fused` for the embedding of ``text`` (its turn
        vectors and, at ``context_weight``, their contexts' vectors); None without vectors."""
        index, context, weight = self._index, self._context, self.context_weight
        dense = index.vector_scores(text)
        if dense is None:
            return None
        if weight > 0:
            query_vec = index.query_vector(text)
            around = context.similarity(query_vec) if query_vec is not None else None
            if around is not None:
                dense = dense + weight * around
        return index.share(dense, mask, index.weights[1], positive=False)

    def _recency(self, allowed: Sequence[Slot], mask: Mask) -> npt.NDArray[np.float64]:
        ids = self._index.ids
        seq = {s.id: s.seq for s in allowed}  # the window's seq: newest is highest
        newest = np.array([float(seq.get(i, -1)) for i in ids])
        out = np.zeros(len(ids), dtype=np.float64)
        for rank, pos in enumerate(rank_of(newest, mask, self._index.id_rank()), 1):
            out[pos] = self.recency_weight / (self._index.rrf_k + rank)
        return out

    def rank(self, query: str, candidates: Sequence[Slot], k: int) -> list[tuple[Slot, float]]:
        """The at most ``k`` candidates most relevant to ``query``, best first (``Recaller``)."""
        return best(self.scores(query, candidates) if k > 0 else {}, candidates, k)
