"""``PersonalMemory.everything`` keeps what it read per owner state (``memory.read_cache``):
unchanged state, one read; a pair this process stores, kept in step; any other write, a
forget that restarts the counter included, read afresh; always what a fresh reader sees."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from smartctx.core.clock import ManualClock
from smartctx.core.settings import Settings
from smartctx.memory import PersonalMemory
from smartctx.memory.pairs import PairIn
from smartctx.memory.read_cache import StampedReads, turn_reads
from smartctx.store import Database


def _replica(db: Database, clock: ManualClock) -> PersonalMemory:
    return PersonalMemory(db, clock=clock, settings=Settings(_env_file=None))


async def _statements(db: Database, memory: PersonalMemory, **kw: Any) -> tuple[int, dict]:
    sent: list[str] = []

    def count(*args: Any) -> None:
        sent.append(args[2])

    sa.event.listen(db.engine.sync_engine, "before_cursor_execute", count)
    try:
        got = await memory.everything("ann", **kw)
    finally:
        sa.event.remove(db.engine.sync_engine, "before_cursor_execute", count)
    return len(sent), got


def _ticket(n: int, session: str) -> PairIn:
    return PairIn(f"ticket {n} is open", "ok", id=f"p{n}", session_id=session)


def _ids(snapshot: dict[str, Any]) -> list[str]:
    return [p["id"] for p in snapshot["pairs"]]


async def test_an_unchanged_owner_is_one_read_and_a_stored_pair_keeps_it_in_step(
    db: Database, memory: PersonalMemory, clock: ManualClock
) -> None:
    await memory.add_pair("ann", PairIn("my desk is 4B", "noted", id="p1", session_id="s1"))
    first, got = await _statements(db, memory, pair_limit=2)
    again, same = await _statements(db, memory, pair_limit=2)
    assert first > 2 and again == 1 and same == got
    for n in (2, 3):
        await memory.add_pair("ann", _ticket(n, "s2"))
    reads, kept = await _statements(db, memory, pair_limit=2)
    fresh = await _replica(db, clock).everything("ann", pair_limit=2)
    assert reads == 1 and kept == fresh and _ids(kept) == ["p2", "p3"]
    one_session, _ = await _statements(db, memory, session_id="s1", pair_limit=2)
    await memory.add_pair("ann", PairIn("ticket 4 is open", "ok", id="p4", session_id="s2"))
    reads, kept = await _statements(db, memory, session_id="s1", pair_limit=2)
    assert one_session > 1 and reads == 1 and _ids(kept) == ["p1"]  # another session's pair


async def test_another_replicas_write_and_a_forget_that_restarts_the_counter_are_read_afresh(
    db: Database, memory: PersonalMemory, clock: ManualClock
) -> None:
    other = _replica(db, clock)
    await memory.add_pair("ann", PairIn("my badge is 7781", "noted", id="p1", session_id="s1"))
    assert _ids(await memory.everything("ann")) == ["p1"]
    await other.add_pair("ann", PairIn("my desk is 4B", "noted", id="p2", session_id="s1"))
    assert _ids(await memory.everything("ann")) == ["p1", "p2"]
    await other.forget_owner("ann")  # the counter restarts: version 2 will come again
    for n in (3, 4):
        await other.add_pair("ann", _ticket(n, "s1"))
    assert _ids(await memory.everything("ann")) == ["p3", "p4"]


def test_the_kept_reads_are_bounded_and_a_profile_change_drops_them() -> None:
    reads = StampedReads(max_owners=2)
    for owner in ("a", "b", "c"):
        reads.put(owner, (None, 5), (1, "e"), {"pairs": []})
    assert reads.get("a", (None, 5), (1, "e")) is None  # the least recently used went
    assert reads.get("c", (None, 5), (1, "e")) == {"pairs": []}
    assert reads.get("c", (None, 5), (1, "other epoch")) is None
    reads.added_pair("c", 1, 2, {"id": "p", "session_id": "s"}, profile_changed=True)
    assert reads.get("c", (None, 5), (2, "e")) is None


async def _count(db: Database, work: Any) -> tuple[int, Any]:
    sent: list[str] = []

    def count(*args: Any) -> None:
        sent.append(args[2])

    sa.event.listen(db.engine.sync_engine, "before_cursor_execute", count)
    try:
        got = await work
    finally:
        sa.event.remove(db.engine.sync_engine, "before_cursor_execute", count)
    return len(sent), got


async def test_a_turn_reads_the_stamp_once_and_its_profile_is_its_snapshots(
    db: Database, memory: PersonalMemory, clock: ManualClock
) -> None:
    other = _replica(db, clock)
    await memory.add_pair("ann", PairIn("my desk is 4B", "noted", id="p1", session_id="s1"))
    with turn_reads():
        await memory.everything("ann")
        await other.accept("ann", key="desk", value="4B")  # another replica, mid-turn
        reads, profile = await _count(db, memory.confirmed_profile("ann"))
        assert reads == 0 and profile == []  # the turn's snapshot: no profile item yet
    reads, profile = await _count(db, memory.confirmed_profile("ann"))
    assert reads >= 1 and [item["value"] for item in profile] == ["4B"]
    with turn_reads():  # a block whose everything() did not run reads the stamp
        reads, profile = await _count(db, memory.confirmed_profile("ann"))
        assert reads >= 1 and [item["value"] for item in profile] == ["4B"]


async def test_an_owner_never_written_reads_no_tier(db: Database, memory: PersonalMemory) -> None:
    """A new owner's first turn: the stamp says nothing was ever written, so no tier is read
    (every write bumps the stamp first)."""
    sent: list[str] = []

    def seen(*args: Any) -> None:
        sent.append(" ".join(str(args[2]).split()).lower())

    sa.event.listen(db.engine.sync_engine, "before_cursor_execute", seen)
    try:
        empty = await memory.everything("newcomer")
    finally:
        sa.event.remove(db.engine.sync_engine, "before_cursor_execute", seen)
    assert empty["pairs"] == [] and empty["profile"] == []
    assert empty["summaries"] == await memory.summaries("newcomer")  # the tiers' own shape
    assert len(sent) == 1 and "from mem_sync_state" in sent[0], sent  # the stamp only
    await memory.add_pair("newcomer", PairIn("Where is the printer?", "Floor 3", id="n1"))
    assert _ids(await memory.everything("newcomer")) == ["n1"]  # once written, read as before


async def test_an_owners_first_pair_moves_what_is_kept_to_their_new_epoch(
    db: Database, memory: PersonalMemory, clock: ManualClock
) -> None:
    """The owner's first write creates their state under a new epoch; this process knows it, so
    the snapshot kept for the owner never written gains the pair and no tier is read again."""
    reads, empty = await _statements(db, memory)
    assert reads == 1 and empty["pairs"] == []
    await memory.add_pair("ann", PairIn("my desk is 4B", "noted", id="p1", session_id="s1"))
    reads, kept = await _statements(db, memory)
    assert reads == 1  # the stamp only
    assert kept == await _replica(db, clock).everything("ann") and _ids(kept) == ["p1"]
    # another replica's first write is read afresh: its epoch is not this process's to know
    other = _replica(db, clock)
    assert (await other.everything("bo"))["pairs"] == []
    await memory.add_pair("bo", PairIn("ticket 9 is open", "ok", id="b1", session_id="s1"))
    assert _ids(await other.everything("bo")) == ["b1"]


async def test_a_bump_is_one_statement_and_names_the_epoch_it_created(db: Database) -> None:
    from smartctx.memory.repository import bump_stamp, current_stamp

    seen: list[str] = []
    sa.event.listen(db.engine.sync_engine, "before_cursor_execute", lambda *a: seen.append(a[2]))
    async with db.session() as s:
        first = await bump_stamp(s, "cy")
    async with db.session() as s:
        second = await bump_stamp(s, "cy")
    stamps = [st for st in seen if "mem_sync_state" in st]
    assert len(stamps) == 2  # one statement each, the owner's first write included
    async with db.read_core() as c:
        stamp = await current_stamp(c, "cy")
    assert first == (1, stamp[1]) and first[1] is not None and second == (2, None)
    assert stamp == (2, first[1])
