"""The memory API beside A2A: JSON over HTTP with an OpenAPI schema (``/openapi.json``).

Routes (all scoped to the owner of the request, :func:`smartctx.service.owner.owner_of`: the
authenticated identity's, else the ``X-Smartctx-Owner`` an anonymous caller names):

- ``GET  /memory/contexts``                      the owner's contexts
- ``POST /memory/contexts``                      create one with a preset/budget (409 if it exists)
- ``GET  /memory/contexts/{id}/snapshot``        the window snapshot
- ``GET  /memory/contexts/{id}/prompt?query=``   the prompt the model would get now
- ``GET  /memory/contexts/{id}/log?offset=&limit=`` every slot ever added (archived included)
- ``POST /memory/contexts/{id}/slots``           add a slot of any kind (tools, tests, demos)
- ``GET  /memory/contexts/{id}/events``          live memory events (SSE)

Errors answer ``{"error": code, "message": ..., "detail": {...}}`` with the status of
``smartctx.core.errors.ERROR_TABLE`` (unknown context: 404; bad slot: 400/422; existing context:
409). A rejected request changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sse_starlette.sse import EventSourceResponse

from smartctx.core.errors import InputTooLarge, NotFound, SmartCtxError, status_for
from smartctx.core.slots import Slot, SlotKind
from smartctx.service.contexts import ContextRegistry, describe_events
from smartctx.service.owner import OWNER_HEADER, owner_of

OwnerHeader = Annotated[str | None, Header(alias=OWNER_HEADER, description="owner (tenant/user)")]


class CreateContext(BaseModel):
    """A new context. Omitted fields take the server's defaults."""

    context_id: str | None = Field(None, min_length=1, max_length=128, pattern=r"^[\w.:@-]+$")
    preset: str | None = Field(None, description="default | eviction | compression | fifo")
    budget: int | None = Field(None, gt=0, le=10_000_000, description="token budget")
    system_prompt: str | None = Field(None, description="pinned system slot; '' for none")
    keep_recent: int | None = Field(
        None, ge=0, le=1000, description="conversation messages the Summarize stage never touches"
    )


class NewSlot(BaseModel):
    """A slot to add; ``kind`` is one of system, user, agent, rag_doc, tool_log, summary, memory."""

    kind: SlotKind
    text: str = Field(..., min_length=1)
    priority: float | None = Field(None, ge=0, le=100)
    source_id: str | None = Field(None, max_length=512)
    pinned: bool = False
    metadata: dict[str, Any] = Field(default_factory=dict)


def error_response(err: SmartCtxError) -> JSONResponse:
    """The JSON error answer for ``err`` with its HTTP status."""
    return JSONResponse(err.to_dict(), status_code=status_for(err)[0])


def memory_router(registry: ContextRegistry) -> APIRouter:
    """The ``/memory`` routes over ``registry``."""
    router = APIRouter(prefix="/memory", tags=["smartctx: memory"])

    @router.get("/contexts", summary="List the owner's contexts")
    async def list_contexts(request: Request, owner: OwnerHeader = None) -> dict[str, Any]:
        """Example: ``curl -H 'X-Smartctx-Owner: alice' localhost:8000/memory/contexts``."""
        who = owner_of(request)
        return {"owner": who, "contexts": await registry.list_contexts(who)}

    @router.post("/contexts", status_code=201, summary="Create a context with a preset/budget")
    async def create_context(
        body: CreateContext, request: Request, owner: OwnerHeader = None
    ) -> dict[str, Any]:
        """Example body: ``{"preset": "compression", "budget": 100}``."""
        who = owner_of(request)
        options = registry.options(
            preset=body.preset,
            budget=body.budget,
            system_prompt=body.system_prompt,
            keep_recent=body.keep_recent,
        )
        live = await registry.create(who, body.context_id, options)
        return live.describe() | {"snapshot": live.snapshot()}

    @router.get("/contexts/{context_id}/snapshot", summary="The window snapshot")
    async def snapshot(
        context_id: str, request: Request, owner: OwnerHeader = None
    ) -> dict[str, Any]:
        live = await registry.open(owner_of(request), context_id)
        return live.snapshot()

    @router.get("/contexts/{context_id}/prompt", summary="The prompt the model would get now")
    async def prompt(
        context_id: str,
        request: Request,
        owner: OwnerHeader = None,
        query: Annotated[str | None, Query(max_length=32_000)] = None,
    ) -> dict[str, Any]:
        live = await registry.open(owner_of(request), context_id)
        return live.prompt(query)

    @router.get(
        "/contexts/{context_id}/log", summary="Every slot ever added, archived ones included"
    )
    async def log(
        context_id: str,
        request: Request,
        owner: OwnerHeader = None,
        offset: Annotated[int, Query(ge=0)] = 0,
        limit: Annotated[int, Query(ge=1, le=500)] = 100,
    ) -> dict[str, Any]:
        """The context's log in ``seq`` order, a page at a time: active, merged, refused,
        dropped, summarized and evicted slots alike (eviction only archives; nothing is lost)."""
        live = await registry.open(owner_of(request), context_id)
        return {
            "context_id": context_id,
            "total": live.window.log_size,
            "offset": offset,
            "slots": [slot.to_dict() for slot in live.window.log_page(offset, limit)],
        }

    @router.get("/contexts/{context_id}/last-prompt", summary="What the model received last")
    async def last_prompt(
        context_id: str, request: Request, owner: OwnerHeader = None
    ) -> dict[str, Any]:
        """The prompt of the context's last turn served by this process (messages, slots sent,
        recalled slots, tokens counting both); ``not_found`` before the first turn."""
        live = await registry.open(owner_of(request), context_id)
        if live.last_prompt is None:
            raise NotFound(
                f"context {context_id!r} has had no turn on this server since it started",
                context_id=context_id,
            )
        return live.last_prompt.to_dict() | {"context_id": context_id}

    @router.post("/contexts/{context_id}/slots", summary="Add a slot of any kind")
    async def add_slot(
        context_id: str, body: NewSlot, request: Request, owner: OwnerHeader = None
    ) -> dict[str, Any]:
        """Example body: ``{"kind": "tool_log", "text": "GET /vpn 200", "source_id": "http"}``.

        A slot's text is limited like an A2A message (``max_message_chars``, else 413)."""
        limit = registry.settings.max_message_chars
        if len(body.text) > limit:
            raise InputTooLarge(
                f"the slot has {len(body.text):,} characters, over the limit of {limit:,}: "
                "shorten it or raise SMARTCTX_MAX_MESSAGE_CHARS",
                length=len(body.text),
                limit=limit,
            )
        slot = Slot(
            kind=body.kind,
            text=body.text,
            priority=body.priority,
            source_id=body.source_id,
            pinned=body.pinned,
            metadata=dict(body.metadata),
        )
        async with registry.session(owner_of(request), context_id) as live:
            result = live.add(slot)
        return {
            "slot": result.slot.to_dict(),
            "admitted": result.admitted,
            "events": describe_events(live.window, result.events),
            "snapshot": live.snapshot(),
        }

    @router.get(
        "/contexts/{context_id}/events",
        summary="Live memory events (SSE)",
        response_class=EventSourceResponse,
    )
    async def events(context_id: str, request: Request, owner: OwnerHeader = None) -> Any:
        """Server-sent events: first ``snapshot``, then ``events`` after every change."""
        subscription = await registry.subscribe(owner_of(request), context_id)

        async def stream() -> AsyncIterator[dict[str, str]]:
            try:
                async for item in subscription:
                    yield {"event": item["type"], "data": json.dumps(item)}
            finally:
                subscription.close()

        return EventSourceResponse(stream())

    return router
