"""The server's own memory snapshot of an owner, in the contract's input shape.

When a device sends no snapshot, the service builds one from the store, so the planner always
sees memory in the same ``a2a-memory-context-v1`` form. Only ``confirmed`` profile items are
included: a candidate is evidence, not a fact.
"""

from __future__ import annotations

from typing import Any

from smartctx.memory.personal import PersonalMemory

SERVER_SOURCE = "cloud_memory"


async def server_snapshot(
    memory: PersonalMemory,
    owner: str,
    *,
    session_id: str | None = None,
    exclude_session: str | None = None,
    max_pairs: int = 5,
) -> dict[str, Any]:
    """``{"source", "short_term", "mid_term", "long_term", "sync"}`` for ``owner``, with pair
    and profile item ids alongside (``id``) for provenance. ``session_id`` keeps one session's
    pairs; ``exclude_session`` leaves out a session the caller already has (its own thread)."""
    stored = await memory.everything(owner, session_id=session_id, pair_limit=max_pairs * 4)
    recent = [p for p in stored["pairs"] if p["session_id"] != exclude_session][-max_pairs:]
    tiers = stored["summaries"]
    sessions = [s for s in tiers["session"] if session_id is None or s["session_id"] == session_id]
    items = stored["profile"]
    return {
        "source": SERVER_SOURCE,
        "short_term": {
            "recent_pairs": [
                {
                    "id": p["id"],
                    "session_id": p["session_id"],
                    "user": p["user_text"],
                    "assistant": p["assistant_text"],
                    "route_family": p["route_family"],
                }
                for p in recent
            ],
            "session_summary": sessions[-1]["text"] if sessions else "",
        },
        "mid_term": {
            "daily_summaries": [{"day": d["day"], "summary": d["text"]} for d in tiers["daily"]],
            "weekly_digest": tiers["weekly"][-1]["text"] if tiers["weekly"] else "",
        },
        "long_term": {
            "profile_items": [
                {
                    "id": i["id"],
                    "key": i["key"],
                    "value": i["value"],
                    "confidence": i["confidence"],
                    "status": i["status"],
                }
                for i in items
            ]
        },
        "sync": stored["sync"],
    }
