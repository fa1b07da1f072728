"""The memory as MCP tools: a thin MCP server over a running smartctx server.

``create_mcp_server(url)`` returns an :class:`~mcp.server.mcpserver.MCPServer` whose tools call
the server's HTTP memory API and its A2A endpoint through
:class:`~smartctx.service.client.SmartctxClient` and
:class:`~smartctx.service.memories.client.MemoryClient`, so it works against any smartctx
server URL (local or remote) and never opens the database itself. The clients (HTTP connection
pools) live for one MCP session: opened by the server's lifespan, closed when the session ends.
Every call acts as one owner: ``owner``, else the owner of ``api_key`` (sent as a bearer
credential; default ``SMARTCTX_API_KEY``), else ``"default"``. ``smartctx mcp`` serves it over
stdio or streamable HTTP.

Context tools here (results are the same JSON as the memory API):

- ``list_contexts()``: the owner's contexts.
- ``create_context(context_id?, preset?, budget?, system_prompt?)``: a new context.
- ``get_snapshot(context_id)``: budget, usage, per-kind counts, active slots, recent events.
- ``get_prompt(context_id, query?)``: the prompt the model would be sent now.
- ``add_slot(context_id, kind, text, source_id?, priority?)``: add one slot; the answer says
  whether it was admitted and what the funnel did.
- ``ask(text, context_id?)``: send one A2A message to the agent and return its reply with the
  turn's memory events; without ``context_id`` a new context is started.

Memory, profile, pairs, forget and knowledge-base tools: :mod:`smartctx.service.mcp_memory`;
``assemble_prompt``, the resources and the prompts: :mod:`smartctx.service.mcp_context`.

Failures come back as MCP tool errors (``is_error``) whose text says what went wrong and what to
do: smartctx errors keep their code and message (``not_found: no context 'x' ...``), an
unreachable server names its URL.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.mcpserver import MCPServer

from smartctx import __version__
from smartctx.core.errors import InvalidInput
from smartctx.core.slots import SlotKind
from smartctx.service.client import API_KEY_ENV, SmartctxClient, Transport
from smartctx.service.mcp_common import READ_ONLY, WRITE, Backend, ToolContext, call
from smartctx.service.mcp_context import register_context_extras
from smartctx.service.mcp_memory import register_memory_tools
from smartctx.service.memories.client import MemoryClient
from smartctx.service.owner import DEFAULT_OWNER, check_owner

INSTRUCTIONS = (
    "smartctx keeps an agent's context window inside a token budget and remembers users across "
    "sessions. Long-term memory: add_memory, search_memories, get_memory, list_memories, "
    "update_memory, delete_memory, memory_history, export_memories, import_memories. Context "
    "windows: list_contexts, create_context, get_snapshot, get_prompt, add_slot, "
    "assemble_prompt (relevant memories and documents put into a context within its budget, "
    "then the prompt), ask (talk to the smartctx agent). Personal memory: get_profile, "
    "list_pairs, forget (needs confirm=true). Knowledge base: kb_search, kb_ingest."
)


def _client(ctx: ToolContext) -> SmartctxClient:
    return ctx.request_context.lifespan_context.a2a


def create_mcp_server(
    url: str,
    *,
    owner: str | None = None,
    api_key: str | None = None,
    transport: Transport = "jsonrpc",
    timeout: float = 120.0,
) -> MCPServer[Backend]:
    """An MCP server exposing the memory of the smartctx server at ``url`` (no I/O here).

    ``api_key`` is the server's API key or JWT (default: ``SMARTCTX_API_KEY``); ``transport`` is
    the A2A binding ``ask`` uses (``jsonrpc`` or ``rest``); ``timeout`` bounds
    each HTTP call, an agent turn included. Raises ``InvalidInput`` for an unknown transport or
    a malformed owner name.
    """
    if transport not in ("jsonrpc", "rest"):
        raise InvalidInput(f"transport must be 'jsonrpc' or 'rest', not {transport!r}")
    api_key = api_key if api_key is not None else os.environ.get(API_KEY_ENV) or None
    if owner is None and not api_key:
        owner = DEFAULT_OWNER
    owner = check_owner(owner) if owner is not None else None

    @asynccontextmanager
    async def lifespan(_server: MCPServer[Backend]) -> AsyncIterator[Backend]:
        async with MemoryClient(
            url, owner=owner, api_key=api_key, transport=transport, timeout=timeout
        ) as client:
            yield Backend(client, client)  # one connection pool for both faces

    server: MCPServer[Backend] = MCPServer(
        "smartctx",
        title="smartctx memory",
        instructions=INSTRUCTIONS,
        version=__version__,
        lifespan=lifespan,
        log_level="WARNING",
    )

    @server.tool(annotations=READ_ONLY)
    async def list_contexts(ctx: ToolContext) -> dict[str, Any]:
        """List the owner's contexts (id, preset, budget, version, log size), newest first."""
        client = _client(ctx)
        contexts = await call(client, client.contexts())
        return {"owner": client.owner, "contexts": contexts}

    @server.tool(annotations=WRITE)
    async def create_context(
        ctx: ToolContext,
        context_id: str | None = None,
        preset: str | None = None,
        budget: int | None = None,
        system_prompt: str | None = None,
    ) -> dict[str, Any]:
        """Create a context. preset: default | eviction | compression | fifo; budget in tokens;
        system_prompt becomes the pinned system slot. Omitted values take the server's
        defaults; an omitted context_id gets a fresh one. Fails if the context exists."""
        client = _client(ctx)
        return await call(
            client,
            client.create_context(
                context_id, preset=preset, budget=budget, system_prompt=system_prompt
            ),
        )

    @server.tool(annotations=READ_ONLY)
    async def get_snapshot(ctx: ToolContext, context_id: str) -> dict[str, Any]:
        """The context's snapshot: budget, tokens used, per-kind counts and tokens, the active
        slots (id, kind, priority, source_id, tokens, state, pinned, repeat_count, provenance,
        text) and the recent memory events."""
        client = _client(ctx)
        return await call(client, client.snapshot(context_id))

    @server.tool(annotations=READ_ONLY)
    async def get_prompt(
        ctx: ToolContext, context_id: str, query: str | None = None
    ) -> dict[str, Any]:
        """The prompt the model would be sent now (chat messages, plain text, slot ids, tokens).
        With a query, archived slots relevant to it may be recalled into the prompt."""
        client = _client(ctx)
        return await call(client, client.prompt(context_id, query))

    @server.tool(annotations=WRITE)
    async def add_slot(
        ctx: ToolContext,
        context_id: str,
        kind: SlotKind,
        text: str,
        source_id: str | None = None,
        priority: float | None = None,
    ) -> dict[str, Any]:
        """Add one slot to a context. kind: system, user, agent, rag_doc, tool_log, summary or
        memory; source_id says where the text came from (for example kb:vpn.md#2); priority
        overrides the kind's default (0-100). Returns the slot, whether it was admitted (a
        duplicate is merged or refused), the events and the new snapshot."""
        client = _client(ctx)
        return await call(
            client,
            client.add_slot(context_id, kind.value, text, priority=priority, source_id=source_id),
        )

    @server.tool(annotations=WRITE)
    async def ask(ctx: ToolContext, text: str, context_id: str | None = None) -> dict[str, Any]:
        """Send a message to the smartctx agent over A2A and wait for its answer. Without
        context_id a new conversation starts (its id is in the result). Returns the reply text,
        context and task ids, the task state, the turn's memory events and a compact
        snapshot (budget, tokens used, counts per kind)."""
        client = _client(ctx)
        reply = await call(client, client.send(text, context_id))
        return {
            "text": reply.text,
            "context_id": reply.context_id,
            "task_id": reply.task_id,
            "state": reply.state,
            "events": reply.events,
            "snapshot": reply.snapshot,
        }

    register_memory_tools(server)
    register_context_extras(server)
    return server


__all__ = ["INSTRUCTIONS", "Backend", "create_mcp_server"]
