"""The MCP face, in process: an MCP client session against ``create_mcp_server(url)`` over a
real smartctx server on a loopback port (hashing embedder, offline responder)."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from typing import Any

import pytest
from mcp import Client

from smartctx.core.errors import InvalidInput
from smartctx.service.client import SmartctxClient
from smartctx.service.mcp_server import create_mcp_server
from smartctx.service.server import ServerHandle

StartServer = Callable[..., ServerHandle]
VPN = "The VPN portal is vpn.example.com; sign in with SSO."


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    """The structured result of a successful tool call (fails the test on a tool error)."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    text = result.content[0].text  # type: ignore[union-attr]
    assert json.loads(text) == result.structured_content
    return result.structured_content


async def error(client: Client, tool: str, **arguments: Any) -> str:
    """The text of a tool error (fails the test if the call succeeds)."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return str(result.content[0].text)  # type: ignore[union-attr]


async def test_the_tools_and_their_schemas(server: ServerHandle) -> None:
    async with Client(create_mcp_server(server.url)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert {
        "list_contexts",
        "create_context",
        "get_snapshot",
        "get_prompt",
        "add_slot",
        "ask",
    } <= set(tools)
    add_slot = tools["add_slot"].input_schema
    assert add_slot["required"] == ["context_id", "kind", "text"]
    assert add_slot["$defs"]["SlotKind"]["enum"] == [
        "system",
        "user",
        "agent",
        "rag_doc",
        "tool_log",
        "summary",
        "memory",
    ]
    assert tools["ask"].input_schema["required"] == ["text"]
    assert tools["get_prompt"].input_schema["required"] == ["context_id"]
    assert tools["get_snapshot"].annotations is not None
    assert tools["get_snapshot"].annotations.read_only_hint is True
    assert tools["add_slot"].annotations is not None
    assert tools["add_slot"].annotations.read_only_hint is False


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_memory_round_trip_matches_the_http_api(server: ServerHandle, mode: str) -> None:
    async with Client(create_mcp_server(server.url), mode=mode) as client:
        created = await call(
            client, "create_context", context_id="desk", budget=300, system_prompt="Be brief."
        )
        added = await call(
            client, "add_slot", context_id="desk", kind="rag_doc", text=VPN, source_id="kb:vpn#1"
        )
        again = await call(
            client, "add_slot", context_id="desk", kind="rag_doc", text=VPN, source_id="kb:vpn#1"
        )
        logged = await call(
            client, "add_slot", context_id="desk", kind="tool_log", text="GET /vpn 200", priority=6
        )
        snapshot = await call(client, "get_snapshot", context_id="desk")
        prompt = await call(client, "get_prompt", context_id="desk", query="vpn")
        listed = await call(client, "list_contexts")
    assert created["context_id"] == "desk" and created["budget"] == 300
    assert added["admitted"] is True and again["admitted"] is False
    assert again["events"][0]["kind"] == "refused"
    assert logged["slot"]["priority"] == 6
    assert [s["kind"] for s in snapshot["slots"]] == ["system", "rag_doc", "tool_log"]
    assert prompt["messages"][0] == {"role": "system", "content": "Be brief."}
    assert "[source: kb:vpn#1]" in prompt["text"]
    assert listed["owner"] == "default"
    assert [c["context_id"] for c in listed["contexts"]] == ["desk"]
    async with SmartctxClient(server.url, owner="default") as http:
        assert await http.snapshot("desk") == snapshot
        assert await http.prompt("desk", "vpn") == prompt


async def test_ask_talks_to_the_agent_over_a2a(server: ServerHandle) -> None:
    async with Client(create_mcp_server(server.url)) as client:
        first = await call(client, "ask", text="How do I connect to the VPN?")
        second = await call(
            client, "ask", text="And if it keeps disconnecting?", context_id=first["context_id"]
        )
        snapshot = await call(client, "get_snapshot", context_id=first["context_id"])
    assert first["state"] == second["state"] == "completed"
    assert "vpn" in first["text"].lower()
    assert second["context_id"] == first["context_id"] and second["task_id"] != first["task_id"]
    assert any(e["kind"] == "admitted" for e in second["events"])
    assert second["snapshot"]["tokens_used"] == snapshot["tokens_used"]
    # the window keeps the last exchange (turn focus); the first is in the log
    users = [s["text"] for s in snapshot["slots"] if s["kind"] == "user"]
    assert users == ["And if it keeps disconnecting?"]
    assert snapshot["log_size"] > len(snapshot["slots"])


async def test_tools_act_as_their_owner(server: ServerHandle) -> None:
    async with Client(create_mcp_server(server.url, owner="alice")) as alice:
        await call(alice, "create_context", context_id="alice-notes")
        assert [c["context_id"] for c in (await call(alice, "list_contexts"))["contexts"]] == [
            "alice-notes"
        ]
    async with Client(create_mcp_server(server.url)) as default:
        assert (await call(default, "list_contexts"))["contexts"] == []
        text = await error(default, "get_snapshot", context_id="alice-notes")
    assert "not_found" in text and "'default'" in text


async def test_failures_are_readable_tool_errors(server: ServerHandle) -> None:
    async with Client(create_mcp_server(server.url)) as client:
        missing = await error(client, "add_slot", context_id="nope", kind="user", text="hi")
        await call(client, "create_context", context_id="c1")
        bad_kind = await error(client, "add_slot", context_id="c1", kind="poem", text="hi")
        taken = await error(client, "create_context", context_id="c1")
        bad_budget = await error(client, "create_context", context_id="c2", budget=-5)
    assert "not_found: no context 'nope'" in missing
    assert "rag_doc" in bad_kind and "poem" in bad_kind
    assert "conflict" in taken and "already exists" in taken
    assert "invalid" in bad_budget and "budget" in bad_budget


async def test_an_unreachable_server_is_named_in_the_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    async with Client(create_mcp_server(url)) as client:
        text = await error(client, "list_contexts")
    assert f"cannot reach the smartctx server at {url}" in text


def test_bad_options_fail_before_any_session() -> None:
    with pytest.raises(InvalidInput, match="transport"):
        create_mcp_server("http://127.0.0.1:1", transport="grpc")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="owner"):
        create_mcp_server("http://127.0.0.1:1", owner="not an owner!")
