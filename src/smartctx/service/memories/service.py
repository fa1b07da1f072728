"""The one service layer under the memory API's HTTP routes, client, CLI and MCP tools.

``MemoryService(db)`` works on the long-term memory rows (``agent_memory``) plus the API's own
tables (:mod:`~smartctx.service.memories.tables`). Contract:
- every method takes the owner first and sees only that owner's rows;
- every write is one transaction: the item, its info row and its history entry together;
- ``update`` keeps history: the old and new text and metadata go to ``agent_memory_history``, the
  version rises, and the row is re-inserted under a new ``seq`` (same id), so every reader that
  follows the store by ``seq`` (the agent's recall, other replicas' indexes) sees the new text;
- ``add`` of a text already stored in the same scope (owner, agent, session, kind) changes
  nothing and returns the existing memory with event ``NONE``;
- ``get_all`` and export page by ``seq`` with a bounded page; search ranks with a per-owner hybrid
  index (:mod:`~smartctx.service.memories.index`) and re-reads its hits from the store, so a
  result is never stale or deleted;
- ``on_change(owner)`` is called after every write (the service drops its cached recall
  providers there, so conversations see the change).
Hot path: ``search`` costs one ``seq`` query plus the index search (linear in the owner's
memories, in a worker thread); embedding happens only for memories new to the index.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from smartctx.agents.memory_store import AgentMemoryRow
from smartctx.core.clock import Clock, SystemClock
from smartctx.core.embeddings import Embedder
from smartctx.core.errors import Conflict, InvalidInput, NotFound
from smartctx.service.memories.index import OwnerIndex, OwnerIndexes, Ranked
from smartctx.service.memories.inputs import memories_from
from smartctx.service.memories.records import (
    Memory,
    MemoryFilter,
    NewMemory,
    check_limit,
    check_metadata,
    check_text,
    now_iso,
)
from smartctx.service.memories.rows import history_row, joined, memory_of, read_memories
from smartctx.service.memories.tables import MemoryHistoryRow, MemoryInfoRow
from smartctx.store.db import Database

SCAN_LIMIT = 5000
"""Rows one listing call reads at most (filters on metadata may skip many)."""


class MemoryService:
    """Memories of every owner in ``db`` (see the module contract). No I/O in the constructor."""

    def __init__(
        self,
        db: Database,
        *,
        embedder: Callable[[], Embedder | None] | None = None,
        clock: Clock | None = None,
        on_change: Callable[[str], None] | None = None,
    ) -> None:
        self.db = db
        self.clock = clock or SystemClock()
        self.indexes = OwnerIndexes(embedder or (lambda: None))
        self.on_change = on_change

    def _now(self) -> str:
        return now_iso(self.clock.now())

    def _changed(self, owner: str) -> None:
        if self.on_change is not None:
            self.on_change(owner)

    # -- reading ------------------------------------------------------------------------------

    async def get(self, owner: str, memory_id: str) -> Memory:
        """The memory ``memory_id`` of ``owner``; ``NotFound`` when the owner has none."""
        async with self.db.session() as session:
            found = await read_memories(session, owner, [memory_id])
        if not found:
            raise NotFound(f"no memory {memory_id[:64]!r} for owner {owner!r}")
        return found[0]

    async def get_all(
        self,
        owner: str,
        flt: MemoryFilter | None = None,
        *,
        limit: int = 100,
        cursor: int = 0,
    ) -> tuple[list[Memory], int | None]:
        """A page of the owner's memories passing ``flt``, least recently written first (an
        update moves a memory to the end), after ``cursor`` (a
        ``seq``); returns the page and the cursor of the next page (``None`` at the end)."""
        flt = flt or MemoryFilter()
        limit = check_limit(limit)
        page: list[Memory] = []
        after, scanned = max(0, int(cursor)), 0
        while len(page) < limit and scanned < SCAN_LIMIT:
            query = joined().where(AgentMemoryRow.owner == owner, AgentMemoryRow.seq > after)
            if flt.session_id is not None:
                query = query.where(AgentMemoryRow.thread == flt.session_id)
            if flt.kinds:
                query = query.where(AgentMemoryRow.kind.in_(flt.kinds))
            if flt.agent_id is not None:
                query = query.where(MemoryInfoRow.agent_id == flt.agent_id)
            batch = min(SCAN_LIMIT - scanned, max(limit * 2, 100))
            async with self.db.session() as session:
                ordered = query.order_by(AgentMemoryRow.seq).limit(batch)
                rows = (await session.execute(ordered)).all()
            for position, (row, info) in enumerate(rows):
                memory = memory_of(row, info)
                after, scanned = memory.seq, scanned + 1
                if flt.matches(memory.facets()):
                    page.append(memory)
                    if len(page) == limit:
                        more = position < len(rows) - 1 or len(rows) == batch
                        return page, after if more else None
            if len(rows) < batch:
                return page, None
        return page, after

    async def history(self, owner: str, memory_id: str) -> list[dict[str, Any]]:
        """The changes of one memory, oldest first (mem0's history entries); a memory stored
        from a conversation before it was ever changed has one synthesised ``ADD`` entry.
        ``NotFound`` when neither the memory nor any history of it exists."""
        async with self.db.session() as session:
            rows = list(
                await session.scalars(
                    select(MemoryHistoryRow)
                    .where(MemoryHistoryRow.owner == owner, MemoryHistoryRow.item_id == memory_id)
                    .order_by(MemoryHistoryRow.seq)
                )
            )
            current = await read_memories(session, owner, [memory_id]) if not rows else []
        if rows:
            return [row.to_dict() for row in rows]
        if not current:
            raise NotFound(f"no memory {memory_id[:64]!r} for owner {owner!r}")
        m = current[0]
        return [
            {
                "id": None,
                "memory_id": m.id,
                "event": "ADD",
                "old_memory": None,
                "new_memory": m.text,
                "old_metadata": None,
                "new_metadata": dict(m.metadata),
                "created_at": m.created_at,
            }
        ]

    # -- search -------------------------------------------------------------------------------

    async def _synced(self, owner: str) -> OwnerIndex:
        """The owner's index, caught up with the store (caller holds no lock)."""
        idx = self.indexes.get(owner)
        async with idx.lock:
            async with self.db.session() as session:
                total = await session.scalar(
                    select(func.count())
                    .select_from(AgentMemoryRow)
                    .where(AgentMemoryRow.owner == owner)
                )
                if int(total or 0) < len(idx.items):
                    idx.reset()
                rows = await session.execute(
                    joined()
                    .where(AgentMemoryRow.owner == owner, AgentMemoryRow.seq > idx.seen)
                    .order_by(AgentMemoryRow.seq)
                )
                fresh = [memory_of(row, info) for row, info in rows.all()]
            if fresh:
                await asyncio.to_thread(idx.put, fresh)
        return idx

    async def search(
        self,
        owner: str,
        query: str,
        flt: MemoryFilter | None = None,
        *,
        limit: int = 10,
    ) -> list[tuple[Memory, Ranked]]:
        """The owner's relevant memories for ``query`` (BM25 and vectors fused), passing
        ``flt``, best first, each with its scores (see :meth:`OwnerIndex.search`)."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("search needs a non-empty query")
        if len(query) > 8000:
            raise InvalidInput("a search query is at most 8000 characters")
        flt = flt or MemoryFilter()
        limit = check_limit(limit, default=10)
        idx = await self._synced(owner)
        async with idx.lock:
            ranked = await asyncio.to_thread(idx.search, query, flt, limit)
        async with self.db.session() as session:
            current = {m.id: m for m in await read_memories(session, owner, [r.id for r in ranked])}
        return [(current[r.id], r) for r in ranked if r.id in current]

    # -- writing ------------------------------------------------------------------------------

    async def add(self, owner: str, memories: Sequence[NewMemory]) -> list[tuple[Memory, str]]:
        """Store ``memories`` (one transaction); returns each with its event: ``ADD``, or
        ``NONE`` when the same text is already stored in the same scope (or an imported id is
        taken). A concurrent writer storing the same id first makes it ``NONE`` on retry."""
        checked = [m.checked() for m in memories]
        if not checked:
            raise InvalidInput("nothing to add: give a text or at least one message")
        try:
            return await self._add(owner, checked)
        except IntegrityError:
            return await self._add(owner, checked)

    async def _add(self, owner: str, checked: Sequence[NewMemory]) -> list[tuple[Memory, str]]:
        now = self._now()
        out: list[tuple[Memory, str]] = []
        async with self.db.session() as session:
            for new in checked:
                existing = await self._same(session, owner, new)
                if existing is not None:
                    out.append((existing, "NONE"))
                    continue
                row = AgentMemoryRow(
                    owner=owner,
                    item_id=new.id or uuid.uuid4().hex,
                    kind=new.kind,
                    text=new.text,
                    thread=new.session_id or "",
                    provenance=list(new.provenance),
                    created_at=new.created_at or now,
                    meta=dict(new.metadata),
                )
                info = MemoryInfoRow(
                    owner=owner,
                    item_id=row.item_id,
                    agent_id=new.agent_id,
                    version=new.version,
                    updated_at=new.updated_at,
                    origin=dict(new.origin),
                )
                session.add_all([row, info])
                for past in new.history:
                    session.add(history_row(owner, row.item_id, past))
                event = "IMPORT" if new.history or new.origin.get("via") == "import" else "ADD"
                session.add(
                    MemoryHistoryRow(
                        owner=owner,
                        item_id=row.item_id,
                        event=event,
                        new_text=new.text,
                        new_metadata=dict(new.metadata),
                        at=now,
                    )
                )
                await session.flush()
                out.append((memory_of(row, info), "ADD"))
        self._changed(owner)
        return out

    async def remember(
        self,
        owner: str,
        messages: str | Sequence[Mapping[str, Any]],
        *,
        infer: bool = True,
        kind: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> list[tuple[Memory, str]]:
        """mem0's ``add``: a text or chat messages become memories (see
        :mod:`~smartctx.service.memories.inputs`); ``[]`` when nothing is worth remembering."""
        new = memories_from(
            messages,
            infer=infer,
            kind=kind,
            agent_id=agent_id,
            session_id=session_id,
            metadata=metadata,
        )
        return await self.add(owner, new) if new else []

    async def _same(self, session: AsyncSession, owner: str, new: NewMemory) -> Memory | None:
        """The stored memory a new one would repeat (same id, or same text and scope)."""
        if new.id is not None:
            found = await read_memories(session, owner, [new.id])
            return found[0] if found else None
        rows = await session.execute(
            joined().where(
                AgentMemoryRow.owner == owner,
                AgentMemoryRow.kind == new.kind,
                AgentMemoryRow.thread == (new.session_id or ""),
                AgentMemoryRow.text == new.text,
            )
        )
        for row, info in rows.all():
            memory = memory_of(row, info)
            if memory.agent_id == new.agent_id:
                return memory
        return None

    async def update(
        self,
        owner: str,
        memory_id: str,
        *,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Memory:
        """Change a memory's text and/or metadata (metadata is replaced, not merged), keeping
        the old values in its history; ``NotFound`` when the owner has no such memory."""
        new_text = check_text(text) if text is not None else None
        new_meta = check_metadata(metadata) if metadata is not None else None
        if new_text is None and new_meta is None:
            raise InvalidInput("update needs a new text or new metadata")
        now = self._now()
        async with self.db.session() as session:
            found = await session.execute(
                joined().where(AgentMemoryRow.owner == owner, AgentMemoryRow.item_id == memory_id)
            )
            pair = found.first()
            if pair is None:
                raise NotFound(f"no memory {memory_id[:64]!r} for owner {owner!r}")
            old, info = pair
            before = memory_of(old, info)
            gone = await session.execute(
                delete(AgentMemoryRow).where(AgentMemoryRow.seq == old.seq)
            )
            if not getattr(gone, "rowcount", 0):
                raise Conflict(
                    f"memory {memory_id[:64]!r} changed while it was being updated: try again"
                )
            await session.flush()
            row = AgentMemoryRow(
                owner=owner,
                item_id=old.item_id,
                kind=old.kind,
                text=new_text if new_text is not None else old.text,
                thread=old.thread,
                provenance=list(old.provenance or ()),
                created_at=old.created_at,
                meta=new_meta if new_meta is not None else dict(old.meta or {}),
            )
            session.add(row)
            if info is None:
                info = MemoryInfoRow(
                    owner=owner, item_id=old.item_id, version=1, origin={"via": "conversation"}
                )
                session.add(info)
            info.version = before.version + 1
            info.updated_at = now
            session.add(
                MemoryHistoryRow(
                    owner=owner,
                    item_id=old.item_id,
                    event="UPDATE",
                    old_text=before.text,
                    new_text=row.text,
                    old_metadata=dict(before.metadata),
                    new_metadata=dict(row.meta),
                    at=now,
                )
            )
            await session.flush()
            after = memory_of(row, info)
        self._changed(owner)
        return after

    async def delete(self, owner: str, memory_id: str, *, forget: bool = False) -> Memory:
        """Delete one memory; returns it. Its history keeps a ``DELETE`` entry with the old
        text, unless ``forget``: then the history goes too and no copy of the text is left."""
        [gone] = await self._delete(owner, [memory_id], missing_ok=False, forget=forget)
        return gone

    async def delete_all(self, owner: str, flt: MemoryFilter | None = None) -> int:
        """Delete every memory of the owner passing ``flt``, a page (one transaction) at a
        time; returns how many."""
        flt = flt or MemoryFilter()
        deleted = 0
        cursor: int | None = 0
        while cursor is not None:
            page, cursor = await self.get_all(owner, flt, limit=500, cursor=cursor)
            if page:
                ids = [m.id for m in page]
                deleted += len(await self._delete(owner, ids, missing_ok=True))
        return deleted

    async def _delete(
        self, owner: str, ids: Sequence[str], *, missing_ok: bool, forget: bool = False
    ) -> list[Memory]:
        now = self._now()
        async with self.db.session() as session:
            gone = await read_memories(session, owner, ids)
            if not gone and not missing_ok:
                raise NotFound(f"no memory {ids[0][:64]!r} for owner {owner!r}")
            found = [m.id for m in gone]
            await session.execute(
                delete(AgentMemoryRow).where(
                    AgentMemoryRow.owner == owner, AgentMemoryRow.item_id.in_(found)
                )
            )
            await session.execute(
                delete(MemoryInfoRow).where(
                    MemoryInfoRow.owner == owner, MemoryInfoRow.item_id.in_(found)
                )
            )
            if forget:
                await session.execute(
                    delete(MemoryHistoryRow).where(
                        MemoryHistoryRow.owner == owner, MemoryHistoryRow.item_id.in_(found)
                    )
                )
                gone_history: list[Memory] = []
            else:
                gone_history = gone
            session.add_all(
                MemoryHistoryRow(
                    owner=owner,
                    item_id=m.id,
                    event="DELETE",
                    old_text=m.text,
                    old_metadata=dict(m.metadata),
                    at=now,
                )
                for m in gone_history
            )
        idx = self.indexes.get(owner)
        async with idx.lock:
            idx.discard(found)
        self._changed(owner)
        return gone

    # -- export -------------------------------------------------------------------------------

    async def export(
        self, owner: str, flt: MemoryFilter | None = None, *, page: int = 500
    ) -> AsyncIterator[tuple[Memory, list[dict[str, Any]]]]:
        """Every memory passing ``flt`` with its history, in ``get_all`` order, a page at a time."""
        cursor: int | None = 0
        while cursor is not None:
            memories, cursor = await self.get_all(owner, flt, limit=page, cursor=cursor)
            if not memories:
                continue
            async with self.db.session() as session:
                rows = await session.scalars(
                    select(MemoryHistoryRow)
                    .where(
                        MemoryHistoryRow.owner == owner,
                        MemoryHistoryRow.item_id.in_([m.id for m in memories]),
                    )
                    .order_by(MemoryHistoryRow.seq)
                )
                history: dict[str, list[dict[str, Any]]] = {}
                for row in rows:
                    history.setdefault(row.item_id, []).append(row.to_dict())
            for memory in memories:
                yield memory, history.get(memory.id, [])


__all__ = ["SCAN_LIMIT", "MemoryService"]
