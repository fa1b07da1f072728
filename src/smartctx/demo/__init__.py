"""``smartctx demo``: the two seed scenarios, run over A2A against a real server, with verdicts."""

from smartctx.demo.runner import run_demo, run_scenarios
from smartctx.demo.scenarios import ScenarioResult, StepRecord
from smartctx.demo.verdicts import Verdict, judge

__all__ = ["ScenarioResult", "StepRecord", "Verdict", "judge", "run_demo", "run_scenarios"]
