"""Recall at assembly time: bring archived slots relevant to the query back into the prompt.

Candidates are the window's archived slots (dropped, summarized, evicted; in seq order) plus the
caller's ``extra`` slots (for example turns of earlier threads). The recaller ranks them; the best
are taken while they fit ``room`` tokens. Each taken slot emits a ``recalled`` event; the log and
the active set do not change.
"""

from __future__ import annotations

from collections.abc import Sequence

from smartctx.core.recall import Recaller
from smartctx.core.slots import EventKind, Slot
from smartctx.window.normalize import text_key
from smartctx.window.render import render_recalled
from smartctx.window.state import WindowState


def recall_archived(
    state: WindowState,
    recaller: Recaller,
    query: str,
    extra: Sequence[Slot],
    room: int,
    k: int,
) -> list[Slot]:
    """Copies of the recalled slots (``tokens`` set to their rendered cost), best first."""
    if room <= 0 or k <= 0:
        return []
    archived = sorted((state.by_id[i] for i in state.archived), key=lambda s: s.seq)
    candidates = [s.copy() for s in archived]
    candidates += [s.copy() for s in extra if s.id not in state.active]
    if not candidates:
        return []
    active_keys = {text_key(s.text) for s in state.active.values()}
    chosen: list[Slot] = []
    seen: set[str] = set()
    for slot, score in recaller.rank(query, candidates, k):
        key = text_key(slot.text)
        if key in active_keys or key in seen:
            continue
        cost = state.counter.count(render_recalled(slot)) + state.message_overhead
        if cost > room:
            continue
        room -= cost
        seen.add(key)
        recalled = slot.copy(tokens=cost)
        chosen.append(recalled)
        state.emit(
            EventKind.RECALLED,
            slot.id,
            score=round(float(score), 4),
            tokens=cost,
            source_id=slot.source_id,
        )
    return chosen
