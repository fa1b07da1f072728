"""``POST /v1/chat/completions`` and ``GET /v1/models``: smartctx as an OpenAI-compatible proxy.

A request's conversation enters the context named by the ``X-Smartctx-Context`` header, else
by the ``user`` field, else a new context (its id comes back in the ``X-Smartctx-Context``
response header); the owner is the request's owner, as on every other surface. The earlier
messages the context lacks are added (:mod:`.conversation`), then the last user message runs
as one turn of the A2A executor: the window's funnel, deduplication and recall shape the
prompt, the server's model answers (``SMARTCTX_LLM_*`` upstream, else the offline
``GroundedResponder``) and the reply is remembered. ``stream: true`` answers with server-sent
``chat.completion.chunk`` events as the upstream model's tokens arrive, then ``data: [DONE]``.

Errors use OpenAI's shape (``{"error": {"message", "type", "code"}}``) with the status of the
smartctx error table. A failure before the first token is an HTTP error; a failure after it
ends the stream with an ``error`` event (the turn is then not persisted). The request's
``model`` is echoed back; sampling options are not forwarded (the server's model decides).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import ValidationError

from smartctx.agents.agent import history_from_window
from smartctx.core.errors import (
    Conflict,
    InputTooLarge,
    InvalidInput,
    NotFound,
    SmartCtxError,
)
from smartctx.core.settings import Settings
from smartctx.core.tokens import TokenCounter
from smartctx.service.client import smartctx_info
from smartctx.service.contexts import ContextRegistry
from smartctx.service.executor import SmartctxExecutor
from smartctx.service.openai_proxy.conversation import history_slot, new_history, system_prompt
from smartctx.service.openai_proxy.schema import (
    ChatCompletionRequest,
    chunk,
    completion,
    completion_id,
    error_body,
    usage,
)
from smartctx.service.owner import owner_of_context

CONTEXT_HEADER = "X-Smartctx-Context"
_CONTEXT_RE = re.compile(r"^[A-Za-z0-9_.:@-]{1,128}$")
_DONE = object()


def _error(err: SmartCtxError) -> JSONResponse:
    body, status = error_body(err)
    return JSONResponse(body, status_code=status)


def context_of(request: Request, body: ChatCompletionRequest) -> str:
    """The context a request names (header, then ``user``), or a new id."""
    named = request.headers.get(CONTEXT_HEADER) or body.user
    if not named:
        return f"openai-{uuid.uuid4().hex}"
    if not _CONTEXT_RE.match(named):
        raise InvalidInput(
            f"context {named[:40]!r} is invalid: use 1-128 letters, digits or -_.:@ in the "
            f"{CONTEXT_HEADER} header or the user field"
        )
    return named


class OpenAIProxy:
    """The proxy's logic over the service's executor and context registry."""

    def __init__(
        self,
        executor: SmartctxExecutor,
        registry: ContextRegistry,
        settings: Settings,
        counter: TokenCounter,
    ) -> None:
        self.executor = executor
        self.registry = registry
        self.settings = settings
        self.counter = counter
        self._running: set[asyncio.Task[Any]] = set()

    @property
    def model_id(self) -> str:
        """The model the server answers with, as ``/v1/models`` lists it."""
        return self.settings.llm_model if self.settings.llm_base_url else "smartctx-grounded"

    async def enter_history(self, owner: str, context_id: str, body: ChatCompletionRequest) -> None:
        """Create the context if needed, then add the earlier messages it lacks."""
        try:
            await self.registry.open(owner, context_id)
        except NotFound:
            prompt = system_prompt(body.messages)
            options = self.registry.options(system_prompt=prompt)
            with contextlib.suppress(Conflict):  # created by a concurrent request: use it
                await self.registry.create(owner, context_id, options)
        async with self.registry.session(owner, context_id) as live:
            stored = [(m.role, m.text) for m in history_from_window(live.window)]
            for message in new_history(stored, body.messages):
                live.add(history_slot(message, context_id))

    async def turn(
        self,
        owner: str,
        context_id: str,
        body: ChatCompletionRequest,
        queue: asyncio.Queue[Any] | None,
    ) -> tuple[str, dict[str, Any]]:
        """Run the turn; with ``queue``, reply chunks go to it as they arrive."""
        text = body.messages[-1].text
        if len(text) > self.settings.max_message_chars:
            raise InputTooLarge(
                f"the message has {len(text):,} characters, over the limit of "
                f"{self.settings.max_message_chars:,}: shorten it or raise "
                "SMARTCTX_MAX_MESSAGE_CHARS"
            )
        await self.enter_history(owner, context_id, body)
        sink = queue.put if queue is not None else None
        return await self.executor.turn(owner, context_id, text, {}, on_token=sink)

    def usage_of(self, reply: str, meta: dict[str, Any]) -> dict[str, int]:
        prompt_tokens = int(smartctx_info(meta).get("prompt_tokens") or 0)
        return usage(prompt_tokens, self.counter.count(reply))

    async def respond(self, request: Request) -> Any:
        """Answer one chat-completions request (see the module docstring)."""
        try:
            raw = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(InvalidInput("the body must be a JSON object"))
        try:
            body = ChatCompletionRequest.model_validate(raw)
            context_id = context_of(request, body)
            owner = owner_of_context(request, context_id)
        except ValidationError as exc:
            shown = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5]
            )
            return _error(InvalidInput(f"invalid request: {shown}"))
        except SmartCtxError as err:
            return _error(err)
        headers = {CONTEXT_HEADER: context_id}
        if not body.stream:
            try:
                reply, meta = await self.turn(owner, context_id, body, None)
            except SmartCtxError as err:
                return _error(err)
            info = smartctx_info(meta)
            payload = completion(
                completion_id(), body.model, reply, self.usage_of(reply, meta), info
            )
            return JSONResponse(payload, headers=headers)
        return await self._stream(owner, context_id, body, asyncio.Queue(), headers)

    async def _stream(
        self,
        owner: str,
        context_id: str,
        body: ChatCompletionRequest,
        queue: asyncio.Queue[Any],
        headers: dict[str, str],
    ) -> Any:
        result: list[tuple[str, dict[str, Any]]] = []

        async def run() -> None:
            try:
                result.append(await self.turn(owner, context_id, body, queue))
            except BaseException as exc:
                await queue.put(exc)
                if not isinstance(exc, Exception):
                    raise
            else:
                await queue.put(_DONE)

        task = asyncio.create_task(run(), name=f"openai-proxy-{context_id}")
        # The turn finishes (and is remembered) even when the client goes away mid-stream.
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        first = await queue.get()
        if isinstance(first, SmartCtxError):
            return _error(first)
        if isinstance(first, BaseException):
            raise first
        return StreamingResponse(
            self._events(first, queue, result, body),
            media_type="text/event-stream",
            headers=headers | {"Cache-Control": "no-cache"},
        )

    async def _events(
        self,
        first: Any,
        queue: asyncio.Queue[Any],
        result: list[tuple[str, dict[str, Any]]],
        body: ChatCompletionRequest,
    ) -> AsyncIterator[str]:
        cid, model = completion_id(), body.model

        def sse(data: dict[str, Any]) -> str:
            return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

        yield sse(chunk(cid, model, {"role": "assistant", "content": ""}))
        item, sent = first, False
        while item is not _DONE:
            if isinstance(item, BaseException):
                message = item.message if isinstance(item, SmartCtxError) else type(item).__name__
                yield sse({"error": {"message": message, "type": "api_error"}})
                return
            sent = True
            yield sse(chunk(cid, model, {"content": item}))
            item = await queue.get()
        reply, meta = result[0]
        if not sent and reply:
            yield sse(chunk(cid, model, {"content": reply}))
        yield sse(chunk(cid, model, {}, "stop"))
        if body.include_usage:
            yield sse(chunk(cid, model, {}, tokens=self.usage_of(reply, meta)))
        yield "data: [DONE]\n\n"


def openai_router(proxy: OpenAIProxy) -> APIRouter:
    """The ``/v1`` routes. Mount before the A2A SDK's REST routes (their catch-all mount)."""
    router = APIRouter(prefix="/v1", tags=["smartctx: OpenAI-compatible proxy"])

    @router.post("/chat/completions", summary="OpenAI chat completions with managed context")
    async def chat_completions(request: Request) -> Any:
        """Body: an OpenAI chat-completions request. Header ``X-Smartctx-Context`` (or the
        ``user`` field) names the context; ``stream: true`` answers with SSE chunks."""
        return await proxy.respond(request)

    @router.get("/models", summary="The model the proxy answers with")
    async def models() -> dict[str, Any]:
        return {
            "object": "list",
            "data": [
                {"id": proxy.model_id, "object": "model", "created": 0, "owned_by": "smartctx"}
            ],
        }

    return router
