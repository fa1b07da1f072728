"""Authentication over real HTTP: every face of a server with ``auth=True`` refuses a missing,
wrong or revoked key (401) and another owner's data (403/404); a key reaches its own owner; an
admin key reaches any owner and the whole-owner operations; keys are hashed at rest."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from smartctx.service.auth import KeyStore
from smartctx.service.client import SmartctxClient
from smartctx.service.mcp_server import create_mcp_server
from smartctx.service.server import ServerHandle
from smartctx.store import Database

StartServer = Callable[..., ServerHandle]
V1 = {"A2A-Version": "1.0"}


async def make_key(db_url: str, owner: str | None = None, *, admin: bool = False) -> str:
    db = Database(db_url)
    try:
        await db.migrate()
        _record, key = await KeyStore(db).create(owner, admin=admin)
        return key
    finally:
        await db.close()


async def revoke(db_url: str, key: str) -> None:
    db = Database(db_url)
    try:
        await KeyStore(db).revoke(key.split("_")[1])
    finally:
        await db.close()


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def send_body(text: str, *, stream: bool = False) -> dict[str, Any]:
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
    method = "SendStreamingMessage" if stream else "SendMessage"
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message}}


async def faces(http: httpx.AsyncClient, headers: dict[str, str]) -> dict[str, int]:
    """The status of one request to every face, with ``headers``."""
    rest_message = send_body("hi")["params"]
    sse = {**headers, "Accept": "text/event-stream"}
    out = {
        "jsonrpc": (await http.post("/", json=send_body("hi"), headers=headers)).status_code,
        "jsonrpc sse": (
            await http.post("/", json=send_body("hi", stream=True), headers=sse)
        ).status_code,
        "rest": (
            await http.post("/rest/message:send", json=rest_message, headers=headers)
        ).status_code,
        "rest sse": (
            await http.post("/rest/message:stream", json=rest_message, headers=sse)
        ).status_code,
        "tasks": (await http.get("/rest/tasks", headers=headers)).status_code,
        "memory api": (await http.get("/memory/contexts", headers=headers)).status_code,
        "personal api": (await http.get("/memory/owners/alice/pairs", headers=headers)).status_code,
        "openapi": (await http.get("/openapi.json", headers=headers)).status_code,
        "docs": (await http.get("/docs", headers=headers)).status_code,
    }
    return out


@pytest.fixture
def auth_server(start_server: StartServer) -> ServerHandle:
    return start_server(auth=True, hooks=None)  # personal memory on: its routes are a face


async def test_every_face_refuses_missing_wrong_and_revoked_keys(
    auth_server: ServerHandle, db_url: str
) -> None:
    key = await make_key(db_url, "alice")
    wrong = key[:-4] + ("AAAA" if not key.endswith("AAAA") else "BBBB")
    async with httpx.AsyncClient(base_url=auth_server.url, headers=V1) as http:
        missing = await faces(http, {})
        bad = await faces(http, bearer(wrong))
        not_a_key = await faces(http, bearer("not-a-key"))
        good = await faces(http, bearer(key))
        schema = (await http.get("/openapi.json", headers=bearer(key))).json()
        await revoke(db_url, key)
        revoked = await faces(http, bearer(key))
        refused = await http.get("/memory/contexts")
        card = await http.get("/.well-known/agent-card.json")
        page = await http.get("/ui")
    for statuses in (missing, bad, not_a_key, revoked):
        assert set(statuses.values()) == {401}, statuses
    assert set(good.values()) == {200}, good
    assert refused.headers["WWW-Authenticate"].startswith("Bearer")
    assert refused.json()["error"] == "unauthorized"
    assert card.status_code == 200 and page.status_code == 200  # public: they hold no data
    assert card.json()["securityRequirements"]
    assert set(card.json()["securitySchemes"]) == {"bearer", "apiKey"}
    assert set(schema["components"]["securitySchemes"]) == {"bearer", "apiKey"}
    assert schema["security"] == [{"bearer": []}, {"apiKey": []}]


async def test_a_key_reaches_only_its_own_owner(auth_server: ServerHandle, db_url: str) -> None:
    alice_key = await make_key(db_url, "alice")
    bob_key = await make_key(db_url, "bob")
    async with SmartctxClient(auth_server.url, api_key=bob_key) as bob:
        secret = await bob.send("My locker code is 7314.")
        await bob.create_context("bob-ctx")
    async with httpx.AsyncClient(
        base_url=auth_server.url, headers={**V1, **bearer(alice_key)}
    ) as http:
        answers = {
            "name bob": await http.get("/memory/contexts", headers={"X-Smartctx-Owner": "bob"}),
            "bob's pairs": await http.get("/memory/owners/bob/pairs"),
            "bob's context": await http.get("/memory/contexts/bob-ctx/snapshot"),
            "bob's task": await http.get(f"/rest/tasks/{secret.task_id}"),
            "bob's task over rpc": await http.post(
                "/",
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "GetTask",
                    "params": {"id": secret.task_id},
                },
            ),
            "forget bob": await http.delete("/memory/owners/bob"),
            "forget herself": await http.delete("/memory/owners/alice"),
            "compact bob": await http.post("/memory/owners/bob/compact"),
        }
        own = await http.get("/memory/contexts")
    status = {name: r.status_code for name, r in answers.items()}
    assert status == {
        "name bob": 403,
        "bob's pairs": 403,
        "bob's context": 404,
        "bob's task": 404,
        "bob's task over rpc": 200,  # JSON-RPC answers with an error object
        "forget bob": 403,
        "forget herself": 403,  # whole-owner operations need an admin key
        "compact bob": 403,
    }
    assert "error" in answers["bob's task over rpc"].json()
    assert "7314" not in answers["bob's task over rpc"].text
    assert own.json()["owner"] == "alice" and own.json()["contexts"] == []
    async with SmartctxClient(auth_server.url, api_key=bob_key) as bob:
        assert [c["context_id"] for c in await bob.contexts()].count("bob-ctx") == 1


async def test_an_admin_key_acts_as_any_owner(auth_server: ServerHandle, db_url: str) -> None:
    bob_key = await make_key(db_url, "bob")
    admin = await make_key(db_url, admin=True)
    async with SmartctxClient(auth_server.url, api_key=bob_key) as bob:
        await bob.send("Remember that my badge is B-12.")
    async with httpx.AsyncClient(base_url=auth_server.url, headers={**V1, **bearer(admin)}) as http:
        pairs = await http.get("/memory/owners/bob/pairs")
        as_bob = await http.get("/memory/contexts", headers={"X-Smartctx-Owner": "bob"})
        compact = await http.post("/memory/owners/bob/compact")
        forget = await http.delete("/memory/owners/bob")
        after = await http.get("/memory/owners/bob/pairs")
    assert pairs.status_code == 200 and len(pairs.json()["pairs"]) == 1
    assert as_bob.json()["owner"] == "bob" and len(as_bob.json()["contexts"]) == 1
    assert compact.status_code == 200 and forget.status_code == 200
    assert after.json()["pairs"] == []


async def test_mcp_tools_use_the_key(auth_server: ServerHandle, db_url: str) -> None:
    key = await make_key(db_url, "carol")
    async with Client(create_mcp_server(auth_server.url, api_key=key)) as client:
        created = await client.call_tool("create_context", {"context_id": "via-mcp"})
        listed = await client.call_tool("list_contexts", {})
    async with Client(create_mcp_server(auth_server.url, api_key="sctx_nope")) as client:
        refused = await client.call_tool("list_contexts", {})
    assert not created.is_error and not listed.is_error
    assert "via-mcp" in str(listed.structured_content)
    assert refused.is_error
    assert "unknown or revoked API key" in str(refused.content[0].text)  # type: ignore[union-attr]


async def test_keys_are_hashed_at_rest(auth_server: ServerHandle, db_url: str) -> None:
    key = await make_key(db_url, "dora")
    async with SmartctxClient(auth_server.url, api_key=key) as dora:
        await dora.contexts()
    db_file = Path(db_url.removeprefix("sqlite+aiosqlite:///"))
    stored = b"".join(p.read_bytes() for p in db_file.parent.glob(db_file.name + "*"))
    secret = key.split("_", 2)[2]  # sctx_<id>_<secret>; the secret may hold "_" itself
    assert secret.encode() not in stored and key.encode() not in stored
    assert key.split("_")[1].encode() in stored  # the key id is the lookup, not a secret


async def test_loopback_without_auth_accepts_no_key_but_checks_a_given_one(
    server: ServerHandle,
) -> None:
    async with httpx.AsyncClient(base_url=server.url, headers=V1) as http:
        anonymous = await http.get("/memory/contexts")
        wrong = await http.get("/memory/contexts", headers=bearer("sctx_0123456789ab_x"))
        placeholder = await http.get("/memory/contexts", headers=bearer("sk-placeholder"))
        card = await http.get("/.well-known/agent-card.json")
    assert anonymous.status_code == 200 and wrong.status_code == 401
    assert placeholder.status_code == 200  # an OpenAI client's dummy key: still anonymous
    assert "securityRequirements" not in card.json()
