"""Prompt assembly (order, source tags, token accounting), recall and the snapshot JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from smartctx.core import HashingEmbedder, Slot, SlotKind, get_counter
from smartctx.core.slots import EventKind, SlotState
from smartctx.window import ContextWindow, eviction_preset, render_content


def make(budget: int = 2000, **kwargs: Any) -> ContextWindow:
    return ContextWindow(budget, counter=get_counter(), embedder=HashingEmbedder(), **kwargs)


def test_prompt_order_and_source_tags() -> None:
    window = make()
    window.add(Slot(SlotKind.USER, "first question"))
    window.add(Slot(SlotKind.RAG_DOC, "VPN needs the client.", source_id="kb:vpn.md#1"))
    window.add(Slot(SlotKind.AGENT, "first answer"))
    window.add(Slot(SlotKind.MEMORY, "User prefers Korean.", source_id="profile:lang"))
    window.add(Slot(SlotKind.SYSTEM, "system rules"))
    window.add(Slot(SlotKind.SUMMARY, "Summary of earlier conversation: hello."))
    window.add(Slot(SlotKind.USER, "current question", pinned=True))
    prompt = window.assemble()
    assert [m["role"] for m in prompt.messages] == [
        "system",
        "system",
        "system",
        "system",
        "user",
        "assistant",
        "user",
    ]
    contents = [m["content"] for m in prompt.messages]
    assert contents[0] == "system rules"
    assert contents[1].startswith("Summary of earlier conversation")
    assert contents[2] == "[source: profile:lang] User prefers Korean."
    assert contents[3] == "[source: kb:vpn.md#1] VPN needs the client."
    assert contents[4:] == ["first question", "first answer", "current question"]
    assert prompt.text.splitlines()[0] == "SYSTEM: system rules"
    assert prompt.text.endswith("USER: current question")


def test_tokens_equal_what_is_sent() -> None:
    counter = get_counter()
    window = make(message_overhead=3)
    window.add(Slot(SlotKind.SYSTEM, "Be kind."))
    window.add(Slot(SlotKind.RAG_DOC, "Expense forms are due monthly.", source_id="kb:exp#2"))
    window.add(Slot(SlotKind.TOOL_LOG, "ping ok", source_id="ping"))
    prompt = window.assemble()
    sent = sum(counter.count(m["content"]) + 3 for m in prompt.messages)
    assert prompt.tokens == window.tokens_used == sent
    assert sum(s.tokens for s in window.active) == window.tokens_used
    assert [render_content(s) for s in prompt.slots] == [m["content"] for m in prompt.messages]


class KeywordRecaller:
    """Ranks candidates by shared words with the query (a deterministic test recaller)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def rank(self, query: str, candidates: Sequence[Slot], k: int) -> list[tuple[Slot, float]]:
        self.seen = [c.id for c in candidates]
        words = set(query.lower().split())
        scored = [(c, float(len(words & set(c.text.lower().split())))) for c in candidates]
        scored = [x for x in scored if x[1] > 0]
        return sorted(scored, key=lambda x: -x[1])[:k]


def test_recall_brings_archived_slots_back_without_changing_the_log() -> None:
    recaller = KeywordRecaller()
    window = make(60, funnel=eviction_preset(), recaller=recaller, recall_ratio=0.5)
    old = window.add(Slot(SlotKind.AGENT, "the wifi password is kiwi", source_id="D1:3")).slot
    # An oversized reply evicts the old one, then itself: archived slots and free room.
    window.add(Slot(SlotKind.AGENT, " ".join(["filler"] * 70)))
    assert window.get(old.id).state is SlotState.EVICTED
    other_thread = Slot(SlotKind.USER, "my wifi router is in the attic", source_id="T2:1")
    log_before, active_before = len(window.log), window.active
    prompt = window.assemble("what is the wifi password", extra=[other_thread])
    assert other_thread.id in recaller.seen and old.id in recaller.seen
    assert prompt.recalled and prompt.recalled[0].id == old.id
    assert "[recalled from: D1:3] the wifi password is kiwi" in prompt.text
    assert prompt.tokens == window.tokens_used + sum(s.tokens for s in prompt.recalled)
    assert prompt.tokens <= window.budget
    assert window.reserve == 30 and window.tokens_used <= window.budget - window.reserve
    recalled_events = [e for e in window.events if e.kind is EventKind.RECALLED]
    assert [e.slot_id for e in recalled_events] == [s.id for s in prompt.recalled]
    assert len(window.log) == log_before and window.active == active_before


def test_no_recall_without_query_ratio_or_room() -> None:
    window = make(40, funnel=eviction_preset(), recaller=KeywordRecaller())
    window.add(Slot(SlotKind.AGENT, "alpha beta gamma"))
    # A pinned turn may use the reserve: it evicts everything unpinned and leaves no room.
    window.add(Slot(SlotKind.USER, " ".join(["word"] * 39), pinned=True))
    assert window.tokens_used == window.pinned_tokens > window.budget - window.reserve
    assert window.assemble().recalled == []
    assert window.assemble("alpha").recalled == []  # the pinned turn took the reserve
    window.end_turn()  # unpinned: the funnel brings the window back under its limit
    assert window.tokens_used <= window.budget - window.reserve
    no_ratio = make(40, funnel=eviction_preset(), recaller=KeywordRecaller(), recall_ratio=0.0)
    no_ratio.add(Slot(SlotKind.AGENT, "alpha beta gamma"))
    no_ratio.add(Slot(SlotKind.USER, " ".join(["word"] * 30)))
    assert no_ratio.reserve == 0 and no_ratio.limit == 40
    assert no_ratio.assemble("alpha").recalled == []


def test_recall_fills_the_reserve_by_tokens_best_first() -> None:
    def fill(window: ContextWindow) -> ContextWindow:
        for i in range(60):
            window.add(Slot(SlotKind.AGENT, f"fact {i} about the kiwi password number {i}"))
        window.add(Slot(SlotKind.AGENT, "fact 59 about the kiwi password number 59"))
        return window

    window = fill(make(600, funnel=eviction_preset(), recaller=KeywordRecaller(), recall_ratio=0.5))
    assert window.reserve == 300 and window.tokens_used <= 300
    prompt = window.assemble("kiwi password")
    free = window.budget - window.tokens_used
    used = sum(s.tokens for s in prompt.recalled)
    assert len(prompt.recalled) > 8  # not capped at a small k: the room is filled by tokens
    assert used <= free and free - used < max(s.tokens for s in prompt.recalled)
    assert prompt.tokens <= window.budget
    assert not {s.text for s in window.active} & {s.text for s in prompt.recalled}
    assert len({s.text for s in prompt.recalled}) == len(prompt.recalled)
    capped = fill(
        make(
            600, funnel=eviction_preset(), recaller=KeywordRecaller(), recall_ratio=0.5, recall_k=3
        )
    )
    assert len(capped.assemble("kiwi password").recalled) == 3


def test_snapshot_json() -> None:
    window = make(500)
    window.add(Slot(SlotKind.SYSTEM, "rules"))
    window.add(Slot(SlotKind.RAG_DOC, "doc text", source_id="kb:1"))
    window.add(Slot(SlotKind.USER, "hi"))
    window.add(Slot(SlotKind.USER, "hi"))
    data = window.snapshot(recent_events=2).to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["budget"] == 500 and data["tokens_used"] == window.tokens_used
    assert data["kinds"]["user"] == {"count": 1, "tokens": 1}
    assert data["kinds"]["system"]["count"] == 1
    assert set(data["kinds"]) == {k.value for k in SlotKind}
    assert [e["kind"] for e in data["events"]] == ["admitted", "merged"]
    slot = data["slots"][2]
    assert slot["repeat_count"] == 2 and slot["kind"] == "user" and slot["pinned"] is False
    assert {"id", "kind", "priority", "source_id", "tokens", "state", "provenance"} <= set(slot)
    assert data["slots"][1]["source_id"] == "kb:1"


def test_listener_receives_each_batch() -> None:
    window = make()
    batches: list[list[EventKind]] = []
    remove = window.add_listener(lambda events: batches.append([e.kind for e in events]))
    window.add(Slot(SlotKind.USER, "one"))
    window.add_many([Slot(SlotKind.USER, "two"), Slot(SlotKind.USER, "two")])
    remove()
    window.add(Slot(SlotKind.USER, "three"))
    assert batches == [[EventKind.ADMITTED], [EventKind.ADMITTED, EventKind.MERGED]]
