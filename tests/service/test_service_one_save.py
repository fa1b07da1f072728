"""A plain send's new task is written once, finished; a watched task is written per event."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from sqlalchemy import event

from smartctx.service.server import ServerHandle

HEADERS = {"A2A-Version": "1.0", "X-Smartctx-Owner": "one-save"}


@contextmanager
def task_writes(server: ServerHandle) -> Iterator[list[str]]:
    """The SQL statements that write the A2A task table while the block runs."""
    writes: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        text = " ".join(statement.split()).lower()
        if "a2a_tasks" in text and text.startswith(("insert", "update", "with")):
            writes.append(text)

    engine = server.app.db.engine.sync_engine
    event.listen(engine, "before_cursor_execute", seen)
    try:
        yield writes
    finally:
        event.remove(engine, "before_cursor_execute", seen)


def _send(server: ServerHandle, text: str, configuration: dict[str, Any] | None = None) -> Any:
    body: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {"role": "ROLE_USER", "messageId": text[:8], "parts": [{"text": text}]}
        },
    }
    if configuration:
        body["params"]["configuration"] = configuration
    answer = httpx.post(server.url, json=body, headers=HEADERS, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]["task"]


def test_a_plain_send_writes_its_new_task_once_and_answers_it_whole(
    server: ServerHandle,
) -> None:
    with task_writes(server) as writes:
        task = _send(server, "How do I connect to the VPN?")
    assert len(writes) == 1
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [m["role"] for m in task["history"]] == ["ROLE_USER"]
    (artifact,) = task["artifacts"]
    assert artifact["name"] == "reply" and artifact["artifactId"] == f"reply-{task['id']}"
    assert "vpn" in artifact["parts"][0]["text"].lower()
    assert "promptTokens" in artifact["metadata"]["smartctx"]
    body = {"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task["id"]}}
    stored = httpx.post(server.url, json=body, headers=HEADERS, timeout=30).json()["result"]
    assert stored == task


def test_a_task_someone_can_watch_is_written_working_first(server: ServerHandle) -> None:
    # returnImmediately answers with the task as it starts, so it must be stored WORKING first
    with task_writes(server) as writes:
        task = _send(server, "Hello there, how are you?", {"returnImmediately": True})
    assert task["status"]["state"] == "TASK_STATE_WORKING"
    assert writes and writes[0].startswith("insert")
    body = {"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task["id"]}}
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        stored = httpx.post(server.url, json=body, headers=HEADERS, timeout=30).json()["result"]
        if stored["status"]["state"] != "TASK_STATE_WORKING":
            break
        time.sleep(0.05)
    assert stored["status"]["state"] == "TASK_STATE_COMPLETED"
    assert stored["artifacts"][0]["name"] == "reply"


def test_a_message_whose_task_was_never_stored_runs_again(
    server: ServerHandle, db_url: str
) -> None:
    # A crash in the middle of a plain send leaves the message claimed and no task (it is
    # stored once, finished): the client's retry of that message runs the turn again.
    text = "What is the hotel limit in London?"
    with sqlite3.connect(db_url.split(":///", 1)[1]) as conn:
        conn.execute(
            "INSERT INTO a2a_deliveries (owner, message_id, task_id, created_at)"
            " VALUES (?, ?, ?, ?)",
            ("one-save", text[:8], "never-stored", "2026-12-01 00:00:00+00:00"),
        )
    task = _send(server, text)
    assert task["id"] != "never-stored"
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert "USD 250" in task["artifacts"][0]["parts"][0]["text"]
    assert _claims(db_url) == {text[:8]: task["id"]}  # the claim moved to the task that ran
    assert _send(server, text)["id"] == task["id"]  # and a retry now gets that task back


def _claims(db_url: str) -> dict[str, str]:
    with sqlite3.connect(db_url.split(":///", 1)[1]) as conn:
        return dict(conn.execute("SELECT message_id, task_id FROM a2a_deliveries").fetchall())


def test_a_new_message_is_claimed_for_its_task_in_one_statement(
    server: ServerHandle, db_url: str
) -> None:
    statements: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if "a2a_deliveries" in statement:
            statements.append(" ".join(statement.split()).lower())

    engine = server.app.db.engine.sync_engine
    event.listen(engine, "before_cursor_execute", seen)
    try:
        task = _send(server, "How many vacation days do I get?")
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert len(statements) == 1 and statements[0].startswith("insert"), statements
    assert _claims(db_url) == {"How many": task["id"]}
    assert _send(server, "How many vacation days do I get?")["id"] == task["id"]
