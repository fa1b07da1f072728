"""Two real ``smartctx serve`` processes on one PostgreSQL database (a throw-away one per run).

Proves: one conversation served alternately by both keeps one history; a memory written
through A is recalled through B at once; concurrent turns on one context through both never
lose an update; a task created on A is read on B. Every request names one owner
(``X-Smartctx-Owner``), as one user's client does. Skips only when PostgreSQL does not answer
(``SMARTCTX_TEST_POSTGRES_URL``, else postgres@127.0.0.1:5432).
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from smartctx.bench.serve_procs import (
    ServerProcess,
    postgres_answers,
    start_server,
    throwaway_database,
)
from smartctx.service.client import smartctx_info
from smartctx.service.owner import OWNER_HEADER

FAST = {"SMARTCTX_EMBEDDER": "hashing", "SMARTCTX_RETRIEVAL_EMBEDDER": "hashing"}
HEADERS = {"A2A-Version": "1.0", OWNER_HEADER: "scale-out-user"}


def _admin_url() -> str:
    url = os.environ.get(
        "SMARTCTX_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
    )
    return url.rsplit("/", 1)[0] + "/postgres"


@pytest.fixture(scope="module")
def admin() -> str:
    url = _admin_url()
    if not asyncio.run(postgres_answers(url)):
        pytest.skip("PostgreSQL does not answer")
    return url


@asynccontextmanager
async def _two_servers(admin: str, workdir: Path) -> AsyncIterator[tuple[str, str]]:
    async with throwaway_database("postgresql", workdir, admin) as url:
        servers: list[ServerProcess] = []
        try:
            for _ in range(2):
                servers.append(await start_server("smartctx", url, workdir, env=FAST))
            yield servers[0].url, servers[1].url
        finally:
            for server in servers:
                await asyncio.to_thread(server.stop)


async def _send(http: httpx.AsyncClient, url: str, text: str, context: str) -> dict[str, Any]:
    message = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        "contextId": context,
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    answer = (await http.post(url + "/", json=body)).json()
    task: dict[str, Any] = answer["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", answer
    return task


def _meta(task: dict[str, Any]) -> dict[str, Any]:
    return smartctx_info(task["artifacts"][-1]["metadata"])


def test_two_replicas_share_conversations_memory_and_tasks(admin: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with (
            _two_servers(admin, tmp_path) as (a, b),
            httpx.AsyncClient(timeout=60, headers=HEADERS) as http,
        ):
            # one conversation, turns alternating between the replicas: one growing history
            sizes = []
            for turn in range(4):
                task = await _send(http, (a, b)[turn % 2], f"Turn {turn}: my desk is {turn}F", "c1")
                sizes.append(_meta(task)["snapshot"]["log_size"])
            assert sizes == sorted(sizes) and len(set(sizes)) == 4

            # a memory written through A is recalled through B, in another context, at once
            await _send(http, a, "My employee number is 48213.", "c-a")
            task = await _send(http, b, "What is my employee number?", "c-b")
            events = _meta(task)["events"]
            assert any("mem:" in str(e.get("source_id")) for e in events), events

            # concurrent turns on one context through both replicas: none lost, none failed
            tasks = await asyncio.gather(
                *(_send(http, (a, b)[i % 2], f"Parallel note {i}", "c2") for i in range(6))
            )
            state = (await http.get(f"{a}/memory/contexts/c2/snapshot")).json()
            versions = sorted(_meta(t)["snapshot"]["version"] for t in tasks)
            assert len(set(versions)) == 6
            log = state["log_size"]
            assert log >= 12  # six user turns and six replies, at least

            # a task answered by A is read through B
            got = await http.post(
                b + "/",
                json={
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "GetTask",
                    "params": {"id": tasks[0]["id"]},
                },
            )
            assert got.json()["result"]["status"]["state"] == "TASK_STATE_COMPLETED"

    asyncio.run(scenario())
