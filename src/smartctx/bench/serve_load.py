"""The load of ``smartctx bench serve``: N concurrent A2A clients, each continuing its own context.

Each client is one HTTP connection speaking A2A 1.0 JSON-RPC (``SendMessage`` with the
``A2A-Version: 1.0`` header, a fresh ``messageId`` per message and the client's own
``contextId``), sending its next message as soon as the last one is answered. Each client acts
as an owner of its own, named with ``X-Smartctx-Owner`` (client ``i`` is ``bench-<i>``, see
:func:`client_owner`): a header-less caller would get a fresh owner per request and never see
its context again, which is not what a user meets. Raw JSON-RPC over
httpx keeps the load generator's own CPU small: on a 2-core machine the client competes with
the server it measures. A request counts as an error when the HTTP call fails or times out, the
answer is a JSON-RPC error, or the task does not end ``completed``. With several server URLs the
clients alternate between them: client ``i`` talks to ``urls[i % len(urls)]``, or, with
``alternate_turns``, each client moves to the next server on every turn.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from smartctx.service.owner import OWNER_HEADER

_TOPICS = (
    "my VPN drops whenever I switch from Wi-Fi to the office network",
    "the expense report for the Berlin trip was rejected twice",
    "I need to reset the password of my build account",
    "how many days of leave do I still have this year",
    "the printer on the third floor shows a paper jam that is not there",
    "my laptop fan runs loud during video calls",
    "I moved to the data platform team last month",
    "the hotel limit for Paris seems lower than last year",
    "please remember that I prefer answers in short bullet points",
    "our team offsite is planned for the second week of June",
)
_ASKS = ("what should I check first", "who can approve it", "is there a known fix", "any idea")

Progress = Callable[[int], None]
OWNER_PREFIX = "bench"


def client_owner(index: int, prefix: str = OWNER_PREFIX) -> str:
    """The owner simulated client ``index`` acts as (``bench-0``, ``bench-1``...)."""
    return f"{prefix}-{index}"


def message_text(client: int, turn: int) -> str:
    """A varied, deterministic helpdesk-style message (so deduplication does not merge turns)."""
    rng = random.Random(client * 100_003 + turn)
    topic, ask = rng.choice(_TOPICS), rng.choice(_ASKS)
    return f"Turn {turn}: {topic} (ticket {rng.randint(1000, 99999)}); {ask}?"


def send_body(text: str, context_id: str) -> dict[str, Any]:
    """The JSON-RPC ``SendMessage`` request of one user message in ``context_id``."""
    message = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        "contextId": context_id,
    }
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}


def completed(answer: dict[str, Any]) -> bool:
    """Whether a ``SendMessage`` answer is a task that ended completed."""
    task = (answer.get("result") or {}).get("task") or {}
    return bool((task.get("status") or {}).get("state") == "TASK_STATE_COMPLETED")


@dataclass
class LoadResult:
    """What one load level measured; latencies are of successful requests, in seconds."""

    clients: int
    seconds: float
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)

    @property
    def ok(self) -> int:
        return len(self.latencies)

    def percentile_ms(self, q: float) -> float:
        if not self.latencies:
            return 0.0
        ordered = sorted(self.latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    @property
    def rps(self) -> float:
        return self.ok / self.seconds if self.seconds > 0 else 0.0


class _Client:
    def __init__(
        self, index: int, urls: Sequence[str], timeout: float, alternate: bool, owner: str
    ) -> None:
        self.index = index
        self.urls = list(urls)
        self.alternate = alternate
        self.context_id = f"bench-{uuid.uuid4().hex[:10]}-{index}"
        self.turn = 0
        self.http = httpx.AsyncClient(
            timeout=timeout,
            headers={"A2A-Version": "1.0", OWNER_HEADER: owner},
            limits=httpx.Limits(max_connections=len(self.urls), max_keepalive_connections=4),
        )

    def url(self) -> str:
        step = self.turn if self.alternate else 0
        return self.urls[(self.index + step) % len(self.urls)]

    async def send(self) -> tuple[float | None, str]:
        """One turn: (latency in seconds or None on error, error description)."""
        body = send_body(message_text(self.index, self.turn), self.context_id)
        url = self.url()
        self.turn += 1
        start = time.perf_counter()
        try:
            answer = await self.http.post(url + "/", json=body)
        except httpx.HTTPError as err:
            return None, f"{type(err).__name__}"
        elapsed = time.perf_counter() - start
        if answer.status_code != 200:
            return None, f"HTTP {answer.status_code}"
        data = answer.json()
        if completed(data):
            return elapsed, ""
        detail = data.get("error") or (data.get("result") or {}).get("task", {}).get("status")
        return None, str(detail)[:200]

    async def aclose(self) -> None:
        await self.http.aclose()


async def run_level(
    urls: Sequence[str],
    clients: int,
    requests: int,
    *,
    warmup: int = 1,
    timeout: float = 60.0,
    alternate_turns: bool = False,
    owner_prefix: str = OWNER_PREFIX,
    progress: Progress | None = None,
) -> LoadResult:
    """Drive ``clients`` concurrent clients until ``requests`` timed requests are answered.

    Client ``i`` acts as owner ``client_owner(i, owner_prefix)``. Each client first sends
    ``warmup`` untimed turns (creating its context). Every request has a ``timeout``, so a level
    always ends.
    """
    pool = [
        _Client(i, urls, timeout, alternate_turns, client_owner(i, owner_prefix))
        for i in range(clients)
    ]
    try:
        for _ in range(warmup):
            await asyncio.gather(*(c.send() for c in pool))
        result = LoadResult(clients, 0.0)
        remaining = [requests]

        async def worker(client: _Client) -> None:
            while remaining[0] > 0:
                remaining[0] -= 1
                latency, error = await client.send()
                if latency is None:
                    result.errors += 1
                    if len(result.error_samples) < 3:
                        result.error_samples.append(error)
                else:
                    result.latencies.append(latency)
                if progress is not None:
                    progress(1)

        start = time.perf_counter()
        await asyncio.gather(*(worker(c) for c in pool))
        result.seconds = time.perf_counter() - start
        return result
    finally:
        await asyncio.gather(*(c.aclose() for c in pool))


async def run_turns(
    url: str,
    turns: int,
    *,
    timeout: float = 60.0,
    owner: str = client_owner(0),
    progress: Progress | None = None,
) -> list[float]:
    """One client (as ``owner``) continuing one context for ``turns`` turns; the latency of
    each (NaN = error)."""
    client = _Client(0, [url], timeout, False, owner)
    out: list[float] = []
    try:
        for _ in range(turns):
            latency, _error = await client.send()
            out.append(float("nan") if latency is None else latency)
            if progress is not None:
                progress(1)
    finally:
        await client.aclose()
    return out


class TurnClient:
    """One connection sending single turns, as ``owner``, to any of its contexts (``async with``
    closes it)."""

    def __init__(self, url: str, timeout: float = 60.0, *, owner: str = client_owner(0)) -> None:
        self._client = _Client(0, [url], timeout, False, owner)

    async def turn(self, context_id: str) -> float | None:
        """One message in ``context_id``; its latency in seconds, or None on error."""
        self._client.context_id = context_id
        latency, _error = await self._client.send()
        return latency

    async def __aenter__(self) -> TurnClient:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self._client.aclose()


async def one_turn(
    url: str, context_id: str, timeout: float = 60.0, *, owner: str = client_owner(0)
) -> float | None:
    """One message in ``context_id`` of ``owner`` on a fresh connection; its latency, or None on
    error."""
    async with TurnClient(url, timeout, owner=owner) as client:
        return await client.turn(context_id)
