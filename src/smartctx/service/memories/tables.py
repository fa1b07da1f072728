"""What the memory API keeps beside the ``agent_memory`` rows (migration ``0005_i12api``).

- ``agent_memory_info``: per item, the agent scope, a version (1 when added, +1 per update), the
  time of the last update and the item's origin (how it arrived: ``{"via": "api"}``, or an
  import's provenance). Items the agent stored from a conversation have no row: they read as
  version 1 with origin ``{"via": "conversation"}``.
- ``agent_memory_history``: one row per change (``ADD``, ``UPDATE``, ``DELETE``, ``IMPORT``) with
  the text and metadata before and after, ordered by ``seq``.
Both are owner-scoped and emptied with the owner (``OWNER_TABLES`` of the personal-memory API).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from smartctx.store import Base

INFO_TABLE = "agent_memory_info"
HISTORY_TABLE = "agent_memory_history"


class MemoryInfoRow(Base):
    """Scope, version and origin of one memory item."""

    __tablename__ = INFO_TABLE

    owner: Mapped[str] = mapped_column(String(128), primary_key=True)
    item_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    agent_id: Mapped[str | None] = mapped_column(String(128), nullable=True)
    version: Mapped[int] = mapped_column(Integer, default=1)
    updated_at: Mapped[str | None] = mapped_column(String(40), nullable=True)
    origin: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class MemoryHistoryRow(Base):
    """One change of one memory item."""

    __tablename__ = HISTORY_TABLE
    __table_args__ = (
        Index("ix_agent_memory_history_owner_item", "owner", "item_id", "seq"),
        {"sqlite_autoincrement": True},
    )

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    owner: Mapped[str] = mapped_column(String(128))
    item_id: Mapped[str] = mapped_column(String(64))
    event: Mapped[str] = mapped_column(String(16))
    old_text: Mapped[str | None] = mapped_column(Text, nullable=True)
    new_text: Mapped[str | None] = mapped_column(Text, nullable=True)
    old_metadata: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    new_metadata: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    at: Mapped[str] = mapped_column(String(40))

    def to_dict(self) -> dict[str, Any]:
        """mem0's history entry shape, plus the metadata before and after."""
        return {
            "id": self.seq,
            "memory_id": self.item_id,
            "event": self.event,
            "old_memory": self.old_text,
            "new_memory": self.new_text,
            "old_metadata": self.old_metadata,
            "new_metadata": self.new_metadata,
            "created_at": self.at,
        }


__all__ = ["HISTORY_TABLE", "INFO_TABLE", "MemoryHistoryRow", "MemoryInfoRow"]
