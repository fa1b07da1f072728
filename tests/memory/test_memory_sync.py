"""Device sync: idempotent writes, stale-version conflicts, offline catch-up, owner isolation."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import event

from smartctx.core.clock import ManualClock
from smartctx.core.errors import Conflict, InvalidInput
from smartctx.memory import PairIn, PersonalMemory


def _pair(pid: str, text: str = "안방 청정해줘") -> PairIn:
    return PairIn(text, "네", id=pid, session_id="dev-s1")


async def test_same_turn_twice_is_stored_once(memory: PersonalMemory) -> None:
    first = await memory.sync("u1", cursor=None, version="v0", pairs=[_pair("p1")])
    assert first["stored"] == ["p1"]
    assert (first["cursor"], first["version"]) == ("cur-1", "v1")
    # a retry of the same write (the reply was lost) with the old version is not a conflict
    retry = await memory.sync("u1", cursor=None, version="v0", pairs=[_pair("p1")])
    assert retry["stored"] == [] and retry["duplicates"] == ["p1"]
    assert retry["version"] == "v1"
    assert len(await memory.pairs("u1")) == 1
    again = await memory.add_pair("u1", _pair("p1"))
    assert again["stored"] is False
    assert len(await memory.pairs("u1")) == 1
    room = (await memory.profile("u1"))[0]
    assert len(room["source_candidate_ids"]) == 1  # the duplicate added no evidence


async def test_stale_version_conflicts_with_the_current_cursor(memory: PersonalMemory) -> None:
    await memory.sync("u1", version="v0", pairs=[_pair("p1")])
    await memory.sync("u1", version="v1", pairs=[_pair("p2")])
    with pytest.raises(Conflict) as err:
        await memory.sync("u1", cursor="cur-1", version="v1", pairs=[_pair("p3")])
    assert err.value.detail == {"cursor": "cur-2", "version": "v2"}
    assert "stale version v1" in err.value.message
    assert [p["id"] for p in await memory.pairs("u1")] == ["p1", "p2"]  # nothing half-applied
    ok = await memory.sync("u1", cursor="cur-2", version="v2", pairs=[_pair("p3")])
    assert ok["stored"] == ["p3"]
    assert [p["id"] for p in ok["changes"]["pairs"]] == ["p3"]


async def test_offline_device_catches_up_in_one_call(
    memory: PersonalMemory, clock: ManualClock
) -> None:
    state = await memory.sync("u1", cursor=None, version=None)
    assert state["cursor"] == "cur-0" and state["changes"]["pairs"] == []
    for day in (1, 2, 3):
        clock.set(clock.now().replace(day=day))
        await memory.add_pair("u1", PairIn("거실 청정해줘", id=f"d{day}", session_id=f"s{day}"))
    clock.advance(days=1)
    await memory.compact("u1")
    gone = (await memory.pairs("u1"))[0]["id"]
    await memory.delete_pair("u1", gone)
    caught = await memory.sync("u1", cursor=state["cursor"], version=None)
    changes = caught["changes"]
    assert [p["id"] for p in changes["pairs"]] == ["d2", "d3"]
    assert {s["tier"] for s in changes["summaries"]} == {"session", "daily", "weekly"}
    assert changes["profile_items"][0]["status"] == "candidate"  # back to two days
    assert {"kind": "pair", "id": gone} in changes["deleted"]
    nothing = await memory.sync("u1", cursor=caught["cursor"], version=caught["version"])
    assert nothing["changes"] == {"pairs": [], "summaries": [], "profile_items": [], "deleted": []}


async def test_owners_never_see_each_other(memory: PersonalMemory) -> None:
    await memory.sync("alice", version=None, pairs=[_pair("p1", "I like jazz")])
    await memory.sync("bob", version=None, pairs=[_pair("p1", "거실 청정해줘")])
    alice = await memory.sync("alice", cursor=None)
    assert [p["user_text"] for p in alice["changes"]["pairs"]] == ["I like jazz"]
    assert [i["key"] for i in await memory.profile("bob")] == ["preferred_room"]
    assert await memory.pairs("carol") == []
    bob_item = (await memory.profile("bob"))[0]["id"]
    with pytest.raises(Exception, match="no profile item"):
        await memory.mark_wrong("alice", bob_item)
    with pytest.raises(Exception, match="no profile item"):
        await memory.forget_item("alice", "profile", bob_item)
    await memory.forget_owner("alice")
    assert len(await memory.pairs("bob")) == 1


async def test_bad_cursor_is_invalid_input(memory: PersonalMemory) -> None:
    with pytest.raises(InvalidInput):
        await memory.sync("u1", cursor="yesterday")
    with pytest.raises(InvalidInput):
        PairIn("   ")


async def test_concurrent_writes_of_one_turn_store_it_once(memory: PersonalMemory) -> None:
    results = await asyncio.gather(
        *(memory.sync("u1", version=None, pairs=[_pair("same")]) for _ in range(4)),
        *(memory.add_pair("u1", _pair("same")) for _ in range(2)),
    )
    assert len(await memory.pairs("u1")) == 1
    stored = [r for r in results[:4] if r["stored"]] + [r for r in results[4:] if r["stored"]]
    assert len(stored) == 1


async def test_a_new_turn_is_written_without_reading_first(memory: PersonalMemory) -> None:
    await memory.add_pair("u1", _pair("p1"))
    statements: list[str] = []

    def seen(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        statements.append(" ".join(statement.split()).lower())

    engine = memory.db.engine.sync_engine
    event.listen(engine, "before_cursor_execute", seen)
    try:
        added = await memory.add_pair("u1", PairIn("Where is the printer?", "Floor 3", id="p2"))
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert added["stored"] is True and added["pair"]["id"] == "p2"
    assert added["pair"]["user_text"] == "Where is the printer?" and added["pair"]["seq"] == 2
    assert not [s for s in statements if s.startswith("select") and "mem_pairs" in s], statements
