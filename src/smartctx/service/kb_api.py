"""The knowledge base on a running server: search and ingest over HTTP, always current.

``KnowledgeBases`` holds one :class:`~smartctx.retrieval.kb.KnowledgeBase` per owner (the
server's own for the owner it was built for, ``"default"``; others opened on first use, at most
``max_owners``, least recently used out), each with a
:class:`~smartctx.retrieval.kb_version.KBWatcher`: before a search or a turn it costs one
primary-key lookup, and a ``smartctx kb add`` (or an ingest through another replica) since the
last look reloads that owner's documents, with their stored vectors. So documents added while
the server runs are retrieved on the next turn, without a restart and without a per-turn reload.

Routes (owner from :func:`~smartctx.service.memories.routes.request_owner`):
- ``GET  /kb/documents``          the owner's documents (shipped corpus included)
- ``POST /kb/documents``          ``{"name": "printers.md", "text": "# Printers ..."}``: add or
  replace one document (chunked, embedded, stored in one transaction)
- ``GET  /kb/search?query=&k=``   the relevant chunks with their scores and source ids
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from smartctx.agents.builtin_providers import KnowledgeProvider
from smartctx.agents.providers import Message, ProvidedContext
from smartctx.core.embeddings import Embedder
from smartctx.retrieval.chunking import content_hash
from smartctx.retrieval.kb import KBHit, KnowledgeBase
from smartctx.retrieval.kb_version import KBWatcher
from smartctx.service.memories.routes import Owner
from smartctx.store.db import Database

MAX_OWNERS = 64
MAX_DOCUMENT_CHARS = 2_000_000


class KnowledgeBases:
    """Per-owner knowledge bases of one server, kept current (see the module docstring)."""

    def __init__(
        self,
        db: Database,
        *,
        default: KnowledgeBase | None = None,
        embedder: Callable[[], Embedder | None] | None = None,
        max_owners: int = MAX_OWNERS,
    ) -> None:
        self.db = db
        self.default = default
        self._embedder = embedder or (lambda: None)
        self._max = max(1, max_owners)
        self._open: OrderedDict[str, KBWatcher] = OrderedDict()
        self.default_watcher = KBWatcher(default) if default is not None else None

    def watcher(self, owner: str) -> KBWatcher:
        """The owner's watched knowledge base (created, not loaded, on first use)."""
        if self.default_watcher is not None and owner == self.default_watcher.kb.owner:
            return self.default_watcher
        found = self._open.get(owner)
        if found is None:
            kb = KnowledgeBase.builtin(db=self.db, owner=owner, embedder=self._embedder())
            found = self._open[owner] = KBWatcher(kb)
            while len(self._open) > self._max:
                self._open.popitem(last=False)
        self._open.move_to_end(owner)
        return found

    async def current(self, owner: str) -> KnowledgeBase:
        """The owner's knowledge base, reloaded first if the store changed."""
        watcher = self.watcher(owner)
        await watcher.refresh()
        kb: KnowledgeBase = watcher.kb
        return kb

    async def search(self, owner: str, query: str, k: int = 3) -> list[KBHit]:
        kb = await self.current(owner)
        return await asyncio.to_thread(kb.search, query, k)

    async def ingest(self, owner: str, name: str, text: str) -> dict[str, Any]:
        """Add or replace one document; returns its name, status and chunk count."""
        watcher = self.watcher(owner)
        await watcher.refresh()
        kb: KnowledgeBase = watcher.kb
        async with watcher.lock:
            before = {d.name: d.content_hash for d in kb.documents()}
            chunks = await asyncio.to_thread(kb.add_text, name, text)
            await kb.save()
        old = before.get(chunks[0].doc) if chunks else None
        status = "added" if old is None else "unchanged"
        if old is not None and old != content_hash(text):
            status = "replaced"
        return {"name": chunks[0].doc if chunks else name, "status": status, "chunks": len(chunks)}


class LiveKnowledgeProvider(KnowledgeProvider):
    """The knowledge-base provider of agent turns, refreshed from the store before each turn."""

    def __init__(self, watcher: KBWatcher, k: int = 2) -> None:
        super().__init__(watcher.kb, k=k)
        self.watcher = watcher

    async def get_relevant_context(self, messages: list[Message]) -> ProvidedContext | None:
        await self.watcher.refresh()
        return await super().get_relevant_context(messages)


class NewDocument(BaseModel):
    name: str = Field(..., min_length=1, max_length=255, description="e.g. printers.md")
    text: str = Field(..., min_length=1, max_length=MAX_DOCUMENT_CHARS)


def kb_router(bases: KnowledgeBases) -> APIRouter:
    """The ``/kb`` routes over ``bases``."""
    router = APIRouter(prefix="/kb", tags=["smartctx: knowledge base"])

    @router.get("/documents", summary="The owner's knowledge-base documents")
    async def documents(owner: Owner) -> dict[str, Any]:
        kb = await bases.current(owner)
        return {"documents": [asdict(d) for d in kb.documents()]}

    @router.post("/documents", status_code=201, summary="Add or replace one document")
    async def ingest(body: NewDocument, owner: Owner) -> dict[str, Any]:
        """Chunked by heading and paragraph, embedded and stored; the next turn retrieves it."""
        return await bases.ingest(owner, body.name, body.text)

    @router.get("/search", summary="Relevant chunks for a query")
    async def search(
        owner: Owner,
        query: Annotated[str, Query(min_length=1, max_length=8000)],
        k: Annotated[int, Query(ge=1, le=50)] = 3,
    ) -> dict[str, Any]:
        return {"results": [hit.to_dict() for hit in await bases.search(owner, query, k)]}

    return router


__all__ = ["KnowledgeBases", "LiveKnowledgeProvider", "kb_router"]
