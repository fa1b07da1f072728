"""Bad input gets the protocol's error, never a 500, and leaves the database untouched."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from smartctx.service.client import SmartctxClient
from smartctx.service.server import ServerHandle

V1 = {"A2A-Version": "1.0"}
TABLES = ("contexts", "slots", "slot_events", "a2a_tasks")


def dump(db_file: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the tables a request could touch, in a stable order."""
    with sqlite3.connect(db_file) as conn:
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in TABLES}


def rpc(method: str, params: dict[str, Any], request_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def message(text: str, context_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "message": {
            "messageId": uuid.uuid4().hex,
            "role": "ROLE_USER",
            "parts": [{"text": text}],
            "contextId": context_id,
            **extra,
        }
    }


@pytest.fixture
async def seeded(start_server: Any, tmp_path: Path) -> tuple[ServerHandle, str, Path]:
    """A server limited to 200-character messages, with one context of one turn."""
    handle = start_server(max_message_chars=200)
    async with SmartctxClient(handle.url, owner="default") as client:
        reply = await client.send("How do I connect to the VPN?")
    return handle, reply.context_id, tmp_path / "service.db"


def _error(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body = response.json()
    assert "result" not in body
    return dict(body["error"])


async def test_jsonrpc_bad_input_gets_jsonrpc_errors(seeded: Any) -> None:
    handle, context_id, db_file = seeded
    before = dump(db_file)
    assert len(before["a2a_tasks"]) == 1  # the SDK's task store lives in the same database
    async with httpx.AsyncClient(
        base_url=handle.url, headers={"X-Smartctx-Owner": "default"}
    ) as http:
        cases = {
            "malformed json": await http.post("/", content=b"{not json", headers=V1),
            "unknown method": await http.post("/", json=rpc("Frobnicate", {}), headers=V1),
            "missing version": await http.post(
                "/", json=rpc("SendMessage", message("hello", context_id))
            ),
            "empty message": await http.post(
                "/", json=rpc("SendMessage", message("   ", context_id)), headers=V1
            ),
            "too large": await http.post(
                "/", json=rpc("SendMessage", message("x" * 201, context_id)), headers=V1
            ),
            "bad options": await http.post(
                "/",
                json=rpc(
                    "SendMessage", message("hi", "fresh", metadata={"smartctx": {"budget": -3}})
                ),
                headers=V1,
            ),
            "bad owner": await http.post(
                "/",
                json=rpc("SendMessage", message("hi", context_id)),
                headers={**V1, "X-Smartctx-Owner": "no spaces allowed"},
            ),
        }
    codes = {name: _error(response)["code"] for name, response in cases.items()}
    assert codes == {
        "malformed json": -32700,
        "unknown method": -32601,
        "missing version": -32009,
        "empty message": -32602,
        "too large": -32602,
        "bad options": -32602,
        "bad owner": -32602,
    }
    assert "201 characters" in _error(cases["too large"])["message"]
    assert "empty" in _error(cases["empty message"])["message"]
    assert "budget" in _error(cases["bad options"])["message"]
    assert dump(db_file) == before


async def test_rest_bad_input_gets_http_4xx(seeded: Any) -> None:
    handle, context_id, db_file = seeded
    before = dump(db_file)
    async with httpx.AsyncClient(
        base_url=handle.url, headers={"X-Smartctx-Owner": "default"}
    ) as http:
        malformed = await http.post("/rest/message:send", content=b"{oops", headers=V1)
        empty = await http.post("/rest/message:send", json=message("", context_id), headers=V1)
        large = await http.post(
            "/rest/message:send", json=message("y" * 500, context_id), headers=V1
        )
        no_version = await http.post("/rest/message:send", json=message("hi", context_id))
    for response in (malformed, empty, large, no_version):
        assert 400 <= response.status_code < 500, response.text
        assert response.json()["error"]["message"]
    assert "500 characters" in large.json()["error"]["message"]
    assert dump(db_file) == before


async def test_memory_api_bad_input_gets_4xx(seeded: Any) -> None:
    handle, context_id, db_file = seeded
    before = dump(db_file)
    async with httpx.AsyncClient(
        base_url=handle.url, headers={"X-Smartctx-Owner": "default"}
    ) as http:
        answers = {
            "unknown context": await http.get("/memory/contexts/nope/snapshot"),
            "unknown context prompt": await http.get("/memory/contexts/nope/prompt"),
            "unknown context slot": await http.post(
                "/memory/contexts/nope/slots", json={"kind": "user", "text": "hi"}
            ),
            "unknown context events": await http.get("/memory/contexts/nope/events"),
            "bad kind": await http.post(
                f"/memory/contexts/{context_id}/slots", json={"kind": "gossip", "text": "hi"}
            ),
            "empty text": await http.post(
                f"/memory/contexts/{context_id}/slots", json={"kind": "user", "text": ""}
            ),
            "malformed json": await http.post(
                f"/memory/contexts/{context_id}/slots",
                content=b"{",
                headers={"content-type": "application/json"},
            ),
            "existing context": await http.post(
                "/memory/contexts", json={"context_id": context_id}
            ),
            "unknown preset": await http.post("/memory/contexts", json={"preset": "magic"}),
            "system prompt over budget": await http.post(
                "/memory/contexts", json={"budget": 5, "system_prompt": "word " * 50}
            ),
            "other owner": await http.get(
                f"/memory/contexts/{context_id}/snapshot", headers={"X-Smartctx-Owner": "eve"}
            ),
        }
    status = {name: r.status_code for name, r in answers.items()}
    assert status == {
        "unknown context": 404,
        "unknown context prompt": 404,
        "unknown context slot": 404,
        "unknown context events": 404,
        "bad kind": 400,
        "empty text": 400,
        "malformed json": 400,
        "existing context": 409,
        "unknown preset": 400,
        "system prompt over budget": 422,
        "other owner": 404,
    }
    for response in answers.values():
        body = response.json()
        assert body["error"] and body["message"] and "Traceback" not in response.text
    assert dump(db_file) == before
