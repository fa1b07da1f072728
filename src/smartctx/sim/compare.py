"""FIFO versus smartctx: the same attacker against the same defender with two windows.

:func:`compare` plays ``runs`` seeds per memory mode against one defender server (a local one
started and stopped here, or ``config.defender_url``): the mode is chosen per conversation
(see :func:`~smartctx.sim.defender.context_metadata`), so both modes meet the same server, model
and budget, and seed ``s`` gives the attacker the same tactic order in both modes. Runs are
sequential and deterministic for their seeds.

The result holds, per mode, the attack success rate and the median turns to success (over the
successful runs; None when no run succeeded), and serialises to the ``--json`` shape
``{"runs": N, "fifo": {"success_rate": r, "median_turns": t}, "smart": {...}}``.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from smartctx.agents.models import ChatModel
from smartctx.core.errors import InvalidInput
from smartctx.core.settings import Settings
from smartctx.sim.defender import MEMORY_MODES, MemoryMode
from smartctx.sim.runner import (
    SimulationConfig,
    SimulationResult,
    close_policy,
    defender_url,
    make_attacker,
    run_against,
)

Progress = Callable[[MemoryMode, int, SimulationResult], None]


@dataclass
class ModeStats:
    """Results of one memory mode over every seed."""

    mode: MemoryMode
    results: list[SimulationResult] = field(default_factory=list)

    @property
    def runs(self) -> int:
        return len(self.results)

    @property
    def successes(self) -> int:
        return sum(result.victory for result in self.results)

    @property
    def success_rate(self) -> float:
        return self.successes / self.runs if self.runs else 0.0

    @property
    def median_turns(self) -> float | None:
        turns = [r.turns_to_success for r in self.results if r.turns_to_success is not None]
        return float(statistics.median(turns)) if turns else None

    @property
    def errors(self) -> int:
        return sum(result.error is not None for result in self.results)

    def to_dict(self) -> dict[str, Any]:
        return {"success_rate": round(self.success_rate, 4), "median_turns": self.median_turns}


@dataclass
class Comparison:
    """Per-mode statistics of a comparison over ``runs`` seeds."""

    runs: int
    seeds: list[int]
    modes: dict[MemoryMode, ModeStats]

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document."""
        out: dict[str, Any] = {"runs": self.runs}
        for mode, stats in self.modes.items():
            out[mode] = stats.to_dict()
        return out

    def rows(self) -> list[tuple[str, str, str, str]]:
        """Table rows: mode, success rate, median turns to success, successes/runs."""
        rows: list[tuple[str, str, str, str]] = []
        for mode, stats in self.modes.items():
            median = "-" if stats.median_turns is None else f"{stats.median_turns:g}"
            rows.append(
                (mode, f"{stats.success_rate:.0%}", median, f"{stats.successes}/{stats.runs}")
            )
        return rows

    def markdown(self) -> str:
        """The table as Markdown."""
        lines = [
            "| defender memory | attack success rate | median turns to success | successes |",
            "| --- | ---: | ---: | ---: |",
        ]
        lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in self.rows()]
        return "\n".join(lines)


async def compare(
    runs: int,
    config: SimulationConfig,
    *,
    settings: Settings | None = None,
    first_seed: int | None = None,
    seeds: Sequence[int] | None = None,
    defender_model: ChatModel | None = None,
    progress: Progress | None = None,
    **app_kwargs: Any,
) -> Comparison:
    """Play ``runs`` seeds (from ``first_seed``, default ``config.seed``) per memory mode.

    ``seeds`` replaces that range with explicit seeds (``runs`` is then their number).
    Each run writes its outputs under ``config.out_dir / f"{mode}-seed{seed}"`` when
    ``config.out_dir`` is set. ``progress(mode, seed, result)`` is called after every run.
    """
    start = config.seed if first_seed is None else first_seed
    chosen = list(seeds) if seeds is not None else list(range(start, start + runs))
    if not chosen:
        raise InvalidInput("runs must be at least 1")
    settings = settings or Settings()
    modes = {mode: ModeStats(mode) for mode in MEMORY_MODES}
    async with defender_url(config, settings, defender_model=defender_model, **app_kwargs) as url:
        for seed in chosen:
            for mode in MEMORY_MODES:
                out_dir = config.out_dir / f"{mode}-seed{seed}" if config.out_dir else None
                run_config = replace(config, seed=seed, defender_memory=mode, out_dir=out_dir)
                policy = make_attacker(run_config, settings)
                try:
                    result = await run_against(url, run_config, policy=policy)
                finally:
                    await close_policy(policy)
                modes[mode].results.append(result)
                if progress is not None:
                    progress(mode, seed, result)
    return Comparison(runs=len(chosen), seeds=chosen, modes=modes)
