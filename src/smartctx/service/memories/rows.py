"""Reading memory rows: the ``agent_memory`` items joined with their info rows, as
:class:`~smartctx.service.memories.records.Memory` values, and history rows from exports."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import and_, delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from smartctx.agents.memory_store import AgentMemoryRow
from smartctx.service.memories.records import Memory
from smartctx.service.memories.tables import MemoryHistoryRow, MemoryInfoRow
from smartctx.store.db import Database


def memory_of(row: AgentMemoryRow, info: MemoryInfoRow | None) -> Memory:
    """The API's view of a stored item and its info row (``None``: stored by a conversation)."""
    return Memory(
        id=row.item_id,
        owner=row.owner,
        text=row.text,
        kind=row.kind,
        agent_id=info.agent_id if info is not None else None,
        session_id=row.thread or None,
        metadata=dict(row.meta or {}),
        created_at=row.created_at,
        updated_at=info.updated_at if info is not None else None,
        version=info.version if info is not None else 1,
        provenance=tuple(row.provenance or ()),
        origin=dict(info.origin) if info is not None else {"via": "conversation"},
        seq=row.seq,
    )


def joined() -> Any:
    """Items with their info rows (outer join: conversation items have none)."""
    return select(AgentMemoryRow, MemoryInfoRow).outerjoin(
        MemoryInfoRow,
        and_(
            MemoryInfoRow.owner == AgentMemoryRow.owner,
            MemoryInfoRow.item_id == AgentMemoryRow.item_id,
        ),
    )


async def read_memories(session: AsyncSession, owner: str, ids: Sequence[str]) -> list[Memory]:
    """The owner's memories with these ids (any order; unknown ids are skipped)."""
    if not ids:
        return []
    rows = await session.execute(
        joined().where(AgentMemoryRow.owner == owner, AgentMemoryRow.item_id.in_(list(ids)))
    )
    return [memory_of(row, info) for row, info in rows.all()]


def history_row(owner: str, item_id: str, past: dict[str, Any]) -> MemoryHistoryRow:
    """A history row from an exported history entry (mem0's keys)."""
    return MemoryHistoryRow(
        owner=owner,
        item_id=item_id,
        event=str(past.get("event") or "ADD")[:16],
        old_text=past.get("old_memory"),
        new_text=past.get("new_memory"),
        old_metadata=past.get("old_metadata"),
        new_metadata=past.get("new_metadata"),
        at=str(past.get("created_at") or ""),
    )


async def erase_records(db: Database, owner: str, ids: Sequence[str]) -> int:
    """Delete the info and history rows of the owner's items ``ids`` (privacy forget: the
    history holds old texts); returns the rows deleted. Tables missing (not migrated) count 0."""
    if not ids:
        return 0
    deleted = 0
    async with db.session() as session:
        for table in (MemoryHistoryRow, MemoryInfoRow):
            result = await session.execute(
                delete(table).where(table.owner == owner, table.item_id.in_(list(ids)))
            )
            deleted += int(getattr(result, "rowcount", 0) or 0)
    return deleted


__all__ = ["erase_records", "history_row", "joined", "memory_of", "read_memories"]
