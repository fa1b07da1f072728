"""Agent long-term memory: the items of ``smartctx.agents.LongTermMemoryProvider``.

Revision ID: 0004_agent_memory
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_agent_memory"
down_revision = None
branch_labels = ("agent_memory",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent_memory",
        sa.Column("seq", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("item_id", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("thread", sa.String(128), nullable=False),
        sa.Column("provenance", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=True),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("seq", name="pk_agent_memory"),
        sa.UniqueConstraint("owner", "item_id", name="uq_agent_memory_owner_item"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_agent_memory_owner", "agent_memory", ["owner", "seq"])


def downgrade() -> None:
    op.drop_index("ix_agent_memory_owner", table_name="agent_memory")
    op.drop_table("agent_memory")
