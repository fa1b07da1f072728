"""Summarizers: turn a run of old conversation into one short text.

``Summarizer`` is the protocol (synchronous, so the engine stays pure); an LLM summarizer plugs in
by implementing it. ``ExtractiveSummarizer`` is the offline default: it splits the texts into
sentences, scores each by similarity to the centroid of all sentences, and picks sentences with
maximal marginal relevance (MMR) until the token target is reached, keeping their original order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from smartctx.core.embeddings import Embedder, HashingEmbedder
from smartctx.core.tokens import TokenCounter

SUMMARY_PREFIX = "Summary of earlier conversation: "

# A sentence ends at . ! ? followed by white space, at CJK full stops, or at a line break.
_BOUNDARY = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*|\n+")


@runtime_checkable
class Summarizer(Protocol):
    """Summarises texts (oldest first) into one text of at most about ``target_tokens`` tokens.

    Must be deterministic for the same input and must not mutate ``texts``.
    """

    def summarize(self, texts: list[str], target_tokens: int) -> str: ...


def split_sentences(texts: Sequence[str]) -> list[str]:
    """Sentences of ``texts`` in order, stripped, empty ones and exact repeats removed."""
    return list(sentence_counts(texts))


def sentence_counts(texts: Sequence[str]) -> dict[str, int]:
    """Each distinct sentence of ``texts`` (first-occurrence order) with how often it occurs."""
    counts: dict[str, int] = {}
    for text in texts:
        for part in _BOUNDARY.split(text):
            sentence = part.strip()
            if sentence:
                counts[sentence] = counts.get(sentence, 0) + 1
    return counts


class ExtractiveSummarizer:
    """Centroid + MMR sentence selection to a token target; offline and deterministic.

    ``embedder`` scores sentences (a lexical ``HashingEmbedder`` when None); ``counter`` measures
    the target. ``diversity`` (0..1) weighs redundancy against centrality in MMR. The result always
    starts with ``prefix`` and holds at least one (possibly shortened) sentence.
    """

    def __init__(
        self,
        counter: TokenCounter,
        *,
        embedder: Embedder | None = None,
        prefix: str = SUMMARY_PREFIX,
        diversity: float = 0.3,
    ) -> None:
        self.counter = counter
        self.embedder: Embedder = embedder if embedder is not None else HashingEmbedder()
        self.prefix = prefix
        self.diversity = diversity

    def summarize(self, texts: list[str], target_tokens: int) -> str:
        counts = sentence_counts(texts)
        sentences = list(counts)
        if not sentences:
            return self.prefix.strip()
        budget = max(1, target_tokens - self.counter.count(self.prefix))
        costs = [self.counter.count(s) + 1 for s in sentences]
        weights = np.asarray([counts[s] for s in sentences], dtype=np.float32)
        chosen = self._select(sentences, weights, costs, budget)
        if not chosen:
            return self.prefix + self._shorten(sentences[0], budget)
        return self.prefix + " ".join(sentences[i] for i in sorted(chosen))

    def _select(
        self, sentences: list[str], weights: npt.NDArray[np.float32], costs: list[int], budget: int
    ) -> list[int]:
        vectors = self.embedder.embed(sentences)
        centroid = (vectors * weights[:, None]).sum(axis=0)
        norm = float(np.linalg.norm(centroid))
        relevance = vectors @ (centroid / norm) if norm > 0 else np.zeros(len(sentences))
        chosen: list[int] = []
        redundancy = np.zeros(len(sentences), dtype=np.float32)
        available = np.ones(len(sentences), dtype=bool)
        spent = 0
        while True:
            fits = available & (np.asarray(costs) <= budget - spent)
            if not fits.any():
                return chosen
            score = (1 - self.diversity) * relevance - self.diversity * redundancy
            score = np.where(fits, score, -np.inf)
            best = int(np.argmax(score))
            chosen.append(best)
            spent += costs[best]
            available[best] = False
            redundancy = np.maximum(redundancy, vectors @ vectors[best])

    def _shorten(self, sentence: str, budget: int) -> str:
        words = sentence.split()
        lo, hi = 1, len(words)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.counter.count(" ".join(words[:mid])) <= budget:
                lo = mid
            else:
                hi = mid - 1
        return " ".join(words[:lo]) + " ..."
