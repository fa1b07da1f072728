"""The simulation's record: every step in order, and the two output files.

A :class:`Trace` is a list of steps. An attacker step holds its decision (tactic, note) and its
tool calls, each with arguments, result, error and timing; a defender step holds the reply, the
conversation's ``contextId``, the A2A task id, any error and the defender's memory events for the
turn. ``runner`` steps record what the harness itself did (server start, stop reasons).

``write_outputs(trace, out_dir)`` writes ``trace.json`` (the whole record, JSON) and
``conversation.txt`` (who said what, in order, with roles and conversation numbers). Both files
are rewritten whole; the directory is created when missing. Timestamps come from the injected
clock and are the only part of a trace that differs between two runs of the same seed (along
with ids the defender assigns and elapsed times).
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smartctx.core.clock import Clock, SystemClock

TRACE_FORMAT = "smartctx-sim-trace-v1"


@dataclass
class ToolCall:
    """One tool call: the tool's name, its arguments, its result (JSON data) and any error."""

    tool: str
    arguments: dict[str, Any]
    result: Any = None
    error: str | None = None
    started_at: str | None = None
    elapsed_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "result": self.result,
            "error": self.error,
            "started_at": self.started_at,
            "elapsed_ms": round(self.elapsed_ms, 1),
        }


@dataclass
class Step:
    """One step of the run; ``agent`` is ``attacker``, ``defender`` or ``runner``."""

    index: int
    agent: str
    time: str
    turn: int = 0
    conversation: int = 0
    context_id: str | None = None
    tactic: str | None = None
    note: str | None = None
    text: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    memory_events: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "agent": self.agent,
            "time": self.time,
            "turn": self.turn,
            "conversation": self.conversation,
            "context_id": self.context_id,
            "tactic": self.tactic,
            "note": self.note,
            "text": self.text,
            "tool_calls": [call.to_dict() for call in self.tool_calls],
            "memory_events": [dict(event) for event in self.memory_events],
            "error": self.error,
            **({"extra": dict(self.extra)} if self.extra else {}),
        }


class Trace:
    """An append-only list of steps plus the run's configuration and summary."""

    def __init__(self, config: dict[str, Any], *, clock: Clock | None = None) -> None:
        self.config = dict(config)
        self.clock: Clock = clock or SystemClock()
        self.steps: list[Step] = []
        self.summary: dict[str, Any] = {}

    def now(self) -> str:
        """The clock's time, ISO-8601."""
        return self.clock.now().isoformat()

    def add(self, agent: str, **fields: Any) -> Step:
        """Append a step for ``agent`` (fields as in :class:`Step`) and return it."""
        step = Step(index=len(self.steps), agent=agent, time=self.now(), **fields)
        self.steps.append(step)
        return step

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": TRACE_FORMAT,
            "config": dict(self.config),
            "summary": dict(self.summary),
            "steps": [step.to_dict() for step in self.steps],
        }


def _block(label: str, text: str) -> list[str]:
    lines = text.splitlines() or [""]
    wrapped: list[str] = []
    for line in lines:
        wrapped.extend(textwrap.wrap(line, width=96) or [""])
    return [f"{label}{wrapped[0]}", *(" " * len(label) + rest for rest in wrapped[1:])]


def render_conversation(trace: Trace) -> str:
    """The human-readable conversation: every message in order with its role."""
    config = trace.config
    out = [
        "smartctx red-team simulation",
        f"seed {config.get('seed')}, defender memory {config.get('defender_memory')}, "
        f"attacker {config.get('attacker')}, defender {config.get('defender')}",
        "",
    ]
    conversation = 0
    for step in trace.steps:
        if step.agent == "attacker" and step.text is not None:
            if step.conversation != conversation:
                conversation = step.conversation
                ctx = f" ({step.context_id})" if step.context_id else ""
                out += ["", f"=== conversation {conversation}{ctx} ==="]
            if step.note:
                out.append(f"   [attacker strategy: {step.note}]")
            tactic = f" ({step.tactic})" if step.tactic else ""
            out += _block(f"[turn {step.turn}] ATTACKER{tactic}: ", step.text)
        elif step.agent == "defender":
            if step.error:
                out += _block(f"[turn {step.turn}] DEFENDER ERROR: ", step.error)
            else:
                events = ", ".join(str(e.get("kind")) for e in step.memory_events)
                out += _block(f"[turn {step.turn}] DEFENDER: ", step.text or "")
                counts = step.extra.get("window_counts") or {}
                lost = (
                    " (its system prompt has left its window)" if counts.get("system") == 0 else ""
                )
                if events or lost:
                    out.append(f"   [defender memory: {events or 'no events'}{lost}]")
        elif step.agent == "runner" and step.note:
            out.append(f"   [runner: {step.note}]")
    summary = trace.summary
    if summary:
        out += ["", f"RESULT: {summary.get('line', '')}"]
    return "\n".join(out) + "\n"


def write_outputs(trace: Trace, out_dir: Path) -> tuple[Path, Path]:
    """Write ``trace.json`` and ``conversation.txt`` under ``out_dir``; return both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    trace_path = out_dir / "trace.json"
    conversation_path = out_dir / "conversation.txt"
    trace_path.write_text(
        json.dumps(trace.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    conversation_path.write_text(render_conversation(trace), encoding="utf-8")
    return trace_path, conversation_path
