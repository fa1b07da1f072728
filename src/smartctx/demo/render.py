"""Rich rendering of demo steps: the window as a table (kind, priority, source, tokens, state)
and the step's events."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from smartctx.demo.scenarios import ScenarioResult, StepRecord
from smartctx.demo.verdicts import Verdict

_STYLE = {
    "system": "bold magenta",
    "user": "green",
    "agent": "cyan",
    "rag_doc": "yellow",
    "tool_log": "dim",
    "summary": "bold blue",
    "memory": "blue",
}


def window_table(step: StepRecord) -> Table:
    """The active slots after a step."""
    snap = step.snapshot
    table = Table(
        title=f"{step.title}: {snap['tokens_used']}/{snap['budget']} tokens",
        title_justify="left",
    )
    for column in ("kind", "priority", "source", "tokens", "state", "text"):
        table.add_column(column, no_wrap=column != "text", overflow="ellipsis")
    for slot in snap["slots"]:
        text = " ".join(str(slot.get("text", "")).split())
        extra = f" x{slot['repeat_count']}" if slot.get("repeat_count", 1) > 1 else ""
        if slot.get("provenance"):
            extra += f" (replaces {len(slot['provenance'])})"
        table.add_row(
            f"[{_STYLE.get(slot['kind'], '')}]{slot['kind']}[/]",
            f"{slot['priority']:g}",
            str(slot.get("source_id") or "-"),
            str(slot["tokens"]),
            slot["state"] + (" (pinned)" if slot.get("pinned") else ""),
            (text[:60] + ("…" if len(text) > 60 else "")) + extra,
        )
    return table


def events_line(step: StepRecord) -> str:
    """The step's events, compact: ``admitted x3, evicted agent 1a2b3c, refused ...``."""
    kinds = step.kinds()
    parts: list[str] = []
    for event in step.events:
        if event["kind"] in ("admitted", "unpinned"):
            continue
        detail: dict[str, Any] = event.get("detail", {})
        who = event.get("slot_kind") or kinds.get(event["slot_id"], "")
        note = ""
        if "duplicate_of" in detail:
            note = f" (duplicate of {str(detail['duplicate_of'])[:8]})"
        elif "into" in detail:
            note = f" (into {str(detail['into'])[:8]})"
        parts.append(f"{event['kind']} {who} {event['slot_id'][:8]}{note}".replace("  ", " "))
    admitted = sum(1 for e in step.events if e["kind"] == "admitted")
    return f"admitted x{admitted}" + ("; " + "; ".join(parts) if parts else "")


def print_step(console: Console, result: ScenarioResult, step: StepRecord) -> None:
    """Print one step: the action, the reply, the events and the window table."""
    console.rule(f"[bold]{result.name}[/] — {step.title}")
    console.print(f"[bold]>[/] {step.action}")
    if step.reply is not None:
        console.print(f"[bold]agent:[/] {step.reply}")
    console.print(f"[bold]events:[/] {events_line(step)}")
    console.print(window_table(step))


def print_verdicts(console: Console, verdicts: list[Verdict]) -> None:
    """One line per scenario, then the failed checks of any failing one."""
    console.rule("[bold]verdicts")
    for verdict in verdicts:
        style = "bold green" if verdict.passed else "bold red"
        console.print(f"[{style}]{verdict.line()}[/]")
        for label, ok in verdict.checks:
            if not ok:
                console.print(f"   [red]x[/] {label}")
