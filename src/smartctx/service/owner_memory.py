"""Cross-thread memory of the service: per-owner long-term memory and profile providers.

``OwnerMemory.providers(owner)`` returns the providers every ``default``-preset A2A turn of that
owner uses besides the server's own (the knowledge base):

- a :class:`~smartctx.agents.LongTermMemoryProvider` over one shared
  :class:`~smartctx.agents.memory_store.SqlMemoryStore` (table ``agent_memory`` of the service's
  database), so what an owner says in one context is recalled in the owner's other contexts
  (``memory`` slots with source id ``mem:<item id>``), and never in another owner's; with a
  ``gate`` (the service passes one) only items relevant to the request, below the turn's
  evidence in priority;
- a :class:`~smartctx.agents.ProfileProvider` over personal memory's *confirmed* profile items,
  when the service has personal memory.

Provider instances are created lazily, one per owner, and cached (least recently used first out,
at most ``max_owners``); a provider dropped from the cache loses nothing, since the next one
reads the owner's items back from the store. ``OwnerMemory`` is a ``smartctx.memory`` forgetter
(``forget_owner`` empties the owner's items and drops the cached providers), and
``forget_items`` deletes single items for the forget-one-item path. The constructor does no I/O.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from smartctx.agents import ContextProvider, LongTermMemoryProvider, ProfileProvider
from smartctx.agents.builtin_providers import PersonalMemoryProfileSource
from smartctx.agents.llm_memory import LLMConsolidator
from smartctx.agents.memory_store import MemoryItem, SqlMemoryStore
from smartctx.agents.relevance import RelevanceGate
from smartctx.core.embeddings import Embedder
from smartctx.service.memories.rows import erase_records
from smartctx.store.db import Database

MAX_OWNERS = 1024
"""How many owners' providers are kept in memory at most."""


class OwnerMemory:
    """Per-owner memory providers of the service over one database (see the module docs)."""

    name = "agent_memory"

    def __init__(
        self,
        db: Database,
        *,
        personal: Any = None,
        embedder: Embedder | None = None,
        k: int = 3,
        max_owners: int = MAX_OWNERS,
        gate: RelevanceGate | None = None,
        consolidator: LLMConsolidator | None = None,
    ) -> None:
        self.store = SqlMemoryStore(db)
        self.profile_source = (
            PersonalMemoryProfileSource(personal) if personal is not None else None
        )
        self.embedder = embedder
        self.k = k
        self.gate = gate
        self.consolidator = consolidator
        self.max_owners = max(1, max_owners)
        self._cache: OrderedDict[str, tuple[LongTermMemoryProvider, ProfileProvider | None]] = (
            OrderedDict()
        )

    def _get(self, owner: str) -> tuple[LongTermMemoryProvider, ProfileProvider | None]:
        cached = self._cache.get(owner)
        if cached is not None:
            self._cache.move_to_end(owner)
            return cached
        memory = LongTermMemoryProvider(
            owner,
            store=self.store,
            embedder=self.embedder,
            k=self.k,
            gate=self.gate,
            consolidator=self.consolidator,
        )
        profile = (
            ProfileProvider(self.profile_source, owner, gate=self.gate)
            if self.profile_source is not None
            else None
        )
        self._cache[owner] = (memory, profile)
        while len(self._cache) > self.max_owners:
            self._cache.popitem(last=False)
        return memory, profile

    def providers(self, owner: str) -> list[ContextProvider]:
        """The owner's providers: long-term memory, then profile (created once, cached)."""
        memory, profile = self._get(owner)
        return [memory] if profile is None else [memory, profile]

    def memory_provider(self, owner: str) -> LongTermMemoryProvider:
        """The owner's long-term memory provider."""
        return self._get(owner)[0]

    def drop(self, owner: str) -> None:
        """Forget the cached providers of ``owner`` (the next turn builds them afresh)."""
        self._cache.pop(owner, None)

    async def forget_owner(self, owner: str) -> int:
        """Delete every long-term memory item of ``owner``; returns how many."""
        self.drop(owner)
        return await self.store.clear(owner)

    async def forget_items(
        self, owner: str, match: Callable[[MemoryItem], bool]
    ) -> list[MemoryItem]:
        """Delete the owner's items for which ``match`` is true, with their memory-API history
        (their vectors go with the dropped providers' indexes); returns them."""
        gone = await self.store.forget_items(owner, match)
        await erase_records(self.store.db, owner, [item.id for item in gone])
        self.drop(owner)
        return gone


__all__ = ["MAX_OWNERS", "OwnerMemory"]
