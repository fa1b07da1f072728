"""The personal-memory turn hook (the A2A side of the contract), tested directly."""

from __future__ import annotations

from typing import Any

from smartctx.core.clock import ManualClock
from smartctx.core.slots import SlotKind
from smartctx.memory import EXTENSION_URI, PairIn, PersonalMemory
from smartctx.service.hooks import TurnContext, TurnHook
from smartctx.service.personal_hook import PersonalMemoryHook, create_hook


def _device_metadata(text: str) -> dict[str, Any]:
    return {
        EXTENSION_URI: {
            "voice_context": {
                "recognized_text": text,
                "session_id": "memory-session",
                "pair_id": "dev-pair-1",
                "memory_snapshot": {
                    "source": "ondevice_cache",
                    "short_term": {
                        "recent_pairs": [{"user": "거실 청정해줘", "assistant": "시작할게요"}],
                        "session_summary": "오늘 거실 청정을 자주 요청함",
                    },
                    "long_term": {
                        "profile_items": [
                            {"key": "preferred_room", "value": "거실", "status": "confirmed"}
                        ]
                    },
                    "sync": {"cursor": "cur-2", "version": "v2"},
                },
            }
        }
    }


async def test_hook_round_trip_with_a_device_snapshot(memory: PersonalMemory) -> None:
    hook = create_hook(memory)
    assert isinstance(hook, TurnHook)
    assert hook.extension_uri == EXTENSION_URI
    text = "안방으로 가서 청정해줘"
    turn = TurnContext("u1", "ctx-1", text, _device_metadata(text))
    await hook.before_turn(turn)
    assert all(s.kind is SlotKind.MEMORY and s.source_id for s in turn.slots)
    sources = {s.source_id for s in turn.slots}
    assert {"profile:preferred_room", "pair:device-0", "summary:session"} <= sources
    assert turn.planner_input is not None
    assert turn.planner_input.startswith("Current request (required; it wins over memory): " + text)

    turn.reply = "안방 청정을 시작할게요."
    meta = await hook.after_turn(turn)
    update = meta[EXTENSION_URI]
    assert update["contract_version"] == "a2a-memory-context-v1"
    assert update["sync"] == {"cursor": "cur-2", "version": "v2"}  # the device's, preserved
    pair = update["write_candidates"]["short_term_pair"]
    assert pair == {
        "user_text": text,
        "assistant_text": "안방 청정을 시작할게요.",
        "route_family": "DEF",
        "workflow_id": "",
        "pair_id": "dev-pair-1",
    }
    [candidate] = update["write_candidates"]["profile_candidates"]
    assert (candidate["key"], candidate["value"], candidate["status"]) == (
        "preferred_room",
        "안방",
        "candidate",
    )
    stored = await memory.pairs("u1")
    assert [(p["id"], p["session_id"]) for p in stored] == [("dev-pair-1", "memory-session")]
    await hook.after_turn(turn)  # the same device turn again: stored once
    assert len(await memory.pairs("u1")) == 1


async def _three_days_and_a_stranger(
    memory: PersonalMemory, clock: ManualClock, session: str
) -> None:
    """u1 asks for the living room on three days (sessions ``<session>-1..3``: enough evidence
    for a confirmed profile item); u2 says something of their own."""
    for day in (1, 2, 3):
        clock.set(clock.now().replace(day=day))
        await memory.add_pair("u1", PairIn("거실 청정해줘", "네", session_id=f"{session}-{day}"))
    await memory.add_pair("u2", PairIn("I like opera", session_id="x"))


async def test_hook_uses_server_memory_without_a_snapshot(
    memory: PersonalMemory, clock: ManualClock
) -> None:
    await _three_days_and_a_stranger(memory, clock, "old")
    hook = PersonalMemoryHook(memory)
    turn = TurnContext("u1", "ctx-9", "안방 청정해줘", {})
    await hook.before_turn(turn)
    profile = [s for s in turn.slots if s.source_id == "profile:preferred_room"]
    assert len(profile) == 1 and "거실" in profile[0].text
    assert profile[0].provenance and profile[0].provenance[0].startswith("profile:")
    assert any(s.source_id and s.source_id.startswith("pair:") for s in turn.slots)
    assert all("opera" not in s.text for s in turn.slots)  # never another owner's memory
    assert turn.planner_input is not None
    assert turn.planner_input.index("안방 청정해줘") < turn.planner_input.index("거실")
    turn.reply = "네"
    update = (await hook.after_turn(turn))[EXTENSION_URI]
    assert update["sync"] == await memory.sync_state("u1")
    assert (await memory.pairs("u1"))[-1]["session_id"] == "ctx-9"


async def test_one_read_gives_what_the_separate_reads_give(
    memory: PersonalMemory, clock: ManualClock
) -> None:
    await _three_days_and_a_stranger(memory, clock, "s")
    both = await memory.everything("u1", pair_limit=2)
    assert both["pairs"] == await memory.pairs("u1", limit=2)
    assert both["summaries"] == await memory.summaries("u1")
    assert both["profile"] == await memory.profile("u1", status="confirmed")
    assert both["profile"]  # three days of evidence confirmed the preferred room
    assert both["sync"] == await memory.sync_state("u1")
    one = await memory.everything("u1", session_id="s-2")
    assert [p["session_id"] for p in one["pairs"]] == ["s-2"]
