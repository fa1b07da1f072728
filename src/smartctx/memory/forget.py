"""Forget: delete every copy of an owner's memory, or of one item.

``forget_owner`` empties every personal-memory table for the owner (pairs, evidence, summaries,
digests, profile, audit, sync state, tombstones) in the caller's transaction. Other stores (the
context log's window slots and events, knowledge-base chunks and vectors, A2A tasks) live in
layers memory may not import, so they register as :class:`Forgetter` objects that
``PersonalMemory.forget_owner`` calls after its own transaction commits; each forgetter is
idempotent, so a retry after a partial failure completes the job. Nothing about the forgotten
owner is written back (not even an audit row: the owner name itself may be personal).

``forget_item`` removes one pair (through the revert path, so no summary keeps a sentence of it),
one profile item with all its evidence, or one summary row. Copies of the item in other stores
(window slots, long-term memory items and vectors, A2A tasks) are deleted by registered
:class:`ItemForgetter` objects, which ``PersonalMemory.forget_item`` calls after its own
transaction commits with a :class:`ForgottenItem` describing what to look for (captured before
the item was deleted).
"""

from __future__ import annotations

from dataclasses import dataclass
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
    PairRow,
    ProfileItemRow,
    SessionSummaryRow,
    WeeklyDigestRow,
)
from smartctx.memory.vault import drop_copies

ITEM_KINDS = ("pair", "profile", "summary")


@runtime_checkable
class Forgetter(Protocol):
    """Another store that holds an owner's data and can delete all of it."""

    name: str

    async def forget_owner(self, owner: str) -> int:
        """Delete every row of ``owner``; return how many were deleted. Idempotent."""
        ...


@dataclass(frozen=True, slots=True)
class ForgottenItem:
    """What other stores must look for to delete their copies of a forgotten item.

    ``texts`` are the item's own texts (a pair's user and assistant text, a summary's text; a
    profile item's value is too short to search for, so it has none); ``source_ids`` the ids
    under which the item travels into context windows (``pair:<id>``, ``profile:<id>``,
    ``profile:<key>``, ``summary:<id>``).
    """

    owner: str
    kind: str
    id: str
    texts: tuple[str, ...] = ()
    source_ids: tuple[str, ...] = ()


@runtime_checkable
class ItemForgetter(Protocol):
    """Another store that can delete its copies of one forgotten item."""

    name: str

    async def forget_item(self, item: ForgottenItem) -> dict[str, Any]:
        """Delete every copy of ``item`` in this store; return counts. Idempotent."""
        ...


async def describe_item(
    session: AsyncSession, owner: str, kind: str, item_id: str
) -> ForgottenItem | None:
    """The :class:`ForgottenItem` of an existing item, or None when there is none."""
    if kind == "pair":
        pair = await session.get(PairRow, (owner, item_id))
        if pair is None:
            return None
        texts = tuple(t for t in (pair.user_text, pair.assistant_text) if t.strip())
        return ForgottenItem(owner, kind, item_id, texts, (f"pair:{item_id}",))
    if kind == "profile":
        item = await session.get(ProfileItemRow, (owner, item_id))
        if item is None:
            return None
        sources = (f"profile:{item_id}", f"profile:{item.key}")
        return ForgottenItem(owner, kind, item_id, (), sources)
    if kind == "summary":
        for table in (SessionSummaryRow, DailySummaryRow, WeeklyDigestRow):
            row = await session.scalar(
                select(table).where(table.owner == owner, table.id == item_id)
            )
            if row is not None:
                text = str(getattr(row, "text", "") or "")
                texts = (text,) if text.strip() else ()
                return ForgottenItem(owner, kind, item_id, texts, (f"summary:{item_id}",))
    return None


async def forget_owner(session: AsyncSession, owner: str) -> dict[str, int]:
    """Delete every personal-memory row of ``owner``; returns the count per table."""
    counts: dict[str, int] = {}
    for table in ALL_TABLES:
        column: Any = table.__table__.c.owner
        result: Any = await session.execute(delete(table).where(column == owner))
        counts[str(table.__tablename__)] = int(result.rowcount or 0)
    counts["mem_pair_secrets"] = await drop_copies(session, owner)
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
