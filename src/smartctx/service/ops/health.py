"""Liveness and readiness: ``GET /healthz`` and ``GET /readyz`` (public, no owner needed).

``/healthz`` answers 200 while the process serves requests. ``/readyz`` answers 200 only once
start-up is done (migrations applied, the knowledge base loaded and indexed, the retrieval and
similarity embedders loaded) and while the database answers a query, else 503 with the failing
check; during a graceful shutdown it answers 503 so a load balancer stops sending work first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text

from smartctx.store.db import Database


def health_router(db: Database, *, started: Callable[[], bool], model: str) -> APIRouter:
    """The two probes over ``db``; ``started()`` tells whether start-up has finished."""
    router = APIRouter(tags=["smartctx: operations"])

    @router.get("/healthz", summary="Liveness")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @router.get("/readyz", summary="Readiness: database and models ready")
    async def readyz() -> JSONResponse:
        checks: dict[str, Any] = {"startup": "ok" if started() else "starting or stopping"}
        try:
            async with db.session() as session:
                await session.execute(text("SELECT 1"))
            checks["database"] = "ok"
        except Exception as err:
            checks["database"] = f"unavailable: {type(err).__name__}"
        ready = all(value == "ok" for value in checks.values())
        body = {"status": "ready" if ready else "not ready", "checks": checks, "model": model}
        return JSONResponse(body, status_code=200 if ready else 503)

    return router
