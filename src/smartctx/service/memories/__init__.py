"""The memory API: add, search, get, update, delete, history, export and import of long-term
memories, over one service layer (:class:`MemoryService`) that the HTTP routes, the Python client,
the CLI (``smartctx memory ...``) and the MCP tools all use.

Memories are the rows of the long-term memory store (table ``agent_memory``, the items the agent
recalls across threads), so a memory added here is recalled in conversations and a fact said in
a conversation is found here. Scopes: the owner (mem0's ``user_id``), an agent (``agent_id``) and
a session (``session_id``, mem0's ``run_id``; a conversation's context id).
"""

from __future__ import annotations

from smartctx.service.memories.records import Memory, MemoryFilter
from smartctx.service.memories.service import MemoryService

__all__ = ["Memory", "MemoryFilter", "MemoryService"]
