"""The OpenAI-compatible proxy, driven by the official ``openai`` client against a real server.

The upstream model is the loopback OpenAI-compatible fake (``smartctx.agents.testing``), so the
test sees exactly what the proxy sent upstream after the window shaped the prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import openai
import pytest

from smartctx.agents.testing import OpenAICompatibleTestServer
from smartctx.service.openai_proxy import CONTEXT_HEADER
from smartctx.service.owner import context_owner
from smartctx.service.server import ServerHandle

StartServer = Callable[..., ServerHandle]
REPLY = "Open vpn.example.com and sign in with your company account, then approve the push."


@pytest.fixture
def upstream() -> Iterator[OpenAICompatibleTestServer]:
    with OpenAICompatibleTestServer(reply=lambda _messages: REPLY, model="up-model") as fake:
        yield fake


@pytest.fixture
def proxied(start_server: StartServer, upstream: OpenAICompatibleTestServer) -> ServerHandle:
    return start_server(llm_base_url=upstream.base_url, llm_model="up-model")


def client_for(server: ServerHandle, **headers: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{server.url}/v1", api_key="unused", max_retries=0, default_headers=headers
    )


async def stored(server: ServerHandle, context_id: str) -> list[tuple[str, str]]:
    """The conversation in the context's log (the window keeps only the last exchange), each
    message once (a repeat merged into an earlier slot is logged as ``merged``)."""
    headers = {"X-Smartctx-Owner": context_owner(context_id)}
    async with httpx.AsyncClient(base_url=server.url, headers=headers) as http:
        log = (await http.get(f"/memory/contexts/{context_id}/log?limit=500")).json()
    return [
        (s["kind"], s["text"])
        for s in log["slots"]
        if s["kind"] in ("user", "agent") and s["state"] not in ("merged", "refused")
    ]


async def test_a_completion_gets_managed_context_and_is_remembered(
    proxied: ServerHandle, upstream: OpenAICompatibleTestServer
) -> None:
    client = client_for(proxied, **{CONTEXT_HEADER: "desk-1"})
    question = "How do I connect to the VPN?"
    raw = client.chat.completions.with_raw_response.create(
        model="anything", messages=[{"role": "user", "content": question}]
    )
    answer = raw.parse()
    assert raw.headers[CONTEXT_HEADER] == "desk-1"
    assert answer.choices[0].message.content == REPLY
    assert answer.choices[0].finish_reason == "stop"
    assert answer.model == "anything"
    assert answer.usage is not None and answer.usage.prompt_tokens > 0
    assert answer.usage.completion_tokens > 0

    sent = upstream.chat_requests[-1].json
    assert sent["model"] == "up-model"
    # The window shaped the prompt: system prompt and retrieved, sourced knowledge first.
    system = [m["content"] for m in sent["messages"] if m["role"] == "system"]
    assert system[0].startswith("You are the smartctx helpdesk assistant")
    assert any("kb:vpn.md" in text for text in system)
    assert {"role": "user", "content": question} in sent["messages"]
    assert await stored(proxied, "desk-1") == [("user", question), ("agent", REPLY)]

    # The client resends the whole conversation: nothing of it is stored twice.
    follow = "And on my phone?"
    client.chat.completions.create(
        model="anything",
        messages=[
            {"role": "system", "content": "ignored: the context has its system prompt"},
            {"role": "user", "content": question},
            {"role": "assistant", "content": REPLY},
            {"role": "user", "content": follow},
        ],
    )
    # The same reply again is merged by the window's deduplication (repeat count 2).
    assert await stored(proxied, "desk-1") == [
        ("user", question),
        ("agent", REPLY),
        ("user", follow),
    ]
    conversation = [m for m in upstream.chat_requests[-1].json["messages"] if m["role"] != "system"]
    assert conversation == [
        {"role": "user", "content": question},
        {"role": "assistant", "content": REPLY},
        {"role": "user", "content": follow},
    ]


async def test_streaming_passes_the_upstream_tokens_through(
    proxied: ServerHandle, upstream: OpenAICompatibleTestServer
) -> None:
    client = client_for(proxied)
    stream = client.chat.completions.create(
        model="m",
        user="streamed",
        stream=True,
        stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "How do I connect to the VPN?"}],
    )
    pieces, finish, usage = [], None, None
    for event in stream:
        if event.usage is not None:
            usage = event.usage
        for choice in event.choices:
            if choice.delta.content:
                pieces.append(choice.delta.content)
            finish = choice.finish_reason or finish
    assert upstream.chat_requests[-1].json["stream"] is True
    assert len(pieces) == len(REPLY.split(" ")) > 1
    assert "".join(pieces) == REPLY
    assert finish == "stop"
    assert usage is not None and usage.completion_tokens > 0
    assert (await stored(proxied, "streamed"))[-1] == ("agent", REPLY)


async def test_earlier_messages_of_a_new_context_and_its_system_prompt_enter_the_window(
    proxied: ServerHandle, upstream: OpenAICompatibleTestServer
) -> None:
    client = client_for(proxied, **{CONTEXT_HEADER: "imported"})
    client.chat.completions.create(
        model="m",
        messages=[
            {"role": "system", "content": "You are the travel desk. Answer in one sentence."},
            {"role": "user", "content": "My employee number is 48213."},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": [{"type": "text", "text": "What is my number?"}]},
        ],
    )
    assert await stored(proxied, "imported") == [
        ("user", "My employee number is 48213."),
        ("agent", "Noted."),
        ("user", "What is my number?"),
        ("agent", REPLY),
    ]
    sent = upstream.chat_requests[-1].json["messages"]
    assert sent[0] == {"role": "system", "content": sent[0]["content"]}
    assert sent[0]["content"].startswith("You are the travel desk. Answer in one sentence.")
    assert {"role": "user", "content": "My employee number is 48213."} in sent


def test_without_an_upstream_the_offline_responder_answers(server: ServerHandle) -> None:
    client = client_for(server)
    models = client.models.list()
    assert [m.id for m in models.data] == ["smartctx-grounded"]
    answer = client.chat.completions.create(
        model="smartctx", messages=[{"role": "user", "content": "How do I connect to the VPN?"}]
    )
    content = answer.choices[0].message.content or ""
    assert "kb:vpn.md" in content
    chunks = client.chat.completions.create(
        model="smartctx",
        stream=True,
        messages=[{"role": "user", "content": "How do I connect to the VPN?"}],
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == content


def test_errors_come_back_in_openai_shape(
    start_server: StartServer, upstream: OpenAICompatibleTestServer
) -> None:
    server = start_server(llm_base_url=upstream.base_url, max_message_chars=50)
    client = client_for(server)
    with pytest.raises(openai.BadRequestError, match="last message must be a non-empty user"):
        client.chat.completions.create(model="m", messages=[{"role": "assistant", "content": "hi"}])
    with pytest.raises(openai.APIStatusError, match="over the limit of 50") as too_large:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x" * 60}])
    assert too_large.value.status_code == 413
    upstream.enqueue(500, "upstream exploded")
    with pytest.raises(openai.APIStatusError, match="answered HTTP 500") as failed:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert failed.value.status_code == 502
    bad = httpx.post(f"{server.url}/v1/chat/completions", content=b"{", timeout=10)
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_input"
    named = client_for(server, **{CONTEXT_HEADER: "bad id!"})
    with pytest.raises(openai.BadRequestError, match="context 'bad id!' is invalid"):
        named.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
