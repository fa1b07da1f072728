"""The memory API over real HTTP: each operation, owner scoping, history, export/import."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import httpx
import pytest

from smartctx.core.errors import Forbidden, NotFound
from smartctx.service.client import SmartctxClient
from smartctx.service.memories import MemoryService
from smartctx.service.memories.client import MemoryClient
from smartctx.service.server import ServerHandle
from smartctx.store import Database

StartServer = Callable[..., ServerHandle]


@pytest.fixture
def http(server: ServerHandle) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, headers={"X-Smartctx-Owner": "alice"}) as client:
        yield client


def _add(http: httpx.Client, body: dict[str, object]) -> list[dict[str, object]]:
    response = http.post("/memories", json=body)
    assert response.status_code == 201, response.text
    results: list[dict[str, object]] = response.json()["results"]
    return results


def test_add_text_then_get_list_and_search_with_scores_and_sources(http: httpx.Client) -> None:
    [aisle] = _add(
        http,
        {"messages": "I prefer aisle seats.", "agent_id": "travel", "metadata": {"topic": "t"}},
    )
    _add(http, {"messages": "My laptop is a ThinkPad X1.", "agent_id": "it"})
    assert aisle["event"] == "ADD" and aisle["kind"] == "fact" and aisle["owner"] == "alice"
    got = http.get(f"/memories/{aisle['id']}").json()
    assert got["memory"] == "I prefer aisle seats." and got["metadata"] == {"topic": "t"}
    assert got["source_id"] == f"mem:{aisle['id']}" and got["origin"] == {"via": "api"}
    listed = http.get("/memories", params={"agent_id": "it"}).json()
    assert [m["memory"] for m in listed["results"]] == ["My laptop is a ThinkPad X1."]
    assert listed["next_cursor"] is None
    found = http.post("/memories/search", json={"query": "which seats", "limit": 5}).json()
    assert found["results"][0]["id"] == aisle["id"]
    assert found["results"][0]["score"] > 0 and found["results"][0]["source_id"].startswith("mem:")
    filtered = http.post(
        "/memories/search", json={"query": "seats", "filters": {"topic": "other"}}
    ).json()
    assert filtered["results"] == []


def test_messages_are_mined_for_facts_and_repeats_change_nothing(http: httpx.Client) -> None:
    messages = [
        {"role": "user", "content": "My employee number is 48213. Can you help?"},
        {"role": "assistant", "content": "Sure, I noted it."},
    ]
    first = _add(http, {"messages": messages, "run_id": "s1"})
    again = _add(http, {"messages": messages, "run_id": "s1"})
    facts = [m for m in first if m["kind"] == "fact"]
    assert [m["memory"] for m in facts] == ["My employee number is 48213."]
    assert all(m["session_id"] == "s1" for m in first)
    assert not any("Sure" in str(m["memory"]) for m in first)
    assert {m["event"] for m in again} == {"NONE"}
    assert [m["id"] for m in again] == [m["id"] for m in first]


def test_filters_by_kind_session_and_time(http: httpx.Client) -> None:
    _add(http, {"messages": "Note one.", "kind": "note", "session_id": "a"})
    _add(http, {"messages": "Fact two.", "session_id": "b"})
    notes = http.get("/memories", params={"kind": "note"}).json()["results"]
    assert [m["memory"] for m in notes] == ["Note one."]
    in_b = http.get("/memories", params={"run_id": "b"}).json()["results"]
    assert [m["memory"] for m in in_b] == ["Fact two."]
    future = http.get("/memories", params={"created_after": "2999-01-01"}).json()["results"]
    past = http.get("/memories", params={"created_before": "2000-01-01T00:00:00Z"}).json()
    assert future == [] and past["results"] == []


def test_pagination_is_bounded_and_complete(http: httpx.Client) -> None:
    for n in range(5):
        _add(http, {"messages": f"Item number {n}."})
    seen: list[str] = []
    cursor = 0
    while True:
        page = http.get("/memories", params={"limit": 2, "cursor": cursor}).json()
        seen += [m["memory"] for m in page["results"]]
        if page["next_cursor"] is None:
            break
        cursor = page["next_cursor"]
    assert seen == [f"Item number {n}." for n in range(5)]
    assert http.get("/memories", params={"limit": 100_000}).status_code == 400


def test_update_keeps_history_and_search_sees_the_new_text(http: httpx.Client) -> None:
    [memory] = _add(http, {"messages": "I prefer aisle seats.", "metadata": {"v": 1}})
    http.post("/memories/search", json={"query": "aisle"})  # index it before the update
    updated = http.put(f"/memories/{memory['id']}", json={"data": "I prefer window seats."})
    assert updated.status_code == 200, updated.text
    assert updated.json()["version"] == 2 and updated.json()["updated_at"]
    http.put(f"/memories/{memory['id']}", json={"metadata": {"v": 2}})
    history = http.get(f"/memories/{memory['id']}/history").json()["results"]
    assert [h["event"] for h in history] == ["ADD", "UPDATE", "UPDATE"]
    assert history[1]["old_memory"] == "I prefer aisle seats."
    assert history[1]["new_memory"] == "I prefer window seats."
    assert history[2]["old_metadata"] == {"v": 1} and history[2]["new_metadata"] == {"v": 2}
    found = http.post("/memories/search", json={"query": "window seats"}).json()["results"]
    assert [m["memory"] for m in found] == ["I prefer window seats."]
    assert http.post("/memories/search", json={"query": "aisle"}).json()["results"] == []


def test_delete_and_delete_all(http: httpx.Client) -> None:
    [one] = _add(http, {"messages": "Delete me soon."})
    _add(http, {"messages": "Keep agent a.", "agent_id": "a"})
    _add(http, {"messages": "Drop agent b.", "agent_id": "b"})
    assert http.delete(f"/memories/{one['id']}").json()["deleted"]["id"] == one["id"]
    assert http.get(f"/memories/{one['id']}").status_code == 404
    history = http.get(f"/memories/{one['id']}/history").json()["results"]
    assert [h["event"] for h in history] == ["ADD", "DELETE"]
    assert http.delete("/memories", params={"agent_id": "b"}).status_code == 400  # no confirm
    gone = http.delete("/memories", params={"agent_id": "b", "confirm": "true"}).json()
    assert gone == {"deleted": 1}
    left = [m["memory"] for m in http.get("/memories").json()["results"]]
    assert left == ["Keep agent a."]


def test_owner_a_cannot_see_or_change_b(server: ServerHandle) -> None:
    with (
        httpx.Client(base_url=server.url, headers={"X-Smartctx-Owner": "a"}) as a,
        httpx.Client(base_url=server.url, headers={"X-Smartctx-Owner": "b"}) as b,
    ):
        [secret] = a.post("/memories", json={"messages": "My locker code is 4711."}).json()[
            "results"
        ]
        mid = secret["id"]
        assert b.get(f"/memories/{mid}").status_code == 404
        assert b.put(f"/memories/{mid}", json={"text": "x"}).status_code == 404
        assert b.delete(f"/memories/{mid}").status_code == 404
        assert b.get(f"/memories/{mid}/history").status_code == 404
        assert b.get("/memories").json()["results"] == []
        assert b.post("/memories/search", json={"query": "locker code"}).json()["results"] == []
        assert b.get("/memories/export").text == ""
        spoof = b.post("/memories", json={"messages": "hi there friend", "user_id": "a"})
        assert spoof.status_code == 403
        assert a.get(f"/memories/{mid}").json()["memory"] == "My locker code is 4711."


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/memories", {"messages": "   "}),
        ("POST", "/memories", {"messages": [{"role": "robot", "content": "x"}]}),
        ("POST", "/memories", {"messages": "ok", "agent_id": "bad agent!"}),
        ("POST", "/memories", {"messages": "ok", "kind": "Not-A-Kind"}),
        ("POST", "/memories", {"messages": "x" * 9000}),
        ("POST", "/memories/search", {"query": ""}),
        ("POST", "/memories/search", {"query": "x", "created_after": "yesterday"}),
        ("PUT", "/memories/nope", {}),
        ("POST", "/memories/import", None),
    ],
)
def test_bad_input_is_a_clear_4xx(
    http: httpx.Client, method: str, path: str, body: dict[str, object] | None
) -> None:
    content = b'{"memory": 3}\n' if body is None else None
    response = http.request(method, path, json=body, content=content)
    assert 400 <= response.status_code < 500, response.text
    assert response.json()["message"]


def test_export_then_import_round_trip_keeps_provenance(
    http: httpx.Client, server: ServerHandle
) -> None:
    [memory] = _add(http, {"messages": "I prefer aisle seats.", "agent_id": "travel"})
    http.put(f"/memories/{memory['id']}", json={"text": "I prefer window seats."})
    exported = http.get("/memories/export")
    assert exported.headers["content-type"].startswith("application/x-ndjson")
    [line] = exported.text.splitlines()
    record = json.loads(line)
    assert record["schema"] == "smartctx.memory/v1" and record["owner"] == "alice"
    assert [h["event"] for h in record["history"]] == ["ADD", "UPDATE"]

    with httpx.Client(base_url=server.url, headers={"X-Smartctx-Owner": "bob"}) as bob:
        imported = bob.post("/memories/import", content=exported.content).json()
        again = bob.post("/memories/import", content=exported.content).json()
        copy = bob.get(f"/memories/{memory['id']}").json()
        history = bob.get(f"/memories/{memory['id']}/history").json()["results"]
    assert imported["imported"] == 1 and again == {
        "imported": 0,
        "skipped": 1,
        "ids": [memory["id"]],
    }
    assert copy["memory"] == "I prefer window seats." and copy["agent_id"] == "travel"
    assert copy["owner"] == "bob" and copy["version"] == 2
    assert copy["created_at"] == record["created_at"]
    assert copy["origin"]["via"] == "import" and copy["origin"]["original_owner"] == "alice"
    assert copy["origin"]["previous_origin"] == {"via": "api"}
    assert [h["event"] for h in history] == ["ADD", "UPDATE", "IMPORT"]


async def sent_memory(server: ServerHandle, owner: str, context_id: str) -> list[str]:
    """The memory items the model received at the context's last turn (a turn focus archives
    them from the window when the turn ends)."""
    async with httpx.AsyncClient(base_url=server.url, headers={"X-Smartctx-Owner": owner}) as h:
        sent = (await h.get(f"/memory/contexts/{context_id}/last-prompt")).json()
    return [str(s["text"]) for s in sent["slots"] if s["kind"] == "memory"]


async def test_the_agent_recalls_added_and_updated_memories(server: ServerHandle) -> None:
    async def recalled(question: str) -> list[str]:
        async with SmartctxClient(server.url, owner="erin") as client:
            reply = await client.send(question)
        return await sent_memory(server, "erin", reply.context_id)

    async with httpx.AsyncClient(base_url=server.url, headers={"X-Smartctx-Owner": "erin"}) as h:
        added = await h.post("/memories", json={"messages": "My employee number is 48213."})
        [memory] = added.json()["results"]
        assert "My employee number is 48213." in await recalled("What is my employee number?")
        await h.put(f"/memories/{memory['id']}", json={"text": "My employee number is 50007."})
        now = await recalled("What is my employee number?")
    assert "My employee number is 50007." in now
    assert not any("48213" in text for text in now)


def test_forget_erases_memories_with_their_history(start_server: StartServer) -> None:
    server = start_server(hooks=None)  # with personal memory and its forget routes
    text = "My locker code is 4711 and nobody else knows it."
    with httpx.Client(base_url=server.url, headers={"X-Smartctx-Owner": "fay"}) as fay:
        fay.post("/memory/owners/fay/pairs", json={"id": "p1", "user_text": text})
        [memory] = fay.post("/memories", json={"messages": text}).json()["results"]
        [other] = fay.post("/memories", json={"messages": "Fay likes green tea."}).json()["results"]
        fay.put(f"/memories/{memory['id']}", json={"metadata": {"tag": "x"}})
        forgot = fay.delete("/memory/owners/fay/items/pair/p1")
        assert forgot.status_code == 200, forgot.text
        assert fay.get(f"/memories/{memory['id']}/history").status_code == 404
        assert fay.get(f"/memories/{other['id']}").status_code == 200
        assert fay.delete("/memory/owners/fay").status_code == 200
        assert fay.get(f"/memories/{other['id']}/history").status_code == 404
        assert fay.get("/memories").json()["results"] == []


def test_openapi_documents_the_memory_and_kb_routes(http: httpx.Client) -> None:
    paths = http.get("/openapi.json").json()["paths"]
    assert {"/memories", "/memories/search", "/memories/{memory_id}/history"} <= set(paths)
    assert {"/memories/export", "/memories/import", "/kb/documents", "/kb/search"} <= set(paths)


async def test_a_running_server_recalls_what_another_process_updated(
    server: ServerHandle, db_url: str
) -> None:
    """The CLI (another process, another ``MemoryService``) writes the server's database."""

    async def recalled() -> list[str]:
        async with SmartctxClient(server.url, owner="gus") as client:
            reply = await client.send("What is my badge number?")
        return await sent_memory(server, "gus", reply.context_id)

    db = Database(db_url)
    try:
        outside = MemoryService(db)
        [(memory, _)] = await outside.remember("gus", "My badge number is 1234.")
        assert "My badge number is 1234." in await recalled()
        await outside.update("gus", memory.id, text="My badge number is 5678.")
        now = await recalled()
    finally:
        await db.close()
    assert "My badge number is 5678." in now and not any("1234" in t for t in now)


async def test_the_python_client_with_mem0_names(server: ServerHandle) -> None:
    async with MemoryClient(server.url, owner="hal") as memory:
        [added] = await memory.add(
            [{"role": "user", "content": "I work at the Busan office."}], agent_id="hr"
        )
        await memory.add("Hal drinks green tea.", run_id="s9", metadata={"topic": "food"})
        [hit] = await memory.search("green tea", filters={"topic": "food"}, run_id="s9")
        page = await memory.get_all(agent_id="hr")
        updated = await memory.update(added["id"], "I work at the Seoul office.")
        history = await memory.history(added["id"])
        lines = [line async for line in memory.export()]
        removed = await memory.delete_all(agent_id="hr")
        left = await memory.get_all()
        with pytest.raises(Forbidden):
            await memory.add("x y z words", user_id="someone-else")
        with pytest.raises(NotFound):
            await memory.get(added["id"])
        restored = await memory.import_(lines)
    assert hit["memory"] == "Hal drinks green tea." and hit["session_id"] == "s9"
    assert [m["id"] for m in page["results"]] == [added["id"]]
    assert updated["version"] == 2 and [h["event"] for h in history] == ["ADD", "UPDATE"]
    assert len(lines) == 2 and removed == 1
    assert [m["memory"] for m in left["results"]] == ["Hal drinks green tea."]
    # export is in store order: the updated memory was stored again, after the other one
    assert restored == {"imported": 1, "skipped": 1, "ids": [hit["id"], added["id"]]}
