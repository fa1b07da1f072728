"""Summarisers for the compaction tiers.

A summary here is a list of :class:`Sentence` (text plus the pair ids it came from), so that a
revert can drop exactly what rested on a pair. ``ExtractiveSummarizer`` is the offline default:
it selects sentences by similarity to the centroid with maximal marginal relevance (MMR), using
the deterministic ``HashingEmbedder`` (no model load), in original order. ``ModelSummarizer``
wraps an injected async ``summarize(texts) -> str`` (the chat model, when one is configured);
its single output sentence rests on every input pair.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from smartctx.core.embeddings import Embedder, HashingEmbedder

SummarizeFn = Callable[[list[str]], Awaitable[str]]
"""An async chat-model summariser: texts in, one summary out."""

_SPLIT = re.compile(r"(?<=[.!?。])\s+|\n+")


@dataclass(frozen=True, slots=True)
class Sentence:
    """One summary sentence and the pair ids it rests on."""

    text: str
    pair_ids: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "pair_ids": list(self.pair_ids)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Sentence:
        return cls(str(data["text"]), tuple(str(p) for p in data.get("pair_ids") or ()))


def render(sentences: Sequence[Sentence]) -> str:
    """The summary text: the sentences joined by a space."""
    return " ".join(s.text for s in sentences)


class Summarizer(Protocol):
    """Reduces sentences to at most ``limit`` sentences; pure in what it returns."""

    async def summarize(self, sentences: Sequence[Sentence], limit: int) -> list[Sentence]: ...


def split_sentences(text: str, pair_ids: Sequence[str]) -> list[Sentence]:
    """``text`` cut into sentences, each attributed to ``pair_ids``."""
    parts = [p.strip() for p in _SPLIT.split(text) if p and p.strip()]
    return [Sentence(p, tuple(pair_ids)) for p in parts]


class ExtractiveSummarizer:
    """Centroid + MMR sentence selection; deterministic, offline. Duplicates are merged first
    (their pair ids united), so a request repeated five times is one sentence resting on five
    pairs."""

    def __init__(self, *, embedder: Embedder | None = None, diversity: float = 0.3) -> None:
        self.embedder = embedder or HashingEmbedder()
        self.diversity = diversity

    async def summarize(self, sentences: Sequence[Sentence], limit: int) -> list[Sentence]:
        merged: dict[str, Sentence] = {}
        for s in sentences:
            key = " ".join(s.text.casefold().split())
            if key in merged:
                old = merged[key]
                ids = old.pair_ids + tuple(p for p in s.pair_ids if p not in old.pair_ids)
                merged[key] = Sentence(old.text, ids)
            else:
                merged[key] = s
        unique = list(merged.values())
        if len(unique) <= limit:
            return unique
        vectors = self.embedder.embed([s.text for s in unique])
        weights = np.array([len(s.pair_ids) or 1 for s in unique], dtype=np.float32)
        centroid = (vectors * weights[:, None]).sum(axis=0)
        norm = float(np.linalg.norm(centroid)) or 1.0
        relevance = vectors @ (centroid / norm)
        chosen: list[int] = []
        while len(chosen) < limit:
            best, best_score = -1, -np.inf
            for i in range(len(unique)):
                if i in chosen:
                    continue
                redundancy = max((float(vectors[i] @ vectors[j]) for j in chosen), default=0.0)
                score = (1 - self.diversity) * float(relevance[i]) - self.diversity * redundancy
                if score > best_score:
                    best, best_score = i, score
            chosen.append(best)
        return [unique[i] for i in sorted(chosen)]


class ModelSummarizer:
    """A chat-model summariser: one output sentence resting on every input pair."""

    def __init__(self, fn: SummarizeFn) -> None:
        self.fn = fn

    async def summarize(self, sentences: Sequence[Sentence], limit: int) -> list[Sentence]:
        if not sentences:
            return []
        text = (await self.fn([s.text for s in sentences])).strip()
        ids: list[str] = []
        for s in sentences:
            ids += [p for p in s.pair_ids if p not in ids]
        return [Sentence(text, tuple(ids))] if text else []


__all__ = [
    "ExtractiveSummarizer",
    "ModelSummarizer",
    "Sentence",
    "SummarizeFn",
    "Summarizer",
    "render",
    "split_sentences",
]
