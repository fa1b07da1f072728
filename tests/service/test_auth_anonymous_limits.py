"""Without authentication (loopback), anonymous callers are kept apart unless they name the same
owner; with it, each credential is held to its request rate (429 + Retry-After) and open streams.
Real HTTP throughout."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import httpx
from test_auth_faces import bearer, make_key

from smartctx.core.settings import Settings
from smartctx.service.auth import RateLimiter, StreamLimiter
from smartctx.service.auth.policy import AccessPolicy, auth_required, host_name, is_loopback
from smartctx.service.client import SmartctxClient
from smartctx.service.server import ServerHandle

StartServer = Callable[..., ServerHandle]
SECRET = "My locker number is 9931."  # not a sensitive value: replies may repeat it
QUESTION = "What is my locker number?"
V1 = {"A2A-Version": "1.0"}


def rpc(text: str, context_id: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    if context_id:
        message["contextId"] = context_id
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}


def reply_text(body: dict[str, Any]) -> str:
    """Every string of the result but its ids (random hex ids may hold any four digits)."""
    return " ".join(_strings(body["result"]))


def _strings(value: Any, key: str = "") -> list[str]:
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in _strings(v, str(k))]
    if isinstance(value, list):
        return [t for v in value for t in _strings(v, key)]
    return [] if key.lower().endswith("id") or not isinstance(value, str) else [value]


async def test_two_header_less_callers_do_not_share_memory(start_server: StartServer) -> None:
    server = start_server(kb_top_k=0, hooks=None)  # long-term memory and personal memory on
    async with httpx.AsyncClient(base_url=server.url, headers=V1) as first:
        told = await first.post("/", json=rpc(SECRET))
        owner = told.headers["X-Smartctx-Owner"]
        context = told.json()["result"]["task"]["contextId"]
        again = await first.post(
            "/", json=rpc(QUESTION, context), headers={"X-Smartctx-Owner": owner}
        )
        elsewhere = await first.post("/", json=rpc(QUESTION), headers={"X-Smartctx-Owner": owner})
    async with httpx.AsyncClient(base_url=server.url, headers=V1) as second:
        asked = await second.post("/", json=rpc(QUESTION))
        listed = await second.get("/memory/contexts")
        pairs = await second.get(f"/memory/owners/{owner}/pairs")
    async with SmartctxClient(server.url) as third:  # anonymous: an owner of its own
        third_reply = await third.send(QUESTION)
    assert owner.startswith("anon-")
    assert "9931" in reply_text(again.json()) and "9931" in reply_text(elsewhere.json())
    assert "9931" not in reply_text(asked.json()) and "9931" not in third_reply.text
    assert asked.headers["X-Smartctx-Owner"] != owner
    assert listed.json()["contexts"] == [] and pairs.status_code == 403


async def test_callers_naming_the_same_owner_share_it(start_server: StartServer) -> None:
    server = start_server(kb_top_k=0)
    async with SmartctxClient(server.url, owner="team") as one:
        await one.send(SECRET)
    async with SmartctxClient(server.url, owner="team") as two:
        answer = await two.send(QUESTION)
    assert "9931" in answer.text


async def test_a_key_over_its_rate_gets_429_with_retry_after(
    start_server: StartServer, db_url: str
) -> None:
    server = start_server(auth=True, rate_limit_per_minute=3)
    key = await make_key(db_url, "ida")
    other = await make_key(db_url, "jon")
    async with httpx.AsyncClient(base_url=server.url, headers=bearer(key)) as http:
        statuses = [(await http.get("/memory/contexts")).status_code for _ in range(4)]
        limited = await http.post("/memory/contexts", json={"context_id": "late"})
        listed = await http.get("/memory/contexts", headers=bearer(other))
    assert statuses == [200, 200, 200, 429]
    assert limited.status_code == 429 and int(limited.headers["Retry-After"]) >= 1
    assert listed.status_code == 200 and listed.json()["contexts"] == []  # nothing was created


async def test_open_event_streams_per_key_are_bounded(
    start_server: StartServer, db_url: str
) -> None:
    server = start_server(auth=True, max_streams_per_key=1)
    key = await make_key(db_url, "kim")
    async with httpx.AsyncClient(base_url=server.url, headers=bearer(key), timeout=10) as http:
        await http.post("/memory/contexts", json={"context_id": "c"})
        async with http.stream("GET", "/memory/contexts/c/events") as first:
            assert first.status_code == 200
            lines = first.aiter_lines()
            assert (await anext(lines)).startswith("event:")
            second = await http.get("/memory/contexts/c/events")
            other = await http.get("/memory/contexts", headers={"Accept": "application/json"})
    assert second.status_code == 429 and second.json()["error"] == "rate_limited"
    assert other.status_code == 200  # plain requests are not streams


def test_rate_limiter_refills_over_time() -> None:
    now = [0.0]
    limiter = RateLimiter(60, clock=lambda: now[0])
    assert [limiter.take("k") for _ in range(60)] == [0] * 60
    assert limiter.take("k") == 1 and limiter.take("other") == 0
    now[0] += 1.0
    assert limiter.take("k") == 0 and limiter.take("k") == 1
    assert RateLimiter(0).take("k") == 0


def test_stream_limiter_counts_per_key() -> None:
    streams = StreamLimiter(2)
    assert streams.acquire("a") and streams.acquire("a") and not streams.acquire("a")
    assert streams.acquire("b")
    streams.release("a")
    assert streams.open("a") == 1 and streams.acquire("a")


def test_auth_is_on_by_default_off_loopback() -> None:
    assert not auth_required(Settings(host="127.0.0.1"))
    assert not auth_required(Settings(host="::1"))
    assert auth_required(Settings(host="0.0.0.0"))
    assert auth_required(Settings(host="192.168.1.7"))
    assert not auth_required(Settings(host="0.0.0.0", auth=False))
    assert auth_required(Settings(host="127.0.0.1", auth=True))
    assert is_loopback("127.8.0.1") and is_loopback("[::1]") and not is_loopback("10.0.0.1")
    assert host_name("[::1]:8000") == "::1" and host_name("Example.COM:80") == "example.com"
    policy = AccessPolicy.from_settings(Settings(host="0.0.0.0"), "https://ctx.example.com")
    assert policy.host_allowed("ctx.example.com") and policy.host_allowed("localhost:8000")
    assert not policy.host_allowed("evil.example") and not policy.host_allowed(None)
