"""The A2A service: server, client, memory API and turn hooks (DESIGN.md section 6).

Public API (imported lazily, so that importing :mod:`smartctx.service.hooks` stays cheap and
free of cycles)::

    from smartctx.service import serve, SmartctxClient

    with serve(port=0) as handle:              # uvicorn on a background thread
        ...  # async with SmartctxClient(handle.url) as client: await client.send("hi")

- ``serve(settings=None, *, host, port, grace, **app_options) -> ServerHandle`` (``.url``,
  ``.stop()``); ``serve_async(...) -> AsyncServerHandle`` inside a running loop;
- ``create_app(settings=None, *, base_url, model, providers, kb, hooks, embedder, counter,
  clock, history_formatter, database, memory) -> ServiceApp`` (``.asgi`` is the FastAPI app;
  ``memory`` turns cross-thread memory and recall on/off, see :mod:`smartctx.service.app`);
- ``OwnerMemory``: the per-owner long-term memory and profile providers of the service;
  ``CopiesForgetter``: deletes the service's copies (window slots, memory items, A2A tasks) of
  a forgotten personal-memory item;
- ``SmartctxClient(url, *, transport="jsonrpc"|"rest", owner="default")`` with ``send``,
  ``stream``, ``create_context``, ``snapshot``, ``prompt``, ``add_slot``, ``contexts``,
  ``events``; ``Reply`` and ``StreamEvent``;
- ``MemoryClient(url, *, owner)``: the memory API with mem0's names (``add``, ``search``,
  ``get``, ``get_all``, ``update``, ``delete``, ``delete_all``, ``history``, ``export``,
  ``import_``); ``MemoryService(db)``: the service layer under it, the CLI and MCP;
- ``TurnHook`` / ``TurnContext``: the per-turn extension contract.
"""

from __future__ import annotations

import importlib
from typing import Any

from smartctx.service.sdk_spans import quiet_sdk_spans

quiet_sdk_spans()  # before anything imports the a2a-sdk

_EXPORTS = {
    "AsyncServerHandle": "smartctx.service.server",
    "ServerHandle": "smartctx.service.server",
    "serve": "smartctx.service.server",
    "serve_async": "smartctx.service.server",
    "ServiceApp": "smartctx.service.app",
    "OwnerMemory": "smartctx.service.owner_memory",
    "CopiesForgetter": "smartctx.service.forget_copies",
    "create_app": "smartctx.service.app",
    "Reply": "smartctx.service.client",
    "SmartctxClient": "smartctx.service.client",
    "MemoryClient": "smartctx.service.memories.client",
    "MemoryService": "smartctx.service.memories.service",
    "StreamEvent": "smartctx.service.client",
    "TurnContext": "smartctx.service.hooks",
    "TurnHook": "smartctx.service.hooks",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'smartctx.service' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
