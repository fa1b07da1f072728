"""Model work of a turn, done ahead on a bounded worker pool instead of on the event loop.

The window (deduplication), the recaller and the knowledge base embed synchronously when a turn
runs. :class:`TurnPrecompute` computes the vectors they will ask for: the user text's passage
vectors (similarity and retrieval embedders) and query vector before the turn, the vectors of
the slots providers return (:class:`PrecomputingProvider`) before they enter, the reply's
after the model answered, and the recall index of the slots a turn
archived (after the turn, still under the context's lock), on a pool of ``workers`` threads,
into the :class:`~smartctx.core.embed_cache.CachedEmbedder` caches those components read. The loop
then only looks vectors up, so other requests keep being served while a turn's models run, and
at most ``workers`` model calls run at once (each with ``SMARTCTX_EMBED_THREADS`` threads).

Cost on the loop per turn: two executor hand-offs. If the pool is busy, a turn waits for it in
order (the pool queue); the vectors are the same either way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from smartctx.agents import ContextProvider, Message, ProvidedContext
from smartctx.core.embed_cache import CachedEmbedder
from smartctx.core.slots import Event, EventKind, Slot
from smartctx.window import ContextWindow

_ARCHIVING = frozenset({EventKind.DROPPED, EventKind.SUMMARIZED, EventKind.EVICTED})


class TurnPrecompute:
    """Fills the embedding caches of a turn on a worker pool (see the module docstring)."""

    def __init__(
        self,
        similarity: CachedEmbedder | None,
        retrieval: CachedEmbedder | None,
        *,
        workers: int = 2,
    ) -> None:
        self.similarity = similarity
        self.retrieval = retrieval
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="smartctx-embed")

    def _user(self, text: str) -> None:
        self._passages([text])
        if self.retrieval is not None:
            self.retrieval.embed_queries([text])

    def _passages(self, texts: list[str], recall: bool = True) -> None:
        for text in texts:
            if self.similarity is not None:
                self.similarity.embed([text])
            if recall and self.retrieval is not None:
                self.retrieval.embed([text])

    async def user_text(self, text: str) -> None:
        """Compute the user text's vectors (before the turn takes the context's lock)."""
        await asyncio.get_running_loop().run_in_executor(self._pool, self._user, text)

    async def reply(self, text: str) -> None:
        """Compute the reply's vectors (before the reply enters the window)."""
        if text.strip():
            await asyncio.get_running_loop().run_in_executor(self._pool, self._passages, [text])

    async def slots(self, slots: Sequence[Slot]) -> None:
        """Compute the similarity vectors of slots about to enter a window. Not their recall
        vectors: provider slots (knowledge chunks of hundreds of tokens) are mostly refused as
        duplicates or dropped unsearched, and a long chunk costs e5 seconds."""
        texts = [s.text for s in slots if s.text.strip()]
        if texts:
            await asyncio.get_running_loop().run_in_executor(
                self._pool, self._passages, texts, False
            )

    async def archived(self, window: ContextWindow, events: Sequence[Event]) -> None:
        """Index the slots this turn archived in the window's recaller (its passage embeddings),
        so the next turn's recall does not embed them on the loop. Call it while holding the
        context's lock: the recaller belongs to that one window."""
        prepare = getattr(window.recaller, "prepare", None)
        ids = [e.slot_id for e in events if e.kind in _ARCHIVING]
        if prepare is None or not ids:
            return
        slots = [window.get(i) for i in dict.fromkeys(ids)]
        await asyncio.get_running_loop().run_in_executor(self._pool, prepare, slots)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class PrecomputingProvider(ContextProvider):
    """A provider whose slots have their vectors computed on the pool before they are returned
    (so the window adding them finds the vectors cached). Otherwise it is ``inner``."""

    def __init__(self, inner: ContextProvider, precompute: TurnPrecompute) -> None:
        self.inner = inner
        self.precompute = precompute

    @property
    def name(self) -> str:
        return self.inner.name

    async def get_relevant_context(self, messages: list[Message]) -> ProvidedContext | None:
        result = await self.inner.get_relevant_context(messages)
        if isinstance(result, ProvidedContext) and result.slots:
            await self.precompute.slots(result.slots)
        return result

    async def on_new_messages(self, messages: list[Message]) -> None:
        await self.inner.on_new_messages(messages)

    async def clear(self) -> None:
        await self.inner.clear()
