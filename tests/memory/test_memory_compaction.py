"""Compaction with provenance, the chat-model summariser, and revert through the chain."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from smartctx.core.clock import ManualClock
from smartctx.core.errors import NotFound
from smartctx.core.settings import Settings
from smartctx.memory import CompactionWorker, PairIn, PersonalMemory
from smartctx.store import Database


async def _week(memory: PersonalMemory, clock: ManualClock) -> dict[str, str]:
    """Three days of turns for u1 (Mon, Tue, Thu); returns text -> pair id."""
    ids: dict[str, str] = {}
    script = {
        1: ["안방 청정해줘", "내 카드 4111 1111 1111 1111 로 결제해"],
        2: ["안방 좀 깨끗하게 해줘", "거실 불 켜줘"],
        4: ["잘 때는 안방 먼저 청정해"],
    }
    for day, texts in script.items():
        clock.set(datetime(2026, 6, day, 20, 0, tzinfo=UTC))
        for text in texts:
            out = await memory.add_pair("u1", PairIn(text, "네", session_id=f"s{day}"))
            ids[text] = out["pair"]["id"]
    return ids


async def test_compaction_rolls_every_tier_with_provenance(
    memory: PersonalMemory, clock: ManualClock
) -> None:
    ids = await _week(memory, clock)
    clock.set(datetime(2026, 6, 8, 9, 0, tzinfo=UTC))
    [report] = await memory.compact("u1")
    assert (report.sessions, report.days, report.weeks) == (3, 3, 1)
    tiers = await memory.summaries("u1")
    assert [s["session_id"] for s in tiers["session"]] == ["s1", "s2", "s4"]
    assert [d["day"] for d in tiers["daily"]] == ["2026-06-01", "2026-06-02", "2026-06-04"]
    [week] = tiers["weekly"]
    assert week["week"] == "2026-W23"
    assert sorted(week["source_pair_ids"]) == sorted(ids.values())
    assert week["source_summary_ids"] == [d["id"] for d in tiers["daily"]]
    assert "안방" in week["text"]
    everything = " ".join(s["text"] for tier in tiers.values() for s in tier)
    assert "4111" not in everything  # redacted before any summary
    assert "[REDACTED:card]" in tiers["session"][0]["text"]
    room = next(i for i in await memory.profile("u1") if i["value"] == "안방")
    chain = set(room["source_summary_ids"])
    assert {tiers["session"][0]["id"], tiers["daily"][0]["id"], week["id"]} <= chain
    [again] = await memory.compact("u1")
    assert (again.sessions, again.days, again.weeks) == (0, 0, 0)  # idempotent


async def test_open_sessions_and_today_wait_unless_forced(
    memory: PersonalMemory, clock: ManualClock
) -> None:
    await memory.add_pair("u1", PairIn("안방 청정해줘", session_id="s"))
    clock.advance(minutes=5)
    [report] = await memory.compact("u1")
    assert report.sessions == 0  # still open
    clock.advance(hours=1)
    [report] = await memory.compact("u1")
    assert (report.sessions, report.days) == (1, 0)  # today is not over
    [report] = await memory.compact("u1", force=True)
    assert report.days == 1


async def test_chat_model_summariser_is_used_when_injected(
    db: Database, clock: ManualClock
) -> None:
    seen: list[list[str]] = []

    async def summarize(texts: list[str]) -> str:
        seen.append(texts)
        return f"{len(texts)} requests about rooms"

    memory = PersonalMemory(db, clock=clock, settings=Settings(), summarize=summarize)
    await memory.add_pair("u1", PairIn("안방 청정해줘. password is hunter22", session_id="s"))
    await memory.compact("u1", force=True)
    tiers = await memory.summaries("u1")
    assert tiers["session"][0]["text"] == "2 requests about rooms"
    assert all("hunter22" not in t for texts in seen for t in texts)


async def test_revert_pair_recomputes_the_chain(memory: PersonalMemory, clock: ManualClock) -> None:
    ids = await _week(memory, clock)
    clock.set(datetime(2026, 6, 8, 9, 0, tzinfo=UTC))
    await memory.compact("u1")
    room = next(i for i in await memory.profile("u1") if i["value"] == "안방")
    assert room["status"] == "confirmed"

    detail = await memory.delete_pair("u1", ids["잘 때는 안방 먼저 청정해"])
    room = next(i for i in await memory.profile("u1") if i["value"] == "안방")
    assert room["status"] == "candidate"  # two days of evidence left
    assert ids["잘 때는 안방 먼저 청정해"] not in room["source_pair_ids"]
    habit = next(i for i in await memory.profile("u1") if i["key"] == "habit_time")
    assert habit["status"] == "reverted"
    assert habit["source_pair_ids"] == []
    tiers = await memory.summaries("u1")
    assert [s["session_id"] for s in tiers["session"]] == ["s1", "s2"]  # s4 had only that pair
    assert [d["day"] for d in tiers["daily"]] == ["2026-06-01", "2026-06-02"]
    assert "잘 때" not in tiers["weekly"][0]["text"]
    assert detail["deleted_summary_ids"] and detail["days"] == ["2026-06-04"]

    await memory.delete_pair("u1", ids["안방 좀 깨끗하게 해줘"])
    s2 = next(s for s in (await memory.summaries("u1"))["session"] if s["session_id"] == "s2")
    assert s2["text"] == "거실 불 켜줘"  # recomputed from the pair that is left
    assert s2["source_pair_ids"] == [ids["거실 불 켜줘"]]
    log = await memory.audit_log("u1")
    assert [e["action"] for e in log[:2]] == ["revert_pair", "revert_pair"]
    with pytest.raises(NotFound):
        await memory.delete_pair("u1", ids["안방 청정해줘"] + "x")


async def test_worker_runs_compaction_and_retention(
    memory: PersonalMemory, clock: ManualClock
) -> None:
    await memory.add_pair("u1", PairIn("안방 청정해줘", session_id="s"))
    await memory.add_pair("u2", PairIn("거실 청정해줘", session_id="s"))
    clock.advance(days=2)
    worker = CompactionWorker(memory, interval=3600)
    out = await worker.run_once()
    assert sorted(r["owner"] for r in out["compaction"]) == ["u1", "u2"]
    assert all(r["sessions"] == 1 and r["days"] == 1 for r in out["compaction"])
    worker.start()
    await worker.stop()
    assert worker.runs == 1
