"""Filling a benchmark database with many stored contexts, fast.

Served turns cost tens of milliseconds each, so 10,000 stored contexts are made by cloning one
real conversation (its ``contexts`` row, its slots and its events, as a server wrote them) under
new context ids, in batched inserts. The clones are whole contexts: a server opens and continues
them like any other.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

from smartctx.store.context_schema import contexts, slot_events, slots

BATCH = 500


async def clone_context(
    database: str, *, count: int, prefix: str = "stored", owner: str | None = None
) -> list[str]:
    """Clone the context with the most slots (of ``owner``, else of anyone) ``count`` times;
    returns the new context ids.

    The clones belong to the source context's owner (a context is addressed by owner and id),
    so a client acting as that owner continues them.

    Raises ``RuntimeError`` when the database holds no context to clone.
    """
    engine = create_async_engine(database)
    try:
        async with engine.begin() as conn:
            query = sa.select(slots.c.owner, slots.c.context_id)
            if owner is not None:
                query = query.where(slots.c.owner == owner)
            top = (
                await conn.execute(
                    query.group_by(slots.c.owner, slots.c.context_id)
                    .order_by(sa.func.count().desc())
                    .limit(1)
                )
            ).first()
            if top is None:
                raise RuntimeError("no stored context to clone: the seed conversation failed")
            rows = {}
            for table in (contexts, slots, slot_events):
                where = sa.and_(table.c.owner == top.owner, table.c.context_id == top.context_id)
                rows[table.name] = [
                    dict(r._mapping) for r in await conn.execute(sa.select(table).where(where))
                ]
        ids = [f"{prefix}-{i}" for i in range(count)]
        for start in range(0, count, BATCH):
            chunk = ids[start : start + BATCH]
            async with engine.begin() as conn:
                for table in (contexts, slots, slot_events):
                    batch = [_with_id(r, c) for c in chunk for r in rows[table.name]]
                    if batch:
                        await conn.execute(sa.insert(table), batch)
        return ids
    finally:
        await engine.dispose()


def _with_id(row: dict[str, Any], context_id: str) -> dict[str, Any]:
    return {**row, "context_id": context_id}
