"""Chat models behind one protocol, and the test doubles shipped with the package.

A chat model takes OpenAI-style messages (``[{"role": ..., "content": ...}]``) and returns the
reply text. Implementations: :class:`~smartctx.agents.grounded.GroundedResponder` (offline,
deterministic, the default), :class:`~smartctx.agents.openai_model.OpenAIChatModel` (any
OpenAI-compatible endpoint), and the doubles below (``ScriptedModel``, ``FunctionModel``), in
the spirit of pydantic-ai's ``TestModel``/``FunctionModel``.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from smartctx.core import InvalidInput, UserError

if TYPE_CHECKING:
    from smartctx.core import Settings
    from smartctx.core.embeddings import Embedder

ChatMessages = list[dict[str, str]]
"""OpenAI-style chat messages: dicts with ``role`` and ``content``."""

ModelFunction = Callable[[ChatMessages], "str | Awaitable[str]"]


@runtime_checkable
class ChatModel(Protocol):
    """Answers a list of chat messages with one reply text.

    ``complete`` must not mutate ``messages``. Failures of a remote endpoint surface as
    ``UpstreamError``; a misuse (empty messages) as ``InvalidInput``.
    """

    name: str

    async def complete(self, messages: ChatMessages, *, temperature: float | None = None) -> str:
        """The assistant's reply to ``messages``."""
        ...


@runtime_checkable
class StreamingChatModel(ChatModel, Protocol):
    """A chat model that can also stream its reply as text chunks, in order.

    The concatenation of the chunks of ``stream`` is the reply ``complete`` would give; a
    failure mid-stream raises ``UpstreamError`` from the iterator.
    """

    def stream(
        self, messages: ChatMessages, *, temperature: float | None = None
    ) -> AsyncIterator[str]:
        """The reply to ``messages``, chunk by chunk."""
        ...


TokenSink = Callable[[str], Awaitable[None]]
"""Receives each reply chunk as the model produces it."""


async def complete_streaming(
    model: ChatModel,
    messages: ChatMessages,
    *,
    temperature: float | None = None,
    on_token: TokenSink | None = None,
) -> str:
    """The model's reply; with ``on_token``, chunks go to it as they arrive.

    A model without ``stream`` answers with ``complete`` and its reply is handed to ``on_token``
    as one chunk, so a caller sees the same sequence contract either way: the chunks
    concatenated equal the returned reply.
    """
    if on_token is None:
        return await model.complete(messages, temperature=temperature)
    if not isinstance(model, StreamingChatModel):
        reply = await model.complete(messages, temperature=temperature)
        if reply:
            await on_token(reply)
        return reply
    parts: list[str] = []
    async for chunk in model.stream(messages, temperature=temperature):
        if chunk:
            parts.append(chunk)
            await on_token(chunk)
    return "".join(parts)


def copy_messages(messages: Sequence[dict[str, str]]) -> ChatMessages:
    """A deep-enough copy of chat messages (every dict copied), after validating their shape."""
    out: ChatMessages = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or "role" not in message or "content" not in message:
            raise InvalidInput(f"message {i} must be a dict with 'role' and 'content'")
        out.append({str(k): str(v) for k, v in message.items()})
    return out


class ScriptedModel:
    """Returns ``replies`` in order and records every call's messages in ``calls``.

    When the replies are exhausted, ``complete`` raises ``UserError`` naming how many were
    scripted, so a test that makes one call too many fails clearly.
    """

    def __init__(self, replies: Iterable[str], *, name: str = "scripted") -> None:
        self.name = name
        self.replies: list[str] = list(replies)
        self.calls: list[ChatMessages] = []
        self.temperatures: list[float | None] = []

    @property
    def remaining(self) -> int:
        """How many scripted replies are left."""
        return len(self.replies) - len(self.calls)

    async def complete(self, messages: ChatMessages, *, temperature: float | None = None) -> str:
        index = len(self.calls)
        if index >= len(self.replies):
            raise UserError(
                f"ScriptedModel exhausted: {len(self.replies)} replies were scripted and call "
                f"{index + 1} asked for another; script more replies"
            )
        self.calls.append(copy_messages(messages))
        self.temperatures.append(temperature)
        return self.replies[index]


class FunctionModel:
    """Calls ``fn(messages)`` (sync or async) for each reply; records the calls in ``calls``.

    ``fn`` receives a copy of the messages, so it may keep or change them freely.
    """

    def __init__(self, fn: ModelFunction, *, name: str = "function") -> None:
        self.name = name
        self.fn = fn
        self.calls: list[ChatMessages] = []

    async def complete(self, messages: ChatMessages, *, temperature: float | None = None) -> str:
        self.calls.append(copy_messages(messages))
        result = self.fn(copy_messages(messages))
        if inspect.isawaitable(result):
            result = await result
        if not isinstance(result, str):
            raise UserError(f"FunctionModel's function returned {type(result).__name__}, not str")
        return result


def model_from_settings(settings: Settings, *, embedder: Embedder | None = None) -> ChatModel:
    """The configured chat model: OpenAI-compatible when ``llm_base_url`` is set, else offline.

    The offline responder ranks sentences with ``embedder`` (the service passes its cached
    similarity embedder, which already holds the turn's vectors), by default the similarity
    embedder ``settings.embedder``. No I/O happens here; the HTTP client is created on first use.
    """
    if settings.llm_base_url:
        from smartctx.agents.openai_model import OpenAIChatModel

        return OpenAIChatModel(
            settings.llm_base_url,
            settings.llm_model,
            settings.llm_api_key,
            timeout=settings.llm_timeout,
        )
    from smartctx.agents.grounded import GroundedResponder
    from smartctx.core.embeddings import get_embedder

    # the similarity embedder loads lazily, on the first answer that needs it
    return GroundedResponder.calibrated(embedder or get_embedder(settings.embedder))
