"""The ``a2a-memory-context-v1`` wire contract (seed memory-and-personalization).

``normalize_memory_context(voice_context)`` turns the device's ``memory_snapshot`` into the
compact, planner-safe memory context; ``build_memory_update(...)`` builds what the runtime sends
back after a turn. Both produce exactly the seed's JSON (field names, nesting, key order) and
are compact by construction: at most ``max_pairs`` recent pairs, ``max_daily`` daily summaries
and ``max_profile_items`` profile items, each text cut to ``max_text_chars``, and the whole
context cut to ``max_tokens`` (oldest pairs go first, then oldest daily summaries, then the
least confident profile items). Texts are redacted (``privacy.redact``) on the way in.

On A2A the snapshot travels in the message metadata under :data:`EXTENSION_URI` and the update
comes back in the reply's metadata under the same key.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from smartctx.core.tokens import TokenCounter, get_counter
from smartctx.memory.privacy import redact

CONTRACT_VERSION = "a2a-memory-context-v1"
EXTENSION_URI = "https://smartctx.dev/extensions/a2a-memory-context/v1"
CURRENT_TURN_PRIORITY = "required"
DEVICE_SOURCE = "ondevice_cache"
RUNTIME_SOURCE = "cloud_a2a_runtime"
_HIDDEN_STATUSES = frozenset({"rejected", "reverted"})


def _text(value: Any, limit: int) -> str:
    text = "" if value is None else str(value)
    return redact(text[:limit])


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def snapshot_of(voice_context: Mapping[str, Any]) -> Mapping[str, Any]:
    """The memory snapshot inside ``{"voice_context": {...}}``, a voice context, or a snapshot."""
    outer = _mapping(voice_context)
    inner = _mapping(outer.get("voice_context")) or outer
    snapshot = _mapping(inner.get("memory_snapshot"))
    if snapshot:
        return snapshot
    if any(k in inner for k in ("short_term", "mid_term", "long_term", "sync")):
        return inner
    return {}


def _profile_item(item: Mapping[str, Any], limit: int) -> dict[str, Any] | None:
    if str(item.get("status", "")) in _HIDDEN_STATUSES:
        return None
    out: dict[str, Any] = {}
    for name in ("key", "category"):
        if name in item:
            out[name] = _text(item[name], 64)
    value = item.get("value")
    if isinstance(value, str | int | float | bool):
        out["value"] = _text(value, limit)
    elif value is not None:
        dumped = json.dumps(value, ensure_ascii=False)
        out["value"] = json.loads(redact(dumped)) if len(dumped) <= limit else _text(dumped, limit)
    if "confidence" in item:
        with contextlib.suppress(TypeError, ValueError):
            out["confidence"] = round(float(item["confidence"]), 2)
    if "status" in item:
        out["status"] = str(item["status"])
    return out if "value" in out else None


def normalize_memory_context(
    voice_context: Mapping[str, Any],
    *,
    max_pairs: int = 5,
    max_daily: int = 7,
    max_profile_items: int = 10,
    max_text_chars: int = 400,
    max_tokens: int = 800,
    counter: TokenCounter | None = None,
) -> dict[str, Any]:
    """The planner-safe memory context of a device's voice context (seed "normalized output").

    Never raises on malformed input: unknown fields are ignored and missing ones are empty.
    """
    snap = snapshot_of(voice_context)
    short, mid, long_ = (_mapping(snap.get(k)) for k in ("short_term", "mid_term", "long_term"))
    pairs: list[dict[str, Any]] = []
    for raw in _list(short.get("recent_pairs"))[-max_pairs:] if max_pairs else []:
        pair = _mapping(raw)
        out = {
            "user": _text(pair.get("user", pair.get("user_text")), max_text_chars),
            "assistant": _text(pair.get("assistant", pair.get("assistant_text")), max_text_chars),
        }
        if pair.get("route_family"):
            out["route_family"] = _text(pair["route_family"], 32)
        if out["user"] or out["assistant"]:
            pairs.append(out)
    dailies = []
    for raw in _list(mid.get("daily_summaries"))[-max_daily:] if max_daily else []:
        daily = _mapping(raw)
        day = daily.get("day", daily.get("date"))
        summary = _text(daily.get("summary"), max_text_chars)
        if summary:
            dailies.append({"day": _text(day, 10), "summary": summary})
    items = [_profile_item(_mapping(i), max_text_chars) for i in _list(long_.get("profile_items"))]
    kept = [i for i in items if i is not None][:max_profile_items]
    sync = _mapping(snap.get("sync"))
    context: dict[str, Any] = {
        "contract_version": CONTRACT_VERSION,
        "source": str(snap.get("source") or DEVICE_SOURCE),
        "current_turn_priority": CURRENT_TURN_PRIORITY,
        "short_term": {
            "recent_pairs": pairs,
            "session_summary": _text(short.get("session_summary"), max_text_chars),
        },
        "mid_term": {
            "daily_summaries": dailies,
            "weekly_digest": _text(mid.get("weekly_digest"), max_text_chars),
        },
        "long_term": {"profile_items": kept},
        "sync": {"cursor": sync.get("cursor"), "version": sync.get("version")},
    }
    return _fit(context, max_tokens, counter)


def _fit(context: dict[str, Any], max_tokens: int, counter: TokenCounter | None) -> dict[str, Any]:
    """Drop the least useful entries until the context fits ``max_tokens``.

    The same entries go as when the whole context is counted after every drop, at a few counts
    of it instead of one per entry: the context's size is estimated from its entries counted
    alone (repeated turn after turn, so the counter's cache holds them) and its skeleton. Counted
    alone, an entry's tokens differ from its share of the whole by the JSON punctuation around
    it, a token or two, so the estimate is within ``error`` of the exact count; the whole is
    counted exactly only when the estimate cannot tell whether it fits.
    """
    count = (counter or get_counter()).count
    pairs = context["short_term"]["recent_pairs"]
    dailies = context["mid_term"]["daily_summaries"]
    items = context["long_term"]["profile_items"]

    def size(entry: Any) -> int:
        return count(json.dumps(entry, ensure_ascii=False))

    entries = [*pairs, *dailies, *items]
    total = size(_skeleton(context)) + sum(size(e) for e in entries)
    error = _SKELETON_ERROR + _ENTRY_ERROR * len(entries)
    while True:
        if total + error <= max_tokens:
            return context  # fits whatever the exact count
        if total - error <= max_tokens and error:
            total, error = size(context), 0  # the estimate cannot tell: count it
            continue
        if pairs:
            total -= size(pairs.pop(0))
        elif dailies:
            total -= size(dailies.pop(0))
        elif items:
            items.sort(key=lambda i: -float(i.get("confidence", 1.0)))
            total -= size(items.pop())
        elif context["mid_term"]["weekly_digest"] or context["short_term"]["session_summary"]:
            context["mid_term"]["weekly_digest"] = ""
            context["short_term"]["session_summary"] = ""
            total, error = size(context), 0
            continue
        else:
            return context
        error += _ENTRY_ERROR


_SKELETON_ERROR = 8
"""Tokens the skeleton and the entries counted apart may differ from the whole by."""
_ENTRY_ERROR = 2
"""Tokens one entry counted alone may differ from its share of the whole by (", " and a brace)."""


def _skeleton(context: dict[str, Any]) -> dict[str, Any]:
    """``context`` with its entry lists empty (a copy; the lists are not touched)."""
    return {
        **context,
        "short_term": {**context["short_term"], "recent_pairs": []},
        "mid_term": {**context["mid_term"], "daily_summaries": []},
        "long_term": {**context["long_term"], "profile_items": []},
    }


def build_memory_update(
    *,
    user_text: str,
    assistant_text: str = "",
    route_family: str = "DEF",
    workflow_id: str = "",
    sync: Mapping[str, Any] | None = None,
    profile_candidates: Sequence[Mapping[str, Any]] = (),
    session_summary: str = "",
    active_workflow_id: str | None = None,
    last_route: str | None = None,
    pair_id: str | None = None,
    source: str = RUNTIME_SOURCE,
    max_candidates: int = 5,
    max_text_chars: int = 1000,
) -> dict[str, Any]:
    """The runtime's memory update after a turn (seed "runtime memory update output").

    ``short_term_pair`` carries ``pair_id`` only when one is given (the device uses it to write
    idempotently). ``profile_candidates`` are cut to ``max_candidates``; sensitive values are
    redacted from every text.
    """
    sync_in = _mapping(sync)
    pair: dict[str, Any] = {
        "user_text": _text(user_text, max_text_chars),
        "assistant_text": _text(assistant_text, max_text_chars),
        "route_family": route_family,
        "workflow_id": workflow_id,
    }
    if pair_id is not None:
        pair["pair_id"] = pair_id
    return {
        "contract_version": CONTRACT_VERSION,
        "source": source,
        "sync": {"cursor": sync_in.get("cursor"), "version": sync_in.get("version")},
        "write_candidates": {
            "short_term_pair": pair,
            "profile_candidates": [dict(c) for c in profile_candidates][:max_candidates],
        },
        "device_cache_update": {
            "active_workflow_id": workflow_id if active_workflow_id is None else active_workflow_id,
            "last_route": route_family if last_route is None else last_route,
            "session_summary": _text(session_summary, max_text_chars),
        },
    }


__all__ = [
    "CONTRACT_VERSION",
    "CURRENT_TURN_PRIORITY",
    "EXTENSION_URI",
    "build_memory_update",
    "normalize_memory_context",
    "snapshot_of",
]
