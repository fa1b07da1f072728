"""A hostile load cannot take the server down (issue 11): while clients send oversized bodies,
oversized slots, deeply nested metadata and the largest legal messages, the resident memory of
the server process stays bounded and SIGTERM stops it within its grace period (5 s).

Before: a 1,000,000-character slot drove the server to 22 GB and it ignored SIGTERM; a legal
32,000-character message held the event loop for over a minute.
"""

from __future__ import annotations

import signal
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
from serverproc import Server

V1 = {"A2A-Version": "1.0"}
RSS_GROWTH_LIMIT_KIB = 600 * 1024
GRACE_SECONDS = 5.0
BIG_TURNS = 4


def _big_message() -> dict[str, object]:
    text = " ".join(f"note {i}: I like jazz; clean the living room." for i in range(4000))
    message = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": text[:32_000]}],
        "metadata": {"smartctx": {"budget": 20_000}},
    }
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}


def _deep(depth: int) -> dict[str, object]:
    out: dict[str, object] = {}
    for _ in range(depth):
        out = {"a": out}
    return out


def _attacks(http: httpx.Client) -> list[Callable[[], httpx.Response]]:
    return [
        lambda: http.post("/memory/contexts/c1/slots", content=b"x" * 3_000_000),
        lambda: http.post(
            "/memory/contexts/c1/slots", json={"kind": "user", "text": "y" * 1_000_000}
        ),
        lambda: http.post(
            "/memory/contexts/c1/slots", json={"kind": "user", "text": "z" * 200_000}
        ),
        lambda: http.post(
            "/memory/contexts/c1/slots",
            json={"kind": "user", "text": "hi", "metadata": _deep(500)},
        ),
    ]


def test_hostile_load_keeps_memory_bounded_and_sigterm_works(tmp_path: Path) -> None:
    server = Server(f"sqlite+aiosqlite:///{tmp_path / 'load.db'}", tmp_path)
    server.start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            assert http.post("/memory/contexts", json={"context_id": "c1"}).status_code == 201
        baseline = server.rss_kib()
        done = threading.Event()
        big_turns: list[str] = []
        refused: list[int] = []

        def attacker() -> None:
            with httpx.Client(base_url=server.url, timeout=60) as http:
                while not done.is_set():
                    for attack in _attacks(http):
                        try:
                            refused.append(attack().status_code)
                        except httpx.HTTPError:
                            return

        def talker() -> None:
            with httpx.Client(base_url=server.url, timeout=120, headers=V1) as http:
                while not done.is_set():
                    try:
                        body = http.post("/", json=_big_message()).json()
                    except (httpx.HTTPError, ValueError):
                        return
                    big_turns.append(body["result"]["task"]["status"]["state"])
                    if len(big_turns) >= BIG_TURNS:
                        done.set()

        threads = [threading.Thread(target=attacker) for _ in range(2)]
        threads += [threading.Thread(target=talker) for _ in range(2)]
        for thread in threads:
            thread.start()
        assert done.wait(300), server.log.read_text()[-2000:]
        peak = server.rss_kib()
        assert server.proc is not None
        started = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)  # the attackers are still sending
        server.proc.wait(GRACE_SECONDS + 10)
        stopped_after = time.monotonic() - started
        for thread in threads:
            thread.join(60)
    finally:
        server.stop()
    assert set(big_turns) == {"TASK_STATE_COMPLETED"}
    assert refused and set(refused) <= {400, 413}
    assert peak - baseline < RSS_GROWTH_LIMIT_KIB, (baseline, peak)
    assert stopped_after < GRACE_SECONDS + 2, stopped_after
