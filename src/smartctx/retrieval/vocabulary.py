"""The words of a conversation, embedded one by one, so a question can bring its own instances.

A question that names a category ("What instruments does Melanie play?", "What European
countries has Maria been to?", "What martial arts has John done?") shares no word with the turns
that answer it ("I play clarinet", "my solo trip to Spain", "I'm doing kickboxing"), and a small
embedder ranks such turns by their whole text, where the one word that matters weighs little.
Word by word it does better: the conversation's words nearest to the question's vector are its
instances (violin, piano, guitar, clarinet for the instruments). :meth:`Vocabulary.nearest` gives
them; the second hop (:mod:`smartctx.retrieval.multihop`) searches with them beside the names and
feedback words of the first hits. Contract:

- a word is a run of letters (with inner apostrophes and hyphens), case-folded, a possessive
  "'s" cut off; words with another apostrophe ("can't"), of fewer than three letters, that
  analyse to nothing (stop words) or to more than one term, or that are a speaker's name, are
  left out;
- one word stands for each analysed term (the first form seen: "guitar" for "guitars"), so
  forms of one word never fill the list;
- each word is embedded once, as a passage, when it is first seen (:meth:`add`, one batch per
  call); a word is offered only while it occurs in at most :data:`MAX_SHARE` of the turns (the
  caller's document frequencies), so a conversation's everyday words never pass for instances;
- a word is scored by its closeness to the question less :data:`BACKGROUND_WEIGHT` times its
  closeness to the questions of :data:`BACKGROUND` (their mean vector): questions that name
  nothing. Words close to every question ("myself", "anything", "why", "nope") are not any
  question's instances; without the contrast they fill the list ("Where did Caroline move from 4
  years ago?" got "before", "recently", "below", "already"; with it "city", "sweden",
  "country");
- :meth:`forget` drops the words whose term no turn holds any more (a forgotten turn leaves no
  word behind);
- :meth:`nearest` costs one matrix-vector product over the words (the background's share of each
  word is computed once, the background embedded once per vocabulary); ties keep the order in
  which the words were first seen.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from smartctx.core.embeddings import Embedder, RetrievalEmbedder, embed_queries, normalize_rows
from smartctx.retrieval.analysis import analyze

MAX_SHARE = 0.05
"""A word is offered while it occurs in at most this share of the turns (at least 2 turns)."""
MIN_LETTERS = 3
BACKGROUND = (
    "What is it?",
    "What did they do?",
    "Where is it?",
    "Who is it?",
    "How was it?",
    "Why did they do it?",
    "What does he like?",
    "What has she done?",
)
"""Questions that name nothing: their mean query vector is the direction every question shares."""
BACKGROUND_WEIGHT = 1.0
"""How much a word's closeness to :data:`BACKGROUND` is taken from its closeness to a question."""
_WORD = re.compile(r"[^\W\d_](?:[\w'’-]*[^\W\d_])?")


def word_of(token: str) -> str:
    """``token`` as the vocabulary keeps it: case-folded, "’" as "'", a possessive "'s" cut
    off; "" for a word the vocabulary leaves out for its form ("can't", "one-")."""
    word = token.casefold().replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    if "'" in word or len(word) < MIN_LETTERS:
        return ""
    return word


class Vocabulary:
    """A conversation's words with their vectors (see the module doc)."""

    def __init__(self, embedder: RetrievalEmbedder | Embedder) -> None:
        self.embedder = embedder
        self._words: list[str] = []
        self._terms: list[str] = []
        self._known: set[str] = set()  # analysed terms already standing in the list
        self._vectors: npt.NDArray[np.float32] = np.zeros((0, embedder.dim), dtype=np.float32)
        self._background: npt.NDArray[np.float32] | None = None  # the BACKGROUND direction
        self._common: npt.NDArray[np.float32] = np.zeros(0, dtype=np.float32)  # words . background

    def __len__(self) -> int:
        return len(self._words)

    def add(self, texts: Iterable[str], names: Iterable[str] = ()) -> None:
        """Embed the words of ``texts`` not seen before, the ``names`` (speakers) left out."""
        left_out = {word_of(part) for name in names for part in name.split()}
        fresh: list[tuple[str, str]] = []
        for text in texts:
            for token in _WORD.findall(text):
                word = word_of(token)
                if not word or word in left_out:
                    continue
                terms = analyze(word)
                if len(terms) != 1 or terms[0] in self._known:
                    continue
                self._known.add(terms[0])
                fresh.append((word, terms[0]))
        if not fresh:
            return
        vectors = normalize_rows(self.embedder.embed([w for w, _ in fresh])).astype(np.float32)
        self._words += [w for w, _ in fresh]
        self._terms += [t for _, t in fresh]
        self._vectors = np.vstack([self._vectors, vectors])

    def nearest(
        self,
        vector: npt.NDArray[np.floating] | None,
        limit: int,
        df: Counter[str],
        turns: int,
        exclude: Iterable[str] = (),
    ) -> list[str]:
        """The at most ``limit`` words nearest to ``vector`` (a unit query vector) whose term
        occurs in 1 to max(2, :data:`MAX_SHARE` x ``turns``) turns (``df`` counts turns per
        analysed term), words whose term is among ``exclude``'s terms left out."""
        if vector is None or limit <= 0 or not self._words:
            return []
        cap = max(2, math.floor(MAX_SHARE * turns))
        skip = {t for text in exclude for t in analyze(text)}
        counts = np.array([df.get(t, 0) for t in self._terms])
        allowed = (counts >= 1) & (counts <= cap)
        allowed &= np.array([t not in skip for t in self._terms], dtype=bool)
        if not allowed.any():
            return []
        scores = self._vectors @ np.asarray(vector, dtype=np.float32).reshape(-1)
        if BACKGROUND_WEIGHT > 0:
            scores = scores - BACKGROUND_WEIGHT * self._closeness_to_background()
        rows = np.flatnonzero(allowed)
        best = rows[np.argsort(-scores[rows], kind="stable")[:limit]]
        return [self._words[r] for r in best.tolist()]

    def _closeness_to_background(self) -> npt.NDArray[np.float32]:
        """Each word's closeness to the :data:`BACKGROUND` direction (new words computed)."""
        if self._background is None:
            rows = normalize_rows(embed_queries(self.embedder, list(BACKGROUND)))
            mean = rows.mean(axis=0)
            self._background = (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)
        done = len(self._common)
        if done < len(self._words):
            fresh = self._vectors[done:] @ self._background
            self._common = np.concatenate([self._common, fresh.astype(np.float32)])
        return self._common

    def forget(self, df: Counter[str]) -> None:
        """Drop the words whose term no turn holds (``df`` counts turns per analysed term)."""
        kept = [i for i, term in enumerate(self._terms) if df.get(term, 0) > 0]
        if len(kept) == len(self._terms):
            return
        self._words = [self._words[i] for i in kept]
        self._terms = [self._terms[i] for i in kept]
        self._known = set(self._terms)
        self._vectors = self._vectors[kept]
        self._common = self._common[[i for i in kept if i < len(self._common)]]
