"""Context log: contexts, their append-only slot log and slot events.

Revision ID: 0001_context_log
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001_context_log"
down_revision = None
branch_labels = ("context",)
depends_on = None

_TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "contexts",
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("context_id", sa.String(255), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("budget", sa.Integer(), nullable=False),
        sa.Column("log_size", sa.Integer(), nullable=False),
        sa.Column("event_count", sa.Integer(), nullable=False),
        sa.Column("created_at", _TZ, nullable=False),
        sa.Column("updated_at", _TZ, nullable=False),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("owner", "context_id", name="pk_contexts"),
    )
    op.create_index("ix_contexts_owner_updated", "contexts", ["owner", "updated_at"])
    op.create_table(
        "slots",
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("context_id", sa.String(255), nullable=False),
        sa.Column("slot_id", sa.String(255), nullable=False),
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
        sa.PrimaryKeyConstraint("owner", "context_id", "slot_id", name="pk_slots"),
        sa.UniqueConstraint("owner", "context_id", "seq", name="uq_slots_owner_context_seq"),
    )
    op.create_index("ix_slots_owner_slot_id", "slots", ["owner", "slot_id"])
    op.create_table(
        "slot_events",
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("context_id", sa.String(255), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("slot_id", sa.String(255), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("owner", "context_id", "seq", name="pk_slot_events"),
    )


def downgrade() -> None:
    op.drop_table("slot_events")
    op.drop_index("ix_slots_owner_slot_id", table_name="slots")
    op.drop_table("slots")
    op.drop_index("ix_contexts_owner_updated", table_name="contexts")
    op.drop_table("contexts")
