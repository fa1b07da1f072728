"""The personal-memory tables (DESIGN.md section 4), one ORM class per tier.

Every table has an ``owner`` column and every query of this package filters by it. Derived rows
(summaries, digests, profile items) carry their provenance as JSON id lists, flattened down to
the pairs, so that a revert can find everything that rested on a pair without a recursive query:

``profile item -> source_candidate_ids -> source_summary_ids -> source_session_ids ->
source_pair_ids``.

Summaries also keep ``sentences``: the output sentences, each with the pair ids it came from
(``[{"text": ..., "pair_ids": [...]}]``), which is what a revert edits. ``seq`` is the owner's
change counter at the row's last write; sync answers "what changed since cursor N" with it.
The schema is created by the hand-written migration ``0002_personal_memory``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, Float, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from smartctx.store.base import Base


class PairRow(Base):
    """One user/assistant turn (the pair id is the device's id, so writes are idempotent)."""

    __tablename__ = "mem_pairs"

    owner: Mapped[str] = mapped_column(String(128), primary_key=True)
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    session_id: Mapped[str] = mapped_column(String(128), index=True)
    day: Mapped[str] = mapped_column(String(10))
    user_text: Mapped[str] = mapped_column(Text)
    assistant_text: Mapped[str] = mapped_column(Text, default="")
    route_family: Mapped[str] = mapped_column(String(32), default="")
    workflow_id: Mapped[str] = mapped_column(String(128), default="")
    sensitive: Mapped[bool] = mapped_column(Boolean, default=False)
    summary_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    seq: Mapped[int] = mapped_column(Integer)


class SessionSummaryRow(Base):
    """A summary of the pairs of one session (several rows when a session is compacted twice)."""

    __tablename__ = "mem_session_summaries"

    owner: Mapped[str] = mapped_column(String(128), primary_key=True)
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    session_id: Mapped[str] = mapped_column(String(128))
    day: Mapped[str] = mapped_column(String(10))
    text: Mapped[str] = mapped_column(Text)
    sentences: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    source_pair_ids: Mapped[list[str]] = mapped_column(JSON)
    daily_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    seq: Mapped[int] = mapped_column(Integer)


class DailySummaryRow(Base):
    """One row per owner and day, rebuilt in place when more sessions of that day arrive."""

    __tablename__ = "mem_daily_summaries"
    __table_args__ = (UniqueConstraint("owner", "day"),)

    owner: Mapped[str] = mapped_column(String(128), primary_key=True)
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    day: Mapped[str] = mapped_column(String(10))
    text: Mapped[str] = mapped_column(Text)
    sentences: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    source_summary_ids: Mapped[list[str]] = mapped_column(JSON)
    source_session_ids: Mapped[list[str]] = mapped_column(JSON)
    source_pair_ids: Mapped[list[str]] = mapped_column(JSON)
    weekly_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    seq: Mapped[int] = mapped_column(Integer)


class WeeklyDigestRow(Base):
    """One row per owner and ISO week (``2026-W01``), rebuilt in place."""

    __tablename__ = "mem_weekly_digests"
    __table_args__ = (UniqueConstraint("owner", "week"),)

    owner: Mapped[str] = mapped_column(String(128), primary_key=True)
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    week: Mapped[str] = mapped_column(String(10))
    text: Mapped[str] = mapped_column(Text)
    sentences: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    source_summary_ids: Mapped[list[str]] = mapped_column(JSON)
    source_session_ids: Mapped[list[str]] = mapped_column(JSON)
    source_pair_ids: Mapped[list[str]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    seq: Mapped[int] = mapped_column(Integer)


class EvidenceRow(Base):
    """A profile candidate observation: one piece of evidence for (key, value) on one day.

    ``kind`` is ``support`` (an utterance), ``acceptance`` (the user accepted it explicitly) or
    ``contradiction``; ``active`` turns false when the item is marked wrong or the pair reverted.
    """

    __tablename__ = "mem_profile_evidence"

    owner: Mapped[str] = mapped_column(String(128), primary_key=True)
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    key: Mapped[str] = mapped_column(String(64))
    value: Mapped[str] = mapped_column(String(256))
    kind: Mapped[str] = mapped_column(String(16))
    day: Mapped[str] = mapped_column(String(10))
    pair_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    session_id: Mapped[str | None] = mapped_column(String(128), nullable=True)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ProfileItemRow(Base):
    """A long-term profile item with status ``candidate|confirmed|rejected|reverted``."""

    __tablename__ = "mem_profile_items"
    __table_args__ = (UniqueConstraint("owner", "key", "value"),)

    owner: Mapped[str] = mapped_column(String(128), primary_key=True)
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    key: Mapped[str] = mapped_column(String(64))
    value: Mapped[str] = mapped_column(String(256))
    status: Mapped[str] = mapped_column(String(16))
    confidence: Mapped[float] = mapped_column(Float)
    evidence_days: Mapped[list[str]] = mapped_column(JSON)
    source_candidate_ids: Mapped[list[str]] = mapped_column(JSON)
    source_summary_ids: Mapped[list[str]] = mapped_column(JSON)
    source_session_ids: Mapped[list[str]] = mapped_column(JSON)
    source_pair_ids: Mapped[list[str]] = mapped_column(JSON)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    seq: Mapped[int] = mapped_column(Integer)


class AuditRow(Base):
    """What a revert, mark-wrong, retention or forget did (ids only, never content)."""

    __tablename__ = "mem_audit"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    owner: Mapped[str] = mapped_column(String(128), index=True)
    action: Mapped[str] = mapped_column(String(32))
    target: Mapped[str] = mapped_column(String(256))
    detail: Mapped[dict[str, Any]] = mapped_column(JSON)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class SyncStateRow(Base):
    """The owner's change counter: the cursor is ``cur-<n>``, the version ``v<n>``."""

    __tablename__ = "mem_sync_state"

    owner: Mapped[str] = mapped_column(String(128), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, default=0)
    epoch: Mapped[str | None] = mapped_column(String(32), nullable=True)
    """A random token set when the row is made: a forget deletes the row and the counter starts
    again, so ``(version, epoch)``, not the version alone, names one state of the owner."""


class TombstoneRow(Base):
    """A deleted row (kind and id only), so that sync can tell devices to drop their copy."""

    __tablename__ = "mem_tombstones"

    owner: Mapped[str] = mapped_column(String(128), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16), primary_key=True)
    item_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer)


ALL_TABLES: tuple[type[Base], ...] = (
    PairRow,
    SessionSummaryRow,
    DailySummaryRow,
    WeeklyDigestRow,
    EvidenceRow,
    ProfileItemRow,
    AuditRow,
    SyncStateRow,
    TombstoneRow,
)
"""Every table of personal memory (``forget(owner)`` empties all of them for the owner)."""
