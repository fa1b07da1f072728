"""Alembic environment: runs on the connection handed in by ``Database.migrate``."""

from __future__ import annotations

from alembic import context

from smartctx.store.base import Base

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - smartctx always passes its connection
    raise RuntimeError("run migrations through smartctx.store.Database.migrate()")

context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
