"""Recall at assembly time: bring archived slots relevant to the query back into the prompt.

Candidates are the window's archived slots (dropped, summarized, evicted; in seq order; one per
text, the earliest copy) plus the caller's ``extra`` slots (for
example turns of earlier threads). The recaller ranks at most ``k`` of them; the room is filled
by tokens, best first: a candidate whose text is already active or already recalled is skipped,
one larger than the room left is skipped and the next is tried, and the walk stops when no
message can fit any more. A candidate that adds nothing (at least :data:`COVERED` of its words,
and every number, already in the window or in what was recalled before it: an old reply quoting
the knowledge this turn retrieved again) is skipped too; only what the user said covers what the
user said: not the window's agent replies ("Your desk is 4B." in the last reply does not stand
for the user's own "My desk is 4B.": a reply is the agent's words, the statement is the
evidence), nor a document that shares its words ("Report a lost or stolen laptop ..." does not
say the user's "I lost my laptop on the train", the situation a follow-up such as "Who should I
contact?" is about). Each taken slot emits a ``recalled`` event; the log and the active set do
not change.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from smartctx.core.recall import Recaller
from smartctx.core.slots import EventKind, Slot, SlotKind
from smartctx.window.normalize import normalize_text, text_key
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
    active_keys = state.admission.text_keys()
    # One candidate per text, its earliest copy (kept by ``WindowState.note_archived``), the
    # ones the window holds again too (skipped below): a text archived or retrieved again then
    # leaves the list a recaller sees as it was, and it indexes each text once. The archived
    # slots themselves (recallers only read them); the chosen ones are copied below.
    by_id = state.by_id
    candidates = [by_id[i] for i in state.recall_first.values()]
    candidates.sort(key=_seq)
    candidates += [s.copy() for s in extra if s.id not in state.active]
    if not candidates:
        return []
    chosen: list[Slot] = []
    seen: set[str] = set()
    present: set[str] | None = None  # the words the prompt holds so far
    said: set[str] | None = None  # the words of what the user said
    for slot, score in recaller.rank(query, candidates, min(k, len(candidates))):
        if room <= state.message_overhead:
            break
        key = text_key(slot.text)
        if key in active_keys or key in seen:
            continue
        if present is None or said is None:
            active = state.active.values()
            user = SlotKind.USER
            said = set().union(*(_words(s.text) for s in active if s.kind is user))
            present = said.union(*(_words(s.text) for s in active if s.kind is not user))
        words = _words(slot.text)
        if _covered(words, said if slot.kind is SlotKind.USER else present):
            continue
        present |= words
        if slot.kind is SlotKind.USER:
            said |= words
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


def _seq(slot: Slot) -> int:
    return slot.seq


COVERED = 0.8
"""A candidate whose words are at least this share in the prompt already adds nothing."""
_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(normalize_text(text)))


def _covered(words: set[str], present: set[str]) -> bool:
    """Whether ``words`` add nothing to ``present``; a new number always counts (the guard of
    semantic deduplication: "fact 12" is not "fact 13")."""
    if not words:
        return False
    new = words - present
    if any(char.isdigit() for word in new for char in word):
        return False
    return len(new) <= (1 - COVERED) * len(words)
