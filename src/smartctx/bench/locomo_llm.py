"""The configured OpenAI-compatible model as the plain callables the LoCoMo benchmark uses.

``ask(model)`` turns a chat model into ``messages -> reply`` and ``complete(model)`` into
``prompt -> reply`` (for :class:`~smartctx.retrieval.keys_llm.LLMExtractor`); both block, running
the model's coroutine on a private event loop, so call them from synchronous code only (the
benchmark is). Replies are asked at temperature 0. A model error is raised as it is
(``UpstreamError``: one clear line).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from smartctx.agents.models import ChatModel
from smartctx.agents.openai_model import OpenAIChatModel
from smartctx.core.errors import ConfigError
from smartctx.core.settings import Settings


def chat_model(
    base_url: str | None, model: str | None, api_key: str | None, *, timeout: float | None = None
) -> OpenAIChatModel:
    """The model at ``base_url`` (else ``SMARTCTX_LLM_BASE_URL``), named ``model`` (else
    ``SMARTCTX_LLM_MODEL``). Raises ``ConfigError`` when no URL is configured."""
    settings = Settings()
    url = base_url or settings.llm_base_url
    if not url:
        raise ConfigError(
            "no chat model configured: pass --llm-url http://HOST/v1 (and --llm-model NAME) "
            "or set SMARTCTX_LLM_BASE_URL"
        )
    return OpenAIChatModel(
        url,
        model or settings.llm_model,
        api_key or settings.llm_api_key,
        timeout=timeout or settings.llm_timeout,
    )


def ask(model: ChatModel) -> Callable[[list[dict[str, str]]], str]:
    """``messages -> reply`` over ``model`` (blocking)."""

    def call(messages: list[dict[str, str]]) -> str:
        return asyncio.run(model.complete(messages, temperature=0))

    return call


def complete(model: ChatModel) -> Callable[[str], str]:
    """``prompt -> reply`` over ``model`` (blocking): the prompt is one user message."""
    chat = ask(model)
    return lambda prompt: chat([{"role": "user", "content": prompt}])
