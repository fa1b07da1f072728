"""A web page cannot drive a local server (real HTTP): a foreign ``Host`` (DNS rebinding) and
cross-site requests (foreign ``Origin``, form content types) are refused and change nothing."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from smartctx.service.client import SmartctxClient
from smartctx.service.server import ServerHandle

StartServer = Callable[..., ServerHandle]
OWNER = {"X-Smartctx-Owner": "default"}
TABLES = (
    "contexts",
    "slots",
    "slot_events",
    "a2a_tasks",
    "agent_memory",
    "mem_pairs",
    "mem_session_summaries",
    "mem_audit",
)


def dump(db_url: str) -> dict[str, list[tuple[Any, ...]]]:
    path = Path(db_url.removeprefix("sqlite+aiosqlite:///"))
    with sqlite3.connect(path) as conn:
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in TABLES}


def rpc(text: str) -> dict[str, Any]:
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": text}]}
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}


async def test_foreign_hosts_and_cross_site_requests_change_nothing(
    start_server: StartServer, db_url: str
) -> None:
    server = start_server(hooks=None)
    async with SmartctxClient(server.url, owner="default") as client:
        await client.send("My desk is 4B.")
    before = dump(db_url)
    evil = {"Origin": "http://evil.example"}
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    text = {"Content-Type": "text/plain"}
    async with httpx.AsyncClient(base_url=server.url, headers={"A2A-Version": "1.0"}) as http:
        answers = {
            "rebound host": await http.post(
                "/memory/owners/default/compact?force=true",
                headers={**OWNER, "Host": "evil.example:8000"},
            ),
            "rebound host read": await http.get(
                "/memory/owners/default/pairs", headers={**OWNER, "Host": "attacker.test"}
            ),
            "form post compact": await http.post(
                "/memory/owners/default/compact?force=true",
                content=b"force=true",
                headers={**OWNER, **evil, **form},
            ),
            "form post without origin": await http.post(
                "/memory/owners/default/compact?force=true",
                content=b"force=true",
                headers={**OWNER, **form},
            ),
            "text/plain rpc": await http.post(
                "/", content=str(rpc("hi")).encode(), headers={**OWNER, **evil, **text}
            ),
            "text/plain rpc same origin": await http.post(
                "/", content=str(rpc("hi")).encode(), headers={**OWNER, **text}
            ),
            "json from a foreign origin": await http.post(
                "/", json=rpc("hi"), headers={**OWNER, **evil}
            ),
            "null origin": await http.post(
                "/memory/contexts", json={}, headers={**OWNER, "Origin": "null"}
            ),
            "cross-site fetch metadata": await http.delete(
                "/memory/owners/default", headers={**OWNER, "Sec-Fetch-Site": "cross-site"}
            ),
        }
        after = dump(db_url)
        same_origin = await http.post(
            "/memory/contexts", json={}, headers={**OWNER, "Origin": server.url}
        )
    status = {name: r.status_code for name, r in answers.items()}
    assert status == {
        "rebound host": 400,
        "rebound host read": 400,
        "form post compact": 403,
        "form post without origin": 415,
        "text/plain rpc": 403,
        "text/plain rpc same origin": 415,
        "json from a foreign origin": 403,
        "null origin": 403,
        "cross-site fetch metadata": 403,
    }
    assert after == before
    assert same_origin.status_code == 201


async def test_configured_hosts_and_origins_are_served(start_server: StartServer) -> None:
    server = start_server(
        allowed_hosts=["ctx.example.com"], allowed_origins=["https://app.example.com"]
    )
    async with httpx.AsyncClient(base_url=server.url, headers=OWNER) as http:
        host = await http.get("/memory/contexts", headers={"Host": "ctx.example.com"})
        origin = await http.get("/memory/contexts", headers={"Origin": "https://app.example.com"})
        other = await http.get("/memory/contexts", headers={"Host": "other.example.com"})
    assert (host.status_code, origin.status_code, other.status_code) == (200, 200, 400)
