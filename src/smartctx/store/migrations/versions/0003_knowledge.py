"""Knowledge base: document chunks with their vectors.

Revision ID: 0003_knowledge
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_knowledge"
down_revision = None
branch_labels = ("knowledge",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "kb_chunks",
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("source_id", sa.String(512), nullable=False),
        sa.Column("doc", sa.String(255), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("heading", sa.JSON(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("tokens", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=True),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("embedder", sa.String(64), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("owner", "source_id", name="pk_kb_chunks"),
    )
    op.create_index("ix_kb_chunks_owner_doc", "kb_chunks", ["owner", "doc", "position"])


def downgrade() -> None:
    op.drop_index("ix_kb_chunks_owner_doc", table_name="kb_chunks")
    op.drop_table("kb_chunks")
