"""Recall indexing off the loop: a window recalls what is indexed; a worker indexes the rest."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Sequence

import numpy as np
import pytest

from smartctx.core import HashingEmbedder, get_counter
from smartctx.core.embed_cache import CachedEmbedder
from smartctx.core.embeddings import Vector
from smartctx.core.slots import Slot, SlotKind
from smartctx.retrieval.tiered import TieredRecaller
from smartctx.service.recall_index import (
    DeferredRecaller,
    RecallIndexer,
    RecallPassages,
    cut,
    service_recaller,
)
from smartctx.window import ContextWindow


class _Recording(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.passages: list[str] = []
        self.threads: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vector:
        self.passages += list(texts)
        self.threads.append(threading.current_thread().name)
        return super().embed(texts)


def _turn(text: str, seq: int, kind: SlotKind = SlotKind.USER) -> Slot:
    slot = Slot(kind, text)
    slot.seq = seq
    return slot


def test_rank_sees_only_indexed_slots_and_notes_the_rest() -> None:
    inner = _Recording()
    recaller = DeferredRecaller(TieredRecaller(embedder=inner, lean=True))
    locker = _turn("My locker code is 4711 at the gym.", 1)
    boots = _turn("I bought new hiking boots in Denver.", 2)
    log = _turn("kb.search('locker code') -> (no results)", 3, SlotKind.TOOL_LOG)
    assert recaller.rank("what is my locker code?", [locker, boots, log], 3) == []
    assert inner.passages == []  # ranking never embeds a passage
    assert recaller.pending == 2  # the tool log is never indexed
    batch = recaller.take(1)
    assert batch == [locker]  # oldest first (a conversation is indexed in order)
    recaller.index(batch)
    ranked = recaller.rank("where did I buy boots?", [locker, boots, log], 3)
    assert [s.id for s, _ in ranked] == [locker.id]  # the only one indexed so far
    recaller.index(recaller.take(8))
    ranked = recaller.rank("where did I buy boots?", [locker, boots, log], 3)
    assert ranked[0][0].id == boots.id
    assert recaller.pending == 0


def test_a_slot_whose_text_changed_waits_to_be_indexed_again() -> None:
    recaller = DeferredRecaller(TieredRecaller(embedder=HashingEmbedder(), lean=True))
    slot = _turn("The meeting is on Monday.", 1)
    recaller.index([slot])
    changed = slot.copy(text="The meeting moved to Tuesday.")
    assert recaller.rank("when is the meeting?", [changed], 1) == []
    assert recaller.take(8) == [changed]


def test_the_indexer_indexes_on_its_pool_and_the_next_rank_finds_it() -> None:
    inner = _Recording()
    recaller = DeferredRecaller(TieredRecaller(embedder=inner, lean=True))
    indexer = RecallIndexer(batch=2)
    slots = [_turn(f"note {i}: the parcel code is {1000 + i}", i) for i in range(3)]

    async def turn() -> None:
        assert indexer.start(object(), slots) is None  # not a deferred recaller: nothing to do
        future = indexer.start(recaller, slots)
        await RecallIndexer.settle(future)
        assert recaller.pending == 1  # at most ``batch`` per turn, oldest first
        await RecallIndexer.settle(indexer.start(recaller, []))
        assert indexer.start(recaller, slots) is None  # all indexed: nothing left

    asyncio.run(turn())
    indexer.close()
    assert inner.threads and all(t.startswith("smartctx-recall") for t in inner.threads)
    assert recaller.rank("parcel code 1002", slots, 1)[0][0].id == slots[2].id


def test_a_failed_indexing_is_logged_never_raised(caplog: pytest.LogCaptureFixture) -> None:
    async def fail() -> None:
        raise RuntimeError("model crashed")

    async def turn() -> None:
        await RecallIndexer.settle(asyncio.ensure_future(fail()))
        await RecallIndexer.settle(None)

    with caplog.at_level(logging.ERROR):
        asyncio.run(turn())
    assert "recall indexing failed" in caplog.text


def test_passages_reuse_vouched_vectors_and_are_cut_queries_are_not() -> None:
    inner = _Recording()
    cached = CachedEmbedder(inner)
    chunk = " ".join(f"word{i}" for i in range(300))
    vouched = np.ones(inner.dim, dtype=np.float32) / np.sqrt(inner.dim)
    cached.remember([chunk], [vouched])
    passages = RecallPassages(cached, max_words=5)
    out = passages.embed([chunk, "one two three four five six seven"])
    assert np.array_equal(out[0], vouched)
    assert inner.passages == ["one two three four five"]
    query = "one two three four five six seven"
    assert np.array_equal(passages.embed_queries([query]), HashingEmbedder().embed([query]))
    assert (passages.name, passages.dim) == (inner.name, inner.dim)


def test_cut_keeps_the_first_words() -> None:
    assert cut("a b  c", 5) == "a b  c"
    assert cut("a b c d", 2) == "a b"
    assert cut("", 3) == ""


def test_service_recaller_wraps_a_cached_embedder_in_recall_passages() -> None:
    cached = CachedEmbedder(HashingEmbedder())
    assert isinstance(service_recaller(cached).inner.turns.index.embedder, RecallPassages)
    plain = HashingEmbedder()
    assert service_recaller(plain).inner.turns.index.embedder is plain
    # lean: the tier keys are matched by BM25 alone
    assert service_recaller(plain).inner.keys.embedder is None


def test_a_window_recalls_after_the_turn_that_archived_the_slot() -> None:
    recaller = DeferredRecaller(TieredRecaller(embedder=HashingEmbedder(), lean=True))
    window = ContextWindow(160, counter=get_counter(), recaller=recaller, recall_ratio=0.5)
    events = list(window.add(Slot(SlotKind.USER, "My locker code is 4711 at the gym.")).events)
    for i in range(12):
        events += window.add(Slot(SlotKind.AGENT, f"Reply {i} about the weather today.")).events
    first = window.assemble("what is my locker code?")
    assert "4711" not in first.text  # archived in this turn: not recallable yet
    indexer = RecallIndexer(batch=64)

    async def after_turn() -> None:
        await RecallIndexer.settle(indexer.start(recaller, []))

    asyncio.run(after_turn())
    indexer.close()
    second = window.assemble("what is my locker code?")
    assert "4711" in second.text


def _count_scores(inner: TieredRecaller) -> list[str]:
    """Record each query ``inner.scores`` computes (the list fills as it is called)."""
    calls: list[str] = []
    scores = inner.scores

    def counted(query: str, candidates: Sequence[Slot]) -> dict[str, float]:
        calls.append(query)
        return scores(query, candidates)

    inner.scores = counted  # type: ignore[method-assign]
    return calls


def test_scores_computed_ahead_are_used_for_the_same_query_and_candidates() -> None:
    inner = TieredRecaller(embedder=HashingEmbedder(), lean=True)
    recaller = DeferredRecaller(inner)
    slots = [_turn(f"note {i}: the parcel code is {1000 + i}", i) for i in range(4)]
    recaller.index(slots[:3])
    expected = DeferredRecaller(inner).inner.rank("parcel code 1001", slots[:3], 2)
    calls = _count_scores(inner)
    recaller.score_ahead("parcel code 1001")
    assert calls == ["parcel code 1001"]
    ranked = recaller.rank("parcel code 1001", slots, 2)  # slots[3] is pending: not a candidate
    assert calls == ["parcel code 1001"]  # used as computed ahead
    assert [(s.id, v) for s, v in ranked] == [(s.id, v) for s, v in expected]
    recaller.score_ahead("parcel code 1002")
    recaller.index([slots[3]])  # the ready candidates changed: rank scores them itself
    recaller.rank("parcel code 1002", slots, 2)
    assert calls == ["parcel code 1001", "parcel code 1002", "parcel code 1002"]


def test_scores_ahead_serve_a_rank_over_fewer_candidates_restricted_to_them() -> None:
    inner = TieredRecaller(embedder=HashingEmbedder(), lean=True)
    recaller = DeferredRecaller(inner)
    slots = [_turn(f"note {i}: the parcel code is {1000 + i}", i) for i in range(4)]
    recaller.index(slots)
    recaller.rank("parcel code", slots, 4)  # the ready set the next score_ahead scores
    calls = _count_scores(inner)
    recaller.score_ahead("parcel code 1002")
    # the window leaves out a text it holds: the archive's ranking, restricted to the rest
    ranked = recaller.rank("parcel code 1002", slots[1:], 3)
    assert calls == ["parcel code 1002"]
    assert {s.id for s, _ in ranked} <= {s.id for s in slots[1:]} and ranked


def test_a_rank_over_the_slots_scored_ahead_takes_the_order_computed_there() -> None:
    inner = TieredRecaller(embedder=HashingEmbedder(), lean=True)
    assert inner.weights.diversity > 0  # the order re-places for diversity: not only a sort
    recaller = DeferredRecaller(inner)
    topics = ("parcel", "locker", "boots", "train", "dentist", "rent")
    slots = [_turn(f"note {i}: the {topics[i % 6]} code is {1000 + i % 7}", i) for i in range(40)]
    recaller.index(slots)
    recaller.rank("locker code", slots, 12)  # the largest k asked so far: 12
    for query, k in (("parcel code 1003", 12), ("the locker and the boots", 7)):
        expected = inner.rank(query, slots, k)
        recaller.score_ahead(query)
        orders: list[int] = []
        order = inner.order

        def counted(
            *args: object, _order: object = order, _orders: list[int] = orders, **kwargs: object
        ) -> object:
            _orders.append(1)
            return _order(*args, **kwargs)  # type: ignore[operator]

        inner.order = counted  # type: ignore[assignment,method-assign]
        ranked = recaller.rank(query, slots, k)
        del inner.order
        assert orders == []  # ordered ahead, on the worker
        assert [(s.id, v) for s, v in ranked] == [(s.id, v) for s, v in expected]
        assert all(a is b for (a, _), b in zip(ranked, [s for s, _ in expected], strict=True))
    # a rank asking for more than was ordered ahead orders the scores itself, the same way
    recaller.score_ahead("rent code")
    assert [s.id for s, _ in recaller.rank("rent code", slots, 20)] == [
        s.id for s, _ in inner.rank("rent code", slots, 20)
    ]


def test_served_recall_uses_the_default_weights_but_embeds_no_second_hop_query() -> None:
    from smartctx.core import HashingEmbedder
    from smartctx.retrieval.tiered import TierWeights
    from smartctx.service.recall_index import service_recaller

    weights = service_recaller(HashingEmbedder()).inner.weights
    # diversity counts closeness above the pool's mean cosine, so one weight fits every embedder
    assert weights.diversity == TierWeights().diversity > 0
    assert weights.hop_embed is False and TierWeights().hop_embed is True
