"""The memory API over HTTP: ``memories_router(service) -> APIRouter`` (OpenAPI at
``/openapi.json``, tag "smartctx: memories").

Every route acts for the request's owner, taken by :func:`request_owner` (the one place that
decides who is calling); a ``user_id`` sent by a mem0 client must name that same owner (else
403). Routes, mem0's name in brackets:

- ``POST   /memories``                 add a text or chat messages [add]
- ``GET    /memories``                 list, filtered, paged by ``cursor`` [get_all]
- ``POST   /memories/search``          hybrid search with filters, scores and sources [search]
- ``GET    /memories/export``          JSON Lines of every memory with its history
- ``POST   /memories/import``          JSON Lines body; atomic; ids kept (idempotent)
- ``DELETE /memories?confirm=true``    delete every memory passing the filters [delete_all]
- ``GET    /memories/{id}``            one memory [get]
- ``PUT    /memories/{id}``            new text and/or metadata; history kept [update]
- ``DELETE /memories/{id}[?forget=true]`` delete one (forget: and its history) [delete]
- ``GET    /memories/{id}/history``    its changes, oldest first [history]

Errors are ``{"error", "message", "detail"}`` with a 4xx status (400 bad input, 403 another
owner, 404 unknown memory, 413 too large); a rejected request stores nothing.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import AliasChoices, BaseModel, Field

from smartctx.core.errors import Forbidden, InputTooLarge, InvalidInput
from smartctx.service.memories.records import MAX_LIMIT, MemoryFilter
from smartctx.service.memories.service import MemoryService
from smartctx.service.memories.transfer import export_jsonl, import_jsonl
from smartctx.service.owner import owner_of

MAX_IMPORT_BYTES = 20_000_000


def request_owner(request: Request) -> str:
    """The owner of ``request``: the single place the memory API asks who is calling."""
    return owner_of(request)


Owner = Annotated[str, Depends(request_owner)]


def _same_owner(owner: str, user_id: str | None) -> None:
    if user_id is not None and user_id.strip() and user_id.strip() != owner:
        raise Forbidden("user_id names another owner than the one making the request")


class ChatMessage(BaseModel):
    role: Literal["user", "assistant", "system"]
    content: str = Field(..., max_length=32_000)


class AddBody(BaseModel):
    """mem0's ``add``: ``messages`` is a text or chat messages (see ``infer``)."""

    messages: str | list[ChatMessage] = Field(
        ...,
        validation_alias=AliasChoices("messages", "text", "memory"),
        description="a text (stored as one memory) or chat messages",
    )
    user_id: str | None = Field(None, description="mem0 compatibility: must be the owner")
    agent_id: str | None = None
    session_id: str | None = Field(None, validation_alias=AliasChoices("session_id", "run_id"))
    metadata: dict[str, Any] | None = None
    kind: str | None = Field(None, description="fact (text default), turn, note...")
    infer: bool = Field(True, description="extract facts from user messages")


class FilterFields(BaseModel):
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = Field(None, validation_alias=AliasChoices("session_id", "run_id"))
    kind: str | list[str] | None = None
    created_after: str | None = None
    created_before: str | None = None
    filters: dict[str, Any] | None = Field(None, description="metadata key -> value (or values)")

    def to_filter(self, owner: str) -> MemoryFilter:
        _same_owner(owner, self.user_id)
        return MemoryFilter.of(
            agent_id=self.agent_id,
            session_id=self.session_id,
            kind=self.kind,
            created_after=self.created_after,
            created_before=self.created_before,
            metadata=self.filters,
        )


class SearchBody(FilterFields):
    query: str = Field(..., min_length=1, max_length=8000)
    limit: int = Field(10, ge=1, le=MAX_LIMIT)


class UpdateBody(BaseModel):
    text: str | None = Field(None, validation_alias=AliasChoices("text", "data", "memory"))
    metadata: dict[str, Any] | None = None


def _query_filter(
    user_id: str | None = None,
    agent_id: str | None = None,
    session_id: Annotated[str | None, Query(alias="session_id")] = None,
    run_id: str | None = None,
    kind: Annotated[list[str] | None, Query()] = None,
    created_after: str | None = None,
    created_before: str | None = None,
) -> FilterFields:
    return FilterFields(
        user_id=user_id,
        agent_id=agent_id,
        session_id=session_id or run_id,
        kind=kind,
        created_after=created_after,
        created_before=created_before,
    )


QueryFilter = Annotated[FilterFields, Depends(_query_filter)]


def memories_router(service: MemoryService) -> APIRouter:
    """The ``/memories`` routes over ``service`` (see the module docstring)."""
    router = APIRouter(prefix="/memories", tags=["smartctx: memories"])

    @router.post("", status_code=201, summary="Add memories from a text or chat messages")
    async def add(body: AddBody, owner: Owner) -> dict[str, Any]:
        """Example: ``{"messages": [{"role": "user", "content": "I prefer aisle seats."}],
        "agent_id": "travel", "metadata": {"topic": "travel"}}``."""
        _same_owner(owner, body.user_id)
        messages = (
            body.messages
            if isinstance(body.messages, str)
            else [m.model_dump() for m in body.messages]
        )
        results = await service.remember(
            owner,
            messages,
            infer=body.infer,
            kind=body.kind,
            agent_id=body.agent_id,
            session_id=body.session_id,
            metadata=body.metadata,
        )
        return {"results": [m.to_dict() | {"event": event} for m, event in results]}

    @router.get("", summary="List memories (filtered, paged)")
    async def get_all(
        owner: Owner,
        fields: QueryFilter,
        limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 100,
        cursor: Annotated[int, Query(ge=0)] = 0,
    ) -> dict[str, Any]:
        """Least recently written first (an update moves a memory to the end); pass
        ``next_cursor`` back as ``cursor`` for the next page."""
        page, after = await service.get_all(
            owner, fields.to_filter(owner), limit=limit, cursor=cursor
        )
        return {"results": [m.to_dict() for m in page], "next_cursor": after}

    @router.post("/search", summary="Hybrid search with filters, scores and sources")
    async def search(body: SearchBody, owner: Owner) -> dict[str, Any]:
        """Example: ``{"query": "seat preference", "agent_id": "travel", "filters":
        {"topic": "travel"}, "limit": 5}``."""
        found = await service.search(owner, body.query, body.to_filter(owner), limit=body.limit)
        return {"results": [m.to_dict(r.score) | r.scores() for m, r in found]}

    @router.get("/export", summary="Export memories as JSON Lines (with history)")
    async def export(owner: Owner, fields: QueryFilter) -> StreamingResponse:
        flt = fields.to_filter(owner)
        return StreamingResponse(
            export_jsonl(service, owner, flt),
            media_type="application/x-ndjson",
            headers={"Content-Disposition": f'attachment; filename="memories-{owner}.jsonl"'},
        )

    @router.post("/import", summary="Import a JSON Lines export (atomic, ids kept)")
    async def import_(request: Request, owner: Owner) -> dict[str, Any]:
        """The body is an export (``application/x-ndjson``); nothing is stored if a line is
        bad. Importing the same file twice adds nothing the second time."""
        body = bytearray()
        async for chunk in request.stream():
            body.extend(chunk)
            if len(body) > MAX_IMPORT_BYTES:
                raise InputTooLarge(f"an import is at most {MAX_IMPORT_BYTES} bytes")
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as err:
            raise InvalidInput("the import must be UTF-8 JSON Lines") from err
        return await import_jsonl(service, owner, text.splitlines())

    @router.delete("", summary="Delete every memory passing the filters")
    async def delete_all(
        owner: Owner, fields: QueryFilter, confirm: bool = False
    ) -> dict[str, Any]:
        """Requires ``confirm=true``; filters narrow what is deleted. Each deleted memory
        keeps a ``DELETE`` entry in its history (use the personal-memory forget to erase
        every copy)."""
        if not confirm:
            raise InvalidInput("deleting memories in bulk needs confirm=true")
        return {"deleted": await service.delete_all(owner, fields.to_filter(owner))}

    @router.get("/{memory_id}", summary="One memory")
    async def get(memory_id: str, owner: Owner) -> dict[str, Any]:
        return (await service.get(owner, memory_id)).to_dict()

    @router.put("/{memory_id}", summary="Update a memory's text and/or metadata")
    async def update(memory_id: str, body: UpdateBody, owner: Owner) -> dict[str, Any]:
        """Example: ``{"text": "I prefer window seats."}``; the old text stays in history."""
        memory = await service.update(owner, memory_id, text=body.text, metadata=body.metadata)
        return memory.to_dict()

    @router.delete("/{memory_id}", summary="Delete one memory")
    async def delete(memory_id: str, owner: Owner, forget: bool = False) -> dict[str, Any]:
        """The history keeps a ``DELETE`` entry with the old text; ``forget=true`` erases the
        history too (privacy: no copy of the text is left)."""
        gone = await service.delete(owner, memory_id, forget=forget)
        return {"deleted": gone.to_dict()}

    @router.get("/{memory_id}/history", summary="The changes of one memory, oldest first")
    async def history(memory_id: str, owner: Owner) -> dict[str, Any]:
        return {"results": await service.history(owner, memory_id)}

    return router


__all__ = ["MAX_IMPORT_BYTES", "memories_router", "request_owner"]
