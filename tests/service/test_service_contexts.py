"""``ContextRegistry`` in process: persistence per session, rollback on failure, idle expiry."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from smartctx.core import (
    Conflict,
    HashingEmbedder,
    InvalidInput,
    ManualClock,
    NotFound,
    Settings,
    Slot,
    SlotKind,
)
from smartctx.core.tokens import get_counter
from smartctx.service.contexts import ContextRegistry
from smartctx.service.windows import WindowFactory, options_from_metadata
from smartctx.store import Database
from smartctx.store.context_log import ContextStore


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'ctx.db'}")
    await database.migrate()
    yield database
    await database.close()


def registry(db: Database, clock: ManualClock, idle: float = 60.0) -> ContextRegistry:
    settings = Settings(context_idle_timeout=idle)
    factory = WindowFactory(settings, counter=get_counter(), embedder=HashingEmbedder())
    return ContextRegistry(ContextStore(db, clock=clock), factory, settings, clock=clock)


async def test_session_persists_and_a_failed_session_changes_nothing(db: Database) -> None:
    clock = ManualClock()
    reg = registry(db, clock)
    live = await reg.create("o", "c", reg.options(budget=300, system_prompt="Sys."))
    assert live.version == 1
    async with reg.session("o", "c") as live:
        live.add(Slot(SlotKind.USER, "first"))
    assert live.version == 2
    with pytest.raises(RuntimeError):
        async with reg.session("o", "c") as live:
            live.add(Slot(SlotKind.USER, "never saved"))
            raise RuntimeError("model failed")
    assert not reg.is_live("o", "c")
    again = await reg.open("o", "c")
    assert [s.text for s in again.window.active] == ["Sys.", "first"]
    assert again.version == 2
    fresh = registry(db, clock)
    assert [s.text for s in (await fresh.open("o", "c")).window.active] == ["Sys.", "first"]


async def test_missing_and_existing_contexts(db: Database) -> None:
    reg = registry(db, ManualClock())
    with pytest.raises(NotFound):
        await reg.open("o", "nope")
    with pytest.raises(NotFound):
        async with reg.session("o", "nope"):
            pass
    async with reg.session("o", "new", create=reg.options(preset="eviction", budget=99)) as live:
        assert live.version == 0
    assert (await reg.open("o", "new")).describe()["preset"] == "eviction"
    with pytest.raises(Conflict):
        await reg.create("o", "new", reg.options())
    assert [c["context_id"] for c in await reg.list_contexts("o")] == ["new"]
    assert await reg.list_contexts("someone-else") == []


async def test_a_stale_cached_window_is_reloaded(db: Database) -> None:
    clock = ManualClock()
    one, two = registry(db, clock), registry(db, clock)
    await one.create("o", "shared", one.options(system_prompt=""))
    async with two.session("o", "shared") as live:
        live.add(Slot(SlotKind.USER, "written by replica two"))
    async with one.session("o", "shared") as live:
        assert [s.text for s in live.window.active] == ["written by replica two"]
        live.add(Slot(SlotKind.AGENT, "answer from replica one"))
    assert (await two.store.version("o", "shared")) == 3


async def test_idle_contexts_leave_memory_and_come_back(db: Database) -> None:
    clock = ManualClock()
    reg = registry(db, clock, idle=60)
    await reg.create("o", "a", reg.options())
    await reg.create("o", "b", reg.options())
    clock.advance(seconds=30)
    await reg.open("o", "b")
    clock.advance(seconds=31)
    assert reg.sweep() == [("o", "a")]
    assert reg.live_count == 1
    clock.advance(seconds=61)
    assert reg.sweep() == [("o", "b")]
    assert reg.live_count == 0
    assert (await reg.open("o", "a")).version == 1


async def test_watched_contexts_are_not_swept(db: Database) -> None:
    clock = ManualClock()
    reg = registry(db, clock, idle=1)
    await reg.create("o", "w", reg.options())
    sub = await reg.subscribe("o", "w")
    clock.advance(seconds=5)
    assert reg.sweep() == []
    sub.close()
    assert reg.sweep() == [("o", "w")]


def test_metadata_options_are_validated() -> None:
    settings = Settings()
    assert options_from_metadata(settings, {}) is None
    opts = options_from_metadata(settings, {"smartctx": {"preset": "compression", "budget": 100.0}})
    assert opts is not None and (opts.preset, opts.budget) == ("compression", 100)
    assert len(opts.system_prompt) < 80  # a small budget gets the compact system prompt
    for bad in ({"preset": "magic"}, {"budget": 0}, {"budget": "many"}, {"colour": 1}, "x"):
        with pytest.raises(InvalidInput):
            options_from_metadata(settings, {"smartctx": bad})


async def test_forget_owner_deletes_windows_and_closes_streams(db: Database) -> None:
    reg = registry(db, ManualClock())
    await reg.create("gone", "a", reg.options())
    await reg.create("kept", "b", reg.options())
    sub = await reg.subscribe("gone", "a")
    assert await reg.forget_owner("gone") == 1
    items = [item async for item in sub]
    assert [i["type"] for i in items] == ["snapshot"]
    with pytest.raises(NotFound):
        await reg.open("gone", "a")
    assert (await reg.open("kept", "b")).version == 1


async def test_forget_slots_rewrites_the_log_so_the_context_still_restores(db: Database) -> None:
    clock = ManualClock()
    reg = registry(db, clock)
    await reg.create("o", "c", reg.options(budget=300, system_prompt="Sys."))
    await reg.create("p", "c", reg.options(budget=300, system_prompt="Sys."))
    for owner in ("o", "p"):
        async with reg.session(owner, "c") as live:
            for text in ("keep one", "secret thing", "keep two"):
                live.add(Slot(SlotKind.USER, text))
    cached = await reg.open("o", "c")
    gone = await reg.store.forget_slots("o", lambda slot: "secret" in slot.text)
    assert [(cid, slot.text) for cid, slot in gone] == [("c", "secret thing")]
    async with reg.session("o", "c") as live:  # the stale cached window is reloaded
        assert live is not cached
        assert [s.text for s in live.window.active] == ["Sys.", "keep one", "keep two"]
        live.add(Slot(SlotKind.USER, "after"))
    stored = await reg.store.load("o", "c")
    assert stored is not None
    assert [s.seq for s in stored.log_slots] == list(range(len(stored.log_slots)))
    assert [e.seq for e in stored.events] == list(range(len(stored.events)))
    assert stored.info.log_size == len(stored.log_slots) == 4
    other = await reg.store.load("p", "c")  # another owner's identical slot is untouched
    assert other is not None and "secret thing" in [s.text for s in other.log_slots]


async def test_a_turn_on_a_context_not_held_here_reads_its_probes_with_the_version(
    db: Database,
) -> None:
    """Inside a turn's probing block, a context this process does not hold (a new one, or one
    stored by another process) is opened after one version read that answers the turn's probes;
    a new context loads nothing more before it is created."""
    from sqlalchemy import event

    from smartctx.memory.repository import STAMP_PROBE
    from smartctx.store import turn_probes

    clock = ManualClock()
    seen: list[str] = []
    event.listen(db.engine.sync_engine, "before_cursor_execute", lambda *a: seen.append(a[2]))
    reg = registry(db, clock)
    with turn_probes.probing("o", [STAMP_PROBE]):
        async with reg.session("o", "new", create=reg.options(budget=300)) as live:
            reads = [s for s in seen if s.lstrip().upper().startswith("SELECT")]
            assert len(reads) == 1 and "mem_sync_state" in reads[0]  # version and probe
            assert turn_probes.take(db, STAMP_PROBE.kind, "o") is not turn_probes.MISSING
            live.add(Slot(SlotKind.USER, "first"))
    seen.clear()
    other = registry(db, clock)  # another process: the stored context is not held there
    with turn_probes.probing("o", [STAMP_PROBE]):
        async with other.session("o", "new") as live:
            assert [s.text for s in live.window.active][-1] == "first"
            assert turn_probes.take(db, STAMP_PROBE.kind, "o") is not turn_probes.MISSING
