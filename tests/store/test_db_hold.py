"""``Database.hold``: a unit of work's short statements share one pooled connection on
PostgreSQL (a served turn took a dozen checkouts of SQLAlchemy's pool, each costing about as
much CPU as its statement); concurrent blocks never wait on the sharing, and a task that outlives
the hold keeps the connection until it is done. A no-op on SQLite."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import event, text

from smartctx.store.context_lock import ContextLock
from smartctx.store.db import Database


@pytest.fixture
async def pg(tmp_path: Path, postgres_admin: str) -> AsyncIterator[Database]:
    from smartctx.bench.serve_procs import throwaway_database

    async with throwaway_database("postgresql", tmp_path, postgres_admin) as db_url:
        db = Database(db_url)
        try:
            async with db.session() as s:
                await s.execute(text("CREATE TABLE t (id int PRIMARY KEY)"))
            yield db
        finally:
            await db.close()


def _checkouts(db: Database) -> list[int]:
    count = [0]

    def checkout(*_args: object) -> None:
        count[0] += 1

    event.listen(db.engine.sync_engine.pool, "checkout", checkout)
    return count


async def _ids(db: Database) -> list[int]:
    async with db.read() as s:
        return [int(i) for i in (await s.execute(text("SELECT id FROM t ORDER BY id"))).scalars()]


async def test_reads_writes_and_a_context_lock_in_a_hold_take_one_connection(
    pg: Database,
) -> None:
    checkouts = _checkouts(pg)
    async with pg.hold(), ContextLock(pg)("ann", "ctx"):
        for i in range(3):
            async with pg.atomic() as s:
                await s.execute(text("INSERT INTO t VALUES (:i)"), {"i": i})
            assert await _ids(pg) == list(range(i + 1))
    assert checkouts[0] == 1
    assert pg.engine.sync_engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    # each write committed on its own (autocommit): another connection sees them all
    assert await _ids(pg) == [0, 1, 2]


async def test_blocks_running_at_once_take_their_own_connection_and_none_waits(
    pg: Database,
) -> None:
    checkouts = _checkouts(pg)

    async def slow_read() -> float:
        async with pg.read() as s:
            return float((await s.execute(text("SELECT 1 FROM pg_sleep(0.2)"))).scalar_one())

    async with pg.hold():
        started = asyncio.get_running_loop().time()
        assert await asyncio.gather(*(slow_read() for _ in range(3))) == [1.0, 1.0, 1.0]
        elapsed = asyncio.get_running_loop().time() - started
        assert await _ids(pg) == []  # the held connection is free again: no new checkout
    assert elapsed < 0.55  # they ran side by side, not one after another
    assert checkouts[0] == 3
    assert pg.engine.sync_engine.pool.checkedout() == 0  # type: ignore[attr-defined]


async def test_a_task_that_outlives_the_hold_keeps_the_connection_until_it_is_done(
    pg: Database,
) -> None:
    lock = ContextLock(pg)
    order: list[str] = []
    entered = asyncio.Event()

    async def turn() -> None:
        async with lock("ann", "ctx"):
            entered.set()
            await asyncio.sleep(0.2)
            async with pg.atomic() as s:
                await s.execute(text("INSERT INTO t VALUES (7)"))
            order.append("first done")

    async with pg.hold():
        task = asyncio.create_task(turn())
        await entered.wait()
    pool = pg.engine.sync_engine.pool
    assert pool.checkedout() == 1  # type: ignore[attr-defined]

    async def second() -> None:  # another unit of work on the same context waits for the lock
        async with pg.hold(), lock("ann", "ctx"):
            order.append(f"second sees {await _ids(pg)}")

    await asyncio.gather(task, second())
    assert order == ["first done", "second sees [7]"]
    assert pool.checkedout() == 0  # type: ignore[attr-defined]


async def test_a_nested_hold_is_the_outer_one_and_a_failed_statement_frees_the_connection(
    pg: Database,
) -> None:
    checkouts = _checkouts(pg)
    async with pg.hold():
        async with pg.hold():
            assert await _ids(pg) == []
        with pytest.raises(Exception, match="duplicate key"):
            async with pg.atomic() as s:
                await s.execute(text("INSERT INTO t VALUES (1), (1)"))
        assert await _ids(pg) == []  # nothing of the failed statement, the connection usable
    assert checkouts[0] == 1


async def test_a_hold_is_a_no_op_on_sqlite(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'a.db'}")
    try:
        async with db.session() as s:
            await s.execute(text("CREATE TABLE t (id INTEGER PRIMARY KEY)"))
        async with db.hold():
            async with db.atomic() as s:
                await s.execute(text("INSERT INTO t VALUES (1)"))
            assert await _ids(db) == [1]
    finally:
        await db.close()


async def _core_ids(db: Database) -> list[int]:
    async with db.read_core() as c:
        return [int(i) for i in (await c.execute(text("SELECT id FROM t ORDER BY id"))).scalars()]


async def test_core_reads_and_writes_share_the_held_connection_and_commit_each(
    pg: Database,
) -> None:
    checkouts = _checkouts(pg)
    async with pg.hold():
        for i in range(3):
            async with pg.atomic_core() as c:
                await c.execute(text("INSERT INTO t VALUES (:i)"), {"i": i})
            assert await _core_ids(pg) == list(range(i + 1))
        with pytest.raises(Exception, match="duplicate key"):
            async with pg.atomic_core() as c:
                await c.execute(text("INSERT INTO t VALUES (7), (7)"))
        assert await _core_ids(pg) == [0, 1, 2]  # nothing of the failed statement
    assert checkouts[0] == 1
    assert pg.engine.sync_engine.pool.checkedout() == 0  # type: ignore[attr-defined]
    assert await _ids(pg) == [0, 1, 2]  # committed: another connection sees them


async def test_core_reads_and_writes_on_sqlite(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'a.db'}")
    try:
        async with db.session() as s:
            await s.execute(text("CREATE TABLE t (id INTEGER PRIMARY KEY)"))
        async with db.atomic_core() as c:
            await c.execute(text("INSERT INTO t VALUES (1)"))
        assert await _core_ids(db) == [1]
        assert await _ids(db) == [1]
    finally:
        await db.close()
