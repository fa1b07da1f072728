"""Storage: schema, repositories and migrations (async SQLAlchemy; SQLite first)."""

from smartctx.store.base import Base
from smartctx.store.db import Database

__all__ = ["Base", "Database"]
