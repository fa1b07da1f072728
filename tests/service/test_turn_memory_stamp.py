"""A served turn reads its owner's memory stamp once: the snapshot and the profile provider
share it (``smartctx.memory.read_cache.turn_reads``)."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import event

from smartctx.service.server import ServerHandle

HEADERS = {"A2A-Version": "1.0", "X-Smartctx-Owner": "stamp-once"}


def _send(server: ServerHandle, text: str, message_id: str) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {
                "role": "ROLE_USER",
                "messageId": message_id,
                "contextId": "stamp-ctx",
                "parts": [{"text": text}],
            }
        },
    }
    answer = httpx.post(server.url, json=body, headers=HEADERS, timeout=30)
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_turn_reads_the_owners_memory_stamp_once(start_server: Any) -> None:
    server = start_server(hooks=None)  # with personal memory: its hook and profile provider
    _send(server, "Hi, I'm Lena and I work in the Vienna office.", "m-1")
    _send(server, "How do I connect to the VPN?", "m-2")  # the owner's reads are kept from here
    reads: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        text = " ".join(statement.split()).lower()
        if text.startswith("select") and "from mem_sync_state" in text:
            reads.append(text)

    engine = server.app.db.engine.sync_engine
    event.listen(engine, "before_cursor_execute", seen)
    try:
        _send(server, "What is the hotel limit in London?", "m-3")
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert len(reads) == 1, reads
