"""Slots and events: defaults, copies, JSON round trips."""

from __future__ import annotations

import dataclasses
import json

from smartctx.core import DEFAULT_PRIORITY, Event, EventKind, Slot, SlotKind, SlotState


def test_default_priorities_are_the_public_contract() -> None:
    assert {k.value: v for k, v in DEFAULT_PRIORITY.items()} == {
        "system": 10.0,
        "user": 9.0,
        "summary": 8.0,
        "memory": 8.0,
        "rag_doc": 7.0,
        "agent": 5.0,
        "tool_log": 2.0,
    }
    assert Slot(SlotKind.AGENT, "x").priority == 5.0
    assert Slot(SlotKind.AGENT, "x", priority=1).effective_priority == 1.0


def test_slot_round_trip_through_json() -> None:
    slot = Slot(
        "rag_doc",  # type: ignore[arg-type]
        "VPN text",
        source_id="kb:vpn.md#2",
        provenance=["a", "b"],  # type: ignore[arg-type]
        pinned=True,
        repeat_count=3,
        state="evicted",  # type: ignore[arg-type]
        seq=4,
        tokens=12,
        created_at="2026-01-01T00:00:00+00:00",
        metadata={"speaker": "Caroline"},
    )
    assert slot.kind is SlotKind.RAG_DOC and slot.state is SlotState.EVICTED
    assert slot.provenance == ("a", "b")
    data = json.loads(json.dumps(slot.to_dict()))
    assert Slot.from_dict(data) == slot


def test_copy_never_shares_metadata() -> None:
    slot = Slot(SlotKind.USER, "hi", metadata={"k": 1})
    other = slot.copy(text="bye")
    other.metadata["k"] = 2
    assert slot.metadata == {"k": 1} and slot.text == "hi" and other.id == slot.id


def test_a_plain_copy_holds_every_field_and_its_own_metadata() -> None:
    slot = Slot(
        SlotKind.RAG_DOC,
        "VPN text",
        priority=3.5,
        source_id="kb:vpn.md#2",
        provenance=("a", "b"),
        pinned=True,
        repeat_count=3,
        state=SlotState.EVICTED,
        seq=4,
        tokens=12,
        created_at="2026-01-01T00:00:00+00:00",
        metadata={"speaker": "Caroline"},
    )
    copy = slot.copy()
    for field in dataclasses.fields(Slot):  # a field added later must be copied too
        assert getattr(copy, field.name) == getattr(slot, field.name), field.name
    assert copy == slot and copy is not slot
    copy.metadata["speaker"] = "Mel"
    assert slot.metadata == {"speaker": "Caroline"}


def test_event_round_trip() -> None:
    event = Event(EventKind.MERGED, "s1", 7, {"into": "s0"})
    assert Event.from_dict(json.loads(json.dumps(event.to_dict()))) == event
