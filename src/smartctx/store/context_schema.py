"""Tables of the context log (migration ``0001_context_log``, Alembic branch ``context``).

``contexts`` holds one row per (owner, context) with its optimistic-concurrency ``version``;
``slots`` is the append-only log of every slot added (eviction and summarization only change
``state``); ``slot_events`` records what happened to slots, ordered by ``seq``. The functions at
the end map core ``Slot`` / ``Event`` objects to rows and back.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from smartctx.core.slots import Event, EventKind, Slot, SlotKind, SlotState
from smartctx.store.base import Base

_TZ = sa.DateTime(timezone=True)

contexts = sa.Table(
    "contexts",
    Base.metadata,
    sa.Column("owner", sa.String(128), primary_key=True),
    sa.Column("context_id", sa.String(255), primary_key=True),
    sa.Column("version", sa.Integer(), nullable=False),
    sa.Column("budget", sa.Integer(), nullable=False),
    sa.Column("log_size", sa.Integer(), nullable=False),
    sa.Column("event_count", sa.Integer(), nullable=False),
    sa.Column("created_at", _TZ, nullable=False),
    sa.Column("updated_at", _TZ, nullable=False),
    sa.Column("metadata", sa.JSON(), nullable=False),
    sa.Index("ix_contexts_owner_updated", "owner", "updated_at"),
)

slots = sa.Table(
    "slots",
    Base.metadata,
    sa.Column("owner", sa.String(128), primary_key=True),
    sa.Column("context_id", sa.String(255), primary_key=True),
    sa.Column("slot_id", sa.String(255), primary_key=True),
    sa.Column("seq", sa.Integer(), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("priority", sa.Float(), nullable=False),
    sa.Column("source_id", sa.String(512), nullable=True),
    sa.Column("provenance", sa.JSON(), nullable=False),
    sa.Column("pinned", sa.Boolean(), nullable=False),
    sa.Column("repeat_count", sa.Integer(), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("tokens", sa.Integer(), nullable=False),
    sa.Column("text", sa.Text(), nullable=False),
    sa.Column("created_at", sa.String(64), nullable=True),
    sa.Column("metadata", sa.JSON(), nullable=False),
    # The recall vector of the slot's text (float32 bytes) and the embedder that made it
    # (migration 0009): a replica indexing a slot another replica logged reads it instead of
    # embedding the text again.
    sa.Column("vector", sa.LargeBinary(), nullable=True),
    sa.Column("vector_model", sa.String(64), nullable=True),
    sa.UniqueConstraint("owner", "context_id", "seq", name="uq_slots_owner_context_seq"),
    sa.Index("ix_slots_owner_slot_id", "owner", "slot_id"),
)

slot_events = sa.Table(
    "slot_events",
    Base.metadata,
    sa.Column("owner", sa.String(128), primary_key=True),
    sa.Column("context_id", sa.String(255), primary_key=True),
    sa.Column("seq", sa.Integer(), primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("slot_id", sa.String(255), nullable=False),
    sa.Column("detail", sa.JSON(), nullable=False),
)


# Rows <-> core objects ------------------------------------------------------------------------


def in_context(table: sa.Table, owner: str, context_id: str) -> sa.ColumnElement[bool]:
    """The rows of ``table`` that belong to this owner's context (every query filters owner)."""
    return sa.and_(table.c.owner == owner, table.c.context_id == context_id)


def slot_row(owner: str, context_id: str, slot: Slot) -> dict[str, Any]:
    """The ``slots`` row of a logged slot."""
    return {
        "owner": owner,
        "context_id": context_id,
        "slot_id": slot.id,
        "seq": slot.seq,
        "kind": slot.kind.value,
        "priority": slot.effective_priority,
        "source_id": slot.source_id,
        "provenance": list(slot.provenance),
        "pinned": slot.pinned,
        "repeat_count": slot.repeat_count,
        "state": slot.state.value,
        "tokens": slot.tokens,
        "text": slot.text,
        "created_at": slot.created_at,
        "metadata": dict(slot.metadata),
        "vector": None,
        "vector_model": None,
    }


def slot_from_row(row: Any) -> Slot:
    """The core slot of a ``slots`` row (inverse of :func:`slot_row`)."""
    return Slot(
        kind=SlotKind(row.kind),
        text=row.text,
        priority=float(row.priority),
        source_id=row.source_id,
        provenance=tuple(row.provenance or ()),
        pinned=bool(row.pinned),
        id=row.slot_id,
        repeat_count=int(row.repeat_count),
        state=SlotState(row.state),
        seq=int(row.seq),
        tokens=int(row.tokens),
        created_at=row.created_at,
        metadata=dict(row.metadata or {}),
    )


def event_row(owner: str, context_id: str, event: Event) -> dict[str, Any]:
    """The ``slot_events`` row of an event."""
    return {
        "owner": owner,
        "context_id": context_id,
        "seq": event.seq,
        "kind": event.kind.value,
        "slot_id": event.slot_id,
        "detail": dict(event.detail),
    }


def event_from_row(row: Any) -> Event:
    """The core event of a ``slot_events`` row (inverse of :func:`event_row`)."""
    return Event(
        kind=EventKind(row.kind), slot_id=row.slot_id, seq=row.seq, detail=dict(row.detail)
    )
