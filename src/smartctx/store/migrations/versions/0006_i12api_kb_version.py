"""Knowledge base: a per-owner change token, renewed by every write, so a running server notices.

Revision ID: 0006_i12api
Revises: 0003_knowledge
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_i12api"
down_revision = "0003_knowledge"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "kb_versions",
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("token", sa.String(32), nullable=False),
        sa.PrimaryKeyConstraint("owner", name="pk_kb_versions"),
    )


def downgrade() -> None:
    op.drop_table("kb_versions")
