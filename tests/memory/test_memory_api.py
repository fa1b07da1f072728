"""The personal-memory HTTP API and its Python client, in process (ASGITransport)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from smartctx.core.clock import ManualClock
from smartctx.core.errors import Conflict, NotFound
from smartctx.memory import PairIn, PersonalMemory
from smartctx.memory.client import DeviceSync, MemoryClient
from smartctx.service.personal_api import personal_router

BASE = "http://memory.test"


@pytest.fixture
async def http(memory: PersonalMemory) -> AsyncIterator[httpx.AsyncClient]:
    app = FastAPI()
    app.include_router(personal_router(memory, run_worker=False))
    transport = httpx.ASGITransport(app=app)

    async def name_the_path_owner(request: httpx.Request) -> None:
        # as a device of that owner would: without authentication the caller names its owner
        parts = request.url.path.split("/")
        if len(parts) > 3 and "X-Smartctx-Owner" not in request.headers:
            request.headers["X-Smartctx-Owner"] = parts[3]

    async with httpx.AsyncClient(
        transport=transport, base_url=BASE, event_hooks={"request": [name_the_path_owner]}
    ) as client:
        yield client


def _client(http: httpx.AsyncClient, owner: str) -> MemoryClient:
    return MemoryClient(BASE, owner, transport=http._transport)


async def test_sync_endpoint_idempotent_and_conflicting(http: httpx.AsyncClient) -> None:
    body = {"version": "v0", "pairs": [{"id": "p1", "user_text": "안방 청정해줘"}]}
    first = await http.post("/memory/owners/alice/sync", json=body)
    assert first.status_code == 200 and first.json()["stored"] == ["p1"]
    again = await http.post("/memory/owners/alice/sync", json=body)
    assert again.json()["duplicates"] == ["p1"]
    stale = {"version": "v0", "pairs": [{"id": "p2", "user_text": "거실 청정해줘"}]}
    conflict = await http.post("/memory/owners/alice/sync", json=stale)
    assert conflict.status_code == 409
    assert conflict.json()["error"] == "conflict"
    assert conflict.json()["detail"] == {"cursor": "cur-1", "version": "v1"}
    pairs = (await http.get("/memory/owners/alice/pairs")).json()["pairs"]
    assert [p["id"] for p in pairs] == ["p1"]


async def test_profile_accept_wrong_and_errors(http: httpx.AsyncClient) -> None:
    await http.post("/memory/owners/alice/pairs", json={"user_text": "I like jazz", "id": "a"})
    [item] = (await http.get("/memory/owners/alice/profile")).json()["items"]
    assert item["status"] == "candidate"
    accepted = await http.post(f"/memory/owners/alice/profile/{item['id']}/accept")
    assert accepted.json()["status"] == "confirmed"
    wrong = await http.post(f"/memory/owners/alice/profile/{item['id']}/wrong")
    assert wrong.json()["status"] == "rejected"
    audit = (await http.get("/memory/owners/alice/audit")).json()["records"]
    assert audit[0]["action"] == "mark_wrong"
    missing = await http.post("/memory/owners/alice/profile/nope/wrong")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    bad = await http.get("/memory/owners/alice/profile", params={"status": "maybe"})
    assert bad.status_code == 400
    bad_owner = await http.get("/memory/owners/no%20spaces/profile")
    assert bad_owner.status_code == 400


async def test_one_owner_never_reads_another(http: httpx.AsyncClient) -> None:
    await http.post("/memory/owners/alice/pairs", json={"user_text": "I like jazz", "id": "a"})
    await http.post("/memory/owners/bob/pairs", json={"user_text": "I like opera", "id": "b"})
    bob = (await http.get("/memory/owners/bob/profile")).json()["items"]
    assert [i["value"] for i in bob] == ["opera"]
    snoop = await http.get("/memory/owners/bob/pairs", headers={"X-Smartctx-Owner": "alice"})
    assert snoop.status_code == 403 and snoop.json()["error"] == "forbidden"
    assert "opera" not in snoop.text
    alice_item = (await http.get("/memory/owners/alice/profile")).json()["items"][0]["id"]
    cross = await http.post(f"/memory/owners/bob/profile/{alice_item}/accept")
    assert cross.status_code == 404
    cross_delete = await http.delete("/memory/owners/bob/pairs/a")
    assert cross_delete.status_code == 404
    changes = (await http.post("/memory/owners/bob/sync", json={})).json()["changes"]
    assert [p["user_text"] for p in changes["pairs"]] == ["I like opera"]
    snap = (await http.get("/memory/owners/bob/snapshot")).json()
    assert "jazz" not in str(snap)


async def test_client_and_device_sync(
    http: httpx.AsyncClient, memory: PersonalMemory, clock: ManualClock
) -> None:
    async with _client(http, "dev-owner") as client:
        device = DeviceSync(client)
        await device.push([PairIn("안방 청정해줘", id="d1", session_id="s1")])
        assert set(device.cache["pair"]) == {"d1"}
        # the server moves on (another device), so this device's version is now stale
        await memory.add_pair("dev-owner", PairIn("거실 청정해줘", id="other", session_id="s2"))
        with pytest.raises(Conflict) as err:
            await client.sync(cursor=device.cursor, version=device.version, pairs=[
                PairIn("x", id="d2")
            ])  # fmt: skip
        assert err.value.detail["version"] == "v2"
        answer = await device.push([PairIn("잘 때는 안방 먼저 청정해", id="d2", session_id="s1")])
        assert answer["stored"] == ["d2"]
        assert set(device.cache["pair"]) == {"d1", "other", "d2"}
        await client.delete_pair("other")
        await device.pull()
        assert set(device.cache["pair"]) == {"d1", "d2"}
        rooms = {
            i["value"]: i["status"] for i in await client.profile() if i["key"] == "preferred_room"
        }
        assert rooms == {"안방": "candidate", "거실": "reverted"}
        with pytest.raises(NotFound):
            await client.delete_pair("nope")
        clock.advance(hours=2)
        report = await client.compact(force=True)
        assert report["sessions"] == 1
        assert (await client.snapshot())["contract_version"] == "a2a-memory-context-v1"
        deleted = await client.forget()
        assert deleted["deleted"]["mem_pairs"] == 2
        assert await client.profile() == []
