"""Knowledge base: every owner with stored chunks has a change token.

Revision ``0006_i12api`` created ``kb_versions`` empty, and a token is written with each later
write (``kb_version.renew``), so an owner whose documents were stored before it had chunks and
no token. This revision gives each such owner one. From here on "no token" means "nothing
stored", which lets a server skip reading the chunks of an owner who never stored a document
(every new owner's first turn did that read).

Revision ID: 0010_i10kbtoken
Revises: 0006_i12api
"""

from __future__ import annotations

import uuid

import sqlalchemy as sa
from alembic import op

revision = "0010_i10kbtoken"
down_revision = "0006_i12api"
branch_labels = None
depends_on = None


def upgrade() -> None:
    connection = op.get_bind()
    owners = connection.execute(
        sa.text(
            "SELECT DISTINCT owner FROM kb_chunks "
            "WHERE owner NOT IN (SELECT owner FROM kb_versions)"
        )
    ).scalars()
    rows = [{"owner": owner, "token": uuid.uuid4().hex} for owner in owners]
    if rows:
        connection.execute(
            sa.text("INSERT INTO kb_versions (owner, token) VALUES (:owner, :token)"), rows
        )


def downgrade() -> None:
    """Nothing to undo: the tokens are valid tokens of stored documents."""
