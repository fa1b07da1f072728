"""Overload: turns beyond the running and waiting bounds are refused at once, retryably."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import httpx

from smartctx.agents import FunctionModel
from smartctx.agents.models import ChatMessages
from smartctx.service.server import ServerHandle

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
