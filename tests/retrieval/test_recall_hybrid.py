"""HybridRecaller: the Recaller the window uses to bring archived slots back."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from smartctx.core import EventKind, HashingEmbedder, InvalidInput, Recaller, Slot, SlotKind
from smartctx.core.tokens import WhitespaceCounter
from smartctx.retrieval import HybridRecaller, RecallFilter, slot_key
from smartctx.window import ContextWindow


class CountingEmbedder(HashingEmbedder):
    """Counts the passages it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.passages = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:  # type: ignore[override]
        self.passages += len(texts)
        return super().embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:  # type: ignore[override]
        return super().embed(texts)


def turn(text: str, speaker: str, seq: int, time: str = "", **meta: str) -> Slot:
    return Slot(
        SlotKind.USER,
        text,
        id=f"t{seq}",
        seq=seq,
        source_id=f"D1:{seq}",
        metadata={"speaker": speaker, "time": time, **meta},
    )


TURNS = [
    turn("I adopted a puppy last week, his name is Rex.", "Ana", 1, "2023-05-01"),
    turn("That's lovely! I went hiking in the Alps.", "Ben", 2, "2023-05-01"),
    turn("My sister is moving to Lisbon next month.", "Ana", 3, "2023-06-10"),
    turn("I finally finished painting the kitchen.", "Ben", 4, "2023-06-10"),
]


def test_is_a_recaller_and_ranks_the_relevant_turn_first() -> None:
    recaller = HybridRecaller(embedder=HashingEmbedder())
    assert isinstance(recaller, Recaller)
    ranked = recaller.rank("What is the name of Ana's puppy?", TURNS, 2)
    assert ranked[0][0].id == "t1"
    assert len(ranked) <= 2
    assert ranked[0][1] >= ranked[-1][1]


def test_deterministic_and_does_not_mutate_candidates() -> None:
    before = [s.to_dict() for s in TURNS]
    a = HybridRecaller(embedder=HashingEmbedder()).rank("hiking Alps", TURNS, 4)
    b = HybridRecaller(embedder=HashingEmbedder()).rank("hiking Alps", list(reversed(TURNS)), 4)
    assert [(s.id, round(x, 9)) for s, x in a] == [(s.id, round(x, 9)) for s, x in b]
    assert [s.to_dict() for s in TURNS] == before
    assert HybridRecaller().rank("hiking", TURNS, 0) == []
    assert HybridRecaller().rank("   ", TURNS, 3) == []


def test_speaker_is_part_of_the_key() -> None:
    assert slot_key(TURNS[0]).startswith("Ana: ")
    lexical = HybridRecaller()  # BM25 only
    ranked = lexical.rank("What did Ben do?", TURNS, 4)
    assert {s.metadata["speaker"] for s, _ in ranked} == {"Ben"}


def test_vectors_are_cached_by_slot_id() -> None:
    embedder = CountingEmbedder()
    recaller = HybridRecaller(embedder=embedder, context_weight=0.0)
    recaller.rank("puppy", TURNS, 2)
    assert embedder.passages == 4
    recaller.rank("kitchen", TURNS, 2)
    assert embedder.passages == 4
    extra = turn("We watched the puppy play in the garden.", "Ben", 5)
    recaller.rank("puppy", [*TURNS, extra], 2)
    assert embedder.passages == 5
    recaller.forget(["t5"])
    recaller.rank("puppy", [*TURNS, extra], 2)
    assert embedder.passages == 6


def test_changed_text_under_the_same_id_is_reindexed() -> None:
    recaller = HybridRecaller()
    recaller.rank("puppy", TURNS, 1)
    changed = TURNS[0].copy(text="We talked about astronomy.")
    assert recaller.rank("puppy", [changed, *TURNS[1:]], 4) == []
    assert recaller.rank("astronomy", [changed, *TURNS[1:]], 1)[0][0].id == "t1"


def test_speaker_and_time_filters() -> None:
    recaller = HybridRecaller(embedder=HashingEmbedder())
    only_ben = recaller.filtered(speaker="Ben")
    assert {s.metadata["speaker"] for s, _ in only_ben.rank("puppy hiking", TURNS, 4)} == {"Ben"}
    june = recaller.filtered(since="2023-06-01")
    assert {s.id for s, _ in june.rank("sister painting puppy", TURNS, 4)} <= {"t3", "t4"}
    may = recaller.filtered(until="2023-05-31")
    assert {s.id for s, _ in may.rank("sister painting puppy", TURNS, 4)} <= {"t1", "t2"}
    assert not RecallFilter(since="2023").allows(turn("no time", "Ana", 9))
    assert recaller.filter == RecallFilter()  # the original is unchanged


def test_recency_weight_prefers_newer_among_equals() -> None:
    same = [turn("We talked about the weather.", "Ana", i) for i in (1, 2, 3)]
    ranked = HybridRecaller(recency_weight=1.0).rank("weather", same, 3)
    assert [s.id for s, _ in ranked] == ["t3", "t2", "t1"]
    with pytest.raises(InvalidInput):
        HybridRecaller(recency_weight=-1)


def test_context_lets_an_answer_be_found_through_its_question() -> None:
    question = turn("Where is your sister moving?", "Ben", 1)
    answer = turn("Lisbon, next month!", "Ana", 2, context="Where is your sister moving?")
    other = turn("Lisbon has great food.", "Ben", 3)
    ranked = HybridRecaller(context_weight=0.5).rank(
        "Which city is the sister moving to?", [question, answer, other], 3
    )
    assert "t2" in [s.id for s, _ in ranked]
    blind = HybridRecaller(context_weight=0.0).rank(
        "Which city is the sister moving to?", [question, answer, other], 3
    )
    assert "t2" not in [s.id for s, _ in blind]


def test_window_recalls_through_it() -> None:
    recaller = HybridRecaller(embedder=HashingEmbedder())
    window = ContextWindow(100, counter=WhitespaceCounter(), recaller=recaller, recall_ratio=0.5)
    for i in range(2):
        window.add(Slot(SlotKind.USER, f"message number {i} about lunch plans today"))
    earlier = [
        Slot(SlotKind.USER, "the vpn gateway is vpn.example.org port 443", source_id="D1:1"),
        Slot(SlotKind.USER, "my favourite colour is green", source_id="D1:2"),
    ]
    prompt = window.assemble("what is the vpn gateway address", extra=earlier)
    assert prompt.recalled[0].source_id == "D1:1"
    assert any(e.kind is EventKind.RECALLED for e in prompt.events)
    assert "vpn.example.org" in prompt.text


def test_best_takes_the_k_highest_ties_by_id_without_sorting_them_all() -> None:
    from smartctx.retrieval.recall import best

    slots = [Slot(SlotKind.USER, f"turn {i}", id=f"t{i:03d}") for i in range(200)]
    rng = np.random.default_rng(5)
    scored = {s.id: float(v) for s, v in zip(slots, np.round(rng.random(200), 1), strict=True)}
    expected = sorted(scored, key=lambda i: (-scored[i], i))
    by_id = {s.id: s for s in slots}
    for k in (0, 1, 7, 30, 200, 250):
        ranked = best(scored, slots, k)
        assert [s.id for s, _ in ranked] == expected[:k]
        assert best(scored, slots, k, by_id=by_id) == ranked
        assert all(scored[s.id] == v for s, v in ranked)
