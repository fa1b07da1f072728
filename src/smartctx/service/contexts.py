"""Live contexts: (owner, contextId) -> a persisted context window, held in memory while used.

``ContextRegistry`` is the one place the service reads and writes context windows:

- ``session(owner, id)`` holds the context's lock for one unit of work (an A2A turn, a memory-API
  write). On normal exit the window's pending changes are saved in one transaction (optimistic
  version check) and subscribers get the new events; if the body raises, nothing is saved and
  the in-memory window is dropped, so the next request reloads the last saved state — a failed
  or rejected request never changes what is stored.
- A cached window is revalidated against the stored version at the start of every session
  (one indexed query), so several replicas can share a database; on PostgreSQL a session also
  holds the context's advisory lock (:mod:`smartctx.store.context_lock`), so concurrent turns
  on one context through two replicas run one after the other instead of conflicting.
- Idle contexts leave memory after ``idle_timeout`` seconds (``sweep``, run periodically by the
  app); they are reloaded from the store on their next use.
- At most ``settings.max_live_contexts`` windows stay in memory: past that the least recently
  used (not in use, not watched) leave memory at once; they stay in the store.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from smartctx.core.clock import Clock, SystemClock
from smartctx.core.errors import Conflict, InvalidInput, NotFound
from smartctx.core.settings import Settings
from smartctx.core.slots import Event, Slot, SlotKind
from smartctx.service.windows import ContextOptions, WindowFactory, make_options
from smartctx.store import turn_probes
from smartctx.store.context_lock import ContextLock
from smartctx.store.context_log import ContextStore, CopyMark
from smartctx.window import AddResult, ContextWindow, Prompt, touched_by

Key = tuple[str, str]
_CLOSED: dict[str, Any] = {"type": "closed"}


def compact_snapshot(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The small snapshot carried in every A2A reply: usage, budget and counts per kind."""
    return {
        "budget": snapshot["budget"],
        "tokens_used": snapshot["tokens_used"],
        "tokens_free": snapshot.get("tokens_free", snapshot["budget"] - snapshot["tokens_used"]),
        "pinned_tokens": snapshot.get("pinned_tokens", 0),
        "version": snapshot.get("version", 0),
        "log_size": snapshot.get("log_size", 0),
        "counts": {kind: v["count"] for kind, v in snapshot.get("kinds", {}).items()},
    }


def describe_events(window: ContextWindow, events: list[Event]) -> list[dict[str, Any]]:
    """Events as JSON, each with the kind, source id and tokens of its slot (self-describing on
    the wire: a slot admitted and evicted in the same turn is in no snapshot)."""
    out: list[dict[str, Any]] = []
    for event in events:
        item = event.to_dict()
        try:
            slot = window.get(event.slot_id)
        except NotFound:
            slot = None
        if slot is not None:
            item["slot_kind"] = slot.kind.value
            item["source_id"] = slot.source_id
            item["tokens"] = slot.tokens
        out.append(item)
    return out


@dataclass
class LiveContext:
    """One context window in memory. Mutate it only inside ``ContextRegistry.session``."""

    owner: str
    context_id: str
    preset: str
    window: ContextWindow
    version: int
    last_used: datetime
    keep_recent: int = 4
    last_prompt: Prompt | None = None
    """What the model was sent at the last turn served from this process (not persisted)."""
    history: list[Any] | None = None
    """The agent messages of the last turns and ``turns``, the number of user turns so far: kept
    by the executor across turns, so a turn never re-reads the whole log (built once per load)."""
    turns: int = 0
    indexing: asyncio.Future[None] | None = None
    """The recall indexing started after the last turn (:mod:`smartctx.service.recall_index`),
    awaited before the next one."""

    def describe(self) -> dict[str, Any]:
        return {
            "context_id": self.context_id,
            "owner": self.owner,
            "preset": self.preset,
            "budget": self.window.budget,
            "keep_recent": self.keep_recent,
            "version": self.version,
        }

    def snapshot(self) -> dict[str, Any]:
        """The full snapshot plus the context's id, owner and preset."""
        return self.window.snapshot().to_dict() | {
            "context_id": self.context_id,
            "owner": self.owner,
            "preset": self.preset,
        }

    def prompt(self, query: str | None = None) -> dict[str, Any]:
        """The prompt the model would be sent now (messages, text, slots, tokens)."""
        return self.window.assemble(query).to_dict() | {"context_id": self.context_id}

    def add(self, slot: Slot) -> AddResult:
        if slot.kind in (SlotKind.USER, SlotKind.AGENT):
            self.history = None  # a message added outside a turn: rebuild the history once
        return self.window.add(slot)


@dataclass(eq=False)
class Subscription:
    """Live events of one context: an async iterator of JSON-ready dicts, first a snapshot."""

    key: Key
    queue: asyncio.Queue[dict[str, Any]] = field(default_factory=lambda: asyncio.Queue(1000))
    registry: ContextRegistry | None = None

    def push(self, item: dict[str, Any]) -> None:
        try:
            self.queue.put_nowait(item)
        except asyncio.QueueFull:
            self.close()

    def close(self) -> None:
        """Stop the subscription (idempotent); the iterator ends after queued items."""
        if self.registry is not None:
            self.registry._unsubscribe(self)
            self.registry = None
            while self.queue.full():
                self.queue.get_nowait()
            self.queue.put_nowait(_CLOSED)

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[dict[str, Any]]:
        while True:
            item = await self.queue.get()
            if item is _CLOSED:
                return
            yield item


class ContextRegistry:
    """Context windows of every owner, persisted in a :class:`ContextStore`."""

    def __init__(
        self,
        store: ContextStore,
        factory: WindowFactory,
        settings: Settings,
        *,
        clock: Clock | None = None,
        idle_timeout: float | None = None,
    ) -> None:
        self.store = store
        self._across = ContextLock(store.db)
        self.factory = factory
        self.settings = settings
        self.clock: Clock = clock or SystemClock()
        self.idle_timeout = settings.context_idle_timeout if idle_timeout is None else idle_timeout
        self._live: dict[Key, LiveContext] = {}
        self._locks: dict[Key, asyncio.Lock] = {}
        self._subs: dict[Key, set[Subscription]] = {}
        self.continued: list[Callable[[LiveContext, LiveContext], None]] = []
        """Called with (stale, reloaded) when a context held here was reloaded because another
        replica served it meanwhile and its stored log goes on from the stale copy's (no forget
        renumbered it), so what the copy built in this process can be carried over: its recall
        index (:func:`smartctx.service.recall_index.adopt_index`), its recent history
        (:func:`smartctx.service.executor.carry_history`)."""

    # --- options and reads -----------------------------------------------------------------

    def options(
        self,
        *,
        preset: str | None = None,
        budget: int | None = None,
        system_prompt: str | None = None,
        keep_recent: int | None = None,
    ) -> ContextOptions:
        """Validated options with the server's defaults."""
        return make_options(
            self.settings,
            preset=preset,
            budget=budget,
            system_prompt=system_prompt,
            keep_recent=keep_recent,
        )

    @property
    def live_count(self) -> int:
        """How many contexts are held in memory now."""
        return len(self._live)

    def is_live(self, owner: str, context_id: str) -> bool:
        return (owner, context_id) in self._live

    async def _load(self, owner: str, context_id: str) -> LiveContext | None:
        stored = await self.store.load(owner, context_id)
        if stored is None:
            return None
        meta = stored.info.metadata
        preset = str(meta.get("preset", "default"))
        keep = int(meta.get("keep_recent", self.settings.keep_recent))
        window = self.factory.restore(stored.log_slots, stored.events, stored.budget, preset, keep)
        return LiveContext(
            owner, context_id, preset, window, stored.version, self.clock.now(), keep
        )

    async def _reload(
        self, owner: str, context_id: str, stale: LiveContext | None
    ) -> LiveContext | None:
        """The context from the store. With ``stale``, this process's copy that another
        replica's turns outdated, only what was saved after it is read and the window is brought
        up to date from the copy's own slots (:meth:`ContextWindow.caught_up`), unless a forget
        renumbered the log meanwhile; then the :attr:`continued` callbacks pass on what the copy
        built here."""
        if stale is None:
            return await self._load(owner, context_id)
        live = await self._caught_up(stale)
        if live is None:
            live = await self._load(owner, context_id)
            if live is None or not _goes_on(stale.window, live.window):
                return live
        for callback in self.continued:
            callback(stale, live)
        return live

    async def _caught_up(self, stale: LiveContext) -> LiveContext | None:
        base = stale.window
        if not base.pending_changes().empty:
            return None
        since = await self.store.load_since(stale.owner, stale.context_id, _mark(base), touched_by)
        if since is None:
            return None
        meta = since.info.metadata
        preset = str(meta.get("preset", "default"))
        keep = int(meta.get("keep_recent", self.settings.keep_recent))
        if preset != stale.preset:
            return None
        try:
            window = self.factory.caught_up(
                base,
                since.changed_slots,
                since.new_slots,
                since.new_events,
                since.info.budget,
                preset,
                keep,
            )
        except InvalidInput:  # the parts do not fit together: read the context whole instead
            return None
        return LiveContext(
            stale.owner,
            stale.context_id,
            preset,
            window,
            since.info.version,
            self.clock.now(),
            keep,
        )

    async def open(self, owner: str, context_id: str) -> LiveContext:
        """The context (cached or loaded); ``NotFound`` if this owner has no such context.

        A cached window is revalidated against the stored version (one primary-key read) unless
        a turn of this process holds it: another replica may have served a later turn."""
        key = (owner, context_id)
        live = self._live.get(key)
        lock = self._locks.get(key)
        stale = None
        if (
            live is not None
            and not (lock is not None and lock.locked())
            and await self.store.version(owner, context_id) != live.version
        ):
            stale, live = self._live.pop(key, None), None
        if live is None:
            live = await self._reload(owner, context_id, stale)
            if live is None:
                raise NotFound(
                    f"no context {context_id!r} for owner {owner!r}", context_id=context_id
                )
            self._live.setdefault(key, live)
            live = self._live[key]
        live.last_used = self.clock.now()
        self._touch(key)
        return live

    async def list_contexts(self, owner: str) -> list[dict[str, Any]]:
        """The owner's stored contexts, most recently updated first."""
        infos = await self.store.list_contexts(owner)
        return [
            {
                "context_id": info.context_id,
                "preset": info.metadata.get("preset", "default"),
                "budget": info.budget,
                "version": info.version,
                "log_size": info.log_size,
                "event_count": info.event_count,
                "created_at": info.created_at.isoformat(),
                "updated_at": info.updated_at.isoformat(),
                "live": (owner, info.context_id) in self._live,
            }
            for info in infos
        ]

    # --- writes ----------------------------------------------------------------------------

    def _lock(self, key: Key) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())

    async def create(
        self, owner: str, context_id: str | None, options: ContextOptions
    ) -> LiveContext:
        """Create and persist a context; ``Conflict`` if it exists, ``BudgetExceeded`` if the
        system prompt does not fit the budget."""
        cid = context_id or uuid.uuid4().hex
        async with self._lock((owner, cid)):
            if (owner, cid) in self._live or await self.store.version(owner, cid) is not None:
                raise Conflict(f"context {cid!r} already exists", context_id=cid)
            live = self._new(owner, cid, options)
            await self._save(live)
            self._live[(owner, cid)] = live
            self._touch((owner, cid))
            return live

    def _new(self, owner: str, context_id: str, options: ContextOptions) -> LiveContext:
        window = self.factory.new(options)
        return LiveContext(
            owner, context_id, options.preset, window, 0, self.clock.now(), options.keep_recent
        )

    async def _save(self, live: LiveContext) -> None:
        if live.window.pending_changes().empty and live.version > 0:
            return
        live.version = await self.store.save(
            live.owner,
            live.context_id,
            live.window,
            live.version,
            metadata={"preset": live.preset, "keep_recent": live.keep_recent},
        )

    @asynccontextmanager
    async def session(
        self, owner: str, context_id: str, *, create: ContextOptions | None = None
    ) -> AsyncIterator[LiveContext]:
        """Exclusive use of a context for one unit of work; saved on success (see module doc).

        With ``create``, a missing context is created with those options; without it, a missing
        context raises ``NotFound``.
        """
        key = (owner, context_id)
        async with self._lock(key), self._across(owner, context_id):
            live, stale, missing = self._live.get(key), None, False
            if live is not None or turn_probes.pending(owner):
                # one statement: the version, and a turn's probes of the owner's other stores
                # (smartctx.store.turn_probes) also for a context this process does not hold
                version = await self.store.version(owner, context_id)
                missing = version is None  # under the context's lock: no one creates it now
                if live is not None and version != live.version:
                    stale, live = self._live.pop(key, None), None
            if live is None and not missing:
                live = await self._reload(owner, context_id, stale)
            if live is None:
                if create is None:
                    raise NotFound(
                        f"no context {context_id!r} for owner {owner!r}", context_id=context_id
                    )
                live = self._new(owner, context_id, create)
            start = live.window.version
            try:
                yield live
                await self._save(live)
            except BaseException:
                self._live.pop(key, None)
                raise
            live.last_used = self.clock.now()
            self._live[key] = live
            self._touch(key)
            self._publish(live, live.window.events_since(start))

    def _touch(self, key: Key) -> None:
        """Mark ``key`` most recently used, then let the least recently used windows past
        ``max_live_contexts`` leave memory (those in use or watched stay)."""
        live = self._live.pop(key, None)
        if live is not None:
            self._live[key] = live  # dicts keep insertion order: the end is the newest
        excess = len(self._live) - self.settings.max_live_contexts
        if excess <= 0:
            return
        for old in list(self._live):
            lock = self._locks.get(old)
            if old != key and not (lock is not None and lock.locked()) and old not in self._subs:
                del self._live[old]
                excess -= 1
                if excess == 0:
                    return

    def drop_owner(self, owner: str) -> int:
        """Drop every in-memory window of ``owner`` (nothing is deleted from the store; the next
        use reloads it); returns how many were dropped."""
        keys = [k for k in self._live if k[0] == owner]
        for key in keys:
            del self._live[key]
        return len(keys)

    async def forget_owner(self, owner: str) -> int:
        """Delete every context of ``owner`` from memory and the store; returns the contexts
        deleted. Live-event subscriptions of the owner are closed."""
        for key in [k for k in self._live if k[0] == owner]:
            del self._live[key]
        for key in [k for k in self._subs if k[0] == owner]:
            for sub in list(self._subs.get(key, ())):
                sub.close()
        return await self.store.delete_owner(owner)

    # --- live events -----------------------------------------------------------------------

    async def subscribe(self, owner: str, context_id: str) -> Subscription:
        """Subscribe to a context's events (``NotFound`` if it does not exist)."""
        live = await self.open(owner, context_id)
        sub = Subscription((owner, context_id), registry=self)
        sub.push({"type": "snapshot", "context_id": context_id, "snapshot": live.snapshot()})
        self._subs.setdefault(sub.key, set()).add(sub)
        return sub

    def _unsubscribe(self, sub: Subscription) -> None:
        subs = self._subs.get(sub.key)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._subs[sub.key]

    def _publish(self, live: LiveContext, events: list[Event]) -> None:
        subs = self._subs.get((live.owner, live.context_id))
        if not subs or not events:
            return
        item = {
            "type": "events",
            "context_id": live.context_id,
            "version": live.version,
            "events": describe_events(live.window, events),
            "snapshot": compact_snapshot(live.window.snapshot(0, slots=False).to_dict()),
        }
        for sub in list(subs):
            sub.push(dict(item))

    def close_streams(self) -> None:
        """End every live-event subscription (graceful shutdown)."""
        for subs in list(self._subs.values()):
            for sub in list(subs):
                sub.close()

    # --- idle expiry -----------------------------------------------------------------------

    def sweep(self) -> list[Key]:
        """Drop from memory the contexts idle for longer than ``idle_timeout`` (not those in use
        or watched); returns their keys. Their state is already persisted."""
        limit = self.clock.now() - timedelta(seconds=self.idle_timeout)
        gone: list[Key] = []
        for key, live in list(self._live.items()):
            lock = self._locks.get(key)
            busy = lock is not None and lock.locked()
            if live.last_used <= limit and not busy and key not in self._subs:
                del self._live[key]
                gone.append(key)
        for key, lock in list(self._locks.items()):
            if key not in self._live and not lock.locked():
                del self._locks[key]
        return gone


def _mark(window: ContextWindow) -> CopyMark:
    """Where ``window`` (saved) stands in its stored log."""
    size, count = window.log_size, window.event_count
    last_slot = window.log_page(size - 1, 1)[0].id if size else None
    last = window.events_since(count - 1)[0] if count else None
    return CopyMark(
        size, count, last_slot, None if last is None else (last.kind, last.slot_id, last.seq)
    )


def _goes_on(old: ContextWindow, new: ContextWindow) -> bool:
    """Whether ``new``'s log begins with ``old``'s (a forget renumbers it: ``old``'s last slot is
    then elsewhere or gone)."""
    size = old.log_size
    if size == 0:
        return True
    if new.log_size < size:
        return False
    return new.log_page(size - 1, 1)[0].id == old.log_page(size - 1, 1)[0].id
