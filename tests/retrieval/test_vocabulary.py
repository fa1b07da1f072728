"""Vocabulary: a conversation's words embedded one by one, and the second hop's instance words."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from smartctx.core.embeddings import normalize_rows
from smartctx.core.slots import Slot, SlotKind
from smartctx.retrieval.analysis import analyze
from smartctx.retrieval.tiered import TieredRecaller, TierWeights
from smartctx.retrieval.vocabulary import Vocabulary, word_of

MUSIC = ("instruments", "violin", "clarinet", "guitar")
"""Words the fake model places in one sense (a category and its instances)."""


class Senses:
    """A fake embedder: a text's vector is the sum of its words' vectors, the words of
    :data:`MUSIC` sharing one axis and every other word its own (by a stable hash)."""

    name = "senses"
    dim = 64

    def __init__(self) -> None:
        self.texts: list[str] = []

    def _word(self, word: str) -> np.ndarray[Any, Any]:
        out = np.zeros(self.dim)
        stem = word.casefold().rstrip("s")
        if any(stem == m.rstrip("s") for m in MUSIC):
            out[0] = 1.0
        else:
            out[1 + sum(map(ord, stem)) % (self.dim - 1)] = 1.0
        return out

    def embed(self, texts: Sequence[str]) -> Any:
        self.texts += list(texts)
        rows = [sum((self._word(w) for w in text.split()), np.zeros(self.dim)) for text in texts]
        return normalize_rows(np.array(rows) + 1e-6)


def slot(i: int, speaker: str, text: str) -> Slot:
    meta: dict[str, Any] = {"speaker": speaker, "time": "2023-05-08T10:00", "session": 1}
    return Slot(SlotKind.USER, text, id=f"s{i:02d}", source_id=f"D1:{i}", metadata=meta)


def df_of(texts: Sequence[str]) -> Counter[str]:
    out: Counter[str] = Counter()
    for text in texts:
        out.update(set(analyze(text)))
    return out


def test_a_word_is_kept_case_folded_without_its_possessive_and_contractions_are_left_out() -> None:
    assert word_of("Violin's") == "violin"
    assert word_of("Guitar’s") == "guitar"
    assert word_of("Kickboxing") == "kickboxing"
    assert word_of("can't") == ""
    assert word_of("ok") == ""  # fewer than three letters


def test_one_word_per_term_no_stop_words_no_speakers_each_embedded_once() -> None:
    model = Senses()
    vocab = Vocabulary(model)
    vocab.add(["Ana plays the violins", "the violin and a guitar"], names=["Ana Lima"])
    assert len(vocab) == 3  # plays, violins (violin is the same term), guitar; no "the", no Ana
    assert model.texts == ["plays", "violins", "guitar"]
    vocab.add(["guitar again"])
    assert model.texts[-1:] == ["again"]  # only the new word is embedded


def test_nearest_words_follow_the_query_vector_within_the_rare_words() -> None:
    model = Senses()
    texts = ["I play the clarinet", "a violin concert", "groceries and laundry"] + [
        "laundry day"
    ] * 40
    vocab = Vocabulary(model)
    vocab.add(texts)
    df = df_of(texts)
    query = normalize_rows(model.embed(["What instruments"]))[0]
    near = vocab.nearest(query, 2, df, len(texts))
    assert sorted(near) == ["clarinet", "violin"]
    # a word of the question, or one asked to be left out, is never offered
    assert "violin" not in vocab.nearest(query, 2, df, len(texts), exclude=["violins?"])
    # "laundry" is in 41 of 43 turns: an everyday word is never an instance
    assert "laundry" not in vocab.nearest(query, 10, df, len(texts))
    assert vocab.nearest(None, 2, df, len(texts)) == []
    assert vocab.nearest(query, 0, df, len(texts)) == []


def test_forget_drops_the_words_no_turn_holds() -> None:
    vocab = Vocabulary(Senses())
    vocab.add(["my clarinet", "a violin"])
    vocab.forget(df_of(["a violin"]))
    assert len(vocab) == 1
    query = normalize_rows(Senses().embed(["instruments"]))[0]
    assert vocab.nearest(query, 5, df_of(["a violin"]), 1) == ["violin"]


TURNS = [
    (0, "Ana", "Weekend plans: market, laundry and then clarinet practice with the band"),
    (1, "Ben", "Work has been busy with meetings and reports all week"),
    (2, "Ana", "We cooked pasta and watched a long film together"),
    (3, "Ben", "The neighbours had a loud party until late"),
]


def test_the_second_hop_searches_with_the_conversation_words_nearest_the_question() -> None:
    slots = [slot(i, who, text) for i, who, text in TURNS]
    weights = TierWeights(hop=1.0, hop_feedback=0, hop_terms=0)
    recaller = TieredRecaller(embedder=Senses(), weights=weights)
    recaller.prepare(slots)
    question = "What instruments does Ana play?"
    assert recaller.instances(question)[:1] == ["clarinet"]
    asked: list[str] = []
    first_pass = recaller.first_pass

    def spy(query: str, candidates: Sequence[Slot], *, like: str | None = None) -> Any:
        asked.append(query)
        return first_pass(query, candidates, like=like)

    recaller.first_pass = spy  # type: ignore[method-assign]
    recaller.rank(question, slots, 2)
    assert asked[0] == question
    assert len(asked) == 2 and "clarinet" in asked[1].split()
    # off: no instance words, and the second hop has nothing to search with
    recaller.weights = replace(weights, hop_words=0)
    assert recaller.instances(question) == []


def test_lean_recall_keeps_no_vocabulary_and_forgetting_a_turn_forgets_its_words() -> None:
    slots = [slot(i, who, text) for i, who, text in TURNS]
    assert TieredRecaller(embedder=Senses(), lean=True).vocabulary is None
    recaller = TieredRecaller(embedder=Senses())
    recaller.prepare(slots)
    assert "clarinet" in recaller.instances("What instruments does Ana play?")
    recaller.forget(["s00"])
    assert "clarinet" not in recaller.instances("What instruments does Ana play?")
    df, turns = recaller.document_frequencies()
    assert turns == 3 and "clarinet" not in df


AXES = {"violin": (1.0, 0.0, 0.0, 0.0), "anything": (0.6, 0.8, 0.0, 0.0)}


class Axes:
    """A fake embedder with fixed vectors: the questions of ``BACKGROUND`` on axis 1, "violin"
    on axis 0, "anything" between them (close to every question)."""

    name = "axes"
    dim = 4

    def embed(self, texts: Sequence[str]) -> Any:
        return normalize_rows(np.array([AXES.get(t, (0.0, 1.0, 0.0, 0.0)) for t in texts]))


def test_a_word_close_to_every_question_gives_way_to_the_questions_own_instances(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from smartctx.retrieval import vocabulary

    vocab = Vocabulary(Axes())
    vocab.add(["anything violin"])
    df = df_of(["anything violin", "a", "b", "c"] + [f"filler{i}" for i in range(40)])
    question = np.array([0.8, 0.6, 0.0, 0.0], dtype=np.float32)  # shares the questions' axis
    assert vocab.nearest(question, 1, df, 44) == ["violin"]
    monkeypatch.setattr(vocabulary, "BACKGROUND_WEIGHT", 0.0)
    assert vocab.nearest(question, 1, df, 44) == ["anything"]  # without the contrast
