"""Token streaming: ``OpenAIChatModel.stream`` over the loopback server, ``complete_streaming``
and ``Agent.run(on_token=...)``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from smartctx.agents import Agent, OpenAIChatModel, ScriptedModel
from smartctx.agents.models import StreamingChatModel, complete_streaming
from smartctx.agents.testing import OpenAICompatibleTestServer
from smartctx.core import Settings, UpstreamError

MESSAGES = [{"role": "user", "content": "ping pong pang"}]


@pytest.fixture
async def server() -> AsyncIterator[OpenAICompatibleTestServer]:
    async with OpenAICompatibleTestServer() as running:
        yield running


async def test_stream_yields_the_chunks_in_order(server: OpenAICompatibleTestServer) -> None:
    model = OpenAIChatModel(server.base_url, "m")
    assert isinstance(model, StreamingChatModel)
    chunks = [c async for c in model.stream(MESSAGES, temperature=0.1)]
    assert chunks == ["echo:", " ping", " pong", " pang"]
    assert server.chat_requests[0].json == {
        "model": "m",
        "messages": MESSAGES,
        "temperature": 0.1,
        "stream": True,
    }
    assert server.chat_requests[0].headers["accept"] == "text/event-stream"


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (503, "overloaded", "answered HTTP 503: overloaded"),
        (200, "data: {not json\n\n", "streamed a chunk that is not a chat completion chunk"),
        (200, 'data: {"error": {"message": "boom"}}\n\n', "reported an error mid-stream"),
    ],
)
async def test_stream_failures_are_upstream_errors(
    server: OpenAICompatibleTestServer, status: int, body: str, message: str
) -> None:
    server.enqueue(status, body, content_type="text/event-stream")
    model = OpenAIChatModel(server.base_url, "m")
    with pytest.raises(UpstreamError, match=message):
        [c async for c in model.stream(MESSAGES)]


async def test_an_unreachable_endpoint_fails_the_stream() -> None:
    model = OpenAIChatModel("http://127.0.0.1:9/v1", "m", timeout=5)
    with pytest.raises(UpstreamError, match="unreachable"):
        [c async for c in model.stream(MESSAGES)]


async def test_complete_streaming_hands_a_plain_model_reply_over_as_one_chunk() -> None:
    seen: list[str] = []

    async def sink(chunk: str) -> None:
        seen.append(chunk)

    reply = await complete_streaming(ScriptedModel(["all at once"]), MESSAGES, on_token=sink)
    assert reply == "all at once" and seen == ["all at once"]


async def test_agent_run_streams_and_remembers_the_concatenated_reply(
    server: OpenAICompatibleTestServer,
) -> None:
    settings = Settings(embedder="hashing", retrieval_embedder="hashing", budget=2000)
    agent = Agent(OpenAIChatModel(server.base_url, "m"))
    thread = agent.new_thread(settings=settings, system_prompt="Be brief.")
    seen: list[str] = []

    async def sink(chunk: str) -> None:
        seen.append(chunk)

    result = await agent.run("hello there", thread, on_token=sink)
    assert seen == ["echo:", " hello", " there"]
    assert result.reply == "".join(seen) == "echo: hello there"
    assert thread.window.log[-1].text == result.reply
