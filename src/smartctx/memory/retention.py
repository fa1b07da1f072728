"""Retention: each tier keeps its rows for a configurable number of days.

``Retention`` comes from ``Settings`` (``retention_days_pairs/sessions/daily/weekly``). A period
of 0 days keeps nothing past the next run (privacy first). Expired rows are deleted, not
reverted: a summary outlives the pairs it summarised (its provenance keeps their ids, never their
text), and devices learn about the deletions through sync tombstones. Each run leaves one audit
record per owner with the counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from smartctx.core.settings import Settings
from smartctx.memory.repository import audit, bump, day_of, tombstone
from smartctx.memory.tables import (
    DailySummaryRow,
    PairRow,
    SessionSummaryRow,
    SyncStateRow,
    WeeklyDigestRow,
)
from smartctx.memory.vault import drop_copies


@dataclass(frozen=True, slots=True)
class Retention:
    """Days each tier is kept."""

    pairs: int = 30
    sessions: int = 90
    daily: int = 180
    weekly: int = 365

    @classmethod
    def from_settings(cls, settings: Settings) -> Retention:
        return cls(
            pairs=settings.retention_days_pairs,
            sessions=settings.retention_days_sessions,
            daily=settings.retention_days_daily,
            weekly=settings.retention_days_weekly,
        )


async def owners(session: AsyncSession) -> list[str]:
    """Every owner that has personal memory (ordered)."""
    return list(await session.scalars(select(SyncStateRow.owner).order_by(SyncStateRow.owner)))


async def enforce(
    session: AsyncSession, owner: str, retention: Retention, *, now: datetime
) -> dict[str, Any]:
    """Delete ``owner``'s rows older than their tier's period; returns the counts."""
    seq = await bump(session, owner)
    counts: dict[str, int] = {}
    pairs = await session.scalars(
        select(PairRow).where(
            PairRow.owner == owner, PairRow.created_at < now - timedelta(days=retention.pairs)
        )
    )
    expired = list(pairs)
    await drop_copies(session, owner, [p.id for p in expired])
    counts["pairs"] = await _delete(session, owner, "pair", expired, seq)
    sessions = await session.scalars(
        select(SessionSummaryRow).where(
            SessionSummaryRow.owner == owner,
            SessionSummaryRow.day < day_of(now - timedelta(days=retention.sessions)),
        )
    )
    counts["sessions"] = await _delete(session, owner, "summary", list(sessions), seq)
    oldest_day = day_of(now - timedelta(days=retention.daily))
    dailies = await session.scalars(
        select(DailySummaryRow).where(
            DailySummaryRow.owner == owner, DailySummaryRow.day < oldest_day
        )
    )
    counts["daily"] = await _delete(session, owner, "summary", list(dailies), seq)
    weeklies = await session.scalars(
        select(WeeklyDigestRow).where(
            WeeklyDigestRow.owner == owner,
            WeeklyDigestRow.created_at < now - timedelta(days=retention.weekly),
        )
    )
    counts["weekly"] = await _delete(session, owner, "summary", list(weeklies), seq)
    if any(counts.values()):
        audit(session, owner, "retention", f"owner:{owner}", now, **counts)
    return counts


async def _delete(session: AsyncSession, owner: str, kind: str, rows: list[Any], seq: int) -> int:
    for row in rows:
        await tombstone(session, owner, kind, row.id, seq)
        await session.delete(row)
    await session.flush()
    return len(rows)
