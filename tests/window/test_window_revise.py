"""``revise_summary``: a summary's text replaced by a rewrite, provenance and log kept."""

from __future__ import annotations

import pytest

from smartctx.core import (
    HashingEmbedder,
    InvalidInput,
    NotFound,
    Slot,
    SlotKind,
    SlotState,
    get_counter,
)
from smartctx.window import SUMMARY_PREFIX, ContextWindow, compression_preset


def summarized_window() -> ContextWindow:
    window = ContextWindow(
        60, counter=get_counter(), embedder=HashingEmbedder(), funnel=compression_preset(2)
    )
    for n in range(6):
        window.add(Slot(SlotKind.USER, f"fact number {n}: the printer on floor {n} is broken"))
        window.add(Slot(SlotKind.AGENT, f"reply {n}: ticket opened for floor {n}"))
    return window


def test_a_revision_replaces_the_summary_and_keeps_its_provenance() -> None:
    window = summarized_window()
    old = next(s for s in window.active if s.kind is SlotKind.SUMMARY)
    events = window.revise_summary(old.id, "Printers 0-3 broken.")
    new = next(s for s in window.active if s.kind is SlotKind.SUMMARY)
    assert new.text == SUMMARY_PREFIX + "Printers 0-3 broken."
    assert new.provenance == old.provenance and new.metadata["revises"] == old.id
    assert window.get(old.id).state is SlotState.SUMMARIZED
    assert [e.kind.value for e in events][:2] == ["summarized", "admitted"]
    restored = ContextWindow.restore(
        window.log,
        window.events,
        window.budget,
        counter=get_counter(),
        funnel=compression_preset(2),
    )
    assert [s.text for s in restored.active] == [s.text for s in window.active]


def test_only_an_active_summary_can_be_revised() -> None:
    window = summarized_window()
    summary = next(s for s in window.active if s.kind is SlotKind.SUMMARY)
    message = next(s for s in window.active if s.kind is SlotKind.AGENT)
    with pytest.raises(NotFound):
        window.revise_summary("no-such-id", "text")
    with pytest.raises(InvalidInput):
        window.revise_summary(message.id, "text")
    with pytest.raises(InvalidInput):
        window.revise_summary(summary.id, "   ")
    window.revise_summary(summary.id, "A rewrite.")
    with pytest.raises(InvalidInput):
        window.revise_summary(summary.id, "again")  # archived now
