"""Fact keys extracted by a language model, with the offline keys as the floor.

``LLMExtractor(complete)`` asks a model (``complete``: prompt text in, reply text out; e.g. an
OpenAI-compatible chat model wrapped by the caller) to list the facts and events of one session
as JSON, each with its date and the turns it rests on, and turns them into fact keys
(:class:`~smartctx.retrieval.keys_tiers.TierKey`). Contract:

- the offline fact keys (:class:`~smartctx.retrieval.keys_tiers.OfflineExtractor`) are always
  returned too, so a model that says little, or nothing usable, never loses a turn;
- the reply is read leniently: the first JSON array in it (inside a code fence or prose), items
  with a non-empty ``fact`` and at least one known turn number; a bad ``date`` is dropped (the
  fact keeps its turn's day); anything else in the reply is ignored. A reply with no usable item,
  or a ``complete`` that raises, counts in ``failures`` and leaves the offline keys alone;
- one call per session (a session is re-asked when it grows); results are remembered by the
  session's text, so asking twice costs nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from datetime import date
from typing import Any

from smartctx.core.slots import Slot
from smartctx.retrieval.dates import label
from smartctx.retrieval.keys_tiers import OfflineExtractor, TierKey, day_of, speaker_of

Complete = Callable[[str], str]

PROMPT = """You read one session of a conversation and list what a reader may later ask about:
facts about the people (who they are, what they like, own, plan, feel) and events (what happened,
where, with whom). Write each fact as one plain sentence naming the person (never "I" or "you")
and give the date it happened as YYYY-MM-DD when the session says or implies it (resolve
"yesterday", "last week" and the like against the session date).

Answer with a JSON array only, items shaped like
{{"fact": "Caroline went to an LGBTQ support group.", "date": "2023-05-07", "turns": [3]}}
where "turns" are the numbers of the turns the fact rests on.

Session date: {day}
{turns}
"""


def render(session: Sequence[Slot]) -> str:
    """The prompt for ``session``: its date and its turns numbered from 1."""
    day = next((d for s in session if (d := day_of(s)) is not None), None)
    lines = []
    for n, slot in enumerate(session, 1):
        caption = str(slot.metadata.get("caption") or "").strip()
        extra = f" [shares a photo: {caption}]" if caption else ""
        lines.append(f"{n}. {speaker_of(slot) or 'someone'}: {slot.text.strip()}{extra}")
    return PROMPT.format(day=day.isoformat() if day else "unknown", turns="\n".join(lines))


_ARRAY = re.compile(r"\[.*\]", re.DOTALL)


def parse(reply: str, session: Sequence[Slot]) -> list[TierKey]:
    """The fact keys in a model's ``reply`` for ``session`` (see the module contract)."""
    match = _ARRAY.search(reply)
    if match is None:
        return []
    try:
        items = json.loads(match.group(0))
    except json.JSONDecodeError:
        return []
    if not isinstance(items, list):
        return []
    out: list[TierKey] = []
    for n, item in enumerate(items):
        key = _key(item, session, n)
        if key is not None:
            out.append(key)
    return out


def _key(item: Any, session: Sequence[Slot], n: int) -> TierKey | None:
    if not isinstance(item, dict):
        return None
    fact = item.get("fact")
    turns = item.get("turns")
    if not isinstance(fact, str) or not fact.strip() or not isinstance(turns, list):
        return None
    ids = [
        session[t - 1].id
        for t in turns
        if isinstance(t, int) and not isinstance(t, bool) and 1 <= t <= len(session)
    ]
    if not ids:
        return None
    ids = list(dict.fromkeys(ids))
    day: date | None = None
    raw = item.get("date")
    if isinstance(raw, str):
        try:
            day = date.fromisoformat(raw.strip()[:10])
        except ValueError:
            day = None
    if day is None:
        day = day_of(next(s for s in session if s.id == ids[0]))
    text = fact.strip() + (f" ({label((day, day))})" if day is not None else "")
    span = (day, day) if day is not None else None
    return TierKey(f"fact:{ids[0]}:llm{n}", "fact", text, tuple(ids), span)


class LLMExtractor:
    """Fact keys from a model, plus the offline ones (see the module doc)."""

    def __init__(self, complete: Complete, *, fallback: OfflineExtractor | None = None) -> None:
        self.complete = complete
        self.fallback = fallback or OfflineExtractor()
        self.failures = 0
        self._memo: dict[tuple[str, ...], list[TierKey]] = {}

    def facts(self, session: Sequence[Slot]) -> list[TierKey]:
        offline = self.fallback.facts(session)
        if not session:
            return offline
        memo = tuple(f"{s.id}\x00{s.text}" for s in session)
        found = self._memo.get(memo)
        if found is None:
            try:
                found = parse(self.complete(render(session)), session)
            except Exception:  # a failing model must never lose the offline keys
                found = []
            if not found:
                self.failures += 1
            self._memo[memo] = found
        return offline + found
