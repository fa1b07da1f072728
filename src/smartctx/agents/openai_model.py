"""A chat model for any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp server).

``POST {base_url}/chat/completions`` with ``{"model", "messages"[, "temperature"]}``;
``complete`` asks for one reply, ``stream`` for server-sent chunks (``"stream": true``) and yields
each ``choices[0].delta.content`` as it arrives. Every failure (connection error, timeout, HTTP
error status, a body that is not the expected JSON) becomes ``UpstreamError`` whose message
names the endpoint and what went wrong.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

from smartctx.agents.models import ChatMessages, copy_messages
from smartctx.core import InvalidInput, UpstreamError

_BODY_PREVIEW = 200


class OpenAIChatModel:
    """Chat completions over HTTP.

    ``base_url`` is the API root including any version prefix (``http://localhost:11434/v1``).
    ``api_key``, when given, is sent as ``Authorization: Bearer <key>``. Pass ``client`` to reuse
    an ``httpx.AsyncClient`` and its connection pool (the caller owns and closes it); without
    one, each call opens and closes its own client, so the model holds no connection between
    calls and may be used from any event loop or thread (one TCP connect per call is nothing
    next to a model's latency). The constructor does no I/O.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout: float = 60,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        if not base_url:
            raise InvalidInput("OpenAIChatModel needs a base_url, e.g. http://localhost:11434/v1")
        if not model:
            raise InvalidInput("OpenAIChatModel needs a model name")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{model}"
        self.api_key = api_key
        self.timeout = timeout
        self._client = client

    @property
    def url(self) -> str:
        """The chat completions endpoint."""
        return f"{self.base_url}/chat/completions"

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    async def _post(self, payload: dict[str, Any]) -> httpx.Response:
        if self._client is not None:
            return await self._client.post(
                self.url, json=payload, headers=self._headers(), timeout=self.timeout
            )
        async with httpx.AsyncClient(timeout=self.timeout) as client:
            return await client.post(self.url, json=payload, headers=self._headers())

    def _payload(self, messages: ChatMessages, temperature: float | None) -> dict[str, Any]:
        if not messages:
            raise InvalidInput("complete() needs at least one message")
        payload: dict[str, Any] = {"model": self.model, "messages": copy_messages(messages)}
        if temperature is not None:
            payload["temperature"] = temperature
        return payload

    def _transport_error(self, exc: httpx.HTTPError) -> UpstreamError:
        if isinstance(exc, httpx.TimeoutException):
            return UpstreamError(
                f"chat model at {self.url} timed out after {self.timeout:g}s", url=self.url
            )
        return UpstreamError(
            f"chat model at {self.url} is unreachable: {type(exc).__name__}: {exc}", url=self.url
        )

    def _status_error(self, status: int, text: str) -> UpstreamError:
        return UpstreamError(
            f"chat model at {self.url} answered HTTP {status}: {text[:_BODY_PREVIEW]}",
            url=self.url,
            status=status,
        )

    async def complete(self, messages: ChatMessages, *, temperature: float | None = None) -> str:
        """The first choice's message content. Raises ``UpstreamError`` on any failure."""
        payload = self._payload(messages, temperature)
        try:
            response = await self._post(payload)
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from exc
        if response.status_code >= 400:
            raise self._status_error(response.status_code, response.text)
        return self._parse(response)

    async def stream(
        self, messages: ChatMessages, *, temperature: float | None = None
    ) -> AsyncIterator[str]:
        """The reply as it is generated: each non-empty ``delta.content`` of the SSE chunks,
        until ``data: [DONE]`` or the end of the body. ``UpstreamError`` on any failure, also
        mid-stream (chunks already yielded stay yielded)."""
        payload = self._payload(messages, temperature) | {"stream": True}
        headers = self._headers() | {"Accept": "text/event-stream"}
        async with contextlib.AsyncExitStack() as stack:
            client = self._client
            if client is None:
                client = await stack.enter_async_context(httpx.AsyncClient(timeout=self.timeout))
            try:
                response = await stack.enter_async_context(
                    client.stream(
                        "POST", self.url, json=payload, headers=headers, timeout=self.timeout
                    )
                )
                if response.status_code >= 400:
                    await response.aread()
                    raise self._status_error(response.status_code, response.text)
                async for line in response.aiter_lines():
                    chunk = self._chunk_text(line)
                    if chunk is None:
                        break
                    if chunk:
                        yield chunk
            except httpx.HTTPError as exc:
                raise self._transport_error(exc) from exc

    def _chunk_text(self, line: str) -> str | None:
        """The text of one SSE line: ``""`` for lines without text, ``None`` at ``[DONE]``."""
        if not line.startswith("data:"):
            return ""
        data = line[5:].strip()
        if data == "[DONE]":
            return None
        try:
            body = json.loads(data)
            delta = body["choices"][0].get("delta") or {} if body.get("choices") else {}
        except (json.JSONDecodeError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise UpstreamError(
                f"chat model at {self.url} streamed a chunk that is not a chat completion "
                f"chunk: {data[:_BODY_PREVIEW]!r}",
                url=self.url,
            ) from exc
        if isinstance(body, dict) and body.get("error"):
            raise UpstreamError(
                f"chat model at {self.url} reported an error mid-stream: "
                f"{json.dumps(body['error'])[:_BODY_PREVIEW]}",
                url=self.url,
            )
        content = delta.get("content") if isinstance(delta, dict) else None
        return content if isinstance(content, str) else ""

    def _parse(self, response: httpx.Response) -> str:
        try:
            body = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise UpstreamError(
                f"chat model at {self.url} returned a body that is not JSON: "
                f"{response.text[:_BODY_PREVIEW]!r}",
                url=self.url,
            ) from exc
        try:
            content = body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise UpstreamError(
                f"chat model at {self.url} returned JSON without choices[0].message.content: "
                f"{json.dumps(body)[:_BODY_PREVIEW]}",
                url=self.url,
            ) from exc
        if content is None:
            return ""
        if not isinstance(content, str):
            raise UpstreamError(
                f"chat model at {self.url} returned non-text content ({type(content).__name__})",
                url=self.url,
            )
        return content

    async def aclose(self) -> None:
        """Releases what the model holds: nothing, since a given client belongs to the caller
        and an own client lives for one call (kept so callers can close any model alike)."""
