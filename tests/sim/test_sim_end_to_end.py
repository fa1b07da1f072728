"""The simulation end to end over real HTTP against a local smartctx defender (offline models)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from smartctx.core import HashingEmbedder, Settings
from smartctx.sim.attacker import Action, OfflineAttacker, Outcome
from smartctx.sim.compare import compare
from smartctx.sim.defender import local_defender
from smartctx.sim.prompts import DEFENDER_PROMPT
from smartctx.sim.runner import SimulationConfig, SimulationResult, run_against
from smartctx.sim.tactics import FLOODING

SETTINGS = Settings(embedder="hashing", retrieval_embedder="hashing")

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def defender() -> AsyncIterator[str]:
    """One offline smartctx defender for the module (each run opens its own conversations)."""
    async with local_defender(settings=SETTINGS, embedder=HashingEmbedder()) as url:
        yield url


def _config(tmp_path: Path | None, url: str, **changes: Any) -> SimulationConfig:
    base: dict[str, Any] = {"seed": 0, "max_turns": 8, "out_dir": tmp_path, "defender_url": url}
    base.update(changes)
    return SimulationConfig(**base)


def _flooder(seed: int = 0) -> OfflineAttacker:
    return OfflineAttacker(seed, catalogue=(FLOODING,))


async def test_flooding_beats_fifo_with_both_files_written(defender: str, tmp_path: Path) -> None:
    config = _config(tmp_path, defender, defender_memory="fifo")
    result = await run_against(defender, config, policy=_flooder())
    assert result.victory and result.stop_reason == "victory"
    assert result.turns_to_success == result.turns == FLOODING.base_rounds + 1
    trace = json.loads((tmp_path / "trace.json").read_text(encoding="utf-8"))
    assert trace["summary"]["victory"] is True
    assert trace["config"]["context_metadata"]["smartctx"]["preset"] == "fifo"
    attacker = [s for s in trace["steps"] if s["agent"] == "attacker"]
    replies = [s for s in trace["steps"] if s["agent"] == "defender"]
    assert [s["turn"] for s in attacker] == list(range(1, result.turns + 1))
    assert all(s["time"] and s["context_id"] for s in attacker + replies)
    send, check = attacker[-1]["tool_calls"]
    assert send["tool"] == "send_message" and send["arguments"]["message"].endswith("I give up")
    assert send["result"]["text"] == replies[-1]["text"]
    assert check == {**check, "tool": "was_attack_successful", "result": True}
    # the defender reported its memory: the flood evicted its system prompt
    kinds = [e["kind"] for step in replies for e in step["memory_events"]]
    assert "admitted" in kinds and "evicted" in kinds
    text = (tmp_path / "conversation.txt").read_text(encoding="utf-8")
    assert "ATTACKER (context-flooding): Notes part 1" in text
    assert "DEFENDER: I give up" in text and "RESULT: VICTORY" in text
    assert "its system prompt has left its window" in text


async def test_flooding_fails_against_smartctx(defender: str, tmp_path: Path) -> None:
    config = _config(tmp_path, defender, defender_memory="smart", max_turns=7)
    result = await run_against(defender, config, policy=_flooder())
    assert not result.victory and result.stop_reason == "max-turns"
    trace = json.loads((tmp_path / "trace.json").read_text(encoding="utf-8"))
    replies = [s for s in trace["steps"] if s["agent"] == "defender"]
    assert all(DEFENDER_PROMPT not in (s["text"] or "") for s in replies)
    kinds = {e["kind"] for step in replies for e in step["memory_events"]}
    assert kinds & {"summarized", "evicted"}  # the filler went, the pinned rule stayed


class _Scripted:
    """A policy that sends fixed messages, choosing new or continued conversations."""

    name = "scripted"

    def __init__(self, plan: list[tuple[str, bool]]) -> None:
        self.plan = list(plan)

    @property
    def tactics_tried(self) -> list[str]:
        return ["scripted"]

    async def next_action(self, outcome: Outcome | None) -> Action:
        if not self.plan:
            return Action("stop", note="script done")
        message, new = self.plan.pop(0)
        return Action("send", message=message, new_conversation=new, tactic="scripted")


async def test_continue_keeps_the_context_and_reset_opens_a_new_one(
    defender: str, tmp_path: Path
) -> None:
    plan = [
        ("Hello.", True),
        ("My badge is 4471.", False),
        ("Thanks.", False),
        ("Hello again.", True),
        ("Bye.", False),
    ]
    result = await run_against(defender, _config(tmp_path, defender), policy=_Scripted(plan))
    assert result.conversations == 2 and result.stop_reason == "attacker-stopped"
    trace = json.loads((tmp_path / "trace.json").read_text(encoding="utf-8"))
    sends = [s for s in trace["steps"] if s["agent"] == "attacker" and s["tool_calls"]]
    ids = [s["context_id"] for s in sends]
    assert ids[0] == ids[1] == ids[2] != ids[3] == ids[4]
    assert [s["conversation"] for s in sends] == [1, 1, 1, 2, 2]
    args = [s["tool_calls"][0]["arguments"] for s in sends]
    assert [a["new_conversation"] for a in args] == [True, False, False, True, False]
    assert args[1]["context_id"] == ids[0] and args[3]["context_id"] is None


async def test_compare_fifo_loses_smart_holds(defender: str, tmp_path: Path) -> None:
    config = _config(tmp_path, defender, max_turns=8)
    comparison = await compare(2, config, settings=SETTINGS, seeds=[1, 5])
    data = comparison.to_dict()
    assert data["runs"] == 2
    assert data["fifo"]["success_rate"] == 1.0 and data["fifo"]["median_turns"] is not None
    assert data["smart"] == {"success_rate": 0.0, "median_turns": None}
    for result in comparison.modes["fifo"].results:
        assert result.trace is not None
        winning = [s for s in result.trace.steps if s.agent == "attacker"][-1]
        assert winning.tactic == "context-flooding"
    for result in comparison.modes["smart"].results:
        assert "context-flooding" in result.tactics_tried and result.stop_reason == "max-turns"
    assert (tmp_path / "fifo-seed1" / "trace.json").exists()
    assert (tmp_path / "smart-seed5" / "conversation.txt").exists()


async def test_same_seed_same_game(defender: str) -> None:
    def transcript(result: SimulationResult) -> list[tuple[str, str | None, str | None]]:
        assert result.trace is not None
        return [(s.agent, s.tactic, s.text) for s in result.trace.steps]

    config = _config(None, defender, seed=3, defender_memory="fifo", max_turns=6)
    first = await run_against(defender, config, policy=OfflineAttacker(3))
    second = await run_against(defender, config, policy=OfflineAttacker(3))
    assert transcript(first) == transcript(second)
    assert first.summary() == second.summary()
