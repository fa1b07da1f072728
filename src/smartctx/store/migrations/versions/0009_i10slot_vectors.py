"""Context log: the recall vector of a slot's text beside the slot.

A replica that indexes for recall a slot another replica logged (two servers taking turns on a
conversation) read its text and embedded it again, a few milliseconds of CPU per turn. The
replica that logs a user message has its vector already (it embedded the message during the
turn), so it stores it with the slot (``vector``, float32 bytes) and names the embedder
(``vector_model``); a replica loading the slot takes the vector when it uses the same embedder.
Rows made before this revision have none (``NULL``): their texts are embedded as before.

Revision ID: 0009_i10vectors
Revises: 0001_context_log
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_i10vectors"
down_revision = "0001_context_log"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("slots") as batch:
        batch.add_column(sa.Column("vector", sa.LargeBinary(), nullable=True))
        batch.add_column(sa.Column("vector_model", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("slots") as batch:
        batch.drop_column("vector_model")
        batch.drop_column("vector")
