"""SQLite writers wait for each other instead of failing, and the checkpoint runs (issue 11)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import sqlalchemy as sa

from smartctx.store.db import Database


async def test_concurrent_read_then_write_transactions_all_commit(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'w.db'}")
    async with db.session() as session:
        await session.execute(sa.text("CREATE TABLE counter (n INTEGER)"))
        await session.execute(sa.text("INSERT INTO counter VALUES (0)"))

    async def bump() -> None:
        # Read, yield to the others, then write: a deferred transaction would fail here with
        # "database is locked" once another writer committed in between.
        async with db.session() as session:
            n = (await session.execute(sa.text("SELECT n FROM counter"))).scalar_one()
            await asyncio.sleep(0)
            await session.execute(sa.text("UPDATE counter SET n = :n"), {"n": n + 1})

    await asyncio.gather(*(bump() for _ in range(12)))
    async with db.session() as session:
        assert (await session.execute(sa.text("SELECT n FROM counter"))).scalar_one() == 12
    assert await db.checkpoint()
    await db.close()
