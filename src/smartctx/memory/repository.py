"""Shared row helpers of personal memory: the owner's change counter, tombstones, audit records,
day/week keys and the JSON views of rows.

Every function takes an open ``AsyncSession`` (the caller's transaction) and an ``owner``, and
every query filters by that owner. Nothing here commits.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import bindparam, select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.sql.elements import BindParameter

from smartctx.core.errors import InvalidInput
from smartctx.memory.tables import (
    AuditRow,
    DailySummaryRow,
    PairRow,
    ProfileItemRow,
    SessionSummaryRow,
    SyncStateRow,
    TombstoneRow,
    WeeklyDigestRow,
)
from smartctx.store.turn_probes import Probe


def iso(moment: datetime) -> str:
    """ISO-8601 with an offset (SQLite hands back naive datetimes; smartctx writes UTC)."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()


def day_of(moment: datetime) -> str:
    """The ``YYYY-MM-DD`` day key of ``moment`` (in its own time zone)."""
    return moment.date().isoformat()


def week_of(day: str) -> str:
    """The ISO week key (``2026-W01``) of a ``YYYY-MM-DD`` day."""
    year, week, _ = date.fromisoformat(day).isocalendar()
    return f"{year}-W{week:02d}"


def week_days(week: str) -> tuple[str, str]:
    """The first and last ``YYYY-MM-DD`` day (Monday, Sunday) of an ISO week key; day keys
    compare as strings, so ``day BETWEEN first AND last`` selects the week in SQL."""
    year, number = week.split("-W")
    return (
        date.fromisocalendar(int(year), int(number), 1).isoformat(),
        date.fromisocalendar(int(year), int(number), 7).isoformat(),
    )


def cursor_str(n: int) -> str:
    return f"cur-{n}"


def version_str(n: int) -> str:
    return f"v{n}"


def parse_counter(value: str | int | None, prefix: str) -> int | None:
    """``cur-7``/``v7``/``7`` -> 7; None or "" -> None; anything else is ``InvalidInput``."""
    if value is None or value == "":
        return None
    if isinstance(value, int):
        return value
    text = value[len(prefix) :] if value.startswith(prefix) else value
    if not text.isdigit():
        raise InvalidInput(
            f"{value!r} is not a sync {'cursor' if prefix == 'cur-' else 'version'}: "
            f"expected {prefix}<number>",
            value=value,
        )
    return int(text)


_OWNER: BindParameter[str] = bindparam("owner")
# Built once: building a statement costs about as much CPU as running it (these run every turn).
_VERSION = select(SyncStateRow.version).where(SyncStateRow.owner == _OWNER)
_STAMP = select(SyncStateRow.version, SyncStateRow.epoch).where(SyncStateRow.owner == _OWNER)
_BUMP = text(
    "INSERT INTO mem_sync_state (owner, version, epoch) VALUES (:b_owner, 1, :b_epoch) "
    "ON CONFLICT (owner) DO UPDATE SET version = mem_sync_state.version + 1 "
    "RETURNING version, epoch"
)
"""The counter's increment, or the owner's first state (version 1 under a new epoch): one
statement on SQLite and PostgreSQL alike (both have ``ON CONFLICT ... RETURNING``)."""


async def current_version(session: AsyncSession, owner: str) -> int:
    """The owner's change counter (0 for an owner never written)."""
    value = await session.scalar(_VERSION, {"owner": owner})
    return int(value or 0)


NEVER_WRITTEN: tuple[int, str | None] = (0, None)
"""The stamp of an owner never written (no state row)."""


async def current_stamp(
    session: AsyncSession | AsyncConnection, owner: str
) -> tuple[int, str | None]:
    """``(version, epoch)`` of the owner: one state, even across a forget (which restarts the
    counter under a new epoch); :data:`NEVER_WRITTEN` for an owner never written."""
    row = (await session.execute(_STAMP, {"owner": owner})).one_or_none()
    return NEVER_WRITTEN if row is None else _stamp(row)


def _stamp(values: Sequence[Any]) -> tuple[int, str | None]:
    """The stamp of a row's (or two scalar subqueries') ``(version, epoch)``: all None is no
    row."""
    return (int(values[0] or 0), values[1])


STAMP_PROBE = Probe(
    "memory_stamp",
    (
        select(SyncStateRow.version).where(SyncStateRow.owner == _OWNER).scalar_subquery(),
        select(SyncStateRow.epoch).where(SyncStateRow.owner == _OWNER).scalar_subquery(),
    ),
    _stamp,
)
""":func:`current_stamp` as a turn probe (:mod:`smartctx.store.turn_probes`)."""


async def bump(session: AsyncSession, owner: str) -> int:
    """Increment the owner's change counter atomically and return the new value."""
    return (await bump_stamp(session, owner))[0]


async def bump_stamp(session: AsyncSession, owner: str) -> tuple[int, str | None]:
    """:func:`bump`, with the epoch of the owner's state row when this call created it (the
    owner's first write: its stamp moves from :data:`NEVER_WRITTEN` to ``(1, epoch)``), else
    None (the epoch is unchanged)."""
    epoch = uuid.uuid4().hex
    version, stored = (await session.execute(_BUMP, {"b_owner": owner, "b_epoch": epoch})).one()
    return int(version), (epoch if stored == epoch else None)


async def tombstone(session: AsyncSession, owner: str, kind: str, item_id: str, seq: int) -> None:
    """Record that ``kind``/``item_id`` was deleted at change ``seq`` (for sync)."""
    existing = await session.get(TombstoneRow, (owner, kind, item_id))
    if existing is None:
        session.add(TombstoneRow(owner=owner, kind=kind, item_id=item_id, seq=seq))
    else:
        existing.seq = seq


def audit(
    session: AsyncSession, owner: str, action: str, target: str, at: datetime, **detail: Any
) -> None:
    """Append an audit record (ids and counts only: never content)."""
    session.add(AuditRow(owner=owner, action=action, target=target, detail=detail, at=at))


def pair_view(row: PairRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "session_id": row.session_id,
        "day": row.day,
        "user_text": row.user_text,
        "assistant_text": row.assistant_text,
        "route_family": row.route_family,
        "workflow_id": row.workflow_id,
        "sensitive": row.sensitive,
        "summary_id": row.summary_id,
        "created_at": iso(row.created_at),
        "seq": row.seq,
    }


def summary_view(row: SessionSummaryRow | DailySummaryRow | WeeklyDigestRow) -> dict[str, Any]:
    out: dict[str, Any] = {"id": row.id, "text": row.text, "seq": row.seq}
    if isinstance(row, SessionSummaryRow):
        out.update(tier="session", session_id=row.session_id, day=row.day)
        out["source_pair_ids"] = list(row.source_pair_ids)
    else:
        if isinstance(row, DailySummaryRow):
            out.update(tier="daily", day=row.day)
        else:
            out.update(tier="weekly", week=row.week)
        out["source_summary_ids"] = list(row.source_summary_ids)
        out["source_session_ids"] = list(row.source_session_ids)
        out["source_pair_ids"] = list(row.source_pair_ids)
    return out


def profile_view(row: ProfileItemRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "key": row.key,
        "value": row.value,
        "status": row.status,
        "confidence": row.confidence,
        "evidence_days": list(row.evidence_days),
        "source_candidate_ids": list(row.source_candidate_ids),
        "source_summary_ids": list(row.source_summary_ids),
        "source_session_ids": list(row.source_session_ids),
        "source_pair_ids": list(row.source_pair_ids),
        "updated_at": iso(row.updated_at),
        "seq": row.seq,
    }


def audit_view(row: AuditRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "action": row.action,
        "target": row.target,
        "detail": dict(row.detail),
        "at": iso(row.at),
    }
