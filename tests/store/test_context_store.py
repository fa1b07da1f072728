"""Contract tests of the persisted context log: SQLite always, PostgreSQL when
``SMARTCTX_TEST_POSTGRES_URL`` is set."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from smartctx.core import (
    Conflict,
    HashingEmbedder,
    NotFound,
    Slot,
    SlotKind,
    SlotState,
    get_counter,
)
from smartctx.store import Database
from smartctx.store.context_log import ContextStore, CopyMark
from smartctx.window import (
    ContextWindow,
    DropBelow,
    EvictLowestPriority,
    Summarize,
    touched_by,
)

BACKENDS = ["sqlite"] + (["postgresql"] if os.environ.get("SMARTCTX_TEST_POSTGRES_URL") else [])


def options() -> dict[str, Any]:
    return {
        "counter": get_counter(),
        "embedder": HashingEmbedder(),
        "funnel": [DropBelow(3.0), Summarize(keep_recent=2), EvictLowestPriority()],
    }


def fill(window: ContextWindow, turns: range) -> None:
    """Five slots per turn, with deterministic ids so two windows can be fed identically."""
    for i in turns:
        slots = [
            Slot(SlotKind.TOOL_LOG, f"tool output {i} " * 3, source_id="shell"),
            Slot(SlotKind.USER, f"Question {i}: fix {i}?", pinned=True, metadata={"turn": i}),
            Slot(SlotKind.RAG_DOC, f"Doc {i % 3} text. " * 4, source_id=f"kb:{i % 3}"),
            Slot(SlotKind.AGENT, f"Answer {i}: restart service {i}. " * 2),
            Slot(SlotKind.USER, "thanks!"),
        ]
        for k, slot in enumerate(slots):
            slot.id = f"t{i}-{k}"
            window.add(slot)
        window.end_turn()


def picture(window: ContextWindow) -> tuple[Any, ...]:
    return (
        window.snapshot(recent_events=100_000).to_dict(),
        [s.to_dict() for s in window.log],
        [e.to_dict() for e in window.events],
        window.assemble().messages,
    )


class Backend:
    def __init__(self, url: str) -> None:
        self.url = url
        self.db = Database(url)
        self.store = ContextStore(self.db)

    async def reopen(self) -> None:
        await self.db.close()
        self.db = Database(self.url)
        await self.db.migrate()
        self.store = ContextStore(self.db)


@pytest.fixture(params=BACKENDS)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'ctx.db'}"
    else:
        url = os.environ["SMARTCTX_TEST_POSTGRES_URL"]
    b = Backend(url)
    await b.db.migrate()
    yield b
    await b.db.close()


@pytest.fixture
def owner() -> str:
    return f"owner-{uuid.uuid4().hex[:8]}"


async def test_round_trip_after_reopen(backend: Backend, owner: str) -> None:
    window = ContextWindow(150, **options())
    fill(window, range(8))
    # Summaries roll up, so force an eviction too: a reply larger than the free room is admitted,
    # then evicted.
    big = Slot(SlotKind.AGENT, "long reply " * 100)
    big.id = "big"
    window.add(big)
    assert {"summarized", "dropped", "evicted", "merged", "refused"} <= {
        e.kind.value for e in window.events
    }
    assert await backend.store.save(owner, "c1", window, expected_version=0) == 1
    assert window.pending_changes().empty
    await backend.reopen()
    stored = await backend.store.load(owner, "c1")
    assert stored is not None and stored.version == 1 and stored.budget == 150
    restored = ContextWindow.restore(stored.log_slots, stored.events, stored.budget, **options())
    assert picture(restored) == picture(window)
    # Incremental saves: only what changed is written; the reloaded window still matches.
    fill(restored, range(8, 12))
    fill(window, range(8, 12))
    assert await backend.store.save(owner, "c1", restored, expected_version=1) == 2
    await backend.reopen()
    again = await backend.store.load(owner, "c1")
    assert again is not None and again.version == 2
    reloaded = ContextWindow.restore(again.log_slots, again.events, again.budget, **options())
    assert picture(reloaded) == picture(window)
    assert reloaded.log[1].metadata == {"turn": 0}


async def test_eviction_never_deletes_rows(backend: Backend, owner: str) -> None:
    window = ContextWindow(120, **options())
    fill(window, range(10))
    await backend.store.save(owner, "c", window, expected_version=0)
    archived = [s for s in window.log if s.state is not SlotState.ACTIVE]
    assert archived
    assert await backend.store.count_slots(owner, "c") == len(window.log)
    evicted = sum(1 for s in window.log if s.state is SlotState.EVICTED)
    assert await backend.store.count_slots(owner, "c", [SlotState.EVICTED]) == evicted
    slot = await backend.store.get_slot(owner, archived[0].id)
    assert slot.state is archived[0].state and slot.text == archived[0].text


async def test_stale_version_conflicts(backend: Backend, owner: str) -> None:
    window = ContextWindow(500, **options())
    window.add(Slot(SlotKind.USER, "hello"))
    await backend.store.save(owner, "c", window, expected_version=0)
    stored = await backend.store.load(owner, "c")
    assert stored is not None
    a = ContextWindow.restore(stored.log_slots, stored.events, stored.budget, **options())
    b = ContextWindow.restore(stored.log_slots, stored.events, stored.budget, **options())
    a.add(Slot(SlotKind.USER, "from replica a"))
    b.add(Slot(SlotKind.USER, "from replica b"))
    assert await backend.store.save(owner, "c", a, expected_version=1) == 2
    with pytest.raises(Conflict) as info:
        await backend.store.save(owner, "c", b, expected_version=1)
    assert info.value.detail["current_version"] == 2
    assert not b.pending_changes().empty  # the loser keeps its changes pending
    with pytest.raises(Conflict):
        await backend.store.save(owner, "c", ContextWindow(10, **options()), expected_version=0)
    loaded = await backend.store.load(owner, "c")
    assert loaded is not None and [s.text for s in loaded.log_slots] == ["hello", "from replica a"]


async def test_owner_isolation_and_forget(backend: Backend, owner: str) -> None:
    other = owner + "-other"
    for who in (owner, other):
        for ctx in ("x", "y"):
            window = ContextWindow(500, **options())
            window.add(Slot(SlotKind.USER, f"{who} {ctx}", id=f"slot-{ctx}"))
            await backend.store.save(who, ctx, window, expected_version=0)
    assert await backend.store.load(other + "-nobody", "x") is None
    assert [c.context_id for c in await backend.store.list_contexts(owner)] in (
        ["x", "y"],
        ["y", "x"],
    )
    assert (await backend.store.get_slot(owner, "slot-x")).text == f"{owner} x"
    assert await backend.store.delete_context(owner, "x") is True
    assert await backend.store.delete_context(owner, "x") is False
    with pytest.raises(NotFound):
        await backend.store.get_slot(owner, "slot-x", context_id="x")
    assert await backend.store.count_slots(owner, "x") == 0
    assert await backend.store.delete_owner(owner) == 1
    assert await backend.store.list_contexts(owner) == []
    assert len(await backend.store.list_contexts(other)) == 2
    assert (await backend.store.get_slot(other, "slot-x")).text == f"{other} x"
    await backend.store.delete_owner(other)


async def test_an_incremental_save_keeps_every_value_as_written(
    backend: Backend, owner: str
) -> None:
    """Text, provenance and metadata go through unchanged (on PostgreSQL an existing context is
    saved as one statement whose rows travel as JSON), and context metadata is replaced only
    when a save gives it."""
    window = ContextWindow(2000, **options())
    window.add(Slot(SlotKind.USER, "first"))
    await backend.store.save(owner, "c", window, expected_version=0, metadata={"title": "t"})
    awkward = Slot(
        SlotKind.RAG_DOC,
        'Quotes " and \\ backslash, 한국어, हिन्दी, emoji \U0001f600, tab\tend',
        priority=0.125,
        source_id=None,
        provenance=("doc:1", "mem:2"),
        metadata={"nested": {"list": [1, 2.5, None, True]}, "text": "a\nb"},
    )
    window.add(awkward)
    window.add(Slot(SlotKind.AGENT, "second", source_id="src:x"))
    assert await backend.store.save(owner, "c", window, expected_version=1) == 2
    assert (await backend.store.info(owner, "c")).metadata == {"title": "t"}
    window.add(Slot(SlotKind.USER, "third"))
    assert await backend.store.save(owner, "c", window, expected_version=2, metadata={}) == 3
    assert (await backend.store.info(owner, "c")).metadata == {}
    await backend.reopen()
    stored = await backend.store.load(owner, "c")
    assert stored is not None and stored.version == 3
    got = {s.id: s for s in stored.log_slots}[awkward.id]
    assert (got.text, got.priority, got.source_id, got.provenance, got.metadata) == (
        awkward.text,
        0.125,
        None,
        ("doc:1", "mem:2"),
        awkward.metadata,
    )
    restored = ContextWindow.restore(stored.log_slots, stored.events, stored.budget, **options())
    assert picture(restored) == picture(window)


class Vectors:
    """A ``SlotVectors`` whose vectors are made up from the text (user messages only)."""

    def __init__(self, name: str = "fake/4") -> None:
        self.name = name
        self.learned: dict[str, bytes] = {}

    @staticmethod
    def of(text: str) -> bytes:
        return np.array([len(text), text.count("e"), 0.5, -1.0], dtype=np.float32).tobytes()

    def vector_of(self, slot: Slot) -> bytes | None:
        return self.of(slot.text) if slot.kind is SlotKind.USER else None

    def learn(self, texts: Sequence[str], vectors: Sequence[bytes]) -> None:
        self.learned.update(zip(texts, vectors, strict=True))


async def test_recall_vectors_travel_with_user_slots_to_the_next_reader(
    backend: Backend, owner: str
) -> None:
    writer = ContextStore(backend.db, vectors=Vectors())
    window = ContextWindow(2000, **options())
    window.add(Slot(SlotKind.USER, "first question here"))
    window.add(Slot(SlotKind.AGENT, "an answer"))
    await writer.save(owner, "c", window, expected_version=0)  # a new context: its own path
    reader = ContextStore(backend.db, vectors=Vectors())
    stored = await reader.load(owner, "c")
    assert stored is not None
    assert reader.vectors.learned == {"first question here": Vectors.of("first question here")}
    copy = ContextWindow.restore(stored.log_slots, stored.events, stored.budget, **options())
    mark = CopyMark(
        len(copy.log),
        len(copy.events),
        copy.log[-1].id,
        (copy.events[-1].kind, copy.events[-1].slot_id, copy.events[-1].seq),
    )
    window.add(Slot(SlotKind.USER, "second question, \\ and é"))  # an existing context's save
    await writer.save(owner, "c", window, expected_version=1)
    later = ContextStore(backend.db, vectors=Vectors())
    since = await later.load_since(owner, "c", mark, touched_by)
    assert since is not None and [s.text for s in since.new_slots] == ["second question, \\ and é"]
    assert later.vectors.learned == {
        "second question, \\ and é": Vectors.of("second question, \\ and é")
    }
    other = ContextStore(backend.db, vectors=Vectors("another/4"))  # another embedder's store
    await other.load(owner, "c")
    assert other.vectors.learned == {}
    plain = await ContextStore(backend.db).load(owner, "c")  # a store that keeps none
    assert plain is not None and len(plain.log_slots) == len(window.log)


async def test_a_new_contexts_first_save_is_whole_and_a_second_create_conflicts(
    backend: Backend, owner: str
) -> None:
    """The first save writes the context's row, slots and events together (on PostgreSQL in
    one statement); creating the same context again is a conflict that writes nothing."""
    from sqlalchemy import event

    seen: list[str] = []
    event.listen(
        backend.db.engine.sync_engine, "before_cursor_execute", lambda *a: seen.append(a[2])
    )
    window = ContextWindow(2000, **options())
    fill(window, range(3))
    assert await backend.store.save(owner, "c", window, expected_version=0, metadata={"k": 1}) == 1
    writes = [s for s in seen if s.lstrip().upper().startswith(("INSERT", "WITH", "UPDATE"))]
    if not backend.db.is_sqlite:
        assert len(seen) == 1 and len(writes) == 1, seen
    again = ContextWindow(2000, **options())
    again.add(Slot(SlotKind.USER, "a different first message"))
    with pytest.raises(Conflict):
        await backend.store.save(owner, "c", again, expected_version=0)
    stored = await backend.store.load(owner, "c")
    assert stored is not None and stored.version == 1
    assert (await backend.store.info(owner, "c")).metadata == {"k": 1}
    restored = ContextWindow.restore(stored.log_slots, stored.events, stored.budget, **options())
    assert picture(restored) == picture(window)
