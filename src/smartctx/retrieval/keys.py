"""Search keys: the text a slot is indexed under, which may say more than the slot's own text.

A dialogue turn rarely names its speaker ("I went to a support group yesterday"), while a question
about it does ("When did Caroline go to the support group?"). The key of a turn therefore folds in
what the conversation knows around the text, from ``slot.metadata``:

- ``speaker``: prefixed as ``"Caroline: ..."``;
- ``caption``: a description of a shared image, appended as ``[shares a photo: ...]``;
- ``stated``: what the turn states of its speaker, in a normal form ("Hi, I'm Dana" states
  "My name is Dana."), appended in brackets, so a later "What is my name?" finds the turn by
  its words; set by whoever reads the statements (the agent, for a user's message);
- ``time``: the date of the turn (ISO-8601), appended when ``with_time`` is set;
- ``context``: the neighbouring turns' text, set by whoever knows the conversation; it is not in
  the key but in the slot's separate context (:func:`slot_context`), which the recaller matches
  at a lower weight (an answer often only makes sense next to the question before it).

The slot's text itself is never changed; keys are only what search matches against. Every
function here is pure and deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from smartctx.core.slots import Slot

KeyFunction = Callable[[Slot], str]


def turn_key(text: str, metadata: Mapping[str, Any], *, with_time: bool = False) -> str:
    """The search key of a turn with ``text`` and ``metadata`` (see the module contract)."""
    key = text.strip()
    speaker = str(metadata.get("speaker") or "").strip()
    if speaker:
        key = f"{speaker}: {key}"
    caption = str(metadata.get("caption") or "").strip()
    if caption:
        key = f"{key} [shares a photo: {caption}]"
    stated = str(metadata.get("stated") or "").strip()
    if stated:
        key = f"{key} [{stated}]"
    when = str(metadata.get("time") or "").strip()
    if with_time and when:
        key = f"{key} ({when})"
    return key


def slot_key(slot: Slot) -> str:
    """The default key of a slot: its text with speaker and photo caption folded in."""
    return turn_key(slot.text, slot.metadata)


def dated_slot_key(slot: Slot) -> str:
    """Like :func:`slot_key`, with the turn's date appended."""
    return turn_key(slot.text, slot.metadata, with_time=True)


def slot_context(slot: Slot) -> str:
    """The slot's neighbourhood text (``metadata["context"]``), ``""`` when absent."""
    return str(slot.metadata.get("context") or "").strip()
