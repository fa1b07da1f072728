"""TurnPrecompute: a turn's vectors are computed on the worker pool, then found cached."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import ClassVar

from smartctx.core import HashingEmbedder
from smartctx.core.embed_cache import CachedEmbedder
from smartctx.core.embeddings import Vector
from smartctx.service.precompute import TurnPrecompute


class _Threads(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.threads: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vector:
        self.threads.append(threading.current_thread().name)
        return super().embed(texts)


class _AsymmetricThreads(_Threads):
    """Like e5: a query vector differs from the passage vector of the same text."""

    symmetric = False


def test_user_text_and_reply_are_embedded_off_the_loop_once() -> None:
    similarity, retrieval = _Threads(), _AsymmetricThreads()
    sim, ret = CachedEmbedder(similarity), CachedEmbedder(retrieval)
    pre = TurnPrecompute(sim, ret)

    async def turn() -> None:
        await pre.user_text("where is the VPN guide?")
        await pre.reply("It is on the intranet.")
        await pre.reply("   ")

    asyncio.run(turn())
    pre.close()
    assert all(name.startswith("smartctx-embed") for name in similarity.threads + retrieval.threads)
    # similarity: user text, reply; retrieval: the user text as query and as passage, the reply
    assert len(similarity.threads) == 2 and len(retrieval.threads) == 3
    # what the window and the recaller ask for on the loop is now a cache hit
    sim.embed(["where is the VPN guide?"])
    sim.embed(["It is on the intranet."])
    ret.embed_queries(["where is the VPN guide?"])
    ret.embed(["where is the VPN guide?", "It is on the intranet."])
    assert len(similarity.threads) == 2 and len(retrieval.threads) == 3


def test_provider_slots_are_embedded_before_they_are_returned() -> None:
    from smartctx.agents import ContextProvider, Message, ProvidedContext
    from smartctx.core.slots import Slot, SlotKind
    from smartctx.service.precompute import PrecomputingProvider

    class Docs(ContextProvider):
        seen: ClassVar[list[list[Message]]] = []

        async def get_relevant_context(self, messages: list[Message]) -> ProvidedContext | None:
            return ProvidedContext(slots=[Slot(SlotKind.RAG_DOC, "VPN: install the client.")])

        async def on_new_messages(self, messages: list[Message]) -> None:
            self.seen.append(messages)

    similarity = _Threads()
    sim = CachedEmbedder(similarity)
    pre = TurnPrecompute(sim, None)
    wrapped = PrecomputingProvider(Docs(), pre)

    async def turn() -> ProvidedContext | None:
        found = await wrapped.get_relevant_context([Message("user", "vpn?")])
        await wrapped.on_new_messages([Message("user", "vpn?")])
        return found

    found = asyncio.run(turn())
    pre.close()
    assert wrapped.name == "Docs" and found is not None and len(Docs.seen) == 1
    assert similarity.threads[0].startswith("smartctx-embed")
    sim.embed(["VPN: install the client."])
    assert len(similarity.threads) == 1


def test_archived_slots_are_indexed_and_the_next_victims_warmed() -> None:
    from smartctx.core import get_counter
    from smartctx.core.slots import Slot, SlotKind
    from smartctx.retrieval.recall import HybridRecaller
    from smartctx.window import ContextWindow

    retrieval = _Threads()
    ret = CachedEmbedder(retrieval)
    window = ContextWindow(
        120, counter=get_counter(), embedder=None, recaller=HybridRecaller(embedder=ret)
    )
    events = []
    for i in range(20):
        text = f"reply number {i} about the office desk"
        events += window.add(Slot(SlotKind.AGENT, text)).events
    gone = {"evicted", "summarized", "dropped"}
    archived = {e.slot_id for e in events if e.kind.value in gone}
    assert archived
    pre = TurnPrecompute(None, ret)
    asyncio.run(pre.archived(window, events))
    pre.close(wait=True)
    index = window.recaller.index  # type: ignore[union-attr]
    assert archived <= set(index.ids)
    calls = len(retrieval.threads)
    oldest_active = min(window.active, key=lambda s: s.seq)
    ret.embed([oldest_active.text])  # warmed: no new model call
    assert len(retrieval.threads) == calls
    assert all(name.startswith("smartctx-embed") for name in retrieval.threads)
