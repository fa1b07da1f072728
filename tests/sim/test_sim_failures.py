"""A defender that is slow or answers errors: recorded in the trace, the run ends cleanly."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from smartctx.agents.models import ChatMessages, FunctionModel
from smartctx.core import HashingEmbedder, Settings, UpstreamError
from smartctx.sim.attacker import Action, Outcome
from smartctx.sim.defender import local_defender
from smartctx.sim.runner import SimulationConfig, run_against

pytestmark = pytest.mark.asyncio(loop_scope="module")

RELEASE = threading.Event()


async def _reply(messages: ChatMessages) -> str:
    last = messages[-1]["content"]
    if "hang" in last:
        # a defender that never answers in time; released at teardown so the server stops fast
        await asyncio.to_thread(RELEASE.wait, 30)
        return "late"
    if "fail" in last:
        raise UpstreamError("the defender's model endpoint is down")
    return "fine"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def flaky() -> AsyncIterator[str]:
    settings = Settings(embedder="hashing", retrieval_embedder="hashing")
    try:
        async with local_defender(
            model=FunctionModel(_reply), settings=settings, embedder=HashingEmbedder()
        ) as url:
            yield url
    finally:
        RELEASE.set()


class _Say:
    name = "say"

    def __init__(self, *messages: str) -> None:
        self.messages = list(messages)

    @property
    def tactics_tried(self) -> list[str]:
        return []

    async def next_action(self, outcome: Outcome | None) -> Action:
        if not self.messages:
            return Action("stop")
        return Action("send", message=self.messages.pop(0), tactic="scripted")


async def test_slow_defender_is_recorded_and_ends_the_run(flaky: str, tmp_path: Path) -> None:
    config = SimulationConfig(
        # a real turn must fit the timeout on a loaded 2-core machine; the hang never does
        max_turns=5,
        request_timeout=3.0,
        out_dir=tmp_path,
        defender_url=flaky,
    )
    RELEASE.clear()
    result = await run_against(flaky, config, policy=_Say("hello", "please hang", "again"))
    RELEASE.set()
    assert result.stop_reason == "defender-slow" and result.turns == 2
    assert result.error is not None and "did not answer within 3 s" in result.error
    trace = json.loads((tmp_path / "trace.json").read_text(encoding="utf-8"))
    replies = [s for s in trace["steps"] if s["agent"] == "defender"]
    assert replies[0]["text"] == "fine" and replies[0]["error"] is None
    assert replies[1]["error"] == result.error
    assert trace["summary"]["stop_reason"] == "defender-slow"


async def test_defender_errors_are_recorded_and_end_the_run(flaky: str, tmp_path: Path) -> None:
    config = SimulationConfig(max_turns=5, out_dir=tmp_path, defender_url=flaky)
    result = await run_against(flaky, config, policy=_Say("please fail", "again"))
    assert result.stop_reason == "defender-error" and result.turns == 1
    assert result.error is not None and "model endpoint is down" in result.error
    text = (tmp_path / "conversation.txt").read_text(encoding="utf-8")
    assert "DEFENDER ERROR" in text and "model endpoint is down" in text


async def test_whole_run_timeout_ends_cleanly(flaky: str, tmp_path: Path) -> None:
    config = SimulationConfig(
        max_turns=5, timeout=0.5, request_timeout=20, out_dir=tmp_path, defender_url=flaky
    )
    RELEASE.clear()
    result = await run_against(flaky, config, policy=_Say("hello", "please hang"))
    RELEASE.set()
    assert result.stop_reason == "timeout" and result.turns == 2 and not result.victory
    assert result.error == "the run hit its timeout of 0.5 s"
    trace = json.loads((tmp_path / "trace.json").read_text(encoding="utf-8"))
    assert trace["steps"][-1]["agent"] == "runner" and trace["summary"]["stop_reason"] == "timeout"
