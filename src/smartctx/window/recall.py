"""Recall at assembly time: bring archived slots relevant to the query back into the prompt.

Candidates are the window's archived slots (dropped, summarized, evicted; in seq order) plus the
caller's ``extra`` slots (for example turns of earlier threads). The recaller ranks at most ``k``
of them; the room is filled by tokens, best first: a candidate whose text is already active or
already recalled is skipped, one larger than the room left is skipped and the next is tried, and
the walk stops when no message can fit any more. Each taken slot emits a ``recalled`` event; the
log and the active set do not change.
"""

from __future__ import annotations

from collections.abc import Sequence

from smartctx.core.recall import Recaller
from smartctx.core.slots import EventKind, Slot
from smartctx.window.normalize import text_key
from smartctx.window.render import render_recalled
from smartctx.window.state import WindowState, clone


def recall_cost(state: WindowState, slot: Slot) -> int:
    """Tokens ``slot`` costs when rendered as a recalled slot (cached per logged slot id)."""
    logged = state.by_id.get(slot.id)
    if logged is None or logged.text != slot.text or logged.source_id != slot.source_id:
        return state.counter.count(render_recalled(slot)) + state.message_overhead
    cost = state.recall_costs.get(slot.id)
    if cost is None:
        cost = state.counter.count(render_recalled(slot)) + state.message_overhead
        state.recall_costs[slot.id] = cost
    return cost


def recall_archived(
    state: WindowState,
    recaller: Recaller,
    query: str,
    extra: Sequence[Slot],
    room: int,
    k: int,
) -> list[Slot]:
    """Copies of the recalled slots (``tokens`` set to their rendered cost), best first; their
    total cost never exceeds ``room``."""
    if room <= state.message_overhead or k <= 0:
        return []
    archived = sorted((state.by_id[i] for i in state.archived), key=lambda s: s.seq)
    candidates = [clone(s) for s in archived]
    candidates += [s.copy() for s in extra if s.id not in state.active]
    if not candidates:
        return []
    active_keys = state.admission.text_keys()
    chosen: list[Slot] = []
    seen: set[str] = set()
    for slot, score in recaller.rank(query, candidates, min(k, len(candidates))):
        if room <= state.message_overhead:
            break
        key = text_key(slot.text)
        if key in active_keys or key in seen:
            continue
        cost = recall_cost(state, slot)
        if cost > room:
            continue
        room -= cost
        seen.add(key)
        chosen.append(clone(slot, tokens=cost))
        state.emit(
            EventKind.RECALLED,
            slot.id,
            score=round(float(score), 4),
            tokens=cost,
            source_id=slot.source_id,
        )
    return chosen
