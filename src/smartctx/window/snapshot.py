"""The window snapshot: the one JSON view of a window on every surface (Python, HTTP, SSE, MCP,
CLI, dashboard)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from smartctx.core.slots import Event, Slot, SlotKind


def slot_view(slot: Slot) -> dict[str, Any]:
    """The snapshot fields of one active slot."""
    return {
        "id": slot.id,
        "kind": slot.kind.value,
        "priority": slot.effective_priority,
        "source_id": slot.source_id,
        "tokens": slot.tokens,
        "state": slot.state.value,
        "provenance": list(slot.provenance),
        "repeat_count": slot.repeat_count,
        "pinned": slot.pinned,
        "seq": slot.seq,
        "text": slot.text,
    }


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A point-in-time view of a window.

    ``kinds`` maps every kind to ``{"count", "tokens"}`` of its active slots; ``slots`` are the
    active slots in log order; ``events`` the most recent events, oldest first.
    """

    budget: int
    tokens_used: int
    pinned_tokens: int
    version: int
    log_size: int
    kinds: dict[str, dict[str, int]]
    slots: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def build(
        cls,
        *,
        budget: int,
        tokens_used: int,
        pinned_tokens: int,
        version: int,
        log_size: int,
        kind_count: dict[SlotKind, int],
        kind_tokens: dict[SlotKind, int],
        active: list[Slot],
        events: list[Event],
    ) -> Snapshot:
        return cls(
            budget=budget,
            tokens_used=tokens_used,
            pinned_tokens=pinned_tokens,
            version=version,
            log_size=log_size,
            kinds={k.value: {"count": kind_count[k], "tokens": kind_tokens[k]} for k in SlotKind},
            slots=[slot_view(s) for s in active],
            events=[e.to_dict() for e in events],
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (a deep copy)."""
        return {
            "budget": self.budget,
            "tokens_used": self.tokens_used,
            "tokens_free": max(0, self.budget - self.tokens_used),
            "pinned_tokens": self.pinned_tokens,
            "version": self.version,
            "log_size": self.log_size,
            "kinds": {k: dict(v) for k, v in self.kinds.items()},
            "slots": [dict(s, provenance=list(s["provenance"])) for s in self.slots],
            "events": [dict(e, detail=dict(e["detail"])) for e in self.events],
        }
