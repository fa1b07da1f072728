"""Hardening: A2A deliveries, which task answered each (owner, messageId), so a retried message
is applied once (``smartctx.service.delivery``); forget jobs, the owners whose forget has begun
and not yet reached every store, resumed at start-up (``smartctx.memory.forget_jobs``);
encrypted copies of pairs whose secrets were redacted (``smartctx.memory.vault``).

Revision ID: 0005_i11hard
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_i11hard"
down_revision = None
branch_labels = ("hardening",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "a2a_deliveries",
        sa.Column("owner", sa.String(255), nullable=False),
        sa.Column("message_id", sa.String(255), nullable=False),
        sa.Column("task_id", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("owner", "message_id", name="pk_a2a_deliveries"),
    )
    op.create_table(
        "forget_jobs",
        sa.Column("owner", sa.String(255), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("owner", name="pk_forget_jobs"),
    )
    op.create_table(
        "mem_pair_secrets",
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("pair_id", sa.String(64), nullable=False),
        sa.Column("user_cipher", sa.Text(), nullable=False),
        sa.Column("assistant_cipher", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("owner", "pair_id", name="pk_mem_pair_secrets"),
    )


def downgrade() -> None:
    op.drop_table("mem_pair_secrets")
    op.drop_table("forget_jobs")
    op.drop_table("a2a_deliveries")
