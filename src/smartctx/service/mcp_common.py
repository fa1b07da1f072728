"""What every MCP tool module shares: the session's backend, the tool context type, the
annotations, and :func:`call`, which turns failures into one readable tool error."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
from a2a.utils.errors import A2AError
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

from smartctx.core.errors import SmartCtxError
from smartctx.service.client import SmartctxClient
from smartctx.service.memories.client import MemoryClient

T = TypeVar("T")


@dataclass
class Backend:
    """What the tools talk to for one MCP session: A2A and contexts, and the memory API."""

    a2a: SmartctxClient
    memory: MemoryClient


ToolContext = Context[Backend, Any]

READ_ONLY = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
WRITE = ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False)
DESTRUCTIVE = ToolAnnotations(readOnlyHint=False, destructiveHint=True, openWorldHint=False)


async def call(client: SmartctxClient | MemoryClient, work: Awaitable[T]) -> T:
    """Await ``work``, turning every expected failure into a readable tool error."""
    try:
        return await work
    except SmartCtxError as err:
        raise ToolError(f"{err.code}: {err.message}") from err
    except A2AError as err:
        raise ToolError(f"A2A error from {client.url}: {err}") from err
    except httpx.HTTPError as err:
        raise ToolError(
            f"cannot reach the smartctx server at {client.url} ({type(err).__name__}: {err}); "
            "start it with `smartctx serve` or pass the right --url"
        ) from err


def backend(ctx: ToolContext) -> Backend:
    """The session's backend."""
    found: Backend = ctx.request_context.lifespan_context
    return found


__all__ = ["DESTRUCTIVE", "READ_ONLY", "WRITE", "Backend", "ToolContext", "backend", "call"]
