"""Property tests of the engine's invariants over random sequences of adds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from smartctx.core import BudgetExceeded, HashingEmbedder, Slot, SlotKind, SlotState, get_counter
from smartctx.core.slots import ARCHIVED_STATES, EventKind
from smartctx.window import (
    ContextWindow,
    Stage,
    compression_preset,
    default_funnel,
    eviction_preset,
    fifo_preset,
)

WORDS = ["vpn", "lights", "on", "off", "password", "reset", "not", "3", "7", "expense", "hello"]
EMBEDDER = HashingEmbedder(64)


@dataclass(frozen=True)
class Step:
    kind: SlotKind
    text: str
    pinned: bool
    priority: float | None
    end_turn: bool


steps = st.builds(
    Step,
    kind=st.sampled_from(list(SlotKind)),
    text=st.lists(st.sampled_from(WORDS), min_size=1, max_size=30).map(" ".join),
    pinned=st.booleans(),
    priority=st.one_of(st.none(), st.integers(0, 10).map(float)),
    end_turn=st.integers(0, 5).map(lambda x: x == 0),
)

FUNNELS = {
    "default": default_funnel,
    "eviction": eviction_preset,
    "compression": compression_preset,
}


def make(budget: int, funnel: list[Stage]) -> ContextWindow:
    return ContextWindow(
        budget, counter=get_counter(), embedder=EMBEDDER, funnel=funnel, dedup_threshold=0.9
    )


def check_invariants(window: ContextWindow, result_events: list[object]) -> None:
    assert window.tokens_used <= window.budget
    active = window.active
    assert sum(s.tokens for s in active) == window.tokens_used
    assert sum(s.tokens for s in active if s.pinned) == window.pinned_tokens
    assert all(s.state is SlotState.ACTIVE for s in active)
    assert all(s.pinned for s in active if s.kind is SlotKind.SYSTEM)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    budget=st.integers(30, 200),
    funnel=st.sampled_from(sorted(FUNNELS)),
    plan=st.lists(steps, min_size=1, max_size=40),
)
def test_window_invariants(budget: int, funnel: str, plan: list[Step]) -> None:
    window = make(budget, FUNNELS[funnel]())
    added: list[str] = []
    for step in plan:
        slot = Slot(step.kind, step.text, priority=step.priority, pinned=step.pinned)
        before = (window.snapshot(10_000).to_dict(), len(window.log), window.events)
        pinned_before = {s.id for s in window.active if s.pinned}
        try:
            result = window.add(slot)
        except BudgetExceeded:
            after = (window.snapshot(10_000).to_dict(), len(window.log), window.events)
            assert after == before
            continue
        added.append(slot.id)
        check_invariants(window, list(result.events))
        # Pinned slots never leave the window.
        still = {s.id for s in window.active}
        assert pinned_before <= still
        # Whenever a slot is evicted, no remaining unpinned active slot has a lower priority.
        evicted = [e for e in result.events if e.kind is EventKind.EVICTED]
        if evicted:
            lowest_gone = max(window.get(e.slot_id).effective_priority for e in evicted)
            remaining = [s.effective_priority for s in window.active if not s.pinned]
            assert all(p >= lowest_gone for p in remaining)
        if step.end_turn:
            window.end_turn()
    # Every added slot is still readable from the log, by id.
    for slot_id in added:
        assert window.get(slot_id).id == slot_id
    assert [s.seq for s in window.log] == list(range(len(window.log)))
    assert [e.seq for e in window.events] == list(range(len(window.events)))
    # Exact duplicates are idempotent: adding an active text again changes no active tokens.
    for slot in window.active:
        if slot.kind is SlotKind.SUMMARY:
            continue
        tokens = window.tokens_used
        again = window.add(Slot(slot.kind, slot.text, source_id=slot.source_id))
        assert not again.admitted and window.tokens_used == tokens
        break


@settings(max_examples=40, deadline=None)
@given(budget=st.integers(5, 120), plan=st.lists(steps, min_size=1, max_size=30))
def test_fifo_never_raises_and_always_fits(budget: int, plan: list[Step]) -> None:
    window = make(budget, fifo_preset())
    for step in plan:
        window.add(Slot(step.kind, step.text, priority=step.priority, pinned=step.pinned))
        check_invariants(window, [])
    order = [window.recency(s.id) for s in window.active]
    evicted = [window.recency(s.id) for s in window.log if s.state is SlotState.EVICTED]
    # FIFO: everything evicted is older than everything still active.
    if order and evicted:
        assert max(evicted) < min(order)


class WordRecaller:
    """Ranks candidates by shared words with the query (deterministic, no model)."""

    def rank(self, query: str, candidates: Sequence[Slot], k: int) -> list[tuple[Slot, float]]:
        words = set(query.split())
        scored = [(c, float(len(words & set(c.text.split())))) for c in candidates]
        return sorted((x for x in scored if x[1] > 0), key=lambda x: (-x[1], x[0].id))[:k]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    budget=st.integers(30, 200),
    ratio=st.sampled_from([0.1, 0.3, 0.5, 0.8]),
    funnel=st.sampled_from([*sorted(FUNNELS), "fifo"]),
    plan=st.lists(steps, min_size=1, max_size=40),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
)
def test_recall_reserve_is_kept_after_every_add(
    budget: int, ratio: float, funnel: str, plan: list[Step], query: str
) -> None:
    stages = fifo_preset() if funnel == "fifo" else FUNNELS[funnel]()
    window = ContextWindow(
        budget,
        counter=get_counter(),
        embedder=EMBEDDER,
        funnel=stages,
        dedup_threshold=0.9,
        recaller=WordRecaller(),
        recall_ratio=ratio,
    )
    reserve = int(ratio * budget)
    assert window.reserve == reserve and window.limit == budget - reserve
    for step in plan:
        try:
            window.add(Slot(step.kind, step.text, priority=step.priority, pinned=step.pinned))
        except BudgetExceeded:
            assert funnel != "fifo"
            continue
        check_invariants(window, [])
        if window.pinned_tokens <= budget - reserve or funnel == "fifo":
            assert window.tokens_used <= budget - reserve
        else:  # pinned slots alone use the reserve: nothing unpinned is left
            assert window.tokens_used == window.pinned_tokens <= budget
        prompt = window.assemble(query)
        assert prompt.tokens <= budget
        assert prompt.tokens == window.tokens_used + sum(s.tokens for s in prompt.recalled)
        if step.end_turn:
            window.end_turn()
            check_invariants(window, [])


def _first_archived_by_walk(window: ContextWindow) -> list[str]:
    """Recall's candidates found by a walk over the whole archive: per text, the earliest
    (lowest seq) archived copy, in seq order."""
    from smartctx.window.normalize import text_key

    state = window._state
    first: dict[str, Slot] = {}
    for slot_id in state.archived:
        slot = state.by_id[slot_id]
        key = text_key(slot.text)
        if key not in first or slot.seq < first[key].seq:
            first[key] = slot
    return [s.id for s in sorted(first.values(), key=lambda s: s.seq)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(budget=st.integers(30, 200), plan=st.lists(steps, min_size=1, max_size=40))
def test_recall_candidates_kept_as_slots_leave_equal_a_walk_over_the_archive(
    budget: int, plan: list[Step]
) -> None:
    window = ContextWindow(
        budget, counter=get_counter(), embedder=EMBEDDER, recaller=WordRecaller(), recall_ratio=0.3
    )
    for step in plan:
        try:
            window.add(Slot(step.kind, step.text, priority=step.priority, pinned=step.pinned))
        except BudgetExceeded:
            continue
        if step.end_turn:
            window.end_turn()
        state = window._state
        by_seq = sorted(state.recall_first.values(), key=lambda i: state.by_id[i].seq)
        assert by_seq == _first_archived_by_walk(window)
        assert window.recall_copies(state.by_id[i] for i in state.archived) == [
            state.by_id[i] for i in state.archived if i in state.recall_first.values()
        ]
        assert [s.id for s in window.archived_recall_copies()] == [
            s.id for s in window.recall_copies(s for s in window.log if s.state in ARCHIVED_STATES)
        ]
        restored = ContextWindow.restore(
            window.log, window.events, budget, counter=get_counter(), recall_ratio=0.3
        )
        assert restored._state.recall_first == state.recall_first
