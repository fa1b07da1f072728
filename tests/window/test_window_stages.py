"""Funnel stages, presets, pinning and BudgetExceeded."""

from __future__ import annotations

import pytest

from smartctx.core import BudgetExceeded, HashingEmbedder, Slot, SlotKind, SlotState, get_counter
from smartctx.core.errors import InvalidInput
from smartctx.core.slots import EventKind
from smartctx.window import (
    SUMMARY_PREFIX,
    ContextWindow,
    DropBelow,
    EvictLowestPriority,
    Stage,
    Summarize,
    compression_preset,
    eviction_preset,
    fifo_preset,
)


def make(budget: int, funnel: list[Stage] | None = None) -> ContextWindow:
    return ContextWindow(budget, counter=get_counter(), embedder=HashingEmbedder(), funnel=funnel)


def words(n: int, stem: str = "w") -> str:
    return " ".join(f"{stem}{i}" for i in range(n))


def states(window: ContextWindow) -> dict[str, SlotState]:
    return {s.id: s.state for s in window.log}


def test_drop_below_drops_only_low_priority_then_stops() -> None:
    window = make(60, [DropBelow(3.0)])
    log = window.add(Slot(SlotKind.TOOL_LOG, words(20, "log"))).slot
    agent = window.add(Slot(SlotKind.AGENT, words(20, "reply"))).slot
    window.add(Slot(SlotKind.USER, words(30, "ask")))
    assert states(window)[log.id] is SlotState.DROPPED
    # DropBelow alone could not fit the window: the fallback evicted the agent reply.
    assert states(window)[agent.id] is SlotState.EVICTED
    assert window.tokens_used <= 60
    kinds = [e.kind for e in window.events]
    assert EventKind.DROPPED in kinds and EventKind.EVICTED in kinds


def test_evict_lowest_priority_order_seed_scenario() -> None:
    # Seed smart-context-memory step 3: the chit-chat reply (P5) goes, the RAG doc (P7) stays.
    window = make(175, eviction_preset())
    window.add(Slot(SlotKind.SYSTEM, "You are an IT helpdesk assistant."))
    window.add(Slot(SlotKind.USER, "How do I connect to the VPN?"))
    rag = window.add(Slot(SlotKind.RAG_DOC, words(30, "vpn"), source_id="kb:vpn.md#1")).slot
    chat = window.add(Slot(SlotKind.AGENT, "You are welcome, happy to help!")).slot
    window.add(Slot(SlotKind.RAG_DOC, words(40, "expense"), source_id="kb:expense.md#1"))
    assert states(window)[chat.id] is SlotState.EVICTED
    assert states(window)[rag.id] is SlotState.ACTIVE
    assert window.tokens_used <= 175


def test_eviction_victim_is_min_priority_then_oldest() -> None:
    window = make(10_000, [EvictLowestPriority()])
    a = window.add(Slot(SlotKind.AGENT, "alpha one", priority=5)).slot
    b = window.add(Slot(SlotKind.AGENT, "beta two", priority=4)).slot
    c = window.add(Slot(SlotKind.AGENT, "gamma three", priority=4)).slot
    window.add(Slot(SlotKind.USER, words(9_995)))
    evicted = [e.slot_id for e in window.events if e.kind is EventKind.EVICTED]
    assert evicted[:2] == [b.id, c.id]
    assert a.id not in evicted[:2]


def test_summarize_replaces_oldest_run_with_provenance() -> None:
    window = make(400, [Summarize(keep_recent=2)])
    turns = []
    for i in range(6):
        kind = SlotKind.USER if i % 2 == 0 else SlotKind.AGENT
        turns.append(window.add(Slot(kind, f"Message {i} talks about topic {i}. " * 6)).slot)
    window.add(Slot(SlotKind.USER, words(150, "long")))
    summaries = [s for s in window.active if s.kind is SlotKind.SUMMARY]
    assert len(summaries) == 1
    summary = summaries[0]
    assert summary.text.startswith(SUMMARY_PREFIX)
    replaced = set(summary.provenance)
    assert replaced and replaced <= {t.id for t in turns}
    for slot in window.log:
        if slot.id in replaced:
            assert slot.state is SlotState.SUMMARIZED
    summarized_events = [e for e in window.events if e.kind is EventKind.SUMMARIZED]
    assert {e.slot_id for e in summarized_events} == replaced
    assert all(e.detail["into"] == summary.id for e in summarized_events)
    admitted = [e for e in window.events if e.slot_id == summary.id]
    assert admitted[0].kind is EventKind.ADMITTED
    assert admitted[0].detail["provenance"] == list(summary.provenance)
    assert window.tokens_used <= 400


def test_summaries_roll_up_into_one_with_union_provenance() -> None:
    window = make(300, [Summarize(keep_recent=4), EvictLowestPriority()])
    turns = []
    for i in range(80):
        kind = SlotKind.USER if i % 2 == 0 else SlotKind.AGENT
        text = f"Turn {i} says the colour of box {i} is shade {i * 7}. It was noted on day {i}."
        turns.append(window.add(Slot(kind, text)).slot)
        summaries = [s for s in window.active if s.kind is SlotKind.SUMMARY]
        assert len(summaries) <= 1
        assert all(s.tokens <= max(16, int(0.25 * 300)) + 5 for s in summaries)
    made = [s for s in window.log if s.kind is SlotKind.SUMMARY]
    assert len(made) >= 3  # the stage ran several times, yet one summary is active
    (current,) = [s for s in window.active if s.kind is SlotKind.SUMMARY]
    older = [s for s in made if s.id != current.id]
    assert all(window.get(s.id).state is SlotState.SUMMARIZED for s in older)
    previous = max(older, key=lambda s: s.seq)
    # Provenance: the union of everything replaced, the folded summary's own id included.
    assert previous.id in current.provenance
    assert set(previous.provenance) <= set(current.provenance)
    covered = {i for i in current.provenance if i in {t.id for t in turns}}
    assert covered == {t.id for t in turns if window.get(t.id).state is SlotState.SUMMARIZED}
    folded = [
        e for e in window.events if e.kind is EventKind.SUMMARIZED and e.slot_id == previous.id
    ]
    assert folded and folded[0].detail["into"] == current.id
    assert current.metadata["folded"] == 1
    assert window.tokens_used <= 300


def test_summaries_keep_at_most_max_summaries() -> None:
    window = make(300, [Summarize(keep_recent=4, max_summaries=2), EvictLowestPriority()])
    for i in range(80):
        window.add(Slot(SlotKind.USER, f"Note {i}: item {i} weighs {i * 3} grams, said Ann."))
        assert sum(1 for s in window.active if s.kind is SlotKind.SUMMARY) <= 2
    with pytest.raises(InvalidInput):
        Summarize(max_summaries=0)


def test_summarize_keeps_recent_and_pinned() -> None:
    window = make(200, [Summarize(keep_recent=4)])
    pinned = window.add(Slot(SlotKind.USER, "Pinned question " * 10, pinned=True)).slot
    for i in range(5):
        window.add(Slot(SlotKind.AGENT, f"Answer number {i} is here. " * 5))
    assert states(window)[pinned.id] is SlotState.ACTIVE
    # The run stops at the pinned slot, so nothing could be summarised: eviction fallback.
    assert not any(s.kind is SlotKind.SUMMARY for s in window.active)
    assert window.tokens_used <= 200


def test_compression_preset_seed_scenario_budget_100() -> None:
    window = make(100, compression_preset())
    window.add(Slot(SlotKind.SYSTEM, "You are a concise assistant."))
    window.add(Slot(SlotKind.USER, "Hello Server!"))
    assert not window.add(Slot(SlotKind.USER, "Hello Server!")).admitted
    for i in range(5):
        window.add(Slot(SlotKind.TOOL_LOG, f"debug line {i}: cache warm"))
    for i in range(4):
        window.add(Slot(SlotKind.AGENT, f"Reply {i}: the VPN client needs version {i}.0. Done."))
        window.add(Slot(SlotKind.USER, f"Follow-up {i} about the expense form and receipts."))
    window.add(Slot(SlotKind.USER, "Here is a long text. " + words(12, "long")))
    prompt = window.assemble()
    assert prompt.tokens <= 100
    assert "debug line" not in prompt.text
    assert SUMMARY_PREFIX.strip() in prompt.text
    assert prompt.messages[0]["content"] == "You are a concise assistant."


def test_pinned_slots_never_leave_and_budget_exceeded_changes_nothing() -> None:
    window = make(100)
    window.add(Slot(SlotKind.SYSTEM, words(20, "sys")))
    window.add(Slot(SlotKind.USER, words(20, "current"), pinned=True))
    before = (window.snapshot().to_dict(), len(window.log), len(window.events), window.version)
    with pytest.raises(BudgetExceeded) as info:
        window.add(Slot(SlotKind.USER, words(15, "more"), pinned=True))
    assert "raise the budget" in str(info.value)
    assert len(info.value.detail["pinned"]) == 3
    after = (window.snapshot().to_dict(), len(window.log), len(window.events), window.version)
    assert before == after
    # An unpinned slot is admitted and evicted instead.
    result = window.add(Slot(SlotKind.AGENT, words(15, "reply")))
    assert result.admitted and result.events[-1].kind is EventKind.EVICTED
    assert all(s.state is SlotState.ACTIVE for s in window.log if s.pinned)


def test_unpin_and_end_turn() -> None:
    window = make(100)
    system = window.add(Slot(SlotKind.SYSTEM, "rules")).slot
    turn = window.add(Slot(SlotKind.USER, "question", pinned=True)).slot
    assert window.pinned_tokens == system.tokens + turn.tokens
    events = window.end_turn()
    assert [(e.kind, e.slot_id) for e in events] == [(EventKind.UNPINNED, turn.id)]
    assert window.pinned_tokens == system.tokens
    assert window.end_turn() == []
    other = window.add(Slot(SlotKind.USER, "next", pinned=True)).slot
    assert [e.kind for e in window.unpin(other.id)] == [EventKind.UNPINNED]
    assert window.unpin(other.id) == []
    with pytest.raises(Exception, match="always pinned"):
        window.unpin(system.id)


def test_fifo_evicts_oldest_including_system() -> None:
    window = make(80, fifo_preset())
    system = window.add(Slot(SlotKind.SYSTEM, words(10, "sys"))).slot
    first = window.add(Slot(SlotKind.USER, words(10, "q"), pinned=True)).slot
    window.add(Slot(SlotKind.RAG_DOC, words(20, "doc"), source_id="kb:1"))
    assert states(window)[system.id] is SlotState.EVICTED
    assert states(window)[first.id] is SlotState.ACTIVE
    assert window.tokens_used <= 80
    assert window.pinned_tokens == first.tokens


def test_fifo_never_raises_and_evicts_an_oversized_slot() -> None:
    window = make(10, fifo_preset())
    window.add(Slot(SlotKind.SYSTEM, words(5, "sys")))
    result = window.add(Slot(SlotKind.SYSTEM, words(50, "huge")))
    assert result.admitted and result.slot.tokens > 10
    assert window.active == [] and window.tokens_used == 0 and window.pinned_tokens == 0
