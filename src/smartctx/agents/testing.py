"""A real, loopback OpenAI-compatible server for tests and demos (like pydantic-ai's TestModel).

``OpenAICompatibleTestServer`` serves ``POST /v1/chat/completions`` (non-streaming, and SSE
streaming when the request says ``"stream": true``) and ``GET /v1/models`` on ``127.0.0.1`` at an
ephemeral port, from a background thread, so it works under sync and async tests alike::

    with OpenAICompatibleTestServer(reply=lambda messages: "hi") as server:
        model = OpenAIChatModel(server.base_url, "test-model")
        ...
    # or: async with OpenAICompatibleTestServer() as server: ...

Contract: the listening socket is bound before ``start`` returns, so the server accepts
connections as soon as it is started (no polling, no sleeps). Every request is recorded in
``requests`` (method, path, lower-cased headers, parsed JSON body or ``None``). Responses
queued with :meth:`enqueue` are served first, in order, verbatim (to simulate errors and
malformed bodies); otherwise the reply function answers. With ``api_key`` set, a request without
``Authorization: Bearer <api_key>`` gets 401.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import socket
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from smartctx.core import UserError

ReplyFunction = Callable[[list[dict[str, str]]], "str | Awaitable[str]"]


def echo_reply(messages: list[dict[str, str]]) -> str:
    """The default reply: ``echo: <last user message>``."""
    last = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
    return f"echo: {last}"


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    json: Any


@dataclass(frozen=True, slots=True)
class RawResponse:
    """A response served verbatim (see :meth:`OpenAICompatibleTestServer.enqueue`)."""

    status: int
    body: str
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


class OpenAICompatibleTestServer:
    """A small OpenAI-compatible HTTP server on loopback (see the module docstring).

    ``reply`` is a sync or async function of the request's messages, or any object with an async
    ``complete(messages)`` (a smartctx ``ChatModel``, e.g. ``GroundedResponder``).
    """

    def __init__(
        self,
        reply: ReplyFunction | Any | None = None,
        *,
        model: str = "test-model",
        api_key: str | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        self.reply = reply if reply is not None else echo_reply
        self.model = model
        self.api_key = api_key
        self.host = host
        self.requests: list[RecordedRequest] = []
        self._queue: deque[RawResponse] = deque()
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self.port = 0
        self._counter = 0

    # lifecycle ----------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The API root to give a client, e.g. ``http://127.0.0.1:54321/v1``."""
        if not self.port:
            raise UserError("the test server is not started: use it as a context manager")
        return f"http://{self.host}:{self.port}/v1"

    def app(self) -> Starlette:
        """The Starlette application (usable without a socket, e.g. with httpx's ASGI transport)."""
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )

    def start(self) -> OpenAICompatibleTestServer:
        """Binds the socket and serves from a daemon thread; returns ``self``."""
        if self._thread is not None:
            return self
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, 0))
        sock.listen(128)
        self._socket = sock
        self.port = int(sock.getsockname()[1])
        config = uvicorn.Config(
            self.app(), log_level="warning", lifespan="off", ws="none", http="h11"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True, name="openai-test"
        )
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Asks the server to exit and waits for its thread (idempotent)."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        if self._socket is not None:
            self._socket.close()
        self._server = self._thread = self._socket = None

    def __enter__(self) -> OpenAICompatibleTestServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> OpenAICompatibleTestServer:
        return self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.stop)

    # scripting ----------------------------------------------------------------------------------

    def enqueue(
        self, status: int = 200, body: str | dict[str, Any] = "", *, content_type: str | None = None
    ) -> None:
        """Serves ``body`` with ``status`` to the next chat request (dicts are sent as JSON)."""
        text = json.dumps(body) if isinstance(body, dict) else body
        kind = content_type or ("application/json" if isinstance(body, dict) else "text/plain")
        with self._lock:
            self._queue.append(RawResponse(status, text, kind))

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """The recorded chat-completion requests, in order."""
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    # handlers -----------------------------------------------------------------------------------

    async def _record(self, request: Request) -> Any:
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.requests.append(RecordedRequest(request.method, request.url.path, headers, body))
        return body

    def _unauthorized(self, request: Request) -> Response | None:
        if self.api_key is None:
            return None
        if request.headers.get("authorization") == f"Bearer {self.api_key}":
            return None
        error = {"error": {"message": "invalid api key", "type": "invalid_request_error"}}
        return JSONResponse(error, status_code=401)

    async def _models(self, request: Request) -> Response:
        await self._record(request)
        denied = self._unauthorized(request)
        if denied is not None:
            return denied
        return JSONResponse({"object": "list", "data": [{"id": self.model, "object": "model"}]})

    async def _chat(self, request: Request) -> Response:
        body = await self._record(request)
        denied = self._unauthorized(request)
        if denied is not None:
            return denied
        with self._lock:
            scripted = self._queue.popleft() if self._queue else None
        if scripted is not None:
            return Response(scripted.body, scripted.status, media_type=scripted.content_type)
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            error = {"error": {"message": "body must be JSON with a messages list"}}
            return JSONResponse(error, status_code=400)
        messages = [
            {"role": str(m.get("role", "")), "content": str(m.get("content", ""))}
            for m in body["messages"]
            if isinstance(m, dict)
        ]
        text = await self._answer(messages)
        with self._lock:
            self._counter += 1
            completion_id = f"chatcmpl-test-{self._counter}"
        model = str(body.get("model") or self.model)
        if body.get("stream"):
            return StreamingResponse(
                self._stream(completion_id, model, text), media_type="text/event-stream"
            )
        return JSONResponse(
            {
                "id": completion_id,
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            }
        )

    async def _answer(self, messages: list[dict[str, str]]) -> str:
        complete = getattr(self.reply, "complete", None)
        result = complete(messages) if complete is not None else self.reply(messages)
        if inspect.isawaitable(result):
            result = await result
        return str(result)

    async def _stream(self, completion_id: str, model: str, text: str) -> AsyncIterator[str]:
        words = text.split(" ")
        for i, word in enumerate(words):
            piece = word if i == 0 else f" {word}"
            chunk = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "model": model,
                "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
            }
            yield f"data: {json.dumps(chunk)}\n\n"
        final = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "model": model,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        }
        yield f"data: {json.dumps(final)}\n\n"
        yield "data: [DONE]\n\n"
