"""The OpenAI chat-completions wire format the proxy speaks: request validation and replies.

Only what the proxy needs is modelled; unknown request fields (``max_tokens``, ``tools``...)
are accepted and ignored, so an unmodified OpenAI client works. Content may be a string or a
list of parts, of which the ``text`` parts are read.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from smartctx.core.errors import SmartCtxError, status_for

Role = Literal["system", "developer", "user", "assistant", "tool", "function"]


class ChatMessage(BaseModel):
    """One request message; ``text`` is its content as plain text."""

    model_config = ConfigDict(extra="ignore")

    role: Role
    content: str | list[dict[str, Any]] | None = None
    name: str | None = None

    @property
    def text(self) -> str:
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(
            str(part.get("text", "")) for part in self.content if part.get("type") == "text"
        )


class ChatCompletionRequest(BaseModel):
    """``POST /v1/chat/completions`` body (the fields the proxy reads)."""

    model_config = ConfigDict(extra="ignore")

    model: str = Field(min_length=1, max_length=200)
    messages: list[ChatMessage] = Field(min_length=1, max_length=10_000)
    stream: bool = False
    user: str | None = Field(None, max_length=200)
    stream_options: dict[str, Any] | None = None

    @field_validator("messages")
    @classmethod
    def _ends_with_user(cls, messages: list[ChatMessage]) -> list[ChatMessage]:
        if messages[-1].role != "user" or not messages[-1].text.strip():
            raise ValueError("the last message must be a non-empty user message")
        return messages

    @property
    def include_usage(self) -> bool:
        return bool((self.stream_options or {}).get("include_usage"))


def completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def completion(
    cid: str, model: str, reply: str, tokens: dict[str, int], extra: dict[str, Any]
) -> dict[str, Any]:
    """A non-streamed ``chat.completion``; ``extra`` goes under the ``smartctx`` key."""
    return {
        "id": cid,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply},
                "finish_reason": "stop",
            }
        ],
        "usage": tokens,
        "smartctx": extra,
    }


def chunk(
    cid: str,
    model: str,
    delta: dict[str, Any],
    finish_reason: str | None = None,
    *,
    tokens: dict[str, int] | None = None,
) -> dict[str, Any]:
    """One ``chat.completion.chunk``; with ``tokens``, the usage chunk (no choices)."""
    body: dict[str, Any] = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": []
        if tokens is not None
        else [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }
    if tokens is not None:
        body["usage"] = tokens
    return body


def error_body(err: SmartCtxError) -> tuple[dict[str, Any], int]:
    """OpenAI's error shape for ``err`` and its HTTP status."""
    status = status_for(err)[0]
    kind = "invalid_request_error" if status < 500 else "api_error"
    return {"error": {"message": err.message, "type": kind, "code": err.code}}, status
