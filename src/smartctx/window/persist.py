"""What a store needs from a window: pending changes, and an exact rebuild from the log.

The engine never imports the store. A store persists :class:`Changes` (plain core ``Slot`` and
``Event`` copies) and later hands the log and the events back to
:meth:`ContextWindow.restore <smartctx.window.window.ContextWindow.restore>`, which calls
:func:`rebuild_state`. Recency is not stored: it is the seq of a slot's latest ``admitted`` or
``merged`` event, so it is replayed from the events.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from smartctx.core.errors import InvalidInput
from smartctx.core.slots import ARCHIVED_STATES, Event, EventKind, Slot, SlotState
from smartctx.window.state import WindowState


@dataclass(frozen=True, slots=True)
class Changes:
    """Changes since the last save, as copies.

    ``new_slots``: slots appended to the log (seq order); ``updated_slots``: already-saved slots
    whose state, repeat count or pin changed; ``new_events``: events appended (seq order).
    ``log_size`` / ``event_count`` are the totals these changes bring the store to.
    """

    budget: int
    new_slots: list[Slot]
    updated_slots: list[Slot]
    new_events: list[Event]
    log_size: int
    event_count: int
    stamps: dict[str, int] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not (self.new_slots or self.updated_slots or self.new_events)


class ChangeTracker:
    """Remembers how much of a window's log and events a store has saved."""

    def __init__(self) -> None:
        self.saved_log = 0
        self.saved_events = 0

    def pending(self, state: WindowState) -> Changes:
        updated = sorted(
            (state.by_id[i] for i in state.dirty if state.by_id[i].seq < self.saved_log),
            key=lambda s: s.seq,
        )
        return Changes(
            budget=state.budget,
            new_slots=[s.copy() for s in state.log[self.saved_log :]],
            updated_slots=[s.copy() for s in updated],
            new_events=list(state.events[self.saved_events :]),
            log_size=len(state.log),
            event_count=len(state.events),
            stamps=dict(state.dirty),
        )

    def saved(self, state: WindowState, changes: Changes) -> None:
        self.saved_log = max(self.saved_log, changes.log_size)
        self.saved_events = max(self.saved_events, changes.event_count)
        for slot_id, stamp in changes.stamps.items():
            if state.dirty.get(slot_id) == stamp:
                del state.dirty[slot_id]

    def saved_all(self, state: WindowState) -> None:
        self.saved_log = len(state.log)
        self.saved_events = len(state.events)
        state.dirty.clear()


def touched_by(events: Sequence[Event]) -> set[str]:
    """The ids of the logged slots ``events`` may have changed (state, repeat count or pin): a
    window changes a logged slot only with an event that names it, as its ``slot_id`` or, for a
    merge, as ``into``. So a reader that holds a log saved before ``events`` need only re-read
    these slots (and the new ones) to be up to date."""
    out: set[str] = set()
    for event in events:
        out.add(event.slot_id)
        into = event.detail.get("into")
        if isinstance(into, str):
            out.add(into)
    return out


def rebuild_state(state: WindowState, log_slots: Sequence[Slot], events: Sequence[Event]) -> None:
    """Fill an empty ``state`` from a log and events; ``InvalidInput`` if they are inconsistent.

    Slots keep their stored tokens, states, pins and repeat counts (nothing is recounted or
    re-admitted). Embeddings for semantic deduplication are computed lazily on the next add.
    """
    slots = sorted((s.copy() for s in log_slots), key=lambda s: s.seq)
    if [s.seq for s in slots] != list(range(len(slots))):
        raise InvalidInput("log slots must have seq 0..n-1 without gaps")
    ordered_events = sorted(events, key=lambda e: e.seq)
    if [e.seq for e in ordered_events] != list(range(len(ordered_events))):
        raise InvalidInput("events must have seq 0..n-1 without gaps")
    for slot in slots:
        state.log.append(slot)
        state.by_id[slot.id] = slot
    state.events.extend(ordered_events)
    for event in ordered_events:
        if event.kind is EventKind.ADMITTED:
            state.recency[event.slot_id] = event.seq
        elif event.kind is EventKind.MERGED:
            state.recency[str(event.detail["into"])] = event.seq
    active = [s for s in slots if s.state is SlotState.ACTIVE]
    by_recency = sorted(active, key=lambda s: (state.recency.get(s.id, s.seq), s.seq))
    for slot in active:
        state.activate(slot)
    # activate() appends in seq order; the ordered views must follow recency.
    for slot in by_recency:
        state.order.move_to_end(slot.id)
        if slot.id in state.conversation:
            state.conversation.move_to_end(slot.id)
    for slot in slots:
        if slot.state in ARCHIVED_STATES:
            state.note_archived(slot)
    state.rebuild_heap()
    state.admission.rebuild(by_recency)
