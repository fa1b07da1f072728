"""Retention and forget, down to the bytes of the SQLite file."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from smartctx.core.clock import ManualClock
from smartctx.core.errors import InvalidInput, NotFound
from smartctx.core.settings import Settings
from smartctx.memory import ForgottenItem, PairIn, PersonalMemory
from smartctx.store import Database

SECRET = "zq7731-hunter2-marker"


def _db_bytes(db: Database) -> bytes:
    path = Path(str(db.engine.url.database))
    out = b""
    for suffix in ("", "-wal", "-shm"):
        candidate = path.with_name(path.name + suffix)
        if candidate.exists():
            out += candidate.read_bytes()
    return out


async def test_retention_enforced_per_tier(db: Database, clock: ManualClock) -> None:
    settings = Settings(retention_days_pairs=7, retention_days_sessions=30)
    memory = PersonalMemory(db, clock=clock, settings=settings)
    await memory.add_pair("u1", PairIn("안방 청정해줘", id="old", session_id="s1"))
    clock.advance(days=2)
    await memory.compact("u1")
    clock.advance(days=4)
    await memory.add_pair("u1", PairIn("거실 청정해줘", id="new", session_id="s2"))
    clock.advance(days=2)  # "old" is 8 days old, "new" 2
    counts = (await memory.enforce_retention("u1"))["u1"]
    assert counts["pairs"] == 1 and counts["sessions"] == 0
    assert [p["id"] for p in await memory.pairs("u1")] == ["new"]
    assert len((await memory.summaries("u1"))["session"]) == 1  # summaries outlive pairs
    clock.advance(days=30)
    counts = (await memory.enforce_retention("u1"))["u1"]
    assert counts["sessions"] == 1 and counts["pairs"] == 1
    log = await memory.audit_log("u1")
    assert log[0]["action"] == "retention"


async def test_forget_item_removes_every_copy(memory: PersonalMemory, clock: ManualClock) -> None:
    await memory.add_pair("u1", PairIn(f"I like {SECRET}", id="p1", session_id="s"))
    await memory.add_pair("u1", PairIn("안방 청정해줘", id="p2", session_id="s"))
    clock.advance(days=1)
    await memory.compact("u1")
    tiers = await memory.summaries("u1")
    assert SECRET in tiers["weekly"][0]["text"]  # not a detectable secret: it was summarised
    await memory.forget_item("u1", "pair", "p1")
    tiers = await memory.summaries("u1")
    assert all(SECRET not in s["text"] for tier in tiers.values() for s in tier)
    assert all(i["value"] != SECRET.casefold() for i in await memory.profile("u1"))
    [room] = await memory.profile("u1")
    await memory.forget_item("u1", "profile", room["id"])
    assert await memory.profile("u1") == []
    await memory.forget_item("u1", "summary", tiers["weekly"][0]["id"])
    assert (await memory.summaries("u1"))["weekly"] == []
    with pytest.raises(NotFound):
        await memory.forget_item("u1", "summary", "nope")
    with pytest.raises(InvalidInput):
        await memory.forget_item("u1", "vector", "x")


async def test_forget_owner_leaves_no_byte_behind(db: Database, clock: ManualClock) -> None:
    from smartctx.store.context_log import ContextStore

    class WindowForgetter:
        name = "context_log"

        async def forget_owner(self, owner: str) -> int:
            return await ContextStore(db).delete_owner(owner)

    memory = PersonalMemory(db, clock=clock, forgetters=[WindowForgetter()])
    await _write_window_slot(db, "u1", f"my password is {SECRET}")
    await _write_window_slot(db, "u2", "keep me")
    await memory.add_pair("u1", PairIn(f"remember {SECRET} please", session_id="s"))
    await memory.add_pair("u1", PairIn("I like jazz", session_id="s"))
    await memory.add_pair("u2", PairIn("거실 청정해줘", session_id="s"))
    clock.advance(days=1)
    await memory.compact()
    await db.checkpoint()
    assert SECRET.encode() in _db_bytes(db)

    counts = await memory.forget_owner("u1")
    assert counts["mem_pairs"] == 2 and counts["context_log"] == 1
    assert SECRET.encode() not in _db_bytes(db)
    assert b"I like jazz" not in _db_bytes(db)
    assert b"keep me" in _db_bytes(db)  # the other owner is untouched
    assert len(await memory.pairs("u2")) == 1
    assert await memory.sync_state("u1") == {"cursor": "cur-0", "version": "v0"}


async def _write_window_slot(db: Database, owner: str, text: str) -> None:
    """A window slot persisted through the context log (the other store forget must reach)."""
    from dataclasses import dataclass, field

    from smartctx.core.slots import Event, Slot, SlotKind
    from smartctx.store.context_log import ContextStore

    slot = Slot(SlotKind.USER, text, seq=0, tokens=len(text.split()))

    @dataclass
    class Changes:
        budget: int = 1000
        new_slots: list[Slot] = field(default_factory=lambda: [slot])
        updated_slots: list[Slot] = field(default_factory=list)
        new_events: list[Event] = field(default_factory=list)
        log_size: int = 1
        event_count: int = 0

    await ContextStore(db).save_changes(owner, "ctx-1", Changes(), 0)


def test_retention_zero_days_is_allowed() -> None:
    assert Settings(retention_days_pairs=0).retention_days_pairs == 0
    assert timedelta(days=0) == timedelta()


async def test_forget_pair_reaches_digests_whose_sessions_expired(
    memory: PersonalMemory, clock: ManualClock
) -> None:
    await memory.add_pair("u1", PairIn(f"I like {SECRET}", id="p1", session_id="s"))
    await memory.add_pair("u1", PairIn("안방 청정해줘", id="p2", session_id="s"))
    clock.advance(days=1)
    await memory.compact("u1")
    session_id = (await memory.summaries("u1"))["session"][0]["id"]
    await memory.forget_item("u1", "summary", session_id)  # as if the session tier expired
    await memory.forget_item("u1", "pair", "p1")
    tiers = await memory.summaries("u1")
    assert tiers["daily"] and tiers["weekly"]
    assert all(SECRET not in s["text"] for tier in tiers.values() for s in tier)
    assert all("p1" not in s["source_pair_ids"] for tier in tiers.values() for s in tier)


class _Recorder:
    """An item forgetter that records what it is asked to delete."""

    name = "recorder"

    def __init__(self) -> None:
        self.items: list[ForgottenItem] = []

    async def forget_item(self, item: ForgottenItem) -> dict[str, int]:
        self.items.append(item)
        return {"seen": 1}


async def test_forget_item_hands_the_item_to_item_forgetters(memory: PersonalMemory) -> None:
    recorder = _Recorder()
    memory.add_item_forgetter(recorder)
    memory.add_item_forgetter(_Recorder())  # same name: ignored
    await memory.add_pair("u1", PairIn(f"my code is {SECRET}", "Noted.", id="p1"))
    detail = await memory.forget_item("u1", "pair", "p1", checkpoint=True)
    assert detail["copies"] == {"recorder": {"seen": 1}}
    [item] = recorder.items
    assert (item.owner, item.kind, item.id) == ("u1", "pair", "p1")
    assert item.texts == (f"my code is {SECRET}", "Noted.")
    assert item.source_ids == ("pair:p1",)
    assert SECRET.encode() not in _db_bytes(memory.db)
    with pytest.raises(NotFound):
        await memory.forget_item("u1", "pair", "p1")
    assert len(recorder.items) == 1  # nothing to describe: forgetters are not called


async def test_a_forgetter_registered_first_runs_first(memory: PersonalMemory) -> None:
    order: list[str] = []

    class _Named:
        def __init__(self, name: str) -> None:
            self.name = name

        async def forget_owner(self, owner: str) -> int:
            order.append(self.name)
            return 0

    memory.add_forgetter(_Named("late"))
    memory.add_forgetter(_Named("early"), first=True)
    await memory.forget_owner("u1", checkpoint=False)
    assert order == ["early", "late"]
