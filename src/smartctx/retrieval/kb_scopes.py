"""Knowledge-base scopes: one organisation-wide base plus each owner's own documents.

``ScopedKnowledge(org, db=...)`` holds the organisation's :class:`KnowledgeBase` (the shipped
corpus plus the documents stored under the reserved owner :data:`ORG_SCOPE`, which no caller can
hold: ``#`` is not allowed in owner names) and, per owner, a knowledge base of that owner's
stored documents only. Contract:
- ``search(query, k, owner=...)`` ranks the organisation's chunks and the owner's together and
  never reads another owner's documents: retrieval does not cross owners;
- an owner's base is read from the store on first use (``await view(owner)``) and kept, at most
  ``max_owners`` of them, least recently used first out; every base (the organisation's too) is
  kept in step with the store by a :class:`~smartctx.retrieval.kb_version.KBWatcher`: one
  primary-key lookup per ``view``, a reload only when the owner's change token moved, so a
  ``smartctx kb add`` from another process (or a write through another replica) is retrieved by
  the next turn without a restart;
- writes to the organisation's base are for admins: the service checks that, not this class.
The constructor does no I/O.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass

from smartctx.retrieval.chunking import content_hash
from smartctx.retrieval.kb import DocumentInfo, KBHit, KnowledgeBase
from smartctx.retrieval.kb_version import TOKENS_PROBE, KBWatcher, current_of, tokens_probe
from smartctx.store import Database, turn_probes

ORG_SCOPE = "#org"
"""The store owner of the organisation-wide documents."""
MAX_OWNERS = 256


@dataclass(frozen=True)
class OwnerView:
    """What one owner may retrieve from: the organisation's base and the owner's own."""

    org: KnowledgeBase
    own: KnowledgeBase | None

    def search(self, query: str, k: int = 3) -> list[KBHit]:
        """At most ``k`` hits from both bases, best fused score first. Fused scores of two
        indexes tie at the top ranks, so ties go to the higher cosine (one embedder serves both
        bases, so cosines compare), then to the organisation."""
        hits = self.org.search(query, k)
        if self.own is not None:
            hits = hits + self.own.search(query, k)
        return sorted(hits, key=lambda h: (-h.score, -h.similarity))[:k]


class ScopedKnowledge:
    """The organisation's base and per-owner bases (see the module docstring)."""

    name = "knowledge_base_cache"

    def __init__(
        self, org: KnowledgeBase, *, db: Database | None, max_owners: int = MAX_OWNERS
    ) -> None:
        self.org = org
        self.db = db
        self.max_owners = max(1, max_owners)
        self.org_watcher = KBWatcher(org)
        self._owners: OrderedDict[str, KBWatcher] = OrderedDict()
        self._lock = asyncio.Lock()

    def probe(self) -> turn_probes.Probe | None:
        """The turn probe that answers :meth:`view`'s read of both tokens (None when the bases
        have no shared database, and :meth:`view` reads no tokens)."""
        if self.db is None or self.org.db is not self.db:
            return None
        return tokens_probe(self.org.owner)

    def _new_base(self, owner: str) -> KnowledgeBase:
        return KnowledgeBase(
            db=self.db,
            owner=owner,
            embedder=self.org.embedder,
            counter=self.org.counter,
            bridge_embedder=self.org.bridge_embedder,
        )

    async def _watcher(self, owner: str, token: str | None = None) -> KBWatcher | None:
        """The owner's watched base, brought up to date with the store (``token``: its stored
        token, when just read); None without one."""
        if self.db is None:
            return None
        async with self._lock:
            watcher = self._owners.get(owner)
            if watcher is None:
                watcher = self._owners[owner] = KBWatcher(self._new_base(owner))
                while len(self._owners) > self.max_owners:
                    self._owners.popitem(last=False)
            self._owners.move_to_end(owner)
        await watcher.refresh(token)
        return watcher

    async def base(self, owner: str) -> KnowledgeBase | None:
        """The owner's own base, current with the store; None without a database."""
        watcher = await self._watcher(owner)
        return watcher.kb if watcher is not None else None

    async def view(self, owner: str) -> OwnerView:
        """What ``owner`` retrieves from, both bases current with the store (both tokens are
        read in one statement: this runs every turn)."""
        if self.db is None or self.org.db is not self.db or self.org.owner == owner:
            await self.org_watcher.refresh()
            return OwnerView(self.org, await self.base(owner))
        found = turn_probes.take(self.db, TOKENS_PROBE, owner)  # read with the turn's start
        if found is turn_probes.MISSING:
            tokens = await current_of(self.db, [self.org.owner, owner])
        else:
            tokens = {self.org.owner: found[0], owner: found[1]}
        await self.org_watcher.refresh(tokens[self.org.owner])
        watcher = await self._watcher(owner, tokens[owner])
        return OwnerView(self.org, watcher.kb if watcher is not None else None)

    async def documents(self, owner: str) -> dict[str, list[DocumentInfo]]:
        """The documents ``owner`` sees, by scope: ``org`` and ``owner``."""
        view = await self.view(owner)
        return {"org": view.org.documents(), "owner": view.own.documents() if view.own else []}

    async def put(self, owner: str | None, name: str, text: str) -> tuple[int, str]:
        """Add or replace a document of ``owner`` (None: the organisation); returns its chunk
        count and ``"added"``, ``"replaced"`` or ``"unchanged"``. Persisted before it returns."""
        watcher = await self._watcher(owner) if owner is not None else None
        watcher = watcher or self.org_watcher  # no database: ``save`` below names the problem
        if watcher is self.org_watcher:
            await watcher.refresh()
        kb = watcher.kb
        async with watcher.lock:
            before = {d.name: d.content_hash for d in kb.documents()}
            chunks = await asyncio.to_thread(kb.add_text, name, text)
            await kb.save()
        doc = chunks[0].doc if chunks else name
        old = before.get(doc)
        status = "added" if old is None else "unchanged"
        if old is not None and old != content_hash(text):
            status = "replaced"
        return len(chunks), status

    async def remove(self, owner: str | None, name: str) -> None:
        """Remove a document of ``owner`` (None: the organisation); ``NotFound`` if absent."""
        watcher = await self._watcher(owner) if owner is not None else None
        watcher = watcher or self.org_watcher
        async with watcher.lock:
            watcher.kb.remove(name)  # an owner's base holds only the owner's documents
            await watcher.kb.save()

    async def forget_owner(self, owner: str) -> int:
        """Drop the owner's kept base (its rows are deleted by the knowledge-base forgetter)."""
        async with self._lock:
            self._owners.pop(owner, None)
        return 0
