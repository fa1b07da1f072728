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

    def __len__(self) -> int:
        return len(self._docs)

    def add(self, docs: Sequence[list[str]]) -> None:
        """Append documents (token lists) after the present ones."""
        for tokens in docs:
            position = len(self._docs)
            counts = Counter(tokens)
            self._docs.append(counts)
            self._lengths.append(len(tokens))
            self._length_array = None
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
            positions, tfs = self._postings.setdefault(term, ([], []))
            positions.append(position)
            tfs.append(tf)

    def keep(self, positions: Sequence[int]) -> None:
        """Keep only the documents at ``positions`` (ascending), renumbered from 0."""
        docs = [self._docs[p] for p in positions]
        self._docs, self._lengths, self._total, self._postings = [], [], 0, {}
        self._length_array = None
        self.add([list(counts.elements()) for counts in docs])

    def scores(self, query_tokens: Sequence[str]) -> npt.NDArray[np.float32]:
        """The BM25 score of every document (storage order) for the query tokens."""
        n = len(self._docs)
        out = np.zeros(n, dtype=np.float32)
        if n == 0 or self._total == 0:
            return out
        if self._length_array is None:
            self._length_array = np.asarray(self._lengths, dtype=np.float64)
        lengths = self._length_array
        average = self._total / n
        for term in query_tokens:
            posting = self._postings.get(term)
            if posting is None:
                continue
            positions = np.asarray(posting[0], dtype=np.intp)
            tf = np.asarray(posting[1], dtype=np.float64)
            df = len(posting[0])
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            norm = self.k1 * (1 - self.b + self.b * lengths[positions] / average)
            out[positions] += (idf * tf / (tf + norm)).astype(np.float32)
        return out
