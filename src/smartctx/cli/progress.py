"""The progress bar of long commands: what is done, how many of how many, the rate and the ETA.

Rich's ``Progress`` is thread-safe, so work running in a worker thread (embedding) may update it.
The bar refreshes on its own (rich's refresh thread), so it keeps moving between updates.
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text


def rate(task: Task) -> float | None:
    """The recent rate, else the average since the task started (slow work has few samples)."""
    speed = task.finished_speed or task.speed
    if speed is None and task.completed and task.elapsed:
        speed = task.completed / task.elapsed
    return speed


class RateColumn(ProgressColumn):
    """Items per second (the task's ``unit`` field names them)."""

    def render(self, task: Task) -> Text:
        speed = rate(task)
        unit = task.fields.get("unit", "items")
        if speed is None:
            return Text(f"– {unit}/s", style="progress.data.speed")
        return Text(f"{speed:,.1f} {unit}/s", style="progress.data.speed")


class EtaColumn(ProgressColumn):
    """Time left at the current rate."""

    def render(self, task: Task) -> Text:
        speed = rate(task)
        if task.finished:
            return Text("eta 0:00:00", style="progress.remaining")
        if task.total is None or not speed:
            return Text("eta -:--:--", style="progress.remaining")
        left = int((task.total - task.completed) / speed)
        return Text(
            f"eta {left // 3600}:{left // 60 % 60:02d}:{left % 60:02d}", "progress.remaining"
        )


def progress_bar(console: Console, *, transient: bool = False) -> Progress:
    """A bar with description, count, rate, elapsed time and ETA."""
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        EtaColumn(),
        console=console,
        transient=transient,
        speed_estimate_period=120,
    )
