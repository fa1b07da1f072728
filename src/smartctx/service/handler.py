"""The A2A request handler: the SDK's default handler behind input checks.

Every message is checked *before* the SDK creates or touches a task, so a rejected request
leaves the task store and the context store exactly as they were. Rejections are the protocol's
invalid-params error (JSON-RPC ``-32602``; HTTP+JSON ``400``) with a message that says what to
fix: a malformed owner header, an empty message, a message over ``max_message_chars``, or bad
``smartctx`` options in the message metadata.

Overload: at most ``max_running`` turns run at once and at most ``max_waiting`` wait (in arrival
order); a request beyond that is refused at once with a retryable ``ServerBusy`` error (JSON-RPC
internal-error code, ``data: {"retryable": true, "retry_after_ms": ...}``), never left to time out.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

from a2a.helpers.proto_helpers import get_message_text
from a2a.server.context import ServerCallContext
from a2a.server.events import Event
from a2a.server.request_handlers import DefaultRequestHandlerV2
from a2a.types.a2a_pb2 import Message, SendMessageRequest, Task
from a2a.utils.errors import InternalError, InvalidParamsError
from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]

from smartctx.core.errors import SmartCtxError


class ServerBusy(InternalError):
    """Too many turns running and waiting: a quick, retryable refusal (``data.retryable``)."""


MessageCheck = Callable[[str, dict[str, Any]], None]
"""Raises ``SmartCtxError`` when a message (text, metadata) must be rejected."""


def message_metadata(message: Message) -> dict[str, Any]:
    """The message's metadata as plain JSON data (a fresh dict)."""
    return dict(MessageToDict(message.metadata)) if message.HasField("metadata") else {}


class GuardedRequestHandler(DefaultRequestHandlerV2):
    """``DefaultRequestHandlerV2`` that validates every incoming message first.

    ``max_chars`` bounds the text of one message; ``extra_check`` (optional) validates the
    smartctx metadata. Both run before any state is read or written.
    """

    def __init__(
        self,
        *args: Any,
        max_chars: int,
        extra_check: MessageCheck | None = None,
        max_running: int = 16,
        max_waiting: int = 256,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._max_chars = max_chars
        self._extra_check = extra_check
        self._max_running = max_running
        self._max_waiting = max_waiting
        self._running = asyncio.Semaphore(max_running)
        self._waiting = 0

    @contextlib.asynccontextmanager
    async def _admitted(self) -> AsyncIterator[None]:
        """A turn's place: at most ``max_running`` run, at most ``max_waiting`` wait in arrival
        order; beyond that the request fails at once with :class:`ServerBusy`."""
        if self._running.locked() and self._waiting >= self._max_waiting:
            raise ServerBusy(
                message=(
                    f"server busy: {self._max_running} turns running and {self._waiting} "
                    "waiting; retry in a moment"
                ),
                data={"retryable": True, "retry_after_ms": 1000},
            )
        self._waiting += 1
        try:
            await self._running.acquire()
        finally:
            self._waiting -= 1
        try:
            yield
        finally:
            self._running.release()

    def check(self, params: SendMessageRequest, context: ServerCallContext) -> None:
        """Raise ``InvalidParamsError`` when the request must be rejected."""
        owner_error = context.state.get("headers", {}).get("x-smartctx-owner-error")
        if owner_error:
            raise InvalidParamsError(message=str(owner_error))
        if not params.HasField("message"):
            raise InvalidParamsError(message="the request has no message")
        text = get_message_text(params.message)
        if not text.strip():
            raise InvalidParamsError(
                message="the message is empty: send at least one non-empty text part"
            )
        if len(text) > self._max_chars:
            raise InvalidParamsError(
                message=(
                    f"the message has {len(text):,} characters, over the limit of "
                    f"{self._max_chars:,}: shorten it or raise SMARTCTX_MAX_MESSAGE_CHARS"
                ),
                data={"length": len(text), "limit": self._max_chars},
            )
        if self._extra_check is not None:
            try:
                self._extra_check(text, message_metadata(params.message))
            except SmartCtxError as err:
                raise InvalidParamsError(message=err.message) from err

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Message | Task:
        self.check(params, context)
        async with self._admitted():
            result: Message | Task = await super().on_message_send(params, context)
        return result

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        self.check(params, context)
        async with self._admitted():
            async for event in super().on_message_send_stream(params, context):
                yield event
