"""A replica whose copy of a context another replica outdated reads only what was saved since.

Two registries on one database stand for two replicas. After each unit of work on one, the
other opens the context: it must hold exactly the window a full load rebuilds (active set and
order, every logged slot's state, repeat count and pin, events, prompt), built from its copy and
what was saved after it, unless a forget renumbered the log.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from smartctx.core import HashingEmbedder, ManualClock, Settings, Slot, SlotKind
from smartctx.core.tokens import get_counter
from smartctx.service.contexts import ContextRegistry, LiveContext
from smartctx.service.windows import WindowFactory
from smartctx.store import Database
from smartctx.store.context_log import ContextStore
from smartctx.window import ContextWindow, touched_by


@pytest.fixture(params=["sqlite", "postgresql"])
def admin(request: pytest.FixtureRequest) -> str | None:
    """None for SQLite; PostgreSQL's maintenance URL when the tests have a server (else skip)."""
    return None if request.param == "sqlite" else str(request.getfixturevalue("postgres_admin"))


@pytest.fixture
async def db(admin: str | None, tmp_path: Path) -> AsyncIterator[Database]:
    """The store on SQLite, or on a throw-away PostgreSQL database."""
    if admin is None:
        database = Database(f"sqlite+aiosqlite:///{tmp_path / 'ctx.db'}")
        await database.migrate()
        yield database
        await database.close()
        return
    from smartctx.bench.serve_procs import throwaway_database

    async with throwaway_database("postgresql", tmp_path, admin) as url:
        database = Database(url)
        await database.migrate()
        yield database
        await database.close()


class _Counting(ContextStore):
    """A store that counts whole loads."""

    loads = 0

    async def load(self, owner: str, context_id: str) -> Any:
        self.loads += 1
        return await super().load(owner, context_id)


def _replica(db: Database, clock: ManualClock) -> ContextRegistry:
    settings = Settings()
    factory = WindowFactory(settings, counter=get_counter(), embedder=HashingEmbedder())
    return ContextRegistry(_Counting(db, clock=clock), factory, settings, clock=clock)


def _picture(window: ContextWindow) -> dict[str, Any]:
    """Everything a window is, as comparable values."""
    return {
        "log": [(s.id, s.seq, s.state, s.repeat_count, s.pinned, s.tokens) for s in window.log],
        "active": [s.id for s in window.active],
        "events": [(e.kind, e.slot_id, e.seq, e.detail) for e in window.events],
        "tokens": window.tokens_used,
        "recency": {s.id: window.recency(s.id) for s in window.active},
        "prompt": window.assemble("what about the printer?").text,
        "snapshot": window.snapshot().to_dict(),
    }


_TEXTS = [
    "The printer on floor {n} jams again.",
    "Please restart the router in room {n}.",
    "thanks",
    "The VPN drops every {n} minutes.",
    "Who approves travel to office {n}?",
]


def _work(live: LiveContext, rng: random.Random, step: int) -> None:
    """One turn's worth of changes: user and agent slots (some repeated, so they merge), a tool
    log now and then, the turn's end (unpins, funnel)."""
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice([SlotKind.USER, SlotKind.AGENT, SlotKind.AGENT, SlotKind.TOOL_LOG])
        text = rng.choice(_TEXTS).format(n=rng.randint(1, 4))
        live.add(Slot(kind, text, pinned=kind is SlotKind.USER and rng.random() < 0.3))
    if step % 2:
        live.window.end_turn()


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_a_caught_up_copy_is_the_window_a_full_load_rebuilds(db: Database, seed: int) -> None:
    clock = ManualClock()
    replicas = [_replica(db, clock), _replica(db, clock)]
    first = replicas[0]
    await first.create("o", "c", first.options(budget=260, system_prompt="You help."))
    rng = random.Random(seed)
    caught_up = 0
    for step in range(40):
        writer = replicas[rng.randrange(2)]
        async with writer.session("o", "c") as live:
            _work(live, rng, step)
        for reader in replicas:
            loads = reader.store.loads  # type: ignore[attr-defined]
            held = reader.is_live("o", "c")
            opened = await reader.open("o", "c")
            whole = ContextStore(db, clock=clock)
            stored = await whole.load("o", "c")
            assert stored is not None
            rebuilt = reader.factory.restore(
                stored.log_slots, stored.events, stored.budget, "default", 4
            )
            assert _picture(opened.window) == _picture(rebuilt)
            assert opened.version == stored.version
            if held and reader is not writer:
                caught_up += reader.store.loads == loads  # type: ignore[attr-defined]
    assert caught_up >= 15  # the other replica's copy was caught up, not loaded whole


async def test_a_forget_between_turns_loads_the_context_whole(db: Database) -> None:
    clock = ManualClock()
    a, b = _replica(db, clock), _replica(db, clock)
    await a.create("o", "c", a.options(budget=400))
    async with a.session("o", "c") as live:
        live.add(Slot(SlotKind.USER, "My locker code is 4711."))
        live.add(Slot(SlotKind.AGENT, "Noted."))
    continued: list[LiveContext] = []
    a.continued.append(lambda _stale, live: continued.append(live))
    async with b.session("o", "c") as live:
        live.add(Slot(SlotKind.USER, "The printer jams."))
    opened = await a.open("o", "c")  # goes on from A's copy: caught up, callbacks called
    assert continued == [opened]
    async with b.session("o", "c") as live:
        live.add(Slot(SlotKind.USER, "And the VPN?"))
    deleted = await b.store.forget_slots("o", lambda s: "4711" in s.text)
    assert [slot.text for _, slot in deleted] == ["My locker code is 4711."]
    loads = a.store.loads  # type: ignore[attr-defined]
    again = await a.open("o", "c")
    assert a.store.loads == loads + 1  # type: ignore[attr-defined]
    assert continued == [opened]  # a renumbered log: nothing carried over
    assert not any("4711" in s.text for s in again.window.log)


def test_every_change_of_a_logged_slot_is_named_by_an_event() -> None:
    rng = random.Random(7)
    window = ContextWindow(220, counter=get_counter(), embedder=HashingEmbedder())
    for step in range(200):
        before = window.pending_changes()
        window.mark_saved(before)
        kind = rng.choice([SlotKind.USER, SlotKind.AGENT, SlotKind.TOOL_LOG])
        text = rng.choice(_TEXTS).format(n=rng.randint(1, 3))
        window.add(Slot(kind, text, pinned=kind is SlotKind.USER and rng.random() < 0.3))
        if step % 3 == 0:
            window.end_turn()
        changes = window.pending_changes()
        assert {s.id for s in changes.updated_slots} <= touched_by(changes.new_events)


async def test_a_catch_up_that_does_not_fit_loads_the_context_whole(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    from smartctx.core import InvalidInput

    clock = ManualClock()
    a, b = _replica(db, clock), _replica(db, clock)
    await a.create("o", "c", a.options(budget=400))
    async with a.session("o", "c") as live:
        live.add(Slot(SlotKind.USER, "The printer jams."))
    async with b.session("o", "c") as live:
        live.add(Slot(SlotKind.USER, "And the VPN?"))

    def broken(*_args: Any, **_kwargs: Any) -> ContextWindow:
        raise InvalidInput("log slots must have seq 0..n-1 without gaps")

    monkeypatch.setattr(a.factory, "caught_up", broken)
    loads = a.store.loads  # type: ignore[attr-defined]
    opened = await a.open("o", "c")
    assert a.store.loads == loads + 1  # type: ignore[attr-defined]
    assert [s.text for s in opened.window.active][-2:] == ["The printer jams.", "And the VPN?"]
