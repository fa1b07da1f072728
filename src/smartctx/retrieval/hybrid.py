"""Hybrid search: BM25 (bm25s) and dense vectors, merged by reciprocal rank fusion.

``HybridIndex`` holds documents (id, text, metadata) in memory. Contract:
- ids are unique; adding an id that is present replaces its text, metadata and vector;
- passages are embedded in batches with the embedder's ``embed``; the query with
  ``embed_queries`` when the embedder has it (retrieval-trained models such as e5), else ``embed``;
- with no embedder the index is lexical only (BM25), which needs no model at all;
- the BM25 index grows with each add (:mod:`smartctx.retrieval.bm25`, bm25s's Lucene scores):
  a search after an add costs the query terms' postings, never a rebuild of the whole index;
  the vectors grow in a buffer with room to spare, so an add copies no earlier vector (amortised);
- fusion: ``score(d) = sum_i w_i / (rrf_k + rank_i(d))`` over the BM25 and the vector rankings,
  ranks counted from 1 among the documents that pass ``where`` (ties share their mean rank:
  identical documents get identical credit, another list decides between them, and a large tie,
  say every turn of one speaker matching only the name, is not promoted to its best rank); a
  document absent from the BM25 list (no shared term) gets nothing from it;
- ties are broken by id, so results are deterministic for the same contents and query;
- not thread-safe for concurrent writers; callers serialise ``add``/``remove``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from smartctx.core.embeddings import (
    Embedder,
    RetrievalEmbedder,
    Vector,
    embed_queries,
    normalize_rows,
)
from smartctx.core.errors import InvalidInput
from smartctx.retrieval.analysis import analyze
from smartctx.retrieval.bm25 import IncrementalBM25

QUERY_CACHE = 4096
"""How many query vectors an index remembers (oldest forgotten first)."""

Analyzer = Callable[[str], list[str]]
Where = Callable[[dict[str, Any]], bool]
Mask = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Hit:
    """One search result. ``score`` is the fused score (higher is better)."""

    id: str
    score: float
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


def id_ranks(ids: Sequence[str]) -> npt.NDArray[np.int64]:
    """Each id's position in sorted order (so ranks compare as the ids do)."""
    ranks = np.empty(len(ids), dtype=np.int64)
    ranks[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
    return ranks


def mean_ranks(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The rank of each value in ascending order, counted from 1; equal values share the mean
    of the ranks they span (one sort, then linear work over the runs of equal values)."""
    size = len(values)
    out = np.empty(size, dtype=np.float64)
    if not size:
        return out
    order = np.argsort(values)  # the order within a run of equal values does not matter
    ordered = values[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    runs = np.diff(np.append(starts, size))
    # a run from 0-based position a to b - 1 holds ranks a + 1 .. b: their mean is (a + 1 + b) / 2
    out[order] = np.repeat((2 * starts + 1 + runs) / 2.0, runs)
    return out


def rank_of(
    scores: npt.NDArray[Any], mask: Mask, ids: Sequence[str] | npt.NDArray[np.int64]
) -> list[int]:
    """Positions where ``mask`` holds, best score first, ties by id.

    ``ids`` are the document ids in storage order, or their :func:`id_ranks` (faster when reused).
    """
    tiebreak = ids if isinstance(ids, np.ndarray) else id_ranks(ids)
    positions = np.flatnonzero(mask)
    order = np.lexsort((tiebreak[positions], -np.asarray(scores, dtype=np.float64)[positions]))
    result: list[int] = positions[order].tolist()
    return result


class HybridIndex:
    """An in-memory hybrid (BM25 + vector) index with reciprocal rank fusion.

    ``weights`` are the (BM25, vector) weights of the fusion; ``rrf_k`` its damping constant
    (60 in the original RRF paper). ``analyzer`` turns text into BM25 tokens (default
    :func:`smartctx.retrieval.analysis.analyze`). The constructor does no I/O and loads no model.
    """

    def __init__(
        self,
        *,
        embedder: RetrievalEmbedder | Embedder | None = None,
        rrf_k: int = 60,
        weights: tuple[float, float] = (1.0, 1.0),
        analyzer: Analyzer = analyze,
        k1: float = 1.2,
        b: float = 0.75,
    ) -> None:
        if rrf_k < 0:
            raise InvalidInput(f"rrf_k must be >= 0, got {rrf_k}")
        if len(weights) != 2 or min(weights) < 0:
            raise InvalidInput(f"weights must be two non-negative numbers, got {weights!r}")
        self.embedder = embedder
        self.rrf_k = rrf_k
        self.weights = (float(weights[0]), float(weights[1]))
        self.analyzer = analyzer
        self._ids: list[str] = []
        self._pos: dict[str, int] = {}
        self._texts: list[str] = []
        self._meta: list[dict[str, Any]] = []
        self._tokens: list[list[str]] = []
        self._vectors: Vector | None = None  # the first len(ids) rows of _spare
        self._spare: Vector | None = None  # rows past len(ids): room to add without a copy
        self._lexical = IncrementalBM25(k1, b)
        self._id_rank: npt.NDArray[np.int64] | None = None
        self._query_cache: dict[str, Vector] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._pos

    @property
    def ids(self) -> list[str]:
        """Document ids in storage order (the row order of :meth:`vectors`)."""
        return list(self._ids)

    def vectors(self) -> Vector:
        """A copy of the passage vectors, one row per id of :attr:`ids` (``(n, 0)`` if none)."""
        if self._vectors is None:
            return np.zeros((len(self._ids), 0), dtype=np.float32)
        return self._vectors.copy()

    def rows(self, ids: Sequence[str]) -> npt.NDArray[np.intp]:
        """The storage row of each id (-1 for an id not in the index)."""
        return np.array([self._pos.get(i, -1) for i in ids], dtype=np.intp)

    def vectors_view(self) -> Vector | None:
        """The passage vectors themselves (not a copy: do not change them); None if none."""
        return self._vectors

    def get(self, doc_id: str) -> Hit:
        """The stored document ``doc_id`` as a hit of score 0; ``KeyError`` if absent."""
        pos = self._pos[doc_id]
        return Hit(doc_id, 0.0, self._texts[pos], dict(self._meta[pos]))

    def add(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        metadata: Sequence[dict[str, Any]] | None = None,
        *,
        vectors: npt.NDArray[Any] | None = None,
    ) -> None:
        """Add (or replace) documents. ``vectors`` skips embedding (e.g. loaded from a store).

        Raises ``InvalidInput`` when lengths disagree, an id repeats within the call, or the vectors
        have the wrong shape. Metadata dicts are copied.
        """
        ids = [str(i) for i in ids]
        texts = list(texts)
        metas = [dict(m) for m in metadata] if metadata is not None else [{} for _ in ids]
        if not len(ids) == len(texts) == len(metas):
            raise InvalidInput(
                f"add needs as many ids, texts and metadata: {len(ids)}, {len(texts)}, {len(metas)}"
            )
        if len(set(ids)) != len(ids):
            raise InvalidInput("add got the same id twice in one call")
        if not ids:
            return
        new_vectors = self._vectors_for(texts, vectors)
        present = [(n, self._pos[i]) for n, i in enumerate(ids) if i in self._pos]
        if present:
            # in place: a tier key rewritten every turn must not cost a rebuild of the index
            for n, position in present:
                self._replace(position, texts[n], metas[n])
                if new_vectors is not None and self._vectors is not None:
                    self._vectors[position] = new_vectors[n]
            taken = {n for n, _ in present}
            fresh = [n for n in range(len(ids)) if n not in taken]
            ids = [ids[n] for n in fresh]
            texts = [texts[n] for n in fresh]
            metas = [metas[n] for n in fresh]
            if new_vectors is not None:
                new_vectors = new_vectors[fresh]
            if not ids:
                return
        self._ids.extend(ids)
        self._texts.extend(texts)
        self._meta.extend(metas)
        tokens = [self.analyzer(t) for t in texts]
        self._tokens.extend(tokens)
        self._lexical.add(tokens)
        for offset, doc_id in enumerate(ids):
            self._pos[doc_id] = len(self._ids) - len(ids) + offset
        if new_vectors is not None:
            self._append_vectors(new_vectors)
        self._id_rank = None

    def _append_vectors(self, rows: Vector) -> None:
        """Put ``rows`` after the present vectors. The matrix lives in a buffer that doubles when
        full, so adding a turn costs its own rows, not a copy of every vector (amortised)."""
        size = 0 if self._vectors is None else len(self._vectors)
        need = size + len(rows)
        if self._spare is None or need > len(self._spare):
            grown = np.empty((max(need, 2 * size), rows.shape[1]), dtype=np.float32)
            if self._vectors is not None:
                grown[:size] = self._vectors
            self._spare = grown
        self._spare[size:need] = rows
        self._vectors = self._spare[:need]

    def _vectors_for(self, texts: list[str], given: npt.NDArray[Any] | None) -> Vector | None:
        if given is not None:
            arr = np.asarray(given, dtype=np.float32)
            if arr.ndim != 2 or arr.shape[0] != len(texts):
                raise InvalidInput(f"vectors must be ({len(texts)}, dim), got {arr.shape}")
            if self._vectors is not None and self._vectors.shape[1] != arr.shape[1]:
                raise InvalidInput(
                    f"vectors have dim {arr.shape[1]}, the index has {self._vectors.shape[1]}"
                )
            return normalize_rows(arr)
        if self.embedder is None:
            return None
        return normalize_rows(self.embedder.embed(texts))

    def _replace(self, position: int, text: str, meta: Any) -> None:
        self._texts[position] = text
        self._meta[position] = meta
        tokens = self.analyzer(text)
        self._tokens[position] = tokens
        self._lexical.replace(position, tokens)

    def remove(self, ids: Sequence[str]) -> None:
        """Remove documents by id; unknown ids are ignored."""
        gone = {i for i in ids if i in self._pos}
        if not gone:
            return
        keep = [p for p, doc_id in enumerate(self._ids) if doc_id not in gone]
        self._ids = [self._ids[p] for p in keep]
        self._texts = [self._texts[p] for p in keep]
        self._meta = [self._meta[p] for p in keep]
        self._tokens = [self._tokens[p] for p in keep]
        self._lexical.keep(keep)
        if self._vectors is not None:
            self._vectors = self._spare = self._vectors[keep]
        self._pos = {doc_id: p for p, doc_id in enumerate(self._ids)}
        self._id_rank = None

    def id_rank(self) -> npt.NDArray[np.int64]:
        """Each document's position in id order (storage order): the deterministic tie-break."""
        if self._id_rank is None:
            self._id_rank = id_ranks(self._ids)
        return self._id_rank

    def has_term(self, term: str) -> bool:
        """Whether some document holds ``term``, a word as the analyzer gives it."""
        return self._lexical.has_term(term)

    def lexical_scores(self, query: str) -> npt.NDArray[np.float32]:
        """BM25 score of every document (storage order) for ``query``."""
        return self._lexical.scores(self.analyzer(query))

    def _embed_queries(self, queries: Sequence[str]) -> Vector:
        if self.embedder is None:
            raise InvalidInput("this index has no embedder")
        return normalize_rows(embed_queries(self.embedder, list(queries)))

    def _remember(self, query: str, vector: Vector) -> None:
        if len(self._query_cache) >= QUERY_CACHE:
            self._query_cache.pop(next(iter(self._query_cache)))
        self._query_cache[query] = vector

    def prepare_queries(self, queries: Sequence[str]) -> None:
        """Embed queries known in advance in one batch (much faster than one by one); the last
        ``QUERY_CACHE`` query vectors are kept. No-op without an embedder."""
        todo = list(dict.fromkeys(q for q in queries if q not in self._query_cache))
        if self.embedder is None or not todo:
            return
        for query, vector in zip(todo, self._embed_queries(todo), strict=True):
            self._remember(query, vector)

    def query_vector(self, query: str) -> Vector | None:
        """The query's embedding (``embed_queries`` when available); None without an embedder.

        The last ``QUERY_CACHE`` query vectors are kept, so asking again is free."""
        if self.embedder is None:
            return None
        cached = self._query_cache.get(query)
        if cached is None:
            cached = self._embed_queries([query])[0]
            self._remember(query, cached)
        return cached

    def similarity(self, query_vec: Vector) -> npt.NDArray[np.float32] | None:
        """Cosine similarity of every document (storage order) to a unit ``query_vec``."""
        if self._vectors is None or not len(self._ids):
            return None
        if query_vec.shape[-1] != self._vectors.shape[1]:
            dims = (query_vec.shape[-1], self._vectors.shape[1])
            raise InvalidInput(f"the query vector has dim {dims[0]}, the index has {dims[1]}")
        return np.asarray(self._vectors @ query_vec.reshape(-1), dtype=np.float32)

    def vector_scores(self, query: str) -> npt.NDArray[np.float32] | None:
        """Cosine similarity of every document to ``query``; None for a lexical-only index."""
        if self._vectors is None or not len(self._ids):
            return None
        query_vec = self.query_vector(query)
        return None if query_vec is None else self.similarity(query_vec)

    def fuse(
        self,
        lexical: npt.NDArray[Any] | None,
        dense: npt.NDArray[Any] | None,
        mask: Mask,
        *,
        extra: Sequence[tuple[npt.NDArray[Any], float]] = (),
        dense_share: npt.NDArray[np.float64] | None = None,
    ) -> npt.NDArray[np.float64]:
        """Reciprocal-rank-fused scores (storage order; 0 outside ``mask``).

        ``extra`` adds more (scores, weight) lists; like BM25, they rank only positive scores.
        ``dense_share``: the vector list's :meth:`share`, computed before for the same vector
        scores and ``mask`` (then ``dense`` is not read); the sum is the same to the last bit,
        since each share is added in the same order.
        """
        fused = np.zeros(len(self._ids), dtype=np.float64)
        if lexical is not None:
            fused += self.share(lexical, mask, self.weights[0], positive=True)
        if dense_share is not None:
            fused += dense_share
        elif dense is not None:
            fused += self.share(dense, mask, self.weights[1], positive=False)
        for scores, weight in extra:
            fused += self.share(scores, mask, weight, positive=True)
        return fused

    def share(
        self, scores: npt.NDArray[Any], mask: Mask, weight: float, *, positive: bool
    ) -> npt.NDArray[np.float64]:
        """One ranked list's part of :meth:`fuse`: ``weight / (rrf_k + rank)`` at the documents
        of ``mask`` (only those scoring above 0 when ``positive``), 0 elsewhere."""
        out = np.zeros(len(self._ids), dtype=np.float64)
        if weight <= 0:
            return out
        allowed = mask & (scores > 0) if positive else mask
        positions = np.flatnonzero(allowed)
        ranks = mean_ranks(-np.asarray(scores, dtype=np.float64)[positions])
        out[positions] = weight / (self.rrf_k + ranks)
        return out

    def mask(self, where: Where | None = None, among: Collection[str] | None = None) -> Mask:
        """Which documents (storage order) pass ``where`` and, if given, are in ``among``."""
        out = np.ones(len(self._ids), dtype=bool)
        if among is not None:
            out[:] = False
            out[[self._pos[i] for i in among if i in self._pos]] = True
        if where is not None:
            out &= np.array([bool(where(dict(m))) for m in self._meta], dtype=bool)
        return out

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        where: Where | None = None,
        among: Collection[str] | None = None,
    ) -> list[Hit]:
        """The at most ``k`` best documents for ``query`` that pass ``where`` (given metadata).

        ``among`` restricts the search to those ids (unknown ids are ignored). A document with
        no shared term and no vector (lexical-only index) is never returned.
        """
        if k <= 0 or not self._ids:
            return []
        mask = self.mask(where, among)
        fused = self.fuse(self.lexical_scores(query), self.vector_scores(query), mask)
        order = rank_of(fused, mask & (fused > 0), self.id_rank())[:k]
        return [
            Hit(self._ids[p], float(fused[p]), self._texts[p], dict(self._meta[p])) for p in order
        ]
