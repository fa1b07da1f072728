"""The OpenAI-compatible face of the service: ``/v1/chat/completions`` and ``/v1/models``.

An unmodified OpenAI client pointed at ``http://<server>/v1`` gets smartctx-managed context;
see :mod:`smartctx.service.openai_proxy.routes` for the contract.
"""

from smartctx.service.openai_proxy.routes import CONTEXT_HEADER, OpenAIProxy, openai_router

__all__ = ["CONTEXT_HEADER", "OpenAIProxy", "openai_router"]
