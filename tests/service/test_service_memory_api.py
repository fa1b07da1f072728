"""The memory API over real HTTP: create, snapshot, prompt, add slot, list, live events (SSE)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx

from smartctx.service.client import SmartctxClient
from smartctx.service.server import ServerHandle

StartServer = Callable[..., ServerHandle]


async def test_create_add_slot_snapshot_prompt_and_list(server: ServerHandle) -> None:
    async with SmartctxClient(server.url, owner="default") as client:
        created = await client.create_context(
            "ctx-1", preset="compression", budget=120, system_prompt="Be brief.", keep_recent=2
        )
        added = await client.add_slot(
            "ctx-1", "rag_doc", "The VPN portal is vpn.example.com.", source_id="kb:vpn.md#1"
        )
        duplicate = await client.add_slot(
            "ctx-1", "rag_doc", "The VPN portal is vpn.example.com.", source_id="kb:vpn.md#1"
        )
        snapshot = await client.snapshot("ctx-1")
        prompt = await client.prompt("ctx-1")
        listed = await client.contexts()
    assert created["context_id"] == "ctx-1"
    assert (created["preset"], created["budget"], created["keep_recent"]) == ("compression", 120, 2)
    assert created["snapshot"]["kinds"]["system"]["count"] == 1
    assert added["admitted"] is True and added["slot"]["source_id"] == "kb:vpn.md#1"
    assert added["events"][0]["slot_kind"] == "rag_doc"
    assert duplicate["admitted"] is False
    assert duplicate["events"][0]["kind"] == "refused"
    assert [s["kind"] for s in snapshot["slots"]] == ["system", "rag_doc"]
    assert snapshot["context_id"] == "ctx-1" and snapshot["preset"] == "compression"
    assert prompt["messages"][0] == {"role": "system", "content": "Be brief."}
    assert "[source: kb:vpn.md#1]" in prompt["text"]
    assert [(c["context_id"], c["version"]) for c in listed] == [("ctx-1", 3)]


async def test_a_tool_log_burst_is_stored_but_dropped_in_a_full_window(
    server: ServerHandle,
) -> None:
    async with SmartctxClient(server.url, owner="default") as client:
        await client.create_context("tight", preset="compression", budget=40, system_prompt="Hi.")
        await client.add_slot("tight", "user", "Please keep this request in mind for later.")
        results = [
            await client.add_slot("tight", "tool_log", f"debug line {i} " + "x " * 40)
            for i in range(3)
        ]
        prompt = await client.prompt("tight")
        snapshot = await client.snapshot("tight")
    for result in results:
        kinds = [(e["kind"], e["slot_id"]) for e in result["events"]]
        assert ("dropped", result["slot"]["id"]) in kinds
    assert "debug line" not in prompt["text"]
    assert snapshot["log_size"] == 5
    assert snapshot["tokens_used"] <= 40


async def test_live_events_stream_over_sse(server: ServerHandle) -> None:
    async with SmartctxClient(server.url, owner="default") as client:
        await client.create_context("live", budget=500)
        received: list[dict[str, Any]] = []
        ready = asyncio.Event()

        async def watch() -> None:
            async for item in client.events("live"):
                received.append(item)
                ready.set()
                if item["type"] == "events":
                    return

        watcher = asyncio.create_task(watch())
        await asyncio.wait_for(ready.wait(), 10)
        async with SmartctxClient(server.url, owner="default") as writer:
            added = await writer.add_slot(
                "live", "memory", "Prefers e-mail.", source_id="profile:x"
            )
        await asyncio.wait_for(watcher, 10)
    assert received[0]["type"] == "snapshot"
    assert received[0]["snapshot"]["kinds"]["system"]["count"] == 1
    assert received[1]["type"] == "events"
    assert received[1]["events"][0]["slot_id"] == added["slot"]["id"]
    assert received[1]["events"][0]["slot_kind"] == "memory"
    assert received[1]["snapshot"]["counts"]["memory"] == 1


async def test_stop_closes_live_streams(start_server: StartServer) -> None:
    handle = start_server()
    async with SmartctxClient(handle.url, owner="default") as client:
        await client.create_context("watched")
        items: list[dict[str, Any]] = []
        first = asyncio.Event()

        async def watch() -> None:
            async for item in client.events("watched"):
                items.append(item)
                first.set()

        watcher = asyncio.create_task(watch())
        await asyncio.wait_for(first.wait(), 10)
        await asyncio.to_thread(handle.stop)
        await asyncio.wait_for(watcher, 10)
    assert [i["type"] for i in items] == ["snapshot"]


def test_openapi_documents_the_memory_api(server: ServerHandle) -> None:
    schema = httpx.get(f"{server.url}/openapi.json").json()
    paths = schema["paths"]
    for path in (
        "/memory/contexts",
        "/memory/contexts/{context_id}/snapshot",
        "/memory/contexts/{context_id}/prompt",
        "/memory/contexts/{context_id}/slots",
        "/memory/contexts/{context_id}/events",
    ):
        assert path in paths
    assert "post" in paths["/memory/contexts"] and "get" in paths["/memory/contexts"]
    assert "/" in paths and "/rest/message:send" in paths
