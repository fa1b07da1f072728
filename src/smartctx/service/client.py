"""A Python client for a smartctx server, built on the a2a-sdk client.

``SmartctxClient(url)`` speaks A2A over JSON-RPC (default) or HTTP+JSON
(``transport="rest"``), always sending ``A2A-Version: 1.0``, and wraps the memory API.
``api_key`` (default ``SMARTCTX_API_KEY``) is sent as ``Authorization: Bearer``; ``owner`` as
``X-Smartctx-Owner`` (only an admin key may name another owner than its own). Without both, the
client acts as a fresh anonymous owner of its own (``anon-...``), which no other client shares.
One client holds one HTTP connection pool: use it as an async context manager or call
``await client.close()``.

``send`` returns a :class:`Reply` (reply text, ids, the turn's memory events and the compact
snapshot from the artifact metadata). ``stream`` yields :class:`StreamEvent` items in the order
the server sends them (task, status updates, artifact, completion). A2A protocol errors surface
as the a2a-sdk's ``A2AError`` subclasses (for example ``InvalidParamsError``); memory-API errors
as smartctx errors (``NotFound``, ``InvalidInput``, ``Conflict``...).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal

import httpx
from a2a.client import A2ACardResolver, Client, ClientConfig, ClientFactory
from a2a.helpers.proto_helpers import get_artifact_text, get_message_text
from a2a.types.a2a_pb2 import (
    AgentCard,
    Artifact,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)
from a2a.utils.constants import PROTOCOL_VERSION_1_0, VERSION_HEADER, TransportProtocol
from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]

from smartctx.core.errors import (
    ERROR_TABLE,
    InvalidInput,
    NotFound,
    SmartCtxError,
    UpstreamError,
)
from smartctx.service.owner import OWNER_HEADER, anonymous_owner
from smartctx.service.wire import METADATA_KEY, camel_keys, snake_keys

API_KEY_ENV = "SMARTCTX_API_KEY"

Transport = Literal["jsonrpc", "rest"]


def _state_name(state: int) -> str:
    name: str = TaskState.Name(state)
    return name.removeprefix("TASK_STATE_").lower()


def _ints(value: Any) -> Any:
    """JSON numbers cross protobuf ``Struct`` as floats: give whole numbers back as ints."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_ints(v) for v in value]
    return value


def _struct(message: Any) -> dict[str, Any]:
    return dict(_ints(MessageToDict(message))) if message is not None else {}


@dataclass(frozen=True)
class Reply:
    """One answered turn. ``events``/``snapshot`` come from the artifact's ``smartctx`` metadata;
    ``metadata`` is the whole artifact metadata (turn hooks add their keys there)."""

    text: str
    context_id: str
    task_id: str
    state: str
    events: list[dict[str, Any]] = field(default_factory=list)
    snapshot: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StreamEvent:
    """One streamed A2A event: ``kind`` is ``task``, ``status``, ``artifact`` or ``message``;
    ``state`` the task state after it (``submitted``, ``working``, ``completed``...). An
    ``artifact`` event of a streamed reply is one chunk: ``append`` when it continues the
    artifact, ``last_chunk`` on the last one (which carries the metadata)."""

    kind: str
    task_id: str
    context_id: str
    state: str | None = None
    text: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    final: bool = False
    append: bool = False
    last_chunk: bool = False


def smartctx_info(metadata: dict[str, Any]) -> dict[str, Any]:
    """smartctx's object of an artifact's or message's metadata, with snake_case keys
    (``events``, ``snapshot``, ``prompt_tokens``, ``context_id``...); ``{}`` when absent. The
    wire carries camelCase keys (:mod:`smartctx.service.wire`)."""
    info = metadata.get(METADATA_KEY)
    return dict(snake_keys(info)) if isinstance(info, dict) else {}


def smartctx_options(**options: Any) -> dict[str, Any]:
    """Message metadata that carries smartctx options (``preset``, ``budget``,
    ``system_prompt``, ``keep_recent``; ``None`` values left out), keys in camelCase."""
    chosen = {k: v for k, v in options.items() if v is not None}
    return {METADATA_KEY: camel_keys(chosen)} if chosen else {}


def reply_from_task(task: Task) -> Reply:
    """The :class:`Reply` carried by a finished task (its last artifact)."""
    text = ""
    metadata: dict[str, Any] = {}
    if task.artifacts:
        artifact: Artifact = task.artifacts[-1]
        # A streamed reply is one artifact of appended chunks: its text is their concatenation.
        text = get_artifact_text(artifact, delimiter="")
        metadata = _struct(artifact.metadata) if artifact.HasField("metadata") else {}
    elif task.status.HasField("message"):
        text = get_message_text(task.status.message)
    info = smartctx_info(metadata)
    return Reply(
        text=text,
        context_id=task.context_id,
        task_id=task.id,
        state=_state_name(task.status.state),
        events=list(info.get("events") or []),
        snapshot=dict(info.get("snapshot") or {}),
        metadata=metadata,
    )


def _stream_event(response: StreamResponse) -> StreamEvent:
    if response.HasField("task"):
        task = response.task
        return StreamEvent("task", task.id, task.context_id, _state_name(task.status.state))
    if response.HasField("status_update"):
        update = response.status_update
        state = update.status.state
        text = get_message_text(update.status.message) if update.status.HasField("message") else ""
        final = state in (
            TaskState.TASK_STATE_COMPLETED,
            TaskState.TASK_STATE_FAILED,
            TaskState.TASK_STATE_CANCELED,
            TaskState.TASK_STATE_REJECTED,
        )
        return StreamEvent(
            "status", update.task_id, update.context_id, _state_name(state), text, final=final
        )
    if response.HasField("artifact_update"):
        art = response.artifact_update
        meta = _struct(art.artifact.metadata) if art.artifact.HasField("metadata") else {}
        return StreamEvent(
            "artifact",
            art.task_id,
            art.context_id,
            None,
            get_artifact_text(art.artifact, delimiter=""),
            meta,
            append=art.append,
            last_chunk=art.last_chunk,
        )
    message = response.message
    return StreamEvent(
        "message", message.task_id, message.context_id, None, get_message_text(message), final=True
    )


def _error_for(response: httpx.Response) -> SmartCtxError:
    try:
        body = response.json()
    except json.JSONDecodeError:
        body = {}
    message = str(body.get("message") or body.get("detail") or response.text[:200])
    code = body.get("error")
    for klass in ERROR_TABLE:
        if klass.code == code and klass.__init__ is SmartCtxError.__init__:
            return klass(message, **(body.get("detail") or {}))
    if response.status_code == 404:
        return NotFound(message)
    if 400 <= response.status_code < 500:
        return InvalidInput(message, status=response.status_code)
    return UpstreamError(f"server answered {response.status_code}: {message}")


class SmartctxClient:
    """Talks to one smartctx server as one owner. The constructor does no I/O."""

    def __init__(
        self,
        url: str,
        *,
        transport: Transport = "jsonrpc",
        owner: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
    ) -> None:
        if transport not in ("jsonrpc", "rest"):
            raise InvalidInput(f"transport must be 'jsonrpc' or 'rest', not {transport!r}")
        self.url = url.rstrip("/")
        self.transport: Transport = transport
        api_key = api_key if api_key is not None else os.environ.get(API_KEY_ENV) or None
        headers = {VERSION_HEADER: PROTOCOL_VERSION_1_0}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        if owner is None and not api_key:
            owner = anonymous_owner()
        if owner is not None:
            headers[OWNER_HEADER] = owner
        self.owner = owner
        """The owner this client names (None: the API key's own owner)."""
        self._http = httpx.AsyncClient(
            base_url=self.url, timeout=httpx.Timeout(timeout, connect=10.0), headers=headers
        )
        self._card: AgentCard | None = None
        self._clients: dict[bool, Client] = {}

    async def __aenter__(self) -> SmartctxClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Release the connection pool (idempotent)."""
        self._clients.clear()
        await self._http.aclose()

    # --- A2A -------------------------------------------------------------------------------

    async def card(self) -> AgentCard:
        """The server's agent card (fetched once)."""
        if self._card is None:
            self._card = await A2ACardResolver(self._http, self.url).get_agent_card()
        return self._card

    async def _client(self, streaming: bool) -> Client:
        if streaming not in self._clients:
            binding = (
                TransportProtocol.JSONRPC
                if self.transport == "jsonrpc"
                else TransportProtocol.HTTP_JSON
            )
            config = ClientConfig(
                streaming=streaming,
                httpx_client=self._http,
                supported_protocol_bindings=[binding.value],
                use_client_preference=True,
            )
            self._clients[streaming] = ClientFactory(config).create(await self.card())
        return self._clients[streaming]

    @staticmethod
    def _request(
        text: str, context_id: str | None, metadata: dict[str, Any] | None
    ) -> SendMessageRequest:
        message = Message(
            role=Role.ROLE_USER,
            message_id=uuid.uuid4().hex,
            parts=[Part(text=text)],
        )
        if context_id:
            message.context_id = context_id
        if metadata:
            message.metadata.update(metadata)
        return SendMessageRequest(message=message)

    async def send(
        self, text: str, context_id: str | None = None, metadata: dict[str, Any] | None = None
    ) -> Reply:
        """Send one message and wait for the finished task. ``context_id=None`` starts a new
        context (its id is in the reply)."""
        client = await self._client(streaming=False)
        result: Task | None = None
        async for response in client.send_message(self._request(text, context_id, metadata)):
            if response.HasField("task"):
                result = response.task
            elif response.HasField("message"):
                msg = response.message
                return Reply(get_message_text(msg), msg.context_id, msg.task_id, "completed")
        if result is None:
            raise UpstreamError("the server answered without a task")
        return reply_from_task(result)

    async def stream(
        self, text: str, context_id: str | None = None, metadata: dict[str, Any] | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Send one message over SSE and yield every event until the task ends."""
        client = await self._client(streaming=True)
        async for response in client.send_message(self._request(text, context_id, metadata)):
            yield _stream_event(response)

    # --- memory API ------------------------------------------------------------------------

    async def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = await self._http.request(method, path, **kwargs)
        if response.status_code >= 400:
            raise _error_for(response)
        return response.json()

    async def create_context(
        self,
        context_id: str | None = None,
        *,
        preset: str | None = None,
        budget: int | None = None,
        system_prompt: str | None = None,
        keep_recent: int | None = None,
    ) -> dict[str, Any]:
        """Create a context with a window preset/budget; ``Conflict`` if it exists already."""
        body = {
            key: value
            for key, value in {
                "context_id": context_id,
                "preset": preset,
                "budget": budget,
                "system_prompt": system_prompt,
                "keep_recent": keep_recent,
            }.items()
            if value is not None
        }
        result: dict[str, Any] = await self._json("POST", "/memory/contexts", json=body)
        return result

    async def contexts(self) -> list[dict[str, Any]]:
        """The owner's contexts (id, preset, budget, version...)."""
        result = await self._json("GET", "/memory/contexts")
        return list(result["contexts"])

    async def snapshot(self, context_id: str) -> dict[str, Any]:
        """The context's snapshot (same JSON as every surface)."""
        result: dict[str, Any] = await self._json("GET", f"/memory/contexts/{context_id}/snapshot")
        return result

    async def prompt(self, context_id: str, query: str | None = None) -> dict[str, Any]:
        """The prompt the model would get now (messages, text, slot ids, tokens)."""
        params = {"query": query} if query else None
        result: dict[str, Any] = await self._json(
            "GET", f"/memory/contexts/{context_id}/prompt", params=params
        )
        return result

    async def add_slot(
        self,
        context_id: str,
        kind: str,
        text: str,
        *,
        priority: float | None = None,
        source_id: str | None = None,
        pinned: bool = False,
        metadata: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Add one slot; the answer has ``slot``, ``admitted``, ``events`` and ``snapshot``."""
        body: dict[str, Any] = {"kind": kind, "text": text, "pinned": pinned}
        if priority is not None:
            body["priority"] = priority
        if source_id is not None:
            body["source_id"] = source_id
        if metadata:
            body["metadata"] = metadata
        result: dict[str, Any] = await self._json(
            "POST", f"/memory/contexts/{context_id}/slots", json=body
        )
        return result

    async def events(self, context_id: str) -> AsyncIterator[dict[str, Any]]:
        """Live memory events of a context (SSE), starting with a ``snapshot`` item.

        Each item is ``{"type": "snapshot"|"events", ...}``; the iterator ends when the server
        closes the stream.
        """
        path = f"/memory/contexts/{context_id}/events"
        async with self._http.stream("GET", path, timeout=None) as response:
            if response.status_code >= 400:
                await response.aread()
                raise _error_for(response)
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    yield json.loads(line[5:].strip())
