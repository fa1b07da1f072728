"""Request limits enforced before any route runs: ``RequestLimits``, a pure ASGI middleware.

A request body is counted as it streams in, so a client cannot make the server buffer more than
``max_body_bytes`` (a ``Content-Length`` over the limit is refused before one byte is read).
A body that arrives whole is then checked once: it must be UTF-8 and its JSON nesting must not
pass ``max_json_depth`` (brackets inside strings do not count). A refused request never reaches
a route, so it changes nothing stored.

Answers use the shape of the surface that was called: JSON-RPC (``POST /``) gets a JSON-RPC
error (``-32700`` for bytes that are not UTF-8, as for any unparsable body; ``-32600`` for a
body over a limit); the HTTP+JSON A2A routes (``/rest``) get the SDK's ``{"error": {...}}``;
everything else gets ``{"error": code, "message": ..., "detail": {}}``.

Cost: one pass over the body in C (UTF-8 decoding, one regular expression that removes
strings, one cumulative sum); nothing proportional to anything but the body, which is bounded.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from smartctx.service.card import REST_PREFIX

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*+"', re.DOTALL)
_OPEN = np.zeros(256, dtype=np.int8)
_OPEN[[ord("["), ord("{")]] = 1
_OPEN[[ord("]"), ord("}")]] = -1
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def json_depth(body: bytes) -> int:
    """The deepest bracket nesting of ``body`` outside JSON strings (linear, in C)."""
    bare = _STRING.sub(b"", body)
    if not bare:
        return 0
    steps = _OPEN[np.frombuffer(bare, dtype=np.uint8)].astype(np.int32)
    return int(np.cumsum(steps).max(initial=0))


class _Refused(Exception):
    def __init__(self, status: int, code: str, message: str, rpc_code: int) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.rpc_code = rpc_code


class RequestLimits:
    """Refuses oversized, non-UTF-8 or too deeply nested request bodies (see module doc)."""

    def __init__(self, app: ASGIApp, *, max_body_bytes: int, max_json_depth: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.max_json_depth = max_json_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        try:
            self._check_length(scope)
            body = await self._read(receive)
            self._check_body(body)
        except _Refused as refused:
            await self._refuse(scope, send, refused)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _too_large(self, size: str) -> _Refused:
        return _Refused(
            413,
            "input_too_large",
            f"the request body has {size} bytes, over the limit of {self.max_body_bytes:,}: "
            "send less or raise SMARTCTX_MAX_BODY_BYTES",
            -32600,
        )

    def _check_length(self, scope: Scope) -> None:
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    raise _Refused(
                        400, "invalid_input", "the Content-Length header is not a number", -32600
                    ) from None
                if length > self.max_body_bytes:
                    raise self._too_large(f"{length:,}")

    async def _read(self, receive: Receive) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Refused(400, "invalid_input", "the client went away", -32600)
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                raise self._too_large(f"more than {self.max_body_bytes:,}")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    def _check_body(self, body: bytes) -> None:
        if not body:
            return
        try:
            body.decode("utf-8")
        except UnicodeDecodeError as err:
            raise _Refused(
                400,
                "invalid_input",
                f"the request body is not valid UTF-8 (byte {err.start}): send UTF-8 JSON",
                -32700,
            ) from None
        depth = json_depth(body)
        if depth > self.max_json_depth:
            raise _Refused(
                400,
                "invalid_input",
                f"the request body nests {depth} levels deep, over the limit of "
                f"{self.max_json_depth}: flatten the metadata",
                -32600,
            )

    async def _refuse(self, scope: Scope, send: Send, refused: _Refused) -> None:
        path = str(scope.get("path", ""))
        status = refused.status
        payload: dict[str, Any]
        if path in ("", "/"):
            status = 200 if refused.rpc_code == -32700 else refused.status
            payload = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": refused.rpc_code, "message": refused.message},
            }
        elif path.startswith(REST_PREFIX):
            payload = {
                "error": {
                    "code": status,
                    "status": "INVALID_ARGUMENT" if status == 400 else "OUT_OF_RANGE",
                    "message": refused.message,
                }
            }
        else:
            payload = {"error": refused.code, "message": refused.message, "detail": {}}
        body = json.dumps(payload).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


__all__ = ["RequestLimits", "json_depth"]
