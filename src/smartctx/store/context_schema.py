"""Tables of the context log (migration ``0001_context_log``, Alembic branch ``context``).

``contexts`` holds one row per (owner, context) with its optimistic-concurrency ``version``;
``slots`` is the append-only log of every slot added (eviction and summarization only change
``state``); ``slot_events`` records what happened to slots, ordered by ``seq``.
"""

from __future__ import annotations

import sqlalchemy as sa

from smartctx.store.base import Base

_TZ = sa.DateTime(timezone=True)

contexts = sa.Table(
    "contexts",
    Base.metadata,
    sa.Column("owner", sa.String(128), primary_key=True),
    sa.Column("context_id", sa.String(255), primary_key=True),
    sa.Column("version", sa.Integer(), nullable=False),
    sa.Column("budget", sa.Integer(), nullable=False),
    sa.Column("log_size", sa.Integer(), nullable=False),
    sa.Column("event_count", sa.Integer(), nullable=False),
    sa.Column("created_at", _TZ, nullable=False),
    sa.Column("updated_at", _TZ, nullable=False),
    sa.Column("metadata", sa.JSON(), nullable=False),
    sa.Index("ix_contexts_owner_updated", "owner", "updated_at"),
)

slots = sa.Table(
    "slots",
    Base.metadata,
    sa.Column("owner", sa.String(128), primary_key=True),
    sa.Column("context_id", sa.String(255), primary_key=True),
    sa.Column("slot_id", sa.String(255), primary_key=True),
    sa.Column("seq", sa.Integer(), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("priority", sa.Float(), nullable=False),
    sa.Column("source_id", sa.String(512), nullable=True),
    sa.Column("provenance", sa.JSON(), nullable=False),
    sa.Column("pinned", sa.Boolean(), nullable=False),
    sa.Column("repeat_count", sa.Integer(), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("tokens", sa.Integer(), nullable=False),
    sa.Column("text", sa.Text(), nullable=False),
    sa.Column("created_at", sa.String(64), nullable=True),
    sa.Column("metadata", sa.JSON(), nullable=False),
    sa.UniqueConstraint("owner", "context_id", "seq", name="uq_slots_owner_context_seq"),
    sa.Index("ix_slots_owner_slot_id", "owner", "slot_id"),
)

slot_events = sa.Table(
    "slot_events",
    Base.metadata,
    sa.Column("owner", sa.String(128), primary_key=True),
    sa.Column("context_id", sa.String(255), primary_key=True),
    sa.Column("seq", sa.Integer(), primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("slot_id", sa.String(255), nullable=False),
    sa.Column("detail", sa.JSON(), nullable=False),
)
