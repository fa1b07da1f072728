"""MCP tools of long-term and personal memory and the knowledge base.

``register_memory_tools(server)`` adds, over :class:`~smartctx.service.memories.client.MemoryClient`
(so every tool is the HTTP memory API's operation, scoped to the session's owner):

- memories: ``add_memory``, ``search_memories``, ``get_memory``, ``list_memories``,
  ``update_memory``, ``delete_memory``, ``memory_history``, ``export_memories``,
  ``import_memories``;
- personal memory: ``get_profile``, ``list_pairs``, ``forget`` (refused unless
  ``confirm`` is true);
- knowledge base: ``kb_search``, ``kb_ingest``.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from smartctx.service.mcp_common import (
    DESTRUCTIVE,
    READ_ONLY,
    WRITE,
    Backend,
    ToolContext,
    backend,
    call,
)

FORGET_KINDS = ("pair", "profile", "summary", "memory")


def register_memory_tools(server: MCPServer[Backend]) -> None:
    """Add the memory, personal-memory and knowledge-base tools to ``server``."""

    @server.tool(annotations=WRITE)
    async def add_memory(
        ctx: ToolContext,
        text: str | None = None,
        messages: list[dict[str, str]] | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        kind: str | None = None,
        infer: bool = True,
    ) -> dict[str, Any]:
        """Remember something for the owner (like mem0's add): either one text, stored as
        given, or chat messages ([{"role": "user", "content": ...}, ...]) whose user messages
        are mined for facts (infer=false stores every message verbatim). agent_id and
        session_id scope it; metadata is any JSON object to filter on later; kind defaults to
        "fact". Sensitive values (e-mails, phone and card numbers, secrets) are redacted. The
        same text in the same scope is stored once (event NONE). Returns what was stored."""
        if (text is None) == (messages is None):
            raise ToolError("give either text or messages")
        memory = backend(ctx).memory
        results = await call(
            memory,
            memory.add(
                text if text is not None else messages or [],
                agent_id=agent_id,
                run_id=session_id,
                metadata=metadata,
                kind=kind,
                infer=infer,
            ),
        )
        return {"results": results}

    @server.tool(annotations=READ_ONLY)
    async def search_memories(
        ctx: ToolContext,
        query: str,
        limit: int = 10,
        agent_id: str | None = None,
        session_id: str | None = None,
        kind: str | None = None,
        created_after: str | None = None,
        created_before: str | None = None,
        filters: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Search the owner's memories (BM25 and vectors fused), best first. Filters: agent_id,
        session_id, kind, created_after/created_before (ISO-8601), filters (metadata key ->
        value). Each result has score, similarity, source_id (mem:<id>), provenance and
        origin. An empty list means nothing relevant is remembered."""
        memory = backend(ctx).memory
        results = await call(
            memory,
            memory.search(
                query,
                limit=limit,
                agent_id=agent_id,
                run_id=session_id,
                kind=kind,
                created_after=created_after,
                created_before=created_before,
                filters=filters,
            ),
        )
        return {"results": results}

    @server.tool(annotations=READ_ONLY)
    async def get_memory(ctx: ToolContext, memory_id: str) -> dict[str, Any]:
        """One memory by id (text, kind, scopes, metadata, version, times, provenance)."""
        memory = backend(ctx).memory
        return await call(memory, memory.get(memory_id))

    @server.tool(annotations=READ_ONLY)
    async def list_memories(
        ctx: ToolContext,
        agent_id: str | None = None,
        session_id: str | None = None,
        kind: str | None = None,
        limit: int = 100,
        cursor: int = 0,
    ) -> dict[str, Any]:
        """The owner's memories, least recently written first, one page (limit 1-1000);
        pass next_cursor back as cursor for the next page (null: no more)."""
        memory = backend(ctx).memory
        return await call(
            memory,
            memory.get_all(
                agent_id=agent_id, run_id=session_id, kind=kind, limit=limit, cursor=cursor
            ),
        )

    @server.tool(annotations=WRITE)
    async def update_memory(
        ctx: ToolContext,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Change a memory's text and/or metadata (metadata is replaced). The old values stay
        in its history (memory_history) and its version rises."""
        memory = backend(ctx).memory
        return await call(memory, memory.update(memory_id, text, metadata=metadata))

    @server.tool(annotations=DESTRUCTIVE)
    async def delete_memory(ctx: ToolContext, memory_id: str) -> dict[str, Any]:
        """Delete one memory; its history keeps a DELETE entry with the old text (use forget
        with kind "memory" to erase the history too)."""
        memory = backend(ctx).memory
        return {"deleted": await call(memory, memory.delete(memory_id))}

    @server.tool(annotations=READ_ONLY)
    async def memory_history(ctx: ToolContext, memory_id: str) -> dict[str, Any]:
        """The changes of one memory, oldest first: ADD, UPDATE (old and new text and
        metadata), DELETE, IMPORT, each with its time."""
        memory = backend(ctx).memory
        return {"results": await call(memory, memory.history(memory_id))}

    @server.tool(annotations=READ_ONLY)
    async def export_memories(ctx: ToolContext) -> dict[str, Any]:
        """Every memory of the owner as JSON Lines (one memory per line, with its history and
        provenance), ready for import_memories."""
        memory = backend(ctx).memory

        async def lines() -> list[str]:
            return [line async for line in memory.export()]

        exported = await call(memory, lines())
        return {"count": len(exported), "jsonl": "\n".join(exported)}

    @server.tool(annotations=WRITE)
    async def import_memories(ctx: ToolContext, jsonl: str) -> dict[str, Any]:
        """Import JSON Lines made by export_memories into the owner's memories. All or nothing:
        a bad line rejects the import and names the line. Ids are kept, so importing the
        same lines twice adds nothing the second time."""
        memory = backend(ctx).memory
        return await call(memory, memory.import_(jsonl.splitlines()))

    @server.tool(annotations=READ_ONLY)
    async def get_profile(ctx: ToolContext, status: str | None = None) -> dict[str, Any]:
        """The owner's profile items (key, value, status candidate|confirmed|rejected|reverted,
        confidence, evidence days, provenance). status filters them."""
        memory = backend(ctx).memory
        return {"items": await call(memory, memory.profile(status))}

    @server.tool(annotations=READ_ONLY)
    async def list_pairs(
        ctx: ToolContext, session_id: str | None = None, limit: int = 50
    ) -> dict[str, Any]:
        """The owner's recent remembered exchanges (user text, assistant text, session, day),
        oldest first."""
        memory = backend(ctx).memory
        return {"pairs": await call(memory, memory.pairs(session_id, limit))}

    @server.tool(annotations=DESTRUCTIVE)
    async def forget(
        ctx: ToolContext,
        confirm: bool = False,
        kind: str | None = None,
        item_id: str | None = None,
    ) -> dict[str, Any]:
        """Permanently delete data, every copy. Refused unless confirm is true: ask the user
        first. With kind and item_id, one item: kind "pair", "profile" or "summary" (personal
        memory and every copy of it in windows, long-term memory and tasks) or "memory" (one
        long-term memory). Without them: EVERYTHING of the owner in every store (memories,
        profile, pairs, summaries, windows, documents, tasks). Cannot be undone."""
        if not confirm:
            raise ToolError(
                "forget deletes data permanently: call it again with confirm=true once the "
                "user has agreed"
            )
        memory = backend(ctx).memory
        if kind is None and item_id is None:
            return {"forgot": "owner", "deleted": await call(memory, memory.forget_owner())}
        if kind not in FORGET_KINDS or not item_id:
            raise ToolError(
                f"forget one item needs kind ({', '.join(FORGET_KINDS)}) and item_id together"
            )
        if kind == "memory":
            gone = await call(memory, memory.delete(item_id, forget=True))
            return {"forgot": kind, "deleted": gone}
        return {"forgot": kind, "result": await call(memory, memory.forget_item(kind, item_id))}

    @server.tool(annotations=READ_ONLY)
    async def kb_search(ctx: ToolContext, query: str, k: int = 3) -> dict[str, Any]:
        """Search the owner's knowledge base (shipped IT-helpdesk corpus plus ingested
        documents): the relevant chunks with source_id (kb:<doc>#<n>), heading, text and
        scores; empty when nothing is relevant."""
        memory = backend(ctx).memory
        return {"results": await call(memory, memory.kb_search(query, k))}

    @server.tool(annotations=WRITE)
    async def kb_ingest(ctx: ToolContext, name: str, text: str) -> dict[str, Any]:
        """Add or replace one Markdown/text document (name like "printers.md") in the owner's
        knowledge base; the running agent retrieves from it on its next turn."""
        memory = backend(ctx).memory
        return await call(memory, memory.kb_ingest(name, text))


__all__ = ["FORGET_KINDS", "register_memory_tools"]
