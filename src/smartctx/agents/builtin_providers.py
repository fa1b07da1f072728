"""Built-in providers: the knowledge base (RAG) and the user's confirmed profile.

Long-term memory lives in :mod:`smartctx.agents.memory_provider`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from smartctx.agents.providers import ContextProvider, Message, ProvidedContext
from smartctx.agents.relevance import contextual_query, has_own_topic, thread_topic
from smartctx.agents.text import asks_how, numbered_units, reports_a_problem
from smartctx.core import InvalidInput, Slot, SlotKind
from smartctx.core.slots import DEFAULT_PRIORITY

if TYPE_CHECKING:
    from smartctx.agents.relevance import RelevanceGate
    from smartctx.memory import PersonalMemory


@runtime_checkable
class KnowledgeHit(Protocol):
    """What a knowledge-base hit must offer (``smartctx.retrieval.kb.KBHit`` does). A hit may
    also name its section (``heading``, a path "Document > Section"), which leads in a chunk
    that opens with a list (:func:`with_lead_in`)."""

    @property
    def source_id(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def score(self) -> float: ...


class KnowledgeSearch(Protocol):
    """A searchable knowledge base (``smartctx.retrieval.kb.KnowledgeBase`` is one).

    ``search`` is synchronous and returns at most ``k`` relevant hits, best first, ``[]`` when
    nothing is relevant.
    """

    def search(self, query: str, k: int = ...) -> Sequence[KnowledgeHit]: ...


RANK_STEP = 0.01
"""Priority a knowledge hit loses per place in the ranking (below the kind's default)."""


class KnowledgeProvider(ContextProvider):
    """Retrieves knowledge-base chunks for the last user message.

    Returns the at most ``k`` hits as ``rag_doc`` slots (text = the chunk, source id = the
    chunk's id, e.g. ``kb:vpn.md#1``, ``metadata["score"]``; priority the kind's default less
    :data:`RANK_STEP` per place, so a budget too small for all keeps the best) plus one
    ``tool_log`` slot recording the call (``kb.search('how do I connect to the VPN') ->
    kb:vpn.md#1, kb:vpn.md#2``; ``-> (no results)`` when nothing is relevant, then no ``rag_doc``
    slot). A follow-up that names no topic word ("And who do I tell about it?") is searched
    together with the user message before it, and so is a short one that finds nothing alone
    ("and in Paris?", see :func:`~smartctx.agents.relevance.contextual_query`). The search runs
    in a worker thread (it embeds the query), so it does not block the event loop. Stores
    nothing.
    """

    def __init__(self, kb: KnowledgeSearch, k: int = 2, *, query_chars: int = 80) -> None:
        if k < 0:
            raise InvalidInput(f"k must be >= 0, got {k}")
        self.kb = kb
        self.k = k
        self.query_chars = query_chars

    @property
    def name(self) -> str:
        return "kb"

    async def get_relevant_context(self, messages: list[Message]) -> ProvidedContext | None:
        asked = [m.text for m in messages if m.role == "user"]
        query = asked[-1] if asked else ""
        if not query.strip() or self.k == 0:
            return None
        searched = query
        previous = thread_topic(asked[:-1])
        if previous is not None and not has_own_topic(query):
            # a follow-up that names nothing ("And who do I tell about it?", "Who should I
            # contact?") searches for the thread's topic, not for its phrasing
            searched = f"{previous}\n{query}"
        hits = await asyncio.to_thread(self._search, searched, query)
        if not hits and searched == query:
            # a short follow-up whose name no document holds ("and in Paris?" after the London
            # hotel limit) is read with the exchange it follows
            contextual = contextual_query(query, previous)
            if contextual.endswith(f"\n{query}"):
                searched = contextual
                hits = await asyncio.to_thread(self._search, searched, query)
        slots = [
            Slot(
                SlotKind.RAG_DOC,
                with_lead_in(hit.text, str(getattr(hit, "heading", "") or "")),
                # best first: when the budget holds only some, the best-ranked survive (equal
                # priorities evicted the first admitted, the best, first)
                priority=DEFAULT_PRIORITY[SlotKind.RAG_DOC] - RANK_STEP * rank,
                source_id=hit.source_id,
                metadata={"score": round(float(hit.score), 6), "provider": self.name},
            )
            for rank, hit in enumerate(hits)
        ]
        shown = searched.replace("\n", " / ")
        shown = shown if len(shown) <= self.query_chars else shown[: self.query_chars - 1] + "…"
        found = ", ".join(hit.source_id for hit in hits) or "(no results)"
        log = Slot(
            SlotKind.TOOL_LOG,
            f"kb.search({shown!r}) -> {found}",
            source_id="kb.search",
            metadata={"query": searched, "results": [hit.source_id for hit in hits]},
        )
        return ProvidedContext(slots=[*slots, log])

    def _search(self, searched: str, query: str) -> list[KnowledgeHit]:
        """The at most ``k`` hits for ``searched``; for a question that asks how to do something
        (``query``), with the procedure it asks for (:func:`prefer_procedure`)."""
        how = asks_how(query) and not reports_a_problem(query)
        hits = list(self.kb.search(searched, self.k + (PROCEDURE_POOL if how else 0)))
        return prefer_procedure(hits, self.k) if how else hits[: self.k]

    async def on_new_messages(self, messages: list[Message]) -> None:
        """The knowledge base learns nothing from conversations."""


PROCEDURE_POOL = 2
"""Hits past ``k`` in which a how-to question looks for a procedure (:func:`prefer_procedure`)."""
PROCEDURE_TIE = 0.05
"""How far (relative) below the ``k``-th hit's score a procedure may rank and still take its
place: a near-tie, not a weaker passage."""


def is_procedure(text: str) -> bool:
    """True for a passage that holds numbered steps: two or more items of an ordered list, as
    the responder reads them (:func:`~smartctx.agents.text.numbered_units`)."""
    return sum(number is not None for _, number in numbered_units(text)) >= 2


def prefer_procedure(hits: Sequence[KnowledgeHit], k: int) -> list[KnowledgeHit]:
    """The first ``k`` of ``hits`` (best first) for a question that asks how to do something:
    when none of them holds numbered steps and a later hit that does scores within
    :data:`PROCEDURE_TIE` of the ``k``-th, it takes the ``k``-th's place. Passages that rank
    alike (a question in another language matches every passage of a topic about as well)
    are then decided by what the question asks for, a procedure."""
    top = list(hits[:k])
    if not top or any(is_procedure(hit.text) for hit in top):
        return top
    floor = top[-1].score * (1 - PROCEDURE_TIE)
    for hit in hits[k:]:
        if hit.score >= floor and is_procedure(hit.text):
            return [*top[:-1], hit]
    return top


_OPENS_LIST = re.compile(r"\s*(?:\d{1,2}[.)]|[-*+])\s")


def with_lead_in(text: str, heading: str) -> str:
    """``text`` of a chunk that opens with a list, led in by its section's title ("Resetting a
    forgotten password:" before "1. Go to ..."): a list alone does not say what it is for, and
    a lead-in ending with a colon is context, never an answer. Other chunks are unchanged."""
    title = heading.rsplit(" > ", 1)[-1].strip()
    if not title or not _OPENS_LIST.match(text):
        return text
    return f"{title.rstrip(':')}:\n{text}"


@runtime_checkable
class ProfileSource(Protocol):
    """Where confirmed profile items come from (the personal-memory tier).

    ``confirmed_items(owner)`` returns ``(key, value, source_id)`` triples of the owner's
    *confirmed* items only (candidates, rejected and reverted items are never returned);
    ``source_id`` names the item for provenance (e.g. ``profile:<item id>``).
    """

    async def confirmed_items(self, owner: str) -> list[tuple[str, str, str]]: ...


class StaticProfileSource:
    """A fixed ``{owner: [(key, value, source_id)]}`` profile (tests, demos, fixtures)."""

    def __init__(self, items: dict[str, list[tuple[str, str, str]]]) -> None:
        self._items = {owner: list(rows) for owner, rows in items.items()}

    async def confirmed_items(self, owner: str) -> list[tuple[str, str, str]]:
        return list(self._items.get(owner, []))


class PersonalMemoryProfileSource:
    """The confirmed profile items of :class:`smartctx.memory.PersonalMemory` as a
    :class:`ProfileSource`: ``(key, value, "profile:<item id>")``, most confident first."""

    def __init__(self, memory: PersonalMemory) -> None:
        self.memory = memory

    async def confirmed_items(self, owner: str) -> list[tuple[str, str, str]]:
        items = await self.memory.confirmed_profile(owner)
        return [(str(i["key"]), str(i["value"]), f"profile:{i['id']}") for i in items]


class ProfileProvider(ContextProvider):
    """The owner's confirmed profile items as ``memory`` slots, on every turn.

    One slot per item, text ``"<key>: <value>"`` (underscores in keys become spaces), source id
    from the item, in the order the source gives, at most ``limit``; with a ``gate`` only the
    items relevant to the request, best first, at priority 6 (below the turn's evidence).
    Memory is support, never command: the slots are ordinary unpinned ``memory`` slots
    (priority 8 without a gate), so the pinned current request always wins. ``None`` when the
    owner has no confirmed (or no relevant) item. Stores nothing itself: profile items are
    promoted by the personal-memory compaction, not by this provider.
    """

    def __init__(
        self,
        source: ProfileSource,
        owner: str,
        *,
        limit: int = 20,
        gate: RelevanceGate | None = None,
    ) -> None:
        if not owner:
            raise InvalidInput("ProfileProvider needs a non-empty owner")
        self.source = source
        self.owner = owner
        self.limit = limit
        self.gate = gate

    @property
    def name(self) -> str:
        return "profile"

    async def get_relevant_context(self, messages: list[Message]) -> ProvidedContext | None:
        items = (await self.source.confirmed_items(self.owner))[: self.limit]
        gate = self.gate
        if gate is not None and items:
            query = next((m.text for m in reversed(messages) if m.role == "user"), "")
            chosen = await asyncio.to_thread(
                lambda: gate.select(query, items, lambda i: str(i[1]), symmetric=True)
            )
            items = [item for item, _ in chosen]
        if not items:
            return None
        slots = [
            Slot(
                SlotKind.MEMORY,
                f"{key.replace('_', ' ')}: {value}",
                source_id=source_id,
                priority=6.0 if gate is not None else None,
                metadata={"profile_key": key, "provider": self.name},
            )
            for key, value, source_id in items
        ]
        return ProvidedContext(slots=slots)

    async def on_new_messages(self, messages: list[Message]) -> None:
        """Profile items are promoted by compaction, never directly from a turn."""
