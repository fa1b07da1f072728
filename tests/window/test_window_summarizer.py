"""The extractive summarizer, and deduplication with the real USE embedder."""

from __future__ import annotations

import numpy as np

from smartctx.core import Slot, SlotKind, get_counter, get_embedder
from smartctx.window import SUMMARY_PREFIX, ContextWindow, ExtractiveSummarizer, Summarizer
from smartctx.window.summarizer import split_sentences

TEXTS = [
    "The VPN client must be version 5.2 or later. Install it from the portal.",
    "Thanks, that helps! The VPN client must be version 5.2 or later.",
    "Expense reports are due on the 5th of each month. Attach every receipt.",
    "Lunch was great today.",
]


def test_split_sentences_drops_repeats() -> None:
    sentences = split_sentences(TEXTS)
    assert sentences.count("The VPN client must be version 5.2 or later.") == 1
    assert "Install it from the portal." in sentences


def test_summary_respects_target_and_prefix() -> None:
    counter = get_counter()
    summarizer = ExtractiveSummarizer(counter)
    assert isinstance(summarizer, Summarizer)
    for target in (12, 25, 60):
        text = summarizer.summarize(TEXTS, target)
        assert text.startswith(SUMMARY_PREFIX)
        assert counter.count(text) <= target + 2
    full = summarizer.summarize(TEXTS, 500)
    assert all(s in full for s in split_sentences(TEXTS))


def test_summary_prefers_central_sentences_and_keeps_order() -> None:
    summarizer = ExtractiveSummarizer(get_counter())
    text = summarizer.summarize(TEXTS, 35)
    body = text[len(SUMMARY_PREFIX) :]
    assert "VPN client" in body
    assert "Lunch was great" not in body
    if "Expense" in body:
        assert body.index("VPN") < body.index("Expense")


def test_tiny_target_still_yields_a_shortened_sentence() -> None:
    text = ExtractiveSummarizer(get_counter()).summarize(["word " * 50], 10)
    assert text.startswith(SUMMARY_PREFIX) and text.endswith("...")


def test_use_lights_on_off_close_but_not_merged() -> None:
    use_embedder = get_embedder("use")  # process-wide: the model loads once per test session
    vectors = use_embedder.embed(["turn the lights on", "turn the lights off"])
    assert float(np.dot(vectors[0], vectors[1])) >= 0.92  # why the guard exists
    window = ContextWindow(1000, counter=get_counter(), embedder=use_embedder)
    window.add(Slot(SlotKind.USER, "turn the lights on"))
    assert window.add(Slot(SlotKind.USER, "turn the lights off")).admitted
    ask = window.add(Slot(SlotKind.USER, "How do I connect to the VPN?"))
    again = window.add(Slot(SlotKind.USER, "How can I connect to the VPN?"))
    assert ask.admitted and not again.admitted
    assert again.events[0].detail["reason"] == "semantic"
    assert again.events[0].detail["into"] == ask.slot.id
