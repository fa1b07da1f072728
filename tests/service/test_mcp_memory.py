"""The MCP memory face with the official ``mcp`` client: against a real ``smartctx mcp``
process over stdio and over streamable HTTP, and in process for personal memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from smartctx.service.mcp_server import create_mcp_server
from smartctx.service.server import ServerHandle

StartServer = Callable[..., ServerHandle]
SMARTCTX = str(Path(sys.executable).with_name("smartctx"))


def _env() -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("SMARTCTX_")}
    return base | {"SMARTCTX_EMBEDDER": "hashing", "SMARTCTX_RETRIEVAL_EMBEDDER": "hashing"}


def stdio(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=SMARTCTX, args=["mcp", *args], env=_env())


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def error(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return str(result.content[0].text)  # type: ignore[union-attr]


def _json(result: Any) -> Any:
    return json.loads(result.contents[0].text)


async def test_memory_tools_over_stdio(server: ServerHandle) -> None:
    async with Client(stdio("--url", server.url, "--owner", "alice")) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        [added] = (await call(client, "add_memory", text="I prefer aisle seats.", agent_id="t"))[
            "results"
        ]
        mid = added["id"]
        found = await call(client, "search_memories", query="aisle seats", agent_id="t")
        await call(client, "update_memory", memory_id=mid, text="I prefer window seats.")
        history = await call(client, "memory_history", memory_id=mid)
        listed = await call(client, "list_memories")
        resource = _json(await client.read_resource(f"smartctx://memories/{mid}"))
        exported = await call(client, "export_memories")
        refused = await error(client, "forget")
    assert {
        "add_memory",
        "search_memories",
        "get_memory",
        "list_memories",
        "update_memory",
        "delete_memory",
        "memory_history",
        "export_memories",
        "import_memories",
        "assemble_prompt",
        "get_profile",
        "list_pairs",
        "forget",
        "kb_search",
        "kb_ingest",
    } <= names
    assert found["results"][0]["id"] == mid and found["results"][0]["source_id"] == f"mem:{mid}"
    assert [h["event"] for h in history["results"]] == ["ADD", "UPDATE"]
    assert [m["memory"] for m in listed["results"]] == ["I prefer window seats."]
    assert resource["version"] == 2
    assert exported["count"] == 1
    assert "confirm=true" in refused

    async with Client(stdio("--url", server.url, "--owner", "bob")) as bob:
        hidden = await error(bob, "get_memory", memory_id=mid)
        imported = await call(bob, "import_memories", jsonl=exported["jsonl"])
        copy = await call(bob, "get_memory", memory_id=mid)
    assert "not_found: no memory" in hidden
    assert imported["imported"] == 1 and copy["origin"]["original_owner"] == "alice"


@pytest.fixture
def mcp_http(server: ServerHandle) -> Iterator[str]:
    """``smartctx mcp --http --port 0`` in front of ``server``; yields its endpoint URL."""
    process = subprocess.Popen(
        [SMARTCTX, "mcp", "--url", server.url, "--owner", "carol", "--http", "--port", "0"],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert "streamable HTTP at " in line, line
        yield line.split("streamable HTTP at ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stderr is not None:
            process.stderr.close()


async def test_assemble_prompt_resources_and_prompts_over_streamable_http(mcp_http: str) -> None:
    async with Client(mcp_http) as client:
        await call(
            client,
            "add_memory",
            messages=[
                {"role": "user", "content": "My employee number is 48213."},
                {"role": "assistant", "content": "Noted."},
            ],
        )
        both = await error(client, "add_memory", text="x", messages=[])
        ingested = await call(
            client, "kb_ingest", name="badges.md", text="# Badges\n\nLost badges: room B12."
        )
        kb = await call(client, "kb_search", query="lost badges")
        built = await call(
            client, "assemble_prompt", query="What is my employee number?", budget=600
        )
        context_id = built["context_id"]
        templates = {
            t.uri_template for t in (await client.list_resource_templates()).resource_templates
        }
        snapshot = _json(await client.read_resource(f"smartctx://contexts/{context_id}/snapshot"))
        prompt = _json(await client.read_resource(f"smartctx://contexts/{context_id}/prompt"))
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        recalled = await client.get_prompt("recall_memories", {"question": "employee number"})
        continued = await client.get_prompt(
            "continue_context", {"context_id": context_id, "question": "And my number?"}
        )
    assert "either text or messages" in both
    assert ingested["status"] == "added" and kb["results"][0]["source_id"] == "kb:badges.md#1"
    assert {"memory"} <= {a["kind"] for a in built["added"]}
    assert "48213" in built["prompt"]["text"] and "[source: mem:" in built["prompt"]["text"]
    assert snapshot["budget"] == 600 and snapshot["tokens_used"] <= 600
    assert any(s["kind"] == "memory" for s in snapshot["slots"])
    assert "48213" in prompt["text"]
    assert {
        "smartctx://contexts/{context_id}/snapshot",
        "smartctx://contexts/{context_id}/prompt",
        "smartctx://memories/{memory_id}",
    } <= templates
    assert {"recall_memories", "continue_context"} <= prompts
    assert "48213" in recalled.messages[0].content.text  # type: ignore[union-attr]
    assert continued.messages[-1].content.text == "And my number?"  # type: ignore[union-attr]


async def test_profile_pairs_and_forget_in_process(start_server: StartServer) -> None:
    server = start_server(hooks=None)  # with personal memory
    async with Client(create_mcp_server(server.url, owner="dave")) as client:
        await call(client, "ask", text="I live in Busan.")
        pairs = await call(client, "list_pairs")
        profile = await call(client, "get_profile")
        [memory] = (await call(client, "add_memory", text="Dave likes tea."))["results"]
        one = await call(client, "forget", confirm=True, kind="memory", item_id=memory["id"])
        gone = await error(client, "memory_history", memory_id=memory["id"])
        bad = await error(client, "forget", confirm=True, kind="pair")
        everything = await call(client, "forget", confirm=True)
        after = await call(client, "list_pairs")
    assert [p["user_text"] for p in pairs["pairs"]] == ["I live in Busan."]
    assert isinstance(profile["items"], list)
    assert one["deleted"]["id"] == memory["id"] and "not_found" in gone
    assert "kind" in bad and everything["forgot"] == "owner"
    assert after["pairs"] == []
