"""The windows the LoCoMo benchmark compares under one token budget.

- ``smartctx``: a :class:`~smartctx.window.ContextWindow` of ``(1 - recall_ratio) * budget``
  tokens is fed the whole conversation (its default funnel drops, summarises and evicts as it
  goes); for a question, the recaller ranks the window's archived turns and the best are packed,
  rendered as the window renders recalled slots, into the remaining ``recall_ratio * budget``
  tokens. The prompt is the window's assembled text followed by the recalled slots, so it never
  exceeds ``budget`` tokens.
- ``fifo``: a window with the first-in-first-out funnel and no recall: it keeps the most recent
  turns that fit.

The recall share is packed here rather than inside ``ContextWindow.assemble`` because the window
fills its whole budget before recall is asked for, leaving assembly no room (its recall room is
``min(recall_ratio * budget, budget - tokens_used)``); reserving the share at ingest is the same
prompt the window would build if it kept that room free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from smartctx.bench.locomo_data import Conversation, Turn
from smartctx.core.recall import Recaller
from smartctx.core.slots import ARCHIVED_STATES, Slot, SlotKind
from smartctx.core.tokens import TokenCounter
from smartctx.window import ContextWindow, fifo_preset, render_recalled, text_key


def turn_slot(sample_id: str, turn: Turn, context: str = "") -> Slot:
    """The slot a LoCoMo turn becomes: a user message whose source id is the turn's ``dia_id``,
    with speaker, session date, photo caption and neighbouring turns (``context``) in metadata."""
    metadata: dict[str, Any] = {"speaker": turn.speaker, "time": turn.time, "session": turn.session}
    if turn.caption:
        metadata["caption"] = turn.caption
    if context:
        metadata["context"] = context
    return Slot(
        SlotKind.USER,
        turn.text,
        source_id=turn.dia_id,
        id=f"{sample_id}:{turn.dia_id}",
        created_at=turn.time or None,
        metadata=metadata,
    )


def conversation_slots(conversation: Conversation) -> list[Slot]:
    """Every turn as a slot, in order; a turn's context is the turns just before and after it
    in the same session (what a reader of the archive sees around it)."""
    turns = conversation.turns
    out: list[Slot] = []
    for i, turn in enumerate(turns):
        around = [
            turns[j].text
            for j in (i - 1, i + 1)
            if 0 <= j < len(turns) and turns[j].session == turn.session
        ]
        out.append(turn_slot(conversation.sample_id, turn, " ".join(around)))
    return out


@dataclass
class Packed:
    """An assembled prompt: its text, its token count and the source ids recalled into it."""

    text: str
    tokens: int
    recalled: list[str]


class SmartWindow:
    """The smartctx window of one conversation under ``budget`` tokens (see the module doc)."""

    def __init__(
        self,
        conversation: Conversation,
        budget: int,
        *,
        counter: TokenCounter,
        recaller: Recaller,
        recall_ratio: float,
    ) -> None:
        self.counter = counter
        self.recaller = recaller
        self.room = int(recall_ratio * budget)
        self.window = ContextWindow(budget - self.room, counter=counter, embedder=None)
        self.window.add_many(conversation_slots(conversation))
        self.base = self.window.assemble()
        self.archived = [s for s in self.window.log if s.state in ARCHIVED_STATES]
        active_keys = {text_key(s.text) for s in self.window.active}
        self._keys = {s.id: text_key(s.text) for s in self.archived}
        self._cost = {s.id: counter.count(render_recalled(s)) for s in self.archived}
        self._skip = {i for i, key in self._keys.items() if key in active_keys}
        self._cheapest = min(self._cost.values(), default=0)

    def assemble(self, question: str) -> Packed:
        """The prompt for ``question``: the window plus the best archived turns that fit."""
        room = self.room
        parts = [self.base.text]
        recalled: list[str] = []
        seen: set[str] = set()
        ranked = self.recaller.rank(question, self.archived, len(self.archived))
        for slot, _score in ranked:
            if room < self._cheapest:
                break
            key = self._keys[slot.id]
            cost = self._cost[slot.id]
            if slot.id in self._skip or key in seen or cost > room:
                continue
            room -= cost
            seen.add(key)
            parts.append(f"SYSTEM: {render_recalled(slot)}")
            recalled.append(slot.source_id or slot.id)
        tokens = self.base.tokens + self.room - room
        return Packed("\n\n".join(parts), tokens, recalled)


class FifoWindow:
    """A first-in-first-out window: the most recent turns that fit ``budget`` tokens."""

    def __init__(self, conversation: Conversation, budget: int, *, counter: TokenCounter) -> None:
        self.window = ContextWindow(budget, counter=counter, embedder=None, funnel=fifo_preset())
        self.window.add_many(conversation_slots(conversation))
        self.prompt = self.window.assemble()

    def assemble(self, question: str) -> Packed:
        """The same prompt for every question: recency is all FIFO knows."""
        return Packed(self.prompt.text, self.prompt.tokens, [])


def retained(evidence: Sequence[str], turns: dict[str, Turn], prompt: str) -> float:
    """Share of the evidence turns whose text appears verbatim in ``prompt``."""
    if not evidence:
        return 0.0
    return sum(1 for d in evidence if turns[d].text.strip() in prompt) / len(evidence)
