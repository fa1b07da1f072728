"""One writer per context across processes: a PostgreSQL advisory lock held for a unit of work.

Several servers on one PostgreSQL database may get turns of the same context at once. The
per-context ``version`` (optimistic concurrency) already refuses a lost update, but the loser's
turn would fail; holding ``pg_advisory_lock(key(owner, context))`` from before the context is
read until after it is saved makes the second replica wait instead, then read what the first
wrote. The lock is a session-level advisory lock on a connection held for the block, released
explicitly (and by PostgreSQL if the process dies). On SQLite the block runs unlocked: one
process serialises its own turns, and the version check still guards against a second process.

Cost: two statements (two round trips: the connection is in autocommit, so neither opens a
transaction) per locked block on PostgreSQL, on the connection ``Database.hold`` holds for the
turn, or else on one pooled connection kept for the block; none on SQLite.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import sqlalchemy as sa

from smartctx.store.db import Database

_LOCK = sa.text("SELECT pg_advisory_lock(:key)")
_UNLOCK = sa.text("SELECT pg_advisory_unlock(:key)")


def lock_key(owner: str, context_id: str) -> int:
    """A stable signed 64-bit key for ``(owner, context_id)`` (PostgreSQL's bigint)."""
    digest = hashlib.blake2b(f"{owner}\0{context_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class ContextLock:
    """``async with lock(owner, context_id)``: exclusive across processes on PostgreSQL."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @asynccontextmanager
    async def __call__(self, owner: str, context_id: str) -> AsyncIterator[None]:
        if self.db.is_sqlite:
            yield
            return
        key = {"key": lock_key(owner, context_id)}
        # autocommit: no BEGIN/COMMIT around them; inside ``Database.hold``, the held connection
        async with self.db.one_connection() as run:
            await run(_LOCK, key)
            try:
                yield
            finally:
                await run(_UNLOCK, key)
