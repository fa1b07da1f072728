"""``ContextWindow``: the context engine (DESIGN.md section 2). Pure, synchronous, deterministic.

Contract of :meth:`ContextWindow.add`:

1. the slot is copied (the caller's object is never touched nor kept) and its tokens are counted
   once, on its rendered form (:func:`~smartctx.window.render.render_content`) plus the fixed
   ``message_overhead``: the sum of active tokens is what :meth:`assemble` sends;
2. admission: an exact (normalised text) or semantic duplicate of an active slot of the same
   kind (user with user, agent with agent: never across kinds) is *merged* (user, agent,
   tool_log: the survivor's ``repeat_count`` rises and its recency is refreshed, so it counts as
   the newest) or *refused* (rag_doc, memory, system, summary);
   a ``rag_doc`` with the ``source_id`` of an active one is refused too. Either way the new slot
   is logged with state ``merged`` / ``refused``;
3. pinned slots (system slots always; the current user turn while its turn lasts) are never
   dropped, summarized or evicted. If the pinned slots would exceed the budget, ``add`` raises
   :class:`~smartctx.core.errors.BudgetExceeded` and nothing changes (no log entry, no event);
4. while over its *limit* the funnel runs; if its stages cannot make the window fit, the window
   falls back to :class:`~smartctx.window.stages.EvictLowestPriority` (or ``EvictOldest`` for a
   funnel that ignores pins), so the window always fits after ``add``. An unpinned slot larger
   than the free room is therefore admitted and then evicted at once.

The recall reserve. The limit is the budget, unless a recaller is attached and
``recall_ratio > 0``: then ``reserve = int(recall_ratio * budget)`` and the limit is
``budget - reserve``, so :meth:`ContextWindow.assemble` always has at least the reserve free for
recalled slots. The exact rule after every ``add``:

- ``tokens_used <= budget - reserve`` whenever the pinned slots alone fit in ``budget - reserve``;
- otherwise pinned slots use the reserve: every unpinned slot has left the window and
  ``tokens_used == pinned_tokens <= budget`` (``BudgetExceeded`` is still defined against the
  full ``budget``, never against the limit);
- a funnel that ignores pins (FIFO) always reaches ``tokens_used <= budget - reserve``.

Without a recaller (or with ``recall_ratio == 0``) the reserve is 0 and the limit is the budget.

Nothing in the add path scans the window: the dedup indexes are dicts plus a bounded ring of
recent embeddings, the victim comes from a heap, the token total is maintained incrementally.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from smartctx.core.embeddings import Embedder, Vector
from smartctx.core.errors import BudgetExceeded, InvalidInput, NotFound
from smartctx.core.recall import Recaller
from smartctx.core.slots import Event, EventKind, Slot, SlotKind, SlotState
from smartctx.core.tokens import TokenCounter
from smartctx.window.admission import MERGE_KINDS, AdmissionIndex, Duplicate
from smartctx.window.focus import TurnFocus
from smartctx.window.persist import Changes, ChangeTracker, rebuild_state
from smartctx.window.recall import recall_archived
from smartctx.window.render import Prompt, build_prompt, order_slots
from smartctx.window.snapshot import Snapshot
from smartctx.window.stages import EvictLowestPriority, EvictOldest, Stage, default_funnel
from smartctx.window.state import WindowState, clone
from smartctx.window.summarizer import SUMMARY_PREFIX, Summarizer

Listener = Callable[[list[Event]], None]


@dataclass(frozen=True, slots=True)
class AddResult:
    """What ``add`` did: a copy of the stored slot (with seq, tokens, state), the events caused
    (admission and any funnel events, in order) and whether the slot entered the window."""

    slot: Slot
    events: list[Event]
    admitted: bool


class ContextWindow:
    """The active slots of one context inside a token budget, plus the log of every slot added.

    Not thread-safe: one owner (a request handler holding the context's lock) at a time.
    ``embedder=None`` disables semantic deduplication (exact deduplication stays on).
    ``semantic_window`` bounds the semantic check to the most recent N embeddings per kind group.
    ``recaller`` + ``recall_ratio`` set the recall reserve (see the module docstring);
    ``recall_k`` caps how many ranked candidates one :meth:`assemble` considers (the recall
    fills the free room by tokens, best first, so set it high enough to fill the reserve).
    """

    def __init__(
        self,
        budget: int,
        *,
        counter: TokenCounter,
        funnel: Sequence[Stage] | None = None,
        embedder: Embedder | None = None,
        dedup_threshold: float = 0.92,
        summarizer: Summarizer | None = None,
        recaller: Recaller | None = None,
        recall_ratio: float = 0.3,
        recall_k: int = 256,
        semantic_window: int = 256,
        message_overhead: int = 0,
        focus: TurnFocus | None = None,
    ) -> None:
        if budget <= 0:
            raise InvalidInput(f"budget must be a positive number of tokens, got {budget}")
        if not 0.0 <= recall_ratio <= 1.0:
            raise InvalidInput(f"recall_ratio must be within 0..1, got {recall_ratio}")
        self.funnel: list[Stage] = list(funnel) if funnel is not None else default_funnel()
        self.ignores_pins = any(stage.ignores_pins for stage in self.funnel)
        self._fallback: Stage = EvictOldest() if self.ignores_pins else EvictLowestPriority()
        self.recaller = recaller
        self.recall_ratio = recall_ratio
        if recall_k < 0:
            raise InvalidInput(f"recall_k must be >= 0, got {recall_k}")
        self.recall_k = recall_k
        self.focus = focus
        admission = AdmissionIndex(
            embedder=embedder, threshold=dedup_threshold, capacity=semantic_window
        )
        self._state = WindowState(
            budget,
            counter=counter,
            embedder=embedder,
            admission=admission,
            summarizer=summarizer,
            message_overhead=message_overhead,
        )
        self._state.limit = budget - self.reserve
        self._tracker = ChangeTracker()
        self._listeners: list[Listener] = []

    # read-only views ----------------------------------------------------------------------------

    @property
    def budget(self) -> int:
        return self._state.budget

    @property
    def reserve(self) -> int:
        """Tokens kept free for recall: ``int(recall_ratio * budget)`` with a recaller, else 0."""
        if self.recaller is None or self.recall_ratio <= 0:
            return 0
        return int(self.recall_ratio * self._state.budget)

    @property
    def limit(self) -> int:
        """What the funnel brings the active slots under: ``budget - reserve``."""
        return self._state.limit

    @property
    def tokens_used(self) -> int:
        """Tokens of the active slots (maintained incrementally)."""
        return self._state.tokens_used

    @property
    def pinned_tokens(self) -> int:
        return self._state.pinned_tokens

    @property
    def version(self) -> int:
        """Grows with every mutation batch (it is the number of events so far)."""
        return len(self._state.events)

    @property
    def log(self) -> list[Slot]:
        """Copies of every slot ever added (and every summary made), in ``seq`` order."""
        return [s.copy() for s in self._state.log]

    def log_page(self, offset: int, limit: int) -> list[Slot]:
        """Copies of the logged slots with ``seq`` in ``offset .. offset + limit - 1``."""
        return [s.copy() for s in self._state.log[max(0, offset) : max(0, offset) + limit]]

    @property
    def log_size(self) -> int:
        """How many slots the log holds."""
        return len(self._state.log)

    @property
    def events(self) -> list[Event]:
        """Every event so far, in ``seq`` order (treat as read-only)."""
        return list(self._state.events)

    @property
    def event_count(self) -> int:
        """How many events there are so far."""
        return len(self._state.events)

    def events_since(self, start: int) -> list[Event]:
        """The events after the first ``start`` (``start`` from :attr:`version`); costs only
        the events returned, not the history."""
        return self._state.events[start:]

    @property
    def active(self) -> list[Slot]:
        """Copies of the active slots, in ``seq`` order."""
        return [s.copy() for s in self._state.active.values()]

    def recall_copies(self, slots: Iterable[Slot]) -> list[Slot]:
        """Those of the archived ``slots`` recall ranks: the earliest copy of each text. A
        later copy of a text (a knowledge chunk archived again) is logged but never a
        candidate, so a recaller need not index it."""
        is_copy = self._state.is_recall_copy
        return [slot for slot in slots if is_copy(slot.id)]

    def archived_recall_copies(self) -> list[Slot]:
        """Copies of the archived slots recall ranks (:meth:`recall_copies` of the whole
        archive), in ``seq`` order, without copying the rest of the log."""
        st = self._state
        chosen = (st.by_id[i] for i in st.recall_first.values())
        return [s.copy() for s in sorted(chosen, key=lambda s: s.seq)]

    def get(self, slot_id: str) -> Slot:
        """A copy of the logged slot ``slot_id``; ``NotFound`` if this window never had it."""
        slot = self._state.by_id.get(slot_id)
        if slot is None:
            raise NotFound(f"no slot {slot_id!r} in this context")
        return slot.copy()

    def recency(self, slot_id: str) -> int:
        """The recency rank of a slot (seq of its latest admitted/merged event)."""
        return self._state.recency.get(slot_id, -1)

    def add_listener(self, callback: Listener) -> Callable[[], None]:
        """Call ``callback(events)`` after every mutation batch; returns a function removing it.

        Callbacks run synchronously after the window is consistent; their errors propagate.
        """
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback)

    # mutations ----------------------------------------------------------------------------------

    def add(self, slot: Slot) -> AddResult:
        """Add one slot (see the module docstring for the full contract)."""
        self._validate([slot])
        start = len(self._state.events)
        try:
            return self._add(slot, None)
        finally:
            self._notify(start)

    def add_many(self, slots: Iterable[Slot]) -> list[AddResult]:
        """Add slots in order, embedding all of them in one batch first (fast ingest).

        Equivalent to calling :meth:`add` for each; if one raises ``BudgetExceeded``, the slots
        before it stay added and the error propagates. Listeners are called once.
        """
        batch = list(slots)
        self._validate(batch)
        vectors = self._state.admission.embed(batch)
        start = len(self._state.events)
        try:
            return [self._add(slot, vectors.get(slot.id)) for slot in batch]
        finally:
            self._notify(start)

    def unpin(self, slot_id: str) -> list[Event]:
        """Unpin an active non-system slot (its turn is over); no-op if it is not pinned.

        If pinned slots had used the recall reserve, the funnel then runs back under the limit
        (its events follow the ``unpinned`` one)."""
        slot = self._state.active.get(slot_id)
        if slot is None:
            raise NotFound(f"no active slot {slot_id!r} in this context")
        if slot.kind is SlotKind.SYSTEM:
            raise InvalidInput("system slots are always pinned")
        if not slot.pinned:
            return []
        start = len(self._state.events)
        self._state.set_pinned(slot, False)
        self._state.emit(EventKind.UNPINNED, slot_id)
        self._run_funnel()
        self._notify(start)
        return self._state.events[start:]

    def end_turn(self) -> list[Event]:
        """Unpin every pinned non-system slot (the turn is over); with a
        :class:`~smartctx.window.focus.TurnFocus`, archive what only this turn needed (see
        :mod:`smartctx.window.focus`); then, as :meth:`unpin`, the funnel runs if the window is
        over its limit."""
        start = len(self._state.events)
        pinned = sorted((self._state.active[i] for i in self._state.pinned), key=lambda s: s.seq)
        for slot in pinned:
            if slot.kind is not SlotKind.SYSTEM:
                self._state.set_pinned(slot, False)
                self._state.emit(EventKind.UNPINNED, slot.id)
        if self.focus is not None:
            self.focus.apply(self._state)
        self._run_funnel()
        self._notify(start)
        return self._state.events[start:]

    def revise_summary(self, summary_id: str, text: str) -> list[Event]:
        """Replace the active summary ``summary_id`` with a new summary slot holding ``text``
        (an abstractive rewrite, for example by a chat model, of what the summary replaced).

        The new slot keeps the old one's provenance and notes ``revises`` in its metadata; the
        old summary is archived as ``summarized`` into it (it stays in the log, so the revision
        is auditable and reversible). ``text`` gets the summary prefix when it lacks it. If the
        revision is larger than the free room, the funnel runs as after any add. ``NotFound``
        for an unknown id, ``InvalidInput`` for a slot that is not an active summary or empty
        text.
        """
        st = self._state
        old = st.by_id.get(summary_id)
        if old is None:
            raise NotFound(f"no slot with id {summary_id!r} in this window")
        if old.kind is not SlotKind.SUMMARY or summary_id not in st.active or old.pinned:
            raise InvalidInput(f"slot {summary_id!r} is not an active, unpinned summary")
        body = text.strip()
        if not body:
            raise InvalidInput("a revised summary needs non-empty text")
        if not body.startswith(SUMMARY_PREFIX.strip()):
            body = SUMMARY_PREFIX + body
        start = len(st.events)
        revised = Slot(
            kind=SlotKind.SUMMARY,
            text=body,
            provenance=old.provenance,
            id=hashlib.blake2b(f"revised|{old.id}".encode(), digest_size=16).hexdigest(),
            metadata={**old.metadata, "revises": old.id, "stage": "revise_summary"},
        )
        revised.tokens = st.count(revised)
        st.install_summary(revised, [old])
        self._run_funnel()
        self._notify(start)
        return st.events[start:]

    def _validate(self, slots: Sequence[Slot]) -> None:
        seen: set[str] = set()
        for slot in slots:
            if not isinstance(slot, Slot):
                raise InvalidInput(f"expected a Slot, got {type(slot).__name__}")
            if not isinstance(slot.text, str):
                raise InvalidInput("slot text must be a string")
            if not isinstance(slot.kind, SlotKind):
                raise InvalidInput(f"unknown slot kind {slot.kind!r}")
            if not math.isfinite(slot.effective_priority):
                raise InvalidInput(f"slot priority must be a finite number: {slot.priority}")
            if slot.id in self._state.by_id or slot.id in seen:
                raise InvalidInput(f"slot id {slot.id!r} is already in this context")
            seen.add(slot.id)

    def _add(self, given: Slot, vector: Vector | None) -> AddResult:
        st = self._state
        slot = clone(given, state=SlotState.ACTIVE, seq=-1, repeat_count=max(1, given.repeat_count))
        if slot.kind is SlotKind.SYSTEM:
            slot.pinned = True
        slot.tokens = st.count(slot)
        probe = st.admission.probe(slot, vector)
        dup = st.admission.find(slot, probe)
        self._check_budget(slot, dup)
        start = len(st.events)
        st.append(slot)
        if dup is None:
            st.activate(slot)
            st.admission.add(slot, probe)
            st.emit(EventKind.ADMITTED, slot.id, tokens=slot.tokens)
            self._run_funnel()
        elif slot.kind in MERGE_KINDS:
            survivor = st.active[dup.survivor_id]
            slot.state = SlotState.MERGED
            survivor.repeat_count += 1
            st.mark(survivor)
            if slot.pinned:
                st.set_pinned(survivor, True)
            st.emit(
                EventKind.MERGED,
                slot.id,
                into=survivor.id,
                reason=dup.reason,
                similarity=round(dup.similarity, 4),
                repeat_count=survivor.repeat_count,
            )
        else:
            slot.state = SlotState.REFUSED
            st.emit(
                EventKind.REFUSED,
                slot.id,
                duplicate_of=dup.survivor_id,
                reason=dup.reason,
                similarity=round(dup.similarity, 4),
            )
        return AddResult(slot=clone(slot), events=st.events[start:], admitted=dup is None)

    def _check_budget(self, slot: Slot, dup: Duplicate | None) -> None:
        if self.ignores_pins:
            return
        st = self._state
        extra = 0
        if dup is None and slot.pinned:
            extra = slot.tokens
        elif dup is not None and slot.pinned and slot.kind in MERGE_KINDS:
            survivor = st.active[dup.survivor_id]
            extra = 0 if survivor.pinned else survivor.tokens
        if st.pinned_tokens + extra <= st.budget:
            return
        pinned = [(s.id, s.kind.value, s.tokens) for s in map(st.active.get, st.pinned) if s]
        if dup is None:
            pinned.append((slot.id, slot.kind.value, slot.tokens))
        elif extra:
            survivor = st.active[dup.survivor_id]
            pinned.append((survivor.id, survivor.kind.value, survivor.tokens))
        raise BudgetExceeded(pinned, st.budget)

    def _run_funnel(self) -> None:
        st = self._state
        while st.over_by > 0:
            before = st.tokens_used
            for stage in self.funnel:
                if st.over_by == 0:
                    break
                stage.apply(st, st.over_by)
            if st.tokens_used >= before:
                break
        if st.over_by > 0:
            self._fallback.apply(st, st.over_by)

    def _notify(self, start: int) -> None:
        if len(self._state.events) > start and self._listeners:
            batch = self._state.events[start:]
            for callback in list(self._listeners):
                callback(list(batch))

    # reading ------------------------------------------------------------------------------------

    def assemble(self, query: str | None = None, *, extra: Sequence[Slot] = ()) -> Prompt:
        """The prompt to send: active slots in prompt order (see :mod:`~smartctx.window.render`).

        With a recaller, ``recall_ratio > 0`` and a query, the free room ``budget - tokens_used``
        (at least the reserve, unless pinned slots used it) is filled by tokens with archived
        slots and ``extra`` candidates ranked by the recaller: best first among at most
        ``recall_k`` ranked candidates, skipping those whose text is already active or already
        recalled and those larger than the room left. Each is shown with its source and emits a
        ``recalled`` event. Nothing is re-added to the log and the active set does not change;
        the prompt's tokens never exceed the budget.
        """
        st = self._state
        ordered = order_slots(list(st.active.values()), st.recency)
        start = len(st.events)
        recalled: list[Slot] = []
        if self.recaller is not None and self.reserve > 0 and query:
            room = st.budget - st.tokens_used
            if self.focus is not None:
                room = min(room, int(self.focus.recall_share * st.budget))
            recalled = recall_archived(st, self.recaller, query, extra, room, self.recall_k)
        tokens = st.tokens_used + sum(s.tokens for s in recalled)
        prompt = build_prompt(ordered, recalled, tokens, st.events[start:])
        self._notify(start)
        return prompt

    def snapshot(self, recent_events: int = 50, *, slots: bool = True) -> Snapshot:
        """Budget, usage, per-kind counts, active slots and the last ``recent_events`` events;
        without ``slots``, no active slots (the usage alone)."""
        st = self._state
        recent = st.events[-recent_events:] if recent_events > 0 else []
        return Snapshot.build(
            budget=st.budget,
            tokens_used=st.tokens_used,
            pinned_tokens=st.pinned_tokens,
            version=self.version,
            log_size=len(st.log),
            kind_count=st.kind_count,
            kind_tokens=st.kind_tokens,
            active=list(st.active.values()) if slots else [],
            events=recent,
        )

    # persistence --------------------------------------------------------------------------------

    def pending_changes(self) -> Changes:
        """What changed since the last :meth:`mark_saved`: new slots, changed slots, new events."""
        return self._tracker.pending(self._state)

    def mark_saved(self, changes: Changes) -> None:
        """Record that ``changes`` are persisted (later changes stay pending)."""
        self._tracker.saved(self._state, changes)

    @classmethod
    def restore(
        cls, log_slots: Sequence[Slot], events: Sequence[Event], budget: int, **kwargs: Any
    ) -> ContextWindow:
        """Rebuild a window from its log and events without re-running admission or the funnel.

        The result has the same active set, order, recency, snapshot and events as the window
        that produced them; nothing is pending. ``kwargs`` are the constructor's options.
        """
        window = cls(budget, **kwargs)
        rebuild_state(window._state, log_slots, events)
        window._tracker.saved_all(window._state)
        return window

    @classmethod
    def caught_up(
        cls,
        base: ContextWindow,
        changed: Sequence[Slot],
        new_slots: Sequence[Slot],
        new_events: Sequence[Event],
        budget: int,
        **kwargs: Any,
    ) -> ContextWindow:
        """The window :meth:`restore` would rebuild from a stored log that goes on from
        ``base``'s (saved, nothing pending), built from ``base``'s own slots instead of the
        whole stored log: ``new_slots`` and ``new_events`` were appended after it, ``changed``
        are ``base``'s slots as stored now (those :func:`~smartctx.window.persist.touched_by`
        the new events names; others are as ``base`` holds them). ``base`` is left as it is.
        ``InvalidInput`` if ``base`` has unsaved changes or the parts do not fit together."""
        st = base._state
        if not base.pending_changes().empty:
            raise InvalidInput("a window with unsaved changes cannot be caught up")
        stored = {s.id: s for s in changed}
        log = [stored.get(s.id, s) for s in st.log]
        log.extend(new_slots)
        window = cls(budget, **kwargs)
        # a logged slot's text never changes: its text key and recall cost stay valid
        window._state.recall_keys.update(st.recall_keys)
        window._state.recall_costs.update(st.recall_costs)
        rebuild_state(window._state, log, [*st.events, *new_events])
        window._tracker.saved_all(window._state)
        return window
