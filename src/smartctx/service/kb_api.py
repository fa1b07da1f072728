"""Knowledge-base scopes in the service: the per-owner retrieval provider and the HTTP routes.

Every turn retrieves from the organisation-wide base and the turn owner's own documents
(:class:`~smartctx.retrieval.kb_scopes.ScopedKnowledge`), never from another owner's. Routes
(JSON; the owner is the request's, :func:`smartctx.service.owner.owner_of`):

- ``GET    /memory/kb/documents``               the documents the owner sees, by scope
- ``PUT    /memory/kb/documents/{name}``         add or replace one of the owner's documents;
  ``?scope=org`` writes the organisation's base instead (admin only)
- ``DELETE /memory/kb/documents/{name}[?scope=org]`` remove one (the organisation's: admin only)
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from smartctx.agents import KnowledgeProvider
from smartctx.agents.providers import Message, ProvidedContext
from smartctx.retrieval.kb_scopes import ScopedKnowledge
from smartctx.service.owner import DEFAULT_OWNER, owner_of, require_admin

Scope = Literal["owner", "org"]


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

    text: str = Field(..., min_length=1, max_length=1_000_000)


def _scope_owner(request: Request, scope: Scope) -> str | None:
    if scope == "org":
        require_admin(request)
        return None
    return owner_of(request)


def kb_router(scoped: ScopedKnowledge) -> APIRouter:
    """The ``/memory/kb`` routes over ``scoped`` (see the module docstring)."""
    router = APIRouter(prefix="/memory/kb", tags=["smartctx: knowledge base"])

    @router.get("/documents", summary="Documents the owner retrieves from, by scope")
    async def documents(request: Request) -> dict[str, Any]:
        owner = owner_of(request)
        seen = await scoped.documents(owner)
        return {
            "owner": owner,
            **{scope: [asdict(d) for d in docs] for scope, docs in seen.items()},
        }

    @router.put("/documents/{name}", summary="Add or replace a document (org scope: admin)")
    async def put(
        name: str, body: DocumentBody, request: Request, scope: Scope = "owner"
    ) -> dict[str, Any]:
        """Example: ``PUT /memory/kb/documents/printers.md`` with ``{"text": "# Printers..."}``."""
        owner = _scope_owner(request, scope)
        chunks = await scoped.put(owner, name, body.text)
        return {"name": name, "scope": scope, "chunks": chunks}

    @router.delete("/documents/{name}", summary="Remove a document (org scope: admin)")
    async def remove(name: str, request: Request, scope: Scope = "owner") -> dict[str, Any]:
        await scoped.remove(_scope_owner(request, scope), name)
        return {"name": name, "scope": scope, "removed": True}

    return router
