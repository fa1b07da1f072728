"""Forget: delete every copy of an owner's memory, or of one item.

``forget_owner`` empties every personal-memory table for the owner (pairs, evidence, summaries,
digests, profile, audit, sync state, tombstones) in the caller's transaction. Other stores (the
context log's window slots and events, knowledge-base chunks and vectors, A2A tasks) live in
layers memory may not import, so they register as :class:`Forgetter` objects that
``PersonalMemory.forget_owner`` calls after its own transaction commits; each forgetter is
idempotent, so a retry after a partial failure completes the job. Nothing about the forgotten
owner is written back (not even an audit row: the owner name itself may be personal).

``forget_item`` removes one pair (through the revert path, so no summary keeps a sentence of it),
one profile item with all its evidence, or one summary row.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from smartctx.core.errors import InvalidInput, NotFound
from smartctx.memory.compaction import Compactor
from smartctx.memory.promotion import REVERTED
from smartctx.memory.repository import audit, bump, tombstone
from smartctx.memory.revert import revert_pair
from smartctx.memory.tables import (
    ALL_TABLES,
    DailySummaryRow,
    EvidenceRow,
    ProfileItemRow,
    SessionSummaryRow,
    WeeklyDigestRow,
)

ITEM_KINDS = ("pair", "profile", "summary")


@runtime_checkable
class Forgetter(Protocol):
    """Another store that holds an owner's data and can delete all of it."""

    name: str

    async def forget_owner(self, owner: str) -> int:
        """Delete every row of ``owner``; return how many were deleted. Idempotent."""
        ...


async def forget_owner(session: AsyncSession, owner: str) -> dict[str, int]:
    """Delete every personal-memory row of ``owner``; returns the count per table."""
    counts: dict[str, int] = {}
    for table in ALL_TABLES:
        column: Any = table.__table__.c.owner
        result: Any = await session.execute(delete(table).where(column == owner))
        counts[str(table.__tablename__)] = int(result.rowcount or 0)
    return counts


async def forget_item(
    session: AsyncSession,
    owner: str,
    kind: str,
    item_id: str,
    *,
    compactor: Compactor,
    now: datetime,
) -> dict[str, Any]:
    """Delete one item of ``owner`` and every copy of it; ``NotFound`` when there is none."""
    if kind == "pair":
        detail = await revert_pair(session, owner, item_id, compactor=compactor, now=now)
        seq = await bump(session, owner)
        for touched in detail["profile_items"]:
            if touched["status"] == REVERTED:  # its value came from the pair alone: a copy
                await _delete_item(session, owner, touched["id"], seq)
        return {"kind": kind, "id": item_id, **detail}
    if kind == "profile":
        item = await session.get(ProfileItemRow, (owner, item_id))
        if item is None:
            raise NotFound(f"owner {owner!r} has no profile item {item_id!r}", item_id=item_id)
        await _delete_item(session, owner, item_id, await bump(session, owner))
        audit(session, owner, "forget_item", f"profile:{item_id}", now)
        return {"kind": kind, "id": item_id}
    if kind == "summary":
        for table in (SessionSummaryRow, DailySummaryRow, WeeklyDigestRow):
            row = await session.scalar(
                select(table).where(table.owner == owner, table.id == item_id)
            )
            if row is not None:
                seq = await bump(session, owner)
                await session.delete(row)
                await tombstone(session, owner, "summary", item_id, seq)
                audit(session, owner, "forget_item", f"summary:{item_id}", now)
                return {"kind": kind, "id": item_id}
        raise NotFound(f"owner {owner!r} has no summary {item_id!r}", item_id=item_id)
    raise InvalidInput(f"unknown item kind {kind!r}: use one of {list(ITEM_KINDS)}", kind=kind)


async def _delete_item(session: AsyncSession, owner: str, item_id: str, seq: int) -> None:
    """Delete a profile item with all its evidence, leaving a sync tombstone."""
    item = await session.get(ProfileItemRow, (owner, item_id))
    if item is None:
        return
    await session.execute(
        delete(EvidenceRow).where(
            EvidenceRow.owner == owner,
            EvidenceRow.key == item.key,
            EvidenceRow.value == item.value,
        )
    )
    await session.delete(item)
    await tombstone(session, owner, "profile", item_id, seq)
