"""Forget jobs: an owner's forget is recorded when it begins and cleared when every store has
finished, so a forget that stops halfway (a store failed, the process died) is resumed rather
than left half-done.

The job row is written in the same transaction that deletes the personal-memory tiers, so either
both happen or neither; the other stores (context windows, A2A tasks, knowledge base, long-term
memory) are deleted after it by idempotent forgetters, and the row goes once they all succeed.
``PersonalMemory.resume_forgets`` (run at start-up) finishes every job left. The row holds only
the owner name and a time, and disappears with the forget.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncSession

_metadata = sa.MetaData()
FORGET_JOBS = sa.Table(
    "forget_jobs",
    _metadata,
    sa.Column("owner", sa.String(255), primary_key=True),
    sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
)


async def begin(session: AsyncSession, owner: str, now: datetime) -> None:
    """Record that ``owner``'s forget has begun (idempotent)."""
    exists = await session.scalar(
        sa.select(FORGET_JOBS.c.owner).where(FORGET_JOBS.c.owner == owner)
    )
    if exists is None:
        await session.execute(FORGET_JOBS.insert().values(owner=owner, started_at=now))


async def finish(session: AsyncSession, owner: str) -> None:
    """Clear ``owner``'s job: every store has forgotten the owner."""
    await session.execute(FORGET_JOBS.delete().where(FORGET_JOBS.c.owner == owner))


async def pending(session: AsyncSession) -> list[str]:
    """Owners whose forget began and did not finish, oldest first."""
    rows = await session.scalars(
        sa.select(FORGET_JOBS.c.owner).order_by(FORGET_JOBS.c.started_at, FORGET_JOBS.c.owner)
    )
    return [str(owner) for owner in rows]


__all__ = ["FORGET_JOBS", "begin", "finish", "pending"]
