"""Profile extraction and promotion: the seed's timeline, contradictions, mark-wrong."""

from __future__ import annotations

from typing import Any

import pytest

from smartctx.core.clock import ManualClock
from smartctx.core.errors import NotFound
from smartctx.memory import PairIn, PersonalMemory, extract
from smartctx.memory.extractor import CONTRADICTION, Observation


def _item(items: list[dict[str, Any]], key: str, value: str) -> dict[str, Any]:
    return next(i for i in items if i["key"] == key and i["value"] == value)


async def _say(memory: PersonalMemory, clock: ManualClock, day: int, text: str) -> None:
    clock.set(clock.now().replace(day=day))
    await memory.add_pair("u1", PairIn(text, "네", session_id=f"s-day{day}"))


async def test_seed_timeline_confirms_preferred_room(
    memory: PersonalMemory, clock: ManualClock
) -> None:
    await _say(memory, clock, 1, "안방 청정해줘")
    room = _item(await memory.profile("u1"), "preferred_room", "안방")
    assert room["status"] == "candidate"  # one utterance confirms nothing
    first = room["confidence"]

    await _say(memory, clock, 2, "안방 좀 깨끗하게 해줘")
    room = _item(await memory.profile("u1"), "preferred_room", "안방")
    assert room["status"] == "candidate"
    assert room["confidence"] > first

    await _say(memory, clock, 4, "잘 때는 안방 먼저 청정해")
    room = _item(await memory.profile("u1"), "preferred_room", "안방")
    assert room["status"] == "confirmed"  # evidence on 3 distinct days
    assert room["evidence_days"] == ["2026-06-01", "2026-06-02", "2026-06-04"]
    assert len(room["source_pair_ids"]) == 3
    assert len(room["source_candidate_ids"]) == 3
    assert sorted(room["source_session_ids"]) == ["s-day1", "s-day2", "s-day4"]
    habit = _item(await memory.profile("u1"), "habit_time", "bedtime")
    assert habit["status"] == "candidate"
    before = room["confidence"]

    clock.set(clock.now().replace(day=6))
    items = await memory.respond_to_suggestion("u1", "안방 청정을 시작할까요?", accepted=True)
    room = _item(items, "preferred_room", "안방")
    assert room["status"] == "confirmed"
    assert room["confidence"] > before
    assert room["evidence_days"][-1] == "2026-06-06"


async def test_one_utterance_repeated_on_one_day_confirms_nothing(
    memory: PersonalMemory, clock: ManualClock
) -> None:
    for _ in range(5):
        await _say(memory, clock, 1, "안방 청정해줘")
    room = _item(await memory.profile("u1"), "preferred_room", "안방")
    assert room["status"] == "candidate"
    assert await memory.profile("u1", status="confirmed") == []


async def test_explicit_acceptance_confirms_and_contradiction_lowers(
    memory: PersonalMemory, clock: ManualClock
) -> None:
    await _say(memory, clock, 1, "I like jazz")
    item = _item(await memory.profile("u1"), "likes", "jazz")
    accepted = await memory.accept("u1", item_id=item["id"])
    assert accepted["status"] == "confirmed"
    await _say(memory, clock, 3, "I don't like jazz")
    after = _item(await memory.profile("u1"), "likes", "jazz")
    assert after["confidence"] < accepted["confidence"]
    await _say(memory, clock, 4, "I hate jazz")
    await _say(memory, clock, 5, "I dislike jazz")
    after = _item(await memory.profile("u1"), "likes", "jazz")
    assert after["status"] == "candidate"  # too contradicted to stay confirmed


async def test_declined_suggestion_is_a_contradiction(
    memory: PersonalMemory, clock: ManualClock
) -> None:
    for day in (1, 2, 3):
        await _say(memory, clock, day, "거실 청정해줘")
    room = _item(await memory.profile("u1"), "preferred_room", "거실")
    assert room["status"] == "confirmed"
    items = await memory.respond_to_suggestion("u1", "거실 청정을 시작할까요?", accepted=False)
    assert _item(items, "preferred_room", "거실")["confidence"] < room["confidence"]


async def test_mark_wrong_rejects_and_audits(memory: PersonalMemory, clock: ManualClock) -> None:
    for day in (1, 2, 3):
        await _say(memory, clock, day, "거실 청정해줘")
    room = _item(await memory.profile("u1"), "preferred_room", "거실")
    wrong = await memory.mark_wrong("u1", room["id"])
    assert wrong["status"] == "rejected"
    assert wrong["confidence"] == 0.0
    await _say(memory, clock, 4, "거실 청정해줘")  # new evidence does not resurrect it
    assert _item(await memory.profile("u1"), "preferred_room", "거실")["status"] == "rejected"
    log = await memory.audit_log("u1")
    assert log[0]["action"] == "mark_wrong"
    assert len(log[0]["detail"]["source_pair_ids"]) == 3
    assert log[0]["detail"]["previous_status"] == "confirmed"
    # only an explicit acceptance brings it back
    assert (await memory.accept("u1", key="preferred_room", value="거실"))["status"] == "confirmed"
    with pytest.raises(NotFound):
        await memory.mark_wrong("u2", room["id"])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("안방 청정해줘", [Observation("preferred_room", "안방")]),
        ("Please clean the living room", [Observation("preferred_room", "living room")]),
        (
            "every morning purify the kitchen",
            [Observation("preferred_room", "kitchen"), Observation("habit_time", "morning")],
        ),
        (
            "안방 말고 거실 청정해줘",
            [
                Observation("preferred_room", "안방", CONTRADICTION),
                Observation("preferred_room", "거실"),
            ],
        ),
        ("나는 재즈를 좋아해", [Observation("likes", "재즈")]),
        ("오이는 싫어", [Observation("likes", "오이", CONTRADICTION)]),
        ("I love hiking in the mountains.", [Observation("likes", "hiking in the mountains")]),
        ("안방", []),
        ("what time is it?", []),
    ],
)
def test_extractor(text: str, expected: list[Observation]) -> None:
    assert extract(text) == expected
