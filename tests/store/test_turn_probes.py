"""Turn probes: inside a ``probing`` block the context's version read also answers the owner's
version checks (personal-memory stamp, knowledge-base tokens, long-term-memory state), with
the values the checks' own reads give; an answer is taken once, by a reader of the same
database and owner. SQLite always, PostgreSQL when ``SMARTCTX_TEST_POSTGRES_URL`` is set."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import event

from smartctx.agents.memory_store import STATE_PROBE, MemoryItem, SqlMemoryStore
from smartctx.core import HashingEmbedder, Slot, SlotKind, get_counter
from smartctx.memory.repository import STAMP_PROBE, bump, current_stamp
from smartctx.retrieval.kb_version import TOKENS_PROBE, current_of, renew, tokens_probe
from smartctx.store import Database, turn_probes
from smartctx.store.context_log import ContextStore
from smartctx.window import ContextWindow

BACKENDS = ["sqlite"] + (["postgresql"] if os.environ.get("SMARTCTX_TEST_POSTGRES_URL") else [])


@pytest.fixture(params=BACKENDS)
async def db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'probes.db'}"
    else:
        url = os.environ["SMARTCTX_TEST_POSTGRES_URL"]
    database = Database(url)
    await database.migrate()
    yield database
    await database.close()


def _org(owner: str) -> str:
    """An organisation of the test's own: the PostgreSQL test database outlives a run, and a
    shared organisation's knowledge-base token would carry an earlier run's renewal."""
    return f"#org-{owner}"


def _probes(owner: str) -> list[turn_probes.Probe]:
    return [STAMP_PROBE, tokens_probe(_org(owner)), STATE_PROBE]


async def _context(store: ContextStore, owner: str) -> int:
    window = ContextWindow(500, counter=get_counter(), embedder=HashingEmbedder())
    window.add(Slot(SlotKind.USER, "hello there"))
    return await store.save(owner, "c1", window, 0)


async def _own_reads(db: Database, owner: str) -> dict[str, object]:
    """What each check's own read gives, outside any block."""
    async with db.read_core() as c:
        stamp = await current_stamp(c, owner)
    org = _org(owner)
    tokens = await current_of(db, [org, owner])
    return {
        STAMP_PROBE.kind: stamp,
        TOKENS_PROBE: (tokens[org], tokens[owner]),
        STATE_PROBE.kind: await SqlMemoryStore(db).state(owner),
    }


def _statements(db: Database) -> list[str]:
    seen: list[str] = []

    def count(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        seen.append(statement)

    event.listen(db.engine.sync_engine, "before_cursor_execute", count)
    return seen


async def test_the_version_read_answers_each_probe_as_its_own_read_would(db: Database) -> None:
    owner = f"o-{uuid.uuid4().hex[:8]}"
    store = ContextStore(db)
    version = await _context(store, owner)
    empty = await _own_reads(db, owner)
    assert empty == {STAMP_PROBE.kind: (0, None), TOKENS_PROBE: ("", ""), STATE_PROBE.kind: (0, 0)}
    with turn_probes.probing(owner, _probes(owner)):
        assert await store.version(owner, "c1") == version
        for kind, value in empty.items():
            assert turn_probes.take(db, kind, owner) == value
    async with db.session() as s:
        await bump(s, owner)
        await bump(s, owner)
        await renew(s, owner)
        await renew(s, _org(owner))
    await SqlMemoryStore(db).add(
        [MemoryItem(f"i{i}", owner, "fact", f"fact {i}") for i in range(3)]
    )
    written = await _own_reads(db, owner)
    assert written[STAMP_PROBE.kind][0] == 2 and written[STATE_PROBE.kind][0] == 3  # type: ignore[index]
    with turn_probes.probing(owner, _probes(owner)):
        seen = _statements(db)
        assert await store.version(owner, "c1") == version
        assert len(seen) == 1  # one statement: the version and every probe
        for kind, value in written.items():
            assert turn_probes.take(db, kind, owner) == value
            assert turn_probes.take(db, kind, owner) is turn_probes.MISSING  # taken once
        assert turn_probes.pending(owner) == ()  # a second version read reads the version only


async def test_no_answer_outside_a_block_for_another_owner_or_another_database(
    db: Database,
) -> None:
    owner = f"o-{uuid.uuid4().hex[:8]}"
    store = ContextStore(db)
    version = await _context(store, owner)
    assert await store.version(owner, "c1") == version
    assert turn_probes.take(db, STAMP_PROBE.kind, owner) is turn_probes.MISSING
    with turn_probes.probing("someone-else", _probes("someone-else")):
        assert await store.version(owner, "c1") == version
        assert turn_probes.take(db, STAMP_PROBE.kind, owner) is turn_probes.MISSING
        assert turn_probes.pending("someone-else") != ()  # still waiting for its own owner
    other = Database(db.url)
    try:
        with turn_probes.probing(owner, _probes(owner)):
            assert await store.version(owner, "c1") == version
            assert turn_probes.take(other, STAMP_PROBE.kind, owner) is turn_probes.MISSING
            assert turn_probes.take(db, STAMP_PROBE.kind, owner) == (0, None)
    finally:
        await other.close()
    with turn_probes.probing(owner, _probes(owner)):
        assert await store.version(owner, "missing") is None  # a context never saved
        assert turn_probes.take(db, STATE_PROBE.kind, owner) == (0, 0)


async def test_the_readers_take_the_answer_instead_of_reading(db: Database) -> None:
    owner = f"o-{uuid.uuid4().hex[:8]}"
    store, memory = ContextStore(db), SqlMemoryStore(db)
    await memory.add([MemoryItem("i1", owner, "fact", "a fact")])
    await _context(store, owner)
    state = await memory.state(owner)
    assert state[0] == 1
    with turn_probes.probing(owner, _probes(owner)):
        await store.version(owner, "c1")
        seen = _statements(db)
        assert await memory.state(owner) == state
        assert seen == []
        assert await memory.state(owner) == state  # the answer is gone: this one reads
        assert len(seen) == 1
