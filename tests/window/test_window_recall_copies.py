"""Recall's candidates: one per text, its earliest archived copy, so a text archived again (a
knowledge chunk retrieved turn after turn) adds no candidate and needs no indexing again."""

from __future__ import annotations

from collections.abc import Sequence

from smartctx.core import HashingEmbedder, Slot, SlotKind, SlotState, get_counter
from smartctx.window import ContextWindow

CHUNK = "Connect to the VPN with the GlobalProtect app and the portal vpn.example.com."


class Recording:
    """A recaller that keeps the candidate ids it was asked to rank and ranks nothing."""

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def rank(self, query: str, candidates: Sequence[Slot], k: int) -> list[tuple[Slot, float]]:
        self.asked.append([c.id for c in candidates])
        return []


def _turn(window: ContextWindow, n: int) -> None:
    window.add(Slot(SlotKind.USER, f"Question {n}: " + "what about the printer setup? " * 6))
    window.add(Slot(SlotKind.AGENT, f"Answer {n}: " + "the printer is on floor two. " * 6))


def test_a_chunk_archived_again_keeps_its_first_copy_as_the_one_candidate() -> None:
    recaller = Recording()
    window = ContextWindow(
        260, counter=get_counter(), embedder=HashingEmbedder(), recaller=recaller, recall_ratio=0.3
    )
    first = window.add(Slot(SlotKind.RAG_DOC, CHUNK, source_id="kb:vpn.md#1")).slot.id
    for n in range(4):
        _turn(window, n)
    assert first in {s.id for s in _archived(window)}
    window.assemble("vpn")
    again = window.add(Slot(SlotKind.RAG_DOC, CHUNK, source_id="kb:vpn.md#1")).slot.id
    assert again != first
    for n in range(4, 8):
        _turn(window, n)
    archived = _archived(window)
    assert again in {s.id for s in archived}
    window.assemble("vpn")
    before, after = recaller.asked
    assert first in before and first in after and again not in after
    assert set(before) <= set(after)
    copies = window.recall_copies(archived)
    assert first in {s.id for s in copies} and again not in {s.id for s in copies}


def _archived(window: ContextWindow) -> list[Slot]:
    return [s for s in window.log if s.state is not SlotState.ACTIVE]
