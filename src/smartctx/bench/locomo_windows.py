"""The windows the LoCoMo benchmark compares under one token budget.

- ``smartctx``: the product's own code path. A :class:`~smartctx.window.ContextWindow` of the
  whole ``budget`` with the default funnel and a recaller attached is fed the whole conversation;
  with ``recall_ratio`` > 0 its funnel keeps ``int(recall_ratio * budget)`` tokens free, and
  ``assemble(question)`` fills the free room with the archived turns (and rolled-up summaries)
  the recaller ranks best for the question. The prompt is exactly what ``assemble`` returns, so
  it never exceeds ``budget`` tokens.
- ``fifo``: a window with the first-in-first-out funnel and no recall: it keeps the most recent
  turns that fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from smartctx.bench.locomo_data import Conversation, Turn
from smartctx.core.recall import Recaller
from smartctx.core.slots import ARCHIVED_STATES, Slot, SlotKind
from smartctx.core.tokens import TokenCounter
from smartctx.window import ContextWindow, fifo_preset


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
        recall_k: int = 256,
    ) -> None:
        self.window = ContextWindow(
            budget,
            counter=counter,
            embedder=None,
            recaller=recaller,
            recall_ratio=recall_ratio,
            recall_k=recall_k,
        )
        self.window.add_many(conversation_slots(conversation))

    def composition(self) -> dict[str, int]:
        """What the window holds after ingest: active turns, active summaries, their tokens,
        the reserve kept for recall and the number of archived slots recall can draw on."""
        active = self.window.active
        return {
            "active_turns": sum(1 for s in active if s.kind is SlotKind.USER),
            "active_summaries": sum(1 for s in active if s.kind is SlotKind.SUMMARY),
            "tokens_used": self.window.tokens_used,
            "reserve": self.window.reserve,
            "archived": sum(1 for s in self.window.log if s.state in ARCHIVED_STATES),
        }

    def assemble(self, question: str) -> Packed:
        """``ContextWindow.assemble(question)``: the window plus what it recalls for it."""
        prompt = self.window.assemble(question)
        recalled = [s.source_id or s.id for s in prompt.recalled]
        return Packed(prompt.text, prompt.tokens, recalled)


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
