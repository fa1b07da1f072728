"""``smartctx mcp`` as an MCP client launches it: a subprocess speaking MCP over stdio, either
in front of a running server (``--url``) or with a private server on a database
(``--database``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from mcp import Client, StdioServerParameters

from smartctx.service.client import SmartctxClient
from smartctx.service.server import ServerHandle

StartServer = Callable[..., ServerHandle]
SMARTCTX = str(Path(sys.executable).with_name("smartctx"))


def command(*args: str, **env: str) -> StdioServerParameters:
    """``smartctx mcp ARGS`` with offline, fast models and no SMARTCTX_* settings inherited."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("SMARTCTX_")}
    base |= {"SMARTCTX_EMBEDDER": "hashing", "SMARTCTX_RETRIEVAL_EMBEDDER": "hashing"}
    return StdioServerParameters(command=SMARTCTX, args=["mcp", *args], env=base | env)


async def test_stdio_in_front_of_a_running_server(server: ServerHandle) -> None:
    async with Client(command("--url", server.url, "--owner", "bob")) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        await client.call_tool("create_context", {"context_id": "bob-1", "budget": 100})
        result = await client.call_tool(
            "add_slot", {"context_id": "bob-1", "kind": "memory", "text": "Bob uses Linux."}
        )
    assert {"list_contexts", "get_snapshot", "get_prompt", "add_slot", "ask"} <= names
    assert not result.is_error and result.structured_content["admitted"] is True
    async with SmartctxClient(server.url, owner="bob") as http:
        snapshot = await http.snapshot("bob-1")
    assert [s["text"] for s in snapshot["slots"] if s["kind"] == "memory"] == ["Bob uses Linux."]


async def test_stdio_with_a_private_server_on_a_database(
    db_url: str, start_server: StartServer
) -> None:
    async with Client(command("--database", db_url)) as client:
        reply = await client.call_tool("ask", {"text": "How do I reset my password?"})
    assert not reply.is_error, reply.content
    context_id = reply.structured_content["context_id"]
    later = start_server()
    async with SmartctxClient(later.url, owner="default") as http:
        snapshot = await http.snapshot(context_id)
    users = [s["text"] for s in snapshot["slots"] if s["kind"] == "user"]
    assert users == ["How do I reset my password?"]
    assert any(s["kind"] == "agent" for s in snapshot["slots"])
