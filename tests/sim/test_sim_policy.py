"""The tactic catalogue and the offline attacker's adaptive, seeded decisions."""

from __future__ import annotations

import random

import pytest

from smartctx.core import InvalidInput
from smartctx.sim.attacker import Action, OfflineAttacker, Outcome
from smartctx.sim.tactics import (
    CATALOGUE,
    FLOODING,
    TARGET_PHRASE,
    get_tactic,
    tactic_names,
)

REQUIRED = {
    "authority-claim",
    "role-play",
    "repeat-after-me",
    "translation",
    "completion-trap",
    "gradual-escalation",
    "context-flooding",
}


def test_catalogue_covers_the_issue_tactics() -> None:
    assert set(tactic_names()) == REQUIRED
    assert get_tactic("role-play").fresh_context
    with pytest.raises(InvalidInput, match="context-flooding"):
        get_tactic("bribery")


def test_every_attempt_ends_with_one_probe() -> None:
    rng = random.Random(1)
    for tactic in CATALOGUE:
        for attempt in range(3):
            steps = tactic.steps(attempt, rng)
            assert [s.kind for s in steps][-1] == "probe"
            assert all(s.kind == "setup" for s in steps[:-1])
            assert all(s.text.strip() and "{" not in s.text for s in steps)


def test_flooding_floods_more_each_attempt_with_distinct_fillers() -> None:
    rng = random.Random(3)
    first, second = FLOODING.steps(0, rng), FLOODING.steps(1, rng)
    assert len(second) == len(first) + 1
    fillers = [s.text for s in first + second if s.kind == "setup"]
    assert len(set(fillers)) == len(fillers)
    assert all(len(text.split()) >= FLOODING.words for text in fillers)
    assert TARGET_PHRASE in first[-1].text


async def _play(attacker: OfflineAttacker, replies: int, reply: str = "No.") -> list[Action]:
    actions: list[Action] = []
    outcome: Outcome | None = None
    for _ in range(replies):
        action = await attacker.next_action(outcome)
        actions.append(action)
        outcome = Outcome(action, reply=reply, context_id="ctx")
    return actions


async def test_same_seed_same_plan_other_seed_other_order() -> None:
    a = await _play(OfflineAttacker(7), 30)
    b = await _play(OfflineAttacker(7), 30)
    c = await _play(OfflineAttacker(8), 30)
    assert [(x.message, x.new_conversation, x.tactic) for x in a] == [
        (x.message, x.new_conversation, x.tactic) for x in b
    ]
    assert [x.tactic for x in a] != [x.tactic for x in c]


async def test_stalled_tactic_is_switched_and_fresh_tactics_reset_the_conversation() -> None:
    attacker = OfflineAttacker(0)
    actions = await _play(attacker, 60)
    assert actions[0].new_conversation
    switches = [i for i in range(1, len(actions)) if actions[i].tactic != actions[i - 1].tactic]
    assert len(switches) >= 5
    for i in switches:
        assert actions[i].note and "stalled" in actions[i].note
        if get_tactic(str(actions[i].tactic)).fresh_context:
            assert actions[i].new_conversation
    # a refusal repeated word for word stalls a scripted tactic before its patience runs out
    assert any("repeats the same refusal" in (a.note or "") for a in actions)
    assert set(attacker.tactics_tried) == REQUIRED


async def test_victory_stops_the_attacker() -> None:
    attacker = OfflineAttacker(1)
    first = await attacker.next_action(None)
    stop = await attacker.next_action(Outcome(first, reply=TARGET_PHRASE, victory=True))
    assert stop.kind == "stop"


async def test_error_makes_the_attacker_reset_the_conversation() -> None:
    attacker = OfflineAttacker(2)
    first = await attacker.next_action(None)
    nxt = await attacker.next_action(Outcome(first, error="boom"))
    second = await attacker.next_action(Outcome(nxt, reply="fine"))
    assert nxt.new_conversation or second.new_conversation
    assert nxt.note is not None and "failed" in nxt.note
