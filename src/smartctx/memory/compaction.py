"""Compaction: Pair -> Session -> Day -> Week -> Profile, with provenance at every step.

``Compactor.compact(session, owner, now=..., force=...)`` runs in the caller's transaction:

1. the pairs not yet summarised are grouped by session; a session idle for ``session_idle``
   (or every session when ``force``) becomes a session summary (``source_pair_ids``);
2. the session summaries of a finished day (every day when ``force``) are rolled into that day's
   daily summary, rebuilt in place from all of the day's session summaries;
3. every week whose days changed gets its weekly digest rebuilt from that week's daily summaries;
4. every profile item is recomputed, so that its ``source_summary_ids`` name the new summaries.

Pair text is redacted (``privacy.redact``) before it reaches the summariser, and the summariser's
output is redacted again, so no sensitive value reaches a summary.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from smartctx.memory import promotion
from smartctx.memory.privacy import redact
from smartctx.memory.repository import bump, day_of, week_days, week_of
from smartctx.memory.summarizer import Sentence, Summarizer, render, split_sentences
from smartctx.memory.tables import DailySummaryRow, PairRow, SessionSummaryRow, WeeklyDigestRow


@dataclass(frozen=True, slots=True)
class CompactionReport:
    """What one compaction produced for one owner."""

    owner: str
    sessions: int = 0
    days: int = 0
    weeks: int = 0
    profile_items: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "owner": self.owner,
            "sessions": self.sessions,
            "days": self.days,
            "weeks": self.weeks,
            "profile_items": self.profile_items,
        }


def _load(rows: list[dict[str, Any]]) -> list[Sentence]:
    return [Sentence.from_dict(r) for r in rows]


def dump_sentences(sentences: list[Sentence]) -> list[dict[str, Any]]:
    """Sentences as stored in a summary row, their text redacted again."""
    return [Sentence(redact(s.text), s.pair_ids).to_dict() for s in sentences]


def pair_material(pairs: Iterable[PairRow]) -> list[Sentence]:
    """The sentences of the pairs' redacted user text, each tagged with its pair id."""
    return [s for pair in pairs for s in split_sentences(redact(pair.user_text), [pair.id])]


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


class Compactor:
    """Rolls the tiers up. Holds no state besides its options; safe to share."""

    def __init__(
        self,
        summarizer: Summarizer,
        *,
        session_idle: timedelta = timedelta(minutes=30),
        session_sentences: int = 3,
        daily_sentences: int = 4,
        weekly_sentences: int = 5,
    ) -> None:
        self.summarizer = summarizer
        self.session_idle = session_idle
        self.limits = (session_sentences, daily_sentences, weekly_sentences)

    async def compact(
        self, session: AsyncSession, owner: str, *, now: datetime, force: bool = False
    ) -> CompactionReport:
        """Roll ``owner``'s tiers up as far as they are ready (everything when ``force``)."""
        seq = await bump(session, owner)
        new_sessions = await self._sessions(session, owner, now=now, force=force, seq=seq)
        days = await self._days(session, owner, now=now, force=force, seq=seq)
        weeks = await self.rebuild_weeks(session, owner, days, now=now, seq=seq)
        items = await promotion.refresh_all(session, owner, now=now, seq=seq)
        return CompactionReport(owner, new_sessions, len(days), weeks, items)

    async def _sessions(
        self, session: AsyncSession, owner: str, *, now: datetime, force: bool, seq: int
    ) -> int:
        pairs = await session.scalars(
            select(PairRow)
            .where(PairRow.owner == owner, PairRow.summary_id.is_(None))
            .order_by(PairRow.seq, PairRow.created_at, PairRow.id)
        )
        groups: dict[str, list[PairRow]] = defaultdict(list)
        for pair in pairs:
            groups[pair.session_id].append(pair)
        made = 0
        for session_id, group in groups.items():
            last = max(p.created_at for p in group)
            if not force and _aware(now) - _aware(last) < self.session_idle:
                continue
            chosen = await self.summarizer.summarize(pair_material(group), self.limits[0])
            row = SessionSummaryRow(
                owner=owner,
                id=uuid.uuid4().hex,
                session_id=session_id,
                day=group[0].day,
                text=redact(render(chosen)),
                sentences=dump_sentences(chosen),
                source_pair_ids=[p.id for p in group],
                daily_id=None,
                created_at=now,
                seq=seq,
            )
            session.add(row)
            for pair in group:
                pair.summary_id = row.id
            made += 1
        await session.flush()
        return made

    async def _days(
        self, session: AsyncSession, owner: str, *, now: datetime, force: bool, seq: int
    ) -> list[str]:
        pending = await session.scalars(
            select(SessionSummaryRow.day)
            .where(SessionSummaryRow.owner == owner, SessionSummaryRow.daily_id.is_(None))
            .distinct()
        )
        today = day_of(now)
        days = sorted(d for d in pending if force or d < today)
        for day in days:
            await self.rebuild_day(session, owner, day, now=now, seq=seq)
        return days

    async def rebuild_day(
        self, session: AsyncSession, owner: str, day: str, *, now: datetime, seq: int
    ) -> DailySummaryRow | None:
        """Rebuild (or delete, when nothing is left) the daily summary of ``day``."""
        sessions = list(
            await session.scalars(
                select(SessionSummaryRow)
                .where(SessionSummaryRow.owner == owner, SessionSummaryRow.day == day)
                .order_by(SessionSummaryRow.seq, SessionSummaryRow.created_at)
            )
        )
        row = await session.scalar(
            select(DailySummaryRow).where(
                DailySummaryRow.owner == owner, DailySummaryRow.day == day
            )
        )
        if not sessions:
            if row is not None:
                await session.delete(row)
            return None
        material = [s for summary in sessions for s in _load(summary.sentences)]
        chosen = await self.summarizer.summarize(material, self.limits[1])
        if row is None:
            row = DailySummaryRow(owner=owner, id=uuid.uuid4().hex, day=day, created_at=now)
            session.add(row)
        row.text = redact(render(chosen))
        row.sentences = dump_sentences(chosen)
        row.source_summary_ids = [s.id for s in sessions]
        row.source_session_ids = _unique([s.session_id for s in sessions])
        row.source_pair_ids = _unique([p for s in sessions for p in s.source_pair_ids])
        row.weekly_id = None
        row.seq = seq
        for summary in sessions:
            summary.daily_id = row.id
        await session.flush()
        return row

    async def rebuild_weeks(
        self, session: AsyncSession, owner: str, days: Iterable[str], *, now: datetime, seq: int
    ) -> int:
        """Rebuild the weekly digest of every week holding one of ``days``; returns how many."""
        weeks = sorted({week_of(d) for d in days})
        for week in weeks:
            await self.rebuild_week(session, owner, week, now=now, seq=seq)
        return len(weeks)

    async def rebuild_week(
        self, session: AsyncSession, owner: str, week: str, *, now: datetime, seq: int
    ) -> WeeklyDigestRow | None:
        """Rebuild (or delete, when nothing is left) the weekly digest of ``week``."""
        first, last = week_days(week)
        dailies = list(
            await session.scalars(
                select(DailySummaryRow)
                .where(DailySummaryRow.owner == owner, DailySummaryRow.day.between(first, last))
                .order_by(DailySummaryRow.day)
            )
        )
        row = await session.scalar(
            select(WeeklyDigestRow).where(
                WeeklyDigestRow.owner == owner, WeeklyDigestRow.week == week
            )
        )
        if not dailies:
            if row is not None:
                await session.delete(row)
            return None
        material = [s for daily in dailies for s in _load(daily.sentences)]
        chosen = await self.summarizer.summarize(material, self.limits[2])
        if row is None:
            row = WeeklyDigestRow(owner=owner, id=uuid.uuid4().hex, week=week, created_at=now)
            session.add(row)
        row.text = redact(render(chosen))
        row.sentences = dump_sentences(chosen)
        row.source_summary_ids = [d.id for d in dailies]
        row.source_session_ids = _unique([s for d in dailies for s in d.source_session_ids])
        row.source_pair_ids = _unique([p for d in dailies for p in d.source_pair_ids])
        row.seq = seq
        for daily in dailies:
            daily.weekly_id = row.id
        await session.flush()
        return row


def _aware(moment: datetime) -> datetime:
    """SQLite returns naive datetimes; every time smartctx writes is UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
