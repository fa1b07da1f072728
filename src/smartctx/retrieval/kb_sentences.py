"""The cross-lingual bridge of the knowledge base: a question matched sentence by sentence.

A chunk embedded whole is a blurred average of its sentences; a short question in another
language ("Wie viele Urlaubstage habe ich?") then sits as close to an unrelated English chunk
as to the right one. Matched against single sentences and list items with a similarity
embedder trained across languages (USE multilingual), the right sentence stands out ("Full-time
employees have 25 days of paid annual leave ..." scores about 0.35, an off-topic question's
best sentence about 0.2 on the shipped corpus).

:class:`SentenceBridge` keeps the vectors of every sentence of the indexed chunks and returns,
per chunk, the best sentence's cosine with a query. Cost: sentences are embedded once per
chunk (in one batch when documents change); a query costs one embedding and one matrix-vector
product over the corpus' sentences. Not thread-safe by itself: the knowledge base calls it under
its lock.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from smartctx.core.embeddings import Embedder, Vector
from smartctx.retrieval.chunking import Chunk

_BREAK = re.compile(r"\n\s*\n|\n\s*(?=[-*+]\s|\d+[.)]\s)")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=\S)")
_MARKUP = re.compile(r"^\s*(?:#+|[-*+]|\d+[.)]|>)\s*|\*\*|__|`")
MIN_WORDS = 4
"""Sentences shorter than this many words ("How to submit a claim:") are not matched alone:
short fragments sit close to every question."""


def chunk_sentences(text: str) -> list[str]:
    """Sentences and list items of a chunk body, markup removed, fragments dropped."""
    out: list[str] = []
    for block in _BREAK.split(text):
        joined = " ".join(line.strip() for line in block.strip().splitlines())
        for piece in _SENTENCE.split(_MARKUP.sub("", joined)):
            clean = _MARKUP.sub("", piece).strip()
            if len(clean.split()) >= MIN_WORDS:
                out.append(clean)
    return out


class SentenceBridge:
    """Per-chunk best-sentence similarity for a query (see the module docstring)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._vectors: dict[str, Vector] = {}
        self._ids: list[str] = []
        self._matrix: Vector = np.zeros((0, 0), dtype=np.float32)
        self._owners: npt.NDArray[np.intp] = np.zeros(0, dtype=np.intp)

    def sync(self, ids: Sequence[str], chunks: Sequence[Chunk]) -> None:
        """Index exactly ``chunks`` (whose source ids are ``ids``, the order of every score
        array); sentences of chunks not seen before are embedded in one batch."""
        if list(ids) == self._ids:
            return
        fresh = [c for c in chunks if c.source_id not in self._vectors]
        pieces = [(c.source_id, s) for c in fresh for s in chunk_sentences(c.text)]
        if pieces:
            vectors = np.asarray(self.embedder.embed([s for _, s in pieces]), dtype=np.float32)
            for source_id in {p[0] for p in pieces}:
                rows = [i for i, p in enumerate(pieces) if p[0] == source_id]
                self._vectors[source_id] = vectors[rows]
        self._vectors = {c.source_id: self._vectors.get(c.source_id, _EMPTY) for c in chunks}
        self._ids = list(ids)
        blocks = [self._vectors[i] for i in self._ids]
        dim = next((b.shape[1] for b in blocks if b.size), 0)
        self._matrix = (
            np.vstack([b for b in blocks if b.size]) if dim else np.zeros((0, 0), np.float32)
        )
        self._owners = np.repeat(np.arange(len(blocks)), [len(b) for b in blocks])

    def scores(self, query: str) -> Vector:
        """The best sentence cosine of every chunk (``-1`` for a chunk without sentences)."""
        out = np.full(len(self._ids), -1.0, dtype=np.float32)
        if len(self._owners):
            query_vec = np.asarray(self.embedder.embed([query]), dtype=np.float32)[0]
            np.maximum.at(out, self._owners, self._matrix @ query_vec)
        return out


_EMPTY: Vector = np.zeros((0, 0), dtype=np.float32)
