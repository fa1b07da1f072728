"""Restore from log + events, and pending changes for the store."""

from __future__ import annotations

import contextlib

from hypothesis import given, settings
from hypothesis import strategies as st

from smartctx.core import BudgetExceeded, HashingEmbedder, Slot, SlotKind, SlotState, get_counter
from smartctx.window import ContextWindow, Stage, Summarize, default_funnel
from smartctx.window.stages import DropBelow, EvictLowestPriority


def options() -> dict[str, object]:
    return {"counter": get_counter(), "embedder": HashingEmbedder()}


def busy_window() -> ContextWindow:
    funnel = [DropBelow(3.0), Summarize(keep_recent=2), EvictLowestPriority()]
    window = ContextWindow(220, funnel=funnel, **options())  # type: ignore[arg-type]
    window.add(Slot(SlotKind.SYSTEM, "You answer helpdesk questions."))
    for i in range(8):
        window.add(Slot(SlotKind.TOOL_LOG, f"tool output {i} " * 3))
        window.add(Slot(SlotKind.USER, f"Question {i}: how do I fix problem {i}?", pinned=True))
        window.add(Slot(SlotKind.RAG_DOC, f"Doc {i % 3} text. " * 4, source_id=f"kb:{i % 3}"))
        window.add(Slot(SlotKind.AGENT, f"Answer {i}: restart the service {i} times. " * 2))
        window.add(Slot(SlotKind.USER, "thanks!"))
        window.end_turn()
    return window


def state_of(window: ContextWindow) -> tuple[object, ...]:
    prompt = window.assemble()
    return (
        window.snapshot(recent_events=10_000).to_dict(),
        [s.to_dict() for s in window.log],
        [e.to_dict() for e in window.events],
        prompt.messages,
        [window.recency(s.id) for s in window.log],
    )


def test_restore_is_exact_and_continues_identically() -> None:
    window = busy_window()
    kinds = {e.kind.value for e in window.events}
    assert {"summarized", "dropped", "merged", "refused", "unpinned"} <= kinds
    restored = ContextWindow.restore(
        window.log, window.events, window.budget, funnel=busy_funnel(), **options()
    )
    assert state_of(restored) == state_of(window)
    for w in (window, restored):
        w.add(Slot(SlotKind.USER, "thanks!", id="same-id-1"))
        w.add(Slot(SlotKind.AGENT, "Answer 9: a brand new answer. " * 5, id="same-id-2"))
    assert state_of(restored) == state_of(window)


def busy_funnel() -> list[Stage]:
    return [DropBelow(3.0), Summarize(keep_recent=2), EvictLowestPriority()]


def test_restored_window_keeps_semantic_dedup() -> None:
    window = ContextWindow(1000, dedup_threshold=0.6, **options())  # type: ignore[arg-type]
    window.add(Slot(SlotKind.USER, "how do I connect to the office VPN"))
    restored = ContextWindow.restore(
        window.log, window.events, 1000, dedup_threshold=0.6, **options()
    )
    result = restored.add(Slot(SlotKind.USER, "how do I connect to the office VPN today"))
    assert not result.admitted and result.events[0].detail["reason"] == "semantic"


def test_pending_changes_track_new_and_updated_slots() -> None:
    window = ContextWindow(1000, funnel=default_funnel(), **options())  # type: ignore[arg-type]
    first = window.add(Slot(SlotKind.USER, "hello", pinned=True)).slot
    changes = window.pending_changes()
    assert [s.id for s in changes.new_slots] == [first.id]
    assert changes.updated_slots == [] and len(changes.new_events) == 1
    window.mark_saved(changes)
    assert window.pending_changes().empty
    window.add(Slot(SlotKind.USER, "hello"))
    window.end_turn()
    changes = window.pending_changes()
    assert len(changes.new_slots) == 1 and changes.new_slots[0].state is SlotState.MERGED
    assert [(s.id, s.repeat_count, s.pinned) for s in changes.updated_slots] == [
        (first.id, 2, False)
    ]
    assert [e.kind.value for e in changes.new_events] == ["merged", "unpinned"]
    # A change made after pending_changes() but before mark_saved() stays pending.
    window.add(Slot(SlotKind.USER, "hello"))
    window.mark_saved(changes)
    later = window.pending_changes()
    assert [s.id for s in later.updated_slots] == [first.id]
    assert later.updated_slots[0].repeat_count == 3
    assert len(later.new_slots) == 1 and len(later.new_events) == 1


def test_restored_window_has_nothing_pending() -> None:
    window = busy_window()
    restored = ContextWindow.restore(window.log, window.events, window.budget, **options())
    assert restored.pending_changes().empty


KINDS = [SlotKind.USER, SlotKind.AGENT, SlotKind.RAG_DOC, SlotKind.TOOL_LOG, SlotKind.MEMORY]
TEXTS = ["hello there", "lights on", "lights off", "reset password 3", "vpn client", "ok"]


@settings(max_examples=40, deadline=None)
@given(
    plan=st.lists(
        st.tuples(st.sampled_from(KINDS), st.sampled_from(TEXTS), st.booleans(), st.booleans()),
        min_size=1,
        max_size=30,
    ),
    cut=st.integers(0, 30),
)
def test_restore_anywhere_matches_property(
    plan: list[tuple[SlotKind, str, bool, bool]], cut: int
) -> None:
    funnel = busy_funnel
    live = ContextWindow(60, funnel=funnel(), **options())  # type: ignore[arg-type]
    restored: ContextWindow | None = None
    for i, (kind, text, pinned, end) in enumerate(plan):
        if i == cut:
            restored = ContextWindow.restore(
                live.log, live.events, 60, funnel=funnel(), **options()
            )
        targets = [live] if restored is None else [live, restored]
        for window in targets:
            with contextlib.suppress(BudgetExceeded):
                window.add(Slot(kind, f"{text} {i % 4}", pinned=pinned, id=f"s{i}"))
            if end:
                window.end_turn()
    if restored is None:
        restored = ContextWindow.restore(live.log, live.events, 60, funnel=funnel(), **options())
    assert state_of(restored) == state_of(live)
