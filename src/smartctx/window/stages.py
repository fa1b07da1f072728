"""Funnel stages: what brings an over-budget window back under budget (DESIGN.md section 2).

Every stage implements :class:`Stage`. The window calls ``apply(state, over_by)`` only while it is
over budget, stages in order, and repeats the pass while some stage frees tokens. A stage changes
the window only through :class:`~smartctx.window.state.WindowState` primitives and returns the
events it caused (an empty list when it has nothing to do). Stages never delete: a slot leaves the
window into a state (dropped, summarized, evicted) and stays in the log.

Compose your own funnel from these classes, or use a preset: :func:`default_funnel`,
:func:`eviction_preset`, :func:`compression_preset`, :func:`fifo_preset`.
"""

from __future__ import annotations

import hashlib
from typing import Protocol, runtime_checkable

from smartctx.core.errors import InvalidInput
from smartctx.core.slots import Event, EventKind, Slot, SlotKind, SlotState
from smartctx.window.state import WindowState
from smartctx.window.summarizer import SUMMARY_PREFIX, ExtractiveSummarizer, Summarizer


@runtime_checkable
class Stage(Protocol):
    """One funnel stage.

    ``name`` identifies it in events; ``ignores_pins`` is True only for stages that may remove
    pinned slots (FIFO): a funnel containing one never raises ``BudgetExceeded``.
    """

    name: str
    ignores_pins: bool

    def apply(self, state: WindowState, over_by: int) -> list[Event]:
        """Free tokens (ideally ``over_by`` of them); return the events caused."""
        ...


class DropBelow:
    """Drops unpinned active slots whose priority is below ``priority`` (tool logs by default),
    lowest priority and least recent first, until the window fits."""

    name = "drop_below"
    ignores_pins = False

    def __init__(self, priority: float = 3.0) -> None:
        self.priority = priority

    def apply(self, state: WindowState, over_by: int) -> list[Event]:
        events: list[Event] = []
        while state.over_by > 0:
            victim = state.lowest()
            if victim is None or victim.effective_priority >= self.priority:
                break
            events.append(
                state.archive(victim, SlotState.DROPPED, EventKind.DROPPED, stage=self.name)
            )
        return events


class EvictLowestPriority:
    """Evicts the unpinned active slot of lowest priority, least recent first
    (``victim = min(priority, recency)``), until the window fits. O(log n) per eviction."""

    name = "evict_lowest_priority"
    ignores_pins = False

    def apply(self, state: WindowState, over_by: int) -> list[Event]:
        events: list[Event] = []
        while state.over_by > 0:
            victim = state.lowest()
            if victim is None:
                break
            events.append(
                state.archive(victim, SlotState.EVICTED, EventKind.EVICTED, stage=self.name)
            )
        return events


class EvictOldest:
    """Naive first-in-first-out: evicts the least recent active slot, pinned or not (the system
    prompt included), until the window fits. The baseline smartctx is compared against."""

    name = "evict_oldest"
    ignores_pins = True

    def apply(self, state: WindowState, over_by: int) -> list[Event]:
        events: list[Event] = []
        while state.over_by > 0:
            victim = state.oldest()
            if victim is None:
                break
            events.append(
                state.archive(victim, SlotState.EVICTED, EventKind.EVICTED, stage=self.name)
            )
        return events


class Summarize:
    """Replaces the oldest run of unpinned conversation slots with one ``summary`` slot, rolling
    earlier summaries up into it.

    The run starts at the least recent user/agent message, stops at the first pinned one, never
    touches the last ``keep_recent`` conversation messages and holds at most ``max_run`` messages.

    Roll-up: the window keeps at most ``max_summaries`` unpinned summaries. When the stage runs
    and that many already exist, the oldest of them are *folded* into the new summary: their text
    (without the summary prefix) is summarized together with the run, each gets state
    ``summarized`` (``detail.into`` = new summary id), and the new summary's ``provenance`` is the
    union, in order, of the folded summaries' provenance, the folded summaries' own ids and the
    run's ids. So the window holds a bounded number of summaries whatever the conversation length.

    The summary targets ``ratio`` of the replaced tokens (run plus folded summaries), at least
    ``min_tokens`` and at most ``max(min_tokens, max_share * limit)`` tokens (``limit`` = what the
    funnel brings the window under). Each replaced id gets a ``summarized`` event, followed by the
    summary's ``admitted`` event. If the summary would not be shorter than what it replaces,
    nothing changes. ``summarizer=None`` uses the window's summarizer, else an
    :class:`ExtractiveSummarizer` over the window's counter and embedder.
    """

    name = "summarize"
    ignores_pins = False

    def __init__(
        self,
        keep_recent: int = 4,
        summarizer: Summarizer | None = None,
        *,
        max_run: int = 32,
        ratio: float = 0.25,
        min_tokens: int = 16,
        max_summaries: int = 1,
        max_share: float = 0.25,
    ) -> None:
        if max_summaries < 1:
            raise InvalidInput(f"max_summaries must be >= 1, got {max_summaries}")
        if not 0.0 < max_share <= 1.0:
            raise InvalidInput(f"max_share must be within (0, 1], got {max_share}")
        self.keep_recent = keep_recent
        self.summarizer = summarizer
        self.max_run = max_run
        self.ratio = ratio
        self.min_tokens = min_tokens
        self.max_summaries = max_summaries
        self.max_share = max_share

    def _summarizer(self, state: WindowState) -> Summarizer:
        if self.summarizer is not None:
            return self.summarizer
        if state.summarizer is None:
            state.summarizer = ExtractiveSummarizer(state.counter, embedder=state.embedder)
        return state.summarizer

    def _run(self, state: WindowState) -> list[Slot]:
        eligible = min(len(state.conversation) - self.keep_recent, self.max_run)
        run: list[Slot] = []
        for slot_id in state.conversation:
            if len(run) >= eligible:
                break
            slot = state.active[slot_id]
            if slot.pinned:
                break
            run.append(slot)
        return run

    def _folded(self, state: WindowState) -> list[Slot]:
        existing = [s for s in state.active_summaries() if not s.pinned]
        return existing[: max(0, len(existing) - self.max_summaries + 1)]

    def _target(self, state: WindowState, replaced_tokens: int) -> int:
        cap = max(self.min_tokens, int(self.max_share * state.limit))
        return max(self.min_tokens, min(cap, int(replaced_tokens * self.ratio)))

    def apply(self, state: WindowState, over_by: int) -> list[Event]:
        run = self._run(state)
        if not run:
            return []
        folded = self._folded(state)
        replaced = folded + run
        replaced_tokens = sum(s.tokens for s in replaced)
        texts = [strip_prefix(s.text) for s in folded] + [s.text for s in run]
        text = self._summarizer(state).summarize(texts, self._target(state, replaced_tokens))
        provenance: dict[str, None] = {}
        for old in folded:
            provenance.update(dict.fromkeys(old.provenance))
            provenance[old.id] = None
        provenance.update(dict.fromkeys(s.id for s in run))
        ids = tuple(provenance)
        summary = Slot(
            kind=SlotKind.SUMMARY,
            text=text,
            provenance=ids,
            id=hashlib.blake2b("|".join(ids).encode(), digest_size=16).hexdigest(),
            metadata={"summarized": len(run), "folded": len(folded), "stage": self.name},
        )
        summary.tokens = state.count(summary)
        if summary.tokens >= replaced_tokens or summary.id in state.by_id:
            return []
        return state.install_summary(summary, replaced)


def strip_prefix(text: str) -> str:
    """A summary's text without the default summary prefix (used when folding summaries)."""
    return text[len(SUMMARY_PREFIX) :] if text.startswith(SUMMARY_PREFIX) else text


def default_funnel() -> list[Stage]:
    """``[DropBelow(3), Summarize(keep_recent=4), EvictLowestPriority()]``."""
    return [DropBelow(3.0), Summarize(keep_recent=4), EvictLowestPriority()]


def eviction_preset() -> list[Stage]:
    """Seed smart-context-memory: priority eviction only."""
    return [EvictLowestPriority()]


def compression_preset(keep_recent: int = 4) -> list[Stage]:
    """Seed smart-context-compression: drop tool logs, then summarize old conversation.

    If these two stages cannot bring the window under budget, the window falls back to
    :class:`EvictLowestPriority`, so it always fits after ``add``.
    """
    return [DropBelow(3.0), Summarize(keep_recent=keep_recent)]


def fifo_preset() -> list[Stage]:
    """The naive FIFO baseline: ``[EvictOldest()]`` (ignores pins; never raises
    ``BudgetExceeded``; a single slot larger than the budget is evicted too)."""
    return [EvictOldest()]
