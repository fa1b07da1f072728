"""Where the long-term memory provider keeps its items: in memory, or in the database.

Both stores implement :class:`MemoryStore` and pass the same contract tests:
- every call names an ``owner`` and sees only that owner's items;
- ``add`` assigns each item the next ``seq`` of the store (strictly increasing, never reused) and
  returns the stored copies; an item id already stored for the owner is skipped (idempotent);
- ``since(owner, seq)`` returns the owner's items with a larger ``seq``, in ``seq`` order, so a
  provider can follow new items incrementally;
- ``clear(owner)`` deletes every item of the owner and returns how many it deleted;
- ``count(owner)`` is how many items the owner has (providers use it to notice deletions);
- ``forget_items(owner, match)`` (both built-in stores; not part of the protocol) deletes the
  owner's items for which ``match(item)`` is true and returns them (privacy "forget" of one
  item);
- both are ``smartctx.memory`` forgetters (``name``, ``forget_owner(owner)``): register the
  store with ``PersonalMemory.add_forgetter`` and ``forget_owner`` empties it too.
The SQL store is one table, ``agent_memory`` (migration ``0004_agent_memory``); each call is one
transaction.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from sqlalchemy import (
    JSON,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    bindparam,
    delete,
    func,
    select,
    text,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, mapped_column

from smartctx.store import Base, Database, turn_probes
from smartctx.store.turn_probes import OWNER_PARAM, Probe


@dataclass(frozen=True, slots=True)
class MemoryItem:
    """One remembered thing.

    ``kind`` is ``"fact"`` (a statement the extractor recognised, e.g. "My employee number is
    48213") or ``"turn"`` (a whole user statement kept as a recall candidate). ``thread`` and
    ``provenance`` (the ids of the slots it came from) say where it was said; ``seq`` is assigned
    by the store.
    """

    id: str
    owner: str
    kind: str
    text: str
    thread: str = ""
    provenance: tuple[str, ...] = ()
    created_at: str | None = None
    seq: int = -1
    metadata: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class MemoryStore(Protocol):
    """Storage of memory items (see the module contract)."""

    async def add(self, items: Sequence[MemoryItem]) -> list[MemoryItem]: ...

    async def since(self, owner: str, seq: int) -> list[MemoryItem]: ...

    async def clear(self, owner: str) -> int: ...

    async def count(self, owner: str) -> int: ...

    async def state(self, owner: str) -> tuple[int, int]:
        """``(count, highest seq)`` of the owner's items in one read ((0, 0) when none): a
        reader that holds that many items up to that seq is up to date."""
        ...


class InMemoryMemoryStore:
    """A process-local store (the default). Safe for concurrent tasks of one event loop."""

    def __init__(self) -> None:
        self._items: list[MemoryItem] = []
        self._keys: set[tuple[str, str]] = set()
        self._seq = 0
        self._lock = asyncio.Lock()

    async def add(self, items: Sequence[MemoryItem]) -> list[MemoryItem]:
        async with self._lock:
            stored: list[MemoryItem] = []
            for item in items:
                if (item.owner, item.id) in self._keys:
                    continue
                self._seq += 1
                copy = replace(item, seq=self._seq, metadata=dict(item.metadata))
                self._items.append(copy)
                self._keys.add((item.owner, item.id))
                stored.append(copy)
            return stored

    async def since(self, owner: str, seq: int) -> list[MemoryItem]:
        return [i for i in self._items if i.owner == owner and i.seq > seq]

    async def clear(self, owner: str) -> int:
        async with self._lock:
            before = len(self._items)
            self._items = [i for i in self._items if i.owner != owner]
            self._keys = {k for k in self._keys if k[0] != owner}
            return before - len(self._items)

    async def count(self, owner: str) -> int:
        return sum(1 for i in self._items if i.owner == owner)

    async def state(self, owner: str) -> tuple[int, int]:
        mine = [i.seq for i in self._items if i.owner == owner]
        return len(mine), max(mine, default=0)

    async def forget_items(
        self, owner: str, match: Callable[[MemoryItem], bool]
    ) -> list[MemoryItem]:
        """Delete the owner's items for which ``match`` is true; returns them."""
        async with self._lock:
            gone = [i for i in self._items if i.owner == owner and match(i)]
            ids = {i.id for i in gone}
            self._items = [i for i in self._items if i.owner != owner or i.id not in ids]
            self._keys -= {(owner, item_id) for item_id in ids}
            return gone

    name = "agent_memory"

    async def forget_owner(self, owner: str) -> int:
        """``clear(owner)`` under the ``smartctx.memory`` forgetter protocol."""
        return await self.clear(owner)


class AgentMemoryRow(Base):
    """One memory item of the long-term memory provider."""

    __tablename__ = "agent_memory"
    __table_args__ = (
        UniqueConstraint("owner", "item_id", name="uq_agent_memory_owner_item"),
        Index("ix_agent_memory_owner", "owner", "seq"),
        {"sqlite_autoincrement": True},  # never reuse a seq, even after deletes
    )

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    owner: Mapped[str] = mapped_column(String(128))
    item_id: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(16))
    text: Mapped[str] = mapped_column(Text)
    thread: Mapped[str] = mapped_column(String(128), default="")
    provenance: Mapped[list[str]] = mapped_column(JSON, default=list)
    created_at: Mapped[str | None] = mapped_column(String(40), nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)


def _item(row: Any) -> MemoryItem:
    """The item of an ``agent_memory`` row: a mapped :class:`AgentMemoryRow`, or a row of a
    textual statement with the same names (its JSON columns may come back as text)."""
    return MemoryItem(
        id=row.item_id,
        owner=row.owner,
        kind=row.kind,
        text=row.text,
        thread=row.thread,
        provenance=tuple(_json(row.provenance) or ()),
        created_at=row.created_at,
        seq=row.seq,
        metadata=dict(_json(row.meta) or {}),
    )


_INSERT_ROWS = text(
    """
INSERT INTO agent_memory (owner, item_id, kind, text, thread, provenance, created_at, metadata)
SELECT r->>'owner', r->>'item_id', r->>'kind', r->>'text', r->>'thread', r->'provenance',
    r->>'created_at', r->'metadata'
FROM json_array_elements(CAST(:rows AS json)) WITH ORDINALITY AS e(r, n)
ORDER BY e.n
ON CONFLICT (owner, item_id) DO NOTHING
RETURNING seq, owner, item_id, kind, text, thread, provenance, created_at, metadata AS meta
"""
)
"""The items of :meth:`SqlMemoryStore._add_in_one_statement`: those already stored (or twice
in the batch) are skipped; ``seq`` is drawn in the rows' order."""


def _json(value: Any) -> Any:
    """A JSON column's value as returned by a textual statement (asyncpg gives ``json`` as
    text)."""
    return json.loads(value) if isinstance(value, str) else value


_STATE = select(func.count(), func.coalesce(func.max(AgentMemoryRow.seq), 0)).where(
    AgentMemoryRow.owner == bindparam("owner")
)
"""The owner's item count and last seq (built once: every turn reads it)."""
STATE_PROBE = Probe(
    "agent_memory_state",
    (
        select(func.count())
        .where(AgentMemoryRow.owner == bindparam(OWNER_PARAM))
        .scalar_subquery(),
        select(func.coalesce(func.max(AgentMemoryRow.seq), 0))
        .where(AgentMemoryRow.owner == bindparam(OWNER_PARAM))
        .scalar_subquery(),
    ),
    lambda values: (int(values[0] or 0), int(values[1] or 0)),
)
""":meth:`SqlMemoryStore.state` as a turn probe (:mod:`smartctx.store.turn_probes`)."""


class SqlMemoryStore:
    """Memory items in the ``agent_memory`` table of ``db`` (run ``await db.migrate()`` first)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(self, items: Sequence[MemoryItem]) -> list[MemoryItem]:
        try:
            return await self._add(items)
        except IntegrityError:
            # another writer stored one of the items meanwhile: re-read and skip it
            return await self._add(items)

    async def _add(self, items: Sequence[MemoryItem]) -> list[MemoryItem]:
        if not items:
            return []
        if not self.db.is_sqlite:
            return await self._add_in_one_statement(items)
        stored: list[AgentMemoryRow] = []
        async with self.db.session() as session:
            present: set[tuple[str, str]] = set()
            for owner in dict.fromkeys(i.owner for i in items):
                ids = [i.id for i in items if i.owner == owner]
                found = await session.scalars(
                    select(AgentMemoryRow.item_id).where(
                        AgentMemoryRow.owner == owner, AgentMemoryRow.item_id.in_(ids)
                    )
                )
                present.update((owner, item_id) for item_id in found)
            for item in items:  # in the given order, so seq follows it
                if (item.owner, item.id) in present:
                    continue
                present.add((item.owner, item.id))
                row = AgentMemoryRow(
                    owner=item.owner,
                    item_id=item.id,
                    kind=item.kind,
                    text=item.text,
                    thread=item.thread,
                    provenance=list(item.provenance),
                    created_at=item.created_at,
                    meta=dict(item.metadata),
                )
                session.add(row)
                await session.flush()  # assigns seq now: one insert per row, in order
                stored.append(row)
            out = [_item(row) for row in stored]
        return sorted(out, key=lambda i: i.seq)

    async def _add_in_one_statement(self, items: Sequence[MemoryItem]) -> list[MemoryItem]:
        """:meth:`add` on PostgreSQL: one ``INSERT ... SELECT ... ON CONFLICT DO NOTHING`` of
        the items as JSON rows, in their order (so ``seq`` follows it), returning those stored.
        One round trip where a transaction took BEGIN, a read of the present ids, an insert per
        item and COMMIT."""
        rows = [
            {
                "owner": i.owner,
                "item_id": i.id,
                "kind": i.kind,
                "text": i.text,
                "thread": i.thread,
                "provenance": list(i.provenance),
                "created_at": i.created_at,
                "metadata": dict(i.metadata),
            }
            for i in items
        ]
        async with self.db.atomic_core() as session:
            result = await session.execute(
                _INSERT_ROWS, {"rows": json.dumps(rows, ensure_ascii=False)}
            )
            out = [_item(row) for row in result]
        return sorted(out, key=lambda i: i.seq)

    async def since(self, owner: str, seq: int) -> list[MemoryItem]:
        async with self.db.session() as session:
            rows = await session.scalars(
                select(AgentMemoryRow)
                .where(AgentMemoryRow.owner == owner, AgentMemoryRow.seq > seq)
                .order_by(AgentMemoryRow.seq)
            )
            return [_item(row) for row in rows]

    async def clear(self, owner: str) -> int:
        async with self.db.session() as session:
            result = await session.execute(
                delete(AgentMemoryRow).where(AgentMemoryRow.owner == owner)
            )
            return int(getattr(result, "rowcount", 0) or 0)

    async def count(self, owner: str) -> int:
        async with self.db.read_core() as session:
            total = await session.scalar(
                select(func.count())
                .select_from(AgentMemoryRow)
                .where(AgentMemoryRow.owner == owner)
            )
            return int(total or 0)

    async def state(self, owner: str) -> tuple[int, int]:
        found = turn_probes.take(self.db, STATE_PROBE.kind, owner)  # read with the turn's start
        if found is not turn_probes.MISSING:
            count, top = found
            return count, top
        async with self.db.read_core() as session:
            row = (await session.execute(_STATE, {"owner": owner})).one()
            return int(row[0]), int(row[1])

    async def forget_items(
        self, owner: str, match: Callable[[MemoryItem], bool]
    ) -> list[MemoryItem]:
        """Delete the owner's items for which ``match`` is true (one transaction); returns them."""
        async with self.db.session() as session:
            rows = await session.scalars(
                select(AgentMemoryRow).where(AgentMemoryRow.owner == owner)
            )
            gone = [row for row in rows if match(_item(row))]
            if gone:
                await session.execute(
                    delete(AgentMemoryRow).where(
                        AgentMemoryRow.owner == owner,
                        AgentMemoryRow.seq.in_([row.seq for row in gone]),
                    )
                )
            return [_item(row) for row in gone]

    name = "agent_memory"

    async def forget_owner(self, owner: str) -> int:
        """``clear(owner)`` under the ``smartctx.memory`` forgetter protocol."""
        return await self.clear(owner)
