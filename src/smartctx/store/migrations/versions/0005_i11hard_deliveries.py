"""A2A deliveries: which task answered each (owner, messageId), so a retried message is
applied once (``smartctx.service.delivery``).

Revision ID: 0005_i11hard
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_i11hard"
down_revision = None
branch_labels = ("deliveries",)
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


def downgrade() -> None:
    op.drop_table("a2a_deliveries")
