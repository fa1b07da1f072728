"""Two real ``smartctx serve`` processes on one PostgreSQL database (a throw-away one per run).

Proves, each in its own test: one conversation served alternately by both has exactly the
memory of one server; concurrent turns on one context through both lose no update; a memory
written through A is recalled through B at once; a task created on A is read on B (and only by
its owner); a retried message is applied once whichever replica gets the retry; a streaming turn
started on A is resubscribed to on B, which receives the remaining events and the final state;
a turn running on A is cancelled through B.

Both replicas answer with the offline ``GroundedResponder`` served by a loopback
OpenAI-compatible test server, which holds any reply whose last user message carries a marker
until the test releases it: that is how a turn is kept running, without sleeps. Every request
names one owner (``X-Smartctx-Owner``), as one user's client does. Skips only when PostgreSQL
does not answer (``SMARTCTX_TEST_POSTGRES_URL``, else postgres@127.0.0.1:5432).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from smartctx.agents.grounded import GroundedResponder
from smartctx.agents.testing import OpenAICompatibleTestServer
from smartctx.bench.serve_procs import ServerProcess, postgres_answers, start_server
from smartctx.service.client import smartctx_info
from smartctx.service.owner import OWNER_HEADER

OWNER = "scale-out-user"
WAIT = 120.0  # a guard against a hung test, never a timing assertion


def _admin_url() -> str:
    url = os.environ.get(
        "SMARTCTX_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
    )
    return url.rsplit("/", 1)[0] + "/postgres"


async def _admin_execute(admin: str, statement: str) -> None:
    import asyncpg  # type: ignore[import-untyped]

    conn = await asyncpg.connect(admin.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


@dataclass
class Hold:
    """A reply held back: ``asked`` is set when the model call arrives, ``release`` lets it go."""

    asked: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


class GatedResponder:
    """The offline responder, except that a reply to a last user message holding a registered
    marker waits for that marker's :class:`Hold` to be released."""

    def __init__(self) -> None:
        self.inner = GroundedResponder()
        self.holds: dict[str, Hold] = {}

    def hold(self, marker: str) -> Hold:
        self.holds[marker] = Hold()
        return self.holds[marker]

    async def complete(self, messages: list[dict[str, str]], **_: Any) -> str:
        users = [m["content"] for m in messages if m.get("role") == "user"]
        last = users[-1] if users else ""
        for marker, hold in list(self.holds.items()):
            if marker in last:
                hold.asked.set()
                await asyncio.to_thread(hold.release.wait, WAIT)
        return await self.inner.complete(messages)


@dataclass
class Replicas:
    a: str
    b: str
    model: GatedResponder


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replicas]:
    admin = _admin_url()
    if not asyncio.run(postgres_answers(admin)):
        pytest.skip("PostgreSQL does not answer")
    workdir = tmp_path_factory.mktemp("scale-out")
    model = GatedResponder()
    with OpenAICompatibleTestServer(model) as llm:
        env = {
            "SMARTCTX_EMBEDDER": "hashing",
            "SMARTCTX_RETRIEVAL_EMBEDDER": "hashing",
            "SMARTCTX_LLM_BASE_URL": llm.base_url,
            "SMARTCTX_MEMORY_LLM": "false",
        }
        name = f"smartctx_scale_{uuid.uuid4().hex[:12]}"
        asyncio.run(_admin_execute(admin, f'CREATE DATABASE "{name}"'))
        url = f"{admin.rsplit('/', 1)[0]}/{name}"
        servers: list[ServerProcess] = []
        try:
            for _ in range(2):
                servers.append(asyncio.run(start_server("smartctx", url, workdir, env=env)))
            yield Replicas(servers[0].url, servers[1].url, model)
        finally:
            for server in servers:
                server.stop()
            asyncio.run(_admin_execute(admin, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@contextlib.asynccontextmanager
async def _http(owner: str = OWNER) -> AsyncIterator[httpx.AsyncClient]:
    headers = {"A2A-Version": "1.0", OWNER_HEADER: owner}
    async with httpx.AsyncClient(timeout=WAIT, headers=headers) as http:
        yield http


def _message(text: str, context: str, message_id: str | None = None) -> dict[str, Any]:
    return {
        "message": {
            "messageId": message_id or uuid.uuid4().hex,
            "role": "ROLE_USER",
            "parts": [{"text": text}],
            "contextId": context,
        }
    }


async def _rpc(http: httpx.AsyncClient, url: str, method: str, params: Any) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer: dict[str, Any] = (await http.post(url + "/", json=body)).json()
    return answer


async def _send(
    http: httpx.AsyncClient, url: str, text: str, context: str, message_id: str | None = None
) -> dict[str, Any]:
    answer = await _rpc(http, url, "SendMessage", _message(text, context, message_id))
    task: dict[str, Any] = answer["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", answer
    return task


def _meta(task: dict[str, Any]) -> dict[str, Any]:
    return smartctx_info(task["artifacts"][-1]["metadata"])


def _reply(task: dict[str, Any]) -> str:
    return "".join(p.get("text", "") for a in task["artifacts"] for p in a["parts"])


async def _sse(
    http: httpx.AsyncClient, url: str, method: str, params: Any, out: asyncio.Queue[Any]
) -> list[dict[str, Any]]:
    """Read one JSON-RPC SSE stream to its end; each result also goes to ``out``."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    events: list[dict[str, Any]] = []
    async with http.stream("POST", url + "/", json=body) as response:
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                payload = json.loads(line[5:])
                assert "result" in payload, payload
                events.append(payload["result"])
                await out.put(payload["result"])
    await out.put(None)
    return events


async def _next(queue: asyncio.Queue[Any]) -> Any:
    return await asyncio.wait_for(queue.get(), WAIT)


def _state(event: dict[str, Any]) -> str | None:
    for kind in ("task", "statusUpdate"):
        if kind in event:
            return str(event[kind]["status"]["state"])
    return None


def _artifact_text(events: list[dict[str, Any]]) -> str:
    updates = [e["artifactUpdate"]["artifact"] for e in events if "artifactUpdate" in e]
    return "".join(p.get("text", "") for a in updates for p in a["parts"])


async def _working_stream(
    http: httpx.AsyncClient, url: str, text: str, context: str, hold: Hold
) -> tuple[asyncio.Task[list[dict[str, Any]]], asyncio.Queue[Any], str]:
    """Start a streamed turn on ``url`` and return once it is WORKING and held at the model:
    the stream's reader task, its queue (the events read so far drained) and the task id."""
    queue: asyncio.Queue[Any] = asyncio.Queue()
    reader = asyncio.create_task(
        _sse(http, url, "SendStreamingMessage", _message(text, context), queue)
    )
    task_id = ""
    while True:
        event = await _next(queue)
        assert event is not None, "the stream ended before the turn started working"
        for kind in ("task", "statusUpdate"):
            task_id = (
                task_id or event.get(kind, {}).get("id") or event.get(kind, {}).get("taskId", "")
            )
        if _state(event) == "TASK_STATE_WORKING":
            break
    await asyncio.to_thread(hold.asked.wait, WAIT)
    assert hold.asked.is_set()
    return reader, queue, task_id


# -- memory and conversations ------------------------------------------------------------------


async def test_alternating_replicas_have_the_memory_of_one_server(replicas: Replicas) -> None:
    texts = [f"Turn {i}: my desk is on floor {i} and my badge is B{i}7." for i in range(4)]
    async with _http("alternating-user") as alt, _http("one-server-user") as one:
        alternated = [
            await _send(alt, (replicas.a, replicas.b)[i % 2], t, "conv")
            for i, t in enumerate(texts)
        ]
        single = [await _send(one, replicas.a, t, "conv") for t in texts]
        # the same replies, the same growth of the window, turn by turn
        assert [_reply(t) for t in alternated] == [_reply(t) for t in single]
        assert [_meta(t)["snapshot"]["log_size"] for t in alternated] == [
            _meta(t)["snapshot"]["log_size"] for t in single
        ]
        # and the same prompt for the next turn (read where each conversation's last turn ran)
        query = {"query": "Where is my desk?"}
        alt_prompt = (
            await alt.get(f"{replicas.b}/memory/contexts/conv/prompt", params=query)
        ).json()
        one_prompt = (
            await one.get(f"{replicas.a}/memory/contexts/conv/prompt", params=query)
        ).json()
    assert alt_prompt["messages"] == one_prompt["messages"]
    assert _meta(alternated[-1])["snapshot"]["version"] == _meta(single[-1])["snapshot"]["version"]


async def test_concurrent_turns_on_one_context_lose_no_update(replicas: Replicas) -> None:
    async with _http() as http:
        first = await _send(http, replicas.a, "Opening note for the parallel context.", "par")
        notes = [f"Parallel note number {i} is kiwi{i}." for i in range(6)]
        tasks = await asyncio.gather(
            *(_send(http, (replicas.a, replicas.b)[i % 2], n, "par") for i, n in enumerate(notes))
        )
        last = await _send(http, replicas.b, "Closing note.", "par")
        # read where the last turn ran (the log: turn focus archives earlier exchanges)
        log = (await http.get(f"{replicas.b}/memory/contexts/par/log?limit=500")).json()
    versions = sorted(_meta(t)["snapshot"]["version"] for t in tasks)
    assert len(set(versions)) == 6 and versions[0] > _meta(first)["snapshot"]["version"]
    assert _meta(last)["snapshot"]["version"] > versions[-1]
    # every turn's user message is in the log once: none lost, none applied twice
    said = [s["text"] for s in log["slots"] if s["kind"] == "user"]
    assert sorted(said) == sorted(
        ["Opening note for the parallel context.", *notes, "Closing note."]
    ), said


async def test_memory_written_on_a_is_recalled_on_b_at_once(replicas: Replicas) -> None:
    async with _http("memory-user") as http:
        await _send(http, replicas.a, "My employee number is 48213.", "mem-a")
        task = await _send(http, replicas.b, "What is my employee number?", "mem-b")
    events = _meta(task)["events"]
    assert any("mem:" in str(e.get("source_id")) for e in events), events
    assert "48213" in _reply(task)


async def test_memory_api_reads_on_a_see_a_turn_served_by_b(replicas: Replicas) -> None:
    async with _http("reader-user") as http:
        await _send(http, replicas.a, "First: my car is red.", "reads")
        await _send(http, replicas.b, "Second: my bike is blue.", "reads")
        via_b = (await http.get(f"{replicas.b}/memory/contexts/reads/snapshot")).json()
        via_a = (await http.get(f"{replicas.a}/memory/contexts/reads/snapshot")).json()
    assert (via_a["version"], via_a["log_size"]) == (via_b["version"], via_b["log_size"])


# -- A2A tasks ---------------------------------------------------------------------------------


async def test_task_created_on_a_is_read_on_b_by_its_owner_only(replicas: Replicas) -> None:
    async with _http() as http, _http("someone-else") as other:
        task = await _send(http, replicas.a, "Note that the printer code is 5521.", "tasks")
        got = await _rpc(http, replicas.b, "GetTask", {"id": task["id"]})
        listed = await _rpc(http, replicas.b, "ListTasks", {"contextId": "tasks"})
        foreign = await _rpc(other, replicas.b, "GetTask", {"id": task["id"]})
    assert got["result"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert _reply(got["result"]) == _reply(task)
    assert [t["id"] for t in listed["result"]["tasks"]] == [task["id"]]
    assert "error" in foreign and "result" not in foreign


async def test_a_retried_message_is_applied_once_across_replicas(replicas: Replicas) -> None:
    message_id = uuid.uuid4().hex
    async with _http() as http:
        first = await _send(http, replicas.a, "Log my lunch: soup.", "retry", message_id)
        again = await _send(http, replicas.b, "Log my lunch: soup.", "retry", message_id)
        snapshot = (await http.get(f"{replicas.b}/memory/contexts/retry/snapshot")).json()
    assert again["id"] == first["id"]
    assert snapshot["log_size"] == _meta(first)["snapshot"]["log_size"]


async def test_a_stream_started_on_a_is_resubscribed_on_b(replicas: Replicas) -> None:
    hold = replicas.model.hold("HOLD-STREAM")
    async with _http() as http:
        reader_a, _queue_a, task_id = await _working_stream(
            http, replicas.a, "HOLD-STREAM: where do I connect to the VPN?", "stream", hold
        )
        running = await _rpc(http, replicas.b, "GetTask", {"id": task_id})
        assert running["result"]["status"]["state"] == "TASK_STATE_WORKING"
        queue_b: asyncio.Queue[Any] = asyncio.Queue()
        reader_b = asyncio.create_task(
            _sse(http, replicas.b, "SubscribeToTask", {"id": task_id}, queue_b)
        )
        snapshot = await _next(queue_b)  # B answers with the stored task before anything else
        assert snapshot["task"]["id"] == task_id
        assert _state(snapshot) == "TASK_STATE_WORKING"
        hold.release.set()
        events_a, events_b = await asyncio.wait_for(asyncio.gather(reader_a, reader_b), WAIT)
        final = await _rpc(http, replicas.b, "GetTask", {"id": task_id})
    after_working = events_a[[_state(e) for e in events_a].index("TASK_STATE_WORKING") + 1 :]
    assert events_b[1:] == after_working  # the remaining events, the same as A streamed
    assert _state(events_b[-1]) == "TASK_STATE_COMPLETED"
    assert _artifact_text(events_b) and _artifact_text(events_b) == _reply(final["result"])
    assert final["result"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_turn_running_on_a_is_cancelled_through_b(replicas: Replicas) -> None:
    hold = replicas.model.hold("HOLD-CANCEL")
    async with _http() as http:
        reader, _queue, task_id = await _working_stream(
            http, replicas.a, "HOLD-CANCEL: summarise my week.", "cancel", hold
        )
        cancelled = await _rpc(http, replicas.b, "CancelTask", {"id": task_id})
        hold.release.set()
        events = await asyncio.wait_for(reader, WAIT)
        on_a = await _rpc(http, replicas.a, "GetTask", {"id": task_id})
    assert cancelled["result"]["status"]["state"] == "TASK_STATE_CANCELED", cancelled
    assert _state(events[-1]) == "TASK_STATE_CANCELED", events
    assert on_a["result"]["status"]["state"] == "TASK_STATE_CANCELED"


def test_the_module_covers_what_the_docs_claim() -> None:
    """docs/scale-out.md names these tests; a renamed test must be renamed there too."""
    doc = (Path(__file__).parents[2] / "docs" / "scale-out.md").read_text()
    names = [
        n
        for n in globals()
        if n.startswith("test_") and n != "test_the_module_covers_what_the_docs_claim"
    ]
    assert names and all(n in doc for n in names), [n for n in names if n not in doc]
