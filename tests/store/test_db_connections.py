"""How the store connects: SQLite statements inline (waits for a lock on a worker thread), a
PostgreSQL pool sized for a turn's peak."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError, OperationalError

from smartctx.store.db import Database
from smartctx.store.sqlite_inline import InlineConnection


async def _database(path: Path) -> Database:
    db = Database(f"sqlite+aiosqlite:///{path}")
    async with db.session() as s:
        await s.execute(text("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)"))
    return db


def _write_lock_held(path: Path) -> sqlite3.Connection:
    """A connection of "another process" holding the file's write lock (usable from a timer
    thread to release it)."""
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    return other


async def _locked_database(tmp_path: Path) -> tuple[Database, sqlite3.Connection]:
    """A database on a new file and another "process" holding that file's write lock."""
    path = tmp_path / "a.db"
    db = await _database(path)
    return db, _write_lock_held(path)


async def test_a_file_database_runs_on_inline_connections(tmp_path: Path) -> None:
    db = await _database(tmp_path / "a.db")
    try:
        async with db.session() as s:
            await s.execute(text("INSERT INTO t VALUES (1, 'one')"))
        async with db.read() as s:
            assert (await s.execute(text("SELECT v FROM t"))).scalar_one() == "one"
            raw = await (await s.connection()).get_raw_connection()
            assert isinstance(raw.driver_connection, InlineConnection)
        with pytest.raises(IntegrityError):  # SQLAlchemy's own error translation
            async with db.session() as s:
                await s.execute(text("INSERT INTO t VALUES (1, 'again')"))
        async with db.read() as s:  # the failed transaction left nothing behind
            assert (await s.execute(text("SELECT count(*) FROM t"))).scalar_one() == 1
    finally:
        await db.close()


async def test_a_write_waits_for_another_process_lock_without_blocking_the_loop(
    tmp_path: Path,
) -> None:
    db, other = await _locked_database(tmp_path)
    other.execute("INSERT INTO t VALUES (1, 'theirs')")
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0.01)

    def release() -> None:
        time.sleep(0.4)
        other.execute("COMMIT")

    try:
        counting = asyncio.create_task(ticker())
        threading.Thread(target=release).start()
        started = time.perf_counter()
        async with db.session() as s:
            await s.execute(text("INSERT INTO t VALUES (2, 'ours')"))
        waited = time.perf_counter() - started
        stop.set()
        await counting
        assert waited >= 0.3  # it waited for the lock...
        assert ticks >= 3  # ...while the loop kept running other work (a blocked loop: 1)
        async with db.read() as s:
            rows = (await s.execute(text("SELECT v FROM t ORDER BY id"))).scalars().all()
        assert rows == ["theirs", "ours"]
    finally:
        other.close()
        await db.close()


async def test_the_recorded_busy_timeout_still_ends_a_wait(tmp_path: Path) -> None:
    db, other = await _locked_database(tmp_path)
    try:
        async with db.engine.connect() as conn:
            raw = await conn.get_raw_connection()
            driver = raw.driver_connection
            assert isinstance(driver, InlineConnection)
            driver.busy_timeout_ms = 200
            started = time.perf_counter()
            with pytest.raises(OperationalError, match="locked"):
                await conn.execute(text("INSERT INTO t VALUES (3, 'late')"))
            assert 0.15 <= time.perf_counter() - started < 5
    finally:
        other.execute("ROLLBACK")
        other.close()
        await db.close()


async def test_memory_databases_keep_aiosqlite() -> None:
    db = Database("sqlite+aiosqlite:///:memory:")
    try:
        async with db.engine.connect() as conn:
            raw = await conn.get_raw_connection()
            assert not isinstance(raw.driver_connection, InlineConnection)
    finally:
        await db.close()


def test_the_driver_bench_measures_every_path() -> None:
    from smartctx.bench.sqlite_driver import markdown, run

    result = run(20)
    assert set(result["drivers"]) == {"aiosqlite", "inline", "sqlite3"}
    for row in result["drivers"].values():
        assert row["select"]["cpu_us"] > 0
    assert "| inline |" in markdown(result, "smartctx bench sqlite --statements 20")


def test_a_postgresql_pool_keeps_the_configured_connections_open() -> None:
    # no I/O: the engine is only built; a pool smaller than a turn's peak reopened
    # connections (a PostgreSQL backend fork each) every turn
    from smartctx.core.settings import Settings
    from smartctx.store.db import POOL_OVERFLOW

    db = Database("postgresql+asyncpg://nobody@127.0.0.1:1/none", pool_size=5)
    pool: Any = db.engine.pool
    assert pool.size() == 5 and pool._max_overflow == POOL_OVERFLOW
    assert Settings().db_pool_size == 32


async def test_a_turn_cancelled_while_waiting_for_a_lock_frees_its_connection_cleanly(
    tmp_path: Path,
) -> None:
    db, other = await _locked_database(tmp_path)

    async def write() -> None:
        async with db.session() as s:
            await s.execute(text("INSERT INTO t VALUES (4, 'cancelled')"))

    try:
        waiting = asyncio.create_task(write())
        await asyncio.sleep(0.2)  # it waits on a worker thread for the lock
        waiting.cancel()
        threading.Timer(0.3, lambda: other.execute("ROLLBACK")).start()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        async with db.session() as s:  # the connection went back usable
            await s.execute(text("INSERT INTO t VALUES (5, 'after')"))
        async with db.read() as s:
            rows = (await s.execute(text("SELECT id FROM t ORDER BY id"))).scalars().all()
        assert 5 in rows
    finally:
        other.close()
        await db.close()


async def test_postgresql_reads_open_no_transaction(tmp_path: Path, postgres_admin: str) -> None:
    # a read is one round trip (no BEGIN and ROLLBACK around it); a session stays one transaction
    from smartctx.bench.serve_procs import throwaway_database

    admin = postgres_admin

    async def start_times(s: Any) -> tuple[Any, Any]:
        # now() is the start of the current transaction
        first = (await s.execute(text("SELECT now()"))).scalar_one()
        await s.execute(text("SELECT pg_sleep(0.01)"))
        return first, (await s.execute(text("SELECT now()"))).scalar_one()

    async with throwaway_database("postgresql", tmp_path, admin) as db_url:
        db = Database(db_url)
        try:
            async with db.read() as s:
                first, last = await start_times(s)
                assert last > first  # a transaction per statement
            async with db.session() as s:
                first, last = await start_times(s)
                assert last == first  # one transaction
        finally:
            await db.close()


async def test_atomic_writes_and_context_locks_open_no_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, postgres_admin: str
) -> None:
    # Database.atomic and ContextLock send no BEGIN/COMMIT on PostgreSQL (one round trip a
    # statement); the lock still makes a second holder of the same context wait
    import asyncpg.connection

    from smartctx.bench.serve_procs import throwaway_database
    from smartctx.store.context_lock import ContextLock

    admin = postgres_admin
    simple: list[str] = []
    execute = asyncpg.connection.Connection.execute

    async def spy(self: Any, query: str, *args: Any, **kwargs: Any) -> Any:
        simple.append(query)
        return await execute(self, query, *args, **kwargs)

    async with throwaway_database("postgresql", tmp_path, admin) as db_url:
        db = Database(db_url)
        try:
            async with db.session() as s:
                await s.execute(text("CREATE TABLE t (id int PRIMARY KEY)"))
            monkeypatch.setattr(asyncpg.connection.Connection, "execute", spy)
            async with db.atomic() as s:
                await s.execute(text("INSERT INTO t VALUES (1)"))
            lock, order = ContextLock(db), []

            async def hold(name: str, seconds: float) -> None:
                async with lock("ann", "ctx"):
                    order.append(f"{name} in")
                    await asyncio.sleep(seconds)
                    order.append(f"{name} out")

            first = asyncio.create_task(hold("a", 0.2))
            await asyncio.sleep(0.05)
            await asyncio.gather(first, hold("b", 0))
            async with lock("ann", "other"), lock("bob", "ctx"):  # other keys do not wait
                pass
            assert order == ["a in", "a out", "b in", "b out"]
            assert not [q for q in simple if "BEGIN" in q or "COMMIT" in q], simple
            monkeypatch.undo()
            async with db.read() as s:
                assert (await s.execute(text("SELECT count(*) FROM t"))).scalar_one() == 1
        finally:
            await db.close()
