"""Identity and access of the service: API keys, bearer JWTs, the access middleware, limits.

``install_access(api, settings, db, base_url=...)`` puts :class:`AccessMiddleware` in front of
every face of the app (A2A JSON-RPC, HTTP+JSON and SSE, the memory API, ``/ui``, OpenAPI).
Routes learn the caller through :func:`smartctx.service.owner.owner_of` and
:func:`~smartctx.service.owner.require_owner`; see ``docs/security.md`` for the promises.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from smartctx.core.settings import Settings
from smartctx.service.auth.keys import ADMIN_OWNER, APIKey, KeyStore
from smartctx.service.auth.limits import RateLimiter, StreamLimiter
from smartctx.service.auth.middleware import API_KEY_HEADER, AccessMiddleware
from smartctx.service.auth.policy import AccessPolicy, auth_required, is_loopback
from smartctx.service.auth.tokens import JWTVerifier
from smartctx.store.db import Database

OPENAPI_SCHEMES = {
    "bearer": {"type": "http", "scheme": "bearer", "description": "API key (sctx_...) or JWT"},
    "apiKey": {"type": "apiKey", "in": "header", "name": API_KEY_HEADER},
}


def install_access(api: FastAPI, settings: Settings, db: Database, *, base_url: str) -> None:
    """Add the access middleware to ``api`` and declare the schemes in its OpenAPI schema (no
    I/O; keys are read per request)."""
    _declare_in_openapi(api, required=auth_required(settings))
    api.add_middleware(
        AccessMiddleware,
        policy=AccessPolicy.from_settings(settings, base_url),
        keys=KeyStore(db),
        verifier=JWTVerifier.from_settings(settings),
        rate=RateLimiter(settings.rate_limit_per_minute),
        streams=StreamLimiter(settings.max_streams_per_key),
    )


def _declare_in_openapi(api: FastAPI, *, required: bool) -> None:
    build = api.openapi

    def openapi() -> dict[str, Any]:
        if api.openapi_schema is None:
            schema = build()
            schema.setdefault("components", {})["securitySchemes"] = OPENAPI_SCHEMES
            if required:
                schema["security"] = [{name: []} for name in OPENAPI_SCHEMES]
            api.openapi_schema = schema
        return api.openapi_schema

    api.openapi = openapi  # type: ignore[method-assign]


__all__ = [
    "ADMIN_OWNER",
    "API_KEY_HEADER",
    "APIKey",
    "AccessMiddleware",
    "AccessPolicy",
    "JWTVerifier",
    "KeyStore",
    "RateLimiter",
    "StreamLimiter",
    "auth_required",
    "install_access",
    "is_loopback",
]
