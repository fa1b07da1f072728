"""Overload: turns beyond the running and waiting bounds are refused at once, retryably."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from smartctx.agents import FunctionModel
from smartctx.agents.models import ChatMessages
from smartctx.core import HashingEmbedder, Settings
from smartctx.service.server import ServerHandle, serve

StartServer = Callable[..., ServerHandle]


def _send(text: str, context: str) -> dict[str, Any]:
    message = {"messageId": f"m-{context}", "role": "ROLE_USER", "parts": [{"text": text}]}
    message["contextId"] = context
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}


def test_a_turn_beyond_the_bounds_gets_a_quick_retryable_error(start_server: StartServer) -> None:
    entered, release = threading.Event(), threading.Event()

    async def slow(_messages: ChatMessages) -> str:
        entered.set()
        await asyncio.to_thread(release.wait, 30)
        return "done"

    handle = start_server(model=FunctionModel(slow), max_running_turns=1, max_waiting_turns=0)
    headers = {"A2A-Version": "1.0"}

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with httpx.AsyncClient(base_url=handle.url, headers=headers, timeout=30) as http:
            first = asyncio.create_task(http.post("/", json=_send("first question", "c1")))
            await asyncio.to_thread(entered.wait, 30)
            busy = (await http.post("/", json=_send("second question", "c2"))).json()
            release.set()
            return busy, (await first).json()

    busy, first = asyncio.run(scenario())
    assert "server busy" in busy["error"]["message"]
    assert busy["error"]["data"][0]["metadata"]["retryable"] is True  # google.rpc.ErrorInfo
    assert first["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_turn_waiting_for_its_place_holds_no_database_connection(
    tmp_path: Path, postgres_admin: str
) -> None:
    # On PostgreSQL a running turn's statements share one held connection; a turn waiting for
    # its place must not take one, or waiting turns could drain the pool the running ones need
    from smartctx.bench.serve_procs import throwaway_database

    entered, release = threading.Event(), threading.Event()

    async def slow(_messages: ChatMessages) -> str:
        entered.set()
        await asyncio.to_thread(release.wait, 30)
        return "done"

    async def scenario(db_url: str) -> tuple[int, int, list[dict[str, Any]]]:
        settings = Settings(database_url=db_url, max_running_turns=1, max_waiting_turns=4)
        handle = await asyncio.to_thread(
            serve,
            settings,
            host="127.0.0.1",
            port=0,
            model=FunctionModel(slow),
            embedder=HashingEmbedder(),
            hooks=[],
        )
        pool: Any = handle.app.db.engine.sync_engine.pool
        try:
            async with httpx.AsyncClient(base_url=handle.url, timeout=30) as http:
                http.headers["A2A-Version"] = "1.0"
                first = asyncio.create_task(http.post("/", json=_send("first question", "c1")))
                await asyncio.to_thread(entered.wait, 30)
                running = pool.checkedout()
                waiting = [
                    asyncio.create_task(http.post("/", json=_send(f"question {i}", f"w{i}")))
                    for i in range(3)
                ]
                await asyncio.sleep(0.5)  # they reached the server and wait for their place
                with_waiting = pool.checkedout()
                release.set()
                answers = [(await task).json() for task in [first, *waiting]]
        finally:
            await asyncio.to_thread(handle.stop)
        return running, with_waiting, answers

    async def run() -> tuple[int, int, list[dict[str, Any]]]:
        async with throwaway_database("postgresql", tmp_path, postgres_admin) as db_url:
            return await scenario(db_url)

    running, with_waiting, answers = asyncio.run(run())
    assert with_waiting == running
    assert [a["result"]["task"]["status"]["state"] for a in answers] == ["TASK_STATE_COMPLETED"] * 4


def test_the_offline_responder_runs_few_turns_at_once_a_chat_model_many(tmp_path: Path) -> None:
    from smartctx.service.app import MODEL_RUNNING_TURNS, OFFLINE_RUNNING_TURNS, create_app

    def running(settings: Settings, **options: Any) -> int:
        app = create_app(settings, base_url="http://127.0.0.1:1", **options)
        return app.handler.max_running

    url = f"sqlite+aiosqlite:///{tmp_path / 'a.db'}"

    async def reply(_messages: ChatMessages) -> str:
        return "ok"

    assert running(Settings(database_url=url)) == OFFLINE_RUNNING_TURNS == 3
    model = FunctionModel(reply)
    assert running(Settings(database_url=url), model=model) == MODEL_RUNNING_TURNS == 16
    remote = Settings(database_url=url, llm_base_url="http://127.0.0.1:9/v1", llm_model="m")
    assert running(remote) == MODEL_RUNNING_TURNS
    assert running(Settings(database_url=url, max_running_turns=5)) == 5
