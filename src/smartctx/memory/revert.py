"""Revert: undo a pair, or a profile item the user marked wrong, through the provenance chain.

``revert_pair`` deletes the pair and its evidence, then walks up: every session summary that
rests on the pair is recomputed from its remaining pairs (or, when some of those were already
removed by retention, keeps only the sentences that did not rest on the pair; it is deleted when
nothing is left); the daily summaries and weekly digests above are rebuilt; every profile item
that rested on the pair is recomputed (a confirmed item can fall back to ``candidate``, an item
left without evidence becomes ``reverted``). ``mark_wrong`` rejects an item and retires its
evidence. Both leave an audit record listing every id they touched, and run in the caller's
transaction, so a failure changes nothing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from smartctx.core.errors import NotFound
from smartctx.memory import promotion
from smartctx.memory.compaction import Compactor, dump_sentences, pair_material
from smartctx.memory.privacy import redact
from smartctx.memory.repository import audit, bump, tombstone
from smartctx.memory.summarizer import Sentence, render
from smartctx.memory.tables import (
    DailySummaryRow,
    EvidenceRow,
    PairRow,
    ProfileItemRow,
    SessionSummaryRow,
    WeeklyDigestRow,
)
from smartctx.memory.vault import drop_copies


async def revert_pair(
    session: AsyncSession, owner: str, pair_id: str, *, compactor: Compactor, now: datetime
) -> dict[str, Any]:
    """Delete pair ``pair_id`` of ``owner`` and recompute what rested on it.

    Raises ``NotFound`` when the owner has no such pair. Returns the audit detail.
    """
    pair = await session.get(PairRow, (owner, pair_id))
    if pair is None:
        raise NotFound(f"owner {owner!r} has no pair {pair_id!r}", owner=owner, pair_id=pair_id)
    seq = await bump(session, owner)
    evidence = list(
        await session.scalars(
            select(EvidenceRow).where(EvidenceRow.owner == owner, EvidenceRow.pair_id == pair_id)
        )
    )
    touched_items = sorted({(e.key, e.value) for e in evidence})
    await session.execute(
        delete(EvidenceRow).where(EvidenceRow.owner == owner, EvidenceRow.pair_id == pair_id)
    )
    await session.delete(pair)
    await drop_copies(session, owner, [pair_id])
    await tombstone(session, owner, "pair", pair_id, seq)
    await session.flush()

    summaries = [
        s
        for s in await session.scalars(
            select(SessionSummaryRow).where(SessionSummaryRow.owner == owner)
        )
        if pair_id in s.source_pair_ids
    ]
    recomputed, deleted, days = [], [], set()
    for summary in summaries:
        days.add(summary.day)
        if await _recompute_session(session, owner, summary, pair_id, compactor, seq):
            recomputed.append(summary.id)
        else:
            deleted.append(summary.id)
            await session.delete(summary)
            await tombstone(session, owner, "summary", summary.id, seq)
    await session.flush()
    for day in sorted(days):
        await compactor.rebuild_day(session, owner, day, now=now, seq=seq)
    await compactor.rebuild_weeks(session, owner, days, now=now, seq=seq)

    stripped = await _strip_leftovers(session, owner, pair_id, seq)

    items: list[dict[str, str]] = []
    for key, value in touched_items:
        item = await promotion.recompute(session, owner, key, value, now=now, seq=seq)
        if item is not None:
            items.append({"id": item.id, "key": key, "status": item.status})
    await promotion.refresh_all(session, owner, now=now, seq=seq)
    detail: dict[str, Any] = {
        "evidence_ids": [e.id for e in evidence],
        "recomputed_summary_ids": recomputed,
        "deleted_summary_ids": deleted,
        "days": sorted(days),
        "stripped_summary_ids": stripped,
        "profile_items": items,
    }
    audit(session, owner, "revert_pair", f"pair:{pair_id}", now, **detail)
    return detail


async def _strip_leftovers(session: AsyncSession, owner: str, pair_id: str, seq: int) -> list[str]:
    """Daily/weekly rows that still rest on the pair after the rebuilds (their session summaries
    already expired): drop the sentences that came from the pair; delete rows left empty."""
    touched: list[str] = []
    for table in (DailySummaryRow, WeeklyDigestRow):
        rows: list[DailySummaryRow | WeeklyDigestRow] = list(
            await session.scalars(select(table).where(table.owner == owner))
        )
        for row in rows:
            if pair_id not in row.source_pair_ids:
                continue
            kept = [s for s in map(Sentence.from_dict, row.sentences) if pair_id not in s.pair_ids]
            touched.append(row.id)
            if not kept:
                await session.delete(row)
                await tombstone(session, owner, "summary", row.id, seq)
                continue
            row.sentences = [s.to_dict() for s in kept]
            row.text = redact(render(kept))
            row.source_pair_ids = [p for p in row.source_pair_ids if p != pair_id]
            row.seq = seq
    await session.flush()
    return touched


async def _recompute_session(
    session: AsyncSession,
    owner: str,
    summary: SessionSummaryRow,
    pair_id: str,
    compactor: Compactor,
    seq: int,
) -> bool:
    """Recompute ``summary`` without ``pair_id``; False when nothing is left of it."""
    remaining_ids = [p for p in summary.source_pair_ids if p != pair_id]
    pairs = [await session.get(PairRow, (owner, p)) for p in remaining_ids]
    present = [p for p in pairs if p is not None]
    if present and len(present) == len(remaining_ids):
        chosen = await compactor.summarizer.summarize(pair_material(present), compactor.limits[0])
    else:
        old = [Sentence.from_dict(s) for s in summary.sentences]
        chosen = [s for s in old if pair_id not in s.pair_ids]
    if not chosen or not remaining_ids:
        return False
    summary.sentences = dump_sentences(chosen)
    summary.text = redact(render(chosen))
    summary.source_pair_ids = remaining_ids
    summary.seq = seq
    return True


async def mark_wrong(
    session: AsyncSession, owner: str, item_id: str, *, now: datetime
) -> dict[str, Any]:
    """Reject profile item ``item_id``: it stays ``rejected`` until accepted explicitly.

    Its evidence is retired (kept inactive, so the chain stays auditable) and the audit record
    names the whole chain. Raises ``NotFound`` for an unknown item of this owner.
    """
    item = await session.get(ProfileItemRow, (owner, item_id))
    if item is None:
        raise NotFound(f"owner {owner!r} has no profile item {item_id!r}", item_id=item_id)
    seq = await bump(session, owner)
    chain = {
        "key": item.key,
        "source_candidate_ids": list(item.source_candidate_ids),
        "source_summary_ids": list(item.source_summary_ids),
        "source_session_ids": list(item.source_session_ids),
        "source_pair_ids": list(item.source_pair_ids),
        "previous_status": item.status,
        "previous_confidence": item.confidence,
    }
    for ev in await session.scalars(
        select(EvidenceRow).where(
            EvidenceRow.owner == owner,
            EvidenceRow.key == item.key,
            EvidenceRow.value == item.value,
        )
    ):
        ev.active = False
    item.status = promotion.REJECTED
    await session.flush()
    await promotion.recompute(session, owner, item.key, item.value, now=now, seq=seq)
    audit(session, owner, "mark_wrong", f"profile:{item_id}", now, **chain)
    return chain
