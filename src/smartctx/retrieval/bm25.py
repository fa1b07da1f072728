"""BM25 that grows one document at a time (Lucene variant, the scores of ``bm25s``'s default).

``HybridIndex`` used to rebuild a ``bm25s`` index from every document after each change: on the
turn path (one memory item added, then a search) that cost grew with the owner's whole history
(half a second at 10,000 items). This index keeps per-term postings, document frequencies and
document lengths, so:

- ``add`` costs the new documents' tokens; ``replace`` the postings of one document's terms;
  ``remove`` (forgetting, rare) rebuilds the postings;
- ``scores`` costs the postings of the query's terms, never a scan of every document.

Scores equal ``bm25s.BM25(method="lucene")``'s: for each query token (repeats count again)
``idf(t) * tf / (tf + k1 * (1 - b + b * len(d) / avg_len))`` with
``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``, per-term values in float32 summed in query
order. Documents are addressed by position (the caller's storage order).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt


class IncrementalBM25:
    """Postings per term: parallel lists of document positions and term frequencies."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._docs: list[Counter[str]] = []
        self._lengths: list[int] = []
        self._total = 0
        self._postings: dict[str, tuple[list[int], list[int]]] = {}
        self._length_array: npt.NDArray[np.float64] | None = None
        # per term, its postings as arrays (positions, tfs) as of the last query that read
        # them: documents are appended, so a later query converts only the new tail
        self._arrays: dict[str, tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]] = {}

    def __len__(self) -> int:
        return len(self._docs)

    def has_term(self, term: str) -> bool:
        """Whether some document holds the analysed word ``term``."""
        return term in self._postings

    def add(self, docs: Sequence[list[str]]) -> None:
        """Append documents (token lists) after the present ones."""
        for tokens in docs:
            position = len(self._docs)
            counts = Counter(tokens)
            self._docs.append(counts)
            self._lengths.append(len(tokens))
            self._total += len(tokens)
            for term, tf in counts.items():
                positions, tfs = self._postings.setdefault(term, ([], []))
                positions.append(position)
                tfs.append(tf)

    def replace(self, position: int, tokens: list[str]) -> None:
        """Put ``tokens`` in place of the document at ``position`` (others keep theirs): costs
        the postings of the old and new document's terms, not a rebuild."""
        old = self._docs[position]
        for term in old:
            self._arrays.pop(term, None)
            positions, tfs = self._postings[term]
            at = positions.index(position)
            del positions[at], tfs[at]
            if not positions:
                del self._postings[term]
        counts = Counter(tokens)
        self._docs[position] = counts
        self._total += len(tokens) - self._lengths[position]
        self._lengths[position] = len(tokens)
        self._length_array = None
        for term, tf in counts.items():
            self._arrays.pop(term, None)
            positions, tfs = self._postings.setdefault(term, ([], []))
            positions.append(position)
            tfs.append(tf)

    def keep(self, positions: Sequence[int]) -> None:
        """Keep only the documents at ``positions`` (ascending), renumbered from 0."""
        docs = [self._docs[p] for p in positions]
        self._docs, self._lengths, self._total, self._postings = [], [], 0, {}
        self._length_array = None
        self._arrays = {}
        self.add([list(counts.elements()) for counts in docs])

    def scores(self, query_tokens: Sequence[str]) -> npt.NDArray[np.float32]:
        """The BM25 score of every document (storage order) for the query tokens."""
        n = len(self._docs)
        out = np.zeros(n, dtype=np.float32)
        if n == 0 or self._total == 0:
            return out
        lengths = self._lengths_now()
        average = self._total / n
        for term in query_tokens:
            posting = self._postings.get(term)
            if posting is None:
                continue
            positions, tf = self._posting_arrays(term, posting)
            df = len(posting[0])
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            norm = self.k1 * (1 - self.b + self.b * lengths[positions] / average)
            out[positions] += (idf * tf / (tf + norm)).astype(np.float32)
        return out

    def _lengths_now(self) -> npt.NDArray[np.float64]:
        """Document lengths as an array, extended by the documents added since last time."""
        have = self._length_array
        if have is None or len(have) > len(self._lengths):
            have = np.asarray(self._lengths, dtype=np.float64)
        elif len(have) < len(self._lengths):
            tail = np.asarray(self._lengths[len(have) :], dtype=np.float64)
            have = np.concatenate([have, tail])
        self._length_array = have
        return have

    def _posting_arrays(
        self, term: str, posting: tuple[list[int], list[int]]
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]:
        """``term``'s postings as arrays: cached, extended by the positions appended since."""
        cached = self._arrays.get(term)
        size = len(posting[0])
        if cached is None or len(cached[0]) > size:
            cached = (
                np.asarray(posting[0], dtype=np.intp),
                np.asarray(posting[1], dtype=np.float64),
            )
        elif len(cached[0]) < size:
            have = len(cached[0])
            cached = (
                np.concatenate([cached[0], np.asarray(posting[0][have:], dtype=np.intp)]),
                np.concatenate([cached[1], np.asarray(posting[1][have:], dtype=np.float64)]),
            )
        self._arrays[term] = cached
        return cached
