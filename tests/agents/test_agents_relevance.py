"""The relevance gate recalled memory must pass."""

from __future__ import annotations

from smartctx.agents.relevance import LEXICAL_ONLY, RelevanceGate
from smartctx.core import HashingEmbedder


def test_lexical_gate_keeps_items_sharing_most_of_the_request() -> None:
    gate = RelevanceGate(None)
    assert gate.threshold == LEXICAL_ONLY
    items = ["My laptop battery dies quickly", "Lunch is at noon", "my laptop BATTERY dies quickly"]
    kept = gate.select("laptop battery dies", items, lambda t: t)
    assert [t for t, _ in kept] == ["My laptop battery dies quickly"]  # each text once


def test_symmetric_scoring_lets_a_short_value_match_a_longer_request() -> None:
    gate = RelevanceGate(None)
    assert gate.scores("clean the bedroom now please", ["bedroom"])[0] < LEXICAL_ONLY
    assert gate.scores("clean the bedroom now please", ["bedroom"], symmetric=True)[0] == 1.0


def test_allowance_and_threshold_from_the_embedder() -> None:
    gate = RelevanceGate(HashingEmbedder(), threshold=0.3)
    items = ["battery dies after an hour", "battery dies after two hours of use"]
    kept = gate.select("battery dies", items, lambda t: t, tokens=lambda t: 5, allowance=5)
    assert len(kept) == 1
