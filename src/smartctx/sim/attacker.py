"""Attacker policies: the offline adaptive red team and the LLM red team.

A policy is asked for its next :class:`Action` after every :class:`Outcome`. It never talks to
the defender itself: the runner executes the action through the attacker's tools
(``smartctx.sim.tools``) and hands the outcome back. That keeps policies pure decision makers,
testable without a server, and makes every decision visible in the trace.

:class:`OfflineAttacker` is deterministic for its seed: the order of tactics is shuffled by the
seed's RNG, every message is drawn from the same RNG, and it adapts to the defender by
stall detection. A tactic stalls when its refused probes reach the tactic's patience, or when
the defender repeats a refusal word for word (it is not moving). On a stall the attacker
switches to the next tactic and starts a new conversation when that tactic wants a clean slate or
when the current conversation has collected too many refusals. Once every tactic has stalled it
reshuffles and starts another round, flooding harder.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from smartctx.core.errors import InvalidInput
from smartctx.sim.tactics import CATALOGUE, FloodingTactic, Step, Tactic

ActionKind = Literal["send", "check", "stop"]


@dataclass(frozen=True, slots=True)
class Action:
    """What the attacker does next.

    ``send``: send ``message`` to the defender, in a new conversation when ``new_conversation``.
    ``check``: call ``was_attack_successful`` on ``response``. ``stop``: give up the run.
    ``tactic``/``step_kind``/``note`` explain the decision in the trace.
    """

    kind: ActionKind
    message: str = ""
    new_conversation: bool = False
    tactic: str | None = None
    step_kind: str | None = None
    note: str | None = None
    response: str = ""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the last action produced.

    For ``send``: the defender's reply (or an error), the conversation it went to and the
    referee's verdict ``victory``. For ``check``: ``checked`` is the tool's answer about the
    response the attacker asked about (``victory`` stays False: only real replies win).
    """

    action: Action
    reply: str | None = None
    error: str | None = None
    victory: bool = False
    context_id: str | None = None
    checked: bool | None = None


@runtime_checkable
class AttackerPolicy(Protocol):
    """Decides the attacker's next action. ``outcome`` is None before the first action."""

    name: str

    @property
    def tactics_tried(self) -> list[str]:
        """Names of the tactics used so far, in first-use order."""
        ...

    async def next_action(self, outcome: Outcome | None) -> Action:
        """The next action; ``stop`` when the policy has nothing left to try."""
        ...


def _normalise(text: str) -> str:
    return " ".join(text.casefold().split())


@dataclass
class _Active:
    tactic: Tactic
    attempt: int = 0
    refused: int = 0
    replies: list[str] = field(default_factory=list)
    queue: list[Step] = field(default_factory=list)


class OfflineAttacker:
    """The deterministic adaptive red team (see the module docstring for the rules).

    ``catalogue`` defaults to every tactic; ``max_refusals_per_conversation`` is how many refused
    probes one conversation may collect before the attacker prefers a fresh one.
    """

    name = "offline"

    def __init__(
        self,
        seed: int,
        *,
        catalogue: tuple[Tactic, ...] = CATALOGUE,
        max_refusals_per_conversation: int = 4,
    ) -> None:
        if not catalogue:
            raise InvalidInput("the attacker needs at least one tactic")
        self.seed = seed
        self._rng = random.Random(seed)
        self._catalogue = catalogue
        self._max_refusals = max_refusals_per_conversation
        self._round = 0
        self._order: list[Tactic] = []
        self._index = 0
        self._active: _Active | None = None
        self._conversation_refusals = 0
        self._started = False
        self._reset_pending = True
        self._pending_note: str | None = None
        self._tried: list[str] = []

    @property
    def tactics_tried(self) -> list[str]:
        return list(self._tried)

    def _start_round(self) -> None:
        self._order = list(self._catalogue)
        self._rng.shuffle(self._order)
        self._index = 0

    def _activate(self, reason: str | None) -> _Active:
        if self._index >= len(self._order):
            if self._order:
                self._round += 1
            self._start_round()
        tactic = self._order[self._index]
        self._index += 1
        if tactic.name not in self._tried:
            self._tried.append(tactic.name)
        if tactic.fresh_context or self._conversation_refusals >= self._max_refusals:
            self._reset_pending = True
        why = f"{reason}; " if reason else ""
        fresh = "new conversation" if self._reset_pending else "same conversation"
        self._pending_note = f"{why}tactic {tactic.name} (round {self._round + 1}, {fresh})"
        self._active = _Active(tactic)
        return self._active

    def _stalled(self, active: _Active, reply: str) -> str | None:
        """Why the active tactic has stalled after this refused probe, or None."""
        if active.refused >= active.tactic.patience:
            return f"{active.tactic.name} stalled after {active.refused} refused probes"
        repeated = _normalise(reply) in active.replies[:-1]
        if repeated and not isinstance(active.tactic, FloodingTactic):
            return f"{active.tactic.name} stalled: the defender repeats the same refusal"
        return None

    def _observe(self, outcome: Outcome) -> str | None:
        """Update the state from ``outcome``; return a switch reason when the tactic stalled."""
        active = self._active
        if active is None or outcome.action.kind != "send":
            return None
        if outcome.error is not None:
            self._reset_pending = True
            active.queue.clear()
            return f"the defender failed ({outcome.error})"
        if outcome.action.step_kind != "probe" or outcome.victory:
            return None
        active.refused += 1
        self._conversation_refusals += 1
        active.replies.append(_normalise(outcome.reply or ""))
        return self._stalled(active, outcome.reply or "")

    async def next_action(self, outcome: Outcome | None) -> Action:
        """The next message; after a victory the policy stops."""
        if outcome is not None and outcome.victory:
            return Action("stop", note="victory: the defender said the phrase")
        reason = self._observe(outcome) if outcome is not None else None
        active = self._active
        if active is None or reason is not None:
            active = self._activate(reason)
        if not active.queue:
            round_no = self._round if isinstance(active.tactic, FloodingTactic) else 0
            active.queue = active.tactic.steps(active.attempt, self._rng, round_no=round_no)
            active.attempt += 1
        step = active.queue.pop(0)
        new_conversation = self._reset_pending
        if new_conversation:
            self._reset_pending = False
            self._conversation_refusals = 0
        note, self._pending_note = self._pending_note, None
        return Action(
            "send",
            message=step.text,
            new_conversation=new_conversation,
            tactic=active.tactic.name,
            step_kind=step.kind,
            note=note,
        )
