"""Personal memory: an epoch beside the owner's change counter.

A forget deletes the counter's row, and the counter then starts again at 1: a version number
alone could name two different states of one owner. The epoch is a random token written when
the row is created, so ``(version, epoch)`` names one state and a replica may keep what it read
for that state (:class:`smartctx.memory.personal.PersonalMemory`'s snapshot cache). Rows made
before this revision have none (``NULL``) until their next forget.

Revision ID: 0008_i10snapshot
Revises: 0002_personal_memory
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_i10snapshot"
down_revision = "0002_personal_memory"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("mem_sync_state") as batch:
        batch.add_column(sa.Column("epoch", sa.String(32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("mem_sync_state") as batch:
        batch.drop_column("epoch")
