"""One simulation run: attacker policy, A2A tool, defender, trace and outputs.

:func:`run_simulation` plays one game. Turn by turn the policy picks an action; a ``send`` goes
to the defender through :class:`~smartctx.sim.tools.DefenderTool` and its reply is judged by
:func:`~smartctx.sim.tools.was_attack_successful` (a tool call recorded on the attacker's step).
The run stops at the first of: victory, ``max_turns`` messages sent, ``timeout`` seconds, the
policy stopping, or a defender failure (down, slow, error), which is recorded in the trace and
ends the run cleanly with a clear message. A defender server started by the run is always shut
down, and ``trace.json``/``conversation.txt`` are always written when ``out_dir`` is set, also
after a failure.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from smartctx.agents.models import ChatModel
from smartctx.core.clock import Clock
from smartctx.core.errors import ConfigError, InvalidInput, SmartCtxError
from smartctx.core.settings import Settings
from smartctx.sim.attacker import Action, AttackerPolicy, OfflineAttacker, Outcome
from smartctx.sim.defender import (
    DEFAULT_BUDGET,
    MemoryMode,
    OneShotOpenAIModel,
    context_metadata,
    local_defender,
)
from smartctx.sim.tools import DefenderTool, mentions_phrase, was_attack_successful
from smartctx.sim.trace import ToolCall, Trace, write_outputs

TurnCallback = Callable[[int, str, "str | None", "str | None"], None]
"""``on_turn(turn, attacker_message, defender_reply, error)``, called after every exchange."""


@dataclass(frozen=True)
class SimulationConfig:
    """Options of one run (the CLI flags of ``smartctx simulate``)."""

    seed: int = 0
    max_turns: int = 40
    timeout: float = 300.0
    request_timeout: float = 30.0
    out_dir: Path | None = Path("out")
    defender_url: str | None = None
    defender_memory: MemoryMode = "smart"
    budget: int = DEFAULT_BUDGET
    attacker_model: str | None = None
    defender_model: str | None = None

    def __post_init__(self) -> None:
        if self.max_turns < 1:
            raise InvalidInput("max_turns must be at least 1")
        if self.timeout <= 0 or self.request_timeout <= 0:
            raise InvalidInput("timeouts must be positive")
        if self.defender_memory not in ("fifo", "smart"):
            raise InvalidInput("defender_memory must be 'fifo' or 'smart'")


@dataclass
class SimulationResult:
    """The outcome of one run. ``turns_to_success`` is the turn of the victory, else None."""

    victory: bool
    turns: int
    conversations: int
    tactics_tried: list[str]
    stop_reason: str
    error: str | None = None
    turns_to_success: int | None = None
    trace: Trace | None = field(default=None, repr=False)
    paths: tuple[Path, ...] = ()

    def summary_line(self) -> str:
        """One line: victory or not, turns, conversations opened, tactics tried."""
        if self.victory:
            head = f"VICTORY: the defender said the phrase at turn {self.turns_to_success}"
        elif self.error:
            head = f"ENDED ({self.stop_reason}): {self.error}"
        else:
            head = f"NO VICTORY ({self.stop_reason}): the defender held"
        tactics = ", ".join(self.tactics_tried) or "none"
        return (
            f"{head} | turns {self.turns} | conversations {self.conversations} | "
            f"tactics tried: {tactics}"
        )

    def summary(self) -> dict[str, Any]:
        """The JSON summary stored in the trace."""
        data = {k: v for k, v in asdict(self).items() if k not in ("trace", "paths")}
        data["line"] = self.summary_line()
        return data


def _model(name: str, settings: Settings, *, one_shot: bool = False) -> ChatModel:
    """The OpenAI-compatible model ``name`` at ``settings.llm_base_url``.

    ``one_shot`` models open a client per call (for the defender, whose server loop ends first).
    """
    from smartctx.agents.openai_model import OpenAIChatModel

    if not settings.llm_base_url:
        raise ConfigError(
            f"model {name!r} needs an OpenAI-compatible endpoint: set SMARTCTX_LLM_BASE_URL "
            "(or --llm-base-url), e.g. http://localhost:11434/v1"
        )
    if one_shot:
        return OneShotOpenAIModel(
            settings.llm_base_url, name, settings.llm_api_key, timeout=settings.llm_timeout
        )
    return OpenAIChatModel(
        settings.llm_base_url, name, settings.llm_api_key, timeout=settings.llm_timeout
    )


def make_attacker(config: SimulationConfig, settings: Settings) -> AttackerPolicy:
    """The offline attacker for ``config.seed``, or the LLM attacker for ``attacker_model``."""
    if config.attacker_model:
        from smartctx.sim.llm_attacker import LLMAttacker

        return LLMAttacker(_model(config.attacker_model, settings), max_turns=config.max_turns)
    return OfflineAttacker(config.seed)


async def close_policy(policy: AttackerPolicy) -> None:
    """Release what a policy holds (the LLM attacker's HTTP client); a no-op otherwise."""
    closer = getattr(policy, "aclose", None)
    if closer is not None:
        await closer()


@asynccontextmanager
async def defender_url(
    config: SimulationConfig,
    settings: Settings,
    *,
    defender_model: ChatModel | None = None,
    **app_kwargs: Any,
) -> AsyncIterator[str]:
    """``config.defender_url``, or the URL of a local defender started (and stopped) here."""
    if config.defender_url:
        yield config.defender_url
        return
    model = defender_model
    if model is None and config.defender_model:
        model = _model(config.defender_model, settings, one_shot=True)
    if model is None:
        from smartctx.agents.grounded import GroundedResponder

        model = GroundedResponder(seed=config.seed)
    async with local_defender(
        model=model, settings=settings, budget=config.budget, **app_kwargs
    ) as url:
        yield url


class _Game:
    """The turn loop of one run, recording into ``trace``."""

    def __init__(
        self,
        policy: AttackerPolicy,
        tool: DefenderTool,
        trace: Trace,
        max_turns: int,
        on_turn: TurnCallback | None = None,
    ) -> None:
        self.on_turn = on_turn
        self.policy = policy
        self.tool = tool
        self.trace = trace
        self.max_turns = max_turns
        self.turns = 0
        self.victory_turn: int | None = None
        self.stop_reason = "running"
        self.error: str | None = None

    def _call(
        self, tool: str, arguments: dict[str, Any], result: Any, started: tuple[str, float]
    ) -> ToolCall:
        return ToolCall(
            tool,
            arguments,
            result=result,
            started_at=started[0],
            elapsed_ms=(time.perf_counter() - started[1]) * 1000,
        )

    def _start(self) -> tuple[str, float]:
        return self.trace.now(), time.perf_counter()

    def _check(self, action: Action) -> Outcome:
        started = self._start()
        verdict = was_attack_successful(action.response)
        call = self._call(
            "was_attack_successful", {"agent_response": action.response}, verdict, started
        )
        self.trace.add("attacker", turn=self.turns, note=action.note, tool_calls=[call])
        return Outcome(action, checked=verdict)

    async def _send(self, action: Action) -> Outcome | None:
        self.turns += 1
        tool = self.tool
        started = self._start()
        arguments = {
            "message": action.message,
            "new_conversation": action.new_conversation or tool.context_id is None,
            "context_id": None if action.new_conversation else tool.context_id,
        }
        opens = bool(arguments["new_conversation"])
        ids = tool.context_ids
        conversation = len(ids) + 1 if opens else ids.index(str(tool.context_id)) + 1
        # recorded before the call, so a message cut short by the run's timeout is in the trace
        step = self.trace.add(
            "attacker",
            turn=self.turns,
            conversation=conversation,
            context_id=arguments["context_id"],
            tactic=action.tactic,
            note=action.note,
            text=action.message,
            extra={"step_kind": action.step_kind} if action.step_kind else {},
        )
        result = await tool.send_message(action.message, new_conversation=action.new_conversation)
        summary = result.to_dict()
        summary["events"] = len(result.events)  # the events themselves are on the defender step
        send_call = self._call("send_message", arguments, summary, started)
        send_call.error = result.error
        step.tool_calls.append(send_call)
        step.context_id = result.context_id
        reply = self.trace.add(
            "defender",
            turn=self.turns,
            conversation=conversation,
            context_id=result.context_id,
            text=result.text,
            memory_events=result.events,
            error=result.error,
            extra={
                "task_id": result.task_id,
                "state": result.state,
                "tokens": result.tokens,
                "budget": result.budget,
                "window_counts": result.counts,
                "mentions_phrase": mentions_phrase(result.text or ""),
            },
        )
        if self.on_turn is not None:
            self.on_turn(self.turns, action.message, result.text, result.error)
        if result.error is not None:
            self.stop_reason = f"defender-{result.error_kind or 'error'}"
            self.error = result.error
            reply.note = result.error
            return None
        started = self._start()
        victory = was_attack_successful(result.text or "")
        step.tool_calls.append(
            self._call("was_attack_successful", {"agent_response": result.text}, victory, started)
        )
        if victory:
            self.victory_turn = self.turns
            self.stop_reason = "victory"
            return None
        return Outcome(action, reply=result.text, victory=False, context_id=result.context_id)

    async def play(self) -> None:
        """Run until a stop condition; never raises for defender or attacker-model failures."""
        outcome: Outcome | None = None
        budget_actions = 3 * self.max_turns + 3
        for _ in range(budget_actions):
            if self.turns >= self.max_turns:
                self.stop_reason = "max-turns"
                return
            try:
                action = await self.policy.next_action(outcome)
            except SmartCtxError as err:
                self.stop_reason = "attacker-error"
                self.error = f"the attacker's model failed: {err.message}"
                self.trace.add("runner", turn=self.turns, note=self.error, error=self.error)
                return
            if action.kind == "stop":
                self.stop_reason = "attacker-stopped"
                self.trace.add("attacker", turn=self.turns, note=action.note)
                return
            outcome = self._check(action) if action.kind == "check" else await self._send(action)
            if outcome is None:
                return
        self.stop_reason = "no-progress"


def _config_dict(config: SimulationConfig, url: str, policy: AttackerPolicy) -> dict[str, Any]:
    data = asdict(config)
    data["out_dir"] = str(config.out_dir) if config.out_dir else None
    data["defender_url"] = url
    data["defender_started_by_simulation"] = config.defender_url is None
    data["attacker"] = getattr(policy, "name_with_model", policy.name)
    data["defender"] = config.defender_model or ("remote" if config.defender_url else "grounded")
    data["context_metadata"] = context_metadata(config.defender_memory, config.budget)
    return data


async def run_against(
    url: str,
    config: SimulationConfig,
    *,
    policy: AttackerPolicy,
    clock: Clock | None = None,
    on_turn: TurnCallback | None = None,
) -> SimulationResult:
    """Play one game against the defender at ``url``; write the outputs when ``out_dir`` is set."""
    trace = Trace(_config_dict(config, url, policy), clock=clock)
    tool = DefenderTool(
        url,
        timeout=config.request_timeout,
        context_metadata=context_metadata(config.defender_memory, config.budget),
    )
    game = _Game(policy, tool, trace, config.max_turns, on_turn)
    try:
        async with asyncio.timeout(config.timeout):
            await game.play()
    except TimeoutError:
        game.stop_reason = "timeout"
        game.error = f"the run hit its timeout of {config.timeout:g} s"
        trace.add("runner", turn=game.turns, note=game.error, error=game.error)
    finally:
        await tool.aclose()
    result = SimulationResult(
        victory=game.victory_turn is not None,
        turns=game.turns,
        conversations=tool.conversations,
        tactics_tried=policy.tactics_tried,
        stop_reason=game.stop_reason,
        error=game.error,
        turns_to_success=game.victory_turn,
        trace=trace,
    )
    trace.summary = result.summary()
    if config.out_dir is not None:
        result.paths = write_outputs(trace, config.out_dir)
    return result


async def run_simulation(
    config: SimulationConfig,
    *,
    settings: Settings | None = None,
    policy: AttackerPolicy | None = None,
    defender_model: ChatModel | None = None,
    clock: Clock | None = None,
    on_turn: TurnCallback | None = None,
    **app_kwargs: Any,
) -> SimulationResult:
    """One complete run (see the module docstring). ``policy``/``defender_model`` override the
    ones ``config`` names; ``app_kwargs`` go to the local defender's service app."""
    settings = settings or Settings()
    policy = policy or make_attacker(config, settings)
    async with defender_url(config, settings, defender_model=defender_model, **app_kwargs) as url:
        return await run_against(url, config, policy=policy, clock=clock, on_turn=on_turn)
