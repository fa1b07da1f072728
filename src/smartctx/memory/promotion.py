"""Promotion: from evidence to profile items, with confidence and status.

Rules (DESIGN.md section 4):

- one observation is evidence, never a fact: an item starts as ``candidate``;
- it becomes ``confirmed`` after support on at least ``CONFIRM_DAYS`` (3) distinct days, or an
  explicit acceptance, provided its confidence stays at least ``CONFIRM_CONFIDENCE``;
- a contradiction lowers confidence (and can send a confirmed item back to ``candidate``);
- an item marked wrong is ``rejected`` and stays so until the user accepts it explicitly;
- an item whose evidence was all reverted is ``reverted``.

Confidence: ``0.25 + 0.15 * min(days, 5)``, plus 0.2 for an acceptance, minus 0.2 per
contradiction, clamped to [0, 0.99]. ``recompute`` is the single place that derives an item from
its evidence, so add, revert and mark-wrong can never disagree.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from smartctx.memory.extractor import ACCEPTANCE, CONTRADICTION, SUPPORT, Observation
from smartctx.memory.tables import (
    DailySummaryRow,
    EvidenceRow,
    ProfileItemRow,
    SessionSummaryRow,
    WeeklyDigestRow,
)

SummaryRow = SessionSummaryRow | DailySummaryRow | WeeklyDigestRow

CONFIRM_DAYS = 3
CONFIRM_CONFIDENCE = 0.5
CANDIDATE, CONFIRMED, REJECTED, REVERTED = "candidate", "confirmed", "rejected", "reverted"
STATUSES = (CANDIDATE, CONFIRMED, REJECTED, REVERTED)


def confidence_for(days: int, accepted: bool, contradictions: int) -> float:
    """The confidence of an item with support on ``days`` distinct days."""
    value = 0.25 + 0.15 * min(days, 5) if days else 0.0
    if accepted:
        value = max(value, 0.5) + 0.2
    value -= 0.2 * contradictions
    return round(min(0.99, max(0.0, value)), 2)


async def record(
    session: AsyncSession,
    owner: str,
    observations: Sequence[Observation],
    *,
    day: str,
    now: datetime,
    seq: int,
    pair_id: str | None = None,
    session_id: str | None = None,
) -> list[ProfileItemRow]:
    """Store ``observations`` as evidence and recompute the items they touch (returned)."""
    touched: list[tuple[str, str]] = []
    for obs in observations:
        session.add(
            EvidenceRow(
                owner=owner,
                id=uuid.uuid4().hex,
                key=obs.key,
                value=obs.value,
                kind=obs.kind,
                day=day,
                pair_id=pair_id,
                session_id=session_id,
                active=True,
                created_at=now,
            )
        )
        if (obs.key, obs.value) not in touched:
            touched.append((obs.key, obs.value))
    await session.flush()
    items = [
        await recompute(session, owner, key, value, now=now, seq=seq) for key, value in touched
    ]
    return [item for item in items if item is not None]


async def recompute(
    session: AsyncSession, owner: str, key: str, value: str, *, now: datetime, seq: int
) -> ProfileItemRow | None:
    """Derive the item (key, value) from its active evidence; create it on first support.

    Returns the item, or None when there is no item and nothing supports one.
    """
    evidence = list(
        await session.scalars(
            select(EvidenceRow)
            .where(EvidenceRow.owner == owner, EvidenceRow.key == key, EvidenceRow.value == value)
            .order_by(EvidenceRow.day, EvidenceRow.created_at, EvidenceRow.id)
        )
    )
    active = [e for e in evidence if e.active]
    support = [e for e in active if e.kind in (SUPPORT, ACCEPTANCE)]
    item = await session.scalar(
        select(ProfileItemRow).where(
            ProfileItemRow.owner == owner, ProfileItemRow.key == key, ProfileItemRow.value == value
        )
    )
    if item is None and not support:
        return None
    days = sorted({e.day for e in support if e.kind == SUPPORT})
    accepted = any(e.kind == ACCEPTANCE for e in active)
    contradictions = sum(1 for e in active if e.kind == CONTRADICTION)
    confidence = confidence_for(len(days), accepted, contradictions)
    if item is not None and item.status == REJECTED and not accepted:
        status, confidence = REJECTED, 0.0
    elif not support:
        status, confidence = REVERTED, 0.0
    elif (len(days) >= CONFIRM_DAYS or accepted) and confidence >= CONFIRM_CONFIDENCE:
        status = CONFIRMED
    else:
        status = CANDIDATE
    pair_ids = _unique(e.pair_id for e in support)
    summary_ids = await _summaries_over(session, owner, set(pair_ids))
    if item is None:
        item = ProfileItemRow(owner=owner, id=uuid.uuid4().hex, key=key, value=value)
        session.add(item)
    item.status = status
    item.confidence = confidence
    item.evidence_days = sorted({e.day for e in support})
    item.source_candidate_ids = [e.id for e in support]
    item.source_pair_ids = pair_ids
    item.source_session_ids = _unique(e.session_id for e in support)
    item.source_summary_ids = summary_ids
    item.updated_at = now
    item.seq = seq
    await session.flush()
    return item


async def _summaries_over(session: AsyncSession, owner: str, pair_ids: set[str]) -> list[str]:
    """Ids of every summary row (any tier) that rests on one of ``pair_ids``."""
    if not pair_ids:
        return []
    out: list[str] = []
    for table in (SessionSummaryRow, DailySummaryRow, WeeklyDigestRow):
        rows: list[SummaryRow] = list(
            await session.scalars(select(table).where(table.owner == owner))
        )
        out += [r.id for r in rows if pair_ids.intersection(r.source_pair_ids)]
    return out


async def refresh_all(session: AsyncSession, owner: str, *, now: datetime, seq: int) -> int:
    """Recompute every item of ``owner`` (after compaction: fills summary provenance)."""
    keys = list(
        await session.execute(
            select(ProfileItemRow.key, ProfileItemRow.value).where(ProfileItemRow.owner == owner)
        )
    )
    for key, value in keys:
        await recompute(session, owner, key, value, now=now, seq=seq)
    return len(keys)


def _unique(values: Iterable[str | None]) -> list[str]:
    out: list[str] = []
    for v in values:
        if v and v not in out:
            out.append(v)
    return out
