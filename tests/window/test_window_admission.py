"""Admission: exact and semantic deduplication, the negation/number guard, merge vs refuse."""

from __future__ import annotations

from typing import Any

import pytest

from smartctx.core import HashingEmbedder, Slot, SlotKind, SlotState, get_counter
from smartctx.core.slots import EventKind
from smartctx.window import ContextWindow, eviction_preset, guard_signature, normalize_text


class _Counting(HashingEmbedder):
    """Records every text it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Any) -> Any:
        self.texts += list(texts)
        return super().embed(texts)


def make(budget: int = 1000, **kwargs: Any) -> ContextWindow:
    return ContextWindow(budget, counter=get_counter(), embedder=HashingEmbedder(), **kwargs)


def test_normalize_collapses_case_width_and_space() -> None:
    assert normalize_text("  Hello\t\nＳｅｒｖｅｒ!  ") == "hello server!"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("turn the lights on", "turn the lights off"),
        ("I can go", "I can't go"),
        ("enable the VPN", "disable the VPN"),
        ("open the door", "close the door"),
        ("meeting at 3 pm", "meeting at 4 pm"),
        ("불을 켜 줘", "불을 꺼 줘"),
    ],
)
def test_guard_separates_opposites(a: str, b: str) -> None:
    assert guard_signature(a) != guard_signature(b)


def test_guard_equal_for_paraphrase() -> None:
    assert guard_signature("Please turn the lights on") == guard_signature("lights on, please")
    assert guard_signature("I do not agree") == guard_signature("I don't agree")


def test_exact_duplicate_user_message_is_merged() -> None:
    window = make()
    first = window.add(Slot(SlotKind.USER, "Hello Server!"))
    second = window.add(Slot(SlotKind.USER, "hello   server!"))
    assert first.admitted and not second.admitted
    assert second.slot.state is SlotState.MERGED
    assert [e.kind for e in second.events] == [EventKind.MERGED]
    assert second.events[0].detail["into"] == first.slot.id
    active = window.active
    assert len(active) == 1 and active[0].repeat_count == 2
    assert len(window.log) == 2
    assert window.assemble().text.count("Hello Server!") == 1


def test_lights_on_off_not_merged_even_when_vectors_are_close() -> None:
    # A threshold low enough that the hashing vectors of the two texts match: only the guard
    # keeps them apart.
    window = make(dedup_threshold=0.3)
    window.add(Slot(SlotKind.USER, "turn the lights on"))
    result = window.add(Slot(SlotKind.USER, "turn the lights off"))
    assert result.admitted
    assert len(window.active) == 2


def test_semantic_duplicate_merged_when_guard_agrees() -> None:
    window = make(dedup_threshold=0.6)
    window.add(Slot(SlotKind.USER, "how do I connect to the office VPN"))
    result = window.add(Slot(SlotKind.USER, "how do I connect to the office VPN today"))
    assert not result.admitted
    assert result.events[0].detail["reason"] == "semantic"
    assert 0.6 <= result.events[0].detail["similarity"] < 1.0


def test_semantic_dedup_off_without_embedder() -> None:
    window = ContextWindow(1000, counter=get_counter(), embedder=None, dedup_threshold=0.1)
    window.add(Slot(SlotKind.USER, "how do I connect to the office VPN"))
    assert window.add(Slot(SlotKind.USER, "how do I connect to the office VPN today")).admitted
    assert not window.add(Slot(SlotKind.USER, "How do I connect to the office VPN")).admitted


def test_tool_logs_are_deduplicated_exactly_and_never_embedded() -> None:
    counting = _Counting()
    embedded = counting.texts
    window = ContextWindow(1000, counter=get_counter(), embedder=counting, dedup_threshold=0.1)
    log = "kb.search('vpn setup') -> kb:vpn.md#2"
    window.add(Slot(SlotKind.TOOL_LOG, log))
    assert window.add(Slot(SlotKind.TOOL_LOG, log.replace("setup", "setup today"))).admitted
    assert not window.add(Slot(SlotKind.TOOL_LOG, log.upper())).admitted
    assert embedded == []


def test_rag_doc_duplicates_are_refused_by_content_and_by_source() -> None:
    window = make()
    doc = window.add(Slot(SlotKind.RAG_DOC, "VPN: install the client.", source_id="kb:vpn#1"))
    same_text = window.add(Slot(SlotKind.RAG_DOC, "VPN: install the client.", source_id="kb:x"))
    same_source = window.add(Slot(SlotKind.RAG_DOC, "Other text entirely.", source_id="kb:vpn#1"))
    for result, reason in ((same_text, "exact"), (same_source, "source_id")):
        assert not result.admitted
        assert result.slot.state is SlotState.REFUSED
        assert result.events[0].kind is EventKind.REFUSED
        assert result.events[0].detail == {
            "duplicate_of": doc.slot.id,
            "reason": reason,
            "similarity": 1.0,
        }
    assert [s.id for s in window.active] == [doc.slot.id]
    assert window.active[0].repeat_count == 1
    assert [s.state for s in window.log] == [SlotState.ACTIVE, SlotState.REFUSED, SlotState.REFUSED]


def test_system_exact_duplicate_refused() -> None:
    window = make()
    window.add(Slot(SlotKind.SYSTEM, "Be brief."))
    assert window.add(Slot(SlotKind.SYSTEM, "be brief.")).slot.state is SlotState.REFUSED


def test_groups_are_separate() -> None:
    window = make()
    window.add(Slot(SlotKind.USER, "VPN"))
    assert window.add(Slot(SlotKind.RAG_DOC, "VPN", source_id="kb:1")).admitted
    assert window.add(Slot(SlotKind.AGENT, "vpn")).admitted  # never merged across kinds
    assert not window.add(Slot(SlotKind.AGENT, "VPN")).admitted  # agent with agent


def test_agent_echo_of_question_stays_in_history() -> None:
    window = make()
    question = window.add(Slot(SlotKind.USER, "How do I reset my password?"))
    echo = window.add(Slot(SlotKind.AGENT, "How do I reset my password?"))
    near = window.add(Slot(SlotKind.AGENT, "how do I reset my password"))
    assert echo.admitted and echo.slot.state is SlotState.ACTIVE
    assert not near.admitted and near.slot.state is SlotState.MERGED
    merged = [e for e in near.events if e.kind is EventKind.MERGED]
    assert merged[0].detail["into"] == echo.slot.id
    assert window.get(question.slot.id).repeat_count == 1
    assert window.get(echo.slot.id).repeat_count == 2
    kinds = [m["role"] for m in window.assemble().messages]
    assert kinds.count("user") == 1 and kinds.count("assistant") == 1


def test_user_repeat_merges_within_user_kind() -> None:
    window = make()
    first = window.add(Slot(SlotKind.USER, "Hello Server!"))
    window.add(Slot(SlotKind.AGENT, "Hello! How can I help?"))
    again = window.add(Slot(SlotKind.USER, "Hello Server!"))
    assert again.slot.state is SlotState.MERGED
    assert window.get(first.slot.id).repeat_count == 2
    assert [s.kind for s in window.active] == [SlotKind.USER, SlotKind.AGENT]


def test_evicted_slot_can_come_back() -> None:
    window = make(budget=12, funnel=eviction_preset())
    doc = Slot(SlotKind.RAG_DOC, "alpha beta gamma delta", source_id="kb:a")
    window.add(doc)
    window.add(Slot(SlotKind.USER, "epsilon zeta eta theta iota kappa"))
    assert window.get(doc.id).state is SlotState.EVICTED
    again = window.add(Slot(SlotKind.RAG_DOC, "alpha beta gamma delta", source_id="kb:a"))
    assert again.admitted


def test_merge_refreshes_recency_for_eviction() -> None:
    window = make(budget=1000, funnel=eviction_preset())
    old = window.add(Slot(SlotKind.AGENT, "first reply about printers")).slot
    newer = window.add(Slot(SlotKind.AGENT, "second reply about monitors")).slot
    window.add(Slot(SlotKind.AGENT, "first reply about printers"))
    assert window.recency(old.id) > window.recency(newer.id)
    big = " ".join(["word"] * 993)
    window.add(Slot(SlotKind.USER, big))
    states = {s.id: s.state for s in window.log}
    assert states[newer.id] is SlotState.EVICTED
    assert states[old.id] is SlotState.ACTIVE


def test_merged_current_turn_pins_the_survivor_and_moves_it_last() -> None:
    window = make()
    question = window.add(Slot(SlotKind.USER, "How do I reset my password?")).slot
    window.add(Slot(SlotKind.AGENT, "Use the self-service portal."))
    window.end_turn()
    window.add(Slot(SlotKind.USER, "How do I reset my password?", pinned=True))
    survivor = window.get(question.id)
    assert survivor.pinned and survivor.repeat_count == 2
    assert window.assemble().messages[-1]["content"] == "How do I reset my password?"


def test_metadata_passes_through_untouched() -> None:
    window = make()
    meta = {"speaker": "Caroline", "time": "2023-05-08", "owner": "u1"}
    given = Slot(SlotKind.USER, "hi there", metadata=meta)
    stored = window.add(given).slot
    assert stored.metadata == meta and stored.metadata is not meta
    assert given.seq == -1 and given.tokens == 0  # the caller's object is untouched


def test_clone_copies_every_slot_field() -> None:
    from dataclasses import fields

    from smartctx.window.window import clone

    slot = Slot(
        SlotKind.RAG_DOC,
        "x",
        priority=3.0,
        source_id="kb:x",
        provenance=("a",),
        pinned=True,
        repeat_count=2,
        state=SlotState.EVICTED,
        seq=5,
        tokens=9,
        created_at="2026-01-01",
        metadata={"k": [1]},
    )
    copy = clone(slot)
    assert all(getattr(copy, f.name) == getattr(slot, f.name) for f in fields(Slot))
    assert copy.metadata is not slot.metadata


def test_a_greeting_merges_across_languages_but_not_with_thanks() -> None:
    from smartctx.core import HashingEmbedder, Slot, SlotKind, get_counter
    from smartctx.core.slots import EventKind
    from smartctx.window import ContextWindow

    window = ContextWindow(2000, counter=get_counter(), embedder=HashingEmbedder())
    window.add(Slot(SlotKind.USER, "Hello!"))
    merged = window.add(Slot(SlotKind.USER, "您好"))
    assert [e.kind for e in merged.events][-1] is EventKind.MERGED
    kept = window.add(Slot(SlotKind.USER, "谢谢"))
    assert EventKind.MERGED not in [e.kind for e in kept.events]
    assert window.add(Slot(SlotKind.USER, "Hello 3 times")).events[-1].kind is not EventKind.MERGED


def test_a_slot_is_embedded_only_when_another_shares_its_guard_signature() -> None:
    embedder = _Counting()
    window = ContextWindow(1000, counter=get_counter(), embedder=embedder, dedup_threshold=0.6)
    window.add(Slot(SlotKind.USER, "ticket 4711: the printer on floor 2 jams"))
    window.add(Slot(SlotKind.USER, "ticket 5820: the printer on floor 3 jams"))
    assert embedder.texts == []  # other numbers: neither can match, neither is embedded
    window.add(Slot(SlotKind.USER, "how do I connect to the office VPN"))
    assert embedder.texts == []  # the only slot without numbers so far
    result = window.add(Slot(SlotKind.USER, "how do I connect to the office VPN today"))
    # now both are embedded, and the match is the one an eager index finds
    assert sorted(embedder.texts) == sorted(
        ["how do I connect to the office VPN", "how do I connect to the office VPN today"]
    )
    assert not result.admitted and result.events[0].detail["reason"] == "semantic"


@pytest.mark.parametrize("seed", range(4))
def test_lazy_embedding_finds_exactly_the_matches_of_embedding_every_slot(seed: int) -> None:
    import random

    import numpy as np

    rng = random.Random(seed)
    words = ["vpn", "printer", "office", "connect", "floor", "jams", "today", "please", "the"]
    numbers = ["", "", " 2", " 3"]
    negations = ["", "", " not"]
    threshold = 0.7
    window = make(budget=100_000, dedup_threshold=threshold)
    embedder = HashingEmbedder()
    admitted: list[tuple[str, str, frozenset[str], Any]] = []  # id, text, signature, vector
    for _ in range(120):
        text = " ".join(rng.sample(words, rng.randint(3, 6))) + rng.choice(numbers)
        text += rng.choice(negations)
        sig = guard_signature(text)
        vector = embedder.embed([text])[0]
        key = normalize_text(text)
        exact = [a for a in admitted if normalize_text(a[1]) == key]
        similar = [
            (float(np.dot(a[3], vector)), -i, a[0])
            for i, a in enumerate(admitted)
            if a[2] == sig and float(np.dot(a[3], vector)) >= threshold
        ]
        expected = exact[0][0] if exact else (max(similar)[2] if similar else None)
        result = window.add(Slot(SlotKind.USER, text))
        if expected is None:
            assert result.admitted, text
            admitted.append((result.slot.id, text, sig, vector))
        else:
            assert not result.admitted, text
            assert result.events[0].detail["into"] == expected, text
