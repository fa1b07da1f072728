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

NEXT_VICTIMS = 3
"""Active slots per turn whose recall vectors are computed ahead (see ``_next_victims``)."""
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
        recaller = window.recaller
        prepare = getattr(recaller, "prepare", None)
        if prepare is None:
            return
        ids = dict.fromkeys(e.slot_id for e in events if e.kind in _ARCHIVING)
        archived = window.recall_copies(window.get(i) for i in ids)
        if archived:
            await asyncio.get_running_loop().run_in_executor(self._pool, prepare, archived)
        keys = self._next_victims(window)
        if keys:
            # Only fills the thread-safe cache: it need not hold the turn (or the lock) up.
            self._pool.submit(self._warm, keys)

    def _next_victims(self, window: ContextWindow) -> list[str]:
        """Search keys of the active slots the funnel archives next (lowest priority, oldest
        first), not yet in the recall index: warming the cache with them lets the next turn's
        recall find their vectors when its own adds archive them."""
        recaller = window.recaller
        key = getattr(recaller, "key", None)
        index = getattr(recaller, "index", None)
        if key is None or index is None or self.retrieval is None:
            return []
        unpinned = [s for s in window.active if not s.pinned and s.id not in index]
        unpinned.sort(key=lambda s: (s.effective_priority, s.seq))
        return [str(key(s)) for s in unpinned[:NEXT_VICTIMS]]

    def _warm(self, keys: list[str]) -> None:
        for key in keys:
            if self.retrieval is not None and key.strip():
                self.retrieval.embed([key])

    def close(self, *, wait: bool = False) -> None:
        """Stop the pool; ``wait`` lets queued work finish first."""
        self._pool.shutdown(wait=wait, cancel_futures=not wait)


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
