"""The personal-memory HTTP API: ``personal_router(memory) -> APIRouter``.

Routes (JSON; the caller may act on ``{owner}`` only when it is the request's own owner
(:func:`smartctx.service.owner.require_owner`: the key's or token's owner, or the owner an
anonymous caller names with ``X-Smartctx-Owner``) or the caller is an admin, so one owner never
reads another's tiers; ``DELETE /memory/owners/{owner}`` needs an admin key when authentication
is on):

- ``GET    /memory/owners/{owner}/profile[?status=]``        profile items with provenance
- ``POST   /memory/owners/{owner}/profile/{item_id}/accept`` explicit acceptance (confirms)
- ``POST   /memory/owners/{owner}/profile/{item_id}/wrong``  mark wrong (rejects, audited)
- ``POST   /memory/owners/{owner}/profile/suggestion``       answer to a proactive suggestion
- ``GET    /memory/owners/{owner}/pairs`` / ``POST`` one pair / ``DELETE .../pairs/{id}`` (revert)
- ``GET    /memory/owners/{owner}/summaries`` and ``/audit`` and ``/snapshot`` (contract form)
- ``POST   /memory/owners/{owner}/sync``  cursor + version + pairs -> changes since the cursor;
  409 with the current cursor and version when the version is stale
- ``POST   /memory/owners/{owner}/compact[?force=true]``
- ``DELETE /memory/owners/{owner}`` forget the owner everywhere;
  ``DELETE /memory/owners/{owner}/items/{kind}/{item_id}`` forget one pair/profile/summary and
  every copy of it (both vacuum the SQLite file afterwards).

Errors are ``SmartCtxError.to_dict()`` with the status of ``status_for``. With ``run_worker``
the router runs the compaction worker for the lifetime of the app that includes it.
``build_personal_memory`` builds a memory whose ``forget`` also reaches the stores personal
memory cannot import (knowledge-base chunks and vectors, agent long-term memory, A2A tasks).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Annotated, Any

import sqlalchemy as sa
from fastapi import APIRouter, FastAPI, Header, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from smartctx.core.clock import Clock
from smartctx.core.errors import SmartCtxError, status_for
from smartctx.core.settings import Settings
from smartctx.memory.contract import normalize_memory_context
from smartctx.memory.forget import Forgetter
from smartctx.memory.pairs import PairIn
from smartctx.memory.personal import PersonalMemory
from smartctx.memory.snapshot import server_snapshot
from smartctx.memory.worker import CompactionWorker
from smartctx.retrieval.kb_store import KBStore
from smartctx.service.owner import OWNER_HEADER, require_owner
from smartctx.store.db import Database

OwnerHeader = Annotated[str | None, Header(alias=OWNER_HEADER, description="owner (tenant/user)")]
OWNER_TABLES = (
    "agent_memory",
    "agent_memory_info",
    "agent_memory_history",
    "a2a_tasks",
    "a2a_deliveries",
)
"""Other owner-scoped tables that ``forget`` empties when they exist."""
MAX_PAGE = 1000
"""The largest page a list route returns (``?limit=`` above it is a 400)."""


class PairBody(BaseModel):
    """One turn. ``id`` makes the write idempotent (the device's pair id)."""

    id: str | None = Field(None, min_length=1, max_length=64)
    user_text: str = Field(..., min_length=1)
    assistant_text: str = ""
    session_id: str = Field("default", min_length=1, max_length=128)
    route_family: str = Field("", max_length=32)
    workflow_id: str = Field("", max_length=128)
    created_at: str | None = Field(None, description="ISO-8601; default: now")


class SyncBody(BaseModel):
    """A device's sync call."""

    cursor: str | None = Field(None, description="the device's cursor (cur-N); none = everything")
    version: str | None = Field(None, description="the version its writes are based on (vN)")
    pairs: list[PairBody] = Field(default_factory=list, max_length=500)


class SuggestionBody(BaseModel):
    """The user's answer to a proactive suggestion such as "안방 청정을 시작할까요?"."""

    suggestion: str = Field(..., min_length=1, max_length=2000)
    accepted: bool


class KBForgetter:
    """Deletes an owner's knowledge-base chunks and vectors."""

    name = "knowledge_base"

    def __init__(self, db: Database) -> None:
        self.db = db

    async def forget_owner(self, owner: str) -> int:
        return await KBStore(self.db).delete_owner(owner)


class OwnerTablesForgetter:
    """Deletes an owner's rows from other owner-scoped tables, when those tables exist."""

    name = "owner_tables"

    def __init__(self, db: Database, tables: tuple[str, ...] = OWNER_TABLES) -> None:
        self.db = db
        self.tables = tables

    async def forget_owner(self, owner: str) -> int:
        async with self.db.engine.connect() as conn:
            present = await conn.run_sync(lambda c: set(sa.inspect(c).get_table_names()))
        deleted = 0
        async with self.db.session() as s:
            for name in self.tables:
                if name in present:
                    table = sa.table(name, sa.column("owner"))
                    result: Any = await s.execute(sa.delete(table).where(table.c.owner == owner))
                    deleted += int(result.rowcount or 0)
        return deleted


def build_personal_memory(
    db: Database,
    *,
    settings: Settings | None = None,
    clock: Clock | None = None,
    forgetters: Sequence[Forgetter] = (),
) -> PersonalMemory:
    """Personal memory whose ``forget_owner`` also reaches the stores it cannot import.

    ``forgetters`` run first, then knowledge-base chunks and vectors, then the other
    owner-scoped tables (agent memory, A2A tasks). The service and ``smartctx memory`` both
    build their memory here. No I/O.
    """
    wired = [*forgetters, KBForgetter(db), OwnerTablesForgetter(db)]
    return PersonalMemory(db, clock=clock, settings=settings, forgetters=wired)


def _pair(body: PairBody) -> PairIn:
    return PairIn.from_dict(body.model_dump(exclude_none=True))


async def _answer(work: Callable[[], Awaitable[Any]]) -> Any:
    try:
        return await work()
    except SmartCtxError as err:
        return JSONResponse(err.to_dict(), status_code=status_for(err)[0])


def personal_router(memory: PersonalMemory, *, run_worker: bool = True) -> APIRouter:
    """The ``/memory/owners/{owner}`` routes over ``memory`` (see the module docstring)."""

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        worker = CompactionWorker(memory)
        if run_worker:
            worker.start()
        try:
            yield
        finally:
            await worker.stop()

    router = APIRouter(prefix="/memory/owners", tags=["smartctx: personal memory"])
    router.lifespan_context = lifespan

    @router.get("/{owner}/profile", summary="Profile items with status, confidence, provenance")
    async def profile(
        request: Request, owner: str, status: str | None = None, x: OwnerHeader = None
    ) -> Any:
        """Example: ``GET /memory/owners/alice/profile?status=confirmed``."""
        return await _answer(
            lambda: _wrap("items", memory.profile(require_owner(request, owner), status=status))
        )

    @router.post("/{owner}/profile/{item_id}/accept", summary="Accept a profile item")
    async def accept(request: Request, owner: str, item_id: str, x: OwnerHeader = None) -> Any:
        return await _answer(lambda: memory.accept(require_owner(request, owner), item_id=item_id))

    @router.post("/{owner}/profile/{item_id}/wrong", summary="Mark a profile item wrong")
    async def wrong(request: Request, owner: str, item_id: str, x: OwnerHeader = None) -> Any:
        return await _answer(lambda: memory.mark_wrong(require_owner(request, owner), item_id))

    @router.post("/{owner}/profile/suggestion", summary="Answer to a proactive suggestion")
    async def suggestion(
        request: Request, owner: str, body: SuggestionBody, x: OwnerHeader = None
    ) -> Any:
        who = require_owner(request, owner)
        return await _answer(
            lambda: _wrap(
                "items", memory.respond_to_suggestion(who, body.suggestion, body.accepted)
            )
        )

    @router.get("/{owner}/pairs", summary="Recent pairs, oldest first")
    async def pairs(
        request: Request,
        owner: str,
        session_id: Annotated[str | None, Query(max_length=128)] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
        x: OwnerHeader = None,
    ) -> Any:
        return await _answer(
            lambda: _wrap(
                "pairs",
                memory.pairs(require_owner(request, owner), session_id=session_id, limit=limit),
            )
        )

    @router.post("/{owner}/pairs", status_code=201, summary="Store one turn (idempotent by id)")
    async def add_pair(request: Request, owner: str, body: PairBody, x: OwnerHeader = None) -> Any:
        return await _answer(lambda: memory.add_pair(require_owner(request, owner), _pair(body)))

    @router.delete("/{owner}/pairs/{pair_id}", summary="Delete a pair and revert what rested on it")
    async def delete_pair(request: Request, owner: str, pair_id: str, x: OwnerHeader = None) -> Any:
        return await _answer(lambda: memory.delete_pair(require_owner(request, owner), pair_id))

    @router.get("/{owner}/summaries", summary="Session, daily and weekly summaries")
    async def summaries(request: Request, owner: str, x: OwnerHeader = None) -> Any:
        return await _answer(lambda: memory.summaries(require_owner(request, owner)))

    @router.get("/{owner}/audit", summary="Audit records, newest first")
    async def audit(request: Request, owner: str, x: OwnerHeader = None) -> Any:
        return await _answer(
            lambda: _wrap("records", memory.audit_log(require_owner(request, owner)))
        )

    @router.get("/{owner}/snapshot", summary="The owner's memory in a2a-memory-context-v1 form")
    async def snapshot(request: Request, owner: str, x: OwnerHeader = None) -> Any:
        async def work() -> Any:
            snap = await server_snapshot(memory, require_owner(request, owner))
            return normalize_memory_context({"memory_snapshot": snap})

        return await _answer(work)

    @router.post("/{owner}/sync", summary="Device sync: changes since the cursor (409 if stale)")
    async def sync(request: Request, owner: str, body: SyncBody, x: OwnerHeader = None) -> Any:
        """Example body: ``{"cursor": "cur-2", "version": "v2", "pairs": [{"id": "p9", ...}]}``."""
        return await _answer(
            lambda: memory.sync(
                require_owner(request, owner),
                cursor=body.cursor,
                version=body.version,
                pairs=[_pair(p) for p in body.pairs],
            )
        )

    @router.post("/{owner}/compact", summary="Run compaction now")
    async def compact(
        request: Request, owner: str, force: bool = False, x: OwnerHeader = None
    ) -> Any:
        async def work() -> Any:
            [report] = await memory.compact(require_owner(request, owner), force=force)
            return report.to_dict()

        return await _answer(work)

    @router.delete("/{owner}", summary="Forget the owner: every copy, in every store")
    async def forget_owner(request: Request, owner: str, x: OwnerHeader = None) -> Any:
        return await _answer(
            lambda: _wrap(
                "deleted", memory.forget_owner(require_owner(request, owner, admin_only=True))
            )
        )

    @router.delete("/{owner}/items/{kind}/{item_id}", summary="Forget one pair/profile/summary")
    async def forget_item(
        request: Request, owner: str, kind: str, item_id: str, x: OwnerHeader = None
    ) -> Any:
        """Deletes the item from the memory tiers and every copy the service keeps (window
        slots, long-term memory, A2A tasks), then vacuums the SQLite file."""
        return await _answer(
            lambda: memory.forget_item(
                require_owner(request, owner), kind, item_id, checkpoint=True
            )
        )

    return router


async def _wrap(key: str, value: Awaitable[Any]) -> dict[str, Any]:
    return {key: await value}


__all__ = ["KBForgetter", "OwnerTablesForgetter", "build_personal_memory", "personal_router"]
