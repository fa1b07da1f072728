"""Knowledge-base scopes in the service: the per-owner retrieval provider and the HTTP routes.

Every turn retrieves from the organisation-wide base and the turn owner's own documents
(:class:`~smartctx.retrieval.kb_scopes.ScopedKnowledge`), never from another owner's, and both
are kept current with the store (a ``smartctx kb add`` while the server runs is retrieved by the
next turn). Routes (JSON; the owner is the request's, :func:`smartctx.service.owner.owner_of`;
``scope=org`` acts on the organisation's base and needs an admin for writes):

- ``GET    /kb/search?query=&k=``                the chunks the owner may retrieve, best first
- ``GET    /kb/documents``                       the documents the owner sees (both scopes)
- ``POST   /kb/documents``                       ``{"name": "printers.md", "text": "# ..."}``:
  add or replace one of the owner's documents (``"scope": "org"`` for the organisation's)
- ``GET    /memory/kb/documents``                the same documents, by scope
- ``PUT    /memory/kb/documents/{name}[?scope=org]``  add or replace one document
- ``DELETE /memory/kb/documents/{name}[?scope=org]``  remove one
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from smartctx.agents import KnowledgeProvider
from smartctx.agents.providers import Message, ProvidedContext
from smartctx.retrieval.kb_scopes import ScopedKnowledge
from smartctx.service.owner import DEFAULT_OWNER, owner_of, require_admin

Scope = Literal["owner", "org"]
MAX_DOCUMENT_CHARS = 1_000_000


class ScopedKnowledgeProvider(KnowledgeProvider):
    """:class:`~smartctx.agents.KnowledgeProvider` over the organisation's base and the turn
    owner's documents. The owner is the one the agent recorded on the user message (the
    executor's, from the authenticated identity), never text the caller wrote."""

    def __init__(self, scoped: ScopedKnowledge, k: int = 2) -> None:
        super().__init__(scoped.org, k)
        self.scoped = scoped

    async def get_relevant_context(self, messages: list[Message]) -> ProvidedContext | None:
        last = next((m for m in reversed(messages) if m.role == "user"), None)
        owner = last.metadata.get("owner") if last is not None else None
        view = await self.scoped.view(owner if isinstance(owner, str) else DEFAULT_OWNER)
        provider = KnowledgeProvider(view, self.k, query_chars=self.query_chars)
        return await provider.get_relevant_context(messages)


class DocumentBody(BaseModel):
    """A Markdown or plain-text document."""

    text: str = Field(..., min_length=1, max_length=MAX_DOCUMENT_CHARS)


class NewDocument(DocumentBody):
    """A named document for ``POST /kb/documents``."""

    name: str = Field(..., min_length=1, max_length=255, description="e.g. printers.md")
    scope: Scope = "owner"


def _scope_owner(request: Request, scope: Scope) -> str | None:
    if scope == "org":
        require_admin(request)
        return None
    return owner_of(request)


def kb_router(scoped: ScopedKnowledge) -> APIRouter:
    """The ``/kb`` and ``/memory/kb`` routes over ``scoped`` (see the module docstring)."""
    router = APIRouter(tags=["smartctx: knowledge base"])

    @router.get("/kb/search", summary="Relevant chunks for a query")
    async def search(
        request: Request,
        query: Annotated[str, Query(min_length=1, max_length=8000)],
        k: Annotated[int, Query(ge=1, le=50)] = 3,
    ) -> dict[str, Any]:
        view = await scoped.view(owner_of(request))
        hits = await asyncio.to_thread(view.search, query, k)
        return {"results": [hit.to_dict() for hit in hits]}

    @router.get("/kb/documents", summary="The documents the owner retrieves from")
    async def listed(request: Request) -> dict[str, Any]:
        seen = await scoped.documents(owner_of(request))
        return {"documents": [asdict(d) | {"scope": s} for s, docs in seen.items() for d in docs]}

    @router.post("/kb/documents", status_code=201, summary="Add or replace one document")
    async def ingest(body: NewDocument, request: Request) -> dict[str, Any]:
        """Chunked by heading and paragraph, embedded and stored; the next turn retrieves it."""
        chunks, status = await scoped.put(_scope_owner(request, body.scope), body.name, body.text)
        return {"name": body.name, "status": status, "chunks": chunks}

    @router.get("/memory/kb/documents", summary="Documents the owner retrieves from, by scope")
    async def documents(request: Request) -> dict[str, Any]:
        owner = owner_of(request)
        seen = await scoped.documents(owner)
        return {
            "owner": owner,
            **{scope: [asdict(d) for d in docs] for scope, docs in seen.items()},
        }

    @router.put("/memory/kb/documents/{name}", summary="Add or replace a document")
    async def put(
        name: str, body: DocumentBody, request: Request, scope: Scope = "owner"
    ) -> dict[str, Any]:
        """Example: ``PUT /memory/kb/documents/printers.md`` with ``{"text": "# Printers..."}``."""
        chunks, status = await scoped.put(_scope_owner(request, scope), name, body.text)
        return {"name": name, "scope": scope, "chunks": chunks, "status": status}

    @router.delete("/memory/kb/documents/{name}", summary="Remove a document")
    async def remove(name: str, request: Request, scope: Scope = "owner") -> dict[str, Any]:
        await scoped.remove(_scope_owner(request, scope), name)
        return {"name": name, "scope": scope, "removed": True}

    return router


__all__ = ["ScopedKnowledgeProvider", "kb_router"]
