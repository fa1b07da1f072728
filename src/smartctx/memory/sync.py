"""Device sync: a per-owner cursor and version over the owner's change counter.

Every write to an owner's memory increments its counter ``n``; the rows it touched carry
``seq = n``, and a deletion leaves a tombstone with ``seq = n``. The server's cursor is
``cur-<n>`` and its version ``v<n>``. A device sends its cursor, its version and its new pairs:

- the answer holds every pair, summary, digest, profile item and tombstone with ``seq`` above
  the device's cursor, plus the new cursor and version: a device that was offline catches up in
  one call (send no cursor to receive everything);
- writes are idempotent by pair id: pairs the server already has are reported as duplicates and
  never stored twice, and a call whose pairs are all duplicates is answered normally even with
  an old version (it is a retry);
- a write of new pairs based on a stale version raises ``Conflict`` whose detail carries the
  current cursor and version: the device syncs from its cursor, then retries with the version
  it received. A write without a version is unconditional (pairs are append-only).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from smartctx.core.errors import Conflict
from smartctx.memory.pairs import PairIn, existing_ids, store_pairs
from smartctx.memory.repository import (
    bump,
    current_version,
    cursor_str,
    pair_view,
    parse_counter,
    profile_view,
    summary_view,
    version_str,
)
from smartctx.memory.tables import (
    DailySummaryRow,
    PairRow,
    ProfileItemRow,
    SessionSummaryRow,
    TombstoneRow,
    WeeklyDigestRow,
)
from smartctx.memory.vault import SecretVault


async def changes_since(session: AsyncSession, owner: str, cursor: int) -> dict[str, Any]:
    """Every row of ``owner`` changed after ``cursor``, ordered by ``seq``."""
    pairs = await session.scalars(
        select(PairRow)
        .where(PairRow.owner == owner, PairRow.seq > cursor)
        .order_by(PairRow.seq, PairRow.created_at, PairRow.id)
    )
    summaries: list[dict[str, Any]] = []
    for table in (SessionSummaryRow, DailySummaryRow, WeeklyDigestRow):
        rows: list[SessionSummaryRow | DailySummaryRow | WeeklyDigestRow] = list(
            await session.scalars(
                select(table).where(table.owner == owner, table.seq > cursor).order_by(table.seq)
            )
        )
        summaries += [summary_view(r) for r in rows]
    items = await session.scalars(
        select(ProfileItemRow)
        .where(ProfileItemRow.owner == owner, ProfileItemRow.seq > cursor)
        .order_by(ProfileItemRow.seq, ProfileItemRow.key, ProfileItemRow.value)
    )
    deleted = await session.scalars(
        select(TombstoneRow)
        .where(TombstoneRow.owner == owner, TombstoneRow.seq > cursor)
        .order_by(TombstoneRow.seq, TombstoneRow.item_id)
    )
    return {
        "pairs": [pair_view(p) for p in pairs],
        "summaries": summaries,
        "profile_items": [profile_view(i) for i in items],
        "deleted": [{"kind": t.kind, "id": t.item_id} for t in deleted],
    }


async def sync(
    session: AsyncSession,
    owner: str,
    *,
    cursor: str | None,
    version: str | None,
    pairs: Sequence[PairIn],
    now: datetime,
    vault: SecretVault | None = None,
) -> dict[str, Any]:
    """Apply a device's pairs and answer with the changes since its cursor (see module doc)."""
    since = parse_counter(cursor, "cur-") or 0
    base = parse_counter(version, "v")
    current = await current_version(session, owner)
    known = await existing_ids(session, owner, [p.id for p in pairs])
    fresh = [p for p in pairs if p.id not in known]
    if fresh and base is not None and base != current:
        raise Conflict(
            f"stale version {version_str(base)}: the server is at {version_str(current)}; "
            f"sync from your cursor to receive the changes, then retry with the new version",
            cursor=cursor_str(current),
            version=version_str(current),
        )
    stored: list[str] = []
    duplicates = [p.id for p in pairs if p.id in known]
    if fresh:
        seq = await bump(session, owner)
        result = await store_pairs(session, owner, fresh, now=now, seq=seq, vault=vault)
        stored, duplicates = result.stored, duplicates + result.duplicates
        current = seq
    changes = await changes_since(session, owner, since)
    return {
        "owner": owner,
        "cursor": cursor_str(current),
        "version": version_str(current),
        "stored": stored,
        "duplicates": duplicates,
        "changes": changes,
    }
