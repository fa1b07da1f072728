"""A replica keeps its recall index when another replica serves turns of the same context.

Two replicas taking turns on one conversation reload the context on every turn. Before, each
reload built a new recall index: the whole archive was embedded (in one call larger than the
embedding cache keeps) and indexed again, every turn, so a turn's cost grew with the
conversation (264 ms of CPU per turn at 220 turns, against 25 ms on one server).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

import pytest

from smartctx.core import HashingEmbedder, get_counter
from smartctx.core.embed_cache import CachedEmbedder
from smartctx.core.embeddings import Vector
from smartctx.core.settings import Settings
from smartctx.core.slots import Event, Slot, SlotKind
from smartctx.retrieval.kb import KnowledgeBase
from smartctx.retrieval.tiered import TieredRecaller
from smartctx.service.client import SmartctxClient
from smartctx.service.contexts import LiveContext
from smartctx.service.recall_index import DeferredRecaller, RecallPassages, adopt_index
from smartctx.service.server import ServerHandle, serve
from smartctx.window import ContextWindow


class _Recording(HashingEmbedder):
    """A hashing embedder that records every text it embeds (any thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Vector:
        with self._lock:
            self.texts += list(texts)
        return super().embed(texts)


def test_a_whole_archive_embedded_at_once_is_cached() -> None:
    inner = _Recording()
    passages = RecallPassages(CachedEmbedder(inner, max_batch=4))
    texts = [f"archived turn {i} about the quarterly report" for i in range(10)]
    first = passages.embed(texts)
    again = passages.embed(texts)
    assert len(inner.texts) == 10  # once each, though one call held more than max_batch texts
    assert first.shape == (10, inner.dim) and (first == again).all()
    assert (first == HashingEmbedder().embed(texts)).all()


def _window(log: Sequence[Slot] = (), events: Sequence[Event] = ()) -> ContextWindow:
    recaller = DeferredRecaller(TieredRecaller(embedder=HashingEmbedder(), lean=True))
    options = {"counter": get_counter(), "recaller": recaller, "recall_ratio": 0.5}
    if not log:
        return ContextWindow(160, **options)  # type: ignore[arg-type]
    return ContextWindow.restore(log, events, 160, **options)


def _live(window: ContextWindow) -> LiveContext:
    return LiveContext("o", "c", "default", window, 1, datetime.now(UTC))


def test_a_reloaded_context_takes_over_the_recall_index() -> None:
    old = _window()
    for i in range(12):
        old.add(Slot(SlotKind.AGENT, f"Reply {i} about the weather today."))
    index = old.recaller
    # another replica served a turn: this process reloads the stored log, which goes on
    other = _window(old.log, old.events)
    other.add(Slot(SlotKind.USER, "My locker code is 4711."))
    reloaded = _live(_window(other.log, other.events))
    stale = _live(old)
    loop = asyncio.new_event_loop()
    stale.indexing = loop.create_future()
    loop.close()
    index.seeded = True  # type: ignore[union-attr]
    adopt_index(stale, reloaded)
    assert reloaded.window.recaller is index
    assert not index.seeded  # type: ignore[union-attr]  # the catch-up notes the archive again
    assert reloaded.indexing is stale.indexing


@pytest.fixture(params=[220])
def replicas(
    request: pytest.FixtureRequest, db_url: str, hashing_kb: KnowledgeBase
) -> Iterator[list[ServerHandle]]:
    """Two servers on one database (windows of ``request.param`` tokens: a small one fills
    the archive in a few turns)."""
    settings = Settings(database_url=db_url, budget=request.param)
    started = [
        serve(
            settings, host="127.0.0.1", port=0, embedder=HashingEmbedder(), kb=hashing_kb, hooks=[]
        )
        for _ in range(2)
    ]
    yield started
    for handle in started:
        handle.stop()


async def test_alternating_replicas_do_not_index_the_archive_again(
    replicas: list[ServerHandle], monkeypatch: pytest.MonkeyPatch
) -> None:
    indexed: list[str] = []  # texts put into a recall index, by either server
    index = DeferredRecaller.index

    def recorded(self: DeferredRecaller, slots: Sequence[Slot]) -> None:
        indexed.extend(s.text for s in slots)
        index(self, slots)

    monkeypatch.setattr(DeferredRecaller, "index", recorded)
    a, b = replicas
    first = "Turn zero: the quarterly report is due on the ninth of May."
    on_a, on_b = SmartctxClient(a.url, owner="ana"), SmartctxClient(b.url, owner="ana")
    async with on_a, on_b:
        sent = await on_a.send(first, context_id="alternating")
        assert sent.state == "completed", sent.text
        for turn in range(1, 11):
            answer = await (on_b if turn % 2 else on_a).send(
                f"Turn {turn}: the printer on floor {turn} jams again.", context_id="alternating"
            )
            assert answer.state == "completed", answer.text
        snapshot = await on_a.snapshot("alternating")
    assert first not in {s["text"] for s in snapshot["slots"]}  # archived: recall indexed it
    # once by each server; before, by each server again on each of its turns after the archiving
    assert indexed.count(first) == 2, indexed.count(first)


@pytest.mark.parametrize("replicas", [4096], indirect=True)
async def test_a_follow_up_on_the_other_replica_reads_the_exchange_before_it(
    replicas: list[ServerHandle],
) -> None:
    # A holds the context from the first turn; B answers the question; A gets the follow-up and
    # must read B's exchange (its copy caught up, its recent history carried over)
    a, b = replicas
    on_a, on_b = SmartctxClient(a.url, owner="ana"), SmartctxClient(b.url, owner="ana")
    async with on_a, on_b:
        await on_a.send("Hello, I have a travel question.", context_id="trip")
        first = await on_b.send("What is the hotel limit in London?", context_id="trip")
        follow_up = await on_a.send("and in Paris?", context_id="trip")
        # the same on one server
        await on_a.send("Hello, I have a travel question.", context_id="alone")
        await on_a.send("What is the hotel limit in London?", context_id="alone")
        alone = await on_a.send("and in Paris?", context_id="alone")
    assert "USD 180" in first.text
    assert "USD 180" in alone.text and follow_up.text == alone.text


def test_a_reloaded_context_carries_the_recent_history_on_with_the_new_turns() -> None:
    from smartctx.agents import Message
    from smartctx.service.executor import HISTORY_KEPT, carry_history, history_of

    old = _window()
    for i in range(HISTORY_KEPT):
        old.add(Slot(SlotKind.USER if i % 2 == 0 else SlotKind.AGENT, f"Message {i} here."))
    stale = _live(old)
    stale.history = history_of(stale)[-HISTORY_KEPT:]
    stale.turns = HISTORY_KEPT // 2
    other = _window(old.log, old.events)  # another replica's turn
    other.add(Slot(SlotKind.USER, "What is the hotel limit in London?"))
    other.add(Slot(SlotKind.TOOL_LOG, "kb.search('hotel') -> ids"))
    other.add(Slot(SlotKind.AGENT, "Hotels: up to USD 180 per night."))
    reloaded = _live(_window(other.log, other.events))
    carry_history(stale, reloaded)
    whole = history_of(reloaded)
    assert reloaded.history == whole[-HISTORY_KEPT:]  # what a full read would keep
    assert reloaded.turns == sum(1 for m in whole if m.role == "user")
    assert isinstance(reloaded.history[-1], Message)
    assert reloaded.history[-1].text == "Hotels: up to USD 180 per night."


async def test_a_message_one_replica_embedded_is_not_embedded_again_by_the_other(
    db_url: str, hashing_kb: KnowledgeBase
) -> None:
    # each server with its own embedding cache over its own model; turns alternate, so each
    # indexes for recall the messages the other one served (its vectors travel with the slots)
    settings = Settings(database_url=db_url, budget=220)
    models = [_Recording(), _Recording()]
    started = [
        serve(
            settings,
            host="127.0.0.1",
            port=0,
            embedder=CachedEmbedder(model),
            kb=hashing_kb,
            hooks=[],
        )
        for model in models
    ]
    try:
        a, b = started
        on_a, on_b = SmartctxClient(a.url, owner="ana"), SmartctxClient(b.url, owner="ana")
        sent = [f"Turn {t}: the printer on floor {t} jams again, ticket {t}7." for t in range(8)]
        async with on_a, on_b:
            for turn, text in enumerate(sent):
                answer = await (on_b if turn % 2 else on_a).send(text, context_id="alternating")
                assert answer.state == "completed", answer.text
    finally:
        for handle in started:
            handle.stop()
    by_a, by_b = set(models[0].texts), set(models[1].texts)
    assert {t for t in sent[:-2] if t in by_a or t in by_b} == set(sent[:-2])  # recall indexed
    # none by both, from the second turn on (the first turn's save comes before anything
    # embedded its message: no vector is stored then, and none is computed for the store)
    assert not {t for t in sent[1:] if t in by_a and t in by_b}
