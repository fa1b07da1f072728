"""The A2A request handler: the SDK's default handler behind input checks.

Every message is checked *before* the SDK creates or touches a task, so a rejected request
leaves the task store and the context store exactly as they were. Rejections are the protocol's
invalid-params error (JSON-RPC ``-32602``; HTTP+JSON ``400``) with a message that says what to
fix: a malformed owner header, an empty message, a message over ``max_message_chars``, or bad
``smartctx`` options in the message metadata. A message whose parts have a media type the agent
card does not declare gets ``ContentTypeNotSupportedError`` (``-32005``).

With a :class:`~smartctx.service.delivery.DeliveryLog`, a message is applied once per
``messageId``: a retry answers with the task of the first delivery (see that module).

Any failure that is not an A2A error reaches the client as a bare internal error (``-32603``,
HTTP 500) saying only that the server logged the details: never SQL, a stack or a path.

``smartctx`` options in the message metadata.

Overload: at most ``max_running`` turns run at once and at most ``max_waiting`` wait (in arrival
order); a request beyond that is refused at once with a retryable ``ServerBusy`` error (JSON-RPC
internal-error code, ``data: {"retryable": true, "retry_after_ms": ...}``), never left to time out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any

from a2a.helpers.proto_helpers import get_message_text
from a2a.server.agent_execution import RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import Event
from a2a.server.request_handlers import DefaultRequestHandlerV2
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import A2AError, InternalError, InvalidParamsError
from a2a.utils.input_mode_validator import validate_input_modes
from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]

from smartctx.core.errors import SmartCtxError
from smartctx.service.delivery import DeliveryLog
from smartctx.service.fresh_tasks import FreshTaskIds

logger = logging.getLogger(__name__)
INTERNAL = "internal error: the server logged the details; try again later"
ONE_EVENT = "smartctx.one_event"
"""Call-context state: the request is a plain send, whose new task no one can watch until it
ends, so the executor may save it once, finished (one task save, not three)."""
_CLAIMED = "smartctx.claimed_task"
"""Call-context state: the task id the handler claimed the message for before the SDK ran."""


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
        deliveries: DeliveryLog | None = None,
        max_running: int = 16,
        max_waiting: int = 256,
        hold: Callable[[], contextlib.AbstractAsyncContextManager[None]] | None = None,
        task_ids: FreshTaskIds | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._task_ids = task_ids
        """The generator of the request context builder's task ids, when the handler may take a
        new task's id ahead (see :meth:`_claimed`)."""
        self._hold = hold or contextlib.nullcontext
        self._max_chars = max_chars
        self._extra_check = extra_check
        self._deliveries = deliveries
        self._max_running = max_running
        self._max_waiting = max_waiting
        self._running = asyncio.Semaphore(max_running)
        self._waiting = 0

    @property
    def max_running(self) -> int:
        """How many turns run at once (more wait)."""
        return self._max_running

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
        validate_input_modes(params.message, self._agent_card)
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
        configuration = params.configuration
        # Nobody sees a task of this send before it ends: the executor may save it once.
        context.state[ONE_EVENT] = not (
            configuration.return_immediately
            or configuration.HasField("task_push_notification_config")
        )
        key = self._key(params, context)
        if key is None or self._deliveries is None:
            # the turn's statements share one connection, taken once it runs (one waiting for
            # its place holds none)
            async with self._admitted(), self._hold():
                sent: Message | Task = await _guarded(super().on_message_send(params, context))
            return sent
        try:
            deliveries = self._deliveries
            claim = self._claimed(deliveries, key, params, context)
            async with deliveries.lock(*key), claim as fresh:
                if not fresh:
                    earlier: Task | None = await _guarded(self._earlier(key, context))
                    if earlier is not None:
                        return earlier
                async with self._admitted(), self._hold():
                    result: Message | Task = await _guarded(
                        super().on_message_send(params, context)
                    )
                return result
        finally:
            self._deliveries.release(*key)

    @contextlib.asynccontextmanager
    async def _claimed(
        self,
        deliveries: DeliveryLog,
        key: tuple[str, str],
        params: SendMessageRequest,
        context: ServerCallContext,
    ) -> AsyncIterator[bool]:
        """Whether a send that starts a new task claimed its message for that task at once
        (one statement, the task's id taken ahead: :mod:`.fresh_tasks`); False for a message
        delivered before and for one that names its task, which :meth:`_earlier` checks."""
        if self._task_ids is None or params.message.task_id:
            yield False
            return
        with self._task_ids.planned() as task_id:
            fresh = await _guarded(deliveries.claim_new(*key, task_id))
            if fresh:
                context.state[_CLAIMED] = task_id
            yield fresh

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        self.check(params, context)
        key = self._key(params, context)
        if key is None or self._deliveries is None:
            async for event in self._stream(params, context):
                yield event
            return
        try:
            async with self._deliveries.lock(*key):
                earlier = await _guarded(self._earlier(key, context))
                if earlier is not None:
                    yield earlier
                    return
                async for event in self._stream(params, context):
                    yield event
        finally:
            self._deliveries.release(*key)

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:
        task: Task | None = await _guarded(super().on_get_task(params, context))
        return task

    async def on_list_tasks(
        self, params: ListTasksRequest, context: ServerCallContext
    ) -> ListTasksResponse:
        tasks: ListTasksResponse = await _guarded(super().on_list_tasks(params, context))
        return tasks

    async def on_cancel_task(
        self, params: CancelTaskRequest, context: ServerCallContext
    ) -> Task | None:
        task: Task | None = await _guarded(super().on_cancel_task(params, context))
        return task

    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        async for event in _guarded_events(super().on_subscribe_to_task(params, context)):
            yield event

    async def _stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        async with self._admitted():
            async for event in _guarded_events(super().on_message_send_stream(params, context)):
                yield event

    async def _setup_active_task(
        self, params: SendMessageRequest, call_context: ServerCallContext
    ) -> tuple[Any, RequestContext]:
        active, request = await super()._setup_active_task(params, call_context)
        key = self._key(params, call_context)
        claimed = call_context.state.get(_CLAIMED)  # by _claimed, for this very task
        if key and self._deliveries and request.task_id and request.task_id != claimed:
            await self._deliveries.claim(*key, request.task_id)
        return active, request

    @staticmethod
    def _key(params: SendMessageRequest, context: ServerCallContext) -> tuple[str, str] | None:
        message_id = params.message.message_id if params.HasField("message") else ""
        if not message_id:
            return None
        return (context.user.user_name, message_id[:255])

    async def _earlier(self, key: tuple[str, str], context: ServerCallContext) -> Task | None:
        """The task of an earlier delivery of this message, unless it failed or is gone."""
        if self._deliveries is None:
            return None
        task_id = await self._deliveries.task_for(*key)
        if task_id is None:
            return None
        try:
            task: Task | None = await self.on_get_task(GetTaskRequest(id=task_id), context)
        except A2AError:
            return None
        if task is None or task.status.state == TaskState.TASK_STATE_FAILED:
            return None
        return task


async def _guarded_events(events: AsyncIterator[Event]) -> AsyncGenerator[Event, None]:
    """``events``, turning any failure that is not an A2A error into a bare one (a stream)."""
    try:
        async for event in events:
            yield event
    except (A2AError, SmartCtxError):
        raise
    except Exception as err:
        logger.exception("streamed request failed")
        raise InternalError(message=INTERNAL) from err


async def _guarded(work: Awaitable[Any]) -> Any:
    """``await work``, turning any failure that is not an A2A error into a bare one."""
    try:
        return await work
    except (A2AError, SmartCtxError):
        raise
    except Exception as err:
        logger.exception("message failed")
        raise InternalError(message=INTERNAL) from err
