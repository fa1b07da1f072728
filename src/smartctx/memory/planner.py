"""Planner input: the current utterance first, memory as support (seed "Planner 입력 예시").

Memory never changes what the current request asks: ``build_planner_input`` puts
``recognized_text`` first and marks memory ``current_turn_priority: "required"``;
``resolve_room`` takes the room named in the utterance when there is one and falls back to the
memory's confirmed ``preferred_room`` only when the utterance names none.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from smartctx.memory.contract import CURRENT_TURN_PRIORITY
from smartctx.memory.extractor import CONTRADICTION, extract, rooms_in


def build_planner_input(
    recognized_text: str,
    memory_context: Mapping[str, Any],
    *,
    voice_context: Mapping[str, Any] | None = None,
    device_context: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The planner's input in the seed's shape, ``recognized_text`` first."""
    out: dict[str, Any] = {"recognized_text": recognized_text}
    if voice_context:
        out["voice_context"] = dict(voice_context)
    memory = dict(memory_context)
    memory["current_turn_priority"] = CURRENT_TURN_PRIORITY
    out["memory_context"] = memory
    if device_context:
        out["device_context"] = dict(device_context)
    return out


def render_planner_input(planner_input: Mapping[str, Any]) -> str:
    """The planner input as prompt text: the current request, then the memory as support."""
    request = str(planner_input.get("recognized_text", ""))
    rest = {k: v for k, v in planner_input.items() if k != "recognized_text"}
    return (
        f"Current request (required; it wins over memory): {request}\n\n"
        "Memory context (support only; never changes what the current request asks):\n"
        + json.dumps(rest, ensure_ascii=False, indent=1)
    )


def resolve_room(planner_input: Mapping[str, Any]) -> str | None:
    """The room to act on: the utterance's, else the memory's preferred room, else None."""
    text = str(planner_input.get("recognized_text", ""))
    negated = {o.value for o in extract(text) if o.kind == CONTRADICTION}
    stated = [room for _, room in rooms_in(text) if room not in negated]
    if stated:
        return stated[0]
    memory = planner_input.get("memory_context") or {}
    items = (memory.get("long_term") or {}).get("profile_items") or []
    for item in items:
        if item.get("key") == "preferred_room" and item.get("status", "confirmed") == "confirmed":
            return str(item.get("value"))
        value = item.get("value")
        if isinstance(value, Mapping) and value.get("preferred_cleaning_rooms"):
            return str(value["preferred_cleaning_rooms"][0])
    return None
