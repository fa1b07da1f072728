"""Personal memory tiers: pairs, summaries, digests, profile, evidence, audit, sync state.

Revision ID: 0002_personal_memory
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_personal_memory"
down_revision = None
branch_labels = ("memory",)
depends_on = None

_TZ = sa.DateTime(timezone=True)


def _derived(*extra: sa.Column[object]) -> list[sa.Column[object]]:
    return [
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("id", sa.String(64), nullable=False),
        *extra,
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("sentences", sa.JSON(), nullable=False),
        sa.Column("created_at", _TZ, nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
    ]


def upgrade() -> None:
    op.create_table(
        "mem_pairs",
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("session_id", sa.String(128), nullable=False),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("user_text", sa.Text(), nullable=False),
        sa.Column("assistant_text", sa.Text(), nullable=False),
        sa.Column("route_family", sa.String(32), nullable=False),
        sa.Column("workflow_id", sa.String(128), nullable=False),
        sa.Column("sensitive", sa.Boolean(), nullable=False),
        sa.Column("summary_id", sa.String(64), nullable=True),
        sa.Column("created_at", _TZ, nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("owner", "id", name="pk_mem_pairs"),
    )
    op.create_index("ix_mem_pairs_session_id", "mem_pairs", ["session_id"])
    op.create_index("ix_mem_pairs_owner_seq", "mem_pairs", ["owner", "seq"])
    op.create_table(
        "mem_session_summaries",
        *_derived(
            sa.Column("session_id", sa.String(128), nullable=False),
            sa.Column("day", sa.String(10), nullable=False),
            sa.Column("source_pair_ids", sa.JSON(), nullable=False),
            sa.Column("daily_id", sa.String(64), nullable=True),
        ),
        sa.PrimaryKeyConstraint("owner", "id", name="pk_mem_session_summaries"),
    )
    op.create_table(
        "mem_daily_summaries",
        *_derived(
            sa.Column("day", sa.String(10), nullable=False),
            sa.Column("source_summary_ids", sa.JSON(), nullable=False),
            sa.Column("source_session_ids", sa.JSON(), nullable=False),
            sa.Column("source_pair_ids", sa.JSON(), nullable=False),
            sa.Column("weekly_id", sa.String(64), nullable=True),
        ),
        sa.PrimaryKeyConstraint("owner", "id", name="pk_mem_daily_summaries"),
        sa.UniqueConstraint("owner", "day", name="uq_mem_daily_summaries_owner"),
    )
    op.create_table(
        "mem_weekly_digests",
        *_derived(
            sa.Column("week", sa.String(10), nullable=False),
            sa.Column("source_summary_ids", sa.JSON(), nullable=False),
            sa.Column("source_session_ids", sa.JSON(), nullable=False),
            sa.Column("source_pair_ids", sa.JSON(), nullable=False),
        ),
        sa.PrimaryKeyConstraint("owner", "id", name="pk_mem_weekly_digests"),
        sa.UniqueConstraint("owner", "week", name="uq_mem_weekly_digests_owner"),
    )
    op.create_table(
        "mem_profile_evidence",
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("value", sa.String(256), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("pair_id", sa.String(64), nullable=True),
        sa.Column("session_id", sa.String(128), nullable=True),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", _TZ, nullable=False),
        sa.PrimaryKeyConstraint("owner", "id", name="pk_mem_profile_evidence"),
    )
    op.create_table(
        "mem_profile_items",
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("value", sa.String(256), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("evidence_days", sa.JSON(), nullable=False),
        sa.Column("source_candidate_ids", sa.JSON(), nullable=False),
        sa.Column("source_summary_ids", sa.JSON(), nullable=False),
        sa.Column("source_session_ids", sa.JSON(), nullable=False),
        sa.Column("source_pair_ids", sa.JSON(), nullable=False),
        sa.Column("updated_at", _TZ, nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("owner", "id", name="pk_mem_profile_items"),
        sa.UniqueConstraint("owner", "key", "value", name="uq_mem_profile_items_owner"),
    )
    op.create_table(
        "mem_audit",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("target", sa.String(256), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.Column("at", _TZ, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_mem_audit"),
    )
    op.create_index("ix_mem_audit_owner", "mem_audit", ["owner"])
    op.create_table(
        "mem_sync_state",
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("owner", name="pk_mem_sync_state"),
    )
    op.create_table(
        "mem_tombstones",
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("item_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("owner", "kind", "item_id", name="pk_mem_tombstones"),
    )


def downgrade() -> None:
    for name in (
        "mem_tombstones",
        "mem_sync_state",
        "mem_audit",
        "mem_profile_items",
        "mem_profile_evidence",
        "mem_weekly_digests",
        "mem_daily_summaries",
        "mem_session_summaries",
        "mem_pairs",
    ):
        op.drop_table(name)
