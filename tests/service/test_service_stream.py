"""Streaming over SSE with the a2a-sdk client: task, status updates, the artifact, completion."""

from __future__ import annotations

import pytest

from smartctx.service.client import SmartctxClient, StreamEvent, smartctx_info
from smartctx.service.server import ServerHandle


@pytest.mark.parametrize("transport", ["jsonrpc", "rest"])
async def test_stream_yields_task_status_artifact_and_completion(
    server: ServerHandle, transport: str
) -> None:
    events: list[StreamEvent] = []
    async with SmartctxClient(server.url, transport=transport) as client:  # type: ignore[arg-type]
        async for event in client.stream("How do I connect to the VPN?"):
            events.append(event)
        snapshot = await client.snapshot(events[0].context_id)
    kinds = [(e.kind, e.state) for e in events]
    # A new task is created working (one stored event, not "submitted" then "working").
    assert kinds[0] == ("task", "working")
    assert kinds[-1] == ("status", "completed") and events[-1].final
    artifacts = [e for e in events if e.kind == "artifact"]
    assert len(artifacts) == 1
    assert kinds.index(("artifact", None)) == len(kinds) - 2
    wire = artifacts[0].metadata["smartctx"]
    assert "tokensUsed" in wire["snapshot"] and "promptTokens" in wire  # camelCase on the wire
    info = smartctx_info(artifacts[0].metadata)
    assert "vpn" in artifacts[0].text.lower()
    assert info["snapshot"]["tokens_used"] == snapshot["tokens_used"]
    assert any(e["kind"] == "admitted" and e["slot_kind"] == "rag_doc" for e in info["events"])
    assert len({e.task_id for e in events}) == 1
