"""Token streaming over A2A: a streaming chat model's chunks arrive as artifact updates."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Literal

import pytest

from smartctx.agents.testing import OpenAICompatibleTestServer
from smartctx.service.client import SmartctxClient, smartctx_info
from smartctx.service.server import ServerHandle

StartServer = Callable[..., ServerHandle]
REPLY = "Open the GlobalProtect app and connect to vpn.example.com [source: kb:vpn.md#2]"


@pytest.fixture
def upstream() -> Iterator[OpenAICompatibleTestServer]:
    with OpenAICompatibleTestServer(reply=lambda _messages: REPLY) as fake:
        yield fake


@pytest.fixture
def streaming_server(
    start_server: StartServer, upstream: OpenAICompatibleTestServer
) -> ServerHandle:
    server = start_server(llm_base_url=upstream.base_url)
    server.app.executor.stream_flush_seconds = 0  # one artifact update per upstream chunk
    return server


@pytest.mark.parametrize("transport", ["jsonrpc", "rest"])
async def test_artifact_chunks_arrive_as_tokens_and_add_up_to_the_reply(
    streaming_server: ServerHandle, transport: Literal["jsonrpc", "rest"]
) -> None:
    async with SmartctxClient(streaming_server.url, transport=transport) as client:
        events = [e async for e in client.stream("How do I connect to the VPN?")]
        chunks = [e for e in events if e.kind == "artifact"]
        assert len(chunks) == len(REPLY.split(" ")) + 1  # every word, then the closing chunk
        assert [c.append for c in chunks] == [False] + [True] * (len(chunks) - 1)
        assert [c.last_chunk for c in chunks] == [False] * (len(chunks) - 1) + [True]
        assert "".join(c.text for c in chunks) == REPLY
        assert all(not c.metadata for c in chunks[:-1])
        info = smartctx_info(chunks[-1].metadata)
        assert info["snapshot"]["counts"]["agent"] == 1
        assert events[-1].state == "completed"
        context_id = events[-1].context_id

        # The stored task's artifact is the concatenation, and the reply was remembered.
        reply = await client.send("And again?", context_id=context_id)
        assert reply.text == REPLY and reply.state == "completed"
        snapshot = await client.snapshot(context_id)
    agents = [s["text"] for s in snapshot["slots"] if s["kind"] == "agent"]
    assert agents == [REPLY]  # the same reply twice is merged (repeat count 2)


async def test_a_model_failure_mid_stream_fails_the_task(
    streaming_server: ServerHandle, upstream: OpenAICompatibleTestServer
) -> None:
    upstream.enqueue(
        200,
        'data: {"choices": [{"delta": {"content": "Open"}}]}\n\ndata: {"error": {"message": "x"}}'
        "\n\n",
        content_type="text/event-stream",
    )
    async with SmartctxClient(streaming_server.url) as client:
        events = [e async for e in client.stream("How do I connect to the VPN?")]
    assert events[-1].state == "failed"
    assert "reported an error mid-stream" in events[-1].text
