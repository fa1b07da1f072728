"""Recall indexing off the event loop: a window recalls what is indexed, a worker indexes the rest.

A served window recalls archived slots with a :class:`~smartctx.retrieval.tiered.TieredRecaller`,
whose index needs a passage embedding of every archived slot and of its tier keys. With
multilingual-e5-small (the retrieval embedder before issue 10; USE now) a 20-word turn costs tens
of milliseconds and a 400-word knowledge chunk seconds; done inside ``assemble`` it ran on the
event loop and stalled every other request. Here:

- :class:`DeferredRecaller` is the window's recaller. ``rank`` ranks only the candidates already
  indexed (with their current text) and notes the others as pending; it never embeds a passage
  (the query's embedding is the only model call left in it, shared with the knowledge-base search
  through the cache). So a slot archived *during* a turn is recallable from the next turn on.
  Tool logs are never indexed nor recalled: they are debug output (``kb.search('...') -> ids``)
  that repeats the question, and the offline responder never reads them as knowledge; before,
  they were most of what a served turn embedded for recall.
- :class:`RecallIndexer` indexes the pending slots after the turn, at most ``batch`` per turn
  (oldest first), on its own bounded pool of ``workers`` threads; the e5 engine releases the GIL,
  so the loop keeps serving meanwhile. The context's next turn waits for it while its providers
  search (:class:`RecallSettled`, a provider that returns nothing), and then indexes whatever
  of the archive is still not indexed (all of it, the first time a window is used in this
  process: restored from the store or last served by another replica; so every replica ranks
  the same archive), that is before the prompt is assembled, so a recaller is never read
  while it is written, and results are deterministic for a given sequence of turns. That
  provider then scores the recall for the turn's query on the pool too
  (:meth:`DeferredRecaller.score_ahead`: the ranking over the whole archive, the second
  hop's query embedding and the order with diversity); ``rank`` at assembly takes that order
  when its ready candidates are the ones scored, restricts those scores when they are fewer,
  else it scores them itself.
- :class:`RecallPassages` is the recall index's embedder: a vector the knowledge base already
  computed for a chunk is reused (:meth:`~smartctx.core.embed_cache.CachedEmbedder.remember`),
  other passages are cut to ``max_words`` words (the model's cost grows faster than linearly with
  length) and cached, also when a whole archive is indexed at once (in calls of at most the
  cache's ``max_batch`` texts: a larger call would pass the cache by).

Cost on the loop per turn: one pass over the candidates (a dictionary lookup each) and two
hand-offs to the pool. A reader outside a turn (the memory API's prompt view) waits for a running
indexing batch of that window (a lock), so it may block the loop for one batch.
"""

from __future__ import annotations

import asyncio
import logging
import operator
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from smartctx.agents import ContextProvider, Message, ProvidedContext
from smartctx.core.embed_cache import CachedEmbedder
from smartctx.core.embeddings import Embedder, Vector, embed_queries
from smartctx.core.slots import Slot, SlotKind
from smartctx.retrieval.tiered import TieredRecaller, TierWeights
from smartctx.service.contexts import LiveContext
from smartctx.window import ContextWindow

logger = logging.getLogger(__name__)

MAX_WORDS = 48
"""Words of a passage embedded for recall (a conversation turn is rarely longer; the rest of a
long text still counts through BM25)."""
NOT_RECALLED = frozenset({SlotKind.TOOL_LOG})
"""Kinds a served window never recalls (see the module docstring)."""
_SEQ = operator.attrgetter("seq")
BATCH = 8
"""Slots indexed after one turn at most: a turn archives two or three recallable slots; a
summary archives a run of them at once and a reloaded context all of its archive, which are then
indexed over the next turns (oldest first: the tiered index takes a conversation in order), so
no turn waits for a long batch."""


def cut(text: str, max_words: int) -> str:
    """``text`` up to its ``max_words``-th word (unchanged when shorter)."""
    words = text.split(maxsplit=max_words)
    return text if len(words) <= max_words else " ".join(words[:max_words])


class RecallPassages:
    """The recall index's embedder over ``inner`` (see the module docstring). Queries are not
    cut; passages with a vouched vector use it; others are cut to ``max_words`` words."""

    def __init__(self, inner: CachedEmbedder, *, max_words: int = MAX_WORDS) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.max_words = max_words

    def embed(self, texts: Sequence[str]) -> Vector:
        passages = [t if self.inner.known(t) is not None else cut(t, self.max_words) for t in texts]
        step = self.inner.max_batch
        if len(passages) <= step:
            return self.inner.embed(passages)
        # in calls the cache keeps: a window indexed whole (restored, or last served by another
        # replica) is not embedded again the next time
        return np.vstack(
            [self.inner.embed(passages[i : i + step]) for i in range(0, len(passages), step)]
        )

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        return embed_queries(self.inner, texts)


class DeferredRecaller:
    """A ``Recaller`` over the slots :meth:`index` has indexed (see the module docstring)."""

    def __init__(self, inner: TieredRecaller) -> None:
        self.inner = inner
        self._lock = threading.Lock()
        self._indexed: dict[str, int] = {}  # slot id -> hash of the text indexed
        self._pending: dict[str, Slot] = {}
        self._ready_slots: dict[str, Slot] = {}  # the last rank's ready candidates + indexed since
        self._memo: tuple[str, frozenset[str], dict[str, float]] | None = None
        # score_ahead's ordering of its scores for the largest k asked so far (ready slots,
        # their scores): a rank over exactly those slots takes its first k
        self._ordered: tuple[int, list[tuple[Slot, float]]] | None = None
        self._k = 0
        self.seeded = False  # whether the window's whole archive was noted once

    def _ready(self, slot: Slot) -> bool:
        return self._indexed.get(slot.id) == hash(slot.text)

    def rank(self, query: str, candidates: Sequence[Slot], k: int) -> list[tuple[Slot, float]]:
        """The at most ``k`` indexed candidates most relevant to ``query``; the others are noted
        for :meth:`take`. Scores :meth:`score_ahead` computed for the same query over the ready
        slots (a superset of the ready candidates) are used as they are: the archive's ranking,
        restricted to the candidates."""
        with self._lock:
            ready = []
            for slot in candidates:
                if slot.kind in NOT_RECALLED:
                    continue
                if self._ready(slot):
                    ready.append(slot)
                else:
                    self._pending[slot.id] = slot
            memo, self._memo = self._memo, None
            ordered, self._ordered = self._ordered, None
            self._ready_slots = by_id = {s.id: s for s in ready}
            self._k = max(self._k, k)
            if not ready or k <= 0:
                return []
            ids = by_id.keys()
            if memo is not None and memo[0] == query and ids <= memo[1]:
                if ordered is not None and len(ids) == len(memo[1]) and k <= ordered[0]:
                    # the same slots as scored ahead: the order computed there (its first k
                    # are the order for k: diversity places greedily, one place at a time)
                    return [(by_id[slot.id], score) for slot, score in ordered[1][:k]]
                # the archive's ranking restricted to the candidates (the window leaves out
                # texts it holds or repeats)
                scored = memo[2]
                if len(ids) != len(memo[1]):
                    scored = {i: v for i, v in scored.items() if i in ids}
                return self.inner.order(scored, ready, k, by_id=by_id)
            return self.inner.rank(query, ready, k)

    def score_ahead(self, query: str) -> None:
        """Score the slots the next :meth:`rank` will find ready (those of the last rank plus
        those indexed since, in conversation order) for ``query``, on a worker thread: the
        ranking, and the second hop's query embedding, and its order for the largest ``k`` a
        rank asked for (diversity included), then leave the event loop."""
        with self._lock:
            ready = sorted(self._ready_slots.values(), key=_SEQ)
            scores = self.inner.scores(query, ready) if ready and query.strip() else {}
            self._memo = (query, frozenset(s.id for s in ready), scores)
            k = self._k
            self._ordered = (
                (k, self.inner.order(scores, ready, k, by_id=self._ready_slots))
                if scores and k > 0
                else None
            )

    def note(self, slots: Sequence[Slot]) -> None:
        """Mark ``slots`` for indexing (those already indexed with this text are skipped)."""
        with self._lock:
            for slot in slots:
                if slot.kind not in NOT_RECALLED and not self._ready(slot):
                    self._pending[slot.id] = slot

    def take(self, limit: int) -> list[Slot]:
        """Remove and return at most ``limit`` pending slots, oldest (lowest seq) first: the
        tiered index takes a conversation's turns in order."""
        with self._lock:
            chosen = sorted(self._pending.values(), key=lambda s: s.seq)[:limit]
            for slot in chosen:
                del self._pending[slot.id]
            return chosen

    @property
    def pending(self) -> int:
        """How many noted slots wait for indexing."""
        return len(self._pending)

    def index(self, slots: Sequence[Slot]) -> None:
        """Index ``slots`` now (embeds; call it on a worker thread). Thread-safe."""
        with self._lock:
            self.inner.prepare(slots)
            for slot in slots:
                self._indexed[slot.id] = hash(slot.text)
                if slot.kind not in NOT_RECALLED:
                    self._ready_slots[slot.id] = slot

    prepare = index
    """The ``prepare`` of other recallers (:mod:`smartctx.service.precompute` calls it)."""


class RecallIndexer:
    """Indexes windows' pending slots on a pool of ``workers`` threads, ``batch`` per turn."""

    def __init__(self, *, workers: int = 1, batch: int = BATCH) -> None:
        self.batch = batch
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="smartctx-recall")

    def start(self, recaller: object, archived: Sequence[Slot]) -> asyncio.Future[None] | None:
        """Start indexing ``archived`` and what ``recaller`` noted as pending (at most
        ``batch``); the future to await before the window's next turn, or None when there is
        nothing to do (or the recaller is not a :class:`DeferredRecaller`)."""
        recaller = deferred_of(recaller)
        if recaller is None:
            return None
        recaller.note(archived)
        chosen = recaller.take(self.batch)
        if not chosen:
            return None
        return asyncio.get_running_loop().run_in_executor(self._pool, recaller.index, chosen)

    async def catch_up(self, recaller: DeferredRecaller, window: ContextWindow) -> None:
        """Index everything of ``window``'s archive ``recaller`` has not indexed yet, on the
        pool (awaited): the whole archive the first time a window is used in this process (a
        context restored from the store, or last served by another replica), then what the
        batches after turns left. So recall ranks the same archive whichever replica serves the
        turn; the vectors of texts this process embedded before come from its cache."""
        if not recaller.seeded:
            recaller.note(window.archived_recall_copies())
            recaller.seeded = True
        rest = recaller.take(recaller.pending)
        if rest:
            await asyncio.get_running_loop().run_in_executor(self._pool, recaller.index, rest)

    async def run(self, work: Callable[[str], None], arg: str) -> None:
        """``work(arg)`` on the pool (a failure is logged, never raised)."""
        try:
            await asyncio.get_running_loop().run_in_executor(self._pool, work, arg)
        except Exception:
            logger.exception("recall scoring ahead failed; the prompt's recall scores itself")

    @staticmethod
    async def settle(future: asyncio.Future[None] | None) -> None:
        """Wait for ``future`` (a failure is logged, never raised: recall just misses it)."""
        if future is None:
            return
        try:
            await future
        except Exception:
            logger.exception("recall indexing failed; those slots are not recallable")

    def close(self) -> None:
        """Stop the pool (queued batches are dropped)."""
        self._pool.shutdown(wait=False, cancel_futures=True)


class RecallSettled(ContextProvider):
    """A provider that adds nothing: while the real providers search, it waits for ``live``'s
    recall indexing (started after the last turn), so the prompt's recall sees a settled index,
    then scores the recall for the user's message ahead (see the module docstring)."""

    def __init__(self, indexer: RecallIndexer, live: LiveContext) -> None:
        self.indexer = indexer
        self.live = live

    @property
    def name(self) -> str:
        return "recall-index"

    async def get_relevant_context(self, messages: list[Message]) -> ProvidedContext | None:
        future, self.live.indexing = self.live.indexing, None
        await self.indexer.settle(future)
        recaller = deferred_of(self.live.window.recaller)
        if recaller is not None:
            await self.indexer.catch_up(recaller, self.live.window)
        query = next((m.text for m in reversed(messages) if m.role == "user"), "")
        if recaller is not None and query.strip():
            await self.indexer.run(recaller.score_ahead, query)
        return None

    async def on_new_messages(self, messages: list[Message]) -> None:
        """Learns nothing."""


def adopt_index(stale: LiveContext, reloaded: LiveContext) -> None:
    """Give ``reloaded`` (a context loaded again because another replica served turns of it,
    its log going on from ``stale``'s: see :attr:`ContextRegistry.continued`) the recall index
    ``stale``, this process's outdated copy, built: the next :meth:`RecallIndexer.catch_up`
    then indexes only what the other replica archived, where a new index would embed and index
    the whole archive again (every turn, when two replicas take turns on a conversation). After
    a forget the registry does not call it: the forgotten text must not stay in the index."""
    index = deferred_of(stale.window.recaller)
    if index is None or deferred_of(reloaded.window.recaller) is None:
        return
    index.seeded = False  # note the reloaded archive once: what is indexed with its text is skipped
    reloaded.window.recaller = stale.window.recaller
    reloaded.indexing = stale.indexing


def deferred_of(recaller: object) -> DeferredRecaller | None:
    """The :class:`DeferredRecaller` ``recaller`` is or wraps (through ``inner``), else None."""
    for _ in range(4):
        if isinstance(recaller, DeferredRecaller):
            return recaller
        recaller = getattr(recaller, "inner", None)
    return None


SERVED_WEIGHTS = TierWeights(hop_embed=False)
"""The tier weights of served recall: the defaults, but the second hop searches with the
question's vector instead of embedding its longer query. On LoCoMo with USE (the served recall
embedder) and lean keys, as served, that is one USE encode less per turn and recall@5/10/25/50
69.1 / 78.1 / 86.8 / 90.5 against 68.9 / 77.8 / 86.8 / 90.6 for the weights served before
(diversity 0, second query embedded); see ``docs/benchmarks.md``."""


def service_recaller(embedder: Embedder | None) -> DeferredRecaller:
    """The recaller of a served window: a lean :class:`TieredRecaller` (keys matched by BM25) over
    ``embedder``, passages through :class:`RecallPassages` when it is a ``CachedEmbedder``, with
    :data:`SERVED_WEIGHTS`."""
    chosen: Embedder | None = embedder
    if isinstance(embedder, CachedEmbedder):
        chosen = RecallPassages(embedder)
    return DeferredRecaller(TieredRecaller(embedder=chosen, weights=SERVED_WEIGHTS, lean=True))
