"""Crash safety (issue 11): a real server process is killed with SIGKILL in the middle of
concurrent writes, again and again; after a restart every turn a client saw acknowledged is in
the log, the database passes ``PRAGMA integrity_check``, no task is left unfinished, and a
retried message is answered from the first delivery instead of being applied twice.

SQLite runs in WAL mode with ``synchronous=NORMAL``: a commit is in the WAL before it is
acknowledged, which survives the death of the process (not a power loss; see docs/security.md).
The same run goes against PostgreSQL when ``SMARTCTX_TEST_POSTGRES_URL`` is set (a throw-away
database: the test drops and re-creates its tables).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from serverproc import Server

KILLS = 6
CLIENTS = 4
ACKS_PER_ROUND = 6
# One named owner: a header-less caller is a fresh anonymous owner per request, and the retry
# must reach the same owner's task and contexts to be answered from the first delivery.
V1 = {"A2A-Version": "1.0", "X-Smartctx-Owner": "crash"}


def _turn(text: str, context_id: str, message_id: str) -> dict[str, Any]:
    message = {
        "messageId": message_id,
        "contextId": context_id,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}


class Burst:
    """``CLIENTS`` threads sending turns until the server dies; acknowledged turns recorded."""

    def __init__(self, url: str, acked: dict[str, tuple[str, str]]) -> None:
        self.url = url
        self.acked = acked
        self.new_acks = 0
        self.enough = threading.Event()
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._client, args=(i,)) for i in range(CLIENTS)]

    def _client(self, index: int) -> None:
        context_id = f"crash-{index}"
        with httpx.Client(base_url=self.url, timeout=30, headers=V1) as http:
            while True:
                message_id = uuid.uuid4().hex
                text = f"turn {message_id} from client {index}"
                try:
                    body = http.post("/", json=_turn(text, context_id, message_id)).json()
                except (httpx.HTTPError, ValueError):
                    return  # the server died: stop this client
                task = body.get("result", {}).get("task", {})
                if task.get("status", {}).get("state") == "TASK_STATE_COMPLETED":
                    with self.lock:
                        self.acked[message_id] = (context_id, text)
                        self.new_acks += 1
                        if self.new_acks >= ACKS_PER_ROUND:
                            self.enough.set()

    def __enter__(self) -> Burst:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        for thread in self.threads:
            thread.join(60)


def _crash_rounds(server: Server) -> dict[str, tuple[str, str]]:
    acked: dict[str, tuple[str, str]] = {}
    for _ in range(KILLS):
        server.start()
        with Burst(server.url, acked) as burst:
            assert burst.enough.wait(120), server.log.read_text()[-2000:]
            server.kill()  # mid-burst: the clients are still sending
    server.start()
    return acked


def _check_retry(server: Server, acked: dict[str, tuple[str, str]]) -> None:
    message_id, (context_id, text) = next(iter(acked.items()))
    with httpx.Client(base_url=server.url, timeout=30, headers=V1) as http:
        task = http.post("/", json=_turn(text, context_id, message_id)).json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.fixture
def sqlite_server(tmp_path: Path) -> Iterator[tuple[Server, Path]]:
    db_file = tmp_path / "crash.db"
    server = Server(f"sqlite+aiosqlite:///{db_file}", tmp_path)
    yield server, db_file
    server.stop()


def test_sigkill_mid_burst_loses_no_acknowledged_turn(sqlite_server: tuple[Server, Path]) -> None:
    server, db_file = sqlite_server
    acked = _crash_rounds(server)
    assert len(acked) >= KILLS * ACKS_PER_ROUND
    with sqlite3.connect(db_file) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        stored = {row[0] for row in conn.execute("SELECT text FROM slots WHERE kind = 'user'")}
        statuses = [row[0] for row in conn.execute("SELECT status FROM a2a_tasks")]
    missing = [text for _context, text in acked.values() if text not in stored]
    assert missing == []
    assert not [s for s in statuses if "SUBMITTED" in s or "WORKING" in s]
    count = "SELECT COUNT(*) FROM slots WHERE kind = 'user' AND text = ?"
    text = next(iter(acked.values()))[1]
    _check_retry(server, acked)
    with sqlite3.connect(db_file) as conn:
        assert conn.execute(count, (text,)).fetchone() == (1,)


POSTGRES = os.environ.get("SMARTCTX_TEST_POSTGRES_URL")


@pytest.mark.skipif(not POSTGRES, reason="set SMARTCTX_TEST_POSTGRES_URL to a throw-away db")
def test_sigkill_on_postgres_loses_no_acknowledged_turn(tmp_path: Path) -> None:
    import asyncio

    from smartctx.store.db import Database

    assert POSTGRES is not None
    server = Server(POSTGRES, tmp_path)
    try:
        acked = _crash_rounds(server)
        _check_retry(server, acked)
    finally:
        server.stop()

    async def stored_texts() -> set[str]:
        import sqlalchemy as sa

        db = Database(POSTGRES)
        try:
            async with db.session() as session:
                query = sa.text("SELECT text FROM slots WHERE kind = 'user'")
                return {str(row[0]) for row in (await session.execute(query)).all()}
        finally:
            await db.close()

    stored = asyncio.run(stored_texts())
    assert [text for _c, text in acked.values() if text not in stored] == []
