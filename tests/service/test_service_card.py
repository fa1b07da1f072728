"""The agent card over real HTTP, read with the a2a-sdk client."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from smartctx.service.card import CONTEXT_EXTENSION_URI
from smartctx.service.client import SmartctxClient
from smartctx.service.server import ServerHandle

StartServer = Callable[..., ServerHandle]


class _Hook:
    extension_uri = "https://example.test/ext/v1"

    async def before_turn(self, turn: object) -> None:
        return None

    async def after_turn(self, turn: object) -> dict[str, object]:
        return {}


async def test_card_names_both_interfaces_skills_and_streaming(server: ServerHandle) -> None:
    async with SmartctxClient(server.url) as client:
        card = await client.card()
    assert card.name == "smartctx"
    assert card.description
    assert card.capabilities.streaming is True
    bindings = {i.protocol_binding: i.url for i in card.supported_interfaces}
    assert bindings == {"JSONRPC": f"{server.url}/", "HTTP+JSON": f"{server.url}/rest"}
    assert all(i.protocol_version == "1.0" for i in card.supported_interfaces)
    assert {s.id for s in card.skills} == {"helpdesk-answer", "context-memory"}
    assert all(s.examples for s in card.skills)
    assert CONTEXT_EXTENSION_URI in {e.uri for e in card.capabilities.extensions}


def test_card_declares_hook_extensions(start_server: StartServer) -> None:
    handle = start_server(hooks=[_Hook()])
    card = httpx.get(f"{handle.url}/.well-known/agent-card.json").json()
    uris = {e["uri"] for e in card["capabilities"]["extensions"]}
    assert uris == {CONTEXT_EXTENSION_URI, "https://example.test/ext/v1"}


def test_port_zero_binds_a_real_port(server: ServerHandle) -> None:
    assert server.port > 0
    assert httpx.get(f"{server.url}/openapi.json").status_code == 200


async def test_serve_async_runs_in_the_callers_loop(db_url: str, hashing_kb: object) -> None:
    from smartctx.core import HashingEmbedder, Settings
    from smartctx.service import serve_async

    handle = await serve_async(
        Settings(database_url=db_url), port=0, embedder=HashingEmbedder(), kb=hashing_kb, hooks=[]
    )
    async with handle:
        async with SmartctxClient(handle.url) as client:
            reply = await client.send("Hello")
        assert reply.state == "completed"
    assert handle._task.done()


def test_card_is_cacheable_and_names_the_public_url(start_server: StartServer) -> None:
    handle = start_server(public_url="https://agents.example.com/smartctx/")
    response = httpx.get(f"{handle.url}/.well-known/agent-card.json")
    assert response.headers["cache-control"] == "public, max-age=300"
    urls = [i["url"] for i in response.json()["supportedInterfaces"]]
    assert urls and all(u.startswith("https://agents.example.com/smartctx") for u in urls)
    assert "127.0.0.1" not in response.text
