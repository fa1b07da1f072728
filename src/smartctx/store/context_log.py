"""``ContextStore``: the persisted context log (DESIGN.md section 3).

The store speaks core objects only (``Slot``, ``Event``); it never imports the engine. A window
is saved through the small :class:`SavableWindow` protocol (``pending_changes()`` and
``mark_saved()``, which :class:`smartctx.window.ContextWindow` implements) and rebuilt by the
caller from what :meth:`ContextStore.load` returns::

    stored = await store.load(owner, context_id)
    window = ContextWindow.restore(stored.log_slots, stored.events, stored.budget, counter=...)
    ...  # add slots
    version = await store.save(owner, context_id, window, expected_version=stored.version)

Contracts: the log is append-only (eviction and summarization update ``state``; the only deletion
paths are :meth:`delete_context`, :meth:`delete_owner` and :meth:`forget_slots`, for privacy
"forget"); every query
filters by ``owner``; one save is one transaction; ``save`` raises ``Conflict`` (with the current
version in ``detail``) when ``expected_version`` is stale, and a new context is saved with
``expected_version=0``. Rows are ordered by ``seq`` columns, never by time.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from smartctx.core.clock import Clock, SystemClock
from smartctx.core.errors import Conflict, InvalidInput, NotFound
from smartctx.core.slots import Event, Slot, SlotState
from smartctx.store import turn_probes
from smartctx.store.context_schema import (
    contexts,
    event_from_row,
    event_row,
    in_context,
    slot_events,
    slot_from_row,
    slot_row,
    slots,
)
from smartctx.store.db import Database


class SlotVectors(Protocol):
    """Recall vectors kept with slots (see migration ``0009_i10vectors``): ``vector_of`` gives
    a new slot's vector to store (float32 bytes, or None to store none), ``learn`` takes those
    that loaded slots carry, made by the embedder ``name``. Called from the event loop: both
    must be cheap (dictionary work, no embedding)."""

    name: str

    def vector_of(self, slot: Slot) -> bytes | None: ...

    def learn(self, texts: Sequence[str], vectors: Sequence[bytes]) -> None: ...


class ChangeSet(Protocol):
    """What a window reports as unsaved (``smartctx.window.Changes`` satisfies it)."""

    @property
    def budget(self) -> int: ...
    @property
    def new_slots(self) -> list[Slot]: ...
    @property
    def updated_slots(self) -> list[Slot]: ...
    @property
    def new_events(self) -> list[Event]: ...
    @property
    def log_size(self) -> int: ...
    @property
    def event_count(self) -> int: ...


class SavableWindow(Protocol):
    """A window the store can save (``smartctx.window.ContextWindow`` satisfies it)."""

    def pending_changes(self) -> Any: ...
    def mark_saved(self, changes: Any) -> None: ...


@dataclass(frozen=True, slots=True)
class CopyMark:
    """Where a copy of a context stands: its log size and event count, the id of its last slot
    and ``(kind, slot_id, seq)`` of its last event (None for none)."""

    log_size: int
    event_count: int
    last_slot: str | None
    last_event: tuple[Any, str, int] | None


@dataclass(frozen=True, slots=True)
class ContextInfo:
    """One context's row (no slots)."""

    owner: str
    context_id: str
    version: int
    budget: int
    log_size: int
    event_count: int
    created_at: datetime
    updated_at: datetime
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StoredContext:
    """A loaded context: its row plus its whole log and events, in ``seq`` order."""

    info: ContextInfo
    log_slots: list[Slot]
    events: list[Event]

    @property
    def version(self) -> int:
        return self.info.version

    @property
    def budget(self) -> int:
        return self.info.budget


@dataclass(frozen=True, slots=True)
class StoredSince:
    """What was saved after a copy of a context (see :meth:`ContextStore.load_since`)."""

    info: ContextInfo
    changed_slots: list[Slot]
    """The copy's slots as stored now, those the new events may have changed."""
    new_slots: list[Slot]
    new_events: list[Event]


_VERSION = sa.select(contexts.c.version).where(
    contexts.c.owner == sa.bindparam("owner"), contexts.c.context_id == sa.bindparam("context_id")
)
"""A context's version (built once: every turn reads it)."""
_ROW = sa.select(contexts).where(
    contexts.c.owner == sa.bindparam("owner"), contexts.c.context_id == sa.bindparam("context_id")
)
_EVENTS_FROM = (
    sa.select(slot_events)
    .where(
        slot_events.c.owner == sa.bindparam("owner"),
        slot_events.c.context_id == sa.bindparam("context_id"),
        slot_events.c.seq >= sa.bindparam("seq"),
    )
    .order_by(slot_events.c.seq)
)
_SLOTS_FROM = (
    sa.select(slots)
    .where(
        slots.c.owner == sa.bindparam("owner"),
        slots.c.context_id == sa.bindparam("context_id"),
        sa.or_(
            slots.c.seq >= sa.bindparam("seq"),
            slots.c.slot_id.in_(sa.bindparam("ids", expanding=True)),
        ),
    )
    .order_by(slots.c.seq)
)
"""What :meth:`ContextStore.load_since` reads (built once: a replica reads them every turn when
another one served the turn before)."""


async def _current_version(
    s: AsyncSession | AsyncConnection, owner: str, context_id: str
) -> int | None:
    value = (await s.execute(_VERSION, {"owner": owner, "context_id": context_id})).scalar()
    return int(value) if value is not None else None


def _sizes(changes: ChangeSet, now: datetime) -> dict[str, Any]:
    """The ``contexts`` columns every save sets (besides the version and metadata)."""
    return {
        "budget": changes.budget,
        "log_size": changes.log_size,
        "event_count": changes.event_count,
        "updated_at": now,
    }


def _json_rows(rows: Iterable[dict[str, Any]]) -> str:
    return json.dumps(list(rows), ensure_ascii=False)


def _hex_vectors(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with their ``vector`` bytes in PostgreSQL's hex text form (``\\x0a1b...``), the
    form ``json_populate_recordset`` reads into a ``bytea`` column."""
    for row in rows:
        if row.get("vector") is not None:
            row["vector"] = "\\x" + row["vector"].hex()
    return rows


def _columns(table: sa.Table) -> str:
    return ", ".join(table.c.keys())


def _rows_from_json(table: sa.Table, param: str, guard: str = "") -> str:
    """A data-modifying part that inserts ``table``'s rows given as a JSON array in ``param``
    (``guard``: a condition they are inserted under)."""
    columns = _columns(table)
    where = f"\n    WHERE {guard}" if guard else ""
    return (
        f"INSERT INTO {table.name} ({columns})\n    SELECT {columns}\n"
        f"    FROM json_populate_recordset(NULL::{table.name}, CAST(:{param} AS json)){where}"
    )


_MOVED = "EXISTS (SELECT 1 FROM bump)"
_ONE_STATEMENT_SAVE = sa.text(
    f"""
WITH bump AS (
    UPDATE contexts
    SET version = :new_version, budget = :budget, log_size = :log_size,
        event_count = :event_count, updated_at = :updated_at,
        metadata = COALESCE(CAST(:metadata AS json), contexts.metadata)
    WHERE owner = :owner AND context_id = :context_id AND version = :expected
    RETURNING version
), new_slots AS (
    {_rows_from_json(slots, "new_slots", _MOVED)}
), changed_slots AS (
    UPDATE slots SET state = u.state, repeat_count = u.repeat_count, pinned = u.pinned
    FROM json_to_recordset(CAST(:updated_slots AS json))
        AS u(slot_id varchar, state varchar, repeat_count integer, pinned boolean)
    WHERE slots.owner = :owner AND slots.context_id = :context_id
        AND slots.slot_id = u.slot_id AND {_MOVED}
), new_events AS (
    {_rows_from_json(slot_events, "new_events", _MOVED)}
)
SELECT count(*) FROM bump
"""
)
"""An existing context's save on PostgreSQL (see :meth:`ContextStore._save_in_one_statement`);
the data-modifying parts all run, and each writes only when ``bump`` moved the version."""

_ONE_STATEMENT_CREATE = sa.text(
    f"""
WITH created AS (
    INSERT INTO contexts (owner, context_id, version, budget, log_size, event_count,
                          created_at, updated_at, metadata)
    VALUES (:owner, :context_id, 1, :budget, :log_size, :event_count, :updated_at,
            :updated_at, COALESCE(CAST(:metadata AS json), CAST('{{}}' AS json)))
    RETURNING version
), new_slots AS (
    {_rows_from_json(slots, "new_slots")}
), new_events AS (
    {_rows_from_json(slot_events, "new_events")}
)
SELECT count(*) FROM created
"""
)
"""A new context's first save on PostgreSQL: the context row, its slots and its events in one
statement, which fails whole (a context created meanwhile: the primary key refuses it)."""


def _info_from(row: Any) -> ContextInfo:
    return ContextInfo(
        owner=row.owner,
        context_id=row.context_id,
        version=int(row.version),
        budget=int(row.budget),
        log_size=int(row.log_size),
        event_count=int(row.event_count),
        created_at=row.created_at,
        updated_at=row.updated_at,
        metadata=dict(row.metadata or {}),
    )


class ContextStore:
    """Persisted context windows of every owner in one database. Safe to share across tasks."""

    def __init__(
        self, db: Database, *, clock: Clock | None = None, vectors: SlotVectors | None = None
    ) -> None:
        self.db = db
        self.clock: Clock = clock or SystemClock()
        self.vectors = vectors
        """Recall vectors stored with new slots and handed on from loaded ones (none if None)."""
        self._probe_statements: dict[tuple[str, ...], sa.Select[Any]] = {}

    def _rows(self, owner: str, context_id: str, new: Sequence[Slot]) -> list[dict[str, Any]]:
        """The ``slots`` rows of ``new``, with their recall vectors when :attr:`vectors` has
        them."""
        rows = [slot_row(owner, context_id, x) for x in new]
        if self.vectors is not None:
            name = self.vectors.name
            for row, slot in zip(rows, new, strict=True):
                vector = self.vectors.vector_of(slot)
                if vector is not None:
                    row["vector"], row["vector_model"] = vector, name
        return rows

    def _learn(self, rows: Iterable[Any]) -> None:
        """Hand the vectors of loaded rows made by :attr:`vectors`' embedder to it."""
        if self.vectors is None:
            return
        name = self.vectors.name
        found = [(r.text, bytes(r.vector)) for r in rows if r.vector_model == name and r.vector]
        if found:
            self.vectors.learn([t for t, _ in found], [v for _, v in found])

    async def load(self, owner: str, context_id: str) -> StoredContext | None:
        """The context's row, log and events, or None if this owner has no such context."""
        async with self.db.session() as s:
            row = (await s.execute(self._ctx_query(owner, context_id))).first()
            if row is None:
                return None
            slot_rows = await s.execute(
                sa.select(slots).where(in_context(slots, owner, context_id)).order_by(slots.c.seq)
            )
            event_rows = await s.execute(
                sa.select(slot_events)
                .where(in_context(slot_events, owner, context_id))
                .order_by(slot_events.c.seq)
            )
            slot_list = list(slot_rows)
            log = [slot_from_row(r) for r in slot_list]
            events = [event_from_row(r) for r in event_rows]
        self._learn(slot_list)
        return StoredContext(info=_info_from(row), log_slots=log, events=events)

    async def load_since(
        self,
        owner: str,
        context_id: str,
        copy: CopyMark,
        touched: Callable[[Sequence[Event]], Iterable[str]],
    ) -> StoredSince | None:
        """What was saved after ``copy`` (a copy of the context as stored at some version): the
        context's row, the slots and events appended since, and the copy's slots the new events
        name (``touched(new events)``) as stored now. Three reads of what changed instead of the
        whole log. None when the context is gone, or when the stored log no longer goes on from
        the copy: a forget renumbers the log, so the copy's last slot or last event is then not at
        its place (read the context whole then)."""
        size, count = copy.log_size, copy.event_count
        key = {"owner": owner, "context_id": context_id}
        async with self.db.read_core() as s:
            row = (await s.execute(_ROW, key)).first()
            if row is None:
                return None
            info = _info_from(row)
            event_rows = await s.execute(_EVENTS_FROM, {**key, "seq": max(count - 1, 0)})
            events = [event_from_row(r) for r in event_rows]
            if count and (
                not events or (events[0].kind, events[0].slot_id, events[0].seq) != copy.last_event
            ):
                return None
            new_events = events[1:] if count else events
            ids = sorted(set(touched(new_events)))
            slot_rows = list(
                await s.execute(_SLOTS_FROM, {**key, "seq": max(size - 1, 0), "ids": ids})
            )
            found = [slot_from_row(r) for r in slot_rows]
        wanted = set(ids)
        last = [x for x in found if x.seq == size - 1]
        if size and [x.id for x in last] != [copy.last_slot]:
            return None
        new_slots = [x for x in found if x.seq >= size]
        if (info.log_size, info.event_count) != (size + len(new_slots), count + len(new_events)):
            return None
        self._learn(r for r in slot_rows if r.seq >= size)
        return StoredSince(
            info=info,
            changed_slots=[x for x in found if x.seq < size and x.id in wanted],
            new_slots=new_slots,
            new_events=new_events,
        )

    async def save(
        self,
        owner: str,
        context_id: str,
        window: SavableWindow,
        expected_version: int,
        *,
        metadata: dict[str, Any] | None = None,
    ) -> int:
        """Persist the window's pending changes in one transaction; returns the new version.

        Marks the changes saved on the window only after the commit. Raises ``Conflict`` if the
        stored version is not ``expected_version`` (the window is then left pending).
        """
        changes = window.pending_changes()
        version = await self.save_changes(
            owner, context_id, changes, expected_version, metadata=metadata
        )
        window.mark_saved(changes)
        return version

    async def save_changes(
        self,
        owner: str,
        context_id: str,
        changes: ChangeSet,
        expected_version: int,
        *,
        metadata: dict[str, Any] | None = None,
    ) -> int:
        """Like :meth:`save`, for a change set rather than a window."""
        if expected_version < 0:
            raise InvalidInput(f"expected_version must be >= 0, got {expected_version}")
        try:
            if not self.db.is_sqlite and not (expected_version == 0 and changes.updated_slots):
                await self._save_in_one_statement(
                    owner, context_id, changes, expected_version, metadata
                )
            else:
                async with self.db.session() as s:
                    await self._bump(s, owner, context_id, changes, expected_version, metadata)
                    await self._write(s, owner, context_id, changes)
        except IntegrityError as exc:
            current = await self.version(owner, context_id)
            raise self._conflict(owner, context_id, expected_version, current) from exc
        return expected_version + 1

    async def _save_in_one_statement(
        self,
        owner: str,
        context_id: str,
        changes: ChangeSet,
        expected: int,
        metadata: dict[str, Any] | None,
    ) -> None:
        """The save of a context as one statement (PostgreSQL): the version's compare-and-swap
        (for a new context, ``expected`` 0: its row's insert) and the new slots, changed slots
        and new events, each written only when the swap took place. One round trip where the
        transaction took six (BEGIN, four writes, COMMIT); standing alone, it commits or fails
        whole."""
        values: dict[str, Any] = {
            "owner": owner,
            "context_id": context_id,
            **_sizes(changes, self.clock.now()),
            "metadata": None if metadata is None else json.dumps(dict(metadata)),
            "new_slots": _json_rows(_hex_vectors(self._rows(owner, context_id, changes.new_slots))),
            "new_events": _json_rows(event_row(owner, context_id, e) for e in changes.new_events),
        }
        statement = _ONE_STATEMENT_CREATE  # a new context: every slot is new
        if expected > 0:
            statement = _ONE_STATEMENT_SAVE
            values["expected"], values["new_version"] = expected, expected + 1
            values["updated_slots"] = _json_rows(
                {
                    "slot_id": x.id,
                    "state": x.state.value,
                    "repeat_count": x.repeat_count,
                    "pinned": x.pinned,
                }
                for x in changes.updated_slots
            )
        async with self.db.atomic_core() as s:
            moved = (await s.execute(statement, values)).scalar_one()
            if not moved:
                current = await _current_version(s, owner, context_id)
                raise self._conflict(owner, context_id, expected, current)

    async def _bump(
        self,
        s: AsyncSession,
        owner: str,
        context_id: str,
        changes: ChangeSet,
        expected: int,
        metadata: dict[str, Any] | None,
    ) -> None:
        now = self.clock.now()
        values = _sizes(changes, now)
        if metadata is not None:
            values["metadata"] = dict(metadata)
        if expected == 0:
            values.setdefault("metadata", {})
            await s.execute(
                sa.insert(contexts).values(
                    owner=owner, context_id=context_id, version=1, created_at=now, **values
                )
            )
            return
        result = await s.execute(
            sa.update(contexts)
            .where(in_context(contexts, owner, context_id), contexts.c.version == expected)
            .values(version=expected + 1, **values)
        )
        if getattr(result, "rowcount", 0) != 1:
            current = await _current_version(s, owner, context_id)
            raise self._conflict(owner, context_id, expected, current)

    async def _write(
        self, s: AsyncSession, owner: str, context_id: str, changes: ChangeSet
    ) -> None:
        if changes.new_slots:
            await s.execute(sa.insert(slots), self._rows(owner, context_id, changes.new_slots))
        if changes.updated_slots:
            stmt = (
                sa.update(slots)
                .where(
                    slots.c.owner == sa.bindparam("b_owner"),
                    slots.c.context_id == sa.bindparam("b_context"),
                    slots.c.slot_id == sa.bindparam("b_slot"),
                )
                .values(
                    state=sa.bindparam("b_state"),
                    repeat_count=sa.bindparam("b_repeat"),
                    pinned=sa.bindparam("b_pinned"),
                )
            )
            await s.execute(
                stmt,
                [
                    {
                        "b_owner": owner,
                        "b_context": context_id,
                        "b_slot": x.id,
                        "b_state": x.state.value,
                        "b_repeat": x.repeat_count,
                        "b_pinned": x.pinned,
                    }
                    for x in changes.updated_slots
                ],
            )
        if changes.new_events:
            await s.execute(
                sa.insert(slot_events),
                [event_row(owner, context_id, e) for e in changes.new_events],
            )

    @staticmethod
    def _conflict(owner: str, context_id: str, expected: int, current: int | None) -> Conflict:
        return Conflict(
            f"context {context_id!r} is at version {current or 0}, not {expected}: "
            "reload it and apply the change again",
            owner=owner,
            context_id=context_id,
            expected_version=expected,
            current_version=current or 0,
        )

    @staticmethod
    def _ctx_query(owner: str, context_id: str) -> sa.Select[Any]:
        return sa.select(contexts).where(in_context(contexts, owner, context_id))

    async def version(self, owner: str, context_id: str) -> int | None:
        """The stored version of a context, or None if it does not exist. Inside a
        :func:`~smartctx.store.turn_probes.probing` block of ``owner``, the same statement
        answers the block's probes."""
        probes = turn_probes.pending(owner)
        if not probes:
            async with self.db.read_core() as s:
                return await _current_version(s, owner, context_id)
        statement, params = self._probing(probes), {"owner": owner, "context_id": context_id}
        for probe in probes:
            params.update(probe.params)
        async with self.db.read_core() as s:
            row = (await s.execute(statement, params)).one()
        turn_probes.answer(self.db, owner, probes, row[1:])
        return int(row[0]) if row[0] is not None else None

    def _probing(self, probes: tuple[turn_probes.Probe, ...]) -> sa.Select[Any]:
        """The version read with ``probes``' columns (built once per set of probes)."""
        key = tuple(p.kind for p in probes)
        statement = self._probe_statements.get(key)
        if statement is None:
            columns = [c for p in probes for c in p.columns]
            statement = sa.select(_VERSION.scalar_subquery(), *columns)
            self._probe_statements[key] = statement
        return statement

    async def info(self, owner: str, context_id: str) -> ContextInfo:
        """The context's row; ``NotFound`` if this owner has no such context."""
        async with self.db.session() as s:
            row = (await s.execute(self._ctx_query(owner, context_id))).first()
        if row is None:
            raise NotFound(f"no context {context_id!r}")
        return _info_from(row)

    async def list_contexts(self, owner: str) -> list[ContextInfo]:
        """The owner's contexts, most recently updated first (ties by id)."""
        async with self.db.session() as s:
            rows = await s.execute(
                sa.select(contexts)
                .where(contexts.c.owner == owner)
                .order_by(contexts.c.updated_at.desc(), contexts.c.context_id)
            )
            return [_info_from(r) for r in rows]

    async def get_slot(self, owner: str, slot_id: str, context_id: str | None = None) -> Slot:
        """One logged slot of this owner (optionally within one context); ``NotFound`` if none."""
        query = sa.select(slots).where(slots.c.owner == owner, slots.c.slot_id == slot_id)
        if context_id is not None:
            query = query.where(slots.c.context_id == context_id)
        async with self.db.session() as s:
            row = (await s.execute(query.order_by(slots.c.context_id).limit(1))).first()
        if row is None:
            raise NotFound(f"no slot {slot_id!r}")
        return slot_from_row(row)

    async def count_slots(
        self, owner: str, context_id: str, states: Sequence[SlotState] | None = None
    ) -> int:
        """How many slots the context's log holds (optionally only in ``states``), by SQL count."""
        query = (
            sa.select(sa.func.count())
            .select_from(slots)
            .where(in_context(slots, owner, context_id))
        )
        if states is not None:
            query = query.where(slots.c.state.in_([s.value for s in states]))
        async with self.db.session() as s:
            return int((await s.execute(query)).scalar_one())

    async def delete_context(self, owner: str, context_id: str) -> bool:
        """Delete a context with its slots and events (privacy "forget"); False if absent."""
        async with self.db.session() as s:
            for table in (slot_events, slots):
                await s.execute(sa.delete(table).where(in_context(table, owner, context_id)))
            result = await s.execute(
                sa.delete(contexts).where(in_context(contexts, owner, context_id))
            )
        return bool(getattr(result, "rowcount", 0))

    async def delete_owner(self, owner: str) -> int:
        """Delete every context, slot and event of ``owner``; returns the contexts deleted."""
        async with self.db.session() as s:
            for table in (slot_events, slots):
                await s.execute(sa.delete(table).where(table.c.owner == owner))
            result = await s.execute(sa.delete(contexts).where(contexts.c.owner == owner))
        return int(getattr(result, "rowcount", 0))

    async def forget_slots(
        self, owner: str, match: Callable[[Slot], bool]
    ) -> list[tuple[str, Slot]]:
        """Delete every logged slot of ``owner`` for which ``match(slot)`` is true, with its
        events (privacy "forget" of one item); returns the ``(context_id, slot)`` pairs deleted.

        Each touched context is rewritten in the same transaction so it still restores: the
        remaining slots and events are renumbered ``0..n-1`` in their order, ``log_size`` and
        ``event_count`` follow, and its ``version`` is bumped, so every cached window of it
        (in this process or another replica) is reloaded before its next use, and a save based
        on the old version gets ``Conflict``. Deleted slots' ids may still appear in the
        provenance of remaining slots (ids carry no content).
        """
        deleted: list[tuple[str, Slot]] = []
        async with self.db.session() as s:
            rows = await s.execute(
                sa.select(slots)
                .where(slots.c.owner == owner)
                .order_by(slots.c.context_id, slots.c.seq)
            )
            doomed: dict[str, set[str]] = {}
            for row in rows:
                slot = slot_from_row(row)
                if match(slot):
                    doomed.setdefault(row.context_id, set()).add(slot.id)
                    deleted.append((row.context_id, slot))
            for context_id, slot_ids in doomed.items():
                await self._rewrite_without(s, owner, context_id, slot_ids)
        return deleted

    async def _rewrite_without(
        self, s: AsyncSession, owner: str, context_id: str, slot_ids: set[str]
    ) -> None:
        where_slots = in_context(slots, owner, context_id)
        where_events = in_context(slot_events, owner, context_id)
        slot_rows = [
            dict(r._mapping)
            for r in await s.execute(sa.select(slots).where(where_slots).order_by(slots.c.seq))
        ]
        event_rows = [
            dict(r._mapping)
            for r in await s.execute(
                sa.select(slot_events).where(where_events).order_by(slot_events.c.seq)
            )
        ]
        kept_slots = [r for r in slot_rows if r["slot_id"] not in slot_ids]
        kept_events = [r for r in event_rows if r["slot_id"] not in slot_ids]
        await s.execute(sa.delete(slot_events).where(where_events))
        await s.execute(sa.delete(slots).where(where_slots))
        for seq, row in enumerate(kept_slots):
            row["seq"] = seq
        for seq, row in enumerate(kept_events):
            row["seq"] = seq
        if kept_slots:
            await s.execute(sa.insert(slots), kept_slots)
        if kept_events:
            await s.execute(sa.insert(slot_events), kept_events)
        await s.execute(
            sa.update(contexts)
            .where(in_context(contexts, owner, context_id))
            .values(
                version=contexts.c.version + 1,
                log_size=len(kept_slots),
                event_count=len(kept_events),
                updated_at=self.clock.now(),
            )
        )
