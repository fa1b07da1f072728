"""The mutable state of one window and the primitive operations the funnel stages use.

Everything a stage may do goes through :class:`WindowState`: look at the next eviction victim,
archive a slot (drop, summarize, evict), take the oldest conversation run, insert a summary. Each
primitive keeps every index consistent and costs O(1) or O(log n) amortised, never a scan of the
window:

- the token total and per-kind counters are maintained incrementally;
- ``recency`` of a slot is the sequence number of its latest ``admitted`` or ``merged`` event (a
  merge refreshes the survivor), so it can be rebuilt exactly from the event log;
- a heap of ``(priority, recency, slot_id)`` over unpinned active slots, with lazy deletion, gives
  the eviction victim ``min(priority, recency)``;
- linked ordered dicts give the oldest active slot (FIFO) and the conversation in recency order;
  a dict keeps the (few) active summaries in seq order.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from smartctx.core.embeddings import Embedder
from smartctx.core.slots import CONVERSATION_KINDS, Event, EventKind, Slot, SlotKind, SlotState
from smartctx.core.tokens import TokenCounter
from smartctx.window.admission import AdmissionIndex
from smartctx.window.normalize import text_key
from smartctx.window.render import render_content
from smartctx.window.summarizer import Summarizer


def clone(slot: Slot, **changes: Any) -> Slot:
    """A fast copy of a valid slot (no re-validation, :meth:`Slot.copy` field by field) with
    ``changes`` set; ``metadata`` is copied, never shared."""
    out = slot.copy()
    for name, value in changes.items():
        setattr(out, name, value)
    return out


class WindowState:
    """Slots, events and indexes of one context window. Not thread-safe; owned by one window."""

    def __init__(
        self,
        budget: int,
        *,
        counter: TokenCounter,
        embedder: Embedder | None,
        admission: AdmissionIndex,
        summarizer: Summarizer | None,
        message_overhead: int,
    ) -> None:
        self.budget = budget
        self.limit = budget
        self.counter = counter
        self.embedder = embedder
        self.admission = admission
        self.summarizer = summarizer
        self.message_overhead = message_overhead
        self.log: list[Slot] = []
        self.by_id: dict[str, Slot] = {}
        self.events: list[Event] = []
        self.active: dict[str, Slot] = {}
        self.pinned: dict[str, None] = {}
        self.order: OrderedDict[str, None] = OrderedDict()
        self.conversation: OrderedDict[str, None] = OrderedDict()
        self.summaries: dict[str, None] = {}
        self.archived: dict[str, None] = {}
        self.recency: dict[str, int] = {}
        self.tokens_used = 0
        self.pinned_tokens = 0
        self.kind_count: dict[SlotKind, int] = dict.fromkeys(SlotKind, 0)
        self.kind_tokens: dict[SlotKind, int] = dict.fromkeys(SlotKind, 0)
        self.dirty: dict[str, int] = {}
        self.recall_costs: dict[str, int] = {}
        self.recall_keys: dict[str, str] = {}
        self.recall_first: dict[str, str] = {}
        """Per text key, the id of the earliest (lowest seq) archived slot with that text:
        recall's candidates, kept as slots leave instead of found by a walk over the whole
        archive every turn. A text archived again (a knowledge chunk retrieved turn after turn)
        leaves the candidates as they were, so a recaller indexes each text once; the earliest
        copy, not the last archived, so a window rebuilt from its log has the same candidates."""
        self._stamp = 0
        self._heap: list[tuple[float, int, str]] = []

    # measurement -------------------------------------------------------------------------------

    def count(self, slot: Slot) -> int:
        """Tokens of ``slot`` as the prompt renders it, plus the per-message overhead."""
        return self.counter.count(render_content(slot)) + self.message_overhead

    @property
    def over_by(self) -> int:
        """How many tokens the active slots exceed the funnel's ``limit`` by (0 when they fit).

        ``limit`` is the budget, less the recall reserve when the window has a recaller
        (:class:`~smartctx.window.window.ContextWindow` sets it)."""
        return max(0, self.tokens_used - self.limit)

    # events and log ----------------------------------------------------------------------------

    def emit(self, kind: EventKind, slot_id: str, **detail: Any) -> Event:
        event = Event(kind=kind, slot_id=slot_id, seq=len(self.events), detail=detail)
        self.events.append(event)
        if kind is EventKind.ADMITTED:
            self._touch(slot_id, event.seq)
        elif kind is EventKind.MERGED:
            self._touch(str(detail["into"]), event.seq)
        return event

    def append(self, slot: Slot) -> None:
        """Put ``slot`` (already a private copy, tokens counted) at the end of the log."""
        slot.seq = len(self.log)
        self.log.append(slot)
        self.by_id[slot.id] = slot

    def mark(self, slot: Slot) -> None:
        """Record that an already logged slot changed (state, repeat count or pin)."""
        self._stamp += 1
        self.dirty[slot.id] = self._stamp

    # the active set ----------------------------------------------------------------------------

    def activate(self, slot: Slot) -> None:
        """Make a logged slot active (its ``admitted`` event is emitted separately)."""
        slot.state = SlotState.ACTIVE
        self.active[slot.id] = slot
        self.order[slot.id] = None
        if slot.kind in CONVERSATION_KINDS:
            self.conversation[slot.id] = None
        elif slot.kind is SlotKind.SUMMARY:
            self.summaries[slot.id] = None
        self.tokens_used += slot.tokens
        self.kind_count[slot.kind] += 1
        self.kind_tokens[slot.kind] += slot.tokens
        if slot.pinned:
            self.pinned_tokens += slot.tokens
            self.pinned[slot.id] = None

    def archive(self, slot: Slot, state: SlotState, event: EventKind, **detail: Any) -> Event:
        """Take an active slot out of the window into ``state`` (it stays in the log)."""
        del self.active[slot.id]
        self.order.pop(slot.id, None)
        self.conversation.pop(slot.id, None)
        self.summaries.pop(slot.id, None)
        self.tokens_used -= slot.tokens
        self.kind_count[slot.kind] -= 1
        self.kind_tokens[slot.kind] -= slot.tokens
        if slot.pinned:
            self.pinned_tokens -= slot.tokens
            self.pinned.pop(slot.id, None)
        slot.state = state
        self.note_archived(slot)
        self.admission.remove(slot)
        self.mark(slot)
        return self.emit(event, slot.id, tokens=slot.tokens, **detail)

    def note_archived(self, slot: Slot) -> None:
        """Record that the logged ``slot`` is out of the window (see :attr:`recall_first`)."""
        self.archived[slot.id] = None
        key = self.recall_keys.get(slot.id)
        if key is None:
            key = self.recall_keys[slot.id] = text_key(slot.text)
        first = self.recall_first.get(key)
        if first is None or slot.seq < self.by_id[first].seq:
            self.recall_first[key] = slot.id

    def is_recall_copy(self, slot_id: str) -> bool:
        """Whether the archived slot ``slot_id`` is the copy of its text recall ranks."""
        key = self.recall_keys.get(slot_id)
        return key is not None and self.recall_first.get(key) == slot_id

    def install_summary(self, summary: Slot, replaced: Sequence[Slot]) -> list[Event]:
        """Archive ``replaced`` as ``summarized`` into ``summary`` (tokens counted), then log and
        activate ``summary``; the events (``summarized`` each, then ``admitted`` with the
        provenance)."""
        events = [
            self.archive(s, SlotState.SUMMARIZED, EventKind.SUMMARIZED, into=summary.id)
            for s in replaced
        ]
        self.append(summary)
        self.activate(summary)
        self.admission.add(summary)
        events.append(
            self.emit(
                EventKind.ADMITTED,
                summary.id,
                tokens=summary.tokens,
                provenance=list(summary.provenance),
            )
        )
        return events

    def set_pinned(self, slot: Slot, pinned: bool) -> None:
        if slot.pinned == pinned:
            return
        slot.pinned = pinned
        self.mark(slot)
        if slot.state is not SlotState.ACTIVE:
            return
        if pinned:
            self.pinned_tokens += slot.tokens
            self.pinned[slot.id] = None
        else:
            self.pinned_tokens -= slot.tokens
            self.pinned.pop(slot.id, None)
            self._push(slot)

    def _touch(self, slot_id: str, recency: int) -> None:
        self.recency[slot_id] = recency
        if slot_id in self.order:
            self.order.move_to_end(slot_id)
        if slot_id in self.conversation:
            self.conversation.move_to_end(slot_id)
        slot = self.active.get(slot_id)
        if slot is not None and not slot.pinned:
            self._push(slot)

    def _push(self, slot: Slot) -> None:
        heapq.heappush(
            self._heap, (slot.effective_priority, self.recency.get(slot.id, slot.seq), slot.id)
        )
        if len(self._heap) > 2 * len(self.active) + 64:
            self._compact()

    def _compact(self) -> None:
        self._heap = [e for e in self._heap if self._valid(e)]
        heapq.heapify(self._heap)

    def _valid(self, entry: tuple[float, int, str]) -> bool:
        slot = self.active.get(entry[2])
        return (
            slot is not None
            and not slot.pinned
            and self.recency.get(slot.id, slot.seq) == entry[1]
            and slot.effective_priority == entry[0]
        )

    # what stages look at -----------------------------------------------------------------------

    def lowest(self) -> Slot | None:
        """The unpinned active slot of lowest priority, least recent first; O(log n) amortised."""
        while self._heap:
            entry = self._heap[0]
            if self._valid(entry):
                return self.active[entry[2]]
            heapq.heappop(self._heap)
        return None

    def active_summaries(self) -> list[Slot]:
        """The active summary slots, oldest (lowest seq) first; there are few by construction."""
        return [self.active[i] for i in self.summaries]

    def oldest(self) -> Slot | None:
        """The least recent active slot, pinned or not."""
        for slot_id in self.order:
            return self.active[slot_id]
        return None

    def rebuild_heap(self) -> None:
        self._heap = [
            (s.effective_priority, self.recency.get(s.id, s.seq), s.id)
            for s in self.active.values()
            if not s.pinned
        ]
        heapq.heapify(self._heap)
