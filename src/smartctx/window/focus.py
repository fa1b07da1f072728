"""Turn focus: what only a turn needed leaves the window when the turn ends.

A long thread otherwise sends its whole window every turn: the knowledge retrieved for every
earlier question, every tool log, every exchange, until the budget is full, so a thread's prompt
grows to the budget while a fresh question needs a few hundred tokens. With a :class:`TurnFocus`
on the window, :meth:`~smartctx.window.ContextWindow.end_turn` archives, as ``evicted`` with
``stage="turn_focus"`` (after unpinning the turn's user slot):

- every unpinned ``rag_doc`` and ``tool_log`` slot, and every slot a context provider added
  (metadata ``provider``): evidence belongs to the turn that retrieved it, and the next turn
  retrieves its own;
- conversation messages older than the last ``keep_turns`` exchanges (``2 * keep_turns`` user or
  agent slots, by recency), so a follow-up ("and in London?") still sees the exchange it follows.

Archiving at the end of the turn (rather than when the next begins) lets a server index the
archived slots for recall between turns, off the request path.

System slots, summaries and slots a caller added to the context itself stay. Nothing is lost:
archived slots stay in the log and :meth:`~smartctx.window.ContextWindow.assemble` recalls the ones
a new request needs, within ``recall_share`` of the budget (the window's recaller decides what
is relevant; a gated recaller has a threshold, see :mod:`smartctx.agents.relevance`).

Cost: one pass over the active slots per turn (the active set is bounded by the budget).
"""

from __future__ import annotations

from dataclasses import dataclass

from smartctx.core.errors import InvalidInput
from smartctx.core.slots import Event, EventKind, Slot, SlotKind, SlotState
from smartctx.window.state import WindowState

TURN_SCOPED: frozenset[SlotKind] = frozenset({SlotKind.RAG_DOC, SlotKind.TOOL_LOG})
"""Kinds whose slots belong to the turn that added them."""
STAGE = "turn_focus"


@dataclass(frozen=True, slots=True)
class TurnFocus:
    """How much of earlier turns stays in the window when a new turn begins (module docstring)."""

    keep_turns: int = 1
    scoped: frozenset[SlotKind] = TURN_SCOPED
    recall_share: float = 0.1

    def __post_init__(self) -> None:
        if isinstance(self.keep_turns, bool) or self.keep_turns < 0:
            raise InvalidInput(f"keep_turns must be an integer >= 0, got {self.keep_turns!r}")
        if not 0.0 <= self.recall_share <= 1.0:
            raise InvalidInput(f"recall_share must be within 0..1, got {self.recall_share}")

    def scoped_to_turn(self, slot: Slot) -> bool:
        """Whether ``slot`` belongs to the turn that added it."""
        return slot.kind in self.scoped or "provider" in slot.metadata

    def apply(self, state: WindowState) -> list[Event]:
        """Archive what earlier turns left (see the module docstring); the events, in order."""
        events: list[Event] = []
        for slot_id in list(state.order):
            slot = state.active[slot_id]
            if not slot.pinned and self.scoped_to_turn(slot):
                events.append(
                    state.archive(slot, SlotState.EVICTED, EventKind.EVICTED, stage=STAGE)
                )
        talk = [i for i in state.conversation if not state.active[i].pinned]
        keep = 2 * self.keep_turns
        for slot_id in talk[: len(talk) - keep] if keep else talk:
            events.append(_archive(state, state.active[slot_id]))
        return events


def _archive(state: WindowState, slot: Slot) -> Event:
    return state.archive(slot, SlotState.EVICTED, EventKind.EVICTED, stage=STAGE)
