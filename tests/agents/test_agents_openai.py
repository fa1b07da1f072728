"""OpenAIChatModel against the loopback OpenAICompatibleTestServer (real HTTP, no network)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import AsyncIterator

import httpx
import pytest

from smartctx.agents import GroundedResponder, OpenAIChatModel
from smartctx.agents.testing import OpenAICompatibleTestServer
from smartctx.core import InvalidInput, UpstreamError

MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "ping"},
]


@pytest.fixture
async def server() -> AsyncIterator[OpenAICompatibleTestServer]:
    async with OpenAICompatibleTestServer(api_key="sk-test") as running:
        yield running


async def test_completion_round_trip(server: OpenAICompatibleTestServer) -> None:
    model = OpenAIChatModel(server.base_url, "test-model", "sk-test")
    try:
        assert await model.complete(MESSAGES, temperature=0.3) == "echo: ping"
    finally:
        await model.aclose()
    (request,) = server.chat_requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.json == {"model": "test-model", "messages": MESSAGES, "temperature": 0.3}


async def test_wrong_key_is_an_upstream_error(server: OpenAICompatibleTestServer) -> None:
    async with httpx.AsyncClient() as client:
        model = OpenAIChatModel(server.base_url, "m", "wrong", client=client)
        with pytest.raises(UpstreamError, match="HTTP 401"):
            await model.complete(MESSAGES)


async def test_server_error_is_an_upstream_error(server: OpenAICompatibleTestServer) -> None:
    server.enqueue(500, {"error": {"message": "boom"}})
    model = OpenAIChatModel(server.base_url, "m", "sk-test")
    with pytest.raises(UpstreamError, match=r"HTTP 500.*boom") as info:
        await model.complete(MESSAGES)
    assert info.value.detail["status"] == 500
    assert await model.complete(MESSAGES) == "echo: ping"  # the next call works again
    await model.aclose()


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ("this is not json", "not JSON"),
        ('{"choices": []}', "without choices"),
        ('{"choices": [{"message": {"content": 7}}]}', "non-text content"),
    ],
)
async def test_malformed_bodies_are_upstream_errors(
    server: OpenAICompatibleTestServer, body: str, match: str
) -> None:
    server.enqueue(200, body)
    model = OpenAIChatModel(server.base_url, "m", "sk-test")
    with pytest.raises(UpstreamError, match=match):
        await model.complete(MESSAGES)
    await model.aclose()


async def test_unreachable_endpoint_is_an_upstream_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OpenAIChatModel(f"http://127.0.0.1:{port}/v1", "m")
    with pytest.raises(UpstreamError, match="unreachable"):
        await model.complete(MESSAGES)
    await model.aclose()


async def test_timeout_is_an_upstream_error() -> None:
    release = threading.Event()

    async def slow(messages: list[dict[str, str]]) -> str:
        await asyncio.to_thread(release.wait, 10)
        return "late"

    async with OpenAICompatibleTestServer(slow) as slow_server:
        model = OpenAIChatModel(slow_server.base_url, "m", timeout=0.2)
        try:
            with pytest.raises(UpstreamError, match="timed out"):
                await model.complete(MESSAGES)
        finally:
            release.set()
            await model.aclose()


async def test_empty_messages_are_rejected_before_any_request() -> None:
    model = OpenAIChatModel("http://127.0.0.1:9/v1", "m")
    with pytest.raises(InvalidInput):
        await model.complete([])


def test_constructor_validates_and_does_no_io() -> None:
    with pytest.raises(InvalidInput):
        OpenAIChatModel("", "m")
    with pytest.raises(InvalidInput):
        OpenAIChatModel("http://x/v1", "")
    assert OpenAIChatModel("http://x/v1/", "m").url == "http://x/v1/chat/completions"


def test_server_streams_sse_chunks_and_serves_a_chat_model() -> None:
    with OpenAICompatibleTestServer(GroundedResponder()) as server:
        payload = {
            "model": "m",
            "stream": True,
            "messages": [{"role": "user", "content": "Repeat after me: hello world"}],
        }
        with httpx.Client() as client:
            response = client.post(f"{server.base_url}/chat/completions", json=payload)
            models = client.get(f"{server.base_url}/models").json()
    lines = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    pieces = [json.loads(line)["choices"][0]["delta"].get("content", "") for line in lines[:-1]]
    assert "".join(pieces) == "hello world"
    assert models["data"][0]["id"] == "test-model"


def test_base_url_needs_a_started_server() -> None:
    with pytest.raises(Exception, match="not started"):
        _ = OpenAICompatibleTestServer().base_url


def test_a_model_without_a_client_works_from_any_event_loop() -> None:
    with OpenAICompatibleTestServer() as server:
        model = OpenAIChatModel(server.base_url, "m")
        first = asyncio.run(model.complete(MESSAGES))
        second = asyncio.run(model.complete(MESSAGES))  # a new loop: nothing bound to the old one
    assert first == second == "echo: ping"
