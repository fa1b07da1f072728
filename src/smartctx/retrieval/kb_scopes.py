"""Knowledge-base scopes: one organisation-wide base plus each owner's own documents.

``ScopedKnowledge(org, db=...)`` holds the organisation's :class:`KnowledgeBase` (the shipped
corpus plus the documents stored under the reserved owner :data:`ORG_SCOPE`, which no caller can
hold: ``#`` is not allowed in owner names) and, per owner, a knowledge base of that owner's
stored documents only. Contract:
- ``search(query, k, owner=...)`` ranks the organisation's chunks and the owner's together and
  never reads another owner's documents: retrieval does not cross owners;
- an owner's base is read from the store on first use (``await view(owner)``) and kept, at most
  ``max_owners`` of them, least recently used first out; documents written through this object
  update the kept base at once; documents written by another process are seen once that base
  has left the cache (or after a restart);
- writes to the organisation's base are for admins: the service checks that, not this class.
The constructor does no I/O.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass

from smartctx.retrieval.kb import DocumentInfo, KBHit, KnowledgeBase
from smartctx.store import Database

ORG_SCOPE = "#org"
"""The store owner of the organisation-wide documents."""
MAX_OWNERS = 256


@dataclass(frozen=True)
class OwnerView:
    """What one owner may retrieve from: the organisation's base and the owner's own."""

    org: KnowledgeBase
    own: KnowledgeBase | None

    def search(self, query: str, k: int = 3) -> list[KBHit]:
        """At most ``k`` hits from both bases, best fused score first (ties: organisation first)."""
        hits = self.org.search(query, k)
        if self.own is not None:
            hits = hits + self.own.search(query, k)
        return sorted(hits, key=lambda h: -h.score)[:k]


class ScopedKnowledge:
    """The organisation's base and per-owner bases (see the module docstring)."""

    name = "knowledge_base_cache"

    def __init__(
        self, org: KnowledgeBase, *, db: Database | None, max_owners: int = MAX_OWNERS
    ) -> None:
        self.org = org
        self.db = db
        self.max_owners = max(1, max_owners)
        self._owners: OrderedDict[str, KnowledgeBase] = OrderedDict()
        self._lock = asyncio.Lock()

    def _new_base(self, owner: str) -> KnowledgeBase:
        return KnowledgeBase(
            db=self.db, owner=owner, embedder=self.org.embedder, counter=self.org.counter
        )

    async def base(self, owner: str) -> KnowledgeBase | None:
        """The owner's own base, loaded on first use; None without a database."""
        if self.db is None:
            return None
        async with self._lock:
            kb = self._owners.get(owner)
            if kb is None:
                kb = self._new_base(owner)
                await kb.load()
                self._owners[owner] = kb
                while len(self._owners) > self.max_owners:
                    self._owners.popitem(last=False)
            self._owners.move_to_end(owner)
            return kb

    async def view(self, owner: str) -> OwnerView:
        """What ``owner`` retrieves from."""
        return OwnerView(self.org, await self.base(owner))

    async def documents(self, owner: str) -> dict[str, list[DocumentInfo]]:
        """The documents ``owner`` sees, by scope: ``org`` and ``owner``."""
        own = await self.base(owner)
        return {"org": self.org.documents(), "owner": own.documents() if own else []}

    async def put(self, owner: str | None, name: str, text: str) -> int:
        """Add or replace a document of ``owner`` (None: the organisation); returns its chunks.
        Persisted before it returns."""
        kb = self.org if owner is None else await self.base(owner)
        kb = self.org if kb is None else kb  # no database: ``save`` below names the problem
        chunks = kb.add_text(name, text)
        await kb.save()
        return len(chunks)

    async def remove(self, owner: str | None, name: str) -> None:
        """Remove a document of ``owner`` (None: the organisation); ``NotFound`` if absent."""
        kb = self.org if owner is None else await self.base(owner)
        kb = self.org if kb is None else kb
        kb.remove(name)  # an owner's base holds only the owner's documents
        await kb.save()

    async def forget_owner(self, owner: str) -> int:
        """Drop the owner's kept base (its rows are deleted by the knowledge-base forgetter)."""
        async with self._lock:
            self._owners.pop(owner, None)
        return 0
