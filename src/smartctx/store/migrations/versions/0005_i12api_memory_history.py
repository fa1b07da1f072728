"""Memory API: scopes, origin and version of agent memory items, and their change history.

Revision ID: 0005_i12api
Revises: 0004_agent_memory
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_i12api"
down_revision = "0004_agent_memory"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent_memory_info",
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("item_id", sa.String(64), nullable=False),
        sa.Column("agent_id", sa.String(128), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.String(40), nullable=True),
        sa.Column("origin", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("owner", "item_id", name="pk_agent_memory_info"),
    )
    op.create_table(
        "agent_memory_history",
        sa.Column("seq", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("item_id", sa.String(64), nullable=False),
        sa.Column("event", sa.String(16), nullable=False),
        sa.Column("old_text", sa.Text(), nullable=True),
        sa.Column("new_text", sa.Text(), nullable=True),
        sa.Column("old_metadata", sa.JSON(), nullable=True),
        sa.Column("new_metadata", sa.JSON(), nullable=True),
        sa.Column("at", sa.String(40), nullable=False),
        sa.PrimaryKeyConstraint("seq", name="pk_agent_memory_history"),
        sqlite_autoincrement=True,
    )
    op.create_index(
        "ix_agent_memory_history_owner_item", "agent_memory_history", ["owner", "item_id", "seq"]
    )


def downgrade() -> None:
    op.drop_index("ix_agent_memory_history_owner_item", table_name="agent_memory_history")
    op.drop_table("agent_memory_history")
    op.drop_table("agent_memory_info")
