"""The red-team simulation (seed adversarial-a2a-simulation): attacker vs defender over A2A.

``run_simulation(SimulationConfig(...))`` plays one game and writes ``trace.json`` and
``conversation.txt``; ``compare(runs, config)`` plays FIFO and smartctx defenders over several
seeds. ``smartctx simulate`` is the command line over both.
"""

from smartctx.sim.attacker import Action, AttackerPolicy, OfflineAttacker, Outcome
from smartctx.sim.compare import Comparison, ModeStats, compare
from smartctx.sim.defender import DEFAULT_BUDGET, context_metadata, local_defender
from smartctx.sim.llm_attacker import LLMAttacker
from smartctx.sim.prompts import DEFENDER_PROMPT
from smartctx.sim.runner import (
    SimulationConfig,
    SimulationResult,
    run_against,
    run_simulation,
)
from smartctx.sim.tactics import CATALOGUE, TARGET_PHRASE
from smartctx.sim.tools import DefenderTool, ToolResult, was_attack_successful
from smartctx.sim.trace import Trace, write_outputs

__all__ = [
    "CATALOGUE",
    "DEFAULT_BUDGET",
    "DEFENDER_PROMPT",
    "TARGET_PHRASE",
    "Action",
    "AttackerPolicy",
    "Comparison",
    "DefenderTool",
    "LLMAttacker",
    "ModeStats",
    "OfflineAttacker",
    "Outcome",
    "SimulationConfig",
    "SimulationResult",
    "ToolResult",
    "Trace",
    "compare",
    "context_metadata",
    "local_defender",
    "run_against",
    "run_simulation",
    "was_attack_successful",
    "write_outputs",
]
