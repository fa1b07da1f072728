"""A served turn reads its owner's memory stamp once: the snapshot and the profile provider
share it (``smartctx.memory.read_cache.turn_reads``)."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import event

from smartctx.core import HashingEmbedder
from smartctx.retrieval.kb import KnowledgeBase
from smartctx.retrieval.kb_scopes import ORG_SCOPE
from smartctx.service.server import ServerHandle
from smartctx.store import Database

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


def _reads_of_a_turn(server: ServerHandle, prefix: str, tables: tuple[str, ...]) -> list[str]:
    """The SELECT statements reading any of ``tables`` in the third turn of a context (the
    owner's reads are kept from the second)."""
    _send(server, "Hi, I'm Lena and I work in the Vienna office.", f"{prefix}-1")
    _send(server, "How do I connect to the VPN?", f"{prefix}-2")
    reads: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        text = " ".join(statement.split()).lower()
        if text.startswith("select") and any(f"from {table}" in text for table in tables):
            reads.append(text)

    engine = server.app.db.engine.sync_engine
    event.listen(engine, "before_cursor_execute", seen)
    try:
        _send(server, "What is the hotel limit in London?", f"{prefix}-3")
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    return reads


def test_a_turn_reads_the_owners_memory_stamp_once(start_server: Any) -> None:
    server = start_server(hooks=None)  # with personal memory: its hook and profile provider
    reads = _reads_of_a_turn(server, "m", ("mem_sync_state",))
    assert len(reads) == 1, reads


def test_a_turn_reads_its_owners_versions_with_the_contexts(start_server: Any, db_url: str) -> None:
    """The memory stamp, both knowledge-base tokens and the long-term memory's state come with
    the context's version, in one statement (``smartctx.store.turn_probes``)."""
    db = Database(db_url)  # the knowledge base on the server's database, as served by default
    kb = KnowledgeBase.builtin(db=db, owner=ORG_SCOPE, embedder=HashingEmbedder())
    server = start_server(hooks=None, database=db, kb=kb)
    reads = _reads_of_a_turn(server, "v", ("mem_sync_state", "kb_versions", "agent_memory"))
    assert len(reads) == 1, reads
    assert all(part in reads[0] for part in ("from contexts", "from kb_versions", "count("))
