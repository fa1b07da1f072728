"""The access middleware: one ASGI layer in front of every face of the service.

For each HTTP request, in order (the first refusal answers; nothing behind it runs, so a refused
request changes nothing stored):

1. ``Host`` must be allowed (400 ``invalid_host``): DNS rebinding cannot reach the server.
2. A browser ``Origin`` must be the server's own or configured (403 ``forbidden``), and a
   state-changing method (anything but GET/HEAD/OPTIONS) must not carry a form content type
   (``text/plain``, ``application/x-www-form-urlencoded``, ``multipart/form-data``: 415), so no
   cross-site form or simple request can change anything.
3. Credentials: ``Authorization: Bearer <API key or JWT>`` or ``X-API-Key: <key>``. Wrong,
   unknown, revoked or expired credentials answer 401 (with ``WWW-Authenticate``), whether or not
   authentication is required (without it and without an identity provider, a bearer token that
   is not a smartctx key is ignored: OpenAI clients send placeholder keys); missing ones answer
   401 when it is required, except on the public paths. The identity found is left in the scope
   for :func:`smartctx.service.owner.owner_of`.
4. A non-admin identity naming another owner in ``X-Smartctx-Owner``: 403.
5. Per credential: at most ``rate_limit_per_minute`` requests (429 with ``Retry-After``) and
   ``max_streams_per_key`` open event streams (429).

An anonymous caller that names no owner gets a fresh one, echoed in the response header
``X-Smartctx-Owner``. Cost per request: a few header reads, plus one primary-key lookup for an
API key or one signature check for a JWT (in a worker thread: a JWKS may have to be fetched).
"""

from __future__ import annotations

import asyncio
import json

from starlette.datastructures import Headers
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from smartctx.core.errors import Forbidden, SmartCtxError
from smartctx.service.auth.keys import KeyStore, looks_like_key
from smartctx.service.auth.limits import RateLimiter, StreamLimiter
from smartctx.service.auth.policy import AccessPolicy
from smartctx.service.auth.tokens import JWTVerifier, TokenRejected
from smartctx.service.owner import IDENTITY_KEY, OWNER_HEADER, Identity, owner_of

API_KEY_HEADER = "X-API-Key"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_FORM_TYPES = ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data")


class Refusal(Exception):
    """A request the middleware answers itself."""

    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}


async def _answer(send: Send, refusal: Refusal) -> None:
    body = json.dumps({"error": refusal.code, "message": refusal.message, "detail": {}}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *((k.lower().encode(), v.encode()) for k, v in refusal.headers.items()),
    ]
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _credential(headers: Headers) -> str | None:
    value = headers.get("authorization")
    if value is not None:
        scheme, _, token = value.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Refusal(
                401, "unauthorized", "use 'Authorization: Bearer <key or token>'", _CHALLENGE
            )
        return token.strip()
    key = headers.get(API_KEY_HEADER)
    return key.strip() if key is not None and key.strip() else None


_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="smartctx"'}


def _is_stream(scope: Scope, headers: Headers) -> bool:
    path: str = scope.get("path", "")
    if "text/event-stream" in headers.get("accept", ""):
        return True
    return scope.get("method") == "GET" and path.endswith("/events")


class AccessMiddleware:
    """See the module docstring. ``keys`` verifies API keys, ``verifier`` JWTs (None: not
    accepted); ``rate`` and ``streams`` are the per-credential limits."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        policy: AccessPolicy,
        keys: KeyStore,
        verifier: JWTVerifier | None,
        rate: RateLimiter,
        streams: StreamLimiter,
    ) -> None:
        self.app = app
        self.policy = policy
        self.keys = keys
        self.verifier = verifier
        self.rate = rate
        self.streams = streams

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        try:
            self._check_browser(scope, headers)
            identity = await self._identify(scope, headers)
            scope.setdefault("state", {})[IDENTITY_KEY] = identity
            self._check_owner(scope)
            stream_key = self._check_limits(scope, headers, identity)
        except Refusal as refusal:
            await _answer(send, refusal)
            return
        # The caller learns its own owner (a key's, or an anonymous caller's fresh one).
        echo = None if headers.get(OWNER_HEADER) else identity.owner
        send = _with_owner(send, echo) if echo is not None else send
        try:
            await self.app(scope, receive, send)
        finally:
            if stream_key is not None:
                self.streams.release(stream_key)

    def _check_browser(self, scope: Scope, headers: Headers) -> None:
        host = headers.get("host")
        if not self.policy.host_allowed(host):
            raise Refusal(
                400,
                "invalid_host",
                "this server does not answer for that Host: add it to SMARTCTX_ALLOWED_HOSTS",
            )
        origin = headers.get("origin")
        if origin is not None and not self.policy.origin_allowed(origin, host):
            raise Refusal(
                403,
                "forbidden",
                "cross-origin requests are refused: add the origin to SMARTCTX_ALLOWED_ORIGINS",
            )
        if headers.get("sec-fetch-site") == "cross-site" and origin is None:
            raise Refusal(403, "forbidden", "cross-site requests are refused")
        if scope.get("method") not in _SAFE_METHODS:
            kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if kind in _FORM_TYPES:
                raise Refusal(
                    415, "unsupported_media_type", "send JSON (Content-Type: application/json)"
                )

    async def _identify(self, scope: Scope, headers: Headers) -> Identity:
        credential = _credential(headers)
        if credential is None:
            if self.policy.auth and scope.get("path", "") not in self.policy.public_paths:
                raise Refusal(
                    401,
                    "unauthorized",
                    "this server requires an API key or token: send 'Authorization: Bearer "
                    "<key>' (create one with `smartctx keys create`)",
                    _CHALLENGE,
                )
            return Identity.anonymous()
        if looks_like_key(credential):
            record = await self.keys.verify(credential)
            if record is None:
                raise Refusal(401, "unauthorized", "unknown or revoked API key", _CHALLENGE)
            return Identity(
                owner=record.owner,
                subject=f"key:{record.key_id}",
                admin=record.admin,
                authenticated=True,
            )
        if self.verifier is None:
            if not self.policy.auth:
                # no authentication and no identity provider: a foreign token (say an OpenAI
                # client's placeholder key) proves nothing, and the caller stays anonymous
                return Identity.anonymous()
            raise Refusal(401, "unauthorized", "not a smartctx API key", _CHALLENGE)
        try:
            return await asyncio.to_thread(self.verifier.verify, credential)
        except TokenRejected as err:
            raise Refusal(401, "unauthorized", str(err), _CHALLENGE) from err

    @staticmethod
    def _check_owner(scope: Scope) -> None:
        try:
            owner_of(HTTPConnection(scope))
        except Forbidden as err:
            raise Refusal(403, err.code, err.message) from err
        except SmartCtxError:
            return  # a malformed owner name: each face rejects it as invalid input

    def _check_limits(self, scope: Scope, headers: Headers, identity: Identity) -> str | None:
        if not identity.authenticated:
            return None
        wait = self.rate.take(identity.subject)
        if wait:
            raise Refusal(
                429,
                "rate_limited",
                f"more than {self.rate.per_minute} requests a minute with this credential: "
                f"retry in {wait} s",
                {"Retry-After": str(wait)},
            )
        if not _is_stream(scope, headers):
            return None
        if not self.streams.acquire(identity.subject):
            raise Refusal(
                429,
                "rate_limited",
                f"{self.streams.limit} event streams are already open with this credential",
                {"Retry-After": "1"},
            )
        return identity.subject


def _with_owner(send: Send, owner: str) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {
                **message,
                "headers": [*message.get("headers", []), (b"x-smartctx-owner", owner.encode())],
            }
        await send(message)

    return wrapped
